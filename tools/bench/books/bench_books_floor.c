/*
 * bench_books_floor: the "speed of light" of an order-level book builder on this machine.
 *
 * A ladder of rungs over the same Nasdaq ITCH BinaryFILE. Each rung adds the next piece of work
 * that ANY order-level book builder must do, and none of tickplane's book logic (no level search,
 * insert or removal, no counts, no change records), so that the time of the last rung is a floor
 * under what a full builder can reach here, and the gap to tickplane-replay is what the book
 * logic costs:
 *
 *   F0 walk    the 2-byte BinaryFILE framing (a burst of 256 at a time, as the replay frames
 *              them) and the type byte of every message.
 *   F1 decode  + the length check and a switch on the type, and a load of every field a book
 *              needs for that type (locate, order refs, side, shares, price).
 *   F2 orders  + the order state: an add stores (ref, qty, price, side | instrument) in the slot
 *              of its ref; a delete, execution or cancel reads the slot of its ref and clears or
 *              reduces it; a replace does both. --table books: the books' recent-order window
 *              (32-byte struct tp_order, the prime slot count and slot function of tp_books for
 *              --orders; an add onto a live slot overwrites it, where the books move the old
 *              order to their overflow table). --table compact: open addressing with linear
 *              probing over 2 x --orders 16-byte slots (ref, qty, Price(4) << 1 | side; the
 *              instrument comes from each message's locate), backward-shift deletion.
 *   F3 levels  + one read-modify-write of a 16-byte level word (struct tp_order_level) in the
 *              instrument's side's level array, at a fixed place near the best level (the 4th
 *              level: the file's books have about 4 a side), for every order change.
 *   F3b        (--table books only) F3's work without a branch on the message type: every
 *              message reads the slot of its bytes 11..18 and takes from it what its type says
 *              (nothing for an add or a non-order message), then stores a new order into the
 *              slot of its new ref or into a spare slot. The type's random order costs F1 to F3
 *              a mispredicted jump most messages; F3b shows the floor without it. Its checksum
 *              and counts equal F3's: the same books, by another path.
 *
 * With --ahead D (default 16, as the ITCH feed; 0: none) F2 and F3 prefetch the slots of the
 * refs of message i + D of the burst, and F3 the level lines of both sides of its instrument.
 * Instruments are stock locates, which must be below --instruments (others are skipped, counted).
 *
 * Every rung runs --runs times in the same process over the same mapped file, the rungs
 * alternating within each run, on fresh (zeroed) tables each time. Per rung one JSON line on
 * stdout: median and best CPU ns a message (CLOCK_THREAD_CPUTIME_ID), median wall ns, messages,
 * a checksum of the values read (equal in every run, or the program fails) so that nothing can
 * be optimised away, what the rung could not apply as asked (unmatched: a ref not in its slot;
 * displaced: an add onto a live window slot; refused: a full compact table, ref 0, a bad side
 * or a locate beyond --instruments; malformed: a wrong length for the type) and the bytes of
 * the order table and the level array.
 *
 *   bench_books_floor [--runs N] [--table books|compact] [--ahead D] [--instruments N]
 *                     [--orders N] [--levels N] FILE
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binaryfile.h"
#include "itch50.h"
#include "table_memory.h"
#include "tp_books.h"
#include "tp_books_impl.h"

#define RUNS_MAX  64
#define AHEAD_MAX 64
/* Messages framed at a time: the replay's burst (tools/replay/replay_input.c). */
#define BURST 256
/* Level index (from level 0, the worst) of the word F3 updates: the 4th of each side. */
#define LEVEL_PLACE 3

enum rung { RUNG_WALK, RUNG_DECODE, RUNG_ORDERS, RUNG_LEVELS, RUNG_BRANCHLESS, RUNGS };

static const char *const rung_names[RUNGS] = {"F0", "F1", "F2", "F3", "F3b"};
static const char *const rung_whats[RUNGS] = {"walk", "decode", "orders", "levels",
                                              "levels, no branch on the type"};

enum table { TABLE_BOOKS, TABLE_COMPACT };

/* A compact order slot: id 0 marks a free slot (an add of ref 0 is refused). */
struct compact_order {
    uint64_t id;
    uint32_t qty;
    uint32_t price_side; /* Price(4) << 1 | side: real prices are below 2^31 ($214,748) */
};

/* What the rungs keep between messages, and the counts that say what they did not do. */
struct floor {
    uint32_t ahead;
    uint32_t instruments;
    uint32_t max_orders;
    uint32_t level_stride; /* levels per side, sentinels included, as the books lay them out */
    /* Only its window geometry is used: tp_recent_slot() of the books, not their tables. */
    struct tp_books *geometry;
    struct tp_order *window; /* [recent slots] (--table books) */
    struct tp_order spare;   /* F3b: where a message that adds no order stores its "order" */
    struct compact_order *compact;
    uint64_t compact_mask;
    unsigned compact_shift;
    uint32_t live; /* compact: live orders (the table refuses adds beyond max_orders) */
    struct tp_order_level *levels; /* [instruments][2][level_stride] */
    size_t window_bytes, compact_bytes, level_bytes;
    /* Counts of the messages a rung could not apply as asked (reported, same in every run). */
    uint64_t unmatched; /* delete/execute/cancel/replace whose ref was not in its slot */
    uint64_t displaced; /* books table: an add onto a live slot (the books would spill it) */
    uint64_t refused;   /* compact table full, ref 0, bad side, or locate >= instruments */
    uint64_t malformed; /* length or type wrong for the type */
};

/* B -> TP_SIDE_BID, S -> TP_SIDE_ASK, anything else above TP_SIDE_ASK: a table, as the feed's. */
static const uint8_t side_of[256] = {['B'] = TP_SIDE_BID + 1, ['S'] = TP_SIDE_ASK + 1};

static inline unsigned itch_side(char c)
{
    return (unsigned)side_of[(uint8_t)c] - 1u;
}

/* ---- order tables -------------------------------------------------------------------- */

/* Home slot of a ref in the compact table: Fibonacci hashing, as the books' overflow table. */
static inline uint64_t compact_home(const struct floor *f, uint64_t id)
{
    return (id * 0x9e3779b97f4a7c15ull) >> f->compact_shift;
}

/* What an order slot holds, in one form for both tables. */
struct order_view {
    uint32_t qty;
    unsigned side;
    int64_t price; /* price9 */
};

/*
 * Finds the live order `id`: the books table's slot of id or the compact table's probe. Returns
 * the slot (as an opaque pointer) and fills *v, or NULL (counted) when the order is not there.
 */
static inline __attribute__((always_inline)) void *order_find(struct floor *f, enum table t,
                                                              uint64_t id, struct order_view *v)
{
    if (t == TABLE_BOOKS) {
        struct tp_order *o = &f->window[tp_recent_slot(f->geometry, id)];
        if (o->id != id || o->qty == 0) {
            f->unmatched++;
            return NULL;
        }
        *v = (struct order_view){o->qty, o->instr_side & 1u, o->key};
        return o;
    }
    for (uint64_t i = compact_home(f, id);; i = (i + 1) & f->compact_mask) {
        struct compact_order *o = &f->compact[i];
        if (o->id == id) {
            *v = (struct order_view){o->qty, o->price_side & 1u,
                                     tp_itch_price4_to_p9(o->price_side >> 1)};
            return o;
        }
        if (o->id == 0) {
            f->unmatched++;
            return NULL;
        }
    }
}

/* Stores a new order (its side checked by the caller); returns 0, or -1 when refused. */
static inline __attribute__((always_inline)) int order_store(struct floor *f, enum table t,
                                                             uint32_t instr, uint64_t id,
                                                             unsigned side, uint32_t price4,
                                                             uint32_t qty)
{
    if (t == TABLE_BOOKS) {
        struct tp_order *o = &f->window[tp_recent_slot(f->geometry, id)];
        f->displaced += o->qty != 0;
        *o = (struct tp_order){.id = id,
                               .key = tp_itch_price4_to_p9(price4),
                               .qty = qty,
                               .instr_side = instr << 1 | side};
        return 0;
    }
    if (id == 0 || f->live >= f->max_orders || price4 >> 31) {
        f->refused++;
        return -1;
    }
    uint64_t i = compact_home(f, id);
    while (f->compact[i].id != 0 && f->compact[i].id != id)
        i = (i + 1) & f->compact_mask;
    f->live += f->compact[i].id == 0;
    f->compact[i] = (struct compact_order){id, qty, price4 << 1 | side};
    return 0;
}

/*
 * Frees a compact slot by backward-shift deletion: the later entries of its probe run that may
 * move back into the hole do, so that lookups need no tombstones.
 */
static void compact_erase(struct floor *f, struct compact_order *o)
{
    uint64_t hole = (uint64_t)(o - f->compact), j = hole;

    for (;;) {
        j = (j + 1) & f->compact_mask;
        if (f->compact[j].id == 0)
            break;
        uint64_t home = compact_home(f, f->compact[j].id);
        /* Entry j may fill the hole if its home is not in (hole, j], cyclically. */
        if (((j - home) & f->compact_mask) >= ((j - hole) & f->compact_mask)) {
            f->compact[hole] = f->compact[j];
            hole = j;
        }
    }
    f->compact[hole].id = 0;
    f->live--;
}

/* Takes qty (the whole order if qty >= what rests) from a found order; returns 1 if it left. */
static inline __attribute__((always_inline)) int order_take(struct floor *f, enum table t,
                                                            void *slot, uint32_t qty)
{
    if (t == TABLE_BOOKS) {
        struct tp_order *o = slot;
        o->qty = qty >= o->qty ? 0 : o->qty - qty;
        return o->qty == 0;
    }
    struct compact_order *o = slot;
    if (qty < o->qty) {
        o->qty -= qty;
        return 0;
    }
    compact_erase(f, o);
    return 1;
}

/* ---- levels (F3) --------------------------------------------------------------------- */

/* The level word F3 updates for an instrument's side. */
static inline struct tp_order_level *level_word(const struct floor *f, uint32_t instr,
                                                unsigned side)
{
    return &f->levels[((size_t)instr * 2 + side) * f->level_stride + TP_LEVEL_SENTINELS +
                      LEVEL_PLACE];
}

/* An order of qty joins (orders = 1) or qty leaves (orders = 1 if the whole order went). */
static inline void level_join(struct floor *f, uint32_t instr, unsigned side, int64_t price,
                              uint32_t qty)
{
    struct tp_order_level *l = level_word(f, instr, side);
    l->key = tp_level_key(side, price);
    l->size += tp_level_size(qty, 1);
}

static inline void level_leave(struct floor *f, uint32_t instr, unsigned side, uint32_t qty,
                               int whole)
{
    level_word(f, instr, side)->size -= tp_level_size(qty, (uint32_t)whole);
}

/* ---- the rungs ----------------------------------------------------------------------- */

/* Prefetches the slot of an order ref, for writing. */
static inline __attribute__((always_inline)) void prefetch_order(const struct floor *f,
                                                                 enum table t, uint64_t id)
{
    if (t == TABLE_BOOKS)
        __builtin_prefetch(&f->window[tp_recent_slot(f->geometry, id)], 1);
    else
        __builtin_prefetch(&f->compact[compact_home(f, id)], 1);
}

/*
 * a if cond (0 or 1) else b, by masks: gcc turns a conditional expression on random data into a
 * branch more often than into a conditional move.
 */
static inline uint64_t pick(uint32_t cond, uint64_t a, uint64_t b)
{
    uint64_t mask = -(uint64_t)cond;
    return (a & mask) | (b & ~mask);
}

/* Read in place of a message too short to hold an order ref (its slot is fetched in vain). */
static const uint8_t no_order[TP_ITCH_MAX_MESSAGE_LEN];

/*
 * The lines an order message will touch, for rung r (F2: order slots, F3: also levels), without
 * a branch on its type: the types of the messages ahead are random, and testing them cost 0.57
 * mispredictions a message in cachegrind's model (F2, table books). Every message long enough
 * has the slot of its bytes 11..18 fetched (the order ref of every order message; the few other
 * messages waste one prefetch), a replace also the slot of its new ref.
 */
static inline __attribute__((always_inline)) void
prefetch_message(const struct floor *f, enum rung r, enum table t, const uint8_t *msg, size_t len)
{
    const uint8_t *m = len >= 19 ? msg : no_order;
    const uint8_t *second = (const uint8_t *)(uintptr_t)pick(
        (len >= 27) & (m[0] == TP_ITCH_ORDER_REPLACE), (uintptr_t)(m + 19), (uintptr_t)(m + 11));
    uint32_t instr = tp_itch_stock_locate(m);

    prefetch_order(f, t, tp_load_be64(m + 11));
    prefetch_order(f, t, tp_load_be64(second));
    if (r >= RUNG_LEVELS) {
        instr = instr < f->instruments ? instr : 0;
        __builtin_prefetch(level_word(f, instr, TP_SIDE_BID), 1);
        __builtin_prefetch(level_word(f, instr, TP_SIDE_ASK), 1);
    }
}

/*
 * Removes the whole live order `id` of instrument `instr` (F2) and its quantity and count from
 * its level word (F3). Returns 1 with *v what the order held, or 0 (counted) if it is not there.
 */
static inline __attribute__((always_inline)) int order_drop(struct floor *f, enum rung r,
                                                            enum table t, uint32_t instr,
                                                            uint64_t id, struct order_view *v)
{
    void *slot;

    if (instr >= f->instruments) {
        f->refused++;
        return 0;
    }
    slot = order_find(f, t, id, v);
    if (!slot)
        return 0;
    order_take(f, t, slot, UINT32_MAX);
    if (r == RUNG_LEVELS)
        level_leave(f, instr, v->side, v->qty, 1);
    return 1;
}

/*
 * One message through rung r (>= F1); returns what it adds to the checksum. F1 folds the fields
 * it decoded; F2 and F3 also what they read from the order slots.
 */
static inline __attribute__((always_inline)) uint64_t
apply(struct floor *f, enum rung r, enum table t, const uint8_t *msg, size_t len)
{
    int type = tp_itch_check(msg, len);
    struct order_view v;
    uint32_t instr, qty, price4;
    uint64_t id, id2;
    unsigned side;
    void *slot;

    if (type < 0) {
        f->malformed++;
        return 0;
    }
    switch (type) {
    case TP_ITCH_ADD_ORDER:
    case TP_ITCH_ADD_ORDER_MPID:
        instr = tp_itch_stock_locate(msg);
        id = tp_itch_add_order_order_ref(msg);
        side = itch_side(tp_itch_add_order_side(msg));
        qty = tp_itch_add_order_shares(msg);
        price4 = tp_itch_add_order_price(msg);
        if (r == RUNG_DECODE)
            return instr + id + side + qty + (uint64_t)tp_itch_price4_to_p9(price4);
        if (side > TP_SIDE_ASK || instr >= f->instruments) {
            f->refused++;
            return 0;
        }
        if (order_store(f, t, instr, id, side, price4, qty) == 0 && r == RUNG_LEVELS)
            level_join(f, instr, side, tp_itch_price4_to_p9(price4), qty);
        return id + qty;
    case TP_ITCH_ORDER_EXECUTED:
    case TP_ITCH_ORDER_EXECUTED_WITH_PRICE:
    case TP_ITCH_ORDER_CANCEL:
        /* Same offsets for the ref and the shares in all three. */
        instr = tp_itch_stock_locate(msg);
        id = tp_itch_order_executed_order_ref(msg);
        qty = tp_itch_order_executed_executed_shares(msg);
        if (r == RUNG_DECODE)
            return instr + id + qty +
                   (type == TP_ITCH_ORDER_EXECUTED_WITH_PRICE
                        ? (uint64_t)tp_itch_order_executed_with_price_execution_price_p9(msg)
                        : 0);
        if (instr >= f->instruments) {
            f->refused++;
            return 0;
        }
        slot = order_find(f, t, id, &v);
        if (!slot)
            return 0;
        if (order_take(f, t, slot, qty) == 0) {
            if (r == RUNG_LEVELS)
                level_leave(f, instr, v.side, qty, 0);
        } else if (r == RUNG_LEVELS) {
            level_leave(f, instr, v.side, v.qty, 1);
        }
        return v.qty + (uint64_t)v.price;
    case TP_ITCH_ORDER_DELETE:
        instr = tp_itch_stock_locate(msg);
        id = tp_itch_order_delete_order_ref(msg);
        if (r == RUNG_DECODE)
            return instr + id;
        if (!order_drop(f, r, t, instr, id, &v))
            return 0;
        return v.qty + (uint64_t)v.price;
    case TP_ITCH_ORDER_REPLACE:
        instr = tp_itch_stock_locate(msg);
        id = tp_itch_order_replace_original_order_ref(msg);
        id2 = tp_itch_order_replace_new_order_ref(msg);
        qty = tp_itch_order_replace_shares(msg);
        price4 = tp_itch_order_replace_price(msg);
        if (r == RUNG_DECODE)
            return instr + id + id2 + qty + (uint64_t)tp_itch_price4_to_p9(price4);
        if (!order_drop(f, r, t, instr, id, &v))
            return 0;
        if (order_store(f, t, instr, id2, v.side, price4, qty) == 0 && r == RUNG_LEVELS)
            level_join(f, instr, v.side, tp_itch_price4_to_p9(price4), qty);
        return v.qty + (uint64_t)v.price + id2;
    default:
        /* Not an order message: a builder only tells it apart (trades, statuses...). */
        return (uint64_t)type;
    }
}

/* What an order message takes from the order in its ref's slot, and whether it adds one. */
enum order_kind { KIND_OTHER, KIND_ADD, KIND_REDUCE, KIND_DELETE, KIND_REPLACE };

static const uint8_t kind_of[256] = {
    [TP_ITCH_ADD_ORDER] = KIND_ADD,         [TP_ITCH_ADD_ORDER_MPID] = KIND_ADD,
    [TP_ITCH_ORDER_EXECUTED] = KIND_REDUCE, [TP_ITCH_ORDER_EXECUTED_WITH_PRICE] = KIND_REDUCE,
    [TP_ITCH_ORDER_CANCEL] = KIND_REDUCE,   [TP_ITCH_ORDER_DELETE] = KIND_DELETE,
    [TP_ITCH_ORDER_REPLACE] = KIND_REPLACE,
};

/*
 * F3b: one checked message with F3's effect and checksum, selecting values instead of branching
 * on its kind. The fields of every layout are read, the ones of other types from bytes past a
 * short message: inside the mapping (map_input's slack), and never used.
 */
static inline __attribute__((always_inline)) uint64_t
apply_branchless(struct floor *f, const uint8_t *msg, size_t len)
{
    int type = tp_itch_check(msg, len);
    uint32_t instr = tp_itch_stock_locate(msg);
    unsigned kind, side_new;
    uint64_t old_id, new_id;
    uint32_t order, in_range, asked, take, found, whole, adds, qty, price4;
    struct tp_order *o, *n;
    struct tp_order_level *l;
    int64_t key, old_price;
    uint32_t old_qty;

    if (type < 0) {
        f->malformed++;
        return 0;
    }
    kind = kind_of[type];
    order = kind != KIND_OTHER;
    in_range = instr < f->instruments;
    f->refused += order & !in_range;
    kind = in_range ? kind : KIND_OTHER;
    instr = in_range ? instr : 0;

    /* Take from the order of the ref at offset 11 (an add takes nothing from its own slot). */
    old_id = tp_load_be64(msg + 11);
    o = &f->window[tp_recent_slot(f->geometry, old_id)];
    old_qty = o->qty;
    old_price = o->key;
    found = (kind >= KIND_REDUCE) & (o->id == old_id) & (old_qty != 0);
    f->unmatched += (kind >= KIND_REDUCE) & !found;
    asked = (uint32_t)pick(kind == KIND_REDUCE, tp_itch_order_executed_executed_shares(msg),
                           UINT32_MAX);
    take = (asked < old_qty ? asked : old_qty) & -found;
    whole = found & (take == old_qty);
    o->qty = old_qty - take;
    l = level_word(f, instr, o->instr_side & 1u);
    l->size -= tp_level_size(take, whole);

    /* Store the new order of an add, or of a replace whose old order was there. */
    side_new = (unsigned)pick(kind == KIND_ADD, itch_side(tp_itch_add_order_side(msg)),
                              o->instr_side & 1u);
    f->refused += (kind == KIND_ADD) & (side_new > TP_SIDE_ASK);
    adds = ((kind == KIND_ADD) & (side_new <= TP_SIDE_ASK)) | ((kind == KIND_REPLACE) & found);
    new_id = pick(kind == KIND_REPLACE, tp_itch_order_replace_new_order_ref(msg), old_id);
    qty = (uint32_t)pick(kind == KIND_ADD, tp_itch_add_order_shares(msg),
                         tp_itch_order_replace_shares(msg));
    price4 = (uint32_t)pick(kind == KIND_ADD, tp_itch_add_order_price(msg),
                            tp_itch_order_replace_price(msg));
    side_new &= 1u;
    n = (struct tp_order *)(uintptr_t)pick(
        adds, (uintptr_t)&f->window[tp_recent_slot(f->geometry, new_id)], (uintptr_t)&f->spare);
    f->displaced += adds & (n->qty != 0);
    *n = (struct tp_order){.id = new_id,
                           .key = tp_itch_price4_to_p9(price4),
                           .qty = qty,
                           .instr_side = instr << 1 | side_new};
    l = level_word(f, instr, side_new);
    key = tp_level_key(side_new, tp_itch_price4_to_p9(price4));
    l->key = (int64_t)pick(adds, (uint64_t)key, (uint64_t)l->key);
    l->size += tp_level_size(qty & -adds, adds);

    /* F3's checksum: what the found order held, what an add stored, or a non-order's type. */
    return pick(found, old_qty + (uint64_t)old_price, 0) +
           pick((kind == KIND_ADD) & adds, new_id + qty, 0) +
           pick((kind == KIND_REPLACE) & found, new_id, 0) + pick(order, 0, (uint64_t)type);
}

/* One burst through rung r with table t; returns its checksum. */
static inline __attribute__((always_inline)) uint64_t burst(struct floor *f, enum rung r,
                                                            enum table t, const uint8_t *const *msg,
                                                            const uint16_t *len, uint32_t n)
{
    uint64_t sum = 0;
    uint32_t d = f->ahead;

    if (r == RUNG_WALK) {
        for (uint32_t i = 0; i < n; i++)
            sum += msg[i][0] + len[i];
        return sum;
    }
    if (r >= RUNG_ORDERS && d > 0)
        for (uint32_t i = 0; i < n && i < d; i++)
            prefetch_message(f, r, t, msg[i], len[i]);
    for (uint32_t i = 0; i < n; i++) {
        if (r >= RUNG_ORDERS && d > 0 && i + d < n)
            prefetch_message(f, r, t, msg[i + d], len[i + d]);
        sum += r == RUNG_BRANCHLESS ? apply_branchless(f, msg[i], len[i])
                                    : apply(f, r, t, msg[i], len[i]);
    }
    return sum;
}

/* Each rung and table as its own loop, with the rung and table constants folded in. */
#define BURST_FN(name, rung, table)                                                                \
    static uint64_t name(struct floor *f, const uint8_t *const *m, const uint16_t *l, uint32_t n)  \
    {                                                                                              \
        return burst(f, rung, table, m, l, n);                                                     \
    }
BURST_FN(burst_walk, RUNG_WALK, TABLE_BOOKS)
BURST_FN(burst_decode, RUNG_DECODE, TABLE_BOOKS)
BURST_FN(burst_orders_books, RUNG_ORDERS, TABLE_BOOKS)
BURST_FN(burst_orders_compact, RUNG_ORDERS, TABLE_COMPACT)
BURST_FN(burst_levels_books, RUNG_LEVELS, TABLE_BOOKS)
BURST_FN(burst_levels_compact, RUNG_LEVELS, TABLE_COMPACT)
BURST_FN(burst_branchless, RUNG_BRANCHLESS, TABLE_BOOKS)

typedef uint64_t (*burst_fn)(struct floor *, const uint8_t *const *, const uint16_t *, uint32_t);

/* One pass of a rung over the file (checked whole before: no cut block). */
static uint64_t run_rung(struct floor *f, burst_fn fn, const uint8_t *data, size_t size,
                         uint64_t *messages)
{
    struct tp_binfile_reader rd;
    const uint8_t *msg[BURST];
    uint16_t len[BURST];
    uint64_t sum = 0;
    int rc = 1;

    *messages = 0;
    tp_binfile_reader_init(&rd, data, size);
    while (rc == 1) {
        uint32_t n = 0;
        while (n < BURST && (rc = tp_binfile_next(&rd, &msg[n], &len[n])) == 1)
            n++;
        sum += fn(f, msg, len, n);
        *messages += n;
    }
    return sum;
}

/* ---- set-up, options, output --------------------------------------------------------- */

static double now_seconds(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * The books' window geometry for these sizes: real books are set up once (their window size is
 * theirs to compute), and only tp_recent_slot() of them is used.
 */
static struct tp_books *books_geometry(uint32_t instruments, uint32_t orders, uint32_t levels)
{
    struct tp_books_params p = {
        .instruments = instruments, .max_orders = orders, .levels_per_side = levels};
    size_t size = tp_books_memsize(&p);
    void *mem = size ? aligned_alloc(64, (size + 63) & ~(size_t)63) : NULL;

    if (!mem || tp_books_init(mem, &p) != 0) {
        free(mem);
        return NULL;
    }
    return mem;
}

static int floor_init(struct floor *f, uint32_t ahead, uint32_t instruments, uint32_t orders,
                      uint32_t levels)
{
    uint64_t slots = 1;

    memset(f, 0, sizeof(*f));
    f->ahead = ahead;
    f->instruments = instruments;
    f->max_orders = orders;
    f->level_stride = TP_LEVEL_SENTINELS + levels;
    f->geometry = books_geometry(instruments, orders, levels);
    if (!f->geometry)
        return -ENOMEM;
    f->window_bytes = tp_books_recent_orders(f->geometry) * sizeof(struct tp_order);
    while (slots < 2 * (uint64_t)orders)
        slots <<= 1;
    f->compact_mask = slots - 1;
    f->compact_shift = 64u - (unsigned)__builtin_ctzll(slots);
    f->compact_bytes = slots * sizeof(struct compact_order);
    f->level_bytes = (size_t)instruments * 2 * f->level_stride * sizeof(struct tp_order_level);
    f->window = tp_table_memory(f->window_bytes, true);
    f->compact = tp_table_memory(f->compact_bytes, true);
    f->levels = tp_table_memory(f->level_bytes, true);
    return f->window && f->compact && f->levels ? 0 : -ENOMEM;
}

static void floor_free(struct floor *f)
{
    if (f->window)
        munmap(f->window, f->window_bytes);
    if (f->compact)
        munmap(f->compact, f->compact_bytes);
    if (f->levels)
        munmap(f->levels, f->level_bytes);
    free(f->geometry);
}

/* Fresh tables and counts before a pass (not timed). */
static void floor_reset(struct floor *f)
{
    memset(f->window, 0, f->window_bytes);
    memset(f->compact, 0, f->compact_bytes);
    memset(f->levels, 0, f->level_bytes);
    f->live = 0;
    f->unmatched = f->displaced = f->refused = f->malformed = 0;
}

/*
 * The file mapped and read in up front, as tickplane-replay maps its input, followed by at least
 * INPUT_SLACK zeroed bytes: F3b reads fixed offsets past a short message (and discards them),
 * which at the end of the file would otherwise leave the mapping.
 */
#define INPUT_SLACK 4096

static const uint8_t *map_input(int fd, size_t size)
{
    uint8_t *base = mmap(NULL, size + INPUT_SLACK, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (base == MAP_FAILED)
        return NULL;
    if (mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
        munmap(base, size + INPUT_SLACK);
        return NULL;
    }
    return base;
}

static int parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || end == s || s[0] == '-' || v < min || v > max)
        return -EINVAL;
    *out = (uint32_t)v;
    return 0;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: bench_books_floor [--runs 1..%d] [--table books|compact] [--ahead 0..%d]\n"
            "         [--instruments 1..65536] [--orders 1..2^31] [--levels %d..65535] FILE\n",
            RUNS_MAX, AHEAD_MAX, LEVEL_PLACE + 1);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, uint32_t n)
{
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * The whole file checked once before any timing: its messages, or -EBADMSG with the offset of
 * the cut block.
 */
static int count_messages(const uint8_t *data, size_t size, uint64_t *messages, size_t *bad_offset)
{
    struct tp_binfile_reader rd;
    const uint8_t *msg;
    uint16_t len;
    int rc;

    *messages = 0;
    tp_binfile_reader_init(&rd, data, size);
    while ((rc = tp_binfile_next(&rd, &msg, &len)) == 1)
        (*messages)++;
    *bad_offset = rd.offset;
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option longs[] = {
        {"runs", required_argument, NULL, 'r'},   {"table", required_argument, NULL, 't'},
        {"ahead", required_argument, NULL, 'a'},  {"instruments", required_argument, NULL, 'i'},
        {"orders", required_argument, NULL, 'o'}, {"levels", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    uint32_t runs = 9, ahead = 16, instruments = 2048, orders = 65536, levels = 256;
    enum table table = TABLE_BOOKS;
    double cpu[RUNGS][RUNS_MAX], wall[RUNGS][RUNS_MAX];
    uint64_t sums[RUNGS], counts[RUNGS][4], messages = 0, n;
    struct floor f;
    struct stat st;
    const uint8_t *data;
    size_t bad_offset;
    int c, opt = 0, bad = 0, fd;

    while ((c = getopt_long(argc, argv, "", longs, &opt)) != -1) {
        int rc = 0;
        switch (c) {
        case 'r':
            rc = parse_u32(optarg, 1, RUNS_MAX, &runs);
            break;
        case 't':
            if (!strcmp(optarg, "books"))
                table = TABLE_BOOKS;
            else if (!strcmp(optarg, "compact"))
                table = TABLE_COMPACT;
            else
                rc = -EINVAL;
            break;
        case 'a':
            rc = parse_u32(optarg, 0, AHEAD_MAX, &ahead);
            break;
        case 'i':
            rc = parse_u32(optarg, 1, 65536, &instruments);
            break;
        case 'o':
            rc = parse_u32(optarg, 1, 1u << 31, &orders);
            break;
        case 'l':
            rc = parse_u32(optarg, LEVEL_PLACE + 1, 65535, &levels);
            break;
        case 'h':
            usage(stdout);
            return 0;
        default:
            bad = 1;
        }
        if (rc != 0) {
            fprintf(stderr, "bench_books_floor: bad value '%s' for --%s\n", optarg,
                    longs[opt].name);
            bad = 1;
        }
    }
    if (bad || optind != argc - 1) {
        usage(stderr);
        return 2;
    }
    fd = open(argv[optind], O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "bench_books_floor: %s: %s\n", argv[optind], strerror(errno));
        return 1;
    }
    if (st.st_size == 0) {
        fprintf(stderr, "bench_books_floor: %s: empty file\n", argv[optind]);
        return 1;
    }
    data = map_input(fd, (size_t)st.st_size);
    close(fd);
    if (!data) {
        fprintf(stderr, "bench_books_floor: mmap %s: %s\n", argv[optind], strerror(errno));
        return 1;
    }
    if (count_messages(data, (size_t)st.st_size, &messages, &bad_offset) != 0) {
        fprintf(stderr, "bench_books_floor: %s: BinaryFILE block cut at byte offset %zu\n",
                argv[optind], bad_offset);
        return 1;
    }
    if (floor_init(&f, ahead, instruments, orders, levels) != 0) {
        fprintf(stderr, "bench_books_floor: no memory for the tables\n");
        floor_free(&f);
        return 1;
    }

    burst_fn fns[RUNGS] = {
        burst_walk, burst_decode, table == TABLE_BOOKS ? burst_orders_books : burst_orders_compact,
        table == TABLE_BOOKS ? burst_levels_books : burst_levels_compact, burst_branchless};
    /* F3b has the books' window only: a probe loop branches by nature. */
    int rungs = table == TABLE_BOOKS ? RUNGS : RUNG_BRANCHLESS;
    for (uint32_t run = 0; run < runs; run++) {
        for (int r = 0; r < rungs; r++) {
            floor_reset(&f);
            double t0 = now_seconds(CLOCK_MONOTONIC), c0 = now_seconds(CLOCK_THREAD_CPUTIME_ID);
            uint64_t sum = run_rung(&f, fns[r], data, (size_t)st.st_size, &n);
            cpu[r][run] = (now_seconds(CLOCK_THREAD_CPUTIME_ID) - c0) * 1e9 / (double)n;
            wall[r][run] = (now_seconds(CLOCK_MONOTONIC) - t0) * 1e9 / (double)n;
            uint64_t got[4] = {f.unmatched, f.displaced, f.refused, f.malformed};
            /* The same input must give the same result in every run. */
            if (run > 0 && (sum != sums[r] || memcmp(got, counts[r], sizeof(got)) != 0)) {
                fprintf(stderr, "bench_books_floor: %s differs between runs\n", rung_names[r]);
                floor_free(&f);
                return 1;
            }
            sums[r] = sum;
            memcpy(counts[r], got, sizeof(got));
        }
    }
    for (int r = 0; r < rungs; r++) {
        double best = cpu[r][0];
        for (uint32_t run = 1; run < runs; run++)
            best = cpu[r][run] < best ? cpu[r][run] : best;
        printf("{\"rung\":\"%s\",\"what\":\"%s\",\"table\":\"%s\",\"ahead\":%" PRIu32
               ",\"runs\":%" PRIu32 ",\"messages\":%" PRIu64 ",\"cpu_ns_per_msg\":%.2f"
               ",\"cpu_ns_best\":%.2f,\"wall_ns_per_msg\":%.2f,\"checksum\":\"%016" PRIx64
               "\",\"unmatched\":%" PRIu64 ",\"displaced\":%" PRIu64 ",\"refused\":%" PRIu64
               ",\"malformed\":%" PRIu64 ",\"order_table_bytes\":%zu,\"level_bytes\":%zu}\n",
               rung_names[r], rung_whats[r], table == TABLE_BOOKS ? "books" : "compact", ahead,
               runs, messages, median(cpu[r], runs), best, median(wall[r], runs), sums[r],
               counts[r][0], counts[r][1], counts[r][2], counts[r][3],
               table == TABLE_BOOKS ? f.window_bytes : f.compact_bytes, f.level_bytes);
    }
    floor_free(&f);
    munmap((void *)data, (size_t)st.st_size + INPUT_SLACK);
    return 0;
}
