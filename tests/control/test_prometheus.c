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
    char mem[4096];
    struct tp_prom_buf b;
    tp_prom_buf_init(&b, mem, sizeof(mem));
    assert_int_equal(tp_prom_counters(&b, c, "tickplane", "demo\"1"), 3);
    assert_false(b.overflow);
    assert_string_equal(mem, "# TYPE tickplane_bus_ring_published_total counter\n"
                             "tickplane_bus_ring_published_total{instance=\"demo\\\"1\"} 7\n"
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

static void test_histogram_summary(void **state)
{
    (void)state;
    struct tp_histogram h;
    tp_hist_reset(&h);
    for (uint64_t v = 1; v <= 100; v++)
        tp_hist_record(&h, v);
    char mem[4096], want[4096];
    struct tp_prom_buf b;
    tp_prom_buf_init(&b, mem, sizeof(mem));
    tp_prom_histogram(&b, "tickplane_rx_to_publish_ns", "receive to publish", "lcore=\"1\"", &h,
                      2.0);
    snprintf(want, sizeof(want),
             "# HELP tickplane_rx_to_publish_ns receive to publish\n"
             "# TYPE tickplane_rx_to_publish_ns summary\n"
             "tickplane_rx_to_publish_ns{lcore=\"1\",quantile=\"0.5\"} %llu\n"
             "tickplane_rx_to_publish_ns{lcore=\"1\",quantile=\"0.9\"} %llu\n"
             "tickplane_rx_to_publish_ns{lcore=\"1\",quantile=\"0.99\"} %llu\n"
             "tickplane_rx_to_publish_ns{lcore=\"1\",quantile=\"0.999\"} 200\n"
             "tickplane_rx_to_publish_ns{lcore=\"1\",quantile=\"0.9999\"} 200\n"
             "tickplane_rx_to_publish_ns_sum{lcore=\"1\"} 10100\n"
             "tickplane_rx_to_publish_ns_count{lcore=\"1\"} 100\n"
             "# TYPE tickplane_rx_to_publish_ns_min gauge\n"
             "tickplane_rx_to_publish_ns_min{lcore=\"1\"} 2\n"
             "# TYPE tickplane_rx_to_publish_ns_max gauge\n"
             "tickplane_rx_to_publish_ns_max{lcore=\"1\"} 200\n",
             (unsigned long long)tp_hist_percentile(&h, 50) * 2,
             (unsigned long long)tp_hist_percentile(&h, 90) * 2,
             (unsigned long long)tp_hist_percentile(&h, 99) * 2);
    assert_string_equal(mem, want);
    /* The median of 1..100 is 50 within the histogram's 1/32 resolution. */
    assert_in_range(tp_hist_percentile(&h, 50), 50, 52);
    /* Without labels: no empty braces. */
    tp_prom_buf_init(&b, mem, sizeof(mem));
    tp_prom_histogram(&b, "x", "h", NULL, &h, 1.0);
    assert_non_null(strstr(mem, "\nx_sum 5050\nx_count 100\n"));
    assert_non_null(strstr(mem, "x{quantile=\"0.5\"}"));
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
        cmocka_unit_test(test_histogram_summary),
        cmocka_unit_test(test_overflow_leaves_whole_lines),
        cmocka_unit_test(test_write_file_atomically),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
