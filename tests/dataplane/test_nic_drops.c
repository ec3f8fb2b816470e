/*
 * Tests for dataplane/daemon/nic_drops.c: a scripted port whose drop counters stay, rise and
 * rise in a flood. Each rise is one "NIC drops rising" line with the port, each counter's rise
 * and total; no rise, no line; a flood is cut to the burst and the rest counted as suppressed.
 * (The virtual devices of the integration tests report no drops: DPDK 22.11's af_packet keeps
 * imissed at 0.)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"
#include "nic_drops.h"

static FILE *out;
static long read_at; /* what written() returned so far */
static char text[8192];

/* The lines written since the last call. */
static const char *written(void)
{
    fflush(out);
    fseek(out, read_at, SEEK_SET);
    size_t n = fread(text, 1, sizeof(text) - 1, out);
    text[n] = '\0';
    read_at += (long)n;
    fseek(out, 0, SEEK_END);
    return text;
}

static int setup(void **state)
{
    (void)state;
    out = tmpfile();
    read_at = 0;
    tp_log_open("tickplane", out);
    tp_log_set_burst(10);
    return out != NULL ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    tp_log_open("tickplane", stderr);
    fclose(out);
    return 0;
}

static void test_each_rise_is_a_line(void **state)
{
    (void)state;
    struct tp_nic_drops d = {0};
    assert_false(tp_nic_drops_scan(&d, "veth0", 0, 0, 0));
    assert_string_equal(written(), "");
    assert_true(tp_nic_drops_scan(&d, "veth0", 5, 0, 2));
    const char *line = written();
    assert_non_null(strstr(line, " warning port: NIC drops rising: port veth0: +5 imissed, +0 "
                                 "ierrors, +2 rx_nombuf in the last second (5, 0, 2 in all)\n"));
    assert_null(strchr(strchr(line, '\n') + 1, '\n'));     /* one line */
    assert_false(tp_nic_drops_scan(&d, "veth0", 5, 0, 2)); /* steady: nothing to say */
    assert_string_equal(written(), "");
    assert_true(tp_nic_drops_scan(&d, "veth0", 5, 3, 2));
    assert_non_null(strstr(written(), "port veth0: +0 imissed, +3 ierrors, +0 rx_nombuf in the "
                                      "last second (5, 3, 2 in all)\n"));
    /* Statistics reset under it: no rise, no line; rises count from the new values. */
    assert_false(tp_nic_drops_scan(&d, "veth0", 1, 0, 0));
    assert_true(tp_nic_drops_scan(&d, "veth0", 4, 0, 0));
    assert_non_null(strstr(written(), "+3 imissed, +0 ierrors, +0 rx_nombuf"));
}

static void test_flood_is_limited(void **state)
{
    (void)state;
    struct tp_nic_drops d = {0};
    uint64_t lines = tp_log_lines(), suppressed = tp_log_suppressed();
    for (uint64_t i = 1; i <= 25; i++)
        assert_true(tp_nic_drops_scan(&d, "p1", i, 0, 0));
    /* 10 a second: 15 dropped, or a few less if the loop was held off the CPU past a second. */
    assert_int_equal(tp_log_lines() - lines + tp_log_suppressed() - suppressed, 25);
    assert_in_range(tp_log_suppressed() - suppressed, 5, 15);
    written();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_each_rise_is_a_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flood_is_limited, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
