/*
 * test_moldudp64.c - MoldUDP64 packets (framing, control packets, lies) and BinaryFILE framing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "binaryfile.h"
#include "itch50.h"
#include "moldudp64.h"

static const char session[TP_MOLD_SESSION_LEN + 1] = "000010059B";

/* Three ITCH messages of different lengths: system event, add order, order delete. */
static size_t make_messages(uint8_t msgs[3][TP_ITCH_MAX_MESSAGE_LEN], uint16_t lens[3])
{
    struct tp_itch_system_event s = {.timestamp = 1, .event_code = 'O'};
    struct tp_itch_add_order a = {.stock_locate = 2, .order_ref = 77, .side = 'S', .price = 1};
    tp_itch_alpha_set(a.stock, sizeof(a.stock), "META");
    struct tp_itch_order_delete d = {.stock_locate = 2, .order_ref = 77};
    lens[0] = (uint16_t)tp_itch_system_event_encode(msgs[0], TP_ITCH_MAX_MESSAGE_LEN, &s);
    lens[1] = (uint16_t)tp_itch_add_order_encode(msgs[1], TP_ITCH_MAX_MESSAGE_LEN, &a);
    lens[2] = (uint16_t)tp_itch_order_delete_encode(msgs[2], TP_ITCH_MAX_MESSAGE_LEN, &d);
    return 3;
}

/* A packet of the three messages starting at sequence 1000; returns its length. */
static size_t make_packet(uint8_t *buf, size_t cap)
{
    uint8_t msgs[3][TP_ITCH_MAX_MESSAGE_LEN];
    uint16_t lens[3];
    make_messages(msgs, lens);
    struct tp_mold_writer w;
    assert_int_equal(tp_mold_writer_init(&w, buf, cap, session, 1000), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tp_mold_writer_add(&w, msgs[i], lens[i]), 0);
    return w.len;
}

static void test_packet_round_trip(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t len = make_packet(buf, sizeof(buf));
    assert_int_equal(len, 20 + 3 * 2 + 12 + 36 + 19);
    assert_memory_equal(buf, session, 10);
    assert_int_equal(buf[18], 0);
    assert_int_equal(buf[19], 3);

    struct tp_mold_packet p = {0};
    assert_int_equal(tp_mold_parse(&p, buf, len), TP_MOLD_MESSAGES);
    assert_int_equal(p.sequence, 1000);
    assert_int_equal(p.count, 3);
    assert_memory_equal(p.session, session, 10);
    static const char types[] = "SAD";
    const uint8_t *msg = NULL;
    uint16_t mlen = 0;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(tp_mold_next(&p, &msg, &mlen), 1);
        assert_int_equal(msg[0], types[i]);
        assert_int_equal(tp_itch_check(msg, mlen), types[i]);
        assert_int_equal(p.sequence + p.index - 1, 1000 + i);
    }
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), 0);
    assert_int_equal(tp_mold_offset(&p), len);
}

static void test_control_packets(void **state)
{
    (void)state;
    uint8_t buf[64];
    const uint8_t *msg = NULL;
    uint16_t mlen = 0;
    struct tp_mold_packet p = {0};
    assert_int_equal(tp_mold_encode_control(buf, sizeof(buf), session, 55, 0), 20);
    assert_int_equal(tp_mold_parse(&p, buf, 20), TP_MOLD_HEARTBEAT);
    assert_int_equal(p.sequence, 55);
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), 0);
    assert_int_equal(tp_mold_parse(&p, buf, 22), -EBADMSG); /* heartbeat with bytes */

    assert_int_equal(tp_mold_encode_control(buf, sizeof(buf), session, 56, 0xFFFF), 20);
    assert_int_equal(tp_mold_parse(&p, buf, 20), TP_MOLD_END);
    assert_int_equal(p.count, TP_MOLD_END_OF_SESSION);
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), 0);
    assert_int_equal(tp_mold_parse(&p, buf, 21), -EBADMSG);
    assert_int_equal(tp_mold_encode_control(buf, 19, session, 56, 0), -ENOSPC);
}

static void test_short_header(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t len = make_packet(buf, sizeof(buf));
    (void)len;
    struct tp_mold_packet p = {0};
    for (size_t n = 0; n < TP_MOLD_HEADER_LEN; n++) {
        uint8_t *copy = malloc(n ? n : 1); /* exact size so ASan catches any over-read */
        memcpy(copy, buf, n);
        assert_int_equal(tp_mold_parse(&p, copy, n), -EBADMSG);
        free(copy);
    }
}

/* Every cut of a valid packet: full messages before the cut come out, then -EBADMSG. */
static void test_truncated_packets(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t len = make_packet(buf, sizeof(buf));
    size_t ends[3] = {20 + 2 + 12, 20 + 4 + 12 + 36, len};
    for (size_t n = TP_MOLD_HEADER_LEN; n < len; n++) {
        uint8_t *copy = malloc(n);
        memcpy(copy, buf, n);
        struct tp_mold_packet p = {0};
        assert_int_equal(tp_mold_parse(&p, copy, n), TP_MOLD_MESSAGES);
        int expect_ok = 0;
        for (int i = 0; i < 3; i++)
            expect_ok += ends[i] <= n;
        const uint8_t *msg = NULL;
        uint16_t mlen = 0;
        int got = 0, rc;
        while ((rc = tp_mold_next(&p, &msg, &mlen)) == 1) {
            assert_true(msg + mlen <= copy + n);
            got++;
        }
        assert_int_equal(got, expect_ok);
        assert_int_equal(rc, -EBADMSG);
        free(copy);
    }
}

static void test_lying_count_and_lengths(void **state)
{
    (void)state;
    uint8_t buf[256];
    size_t len = make_packet(buf, sizeof(buf));
    struct tp_mold_packet p = {0};
    const uint8_t *msg = NULL;
    uint16_t mlen = 0;

    /* Count claims 4 blocks; only 3 are there. */
    buf[19] = 4;
    assert_int_equal(tp_mold_parse(&p, buf, len), TP_MOLD_MESSAGES);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tp_mold_next(&p, &msg, &mlen), 1);
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), -EBADMSG);
    assert_int_equal(tp_mold_offset(&p), len);

    /* Count claims 2 blocks; a third follows (trailing bytes). */
    buf[19] = 2;
    assert_int_equal(tp_mold_parse(&p, buf, len), TP_MOLD_MESSAGES);
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), 1);
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), 1);
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), -EBADMSG);
    buf[19] = 3;

    /* Second block's length runs 1 byte past the packet. */
    size_t second = 20 + 2 + 12;
    tp_store_be16(buf + second, (uint16_t)(len - second - 2 + 1));
    assert_int_equal(tp_mold_parse(&p, buf, len), TP_MOLD_MESSAGES);
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), 1);
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), -EBADMSG);
    assert_int_equal(tp_mold_offset(&p), second);

    /* A huge length. */
    tp_store_be16(buf + second, 0xFFFF);
    assert_int_equal(tp_mold_parse(&p, buf, len), TP_MOLD_MESSAGES);
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), 1);
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), -EBADMSG);

    /* Last block's length shorter than its message: the block frames fine, ITCH refuses it. */
    len = make_packet(buf, sizeof(buf));
    size_t third = 20 + 4 + 12 + 36;
    tp_store_be16(buf + third, 18);
    assert_int_equal(tp_mold_parse(&p, buf, len - 1), TP_MOLD_MESSAGES);
    for (int i = 0; i < 3; i++)
        assert_int_equal(tp_mold_next(&p, &msg, &mlen), 1);
    assert_int_equal(tp_itch_check(msg, mlen), -EBADMSG);
    assert_int_equal(tp_mold_next(&p, &msg, &mlen), 0);
}

/* Whether tp_mold_next reads every block and ends cleanly; the blocks it returned in order. */
static int iterate(struct tp_mold_packet p, const uint8_t **msgs, uint16_t *lens, int *n)
{
    int rc;
    *n = 0;
    while ((rc = tp_mold_next(&p, &msgs[*n], &lens[*n])) == 1)
        (*n)++;
    return rc;
}

/*
 * tp_mold_frame's blocks (the channel's one walk) into arrays of exactly the room its header
 * promises, min(blocks left, bytes left / 2), so that ASan catches a write past them: it returns
 * the number of blocks tp_mold_next returned, with the same messages and lengths, exactly when
 * tp_mold_next reached a clean end (rc 0), else -EBADMSG.
 */
static void assert_frame_agrees(const struct tp_mold_packet *part, int rc, const uint8_t **msgs,
                                const uint16_t *lens, int n)
{
    size_t blocks = part->count == TP_MOLD_END_OF_SESSION ? 0 : part->count - part->index;
    size_t room = (size_t)(part->end - part->next) / 2;
    room = blocks < room ? blocks : room;
    const uint8_t **fmsgs = malloc(room * sizeof(*fmsgs)); /* room 0: glibc and ASan give a */
    uint16_t *flens = malloc(room * sizeof(*flens));       /* pointer no write may use */
    int framed = tp_mold_frame(part, fmsgs, flens);
    assert_int_equal(framed, rc == 0 ? n : -EBADMSG);
    for (int i = 0; i < framed; i++) {
        assert_ptr_equal(fmsgs[i], msgs[i]);
        assert_int_equal(flens[i], lens[i]);
    }
    free(fmsgs);
    free(flens);
}

/*
 * tp_mold_check accepts exactly the packets (and part-read packets) tp_mold_next reads to a
 * clean end, over every cut and every value of every count and length byte; the unchecked walk
 * of an accepted packet returns the same blocks and stops at the packet end; tp_mold_frame
 * returns them too (assert_frame_agrees).
 */
static void test_check_agrees_with_next(void **state)
{
    (void)state;
    uint8_t good[256];
    size_t len = make_packet(good, sizeof(good));
    size_t length_bytes[] = {
        18, 19, 20, 21, 20 + 2 + 12, 20 + 2 + 12 + 1, 20 + 4 + 12 + 36, 20 + 4 + 12 + 36 + 1};
    int accepted = 0, refused = 0;
    for (size_t cut = TP_MOLD_HEADER_LEN; cut <= len; cut++) {
        for (size_t b = 0; b < sizeof(length_bytes) / sizeof(length_bytes[0]); b++) {
            for (int value = -1; value < 256; value++) {
                if (length_bytes[b] >= cut && value >= 0)
                    continue;
                uint8_t *buf = malloc(cut); /* exact size so ASan catches any over-read */
                memcpy(buf, good, cut);
                if (value >= 0)
                    buf[length_bytes[b]] = (uint8_t)value;
                struct tp_mold_packet p;
                int kind = tp_mold_parse(&p, buf, cut);
                if (kind >= 0) {
                    for (uint16_t skip = 0; skip <= 1; skip++) {
                        const uint8_t *msgs[256];
                        uint16_t lens[256];
                        int n;
                        struct tp_mold_packet part = p;
                        if (skip && tp_mold_next(&part, &msgs[0], &lens[0]) != 1)
                            continue;
                        int rc = iterate(part, msgs, lens, &n);
                        int checked = tp_mold_check(&part);
                        assert_int_equal(checked == 0, rc == 0);
                        assert_frame_agrees(&part, rc, msgs, lens, n);
                        accepted += checked == 0;
                        refused += checked != 0;
                        if (checked != 0 || kind != TP_MOLD_MESSAGES)
                            continue;
                        for (int i = 0; i < n; i++) {
                            uint16_t flen;
                            assert_ptr_equal(tp_mold_next_framed(&part, &flen), msgs[i]);
                            assert_int_equal(flen, lens[i]);
                        }
                        assert_int_equal(part.index, part.count);
                        assert_ptr_equal(part.next, buf + cut);
                    }
                }
                free(buf);
            }
        }
    }
    assert_true(accepted > 0 && refused > 0);
}

static void test_writer_limits(void **state)
{
    (void)state;
    uint8_t buf[20 + 2 + 12 + 1];
    struct tp_mold_writer w;
    assert_int_equal(tp_mold_writer_init(&w, buf, 19, session, 1), -ENOSPC);
    assert_int_equal(tp_mold_writer_init(&w, buf, sizeof(buf), session, 1), 0);
    uint8_t *dst = tp_mold_writer_reserve(&w, 12);
    assert_non_null(dst);
    assert_ptr_equal(dst, buf + 22);
    assert_null(tp_mold_writer_reserve(&w, 0)); /* 1 byte left, a block needs 2 */
    assert_int_equal(w.count, 1);
    assert_int_equal(w.len, 34);
    assert_int_equal(tp_load_be16(buf + 18), 1);
}

static void test_request_round_trip(void **state)
{
    (void)state;
    struct tp_mold_request r = {.sequence = 0x0102030405060708ull, .count = 513}, back;
    memcpy(r.session, session, TP_MOLD_SESSION_LEN);
    uint8_t buf[20];
    assert_int_equal(tp_mold_request_encode(buf, sizeof(buf), &r), 20);
    static const uint8_t expect[20] = {'0', '0', '0', '0', '1', '0', '0', '5', '9', 'B',
                                       1,   2,   3,   4,   5,   6,   7,   8,   2,   1};
    assert_memory_equal(buf, expect, 20);
    assert_int_equal(tp_mold_request_decode(buf, 20, &back), 0);
    assert_memory_equal(back.session, session, 10);
    assert_int_equal(back.sequence, r.sequence);
    assert_int_equal(back.count, 513);
    assert_int_equal(tp_mold_request_decode(buf, 19, &back), -EBADMSG);
    assert_int_equal(tp_mold_request_decode(buf, 21, &back), -EBADMSG);
    assert_int_equal(tp_mold_request_encode(buf, 19, &r), -ENOSPC);
}

static void test_binaryfile_round_trip_and_cuts(void **state)
{
    (void)state;
    uint8_t msgs[3][TP_ITCH_MAX_MESSAGE_LEN];
    uint16_t lens[3];
    make_messages(msgs, lens);
    uint8_t file[256];
    size_t len = 0;
    for (int i = 0; i < 3; i++)
        assert_int_equal(tp_binfile_append(file, sizeof(file), &len, msgs[i], lens[i]), 0);
    assert_int_equal(len, 6 + 12 + 36 + 19);
    assert_int_equal(tp_load_be16(file), 12);
    size_t small = 0;
    assert_int_equal(tp_binfile_append(file, 13, &small, msgs[0], lens[0]), -ENOSPC);

    size_t ends[3] = {14, 14 + 38, len};
    for (size_t n = 0; n <= len; n++) {
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, file, n);
        struct tp_binfile_reader r;
        tp_binfile_reader_init(&r, copy, n);
        const uint8_t *msg = NULL;
        uint16_t mlen = 0;
        int got = 0, rc;
        while ((rc = tp_binfile_next(&r, &msg, &mlen)) == 1) {
            assert_memory_equal(msg, msgs[got], lens[got]);
            assert_int_equal(mlen, lens[got]);
            got++;
        }
        int whole = (ends[0] <= n) + (ends[1] <= n) + (ends[2] <= n);
        assert_int_equal(got, whole);
        int at_boundary = n == 0 || n == ends[0] || n == ends[1] || n == ends[2];
        assert_int_equal(rc, at_boundary ? 0 : -EBADMSG);
        if (!at_boundary) /* the reader stays at the cut block, for the offset report */
            assert_int_equal(r.offset, got == 0 ? 0 : ends[got - 1]);
        free(copy);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_packet_round_trip),
        cmocka_unit_test(test_control_packets),
        cmocka_unit_test(test_short_header),
        cmocka_unit_test(test_truncated_packets),
        cmocka_unit_test(test_lying_count_and_lengths),
        cmocka_unit_test(test_check_agrees_with_next),
        cmocka_unit_test(test_writer_limits),
        cmocka_unit_test(test_request_round_trip),
        cmocka_unit_test(test_binaryfile_round_trip_and_cuts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
