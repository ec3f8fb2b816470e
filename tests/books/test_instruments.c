/*
 * Instrument registry and filter: dense ids, lookups by SecurityID / locate / symbol, updates,
 * renames, capacity, locate sessions, and the include/exclude rules.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "books_test_util.h"
#include "tp_instrument_filter.h"

static struct tp_instrument mdp3_def(int32_t secid, const char *symbol)
{
    struct tp_instrument d = {.venue = TP_VENUE_CME_MDP3, .security_id = secid};

    snprintf(d.symbol, sizeof(d.symbol), "%s", symbol);
    return d;
}

static void test_dense_ids_and_lookups(void **state)
{
    struct tp_instruments *r = test_registry(100, 1);
    (void)state;

    /* Many SecurityIDs, including ones that collide in a small table. */
    for (int32_t i = 0; i < 100; i++) {
        char sym[16];
        snprintf(sym, sizeof(sym), "S%d", i);
        struct tp_instrument d = mdp3_def(i * 256, sym);
        assert_int_equal(tp_instruments_define(r, &d), i);
    }
    struct tp_instrument extra = mdp3_def(-5, "FULL");
    assert_int_equal(tp_instruments_define(r, &extra), -ENOSPC);
    for (int32_t i = 0; i < 100; i++) {
        char sym[16];
        snprintf(sym, sizeof(sym), "S%d", i);
        assert_int_equal(tp_instruments_by_security_id(r, i * 256), i);
        assert_int_equal(tp_instruments_by_symbol(r, TP_VENUE_CME_MDP3, sym, strlen(sym)), i);
        assert_int_equal(tp_instruments_get(r, (uint32_t)i)->id, (uint32_t)i);
    }
    assert_int_equal(tp_instruments_by_security_id(r, 7), TP_INSTRUMENT_NONE);
    assert_int_equal(tp_instruments_by_symbol(r, TP_VENUE_NASDAQ_ITCH, "S1", 2),
                     TP_INSTRUMENT_NONE);
    assert_null(tp_instruments_get(r, 100));
    /* An update keeps the id; a rename moves the symbol lookup. */
    struct tp_instrument upd = mdp3_def(256, "RENAMED");
    upd.market_depth = 3;
    assert_int_equal(tp_instruments_define(r, &upd), 1);
    assert_int_equal(tp_instruments_get(r, 1)->market_depth, 3);
    assert_int_equal(tp_instruments_by_symbol(r, TP_VENUE_CME_MDP3, "RENAMED", 7), 1);
    assert_int_equal(tp_instruments_by_symbol(r, TP_VENUE_CME_MDP3, "S1", 2), TP_INSTRUMENT_NONE);
    for (int32_t i = 2; i < 100; i++) {
        char sym[16];
        snprintf(sym, sizeof(sym), "S%d", i);
        assert_int_equal(tp_instruments_by_symbol(r, TP_VENUE_CME_MDP3, sym, strlen(sym)), i);
    }
    free(r);
}

/*
 * The SecurityID table the feeds look up inline: every defined SecurityID (dense runs, values
 * far apart, negative ones, ones equal modulo the table size) is found in its slot run and gives
 * the id tp_instruments_by_security_id gives; others are not found, in a table at its fullest.
 */
static void test_secid_table(void **state)
{
    enum { N = 1000 };
    struct tp_instruments *r = test_registry(N, 0);
    (void)state;

    for (int32_t i = 0; i < N; i++) {
        char sym[16];
        int32_t secid = i < 400 ? 100000 + i : i < 700 ? -i * 7919 : i * 2048;
        snprintf(sym, sizeof(sym), "S%d", i);
        struct tp_instrument d = mdp3_def(secid, sym);
        assert_int_equal(tp_instruments_define(r, &d), i);
    }
    struct tp_secid_table t = tp_instruments_secid_table(r);
    uint32_t used = 0;
    for (uint32_t k = 0; k <= t.mask; k++)
        used += t.slots[k].id1 != 0;
    assert_int_equal(used, N);
    for (int32_t i = 0; i < N; i++) {
        int32_t secid = i < 400 ? 100000 + i : i < 700 ? -i * 7919 : i * 2048;
        assert_int_equal(tp_secid_find(&t, secid), i);
        assert_int_equal(tp_instruments_by_security_id(r, secid), i);
        assert_int_equal(tp_secid_find(&t, secid + 1 + (i >= 400 && i < 700)),
                         i < 399 ? (uint32_t)i + 1 : TP_INSTRUMENT_NONE);
    }
    assert_int_equal(tp_secid_find(&t, 0), TP_INSTRUMENT_NONE);
    assert_int_equal(tp_secid_find(&t, INT32_MIN), TP_INSTRUMENT_NONE);
    free(r);
}

static void test_itch_locates_per_session(void **state)
{
    struct tp_instruments *r = test_registry(4, 2);
    struct tp_instrument d = {.venue = TP_VENUE_NASDAQ_ITCH, .channel = 1, .itch_locate = 42};
    (void)state;

    memcpy(d.symbol, "AAPL    ", 8); /* space padded as on the wire */
    assert_int_equal(tp_instruments_define(r, &d), 0);
    assert_string_equal(tp_instruments_get(r, 0)->symbol, "AAPL");
    assert_int_equal(tp_instruments_by_locate(r, 1, 42), 0);
    assert_int_equal(tp_instruments_by_locate(r, 0, 42), TP_INSTRUMENT_NONE);
    assert_int_equal(tp_instruments_by_locate(r, 2, 42), TP_INSTRUMENT_NONE); /* no such map */
    assert_int_equal(tp_instruments_by_symbol(r, TP_VENUE_NASDAQ_ITCH, "AAPL    ", 8), 0);
    /* The same symbol on the other channel is another instrument. */
    d.channel = 0;
    assert_int_equal(tp_instruments_define(r, &d), 1);
    /* A new session forgets the locates, not the instruments. */
    assert_int_equal(tp_instruments_reset_locates(r, 1), 0);
    assert_int_equal(tp_instruments_by_locate(r, 1, 42), TP_INSTRUMENT_NONE);
    assert_int_equal(tp_instruments_by_locate(r, 0, 42), 1);
    d.channel = 1;
    d.itch_locate = 43;
    assert_int_equal(tp_instruments_define(r, &d), 0);
    assert_int_equal(tp_instruments_by_locate(r, 1, 43), 0);
    assert_int_equal(tp_instruments_reset_locates(r, 2), -EINVAL);
    /* Malformed definitions. */
    struct tp_instrument bad = {.venue = TP_VENUE_NASDAQ_ITCH, .channel = 5};
    memcpy(bad.symbol, "X", 2);
    assert_int_equal(tp_instruments_define(r, &bad), -EINVAL);
    struct tp_instrument empty = {.venue = TP_VENUE_CME_MDP3};
    assert_int_equal(tp_instruments_define(r, &empty), -EINVAL);
    struct tp_instrument novenue = {.venue = 9};
    memcpy(novenue.symbol, "X", 2);
    assert_int_equal(tp_instruments_define(r, &novenue), -EINVAL);
    free(r);
}

/* Two registries sharing one id space (two data lcores): disjoint windows, global ids. */
static void test_id_windows(void **state)
{
    (void)state;
    struct tp_instruments *reg[2];
    for (unsigned k = 0; k < 2; k++) {
        struct tp_instruments_params p = {
            .capacity = 10, .itch_venues = 1, .first_id = 6 * k, .ids = k ? 4 : 6};
        reg[k] = aligned_alloc(64, (tp_instruments_memsize(&p) + 63) / 64 * 64);
        assert_non_null(reg[k]);
        assert_int_equal(tp_instruments_init(reg[k], &p), 0);
        assert_int_equal(tp_instruments_capacity(reg[k]), 10);
        assert_int_equal(tp_instruments_first_id(reg[k]), 6 * k);
    }
    struct tp_instruments_params bad = {.capacity = 10, .first_id = 6, .ids = 5};
    assert_int_equal(tp_instruments_memsize(&bad), 0); /* past the id space */
    /* The second window hands out 6..9, then is full; the first is not affected. */
    for (int32_t i = 0; i < 4; i++) {
        char sym[16];
        snprintf(sym, sizeof(sym), "B%d", i);
        struct tp_instrument d = mdp3_def(1000 + i, sym);
        assert_int_equal(tp_instruments_define(reg[1], &d), 6 + i);
    }
    struct tp_instrument full = mdp3_def(2000, "FULL");
    assert_int_equal(tp_instruments_define(reg[1], &full), -ENOSPC);
    assert_int_equal(tp_instruments_define(reg[0], &full), 0);
    assert_int_equal(tp_instruments_count(reg[1]), 10);
    assert_int_equal(tp_instruments_count(reg[0]), 1);
    assert_int_equal(tp_instruments_by_security_id(reg[1], 1002), 8);
    assert_int_equal(tp_instruments_by_symbol(reg[1], TP_VENUE_CME_MDP3, "B3", 2), 9);
    assert_int_equal(tp_instruments_by_security_id(reg[1], 2000), TP_INSTRUMENT_NONE);
    assert_int_equal(tp_instruments_get(reg[1], 7)->id, 7);
    assert_string_equal(tp_instruments_get(reg[1], 7)->symbol, "B1");
    /* Ids of the other window read as undefined, past the last handed out as none. */
    assert_int_equal(tp_instruments_get(reg[1], 0)->venue, TP_VENUE_NONE);
    assert_int_equal(tp_instruments_get(reg[1], 5)->id, TP_INSTRUMENT_NONE);
    assert_null(tp_instruments_get(reg[0], 1));
    /* ITCH locates bind global ids too. */
    struct tp_instrument itch = {.venue = TP_VENUE_NASDAQ_ITCH, .channel = 0, .itch_locate = 9};
    snprintf(itch.symbol, sizeof(itch.symbol), "AAPL");
    assert_int_equal(tp_instruments_define(reg[0], &itch), 1);
    struct tp_instrument itch_b = itch;
    assert_int_equal(tp_instruments_define(reg[1], &itch_b), -ENOSPC);
    assert_int_equal(tp_instruments_by_locate(reg[0], 0, 9), 1);
    assert_int_equal(tp_instruments_locate_map(reg[0], 0)[9], 2);
    free(reg[0]);
    free(reg[1]);
}

static void test_filter_rules(void **state)
{
    struct tp_instrument_filter f;
    (void)state;

    tp_instrument_filter_init(&f);
    assert_true(tp_instrument_filter_match(&f, "anything", "G"));
    assert_int_equal(tp_instrument_filter_parse(&f, "include:symbol:ES*"), 0);
    assert_int_equal(tp_instrument_filter_parse(&f, "exclude:symbol:ES*-*"), 0);
    assert_int_equal(tp_instrument_filter_parse(&f, "include:group:GE"), 0);
    assert_true(tp_instrument_filter_match(&f, "ESZ6", "ES"));
    assert_false(tp_instrument_filter_match(&f, "ESZ6-ESH7", "ES"));
    assert_false(tp_instrument_filter_match(&f, "NQZ6", "NQ"));
    assert_true(tp_instrument_filter_match(&f, "GEZ6", "GE"));
    assert_int_equal(tp_instrument_filter_parse(&f, "maybe:symbol:X"), -EINVAL);
    assert_int_equal(tp_instrument_filter_parse(&f, "include:price:X"), -EINVAL);
    assert_int_equal(tp_instrument_filter_parse(&f, "include:symbol:"), -EINVAL);
    assert_int_equal(tp_instrument_filter_add(&f, TP_FILTER_INCLUDE, TP_FILTER_SYMBOL,
                                              "a-pattern-that-is-far-too-long-for-the-rule-buffer"),
                     -EINVAL);
    /* Exclude-only filters keep everything else. */
    tp_instrument_filter_init(&f);
    assert_int_equal(tp_instrument_filter_parse(&f, "exclude:group:Q?"), 0);
    assert_false(tp_instrument_filter_match(&f, "X", "QA"));
    assert_true(tp_instrument_filter_match(&f, "X", "Q"));
    for (int i = 1; i < TP_FILTER_RULES_MAX; i++)
        assert_int_equal(tp_instrument_filter_parse(&f, "exclude:symbol:Z"), 0);
    assert_int_equal(tp_instrument_filter_parse(&f, "exclude:symbol:Z"), -ENOSPC);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_ids_and_lookups),
        cmocka_unit_test(test_secid_table),
        cmocka_unit_test(test_itch_locates_per_session),
        cmocka_unit_test(test_filter_rules),
        cmocka_unit_test(test_id_windows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
