/*
 * tickplane-replay's digest (tools/replay/replay_digest.h): FNV-1a 64 against the published
 * test vectors, and the tagged stream the digest hashes, recomputed here byte by byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "replay_digest.h"

/* FNV-1a 64 vectors from the FNV reference test suite (Noll, "FNV hash" test vectors). */
static void fnv1a_known_vectors(void **state)
{
    (void)state;
    assert_true(replay_fnv1a(REPLAY_FNV1A_BASIS, "", 0) == 0xcbf29ce484222325ull);
    assert_true(replay_fnv1a(REPLAY_FNV1A_BASIS, "a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(replay_fnv1a(REPLAY_FNV1A_BASIS, "foobar", 6) == 0x85944171f73967e8ull);
    /* Continuing a hash is hashing the concatenation. */
    assert_true(replay_fnv1a(replay_fnv1a(REPLAY_FNV1A_BASIS, "foo", 3), "bar", 3) ==
                0x85944171f73967e8ull);
}

static void sample_records(struct tp_book_change c[3])
{
    memset(c, 0, 3 * sizeof(*c));
    c[0] = (struct tp_book_change){.instrument = 7,
                                   .kind = TP_CHANGE_ORDER,
                                   .book = TP_BOOK_ORDERS,
                                   .side = TP_SIDE_BID,
                                   .action = TP_ORDER_ADD,
                                   .level = 1,
                                   .price = 1234500000000,
                                   .qty = 100,
                                   .order_id = 42,
                                   .aux = 9};
    c[1] = (struct tp_book_change){.instrument = 7,
                                   .kind = TP_CHANGE_LEVEL,
                                   .book = TP_BOOK_ORDERS,
                                   .side = TP_SIDE_BID,
                                   .action = TP_LEVEL_NEW,
                                   .level = 1,
                                   .flags = TP_CHANGE_F_TOP,
                                   .count = 1,
                                   .price = 1234500000000,
                                   .qty = 100};
    c[2] = (struct tp_book_change){.instrument = 3, .kind = TP_CHANGE_TRADE, .qty = 5};
}

/* The digest is FNV-1a over 'C' + 48 bytes per record, 'E' per event, 'S' + 4 LE u32 per stale. */
static void digest_is_the_documented_stream(void **state)
{
    struct tp_book_change c[3];
    struct replay_digest d;
    uint8_t stream[3 * 49 + 1 + 17], *p = stream;
    const uint8_t stale_item[17] = {'S', 7, 0, 0, 0, 1, 0, 0, 0, 0x10, 0, 0, 0, 0x12, 0x01, 0, 0};

    (void)state;
    sample_records(c);
    for (int i = 0; i < 3; i++) {
        *p++ = 'C';
        memcpy(p, &c[i], 48);
        p += 48;
    }
    *p++ = 'E';
    memcpy(p, stale_item, sizeof(stale_item));
    p += sizeof(stale_item);
    assert_int_equal(p - stream, sizeof(stream));

    replay_digest_init(&d);
    replay_digest_changes(&d, c, 3);
    replay_digest_event(&d);
    replay_digest_stale(&d, 7, 1, 0x10, 0x112);
    assert_true(d.hash == replay_fnv1a(REPLAY_FNV1A_BASIS, stream, sizeof(stream)));
    assert_int_equal(d.change_records, 3);
    assert_int_equal(d.events, 1);
    assert_int_equal(d.stale_calls, 1);
}

static uint64_t digest_of(const struct tp_book_change c[3], int event_after_first)
{
    struct replay_digest d;

    replay_digest_init(&d);
    replay_digest_changes(&d, c, 1);
    if (event_after_first)
        replay_digest_event(&d);
    replay_digest_changes(&d, c + 1, 2);
    return d.hash;
}

/* Any byte of any record, the order, the event marks and the stale arguments all count. */
static void digest_changes_with_any_difference(void **state)
{
    struct tp_book_change c[3], swapped[3];
    uint64_t base;
    struct replay_digest a, b;

    (void)state;
    sample_records(c);
    base = digest_of(c, 0);
    /* Same records split differently over callbacks: the same stream. */
    replay_digest_init(&a);
    replay_digest_changes(&a, c, 3);
    assert_true(a.hash == base);
    for (size_t byte = 0; byte < sizeof(struct tp_book_change); byte++) {
        struct tp_book_change m[3];
        memcpy(m, c, sizeof(m));
        ((uint8_t *)&m[1])[byte] ^= 0x01;
        assert_true(digest_of(m, 0) != base);
    }
    memcpy(swapped, c, sizeof(swapped));
    swapped[1] = c[2];
    swapped[2] = c[1];
    assert_true(digest_of(swapped, 0) != base);
    assert_true(digest_of(c, 1) != base);

    replay_digest_init(&a);
    replay_digest_init(&b);
    replay_digest_stale(&a, 7, 1, 10, 12);
    replay_digest_stale(&b, 7, 1, 10, 13);
    assert_true(a.hash != b.hash);
    replay_digest_init(&b);
    replay_digest_stale(&b, 7, 0, 10, 12);
    assert_true(a.hash != b.hash);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fnv1a_known_vectors),
        cmocka_unit_test(digest_is_the_documented_stream),
        cmocka_unit_test(digest_changes_with_any_difference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
