/*
 * Order-level books: the order table and the aggregated levels (see tp_mbo.h). The operations of
 * the ITCH path are inline in tp_mbo_ops.h (the ITCH feed uses them directly); this file has the
 * overflow table, the exported calls built from those operations, and the rest (MDP3 modify,
 * reads, clears, prefetch).
 */
#include <errno.h>
#include <string.h>

#include "tp_books_impl.h"
#include "tp_books_prefetch.h"
#include "tp_instruments.h"
#include "tp_mbo.h"
#include "tp_mbo_ops.h"

/*
 * Where orders live. Venues hand out increasing order ids (ITCH numbers the day's orders across
 * all stocks; MDP3 ids grow too), and most orders are deleted or executed soon after they are
 * added, while the orders that stay live longer mostly rest deep in the book and are rarely
 * touched. So an order first goes to the recent-order window, a ring of slots indexed by its id
 * modulo the ring's size: the orders added together sit in neighbouring slots (two per cache
 * line), so the messages about young orders touch a few lines and pages that are already in
 * cache, and finding one is a load and a compare. When a newer id claims a window slot whose order
 * is still live, that order moves to the overflow table, a hash table with room for every live
 * order. A per-slot count of moved orders, and the largest id ever moved, say when the overflow
 * table must be searched at all: for an add of a new id, and for most messages about young
 * orders, it need not be. In the data plane, where an ITCH packet brings one or two messages and
 * the prefetch hints come too late, this took the books from 25% to 17% of the pipeline's time
 * with a production-sized table (2 M orders); a table that scattered every order over 128 MB
 * missed the caches on every message.
 */

/*
 * The overflow table's geometry, copied into locals: stores into the table could otherwise alias
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

/* Home slot of an order in the overflow table (tp_order_home). */
static inline uint64_t order_home(struct order_table ot, uint32_t tag, uint64_t id)
{
    return tp_order_home(tag, id, ot.hash_shift);
}

/* How far the order in slot j sits from its home slot. */
static inline uint64_t order_distance(struct order_table ot, uint64_t j)
{
    return (j - order_home(ot, ot.t[j].instr_side >> 1, ot.t[j].id)) & ot.mask;
}

/*
 * The overflow table is a Robin Hood hash: along a probe run, orders are kept in the order of
 * their home slots, so a lookup stops as soon as it meets an order closer to its home than the
 * probe is to the key's home, and a removal stops at the first order that sits at its home. At the
 * load factor of at most 1/2 most orders sit at their home: lookups and removals touch a slot or
 * two.
 */

struct tp_order *tp_mbo_overflow_find(const struct tp_books *b, uint32_t tag, uint64_t id)
{
    struct order_table ot = order_table(b);
    uint64_t i = order_home(ot, tag, id);

    for (uint64_t d = 0; ot.t[i].qty; d++, i = (i + 1) & ot.mask) {
        if (ot.t[i].id == id && ot.t[i].instr_side >> 1 == tag)
            return &ot.t[i];
        if (order_distance(ot, i) < d)
            break;
    }
    return NULL;
}

/* Stores an order whose id is not in the overflow table (room checked). */
static void overflow_place(struct order_table ot, struct tp_order o)
{
    uint64_t i = order_home(ot, o.instr_side >> 1, o.id);

    for (uint64_t d = 0;; d++, i = (i + 1) & ot.mask) {
        if (!ot.t[i].qty) {
            ot.t[i] = o;
            return;
        }
        uint64_t di = order_distance(ot, i);
        if (di < d) {
            /* The resident is closer to home: it yields the slot and moves on instead. */
            struct tp_order evicted = ot.t[i];
            ot.t[i] = o;
            o = evicted;
            d = di;
        }
    }
}

/* Frees overflow slot i, shifting the rest of the probe run back by one (no tombstones). */
static void overflow_remove(struct order_table ot, uint64_t i)
{
    for (;;) {
        uint64_t next = (i + 1) & ot.mask;
        if (!ot.t[next].qty || order_distance(ot, next) == 0)
            break;
        ot.t[i] = ot.t[next];
        i = next;
    }
    ot.t[i].qty = 0;
}

/*
 * Clearing one instrument. MDP3 recovery clears instruments one at a time on the data lcore
 * (each order book snapshot, and snapshot52 for an order-level book), and finding an
 * instrument's orders meant scanning both tables: about 40 ms of CPU per clear at production
 * sizing (8 Mi orders, 550 MB of tables; tools/bench/books/bench_clear.c), seconds per recovery
 * cycle while the lcore's other channels dropped packets. Of the ways to make a clear cost what the
 * instrument holds, a generation per instrument costs a lookup one instruction: the tag a lookup
 * compares was the instrument id, and is now the id with the generation above it, kept with the
 * instrument's flags in one word of its hot state (tp_mbo_hot.owner). Counting each instrument's
 * orders in the overflow table would still scan the window, and not help MDP3, whose sparse ids
 * live in the overflow table; lists per instrument would need stable slots, which backward-shift
 * deletion does not give.
 *
 * So a clear does not look for the orders: it starts the instrument's next generation, and every
 * entry with the old tag stops matching a lookup ("stale"; counted per instrument and in total).
 * Stale entries still take slots until reclaimed: when a new order claims a stale window slot
 * (tp_mbo_spill), and by a sweep that each clear advances over the tables in proportion to the
 * orders it made stale. The sweep's rate is such that it passes over the whole tables while clears
 * make at most half of stale_limit orders stale; should stale entries pass stale_limit anyway, the
 * clear sweeps everything. The overflow table then holds at most max_orders live and stale_limit
 * (max_orders / 2) stale entries: it stays at most 3/4 full and its probes short.
 * Generations are 7 bits: the clear that wraps an instrument's generation (one in 127 of its
 * clears) frees all its entries instead, live and stale (purge_instrument, the old scan). Then each
 * generation number is used once per wrap, and no entry of an earlier use can come back as live.
 * Whatever the stale count: the orders the wrapping clear would make stale carry the last number,
 * which the instrument takes again 126 clears later, maybe before the sweep reached them.
 */

/* Whether the entry in slot o (qty != 0) is of an older generation than its instrument's. */
static inline bool order_stale(const struct tp_books *b, const struct tp_order *o)
{
    uint32_t tag = o->instr_side >> 1;

    return (tag ^ tp_hot_of(b, tp_tag_instrument(tag))->owner) & TP_ORDER_GEN_BITS;
}

/* Frees the slot of a stale entry. */
static void stale_reclaim(struct tp_books *b, struct tp_order *o)
{
    tp_book_of(b, tp_tag_instrument(o->instr_side >> 1))->stale_orders--;
    b->stale_orders--;
    order_free_slot(b, o);
}

/* Slots of both tables: the sweep's cycle. */
static uint64_t table_slots(const struct tp_books *b)
{
    return b->params.max_orders ? b->recent_slots + b->order_mask + 1 : 0;
}

/*
 * Visits `budget` slots from where the sweep stopped (window, then overflow table, round), and
 * reclaims the stale entries met. A removal from the overflow table shifts the rest of its probe
 * run back onto the slot, which is visited again.
 */
static void sweep_stale(struct tp_books *b, uint64_t budget)
{
    uint64_t slots = table_slots(b), i = b->sweep_next;

    for (; budget && b->stale_orders; budget--) {
        struct tp_order *o = i < b->recent_slots ? &b->recent[i] : &b->orders[i - b->recent_slots];
        if (o->qty && order_stale(b, o)) {
            stale_reclaim(b, o);
            if (i >= b->recent_slots)
                continue;
        }
        i = i + 1 == slots ? 0 : i + 1;
    }
    b->sweep_next = i;
}

void tp_mbo_spill(struct tp_books *b, uint64_t s)
{
    const struct tp_order *slot = &b->recent[s];

    if (order_stale(b, slot)) {
        stale_reclaim(b, &b->recent[s]);
        return;
    }
    overflow_place(order_table(b), *slot);
    b->totals.orders_spilled++;
    b->spilled[s] += b->spilled[s] < UINT8_MAX;
    if (slot->id > b->spilled_max_id)
        b->spilled_max_id = slot->id;
}

void tp_mbo_overflow_remove(struct tp_books *b, struct tp_order *o)
{
    uint8_t *spilled = &b->spilled[tp_recent_slot(b, o->id)];

    *spilled -= *spilled < UINT8_MAX;
    overflow_remove(order_table(b), (uint64_t)(o - b->orders));
}

/* The exported calls of the ITCH path: the inline operations of tp_mbo_ops.h. */

int tp_mbo_add(struct tp_books *b, uint32_t instr, uint64_t order_id, enum tp_side side,
               int64_t price, int64_t qty, uint64_t priority, struct tp_book_change *out)
{
    return tp_mbo_add_inline(b, instr, order_id, side, price, qty, priority, mbo_records(out));
}

int tp_mbo_execute(struct tp_books *b, uint32_t instr, uint64_t order_id, int64_t qty,
                   int64_t price, int printable, uint64_t match, struct tp_book_change *out)
{
    return tp_mbo_execute_inline(b, instr, order_id, qty, price, printable, match,
                                 mbo_records(out));
}

int tp_mbo_cancel(struct tp_books *b, uint32_t instr, uint64_t order_id, int64_t qty,
                  struct tp_book_change *out)
{
    return tp_mbo_cancel_inline(b, instr, order_id, qty, mbo_records(out));
}

int tp_mbo_delete(struct tp_books *b, uint32_t instr, uint64_t order_id, struct tp_book_change *out)
{
    return tp_mbo_delete_inline(b, instr, order_id, mbo_records(out));
}

int tp_mbo_replace(struct tp_books *b, uint32_t instr, uint64_t old_id, uint64_t new_id,
                   int64_t price, int64_t qty, uint64_t priority, struct tp_book_change *out)
{
    return tp_mbo_replace_inline(b, instr, old_id, new_id, price, qty, priority, mbo_records(out));
}

int tp_mbo_modify(struct tp_books *b, uint32_t instr, uint64_t order_id, int64_t price, int64_t qty,
                  uint64_t priority, struct tp_book_change *out)
{
    struct tp_mbo_hot *h = mbo_book(b, instr);
    struct tp_order *o;
    int64_t key;
    unsigned side;
    int removed, added;

    if (!h)
        return -EINVAL;
    if (!order_values_ok(&tp_book_of(b, instr)->counters, price, qty))
        return -EINVAL;
    o = mbo_lookup(b, instr, tp_order_tag(h), order_id);
    if (!o)
        return -ENOENT;
    side = o->instr_side & 1u;
    key = tp_level_key(side, price);
    if (key == o->key) {
        /* Same level: only its quantity moves (within the level's bits). */
        struct tp_order_level *lv = side_levels(b, h, side);
        uint32_t nl = h->levels[side];
        uint32_t p = level_position(lv, nl, key);
        if (qty - (int64_t)o->qty > TP_LEVEL_QTY_MAX - tp_level_qty(lv[p].size)) {
            return tp_books_refuse_level(b, instr);
        }
        lv[p].size += (uint64_t)(qty - (int64_t)o->qty) << TP_LEVEL_COUNT_BITS;
        o->qty = (uint32_t)qty;
        o->priority = priority;
        if (!tp_mbo_emits(h))
            return 0;
        level_record(out + 1, instr, side, TP_LEVEL_CHANGE, nl - p, tp_level_count(lv[p].size),
                     price, tp_level_qty(lv[p].size));
        write_record(out, instr, TP_CHANGE_ORDER, side, TP_ORDER_MODIFY, nl - p, 0, 0, price, qty,
                     order_id, priority);
        return 2;
    }
    /*
     * New price: the order leaves its level and joins (or creates) another. Refuse up front if
     * the new level would not fit, so that a refused modify changes nothing.
     */
    {
        const struct tp_order_level *lv = side_levels(b, h, side);
        uint32_t nl = h->levels[side];
        uint32_t p = level_position(lv, nl, key);
        uint32_t old = level_position(lv, nl, o->key);
        int frees_level = old < nl && tp_level_count(lv[old].size) == 1;
        int joins = p < nl && lv[p].key == key;
        if (joins ? !level_takes(&lv[p], qty) : nl == b->params.levels_per_side && !frees_level) {
            return tp_books_refuse_level(b, instr);
        }
    }
    removed = level_reduce(b, h, instr, side, o->key, tp_level_key(side, o->key), o->qty, 1,
                           mbo_records(out + 1));
    added = level_add(b, h, instr, side, key, price, qty, mbo_records(out + 1 + (removed > 0)));
    o->key = key;
    o->qty = (uint32_t)qty;
    o->priority = priority;
    if (!tp_mbo_emits(h))
        return 0;
    /* The order's level is the one it joined (the last LEVEL record). */
    write_record(out, instr, TP_CHANGE_ORDER, side, TP_ORDER_MODIFY,
                 (uint32_t)(added > 0 ? added : removed), 0, 0, price, qty, order_id, priority);
    return 1 + (removed > 0) + (added > 0);
}

int tp_mbo_order(const struct tp_books *b, uint32_t instr, uint64_t order_id, enum tp_side *side,
                 int64_t *price, int64_t *qty, uint64_t *priority)
{
    const struct tp_order *o;

    if (b->params.max_orders == 0 || !tp_books_has(b, instr))
        return -ENOENT;
    o = order_find(b, tp_order_tag(tp_hot_of(b, instr)), order_id);
    if (!o)
        return -ENOENT;
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
    if (!tp_books_has(b, instr))
        return;
    tp_books_hint_hot(b, instr);
    tp_books_hint_order(b, instr, order_id);
}

/*
 * Frees every slot of the instrument (its live orders and stale entries), and the stale entries
 * of others met on the way: one pass over both tables, for the rare clear that cannot start a new
 * generation. Backward-shift removal only moves entries towards lower slots (or across the wrap
 * onto the end), so re-examining slot i after a removal visits every order exactly once.
 */
static void purge_instrument(struct tp_books *b, uint32_t instr)
{
    struct tp_mbo_hot *h = tp_hot_of(b, instr);
    struct tp_book *bk = tp_book_of(b, instr);
    uint64_t slots = table_slots(b), i = 0;

    while (i < slots && (h->live_orders || bk->stale_orders)) {
        struct tp_order *o = i < b->recent_slots ? &b->recent[i] : &b->orders[i - b->recent_slots];
        bool freed = false;
        if (o->qty && order_stale(b, o)) {
            stale_reclaim(b, o);
            freed = true;
        } else if (o->qty && tp_tag_instrument(o->instr_side >> 1) == instr) {
            order_remove(b, o);
            h->live_orders--;
            freed = true;
        }
        if (!freed || i < b->recent_slots)
            i++;
    }
}

/*
 * Starts the instrument's next generation: its live orders become stale entries, and its levels
 * go. Returns the number of orders that became stale.
 */
static uint64_t next_generation(struct tp_books *b, uint32_t instr)
{
    struct tp_mbo_hot *h = tp_hot_of(b, instr);
    struct tp_book *bk = tp_book_of(b, instr);
    uint32_t next = bk->order_gen % TP_ORDER_GEN_MAX + 1;
    uint64_t dropped = h->live_orders;

    h->levels[0] = h->levels[1] = 0;
    if (dropped == 0)
        return 0;
    if (next == 1) {
        /* The generations wrap: free the instrument's entries, live and stale (see above). */
        purge_instrument(b, instr);
        dropped = 0;
    } else {
        bk->stale_orders += (uint32_t)dropped;
        b->stale_orders += dropped;
        b->totals.live_orders -= dropped;
        h->live_orders = 0;
    }
    bk->order_gen = (uint8_t)next;
    /* Only an order-level book has orders: its generation bits are not 0. */
    h->owner = (h->owner & ~TP_ORDER_GEN_BITS) | next << TP_ORDER_ID_BITS;
    return dropped;
}

void tp_mbo_drop_orders(struct tp_books *b, uint32_t instr)
{
    uint64_t dropped = next_generation(b, instr);

    sweep_stale(b, dropped * b->sweep_rate);
    if (b->stale_orders > b->stale_limit)
        sweep_stale(b, table_slots(b) + b->stale_orders);
}

void tp_mbo_mark_orders(struct tp_books *b, uint32_t instr)
{
    next_generation(b, instr);
}

/* tp_books.h: the marks started new generations; one pass over the tables frees the stale. */
void tp_books_drop_marked_orders(struct tp_books *b)
{
    sweep_stale(b, table_slots(b) + b->stale_orders);
}

int tp_mbo_clear(struct tp_books *b, uint32_t instr, struct tp_book_change *out)
{
    struct tp_mbo_hot *h = mbo_book(b, instr);

    if (!h)
        return -EINVAL;
    tp_mbo_drop_orders(b, instr);
    if (!tp_mbo_emits(h))
        return 0;
    tp_change(out, instr, TP_CHANGE_CLEAR, TP_BOOK_ORDERS, TP_SIDE_NONE, 0);
    return 1;
}
