/*
 * The config's venue tables (config_venue.h): the loader takes its "protocol" names, defaults and
 * channel sizes from them, and each agrees with the data plane's ops table of the same venue.
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

#include "config.h"
#include "config_venue.h"
#include "tp_venue.h"

static const char *doc_format =
    "{\"eal\": {\"lcores\": \"0-1\", \"memory_mb\": 4096, \"no_huge\": true, \"no_pci\": true, "
    "\"no_shconf\": true},"
    " \"ports\": [{\"name\": \"p0\", \"vdev\": \"net_null0\"}],"
    " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"p0\", \"queue\": 0}],"
    "              \"channels\": [\"c\"]}],"
    " \"channels\": [{\"name\": \"c\", \"protocol\": \"%s\","
    "                 \"lines\": {\"a\": {\"group\": \"239.1.1.1\", \"port\": 30001}}%s}],"
    " \"control\": {\"socket\": \"/tmp/tp-test-venues.sock\"}}";

/* Recovery sections a venue's channel may need, tried in turn: none, then snapshot lines. */
static const char *const recoveries[] = {
    "", ", \"recovery\": {\"snapshot\": {\"a\": {\"group\": \"239.1.1.2\", \"port\": 30002}}}"};

static struct tp_config *cfg;
static struct tp_config_errors *errs;

static int setup(void **state)
{
    (void)state;
    cfg = malloc(sizeof(*cfg));
    errs = malloc(sizeof(*errs));
    return cfg == NULL || errs == NULL;
}

static int teardown(void **state)
{
    (void)state;
    free(cfg);
    free(errs);
    return 0;
}

static int load_channel(const char *protocol, const char *recovery)
{
    char doc[2048];
    snprintf(doc, sizeof(doc), doc_format, protocol, recovery);
    memset(errs, 0, sizeof(*errs));
    return tp_config_load_string(doc, "/etc/tickplane", cfg, errs);
}

/* A channel of each venue loads with that venue's protocol, venue name and silence default, and
 * is sized by that venue's table. */
static void test_each_venue_sets_its_channel(void **state)
{
    (void)state;
    unsigned n = 0;
    for (const struct tp_cfg_venue *const *v = tp_cfg_venues; *v != NULL; v++, n++) {
        int rc = -1;
        for (unsigned r = 0; rc != 0 && r < sizeof(recoveries) / sizeof(recoveries[0]); r++)
            rc = load_channel((*v)->name, recoveries[r]);
        char text[4096];
        tp_config_errors_format(errs, text, sizeof(text));
        if (rc != 0)
            fail_msg("protocol %s: %s", (*v)->name, text);
        const struct tp_cfg_channel *ch = &cfg->channels[0];
        assert_int_equal(ch->protocol, (*v)->protocol);
        assert_string_equal(ch->venue, (*v)->bus_name);
        assert_int_equal(ch->silence_ms, (*v)->silence_ms);
        assert_true(tp_cfg_venue_get(ch->protocol) == *v);
        assert_int_equal(tp_config_channel_estimate(cfg, 0),
                         16384 + 4096 * 32 + (*v)->channel_bytes(cfg, ch));
    }
    assert_true(n >= 3);
}

/* A protocol no table names is refused, the message listing every venue's name. */
static void test_unknown_protocol_lists_every_venue(void **state)
{
    (void)state;
    assert_int_equal(load_channel("nosuchvenue", ""), -EINVAL);
    const struct tp_config_error *e = NULL;
    for (unsigned i = 0; i < errs->count; i++)
        if (strcmp(errs->items[i].path, "channels[0].protocol") == 0)
            e = &errs->items[i];
    assert_non_null(e);
    for (const struct tp_cfg_venue *const *v = tp_cfg_venues; *v != NULL; v++)
        assert_non_null(strstr(e->message, (*v)->name));
}

/* Each config table has the data plane's venue of its name, with the same number, bus name and
 * locate maps, and the data plane has no venue the config lacks. */
static void test_tables_agree_with_data_plane(void **state)
{
    (void)state;
    for (const struct tp_cfg_venue *const *v = tp_cfg_venues; *v != NULL; v++) {
        const struct tp_venue_ops *ops = tp_venue_find((*v)->name);
        assert_non_null(ops);
        assert_int_equal((int)ops->protocol, (int)(*v)->protocol);
        assert_string_equal(ops->bus_name, (*v)->bus_name);
        assert_int_equal(ops->locate_map, (*v)->locate_map);
    }
    for (unsigned i = 0; tp_venues[i] != NULL; i++)
        assert_non_null(tp_cfg_venue_get((enum tp_cfg_protocol)tp_venues[i]->protocol));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_venue_sets_its_channel),
        cmocka_unit_test(test_unknown_protocol_lists_every_venue),
        cmocka_unit_test(test_tables_agree_with_data_plane),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
