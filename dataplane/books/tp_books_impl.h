/*
 * Private layout of struct tp_books, shared by tp_books.c, tp_mbo.c and tp_mbp.c only.
 */
#ifndef TP_BOOKS_IMPL_H
#define TP_BOOKS_IMPL_H

#include <stdint.h>

#include "tp_books.h"

/*
 * One live order: 32 bytes, two per cache line. `key` is the level sort key (tp_level_key), so
 * the level of an order is found without looking at its side again. qty == 0 marks a free slot.
 */
struct tp_order {
    uint64_t id;
    int64_t key;
    uint64_t priority;
    uint32_t qty;
    uint32_t instr_side; /* instrument << 1 | side */
};

/*
 * What the order-level hot path reads and writes per instrument, 16 bytes in a dense array: a few
 * thousand instruments take some tens of KB that stay in the L1/L2 caches, where the 600-byte
 * struct tp_book of each would put every message's instrument state on a cache line (and often a
 * page) of its own. struct tp_book keeps the cold state: statistics, last trade, counters.
 */
struct tp_mbo_hot {
    uint16_t levels[2]; /* order-level price levels per side (TP_SIDE_BID, TP_SIDE_ASK) */
    uint8_t mbo;        /* non-zero: the instrument takes order-level updates */
    uint8_t emit;       /* non-zero: mutating calls write change records (the default) */
    uint16_t reserved;
    uint32_t live_orders; /* this instrument's orders in the order table */
    uint32_t reserved2;
};

struct tp_books {
    struct tp_books_params params;
    uint32_t order_shift; /* log2 of the order table slots */
    uint64_t order_mask;  /* slots - 1 */
    uint64_t live_orders;
    uint64_t peak_live_orders; /* high-water mark: what max_orders must cover */
    uint32_t mbp_stride;       /* levels per instrument in mbp_levels: 2 * (depth + implied) */
    uint32_t reserved;
    struct tp_book *books;   /* [instruments] */
    struct tp_mbo_hot *hot;  /* [instruments] */
    struct tp_order *orders; /* [order_mask + 1] */
    /* [instruments][2 sides][TP_LEVEL_SENTINELS + levels_per_side], best LAST */
    struct tp_level *order_levels;
    struct tp_level *mbp_levels; /* [instruments][direct bid, ask, implied bid, ask][depth] */
} __attribute__((aligned(64)));

/*
 * Order-level books sort levels by key = price for bids and -price for asks, ascending, so the
 * best level of either side is the one with the largest key (the last entry of the array).
 */
static inline int64_t tp_level_key(unsigned side, int64_t price)
{
    return side == TP_SIDE_BID ? price : -price;
}

/*
 * Each side's level array is preceded by TP_LEVEL_SENTINELS levels of price INT64_MIN, never
 * written after init: the search from the best level reads the few levels below the best one
 * without testing whether they exist (a key is never below INT64_MIN).
 */
#define TP_LEVEL_SENTINELS 4

/* Level 0 (the worst) of one side of an instrument's order-level book. */
static inline struct tp_level *tp_order_side_levels(const struct tp_books *b, uint32_t instr,
                                                    unsigned side)
{
    size_t stride = TP_LEVEL_SENTINELS + (size_t)b->params.levels_per_side;
    return &b->order_levels[((size_t)instr * 2 + side) * stride + TP_LEVEL_SENTINELS];
}

static inline struct tp_book *tp_books_book(struct tp_books *b, uint32_t instr)
{
    return instr < b->params.instruments ? &b->books[instr] : NULL;
}

/* Whether the instrument's mutating calls write change records (instr checked by the caller). */
static inline int tp_books_emits(const struct tp_books *b, uint32_t instr)
{
    return b->hot[instr].emit;
}

/* Fills a change record's common fields; the caller sets the kind-specific ones. */
static inline struct tp_book_change *tp_change(struct tp_book_change *c, uint32_t instr,
                                               uint8_t kind, uint8_t book, uint8_t side,
                                               uint8_t action)
{
    *c = (struct tp_book_change){
        .instrument = instr, .kind = kind, .book = book, .side = side, .action = action};
    return c;
}

/* Order-level part of tp_books_clear(): drops the instrument's orders and levels. */
void tp_mbo_drop_orders(struct tp_books *b, uint32_t instr);

#endif /* TP_BOOKS_IMPL_H */
