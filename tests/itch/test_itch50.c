/*
 * test_itch50.c - ITCH 5.0 readers, writers, length checks and the JSON printer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "itch50.h"
#include "itch50_json.h"

/* Deterministic filler so failures reproduce. */
static uint32_t rng_state = 12345;
static uint8_t next_byte(void)
{
    rng_state = rng_state * 1103515245u + 12345u;
    return (uint8_t)(rng_state >> 16);
}

/* Independent big-endian read for checking the generated readers. */
static uint64_t read_be(const uint8_t *p, size_t width)
{
    uint64_t v = 0;
    for (size_t i = 0; i < width; i++)
        v = (v << 8) | p[i];
    return v;
}

static void test_layout_is_contiguous_and_complete(void **state)
{
    (void)state;
    static const char all_types[] = "SRHYLVWKJhAFECXDUPQBINO";
    size_t count;
    tp_itch_message_infos(&count);
    assert_int_equal(count, strlen(all_types));
    for (size_t t = 0; t < strlen(all_types); t++) {
        const struct tp_itch_message_info *info = tp_itch_message_info((uint8_t)all_types[t]);
        assert_non_null(info);
        assert_int_equal(info->length, tp_itch_message_length((uint8_t)all_types[t]));
        unsigned expect_offset = 1; /* after the type byte */
        for (unsigned i = 0; i < info->nfields; i++) {
            assert_int_equal(info->fields[i].offset, expect_offset);
            expect_offset += info->fields[i].width;
        }
        assert_int_equal(expect_offset, info->length);
        assert_string_equal(info->fields[0].name, "stock_locate");
        assert_string_equal(info->fields[2].name, "timestamp");
    }
    assert_null(tp_itch_message_info('Z'));
    assert_int_equal(tp_itch_message_length('Z'), 0);
    assert_int_equal(tp_itch_message_length('a'), 0);
}

/* Exact lengths from the specification, written out independently of the table. */
static void test_lengths_match_specification(void **state)
{
    (void)state;
    static const struct {
        char type;
        size_t len;
    } spec[] = {{'S', 12}, {'R', 39}, {'H', 25}, {'Y', 20}, {'L', 26}, {'V', 35},
                {'W', 12}, {'K', 28}, {'J', 35}, {'h', 21}, {'A', 36}, {'F', 40},
                {'E', 31}, {'C', 36}, {'X', 23}, {'D', 19}, {'U', 35}, {'P', 44},
                {'Q', 40}, {'B', 19}, {'I', 50}, {'N', 20}, {'O', 48}};
    for (size_t i = 0; i < sizeof(spec) / sizeof(spec[0]); i++)
        assert_int_equal(tp_itch_message_length((uint8_t)spec[i].type), spec[i].len);
}

/*
 * Every type: random wire bytes -> decode -> encode gives the same bytes; every field's reader
 * agrees with an independent read at its offset; wrong lengths and short buffers are refused.
 */
#define ROUND_TRIP(T, M, LEN)                                                                      \
    static void round_trip_##M(void)                                                               \
    {                                                                                              \
        uint8_t wire[LEN + 1], again[LEN + 1];                                                     \
        for (size_t i = 0; i < sizeof(wire); i++)                                                  \
            wire[i] = next_byte();                                                                 \
        wire[0] = (uint8_t)(T);                                                                    \
        struct tp_itch_##M v = {0};                                                                \
        assert_int_equal(tp_itch_check(wire, LEN), T);                                             \
        assert_int_equal(tp_itch_##M##_decode(wire, LEN, &v), 0);                                  \
        assert_int_equal(tp_itch_##M##_encode(again, sizeof(again), &v), LEN);                     \
        assert_memory_equal(wire, again, LEN);                                                     \
        assert_int_equal(v.stock_locate, tp_itch_stock_locate(wire));                              \
        assert_int_equal(v.tracking_number, read_be(wire + 3, 2));                                 \
        assert_int_equal(v.timestamp, tp_itch_timestamp(wire));                                    \
        assert_int_equal(v.timestamp, read_be(wire + 5, 6));                                       \
        TP_ITCH_FIELDS_##M(CHECK_READER, M);                                                       \
        assert_int_equal(tp_itch_check(wire, LEN - 1), -EBADMSG);                                  \
        assert_int_equal(tp_itch_check(wire, LEN + 1), -EBADMSG);                                  \
        assert_int_equal(tp_itch_##M##_decode(wire, LEN - 1, &v), -EBADMSG);                       \
        assert_int_equal(tp_itch_##M##_decode(wire, LEN + 1, &v), -EBADMSG);                       \
        assert_int_equal(tp_itch_##M##_encode(again, LEN - 1, &v), -ENOSPC);                       \
        wire[0] = (uint8_t)((T) == 'S' ? 'A' : 'S');                                               \
        assert_int_equal(tp_itch_##M##_decode(wire, LEN, &v), -EBADMSG);                           \
    }

/* Reader of each field vs. an independent read (alpha: pointer to the bytes in place). */
#define CHECK_READER(M, f, name, kind, off) CHECK_##kind(M, f, off)
#define CHECK_SCALAR(M, f, off, width)                                                             \
    assert_int_equal(tp_itch_##M##_##f(wire), read_be(wire + off, width));
#define CHECK_CHAR(M, f, off) assert_int_equal((uint8_t)tp_itch_##M##_##f(wire), wire[off]);
#define CHECK_U16(M, f, off)  CHECK_SCALAR(M, f, off, 2)
#define CHECK_U32(M, f, off)  CHECK_SCALAR(M, f, off, 4)
#define CHECK_U64(M, f, off)  CHECK_SCALAR(M, f, off, 8)
#define CHECK_TS(M, f, off)   CHECK_SCALAR(M, f, off, 6)
#define CHECK_PRICE4(M, f, off)                                                                    \
    CHECK_SCALAR(M, f, off, 4)                                                                     \
    assert_int_equal(tp_itch_##M##_##f##_p9(wire), (int64_t)read_be(wire + off, 4) * 100000);
#define CHECK_PRICE8(M, f, off)                                                                    \
    CHECK_SCALAR(M, f, off, 8)                                                                     \
    assert_true(tp_itch_##M##_##f##_p9(wire) >= 0);
#define CHECK_ALPHA2(M, f, off) assert_ptr_equal(tp_itch_##M##_##f(wire), (const char *)wire + off);
#define CHECK_ALPHA4(M, f, off) CHECK_ALPHA2(M, f, off)
#define CHECK_ALPHA8(M, f, off) CHECK_ALPHA2(M, f, off)

TP_ITCH_MESSAGES(ROUND_TRIP)

static void test_round_trip_every_type(void **state)
{
    (void)state;
    for (int rep = 0; rep < 50; rep++) {
#define CALL_ROUND_TRIP(T, M, LEN) round_trip_##M();
        TP_ITCH_MESSAGES(CALL_ROUND_TRIP)
    }
}

/* A hand-assembled Add Order (spec layout) against the writer and the readers. */
static void test_add_order_known_bytes(void **state)
{
    (void)state;
    static const uint8_t expect[36] = {
        'A',  0x15, 0x98, 0x00, 0x07,                   /* locate 5528, tracking 7 */
        0x1f, 0x1a, 0xce, 0xd8, 0x52, 0x06,             /* timestamp 34199999894022 */
        0x00, 0x00, 0x00, 0x00, 0x01, 0x66, 0xb4, 0x7e, /* order ref 23508094 */
        'B',  0x00, 0x00, 0x06, 0x40,                   /* 1600 shares */
        'I',  'V',  'O',  'O',  ' ',  ' ',  ' ',  ' ',  /* stock */
        0x00, 0x0d, 0x55, 0xac};                        /* price 873900 = 87.39 */
    struct tp_itch_add_order v = {.stock_locate = 5528,
                                  .tracking_number = 7,
                                  .timestamp = 0x1f1aced85206ull,
                                  .order_ref = 0x166b47eull,
                                  .side = 'B',
                                  .shares = 1600,
                                  .price = 873900};
    tp_itch_alpha_set(v.stock, sizeof(v.stock), "IVOO");
    uint8_t buf[64];
    assert_int_equal(tp_itch_add_order_encode(buf, sizeof(buf), &v), 36);
    assert_memory_equal(buf, expect, 36);
    assert_int_equal(tp_itch_add_order_order_ref(expect), 23508094);
    assert_int_equal(tp_itch_add_order_side(expect), 'B');
    assert_int_equal(tp_itch_add_order_shares(expect), 1600);
    assert_memory_equal(tp_itch_add_order_stock(expect), "IVOO    ", 8);
    assert_int_equal(tp_itch_add_order_price(expect), 873900);
    assert_int_equal(tp_itch_add_order_price_p9(expect), 87390000000LL);
    assert_int_equal(tp_itch_timestamp(expect), 34199999894022ull);
}

static void test_price_conversions(void **state)
{
    (void)state;
    assert_int_equal(tp_itch_price4_to_p9(1), 100000);
    assert_int_equal(tp_itch_price4_to_p9(UINT32_MAX), (int64_t)UINT32_MAX * 100000);
    assert_int_equal(tp_itch_price8_to_p9(123456789), 1234567890);
    assert_int_equal(tp_itch_price8_to_p9(UINT64_MAX), INT64_MAX);
    assert_int_equal(tp_itch_price8_to_p9((uint64_t)INT64_MAX / 10), (INT64_MAX / 10) * 10);
    assert_int_equal(tp_itch_p9_to_price4(87390000000LL), 873900);
    assert_int_equal(tp_itch_p9_to_price8(87390000000LL), 8739000000ull);
    char alpha[8];
    tp_itch_alpha_set(alpha, 8, "ABCDEFGHIJ");
    assert_memory_equal(alpha, "ABCDEFGH", 8);
    tp_itch_alpha_set(alpha, 8, "");
    assert_memory_equal(alpha, "        ", 8);
}

static void test_check_rejects_unknown_and_empty(void **state)
{
    (void)state;
    uint8_t m[50] = {'Z'};
    assert_int_equal(tp_itch_check(m, 0), -ENOMSG);
    assert_int_equal(tp_itch_check(m, 12), -ENOMSG);
    m[0] = 'S';
    assert_int_equal(tp_itch_check(m, 12), 'S');
    assert_int_equal(tp_itch_check(m, 11), -EBADMSG);
}

static void test_json_add_order_exact(void **state)
{
    (void)state;
    struct tp_itch_add_order v = {.stock_locate = 5528,
                                  .tracking_number = 0,
                                  .timestamp = 34199999894278ull,
                                  .order_ref = 23508286,
                                  .side = 'B',
                                  .shares = 1600,
                                  .price = 873900};
    tp_itch_alpha_set(v.stock, sizeof(v.stock), "IVOO");
    uint8_t m[36];
    tp_itch_add_order_encode(m, sizeof(m), &v);
    char out[512];
    const char *expect = "{\"type\":\"A\",\"message\":\"add_order\",\"stock_locate\":5528,"
                         "\"tracking_number\":0,\"timestamp\":34199999894278,"
                         "\"order_reference_number\":23508286,\"buy_sell_indicator\":\"B\","
                         "\"shares\":1600,\"stock\":\"IVOO\",\"price\":\"87.3900\","
                         "\"price_p9\":87390000000}";
    int n = tp_itch_print_json(out, sizeof(out), m, sizeof(m));
    assert_int_equal(n, (int)strlen(expect));
    assert_string_equal(out, expect);

    /* snprintf semantics: truncated but terminated, full length still reported. */
    char small[10];
    assert_int_equal(tp_itch_print_json(small, sizeof(small), m, sizeof(m)), n);
    assert_int_equal(strlen(small), sizeof(small) - 1);
    assert_memory_equal(small, expect, sizeof(small) - 1);
    assert_int_equal(tp_itch_print_json(NULL, 0, m, sizeof(m)), n);

    assert_int_equal(tp_itch_print_json(out, sizeof(out), m, sizeof(m) - 1), -EBADMSG);
}

static void test_json_price8_and_escaping(void **state)
{
    (void)state;
    struct tp_itch_mwcb_decline_level v = {.level1 = 123456789012ull, .level2 = 5, .level3 = 0};
    uint8_t m[35];
    tp_itch_mwcb_decline_level_encode(m, sizeof(m), &v);
    char out[512];
    assert_true(tp_itch_print_json(out, sizeof(out), m, sizeof(m)) > 0);
    assert_non_null(strstr(out, "\"level_1\":\"1234.56789012\",\"level_1_p9\":1234567890120"));
    assert_non_null(strstr(out, "\"level_2\":\"0.00000005\",\"level_2_p9\":50,"));
    assert_non_null(strstr(out, "\"level_3\":\"0.00000000\",\"level_3_p9\":0}"));

    struct tp_itch_stock_trading_action h = {.trading_state = 'T', .reserved = ' '};
    memcpy(h.stock, "A\"B\\\x01   ", 8);
    tp_itch_alpha_set(h.reason, sizeof(h.reason), "");
    uint8_t hm[25];
    tp_itch_stock_trading_action_encode(hm, sizeof(hm), &h);
    assert_true(tp_itch_print_json(out, sizeof(out), hm, sizeof(hm)) > 0);
    assert_non_null(strstr(out, "\"stock\":\"A\\\"B\\\\\\u0001\""));
    assert_non_null(strstr(out, "\"reserved\":\" \"")); /* a one-byte code, space and all */
    assert_non_null(strstr(out, "\"reason\":\"\"}"));
}

/* Every type prints valid JSON with every field of its description, values matching readers. */
static void test_json_every_type_parses(void **state)
{
    (void)state;
    size_t count;
    const struct tp_itch_message_info *infos = tp_itch_message_infos(&count);
    for (size_t t = 0; t < count; t++) {
        uint8_t m[TP_ITCH_MAX_MESSAGE_LEN];
        for (size_t i = 0; i < sizeof(m); i++)
            m[i] = (uint8_t)('a' + next_byte() % 26); /* printable alpha, any integer */
        m[0] = (uint8_t)infos[t].type;
        char out[1024];
        int n = tp_itch_print_json(out, sizeof(out), m, infos[t].length);
        assert_true(n > 0 && (size_t)n < sizeof(out));
        json_error_t err;
        json_t *obj = json_loads(out, 0, &err);
        assert_non_null(obj);
        assert_string_equal(json_string_value(json_object_get(obj, "message")), infos[t].name);
        for (unsigned i = 0; i < infos[t].nfields; i++) {
            const struct tp_itch_field_info *f = &infos[t].fields[i];
            json_t *val = json_object_get(obj, f->name);
            assert_non_null(val);
            const uint8_t *p = m + f->offset;
            switch (f->kind) {
            case TP_ITCH_KIND_U16:
            case TP_ITCH_KIND_U32:
            case TP_ITCH_KIND_TS:
                assert_int_equal(json_integer_value(val), read_be(p, f->width));
                break;
            case TP_ITCH_KIND_U64: /* beyond int64 in general: compare the text */
            {
                char text[32];
                snprintf(text, sizeof(text), "\"%s\":%llu", f->name,
                         (unsigned long long)read_be(p, 8));
                assert_non_null(strstr(out, text));
                break;
            }
            case TP_ITCH_KIND_PRICE4:
            case TP_ITCH_KIND_PRICE8:
                assert_true(json_is_string(val));
                assert_non_null(strchr(json_string_value(val), '.'));
                break;
            default:
                assert_memory_equal(json_string_value(val), p, f->width);
                break;
            }
        }
        json_decref(obj);
    }
}

/* TP_ITCH_JSON_MAX_LEN covers the worst case: escaped alpha bytes, maximal integers. */
static void test_json_max_len_is_enough(void **state)
{
    (void)state;
    size_t count;
    const struct tp_itch_message_info *infos = tp_itch_message_infos(&count);
    for (size_t t = 0; t < count; t++) {
        uint8_t m[TP_ITCH_MAX_MESSAGE_LEN];
        memset(m, 0x01, sizeof(m));
        m[0] = (uint8_t)infos[t].type;
        for (unsigned i = 0; i < infos[t].nfields; i++) {
            const struct tp_itch_field_info *f = &infos[t].fields[i];
            if (f->kind != TP_ITCH_KIND_CHAR && f->kind < TP_ITCH_KIND_ALPHA2)
                memset(m + f->offset, 0xff, f->width);
        }
        int n = tp_itch_print_json(NULL, 0, m, infos[t].length);
        assert_true(n > 0 && n < TP_ITCH_JSON_MAX_LEN);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_is_contiguous_and_complete),
        cmocka_unit_test(test_lengths_match_specification),
        cmocka_unit_test(test_round_trip_every_type),
        cmocka_unit_test(test_add_order_known_bytes),
        cmocka_unit_test(test_price_conversions),
        cmocka_unit_test(test_check_rejects_unknown_and_empty),
        cmocka_unit_test(test_json_add_order_exact),
        cmocka_unit_test(test_json_price8_and_escaping),
        cmocka_unit_test(test_json_every_type_parses),
        cmocka_unit_test(test_json_max_len_is_enough),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
