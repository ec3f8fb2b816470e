/*
 * Tests for the venue table (dataplane/feeds/tp_venue.h): each venue is found by its protocol,
 * its config name and its tpout venue, and its decode counters name the fields of its feed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "tp_itch_feed.h"
#include "tp_mdp3_feed.h"
#include "tp_venue.h"

static void test_every_venue_is_found_three_ways(void **state)
{
    (void)state;
    unsigned n = 0;
    bool tpout_used[TP_TPOUT_VENUES] = {false};
    for (const struct tp_venue_ops *const *v = tp_venues; *v != NULL; v++, n++) {
        assert_ptr_equal(tp_venue_get((*v)->protocol), *v);
        assert_ptr_equal(tp_venue_find((*v)->name), *v);
        assert_true((*v)->tpout_venue < TP_TPOUT_VENUES);
        assert_false(tpout_used[(*v)->tpout_venue]);
        tpout_used[(*v)->tpout_venue] = true;
        assert_ptr_equal(tp_venue_of_tpout((*v)->tpout_venue), *v);
        assert_non_null((*v)->bus_name);
    }
    assert_int_equal(n, 3);
    assert_null(tp_venue_find("eurex"));
    assert_null(tp_venue_find(""));
    assert_null(tp_venue_get((enum tp_channel_protocol)0));
    assert_null(tp_venue_of_tpout(TP_TPOUT_VENUES));
}

static void test_models(void **state)
{
    (void)state;
    assert_int_equal(tp_venue_find("itch")->sequence, TP_SEQ_MOLDUDP64);
    assert_int_equal(tp_venue_find("itch")->framing, TP_FRAMING_MESSAGES);
    assert_int_equal(tp_venue_find("itch")->recovery, TP_RECOVER_REREQUEST);
    assert_true(tp_venue_find("itch")->locate_map);
    assert_int_equal(tp_venue_find("itch")->registry_venue, TP_VENUE_NASDAQ_ITCH);
    assert_int_equal(tp_venue_find("mdp3")->sequence, TP_SEQ_MDP3);
    assert_int_equal(tp_venue_find("mdp3")->framing, TP_FRAMING_PACKETS);
    assert_int_equal(tp_venue_find("mdp3")->recovery, TP_RECOVER_SNAPSHOT_LOOP);
    assert_false(tp_venue_find("mdp3")->locate_map);
    assert_int_equal(tp_venue_find("mdp3")->registry_venue, TP_VENUE_CME_MDP3);
}

/* The counter `name` of venue v read from its feed at `feed`. */
static uint64_t counter(const struct tp_venue_ops *v, const void *feed, const char *name)
{
    for (unsigned i = 0; i < v->n_decode_counters; i++)
        if (strcmp(v->decode_counters[i].name, name) == 0)
            return *(const uint64_t *)((const char *)feed + v->decode_counters[i].offset);
    fail_msg("venue %s has no decode counter %s", v->name, name);
    return 0;
}

static void test_decode_counters_read_the_feed(void **state)
{
    (void)state;
    static struct tp_itch_feed itch;
    itch.counters.malformed = 1;
    itch.counters.unknown_instrument = 2;
    itch.counters.rejected = 3;
    itch.counters.registry_full = 4;
    const struct tp_venue_ops *v = tp_venue_find("itch");
    assert_int_equal(v->n_decode_counters, 4);
    assert_int_equal(counter(v, &itch, "malformed"), 1);
    assert_int_equal(counter(v, &itch, "unknown_instrument"), 2);
    assert_int_equal(counter(v, &itch, "rejected"), 3);
    assert_int_equal(counter(v, &itch, "registry_full"), 4);

    static struct tp_mdp3_feed mdp3;
    mdp3.counters.malformed = 11;
    mdp3.counters.unknown_instrument = 12;
    mdp3.counters.rejected = 13;
    mdp3.counters.registry_full = 14;
    mdp3.counters.rpt_seq_gaps = 15;
    mdp3.counters.snapshots_audited = 16;
    mdp3.counters.snapshot_mismatch = 17;
    mdp3.counters.refusal_marks = 18;
    mdp3.counters.order_snapshot_mismatch = 19;
    mdp3.counters.orders_incomplete_marks = 20;
    v = tp_venue_find("mdp3");
    assert_int_equal(v->n_decode_counters, 10);
    assert_int_equal(counter(v, &mdp3, "malformed"), 11);
    assert_int_equal(counter(v, &mdp3, "unknown_instrument"), 12);
    assert_int_equal(counter(v, &mdp3, "rejected"), 13);
    assert_int_equal(counter(v, &mdp3, "registry_full"), 14);
    assert_int_equal(counter(v, &mdp3, "rpt_seq_gaps"), 15);
    assert_int_equal(counter(v, &mdp3, "snapshots_audited"), 16);
    assert_int_equal(counter(v, &mdp3, "snapshot_mismatch"), 17);
    assert_int_equal(counter(v, &mdp3, "refusal_marks"), 18);
    assert_int_equal(counter(v, &mdp3, "order_snapshot_mismatch"), 19);
    assert_int_equal(counter(v, &mdp3, "orders_incomplete_marks"), 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_venue_is_found_three_ways),
        cmocka_unit_test(test_models),
        cmocka_unit_test(test_decode_counters_read_the_feed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
