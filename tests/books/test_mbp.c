/*
 * Price-level books: each MDP3 update action, implied book, depth limits, snapshot (overlay after
 * clear), channel reset (clear), and the change records of each.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "books_test_util.h"
#include "tp_mbp.h"

#define PX(n) ((int64_t)((n)*1000000000.0))

struct fixture {
    struct tp_books *b;
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    f->b = test_books(4, 0, 0, 5, 2);
    assert_non_null(f->b);
    assert_int_equal(tp_books_configure(f->b, 1, TP_BOOK_TYPE_MBP, 5, 2), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    free(f->b);
    free(f);
    return 0;
}

/* Asserts the bid side's levels 1..n: prices and quantities (qty 0 = empty slot). */
static void expect_bids(struct tp_books *b, enum tp_book_kind book, uint32_t n,
                        const int64_t *prices, const int64_t *qtys)
{
    assert_int_equal(tp_books_levels(b, 1, book, TP_SIDE_BID), n);
    for (uint32_t i = 0; i < n; i++) {
        struct tp_level lv;
        assert_int_equal(tp_books_level(b, 1, book, TP_SIDE_BID, i + 1, &lv), 0);
        assert_int_equal(lv.qty, qtys[i]);
        if (qtys[i])
            assert_int_equal(lv.price, prices[i]);
    }
}

static int update(struct fixture *f, enum tp_level_action a, uint32_t level, int64_t price,
                  int64_t qty)
{
    return tp_mbp_update(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_BID, a, level, price, qty, 3, f->c);
}

static void test_new_inserts_and_shifts_down(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(update(f, TP_LEVEL_NEW, 1, PX(100), 10), 1);
    assert_int_equal(update(f, TP_LEVEL_NEW, 2, PX(99), 20), 1);
    assert_int_equal(update(f, TP_LEVEL_NEW, 1, PX(101), 5), 1);
    assert_int_equal(f->c[0].kind, TP_CHANGE_LEVEL);
    assert_int_equal(f->c[0].action, TP_LEVEL_NEW);
    assert_int_equal(f->c[0].level, 1);
    assert_true(f->c[0].flags & TP_CHANGE_F_TOP);
    assert_int_equal(f->c[0].price, PX(101));
    assert_int_equal(f->c[0].count, 3);
    expect_bids(f->b, TP_BOOK_DIRECT, 3, (int64_t[]){PX(101), PX(100), PX(99)},
                (int64_t[]){5, 10, 20});
    /* Level 2 is not the top: no top flag. */
    assert_int_equal(update(f, TP_LEVEL_NEW, 2, PX(100.5), 7), 1);
    assert_false(f->c[0].flags & TP_CHANGE_F_TOP);
}

static void test_new_drops_level_beyond_depth(void **state)
{
    struct fixture *f = *state;

    for (int i = 0; i < 5; i++)
        assert_int_equal(update(f, TP_LEVEL_NEW, (uint32_t)i + 1, PX(100 - i), 10 + i), 1);
    assert_int_equal(update(f, TP_LEVEL_NEW, 1, PX(101), 1), 1);
    expect_bids(f->b, TP_BOOK_DIRECT, 5, (int64_t[]){PX(101), PX(100), PX(99), PX(98), PX(97)},
                (int64_t[]){1, 10, 11, 12, 13});
    /* Level 6 does not exist in a book of depth 5: counted, refused. */
    assert_int_equal(update(f, TP_LEVEL_NEW, 6, PX(90), 1), -EINVAL);
    assert_int_equal(update(f, TP_LEVEL_CHANGE, 0, PX(90), 1), -EINVAL);
    assert_int_equal(tp_books_get(f->b, 1)->counters.bad_level, 2);
}

static void test_change_delete_and_overlay(void **state)
{
    struct fixture *f = *state;

    for (int i = 0; i < 3; i++)
        update(f, TP_LEVEL_NEW, (uint32_t)i + 1, PX(100 - i), 10);
    assert_int_equal(update(f, TP_LEVEL_CHANGE, 2, PX(99), 44), 1);
    assert_int_equal(f->c[0].action, TP_LEVEL_CHANGE);
    assert_int_equal(f->c[0].qty, 44);
    expect_bids(f->b, TP_BOOK_DIRECT, 3, (int64_t[]){PX(100), PX(99), PX(98)},
                (int64_t[]){10, 44, 10});
    assert_int_equal(update(f, TP_LEVEL_DELETE, 1, PX(100), 0), 1);
    assert_true(f->c[0].flags & TP_CHANGE_F_TOP);
    expect_bids(f->b, TP_BOOK_DIRECT, 2, (int64_t[]){PX(99), PX(98)}, (int64_t[]){44, 10});
    /* Overlay replaces price and size in place. */
    assert_int_equal(update(f, TP_LEVEL_OVERLAY, 2, PX(97), 8), 1);
    assert_int_equal(f->c[0].action, TP_LEVEL_OVERLAY);
    expect_bids(f->b, TP_BOOK_DIRECT, 2, (int64_t[]){PX(99), PX(97)}, (int64_t[]){44, 8});
    /* Zero or negative size on a level that must have one: counted. */
    assert_int_equal(update(f, TP_LEVEL_CHANGE, 1, PX(99), 0), -EINVAL);
    assert_int_equal(update(f, TP_LEVEL_NEW, 1, PX(99), -5), -EINVAL);
    assert_int_equal(tp_books_get(f->b, 1)->counters.bad_quantity, 2);
}

static void test_delete_thru_and_delete_from(void **state)
{
    struct fixture *f = *state;

    for (int i = 0; i < 5; i++)
        update(f, TP_LEVEL_NEW, (uint32_t)i + 1, PX(100 - i), 10 + i);
    /* DeleteFrom 2: levels 1 and 2 go, the rest move up by two. */
    assert_int_equal(update(f, TP_LEVEL_DELETE_FROM, 2, 0, 0), 1);
    assert_int_equal(f->c[0].action, TP_LEVEL_DELETE_FROM);
    assert_int_equal(f->c[0].level, 2);
    assert_true(f->c[0].flags & TP_CHANGE_F_TOP);
    expect_bids(f->b, TP_BOOK_DIRECT, 3, (int64_t[]){PX(98), PX(97), PX(96)},
                (int64_t[]){12, 13, 14});
    /* DeleteFrom beyond the depth clears the side, reported as the whole depth. */
    assert_int_equal(update(f, TP_LEVEL_DELETE_FROM, 9, 0, 0), 1);
    assert_int_equal(f->c[0].level, 5);
    assert_int_equal(tp_books_levels(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_BID), 0);
    for (int i = 0; i < 3; i++)
        update(f, TP_LEVEL_NEW, (uint32_t)i + 1, PX(100 - i), 10);
    assert_int_equal(update(f, TP_LEVEL_DELETE_THRU, 0, 0, 0), 1);
    assert_int_equal(f->c[0].action, TP_LEVEL_DELETE_THRU);
    assert_int_equal(tp_books_levels(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_BID), 0);
    struct tp_level lv;
    assert_int_equal(tp_books_level(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_BID, 1, &lv), -ENOENT);
}

static void test_implied_book_is_separate(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(
        tp_mbp_update(f->b, 1, TP_BOOK_IMPLIED, TP_SIDE_BID, TP_LEVEL_NEW, 1, PX(50), 3, 0, f->c),
        1);
    assert_int_equal(f->c[0].book, TP_BOOK_IMPLIED);
    assert_int_equal(tp_books_levels(f->b, 1, TP_BOOK_IMPLIED, TP_SIDE_BID), 1);
    assert_int_equal(tp_books_levels(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_BID), 0);
    /* Implied depth 2: level 3 is refused. */
    assert_int_equal(
        tp_mbp_update(f->b, 1, TP_BOOK_IMPLIED, TP_SIDE_BID, TP_LEVEL_NEW, 3, PX(50), 3, 0, f->c),
        -EINVAL);
    /* The ask side of the outright book does not see any of it. */
    update(f, TP_LEVEL_NEW, 1, PX(49), 1);
    assert_int_equal(tp_books_levels(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_ASK), 0);
}

static void test_snapshot_overlay_in_any_order_after_clear(void **state)
{
    struct fixture *f = *state;

    for (int i = 0; i < 4; i++)
        update(f, TP_LEVEL_NEW, (uint32_t)i + 1, PX(10 - i), 1);
    assert_int_equal(tp_books_clear(f->b, 1, 1, f->c), 1);
    assert_int_equal(f->c[0].kind, TP_CHANGE_CLEAR);
    assert_int_equal(tp_books_levels(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_BID), 0);
    /* Snapshot entries may come in any order: overlay sets each index in place. */
    update(f, TP_LEVEL_OVERLAY, 3, PX(97), 30);
    update(f, TP_LEVEL_OVERLAY, 1, PX(99), 10);
    update(f, TP_LEVEL_OVERLAY, 2, PX(98), 20);
    expect_bids(f->b, TP_BOOK_DIRECT, 3, (int64_t[]){PX(99), PX(98), PX(97)},
                (int64_t[]){10, 20, 30});
    struct tp_level copy[5];
    assert_int_equal(tp_books_copy_levels(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_BID, copy, 5), 3);
    assert_int_equal(copy[2].price, PX(97));
    assert_int_equal(copy[2].qty, 30);
}

/* The bulk copy of each side of each book equals the level-by-level reads, and honours max. */
static void test_copy_levels_every_book_and_side(void **state)
{
    struct fixture *f = *state;
    static const enum tp_book_kind books[] = {TP_BOOK_DIRECT, TP_BOOK_IMPLIED};

    for (unsigned k = 0; k < 2; k++)
        for (unsigned side = TP_SIDE_BID; side <= TP_SIDE_ASK; side++)
            for (uint32_t i = 1; i <= (k == 0 ? 4u : 2u); i++)
                assert_int_equal(tp_mbp_update(f->b, 1, books[k], side, TP_LEVEL_NEW, i,
                                               PX(100 + 10 * k + side) + i, 100 * k + 10 * side + i,
                                               i, f->c),
                                 1);
    for (unsigned k = 0; k < 2; k++)
        for (unsigned side = TP_SIDE_BID; side <= TP_SIDE_ASK; side++) {
            uint32_t n = tp_books_levels(f->b, 1, books[k], side);
            struct tp_level copy[5], one;
            assert_int_equal(n, k == 0 ? 4 : 2);
            assert_int_equal(tp_books_copy_levels(f->b, 1, books[k], side, copy, 5), n);
            for (uint32_t i = 0; i < n; i++) {
                assert_int_equal(tp_books_level(f->b, 1, books[k], side, i + 1, &one), 0);
                assert_int_equal(copy[i].price, one.price);
                assert_int_equal(copy[i].qty, 100 * k + 10 * side + i + 1);
                assert_int_equal(copy[i].count, one.count);
            }
            assert_int_equal(tp_books_copy_levels(f->b, 1, books[k], side, copy, 1), 1);
            assert_int_equal(copy[0].qty, 100 * k + 10 * side + 1);
        }
    struct tp_level none[1];
    assert_int_equal(tp_books_copy_levels(f->b, 2, TP_BOOK_DIRECT, TP_SIDE_BID, none, 1), 0);
}

/*
 * The highest non-empty index (tp_books_levels) after each of many random actions, holes
 * included (levels written anywhere in the depth, deletes and DeleteFrom that move holes to the
 * top), equals the one a model of the levels finds by scanning from the depth, and so do the
 * levels themselves: the books track the index from the action, not by a scan.
 */
static void test_levels_count_follows_random_actions(void **state)
{
    struct fixture *f = *state;
    int64_t model[5] = {0}; /* quantities of levels 1..5 */
    uint64_t x = 88172645463325252ull;

    for (int step = 0; step < 20000; step++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t level = 1 + (uint32_t)(x % 5);
        int64_t qty = 1 + (int64_t)((x >> 8) % 1000);
        enum tp_level_action a = (enum tp_level_action)((x >> 20) % 6);
        if (a == TP_LEVEL_DELETE_THRU && (x >> 30) % 8 != 0)
            a = TP_LEVEL_CHANGE; /* rarely clear the side, so deep books form */
        int rc = update(f, a, level, PX(level), qty);
        assert_true(rc >= 0);
        uint32_t k = level - 1;
        switch (a) {
        case TP_LEVEL_NEW:
            memmove(model + k + 1, model + k, (4 - k) * sizeof(model[0]));
            model[k] = qty;
            break;
        case TP_LEVEL_DELETE:
            memmove(model + k, model + k + 1, (4 - k) * sizeof(model[0]));
            model[4] = 0;
            break;
        case TP_LEVEL_DELETE_THRU:
            memset(model, 0, sizeof(model));
            break;
        case TP_LEVEL_DELETE_FROM:
            memmove(model, model + level, (5 - level) * sizeof(model[0]));
            memset(model + 5 - level, 0, level * sizeof(model[0]));
            break;
        default:
            model[k] = qty;
        }
        uint32_t highest = 5;
        while (highest > 0 && model[highest - 1] == 0)
            highest--;
        assert_int_equal(tp_books_levels(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_BID), highest);
        for (uint32_t i = 0; i < 5; i++) {
            struct tp_level lv = {0};
            int got = tp_books_level(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_BID, i + 1, &lv);
            /* Beyond the highest level: none (-ENOENT); a hole below it reads as qty 0. */
            assert_true(got == 0 || (got == -ENOENT && i >= highest));
            assert_int_equal(got == 0 ? lv.qty : 0, model[i]);
        }
    }
}

static void test_hostile_input_counted(void **state)
{
    struct fixture *f = *state;

    /* Unknown instrument id, instrument without an MBP book, bad side/action/book. */
    assert_int_equal(
        tp_mbp_update(f->b, 99, TP_BOOK_DIRECT, TP_SIDE_BID, TP_LEVEL_NEW, 1, 1, 1, 0, f->c),
        -EINVAL);
    assert_int_equal(
        tp_mbp_update(f->b, 2, TP_BOOK_DIRECT, TP_SIDE_BID, TP_LEVEL_NEW, 1, 1, 1, 0, f->c),
        -EINVAL);
    assert_int_equal(tp_books_get(f->b, 2)->counters.bad_input, 1);
    assert_int_equal(
        tp_mbp_update(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_NONE, TP_LEVEL_NEW, 1, 1, 1, 0, f->c),
        -EINVAL);
    assert_int_equal(tp_mbp_update(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_BID, (enum tp_level_action)9, 1,
                                   1, 1, 0, f->c),
                     -EINVAL);
    assert_int_equal(
        tp_mbp_update(f->b, 1, TP_BOOK_ORDERS, TP_SIDE_BID, TP_LEVEL_NEW, 1, 1, 1, 0, f->c),
        -EINVAL);
    assert_int_equal(tp_books_get(f->b, 1)->counters.bad_input, 3);
    assert_int_equal(tp_books_levels(f->b, 1, TP_BOOK_DIRECT, TP_SIDE_BID), 0);
}

static void test_status_trade_stat_records(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(tp_books_status(f->b, 1, TP_STATUS_OPEN, f->c), 1);
    assert_int_equal(f->c[0].kind, TP_CHANGE_STATUS);
    assert_int_equal(tp_books_status(f->b, 1, TP_STATUS_OPEN, f->c), 0); /* no change */
    assert_int_equal(tp_books_trade(f->b, 1, PX(5), 7, TP_SIDE_ASK, 42, f->c), 1);
    assert_int_equal(f->c[0].kind, TP_CHANGE_TRADE);
    assert_int_equal(f->c[0].side, TP_SIDE_ASK);
    assert_int_equal(f->c[0].aux, 42);
    assert_int_equal(tp_books_trade(f->b, 1, PX(5), 0, TP_SIDE_ASK, 43, f->c), -EINVAL);
    const struct tp_book *bk = tp_books_get(f->b, 1);
    assert_int_equal(bk->volume, 7);
    assert_int_equal(bk->trades, 1);
    assert_int_equal(bk->last_price, PX(5));
    assert_int_equal(tp_books_stat(f->b, 1, TP_STAT_SETTLEMENT, PX(6), 0, f->c), 1);
    assert_int_equal(bk->stats[TP_STAT_SETTLEMENT].price, PX(6));
    assert_int_equal(tp_books_stat(f->b, 1, TP_STAT_COUNT, 0, 0, f->c), -EINVAL);
    /* A reset (not keeping the session) forgets trades and statistics. */
    tp_books_clear(f->b, 1, 0, f->c);
    assert_int_equal(bk->volume, 0);
    assert_int_equal(bk->stats[TP_STAT_SETTLEMENT].present, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new_inserts_and_shifts_down, setup, teardown),
        cmocka_unit_test_setup_teardown(test_new_drops_level_beyond_depth, setup, teardown),
        cmocka_unit_test_setup_teardown(test_change_delete_and_overlay, setup, teardown),
        cmocka_unit_test_setup_teardown(test_delete_thru_and_delete_from, setup, teardown),
        cmocka_unit_test_setup_teardown(test_implied_book_is_separate, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_overlay_in_any_order_after_clear, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_copy_levels_every_book_and_side, setup, teardown),
        cmocka_unit_test_setup_teardown(test_levels_count_follows_random_actions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_input_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_trade_stat_records, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
