/*
 * The order-level operations of the ITCH path (add, execute, cancel, delete, replace), inline:
 * tp_mbo.c builds the exported calls of tp_mbo.h from them, and the ITCH feed applies its order
 * messages through them directly, so that a message costs no call into the books library and
 * what the feed knows of its values (32-bit quantities, prices that have a level key) folds
 * the checks that cannot fail. Same contract as the tp_mbo.h calls of the same names, but what
 * they write goes to a struct mbo_out: change records as those calls write them, or order changes
 * (tp_order_change.h) for a feed whose sink takes them. Private
 * to dataplane/books and its feeds, like the layout (tp_books_impl.h) it works on; the
 * order tables are described in tp_mbo.c, which keeps their rare paths (the overflow table).
 */
#ifndef TP_MBO_OPS_H
#define TP_MBO_OPS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "tp_books_impl.h"
#include "tp_mbo.h"
#include "tp_order_change.h"

/* The overflow table's part (tp_mbo.c): calls, taken on the rare paths below. */

/* A live order (its instrument's current tag, tp_order_tag) in the overflow table, or NULL. */
struct tp_order *tp_mbo_overflow_find(const struct tp_books *b, uint32_t tag, uint64_t id);

/*
 * Frees window slot s for a new order: moves its order to the overflow table (room checked), or
 * reclaims it if it is stale.
 */
void tp_mbo_spill(struct tp_books *b, uint64_t s);

/* Removes a live order that is in the overflow table. */
void tp_mbo_overflow_remove(struct tp_books *b, struct tp_order *o);

/*
 * The five operations are forced inline: into the ITCH feed's dispatch (one switch case each,
 * two for execute) and into tp_mbo.c's exported calls. The helpers below them are this header's
 * own, not an interface.
 */
#define TP_MBO_OP static inline __attribute__((always_inline))

/* Best levels compared with a key before switching to binary search (sentinels cover them). */
#define LEVEL_SCAN 4
_Static_assert(LEVEL_SCAN <= TP_LEVEL_SENTINELS, "the search reads LEVEL_SCAN levels below n");

/*
 * Whether slot o holds the live order (tag, id); computed without branches. An entry of an older
 * generation of the instrument has another tag: it is not found.
 */
static inline bool order_is(const struct tp_order *o, uint32_t tag, uint64_t id)
{
    return (o->id == id) & (o->instr_side >> 1 == tag) & (o->qty != 0);
}

/*
 * Whether an order (instr, id) not in its window slot s may be in the overflow table. The id is
 * compared first: a new id, or a young order's, is above every id that went there, and then the
 * spilled count (a byte on a line of its own, not in cache) is not read at all.
 */
static inline bool may_have_spilled(const struct tp_books *b, uint64_t s, uint64_t id)
{
    return id <= b->spilled_max_id && b->spilled[s] != 0;
}

/*
 * A live order of an instrument (tag: tp_order_tag), or NULL; s is the id's window slot
 * (tp_recent_slot), which an add computes once for this search and the store that follows.
 */
static inline struct tp_order *order_find_at(const struct tp_books *b, uint64_t s, uint32_t tag,
                                             uint64_t id)
{
    struct tp_order *o = &b->recent[s];

    if (order_is(o, tag, id))
        return o;
    return may_have_spilled(b, s, id) ? tp_mbo_overflow_find(b, tag, id) : NULL;
}

static inline struct tp_order *order_find(const struct tp_books *b, uint32_t tag, uint64_t id)
{
    return order_find_at(b, tp_recent_slot(b, id), tag, id);
}

/*
 * Whether (instr, id) is a live order, for the id of an add or a replace's new id: new almost
 * always. Its usual outcome (the window slot holds another id, and the id is above every one that
 * went to the overflow table) is one test that nearly always goes the same way; the full search
 * runs only when either part fails (order_find_at tests the slot, then the id, then the count).
 */
static inline bool order_exists_at(const struct tp_books *b, uint64_t s, uint32_t tag, uint64_t id)
{
    bool maybe = (b->recent[s].id == id) | (id <= b->spilled_max_id);

    return maybe && order_find_at(b, s, tag, id) != NULL;
}

/*
 * Stores an order whose (instrument, id) is not live (room checked) in its window slot s, moving
 * the live order there, if any, to the overflow table (a stale one is reclaimed).
 */
static inline void order_place(struct tp_books *b, uint64_t s, struct tp_order o)
{
    struct tp_order *slot = &b->recent[s];

    if (slot->qty)
        tp_mbo_spill(b, s);
    *slot = o;
}

/* Frees the slot of an order (live or stale) in whichever table holds it. */
static inline void order_free_slot(struct tp_books *b, struct tp_order *o)
{
    if (o >= b->recent && o < b->recent + b->recent_slots)
        o->qty = 0;
    else
        tp_mbo_overflow_remove(b, o);
}

/* Removes a live order from whichever table holds it. */
static inline void order_remove(struct tp_books *b, struct tp_order *o)
{
    order_free_slot(b, o);
    b->totals.live_orders--;
}

static inline struct tp_order_level *side_levels(struct tp_books *b, const struct tp_mbo_hot *h,
                                                 unsigned side)
{
    return tp_mbo_side_levels(b, h, side);
}

/*
 * Position where `key` is or would be inserted in lv[0..n) (ascending): the index of the level
 * with that key, else the number of levels with a smaller key. Most activity is near the top, so
 * the LEVEL_SCAN best (last) levels are compared without branches: the levels above `key` are
 * counted rather than scanned for, since where a scan stops is data that the branch predictor
 * misses about once a call. Deeper prices go to a binary search.
 */
static inline uint32_t level_position(const struct tp_order_level *lv, uint32_t n, int64_t key)
{
    uint32_t above = 0, p;

    /* Below level 0 are the sentinels: INT64_MIN is never above a key. */
    for (int64_t j = 1; j <= LEVEL_SCAN; j++)
        above += lv[(int64_t)n - j].key > key;
    /* One test for both conditions: a deep price is rare, and so is its misprediction. */
    if (above + (n > LEVEL_SCAN) == LEVEL_SCAN + 1) {
        /*
         * Deep price: binary search in [0, n - LEVEL_SCAN) for the first key >= `key`, without
         * branches on the keys (a conditional move per step). Which half a step takes is data:
         * a branch on it was mispredicted half of the time, and on a flow whose activity spreads
         * over a few dozen levels most searches are deep.
         */
        uint32_t base = 0, len = n - LEVEL_SCAN;
        while (len > 1) {
            uint32_t half = len / 2;
            base = lv[base + half].key < key ? base + half : base;
            len -= half;
        }
        return base + (lv[base].key < key);
    }
    p = n - above;
    /* The level just below the ones above `key` is `key`'s own if the prices are equal. */
    return p - ((p > 0) & (lv[(int64_t)p - 1].key == key));
}

/* Whether a level can take one more order of qty (> 0) without overflowing its size word. */
static inline bool level_takes(const struct tp_order_level *l, int64_t qty)
{
    uint32_t count = tp_level_count(l->size);
    int64_t room = TP_LEVEL_QTY_MAX - tp_level_qty(l->size);

    /* Without a branch: either limit is reached only by hostile input. */
    return (count < TP_LEVEL_COUNT_MAX) & (qty <= room);
}

/*
 * Writes a record of the order-level book field by field: building it as a compound literal
 * zeroed all 48 bytes and then stored the fields over them (gcc merges the constant header fields
 * into wider stores either way; composing the header words by hand measured no better). Every
 * field is written (a kind's unused fields and `reserved` are 0), so the records stay
 * byte-for-byte deterministic for consumers that copy them whole.
 */
static inline void write_record(struct tp_book_change *c, uint32_t instr, uint8_t kind,
                                unsigned side, uint8_t action, uint32_t level, uint8_t flags,
                                uint32_t count, int64_t price, int64_t qty, uint64_t order_id,
                                uint64_t aux)
{
    c->instrument = instr;
    c->kind = kind;
    c->book = TP_BOOK_ORDERS;
    c->side = (uint8_t)side;
    c->action = action;
    c->level = (uint16_t)level;
    c->flags = flags;
    c->reserved = 0;
    c->count = count;
    c->price = price;
    c->qty = qty;
    c->order_id = order_id;
    c->aux = aux;
}

/* A LEVEL record: level `index` (1 = best) of a side; price is the level's (not its key). */
static inline void level_record(struct tp_book_change *c, uint32_t instr, unsigned side,
                                uint8_t action, uint32_t index, uint32_t count, int64_t price,
                                int64_t qty)
{
    write_record(c, instr, TP_CHANGE_LEVEL, side, action, index, index == 1 ? TP_CHANGE_F_TOP : 0,
                 count, price, qty, 0, 0);
}

/*
 * Where an operation writes what it changed: change records (c, room for TP_BOOK_CHANGES_MAX), or,
 * when `compact`, order changes (oc, room for 2: tp_order_change.h). The operations are forced
 * inline and `compact` is a constant at each call, so every caller gets the one writer it uses:
 * the records' path is the same code as without the choice.
 */
struct mbo_out {
    struct tp_book_change *c;
    struct tp_order_change *oc;
    bool compact;
};

_Static_assert(TP_ORDER_CHANGE_COUNT_BITS == TP_LEVEL_COUNT_BITS,
               "an order change carries a level's size word as it is");

/* Change records at c: what the tp_mbo.h calls write. */
static inline struct mbo_out mbo_records(struct tp_book_change *c)
{
    return (struct mbo_out){.c = c, .compact = false};
}

/* The place of what comes n changes after o (n: what the operation at o returned). */
static inline struct mbo_out mbo_out_skip(struct mbo_out o, int n)
{
    if (o.compact)
        o.oc += n;
    else
        o.c += n;
    return o;
}

/* Where the LEVEL part of the change at o goes: the record after the ORDER one, or the same
 * order change. */
static inline struct mbo_out mbo_out_level(struct mbo_out o)
{
    return o.compact ? o : mbo_out_skip(o, 1);
}

/* The LEVEL part of a change: level `index` of a side now of `size` (0 when it went). */
static inline void level_emit(struct mbo_out o, uint32_t instr, unsigned side, uint8_t action,
                              uint32_t index, uint64_t size, int64_t price)
{
    if (o.compact) {
        o.oc->level_action = action;
        o.oc->level_size = size;
        return;
    }
    level_record(o.c, instr, side, action, index, tp_level_count(size), price, tp_level_qty(size));
}

/*
 * The level functions below and the order functions after them write their change records only
 * when the instrument emits them (`out` is then room for them). The level functions return the
 * index of the level their record names (>= 1), or 0 when they wrote none, for the ORDER record
 * that precedes it. They take the order's price as well as its key: the records carry the price,
 * and the caller has it. They are forced inline into their few callers: a call would cost about
 * as many instructions (saving and restoring registers) as their common path.
 */

/*
 * Adds qty (one order, at most UINT32_MAX) at `key` on one side. Returns the level index of the
 * record written (0 when not emitting), or -ENOSPC when a new level is needed and the side is
 * full, or the level would overflow its quantity or order count.
 */
static inline __attribute__((always_inline)) int level_add(struct tp_books *b, struct tp_mbo_hot *h,
                                                           uint32_t instr, unsigned side,
                                                           int64_t key, int64_t price, int64_t qty,
                                                           struct mbo_out out)
{
    struct tp_order_level *lv = side_levels(b, h, side);
    uint32_t n = h->levels[side];
    uint32_t p = level_position(lv, n, key);
    uint32_t index;
    uint8_t action;

    if (p < n && lv[p].key == key) {
        if (!level_takes(&lv[p], qty))
            goto full;
        lv[p].size += tp_level_size(qty, 1);
        index = n - p;
        action = TP_LEVEL_CHANGE;
    } else {
        if (n == b->params.levels_per_side)
            goto full;
        /* Near the top of book only a few levels move: a plain loop beats a memmove call. */
        for (uint32_t i = n; i > p; i--)
            lv[i] = lv[i - 1];
        lv[p].key = key;
        lv[p].size = tp_level_size(qty, 1);
        h->levels[side] = (uint16_t)(n + 1);
        index = n + 1 - p;
        action = TP_LEVEL_NEW;
    }
    if (!tp_mbo_emits(h))
        return 0;
    level_emit(out, instr, side, action, index, lv[p].size, price);
    return (int)index;
full:
    return tp_books_refuse_level(b, instr);
}

/*
 * Removes qty from the level at `key` and, if `whole_order`, one order from its count; the level
 * goes when no order is left. Returns the level index of the record written, or 0.
 */
static inline __attribute__((always_inline)) int
level_reduce(struct tp_books *b, struct tp_mbo_hot *h, uint32_t instr, unsigned side, int64_t key,
             int64_t price, int64_t qty, int whole_order, struct mbo_out out)
{
    struct tp_order_level *lv = side_levels(b, h, side);
    uint32_t n = h->levels[side];
    uint32_t p = level_position(lv, n, key);

    if (p == n || lv[p].key != key) {
        /* An order without its level cannot happen; count it rather than trust it. */
        tp_book_of(b, instr)->counters.bad_input++;
        return 0;
    }
    /* The order's qty and count are part of the level's: no borrow crosses the fields. */
    lv[p].size -= tp_level_size(qty, whole_order ? 1 : 0);
    if (tp_level_count(lv[p].size) > 0) {
        if (!tp_mbo_emits(h))
            return 0;
        level_emit(out, instr, side, TP_LEVEL_CHANGE, n - p, lv[p].size, price);
        return (int)(n - p);
    }
    for (uint32_t i = p; i + 1 < n; i++)
        lv[i] = lv[i + 1];
    h->levels[side] = (uint16_t)(n - 1);
    if (!tp_mbo_emits(h))
        return 0;
    level_emit(out, instr, side, TP_LEVEL_DELETE, n - p, 0, price);
    return (int)(n - p);
}

/*
 * The ORDER record of a change whose LEVEL record (if any: `level` > 0, its index) follows it,
 * written when emitting. `qty` is what remains of the order, `count` what an execution took.
 * Returns the number of records of the change (ORDER and LEVEL), or 0; compact: the order change
 * (its level part is written already), 1, or 0.
 */
static inline int order_record(const struct tp_mbo_hot *h, struct mbo_out out, uint32_t instr,
                               uint8_t action, unsigned side, int64_t price, int64_t qty,
                               uint32_t count, uint64_t id, uint64_t priority, int level)
{
    if (!tp_mbo_emits(h))
        return 0;
    if (out.compact) {
        struct tp_order_change *oc = out.oc;
        oc->instrument = instr;
        oc->action = action;
        oc->side = (uint8_t)side;
        oc->flags = 0;
        oc->level = (uint32_t)level;
        oc->count = count;
        oc->price = price;
        oc->qty = qty;
        oc->order_id = id;
        oc->priority = priority;
        return 1;
    }
    write_record(out.c, instr, TP_CHANGE_ORDER, side, action, (uint32_t)level, 0, count, price, qty,
                 id, priority);
    return 1 + (level > 0);
}

/* The hot state of an instrument if it takes order-level updates, else counts and NULL. */
static inline struct tp_mbo_hot *mbo_book(struct tp_books *b, uint32_t instr)
{
    if (!tp_books_has(b, instr))
        return NULL;
    if (tp_mbo_is_book(tp_hot_of(b, instr)))
        return tp_hot_of(b, instr);
    tp_book_of(b, instr)->counters.bad_input++;
    return NULL;
}

/*
 * Finds a live order of instrument `instr` (tag: its orders', tp_order_tag). Unknown ids, ids of
 * another instrument and orders dropped by a clear are counted on the instrument and give NULL.
 */
static inline struct tp_order *mbo_lookup(struct tp_books *b, uint32_t instr, uint32_t tag,
                                          uint64_t id)
{
    struct tp_order *o = order_find(b, tag, id);

    if (!o)
        tp_book_of(b, instr)->counters.unknown_order++;
    return o;
}

/*
 * A new price and quantity an order may take: qty fits the order's 32 bits, and the price has a
 * level key (INT64_MIN has no negation, and the sentinels use it). Counts what is wrong.
 */
static inline bool order_values_ok(struct tp_book_counters *counters, int64_t price, int64_t qty)
{
    if (qty <= 0 || qty > UINT32_MAX) {
        counters->bad_quantity++;
        return false;
    }
    if (price == INT64_MIN) {
        counters->bad_price++;
        return false;
    }
    return true;
}

/*
 * Inserts a new order whose checks the caller made (side, values, not live, room in the table):
 * `h` is the instrument's MBO state, tag its orders' and s the id's window slot. Shared by add and
 * replace.
 */
static inline __attribute__((always_inline)) int
order_insert(struct tp_books *b, struct tp_mbo_hot *h, uint32_t instr, uint32_t tag, uint64_t s,
             uint64_t id, unsigned side, int64_t price, int64_t qty, uint64_t priority,
             struct mbo_out out)
{
    int64_t key = tp_level_key(side, price);
    int level = level_add(b, h, instr, side, key, price, qty, mbo_out_level(out));

    if (level < 0)
        return level;
    order_place(b, s,
                (struct tp_order){.id = id,
                                  .key = key,
                                  .priority = priority,
                                  .qty = (uint32_t)qty,
                                  .instr_side = tag << 1 | side});
    /* A maximum without a branch: whether a new peak is reached is data, mispredicted. */
    b->totals.live_orders++;
    b->totals.peak_live_orders = b->totals.live_orders > b->totals.peak_live_orders
                                     ? b->totals.live_orders
                                     : b->totals.peak_live_orders;
    h->live_orders++;
    return order_record(h, out, instr, TP_ORDER_ADD, side, price, qty, 0, id, priority, level);
}

/*
 * Removes a whole order from its level and the table. Writes ORDER (`action`, remaining qty 0,
 * count: what an execution took) + LEVEL.
 */
static inline __attribute__((always_inline)) int order_erase(struct tp_books *b,
                                                             struct tp_mbo_hot *h, uint32_t instr,
                                                             struct tp_order *o, uint8_t action,
                                                             uint32_t count, struct mbo_out out)
{
    unsigned side = o->instr_side & 1u;
    int64_t price = tp_level_key(side, o->key);
    int level = level_reduce(b, h, instr, side, o->key, price, o->qty, 1, mbo_out_level(out));
    int n = order_record(h, out, instr, action, side, price, 0, count, o->id, o->priority, level);

    order_remove(b, o);
    h->live_orders--;
    return n;
}

TP_MBO_OP int tp_mbo_add_inline(struct tp_books *b, uint32_t instr, uint64_t order_id,
                                enum tp_side side, int64_t price, int64_t qty, uint64_t priority,
                                struct mbo_out out)
{
    struct tp_mbo_hot *h = mbo_book(b, instr);
    struct tp_book_counters *counters;
    uint32_t tag;
    uint64_t s;

    if (!h)
        return -EINVAL;
    counters = &tp_book_of(b, instr)->counters;
    if (side > TP_SIDE_ASK) {
        counters->bad_input++;
        return -EINVAL;
    }
    if (!order_values_ok(counters, price, qty))
        return -EINVAL;
    s = tp_recent_slot(b, order_id);
    tag = tp_order_tag(h);
    if (order_exists_at(b, s, tag, order_id)) {
        counters->duplicate_order++;
        return -EEXIST;
    }
    if (b->totals.live_orders >= b->params.max_orders) {
        counters->order_capacity++;
        b->totals.order_capacity++;
        return -ENOSPC;
    }
    return order_insert(b, h, instr, tag, s, order_id, side, price, qty, priority, out);
}

/*
 * Takes qty from a live order: the shared part of execute and cancel. `count` is the ORDER
 * record's (what an execution took, 0 for a cancel).
 */
static inline __attribute__((always_inline)) int
order_reduce(struct tp_books *b, struct tp_mbo_hot *h, uint32_t instr, struct tp_order *o,
             int64_t qty, uint8_t action, uint32_t count, struct mbo_out out)
{
    unsigned side;
    int64_t price;
    int level;

    if (qty >= o->qty) {
        if (qty > o->qty)
            tp_book_of(b, instr)->counters.over_execution++;
        return order_erase(b, h, instr, o, action, count, out);
    }
    o->qty -= (uint32_t)qty;
    side = o->instr_side & 1u;
    price = tp_level_key(side, o->key);
    level = level_reduce(b, h, instr, side, o->key, price, qty, 0, mbo_out_level(out));
    return order_record(h, out, instr, action, side, price, o->qty, count, o->id, o->priority,
                        level);
}

/*
 * The resting order an execution or cancel of qty > 0 reduces (and *h), or NULL with *rc set:
 * -EINVAL (no MBO book; a non-positive quantity, counted) or -ENOENT.
 */
static inline struct tp_order *order_to_reduce(struct tp_books *b, uint32_t instr,
                                               uint64_t order_id, int64_t qty,
                                               struct tp_mbo_hot **h, int *rc)
{
    struct tp_order *o;

    *rc = -EINVAL;
    *h = mbo_book(b, instr);
    if (!*h)
        return NULL;
    if (qty <= 0) {
        tp_book_of(b, instr)->counters.bad_quantity++;
        return NULL;
    }
    o = mbo_lookup(b, instr, tp_order_tag(*h), order_id);
    *rc = -ENOENT;
    return o;
}

TP_MBO_OP int tp_mbo_execute_inline(struct tp_books *b, uint32_t instr, uint64_t order_id,
                                    int64_t qty, int64_t price, int printable, uint64_t match,
                                    struct mbo_out out)
{
    struct tp_mbo_hot *h;
    int rc;
    struct tp_order *o = order_to_reduce(b, instr, order_id, qty, &h, &rc);
    unsigned side;
    int n;

    if (!o)
        return rc;
    side = o->instr_side & 1u;
    if (price == TP_MBO_ORDER_PRICE)
        price = tp_level_key(side, o->key);
    if (qty > o->qty)
        qty = o->qty; /* only what rested can have traded */
    /* Order quantities are 32-bit: qty, clamped, fits the record's count. */
    n = order_reduce(b, h, instr, o, qty, TP_ORDER_EXECUTE, (uint32_t)qty, out);
    if (!printable)
        return n;
    /* The resting order was passive: the aggressor was on the other side. */
    if (out.compact) {
        /* The instrument writes its trade records exactly when its order changes (n = 1). */
        if (tp_books_note_trade(b, instr, price, qty,
                                side == TP_SIDE_BID ? TP_SIDE_ASK : TP_SIDE_BID) == 1 &&
            n) {
            out.oc->flags = TP_ORDER_CHANGE_F_TRADE;
            out.oc->trade_price = price;
            out.oc->match = match;
        }
        return n;
    }
    if (tp_books_trade(b, instr, price, qty, side == TP_SIDE_BID ? TP_SIDE_ASK : TP_SIDE_BID, match,
                       out.c + n) == 1) {
        out.c[n].order_id = order_id;
        n++;
    }
    return n;
}

TP_MBO_OP int tp_mbo_cancel_inline(struct tp_books *b, uint32_t instr, uint64_t order_id,
                                   int64_t qty, struct mbo_out out)
{
    struct tp_mbo_hot *h;
    int rc;
    struct tp_order *o = order_to_reduce(b, instr, order_id, qty, &h, &rc);

    if (!o)
        return rc;
    return order_reduce(b, h, instr, o, qty, TP_ORDER_CANCEL, 0, out);
}

TP_MBO_OP int tp_mbo_delete_inline(struct tp_books *b, uint32_t instr, uint64_t order_id,
                                   struct mbo_out out)
{
    struct tp_mbo_hot *h = mbo_book(b, instr);
    struct tp_order *o;

    if (!h)
        return -EINVAL;
    o = mbo_lookup(b, instr, tp_order_tag(h), order_id);
    if (!o)
        return -ENOENT;
    return order_erase(b, h, instr, o, TP_ORDER_DELETE, 0, out);
}

TP_MBO_OP int tp_mbo_replace_inline(struct tp_books *b, uint32_t instr, uint64_t old_id,
                                    uint64_t new_id, int64_t price, int64_t qty, uint64_t priority,
                                    struct mbo_out out)
{
    struct tp_mbo_hot *h = mbo_book(b, instr);
    struct tp_order *o;
    unsigned side;
    uint32_t tag;
    uint64_t s;
    int n, m;

    if (!h)
        return -EINVAL;
    if (!order_values_ok(&tp_book_of(b, instr)->counters, price, qty))
        return -EINVAL;
    tag = tp_order_tag(h);
    o = mbo_lookup(b, instr, tag, old_id);
    if (!o)
        return -ENOENT;
    s = tp_recent_slot(b, new_id);
    if (new_id != old_id && order_exists_at(b, s, tag, new_id)) {
        tp_book_of(b, instr)->counters.duplicate_order++;
        return -EEXIST;
    }
    side = o->instr_side & 1u;
    n = order_erase(b, h, instr, o, TP_ORDER_DELETE, 0, out);
    /*
     * The new id is not live (checked above, or it is the id just removed) and the freed slot
     * makes room in the table; a full level array may still refuse.
     */
    m = order_insert(b, h, instr, tag, s, new_id, side, price, qty, priority, mbo_out_skip(out, n));
    return m < 0 ? n : n + m;
}

#endif /* TP_MBO_OPS_H */
