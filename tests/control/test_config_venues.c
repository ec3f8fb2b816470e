/*
 * The config's venue tables (config_venue.h): the loader takes its "protocol" names, defaults,
 * channel sizes and which keys a channel may have from them, and each agrees with the data
 * plane's ops table of the same venue.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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
    "{\"eal\": {\"lcores\": \"0-1\", \"memory_mb\": 4096, \"no_huge\": true, \"no_pci\": true,"
    "         \"no_shconf\": true},"
    " \"ports\": [{\"name\": \"p0\", \"vdev\": \"net_null0\"}],"
    " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"p0\", \"queue\": 0}],"
    "              \"channels\": [\"c\"]}],"
    " \"channels\": [{\"name\": \"c\", \"protocol\": \"%s\"%s%s,"
    "                 \"lines\": {\"a\": {\"group\": \"239.1.1.1\", \"port\": 30001}}}],"
    " \"control\": {\"socket\": \"/tmp/tp-test-venues.sock\"}}";

/* What a venue's channel may need in its recovery, tried in turn: nothing, then snapshot lines. */
static const char *const recoveries[] = {
    "", "\"snapshot\": {\"a\": {\"group\": \"239.1.1.2\", \"port\": 30002}}"};
#define N_RECOVERIES (sizeof(recoveries) / sizeof(recoveries[0]))

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

/* A channel of that protocol with recovery members `recovery` plus `recovery_extra`, and
 * `channel_extra` (", \"key\": value" or ""). */
static int load_channel(const char *protocol, const char *recovery, const char *recovery_extra,
                        const char *channel_extra)
{
    char members[512], doc[4096];
    members[0] = '\0';
    if (recovery[0] != '\0' || recovery_extra[0] != '\0')
        snprintf(members, sizeof(members), ", \"recovery\": {%s%s%s}", recovery,
                 recovery[0] != '\0' && recovery_extra[0] != '\0' ? ", " : "", recovery_extra);
    snprintf(doc, sizeof(doc), doc_format, protocol, members, channel_extra);
    memset(errs, 0, sizeof(*errs));
    return tp_config_load_string(doc, "/etc/tickplane", cfg, errs);
}

/* The recovery a channel of venue v loads with (index into recoveries), failing the test if none.
 */
static unsigned venue_recovery(const struct tp_cfg_venue *v)
{
    for (unsigned r = 0; r < N_RECOVERIES; r++)
        if (load_channel(v->name, recoveries[r], "", "") == 0)
            return r;
    char text[4096];
    tp_config_errors_format(errs, text, sizeof(text));
    fail_msg("protocol %s: %s", v->name, text);
    return 0;
}

static bool listed(const char *const *keys, const char *key)
{
    for (unsigned i = 0; keys != NULL && keys[i] != NULL; i++)
        if (strcmp(keys[i], key) == 0)
            return true;
    return false;
}

/* The load failed with "only for protocol <owner>..." at path. */
static void assert_refused(const char *path, const char *owner)
{
    char expected[128];
    snprintf(expected, sizeof(expected), "only for protocol %s", owner);
    for (unsigned i = 0; i < errs->count; i++)
        if (strcmp(errs->items[i].path, path) == 0 &&
            strncmp(errs->items[i].message, expected, strlen(expected)) == 0)
            return;
    char text[4096];
    tp_config_errors_format(errs, text, sizeof(text));
    fail_msg("expected %s: %s, got: %s", path, expected, text);
}

/* A channel of each venue loads with that venue's protocol, venue name and silence default, and
 * is sized by that venue's table. */
static void test_each_venue_sets_its_channel(void **state)
{
    (void)state;
    unsigned n = 0;
    for (const struct tp_cfg_venue *const *v = tp_cfg_venues; *v != NULL; v++, n++) {
        venue_recovery(*v);
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

/* Every key of a venue's channel and recovery sections, on a channel of another venue that does
 * not take it, is refused at its path naming the venue it belongs to. */
static void test_other_venues_keys_refused(void **state)
{
    (void)state;
    unsigned refusals = 0;
    for (const struct tp_cfg_venue *const *mine = tp_cfg_venues; *mine != NULL; mine++) {
        const char *recovery = recoveries[venue_recovery(*mine)];
        for (const struct tp_cfg_venue *const *other = tp_cfg_venues; *other != NULL; other++) {
            if (*other == *mine)
                continue;
            char member[128], path[128];
            for (const char *const *k = (*other)->channel_keys; k != NULL && *k != NULL; k++) {
                snprintf(member, sizeof(member), ", \"%s\": \"x\"", *k);
                assert_int_equal(load_channel((*mine)->name, recovery, "", member), -EINVAL);
                snprintf(path, sizeof(path), "channels[0].%s", *k);
                assert_refused(path, (*other)->name);
                refusals++;
            }
            if ((*other)->import_key != NULL) {
                snprintf(member, sizeof(member), ", \"%s\": {}", (*other)->import_key);
                assert_int_equal(load_channel((*mine)->name, recovery, "", member), -EINVAL);
                snprintf(path, sizeof(path), "channels[0].%s", (*other)->import_key);
                assert_refused(path, (*other)->name);
                refusals++;
            }
            if ((*other)->release != NULL && (*mine)->release == NULL) {
                assert_int_equal(load_channel((*mine)->name, recovery, "", ", \"release\": \"x\""),
                                 -EINVAL);
                assert_refused("channels[0].release", (*other)->name);
                refusals++;
            }
            for (const char *const *k = (*other)->recovery_keys; k != NULL && *k != NULL; k++) {
                if (listed((*mine)->recovery_keys, *k))
                    continue;
                snprintf(member, sizeof(member), "\"%s\": {}", *k);
                assert_int_equal(load_channel((*mine)->name, recovery, member, ""), -EINVAL);
                snprintf(path, sizeof(path), "channels[0].recovery.%s", *k);
                assert_refused(path, (*other)->name);
                refusals++;
            }
        }
    }
    assert_true(refusals > 0);
}

/* A protocol no table names is refused, the message listing every venue's name. */
static void test_unknown_protocol_lists_every_venue(void **state)
{
    (void)state;
    assert_int_equal(load_channel("nosuchvenue", "", "", ""), -EINVAL);
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

/* Each venue's recovery line pairs are pairs of its part of the channel (proto), are keys of its
 * recovery section, and fit, with the common lines and snapshot pairs, in TP_CFG_CHANNEL_LINES. */
static void test_recovery_lines_are_the_venues(void **state)
{
    (void)state;
    const size_t proto = offsetof(struct tp_cfg_channel, proto);
    for (const struct tp_cfg_venue *const *v = tp_cfg_venues; *v != NULL; v++) {
        unsigned pairs = 2;
        for (const struct tp_cfg_venue_lines *l = (*v)->recovery_lines; l != NULL && l->key != NULL;
             l++, pairs++) {
            assert_true(l->offset >= proto);
            assert_true(l->offset + 2 * sizeof(struct tp_cfg_line) <=
                        proto + sizeof(union tp_cfg_venue_channel));
            bool listed = false;
            for (const char *const *k = (*v)->recovery_keys; k != NULL && *k != NULL; k++)
                listed |= strcmp(*k, l->key) == 0;
            assert_true(listed);
        }
        assert_true(2 * pairs <= TP_CFG_CHANNEL_LINES);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_venue_sets_its_channel),
        cmocka_unit_test(test_other_venues_keys_refused),
        cmocka_unit_test(test_unknown_protocol_lists_every_venue),
        cmocka_unit_test(test_tables_agree_with_data_plane),
        cmocka_unit_test(test_recovery_lines_are_the_venues),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
