/*
 * Change records: what a mutating book call changed.
 *
 * Every mutating call in tp_mbo.h, tp_mbp.h and tp_books.h writes the changes it made into a
 * caller-provided array of at least TP_BOOK_CHANGES_MAX records and returns how many it wrote.
 * The publisher turns each record into one published event without re-reading the book, and a
 * consumer that applies the LEVEL records in order to its own copy of a book (with the MDP3
 * semantics below) reproduces the book exactly.
 *
 * LEVEL records follow the CME MDP3 level semantics for every book kind, including the levels
 * aggregated from orders (book TP_BOOK_ORDERS):
 *   NEW at index k      insert at k (1 = best), levels k.. shift one down;
 *   CHANGE at k         level k gets new qty/count (price unchanged);
 *   DELETE at k         remove level k, levels below shift one up;
 *   DELETE_THRU         the whole side is empty;
 *   DELETE_FROM, k      the k best levels are removed, the rest shift up by k;
 *   OVERLAY at k        level k gets a new price, qty and count.
 * ORDER records describe one order (id, side, price, remaining qty, priority); a replace is a
 * DELETE of the old id followed by an ADD of the new one. TRADE, STATUS, STAT and CLEAR records
 * carry the per-instrument state changes; a CLEAR with book TP_BOOK_ORDERS empties the
 * order-level book only, any other CLEAR empties every book of the instrument.
 *
 * Every byte of a record is written: the fields its kind does not use, and `reserved`, are 0, so
 * a consumer may copy records whole and two runs over the same input give the same bytes.
 */
#ifndef TP_BOOK_CHANGE_H
#define TP_BOOK_CHANGE_H

#include <stdint.h>

/* Most records a single mutating call writes (e.g. replace: 2 ORDER + 2 LEVEL). */
#define TP_BOOK_CHANGES_MAX 4

enum tp_change_kind {
    TP_CHANGE_LEVEL = 1,  /* a price level changed (action: enum tp_level_action) */
    TP_CHANGE_ORDER = 2,  /* an order changed (action: enum tp_order_action) */
    TP_CHANGE_TRADE = 3,  /* a trade printed (side: aggressor side, or TP_SIDE_NONE) */
    TP_CHANGE_CLEAR = 4,  /* the instrument's books were emptied (snapshot, reset) */
    TP_CHANGE_STATUS = 5, /* trading status changed (action: enum tp_trading_status) */
    TP_CHANGE_STAT = 6,   /* a session statistic changed (action: enum tp_stat_kind) */
};

/* Which book of the instrument a LEVEL record applies to. */
enum tp_book_kind {
    TP_BOOK_DIRECT = 0,  /* MBP outright levels as the venue sends them */
    TP_BOOK_IMPLIED = 1, /* MBP implied levels */
    TP_BOOK_ORDERS = 2,  /* levels aggregated from the order-level book */
};

enum tp_side {
    TP_SIDE_BID = 0,
    TP_SIDE_ASK = 1,
    TP_SIDE_NONE = 2,
};

/* Same numbering as MDP3 MDUpdateAction. */
enum tp_level_action {
    TP_LEVEL_NEW = 0,
    TP_LEVEL_CHANGE = 1,
    TP_LEVEL_DELETE = 2,
    TP_LEVEL_DELETE_THRU = 3,
    TP_LEVEL_DELETE_FROM = 4,
    TP_LEVEL_OVERLAY = 5,
};

enum tp_order_action {
    TP_ORDER_ADD = 0,
    TP_ORDER_EXECUTE = 1, /* partially or fully executed; qty is what remains, count what traded */
    TP_ORDER_CANCEL = 2,  /* partially cancelled; qty is what remains */
    TP_ORDER_DELETE = 3,  /* removed from the book */
    TP_ORDER_MODIFY = 4,  /* price and/or qty changed in place (MDP3 Change); priority given */
};

/* flags */
#define TP_CHANGE_F_TOP 0x01u /* the best level of this side changed (price, qty or count) */

struct tp_book_change {
    uint32_t instrument; /* dense instrument id */
    uint8_t kind;        /* enum tp_change_kind */
    uint8_t book;        /* enum tp_book_kind (LEVEL, ORDER) */
    uint8_t side;        /* enum tp_side */
    uint8_t action;      /* per kind, see enum tp_change_kind */
    uint16_t level; /* LEVEL: index, 1 = best (DELETE_FROM: levels removed); ORDER: its level */
    uint8_t flags;  /* TP_CHANGE_F_* */
    uint8_t reserved;
    uint32_t count;    /* LEVEL: orders at the level (0 if the venue does not say); ORDER
                        * EXECUTE: the executed qty (printing or not: a non-printing execution
                        * has no TRADE record to say it); other ORDER records: 0 */
    int64_t price;     /* price9: level price, order price, trade price, statistic value */
    int64_t qty;       /* LEVEL: total qty; ORDER: remaining qty; TRADE: size; STAT: size/volume */
    uint64_t order_id; /* ORDER: the order; TRADE: resting order id when known, else 0 */
    uint64_t aux;      /* ORDER: priority; TRADE: venue match/trade number when known */
};

#endif /* TP_BOOK_CHANGE_H */
