/*
 * test_mdp3_packet.c - MDP 3.0 packet framing: packets built with the writer and the generated
 * encoders are iterated back; every malformed MsgSize is reported with its offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "mdp3_packet.h"

/* A packet: seq 1028095, a heartbeat, a book update with 2 entries, a channel reset. */
static size_t build_packet(uint8_t *buf, size_t cap)
{
    struct tp_mdp3_writer w;
    size_t room;
    uint8_t *p;
    assert_int_equal(tp_mdp3_writer_init(&w, buf, cap, 1028095, 1536760535685381248ULL), 0);

    struct mktdata_admin_heartbeat12 hb;
    p = tp_mdp3_writer_reserve(&w, &room);
    assert_non_null(p);
    assert_int_equal(mktdata_admin_heartbeat12_wrap_and_apply_header(&hb, p, room), 0);
    assert_int_equal(tp_mdp3_writer_commit(&w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                                   mktdata_admin_heartbeat12_encoded_length(&hb)),
                     0);

    struct mktdata_md_incremental_refresh_book46 m;
    p = tp_mdp3_writer_reserve(&w, &room);
    assert_non_null(p);
    assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_and_apply_header(&m, p, room), 0);
    mktdata_md_incremental_refresh_book46_set_transact_time(&m, 1536760535644820404ULL);
    mktdata_md_incremental_refresh_book46_set_match_event_indicator(
        &m, MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT);
    struct mktdata_md_incremental_refresh_book46_no_md_entries g;
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_encode(&m, &g, 2),
                     0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_next(&g), 0);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_entry_px_mantissa(
            &g, 4500250000000LL + i * 250000000LL);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_security_id(&g, 5893);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_rpt_seq(&g, 100 + (uint32_t)i);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_price_level(&g,
                                                                               (uint8_t)(1 + i));
    }
    struct mktdata_md_incremental_refresh_book46_no_order_id_entries o;
    assert_int_equal(
        mktdata_md_incremental_refresh_book46_no_order_id_entries_wrap_for_encode(&m, &o, 0), 0);
    assert_int_equal(
        tp_mdp3_writer_commit(&w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                      mktdata_md_incremental_refresh_book46_encoded_length(&m)),
        0);

    struct mktdata_channel_reset4 r;
    p = tp_mdp3_writer_reserve(&w, &room);
    assert_non_null(p);
    assert_int_equal(mktdata_channel_reset4_wrap_and_apply_header(&r, p, room), 0);
    mktdata_channel_reset4_set_transact_time(&r, 7);
    struct mktdata_channel_reset4_no_md_entries rg;
    assert_int_equal(mktdata_channel_reset4_no_md_entries_wrap_for_encode(&r, &rg, 1), 0);
    assert_int_equal(mktdata_channel_reset4_no_md_entries_next(&rg), 0);
    mktdata_channel_reset4_no_md_entries_set_appl_id(&rg, 310);
    assert_int_equal(tp_mdp3_writer_commit(&w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                                   mktdata_channel_reset4_encoded_length(&r)),
                     0);
    return w.len;
}

static void test_round_trip(void **state)
{
    (void)state;
    uint8_t buf[1500];
    size_t len = build_packet(buf, sizeof(buf));
    /* header 12, heartbeat 2+8, book 2+8+11+3+2*32+8, reset 2+8+9+3+2 */
    assert_int_equal(len, 12 + 10 + 96 + 24);

    struct tp_mdp3_packet p;
    struct tp_mdp3_msg m;
    assert_int_equal(tp_mdp3_packet_init(&p, buf, len), 0);
    assert_int_equal(p.seq, 1028095);
    assert_true(p.sending_time == 1536760535685381248ULL);

    assert_int_equal(tp_mdp3_packet_next(&p, &m), 1);
    assert_int_equal(m.offset, 12);
    assert_int_equal(m.size, 10);
    assert_int_equal(m.template_id, 12);
    assert_int_equal(m.schema_id, 1);
    assert_int_equal(m.version, 9);
    assert_int_equal(m.body_len, 0);
    char out[1024];
    assert_int_equal(tp_mdp3_msg_print_json(&m, out, sizeof(out)), 2);
    assert_string_equal(out, "{}");

    assert_int_equal(tp_mdp3_packet_next(&p, &m), 1);
    assert_int_equal(m.offset, 22);
    assert_int_equal(m.size, 96);
    assert_int_equal(m.template_id, 46);
    assert_int_equal(m.block_length, 11);
    assert_int_equal(m.body_len, 86);
    struct mktdata_md_incremental_refresh_book46 book;
    assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_for_decode(
                         &book, m.body, m.body_len, m.block_length, m.version),
                     0);
    struct mktdata_md_incremental_refresh_book46_no_md_entries g;
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_decode(&book, &g),
                     0);
    assert_int_equal(g.count, 2);
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_next(&g), 0);
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_next(&g), 0);
    assert_true(mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_px_mantissa(&g) ==
                4500500000000LL);
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_rpt_seq(&g), 101);
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_md_price_level(&g), 2);
    int n = tp_mdp3_msg_print_json(&m, out, sizeof(out));
    assert_true(n > 0 && strstr(out, "\"RptSeq\":101") != NULL);

    assert_int_equal(tp_mdp3_packet_next(&p, &m), 1);
    assert_int_equal(m.offset, 118);
    assert_int_equal(m.template_id, 4);
    assert_int_equal(tp_mdp3_msg_print_json(&m, out, sizeof(out)) > 0, 1);
    assert_non_null(strstr(out, "\"ApplID\":310"));
    assert_non_null(strstr(out, "\"MDEntryType\":\"J\""));

    assert_int_equal(tp_mdp3_packet_next(&p, &m), 0);
    assert_int_equal(tp_mdp3_packet_next(&p, &m), 0);
}

/* Frames the packet in an exactly-sized heap copy; returns messages before the error or end. */
static int frame(const uint8_t *data, size_t len, int *rc_out, size_t *error_offset)
{
    uint8_t *copy = malloc(len ? len : 1);
    assert_non_null(copy);
    memcpy(copy, data, len);
    struct tp_mdp3_packet p;
    struct tp_mdp3_msg m;
    int count = 0, rc;
    if (tp_mdp3_packet_init(&p, copy, len) < 0) {
        free(copy);
        *rc_out = -EBADMSG;
        *error_offset = 0;
        return 0;
    }
    while ((rc = tp_mdp3_packet_next(&p, &m)) == 1)
        count++;
    *rc_out = rc;
    *error_offset = p.error_offset;
    free(copy);
    return count;
}

static void test_malformed_sizes(void **state)
{
    (void)state;
    uint8_t buf[1500];
    size_t len = build_packet(buf, sizeof(buf));
    int rc;
    size_t off;

    assert_int_equal(frame(buf, 11, &rc, &off), 0);
    assert_int_equal(rc, -EBADMSG);
    assert_int_equal(frame(buf, 12, &rc, &off), 0); /* a packet with no messages */
    assert_int_equal(rc, 0);

    /* every truncation inside a message: the whole messages before it, then an error there */
    static const size_t starts[] = {12, 22, 118, 142};
    for (size_t cut = 13; cut < len; cut++) {
        int whole = 0;
        while (starts[whole + 1] <= cut)
            whole++;
        int n = frame(buf, cut, &rc, &off);
        if (cut == starts[whole]) {
            assert_int_equal(rc, 0);
            assert_int_equal(n, whole);
        } else {
            assert_int_equal(rc, -EBADMSG);
            assert_int_equal(n, whole);
            assert_int_equal(off, starts[whole]);
        }
    }

    /* MsgSize smaller than MsgSize + SBE header, and MsgSize past the end */
    uint8_t bad[1500];
    memcpy(bad, buf, len);
    bad[22] = 9;
    bad[23] = 0;
    assert_int_equal(frame(bad, len, &rc, &off), 1);
    assert_int_equal(rc, -EBADMSG);
    assert_int_equal(off, 22);
    bad[22] = 0xFF;
    bad[23] = 0x7F;
    assert_int_equal(frame(bad, len, &rc, &off), 1);
    assert_int_equal(off, 22);

    /* a body whose group count lies: framing is fine, the decoder refuses it */
    memcpy(bad, buf, len);
    bad[22 + 2 + 8 + 11 + 2] = 3; /* numInGroup 3, 2 entries in the message */
    struct tp_mdp3_packet p;
    struct tp_mdp3_msg m;
    assert_int_equal(tp_mdp3_packet_init(&p, bad, len), 0);
    assert_int_equal(tp_mdp3_packet_next(&p, &m), 1);
    assert_int_equal(tp_mdp3_packet_next(&p, &m), 1);
    char out[1024];
    assert_int_equal(tp_mdp3_msg_print_json(&m, out, sizeof(out)), -EBADMSG);
    m.schema_id = 2;
    assert_int_equal(tp_mdp3_msg_print_json(&m, out, sizeof(out)), -EPROTO);
    m.schema_id = 1;
    m.template_id = 9999;
    assert_int_equal(tp_mdp3_msg_print_json(&m, out, sizeof(out)), -ENOENT);
}

/*
 * Walks a packet with the checked iterator and, over tp_mdp3_packet_framed_len's bytes, with the
 * unchecked one: both must return the very same messages. True when the checked walk ends
 * without error (the whole packet frames).
 */
static bool walks_whole(const uint8_t *buf, size_t len)
{
    struct tp_mdp3_packet a, b;
    struct tp_mdp3_msg ma, mb;
    int ra;
    size_t whole = tp_mdp3_packet_framed_len(buf, len);
    if (tp_mdp3_packet_init(&a, buf, len) != 0) {
        assert_int_equal(whole, 0);
        return false;
    }
    assert_int_equal(tp_mdp3_packet_init(&b, buf, whole), 0);
    while ((ra = tp_mdp3_packet_next(&a, &ma)) == 1) {
        assert_int_equal(tp_mdp3_packet_next_framed(&b, &mb), 1);
        assert_int_equal(ma.offset, mb.offset);
        assert_int_equal(ma.size, mb.size);
        assert_int_equal(ma.block_length, mb.block_length);
        assert_int_equal(ma.template_id, mb.template_id);
        assert_int_equal(ma.schema_id, mb.schema_id);
        assert_int_equal(ma.version, mb.version);
        assert_ptr_equal(ma.body, mb.body);
        assert_int_equal(ma.body_len, mb.body_len);
    }
    assert_int_equal(tp_mdp3_packet_next_framed(&b, &mb), 0);
    /* A malformed message: the unchecked walk stopped where the checked one failed. */
    assert_int_equal(whole, ra == 0 ? len : a.error_offset);
    return ra == 0;
}

/*
 * tp_mdp3_packet_frames accepts exactly the packets the checked iterator walks whole, and
 * tp_mdp3_packet_next_framed over tp_mdp3_packet_framed_len's bytes returns the very messages
 * tp_mdp3_packet_next does, stopping where it fails (every truncation, every value of each
 * MsgSize byte).
 */
static void test_frames_and_next_framed(void **state)
{
    (void)state;
    uint8_t buf[1500];
    size_t len = build_packet(buf, sizeof(buf));
    static const size_t starts[] = {12, 22, 118, 142};
    int accepted = 0;

    for (size_t cut = 0; cut <= len; cut++) {
        assert_int_equal(tp_mdp3_packet_frames(buf, cut), walks_whole(buf, cut));
        accepted += tp_mdp3_packet_frames(buf, cut);
    }
    assert_int_equal(accepted, 4); /* the header alone and after each of the 3 messages */
    uint8_t bad[1500];
    for (size_t s = 1; s < sizeof(starts) / sizeof(starts[0]); s++)
        for (int byte = 0; byte < 2; byte++)
            for (int v = 0; v < 256; v++) {
                memcpy(bad, buf, len);
                bad[starts[s] + (size_t)byte] = (uint8_t)v;
                assert_int_equal(tp_mdp3_packet_frames(bad, len), walks_whole(bad, len));
            }

    assert_true(walks_whole(buf, len));
}

static void test_writer_limits(void **state)
{
    (void)state;
    uint8_t buf[40];
    struct tp_mdp3_writer w;
    size_t room;
    assert_int_equal(tp_mdp3_writer_init(&w, buf, 11, 1, 2), -ENOSPC);
    assert_int_equal(tp_mdp3_writer_init(&w, buf, sizeof(buf), 1, 2), 0);
    uint8_t *p = tp_mdp3_writer_reserve(&w, &room);
    assert_ptr_equal(p, buf + 14);
    assert_int_equal(room, 26);
    struct mktdata_channel_reset4 r;
    assert_int_equal(mktdata_channel_reset4_wrap_and_apply_header(&r, p, room), 0);
    struct mktdata_channel_reset4_no_md_entries g;
    /* 26 - 8 = 18 bytes for the body: root 9, dimension 3, room for 3 entries of 2 */
    assert_int_equal(mktdata_channel_reset4_no_md_entries_wrap_for_encode(&r, &g, 4), -ENOSPC);
    assert_int_equal(mktdata_channel_reset4_no_md_entries_wrap_for_encode(&r, &g, 3), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(mktdata_channel_reset4_no_md_entries_next(&g), 0);
    assert_int_equal(mktdata_channel_reset4_no_md_entries_next(&g), -ERANGE);
    assert_int_equal(mktdata_channel_reset4_encoded_length(&r), 18);
    assert_int_equal(tp_mdp3_writer_commit(&w, 27), -ENOSPC);
    assert_int_equal(tp_mdp3_writer_commit(&w, 70000), -EMSGSIZE);
    assert_int_equal(tp_mdp3_writer_commit(&w, 8 + 9 + 3 + 6), 0);
    assert_null(tp_mdp3_writer_reserve(&w, &room));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_malformed_sizes),
        cmocka_unit_test(test_frames_and_next_framed),
        cmocka_unit_test(test_writer_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
