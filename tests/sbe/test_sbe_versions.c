/*
 * test_sbe_versions.c - what the generated round-trip tests cannot show: exact wire bytes
 * (big-endian schema), messages from an older and a newer schema version, lying lengths and
 * counts, encoder limits, and the exact JSON text. Messages are built here byte by byte where
 * the point is to be independent of the generated encoder.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "bigtest_sbe.h"
#include "mdp3_sbe.h"

/* Little-endian raw writers for hand-built MDP3 messages. */
static uint8_t *put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
    return p + n;
}

/*
 * An MDIncrementalRefreshBook46 body written by hand: root block of root_len bytes (11 in
 * version 9, more for a newer sender), book entries of entry_len bytes (32 in version 9), no
 * order entries. Returns the body length.
 */
static size_t build_book46(uint8_t *buf, size_t root_len, size_t entry_len, uint8_t count,
                           int entries_present)
{
    uint8_t *p = buf;
    memset(buf, 0xEE, 512); /* whatever a newer sender puts in fields we do not know */
    put_le(p, 1536760535644820404ULL, 8);
    p[8] = 0x90; /* LastImpliedMsg | EndOfEvent */
    p += root_len;
    p = put_le(p, entry_len, 2);
    p = put_le(p, count, 1);
    for (int i = 0; i < entries_present; i++) {
        uint8_t *e = p;
        put_le(e, (uint64_t)(13003000000000LL + i), 8);
        put_le(e + 8, 3 + (uint64_t)i, 4);
        put_le(e + 12, 5893, 4);
        put_le(e + 16, 19534 + (uint64_t)i, 4);
        put_le(e + 20, 0x7fffffff, 4); /* NumberOfOrders null */
        e[24] = (uint8_t)(1 + i);
        e[25] = 1;   /* Change */
        e[26] = 'E'; /* ImpliedBid */
        p += entry_len;
    }
    /* NoOrderIDEntries: groupSize8Byte, blockLength 24, numInGroup at offset 7 = 0 */
    memset(p, 0, 8);
    put_le(p, 24, 2);
    p += 8;
    return (size_t)(p - buf);
}

static void test_mdp3_exact_json(void **state)
{
    (void)state;
    uint8_t body[512];
    size_t len = build_book46(body, 11, 32, 1, 1);
    char out[1024];
    const char *expected =
        "{\"TransactTime\":1536760535644820404,\"MatchEventIndicator\":[\"LastImpliedMsg\","
        "\"EndOfEvent\"],\"NoMDEntries\":[{\"MDEntryPx\":{\"mantissa\":13003000000000,"
        "\"exponent\":-9},\"MDEntrySize\":3,\"SecurityID\":5893,\"RptSeq\":19534,"
        "\"NumberOfOrders\":null,\"MDPriceLevel\":1,\"MDUpdateAction\":\"Change\","
        "\"MDEntryType\":\"ImpliedBid\"}],\"NoOrderIDEntries\":[]}";
    int n = mktdata_message_print_json(46, body, len, 11, 9, out, sizeof(out));
    assert_string_equal(out, expected);
    assert_int_equal(n, (int)strlen(expected));

    /* snprintf contract: a short buffer gets a NUL-terminated prefix, the full length returns */
    char small[11];
    assert_int_equal(mktdata_message_print_json(46, body, len, 11, 9, small, sizeof(small)), n);
    assert_string_equal(small, "{\"Transact");

    assert_int_equal(mktdata_message_print_json(9999, body, len, 11, 9, out, sizeof(out)), -ENOENT);
    assert_string_equal(mktdata_message_name(46), "MDIncrementalRefreshBook46");
    assert_null(mktdata_message_name(9999));
}

/* A newer sender: longer root block and longer entries; the decoder skips what it does not know. */
static void test_newer_block_lengths_are_skipped(void **state)
{
    (void)state;
    uint8_t body[512];
    size_t len = build_book46(body, 19, 40, 3, 3);
    struct mktdata_md_incremental_refresh_book46 m;
    assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_for_decode(&m, body, len, 19, 10),
                     0);
    assert_true(mktdata_md_incremental_refresh_book46_transact_time(&m) == 1536760535644820404ULL);
    assert_int_equal(mktdata_md_incremental_refresh_book46_match_event_indicator(&m),
                     MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT |
                         MKTDATA_MATCH_EVENT_INDICATOR_LAST_IMPLIED_MSG);
    struct mktdata_md_incremental_refresh_book46_no_md_entries g;
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_decode(&m, &g),
                     0);
    assert_int_equal(g.count, 3);
    assert_int_equal(g.block_length, 40);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_next(&g), 0);
        assert_true(mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_px_mantissa(&g) ==
                    13003000000000LL + i);
        assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_size(&g),
                         3 + i);
        assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_rpt_seq(&g),
                         19534 + i);
        assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_number_of_orders(&g),
                         MKTDATA_INT32_NULL_NULL_VALUE);
        assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_md_price_level(&g),
                         1 + i);
        assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_md_update_action(&g),
                         MKTDATA_MD_UPDATE_ACTION_CHANGE);
        assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_type(&g),
                         MKTDATA_MD_ENTRY_TYPE_BOOK_IMPLIED_BID);
    }
    struct mktdata_md_incremental_refresh_book46_no_order_id_entries o;
    assert_int_equal(
        mktdata_md_incremental_refresh_book46_no_order_id_entries_wrap_for_decode(&m, &o), 0);
    assert_int_equal(o.count, 0);
    assert_int_equal(mktdata_md_incremental_refresh_book46_encoded_length(&m), len);

    /* a fixed-size group need not be visited: wrapping it moves the cursor past all entries */
    assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_for_decode(&m, body, len, 19, 10),
                     0);
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_decode(&m, &g),
                     0);
    assert_int_equal(
        mktdata_md_incremental_refresh_book46_no_order_id_entries_wrap_for_decode(&m, &o), 0);
    assert_int_equal(o.count, 0);
    assert_int_equal(o.block_length, 24);
    assert_int_equal(mktdata_md_incremental_refresh_book46_encoded_length(&m), len);
}

/* Lengths and counts that lie are rejected, never followed. */
static void test_lying_mdp3_messages(void **state)
{
    (void)state;
    uint8_t body[512];
    char out[1024];
    struct mktdata_md_incremental_refresh_book46 m;
    size_t len = build_book46(body, 11, 32, 2, 2);

    /* acting block length beyond the buffer, or shorter than the version-9 fields */
    assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_for_decode(&m, body, 10, 11, 9),
                     -EBADMSG);
    assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_for_decode(&m, body, len, 8, 9),
                     -EBADMSG);

    /* entries shorter than the fields they must carry */
    len = build_book46(body, 11, 20, 1, 1);
    assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_for_decode(&m, body, len, 11, 9),
                     0);
    struct mktdata_md_incremental_refresh_book46_no_md_entries g;
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_decode(&m, &g),
                     -EBADMSG);

    /* a count of 200 with 2 entries present: a fixed-size group is checked whole by wrap */
    len = build_book46(body, 11, 32, 200, 2);
    uint8_t *exact = malloc(len);
    assert_non_null(exact);
    memcpy(exact, body, len);
    assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_for_decode(&m, exact, len, 11, 9),
                     0);
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_decode(&m, &g),
                     -EBADMSG);
    assert_int_equal(g.count, 0);
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_next(&g), -ERANGE);
    assert_int_equal(mktdata_message_print_json(46, exact, len, 11, 9, out, sizeof(out)), -EBADMSG);
    free(exact);
}

/* Big-endian schema: the bytes on the wire are in network order. */
static void test_big_endian_wire_bytes(void **state)
{
    (void)state;
    uint8_t buf[256];
    struct bigtest_widget w;
    assert_int_equal(bigtest_widget_wrap_and_apply_header(&w, buf, sizeof(buf)), 0);
    bigtest_widget_set_serial(&w, 0x0102030405060708ULL);
    bigtest_widget_set_label(&w, "gear \"7\"\\", 10);
    bigtest_widget_set_colour(&w, BIGTEST_COLOUR_BLUE);
    bigtest_widget_set_flags(&w, BIGTEST_FLAGS_HIGH | BIGTEST_FLAGS_LOW);
    bigtest_widget_set_price_mantissa(&w, -12345);
    bigtest_widget_set_ratio(&w, 0.5);
    bigtest_widget_set_level(&w, BIGTEST_LEVEL_NULL_VALUE);
    struct bigtest_widget_parts parts;
    assert_int_equal(bigtest_widget_parts_wrap_for_encode(&w, &parts, 1), 0);
    assert_int_equal(bigtest_widget_parts_next(&parts), 0);
    bigtest_widget_parts_set_part_no(&parts, -2);
    bigtest_widget_parts_set_weight(&parts, 1.25f);
    struct bigtest_widget_parts_screws screws;
    assert_int_equal(bigtest_widget_parts_screws_wrap_for_encode(&parts, &screws, 0), 0);
    assert_int_equal(bigtest_widget_parts_put_note(&parts, "n", 1), 0);
    struct bigtest_widget_extras extras;
    assert_int_equal(bigtest_widget_extras_wrap_for_encode(&w, &extras, 1), 0);
    assert_int_equal(bigtest_widget_extras_next(&extras), 0);
    bigtest_widget_extras_set_code(&extras, 'Q');
    assert_int_equal(bigtest_widget_put_comment(&w, "hi", 2), 0);
    assert_int_equal(bigtest_widget_put_signature(&w, "", 0), 0);

    static const uint8_t header[] = {0, 34, 0, 5, 0, 77, 0, 3};
    assert_memory_equal(buf, header, sizeof(header));
    const uint8_t *b = buf + BIGTEST_MESSAGE_HEADER_ENCODED_LENGTH;
    static const uint8_t serial[] = {1, 2, 3, 4, 5, 6, 7, 8};
    assert_memory_equal(b, serial, 8);
    assert_memory_equal(b + 8, "gear \"7\"", 8); /* truncated to the 8-byte array */
    assert_int_equal(b[16], 0x0B);               /* 3000 = 0x0BB8 */
    assert_int_equal(b[17], 0xB8);
    assert_int_equal(b[18], 0x80); /* bits 15 and 0 */
    assert_int_equal(b[19], 0x01);
    static const uint8_t price[] = {0xFF, 0xFF, 0xCF, 0xC7}; /* -12345 */
    assert_memory_equal(b + 20, price, 4);
    assert_int_equal(b[24], 0x3F); /* 0.5 = 0x3FE0000000000000 */
    assert_int_equal(b[25], 0xE0);
    /* parts dimension: blockLength u16 = 8, 2 padding bytes, numInGroup u32 = 1 */
    static const uint8_t dim[] = {0, 8, 0, 0, 0, 0, 0, 1};
    assert_memory_equal(b + 34, dim, sizeof(dim));
    static const uint8_t part_no[] = {0xFF, 0xFF, 0xFF, 0xFE};
    assert_memory_equal(b + 42, part_no, 4);

    size_t len = bigtest_widget_encoded_length(&w);
    char out[1024];
    const char *expected =
        "{\"serial\":72623859790382856,\"label\":\"gear \\\"7\\\"\",\"colour\":\"Blue\","
        "\"flags\":[\"Low\",\"High\"],\"price\":{\"mantissa\":-12345,\"exponent\":-4},"
        "\"magic\":3735928559,\"favourite\":\"Green\",\"ratio\":0.5,\"level\":null,"
        "\"parts\":[{\"partNo\":-2,\"weight\":1.25,\"screws\":[],\"note\":\"n\"}],"
        "\"extras\":[{\"code\":\"Q\"}],\"comment\":\"hi\",\"signature\":\"\"}";
    int n = bigtest_widget_print_json(b, len, 34, 3, out, sizeof(out));
    assert_string_equal(out, expected);
    assert_int_equal(n, (int)strlen(expected));
}

/*
 * A version-1 message (no ratio/level, no extras group, no signature) decodes with its own
 * block length and version: the later fields read as null, the later group as empty.
 */
static void test_older_version_reads_null(void **state)
{
    (void)state;
    uint8_t v3[256], v1[256];
    struct bigtest_widget w;
    assert_int_equal(bigtest_widget_wrap_for_encode(&w, v3, sizeof(v3)), 0);
    bigtest_widget_set_serial(&w, 99);
    bigtest_widget_set_price_mantissa(&w, 7);
    bigtest_widget_set_ratio(&w, 2.0);
    bigtest_widget_set_level(&w, 4);
    struct bigtest_widget_parts parts;
    assert_int_equal(bigtest_widget_parts_wrap_for_encode(&w, &parts, 2), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(bigtest_widget_parts_next(&parts), 0);
        bigtest_widget_parts_set_part_no(&parts, 10 + i);
        struct bigtest_widget_parts_screws screws;
        assert_int_equal(bigtest_widget_parts_screws_wrap_for_encode(&parts, &screws, 1), 0);
        assert_int_equal(bigtest_widget_parts_screws_next(&screws), 0);
        bigtest_widget_parts_screws_set_length(&screws, (uint16_t)(100 + i));
        assert_int_equal(bigtest_widget_parts_put_note(&parts, "abc", 3), 0);
    }
    assert_int_equal(bigtest_widget_put_comment(&w, "old", 3), 0);
    size_t v3_len = bigtest_widget_encoded_length(&w);

    /* the version-1 layout: the first 24 bytes of the root block, then the rest unchanged */
    memcpy(v1, v3, 24);
    memcpy(v1 + 24, v3 + 34, v3_len - 34);
    size_t v1_len = v3_len - 10;

    for (uint16_t acting_version = 1; acting_version <= 3; acting_version += 2) {
        /* version 3 with a 24-byte block: the block is the authority for what is present */
        struct bigtest_widget d;
        assert_int_equal(bigtest_widget_wrap_for_decode(&d, v1, v1_len, 24, acting_version), 0);
        assert_int_equal(bigtest_widget_serial(&d), 99);
        assert_int_equal(bigtest_widget_price_mantissa(&d), 7);
        assert_true(isnan(bigtest_widget_ratio(&d)));
        assert_int_equal(bigtest_widget_level(&d), BIGTEST_LEVEL_NULL_VALUE);
        if (acting_version == 3)
            continue; /* a version-3 sender would also have sent the extras group */
        assert_int_equal(bigtest_widget_parts_wrap_for_decode(&d, &parts), 0);
        for (int i = 0; i < 2; i++) {
            assert_int_equal(bigtest_widget_parts_next(&parts), 0);
            assert_int_equal(bigtest_widget_parts_part_no(&parts), 10 + i);
            struct bigtest_widget_parts_screws screws;
            assert_int_equal(bigtest_widget_parts_screws_wrap_for_decode(&parts, &screws), 0);
            assert_int_equal(screws.count, 1);
            assert_int_equal(bigtest_widget_parts_screws_next(&screws), 0);
            assert_int_equal(bigtest_widget_parts_screws_length(&screws), 100 + i);
            const uint8_t *note;
            uint32_t note_len;
            assert_int_equal(bigtest_widget_parts_get_note(&parts, &note, &note_len), 0);
            assert_int_equal(note_len, 3);
        }
        struct bigtest_widget_extras extras;
        assert_int_equal(bigtest_widget_extras_wrap_for_decode(&d, &extras), 0);
        assert_int_equal(extras.count, 0);
        const uint8_t *text;
        uint32_t text_len;
        assert_int_equal(bigtest_widget_get_comment(&d, &text, &text_len), 0);
        assert_int_equal(text_len, 3);
        assert_memory_equal(text, "old", 3);
        assert_int_equal(bigtest_widget_get_signature(&d, &text, &text_len), 0);
        assert_int_equal(text_len, 0);
        assert_int_equal(bigtest_widget_encoded_length(&d), v1_len);
    }
    /* a block shorter than the version-0 fields is a lie */
    struct bigtest_widget d;
    assert_int_equal(bigtest_widget_wrap_for_decode(&d, v1, v1_len, 23, 1), -EBADMSG);
}

/* Var data and counts that lie; encoder limits. */
static void test_var_data_and_encoder_limits(void **state)
{
    (void)state;
    uint8_t buf[64];
    struct bigtest_widget w;
    assert_int_equal(bigtest_widget_wrap_for_encode(&w, buf, 33), -ENOSPC);
    assert_int_equal(bigtest_widget_wrap_for_encode(&w, buf, sizeof(buf)), 0);
    struct bigtest_widget_parts parts;
    assert_int_equal(bigtest_widget_parts_wrap_for_encode(&w, &parts, 3), 0);
    assert_int_equal(bigtest_widget_parts_next(&parts), 0);
    struct bigtest_widget_parts_screws screws;
    assert_int_equal(bigtest_widget_parts_screws_wrap_for_encode(&parts, &screws, 255), -EINVAL);
    assert_int_equal(bigtest_widget_parts_screws_wrap_for_encode(&parts, &screws, 0), 0);
    static const char long_note[300] = {0};
    assert_int_equal(bigtest_widget_parts_put_note(&parts, long_note, 255), -EINVAL);
    assert_int_equal(bigtest_widget_parts_put_note(&parts, long_note, 30), -ENOSPC);
    assert_int_equal(bigtest_widget_parts_put_note(&parts, long_note, 6), 0);
    assert_int_equal(bigtest_widget_parts_next(&parts), -ENOSPC); /* 5 bytes left, entry is 8 */

    /* a comment claiming 200 bytes with 3 present */
    uint8_t msg[64];
    assert_int_equal(bigtest_widget_wrap_for_encode(&w, msg, sizeof(msg)), 0);
    assert_int_equal(bigtest_widget_parts_wrap_for_encode(&w, &parts, 0), 0);
    struct bigtest_widget_extras extras;
    assert_int_equal(bigtest_widget_extras_wrap_for_encode(&w, &extras, 0), 0);
    assert_int_equal(bigtest_widget_put_comment(&w, "abc", 3), 0);
    size_t len = bigtest_widget_encoded_length(&w);
    msg[len - 4] = 200;
    struct bigtest_widget d;
    assert_int_equal(bigtest_widget_wrap_for_decode(&d, msg, len, 34, 3), 0);
    assert_int_equal(bigtest_widget_parts_wrap_for_decode(&d, &parts), 0);
    assert_int_equal(bigtest_widget_extras_wrap_for_decode(&d, &extras), 0);
    const uint8_t *text;
    uint32_t text_len;
    assert_int_equal(bigtest_widget_get_comment(&d, &text, &text_len), -EBADMSG);
    char out[512];
    assert_int_equal(bigtest_widget_print_json(msg, len, 34, 3, out, sizeof(out)), -EBADMSG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mdp3_exact_json),
        cmocka_unit_test(test_newer_block_lengths_are_skipped),
        cmocka_unit_test(test_lying_mdp3_messages),
        cmocka_unit_test(test_big_endian_wire_bytes),
        cmocka_unit_test(test_older_version_reads_null),
        cmocka_unit_test(test_var_data_and_encoder_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
