/*
 * EOBI feed handler on packets built with the codec's writers: every message type to its book
 * operation (add, both modifies, delete, mass delete, full and partial execution, execution
 * summary, trade report, state changes, auction statistics), instrument definition and the
 * filter, completion indicators and end-of-event marks, and the per-segment recovery: duplicates,
 * gaps on sequence, heartbeat, rejection and reset, buffering, old and broken snapshots, late
 * join, the buffered packets after LastMsgSeqNumProcessed; malformed packets and messages.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "books_test_util.h"
#include "eobi_build.h"
#include "tp_eobi_feed.h"
#include "tp_mbo.h"

#define SEG    589
#define SEG2   688
#define SEC_A  1001
#define SEC_B  1002
#define SEC_C  2001                               /* in SEG2 */
#define PX(x)  ((int64_t)((x)*100000000.0 + 0.5)) /* EOBI price: 8 decimals */
#define P9(x)  (PX(x) * 10)
#define T0     UINT64_C(1700000000000000000)
#define BUY    1
#define SELL   2
#define MAX_IN 16

struct fixture {
    struct tp_instruments *reg;
    struct tp_books *books;
    struct tp_instrument_filter filter;
    struct tp_eobi_feed *feed;
    uint32_t records, events, instruments;
    uint32_t stale[MAX_IN]; /* current mark per instrument */
    uint32_t stale_marks, fresh_marks;
    uint32_t clears;
    uint64_t last_info_seq;
    struct tp_book_change last[8]; /* the records of the last changes call */
    uint32_t last_n;
    uint8_t pkt[1500];
    struct tp_eobi_builder b;
    uint32_t snap_msg_seq;
    uint64_t snapshot_cycles; /* snapshots begun: each one a later TransactTime */
};

static void on_changes(void *ctx, const struct tp_feed_info *info, const struct tp_book_change *c,
                       uint32_t n)
{
    struct fixture *f = ctx;

    f->records += n;
    f->last_info_seq = info->packet_seq;
    f->last_n = n < 8 ? n : 8;
    memcpy(f->last, c, f->last_n * sizeof(*c));
    for (uint32_t i = 0; i < n; i++)
        f->clears += c[i].kind == TP_CHANGE_CLEAR;
}

static void on_event(void *ctx, const struct tp_feed_info *info)
{
    (void)info;
    ((struct fixture *)ctx)->events++;
}

static void on_instrument(void *ctx, uint32_t id)
{
    (void)id;
    ((struct fixture *)ctx)->instruments++;
}

static void on_stale(void *ctx, uint32_t instr, int stale, uint32_t expected, uint32_t got)
{
    struct fixture *f = ctx;

    (void)expected, (void)got;
    assert_true(instr < MAX_IN);
    f->stale[instr] = (uint32_t)stale;
    f->stale_marks += stale != 0;
    f->fresh_marks += stale == 0;
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct tp_feed_sink sink = {.ctx = f,
                                .changes = on_changes,
                                .end_of_event = on_event,
                                .instrument = on_instrument,
                                .stale = on_stale};

    f->reg = test_registry(MAX_IN, 0);
    f->books = test_books(MAX_IN, 256, 16, 0, 0);
    f->feed = test_zalloc(sizeof(*f->feed));
    assert_non_null(f->feed);
    tp_instrument_filter_init(&f->filter);
    assert_int_equal(tp_instrument_filter_parse(&f->filter, "exclude:symbol:9*"), 0);
    assert_int_equal(tp_eobi_feed_init(f->feed, f->reg, f->books, &f->filter, 3, &sink), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    free(f->feed);
    free(f->books);
    free(f->reg);
    free(f);
    return 0;
}

/* Packet building: begin, messages, send. */
static void begin(struct fixture *f, int32_t segment, uint64_t seq, uint8_t complete)
{
    struct tp_eobi_packet_header h = {.appl_seq_num = seq,
                                      .market_segment_id = segment,
                                      .completion_indicator = complete,
                                      .transact_time = T0 + seq};
    tp_eobi_build_begin(&f->b, f->pkt, sizeof(f->pkt), &h, (uint32_t)seq * 10);
}

static int send(struct fixture *f)
{
    assert_int_equal(f->b.error, 0);
    return tp_eobi_feed_packet(f->feed, f->pkt, f->b.len, 7);
}

static int send_snapshot(struct fixture *f)
{
    assert_int_equal(f->b.error, 0);
    return tp_eobi_feed_snapshot_packet(f->feed, f->pkt, f->b.len, 7);
}

/* The last packet of a segment's snapshot: CompletionIndicator complete. */
static int send_snapshot_last(struct fixture *f)
{
    f->pkt[21] = 1;
    return send_snapshot(f);
}

static void add(struct fixture *f, int64_t sec, uint8_t side, uint64_t prio, double px, int32_t qty)
{
    struct tp_eobi_order_add v = {.trd_reg_ts_time_in = prio,
                                  .security_id = sec,
                                  .trd_reg_ts_time_priority = prio,
                                  .display_qty = qty,
                                  .side = side,
                                  .ord_type = 2,
                                  .price = PX(px)};
    TP_EOBI_BUILD(&f->b, order_add, &v);
}

/* One packet of one complete add. */
static int add_packet(struct fixture *f, int32_t seg, uint64_t seq, int64_t sec, uint8_t side,
                      uint64_t prio, double px, int32_t qty)
{
    begin(f, seg, seq, 1);
    add(f, sec, side, prio, px, qty);
    return send(f);
}

static uint32_t id_of(struct fixture *f, int64_t sec)
{
    return tp_eobi_feed_instrument(f->feed, sec);
}

static void expect_level(struct fixture *f, int64_t sec, enum tp_side side, uint32_t index,
                         double px, int64_t qty, uint32_t count)
{
    struct tp_level l;

    assert_int_equal(tp_books_level(f->books, id_of(f, sec), TP_BOOK_ORDERS, side, index, &l), 0);
    assert_int_equal(l.price, P9(px));
    assert_int_equal(l.qty, qty);
    assert_int_equal(l.count, count);
}

static uint32_t levels(struct fixture *f, int64_t sec, enum tp_side side)
{
    return tp_books_levels(f->books, id_of(f, sec), TP_BOOK_ORDERS, side);
}

static int order_qty(struct fixture *f, int64_t sec, uint64_t prio, enum tp_side side, int64_t *qty)
{
    return tp_mbo_order(f->books, id_of(f, sec), tp_eobi_order_id(prio, side), NULL, NULL, qty,
                        NULL);
}

static const struct tp_eobi_segment *segment(struct fixture *f, int32_t id)
{
    return tp_eobi_feed_segment(f->feed, id);
}

/* Start of day: the first packet (ApplSeqNum 1) defines the instrument, the segment is healthy. */
static void test_definition_and_filter(void **state)
{
    struct fixture *f = *state;
    int64_t qty;

    assert_int_equal(add_packet(f, SEG, 1, SEC_A, BUY, T0 + 1, 100.5, 10), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(tp_eobi_feed_recovering(f->feed), 0);
    assert_int_not_equal(id_of(f, SEC_A), TP_INSTRUMENT_NONE);
    assert_int_equal(f->instruments, 1);
    const struct tp_instrument *in = tp_instruments_get(f->reg, id_of(f, SEC_A));
    assert_int_equal(in->venue, TP_VENUE_EUREX_EOBI);
    assert_string_equal(in->symbol, "1001");
    assert_string_equal(in->security_group, "589");
    assert_int_equal(in->channel, 3);
    assert_int_equal(tp_instruments_by_symbol(f->reg, TP_VENUE_EUREX_EOBI, "1001", 4),
                     id_of(f, SEC_A));
    assert_int_equal(order_qty(f, SEC_A, T0 + 1, TP_SIDE_BID, &qty), 0);
    assert_int_equal(qty, 10);
    assert_int_equal(f->events, 1); /* complete packet */
    assert_int_equal(f->last_info_seq, 1);
    /* A filtered SecurityID (symbol 9...) gets no instrument, its messages are counted. */
    assert_int_equal(add_packet(f, SEG, 2, 9001, BUY, T0 + 2, 1.0, 1), 0);
    assert_int_equal(id_of(f, 9001), TP_INSTRUMENT_NONE);
    assert_int_equal(f->feed->counters.filtered, 1);
    assert_int_equal(add_packet(f, SEG, 3, 9001, BUY, T0 + 3, 1.0, 1), 0);
    assert_int_equal(f->feed->counters.filtered_messages, 2);
    assert_int_equal(f->instruments, 1);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
}

/* Add, modify keeping and losing priority, modify same priority, delete, mass delete. */
static void test_order_messages(void **state)
{
    struct fixture *f = *state;
    int64_t qty;
    uint64_t prio;

    begin(f, SEG, 1, 0);
    add(f, SEC_A, BUY, T0 + 1, 100.0, 10);
    add(f, SEC_A, BUY, T0 + 2, 100.0, 5);
    add(f, SEC_A, SELL, T0 + 3, 101.0, 7);
    /* A bid and an ask with the same priority are two orders. */
    add(f, SEC_A, SELL, T0 + 1, 102.0, 4);
    assert_int_equal(send(f), 0);
    assert_int_equal(f->events, 0); /* incomplete: the transaction goes on */
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 15, 2);
    expect_level(f, SEC_A, TP_SIDE_ASK, 1, 101.0, 7, 1);
    expect_level(f, SEC_A, TP_SIDE_ASK, 2, 102.0, 4, 1);

    /* Modify that keeps priority (quantity down): in place. */
    begin(f, SEG, 2, 1);
    struct tp_eobi_order_modify mod = {.trd_reg_ts_prev_time_priority = T0 + 1,
                                       .prev_price = PX(100.0),
                                       .prev_display_qty = 10,
                                       .security_id = SEC_A,
                                       .trd_reg_ts_time_priority = T0 + 1,
                                       .display_qty = 6,
                                       .side = BUY,
                                       .price = PX(100.0)};
    TP_EOBI_BUILD(&f->b, order_modify, &mod);
    assert_int_equal(send(f), 0);
    assert_int_equal(f->events, 1);
    assert_int_equal(f->last[0].kind, TP_CHANGE_ORDER);
    assert_int_equal(f->last[0].action, TP_ORDER_MODIFY);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 11, 2);
    assert_int_equal(order_qty(f, SEC_A, T0 + 1, TP_SIDE_BID, &qty), 0);
    assert_int_equal(qty, 6);

    /* Modify that loses priority (new price): the old key goes, the new one is live. */
    begin(f, SEG, 3, 1);
    mod.trd_reg_ts_prev_time_priority = T0 + 1;
    mod.trd_reg_ts_time_priority = T0 + 10;
    mod.price = PX(100.5);
    mod.display_qty = 8;
    TP_EOBI_BUILD(&f->b, order_modify, &mod);
    assert_int_equal(send(f), 0);
    assert_int_equal(f->last[0].action, TP_ORDER_DELETE);
    assert_int_equal(f->last[0].order_id, tp_eobi_order_id(T0 + 1, TP_SIDE_BID));
    assert_int_equal(order_qty(f, SEC_A, T0 + 1, TP_SIDE_BID, &qty), -ENOENT);
    assert_int_equal(order_qty(f, SEC_A, T0 + 10, TP_SIDE_BID, &qty), 0);
    assert_int_equal(qty, 8);
    assert_int_equal(tp_mbo_order(f->books, id_of(f, SEC_A), tp_eobi_order_id(T0 + 10, TP_SIDE_BID),
                                  NULL, NULL, NULL, &prio),
                     0);
    assert_int_equal(prio, T0 + 10);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.5, 8, 1);
    expect_level(f, SEC_A, TP_SIDE_BID, 2, 100.0, 5, 1);

    /* Modify same priority: quantity changes, priority stays. */
    begin(f, SEG, 4, 1);
    struct tp_eobi_order_modify_same_prio same = {.prev_display_qty = 5,
                                                  .security_id = SEC_A,
                                                  .trd_reg_ts_time_priority = T0 + 2,
                                                  .display_qty = 3,
                                                  .side = BUY,
                                                  .price = PX(100.0)};
    TP_EOBI_BUILD(&f->b, order_modify_same_prio, &same);
    assert_int_equal(send(f), 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 2, 100.0, 3, 1);

    /* Delete. */
    begin(f, SEG, 5, 1);
    struct tp_eobi_order_delete del = {.security_id = SEC_A,
                                       .trd_reg_ts_time_priority = T0 + 3,
                                       .display_qty = 7,
                                       .side = SELL,
                                       .price = PX(101.0)};
    TP_EOBI_BUILD(&f->b, order_delete, &del);
    assert_int_equal(send(f), 0);
    expect_level(f, SEC_A, TP_SIDE_ASK, 1, 102.0, 4, 1);
    assert_int_equal(levels(f, SEC_A, TP_SIDE_ASK), 1);

    /* Mass delete: every order of the instrument, and only of it. */
    assert_int_equal(add_packet(f, SEG, 6, SEC_B, SELL, T0 + 4, 50.0, 1), 0);
    begin(f, SEG, 7, 1);
    struct tp_eobi_order_mass_delete mass = {.security_id = SEC_A};
    TP_EOBI_BUILD(&f->b, order_mass_delete, &mass);
    f->clears = 0;
    assert_int_equal(send(f), 0);
    assert_int_equal(f->clears, 1);
    assert_int_equal(levels(f, SEC_A, TP_SIDE_BID), 0);
    assert_int_equal(levels(f, SEC_A, TP_SIDE_ASK), 0);
    assert_int_equal(tp_books_orders(f->books, id_of(f, SEC_A)), 0);
    assert_int_equal(tp_books_orders(f->books, id_of(f, SEC_B)), 1);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(f->stale_marks, 0);
}

#define EXECUTION_INIT(side_, prio_, px_, qty_, match_)                                            \
    {                                                                                              \
        .side = (side_), .price = PX(px_), .trd_reg_ts_time_priority = (prio_),                    \
        .security_id = SEC_A, .trd_match_id = (match_), .last_qty = (qty_), .last_px = PX(px_)     \
    }

static void execution(struct fixture *f, int full, uint8_t side, uint64_t prio, double px,
                      int32_t qty, uint32_t match)
{
    if (full) {
        struct tp_eobi_full_order_execution v = EXECUTION_INIT(side, prio, px, qty, match);
        TP_EOBI_BUILD(&f->b, full_order_execution, &v);
    } else {
        struct tp_eobi_partial_order_execution v = EXECUTION_INIT(side, prio, px, qty, match);
        TP_EOBI_BUILD(&f->b, partial_order_execution, &v);
    }
}

/* An aggressor buys 12 against two asks: summary, partial, full; the trade counts once. */
static void test_executions_and_trades(void **state)
{
    struct fixture *f = *state;
    const struct tp_book *bk;
    int64_t qty;

    begin(f, SEG, 1, 1);
    add(f, SEC_A, SELL, T0 + 1, 101.0, 5);
    add(f, SEC_A, SELL, T0 + 2, 101.0, 10);
    assert_int_equal(send(f), 0);

    begin(f, SEG, 2, 1);
    struct tp_eobi_execution_summary sum = {.security_id = SEC_A,
                                            .exec_id = 77,
                                            .last_qty = 12,
                                            .aggressor_side = BUY,
                                            .last_px = PX(101.0)};
    TP_EOBI_BUILD(&f->b, execution_summary, &sum);
    execution(f, 1, SELL, T0 + 1, 101.0, 5, 77);
    execution(f, 0, SELL, T0 + 2, 101.0, 7, 77);
    assert_int_equal(send(f), 0);
    bk = tp_books_get(f->books, id_of(f, SEC_A));
    assert_int_equal(bk->volume, 12);
    assert_int_equal(bk->trades, 1);
    assert_int_equal(bk->last_price, P9(101.0));
    assert_int_equal(bk->last_aggressor, TP_SIDE_BID);
    assert_int_equal(order_qty(f, SEC_A, T0 + 1, TP_SIDE_ASK, &qty), -ENOENT);
    assert_int_equal(order_qty(f, SEC_A, T0 + 2, TP_SIDE_ASK, &qty), 0);
    assert_int_equal(qty, 3);
    expect_level(f, SEC_A, TP_SIDE_ASK, 1, 101.0, 3, 1);

    /* A trade report (auction, no aggressor) counts in volume. */
    begin(f, SEG, 3, 1);
    struct tp_eobi_trade_report tr = {
        .security_id = SEC_A, .trd_match_id = 78, .last_qty = 4, .last_px = PX(100.0)};
    TP_EOBI_BUILD(&f->b, trade_report, &tr);
    assert_int_equal(send(f), 0);
    assert_int_equal(bk->volume, 16);
    assert_int_equal(bk->last_aggressor, TP_SIDE_NONE);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);

    /* A full execution of less than the book holds: the book was not the venue's. */
    begin(f, SEG, 4, 1);
    execution(f, 1, SELL, T0 + 2, 101.0, 1, 79);
    assert_int_equal(send(f), 0);
    assert_int_equal(f->feed->counters.execution_mismatch, 1);
    assert_int_equal(order_qty(f, SEC_A, T0 + 2, TP_SIDE_ASK, &qty), -ENOENT);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 1);
    assert_int_equal(segment(f, SEG)->resume_seq, 5);
}

/* A partial execution that empties the order is a mismatch too; an unknown order a rejection. */
static void test_execution_mismatches(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(add_packet(f, SEG, 1, SEC_A, SELL, T0 + 1, 101.0, 5), 0);
    begin(f, SEG, 2, 1);
    execution(f, 0, SELL, T0 + 1, 101.0, 5, 1);
    assert_int_equal(send(f), 0);
    assert_int_equal(f->feed->counters.execution_mismatch, 1);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
}

static void test_unknown_order_is_a_gap(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(add_packet(f, SEG, 1, SEC_A, SELL, T0 + 1, 101.0, 5), 0);
    begin(f, SEG, 2, 1);
    struct tp_eobi_order_delete del = {
        .security_id = SEC_A, .trd_reg_ts_time_priority = T0 + 99, .side = SELL};
    TP_EOBI_BUILD(&f->b, order_delete, &del);
    assert_int_equal(send(f), 0);
    assert_int_equal(f->feed->counters.rejected, 1);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 1);
    assert_int_equal(tp_eobi_feed_recovering(f->feed), 1);
}

/* Instrument and product state, auction BBO and clearing price. */
static void test_status_and_auction_statistics(void **state)
{
    struct fixture *f = *state;
    const struct tp_book *a, *b;

    begin(f, SEG, 1, 1);
    add(f, SEC_A, BUY, T0 + 1, 99.0, 1);
    add(f, SEC_B, BUY, T0 + 2, 99.0, 1);
    assert_int_equal(send(f), 0);
    a = tp_books_get(f->books, id_of(f, SEC_A));
    b = tp_books_get(f->books, id_of(f, SEC_B));

    begin(f, SEG, 2, 1);
    struct tp_eobi_product_state_change ps = {.trading_session_sub_id = 1, .trad_ses_status = 2};
    TP_EOBI_BUILD(&f->b, product_state_change, &ps);
    assert_int_equal(send(f), 0);
    assert_int_equal(a->status, TP_STATUS_PRE_OPEN);
    assert_int_equal(b->status, TP_STATUS_PRE_OPEN);

    /* An instrument state of its own wins over the product's from then on. */
    begin(f, SEG, 3, 1);
    struct tp_eobi_instrument_state_change is = {
        .security_id = SEC_A, .security_status = 1, .security_trading_status = 204};
    TP_EOBI_BUILD(&f->b, instrument_state_change, &is);
    is.security_trading_status = 203;
    TP_EOBI_BUILD(&f->b, instrument_state_change, &is);
    ps.trading_session_sub_id = 3;
    ps.trad_ses_status = 1; /* product halted */
    TP_EOBI_BUILD(&f->b, product_state_change, &ps);
    assert_int_equal(send(f), 0);
    assert_int_equal(a->status, TP_STATUS_OPEN);
    assert_int_equal(b->status, TP_STATUS_HALTED);
    assert_int_equal(tp_instruments_get(f->reg, id_of(f, SEC_A))->trading_status, TP_STATUS_OPEN);

    begin(f, SEG, 4, 1);
    is.security_status = 9; /* suspended */
    TP_EOBI_BUILD(&f->b, instrument_state_change, &is);
    struct tp_eobi_auction_bbo bbo = {.security_id = SEC_A,
                                      .bid_px = PX(99.5),
                                      .offer_px = TP_EOBI_PRICE_NULL,
                                      .bid_size = 30,
                                      .offer_size = TP_EOBI_QTY_NULL};
    TP_EOBI_BUILD(&f->b, auction_bbo, &bbo);
    struct tp_eobi_auction_clearing_price acp = {
        .security_id = SEC_A, .last_px = PX(99.75), .last_qty = 40, .imbalance_qty = -5};
    TP_EOBI_BUILD(&f->b, auction_clearing_price, &acp);
    assert_int_equal(send(f), 0);
    assert_int_equal(a->status, TP_STATUS_HALTED);
    assert_true(a->stats[TP_STAT_AUCTION_BID].present);
    assert_int_equal(a->stats[TP_STAT_AUCTION_BID].price, P9(99.5));
    assert_int_equal(a->stats[TP_STAT_AUCTION_BID].qty, 30);
    assert_false(a->stats[TP_STAT_AUCTION_OFFER].present);
    assert_int_equal(a->stats[TP_STAT_INDICATIVE_OPEN].price, P9(99.75));
    assert_int_equal(a->stats[TP_STAT_INDICATIVE_OPEN].qty, 40);
    assert_int_equal(a->stats[TP_STAT_IMBALANCE].qty, -5);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
}

/* Snapshot of segment seg reflecting packets up to `last`: SEC_A with the orders given. */
static void snapshot_begin(struct fixture *f, int32_t seg, uint32_t last)
{
    /* Each cycle is sent later than the one before (the other line's copy at the same time). */
    struct tp_eobi_packet_header h = {.market_segment_id = seg,
                                      .transact_time = T0 + ++f->snapshot_cycles};
    struct tp_eobi_product_summary ps = {
        .last_msg_seq_num_processed = last, .trading_session_sub_id = 3, .trad_ses_status = 2};

    f->snap_msg_seq = 1;
    tp_eobi_build_begin(&f->b, f->pkt, sizeof(f->pkt), &h, 1);
    TP_EOBI_BUILD(&f->b, product_summary, &ps);
}

/* The next packet of the snapshot cycle begun last (its TransactTime), from MsgSeqNum msg_seq. */
static void snapshot_continue(struct fixture *f, int32_t seg, uint32_t msg_seq)
{
    struct tp_eobi_packet_header h = {.market_segment_id = seg,
                                      .transact_time = T0 + f->snapshot_cycles};

    tp_eobi_build_begin(&f->b, f->pkt, sizeof(f->pkt), &h, msg_seq);
}

static void snapshot_instrument(struct fixture *f, int64_t sec, uint16_t orders, uint8_t status)
{
    struct tp_eobi_instrument_summary is = {.security_id = sec,
                                            .tot_no_orders = orders,
                                            .security_status = 1,
                                            .security_trading_status = status};
    struct tp_eobi_md_entry hi = {.md_entry_px = PX(105.0), .md_entry_size = 0, .md_entry_type = 7};
    struct tp_eobi_md_entry vol = {
        .md_entry_px = TP_EOBI_PRICE_NULL, .md_entry_size = 1234, .md_entry_type = 66};
    TP_EOBI_BUILD(&f->b, instrument_summary, &is);
    tp_eobi_build_md_entry(&f->b, &hi);
    tp_eobi_build_md_entry(&f->b, &vol);
}

static void snapshot_order(struct fixture *f, uint8_t side, uint64_t prio, double px, int32_t qty)
{
    struct tp_eobi_snapshot_order o = {
        .trd_reg_ts_time_priority = prio, .display_qty = qty, .side = side, .price = PX(px)};
    TP_EOBI_BUILD(&f->b, snapshot_order, &o);
}

/*
 * The whole recovery: a gap, the segment's instruments stale, packets buffered, an old snapshot
 * skipped, the right one applied with the buffered packets after its LastMsgSeqNumProcessed,
 * healthy again; the other segment flowed all along.
 */
static void test_gap_and_snapshot_recovery(void **state)
{
    struct fixture *f = *state;
    const struct tp_eobi_segment *s;
    int64_t qty;

    assert_int_equal(add_packet(f, SEG, 1, SEC_A, BUY, T0 + 1, 100.0, 10), 0);
    assert_int_equal(add_packet(f, SEG, 2, SEC_B, BUY, T0 + 2, 50.0, 10), 0);
    assert_int_equal(add_packet(f, SEG2, 1, SEC_C, BUY, T0 + 3, 10.0, 1), 0);
    /* Duplicate (the other line's copy). */
    assert_int_equal(add_packet(f, SEG, 2, SEC_B, BUY, T0 + 2, 50.0, 10), 0);
    assert_int_equal(f->feed->counters.duplicates, 1);
    /* Packets 3 and 4 are lost (they held the order T0 + 5 of SEC_A); 5 reveals the gap. */
    assert_int_equal(add_packet(f, SEG, 5, SEC_A, SELL, T0 + 7, 101.0, 2), 0);
    s = segment(f, SEG);
    assert_int_equal(s->state, TP_EOBI_SEGMENT_RECOVERING);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 1);
    assert_int_equal(f->stale[id_of(f, SEC_B)], 1);
    assert_int_equal(f->stale[id_of(f, SEC_C)], 0);
    assert_int_equal(f->feed->counters.gaps, 1);
    assert_int_equal(s->resume_seq, 5);
    /* Buffered, not applied. */
    assert_int_equal(levels(f, SEC_A, TP_SIDE_ASK), 0);
    assert_int_equal(add_packet(f, SEG, 6, SEC_A, SELL, T0 + 8, 102.0, 3), 0);
    assert_int_equal(f->feed->counters.buffered, 2);
    /* The other segment is unaffected. */
    assert_int_equal(add_packet(f, SEG2, 2, SEC_C, BUY, T0 + 9, 10.0, 1), 0);
    expect_level(f, SEC_C, TP_SIDE_BID, 1, 10.0, 2, 2);
    /* A snapshot of a healthy segment is ignored. */
    snapshot_begin(f, SEG2, 1);
    assert_int_equal(send_snapshot(f), 0);
    assert_int_equal(f->feed->counters.snapshots_ignored, 1);
    /* A snapshot up to 3 predates the buffer (which starts at 5): skipped. */
    snapshot_begin(f, SEG, 3);
    snapshot_instrument(f, SEC_A, 0, 203);
    assert_int_equal(send_snapshot(f), 0);
    assert_int_equal(f->feed->counters.snapshots_old, 1);
    /* The snapshot up to 5 (it already holds packet 5's ask): packet 6 follows it. */
    snapshot_begin(f, SEG, 5);
    snapshot_instrument(f, SEC_A, 3, 203);
    snapshot_order(f, BUY, T0 + 1, 100.0, 10);
    snapshot_order(f, BUY, T0 + 5, 99.0, 4);
    assert_int_equal(send_snapshot(f), 0);
    assert_int_equal(s->state, TP_EOBI_SEGMENT_RECOVERING); /* not over before its last packet */
    /* The orders continue in the last packet; SEC_B was not in the snapshot: empty. */
    snapshot_continue(f, SEG, 5);
    snapshot_order(f, SELL, T0 + 7, 101.0, 2);
    f->events = 0;
    assert_int_equal(send_snapshot_last(f), 0);
    assert_int_equal(f->feed->counters.snapshots, 1);
    assert_int_equal(s->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(s->next_seq, 7);
    assert_int_equal(tp_eobi_feed_recovering(f->feed), 0);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 0);
    assert_int_equal(f->stale[id_of(f, SEC_B)], 0);
    assert_true(f->events >= 1);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 10, 1);
    expect_level(f, SEC_A, TP_SIDE_BID, 2, 99.0, 4, 1);
    expect_level(f, SEC_A, TP_SIDE_ASK, 1, 101.0, 2, 1);
    expect_level(f, SEC_A, TP_SIDE_ASK, 2, 102.0, 3, 1); /* buffered packet 6 */
    assert_int_equal(levels(f, SEC_A, TP_SIDE_ASK), 2);
    assert_int_equal(tp_books_orders(f->books, id_of(f, SEC_B)), 0);
    const struct tp_book *a = tp_books_get(f->books, id_of(f, SEC_A));
    assert_int_equal(a->status, TP_STATUS_OPEN);
    assert_int_equal(a->stats[TP_STAT_HIGH].price, P9(105.0));
    assert_int_equal(a->stats[TP_STAT_SESSION_VOLUME].qty, 1234);
    assert_int_equal(f->feed->n_buffered, 0);
    /* Flowing again: 7 applies, snapshots are ignored. */
    assert_int_equal(add_packet(f, SEG, 7, SEC_A, BUY, T0 + 10, 98.0, 1), 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 3, 98.0, 1, 1);
    assert_int_equal(order_qty(f, SEC_A, T0 + 5, TP_SIDE_BID, &qty), 0);
    assert_int_equal(qty, 4);
}

/*
 * A snapshot that misses an order, a message or its last packet is not trusted: the next cycle
 * recovers.
 */
static void test_broken_snapshot_waits_for_next_cycle(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(add_packet(f, SEG, 1, SEC_A, BUY, T0 + 1, 100.0, 10), 0);
    assert_int_equal(add_packet(f, SEG, 3, SEC_A, BUY, T0 + 3, 100.0, 1), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    snapshot_begin(f, SEG, 2);
    snapshot_instrument(f, SEC_A, 2, 203);
    snapshot_order(f, BUY, T0 + 1, 100.0, 10); /* the second order is missing */
    assert_int_equal(send_snapshot_last(f), 0);
    assert_int_equal(f->feed->counters.snapshots_broken, 1);
    snapshot_begin(f, SEG, 2);
    snapshot_instrument(f, SEC_A, 1, 203);
    f->b.msg_seq_num++; /* a lost snapshot message */
    snapshot_order(f, BUY, T0 + 1, 100.0, 10);
    assert_int_equal(send_snapshot_last(f), 0);
    assert_int_equal(f->feed->counters.snapshots_broken, 2);
    /* Its last packet lost: the next ProductSummary cuts it short. */
    snapshot_begin(f, SEG, 2);
    snapshot_instrument(f, SEC_A, 2, 203);
    snapshot_order(f, BUY, T0 + 1, 100.0, 10);
    snapshot_order(f, BUY, T0 + 2, 100.0, 5);
    assert_int_equal(send_snapshot(f), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    snapshot_begin(f, SEG, 2);
    snapshot_instrument(f, SEC_A, 2, 203);
    snapshot_order(f, BUY, T0 + 1, 100.0, 10);
    assert_int_equal(send_snapshot(f), 0);
    assert_int_equal(f->feed->counters.snapshots_broken, 3);
    /* ... and so does the caller's end. */
    tp_eobi_feed_snapshot_end(f->feed);
    assert_int_equal(f->feed->counters.snapshots_broken, 4);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 1);
    snapshot_begin(f, SEG, 2);
    snapshot_instrument(f, SEC_A, 2, 203);
    snapshot_order(f, BUY, T0 + 1, 100.0, 10);
    snapshot_order(f, BUY, T0 + 2, 100.0, 5);
    assert_int_equal(send_snapshot_last(f), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 16, 3);
}

/*
 * After a loss on both lines, the snapshot's TradeVolume and Trade entries give the volume and
 * last trade the lost packets changed; the trade count (no snapshot message has one) is the
 * trades seen.
 */
static void test_snapshot_gives_volume_and_last_trade(void **state)
{
    struct fixture *f = *state;
    const struct tp_book *bk;

    begin(f, SEG, 1, 1);
    struct tp_eobi_trade_report tr = {
        .security_id = SEC_A, .trd_match_id = 1, .last_qty = 4, .last_px = PX(100.0)};
    TP_EOBI_BUILD(&f->b, trade_report, &tr);
    assert_int_equal(send(f), 0);
    /* 2 (a trade of 6 at 100.5) is lost on both lines: 3 shows the gap. */
    begin(f, SEG, 3, 1);
    tr.trd_match_id = 3;
    tr.last_qty = 1;
    tr.last_px = PX(100.25);
    TP_EOBI_BUILD(&f->b, trade_report, &tr);
    assert_int_equal(send(f), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    snapshot_begin(f, SEG, 2);
    struct tp_eobi_instrument_summary is = {
        .security_id = SEC_A, .security_status = 1, .security_trading_status = 203};
    struct tp_eobi_md_entry volume = {
        .md_entry_px = TP_EOBI_PRICE_NULL, .md_entry_size = 10, .md_entry_type = 66};
    struct tp_eobi_md_entry last = {
        .md_entry_px = PX(100.5), .md_entry_size = 6, .md_entry_type = 2};
    TP_EOBI_BUILD(&f->b, instrument_summary, &is);
    tp_eobi_build_md_entry(&f->b, &volume);
    tp_eobi_build_md_entry(&f->b, &last);
    assert_int_equal(send_snapshot_last(f), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(f->feed->counters.volume_adopted, 1);
    bk = tp_books_get(f->books, id_of(f, SEC_A));
    /* The snapshot's 10, then packet 3's trade of 1 from the buffer. */
    assert_int_equal(bk->volume, 11);
    assert_int_equal(bk->last_price, P9(100.25));
    assert_int_equal(bk->last_qty, 1);
    assert_int_equal(bk->trades, 2); /* seen: 1 and 3 */
    assert_true(bk->stats[TP_STAT_SESSION_VOLUME].present);
    assert_int_equal(bk->stats[TP_STAT_SESSION_VOLUME].qty, 10);
}

/*
 * Held for the other line: with a wait set, the packets after a hole wait for it in ApplSeqNum
 * order, whatever order the two lines bring them in, while another segment's held packets come
 * and go around them; then all apply, and no hole was a gap.
 */
static void test_holes_filled_out_of_order(void **state)
{
    struct fixture *f = *state;

    tp_eobi_feed_arbitrate(f->feed, 1000, NULL, NULL);
    assert_int_equal(add_packet(f, SEG, 1, SEC_A, BUY, T0 + 1, 100.0, 1), 0);
    assert_int_equal(add_packet(f, SEG, 5, SEC_A, BUY, T0 + 5, 100.0, 5), 0); /* 2..4 missing */
    assert_int_equal(add_packet(f, SEG, 4, SEC_A, BUY, T0 + 4, 100.0, 4), 0); /* line B's */
    /* The other segment holds and releases a packet meanwhile. */
    assert_int_equal(add_packet(f, SEG2, 1, SEC_C, BUY, T0 + 11, 10.0, 1), 0);
    assert_int_equal(add_packet(f, SEG2, 3, SEC_C, BUY, T0 + 13, 10.0, 3), 0);
    assert_int_equal(add_packet(f, SEG2, 2, SEC_C, BUY, T0 + 12, 10.0, 2), 0);
    expect_level(f, SEC_C, TP_SIDE_BID, 1, 10.0, 6, 3);
    assert_int_equal(levels(f, SEC_A, TP_SIDE_BID), 1);
    assert_int_equal(f->feed->counters.held, 3);
    assert_int_equal(add_packet(f, SEG, 5, SEC_A, BUY, T0 + 5, 100.0, 5), 0); /* a copy */
    assert_int_equal(add_packet(f, SEG, 2, SEC_A, BUY, T0 + 2, 100.0, 2), 0);
    assert_int_equal(add_packet(f, SEG, 3, SEC_A, BUY, T0 + 3, 100.0, 3), 0);
    assert_int_equal(f->feed->counters.gaps, 0);
    assert_int_equal(f->feed->counters.gaps_filled, 3);
    assert_int_equal(f->feed->counters.rejected, 0);
    assert_int_equal(f->feed->holding, 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 15, 5);
    assert_int_equal(segment(f, SEG)->next_seq, 6);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 0);
}

/* A snapshot pass of SEG up to ApplSeqNum 2 in three packets, for either line. */
struct snapshot_pass {
    uint8_t pkt[3][256];
    size_t len[3];
};

static void build_pass(struct fixture *f, struct snapshot_pass *pass)
{
    snapshot_begin(f, SEG, 2);
    snapshot_instrument(f, SEC_A, 2, 203);
    snapshot_order(f, BUY, T0 + 1, 100.0, 10);
    pass->len[0] = f->b.len;
    memcpy(pass->pkt[0], f->pkt, f->b.len);
    snapshot_continue(f, SEG, f->b.msg_seq_num);
    snapshot_order(f, BUY, T0 + 2, 100.0, 1);
    pass->len[1] = f->b.len;
    memcpy(pass->pkt[1], f->pkt, f->b.len);
    snapshot_continue(f, SEG, f->b.msg_seq_num);
    f->pkt[21] = 1; /* CompletionIndicator: the pass's last packet */
    snapshot_instrument(f, SEC_B, 0, 203);
    assert_int_equal(f->b.error, 0);
    pass->len[2] = f->b.len;
    memcpy(pass->pkt[2], f->pkt, f->b.len);
}

static int send_part(struct fixture *f, const struct snapshot_pass *pass, int part, uint64_t rx)
{
    return tp_eobi_feed_snapshot_packet(f->feed, pass->pkt[part], pass->len[part], rx);
}

/* SEG recovering after 2 was lost on both lines, the feed waiting 1000 for the other line. */
static void recovering_with_wait(struct fixture *f)
{
    assert_int_equal(add_packet(f, SEG, 1, SEC_A, BUY, T0 + 1, 100.0, 10), 0);
    assert_int_equal(add_packet(f, SEG, 3, SEC_A, BUY, T0 + 3, 100.0, 1), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    tp_eobi_feed_arbitrate(f->feed, 1000, NULL, NULL);
}

/*
 * Line B lags: a snapshot packet lost on A waits for B's copy with the packets after it, and the
 * pass completes; the copies B brings of the packets around it are dropped.
 */
static void test_snapshot_hole_filled_by_late_line(void **state)
{
    struct fixture *f = *state;
    struct snapshot_pass pass;

    recovering_with_wait(f);
    build_pass(f, &pass);
    assert_int_equal(send_part(f, &pass, 0, 10), 0); /* A */
    assert_int_equal(send_part(f, &pass, 2, 20), 0); /* A: 1 lost */
    assert_int_equal(f->feed->counters.snapshot_held, 1);
    assert_int_equal(f->feed->counters.snapshots_broken, 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    tp_eobi_feed_poll(f->feed, 20 + 999);                  /* the wait is not over */
    assert_int_equal(send_part(f, &pass, 0, 20 + 999), 0); /* B's copies */
    assert_int_equal(send_part(f, &pass, 1, 20 + 999), 0);
    assert_int_equal(f->feed->counters.snapshot_filled, 1);
    assert_int_equal(f->feed->counters.snapshots, 1);
    assert_int_equal(f->feed->counters.snapshots_broken, 0);
    assert_int_equal(f->feed->n_snapshot_held, 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 12, 3); /* 3 after the snapshot */
    assert_int_equal(send_part(f, &pass, 2, 2000), 0);    /* B's last: the segment is healthy */
    assert_int_equal(f->feed->counters.snapshots_ignored, 1);
    assert_int_equal(f->feed->counters.snapshot_given_up, 0);
}

/*
 * A snapshot packet lost on both lines: the pass waits, then is given up (the books stay
 * flagged; the late copy changes nothing) and the next cycle recovers.
 */
static void test_snapshot_hole_on_both_lines(void **state)
{
    struct fixture *f = *state;
    struct snapshot_pass pass;

    recovering_with_wait(f);
    build_pass(f, &pass);
    assert_int_equal(send_part(f, &pass, 0, 10), 0);
    assert_int_equal(send_part(f, &pass, 2, 20), 0);
    assert_int_equal(send_part(f, &pass, 0, 30), 0); /* B: 1 lost too */
    assert_int_equal(send_part(f, &pass, 2, 40), 0);
    assert_int_equal(f->feed->counters.snapshot_duplicates, 2);
    assert_int_equal(f->feed->counters.snapshots_broken, 0);
    tp_eobi_feed_poll(f->feed, 20 + 1000);
    assert_int_equal(f->feed->counters.snapshot_given_up, 1);
    assert_int_equal(f->feed->counters.snapshots_broken, 1);
    assert_int_equal(f->feed->counters.snapshots, 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 1);
    assert_int_equal(send_part(f, &pass, 1, 3000), 0); /* too late: the pass is over */
    assert_int_equal(send_part(f, &pass, 2, 3000), 0);
    assert_int_equal(f->feed->counters.snapshots, 0);
    assert_int_equal(f->feed->n_snapshot_held, 0);
    build_pass(f, &pass); /* the next cycle */
    for (int part = 0; part < 3; part++)
        assert_int_equal(send_part(f, &pass, part, 4000), 0);
    assert_int_equal(f->feed->counters.snapshots, 1);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 12, 3); /* 3 after the snapshot */
}

/*
 * A lagging line B also brings a lost ProductSummary: the pass's later packets and the next
 * segment's snapshot wait behind it, then both apply.
 */
static void test_snapshot_summary_filled_by_late_line(void **state)
{
    struct fixture *f = *state;
    struct snapshot_pass pass;

    recovering_with_wait(f);
    assert_int_equal(add_packet(f, SEG2, 5, SEC_C, BUY, T0 + 5, 10.0, 1), 0); /* late join */
    build_pass(f, &pass);
    snapshot_begin(f, SEG2, 4);
    f->pkt[21] = 1;
    assert_int_equal(send_part(f, &pass, 1, 10), 0); /* A: 0 lost */
    assert_int_equal(send_part(f, &pass, 2, 11), 0);
    assert_int_equal(send_snapshot(f), 0); /* A: SEG2's whole snapshot, rx 7 */
    assert_int_equal(f->feed->counters.snapshot_held, 3);
    assert_int_equal(tp_eobi_feed_recovering(f->feed), 2);
    for (int part = 0; part < 3; part++)
        assert_int_equal(send_part(f, &pass, part, 500), 0); /* B */
    assert_int_equal(send_snapshot(f), 0);
    assert_int_equal(f->feed->counters.snapshots, 2);
    assert_int_equal(f->feed->counters.snapshots_broken, 0);
    assert_int_equal(tp_eobi_feed_recovering(f->feed), 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 12, 3); /* 3 after the snapshot */
    expect_level(f, SEC_C, TP_SIDE_BID, 1, 10.0, 1, 1);
}

/* Keeps the packet built in f->pkt as part `part` of a pass. */
static void keep_part(struct fixture *f, struct snapshot_pass *pass, int part)
{
    assert_int_equal(f->b.error, 0);
    pass->len[part] = f->b.len;
    memcpy(pass->pkt[part], f->pkt, f->b.len);
}

/*
 * The pass after build_pass's, once packet 4 (SEC_A's order T0 + 4) came: its second packet has
 * the MsgSeqNum build_pass's pass expects after its first.
 */
static void build_next_pass(struct fixture *f, struct snapshot_pass *next)
{
    snapshot_begin(f, SEG, 4);
    snapshot_instrument(f, SEC_A, 4, 203);
    snapshot_order(f, BUY, T0 + 1, 100.0, 10);
    keep_part(f, next, 0);
    snapshot_continue(f, SEG, f->b.msg_seq_num);
    assert_int_equal(f->b.msg_seq_num, 4); /* what the old pass expects next */
    snapshot_order(f, BUY, T0 + 2, 100.0, 1);
    snapshot_order(f, BUY, T0 + 3, 100.0, 1);
    snapshot_order(f, BUY, T0 + 4, 100.0, 1);
    keep_part(f, next, 1);
    snapshot_continue(f, SEG, f->b.msg_seq_num);
    f->pkt[21] = 1;
    snapshot_instrument(f, SEC_B, 0, 203);
    keep_part(f, next, 2);
}

/*
 * MsgSeqNums restart at each pass: when a pass's tail is lost on both lines and the next pass's
 * ProductSummary on line A, A's next packet of that pass has the very MsgSeqNum the pass being
 * applied expects. It is not taken as its continuation (a snapshot of two points of the stream)
 * but held; B's ProductSummary of the new pass ends the wait, and the new pass recovers.
 */
static void test_next_pass_is_not_a_continuation(void **state)
{
    struct fixture *f = *state;
    struct snapshot_pass old, next;

    recovering_with_wait(f);
    build_pass(f, &old);
    assert_int_equal(send_part(f, &old, 0, 10), 0); /* A; its parts 1 and 2 lost on both */
    assert_int_equal(send_part(f, &old, 0, 15), 0); /* B */
    assert_int_equal(add_packet(f, SEG, 4, SEC_A, BUY, T0 + 4, 100.0, 1), 0); /* buffered */
    build_next_pass(f, &next);
    assert_int_equal(send_part(f, &next, 1, 30), 0); /* A: its ProductSummary lost */
    assert_int_equal(send_part(f, &next, 2, 32), 0);
    assert_int_equal(f->feed->counters.snapshot_held, 2);
    assert_int_equal(f->feed->counters.snapshots, 0);
    assert_int_equal(send_part(f, &next, 0, 40), 0);         /* B */
    assert_int_equal(f->feed->counters.snapshots_broken, 1); /* the old pass */
    assert_int_equal(f->feed->counters.snapshots, 1);
    assert_int_equal(f->feed->counters.rejected, 0);
    assert_int_equal(f->feed->n_snapshot_held, 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(segment(f, SEG)->next_seq, 5);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 13, 4);
    assert_int_equal(levels(f, SEC_A, TP_SIDE_BID), 1);
}

/* Without the wait for the other line, a packet of the next pass ends the pass being applied. */
static void test_next_pass_cuts_pass_short(void **state)
{
    struct fixture *f = *state;
    struct snapshot_pass old, next;

    assert_int_equal(add_packet(f, SEG, 1, SEC_A, BUY, T0 + 1, 100.0, 10), 0);
    assert_int_equal(add_packet(f, SEG, 3, SEC_A, BUY, T0 + 3, 100.0, 1), 0);
    build_pass(f, &old);
    assert_int_equal(send_part(f, &old, 0, 10), 0); /* its parts 1 and 2 lost */
    assert_int_equal(add_packet(f, SEG, 4, SEC_A, BUY, T0 + 4, 100.0, 1), 0);
    build_next_pass(f, &next);
    assert_int_equal(send_part(f, &next, 1, 30), 0); /* its ProductSummary lost */
    assert_int_equal(f->feed->counters.snapshots_broken, 1);
    assert_int_equal(send_part(f, &next, 2, 32), 0);
    assert_int_equal(f->feed->counters.snapshots, 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    build_next_pass(f, &next); /* the next cycle, whole */
    for (int part = 0; part < 3; part++)
        assert_int_equal(send_part(f, &next, part, 40), 0);
    assert_int_equal(f->feed->counters.snapshots, 1);
    assert_int_equal(f->feed->counters.rejected, 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 13, 4);
}

/* Packet seq of SEG adding SEC_A's bid T0 + seq (100.0, 1), received at rx. */
static int add_at(struct fixture *f, uint64_t seq, uint64_t rx)
{
    begin(f, SEG, seq, 1);
    add(f, SEC_A, BUY, T0 + seq, 100.0, 1);
    assert_int_equal(f->b.error, 0);
    return tp_eobi_feed_packet(f->feed, f->pkt, f->b.len, rx);
}

/*
 * While SEG recovers, line A loses packet 5 and B brings it within the wait: the buffered run
 * is whole again, and the first snapshot recovers the segment with packets 3 to 6 after it.
 */
static void test_recovery_buffer_hole_filled_by_other_line(void **state)
{
    struct fixture *f = *state;
    struct snapshot_pass pass;

    recovering_with_wait(f); /* 3 buffered */
    assert_int_equal(add_at(f, 4, 10), 0);
    assert_int_equal(add_at(f, 6, 20), 0); /* A: 5 lost */
    assert_int_equal(add_at(f, 4, 45), 0); /* B */
    tp_eobi_feed_poll(f->feed, 20 + 999);  /* the wait is not over */
    assert_int_equal(add_at(f, 5, 20 + 999), 0);
    assert_int_equal(f->feed->counters.buffer_filled, 1);
    assert_int_equal(add_at(f, 6, 20 + 999), 0);
    assert_int_equal(f->feed->counters.duplicates, 2);
    assert_int_equal(segment(f, SEG)->resume_seq, 3);
    build_pass(f, &pass);
    for (int part = 0; part < 3; part++)
        assert_int_equal(send_part(f, &pass, part, 2000), 0);
    assert_int_equal(f->feed->counters.snapshots, 1);
    assert_int_equal(f->feed->counters.snapshots_old, 0);
    assert_int_equal(f->feed->counters.snapshots_broken, 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(segment(f, SEG)->next_seq, 7);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 15, 6);
}

/*
 * The other line does not bring the recovery buffer's hole in time: the run before it is
 * broken, a snapshot must reach past it; one that does recovers the segment.
 */
static void test_recovery_buffer_hole_on_both_lines(void **state)
{
    struct fixture *f = *state;
    struct snapshot_pass pass;

    recovering_with_wait(f); /* 3 buffered */
    assert_int_equal(add_at(f, 4, 10), 0);
    assert_int_equal(add_at(f, 6, 20), 0); /* 5 lost on both lines */
    assert_int_equal(segment(f, SEG)->resume_seq, 3);
    tp_eobi_feed_poll(f->feed, 20 + 1000);
    assert_int_equal(segment(f, SEG)->resume_seq, 6);
    assert_int_equal(segment(f, SEG)->buffered_first, 6);
    assert_int_equal(add_at(f, 5, 2000), 0); /* too late: the snapshot must reflect it */
    assert_int_equal(f->feed->counters.buffer_filled, 0);
    build_pass(f, &pass); /* up to 2: predates the run */
    for (int part = 0; part < 3; part++)
        assert_int_equal(send_part(f, &pass, part, 3000), 0);
    assert_int_equal(f->feed->counters.snapshots, 0);
    assert_int_equal(f->feed->counters.snapshots_old, 1);
    build_next_pass(f, &pass); /* up to 4: packet 5 is missing still */
    for (int part = 0; part < 3; part++)
        assert_int_equal(send_part(f, &pass, part, 3000), 0);
    assert_int_equal(f->feed->counters.snapshots_old, 2);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
}

/* Late join: the first packet is not ApplSeqNum 1; the snapshot defines the instruments. */
static void test_late_join(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(add_packet(f, SEG, 40, SEC_A, BUY, T0 + 40, 100.0, 1), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    assert_int_equal(id_of(f, SEC_A), TP_INSTRUMENT_NONE); /* only buffered so far */
    snapshot_begin(f, SEG, 39);
    snapshot_instrument(f, SEC_A, 1, 203);
    snapshot_order(f, SELL, T0 + 2, 101.0, 3);
    snapshot_instrument(f, SEC_B, 0, 200);
    assert_int_equal(send_snapshot(f), 0);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 1); /* defined while recovering */
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    snapshot_continue(f, SEG, 5); /* an empty last packet ends it */
    assert_int_equal(send_snapshot_last(f), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 0);
    expect_level(f, SEC_A, TP_SIDE_ASK, 1, 101.0, 3, 1);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 1, 1);
    assert_int_equal(tp_books_get(f->books, id_of(f, SEC_B))->status, TP_STATUS_CLOSED);
    assert_int_equal(segment(f, SEG)->next_seq, 41);
}

/* A snapshot packet of another segment cuts the one being applied short. */
static void test_snapshot_cut_by_other_segment(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(add_packet(f, SEG, 9, SEC_A, BUY, T0 + 9, 100.0, 1), 0);
    snapshot_begin(f, SEG, 9);
    snapshot_instrument(f, SEC_A, 0, 203);
    assert_int_equal(send_snapshot(f), 0);
    snapshot_begin(f, SEG2, 1);
    assert_int_equal(send_snapshot(f), 0);
    assert_int_equal(f->feed->counters.snapshots_broken, 1);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    snapshot_begin(f, SEG, 9);
    snapshot_instrument(f, SEC_A, 0, 203);
    assert_int_equal(send_snapshot_last(f), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(levels(f, SEC_A, TP_SIDE_BID), 0); /* packet 9 was in the snapshot */
    assert_int_equal(segment(f, SEG)->next_seq, 10);
}

/* A heartbeat announcing packets never received is a gap. */
static void test_heartbeat_gap(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(add_packet(f, SEG, 1, SEC_A, BUY, T0 + 1, 100.0, 1), 0);
    begin(f, SEG, 0, 0);
    tp_eobi_build_heartbeat(&f->b, 1);
    assert_int_equal(send(f), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    begin(f, SEG, 0, 0);
    tp_eobi_build_heartbeat(&f->b, 3);
    assert_int_equal(send(f), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    assert_int_equal(segment(f, SEG)->resume_seq, 4);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 1);
    /* A snapshot up to 2 does not cover the lost packet 3. */
    snapshot_begin(f, SEG, 2);
    assert_int_equal(send_snapshot(f), 0);
    assert_int_equal(f->feed->counters.snapshots_old, 1);
}

/* A sequence reset: the books cannot be vouched for. */
static void test_sequence_reset(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(add_packet(f, SEG, 1, SEC_A, BUY, T0 + 1, 100.0, 1), 0);
    struct tp_eobi_packet_header h = {
        .appl_seq_num = 2, .market_segment_id = SEG, .appl_seq_reset_indicator = 1};
    tp_eobi_build_begin(&f->b, f->pkt, sizeof(f->pkt), &h, 1);
    add(f, SEC_A, BUY, T0 + 2, 100.0, 1);
    assert_int_equal(send(f), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    assert_int_equal(segment(f, SEG)->buffered_first, 2);
}

/*
 * A lone packet far ahead (a forged or corrupt ApplSeqNum) is dropped and changes nothing; the
 * genuine packets go on. A jump the next packet continues is a real loss: a gap.
 */
static void test_implausible_jump(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(add_packet(f, SEG, 1, SEC_A, BUY, T0 + 1, 100.0, 1), 0);
    assert_int_equal(add_packet(f, SEG, 3 + TP_EOBI_MAX_JUMP, SEC_A, BUY, T0 + 2, 99.0, 5), 0);
    assert_int_equal(f->feed->counters.implausible, 1);
    assert_int_equal(f->feed->counters.gaps, 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(levels(f, SEC_A, TP_SIDE_BID), 1);
    assert_int_equal(add_packet(f, SEG, 2, SEC_A, BUY, T0 + 3, 100.0, 2), 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 3, 2);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 0);
    /* A jump of TP_EOBI_MAX_JUMP past the expected packet is a plain gap. */
    assert_int_equal(add_packet(f, SEG2, 1, SEC_C, BUY, T0 + 4, 10.0, 1), 0);
    assert_int_equal(add_packet(f, SEG2, 1 + TP_EOBI_MAX_JUMP, SEC_C, BUY, T0 + 5, 10.0, 1), 0);
    assert_int_equal(f->feed->counters.implausible, 1);
    assert_int_equal(segment(f, SEG2)->state, TP_EOBI_SEGMENT_RECOVERING);
    /* A longer jump, confirmed by the packet after it. */
    uint64_t far = 3 + 2 * TP_EOBI_MAX_JUMP;
    assert_int_equal(add_packet(f, SEG, far, SEC_A, BUY, T0 + 6, 98.0, 1), 0);
    assert_int_equal(f->feed->counters.implausible, 2);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    assert_int_equal(add_packet(f, SEG, far + 1, SEC_A, BUY, T0 + 7, 98.0, 1), 0);
    assert_int_equal(f->feed->counters.implausible, 2);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 1);
}

/*
 * ApplSeqNum 0 is no packet's (the sequence counts from 1): refused as malformed, so a second one
 * is not buffered beside the first and applied twice after a snapshot.
 */
static void test_appl_seq_num_zero(void **state)
{
    struct fixture *f = *state;

    assert_int_equal(add_packet(f, SEG, 0, SEC_A, BUY, T0 + 1, 100.0, 1), -EBADMSG);
    assert_int_equal(add_packet(f, SEG, 0, SEC_A, BUY, T0 + 1, 100.0, 1), -EBADMSG);
    assert_int_equal(f->feed->counters.malformed, 2);
    assert_int_equal(f->feed->n_buffered, 0);
    assert_int_equal(add_packet(f, SEG, 1, SEC_A, BUY, T0 + 1, 100.0, 1), 0);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_HEALTHY);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 1, 1);
}

/* Malformed packets and messages: counted, nothing read outside, the segment recovers. */
static void test_malformed(void **state)
{
    struct fixture *f = *state;
    uint8_t junk[40] = {0};

    assert_int_equal(tp_eobi_feed_packet(f->feed, junk, sizeof(junk), 0), -EBADMSG);
    assert_int_equal(tp_eobi_feed_packet(f->feed, junk, 3, 0), -EBADMSG);
    assert_int_equal(tp_eobi_feed_snapshot_packet(f->feed, junk, sizeof(junk), 0), -EBADMSG);
    assert_int_equal(f->feed->counters.malformed, 3);
    assert_int_equal(add_packet(f, SEG, 1, SEC_A, BUY, T0 + 1, 100.0, 1), 0);
    /* An unknown template is skipped without a gap. */
    begin(f, SEG, 2, 1);
    uint8_t *m = f->pkt + f->b.len;
    memset(m, 0, 16);
    tp_eobi_store16(m, 16);
    tp_eobi_store16(m + 2, 13999);
    f->b.len += 16;
    add(f, SEC_A, BUY, T0 + 2, 100.0, 2);
    assert_int_equal(send(f), 0);
    assert_int_equal(f->feed->counters.unknown_template, 1);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 3, 2);
    /* An OrderAdd shorter than its layout: malformed, the segment recovers. */
    begin(f, SEG, 3, 1);
    add(f, SEC_A, BUY, T0 + 3, 100.0, 2);
    tp_eobi_store16(f->pkt + TP_EOBI_PACKET_HEADER_LEN, 40);
    f->b.len -= 8;
    assert_int_equal(send(f), -EBADMSG);
    assert_int_equal(segment(f, SEG)->state, TP_EOBI_SEGMENT_RECOVERING);
    assert_int_equal(f->stale[id_of(f, SEC_A)], 1);
    /* A bad side. */
    assert_int_equal(add_packet(f, SEG2, 1, SEC_C, 7, T0 + 4, 1.0, 1), -EBADMSG);
    assert_int_equal(segment(f, SEG2)->state, TP_EOBI_SEGMENT_RECOVERING);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_definition_and_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_executions_and_trades, setup, teardown),
        cmocka_unit_test_setup_teardown(test_execution_mismatches, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_order_is_a_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_and_auction_statistics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap_and_snapshot_recovery, setup, teardown),
        cmocka_unit_test_setup_teardown(test_broken_snapshot_waits_for_next_cycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_gives_volume_and_last_trade, setup, teardown),
        cmocka_unit_test_setup_teardown(test_holes_filled_out_of_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_hole_filled_by_late_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_hole_on_both_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_summary_filled_by_late_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_next_pass_is_not_a_continuation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_next_pass_cuts_pass_short, setup, teardown),
        cmocka_unit_test_setup_teardown(test_recovery_buffer_hole_filled_by_other_line, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_recovery_buffer_hole_on_both_lines, setup, teardown),
        cmocka_unit_test_setup_teardown(test_late_join, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_cut_by_other_segment, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heartbeat_gap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sequence_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_implausible_jump, setup, teardown),
        cmocka_unit_test_setup_teardown(test_appl_seq_num_zero, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
