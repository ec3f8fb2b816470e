/*
 * ITCH feed handler on messages built with the codec's writers: stock directory (filter, locate
 * binding, redefinition), trading action, every order message, trades, cross and imbalance
 * statistics, the change records and end-of-event marks, unknown locates, malformed messages;
 * the burst call against the same messages applied one by one.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "books_test_util.h"
#include "itch50.h"
#include "tp_itch_feed.h"

#define P4(x) ((uint32_t)((x)*10000.0 + 0.5)) /* Price(4) */
#define PX(x) ((int64_t)P4(x) * 100000)       /* the same price in price9 */

struct fixture {
    struct tp_instruments *reg;
    struct tp_books *books;
    struct tp_instrument_filter filter;
    struct tp_itch_feed feed;
    struct tp_feed_info info;
    uint32_t changes, events, instruments;
    uint64_t event_seq[64]; /* packet_seq of the first events */
    struct tp_book_change last[TP_BOOK_CHANGES_MAX];
    uint32_t last_n;
    uint64_t record_hash; /* FNV-1a over the bytes of every record the sink was given */
    uint32_t one_calls;   /* event_changes calls */
    uint8_t msg[TP_ITCH_MAX_MESSAGE_LEN];
};

static void on_changes(void *ctx, const struct tp_feed_info *info, const struct tp_book_change *c,
                       uint32_t n)
{
    struct fixture *f = ctx;

    (void)info;
    f->changes += n;
    f->last_n = n;
    memcpy(f->last, c, n * sizeof(*c));
    for (size_t i = 0; i < n * sizeof(*c); i++) /* the record has no padding */
        f->record_hash = (f->record_hash ^ ((const uint8_t *)c)[i]) * 0x100000001b3ull;
}

static void on_event(void *ctx, const struct tp_feed_info *info)
{
    struct fixture *f = ctx;

    if (f->events < sizeof(f->event_seq) / sizeof(f->event_seq[0]))
        f->event_seq[f->events] = info->packet_seq;
    f->events++;
}

/* A sink's event_changes: what changes then end_of_event would have been given. */
static void on_event_changes(void *ctx, const struct tp_feed_info *info,
                             const struct tp_book_change *c, uint32_t n)
{
    ((struct fixture *)ctx)->one_calls++;
    on_changes(ctx, info, c, n);
    on_event(ctx, info);
}

static void changes_not_expected(void *ctx, const struct tp_feed_info *info,
                                 const struct tp_book_change *c, uint32_t n)
{
    (void)ctx, (void)info, (void)c, (void)n;
    fail_msg("changes called with event_changes set");
}

static void end_not_expected(void *ctx, const struct tp_feed_info *info)
{
    (void)ctx, (void)info;
    fail_msg("end_of_event called with event_changes set");
}

static void on_instrument(void *ctx, uint32_t id)
{
    (void)id;
    ((struct fixture *)ctx)->instruments++;
}

/* Encodes a message with the codec writer and hands it to the feed. */
#define SEND(f, M, ...)                                                                            \
    ({                                                                                             \
        struct tp_itch_##M v_ = {__VA_ARGS__};                                                     \
        int len_ = tp_itch_##M##_encode((f)->msg, sizeof((f)->msg), &v_);                          \
        assert_true(len_ > 0);                                                                     \
        tp_itch_feed_message(&(f)->feed, (f)->msg, (size_t)len_, &(f)->info);                      \
    })

static void directory(struct fixture *f, uint16_t locate, const char *symbol, char category)
{
    struct tp_itch_stock_directory v = {.stock_locate = locate, .market_category = category};

    tp_itch_alpha_set(v.stock, sizeof(v.stock), symbol);
    int len = tp_itch_stock_directory_encode(f->msg, sizeof(f->msg), &v);
    assert_int_equal(tp_itch_feed_message(&f->feed, f->msg, (size_t)len, &f->info), 0);
}

static int add(struct fixture *f, uint16_t locate, uint64_t ref, char side, uint32_t shares,
               double price)
{
    struct tp_itch_add_order v = {.stock_locate = locate,
                                  .timestamp = 34200000000000ull,
                                  .order_ref = ref,
                                  .side = side,
                                  .shares = shares,
                                  .price = P4(price)};
    tp_itch_alpha_set(v.stock, sizeof(v.stock), "X");
    int len = tp_itch_add_order_encode(f->msg, sizeof(f->msg), &v);
    return tp_itch_feed_message(&f->feed, f->msg, (size_t)len, &f->info);
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct tp_feed_sink sink = {
        .ctx = f, .changes = on_changes, .end_of_event = on_event, .instrument = on_instrument};

    f->reg = test_registry(4, 2);
    f->books = test_books(4, 32, 8, 0, 0);
    tp_instrument_filter_init(&f->filter);
    assert_int_equal(tp_instrument_filter_parse(&f->filter, "exclude:symbol:ZZ*"), 0);
    assert_int_equal(tp_itch_feed_init(&f->feed, f->reg, f->books, &f->filter, 1, &sink), 0);
    directory(f, 7, "AAPL", 'Q');
    directory(f, 9, "MSFT", 'Q');
    directory(f, 11, "ZZTEST", 'Q');
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    free(f->reg);
    free(f->books);
    free(f);
    return 0;
}

static void expect_best(struct fixture *f, uint32_t instr, enum tp_side side, double price,
                        int64_t qty, uint32_t count)
{
    struct tp_level lv;

    assert_int_equal(tp_books_level(f->books, instr, TP_BOOK_ORDERS, side, 1, &lv), 0);
    assert_int_equal(lv.price, PX(price));
    assert_int_equal(lv.qty, qty);
    assert_int_equal(lv.count, count);
}

static void test_directory_filter_and_locates(void **state)
{
    struct fixture *f = *state;
    uint32_t aapl = tp_instruments_by_locate(f->reg, 1, 7);

    assert_int_equal(f->feed.counters.definitions, 2);
    assert_int_equal(f->feed.counters.filtered, 1);
    assert_int_equal(f->instruments, 2);
    assert_int_not_equal(aapl, TP_INSTRUMENT_NONE);
    assert_string_equal(tp_instruments_get(f->reg, aapl)->symbol, "AAPL");
    assert_string_equal(tp_instruments_get(f->reg, aapl)->security_group, "Q");
    assert_int_equal(tp_instruments_by_locate(f->reg, 1, 11), TP_INSTRUMENT_NONE);
    assert_int_equal(tp_instruments_by_locate(f->reg, 0, 7), TP_INSTRUMENT_NONE);
    /* A redefinition (new session, new locate) keeps the id. */
    directory(f, 8, "AAPL", 'Q');
    assert_int_equal(tp_instruments_by_locate(f->reg, 1, 8), aapl);
    assert_int_equal(tp_instruments_count(f->reg), 2);
    /* Messages for the filtered stock are counted as unknown instruments. */
    assert_int_equal(add(f, 11, 1, 'B', 100, 1.0), -ENOENT);
    assert_int_equal(f->feed.counters.unknown_instrument, 1);
}

static void test_order_messages(void **state)
{
    struct fixture *f = *state;
    uint32_t aapl = tp_instruments_by_locate(f->reg, 1, 7);

    f->events = 0;
    assert_int_equal(add(f, 7, 100, 'B', 300, 187.5), 0);
    assert_int_equal(f->events, 1);
    assert_int_equal(f->last_n, 2);
    assert_int_equal(f->last[0].order_id, 100);
    assert_int_equal(f->info.venue_time, 34200000000000ull);
    assert_int_equal(SEND(f, add_order_mpid, .stock_locate = 7, .order_ref = 101, .side = 'B',
                          .shares = 200, .price = P4(187.5), .attribution = {'G', 'S', 'C', 'O'}),
                     0);
    expect_best(f, aapl, TP_SIDE_BID, 187.5, 500, 2);
    assert_int_equal(add(f, 7, 102, 'S', 100, 187.6), 0);
    /* E: executed at the order's price; the trade prints with the buyer as aggressor. */
    assert_int_equal(SEND(f, order_executed, .stock_locate = 7, .order_ref = 102,
                          .executed_shares = 40, .match_number = 5),
                     0);
    assert_int_equal(f->last_n, 3);
    assert_int_equal(f->last[2].kind, TP_CHANGE_TRADE);
    assert_int_equal(f->last[2].side, TP_SIDE_BID);
    expect_best(f, aapl, TP_SIDE_ASK, 187.6, 60, 1);
    /* C non-printable: the book changes, volume does not. */
    assert_int_equal(SEND(f, order_executed_with_price, .stock_locate = 7, .order_ref = 102,
                          .executed_shares = 10, .match_number = 6, .printable = 'N',
                          .execution_price = P4(187.55)),
                     0);
    assert_int_equal(tp_books_get(f->books, aapl)->volume, 40);
    /* C printable at another price. */
    assert_int_equal(SEND(f, order_executed_with_price, .stock_locate = 7, .order_ref = 102,
                          .executed_shares = 10, .match_number = 7, .printable = 'Y',
                          .execution_price = P4(187.58)),
                     0);
    assert_int_equal(tp_books_get(f->books, aapl)->last_price, PX(187.58));
    expect_best(f, aapl, TP_SIDE_ASK, 187.6, 40, 1);
    /* X partial cancel, then U replace (new id, new price, same side). */
    assert_int_equal(
        SEND(f, order_cancel, .stock_locate = 7, .order_ref = 100, .cancelled_shares = 100), 0);
    expect_best(f, aapl, TP_SIDE_BID, 187.5, 400, 2);
    assert_int_equal(SEND(f, order_replace, .stock_locate = 7, .original_order_ref = 101,
                          .new_order_ref = 103, .shares = 50, .price = P4(187.55)),
                     0);
    expect_best(f, aapl, TP_SIDE_BID, 187.55, 50, 1);
    assert_int_equal(f->last_n, 4);
    /* D delete; then delete of a missing order: counted, rejected. */
    assert_int_equal(SEND(f, order_delete, .stock_locate = 7, .order_ref = 103), 0);
    expect_best(f, aapl, TP_SIDE_BID, 187.5, 200, 1);
    assert_int_equal(SEND(f, order_delete, .stock_locate = 7, .order_ref = 103), -ENOENT);
    assert_int_equal(f->feed.counters.rejected, 1);
    assert_int_equal(tp_books_get(f->books, aapl)->counters.unknown_order, 1);
    /* Execution to zero removes the order and its level. */
    assert_int_equal(SEND(f, order_executed, .stock_locate = 7, .order_ref = 102,
                          .executed_shares = 40, .match_number = 8),
                     0);
    assert_int_equal(tp_books_levels(f->books, aapl, TP_BOOK_ORDERS, TP_SIDE_ASK), 0);
    /* An order message for MSFT cannot touch AAPL's order. */
    assert_int_equal(SEND(f, order_delete, .stock_locate = 9, .order_ref = 100), -ENOENT);
    expect_best(f, aapl, TP_SIDE_BID, 187.5, 200, 1);
}

static void test_trades_status_statistics(void **state)
{
    struct fixture *f = *state;
    uint32_t msft = tp_instruments_by_locate(f->reg, 1, 9);
    const struct tp_book *bk = tp_books_get(f->books, msft);

    assert_int_equal(SEND(f, stock_trading_action, .stock_locate = 9, .trading_state = 'H'), 0);
    assert_int_equal(bk->status, TP_STATUS_HALTED);
    assert_int_equal(tp_instruments_get(f->reg, msft)->trading_status, TP_STATUS_HALTED);
    assert_int_equal(SEND(f, stock_trading_action, .stock_locate = 9, .trading_state = 'T'), 0);
    assert_int_equal(bk->status, TP_STATUS_OPEN);
    assert_int_equal(SEND(f, trade, .stock_locate = 9, .side = 'B', .shares = 70,
                          .price = P4(410.1), .match_number = 9),
                     0);
    assert_int_equal(f->last[0].side, TP_SIDE_ASK); /* the hidden buy order rested */
    assert_int_equal(SEND(f, cross_trade, .stock_locate = 9, .shares = 1000, .cross_price = P4(410),
                          .match_number = 10, .cross_type = 'O'),
                     0);
    assert_int_equal(bk->volume, 1070);
    assert_int_equal(bk->trades, 2);
    assert_true(bk->stats[TP_STAT_OPEN].present);
    assert_int_equal(bk->stats[TP_STAT_OPEN].price, PX(410));
    assert_int_equal(SEND(f, noii, .stock_locate = 9, .imbalance_shares = 500,
                          .current_reference_price = P4(409.9)),
                     0);
    assert_int_equal(bk->stats[TP_STAT_IMBALANCE].qty, 500);
    /* Market-wide and broken-trade messages are counted, not applied. */
    assert_int_equal(SEND(f, system_event, .event_code = 'O'), 0);
    assert_int_equal(SEND(f, broken_trade, .stock_locate = 9, .match_number = 9), 0);
    assert_int_equal(f->feed.counters.broken_trades, 1);
    assert_int_equal(bk->volume, 1070);
}

static void test_malformed_and_hostile(void **state)
{
    struct fixture *f = *state;
    uint32_t aapl = tp_instruments_by_locate(f->reg, 1, 7);

    /* Wrong lengths and unknown types: counted, never read. */
    assert_int_equal(SEND(f, order_delete, .stock_locate = 7, .order_ref = 1), -ENOENT);
    assert_int_equal(tp_itch_feed_message(&f->feed, f->msg, 18, &f->info), -EBADMSG);
    assert_int_equal(tp_itch_feed_message(&f->feed, f->msg, 0, &f->info), -EBADMSG);
    f->msg[0] = '~';
    assert_int_equal(tp_itch_feed_message(&f->feed, f->msg, 19, &f->info), -EBADMSG);
    assert_int_equal(f->feed.counters.malformed, 3);
    /* Zero shares, unknown side: the book refuses, the feed counts. */
    assert_int_equal(add(f, 7, 1, 'B', 0, 1.0), -EINVAL);
    assert_int_equal(add(f, 7, 2, '?', 10, 1.0), -EINVAL);
    assert_int_equal(tp_books_get(f->books, aapl)->counters.bad_quantity, 1);
    assert_int_equal(tp_books_get(f->books, aapl)->counters.bad_input, 1);
    assert_int_equal(f->feed.counters.rejected, 3);
    assert_int_equal(tp_books_totals(f->books)->live_orders, 0);
}

/*
 * The feed reads the timestamp as the low 6 of the 8 bytes at offset 3 and the side by a table:
 * the tracking number before the timestamp must not leak into it, nor the timestamp's top bits
 * be lost, in the smallest message (12 bytes) as in an order message; every side byte but B and
 * S is refused and counted.
 */
static void test_timestamp_and_side_bytes(void **state)
{
    struct fixture *f = *state;
    uint32_t aapl = tp_instruments_by_locate(f->reg, 1, 7);
    const uint64_t max_time = (UINT64_C(1) << 48) - 1;
    uint32_t refused = 0;

    assert_int_equal(
        SEND(f, system_event, .tracking_number = 0xffff, .timestamp = max_time, .event_code = 'O'),
        0);
    assert_int_equal(f->info.venue_time, max_time);
    assert_int_equal(SEND(f, add_order, .stock_locate = 7, .tracking_number = 0xbeef,
                          .timestamp = 0x800000000001ull, .order_ref = 1, .side = 'S', .shares = 10,
                          .price = P4(2)),
                     0);
    assert_int_equal(f->info.venue_time, 0x800000000001ull);
    assert_int_equal(f->last[0].side, TP_SIDE_ASK);
    for (int c = 0; c < 256; c++) {
        int rc = SEND(f, add_order, .stock_locate = 7, .order_ref = 1000 + (uint64_t)c,
                      .side = (char)c, .shares = 10, .price = P4(1));
        if (c == 'B' || c == 'S') {
            assert_int_equal(rc, 0);
            assert_int_equal(f->last[0].side, c == 'B' ? TP_SIDE_BID : TP_SIDE_ASK);
        } else {
            assert_int_equal(rc, -EINVAL);
            refused++;
        }
    }
    assert_int_equal(tp_books_get(f->books, aapl)->counters.bad_input, refused);
    assert_int_equal(tp_books_orders(f->books, aapl), 3);
}

/* A list of encoded messages, for the burst call. */
#define LIST_MAX 96
struct message_list {
    uint8_t store[LIST_MAX][TP_ITCH_MAX_MESSAGE_LEN];
    const uint8_t *msgs[LIST_MAX];
    uint16_t lens[LIST_MAX];
    uint32_t n;
};

#define LIST(l, M, ...)                                                                            \
    do {                                                                                           \
        struct tp_itch_##M v_ = {__VA_ARGS__};                                                     \
        int len_ = tp_itch_##M##_encode((l)->store[(l)->n], TP_ITCH_MAX_MESSAGE_LEN, &v_);         \
        assert_true(len_ > 0 && (l)->n < LIST_MAX);                                                \
        (l)->msgs[(l)->n] = (l)->store[(l)->n];                                                    \
        (l)->lens[(l)->n++] = (uint16_t)len_;                                                      \
    } while (0)

/*
 * More messages than the burst prefetches ahead, with a stock directory in the middle that binds
 * a locate used right after it, a malformed message and an unknown locate: the burst must leave
 * the books, counters and sink calls exactly as the messages applied one by one.
 */
static void test_burst_matches_one_by_one(void **state)
{
    struct fixture *f = *state, *g;
    struct message_list *l = calloc(1, sizeof(*l));
    struct tp_itch_stock_directory nvda = {.stock_locate = 21, .market_category = 'Q'};

    assert_non_null(l);
    assert_int_equal(setup((void **)&g), 0);
    for (uint64_t i = 0; i < 20; i++) /* the fixture's order table holds 32 */
        LIST(l, add_order, .stock_locate = i % 2 ? 7 : 9, .order_ref = 1000 + i,
             .side = i % 3 ? 'B' : 'S', .shares = 100 + (uint32_t)i, .price = P4(10 + i % 5));
    tp_itch_alpha_set(nvda.stock, sizeof(nvda.stock), "NVDA");
    assert_true(l->n < LIST_MAX);
    l->lens[l->n] =
        (uint16_t)tp_itch_stock_directory_encode(l->store[l->n], TP_ITCH_MAX_MESSAGE_LEN, &nvda);
    l->msgs[l->n] = l->store[l->n];
    l->n++;
    for (uint64_t i = 0; i < 8; i++)
        LIST(l, add_order, .stock_locate = 21, .order_ref = 2000 + i, .side = 'S', .shares = 5,
             .price = P4(50 + i % 2));
    for (uint64_t i = 0; i < 18; i += 3) {
        LIST(l, order_delete, .stock_locate = i % 2 ? 7 : 9, .order_ref = 1000 + i);
        LIST(l, order_executed, .stock_locate = (i + 1) % 2 ? 7 : 9, .order_ref = 1001 + i,
             .executed_shares = 30, .match_number = i);
        LIST(l, order_replace, .stock_locate = (i + 2) % 2 ? 7 : 9, .original_order_ref = 1002 + i,
             .new_order_ref = 3000 + i, .shares = 70, .price = P4(11));
    }
    LIST(l, order_cancel, .stock_locate = 21, .order_ref = 2001, .cancelled_shares = 2);
    LIST(l, order_delete, .stock_locate = 33, .order_ref = 2002); /* unknown locate */
    LIST(l, order_delete, .stock_locate = 21, .order_ref = 2003);
    l->lens[l->n - 1] = 18; /* cut short: malformed */
    LIST(l, order_delete, .stock_locate = 21, .order_ref = 2004);

    uint32_t skipped = tp_itch_feed_burst(&f->feed, l->msgs, l->lens, l->n, &f->info);
    uint32_t failed = 0;
    for (uint32_t i = 0; i < l->n; i++)
        failed += tp_itch_feed_message(&g->feed, l->msgs[i], l->lens[i], &g->info) < 0;

    assert_int_equal(skipped, 2);
    assert_int_equal(skipped, failed);
    assert_memory_equal(&f->feed.counters, &g->feed.counters, sizeof(f->feed.counters));
    assert_int_equal(f->changes, g->changes);
    assert_int_equal(f->events, g->events);
    assert_int_equal(f->instruments, g->instruments);
    assert_int_equal(tp_books_totals(f->books)->live_orders,
                     tp_books_totals(g->books)->live_orders);
    for (uint32_t id = 0; id < tp_instruments_count(f->reg); id++) {
        for (int side = 0; side < 2; side++) {
            struct tp_level a[8], b[8];
            uint32_t na = tp_books_copy_levels(f->books, id, TP_BOOK_ORDERS, side, a, 8);
            assert_int_equal(na, tp_books_copy_levels(g->books, id, TP_BOOK_ORDERS, side, b, 8));
            assert_memory_equal(a, b, na * sizeof(a[0]));
        }
    }
    /* The instrument defined inside the burst got its 8 orders, then lost one. */
    uint32_t id = tp_instruments_by_locate(f->reg, 1, 21);
    assert_int_not_equal(id, TP_INSTRUMENT_NONE);
    assert_int_equal(tp_books_orders(f->books, id), 7);
    teardown((void **)&g);
    free(l);
}

/*
 * A sink that sets event_changes gets one call per message that changed something, with the
 * records and info changes + end_of_event get from a sink without it, and neither of those two.
 */
static void test_event_changes_replaces_both_calls(void **state)
{
    struct fixture *f = *state, *g;
    struct message_list *l = calloc(1, sizeof(*l));

    assert_non_null(l);
    assert_int_equal(setup((void **)&g), 0);
    struct tp_feed_sink one = {.ctx = g,
                               .changes = changes_not_expected,
                               .end_of_event = end_not_expected,
                               .instrument = on_instrument,
                               .event_changes = on_event_changes};
    g->feed.sink = one; /* after setup's stock directories, which tp_itch_feed_init copies */
    for (uint64_t i = 0; i < 12; i++)
        LIST(l, add_order, .stock_locate = i % 2 ? 7 : 9, .order_ref = 1000 + i,
             .side = i % 3 ? 'B' : 'S', .shares = 100 + (uint32_t)i, .price = P4(10 + i % 5),
             .timestamp = 34200000000000ull + i);
    LIST(l, order_executed, .stock_locate = 7, .order_ref = 1001, .executed_shares = 30,
         .match_number = 5);
    LIST(l, order_replace, .stock_locate = 9, .original_order_ref = 1002, .new_order_ref = 3000,
         .shares = 70, .price = P4(11));
    LIST(l, trade, .stock_locate = 7, .side = 'B', .shares = 10, .price = P4(12));
    LIST(l, order_delete, .stock_locate = 7, .order_ref = 1003);
    LIST(l, order_delete, .stock_locate = 7, .order_ref = 999); /* unknown order: no call */
    LIST(l, system_event, .event_code = 'O');                   /* nothing to apply: no call */

    f->info.packet_seq = g->info.packet_seq = 40;
    uint32_t skipped = tp_itch_feed_sequenced(&f->feed, l->msgs, l->lens, l->n, &f->info);
    assert_int_equal(tp_itch_feed_sequenced(&g->feed, l->msgs, l->lens, l->n, &g->info), skipped);
    assert_int_equal(g->one_calls, 16);
    assert_int_equal(g->events, f->events);
    assert_int_equal(g->changes, f->changes);
    assert_true(f->changes > 2 * 16);
    assert_int_equal(g->record_hash, f->record_hash);
    assert_memory_equal(g->event_seq, f->event_seq, sizeof(f->event_seq));
    assert_int_equal(g->last_n, f->last_n);
    assert_memory_equal(g->last, f->last, f->last_n * sizeof(f->last[0]));
    assert_memory_equal(&f->feed.counters, &g->feed.counters, sizeof(f->feed.counters));
    teardown((void **)&g);
    free(l);
}

/* A sink's order_changes: expands them and gives the records to on_changes, then ends the event. */
static void on_order_changes(void *ctx, const struct tp_feed_info *info,
                             const struct tp_order_change *oc, uint32_t n)
{
    struct fixture *f = ctx;
    struct tp_book_change records[2 * 3];
    uint32_t m = 0;

    assert_true(n == 1 || n == 2);
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = tp_order_change_expand(&oc[i], &records[m]);
        assert_int_equal(k, tp_order_change_records(&oc[i]));
        m += k;
    }
    f->one_calls++;
    on_changes(ctx, info, records, m);
    on_event(ctx, info);
}

/*
 * A sink that sets order_changes gets the order messages' changes unexpanded, one call per
 * message that changed something, and the other messages' records as before: expanded, they are
 * byte for byte the records a sink without it gets, for every order message (partial and full
 * executions, printable or not, cancels, one beyond the order, deletes, replaces at the same
 * level and at another, levels opened below the best one and removed), and neither is called
 * for an instrument that writes no records.
 */
static void test_order_changes_expand_to_the_records(void **state)
{
    struct fixture *f = *state, *g;
    struct message_list *l = calloc(1, sizeof(*l));

    assert_non_null(l);
    assert_int_equal(setup((void **)&g), 0);
    struct tp_feed_sink compact = {.ctx = g,
                                   .changes = on_changes,
                                   .end_of_event = on_event,
                                   .instrument = on_instrument,
                                   .order_changes = on_order_changes};
    g->feed.sink = compact;
    for (uint64_t i = 0; i < 14; i++)
        LIST(l, add_order, .stock_locate = i % 2 ? 7 : 9, .order_ref = 1000 + i,
             .side = i % 3 ? 'B' : 'S', .shares = 100 + (uint32_t)i, .price = P4(10 + i % 5),
             .timestamp = 34200000000000ull + i);
    LIST(l, order_executed, .stock_locate = 7, .order_ref = 1001, .executed_shares = 30,
         .match_number = 5);
    LIST(l, order_executed, .stock_locate = 9, .order_ref = 1004, .executed_shares = 104,
         .match_number = 6);
    LIST(l, order_executed_with_price, .stock_locate = 7, .order_ref = 1003, .executed_shares = 10,
         .match_number = 7, .printable = 'Y', .execution_price = P4(13.01));
    LIST(l, order_executed_with_price, .stock_locate = 7, .order_ref = 1005, .executed_shares = 10,
         .match_number = 8, .printable = 'N', .execution_price = P4(10));
    LIST(l, order_cancel, .stock_locate = 7, .order_ref = 1007, .cancelled_shares = 7);
    LIST(l, order_cancel, .stock_locate = 9, .order_ref = 1006, .cancelled_shares = 500);
    LIST(l, order_delete, .stock_locate = 9, .order_ref = 1008);
    LIST(l, order_replace, .stock_locate = 9, .original_order_ref = 1002, .new_order_ref = 3000,
         .shares = 70, .price = P4(11.5));
    LIST(l, order_replace, .stock_locate = 7, .original_order_ref = 1009, .new_order_ref = 3001,
         .shares = 20, .price = P4(14));
    LIST(l, trade, .stock_locate = 7, .side = 'B', .shares = 10, .price = P4(12));
    LIST(l, order_delete, .stock_locate = 7, .order_ref = 999); /* unknown order: no call */
    LIST(l, system_event, .event_code = 'O');                   /* nothing to apply: no call */

    f->info.packet_seq = g->info.packet_seq = 40;
    uint32_t skipped = tp_itch_feed_sequenced(&f->feed, l->msgs, l->lens, l->n, &f->info);
    assert_int_equal(tp_itch_feed_sequenced(&g->feed, l->msgs, l->lens, l->n, &g->info), skipped);
    assert_int_equal(skipped, 1);
    assert_int_equal(g->one_calls, 14 + 9); /* every order message that changed something */
    assert_int_equal(g->events, f->events);
    assert_int_equal(g->changes, f->changes);
    assert_int_equal(g->record_hash, f->record_hash);
    assert_memory_equal(g->event_seq, f->event_seq, sizeof(f->event_seq));

    /* One by one too, and an instrument that writes no records gives no call at all. */
    uint32_t msft = tp_instruments_by_locate(f->reg, 1, 9);
    assert_int_equal(tp_books_set_emit(f->books, msft, 0), 0);
    assert_int_equal(tp_books_set_emit(g->books, msft, 0), 0);
    uint32_t calls = g->one_calls, events = g->events;
    assert_int_equal(add(f, 9, 4000, 'S', 50, 12), 0);
    assert_int_equal(add(g, 9, 4000, 'S', 50, 12), 0);
    assert_int_equal(g->one_calls, calls);
    assert_int_equal(g->events, events);
    assert_int_equal(add(f, 7, 4001, 'S', 50, 14.5), 0);
    assert_int_equal(add(g, 7, 4001, 'S', 50, 14.5), 0);
    assert_int_equal(g->one_calls, calls + 1);
    assert_int_equal(g->record_hash, f->record_hash);
    assert_int_equal(g->last_n, 2);
    assert_int_equal(g->last[1].action, TP_LEVEL_NEW);
    assert_memory_equal(g->last, f->last, f->last_n * sizeof(f->last[0]));
    assert_memory_equal(&f->feed.counters, &g->feed.counters, sizeof(f->feed.counters));
    teardown((void **)&g);
    free(l);
}

/*
 * The sequenced burst (a MoldUDP64 packet): each message is applied with its own sequence, a
 * skipped message still takes its number, and info is left past the last one.
 */
/*
 * The burst loop resolves an order message's instrument some messages ahead of applying it: a
 * stock directory in between that binds the locate to another instrument must win. Here locate
 * 9 (MSFT) is bound to AAPL in the middle of a burst, after the messages behind it were looked
 * at: the orders before it go to MSFT, those after it to AAPL.
 */
static void test_burst_locate_rebound(void **state)
{
    struct fixture *f = *state;
    struct message_list *l = calloc(1, sizeof(*l));
    struct tp_itch_stock_directory aapl_at_9 = {.stock_locate = 9, .market_category = 'Q'};
    uint32_t aapl = tp_instruments_by_locate(f->reg, 1, 7);
    uint32_t msft = tp_instruments_by_locate(f->reg, 1, 9);

    assert_non_null(l);
    for (uint64_t i = 0; i < 3; i++)
        LIST(l, add_order, .stock_locate = 9, .order_ref = 10 + i, .side = 'B', .shares = 1,
             .price = P4(5));
    tp_itch_alpha_set(aapl_at_9.stock, sizeof(aapl_at_9.stock), "AAPL");
    l->lens[l->n] = (uint16_t)tp_itch_stock_directory_encode(l->store[l->n],
                                                             TP_ITCH_MAX_MESSAGE_LEN, &aapl_at_9);
    l->msgs[l->n] = l->store[l->n];
    l->n++;
    for (uint64_t i = 0; i < 5; i++)
        LIST(l, add_order, .stock_locate = 9, .order_ref = 20 + i, .side = 'S', .shares = 1,
             .price = P4(6));
    LIST(l, order_delete, .stock_locate = 9, .order_ref = 20);
    assert_int_equal(tp_itch_feed_burst(&f->feed, l->msgs, l->lens, l->n, &f->info), 0);
    assert_int_equal(tp_instruments_by_locate(f->reg, 1, 9), aapl);
    assert_int_equal(tp_books_orders(f->books, msft), 3);
    assert_int_equal(tp_books_orders(f->books, aapl), 4);
    assert_int_equal(tp_books_levels(f->books, aapl, TP_BOOK_ORDERS, TP_SIDE_ASK), 1);
    assert_int_equal(tp_books_levels(f->books, msft, TP_BOOK_ORDERS, TP_SIDE_ASK), 0);
    free(l);
}

static void test_sequenced_burst_numbers_messages(void **state)
{
    struct fixture *f = *state;
    struct message_list *l = calloc(1, sizeof(*l));

    assert_non_null(l);
    LIST(l, add_order, .stock_locate = 7, .order_ref = 1, .side = 'B', .shares = 10,
         .price = P4(10));
    LIST(l, order_delete, .stock_locate = 7, .order_ref = 1);
    l->lens[l->n - 1] = 18; /* cut short: malformed, skipped */
    LIST(l, add_order, .stock_locate = 9, .order_ref = 2, .side = 'S', .shares = 20,
         .price = P4(11));
    LIST(l, order_delete, .stock_locate = 7, .order_ref = 1);
    f->events = 0;
    f->info.packet_seq = 100;
    assert_int_equal(tp_itch_feed_sequenced(&f->feed, l->msgs, l->lens, l->n, &f->info), 1);
    assert_int_equal(f->events, 3);
    assert_int_equal(f->event_seq[0], 100);
    assert_int_equal(f->event_seq[1], 102);
    assert_int_equal(f->event_seq[2], 103);
    assert_int_equal(f->info.packet_seq, 104);
    /* The plain burst keeps the caller's number for every message. */
    f->events = 0;
    f->info.packet_seq = 7;
    assert_int_equal(tp_itch_feed_burst(&f->feed, l->msgs, l->lens, 2, &f->info), 1);
    assert_int_equal(f->events, 1);
    assert_int_equal(f->event_seq[0], 7);
    assert_int_equal(f->info.packet_seq, 7);
    free(l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_directory_filter_and_locates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_trades_status_statistics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_and_hostile, setup, teardown),
        cmocka_unit_test_setup_teardown(test_timestamp_and_side_bytes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_burst_matches_one_by_one, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_changes_replaces_both_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_changes_expand_to_the_records, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sequenced_burst_numbers_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_burst_locate_rebound, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
