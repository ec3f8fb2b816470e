/*
 * Order changes: the change records of one order operation (add, execute, cancel, delete, one
 * half of a replace) in one unexpanded record, for a consumer that may not need them whole.
 *
 * An order operation of an order-level book writes an ORDER record, the LEVEL record of the
 * order's level (unless the level was missing: counted as bad input) and, for a printable
 * execution, a TRADE record (tp_book_change.h): 96 to 144 bytes, most of them fields the kind
 * leaves 0 and fields the records repeat. A tp_order_change holds the same information in 72
 * bytes, which the book writes in about half the stores, and tp_order_change_expand() gives the
 * records, byte for byte those the operation writes when asked for records. A consumer that only
 * counts or filters records reads the few fields it needs; one that publishes them expands them
 * (the ITCH feed does it for a sink without tp_feed_sink.order_changes).
 */
#ifndef TP_ORDER_CHANGE_H
#define TP_ORDER_CHANGE_H

#include <stdint.h>
#include <string.h>

#include "tp_book_change.h"

/* tp_order_change.flags */
#define TP_ORDER_CHANGE_F_TRADE 0x01u /* a TRADE record follows the LEVEL record */

struct tp_order_change {
    uint32_t instrument;  /* dense instrument id */
    uint8_t action;       /* ORDER record: enum tp_order_action */
    uint8_t side;         /* the order's side (enum tp_side); the TRADE's aggressor is the other */
    uint8_t level_action; /* LEVEL record: enum tp_level_action (when level > 0) */
    uint8_t flags;        /* TP_ORDER_CHANGE_F_* */
    uint32_t level;       /* index of the order's level (1 = best); 0: no LEVEL record */
    uint32_t count;       /* ORDER record's count: the executed qty (also the TRADE's size) */
    int64_t price;        /* the order's price9: ORDER and LEVEL records */
    int64_t qty;          /* ORDER record: what remains of the order */
    uint64_t order_id;
    uint64_t priority;
    uint64_t level_size; /* LEVEL record: total qty << 24 | order count (qty 0 when deleted) */
    int64_t trade_price; /* TRADE record (flag set): price9 and the venue's match number */
    uint64_t match;
};

/* LEVEL record fields from tp_order_change.level_size: order count in the low 24 bits. */
#define TP_ORDER_CHANGE_COUNT_BITS 24

/* Number of change records oc stands for (1 to 3). */
static inline uint32_t tp_order_change_records(const struct tp_order_change *oc)
{
    return 1 + (oc->level != 0) + (oc->flags & TP_ORDER_CHANGE_F_TRADE);
}

/*
 * Writes the change records oc stands for into out (room for 3): ORDER, LEVEL if level > 0,
 * TRADE if flagged. Returns the number written.
 */
static inline uint32_t tp_order_change_expand(const struct tp_order_change *oc,
                                              struct tp_book_change *out)
{
    uint32_t n = 0;

    memset(out, 0, sizeof(*out));
    out[0].instrument = oc->instrument;
    out[0].kind = TP_CHANGE_ORDER;
    out[0].book = TP_BOOK_ORDERS;
    out[0].side = oc->side;
    out[0].action = oc->action;
    out[0].level = (uint16_t)oc->level;
    out[0].count = oc->count;
    out[0].price = oc->price;
    out[0].qty = oc->qty;
    out[0].order_id = oc->order_id;
    out[0].aux = oc->priority;
    n++;
    if (oc->level) {
        struct tp_book_change *l = &out[n++];
        memset(l, 0, sizeof(*l));
        l->instrument = oc->instrument;
        l->kind = TP_CHANGE_LEVEL;
        l->book = TP_BOOK_ORDERS;
        l->side = oc->side;
        l->action = oc->level_action;
        l->level = (uint16_t)oc->level;
        l->flags = oc->level == 1 ? TP_CHANGE_F_TOP : 0;
        l->count = (uint32_t)(oc->level_size & ((1u << TP_ORDER_CHANGE_COUNT_BITS) - 1));
        l->price = oc->price;
        l->qty = (int64_t)(oc->level_size >> TP_ORDER_CHANGE_COUNT_BITS);
    }
    if (oc->flags & TP_ORDER_CHANGE_F_TRADE) {
        struct tp_book_change *t = &out[n++];
        memset(t, 0, sizeof(*t));
        t->instrument = oc->instrument;
        t->kind = TP_CHANGE_TRADE;
        t->book = TP_BOOK_DIRECT;
        t->side = oc->side == TP_SIDE_BID ? TP_SIDE_ASK : TP_SIDE_BID;
        t->price = oc->trade_price;
        t->qty = oc->count;
        t->order_id = oc->order_id;
        t->aux = oc->match;
    }
    return n;
}

#endif /* TP_ORDER_CHANGE_H */
