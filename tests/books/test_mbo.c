/*
 * Order-level books through the API: aggregation, priority, modify, replace onto an existing
 * level, execution to zero, capacity exhaustion per instrument, clear, and hostile input.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "books_test_util.h"
#include "tp_mbo.h"
#include "tp_mbp.h"

#define PX(n) ((int64_t)((n)*1000000000.0))

struct fixture {
    struct tp_books *b;
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));

    f->b = test_books(3, 8, 3, 0, 0); /* 8 live orders, 3 levels per side */
    assert_non_null(f->b);
    for (uint32_t i = 0; i < 3; i++)
        assert_int_equal(tp_books_configure(f->b, i, TP_BOOK_TYPE_MBO, 0, 0), 0);
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

static void expect_level(struct tp_books *b, uint32_t instr, enum tp_side side, uint32_t index,
                         int64_t price, int64_t qty, uint32_t count)
{
    struct tp_level lv;

    assert_int_equal(tp_books_level(b, instr, TP_BOOK_ORDERS, side, index, &lv), 0);
    assert_int_equal(lv.price, price);
    assert_int_equal(lv.qty, qty);
    assert_int_equal(lv.count, count);
}

static void test_add_aggregates_levels_best_first(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(tp_mbo_add(f->b, 0, 1, TP_SIDE_BID, PX(10), 100, 1, f->c), 2);
    assert_int_equal(f->c[0].kind, TP_CHANGE_ORDER);
    assert_int_equal(f->c[0].action, TP_ORDER_ADD);
    assert_int_equal(f->c[1].kind, TP_CHANGE_LEVEL);
    assert_int_equal(f->c[1].action, TP_LEVEL_NEW);
    assert_int_equal(f->c[1].level, 1);
    assert_true(f->c[1].flags & TP_CHANGE_F_TOP);
    assert_int_equal(tp_mbo_add(f->b, 0, 2, TP_SIDE_BID, PX(10), 50, 2, f->c), 2);
    assert_int_equal(f->c[1].action, TP_LEVEL_CHANGE);
    assert_int_equal(f->c[1].qty, 150);
    assert_int_equal(f->c[1].count, 2);
    tp_mbo_add(f->b, 0, 3, TP_SIDE_BID, PX(10.5), 10, 3, f->c);
    tp_mbo_add(f->b, 0, 4, TP_SIDE_ASK, PX(11), 7, 4, f->c);
    tp_mbo_add(f->b, 0, 5, TP_SIDE_ASK, PX(10.75), 8, 5, f->c);
    expect_level(f->b, 0, TP_SIDE_BID, 1, PX(10.5), 10, 1);
    expect_level(f->b, 0, TP_SIDE_BID, 2, PX(10), 150, 2);
    expect_level(f->b, 0, TP_SIDE_ASK, 1, PX(10.75), 8, 1);
    expect_level(f->b, 0, TP_SIDE_ASK, 2, PX(11), 7, 1);
    /* The bulk copy agrees with the level-by-level reads, best first, and honours max. */
    struct tp_level copy[4];
    assert_int_equal(tp_books_copy_levels(f->b, 0, TP_BOOK_ORDERS, TP_SIDE_ASK, copy, 4), 2);
    assert_int_equal(copy[0].price, PX(10.75));
    assert_int_equal(copy[1].price, PX(11));
    assert_int_equal(copy[1].qty, 7);
    assert_int_equal(tp_books_copy_levels(f->b, 0, TP_BOOK_ORDERS, TP_SIDE_BID, copy, 1), 1);
    assert_int_equal(copy[0].price, PX(10.5));
    assert_int_equal(copy[0].count, 1);
    int64_t price, qty;
    uint64_t priority;
    enum tp_side side;
    assert_int_equal(tp_mbo_order(f->b, 0, 2, &side, &price, &qty, &priority), 0);
    assert_int_equal(side, TP_SIDE_BID);
    assert_int_equal(price, PX(10));
    assert_int_equal(qty, 50);
    assert_int_equal(priority, 2);
}

static void test_execute_cancel_delete(void **state)
{
    struct fixture *f = *state;

    tp_mbo_add(f->b, 0, 1, TP_SIDE_ASK, PX(20), 100, 1, f->c);
    tp_mbo_add(f->b, 0, 2, TP_SIDE_ASK, PX(20), 30, 2, f->c);
    /* Partial execution at the order's price: ORDER, LEVEL, TRADE (aggressor: the buyer). */
    assert_int_equal(tp_mbo_execute(f->b, 0, 1, 40, TP_MBO_ORDER_PRICE, 1, 77, f->c), 3);
    assert_int_equal(f->c[0].action, TP_ORDER_EXECUTE);
    assert_int_equal(f->c[0].qty, 60);
    assert_int_equal(f->c[0].count, 40); /* executed */
    assert_int_equal(f->c[1].qty, 90);
    assert_int_equal(f->c[1].count, 2);
    assert_int_equal(f->c[2].kind, TP_CHANGE_TRADE);
    assert_int_equal(f->c[2].side, TP_SIDE_BID);
    assert_int_equal(f->c[2].price, PX(20));
    assert_int_equal(f->c[2].order_id, 1);
    assert_int_equal(f->c[2].aux, 77);
    /* Execution to zero removes the order but not the level (order 2 is still there). */
    assert_int_equal(tp_mbo_execute(f->b, 0, 1, 60, PX(19.99), 1, 78, f->c), 3);
    assert_int_equal(f->c[0].qty, 0);
    assert_int_equal(f->c[0].count, 60);
    assert_int_equal(f->c[1].action, TP_LEVEL_CHANGE);
    assert_int_equal(f->c[2].price, PX(19.99));
    assert_int_equal(tp_mbo_order(f->b, 0, 1, NULL, NULL, NULL, NULL), -ENOENT);
    expect_level(f->b, 0, TP_SIDE_ASK, 1, PX(20), 30, 1);
    /* Non-printable execution: book changes, no trade. */
    assert_int_equal(tp_mbo_execute(f->b, 0, 2, 5, PX(20), 0, 79, f->c), 2);
    assert_int_equal(f->c[0].action, TP_ORDER_EXECUTE);
    assert_int_equal(f->c[0].qty, 25);
    assert_int_equal(f->c[0].count, 5); /* no TRADE record: only the order record says it */
    assert_int_equal(tp_books_get(f->b, 0)->volume, 100);
    /* Cancel part, then more than remains: the order goes, counted as over-execution. */
    assert_int_equal(tp_mbo_cancel(f->b, 0, 2, 5, f->c), 2);
    assert_int_equal(f->c[0].count, 0); /* only executions say what traded */
    expect_level(f->b, 0, TP_SIDE_ASK, 1, PX(20), 20, 1);
    assert_int_equal(tp_mbo_cancel(f->b, 0, 2, 25, f->c), 2);
    assert_int_equal(f->c[1].action, TP_LEVEL_DELETE);
    assert_int_equal(tp_books_levels(f->b, 0, TP_BOOK_ORDERS, TP_SIDE_ASK), 0);
    assert_int_equal(tp_books_get(f->b, 0)->counters.over_execution, 1);
    /* Delete of a missing order: counted, nothing changes. */
    assert_int_equal(tp_mbo_delete(f->b, 0, 2, f->c), -ENOENT);
    assert_int_equal(tp_books_get(f->b, 0)->counters.unknown_order, 1);
    assert_int_equal(tp_books_totals(f->b)->live_orders, 0);
}

static void test_replace_onto_existing_level(void **state)
{
    struct fixture *f = *state;

    tp_mbo_add(f->b, 0, 1, TP_SIDE_BID, PX(10), 100, 1, f->c);
    tp_mbo_add(f->b, 0, 2, TP_SIDE_BID, PX(9), 10, 2, f->c);
    assert_int_equal(tp_mbo_replace(f->b, 0, 2, 3, PX(10), 25, 3, f->c), 4);
    assert_int_equal(f->c[0].action, TP_ORDER_DELETE);
    assert_int_equal(f->c[0].order_id, 2);
    assert_int_equal(f->c[1].action, TP_LEVEL_DELETE);
    assert_int_equal(f->c[1].level, 2);
    assert_int_equal(f->c[2].action, TP_ORDER_ADD);
    assert_int_equal(f->c[2].order_id, 3);
    assert_int_equal(f->c[3].action, TP_LEVEL_CHANGE);
    assert_int_equal(f->c[3].qty, 125);
    assert_int_equal(tp_books_levels(f->b, 0, TP_BOOK_ORDERS, TP_SIDE_BID), 1);
    expect_level(f->b, 0, TP_SIDE_BID, 1, PX(10), 125, 2);
    /* The new order keeps the side, not the old id. */
    assert_int_equal(tp_mbo_order(f->b, 0, 2, NULL, NULL, NULL, NULL), -ENOENT);
    /* Replace to a live id: refused, nothing changes. */
    assert_int_equal(tp_mbo_replace(f->b, 0, 3, 1, PX(11), 1, 4, f->c), -EEXIST);
    expect_level(f->b, 0, TP_SIDE_BID, 1, PX(10), 125, 2);
}

static void test_modify_moves_between_levels(void **state)
{
    struct fixture *f = *state;

    tp_mbo_add(f->b, 0, 1, TP_SIDE_ASK, PX(5), 10, 1, f->c);
    tp_mbo_add(f->b, 0, 2, TP_SIDE_ASK, PX(6), 20, 2, f->c);
    /* Same price, new qty: one level change. */
    assert_int_equal(tp_mbo_modify(f->b, 0, 2, PX(6), 5, 9, f->c), 2);
    assert_int_equal(f->c[0].action, TP_ORDER_MODIFY);
    assert_int_equal(f->c[0].aux, 9);
    expect_level(f->b, 0, TP_SIDE_ASK, 2, PX(6), 5, 1);
    /* New price: leaves level 2 (deleted), joins level 1. */
    assert_int_equal(tp_mbo_modify(f->b, 0, 2, PX(5), 5, 10, f->c), 3);
    assert_int_equal(f->c[1].action, TP_LEVEL_DELETE);
    assert_int_equal(f->c[2].action, TP_LEVEL_CHANGE);
    expect_level(f->b, 0, TP_SIDE_ASK, 1, PX(5), 15, 2);
    assert_int_equal(tp_books_levels(f->b, 0, TP_BOOK_ORDERS, TP_SIDE_ASK), 1);
}

static void test_capacity_is_per_instrument_and_harmless(void **state)
{
    struct fixture *f = *state;

    /* Level capacity 3 per side on instrument 0. */
    for (int i = 0; i < 3; i++)
        assert_int_equal(tp_mbo_add(f->b, 0, 10 + i, TP_SIDE_BID, PX(10 - i), 1, 1, f->c), 2);
    assert_int_equal(tp_mbo_add(f->b, 0, 20, TP_SIDE_BID, PX(5), 1, 1, f->c), -ENOSPC);
    assert_int_equal(tp_books_get(f->b, 0)->counters.level_capacity, 1);
    /* An existing level still takes orders; another instrument is unaffected. */
    assert_int_equal(tp_mbo_add(f->b, 0, 21, TP_SIDE_BID, PX(10), 1, 1, f->c), 2);
    assert_int_equal(tp_mbo_add(f->b, 1, 22, TP_SIDE_BID, PX(5), 1, 1, f->c), 2);
    /* Order capacity 8 in total: 5 live, 3 more fit, the 9th is refused on its instrument. */
    for (int i = 0; i < 3; i++)
        assert_int_equal(tp_mbo_add(f->b, 1, 30 + i, TP_SIDE_ASK, PX(6), 1, 1, f->c), 2);
    assert_int_equal(tp_mbo_add(f->b, 2, 40, TP_SIDE_ASK, PX(6), 1, 1, f->c), -ENOSPC);
    assert_int_equal(tp_books_get(f->b, 2)->counters.order_capacity, 1);
    assert_int_equal(tp_books_get(f->b, 1)->counters.order_capacity, 0);
    /* The books-wide totals count each refusal once, whichever instrument it hit. */
    assert_int_equal(tp_books_totals(f->b)->order_capacity, 1);
    assert_int_equal(tp_books_totals(f->b)->level_capacity, 1);
    assert_int_equal(tp_books_totals(f->b)->live_orders, 8);
    assert_int_equal(tp_books_totals(f->b)->peak_live_orders, 8);
    expect_level(f->b, 1, TP_SIDE_ASK, 1, PX(6), 3, 3);
    /* Clearing instrument 1 frees its orders only. */
    assert_int_equal(tp_mbo_clear(f->b, 1, f->c), 1);
    assert_int_equal(f->c[0].kind, TP_CHANGE_CLEAR);
    assert_int_equal(f->c[0].book, TP_BOOK_ORDERS);
    assert_int_equal(tp_books_totals(f->b)->live_orders, 4);
    assert_int_equal(tp_books_totals(f->b)->peak_live_orders, 8);
    assert_int_equal(tp_books_levels(f->b, 1, TP_BOOK_ORDERS, TP_SIDE_ASK), 0);
    assert_int_equal(tp_mbo_order(f->b, 0, 10, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(tp_mbo_add(f->b, 2, 40, TP_SIDE_ASK, PX(6), 1, 1, f->c), 2);
    /* The cleared side starts empty: a worse price than its old best level becomes level 1. */
    assert_int_equal(tp_mbo_add(f->b, 1, 41, TP_SIDE_ASK, PX(7), 2, 1, f->c), 2);
    assert_int_equal(tp_books_levels(f->b, 1, TP_BOOK_ORDERS, TP_SIDE_ASK), 1);
    expect_level(f->b, 1, TP_SIDE_ASK, 1, PX(7), 2, 1);
}

/*
 * An order-level level holds a total quantity below 2^40 (its 16-byte entry packs quantity and
 * order count in one word): the order that would overflow it is refused and counted, as is a
 * modify that would, and the books stay as they were.
 */
static void test_level_quantity_limit(void **state)
{
    struct tp_books *b = test_books(1, 300, 3, 0, 0);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    const int64_t full = (INT64_C(1) << 40) - 1, big = UINT32_MAX;

    (void)state;
    assert_non_null(b);
    assert_int_equal(tp_books_configure(b, 0, TP_BOOK_TYPE_MBO, 0, 0), 0);
    for (uint64_t id = 1; id <= 256; id++)
        assert_int_equal(tp_mbo_add(b, 0, id, TP_SIDE_BID, PX(10), big, 1, c), 2);
    assert_int_equal(tp_mbo_add(b, 0, 300, TP_SIDE_BID, PX(10), big, 1, c), -ENOSPC);
    assert_int_equal(tp_mbo_add(b, 0, 1000, TP_SIDE_BID, PX(10), full - 256 * big, 1, c), 2);
    expect_level(b, 0, TP_SIDE_BID, 1, PX(10), full, 257);
    assert_int_equal(tp_mbo_add(b, 0, 301, TP_SIDE_BID, PX(10), 1, 1, c), -ENOSPC);
    assert_int_equal(tp_mbo_modify(b, 0, 1000, PX(10), 256, 2, c), -ENOSPC);
    assert_int_equal(tp_mbo_modify(b, 0, 1000, PX(10), 254, 2, c), 2);
    expect_level(b, 0, TP_SIDE_BID, 1, PX(10), full - 1, 257);
    /* Joining the level from another price with more than it has room for changes nothing. */
    assert_int_equal(tp_mbo_add(b, 0, 2000, TP_SIDE_BID, PX(9), 2, 1, c), 2);
    assert_int_equal(tp_mbo_modify(b, 0, 2000, PX(10), 2, 3, c), -ENOSPC);
    expect_level(b, 0, TP_SIDE_BID, 2, PX(9), 2, 1);
    expect_level(b, 0, TP_SIDE_BID, 1, PX(10), full - 1, 257);
    assert_int_equal(tp_books_get(b, 0)->counters.level_capacity, 4);
    /* Every refusal path (add to a full level, modify in place, modify to another price). */
    assert_int_equal(tp_books_totals(b)->level_capacity, 4);
    assert_int_equal(tp_books_totals(b)->order_capacity, 0);
    assert_int_equal(tp_mbo_modify(b, 0, 2000, PX(10), 1, 3, c), 3);
    expect_level(b, 0, TP_SIDE_BID, 1, PX(10), full, 258);
    assert_int_equal(tp_books_levels(b, 0, TP_BOOK_ORDERS, TP_SIDE_BID), 1);
    free(b);
}

static void test_hostile_input(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(tp_mbo_add(f->b, 0, 1, TP_SIDE_BID, PX(1), 0, 1, f->c), -EINVAL);
    assert_int_equal(tp_mbo_add(f->b, 0, 1, TP_SIDE_BID, PX(1), -5, 1, f->c), -EINVAL);
    assert_int_equal(tp_mbo_add(f->b, 0, 1, TP_SIDE_NONE, PX(1), 5, 1, f->c), -EINVAL);
    assert_int_equal(tp_mbo_add(f->b, 7, 1, TP_SIDE_BID, PX(1), 5, 1, f->c), -EINVAL);
    assert_int_equal(tp_books_get(f->b, 0)->counters.bad_quantity, 2);
    assert_int_equal(tp_books_get(f->b, 0)->counters.bad_input, 1);
    assert_int_equal(tp_mbo_add(f->b, 0, 1, TP_SIDE_BID, PX(1), 5, 1, f->c), 2);
    assert_int_equal(tp_mbo_add(f->b, 0, 1, TP_SIDE_BID, PX(1), 5, 1, f->c), -EEXIST);
    assert_int_equal(tp_mbo_execute(f->b, 0, 1, 0, PX(1), 1, 0, f->c), -EINVAL);
    assert_int_equal(tp_mbo_cancel(f->b, 0, 1, -1, f->c), -EINVAL);
    assert_int_equal(tp_mbo_execute(f->b, 0, 99, 1, PX(1), 1, 0, f->c), -ENOENT);
    /* The order exists, but under instrument 0: instrument 1 may not touch it. */
    assert_int_equal(tp_mbo_delete(f->b, 1, 1, f->c), -ENOENT);
    assert_int_equal(tp_books_get(f->b, 1)->counters.unknown_order, 1);
    expect_level(f->b, 0, TP_SIDE_BID, 1, PX(1), 5, 1);
    assert_int_equal(tp_books_get(f->b, 0)->counters.duplicate_order, 1);
    /* INT64_MIN has no negated ask key: refused by add, replace and modify, nothing changed. */
    assert_int_equal(tp_mbo_add(f->b, 0, 2, TP_SIDE_ASK, INT64_MIN, 5, 1, f->c), -EINVAL);
    assert_int_equal(tp_mbo_add(f->b, 0, 2, TP_SIDE_ASK, PX(2), 5, 1, f->c), 2);
    assert_int_equal(tp_mbo_replace(f->b, 0, 2, 3, INT64_MIN, 5, 1, f->c), -EINVAL);
    assert_int_equal(tp_mbo_modify(f->b, 0, 2, INT64_MIN, 5, 1, f->c), -EINVAL);
    assert_int_equal(tp_books_get(f->b, 0)->counters.bad_price, 3);
    expect_level(f->b, 0, TP_SIDE_ASK, 1, PX(2), 5, 1);
    assert_int_equal(tp_books_totals(f->b)->live_orders, 2);
}

/*
 * Venues number orders independently (an ITCH and an MDP3 order-level channel both start at 1):
 * the same id lives on under two instruments, each reduced and removed on its own.
 */
static void test_same_id_on_two_instruments(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(tp_mbo_add(f->b, 0, 1, TP_SIDE_BID, PX(10), 5, 1, f->c), 2);
    assert_int_equal(tp_mbo_add(f->b, 1, 1, TP_SIDE_ASK, PX(20), 7, 1, f->c), 2);
    assert_int_equal(tp_mbo_add(f->b, 1, 1, TP_SIDE_ASK, PX(21), 7, 1, f->c), -EEXIST);
    assert_int_equal(tp_mbo_cancel(f->b, 1, 1, 2, f->c), 2);
    expect_level(f->b, 0, TP_SIDE_BID, 1, PX(10), 5, 1);
    expect_level(f->b, 1, TP_SIDE_ASK, 1, PX(20), 5, 1);
    assert_int_equal(tp_mbo_replace(f->b, 0, 1, 2, PX(11), 3, 2, f->c), 4);
    assert_int_equal(tp_mbo_order(f->b, 1, 1, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(tp_mbo_delete(f->b, 1, 1, f->c), 2);
    expect_level(f->b, 0, TP_SIDE_BID, 1, PX(11), 3, 1);
    assert_int_equal(tp_books_levels(f->b, 1, TP_BOOK_ORDERS, TP_SIDE_ASK), 0);
    assert_int_equal(tp_books_totals(f->b)->live_orders, 1);
}

/*
 * With change records off, the book changes as before but no record is reported, for orders and
 * for the per-instrument calls alike; another instrument keeps its records.
 */
static void test_emit_off(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(tp_books_set_emit(f->b, 3, 0), -EINVAL);
    assert_int_equal(tp_books_set_emit(f->b, 0, 0), 0);
    assert_int_equal(tp_mbo_add(f->b, 0, 1, TP_SIDE_BID, PX(10), 100, 1, f->c), 0);
    assert_int_equal(tp_mbo_add(f->b, 0, 2, TP_SIDE_BID, PX(10), 50, 2, f->c), 0);
    assert_int_equal(tp_mbo_execute(f->b, 0, 1, 40, TP_MBO_ORDER_PRICE, 1, 9, f->c), 0);
    assert_int_equal(tp_mbo_replace(f->b, 0, 2, 3, PX(11), 20, 3, f->c), 0);
    assert_int_equal(tp_books_trade(f->b, 0, PX(10), 5, TP_SIDE_BID, 10, f->c), 0);
    assert_int_equal(tp_books_status(f->b, 0, TP_STATUS_HALTED, f->c), 0);
    expect_level(f->b, 0, TP_SIDE_BID, 1, PX(11), 20, 1);
    expect_level(f->b, 0, TP_SIDE_BID, 2, PX(10), 60, 1);
    assert_int_equal(tp_books_orders(f->b, 0), 2);
    assert_int_equal(tp_books_get(f->b, 0)->volume, 45);
    assert_int_equal(tp_books_get(f->b, 0)->status, TP_STATUS_HALTED);
    assert_int_equal(tp_mbo_add(f->b, 1, 4, TP_SIDE_ASK, PX(12), 10, 4, f->c), 2);
    /* Back on: records again. */
    assert_int_equal(tp_books_set_emit(f->b, 0, 1), 0);
    assert_int_equal(tp_mbo_delete(f->b, 0, 3, f->c), 2);
    assert_int_equal(f->c[1].action, TP_LEVEL_DELETE);
    assert_int_equal(f->c[1].level, 1);
}

/* One order of test_order_table_churn's model. */
struct model_order {
    uint32_t instr;
    uint64_t id;
    enum tp_side side;
    int64_t qty;
};

static int64_t churn_price(enum tp_side side)
{
    return side == TP_SIDE_BID ? PX(10) : PX(11);
}

/* Every model order is live with its side, price and qty, and the levels add up to them. */
static void expect_model(struct tp_books *b, const struct model_order *m, int n)
{
    int64_t total[3][2] = {{0}};
    uint32_t count[3][2] = {{0}};

    for (int i = 0; i < n; i++) {
        enum tp_side side;
        int64_t price, qty;
        assert_int_equal(tp_mbo_order(b, m[i].instr, m[i].id, &side, &price, &qty, NULL), 0);
        assert_int_equal(side, m[i].side);
        assert_int_equal(price, churn_price(m[i].side));
        assert_int_equal(qty, m[i].qty);
        total[m[i].instr][m[i].side] += m[i].qty;
        count[m[i].instr][m[i].side]++;
    }
    for (uint32_t instr = 0; instr < 3; instr++)
        for (int side = 0; side < 2; side++) {
            if (count[instr][side])
                expect_level(b, instr, side, 1, churn_price(side), total[instr][side],
                             count[instr][side]);
            else
                assert_int_equal(tp_books_levels(b, instr, TP_BOOK_ORDERS, side), 0);
        }
    assert_int_equal(tp_books_totals(b)->live_orders, n);
}

/*
 * The order table (16 slots for 8 orders) under the venues' pattern: increasing ids, most orders
 * removed soon, a few old survivors that stay. Over thousands of ids every probe run wraps round
 * the table and meets the survivors; every order stays findable with its values, removed and
 * never-added ids are unknown, and a full table refuses the add and still answers lookups.
 */
static void test_order_table_churn(void **state)
{
    struct fixture *f = *state;
    struct model_order m[8];
    int n = 0;

    for (uint32_t i = 0; i < 3; i++) {
        m[n] = (struct model_order){i, 1 + i, i % 2 ? TP_SIDE_ASK : TP_SIDE_BID, 100 + i};
        assert_int_equal(tp_mbo_add(f->b, m[n].instr, m[n].id, m[n].side, churn_price(m[n].side),
                                    m[n].qty, 1, f->c),
                         2);
        n++;
    }
    for (uint64_t id = 100; id < 20100; id++) {
        uint32_t instr = (uint32_t)(id % 3);
        enum tp_side side = (id / 3) % 2 ? TP_SIDE_ASK : TP_SIDE_BID;
        int64_t qty = 1 + (int64_t)(id % 5);
        if (id % 1000 == 0) {
            /* Fill the table: the ninth order is refused, lookups still end. */
            while (n < 8) {
                m[n] = (struct model_order){instr, 1000000 + id + n, side, 1};
                assert_int_equal(
                    tp_mbo_add(f->b, instr, m[n].id, side, churn_price(side), 1, 1, f->c), 2);
                n++;
            }
            assert_int_equal(tp_mbo_add(f->b, instr, id, side, churn_price(side), qty, 1, f->c),
                             -ENOSPC);
            assert_int_equal(tp_mbo_delete(f->b, instr, 5000000 + id, f->c), -ENOENT);
            expect_model(f->b, m, n);
            while (n > 7) {
                n--;
                assert_int_equal(tp_mbo_delete(f->b, m[n].instr, m[n].id, f->c), 2);
            }
        }
        if (n == 7) {
            /* The oldest young order (after the survivors) goes, by one of three messages. */
            struct model_order old = m[3];
            int rc = id % 3 == 0   ? tp_mbo_delete(f->b, old.instr, old.id, f->c)
                     : id % 3 == 1 ? tp_mbo_cancel(f->b, old.instr, old.id, old.qty, f->c)
                                   : tp_mbo_execute(f->b, old.instr, old.id, old.qty,
                                                    TP_MBO_ORDER_PRICE, 0, id, f->c);
            assert_int_equal(rc, 2);
            memmove(&m[3], &m[4], (size_t)(n - 4) * sizeof(m[0]));
            n--;
            assert_int_equal(tp_mbo_order(f->b, old.instr, old.id, NULL, NULL, NULL, NULL),
                             -ENOENT);
        }
        m[n] = (struct model_order){instr, id, side, qty};
        assert_int_equal(tp_mbo_add(f->b, instr, id, side, churn_price(side), qty, 1, f->c), 2);
        n++;
        if (id % 7 == 0) {
            /* One share of the newest order cancelled (the last one removes it). */
            assert_int_equal(tp_mbo_cancel(f->b, instr, id, 1, f->c), 2);
            m[n - 1].qty--;
            if (m[n - 1].qty == 0)
                n--;
        }
        assert_int_equal(tp_mbo_order(f->b, instr, id + 5000000, NULL, NULL, NULL, NULL), -ENOENT);
        expect_model(f->b, m, n);
    }
}

/* Books of `instruments` whose recent-order window is asked for `recent_orders` slots. */
static struct tp_books *window_books(uint32_t instruments, uint32_t max_orders,
                                     uint32_t recent_orders)
{
    struct tp_books_params p = {.instruments = instruments,
                                .max_orders = max_orders,
                                .recent_orders = recent_orders,
                                .levels_per_side = 4};

    return test_mbo_books(&p);
}

/*
 * Many live orders whose ids share one slot of the recent-order window (ids 2039 apart: the
 * window asked for here has 2039 slots; ids 2^32 apart share a slot at any size): each add
 * moves the order before it to the overflow table, the per-slot count of moved orders saturates,
 * and every order stays findable and removable; a clear takes an instrument's orders out of
 * both tables and leaves the other's.
 */
/* The orders test_order_window_overflow deletes: 255 of those in the overflow table. */
static bool window_gone(uint64_t k)
{
    return k % 3 == 0 || (k % 3 == 1 && k <= 366);
}

static void test_order_window_overflow(void **state)
{
    struct tp_books *b = window_books(2, 600, 2039);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    const uint64_t top = UINT64_MAX - (1ull << 32);
    uint64_t left[2] = {0, 0};

    (void)state;
    assert_non_null(b);
    assert_int_equal(tp_books_recent_orders(b), 2039);
    for (uint64_t k = 1; k <= 400; k++)
        assert_int_equal(tp_mbo_add(b, k % 2, k * 2039, TP_SIDE_BID, PX(10), (int64_t)k, k, c), 2);
    assert_int_equal(tp_mbo_add(b, 1, 5 * 2039, TP_SIDE_BID, PX(10), 1, 1, c), -EEXIST);
    for (uint64_t k = 1; k <= 400; k++) {
        int64_t qty;
        assert_int_equal(tp_mbo_order(b, k % 2, k * 2039, NULL, NULL, &qty, NULL), 0);
        assert_int_equal(qty, k);
        assert_int_equal(tp_mbo_order(b, (k + 1) % 2, k * 2039, NULL, NULL, NULL, NULL), -ENOENT);
    }
    /*
     * Orders go until more have left the overflow table than its saturated count says (255);
     * the others keep their values.
     */
    for (uint64_t k = 1; k <= 400; k++)
        if (window_gone(k))
            assert_int_equal(tp_mbo_delete(b, k % 2, k * 2039, c), 2);
    for (uint64_t k = 1; k <= 400; k++) {
        int64_t qty;
        int rc = tp_mbo_order(b, k % 2, k * 2039, NULL, NULL, &qty, NULL);
        assert_int_equal(rc, window_gone(k) ? -ENOENT : 0);
        if (rc == 0)
            assert_int_equal(qty, k);
        left[k % 2] += rc == 0;
    }
    assert_int_equal(tp_books_totals(b)->live_orders, left[0] + left[1]);
    /* Ids 2^32 apart, at the top of the id space. */
    assert_int_equal(tp_mbo_add(b, 0, top, TP_SIDE_ASK, PX(11), 7, 1, c), 2);
    assert_int_equal(tp_mbo_add(b, 0, UINT64_MAX, TP_SIDE_ASK, PX(11), 8, 1, c), 2);
    assert_int_equal(tp_mbo_execute(b, 0, top, 7, TP_MBO_ORDER_PRICE, 1, 1, c), 3);
    assert_int_equal(tp_mbo_order(b, 0, top, NULL, NULL, NULL, NULL), -ENOENT);
    expect_level(b, 0, TP_SIDE_ASK, 1, PX(11), 8, 1);
    /* Clearing instrument 0 leaves instrument 1's orders. */
    assert_int_equal(tp_mbo_clear(b, 0, c), 1);
    assert_int_equal(tp_books_totals(b)->live_orders, left[1]);
    assert_int_equal(tp_books_orders(b, 0), 0);
    assert_int_equal(tp_books_levels(b, 0, TP_BOOK_ORDERS, TP_SIDE_BID), 0);
    assert_int_equal(tp_mbo_order(b, 0, UINT64_MAX, NULL, NULL, NULL, NULL), -ENOENT);
    for (uint64_t k = 1; k <= 400; k += 2)
        assert_int_equal(tp_mbo_delete(b, 1, k * 2039, c), window_gone(k) ? -ENOENT : 2);
    assert_int_equal(tp_books_totals(b)->live_orders, 0);
    assert_int_equal(tp_books_levels(b, 1, TP_BOOK_ORDERS, TP_SIDE_BID), 0);
    /* An id seen before can come back. */
    assert_int_equal(tp_mbo_add(b, 1, 2039, TP_SIDE_BID, PX(9), 3, 1, c), 2);
    expect_level(b, 1, TP_SIDE_BID, 1, PX(9), 3, 1);
    free(b);
}

/* Whether n is prime, the slow way. */
static bool is_prime(uint64_t n)
{
    if (n < 2)
        return false;
    for (uint64_t d = 2; d * d <= n; d++)
        if (n % d == 0)
            return false;
    return true;
}

/* The window the books must give: the largest prime at most what was asked (at least 2). */
static uint64_t expected_window(uint32_t max_orders, uint32_t recent_orders)
{
    uint64_t n = recent_orders ? recent_orders : (uint64_t)TP_RECENT_ORDERS_PER_ORDER * max_orders;

    if (!recent_orders && n > TP_RECENT_ORDERS_DEFAULT_MAX)
        n = TP_RECENT_ORDERS_DEFAULT_MAX;
    while (n > 2 && !is_prime(n))
        n--;
    return n < 2 ? 2 : n;
}

/*
 * The recent-order window is sized for the ids an order lives through: by default 16 slots per
 * order (a prime at most that), capped at 2^20, whatever the overflow table's size; a size the
 * caller asks for is used as given (rounded down to a prime), up to TP_RECENT_ORDERS_LIMIT. Each
 * slot costs its 32-byte order and a one-byte count, so the memory follows the window.
 */
static void test_recent_window_rule(void **state)
{
    static const uint32_t orders[] = {1, 8, 600, 3000, 65536, 131072, 1u << 18};
    static const uint32_t asked[] = {1, 2, 100, 2039, 1u << 19, 3000000};

    (void)state;
    assert_int_equal(TP_RECENT_ORDERS_PER_ORDER, 16);
    assert_int_equal(TP_RECENT_ORDERS_DEFAULT_MAX, 1u << 20);
    for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
        struct tp_books *b = window_books(1, orders[o], 0);
        assert_non_null(b);
        assert_int_equal(tp_books_recent_orders(b), expected_window(orders[o], 0));
        assert_int_equal(tp_books_totals(b)->orders_spilled, 0);
        free(b);
    }
    /* The figures the documentation gives: 65,536 orders, and production's 2 M. */
    assert_int_equal(expected_window(65536, 0), 1048573);
    assert_int_equal(expected_window(3000, 0), 47981);
    assert_int_equal(expected_window(1u << 21, 0), 1048573);
    for (size_t a = 0; a < sizeof(asked) / sizeof(asked[0]); a++) {
        struct tp_books *b = window_books(1, 1000, asked[a]);
        assert_non_null(b);
        assert_int_equal(tp_books_recent_orders(b), expected_window(1000, asked[a]));
        free(b);
    }
    /* Memory: 33 bytes a slot (alignment aside); beyond the limit the params are refused. */
    {
        struct tp_books_params p = {.instruments = 1, .max_orders = 1000, .levels_per_side = 4};
        size_t small, large;
        p.recent_orders = 10007;
        small = tp_books_memsize(&p);
        p.recent_orders = 20011;
        large = tp_books_memsize(&p);
        assert_in_range(large - small, 10004 * 33 - 128, 10004 * 33 + 128);
        p.recent_orders = TP_RECENT_ORDERS_LIMIT + 1;
        assert_int_equal(tp_books_memsize(&p), 0);
        assert_int_equal(tp_books_init(&small, &p), -EINVAL);
        /* Without an order table there is no window. */
        p.max_orders = 0;
        p.recent_orders = 0;
        struct tp_books *b = test_zalloc(tp_books_memsize(&p));
        assert_int_equal(tp_books_init(b, &p), 0);
        assert_int_equal(tp_books_recent_orders(b), 0);
        free(b);
    }
}

/*
 * Clearing instruments in bulk (mark, one pass, then tp_books_clear) leaves exactly what clearing
 * them one by one leaves: the marked instruments empty in both tables, every other order where it
 * was with its values, the totals and spilled counts right; marks do not outlive the pass.
 */
static void test_drop_marked_orders(void **state)
{
    /* 101 window slots for 2,000 ids: most orders end in the overflow table. */
    struct tp_books *bulk = window_books(5, 1400, 101), *one = window_books(5, 1400, 101);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    struct tp_books *both[] = {bulk, one};

    (void)state;
    assert_non_null(bulk);
    assert_non_null(one);
    for (int k = 0; k < 2; k++)
        for (uint64_t id = 1; id <= 2000; id++)
            if (id % 3 != 0) /* some deleted ids leave holes in both tables */
                assert_int_equal(tp_mbo_add(both[k], id % 5, id, id % 2 ? TP_SIDE_BID : TP_SIDE_ASK,
                                            PX(10 + (int64_t)(id % 4)), (int64_t)id, id, c),
                                 2);
    assert_int_equal(tp_books_mark_for_clear(bulk, 1), 0);
    assert_int_equal(tp_books_mark_for_clear(bulk, 3), 0);
    assert_int_equal(tp_books_mark_for_clear(bulk, 5), -EINVAL);
    tp_books_drop_marked_orders(bulk);
    for (uint32_t instr = 1; instr <= 3; instr += 2) {
        assert_int_equal(tp_books_orders(bulk, instr), 0);
        assert_int_equal(tp_books_levels(bulk, instr, TP_BOOK_ORDERS, TP_SIDE_BID), 0);
        assert_int_equal(tp_books_clear(bulk, instr, 0, c), 1);
        assert_int_equal(c[0].kind, TP_CHANGE_CLEAR);
        assert_int_equal(tp_books_clear(one, instr, 0, c), 1);
    }
    assert_int_equal(tp_books_totals(bulk)->live_orders, tp_books_totals(one)->live_orders);
    uint64_t kept = 0; /* orders of instruments 0, 2 and 4 */
    for (uint64_t id = 1; id <= 2000; id++)
        kept += id % 3 != 0 && (id % 5) % 2 == 0;
    assert_int_equal(tp_books_totals(bulk)->live_orders, kept);
    for (uint64_t id = 1; id <= 2000; id++) {
        int64_t q1 = -1, q2 = -1, p1 = 0, p2 = 0;
        uint32_t instr = (uint32_t)(id % 5);
        int r1 = tp_mbo_order(bulk, instr, id, NULL, &p1, &q1, NULL);
        int r2 = tp_mbo_order(one, instr, id, NULL, &p2, &q2, NULL);
        assert_int_equal(r1, r2);
        assert_int_equal(r1, instr % 2 == 1 || id % 3 == 0 ? -ENOENT : 0);
        assert_int_equal(q1, q2);
        assert_int_equal(p1, p2);
    }
    for (uint32_t instr = 0; instr < 5; instr++)
        for (unsigned side = 0; side < 2; side++)
            assert_int_equal(tp_books_levels(bulk, instr, TP_BOOK_ORDERS, side),
                             tp_books_levels(one, instr, TP_BOOK_ORDERS, side));
    /* The marks are gone: a second pass drops nothing; the cleared books take orders again. */
    tp_books_drop_marked_orders(bulk);
    assert_int_equal(tp_books_totals(bulk)->live_orders, tp_books_totals(one)->live_orders);
    assert_int_equal(tp_mbo_add(bulk, 1, 5001, TP_SIDE_BID, PX(9), 4, 1, c), 2);
    expect_level(bulk, 1, TP_SIDE_BID, 1, PX(9), 4, 1);
    /* Deleting every surviving order through the tables finds each one (none lost, none doubled).
     */
    for (uint64_t id = 1; id <= 2000; id++)
        if (id % 3 != 0 && (id % 5) % 2 == 0)
            assert_int_equal(tp_mbo_delete(bulk, (uint32_t)(id % 5), id, c), 2);
    assert_int_equal(tp_books_totals(bulk)->live_orders, 1);
    free(bulk);
    free(one);
}

/*
 * Every order that a newer id pushes out of the window is counted, once, whichever message
 * brought the newer id (add or replace); adds into free slots, refused adds, removals (from
 * either table) and clears are not moves. Moved orders stay findable with their values.
 */
static void test_orders_spilled_counted(void **state)
{
    /* 101 window slots (prime): id k and id k + 101 share a slot. */
    struct tp_books *b = window_books(2, 400, 101);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];

    (void)state;
    assert_non_null(b);
    assert_int_equal(tp_books_recent_orders(b), 101);
    for (uint64_t id = 1; id <= 101; id++)
        assert_int_equal(tp_mbo_add(b, id % 2, id, TP_SIDE_BID, PX(10), (int64_t)id, 1, c), 2);
    assert_int_equal(tp_books_totals(b)->orders_spilled, 0);
    /* Ids 102..151 claim the slots of ids 1..50, which are live: 50 moves. */
    for (uint64_t id = 102; id <= 151; id++)
        assert_int_equal(tp_mbo_add(b, id % 2, id, TP_SIDE_ASK, PX(11), 1, 1, c), 2);
    assert_int_equal(tp_books_totals(b)->orders_spilled, 50);
    for (uint64_t id = 1; id <= 50; id++) {
        int64_t qty;
        assert_int_equal(tp_mbo_order(b, id % 2, id, NULL, NULL, &qty, NULL), 0);
        assert_int_equal(qty, (int64_t)id);
    }
    /* Refused adds (duplicate in either table, bad quantity) move nothing. */
    assert_int_equal(tp_mbo_add(b, 1, 3, TP_SIDE_BID, PX(10), 1, 1, c), -EEXIST);
    assert_int_equal(tp_mbo_add(b, 0, 130, TP_SIDE_BID, PX(10), 1, 1, c), -EEXIST);
    /*
     * Id 50 is the largest that moved: the duplicate test skips the overflow table only for ids
     * above it, so an add or a replace's new id equal to it must still find the order there.
     */
    assert_int_equal(tp_mbo_add(b, 0, 50, TP_SIDE_BID, PX(10), 1, 1, c), -EEXIST);
    assert_int_equal(tp_mbo_replace(b, 0, 102, 50, PX(10), 1, 1, c), -EEXIST);
    assert_int_equal(tp_books_get(b, 0)->counters.duplicate_order, 3);
    assert_int_equal(tp_books_get(b, 1)->counters.duplicate_order, 1);
    assert_int_equal(tp_mbo_add(b, 0, 160, TP_SIDE_BID, PX(10), 0, 1, c), -EINVAL);
    /* Removing moved orders and window orders moves nothing either. */
    assert_int_equal(tp_mbo_delete(b, 1, 1, c), 2);
    assert_int_equal(tp_mbo_delete(b, 0, 60, c), 2);
    assert_int_equal(tp_books_totals(b)->orders_spilled, 50);
    /* Id 161 takes the slot id 60 left free: no move. Id 152 pushes out id 51 (in its slot). */
    assert_int_equal(tp_mbo_add(b, 1, 161, TP_SIDE_BID, PX(10), 1, 1, c), 2);
    assert_int_equal(tp_books_totals(b)->orders_spilled, 50);
    assert_int_equal(tp_mbo_add(b, 0, 152, TP_SIDE_BID, PX(10), 1, 1, c), 2);
    assert_int_equal(tp_books_totals(b)->orders_spilled, 51);
    /* A replace's new id moves the order in its slot (id 53, for 154) like an add. */
    assert_int_equal(tp_mbo_replace(b, 1, 151, 154, PX(12), 5, 2, c), 4);
    assert_int_equal(tp_books_totals(b)->orders_spilled, 52);
    assert_int_equal(tp_mbo_order(b, 1, 53, NULL, NULL, NULL, NULL), 0);
    /* Clearing an instrument empties both tables of its orders without counting a move. */
    assert_int_equal(tp_mbo_clear(b, 0, c), 1);
    assert_int_equal(tp_books_orders(b, 0), 0);
    assert_int_equal(tp_books_totals(b)->orders_spilled, 52);
    free(b);
}

/*
 * Books for a window of the instance's ids (a data lcore's share): calls take instance ids, the
 * records carry them, and ids on either side of the window are refused without touching it.
 */
static void test_window_of_ids(void **state)
{
    struct tp_books_params p = {.first_id = 512,
                                .instruments = 4,
                                .max_orders = 16,
                                .levels_per_side = 4,
                                .mbp_depth = 2,
                                .implied_depth = 0};
    struct tp_books *b = test_zalloc(tp_books_memsize(&p));
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];

    (void)state;
    assert_non_null(b);
    assert_int_equal(tp_books_init(b, &p), 0);
    assert_int_equal(tp_books_configure(b, 515, TP_BOOK_TYPE_MBO, 0, 0), 0);
    assert_int_equal(tp_books_configure(b, 512, TP_BOOK_TYPE_MBP, 2, 0), 0);
    assert_int_equal(tp_books_configure(b, 511, TP_BOOK_TYPE_MBO, 0, 0), -EINVAL);
    assert_int_equal(tp_books_configure(b, 516, TP_BOOK_TYPE_MBO, 0, 0), -EINVAL);
    assert_int_equal(tp_books_configure(b, 3, TP_BOOK_TYPE_MBO, 0, 0), -EINVAL);

    assert_int_equal(tp_mbo_add(b, 515, 7, TP_SIDE_ASK, PX(20), 30, 1, c), 2);
    assert_int_equal(c[0].instrument, 515);
    assert_int_equal(c[1].instrument, 515);
    assert_int_equal(tp_mbo_add(b, 515, 8, TP_SIDE_ASK, PX(19.5), 5, 2, c), 2);
    expect_level(b, 515, TP_SIDE_ASK, 1, PX(19.5), 5, 1);
    expect_level(b, 515, TP_SIDE_ASK, 2, PX(20), 30, 1);
    assert_int_equal(
        tp_mbp_update(b, 512, TP_BOOK_DIRECT, TP_SIDE_BID, TP_LEVEL_NEW, 1, PX(3), 9, 2, c), 1);
    assert_int_equal(c[0].instrument, 512);
    struct tp_level lv;
    assert_int_equal(tp_books_level(b, 512, TP_BOOK_DIRECT, TP_SIDE_BID, 1, &lv), 0);
    assert_int_equal(lv.qty, 9);

    /* Outside the window: refused, counted nowhere, the window's books unchanged. */
    assert_int_equal(tp_mbo_add(b, 3, 9, TP_SIDE_BID, PX(1), 1, 3, c), -EINVAL);
    assert_int_equal(tp_mbo_add(b, 516, 9, TP_SIDE_BID, PX(1), 1, 3, c), -EINVAL);
    assert_int_equal(tp_mbo_delete(b, 515 - 512, 7, c), -EINVAL);
    assert_null(tp_books_get(b, 511));
    assert_null(tp_books_get(b, 516));
    assert_int_equal(tp_books_orders(b, 515), 2);
    assert_int_equal(tp_books_totals(b)->live_orders, 2);
    assert_int_equal(tp_mbo_delete(b, 515, 8, c), 2);
    expect_level(b, 515, TP_SIDE_ASK, 1, PX(20), 30, 1);
    assert_int_equal(tp_books_clear(b, 515, 0, c), 1);
    assert_int_equal(c[0].instrument, 515);
    assert_int_equal(tp_books_orders(b, 515), 0);
    free(b);

    /* A window past the end of the id space is refused. */
    p.first_id = UINT32_MAX - 2;
    assert_int_equal(tp_books_memsize(&p), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_add_aggregates_levels_best_first, setup, teardown),
        cmocka_unit_test_setup_teardown(test_execute_cancel_delete, setup, teardown),
        cmocka_unit_test_setup_teardown(test_replace_onto_existing_level, setup, teardown),
        cmocka_unit_test_setup_teardown(test_modify_moves_between_levels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_capacity_is_per_instrument_and_harmless, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_hostile_input, setup, teardown),
        cmocka_unit_test(test_level_quantity_limit),
        cmocka_unit_test_setup_teardown(test_same_id_on_two_instruments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_emit_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_table_churn, setup, teardown),
        cmocka_unit_test(test_order_window_overflow),
        cmocka_unit_test(test_recent_window_rule),
        cmocka_unit_test(test_orders_spilled_counted),
        cmocka_unit_test(test_drop_marked_orders),
        cmocka_unit_test(test_window_of_ids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
