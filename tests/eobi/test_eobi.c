/*
 * test_eobi.c - EOBI 6.0 layouts, writers and readers, and the framing of hostile bytes: cut
 * packets, lengths beyond the buffer, zero lengths, unknown templates, messages shorter than
 * their layout. Every buffer is exactly as long as the bytes under test (heap, so ASan sees a
 * read one past the end).
 */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "eobi_json.h"

#define PACKET_MAX 1500

/* A packet under construction: header, then messages appended. */
struct builder {
    uint8_t buf[PACKET_MAX];
    size_t len;
};

static void builder_init(struct builder *b, uint64_t appl_seq_num)
{
    struct tp_eobi_packet_header h = {.appl_seq_num = appl_seq_num,
                                      .market_segment_id = 589,
                                      .partition_id = 3,
                                      .completion_indicator = 1,
                                      .appl_seq_reset_indicator = 0,
                                      .transact_time = 1700000000123456789ull};
    b->len =
        (size_t)tp_eobi_packet_header_encode(b->buf, sizeof(b->buf), &h, TP_EOBI_NO_MSG_SEQ_NUM);
    assert_int_equal(b->len, TP_EOBI_PACKET_HEADER_LEN);
}

static void add_order(struct builder *b, uint32_t seq, int64_t price)
{
    struct tp_eobi_order_add a = {.trd_reg_ts_time_in = 11,
                                  .security_id = 2049587,
                                  .trd_reg_ts_time_priority = 1700000000000000001ull + seq,
                                  .display_qty = 25,
                                  .side = 1,
                                  .ord_type = 2,
                                  .price = price};
    int n = tp_eobi_order_add_encode(b->buf + b->len, sizeof(b->buf) - b->len, &a, seq);
    assert_int_equal(n, 48);
    b->len += (size_t)n;
}

static void add_raw(struct builder *b, uint16_t body_len, uint16_t template_id, size_t bytes)
{
    assert_true(b->len + bytes <= sizeof(b->buf) && bytes >= 4);
    memset(b->buf + b->len, 0xA5, bytes);
    tp_eobi_store16(b->buf + b->len, body_len);
    tp_eobi_store16(b->buf + b->len + 2, template_id);
    b->len += bytes;
}

/* A heap copy of exactly len bytes. */
static uint8_t *exact(const uint8_t *bytes, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    assert_non_null(p);
    memcpy(p, bytes, len);
    return p;
}

/* Frames a packet; returns how many messages came out, *rc the last result. */
static unsigned frame_all(const uint8_t *data, size_t len, int *rc, size_t *error_offset)
{
    struct tp_eobi_packet p;
    struct tp_eobi_msg m = {0};
    unsigned n = 0;
    *rc = tp_eobi_packet_init(&p, data, len);
    if (*rc < 0)
        return 0;
    while ((*rc = tp_eobi_packet_next(&p, &m)) == 1) {
        assert_true(m.offset + m.len <= len);
        assert_true(m.len >= TP_EOBI_MESSAGE_HEADER_LEN);
        n++;
    }
    *error_offset = p.error_offset;
    return n;
}

/* Every field starts where the one before ends: from the header to the layout length. */
static void test_layouts_are_contiguous(void **state)
{
    (void)state;
    size_t count;
    const struct tp_eobi_message_info *infos = tp_eobi_message_infos(&count);
    assert_int_equal(count, 21);
    for (size_t i = 0; i < count; i++) {
        unsigned at = TP_EOBI_MESSAGE_HEADER_LEN;
        for (unsigned f = 0; f < infos[i].nfields; f++) {
            if (infos[i].fields[f].offset != at)
                fail_msg("%s.%s at %u, expected %u", infos[i].name, infos[i].fields[f].name,
                         infos[i].fields[f].offset, at);
            at += infos[i].fields[f].width;
        }
        assert_int_equal(at, infos[i].length);
        assert_int_equal(tp_eobi_layout_length(infos[i].template_id), infos[i].length);
    }
    const struct tp_eobi_field_info *entry = tp_eobi_md_entry_fields(&count);
    unsigned at = 0;
    for (size_t f = 0; f < count; f++) {
        assert_int_equal(entry[f].offset, at);
        at += entry[f].width;
    }
    assert_int_equal(at, TP_EOBI_MD_ENTRY_LEN);
}

static void test_packet_round_trip(void **state)
{
    (void)state;
    struct builder b;
    builder_init(&b, 77000000001ull);
    add_order(&b, 500, 996150000000);
    struct tp_eobi_execution_summary es = {.security_id = 2049587,
                                           .aggressor_time = 5,
                                           .request_time = 6,
                                           .exec_id = 7,
                                           .last_qty = -3,
                                           .aggressor_side = 2,
                                           .trade_condition = 0xFF,
                                           .last_px = -1050000000,
                                           .resting_hidden_qty = TP_EOBI_QTY_NULL,
                                           .resting_cxl_qty = 9};
    b.len +=
        (size_t)tp_eobi_execution_summary_encode(b.buf + b.len, sizeof(b.buf) - b.len, &es, 501);
    uint8_t *data = exact(b.buf, b.len);

    struct tp_eobi_packet p;
    assert_int_equal(tp_eobi_packet_init(&p, data, b.len), 0);
    assert_int_equal(tp_eobi_packet_header_appl_seq_num(data), 77000000001ull);
    assert_int_equal(tp_eobi_packet_header_market_segment_id(data), 589);
    assert_int_equal(tp_eobi_packet_header_partition_id(data), 3);
    assert_int_equal(tp_eobi_packet_header_completion_indicator(data), 1);
    assert_int_equal(tp_eobi_packet_header_transact_time(data), 1700000000123456789ull);

    struct tp_eobi_msg m = {0};
    assert_int_equal(tp_eobi_packet_next(&p, &m), 1);
    assert_int_equal(m.template_id, TP_EOBI_ORDER_ADD);
    assert_int_equal(m.msg_seq_num, 500);
    assert_int_equal(tp_eobi_check(m.data, m.len), TP_EOBI_ORDER_ADD);
    assert_int_equal(tp_eobi_order_add_security_id(m.data), 2049587);
    assert_int_equal(tp_eobi_order_add_display_qty(m.data), 25);
    assert_int_equal(tp_eobi_order_add_side(m.data), 1);
    assert_int_equal(tp_eobi_order_add_ord_type(m.data), 2);
    assert_int_equal(tp_eobi_order_add_price(m.data), 996150000000);
    assert_int_equal(tp_eobi_price_to_p9(tp_eobi_order_add_price(m.data)), 9961500000000);
    assert_int_equal(tp_eobi_order_add_trd_reg_ts_time_priority(m.data), 1700000000000000501ull);

    assert_int_equal(tp_eobi_packet_next(&p, &m), 1);
    assert_int_equal(tp_eobi_check(m.data, m.len), TP_EOBI_EXECUTION_SUMMARY);
    assert_int_equal(tp_eobi_execution_summary_last_qty(m.data), -3);
    assert_int_equal(tp_eobi_execution_summary_last_px(m.data), -1050000000);
    assert_int_equal(tp_eobi_execution_summary_resting_hidden_qty(m.data), TP_EOBI_QTY_NULL);
    assert_int_equal(tp_eobi_execution_summary_resting_cxl_qty(m.data), 9);
    assert_int_equal(tp_eobi_execution_summary_trade_condition(m.data), 0xFF);
    char json[1024];
    int n = tp_eobi_print_json(json, sizeof(json), m.data, m.len);
    assert_true(n > 0 && (size_t)n < sizeof(json));
    assert_non_null(strstr(json, "\"lastpx\":\"-10.50000000\",\"lastpx_p9\":-10500000000"));
    assert_non_null(strstr(json, "\"restinghiddenqty\":-2147483648"));
    assert_null(strstr(json, "truncated"));

    assert_int_equal(tp_eobi_packet_next(&p, &m), 0);
    free(data);
}

static void test_instrument_summary_entries(void **state)
{
    (void)state;
    uint8_t buf[256];
    struct tp_eobi_instrument_summary s = {
        .security_id = 1, .tot_no_orders = 2, .security_trading_status = 203};
    size_t len = (size_t)tp_eobi_instrument_summary_encode(buf, sizeof(buf), &s, 9);
    assert_int_equal(len, 40);
    struct tp_eobi_md_entry e = {.md_entry_px = TP_EOBI_PRICE_NULL,
                                 .md_entry_size = 4,
                                 .md_entry_type = 2,
                                 .trade_condition = 1};
    assert_int_equal(tp_eobi_md_entry_encode(buf, sizeof(buf), &len, &e), 0);
    e.md_entry_px = 150000000;
    assert_int_equal(tp_eobi_md_entry_encode(buf, sizeof(buf), &len, &e), 0);
    assert_int_equal(len, 72);
    assert_int_equal(tp_eobi_body_len(buf), 72);
    uint8_t *msg = exact(buf, len);
    assert_int_equal(tp_eobi_check(msg, len), TP_EOBI_INSTRUMENT_SUMMARY);
    assert_int_equal(tp_eobi_instrument_summary_no_md_entries(msg), 2);
    assert_int_equal(tp_eobi_md_entry_md_entry_px(tp_eobi_md_entry(msg, 1)), 150000000);
    char json[1024];
    int n = tp_eobi_print_json(json, sizeof(json), msg, len);
    assert_true(n > 0 && (size_t)n < sizeof(json));
    assert_non_null(strstr(json, "\"mdentrypx\":null,\"mdentrypx_p9\":null"));
    assert_non_null(strstr(json, "\"index\":2,\"mdentrypx\":\"1.50000000\""));
    free(msg);

    /* NoMDEntries claims a third entry the BodyLen does not hold. */
    buf[39] = 3;
    msg = exact(buf, len);
    assert_int_equal(tp_eobi_check(msg, len), -EBADMSG);
    n = tp_eobi_print_json(json, sizeof(json), msg, len);
    assert_true(n > 0 && strstr(json, "\"truncated\":true") != NULL);
    free(msg);
}

static void test_bad_packet_headers(void **state)
{
    (void)state;
    struct builder b;
    builder_init(&b, 1);
    int rc;
    size_t at;
    for (size_t len = 0; len < TP_EOBI_PACKET_HEADER_LEN; len++) {
        uint8_t *d = exact(b.buf, len);
        assert_int_equal(frame_all(d, len, &rc, &at), 0);
        assert_int_equal(rc, -EBADMSG);
        free(d);
    }
    uint8_t *d = exact(b.buf, b.len);
    assert_int_equal(frame_all(d, b.len, &rc, &at), 0); /* a header alone: no messages */
    assert_int_equal(rc, 0);
    tp_eobi_store16(d + 2, TP_EOBI_HEARTBEAT); /* not a PacketHeader */
    assert_int_equal(frame_all(d, b.len, &rc, &at), 0);
    assert_int_equal(rc, -EBADMSG);
    tp_eobi_store16(d + 2, TP_EOBI_PACKET_HEADER);
    tp_eobi_store16(d, 33); /* header longer than the packet */
    assert_int_equal(frame_all(d, b.len, &rc, &at), 0);
    assert_int_equal(rc, -EBADMSG);
    tp_eobi_store16(d, 24); /* shorter than the 6.0 header */
    assert_int_equal(frame_all(d, b.len, &rc, &at), 0);
    assert_int_equal(rc, -EBADMSG);
    free(d);
}

/* A packet cut at every length frames the messages wholly inside and refuses the cut one. */
static void test_cut_packets(void **state)
{
    (void)state;
    struct builder b;
    builder_init(&b, 1);
    add_order(&b, 1, 100);
    add_order(&b, 2, 200);
    add_order(&b, 3, 300);
    for (size_t len = TP_EOBI_PACKET_HEADER_LEN; len <= b.len; len++) {
        uint8_t *d = exact(b.buf, len);
        int rc;
        size_t at = 0;
        unsigned whole = (unsigned)((len - TP_EOBI_PACKET_HEADER_LEN) / 48);
        unsigned n = frame_all(d, len, &rc, &at);
        assert_int_equal(n, whole);
        bool clean = (len - TP_EOBI_PACKET_HEADER_LEN) % 48 == 0;
        assert_int_equal(rc, clean ? 0 : -EBADMSG);
        if (!clean)
            assert_int_equal(at, TP_EOBI_PACKET_HEADER_LEN + 48 * whole);
        free(d);
    }
}

static void test_lying_lengths(void **state)
{
    (void)state;
    static const struct {
        uint16_t body_len;
        size_t bytes;
    } cases[] = {
        {0, 8},      /* zero: would never advance */
        {7, 8},      /* below a message header */
        {9, 8},      /* one past the buffer */
        {60000, 48}, /* far past the buffer */
        {8, 6},      /* fewer bytes left than a message header */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct builder b;
        builder_init(&b, 1);
        add_order(&b, 1, 100);
        add_raw(&b, cases[i].body_len, TP_EOBI_ORDER_ADD, cases[i].bytes);
        uint8_t *d = exact(b.buf, b.len);
        int rc;
        size_t at = 0;
        assert_int_equal(frame_all(d, b.len, &rc, &at), 1);
        assert_int_equal(rc, -EBADMSG);
        assert_int_equal(at, TP_EOBI_PACKET_HEADER_LEN + 48);
        free(d);
    }
}

static void test_unknown_and_short_messages(void **state)
{
    (void)state;
    struct builder b;
    builder_init(&b, 1);
    add_raw(&b, 24, 13400, 24);             /* AddComplexInstrument: not decoded */
    add_raw(&b, 40, TP_EOBI_ORDER_ADD, 40); /* 8 bytes short of its layout */
    add_raw(&b, 56, TP_EOBI_ORDER_ADD, 56); /* 8 bytes of venue padding past the layout */
    add_raw(&b, 8, TP_EOBI_HEARTBEAT, 8);   /* a header without its body */
    uint8_t *d = exact(b.buf, b.len);
    struct tp_eobi_packet p;
    struct tp_eobi_msg m = {0};
    assert_int_equal(tp_eobi_packet_init(&p, d, b.len), 0);
    static const int want[] = {-ENOMSG, -EBADMSG, TP_EOBI_ORDER_ADD, -EBADMSG};
    char json[1024];
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(tp_eobi_packet_next(&p, &m), 1);
        /* each message in its own exact buffer: the printer must not read past BodyLen */
        uint8_t *msg = exact(m.data, m.len);
        assert_int_equal(tp_eobi_check(msg, m.len), want[i]);
        int n = tp_eobi_print_json(json, sizeof(json), msg, m.len);
        if (want[i] == -ENOMSG) {
            assert_int_equal(n, -ENOMSG);
        } else {
            assert_true(n > 0 && (size_t)n < sizeof(json));
            assert_int_equal(strstr(json, "\"truncated\":true") != NULL, want[i] == -EBADMSG);
        }
        free(msg);
    }
    assert_int_equal(tp_eobi_packet_next(&p, &m), 0);
    /* a length that disagrees with the BodyLen is refused before anything is read */
    assert_int_equal(tp_eobi_check(d + TP_EOBI_PACKET_HEADER_LEN + 64, 48), -EBADMSG);
    assert_int_equal(tp_eobi_print_json(json, sizeof(json), d + TP_EOBI_PACKET_HEADER_LEN, 3),
                     -EBADMSG);
    free(d);
}

static void test_price_conversion_saturates(void **state)
{
    (void)state;
    assert_int_equal(tp_eobi_price_to_p9(-1000000000), -10000000000);
    assert_int_equal(tp_eobi_price_to_p9(INT64_MAX / 10 + 1), INT64_MAX);
    assert_int_equal(tp_eobi_price_to_p9(INT64_MIN / 10 - 1), INT64_MIN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layouts_are_contiguous),
        cmocka_unit_test(test_packet_round_trip),
        cmocka_unit_test(test_instrument_summary_entries),
        cmocka_unit_test(test_bad_packet_headers),
        cmocka_unit_test(test_cut_packets),
        cmocka_unit_test(test_lying_lengths),
        cmocka_unit_test(test_unknown_and_short_messages),
        cmocka_unit_test(test_price_conversion_saturates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
