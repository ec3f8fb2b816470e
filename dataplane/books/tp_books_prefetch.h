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
 * of the time (fetched without testing which). Books without an order table have a window of one
 * empty slot and have never spilled: the hint then fetches that slot and nothing else.
 */
TP_BOOKS_HINT void tp_books_hint_order(const struct tp_books *b, uint32_t instr, uint64_t order_id)
{
    uint64_t s = tp_recent_slot(b, order_id), home;

    __builtin_prefetch(&b->recent[s], 1);
    /* As may_have_spilled (tp_mbo_ops.h): young ids skip the load of the spilled count. */
    if (order_id <= b->spilled_max_id && b->spilled[s] != 0) {
        home = tp_order_home(tp_order_tag(tp_hot_of(b, instr)), order_id, 64 - b->order_shift);
        __builtin_prefetch(&b->orders[home], 1);
        __builtin_prefetch(&b->orders[(home + 1) & b->order_mask], 1);
    }
}

/*
 * The window slot of an order id, the line its lookup reads first, for a caller that issues the
 * prefetch later (the MDP3 feed spaces its hints out: issued back to back, most never arrived).
 * An order in the overflow table is not covered: it outlived a window of newer ids.
 */
TP_BOOKS_HINT const void *tp_books_order_line(const struct tp_books *b, uint64_t order_id)
{
    return &b->recent[tp_recent_slot(b, order_id)];
}

/*
 * The lines the search from the best level of one side reads: levels n-5..n-1, the 80 bytes
 * that end with the best level. Levels are 16 bytes and never straddle a line, so these are
 * always two lines: the best level's and the one 64 bytes below (with 24-byte levels it took
 * three prefetches). With few levels the addresses fall before the array: still inside the
 * tables, and a prefetch never faults anyway.
 */
TP_BOOKS_HINT void tp_books_hint_best_levels(const struct tp_order_level *best)
{
    __builtin_prefetch(best, 1);
    __builtin_prefetch((const char *)best - 64, 1);
}

/*
 * The best levels of both sides of the instrument's order-level book. It reads the hot state to
 * know where the best level is: issue it once tp_books_hint_hot has brought that in.
 */
TP_BOOKS_HINT void tp_books_hint_levels(const struct tp_books *b, uint32_t instr)
{
    const struct tp_mbo_hot *h = tp_hot_of(b, instr);
    const struct tp_order_level *bid = tp_mbo_side_levels(b, h, TP_SIDE_BID);

    tp_books_hint_best_levels(bid + h->levels[TP_SIDE_BID] - 1);
    tp_books_hint_best_levels(bid + b->level_stride + h->levels[TP_SIDE_ASK] - 1);
}

#endif /* TP_BOOKS_PREFETCH_H */
