/*
 * Order-level books: the order table and the aggregated levels (see tp_mbo.h).
 */
#include <errno.h>
#include <string.h>

#include "tp_books_impl.h"
#include "tp_instruments.h"
#include "tp_mbo.h"

/* Levels scanned linearly from the best one before switching to binary search. */
#define LEVEL_SCAN 8

/*
 * The order table's geometry, copied into locals: stores into the table could otherwise alias
 * struct tp_books and force the compiler to reload these on every probe.
 */
struct order_table {
    struct tp_order *t;
    uint64_t mask;
    unsigned hash_shift; /* 64 - log2 of the slots */
};

static inline struct order_table order_table(const struct tp_books *b)
{
    return (struct order_table){
        .t = b->orders, .mask = b->order_mask, .hash_shift = 64 - b->order_shift};
}

/*
 * Home slot of an order id: Fibonacci hashing (multiply by 2^64 / golden ratio, keep the top
 * bits). Consecutive ids, as the venues hand them out, land about 0.618 of the table apart and
 * fill it as evenly as a low-discrepancy sequence, so probe runs stay short at any load and for
 * any id pattern (sparse, strided). Keeping consecutive ids in neighbouring slots was measured
 * worse: when the window of live ids wraps around the table it runs into older orders and the
 * probe runs grow long. The misses scattered ids cost are hidden by the prefetch hints.
 */
static inline uint64_t order_home(struct order_table ot, uint64_t id)
{
    return (id * 0x9e3779b97f4a7c15ull) >> ot.hash_shift;
}

/* How far the order in slot j sits from its home slot. */
static inline uint64_t order_distance(struct order_table ot, uint64_t j)
{
    return (j - order_home(ot, ot.t[j].id)) & ot.mask;
}

/*
 * The table is a Robin Hood hash: along a probe run, orders are kept in the order of their home
 * slots, so a lookup stops as soon as it meets an order closer to its home than the probe is to
 * the key's home, and a removal stops at the first order that sits at its home. At the load
 * factor of at most 1/2 most orders sit at their home: lookups and removals touch a slot or two.
 */

/* Slot of a live order, or -1. */
static inline int64_t order_find(const struct tp_books *b, uint64_t id)
{
    struct order_table ot = order_table(b);
    uint64_t i = order_home(ot, id);

    for (uint64_t d = 0; ot.t[i].qty; d++, i = (i + 1) & ot.mask) {
        if (ot.t[i].id == id)
            return (int64_t)i;
        if (order_distance(ot, i) < d)
            break;
    }
    return -1;
}

/* Stores an order whose id is not in the table (room checked); returns its slot. */
static uint64_t order_place(struct order_table ot, struct tp_order o)
{
    uint64_t i = order_home(ot, o.id), placed = UINT64_MAX;

    for (uint64_t d = 0;; d++, i = (i + 1) & ot.mask) {
        if (!ot.t[i].qty) {
            ot.t[i] = o;
            return placed == UINT64_MAX ? i : placed;
        }
        uint64_t di = order_distance(ot, i);
        if (di < d) {
            /* The resident is closer to home: it yields the slot and moves on instead. */
            struct tp_order evicted = ot.t[i];
            ot.t[i] = o;
            o = evicted;
            d = di;
            if (placed == UINT64_MAX)
                placed = i;
        }
    }
}

/* Frees slot i, shifting the rest of the probe run back by one (no tombstones). */
static void order_remove(struct tp_books *b, uint64_t i)
{
    struct order_table ot = order_table(b);

    for (;;) {
        uint64_t next = (i + 1) & ot.mask;
        if (!ot.t[next].qty || order_distance(ot, next) == 0)
            break;
        ot.t[i] = ot.t[next];
        i = next;
    }
    ot.t[i].qty = 0;
    b->live_orders--;
}

static inline struct tp_level *side_levels(struct tp_books *b, uint32_t instr, unsigned side)
{
    return &b->order_levels[((size_t)instr * 2 + side) * b->params.levels_per_side];
}

/*
 * Position where `key` is or would be inserted in lv[0..n) (ascending): the number of levels with
 * a smaller key. Scans from the best (last) level because most activity is near the top.
 */
static inline uint32_t level_position(const struct tp_level *lv, uint32_t n, int64_t key)
{
    uint32_t p = n;
    uint32_t lo = 0;

    for (uint32_t steps = 0; p > 0 && lv[p - 1].price > key; steps++) {
        if (steps == LEVEL_SCAN) {
            /* Deep price: binary search in [0, p) for the first key >= `key`. */
            uint32_t hi = p;
            while (lo < hi) {
                uint32_t mid = lo + (hi - lo) / 2;
                if (lv[mid].price < key)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            return lo;
        }
        p--;
    }
    if (p > 0 && lv[p - 1].price == key)
        return p - 1;
    return p;
}

static inline void level_record(struct tp_book_change *c, uint32_t instr, unsigned side,
                                uint8_t action, uint32_t index, const struct tp_level *lv,
                                int64_t key)
{
    *c = (struct tp_book_change){.instrument = instr,
                                 .kind = TP_CHANGE_LEVEL,
                                 .book = TP_BOOK_ORDERS,
                                 .side = (uint8_t)side,
                                 .action = action,
                                 .level = (uint16_t)index,
                                 .flags = index == 1 ? TP_CHANGE_F_TOP : 0,
                                 .count = lv ? lv->count : 0,
                                 .price = tp_level_key(side, key),
                                 .qty = lv ? lv->qty : 0};
}

/*
 * Adds qty (one order) at `key` on one side. Returns the number of records written (1), or
 * -ENOSPC when a new level is needed and the side is full.
 */
static int level_add(struct tp_books *b, struct tp_book *bk, uint32_t instr, unsigned side,
                     int64_t key, int64_t qty, struct tp_book_change *out)
{
    struct tp_level *lv = side_levels(b, instr, side);
    uint32_t n = bk->order_levels[side];
    uint32_t p = level_position(lv, n, key);

    if (p < n && lv[p].price == key) {
        lv[p].qty += qty;
        lv[p].count++;
        level_record(out, instr, side, TP_LEVEL_CHANGE, n - p, &lv[p], key);
        return 1;
    }
    if (n == b->params.levels_per_side) {
        bk->counters.level_capacity++;
        return -ENOSPC;
    }
    /* Near the top of book only a few levels move: a plain loop beats a memmove call. */
    for (uint32_t i = n; i > p; i--)
        lv[i] = lv[i - 1];
    lv[p].price = key;
    lv[p].qty = qty;
    lv[p].count = 1;
    bk->order_levels[side] = (uint16_t)(n + 1);
    level_record(out, instr, side, TP_LEVEL_NEW, n + 1 - p, &lv[p], key);
    return 1;
}

/*
 * Removes qty from the level at `key` and, if `whole_order`, one order from its count; the level
 * goes when no order is left. Returns the number of records written (1).
 */
static int level_reduce(struct tp_books *b, struct tp_book *bk, uint32_t instr, unsigned side,
                        int64_t key, int64_t qty, int whole_order, struct tp_book_change *out)
{
    struct tp_level *lv = side_levels(b, instr, side);
    uint32_t n = bk->order_levels[side];
    uint32_t p = level_position(lv, n, key);

    if (p == n || lv[p].price != key) {
        /* An order without its level cannot happen; count it rather than trust it. */
        bk->counters.bad_input++;
        return 0;
    }
    lv[p].qty -= qty;
    lv[p].count -= whole_order ? 1 : 0;
    if (lv[p].count > 0) {
        level_record(out, instr, side, TP_LEVEL_CHANGE, n - p, &lv[p], key);
        return 1;
    }
    level_record(out, instr, side, TP_LEVEL_DELETE, n - p, NULL, key);
    for (uint32_t i = p; i + 1 < n; i++)
        lv[i] = lv[i + 1];
    bk->order_levels[side] = (uint16_t)(n - 1);
    return 1;
}

static inline void order_record(struct tp_book_change *c, uint32_t instr, uint8_t action,
                                const struct tp_order *o)
{
    unsigned side = o->instr_side & 1u;

    *c = (struct tp_book_change){.instrument = instr,
                                 .kind = TP_CHANGE_ORDER,
                                 .book = TP_BOOK_ORDERS,
                                 .side = (uint8_t)side,
                                 .action = action,
                                 .price = tp_level_key(side, o->key),
                                 .qty = o->qty,
                                 .order_id = o->id,
                                 .aux = o->priority};
}

/* The book of an instrument if it takes order-level updates, else counts and returns NULL. */
static inline struct tp_book *mbo_book(struct tp_books *b, uint32_t instr)
{
    struct tp_book *bk = tp_books_book(b, instr);

    if (bk && (bk->type & TP_BOOK_TYPE_MBO))
        return bk;
    if (bk)
        bk->counters.bad_input++;
    return NULL;
}

/*
 * Finds a live order of instrument `instr`. Unknown ids and ids of another instrument are
 * counted on `bk` and give -1.
 */
static inline int64_t mbo_lookup(struct tp_books *b, struct tp_book *bk, uint32_t instr,
                                 uint64_t id)
{
    int64_t slot = order_find(b, id);

    if (slot < 0) {
        bk->counters.unknown_order++;
        return -1;
    }
    if ((b->orders[slot].instr_side >> 1) != instr) {
        bk->counters.wrong_instrument++;
        return -1;
    }
    return slot;
}

/* Inserts a new order; `bk` is the instrument's MBO book. Shared by add and replace. */
static int order_insert(struct tp_books *b, struct tp_book *bk, uint32_t instr, uint64_t id,
                        unsigned side, int64_t price, int64_t qty, uint64_t priority,
                        struct tp_book_change *out)
{
    uint64_t i;
    int64_t key;
    int n;

    if (side > TP_SIDE_ASK) {
        bk->counters.bad_input++;
        return -EINVAL;
    }
    if (qty <= 0 || qty > UINT32_MAX) {
        bk->counters.bad_quantity++;
        return -EINVAL;
    }
    if (order_find(b, id) >= 0) {
        bk->counters.duplicate_order++;
        return -EEXIST;
    }
    if (b->live_orders >= b->params.max_orders) {
        bk->counters.order_capacity++;
        return -ENOSPC;
    }
    key = tp_level_key(side, price);
    n = level_add(b, bk, instr, side, key, qty, out + 1);
    if (n < 0)
        return n;
    i = order_place(order_table(b), (struct tp_order){.id = id,
                                                      .key = key,
                                                      .priority = priority,
                                                      .qty = (uint32_t)qty,
                                                      .instr_side = instr << 1 | side});
    if (++b->live_orders > b->peak_live_orders)
        b->peak_live_orders = b->live_orders;
    bk->live_orders++;
    order_record(out, instr, TP_ORDER_ADD, &b->orders[i]);
    out[0].level = out[1].level;
    return 1 + n;
}

/* Removes a whole order (slot) from its level and the table. Writes ORDER DELETE + LEVEL. */
static int order_erase(struct tp_books *b, struct tp_book *bk, uint32_t instr, uint64_t slot,
                       struct tp_book_change *out)
{
    struct tp_order *o = &b->orders[slot];
    unsigned side = o->instr_side & 1u;
    int n;

    order_record(out, instr, TP_ORDER_DELETE, o);
    out[0].qty = 0;
    n = level_reduce(b, bk, instr, side, o->key, o->qty, 1, out + 1);
    out[0].level = n ? out[1].level : 0;
    order_remove(b, slot);
    bk->live_orders--;
    return 1 + n;
}

int tp_mbo_add(struct tp_books *b, uint32_t instr, uint64_t order_id, enum tp_side side,
               int64_t price, int64_t qty, uint64_t priority, struct tp_book_change *out)
{
    struct tp_book *bk = mbo_book(b, instr);

    if (!bk)
        return -EINVAL;
    return order_insert(b, bk, instr, order_id, side, price, qty, priority, out);
}

/* Takes qty from a live order: the shared part of execute and cancel. */
static int order_reduce(struct tp_books *b, struct tp_book *bk, uint32_t instr, uint64_t slot,
                        int64_t qty, uint8_t action, struct tp_book_change *out)
{
    struct tp_order *o = &b->orders[slot];
    unsigned side = o->instr_side & 1u;
    int n;

    if (qty >= o->qty) {
        if (qty > o->qty)
            bk->counters.over_execution++;
        n = order_erase(b, bk, instr, slot, out);
        out[0].action = action;
        return n;
    }
    o->qty -= (uint32_t)qty;
    order_record(out, instr, action, o);
    n = level_reduce(b, bk, instr, side, o->key, qty, 0, out + 1);
    out[0].level = n ? out[1].level : 0;
    return 1 + n;
}

/*
 * The resting order an execution or cancel of qty > 0 reduces: its slot (and *bk), or -EINVAL
 * (no MBO book; a non-positive quantity, counted) or -ENOENT.
 */
static int64_t order_to_reduce(struct tp_books *b, uint32_t instr, uint64_t order_id, int64_t qty,
                               struct tp_book **bk)
{
    *bk = mbo_book(b, instr);
    if (!*bk)
        return -EINVAL;
    if (qty <= 0) {
        (*bk)->counters.bad_quantity++;
        return -EINVAL;
    }
    int64_t slot = mbo_lookup(b, *bk, instr, order_id);
    return slot < 0 ? -ENOENT : slot;
}

int tp_mbo_execute(struct tp_books *b, uint32_t instr, uint64_t order_id, int64_t qty,
                   int64_t price, int printable, uint64_t match, struct tp_book_change *out)
{
    struct tp_book *bk;
    int64_t slot = order_to_reduce(b, instr, order_id, qty, &bk);
    unsigned side;
    int n;

    if (slot < 0)
        return (int)slot;
    side = b->orders[slot].instr_side & 1u;
    if (price == TP_MBO_ORDER_PRICE)
        price = tp_level_key(side, b->orders[slot].key);
    if (qty > b->orders[slot].qty)
        qty = b->orders[slot].qty; /* only what rested can have traded */
    n = order_reduce(b, bk, instr, (uint64_t)slot, qty, TP_ORDER_EXECUTE, out);
    if (!printable)
        return n;
    /* The resting order was passive: the aggressor was on the other side. */
    n += tp_books_trade(b, instr, price, qty, side == TP_SIDE_BID ? TP_SIDE_ASK : TP_SIDE_BID,
                        match, out + n);
    out[n - 1].order_id = order_id;
    return n;
}

int tp_mbo_cancel(struct tp_books *b, uint32_t instr, uint64_t order_id, int64_t qty,
                  struct tp_book_change *out)
{
    struct tp_book *bk;
    int64_t slot = order_to_reduce(b, instr, order_id, qty, &bk);

    if (slot < 0)
        return (int)slot;
    return order_reduce(b, bk, instr, (uint64_t)slot, qty, TP_ORDER_CANCEL, out);
}

int tp_mbo_delete(struct tp_books *b, uint32_t instr, uint64_t order_id, struct tp_book_change *out)
{
    struct tp_book *bk = mbo_book(b, instr);
    int64_t slot;

    if (!bk)
        return -EINVAL;
    slot = mbo_lookup(b, bk, instr, order_id);
    if (slot < 0)
        return -ENOENT;
    return order_erase(b, bk, instr, (uint64_t)slot, out);
}

int tp_mbo_replace(struct tp_books *b, uint32_t instr, uint64_t old_id, uint64_t new_id,
                   int64_t price, int64_t qty, uint64_t priority, struct tp_book_change *out)
{
    struct tp_book *bk = mbo_book(b, instr);
    int64_t slot;
    unsigned side;
    int n, m;

    if (!bk)
        return -EINVAL;
    if (qty <= 0 || qty > UINT32_MAX) {
        bk->counters.bad_quantity++;
        return -EINVAL;
    }
    slot = mbo_lookup(b, bk, instr, old_id);
    if (slot < 0)
        return -ENOENT;
    if (new_id != old_id && order_find(b, new_id) >= 0) {
        bk->counters.duplicate_order++;
        return -EEXIST;
    }
    side = b->orders[slot].instr_side & 1u;
    n = order_erase(b, bk, instr, (uint64_t)slot, out);
    /* The freed slot guarantees room in the table; a full level array may still refuse. */
    m = order_insert(b, bk, instr, new_id, side, price, qty, priority, out + n);
    return m < 0 ? n : n + m;
}

int tp_mbo_modify(struct tp_books *b, uint32_t instr, uint64_t order_id, int64_t price, int64_t qty,
                  uint64_t priority, struct tp_book_change *out)
{
    struct tp_book *bk = mbo_book(b, instr);
    struct tp_order *o;
    int64_t slot, key;
    unsigned side;
    int n;

    if (!bk)
        return -EINVAL;
    if (qty <= 0 || qty > UINT32_MAX) {
        bk->counters.bad_quantity++;
        return -EINVAL;
    }
    slot = mbo_lookup(b, bk, instr, order_id);
    if (slot < 0)
        return -ENOENT;
    o = &b->orders[slot];
    side = o->instr_side & 1u;
    key = tp_level_key(side, price);
    if (key == o->key) {
        /* Same level: only its quantity moves. */
        struct tp_level *lv = side_levels(b, instr, side);
        uint32_t nl = bk->order_levels[side];
        uint32_t p = level_position(lv, nl, key);
        lv[p].qty += qty - (int64_t)o->qty;
        o->qty = (uint32_t)qty;
        o->priority = priority;
        order_record(out, instr, TP_ORDER_MODIFY, o);
        level_record(out + 1, instr, side, TP_LEVEL_CHANGE, nl - p, &lv[p], key);
        out[0].level = out[1].level;
        return 2;
    }
    /*
     * New price: the order leaves its level and joins (or creates) another. Refuse up front if
     * the new level would not fit, so that a refused modify changes nothing.
     */
    {
        struct tp_level *lv = side_levels(b, instr, side);
        uint32_t nl = bk->order_levels[side];
        uint32_t p = level_position(lv, nl, key);
        uint32_t old = level_position(lv, nl, o->key);
        int frees_level = old < nl && lv[old].count == 1;
        if (!(p < nl && lv[p].price == key) && nl == b->params.levels_per_side && !frees_level) {
            bk->counters.level_capacity++;
            return -ENOSPC;
        }
    }
    n = level_reduce(b, bk, instr, side, o->key, o->qty, 1, out + 1);
    n += level_add(b, bk, instr, side, key, qty, out + 1 + n);
    o->key = key;
    o->qty = (uint32_t)qty;
    o->priority = priority;
    order_record(out, instr, TP_ORDER_MODIFY, o);
    out[0].level = out[n].level;
    return 1 + n;
}

int tp_mbo_order(const struct tp_books *b, uint64_t order_id, uint32_t *instr, enum tp_side *side,
                 int64_t *price, int64_t *qty, uint64_t *priority)
{
    const struct tp_order *o;
    int64_t slot;

    if (b->params.max_orders == 0)
        return -ENOENT;
    slot = order_find(b, order_id);
    if (slot < 0)
        return -ENOENT;
    o = &b->orders[slot];
    if (instr)
        *instr = o->instr_side >> 1;
    if (side)
        *side = (enum tp_side)(o->instr_side & 1u);
    if (price)
        *price = tp_level_key(o->instr_side & 1u, o->key);
    if (qty)
        *qty = o->qty;
    if (priority)
        *priority = o->priority;
    return 0;
}

void tp_mbo_prefetch(const struct tp_books *b, uint32_t instr, uint64_t order_id)
{
    if (b->params.max_orders)
        __builtin_prefetch(&b->orders[order_home(order_table(b), order_id)], 1);
    if (instr < b->params.instruments)
        __builtin_prefetch(&b->books[instr], 1);
}

void tp_mbo_prefetch_levels(const struct tp_books *b, uint32_t instr, enum tp_side side)
{
    const uint32_t per_side = b->params.levels_per_side;
    const struct tp_level *bids, *asks;

    if (instr >= b->params.instruments)
        return;
    /*
     * The best level is the last one of each side's array. With no level the address is the
     * entry just before the array: still inside the table, and a prefetch never faults anyway.
     */
    bids = &b->order_levels[(size_t)instr * 2 * per_side];
    asks = bids + per_side;
    if (side != TP_SIDE_ASK)
        __builtin_prefetch(bids + b->books[instr].order_levels[TP_SIDE_BID] - 1, 1);
    if (side != TP_SIDE_BID)
        __builtin_prefetch(asks + b->books[instr].order_levels[TP_SIDE_ASK] - 1, 1);
}

void tp_mbo_drop_orders(struct tp_books *b, uint32_t instr)
{
    struct tp_book *bk = &b->books[instr];
    uint64_t i = 0;

    /*
     * Backward-shift removal only moves entries towards lower slots (or across the wrap onto the
     * end), so re-examining slot i after a removal visits every order exactly once.
     */
    while (bk->live_orders && i <= b->order_mask && b->params.max_orders) {
        if (b->orders[i].qty && (b->orders[i].instr_side >> 1) == instr) {
            order_remove(b, i);
            bk->live_orders--;
            continue;
        }
        i++;
    }
    bk->order_levels[0] = bk->order_levels[1] = 0;
}

int tp_mbo_clear(struct tp_books *b, uint32_t instr, struct tp_book_change *out)
{
    struct tp_book *bk = mbo_book(b, instr);

    if (!bk)
        return -EINVAL;
    tp_mbo_drop_orders(b, instr);
    tp_change(out, instr, TP_CHANGE_CLEAR, TP_BOOK_ORDERS, TP_SIDE_NONE, 0);
    return 1;
}
