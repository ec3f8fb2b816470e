/*
 * Randomized differential test of the order-level books.
 *
 * Millions of random order events (add, execute, cancel, delete, replace, modify, plus hostile
 * ones: unknown ids, duplicate ids, zero/negative quantities, unknown instruments) go through
 * tp_mbo_* and through a deliberately simple reference model: orders in a plain array, levels as
 * a (qty, count) per price tick. After every event the aggregated levels of the instrument
 * touched agree with the reference, and so does a mirror book built only from the LEVEL change
 * records (so the records alone reproduce the book). The order table and level arrays are small
 * enough that capacity exhaustion happens, and the reference models it the same way. Now and
 * then an instrument's change records are switched off (tp_books_set_emit): its book must still
 * agree with the reference while every call reports no record, and switched on again the mirror
 * resynchronizes from the book (tp_books_copy_levels) and follows the records from there.
 *
 * TP_BOOKS_DIFF_EVENTS sets the number of events per run (default 1000000; two runs: sequential
 * and scattered order ids).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tp_books.h"
#include "tp_instruments.h"
#include "tp_mbo.h"

#define INSTRUMENTS 4
#define TICKS       96       /* prices 1..TICKS ticks */
#define TICK        10000000 /* price9 of one tick: 0.01 */
#define LEVELS      20   /* level array capacity per side: fewer than the ticks a side reaches */
#define MAX_ORDERS  3000 /* live orders: exhausted now and then */

struct ref_order {
    uint8_t live;
    uint8_t side;
    uint8_t instr;
    int32_t tick;
    int64_t qty;
};

struct ref_level {
    int64_t qty;
    uint32_t count;
};

struct model {
    struct ref_order *orders; /* indexed by the test's order number */
    uint64_t n_ids;           /* order numbers handed out */
    uint64_t live;
    struct ref_level levels[INSTRUMENTS][2][TICKS + 1];
    uint32_t n_levels[INSTRUMENTS][2];
    /* Mirror of the TP_BOOK_ORDERS levels built from change records only, best first. */
    struct tp_level mirror[INSTRUMENTS][2][LEVELS];
    uint32_t mirror_n[INSTRUMENTS][2];
    int quiet[INSTRUMENTS]; /* change records switched off for the instrument */
    uint64_t quiet_events;  /* events applied to a quiet instrument */
    uint64_t rng;
    int scramble; /* venue ids: sequential, or scattered over the 64-bit space */
};

static uint64_t next_rand(struct model *m)
{
    /* xorshift64*: fast, reproducible */
    m->rng ^= m->rng >> 12;
    m->rng ^= m->rng << 25;
    m->rng ^= m->rng >> 27;
    return m->rng * 2685821657736338717ull;
}

static uint64_t venue_id(const struct model *m, uint64_t n)
{
    return m->scramble ? n * 0x9e3779b97f4a7c15ull : n + 1000;
}

static int64_t tick_price(int32_t tick)
{
    return (int64_t)tick * TICK;
}

/* Ticks of the reference levels of one side, best first. */
static uint32_t ref_side(const struct model *m, int instr, int side, int32_t *ticks)
{
    uint32_t n = 0;

    for (int32_t i = 1; i <= TICKS; i++) {
        int32_t t = side == TP_SIDE_BID ? TICKS + 1 - i : i;
        if (m->levels[instr][side][t].count)
            ticks[n++] = t;
    }
    return n;
}

static void check_instrument(const struct model *m, const struct tp_books *b, int instr)
{
    int32_t ticks[TICKS];

    for (int side = 0; side < 2; side++) {
        uint32_t n = ref_side(m, instr, side, ticks);
        assert_int_equal(tp_books_levels(b, (uint32_t)instr, TP_BOOK_ORDERS, side), n);
        if (!m->quiet[instr])
            assert_int_equal(m->mirror_n[instr][side], n);
        for (uint32_t i = 0; i < n; i++) {
            const struct ref_level *r = &m->levels[instr][side][ticks[i]];
            struct tp_level lv;
            assert_int_equal(tp_books_level(b, (uint32_t)instr, TP_BOOK_ORDERS, side, i + 1, &lv),
                             0);
            assert_int_equal(lv.price, tick_price(ticks[i]));
            assert_int_equal(lv.qty, r->qty);
            assert_int_equal(lv.count, r->count);
            if (m->quiet[instr])
                continue;
            assert_int_equal(m->mirror[instr][side][i].price, lv.price);
            assert_int_equal(m->mirror[instr][side][i].qty, lv.qty);
            assert_int_equal(m->mirror[instr][side][i].count, lv.count);
        }
    }
}

/* Applies LEVEL records to the mirror with the MDP3 semantics of tp_book_change.h. */
static void mirror_apply(struct model *m, const struct tp_book_change *c, int n)
{
    for (int i = 0; i < n; i++, c++) {
        if (c->kind != TP_CHANGE_LEVEL)
            continue;
        assert_int_equal(c->book, TP_BOOK_ORDERS);
        assert_true(c->instrument < INSTRUMENTS && c->side < 2);
        struct tp_level *lv = m->mirror[c->instrument][c->side];
        uint32_t *cnt = &m->mirror_n[c->instrument][c->side];
        uint32_t k = c->level;
        assert_true(k >= 1);
        assert_int_equal(!!(c->flags & TP_CHANGE_F_TOP), k == 1);
        switch (c->action) {
        case TP_LEVEL_NEW:
            assert_true(k <= *cnt + 1 && *cnt < LEVELS);
            memmove(&lv[k], &lv[k - 1], (*cnt - (k - 1)) * sizeof(*lv));
            lv[k - 1] = (struct tp_level){.price = c->price, .qty = c->qty, .count = c->count};
            (*cnt)++;
            break;
        case TP_LEVEL_CHANGE:
            assert_true(k <= *cnt);
            assert_int_equal(lv[k - 1].price, c->price);
            lv[k - 1].qty = c->qty;
            lv[k - 1].count = c->count;
            break;
        case TP_LEVEL_DELETE:
            assert_true(k <= *cnt);
            assert_int_equal(lv[k - 1].price, c->price);
            memmove(&lv[k - 1], &lv[k], (*cnt - k) * sizeof(*lv));
            (*cnt)--;
            break;
        default:
            fail_msg("unexpected level action %u", c->action);
        }
    }
}

static void ref_level_add(struct model *m, int instr, int side, int32_t tick, int64_t qty)
{
    struct ref_level *l = &m->levels[instr][side][tick];
    if (l->count++ == 0)
        m->n_levels[instr][side]++;
    l->qty += qty;
}

static void ref_level_sub(struct model *m, int instr, int side, int32_t tick, int64_t qty,
                          int whole)
{
    struct ref_level *l = &m->levels[instr][side][tick];
    l->qty -= qty;
    if (whole && --l->count == 0)
        m->n_levels[instr][side]--;
}

/* Would an order at tick fit in the level array (the level exists, or there is room)? */
static int ref_level_fits(const struct model *m, int instr, int side, int32_t tick)
{
    return m->levels[instr][side][tick].count > 0 || m->n_levels[instr][side] < LEVELS;
}

static void ref_remove(struct model *m, uint64_t o)
{
    struct ref_order *r = &m->orders[o];
    ref_level_sub(m, r->instr, r->side, r->tick, r->qty, 1);
    r->live = 0;
    m->live--;
}

/* A random order number: mostly a live one near the recent end, sometimes any. */
static uint64_t pick_order(struct model *m)
{
    if (m->n_ids == 0)
        return 0;
    uint64_t span = m->n_ids < 4000 ? m->n_ids : 4000;
    if (next_rand(m) % 8 == 0)
        return next_rand(m) % m->n_ids;
    return m->n_ids - 1 - next_rand(m) % span;
}

static int32_t pick_tick(struct model *m, int side)
{
    /* Near a moving "top" around the middle, with a tail that reaches the edges. */
    int32_t off = (int32_t)(next_rand(m) % 8);
    if (next_rand(m) % 16 == 0)
        off = (int32_t)(next_rand(m) % (TICKS / 2));
    int32_t t = side == TP_SIDE_BID ? TICKS / 2 - off : TICKS / 2 + 1 + off;
    return t < 1 ? 1 : t > TICKS ? TICKS : t;
}

/*
 * The records a successful call must report: `want`, or none while the instrument is quiet.
 * Returns whether records are there to look at.
 */
static int expect_records(const struct model *m, int instr, int rc, int want)
{
    assert_int_equal(rc, m->quiet[instr] ? 0 : want);
    return rc > 0;
}

/* Switches an instrument's change records off, or back on with its mirror read from the book. */
static void toggle_quiet(struct model *m, struct tp_books *b, int instr)
{
    m->quiet[instr] = !m->quiet[instr];
    assert_int_equal(tp_books_set_emit(b, (uint32_t)instr, !m->quiet[instr]), 0);
    if (m->quiet[instr])
        return;
    for (int side = 0; side < 2; side++)
        m->mirror_n[instr][side] = tp_books_copy_levels(b, (uint32_t)instr, TP_BOOK_ORDERS, side,
                                                        m->mirror[instr][side], LEVELS);
}

static void event(struct model *m, struct tp_books *b, uint64_t max_ids)
{
    struct tp_book_change ch[TP_BOOK_CHANGES_MAX];
    uint64_t r = next_rand(m) % 100;
    int rc = 0;
    int instr = (int)(next_rand(m) % INSTRUMENTS);

    if (next_rand(m) % 2048 == 0)
        toggle_quiet(m, b, instr);
    if (r < 42 && m->n_ids < max_ids) {
        /* add (occasionally hostile quantity or duplicate id) */
        int side = (int)(next_rand(m) & 1);
        int32_t tick = pick_tick(m, side);
        int64_t qty = (int64_t)(next_rand(m) % 500) + 1;
        uint64_t o = m->n_ids;
        if (r == 0)
            qty = -(int64_t)(next_rand(m) % 3); /* 0 or negative */
        if (r == 1 && m->n_ids > 0) {
            o = pick_order(m);
            /* Orders are known per instrument: a duplicate is a live id of the same one. */
            if (m->orders[o].live)
                instr = m->orders[o].instr;
        }
        rc = tp_mbo_add(b, (uint32_t)instr, venue_id(m, o), side, tick_price(tick), qty, o, ch);
        if (qty <= 0) {
            assert_int_equal(rc, -EINVAL);
        } else if (o < m->n_ids && m->orders[o].live) {
            assert_int_equal(rc, -EEXIST);
        } else if (o < m->n_ids) {
            /* re-adding a dead id is legal: it is a new order */
            if (m->live >= MAX_ORDERS) {
                assert_int_equal(rc, -ENOSPC);
            } else if (!ref_level_fits(m, instr, side, tick)) {
                assert_int_equal(rc, -ENOSPC);
            } else {
                expect_records(m, instr, rc, 2);
                m->orders[o] = (struct ref_order){1, (uint8_t)side, (uint8_t)instr, tick, qty};
                ref_level_add(m, instr, side, tick, qty);
                m->live++;
            }
        } else {
            m->n_ids++;
            if (m->live >= MAX_ORDERS || !ref_level_fits(m, instr, side, tick)) {
                assert_int_equal(rc, -ENOSPC);
            } else {
                if (expect_records(m, instr, rc, 2)) {
                    assert_int_equal(ch[0].kind, TP_CHANGE_ORDER);
                    assert_int_equal(ch[0].order_id, venue_id(m, o));
                }
                m->orders[o] = (struct ref_order){1, (uint8_t)side, (uint8_t)instr, tick, qty};
                ref_level_add(m, instr, side, tick, qty);
                m->live++;
            }
        }
    } else if (r < 80) {
        /* delete (sometimes of an unknown id, or of another instrument's order) */
        uint64_t o = pick_order(m);
        int known = m->n_ids && m->orders[o].live;
        if (known && next_rand(m) % 4)
            instr = m->orders[o].instr;
        uint64_t id = r == 79 ? venue_id(m, max_ids + 7) : venue_id(m, o);
        rc = tp_mbo_delete(b, (uint32_t)instr, id, ch);
        if (r == 79 || !known || m->orders[o].instr != instr) {
            assert_int_equal(rc, -ENOENT);
        } else {
            if (expect_records(m, instr, rc, 2))
                assert_int_equal(ch[0].action, TP_ORDER_DELETE);
            ref_remove(m, o);
        }
    } else if (r < 90) {
        /* replace: new id, new price and qty, same side */
        uint64_t o = pick_order(m);
        int known = m->n_ids && m->orders[o].live;
        if (!known || m->n_ids >= max_ids)
            return;
        instr = m->orders[o].instr;
        int side = m->orders[o].side;
        int32_t tick = pick_tick(m, side);
        int64_t qty = (int64_t)(next_rand(m) % 500) + 1;
        uint64_t n = m->n_ids++;
        rc = tp_mbo_replace(b, (uint32_t)instr, venue_id(m, o), venue_id(m, n), tick_price(tick),
                            qty, n, ch);
        ref_remove(m, o);
        if (!ref_level_fits(m, instr, side, tick)) {
            /* the old order left; the new one did not fit */
            expect_records(m, instr, rc, 2);
        } else {
            expect_records(m, instr, rc, 4);
            m->orders[n] = (struct ref_order){1, (uint8_t)side, (uint8_t)instr, tick, qty};
            ref_level_add(m, instr, side, tick, qty);
            m->live++;
        }
    } else if (r < 97) {
        /* execute or cancel part (sometimes more than remains, sometimes zero) */
        uint64_t o = pick_order(m);
        int known = m->n_ids && m->orders[o].live;
        if (!known)
            return;
        instr = m->orders[o].instr;
        int64_t qty = (int64_t)(next_rand(m) % (uint64_t)(m->orders[o].qty + 20));
        if (r < 93)
            rc = tp_mbo_execute(b, (uint32_t)instr, venue_id(m, o), qty, TP_MBO_ORDER_PRICE, 1, 7,
                                ch);
        else
            rc = tp_mbo_cancel(b, (uint32_t)instr, venue_id(m, o), qty, ch);
        if (qty <= 0) {
            assert_int_equal(rc, -EINVAL);
        } else if (qty >= m->orders[o].qty) {
            if (expect_records(m, instr, rc, r < 93 ? 3 : 2))
                assert_int_equal(ch[0].qty, 0);
            ref_remove(m, o);
        } else {
            if (expect_records(m, instr, rc, r < 93 ? 3 : 2))
                assert_int_equal(ch[0].qty, m->orders[o].qty - qty);
            ref_level_sub(m, instr, m->orders[o].side, m->orders[o].tick, qty, 0);
            m->orders[o].qty -= qty;
        }
    } else {
        /* modify in place (MDP3 Change): new price and qty, same id */
        uint64_t o = pick_order(m);
        int known = m->n_ids && m->orders[o].live;
        if (!known)
            return;
        struct ref_order *ro = &m->orders[o];
        instr = ro->instr;
        int32_t tick = next_rand(m) % 2 ? ro->tick : pick_tick(m, ro->side);
        int64_t qty = (int64_t)(next_rand(m) % 500) + 1;
        int fits = ref_level_fits(m, instr, ro->side, tick) ||
                   (m->levels[instr][ro->side][ro->tick].count == 1);
        rc = tp_mbo_modify(b, (uint32_t)instr, venue_id(m, o), tick_price(tick), qty, o, ch);
        if (!fits) {
            assert_int_equal(rc, -ENOSPC);
        } else {
            if (m->quiet[instr])
                assert_int_equal(rc, 0);
            else
                assert_true(rc >= 2);
            ref_level_sub(m, instr, ro->side, ro->tick, ro->qty, 1);
            ro->tick = tick;
            ro->qty = qty;
            ref_level_add(m, instr, ro->side, tick, qty);
        }
    }
    m->quiet_events += m->quiet[instr] != 0;
    if (rc > 0)
        mirror_apply(m, ch, rc);
    check_instrument(m, b, instr);
    assert_int_equal(tp_books_totals(b)->live_orders, m->live);
}

static void run(int scramble)
{
    const char *env = getenv("TP_BOOKS_DIFF_EVENTS");
    uint64_t events = env ? strtoull(env, NULL, 10) : 1000000;
    /*
     * A window of under 3 slots per order (the default gives 16): many orders outlive it, so the
     * overflow table's paths (moves, lookups, removals) are exercised all through the run.
     */
    struct tp_books_params p = {.instruments = INSTRUMENTS,
                                .max_orders = MAX_ORDERS,
                                .recent_orders = 8191,
                                .levels_per_side = LEVELS};
    size_t size = tp_books_memsize(&p);
    void *mem = aligned_alloc(64, (size + 63) & ~(size_t)63);
    struct tp_books *b = mem;
    struct model *m = calloc(1, sizeof(*m));
    uint64_t max_ids = events + 1;

    assert_non_null(mem);
    assert_non_null(m);
    assert_int_equal(tp_books_init(mem, &p), 0);
    for (uint32_t i = 0; i < INSTRUMENTS; i++)
        assert_int_equal(tp_books_configure(b, i, TP_BOOK_TYPE_MBO, 0, 0), 0);
    m->orders = calloc(max_ids + 8, sizeof(*m->orders));
    assert_non_null(m->orders);
    m->rng = 0x1234567 + (uint64_t)scramble;
    m->scramble = scramble;
    for (uint64_t i = 0; i < events; i++)
        event(m, b, max_ids);
    for (int i = 0; i < INSTRUMENTS; i++)
        check_instrument(m, b, i);
    /* The capacity paths were exercised, and counted where they happened. */
    uint64_t order_full = 0, level_full = 0, unknown = 0;
    for (uint32_t i = 0; i < INSTRUMENTS; i++) {
        order_full += tp_books_get(b, i)->counters.order_capacity;
        level_full += tp_books_get(b, i)->counters.level_capacity;
        unknown += tp_books_get(b, i)->counters.unknown_order;
    }
    if (events >= 100000) {
        assert_true(order_full > 0);
        assert_true(level_full > 0);
        assert_true(unknown > 0);
        assert_true(m->quiet_events > 0);
    }
    free(m->orders);
    free(m);
    free(mem);
}

static void test_sequential_ids(void **state)
{
    (void)state;
    run(0);
}

static void test_scattered_ids(void **state)
{
    (void)state;
    run(1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sequential_ids),
        cmocka_unit_test(test_scattered_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
