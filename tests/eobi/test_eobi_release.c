/*
 * test_eobi_release.c - T7 release 7.0 EOBI: every message the book uses, written byte by byte at
 * the offsets of the 7.0 manual layouts (not through the codec's table), converted to the 6.0
 * form the feed reads and checked field by field; the conversion back (the simulator's) gives the
 * same bytes; a packet of the other release is refused by the release check; quantities 6.0
 * cannot hold are refused; the 7.0 JSON printer reads the known values.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "eobi_build.h"
#include "eobi_json.h"
#include "eobi_release.h"

#define QTY(n) ((int64_t)(n)*10000) /* a whole 7.0 quantity */

struct raw {
    uint8_t buf[2048];
    size_t len;
    size_t msg; /* start of the message being written */
};

static void put8(struct raw *r, size_t off, uint8_t v)
{
    r->buf[r->msg + off] = v;
}

static void put16(struct raw *r, size_t off, uint16_t v)
{
    tp_eobi_store16(r->buf + r->msg + off, v);
}

static void put32(struct raw *r, size_t off, uint32_t v)
{
    tp_eobi_store32(r->buf + r->msg + off, v);
}

static void put64(struct raw *r, size_t off, uint64_t v)
{
    tp_eobi_store64(r->buf + r->msg + off, v);
}

/* Starts a message of len bytes (header written) at the end of the packet. */
static void begin(struct raw *r, uint16_t template_id, uint16_t len, uint32_t seq)
{
    r->msg = r->len;
    memset(r->buf + r->msg, 0, len);
    put16(r, 0, len);
    put16(r, 2, template_id);
    put32(r, 4, seq);
    r->len += len;
}

/* A PacketHeader (the same in both releases). */
static void packet(struct raw *r, uint64_t appl_seq_num)
{
    r->len = 0;
    begin(r, 13002, 32, TP_EOBI_NO_MSG_SEQ_NUM);
    put64(r, 8, appl_seq_num);
    put32(r, 16, 589);
    put8(r, 20, 3);
    put8(r, 21, 1);
    put64(r, 24, 1700000000000000001ull);
}

/* 7.0 OrderDetailsComp at off. */
static void details(struct raw *r, size_t off, uint64_t prio, int64_t qty, uint8_t side,
                    int64_t price)
{
    put64(r, off, prio);
    put64(r, off + 8, (uint64_t)qty);
    put8(r, off + 16, side);
    put8(r, off + 17, 2);
    put64(r, off + 24, (uint64_t)price);
}

/* The 6.0 form of r: its messages in order (header first). */
struct converted {
    uint8_t buf[2048];
    int len;
    const uint8_t *msg[32];
    unsigned n;
};

static void convert(const struct raw *r, struct converted *c)
{
    c->len = tp_eobi_packet_to_v6(TP_EOBI_RELEASE_7_0, r->buf, r->len, c->buf, sizeof(c->buf));
    assert_true(c->len > 0);
    assert_true((size_t)c->len <= r->len);
    struct tp_eobi_packet p;
    struct tp_eobi_msg m;
    assert_int_equal(tp_eobi_packet_init(&p, c->buf, (size_t)c->len), 0);
    c->msg[0] = c->buf;
    c->n = 1;
    while (tp_eobi_packet_next(&p, &m) == 1) {
        assert_int_equal(tp_eobi_check(m.data, m.len), m.template_id);
        c->msg[c->n++] = m.data;
    }
}

static void test_orders(void **state)
{
    (void)state;
    struct raw r;
    struct converted c;
    packet(&r, 77);
    begin(&r, 13100, 56, 1); /* OrderAdd */
    put64(&r, 8, 111);
    put64(&r, 16, 566988);
    details(&r, 24, 1401710400935584093ull, QTY(25), 1, 996150000000);
    begin(&r, 13101, 80, 2); /* OrderModify */
    put64(&r, 8, 222);
    put64(&r, 16, 1401710400935584093ull);
    put64(&r, 24, 996150000000);
    put64(&r, 32, (uint64_t)QTY(25));
    put64(&r, 40, 566988);
    details(&r, 48, 1401710400999999999ull, QTY(30), 1, 996200000000);
    begin(&r, 13106, 72, 3); /* OrderModifySamePrio */
    put64(&r, 8, 333);
    put64(&r, 16, 444);
    put64(&r, 24, (uint64_t)QTY(30));
    put64(&r, 32, 566988);
    details(&r, 40, 1401710400999999999ull, QTY(12), 1, 996200000000);
    begin(&r, 13102, 64, 4); /* OrderDelete */
    put64(&r, 8, 555);
    put64(&r, 16, 666);
    put64(&r, 24, 566988);
    details(&r, 32, 1401710400999999999ull, QTY(12), 1, 996200000000);
    begin(&r, 13103, 24, 5); /* OrderMassDelete */
    put64(&r, 8, 566989);
    put64(&r, 16, 777);
    convert(&r, &c);
    assert_int_equal(c.n, 6);
    assert_int_equal(tp_eobi_packet_header_appl_seq_num(c.msg[0]), 77);
    assert_int_equal(tp_eobi_packet_header_market_segment_id(c.msg[0]), 589);
    assert_int_equal(tp_eobi_packet_header_completion_indicator(c.msg[0]), 1);

    const uint8_t *m = c.msg[1];
    assert_int_equal(tp_eobi_body_len(m), 48);
    assert_int_equal(tp_eobi_msg_seq_num(m), 1);
    assert_int_equal(tp_eobi_order_add_trd_reg_ts_time_in(m), 111);
    assert_int_equal(tp_eobi_order_add_security_id(m), 566988);
    assert_int_equal(tp_eobi_order_add_trd_reg_ts_time_priority(m), 1401710400935584093ull);
    assert_int_equal(tp_eobi_order_add_display_qty(m), 25);
    assert_int_equal(tp_eobi_order_add_side(m), 1);
    assert_int_equal(tp_eobi_order_add_ord_type(m), 2);
    assert_int_equal(tp_eobi_order_add_price(m), 996150000000);

    m = c.msg[2];
    assert_int_equal(tp_eobi_order_modify_trd_reg_ts_prev_time_priority(m), 1401710400935584093ull);
    assert_int_equal(tp_eobi_order_modify_prev_price(m), 996150000000);
    assert_int_equal(tp_eobi_order_modify_prev_display_qty(m), 25);
    assert_int_equal(tp_eobi_order_modify_security_id(m), 566988);
    assert_int_equal(tp_eobi_order_modify_trd_reg_ts_time_priority(m), 1401710400999999999ull);
    assert_int_equal(tp_eobi_order_modify_display_qty(m), 30);
    assert_int_equal(tp_eobi_order_modify_price(m), 996200000000);

    m = c.msg[3];
    assert_int_equal(tp_eobi_order_modify_same_prio_transact_time(m), 444);
    assert_int_equal(tp_eobi_order_modify_same_prio_prev_display_qty(m), 30);
    assert_int_equal(tp_eobi_order_modify_same_prio_security_id(m), 566988);
    assert_int_equal(tp_eobi_order_modify_same_prio_display_qty(m), 12);
    assert_int_equal(tp_eobi_order_modify_same_prio_price(m), 996200000000);

    m = c.msg[4];
    assert_int_equal(tp_eobi_order_delete_transact_time(m), 666);
    assert_int_equal(tp_eobi_order_delete_security_id(m), 566988);
    assert_int_equal(tp_eobi_order_delete_trd_reg_ts_time_priority(m), 1401710400999999999ull);
    assert_int_equal(tp_eobi_order_delete_side(m), 1);

    m = c.msg[5];
    assert_int_equal(tp_eobi_order_mass_delete_security_id(m), 566989);
    assert_int_equal(tp_eobi_order_mass_delete_transact_time(m), 777);
}

static void test_trades(void **state)
{
    (void)state;
    struct raw r;
    struct converted c;
    packet(&r, 78);
    begin(&r, 13202, 80, 10); /* ExecutionSummary */
    put64(&r, 8, 566988);
    put64(&r, 16, 1001);
    put64(&r, 24, 1002);
    put64(&r, 32, 280384055017473ull);
    put64(&r, 40, (uint64_t)QTY(7));
    put8(&r, 48, 2);
    put8(&r, 49, 1);
    put64(&r, 56, 996150000000);
    put64(&r, 64, (uint64_t)QTY(3));
    put64(&r, 72, (uint64_t)QTY(4));
    begin(&r, 13104, 56, 11); /* FullOrderExecution */
    put8(&r, 8, 1);
    put32(&r, 12, 9001);
    put64(&r, 16, 996150000000);
    put64(&r, 24, 1401710400935584093ull);
    put64(&r, 32, 566988);
    put64(&r, 40, (uint64_t)QTY(5));
    put64(&r, 48, 996150000000);
    begin(&r, 13105, 56, 12); /* PartialOrderExecution */
    put8(&r, 8, 1);
    put32(&r, 12, 9001);
    put64(&r, 16, 996100000000);
    put64(&r, 24, 1401710400935584094ull);
    put64(&r, 32, 566988);
    put64(&r, 40, (uint64_t)QTY(2));
    put64(&r, 48, 996150000000);
    begin(&r, 13201, 48, 13); /* TradeReport */
    put64(&r, 8, 566990);
    put64(&r, 16, 1003);
    put64(&r, 24, (uint64_t)QTY(40));
    put64(&r, 32, 995000000000);
    put32(&r, 40, 9002);
    put8(&r, 44, 5);
    put8(&r, 45, 1);
    convert(&r, &c);
    assert_int_equal(c.n, 5);

    const uint8_t *m = c.msg[1];
    assert_int_equal(tp_eobi_body_len(m), 64);
    assert_int_equal(tp_eobi_execution_summary_security_id(m), 566988);
    assert_int_equal(tp_eobi_execution_summary_aggressor_time(m), 1001);
    assert_int_equal(tp_eobi_execution_summary_request_time(m), 1002);
    assert_int_equal(tp_eobi_execution_summary_exec_id(m), 280384055017473ull);
    assert_int_equal(tp_eobi_execution_summary_last_qty(m), 7);
    assert_int_equal(tp_eobi_execution_summary_aggressor_side(m), 2);
    assert_int_equal(tp_eobi_execution_summary_trade_condition(m), 1);
    assert_int_equal(tp_eobi_execution_summary_last_px(m), 996150000000);
    assert_int_equal(tp_eobi_execution_summary_resting_hidden_qty(m), 3);
    assert_int_equal(tp_eobi_execution_summary_resting_cxl_qty(m), 4);

    m = c.msg[2];
    assert_int_equal(tp_eobi_template_id(m), TP_EOBI_FULL_ORDER_EXECUTION);
    assert_int_equal(tp_eobi_full_order_execution_side(m), 1);
    assert_int_equal(tp_eobi_full_order_execution_trd_match_id(m), 9001);
    assert_int_equal(tp_eobi_full_order_execution_price(m), 996150000000);
    assert_int_equal(tp_eobi_full_order_execution_trd_reg_ts_time_priority(m),
                     1401710400935584093ull);
    assert_int_equal(tp_eobi_full_order_execution_security_id(m), 566988);
    assert_int_equal(tp_eobi_full_order_execution_last_qty(m), 5);
    assert_int_equal(tp_eobi_full_order_execution_last_px(m), 996150000000);

    m = c.msg[3];
    assert_int_equal(tp_eobi_partial_order_execution_price(m), 996100000000);
    assert_int_equal(tp_eobi_partial_order_execution_trd_reg_ts_time_priority(m),
                     1401710400935584094ull);
    assert_int_equal(tp_eobi_partial_order_execution_last_qty(m), 2);

    m = c.msg[4];
    assert_int_equal(tp_eobi_trade_report_security_id(m), 566990);
    assert_int_equal(tp_eobi_trade_report_last_qty(m), 40);
    assert_int_equal(tp_eobi_trade_report_last_px(m), 995000000000);
    assert_int_equal(tp_eobi_trade_report_trd_match_id(m), 9002);
    assert_int_equal(tp_eobi_trade_report_match_type(m), 5);
    assert_int_equal(tp_eobi_trade_report_match_sub_type(m), 1);
}

static void test_states_and_auctions(void **state)
{
    (void)state;
    struct raw r;
    struct converted c;
    packet(&r, 79);
    begin(&r, 13301, 32, 20); /* InstrumentStateChange */
    put64(&r, 8, 566988);
    put8(&r, 16, 1);
    put8(&r, 17, 203);
    put8(&r, 20, 4);
    put8(&r, 21, 1); /* SoldOutIndicator: new in 7.0, not carried */
    put64(&r, 24, 1004);
    begin(&r, 13300, 24, 21); /* ProductStateChange */
    put8(&r, 9, 4);
    put8(&r, 10, 2);
    put64(&r, 16, 1005);
    begin(&r, 13500, 64, 22); /* AuctionBBO */
    put64(&r, 16, 566988);
    put64(&r, 24, 996000000000);
    put64(&r, 32, 996300000000);
    put64(&r, 40, (uint64_t)QTY(11));
    put64(&r, 48, (uint64_t)QTY(13));
    begin(&r, 13501, 56, 23); /* AuctionClearingPrice */
    put64(&r, 16, 566988);
    put64(&r, 24, 996200000000);
    put64(&r, 32, (uint64_t)QTY(17));
    put64(&r, 40, (uint64_t)QTY(-6));
    put8(&r, 48, 205);
    begin(&r, 13001, 16, TP_EOBI_NO_MSG_SEQ_NUM); /* Heartbeat */
    put32(&r, 8, 23);
    convert(&r, &c);
    assert_int_equal(c.n, 6);

    const uint8_t *m = c.msg[1];
    assert_int_equal(tp_eobi_instrument_state_change_security_id(m), 566988);
    assert_int_equal(tp_eobi_instrument_state_change_security_status(m), 1);
    assert_int_equal(tp_eobi_instrument_state_change_security_trading_status(m), 203);
    assert_int_equal(tp_eobi_instrument_state_change_security_trading_event(m), 4);
    assert_int_equal(tp_eobi_instrument_state_change_transact_time(m), 1004);
    assert_int_equal(m[21], 0); /* a 6.0 pad */

    m = c.msg[2];
    assert_int_equal(tp_eobi_product_state_change_trading_session_sub_id(m), 4);
    assert_int_equal(tp_eobi_product_state_change_trad_ses_status(m), 2);
    assert_int_equal(tp_eobi_product_state_change_transact_time(m), 1005);

    m = c.msg[3];
    assert_int_equal(tp_eobi_auction_bbo_security_id(m), 566988);
    assert_int_equal(tp_eobi_auction_bbo_bid_px(m), 996000000000);
    assert_int_equal(tp_eobi_auction_bbo_offer_px(m), 996300000000);
    assert_int_equal(tp_eobi_auction_bbo_bid_size(m), 11);
    assert_int_equal(tp_eobi_auction_bbo_offer_size(m), 13);

    m = c.msg[4];
    assert_int_equal(tp_eobi_auction_clearing_price_last_px(m), 996200000000);
    assert_int_equal(tp_eobi_auction_clearing_price_last_qty(m), 17);
    assert_int_equal(tp_eobi_auction_clearing_price_imbalance_qty(m), -6);
    assert_int_equal(tp_eobi_auction_clearing_price_security_trading_status(m), 205);

    assert_int_equal(tp_eobi_heartbeat_last_msg_seq_num_processed(c.msg[5]), 23);
}

static void test_snapshot(void **state)
{
    (void)state;
    struct raw r;
    struct converted c;
    packet(&r, 80);
    begin(&r, 13600, 24, 1); /* ProductSummary */
    put32(&r, 8, 4321);
    put8(&r, 14, 2);
    begin(&r, 13601, 48 + 2 * 24, 2); /* InstrumentSummary, two entries */
    put64(&r, 8, 566988);
    put64(&r, 16, 1006);
    put64(&r, 24, 1007);
    put16(&r, 32, 1);
    put8(&r, 34, 1);
    put8(&r, 35, 203);
    put8(&r, 39, 1); /* SoldOutIndicator */
    put8(&r, 40, 2); /* NoMDEntries */
    put64(&r, 48, 996150000000);
    put64(&r, 56, (uint64_t)QTY(9));
    put8(&r, 64, 2);
    put8(&r, 65, 1);
    put64(&r, 72, 995000000000);
    put64(&r, 80, (uint64_t)QTY(1000));
    put8(&r, 88, 4);
    begin(&r, 13602, 40, 3); /* SnapshotOrder */
    details(&r, 8, 1401710400935584093ull, QTY(25), 2, 996250000000);
    convert(&r, &c);
    assert_int_equal(c.n, 4);

    assert_int_equal(tp_eobi_product_summary_last_msg_seq_num_processed(c.msg[1]), 4321);
    assert_int_equal(tp_eobi_product_summary_trad_ses_status(c.msg[1]), 2);

    const uint8_t *m = c.msg[2];
    assert_int_equal(tp_eobi_body_len(m), 40 + 2 * 16);
    assert_int_equal(tp_eobi_instrument_summary_security_id(m), 566988);
    assert_int_equal(tp_eobi_instrument_summary_last_update_time(m), 1006);
    assert_int_equal(tp_eobi_instrument_summary_trd_reg_ts_execution_time(m), 1007);
    assert_int_equal(tp_eobi_instrument_summary_tot_no_orders(m), 1);
    assert_int_equal(tp_eobi_instrument_summary_security_trading_status(m), 203);
    assert_int_equal(tp_eobi_instrument_summary_no_md_entries(m), 2);
    assert_int_equal(tp_eobi_md_entry_md_entry_px(tp_eobi_md_entry(m, 0)), 996150000000);
    assert_int_equal(tp_eobi_md_entry_md_entry_size(tp_eobi_md_entry(m, 0)), 9);
    assert_int_equal(tp_eobi_md_entry_md_entry_type(tp_eobi_md_entry(m, 0)), 2);
    assert_int_equal(tp_eobi_md_entry_trade_condition(tp_eobi_md_entry(m, 0)), 1);
    assert_int_equal(tp_eobi_md_entry_md_entry_size(tp_eobi_md_entry(m, 1)), 1000);
    assert_int_equal(tp_eobi_md_entry_md_entry_type(tp_eobi_md_entry(m, 1)), 4);

    m = c.msg[3];
    assert_int_equal(tp_eobi_snapshot_order_trd_reg_ts_time_priority(m), 1401710400935584093ull);
    assert_int_equal(tp_eobi_snapshot_order_display_qty(m), 25);
    assert_int_equal(tp_eobi_snapshot_order_side(m), 2);
    assert_int_equal(tp_eobi_snapshot_order_price(m), 996250000000);

    /* Back to 7.0 (the simulator's way): the same bytes, except what 7.0 added. */
    uint8_t back[4096];
    int n = tp_eobi_packet_from_v6(TP_EOBI_RELEASE_7_0, c.buf, (size_t)c.len, back, sizeof(back));
    assert_int_equal(n, (int)r.len);
    r.buf[32 + 24 + 39] = 0; /* InstrumentSummary's SoldOutIndicator */
    assert_memory_equal(back, r.buf, r.len);
}

/* A 6.0 packet and its 7.0 twin: each is refused by the other release's check. */
static void test_other_release_refused(void **state)
{
    (void)state;
    uint8_t v6[512], v7[1024];
    struct tp_eobi_builder b;
    struct tp_eobi_packet_header h = {.appl_seq_num = 5, .market_segment_id = 589};
    tp_eobi_build_begin(&b, v6, sizeof(v6), &h, 1);
    struct tp_eobi_order_add add = {.security_id = 7,
                                    .trd_reg_ts_time_priority = 99,
                                    .display_qty = 3,
                                    .side = 1,
                                    .price = 100000000};
    assert_true(TP_EOBI_BUILD(&b, order_add, &add) > 0);
    int n7 = tp_eobi_packet_from_v6(TP_EOBI_RELEASE_7_0, v6, b.len, v7, sizeof(v7));
    assert_int_equal(n7, 32 + 56);

    enum tp_eobi_release other = TP_EOBI_RELEASES;
    assert_int_equal(tp_eobi_release_check(TP_EOBI_RELEASE_6_0, v6, b.len, &other), 0);
    assert_int_equal(tp_eobi_release_check(TP_EOBI_RELEASE_7_0, v7, (size_t)n7, &other), 0);
    assert_int_equal(tp_eobi_release_check(TP_EOBI_RELEASE_6_0, v7, (size_t)n7, &other), -EPROTO);
    assert_int_equal(other, TP_EOBI_RELEASE_7_0);
    assert_int_equal(tp_eobi_release_check(TP_EOBI_RELEASE_7_0, v6, b.len, &other), -EPROTO);
    assert_int_equal(other, TP_EOBI_RELEASE_6_0);

    /* The venue pads 6.0 executions to 56 bytes, a 7.0 length: such a packet stays 6.0. */
    uint8_t padded[128];
    tp_eobi_build_begin(&b, padded, sizeof(padded), &h, 1);
    struct tp_eobi_partial_order_execution ex = {.security_id = 7, .last_qty = 1};
    assert_true(TP_EOBI_BUILD(&b, partial_order_execution, &ex) == 52);
    tp_eobi_store16(padded + 32, 56);
    assert_int_equal(tp_eobi_release_check(TP_EOBI_RELEASE_6_0, padded, 32 + 56, &other), 0);
}

static void test_quantities_6_0_cannot_hold(void **state)
{
    (void)state;
    static const int64_t bad[] = {QTY(1) + 5000, QTY(INT32_MAX) + QTY(1), QTY(INT32_MIN)};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct raw r;
        packet(&r, 81);
        begin(&r, 13100, 56, 1);
        details(&r, 24, 99, bad[i], 1, 100000000);
        uint8_t out[256];
        int n = tp_eobi_packet_to_v6(TP_EOBI_RELEASE_7_0, r.buf, r.len, out, sizeof(out));
        assert_int_equal(n, 32 + TP_EOBI_MESSAGE_HEADER_LEN);
        assert_int_equal(tp_eobi_check(out + 32, TP_EOBI_MESSAGE_HEADER_LEN), -EBADMSG);
    }
    /* The null quantity stays null; a message shorter than its 7.0 layout is refused too. */
    struct raw r;
    packet(&r, 82);
    begin(&r, 13100, 56, 1);
    details(&r, 24, 99, INT64_MIN, 1, 100000000);
    begin(&r, 13102, 56, 2); /* a 6.0 length for OrderDelete */
    uint8_t out[256];
    int n = tp_eobi_packet_to_v6(TP_EOBI_RELEASE_7_0, r.buf, r.len, out, sizeof(out));
    assert_int_equal(n, 32 + 48 + TP_EOBI_MESSAGE_HEADER_LEN);
    assert_int_equal(tp_eobi_order_add_display_qty(out + 32), TP_EOBI_QTY_NULL);
    assert_int_equal(tp_eobi_check(out + 80, TP_EOBI_MESSAGE_HEADER_LEN), -EBADMSG);
}

static void test_json_7_0(void **state)
{
    (void)state;
    struct raw r;
    packet(&r, 83);
    begin(&r, 13104, 56, 11);
    put8(&r, 8, 2);
    put32(&r, 12, 9001);
    put64(&r, 16, 996150000000);
    put64(&r, 40, 123456); /* 12.3456: 7.0 quantities may be fractional */
    char out[2048];
    int n = tp_eobi_release_print_json(TP_EOBI_RELEASE_7_0, out, sizeof(out), r.buf + 32, 56);
    assert_true(n > 0 && (size_t)n < sizeof(out));
    assert_non_null(strstr(out, "\"message\":\"FullOrderExecution\",\"bodylen\":56"));
    assert_non_null(strstr(out, "\"side\":2,"));
    assert_non_null(strstr(out, "\"trdmatchid\":9001,\"price\":\"9961.50000000\""));
    assert_non_null(strstr(out, "\"lastqty\":\"12.3456\""));
    assert_null(strstr(out, "truncated"));
    /* The same bytes read as 6.0 are another message: the printers differ. */
    char out6[2048];
    tp_eobi_print_json(out6, sizeof(out6), r.buf + 32, 56);
    assert_null(strstr(out6, "\"trdmatchid\":9001,"));
    assert_int_equal(tp_eobi_release_parse("7.0"), TP_EOBI_RELEASE_7_0);
    assert_int_equal(tp_eobi_release_parse("6.0"), TP_EOBI_RELEASE_6_0);
    assert_int_equal(tp_eobi_release_parse("8.0"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_orders),
        cmocka_unit_test(test_trades),
        cmocka_unit_test(test_states_and_auctions),
        cmocka_unit_test(test_snapshot),
        cmocka_unit_test(test_other_release_refused),
        cmocka_unit_test(test_quantities_6_0_cannot_hold),
        cmocka_unit_test(test_json_7_0),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
