/*
 * The book a reader keeps for an instrument it watches at DEPTH or TOP: an array of up to
 * TP_MAX_DEPTH levels per side, changed by BookUpdate level changes (tpout LevelAction:
 * new = insert and shift down, change = replace, delete = remove and shift up, clear = empty),
 * reloaded from the state table when the reader joins or was lapped.
 *
 * Levels deeper than TP_MAX_DEPTH are not kept: a change beyond it is ignored, and a delete may
 * then leave the deepest kept level missing until the venue refreshes it. Changes that make no
 * sense (a level index past the end of the side) are counted by the caller and skipped.
 */
#ifndef TP_VIEWS_LOCAL_BOOK_H
#define TP_VIEWS_LOCAL_BOOK_H

#include <stdint.h>

#include "tickplane/tickplane.h"

struct tp_local_book {
    uint16_t counts[2];                     /* valid levels: [0] bids, [1] asks */
    struct tp_level sides[2][TP_MAX_DEPTH]; /* [side][0] is the best */
    struct tp_top_of_book last_top;         /* the top last delivered on TP_TOPIC_TOP */
    uint64_t from_sequence;                 /* records at or below this are already in the book */
};

void tp_local_book_clear(struct tp_local_book *b);

/* Apply one change. Returns 0, or -EINVAL for a change that does not fit the book (skipped). */
int tp_local_book_apply(struct tp_local_book *b, const struct tp_level_change *c);

/* Replace the levels with the conflated state's (and remember its bus_sequence). */
void tp_local_book_load(struct tp_local_book *b, const struct tp_instrument_state *s);

/* Best bid and offer (TP_PRICE_NULL and zeros for an empty side). */
void tp_local_book_top(const struct tp_local_book *b, struct tp_top_of_book *top);

/* The book as an event's tp_book_view. */
void tp_local_book_view(const struct tp_local_book *b, struct tp_book_view *v);

#endif /* TP_VIEWS_LOCAL_BOOK_H */
