/*
 * Clearing one instrument's order-level book (tp_mbo_clear, tp_books_clear): a clear starts a
 * new generation of the instrument instead of finding its orders, and the older generation's
 * entries are reclaimed later (tp_mbo.c). These tests look inside the tables (tp_books_impl.h) to
 * hold the accounting to what the tables really contain.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "books_test_util.h"
#include "tp_books_impl.h"
#include "tp_mbo.h"

#define PX(n) ((int64_t)((n)*1000000000.0))

/* Books of order-level instruments first_id.. with a window asked for `recent` slots. */
static struct tp_books *clear_books(uint32_t first_id, uint32_t instruments, uint32_t max_orders,
                                    uint32_t recent)
{
    struct tp_books_params p = {.first_id = first_id,
                                .instruments = instruments,
                                .max_orders = max_orders,
                                .recent_orders = recent,
                                .levels_per_side = 8};

    return test_mbo_books(&p);
}

/*
 * What the tables hold against what the books count: every occupied slot is a live order or a
 * stale entry, the stale ones are counted per instrument and in total within the limit, each
 * instrument's live orders are its entries of the current generation, and the overflow table's
 * per-window-slot counts agree with it (below the saturation).
 */
static void expect_accounting(const struct tp_books *b)
{
    uint64_t slots = b->recent_slots + b->order_mask + 1, occupied = 0, stale = 0;
    uint32_t n = b->params.instruments;
    uint64_t *live = calloc(n, sizeof(uint64_t)), *stale_of = calloc(n, sizeof(uint64_t));
    uint32_t *spilled = calloc(b->recent_slots, sizeof(uint32_t));

    assert_non_null(live);
    assert_non_null(stale_of);
    assert_non_null(spilled);
    for (uint64_t i = 0; i < slots; i++) {
        const struct tp_order *o =
            i < b->recent_slots ? &b->recent[i] : &b->orders[i - b->recent_slots];
        if (!o->qty)
            continue;
        uint32_t tag = o->instr_side >> 1;
        uint32_t index = tp_tag_instrument(tag) - b->params.first_id;
        assert_true(index < n);
        occupied++;
        if (tag == tp_order_tag(&b->hot[index])) {
            live[index]++;
        } else {
            stale_of[index]++;
            stale++;
        }
        if (i >= b->recent_slots)
            spilled[tp_recent_slot(b, o->id)]++;
    }
    assert_int_equal(occupied, b->totals.live_orders + b->stale_orders);
    assert_int_equal(stale, b->stale_orders);
    assert_true(b->stale_orders <= b->stale_limit);
    for (uint32_t i = 0; i < n; i++) {
        assert_int_equal(live[i], b->hot[i].live_orders);
        assert_int_equal(stale_of[i], b->books[i].stale_orders);
        /* An order-level book's generation is in its tag, and its generation bits are 0 only
         * without an order-level book. */
        assert_int_equal(tp_order_tag(&b->hot[i]) >> TP_ORDER_ID_BITS, b->books[i].order_gen);
        assert_true(b->books[i].order_gen >= 1 && b->books[i].order_gen <= TP_ORDER_GEN_MAX);
    }
    for (uint64_t s = 0; s < b->recent_slots; s++)
        if (b->spilled[s] < UINT8_MAX)
            assert_int_equal(spilled[s], b->spilled[s]);
    free(live);
    free(stale_of);
    free(spilled);
}

/* An order the tests remember. */
struct kept_order {
    uint64_t id;
    uint32_t instr;
    int64_t qty;
    bool live;
};

static int64_t kept_price(uint64_t id)
{
    return PX(100 + (int64_t)(id % 5));
}

static void add_kept(struct tp_books *b, const struct kept_order *k)
{
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];

    assert_int_equal(tp_mbo_add(b, k->instr, k->id, k->id % 2 ? TP_SIDE_BID : TP_SIDE_ASK,
                                kept_price(k->id), k->qty, k->id, c),
                     2);
}

static void expect_kept(const struct tp_books *b, const struct kept_order *k, int n)
{
    for (int i = 0; i < n; i++) {
        int64_t qty = 0, price = 0;
        int rc = tp_mbo_order(b, k[i].instr, k[i].id, NULL, &price, &qty, NULL);
        assert_int_equal(rc, k[i].live ? 0 : -ENOENT);
        if (k[i].live) {
            assert_int_equal(qty, k[i].qty);
            assert_int_equal(price, kept_price(k[i].id));
        }
    }
}

/*
 * Four instruments (instance ids 7..10): increasing ids that pass many times over a 101-slot
 * window (its slots reused, the survivors moved to the overflow table) and sparse ids. Clearing
 * one instrument leaves every other order findable with its values, wherever it lives; the
 * cleared one's ids are gone, are refused by every call that names them, and can be added again
 * (and then are duplicates).
 */
static void test_clear_leaves_other_instruments(void **state)
{
    enum { N = 1200 };
    struct tp_books *b = clear_books(7, 4, 2000, 101);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    static struct kept_order k[N];
    uint32_t levels[4][2];

    (void)state;
    assert_non_null(b);
    for (int i = 0; i < N; i++) {
        uint64_t id = i < N / 2 ? (uint64_t)i + 1 : (uint64_t)i * 0x9e3779b97f4a7c15ull;
        k[i] = (struct kept_order){.id = id, .instr = 7 + (uint32_t)(i % 4), .qty = i + 1};
        add_kept(b, &k[i]);
        k[i].live = true;
    }
    /* Holes in both tables. */
    for (int i = 0; i < N; i += 3) {
        assert_int_equal(tp_mbo_delete(b, k[i].instr, k[i].id, c), 2);
        k[i].live = false;
    }
    assert_true(b->totals.orders_spilled > 0);
    expect_accounting(b);
    for (uint32_t i = 0; i < 4; i++)
        for (unsigned side = 0; side < 2; side++)
            levels[i][side] = tp_books_levels(b, 7 + i, TP_BOOK_ORDERS, side);
    uint64_t live_before = tp_books_totals(b)->live_orders;
    uint32_t cleared = tp_books_orders(b, 9);
    assert_true(cleared > 0);

    assert_int_equal(tp_mbo_clear(b, 9, c), 1);
    assert_int_equal(c[0].kind, TP_CHANGE_CLEAR);
    assert_int_equal(c[0].book, TP_BOOK_ORDERS);
    assert_int_equal(tp_books_orders(b, 9), 0);
    assert_int_equal(tp_books_totals(b)->live_orders, live_before - cleared);
    assert_int_equal(tp_books_levels(b, 9, TP_BOOK_ORDERS, TP_SIDE_BID), 0);
    assert_int_equal(tp_books_levels(b, 9, TP_BOOK_ORDERS, TP_SIDE_ASK), 0);
    for (uint32_t i = 0; i < 4; i++)
        for (unsigned side = 0; side < 2 && i != 2; side++)
            assert_int_equal(tp_books_levels(b, 7 + i, TP_BOOK_ORDERS, side), levels[i][side]);
    for (int i = 0; i < N; i++)
        if (k[i].instr == 9)
            k[i].live = false;
    expect_kept(b, k, N);
    expect_accounting(b);
    /* The cleared ids are unknown to every call... */
    for (int i = 2; i < N; i += 4) {
        assert_int_equal(tp_mbo_delete(b, 9, k[i].id, c), -ENOENT);
        assert_int_equal(tp_mbo_execute(b, 9, k[i].id, 1, TP_MBO_ORDER_PRICE, 1, 1, c), -ENOENT);
        assert_int_equal(tp_mbo_cancel(b, 9, k[i].id, 1, c), -ENOENT);
        assert_int_equal(tp_mbo_modify(b, 9, k[i].id, PX(1), 1, 1, c), -ENOENT);
        assert_int_equal(tp_mbo_replace(b, 9, k[i].id, k[i].id + 1, PX(1), 1, 1, c), -ENOENT);
    }
    /* ...and come back: as new orders, then as duplicates. */
    for (int i = 2; i < N; i += 4) {
        add_kept(b, &k[i]);
        k[i].live = true;
        assert_int_equal(tp_mbo_add(b, 9, k[i].id, TP_SIDE_BID, PX(1), 1, 1, c), -EEXIST);
    }
    expect_kept(b, k, N);
    expect_accounting(b);
    /* Every order, old or re-added, is found and removed once; nothing else is left. */
    for (int i = 0; i < N; i++)
        if (k[i].live)
            assert_int_equal(tp_mbo_delete(b, k[i].instr, k[i].id, c), 2);
    assert_int_equal(tp_books_totals(b)->live_orders, 0);
    for (uint32_t i = 0; i < 4; i++)
        assert_int_equal(tp_books_levels(b, 7 + i, TP_BOOK_ORDERS, TP_SIDE_ASK), 0);
    expect_accounting(b);
    free(b);
}

/* A small deterministic generator for the cycles below. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    return z ^ (z >> 31);
}

/*
 * Thousands of clear/add cycles on small tables (64 orders, 128 overflow slots, an 11-slot
 * window): each cycle clears an instrument holding orders and adds new ones (sequential ids, ids
 * sharing window slots, sparse ids), and others are deleted. The stale entries the clears leave
 * would fill the overflow table within a few cycles; the accounting must stay exact, the stale
 * entries within their limit, and no add may be refused for room.
 */
static void test_clear_add_cycles(void **state)
{
    enum { INSTR = 3, ORDERS = 64, CYCLES = 3000 };
    struct tp_books *b = clear_books(0, INSTR, ORDERS, 11);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    struct kept_order k[ORDERS];
    uint64_t rng = 42, next_id = 1, added = 0;
    int n = 0;

    (void)state;
    assert_non_null(b);
    for (int cycle = 0; cycle < CYCLES; cycle++) {
        uint32_t victim = (uint32_t)(next_random(&rng) % INSTR);
        assert_int_equal(tp_mbo_clear(b, victim, c), 1);
        for (int i = 0; i < n;)
            if (k[i].instr == victim)
                k[i] = k[--n];
            else
                i++;
        /* Refill to a full table: the clear made room for what the victim held. */
        while (n < ORDERS) {
            uint64_t r = next_random(&rng), id;
            switch (r % 3) {
            case 0:
                id = next_id++;
                break;
            case 1:
                id = 11 * (next_id++ % 97 + 1); /* all in one window slot */
                break;
            default:
                id = r >> 8;
                break;
            }
            uint32_t instr = (uint32_t)((r >> 4) % INSTR);
            if (tp_mbo_order(b, instr, id, NULL, NULL, NULL, NULL) == 0)
                continue;
            k[n] = (struct kept_order){.id = id, .instr = instr, .qty = 1 + (int64_t)(r % 9)};
            add_kept(b, &k[n]);
            k[n++].live = true;
            added++;
        }
        if (cycle % 4 == 0 && n > 0) {
            int i = (int)(next_random(&rng) % (uint64_t)n);
            assert_int_equal(tp_mbo_delete(b, k[i].instr, k[i].id, c), 2);
            k[i] = k[--n];
        }
        /* Every cycle: stale entries past their limit fail here, before they fill the table. */
        expect_accounting(b);
        if (cycle % 16 == 0)
            expect_kept(b, k, n);
    }
    expect_kept(b, k, n);
    expect_accounting(b);
    assert_int_equal(tp_books_totals(b)->order_capacity, 0);
    assert_int_equal(tp_books_totals(b)->peak_live_orders, ORDERS);
    assert_int_equal(tp_books_totals(b)->live_orders, (uint64_t)n);
    assert_true(added > (uint64_t)CYCLES * ORDERS / INSTR / 2);
    free(b);
}

/*
 * Generations are counted modulo 128: an instrument cleared hundreds of times while its old
 * entries wait in a large overflow table (the sweep is slow there) must never see an old entry
 * come back as live when its generation number returns. The same ids, all in one window slot, are
 * added in every generation: a resurrected entry would make the add a duplicate, or a lookup
 * find it before the add.
 */
static void test_generations_wrap(void **state)
{
    struct tp_books *b = clear_books(0, 2, 1 << 16, 11);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];

    (void)state;
    assert_non_null(b);
    assert_int_equal(tp_mbo_add(b, 1, 5, TP_SIDE_BID, PX(3), 4, 1, c), 2);
    for (int gen = 0; gen < 400; gen++) {
        for (uint64_t id = 11; id <= 55; id += 11) {
            assert_int_equal(tp_mbo_order(b, 0, id, NULL, NULL, NULL, NULL), -ENOENT);
            assert_int_equal(tp_mbo_add(b, 0, id, TP_SIDE_ASK, PX(5), (int64_t)id, 1, c), 2);
        }
        assert_int_equal(tp_books_orders(b, 0), 5);
        if (gen % 50 == 0)
            expect_accounting(b);
        assert_int_equal(tp_books_clear(b, 0, 0, c), 1);
    }
    expect_accounting(b);
    assert_true(b->stale_orders > 0); /* the sweep left some: the wrap had entries to find */
    assert_int_equal(tp_mbo_order(b, 1, 5, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(tp_books_totals(b)->live_orders, 1);
    free(b);
}

/*
 * The clear that wraps the generation when the instrument has no stale entry: the order it
 * clears, in a window slot just behind the sweep, carries generation 127, which comes back 126
 * clears later; the sweep, one order's worth of slots a clear, has not reached it by then. It must
 * not be live again (it was, and the instrument's count of live orders then went below zero).
 */
static void test_wrap_with_no_stale_entry(void **state)
{
    struct tp_books *b = clear_books(0, 1, 4096, 1021);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    uint64_t id = 1;

    (void)state;
    assert_non_null(b);
    /* Up to the last generation, each clear's stale order reclaimed at once by a full pass. */
    while (b->books[0].order_gen != TP_ORDER_GEN_MAX) {
        assert_int_equal(tp_mbo_add(b, 0, id++, TP_SIDE_BID, PX(2), 1, 1, c), 2);
        assert_int_equal(tp_books_mark_for_clear(b, 0), 0);
        tp_books_drop_marked_orders(b);
    }
    assert_int_equal(b->stale_orders, 0);
    /* An id whose window slot the sweep has just passed. */
    uint64_t behind = id;
    while (tp_recent_slot(b, behind) + 1 != b->sweep_next)
        behind++;
    assert_int_equal(tp_mbo_add(b, 0, behind, TP_SIDE_BID, PX(2), 7, 1, c), 2);
    assert_int_equal(tp_mbo_clear(b, 0, c), 1);
    assert_int_equal(b->books[0].order_gen, 1);
    expect_accounting(b);
    /* Back to generation 127, one order a clear, none in `behind`'s window slot (an add there
     * would reclaim it). */
    uint64_t sweep_start = b->sweep_next, other = behind;
    while (b->books[0].order_gen != TP_ORDER_GEN_MAX) {
        do
            other++;
        while (tp_recent_slot(b, other) == tp_recent_slot(b, behind));
        assert_int_equal(tp_mbo_add(b, 0, other, TP_SIDE_BID, PX(2), 1, 1, c), 2);
        assert_int_equal(tp_mbo_clear(b, 0, c), 1);
    }
    assert_true(b->sweep_next > sweep_start); /* not round the tables to `behind` */
    assert_int_equal(tp_mbo_order(b, 0, behind, NULL, NULL, NULL, NULL), -ENOENT);
    assert_int_equal(tp_books_orders(b, 0), 0);
    assert_int_equal(tp_mbo_delete(b, 0, behind, c), -ENOENT);
    expect_accounting(b);
    free(b);
}

/*
 * A batch clear (mark, one pass) after single clears: the marked instrument's live and stale
 * entries all go, the others' stay, and the stale entries the pass meets are reclaimed.
 */
static void test_batch_clear_after_single_clears(void **state)
{
    struct tp_books *b = clear_books(0, 3, 512, 31);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];

    (void)state;
    assert_non_null(b);
    for (uint64_t id = 1; id <= 300; id++)
        assert_int_equal(tp_mbo_add(b, (uint32_t)(id % 3), id * 31, TP_SIDE_BID, PX(2), 1, 1, c),
                         2);
    assert_int_equal(tp_mbo_clear(b, 0, c), 1);
    assert_true(b->stale_orders > 0);
    expect_accounting(b);
    assert_int_equal(tp_books_mark_for_clear(b, 1), 0);
    tp_books_drop_marked_orders(b);
    expect_accounting(b);
    assert_int_equal(b->stale_orders, 0);
    assert_int_equal(tp_books_orders(b, 1), 0);
    assert_int_equal(tp_books_orders(b, 2), 100);
    for (uint64_t id = 1; id <= 300; id++)
        assert_int_equal(tp_mbo_order(b, (uint32_t)(id % 3), id * 31, NULL, NULL, NULL, NULL),
                         id % 3 == 2 ? 0 : -ENOENT);
    free(b);
}

/* Books with an order table serve instance ids below 2^24 (the tag's id bits). */
static void test_id_range(void **state)
{
    struct tp_books_params p = {
        .first_id = (1u << 24) - 2, .instruments = 2, .max_orders = 16, .levels_per_side = 2};

    (void)state;
    assert_true(tp_books_memsize(&p) > 0);
    p.instruments = 3;
    assert_int_equal(tp_books_memsize(&p), 0);
    p.max_orders = 0;
    p.mbp_depth = 2;
    assert_true(tp_books_memsize(&p) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clear_leaves_other_instruments),
        cmocka_unit_test(test_clear_add_cycles),
        cmocka_unit_test(test_generations_wrap),
        cmocka_unit_test(test_wrap_with_no_stale_entry),
        cmocka_unit_test(test_batch_clear_after_single_clears),
        cmocka_unit_test(test_id_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
