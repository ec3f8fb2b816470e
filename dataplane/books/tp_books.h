/*
 * Books: the per-instrument stores of one feed handler.
 *
 * A tp_books holds, for each dense instrument id (tp_instruments.h):
 *   - a price-level book (MBP, tp_mbp.h): outright and implied levels by index, MDP3 semantics;
 *   - an order-level book (MBO, tp_mbo.h): the live orders and the price levels aggregated from
 *     them (price, total qty, order count);
 *   - trading status, last trade, volume, session statistics and anomaly counters.
 * The order table is shared by all the instruments' order books and knows an order by
 * (instrument, order id): venues number their orders independently.
 *
 * Memory: tp_books_memsize() bytes placed by the caller, tp_books_init() prepares them; every
 * table is sized from the params and nothing allocates afterwards. Capacity exhaustion (orders,
 * levels) rejects the one update, is counted in the instrument's counters and never touches
 * another instrument's book. Single writer: one data core mutates a tp_books; readers on other
 * threads must go through the publisher's state table, not this memory.
 *
 * Every mutating call takes `out`, room for TP_BOOK_CHANGES_MAX change records
 * (tp_book_change.h), and returns the number of records written, or a negative errno when the
 * update was rejected (nothing changed, the anomaly was counted):
 *   -EINVAL  unknown instrument id, bad side, action or level, zero/negative quantity;
 *   -ENOENT  unknown order id;   -EEXIST  duplicate order id;
 *   -ENOSPC  order table or level array full, or an order-level level would pass 2^40 - 1
 *            shares or 2^24 - 1 orders.
 */
#ifndef TP_BOOKS_H
#define TP_BOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "tp_book_change.h"

/*
 * The recent-order window's default size (tp_books_params.recent_orders = 0): per max_orders, and
 * its cap; and the most slots a caller may ask for.
 */
#define TP_RECENT_ORDERS_PER_ORDER   16
#define TP_RECENT_ORDERS_DEFAULT_MAX (1u << 20)
#define TP_RECENT_ORDERS_LIMIT       (1u << 28)

struct tp_books_params {
    /*
     * The instrument ids these books serve: first_id .. first_id + instruments - 1 (a data lcore's
     * window of the instance's ids). Calls take instance ids; ids outside the window are refused
     * like unknown ones, and change records carry the instance id.
     */
    uint32_t first_id;
    uint32_t instruments;
    uint32_t max_orders; /* live orders over all order-level books (0: no MBO books) */
    /*
     * Slots of the recent-order window (tp_mbo.c), rounded down to a prime (at least 2); 0: the
     * default, TP_RECENT_ORDERS_PER_ORDER x max_orders, at most TP_RECENT_ORDERS_DEFAULT_MAX. The
     * window must cover the ids an order lives through, not the live orders: an order still live
     * when that many newer ids have been added moves to the overflow table (tp_books_totals:
     * orders_spilled). At most TP_RECENT_ORDERS_LIMIT; each slot takes 33 bytes.
     */
    uint32_t recent_orders;
    uint32_t levels_per_side; /* MBO: price levels per side per instrument (<= 65535) */
    uint32_t mbp_depth;       /* MBP: max outright depth (<= 255, 0: no MBP books) */
    uint32_t implied_depth;   /* MBP: max implied depth (<= 255) */
};

/* One price level as readers see it. */
struct tp_level {
    int64_t price; /* price9 */
    int64_t qty;   /* total quantity (0 for an empty MBP slot) */
    uint32_t count;
    uint32_t reserved;
};

/* Session statistics (TP_CHANGE_STAT action). */
enum tp_stat_kind {
    TP_STAT_OPEN = 0,
    TP_STAT_HIGH = 1,
    TP_STAT_LOW = 2,
    TP_STAT_CLOSE = 3,
    TP_STAT_SETTLEMENT = 4,
    TP_STAT_CLEARED_VOLUME = 5,
    TP_STAT_OPEN_INTEREST = 6,
    TP_STAT_HIGH_LIMIT = 7,
    TP_STAT_LOW_LIMIT = 8,
    TP_STAT_HIGH_BID = 9,
    TP_STAT_LOW_OFFER = 10,
    TP_STAT_VWAP = 11,
    TP_STAT_INDICATIVE_OPEN = 12,
    TP_STAT_FIXING = 13,
    TP_STAT_IMBALANCE = 14,      /* ITCH NOII: price = reference price, qty = imbalance shares */
    TP_STAT_SESSION_VOLUME = 15, /* MDP3 volume message: qty = the session's traded volume */
    TP_STAT_MAX_PRICE_VARIATION = 16,
    TP_STAT_AUCTION_BID = 17,   /* EOBI AuctionBBO: best bid of the call phase (price, size) */
    TP_STAT_AUCTION_OFFER = 18, /* EOBI AuctionBBO: best offer of the call phase (price, size) */
    TP_STAT_COUNT
};

struct tp_stat {
    int64_t price; /* price9; 0 for counts */
    int64_t qty;   /* size (ITCH cross, imbalance), or the value of a count: cleared volume,
                    * open interest and session volume (the MDP3 feed puts them here) */
    uint8_t present;
};

/* Anomalies per instrument: counted, never trusted. */
struct tp_book_counters {
    uint64_t unknown_order;     /* execute/cancel/delete/replace of an order not in this book */
    uint64_t duplicate_order;   /* add of an order id that is live */
    uint64_t bad_quantity;      /* zero or negative quantity where one is required */
    uint64_t bad_price;         /* INT64_MIN: no level key (it has no negation; sentinels use it) */
    uint64_t over_execution;    /* executed/cancelled more than remained: order removed */
    uint64_t order_capacity;    /* add refused: order table full */
    uint64_t level_capacity;    /* add/modify refused: level array of the side full, or the
                                 * level's quantity or order count would overflow */
    uint64_t bad_level;         /* MBP level index 0 or beyond the depth */
    uint64_t bad_input;         /* bad side, action, book or missing book type */
    uint64_t snapshot_mismatch; /* the venue's snapshot at the book's sequence differed from it */
};

/*
 * Per-instrument state. The order-level hot path keeps its own per-instrument state (level counts,
 * live orders) in a dense array: read those with tp_books_levels and tp_books_orders.
 */
struct tp_book {
    uint8_t type;          /* enum tp_book_type (tp_instruments.h); NONE: updates refused */
    uint8_t status;        /* enum tp_trading_status */
    uint8_t depth;         /* MBP outright depth in use */
    uint8_t implied_depth; /* MBP implied depth in use */
    uint8_t mbp_levels[2]; /* MBP outright: highest non-empty index per side */
    uint8_t implied_levels[2];
    uint8_t last_aggressor; /* enum tp_side */
    /* Order-level book: the generation of its live orders (1..127; a clear starts the next). */
    uint8_t order_gen;
    /* Non-zero: mutating calls write change records (tp_books_set_emit); the order-level hot
     * path reads its copy in the instrument's hot state instead. */
    uint8_t emit;
    uint8_t reserved;
    /* Order-level book: entries of its older generations the order tables have not reclaimed
     * yet (they are not orders any more: tp_books_orders does not count them). */
    uint32_t stale_orders;
    int64_t last_price; /* last trade */
    int64_t last_qty;
    int64_t volume;  /* traded quantity this session (printable trades) */
    uint64_t trades; /* trades this session */
    struct tp_stat stats[TP_STAT_COUNT];
    struct tp_book_counters counters;
} __attribute__((aligned(64)));

struct tp_books; /* opaque: lives in the caller's memory */

/* Bytes for these params (0 if invalid). */
size_t tp_books_memsize(const struct tp_books_params *p);

/* Prepares mem (tp_books_memsize bytes, 64-byte aligned). Returns 0 or -EINVAL. */
int tp_books_init(void *mem, const struct tp_books_params *p);

const struct tp_books_params *tp_books_params(const struct tp_books *b);

/*
 * Gives instrument `instr` a book of `type` (enum tp_book_type) with the MBP depths of its
 * definition (clamped to the params). Changing a configured book's type or depth clears it.
 * Returns 0 or -EINVAL.
 */
int tp_books_configure(struct tp_books *b, uint32_t instr, uint8_t type, uint8_t depth,
                       uint8_t implied_depth);

/* The state of an instrument, or NULL for an id beyond the capacity. */
const struct tp_book *tp_books_get(const struct tp_books *b, uint32_t instr);

/* Number of levels of one side of one book (MBP: the highest non-empty index). */
uint32_t tp_books_levels(const struct tp_books *b, uint32_t instr, enum tp_book_kind book,
                         enum tp_side side);

/* Level `index` (1 = best) of one side of one book. Returns 0, or -EINVAL / -ENOENT. */
int tp_books_level(const struct tp_books *b, uint32_t instr, enum tp_book_kind book,
                   enum tp_side side, uint32_t index, struct tp_level *out);

/*
 * Copies up to `max` levels of one side of one book, best first, into out[] (the publisher's
 * state table writes a whole side per event with one call). Returns the number copied; MBP
 * empty slots are copied as levels of qty 0 so that out[k] is always level k + 1.
 */
uint32_t tp_books_copy_levels(const struct tp_books *b, uint32_t instr, enum tp_book_kind book,
                              enum tp_side side, struct tp_level *out, uint32_t max);

/*
 * Prefetch hint: the instrument's state above (a trade is about to update it). Inline in
 * tp_books_prefetch.h for callers that include the books' layout (the ITCH feed).
 */
void tp_books_prefetch(const struct tp_books *b, uint32_t instr);

/* Live orders of one instrument (0 for an id beyond the capacity). */
uint32_t tp_books_orders(const struct tp_books *b, uint32_t instr);

/*
 * Whether the mutating calls for instrument `instr` write change records (default: on). With it
 * off the books still change exactly as with it on, but every mutating call (tp_mbo.h, tp_mbp.h
 * and the calls below) reports no record (returns 0; `out` is scratch), which saves building
 * records that no consumer would read. The data plane keeps it in step with its per-instrument
 * interest; when turning it on, consumers must be resynchronized from the book itself
 * (tp_books_copy_levels), since the changes made while it was off were not described. Returns 0 or
 * -EINVAL.
 */
int tp_books_set_emit(struct tp_books *b, uint32_t instr, int emit);

/*
 * Totals over all instruments, kept as the books go: what an operator watches to size
 * books.max_orders, the recent-order window and books.levels_per_side (the daemon exports them as
 * the dp.books.* counters). The refusals are also counted on their instrument (tp_book_counters).
 */
struct tp_books_totals {
    uint64_t live_orders;      /* live orders now */
    uint64_t peak_live_orders; /* the most there ever were at once: what max_orders must cover */
    /* Orders moved from the recent-order window to the overflow table: still live when a newer
     * id claimed their slot. A count that grows with a good share of the adds says the window is
     * too small for the feed (each move costs a write and later a probe of a table that is not
     * in cache). */
    uint64_t orders_spilled;
    uint64_t order_capacity; /* adds refused: the order table was full */
    uint64_t level_capacity; /* adds and modifies refused: a side's level array was full, or a
                              * level's quantity or order count would overflow */
};

/* The totals, updated in place: the pointer stays valid as long as the books. */
const struct tp_books_totals *tp_books_totals(const struct tp_books *b);

/* Slots of the recent-order window in use (tp_books_params.recent_orders, resolved). */
uint64_t tp_books_recent_orders(const struct tp_books *b);

/*
 * Empties every book of the instrument (snapshot about to be applied, channel reset): levels,
 * orders, last trade and statistics are kept only if `keep_session` is non-zero. Writes one
 * TP_CHANGE_CLEAR record. The orders are not looked for: the instrument's order-level book starts
 * a new generation and the old one's table slots are reclaimed a little at a time (tp_mbo.c), so a
 * clear costs about what the instrument held, not what the order tables hold.
 */
int tp_books_clear(struct tp_books *b, uint32_t instr, int keep_session,
                   struct tp_book_change *out);

/*
 * Clearing many instruments at once (a channel stopped or reset): mark each instrument (its
 * orders and levels go at once), reclaim the table slots of all the marked ones' orders in one
 * pass over the tables, then call tp_books_clear on each as before: it finds no orders left and
 * writes its CLEAR record. tp_books_mark_for_clear: 0, or -EINVAL for an instrument these books
 * do not serve.
 */
int tp_books_mark_for_clear(struct tp_books *b, uint32_t instr);
void tp_books_drop_marked_orders(struct tp_books *b);

/* A trade that is not an execution of a book order (ITCH P/Q, MDP3 trade summary). */
int tp_books_trade(struct tp_books *b, uint32_t instr, int64_t price, int64_t qty,
                   enum tp_side aggressor, uint64_t match, struct tp_book_change *out);

/*
 * The session totals a venue's snapshot gives (EOBI InstrumentSummary), the trades lost on the
 * way included: the traded volume when volume >= 0, the last trade when last_qty > 0 (and the
 * instrument then has traded: trades at least 1). Trade counts are not given: `trades` keeps
 * the trades seen. No change record: the snapshot that carries them publishes the instrument
 * whole (its CLEAR). Returns 0 or -EINVAL.
 */
int tp_books_adopt_totals(struct tp_books *b, uint32_t instr, int64_t volume, int64_t last_price,
                          int64_t last_qty);

/* Trading status (enum tp_trading_status). Writes a record only when it changed. */
int tp_books_status(struct tp_books *b, uint32_t instr, uint8_t status, struct tp_book_change *out);

/*
 * A feed compared the book with the venue's snapshot at the same sequence and found them
 * different: counted in the instrument's snapshot_mismatch (the feed then applies the snapshot).
 */
void tp_books_count_snapshot_mismatch(struct tp_books *b, uint32_t instr);

/* A session statistic. */
int tp_books_stat(struct tp_books *b, uint32_t instr, enum tp_stat_kind kind, int64_t price,
                  int64_t qty, struct tp_book_change *out);

#endif /* TP_BOOKS_H */
