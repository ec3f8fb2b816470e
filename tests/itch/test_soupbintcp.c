/*
 * test_soupbintcp.c - SoupBinTCP 4.0 packets (framing, sizes per type and direction, numeric and
 * alpha fields) and the GLIMPSE 5.0 snapshot message, on good and hostile bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "glimpse.h"
#include "soupbintcp.h"

static void test_login_round_trip(void **state)
{
    (void)state;
    uint8_t buf[64];
    int n = tp_soup_encode_login(buf, sizeof(buf), "tpuser", "secret", "", 1);
    assert_int_equal(n, 49);
    assert_int_equal(buf[0], 0);
    assert_int_equal(buf[1], 47);
    assert_int_equal(buf[2], 'L');
    struct tp_soup_packet p;
    size_t need;
    assert_int_equal(tp_soup_frame(buf, (size_t)n, sizeof(buf), &p, &need), n);
    assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_CLIENT), 0);
    assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_SERVER), -EPROTO);
    assert_memory_equal(tp_soup_login_username(&p), "tpuser", 6);
    assert_memory_equal(tp_soup_login_password(&p), "secret    ", 10);
    assert_memory_equal(tp_soup_login_session(&p), "          ", 10);
    /* Numeric: right-justified, space padded on the left. */
    assert_memory_equal(p.payload + 26, "                   1", 20);
    uint64_t seq = 0;
    assert_int_equal(tp_soup_login_sequence(&p, &seq), 0);
    assert_int_equal(seq, 1);
    /* Fields too long for their width are refused, not cut. */
    assert_int_equal(tp_soup_encode_login(buf, sizeof(buf), "toolong", "x", "", 1), -EINVAL);
    assert_int_equal(tp_soup_encode_login(buf, 40, "u", "p", "", 1), -ENOSPC);
}

static void test_accepted_and_rejected(void **state)
{
    (void)state;
    uint8_t buf[64];
    int n = tp_soup_encode_accepted(buf, sizeof(buf), "GLIMPSE001", 123456789012345ull);
    assert_int_equal(n, 33);
    struct tp_soup_packet p;
    size_t need;
    assert_int_equal(tp_soup_frame(buf, (size_t)n, sizeof(buf), &p, &need), n);
    assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_SERVER), 0);
    assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_CLIENT), -EPROTO);
    assert_memory_equal(tp_soup_accepted_session(&p), "GLIMPSE001", 10);
    uint64_t seq = 0;
    assert_int_equal(tp_soup_accepted_sequence(&p, &seq), 0);
    assert_int_equal(seq, 123456789012345ull);

    uint8_t code = TP_SOUP_REJECT_NOT_AUTHORIZED;
    n = tp_soup_encode(buf, sizeof(buf), TP_SOUP_LOGIN_REJECTED, &code, 1);
    assert_int_equal(n, 4);
    assert_int_equal(tp_soup_frame(buf, (size_t)n, sizeof(buf), &p, &need), 4);
    assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_SERVER), 0);
    assert_int_equal(tp_soup_reject_code(&p), 'A');
}

/* Each fixed-size type with one byte too many and one too few. */
static void test_wrong_sizes(void **state)
{
    (void)state;
    static const struct {
        uint8_t type;
        size_t size;
        enum tp_soup_direction from;
    } fixed[] = {
        {'A', 30, TP_SOUP_FROM_SERVER}, {'J', 1, TP_SOUP_FROM_SERVER},
        {'H', 0, TP_SOUP_FROM_SERVER},  {'Z', 0, TP_SOUP_FROM_SERVER},
        {'L', 46, TP_SOUP_FROM_CLIENT}, {'R', 0, TP_SOUP_FROM_CLIENT},
        {'O', 0, TP_SOUP_FROM_CLIENT},
    };
    uint8_t payload[64];
    memset(payload, '1', sizeof(payload));
    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        uint8_t buf[80];
        struct tp_soup_packet p;
        size_t need;
        for (int delta = -1; delta <= 1; delta++) {
            if (fixed[i].size == 0 && delta < 0)
                continue;
            size_t size = fixed[i].size + (size_t)delta;
            int n = tp_soup_encode(buf, sizeof(buf), fixed[i].type, payload, size);
            assert_true(n > 0);
            assert_int_equal(tp_soup_frame(buf, (size_t)n, sizeof(buf), &p, &need), n);
            assert_int_equal(tp_soup_check(&p, fixed[i].from), delta == 0 ? 0 : -EBADMSG);
        }
    }
    /* Variable payloads: debug both ways, sequenced from the server, unsequenced from the
     * client only. */
    struct tp_soup_packet p = {.type = 'S', .payload_len = 5, .payload = payload};
    assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_SERVER), 0);
    assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_CLIENT), -EPROTO);
    p.type = 'U';
    assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_CLIENT), 0);
    assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_SERVER), -EPROTO);
    p.type = '+';
    assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_CLIENT), 0);
    assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_SERVER), 0);
    /* Unknown types from either side. */
    for (int t = 0; t < 256; t++) {
        if (strchr("+AJSHZLURO", t) != NULL && t != 0)
            continue;
        p.type = (uint8_t)t;
        p.payload_len = 0;
        assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_SERVER), -EPROTO);
        assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_CLIENT), -EPROTO);
    }
}

/* A packet cut anywhere asks for exactly the bytes it lacks; a length beyond the buffer or of 0
 * is refused before anything is read past the header. */
static void test_cut_and_oversized(void **state)
{
    (void)state;
    uint8_t buf[32];
    uint8_t msg[20];
    memset(msg, 'x', sizeof(msg));
    int n = tp_soup_encode(buf, sizeof(buf), 'S', msg, sizeof(msg));
    assert_int_equal(n, 23);
    struct tp_soup_packet p;
    size_t need;
    for (int cut = 0; cut < n; cut++) {
        /* A copy of exactly cut bytes: ASan catches any read past it. */
        uint8_t *part = malloc((size_t)cut + 1);
        memcpy(part, buf, (size_t)cut);
        assert_int_equal(tp_soup_frame(part, (size_t)cut, sizeof(buf), &p, &need), 0);
        assert_int_equal(need, cut < 2 ? 3 : 23);
        free(part);
    }
    assert_int_equal(tp_soup_frame(buf, (size_t)n, 22, &p, &need), -EBADMSG);
    assert_int_equal(tp_soup_frame(buf, (size_t)n, 23, &p, &need), 23);
    assert_int_equal(p.payload_len, 20);
    uint8_t zero[4] = {0, 0};
    assert_int_equal(tp_soup_frame(zero, 2, sizeof(buf), &p, &need), -EBADMSG);
    uint8_t huge[4] = {0xff, 0xff};
    assert_int_equal(tp_soup_frame(huge, 2, 4096, &p, &need), -EBADMSG);
    assert_int_equal(tp_soup_frame(huge, 2, TP_SOUP_MAX_PACKET, &p, &need), 0);
    assert_int_equal(need, TP_SOUP_MAX_PACKET);
    /* Two packets back to back: the first is framed alone. */
    uint8_t two[8];
    assert_int_equal(tp_soup_encode_control(two, sizeof(two), 'H'), 3);
    assert_int_equal(tp_soup_encode_control(two + 3, sizeof(two) - 3, 'Z'), 3);
    assert_int_equal(tp_soup_frame(two, 6, sizeof(two), &p, &need), 3);
    assert_int_equal(p.type, 'H');
    assert_int_equal(p.payload_len, 0);
}

static void test_numeric_fields(void **state)
{
    (void)state;
    uint64_t v = 99;
    assert_int_equal(tp_soup_numeric((const uint8_t *)"    ", 4, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(tp_soup_numeric((const uint8_t *)"  42", 4, &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(tp_soup_numeric((const uint8_t *)"0042", 4, &v), 0);
    assert_int_equal(v, 42);
    assert_int_equal(tp_soup_numeric((const uint8_t *)"42  ", 4, &v), -EBADMSG);
    assert_int_equal(tp_soup_numeric((const uint8_t *)" 4 2", 4, &v), -EBADMSG);
    assert_int_equal(tp_soup_numeric((const uint8_t *)"-042", 4, &v), -EBADMSG);
    assert_int_equal(tp_soup_numeric((const uint8_t *)"18446744073709551615", 20, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(tp_soup_numeric((const uint8_t *)"18446744073709551616", 20, &v), -EBADMSG);
    uint8_t f[4];
    assert_int_equal(tp_soup_numeric_set(f, 4, 7), 0);
    assert_memory_equal(f, "   7", 4);
    assert_int_equal(tp_soup_numeric_set(f, 4, 12345), -EINVAL);
}

static void test_glimpse_snapshot_message(void **state)
{
    (void)state;
    uint8_t m[32];
    assert_int_equal(tp_glimpse_snapshot_encode(m, sizeof(m), 5000123), 21);
    uint64_t seq = 0;
    assert_int_equal(tp_glimpse_snapshot_seq(m, 21, &seq), 0);
    assert_int_equal(seq, 5000123);
    assert_int_equal(tp_glimpse_snapshot_seq(m, 20, &seq), -EBADMSG);
    assert_int_equal(tp_glimpse_snapshot_seq(m, 22, &seq), -EBADMSG);
    assert_int_equal(tp_glimpse_snapshot_encode(m, sizeof(m), 0), 21);
    assert_int_equal(tp_glimpse_snapshot_seq(m, 21, &seq), -EBADMSG);
    m[0] = 'A';
    assert_int_equal(tp_glimpse_snapshot_seq(m, 21, &seq), -ENOMSG);
    assert_int_equal(tp_glimpse_snapshot_seq(m, 0, &seq), -ENOMSG);
    assert_int_equal(tp_glimpse_snapshot_encode(m, 20, 1), -ENOSPC);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_login_round_trip), cmocka_unit_test(test_accepted_and_rejected),
        cmocka_unit_test(test_wrong_sizes),      cmocka_unit_test(test_cut_and_oversized),
        cmocka_unit_test(test_numeric_fields),   cmocka_unit_test(test_glimpse_snapshot_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
