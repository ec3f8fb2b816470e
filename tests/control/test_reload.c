/*
 * Reload diff: what changed between the running config and a new one, what can be applied live,
 * what needs a restart, and that a bad file changes nothing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "config.h"
#include "config_mutate.h"
#include "reload.h"

static const char *base_json =
    "{\"eal\": {\"lcores\": \"0-2\"},"
    " \"ports\": [{\"name\": \"p0\", \"vdev\": \"net_null0\", \"rx_queues\": 2}],"
    " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"p0\", \"queue\": 0}],"
    "               \"channels\": [\"a\", \"b\"]},"
    "              {\"lcore\": 2, \"poll\": [{\"port\": \"p0\", \"queue\": 1}],"
    "               \"channels\": [\"c\"]}],"
    " \"channels\": ["
    "  {\"name\": \"a\", \"protocol\": \"mdp3\", \"lines\": {\"a\": {\"group\": \"224.0.0.1\", "
    "\"port\": 1}}},"
    "  {\"name\": \"b\", \"protocol\": \"mdp3\", \"lines\": {\"a\": {\"group\": \"224.0.0.2\", "
    "\"port\": 1}}},"
    "  {\"name\": \"c\", \"protocol\": \"itch\", \"lines\": {\"a\": {\"group\": \"224.0.0.3\", "
    "\"port\": 1}}}],"
    " \"instruments\": {\"include\": [\"ES*\"]},"
    " \"entitlements\": {\"rules\": [{\"uid\": 1000, \"topics\": [\"top\"]}]},"
    " \"telemetry\": {\"interval_ms\": 1000}}";

static struct tp_config *running, *next;
static struct tp_config_errors *errs;
static struct tp_config_diff diff;

static int setup(void **state)
{
    (void)state;
    running = malloc(sizeof(*running));
    next = malloc(sizeof(*next));
    errs = malloc(sizeof(*errs));
    return tp_test_load_mutated(base_json, NULL, running, errs, 0);
}

static int teardown(void **state)
{
    (void)state;
    free(running);
    free(next);
    free(errs);
    return 0;
}

/* Diff the base against the base with these mutations. */
static int diff_with(int pairs, ...)
{
    va_list ap;
    va_start(ap, pairs);
    int rc = tp_test_load_mutated_v(base_json, NULL, next, errs, pairs, ap);
    va_end(ap);
    if (rc != 0) {
        char buf[4096];
        tp_config_errors_format(errs, buf, sizeof(buf));
        fprintf(stderr, "%s", buf);
    }
    assert_int_equal(rc, 0);
    return tp_config_diff(running, next, &diff);
}

static void test_identical_is_empty(void **state)
{
    (void)state;
    assert_int_equal(diff_with(0), 0);
    assert_true(tp_config_diff_empty(&diff));
    assert_int_equal(diff.n_unchanged, 3);
}

static void test_channel_added(void **state)
{
    (void)state;
    assert_int_equal(diff_with(2, "channels[3]",
                               "{\"name\": \"d\", \"protocol\": \"itch\", \"lines\": {\"a\":"
                               " {\"group\": \"224.0.0.4\", \"port\": 1}}}",
                               "lcores[1].channels[1]", "\"d\""),
                     0);
    assert_int_equal(diff.n_added, 1);
    assert_string_equal(next->channels[diff.added[0]].name, "d");
    assert_int_equal(diff.n_removed, 0);
    assert_int_equal(diff.n_changed, 0);
    assert_int_equal(diff.n_unchanged, 3); /* their books stay */
    assert_false(tp_config_diff_empty(&diff));
}

static void test_channel_removed(void **state)
{
    (void)state;
    assert_int_equal(diff_with(2, "channels[1]", NULL, "lcores[0].channels", "[\"a\"]"), 0);
    assert_int_equal(diff.n_removed, 1);
    assert_string_equal(running->channels[diff.removed[0]].name, "b");
    assert_int_equal(diff.n_unchanged, 2);
}

/* A change of a field only its venue has (the channel's proto) changes the channel, and only it. */
static void test_venue_part_changed(void **state)
{
    (void)state;
    assert_int_equal(diff_with(1, "channels[1].recovery", "{\"audit_always\": true}"), 0);
    assert_int_equal(diff.n_changed, 1);
    assert_int_equal(diff.changed[0].new_index, 1);
    assert_int_equal(diff.n_unchanged, 2);
    assert_int_equal(diff_with(1, "channels[2].recovery", "{\"max_messages\": 7}"), 0);
    assert_int_equal(diff.n_changed, 1);
    assert_int_equal(diff.changed[0].new_index, 2);
    assert_int_equal(diff_with(1, "channels[2].recovery", "{\"rerequest\": \"10.0.0.1:5000\"}"), 0);
    assert_int_equal(diff.n_changed, 1);
    assert_int_equal(diff.changed[0].new_index, 2);
    /* The same lines under another protocol are another channel's config. */
    assert_int_equal(diff_with(1, "channels[2].protocol", "\"mdp3\""), 0);
    assert_int_equal(diff.n_changed, 1);
    assert_int_equal(diff.changed[0].new_index, 2);
}

static void test_channel_changed(void **state)
{
    (void)state;
    assert_int_equal(diff_with(1, "channels[2].recovery", "{\"gap_wait_us\": 900}"), 0);
    assert_int_equal(diff.n_changed, 1);
    assert_int_equal(diff.changed[0].old_index, 2);
    assert_int_equal(diff.changed[0].new_index, 2);
    assert_int_equal(diff.n_unchanged, 2);
    /* Reordering channels is not a change. */
    assert_int_equal(diff_with(2, "channels[0]",
                               "{\"name\": \"b\", \"protocol\": \"mdp3\", \"lines\": {\"a\":"
                               " {\"group\": \"224.0.0.2\", \"port\": 1}}}",
                               "channels[1]",
                               "{\"name\": \"a\", \"protocol\": \"mdp3\", \"lines\": {\"a\":"
                               " {\"group\": \"224.0.0.1\", \"port\": 1}}}"),
                     0);
    assert_int_equal(diff.n_changed, 0);
    assert_int_equal(diff.n_unchanged, 3);
    assert_int_equal(diff.unchanged[0].old_index, 1); /* b was at 1, is now at 0 */
    assert_int_equal(diff.unchanged[0].new_index, 0);
}

static void test_live_sections(void **state)
{
    (void)state;
    assert_int_equal(diff_with(1, "instruments.exclude", "[\"*-*\"]"), 0);
    assert_true(diff.filters_changed);
    assert_false(diff.entitlements_changed);
    assert_int_equal(diff_with(1, "entitlements.rules[0].topics", "[\"top\", \"trades\"]"), 0);
    assert_true(diff.entitlements_changed);
    assert_false(diff.filters_changed);
    assert_int_equal(diff_with(1, "telemetry.interval_ms", "500"), 0);
    assert_true(diff.telemetry_changed);
    assert_int_equal(diff_with(1, "control", "{\"max_requests_per_sec\": 10}"), 0);
    assert_true(diff.rate_limit_changed);
}

static void test_restart_needed(void **state)
{
    (void)state;
    assert_int_equal(diff_with(1, "books", "{\"levels_per_side\": 20}"), -EPERM);
    assert_int_equal(diff.n_restart, 1);
    assert_string_equal(diff.restart[0], "books");
    assert_int_equal(diff_with(1, "instruments.capacity", "8192"), -EPERM);
    assert_string_equal(diff.restart[0], "instruments.capacity");
    assert_int_equal(diff_with(1, "ports[0].mtu", "9000"), -EPERM);
    assert_string_equal(diff.restart[0], "ports");
    assert_int_equal(diff_with(1, "control", "{\"socket\": \"/tmp/other.sock\"}"), -EPERM);
    assert_string_equal(diff.restart[0], "control (socket, mode or sizes)");
    /* A kept channel moving to another lcore cannot be done live. */
    assert_int_equal(
        diff_with(2, "lcores[0].channels", "[\"a\"]", "lcores[1].channels", "[\"c\", \"b\"]"),
        -EPERM);
    assert_int_equal(diff.n_restart, 1);
    assert_string_equal(diff.restart[0], "channels[1] \"b\": moves from lcore 1 to lcore 2");
    /* Two at once are both named. */
    assert_int_equal(diff_with(2, "bus", "{\"ring_bytes\": 131072}", "eal.lcores", "\"0-3\""),
                     -EPERM);
    assert_int_equal(diff.n_restart, 2);
    assert_string_equal(diff.restart[0], "eal");
    assert_string_equal(diff.restart[1], "bus");
}

/*
 * Each lcore's window of instrument ids is sized at start: a reload that moves or resizes one is
 * refused, naming every window that would change; one that keeps them all goes through.
 */
static void test_instrument_windows(void **state)
{
    (void)state;
    /* Running: capacity 4096 over two lcores, 0-2047 and 2048-4095. */
    assert_int_equal(diff_with(1, "lcores[1].instruments", "1000"), -EPERM);
    assert_int_equal(diff.n_restart, 2);
    assert_string_equal(diff.restart[0],
                        "lcores[0]: instrument ids 0-3095 instead of 0-2047 (windows are sized at "
                        "start)");
    assert_string_equal(diff.restart[1],
                        "lcores[1]: instrument ids 3096-4095 instead of 2048-4095 (windows are "
                        "sized at start)");
    /* Naming the size each lcore already has changes no window. */
    assert_int_equal(diff_with(1, "lcores[0].instruments", "2048"), 0);
    assert_true(tp_config_diff_empty(&diff));
    /* A new capacity is named once, not again as every window it moves. */
    assert_int_equal(diff_with(2, "instruments.capacity", "8192", "lcores[0].instruments", "100"),
                     -EPERM);
    assert_int_equal(diff.n_restart, 1);
    assert_string_equal(diff.restart[0], "instruments.capacity");

    /* Running with sized windows, a reload that keeps them applies as usual. */
    assert_int_equal(
        tp_test_load_mutated(base_json, NULL, running, errs, 1, "lcores[1].instruments", "3000"),
        0);
    assert_int_equal(
        diff_with(2, "lcores[1].instruments", "3000", "instruments.exclude", "[\"*-*\"]"), 0);
    assert_true(diff.filters_changed);
    assert_int_equal(diff.n_restart, 0);
    /* Left out again, lcore 1 would go back to half the capacity. */
    assert_int_equal(diff_with(0), -EPERM);
    assert_string_equal(diff.restart[1],
                        "lcores[1]: instrument ids 2048-4095 instead of 1096-4095 (windows are "
                        "sized at start)");
    assert_int_equal(tp_test_load_mutated(base_json, NULL, running, errs, 0), 0);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_prepare_and_result_json(void **state)
{
    (void)state;
    char path[] = "/tmp/tp-reload-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);

    /* An invalid file: -EINVAL, every error listed, no changes reported. */
    write_file(path, "{\"eal\": {\"lcores\": \"0-2\"}, \"chanels\": []}");
    int rc = tp_reload_prepare(running, path, next, &diff, errs);
    assert_int_equal(rc, -EINVAL);
    json_t *j = tp_reload_result_json(rc, errs, &diff, running, next);
    assert_true(json_is_false(json_object_get(j, "ok")));
    assert_null(json_object_get(j, "changes"));
    json_t *list = json_object_get(j, "errors");
    assert_int_equal(json_array_size(list), errs->count);
    bool typo = false;
    for (size_t i = 0; i < json_array_size(list); i++)
        typo |= strcmp(json_string_value(json_array_get(list, i)),
                       "chanels: unknown key (did you mean \"channels\"?)") == 0;
    assert_true(typo);
    json_decref(j);

    /* A valid one that removes channel c from lcore 2's list and adds nothing else. */
    json_error_t jerr;
    json_t *doc = json_loads(base_json, 0, &jerr);
    json_array_remove(json_object_get(doc, "channels"), 2);
    json_object_set_new(json_array_get(json_object_get(doc, "lcores"), 1), "channels",
                        json_array());
    char *text = json_dumps(doc, 0);
    json_decref(doc);
    write_file(path, text);
    free(text);
    rc = tp_reload_prepare(running, path, next, &diff, errs);
    assert_int_equal(rc, 0);
    j = tp_reload_result_json(rc, errs, &diff, running, next);
    assert_true(json_is_true(json_object_get(j, "ok")));
    json_t *changes = json_object_get(j, "changes");
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(changes, "channels_removed"), 0)), "c");
    assert_int_equal(json_array_size(json_object_get(changes, "channels_added")), 0);
    assert_int_equal(json_array_size(json_object_get(changes, "restart_needed")), 0);
    json_decref(j);

    /* A missing file. */
    unlink(path);
    assert_int_equal(tp_reload_prepare(running, path, next, &diff, errs), -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_identical_is_empty),      cmocka_unit_test(test_channel_added),
        cmocka_unit_test(test_channel_removed),         cmocka_unit_test(test_venue_part_changed),
        cmocka_unit_test(test_channel_changed),         cmocka_unit_test(test_live_sections),
        cmocka_unit_test(test_restart_needed),          cmocka_unit_test(test_instrument_windows),
        cmocka_unit_test(test_prepare_and_result_json),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
