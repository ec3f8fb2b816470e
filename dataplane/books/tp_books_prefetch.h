/*
 * Prefetch hints for a pipelined caller that knows its next messages (a feed's burst loop), inline
 * so that a hint costs its few loads and prefetches, not a call: the hints are issued for every
 * message, and as calls into the books library they took about 60 instructions a message. They
 * read the private layout of struct tp_books (tp_books_impl.h) to compute addresses, and change
 * nothing: callers must not use that layout for anything else.
 *
 * Each hint takes an instrument id that tp_books_has() accepted. Forced inline: gcc counts
 * prefetches as no side effect and drops calls to a function that only prefetches.
 */
#ifndef TP_BOOKS_PREFETCH_H
#define TP_BOOKS_PREFETCH_H

#include <stdint.h>

#include "tp_books_impl.h"

#define TP_BOOKS_HINT static inline __attribute__((always_inline))

/* The instrument's order-level hot state (level counts, flags). */
TP_BOOKS_HINT void tp_books_hint_hot(const struct tp_books *b, uint32_t instr)
{
    __builtin_prefetch(tp_hot_of(b, instr), 1);
}

/* The instrument's state that a trade updates (last trade, volume). */
TP_BOOKS_HINT void tp_books_hint_book(const struct tp_books *b, uint32_t instr)
{
    __builtin_prefetch(tp_book_of(b, instr), 1);
}

/*
 * The slots of an order id: its window slot, and if the order may be in the overflow table its
 * home slot there and the next, which a probe or a removal reads as well, on the next line half
 * of the time (fetched without testing which). Nothing without an order table.
 */
TP_BOOKS_HINT void tp_books_hint_order(const struct tp_books *b, uint32_t instr, uint64_t order_id)
{
    uint64_t s, home;

    if (!b->params.max_orders)
        return;
    s = tp_recent_slot(b, order_id);
    __builtin_prefetch(&b->recent[s], 1);
    if ((b->spilled[s] != 0) & (order_id <= b->spilled_max_id)) {
        home = tp_order_home(instr, order_id, 64 - b->order_shift);
        __builtin_prefetch(&b->orders[home], 1);
        __builtin_prefetch(&b->orders[(home + 1) & b->order_mask], 1);
    }
}

/*
 * The line an order message reads in each side of the instrument's order-level book: its 4 best
 * levels, whose keys the search compares and one of which a change near the top writes. Its
 * address is fixed (levels best first, each side line-aligned): of the hot state only the fixed
 * level_base is read, not the level counts.
 */
TP_BOOKS_HINT void tp_books_hint_levels(const struct tp_books *b, uint32_t instr)
{
    const struct tp_mbo_hot *h = tp_hot_of(b, instr);

    for (unsigned side = 0; side < 2; side++)
        __builtin_prefetch(tp_mbo_side_levels(b, h, side), 1);
}

#endif /* TP_BOOKS_PREFETCH_H */
