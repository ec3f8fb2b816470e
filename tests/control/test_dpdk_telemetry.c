/*
 * DPDK telemetry: start EAL (no hugepages, no PCI), register tickplane's commands, then ask them
 * over the real telemetry socket as dpdk-telemetry.py does.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <rte_eal.h>

#include "dpdk_telemetry.h"

static struct tp_counters *area;
static int sock = -1;

static void latency(void *ctx, struct tp_histogram *out, double *ns_per_unit)
{
    (void)ctx;
    tp_hist_reset(out);
    for (uint64_t v = 1; v <= 10; v++)
        tp_hist_record(out, v * 10);
    *ns_per_unit = 0.5;
}

/* Two packets held 1 ms and 3 ms (in us). */
static void gap_wait(void *ctx, struct tp_histogram *out, double *ns_per_unit)
{
    (void)ctx;
    tp_hist_reset(out);
    tp_hist_record(out, 1000);
    tp_hist_record(out, 3000);
    *ns_per_unit = 1000.0;
}

static void control(void *ctx, struct tp_ctl_server_stats *out)
{
    (void)ctx;
    memset(out, 0, sizeof(*out));
    out->clients = 2;
    out->refused = 5;
}

static json_t *ask(const char *cmd)
{
    assert_true(send(sock, cmd, strlen(cmd), 0) > 0);
    static char buf[65536];
    ssize_t n = recv(sock, buf, sizeof(buf) - 1, 0);
    assert_true(n > 0);
    buf[n] = '\0';
    json_error_t jerr;
    json_t *reply = json_loads(buf, 0, &jerr);
    assert_non_null(reply);
    return reply;
}

static int setup(void **state)
{
    (void)state;
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "--file-prefix=tp-tel-%d", (int)getpid());
    char *argv[] = {"test", "-l", "0",    "--no-huge",        "--no-pci",
                    "-m",   "64", prefix, "--log-level=error"};
    if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])), argv) < 0)
        return -1;
    size_t size = tp_counters_memsize(8);
    area = aligned_alloc(64, (size + 63) & ~(size_t)63);
    tp_counters_init(area, 8);
    tp_counter_set(tp_counters_register(area, "bus.ring.published"), 7);
    tp_counter_set(tp_counters_register(area, "line.channel=x.received"), 9);
    struct tp_telemetry_sources src = {
        .counters = area, .latency = latency, .gap_wait = gap_wait, .control = control};
    if (tp_dpdk_telemetry_register(&src) != 0)
        return -1;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/dpdk_telemetry.v2",
             rte_eal_get_runtime_dir());
    sock = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    if (connect(sock, (struct sockaddr *)&addr, sizeof(addr)) != 0)
        return -1;
    char hello[1024];
    return recv(sock, hello, sizeof(hello), 0) > 0 ? 0 : -1; /* the version banner */
}

static int teardown(void **state)
{
    (void)state;
    char dir[256];
    snprintf(dir, sizeof(dir), "%s", rte_eal_get_runtime_dir());
    close(sock);
    rte_eal_cleanup();
    free(area);
    /* EAL leaves its runtime directory behind: remove this test's one. */
    DIR *d = opendir(dir);
    for (struct dirent *e; d != NULL && (e = readdir(d)) != NULL;) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.')
            unlink(path);
    }
    if (d != NULL)
        closedir(d);
    rmdir(dir);
    return 0;
}

static void test_counters(void **state)
{
    (void)state;
    json_t *r = ask("/tickplane/counters");
    json_t *d = json_object_get(r, "/tickplane/counters");
    assert_int_equal(json_object_size(d), 2);
    assert_int_equal(json_integer_value(json_object_get(d, "bus_ring_published")), 7);
    assert_int_equal(json_integer_value(json_object_get(d, "line_channel_x_received")), 9);
    json_decref(r);
    r = ask("/tickplane/counters,bus.");
    d = json_object_get(r, "/tickplane/counters");
    assert_int_equal(json_object_size(d), 1);
    assert_int_equal(json_integer_value(json_object_get(d, "bus_ring_published")), 7);
    json_decref(r);
}

static void test_latency_and_control(void **state)
{
    (void)state;
    json_t *r = ask("/tickplane/latency");
    json_t *d = json_object_get(r, "/tickplane/latency");
    assert_int_equal(json_integer_value(json_object_get(d, "count")), 10);
    assert_int_equal(json_integer_value(json_object_get(d, "min_ns")), 5);
    assert_int_equal(json_integer_value(json_object_get(d, "max_ns")), 50);
    assert_int_equal(json_integer_value(json_object_get(d, "p9999_ns")), 50);
    json_decref(r);
    r = ask("/tickplane/gap_wait");
    d = json_object_get(r, "/tickplane/gap_wait");
    assert_int_equal(json_integer_value(json_object_get(d, "count")), 2);
    assert_int_equal(json_integer_value(json_object_get(d, "min_ns")), 1000000);
    assert_int_equal(json_integer_value(json_object_get(d, "max_ns")), 3000000);
    json_decref(r);
    r = ask("/tickplane/control");
    d = json_object_get(r, "/tickplane/control");
    assert_int_equal(json_integer_value(json_object_get(d, "clients")), 2);
    assert_int_equal(json_integer_value(json_object_get(d, "refused")), 5);
    json_decref(r);
    /* The commands are listed for discovery. */
    r = ask("/");
    char *text = json_dumps(r, 0);
    assert_non_null(strstr(text, "/tickplane/latency"));
    free(text);
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counters),
        cmocka_unit_test(test_latency_and_control),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
