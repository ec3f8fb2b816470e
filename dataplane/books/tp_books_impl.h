/*
 * Private layout of struct tp_books, shared by tp_books.c, tp_mbo.c and tp_mbp.c only.
 */
#ifndef TP_BOOKS_IMPL_H
#define TP_BOOKS_IMPL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "tp_books.h"

/*
 * One order: 32 bytes, two per cache line. `key` is the level sort key (tp_level_key), so the
 * level of an order is found without looking at its side again. qty == 0 marks a free slot (in
 * either order table). An order is live only while its tag is its instrument's current one
 * (tp_order_tag): clearing an instrument starts a new generation instead of finding its orders,
 * and the older generation's entries ("stale") are reclaimed later (tp_mbo.c).
 */
struct tp_order {
    uint64_t id;
    int64_t key;
    uint64_t priority;
    uint32_t qty;
    uint32_t instr_side; /* tag << 1 | side */
};

/*
 * An order's tag: its instrument's generation (1..TP_ORDER_GEN_MAX) above the instrument's
 * instance id. Books with an order table serve ids below 2^24 (the configuration allows 16 Mi
 * instruments); the 7 bits above them, in the 31 bits instr_side has, hold the generation.
 */
#define TP_ORDER_ID_BITS  24
#define TP_ORDER_ID_MASK  ((1u << TP_ORDER_ID_BITS) - 1)
#define TP_ORDER_GEN_MAX  127u
#define TP_ORDER_GEN_BITS (TP_ORDER_GEN_MAX << TP_ORDER_ID_BITS)
#define TP_ORDER_TAG_MASK (TP_ORDER_GEN_BITS | TP_ORDER_ID_MASK)

/*
 * What the order-level hot path reads and writes per instrument, 16 bytes in a dense array: a few
 * thousand instruments take some tens of KB that stay in the L1/L2 caches, where the 600-byte
 * struct tp_book of each would put every message's instrument state on a cache line (and often a
 * page) of its own. struct tp_book keeps the cold state: statistics, last trade, counters.
 */
struct tp_mbo_hot {
    uint16_t levels[2]; /* order-level price levels per side (TP_SIDE_BID, TP_SIDE_ASK) */
    /*
     * TP_MBO_EMIT | the tag of the instrument's live orders (tp_order_tag), whose generation
     * bits are 0 when the instrument takes no order-level updates: one word that a lookup
     * compares with an order's, an add stores in the order, and whose bits say whether the
     * instrument has an order-level book and writes change records.
     */
    uint32_t owner;
    uint32_t live_orders; /* this instrument's orders in the order table */
    /*
     * Index in order_levels of level 0 of the bid side (the ask side's is level_stride further):
     * fixed at init, kept here so that finding a side's levels is a load and an add, not a
     * multiplication by the stride.
     */
    uint32_t level_base;
};

/*
 * A level of an order-level book in 16 bytes, four to a cache line: its sort key (tp_level_key)
 * and its size, the total quantity (TP_LEVEL_QTY_BITS) and order count (TP_LEVEL_COUNT_BITS)
 * packed in one word, so that an order joining or leaving changes both with one add. The search
 * from the best level reads 5 levels, 80 bytes: always 2 lines (24-byte levels took 3 most of
 * the time). A level refuses an order that would overflow either field (counted as
 * level_capacity).
 */
struct tp_order_level {
    int64_t key;
    uint64_t size; /* qty << TP_LEVEL_COUNT_BITS | count */
};

#define TP_LEVEL_COUNT_BITS 24
#define TP_LEVEL_QTY_BITS   (64 - TP_LEVEL_COUNT_BITS)
#define TP_LEVEL_COUNT_MAX  ((1u << TP_LEVEL_COUNT_BITS) - 1)
#define TP_LEVEL_QTY_MAX    ((INT64_C(1) << TP_LEVEL_QTY_BITS) - 1)

/* The size word of `orders` orders totalling qty (both within their bits). */
static inline uint64_t tp_level_size(int64_t qty, uint32_t orders)
{
    return (uint64_t)qty << TP_LEVEL_COUNT_BITS | orders;
}

static inline uint32_t tp_level_count(uint64_t size)
{
    return (uint32_t)(size & TP_LEVEL_COUNT_MAX);
}

static inline int64_t tp_level_qty(uint64_t size)
{
    return (int64_t)(size >> TP_LEVEL_COUNT_BITS);
}

/*
 * Orders live in two tables (tp_mbo.c says how they are used): the recent-order window, a ring
 * indexed by the order id modulo its size, where the venues' increasing ids put the orders added
 * together in neighbouring slots; and the overflow table, an open-addressing hash table with room
 * for every live order, where an order goes when a newer id claims its window slot. The window
 * has a prime number of slots (tp_books_params.recent_orders), so that ids with a stride (every
 * 8th, every 1000th) still use all of it.
 */
struct tp_books {
    struct tp_books_params params;
    uint32_t order_shift;    /* log2 of the overflow table's slots */
    uint64_t order_mask;     /* overflow slots - 1 */
    uint64_t recent_slots;   /* window slots (prime) */
    uint64_t recent_magic;   /* UINT64_MAX / recent_slots + 1: id modulo slots by multiplications */
    uint64_t spilled_max_id; /* no id above this one ever went to the overflow table */
    /*
     * Stale orders (of an older generation than their instrument's) still in the tables, and the
     * reclaiming sweep (tp_mbo.c): its next slot (window slots first, then the overflow
     * table's), the slots it visits per order a clear makes stale, and the most stale orders
     * allowed before a clear sweeps the whole tables. Per instrument: tp_book.stale_orders.
     */
    uint64_t stale_orders;
    uint64_t sweep_next;
    uint64_t sweep_rate;
    uint64_t stale_limit;
    struct tp_books_totals totals; /* live orders, moves, refusals (tp_books.h) */
    uint32_t mbp_stride;           /* levels per instrument in mbp_levels: 2 * (depth + implied) */
    uint32_t level_stride;   /* levels per side in order_levels: sentinels + levels_per_side */
    struct tp_book *books;   /* [instruments] */
    struct tp_mbo_hot *hot;  /* [instruments] */
    struct tp_order *orders; /* overflow table [order_mask + 1] */
    struct tp_order *recent; /* window [recent_slots]: an order's slot is tp_recent_slot() */
    /*
     * [recent_slots]: orders in the overflow table whose id has that window slot, saturating: at
     * UINT8_MAX it no longer goes down, and only says that the overflow table must be searched.
     */
    uint8_t *spilled;
    /* [instruments][2 sides][TP_LEVEL_SENTINELS + levels_per_side], best LAST */
    struct tp_order_level *order_levels;
    struct tp_level *mbp_levels; /* [instruments][direct bid, ask, implied bid, ask][depth] */
} __attribute__((aligned(64)));

/*
 * Window slot of an order id: the low 32 bits of the id modulo the (prime) window size, by
 * Lemire's fastmod (a multiplication and a high half instead of a division). Consecutive ids get
 * consecutive slots; ids 2^32 apart may share one, which only costs a move to the overflow table.
 */
static inline uint64_t tp_recent_slot(const struct tp_books *b, uint64_t id)
{
    uint64_t low = b->recent_magic * (uint32_t)id;
    return (uint64_t)(((unsigned __int128)low * b->recent_slots) >> 64);
}

/*
 * Home slot of an order in the overflow table (hash_shift: 64 - log2 of its slots): Fibonacci
 * hashing (multiply by 2^64 / golden ratio, keep the top bits) of the order id mixed with its
 * tag (instrument and generation). An order is known by (instrument, id), because the venues number
 * orders independently: an ITCH and an MDP3 order-level channel both start at 1. The orders that
 * reach this table are the survivors of many ids; scattering them keeps the probe runs short at any
 * load and for any id pattern (sparse, strided).
 */
static inline uint64_t tp_order_home(uint32_t tag, uint64_t id, unsigned hash_shift)
{
    return ((id ^ tag * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull) >> hash_shift;
}

/*
 * Order-level books sort levels by key = price for bids and -price for asks, ascending, so the
 * best level of either side is the one with the largest key (the last entry of the array).
 */
static inline int64_t tp_level_key(unsigned side, int64_t price)
{
    return side == TP_SIDE_BID ? price : -price;
}

/*
 * Each side's level array is preceded by TP_LEVEL_SENTINELS levels of key INT64_MIN, never
 * written after init: the search from the best level reads the few levels below the best one
 * without testing whether they exist (a key is never below INT64_MIN).
 */
#define TP_LEVEL_SENTINELS 4

/*
 * Index of instance id instr in the per-instrument arrays. An id below the window wraps to a
 * large index, so one unsigned comparison (tp_books_has) checks both ends.
 */
static inline uint32_t tp_books_index(const struct tp_books *b, uint32_t instr)
{
    return instr - b->params.first_id;
}

/* Whether instr is one of the instruments these books serve. */
static inline int tp_books_has(const struct tp_books *b, uint32_t instr)
{
    return tp_books_index(b, instr) < b->params.instruments;
}

/* Per-instrument state of an instrument in the window (checked by the caller). */
static inline struct tp_book *tp_book_of(const struct tp_books *b, uint32_t instr)
{
    return &b->books[tp_books_index(b, instr)];
}

static inline struct tp_mbo_hot *tp_hot_of(const struct tp_books *b, uint32_t instr)
{
    return &b->hot[tp_books_index(b, instr)];
}

/* tp_mbo_hot.owner: the instrument's mutating calls write change records (the default). */
#define TP_MBO_EMIT (1u << 31)

/* The tag of the instrument's live orders: compared with an order's on every lookup. */
static inline uint32_t tp_order_tag(const struct tp_mbo_hot *h)
{
    return h->owner & TP_ORDER_TAG_MASK;
}

/* Whether the instrument takes order-level updates. */
static inline bool tp_mbo_is_book(const struct tp_mbo_hot *h)
{
    return (h->owner & TP_ORDER_GEN_BITS) != 0;
}

/* Whether the instrument's mutating calls write change records. */
static inline bool tp_mbo_emits(const struct tp_mbo_hot *h)
{
    return (h->owner & TP_MBO_EMIT) != 0;
}

/* The instance id an order's tag names. */
static inline uint32_t tp_tag_instrument(uint32_t tag)
{
    return tag & TP_ORDER_ID_MASK;
}

/* Level 0 (the worst) of one side of the order-level book whose hot state is h. */
static inline struct tp_order_level *tp_mbo_side_levels(const struct tp_books *b,
                                                        const struct tp_mbo_hot *h, unsigned side)
{
    return &b->order_levels[h->level_base + (size_t)side * b->level_stride];
}

/* The same by instrument id (checked by the caller). */
static inline struct tp_order_level *tp_order_side_levels(const struct tp_books *b, uint32_t instr,
                                                          unsigned side)
{
    return tp_mbo_side_levels(b, tp_hot_of(b, instr), side);
}

/* An instrument's price-level arrays: direct bid, ask, implied bid, ask. */
static inline struct tp_level *tp_mbp_levels_of(const struct tp_books *b, uint32_t instr)
{
    return &b->mbp_levels[(size_t)tp_books_index(b, instr) * b->mbp_stride];
}

/* Level 1 of one side of an instrument's price-level book, direct or implied. */
static inline struct tp_level *tp_mbp_side_levels(const struct tp_books *b,
                                                  const struct tp_book *bk, uint32_t instr,
                                                  unsigned book, unsigned side)
{
    struct tp_level *lv = tp_mbp_levels_of(b, instr);
    return book == TP_BOOK_DIRECT ? lv + (size_t)side * bk->depth
                                  : lv + 2 * (size_t)bk->depth + (size_t)side * bk->implied_depth;
}

static inline struct tp_book *tp_books_book(struct tp_books *b, uint32_t instr)
{
    return tp_books_has(b, instr) ? tp_book_of(b, instr) : NULL;
}

/*
 * Whether the instrument's mutating calls write change records (instr checked by the caller):
 * for the price-level and session calls, which change struct tp_book and find the flag on it.
 */
static inline int tp_books_emits(const struct tp_books *b, uint32_t instr)
{
    return tp_book_of(b, instr)->emit;
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

/*
 * The state part of tp_books_trade (last trade, volume, trades), for a caller that writes the
 * trade's record in its own form (tp_order_change.h): 1 if the instrument writes change records,
 * 0 if not, or tp_books_trade's -EINVAL.
 */
static inline int tp_books_note_trade(struct tp_books *b, uint32_t instr, int64_t price,
                                      int64_t qty, enum tp_side aggressor)
{
    struct tp_book *bk = tp_books_book(b, instr);

    if (!bk)
        return -EINVAL;
    if (qty <= 0) {
        bk->counters.bad_quantity++;
        return -EINVAL;
    }
    if (aggressor > TP_SIDE_NONE)
        aggressor = TP_SIDE_NONE;
    bk->last_price = price;
    bk->last_qty = qty;
    bk->last_aggressor = (uint8_t)aggressor;
    bk->volume += qty;
    bk->trades++;
    return tp_books_emits(b, instr) != 0;
}

/* Counts an add or modify that a full level array refused, on the instrument and in the totals. */
static inline int tp_books_refuse_level(struct tp_books *b, uint32_t instr)
{
    tp_book_of(b, instr)->counters.level_capacity++;
    b->totals.level_capacity++;
    return -ENOSPC;
}

/*
 * Order-level part of tp_books_clear(): drops the instrument's orders and levels, at a cost that
 * follows the orders it had (tp_mbo.c).
 */
void tp_mbo_drop_orders(struct tp_books *b, uint32_t instr);

/* tp_books_mark_for_clear's part: drops the orders and levels, leaving the reclaiming to later. */
void tp_mbo_mark_orders(struct tp_books *b, uint32_t instr);

#endif /* TP_BOOKS_IMPL_H */
