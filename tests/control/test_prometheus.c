/* Prometheus text output: name/label mapping, grouping by family, histograms, limits, the file. */
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

#include "prometheus.h"

static void expect_split(const char *name, int rc, const char *family, const char *labels)
{
    char f[128], l[256];
    assert_int_equal(tp_prom_split_name(name, "tickplane", f, sizeof(f), l, sizeof(l)), rc);
    if (rc == 0) {
        assert_string_equal(f, family);
        assert_string_equal(l, labels);
    }
}

static void test_split_name(void **state)
{
    (void)state;
    expect_split("bus.ring.published", 0, "tickplane_bus_ring_published", "");
    expect_split("line.channel=cme-901.side=a.received", 0, "tickplane_line_received",
                 "channel=\"cme-901\",side=\"a\"");
    expect_split("x.k=a\"b\\c", 0, "tickplane_x", "k=\"a\\\"b\\\\c\"");
    expect_split("bad-name.p99", 0, "tickplane_bad_name_p99", "");
    expect_split("a..b", 0, "tickplane_a_b", "");
    expect_split("k=v", -EINVAL, NULL, NULL);         /* no metric segment */
    expect_split("x.=v", -EINVAL, NULL, NULL);        /* empty label key */
    expect_split("x.bad-key=v", -EINVAL, NULL, NULL); /* label keys are not rewritten */
    char f[16], l[16];
    assert_int_equal(
        tp_prom_split_name("a.very.long.counter.name", "tickplane", f, sizeof(f), l, sizeof(l)),
        -EINVAL); /* does not fit: refused, not truncated */
}

static struct tp_counters *make_area(uint32_t capacity)
{
    size_t size = tp_counters_memsize(capacity);
    void *mem = aligned_alloc(64, (size + 63) & ~(size_t)63);
    assert_non_null(mem);
    assert_int_equal(tp_counters_init(mem, capacity), 0);
    return mem;
}

static void test_counters_grouped_by_family(void **state)
{
    (void)state;
    struct tp_counters *c = make_area(8);
    tp_counter_set(tp_counters_register(c, "line.channel=itch.side=a.received"), 10);
    tp_counter_set(tp_counters_register(c, "bus.ring.published"), 7);
    tp_counter_set(tp_counters_register(c, "line.channel=itch.side=b.received"), 11);
    tp_counters_register(c, "k=only-a-label"); /* skipped: no metric name */
    /* A peak can fall after a restart of its source: a gauge, no _total. */
    tp_counter_set(tp_counters_register(c, "dp.books.peak_live_orders"), 5);
    char mem[4096];
    struct tp_prom_buf b;
    tp_prom_buf_init(&b, mem, sizeof(mem));
    assert_int_equal(tp_prom_counters(&b, c, "tickplane", "demo\"1"), 4);
    assert_false(b.overflow);
    assert_string_equal(mem, "# HELP tickplane_bus_ring_published_total tickplane counter "
                             "bus_ring_published\n"
                             "# TYPE tickplane_bus_ring_published_total counter\n"
                             "tickplane_bus_ring_published_total{instance=\"demo\\\"1\"} 7\n"
                             "# HELP tickplane_dp_books_peak_live_orders Most live orders the "
                             "order books held at once\n"
                             "# TYPE tickplane_dp_books_peak_live_orders gauge\n"
                             "tickplane_dp_books_peak_live_orders{instance=\"demo\\\"1\"} 5\n"
                             "# HELP tickplane_line_received_total tickplane counter "
                             "line_received\n"
                             "# TYPE tickplane_line_received_total counter\n"
                             "tickplane_line_received_total{channel=\"itch\",side=\"a\","
                             "instance=\"demo\\\"1\"} 10\n"
                             "tickplane_line_received_total{channel=\"itch\",side=\"b\","
                             "instance=\"demo\\\"1\"} 11\n");
    assert_int_equal(b.len, strlen(mem));
    free(c);
}

static void test_corrupt_area_is_read_safely(void **state)
{
    (void)state;
    struct tp_counters *c = make_area(2);
    tp_counters_register(c, "ok");
    /* Another process scribbled: no terminator in the name, a count over capacity. */
    memset(c->slots[0].name, 'z', TP_COUNTER_NAME_LEN);
    atomic_store(&c->count, 1000);
    char mem[1024];
    struct tp_prom_buf b;
    tp_prom_buf_init(&b, mem, sizeof(mem));
    assert_int_equal(tp_prom_counters(&b, c, "tp", "i"), 1); /* the garbage slot 1 is skipped */
    assert_non_null(strstr(mem, "tp_zzzz"));
    free(c);
}

static void test_histogram_buckets(void **state)
{
    (void)state;
    struct tp_histogram h;
    tp_hist_reset(&h);
    /* 1..100 units of 1 us: 1 us, 2 us, ... 100 us. */
    for (uint64_t v = 1; v <= 100; v++)
        tp_hist_record(&h, v);
    char mem[8192];
    struct tp_prom_buf b;
    tp_prom_buf_init(&b, mem, sizeof(mem));
    tp_prom_histogram(&b, "tickplane_rx_to_publish_seconds", "receive to publish", "lcore=\"1\"",
                      &h, 1e-6);
    assert_false(b.overflow);
    assert_true(strncmp(mem,
                        "# HELP tickplane_rx_to_publish_seconds receive to publish\n"
                        "# TYPE tickplane_rx_to_publish_seconds histogram\n"
                        "tickplane_rx_to_publish_seconds_bucket{lcore=\"1\",le=\"1e-06\"} 1\n",
                        strlen("# HELP tickplane_rx_to_publish_seconds receive to publish\n"
                               "# TYPE tickplane_rx_to_publish_seconds histogram\n"
                               "tickplane_rx_to_publish_seconds_bucket{lcore=\"1\",le=\"1e-06\"} "
                               "1\n")) == 0);
    /* Values below 32 are exact: 1..5 us fall under 5 us, 1..10 under 10 us. */
    assert_non_null(strstr(mem, "_bucket{lcore=\"1\",le=\"5e-06\"} 5\n"));
    assert_non_null(strstr(mem, "_bucket{lcore=\"1\",le=\"1e-05\"} 10\n"));
    assert_non_null(strstr(mem, "_bucket{lcore=\"1\",le=\"2.5e-05\"} 25\n"));
    /* Above 32 buckets are 1/32 of a power of two wide: 97..100 share 96..99 and 100..103's,
     * so the 100 us bound may hold fewer, never more, than the 100 samples. */
    const char *at = strstr(mem, "_bucket{lcore=\"1\",le=\"0.0001\"} ");
    assert_non_null(at);
    unsigned long under = strtoul(strchr(at, '}') + 2, NULL, 10);
    assert_in_range(under, 96, 100);
    assert_non_null(strstr(mem, "_bucket{lcore=\"1\",le=\"0.00025\"} 100\n"));
    assert_non_null(strstr(mem, "_bucket{lcore=\"1\",le=\"+Inf\"} 100\n"));
    assert_non_null(strstr(mem, "tickplane_rx_to_publish_seconds_sum{lcore=\"1\"} 0.00505"));
    assert_non_null(strstr(mem, "tickplane_rx_to_publish_seconds_count{lcore=\"1\"} 100\n"));
    /* Buckets are cumulative: never falling. */
    unsigned long last = 0;
    for (const char *p = strstr(mem, "_bucket{"); p != NULL; p = strstr(p + 1, "_bucket{")) {
        unsigned long v = strtoul(strchr(p, '}') + 2, NULL, 10);
        assert_true(v >= last);
        last = v;
    }
    /* Without labels: no empty braces. */
    tp_prom_buf_init(&b, mem, sizeof(mem));
    tp_prom_histogram(&b, "x", "h", NULL, &h, 1.0);
    assert_non_null(strstr(mem, "\nx_sum 5050\nx_count 100\n"));
    assert_non_null(strstr(mem, "x_bucket{le=\"+Inf\"} 100\n"));
}

static void test_build_info(void **state)
{
    (void)state;
    char mem[1024];
    struct tp_prom_buf b;
    tp_prom_buf_init(&b, mem, sizeof(mem));
    tp_prom_build_info(&b, "demo", "0.1.0", "abc123");
    assert_string_equal(mem, "# HELP tickplane_build_info The running daemon's version and commit "
                             "(always 1)\n# TYPE tickplane_build_info gauge\n"
                             "tickplane_build_info{version=\"0.1.0\",commit=\"abc123\","
                             "instance=\"demo\"} 1\n");
}

static void test_overflow_leaves_whole_lines(void **state)
{
    (void)state;
    struct tp_ctl_server_stats s = {.clients = 3, .requests = 99};
    char mem[100];
    struct tp_prom_buf b;
    tp_prom_buf_init(&b, mem, sizeof(mem));
    tp_prom_ctl_stats(&b, "i", &s);
    assert_true(b.overflow);
    assert_int_equal(strlen(mem), b.len);
    assert_true(b.len == 0 || mem[b.len - 1] == '\n');
    char big[8192];
    tp_prom_buf_init(&b, big, sizeof(big));
    tp_prom_ctl_stats(&b, "i", &s);
    assert_false(b.overflow);
    assert_non_null(strstr(big, "# TYPE tickplane_control_clients gauge\n"
                                "tickplane_control_clients{instance=\"i\"} 3\n"));
    assert_non_null(strstr(big, "tickplane_control_requests_total{instance=\"i\"} 99\n"));
}

static void test_write_file_atomically(void **state)
{
    (void)state;
    char path[] = "/tmp/tp-prom-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(tp_prom_write_file(path, "a 1\n", 4), 0);
    assert_int_equal(tp_prom_write_file(path, "b 2\n", 4), 0);
    FILE *f = fopen(path, "r");
    char line[16] = "";
    assert_non_null(fgets(line, sizeof(line), f));
    fclose(f);
    assert_string_equal(line, "b 2\n");
    unlink(path);
    assert_int_equal(tp_prom_write_file("/nonexistent-dir/x.prom", "a", 1), -ENOENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_name),
        cmocka_unit_test(test_counters_grouped_by_family),
        cmocka_unit_test(test_corrupt_area_is_read_safely),
        cmocka_unit_test(test_histogram_buckets),
        cmocka_unit_test(test_build_info),
        cmocka_unit_test(test_overflow_leaves_whole_lines),
        cmocka_unit_test(test_write_file_atomically),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
