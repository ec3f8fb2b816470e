/*
 * The control plane runner: reloads from the config file (via the socket and via the SIGHUP
 * path), what reaches the daemon's apply hook, that failures change nothing, and the metrics it
 * exports (textfile and HTTP).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "control_plane.h"
#include "fake_daemon.h"

static char dir[64], cfg_path[128], sock_path[128], prom_path[128];
static struct tp_control_plane *cp;
static struct tp_counters *area;

struct applied {
    unsigned calls;
    unsigned added, removed, changed;
    bool filters;
    int fail_with;
};
static struct applied applied;

static int apply(void *ctx, const struct tp_config *next, const struct tp_config_diff *diff,
                 char *err, size_t err_size)
{
    (void)ctx;
    (void)next;
    applied.calls++;
    if (applied.fail_with != 0) {
        snprintf(err, err_size, "lcore busy");
        return applied.fail_with;
    }
    applied.added += diff->n_added;
    applied.removed += diff->n_removed;
    applied.changed += diff->n_changed;
    applied.filters |= diff->filters_changed;
    return 0;
}

static void latency(void *ctx, struct tp_histogram *out, double *ns_per_unit)
{
    (void)ctx;
    tp_hist_reset(out);
    tp_hist_record(out, 100);
    *ns_per_unit = 1.0;
}

/* Three packets held behind gaps for 2 ms, 3 ms and 40 ms (in us: ns_per_unit 1000). */
static void gap_wait(void *ctx, struct tp_histogram *out, double *ns_per_unit)
{
    (void)ctx;
    tp_hist_reset(out);
    tp_hist_record(out, 2000);
    tp_hist_record(out, 3000);
    tp_hist_record(out, 40000);
    *ns_per_unit = 1000.0;
}

/* Write the config with the given extra channel JSON (or none) and telemetry section. */
static void write_config(const char *extra_channel, const char *telemetry)
{
    FILE *f = fopen(cfg_path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"name\": \"cp\", \"eal\": {\"lcores\": \"0-1\"},"
            " \"ports\": [{\"name\": \"p0\", \"vdev\": \"net_null0\"}],"
            " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"p0\"}],"
            "   \"channels\": [\"a\"%s]}],"
            " \"channels\": [{\"name\": \"a\", \"protocol\": \"itch\","
            "   \"lines\": {\"a\": {\"group\": \"224.0.0.1\", \"port\": 1}}}%s%s],"
            " \"control\": {\"socket\": \"%s\"},"
            " \"telemetry\": %s}",
            extra_channel ? ", \"b\"" : "", extra_channel ? ", " : "",
            extra_channel ? extra_channel : "", sock_path, telemetry);
    fclose(f);
}

/* The channel the reload tests add beside "a". */
static const char CHANNEL_B[] = "{\"name\": \"b\", \"protocol\": \"itch\", \"lines\": {\"a\":"
                                " {\"group\": \"224.0.0.2\", \"port\": 1}}}";

/* write_config with the telemetry every test starts from: the Prometheus file, every 100 ms. */
static void write_config_prom(const char *extra_channel)
{
    char telemetry[256];
    snprintf(telemetry, sizeof(telemetry), "{\"prometheus_file\": \"%s\", \"interval_ms\": 100}",
             prom_path);
    write_config(extra_channel, telemetry);
}

static int setup(void **state)
{
    (void)state;
    memset(&applied, 0, sizeof(applied));
    memset(&daemon_state, 0, sizeof(daemon_state));
    strcpy(dir, "/tmp/tp-cp-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(cfg_path, sizeof(cfg_path), "%s/tp.json", dir);
    snprintf(sock_path, sizeof(sock_path), "%s/ctl.sock", dir);
    snprintf(prom_path, sizeof(prom_path), "%s/tp.prom", dir);
    write_config_prom(NULL);
    static struct tp_config cfg;
    static struct tp_config_errors errs;
    assert_int_equal(tp_config_load_file(cfg_path, &cfg, &errs), 0);
    size_t size = tp_counters_memsize(4);
    area = aligned_alloc(64, (size + 63) & ~(size_t)63);
    tp_counters_init(area, 4);
    tp_counter_set(tp_counters_register(area, "bus.ring.published"), 42);
    struct tp_control_plane_hooks hooks = {.ops = fake_ops,
                                           .apply = apply,
                                           .counters = area,
                                           .latency = latency,
                                           .gap_wait = gap_wait};
    assert_int_equal(tp_control_plane_open(&cp, &cfg, &hooks), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tp_control_plane_close(cp);
    free(area);
    unlink(cfg_path);
    unlink(prom_path);
    rmdir(dir);
    return 0;
}

/* One request over the socket, serving meanwhile. */
static json_t *request(const char *line)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, sock_path);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    assert_true(send(fd, line, strlen(line), 0) > 0);
    assert_true(send(fd, "\n", 1, 0) == 1);
    static char buf[65536];
    size_t len = 0;
    for (int i = 0; i < 500 && memchr(buf, '\n', len) == NULL; i++) {
        tp_control_plane_poll(cp, 2);
        ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, MSG_DONTWAIT);
        if (n > 0)
            len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    json_error_t jerr;
    json_t *reply = json_loads(buf, JSON_DISABLE_EOF_CHECK, &jerr);
    assert_non_null(reply);
    return reply;
}

static json_t *reload_result(json_t *reply)
{
    json_t *r = json_object_get(reply, "reload");
    assert_non_null(r);
    return r;
}

static void test_reload_adds_channel(void **state)
{
    (void)state;
    write_config_prom(CHANNEL_B);
    json_t *reply = request("{\"cmd\": \"reload\"}");
    json_t *r = reload_result(reply);
    assert_true(json_is_true(json_object_get(r, "ok")));
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(json_object_get(r, "changes"), "channels_added"), 0)),
                        "b");
    json_decref(reply);
    assert_int_equal(applied.calls, 1);
    assert_int_equal(applied.added, 1);
    assert_int_equal(tp_control_plane_config(cp)->n_channels, 2);
    /* Reloading the same file again changes nothing and does not bother the data plane. */
    json_decref(tp_control_plane_reload(cp));
    assert_int_equal(applied.calls, 1);
}

static void test_bad_file_changes_nothing(void **state)
{
    (void)state;
    FILE *f = fopen(cfg_path, "w");
    fputs("{\"eal\": {\"lcores\": \"0-1\"}, \"ports\": 3}", f);
    fclose(f);
    json_t *reply = request("{\"cmd\": \"reload\"}");
    json_t *r = reload_result(reply);
    assert_true(json_is_false(json_object_get(r, "ok")));
    char *text = json_dumps(json_object_get(r, "errors"), 0);
    assert_non_null(strstr(text, "ports: expected an array, got integer"));
    free(text);
    json_decref(reply);
    assert_int_equal(applied.calls, 0);
    assert_int_equal(tp_control_plane_config(cp)->n_channels, 1);
    assert_string_equal(tp_control_plane_config(cp)->channels[0].name, "a");
}

static void test_restart_needed_and_apply_failure(void **state)
{
    (void)state;
    /* A new control socket path cannot be applied live. */
    write_config_prom(NULL);
    FILE *f = fopen(cfg_path, "r+");
    char body[4096];
    size_t n = fread(body, 1, sizeof(body) - 1, f);
    body[n] = '\0';
    fclose(f);
    char *sock = strstr(body, "ctl.sock");
    memcpy(sock, "ctx", 3);
    f = fopen(cfg_path, "w");
    fputs(body, f);
    fclose(f);
    json_t *r = tp_control_plane_reload(cp);
    assert_true(json_is_false(json_object_get(r, "ok")));
    assert_string_equal(json_string_value(json_array_get(
                            json_object_get(json_object_get(r, "changes"), "restart_needed"), 0)),
                        "control (socket, mode or sizes)");
    json_decref(r);
    assert_int_equal(applied.calls, 0);

    /* The daemon refuses to apply: the old config stays, the reason is reported. */
    write_config_prom(CHANNEL_B);
    applied.fail_with = -EBUSY;
    r = tp_control_plane_reload(cp);
    assert_true(json_is_false(json_object_get(r, "ok")));
    char *text = json_dumps(json_object_get(r, "errors"), 0);
    assert_string_equal(text, "[\"lcore busy\"]");
    free(text);
    json_decref(r);
    assert_int_equal(tp_control_plane_config(cp)->n_channels, 1);
}

/* A changed channel and a new filter reach the daemon's apply hook as such; then it runs. */
static void test_changed_channel_and_filter(void **state)
{
    (void)state;
    FILE *f = fopen(cfg_path, "w");
    assert_non_null(f);
    fprintf(f,
            "{\"name\": \"cp\", \"eal\": {\"lcores\": \"0-1\"},"
            " \"ports\": [{\"name\": \"p0\", \"vdev\": \"net_null0\"}],"
            " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"p0\"}], \"channels\": [\"a\"]}],"
            " \"channels\": [{\"name\": \"a\", \"protocol\": \"itch\","
            "   \"lines\": {\"a\": {\"group\": \"224.0.0.1\", \"port\": 2}}}],"
            " \"instruments\": {\"exclude\": [\"X*\"]},"
            " \"control\": {\"socket\": \"%s\"},"
            " \"telemetry\": {\"prometheus_file\": \"%s\", \"interval_ms\": 100}}",
            sock_path, prom_path);
    fclose(f);
    json_t *r = tp_control_plane_reload(cp);
    assert_true(json_is_true(json_object_get(r, "ok")));
    json_t *changes = json_object_get(r, "changes");
    assert_string_equal(
        json_string_value(json_array_get(json_object_get(changes, "channels_changed"), 0)), "a");
    assert_true(json_is_true(json_object_get(changes, "filters")));
    json_decref(r);
    assert_int_equal(applied.calls, 1);
    assert_int_equal(applied.changed, 1);
    assert_int_equal(applied.added + applied.removed, 0);
    assert_true(applied.filters);
    assert_int_equal(tp_control_plane_config(cp)->channels[0].lines[0].port, 2);
    assert_string_equal(tp_control_plane_config(cp)->instruments.exclude[0], "X*");
}

static void test_sighup_path(void **state)
{
    (void)state;
    write_config_prom(CHANNEL_B);
    tp_control_plane_request_reload(cp);
    assert_int_equal(applied.calls, 0); /* nothing happens in the signal handler */
    tp_control_plane_poll(cp, 0);
    assert_int_equal(applied.calls, 1);
    assert_int_equal(tp_control_plane_config(cp)->n_channels, 2);
}

static void test_metrics_file_and_verb(void **state)
{
    (void)state;
    for (int i = 0; i < 50 && access(prom_path, R_OK) != 0; i++)
        tp_control_plane_poll(cp, 10);
    FILE *f = fopen(prom_path, "r");
    assert_non_null(f);
    static char text[65536];
    size_t n = fread(text, 1, sizeof(text) - 1, f);
    text[n] = '\0';
    fclose(f);
    assert_non_null(strstr(text, "tickplane_bus_ring_published_total{instance=\"cp\"} 42\n"));
    assert_non_null(strstr(text, "tickplane_rx_to_publish_seconds_count{instance=\"cp\"} 1\n"));
    assert_non_null(strstr(text, "# TYPE tickplane_gap_wait_seconds histogram\n"));
    assert_non_null(strstr(text, "tickplane_gap_wait_seconds_count{instance=\"cp\"} 3\n"));
    assert_non_null(
        strstr(text, "tickplane_gap_wait_seconds_bucket{instance=\"cp\",le=\"0.005\"} 2\n"));
    assert_non_null(strstr(text, "tickplane_gap_wait_seconds_sum{instance=\"cp\"} 0.045"));
    assert_non_null(strstr(text, "tickplane_control_clients{instance=\"cp\"} 0\n"));
    assert_non_null(strstr(text, "tickplane_build_info{version=\""));
    json_t *reply = request("{\"cmd\": \"metrics\"}");
    assert_non_null(strstr(json_string_value(json_object_get(reply, "metrics")),
                           "tickplane_bus_ring_published_total{instance=\"cp\"} 42\n"));
    json_decref(reply);
    /* Forwarded ops reach the daemon's. */
    reply = request("{\"cmd\": \"status\"}");
    assert_string_equal(json_string_value(json_object_get(reply, "daemon")), "fake");
    json_decref(reply);
}

/* A request over TCP (method and path), serving meanwhile; returns the whole response. */
static const char *http_request(uint16_t port, const char *method, const char *path)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    char req[128];
    snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: x\r\n\r\n", method, path);
    assert_true(send(fd, req, strlen(req), 0) > 0);
    static char buf[65536];
    size_t len = 0;
    for (int i = 0; i < 500; i++) {
        tp_control_plane_poll(cp, 2);
        ssize_t n = recv(fd, buf + len, sizeof(buf) - 1 - len, MSG_DONTWAIT);
        if (n == 0)
            break;
        if (n > 0)
            len += (size_t)n;
    }
    close(fd);
    buf[len] = '\0';
    return buf;
}

static void test_http_endpoint_after_reload(void **state)
{
    (void)state;
    assert_int_equal(tp_control_plane_http_port(cp), 0);
    /* Turning the HTTP endpoint on is a live change (port 0 is not allowed: pick a free one). */
    int probe = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET};
    socklen_t len = sizeof(addr);
    bind(probe, (struct sockaddr *)&addr, sizeof(addr));
    getsockname(probe, (struct sockaddr *)&addr, &len);
    uint16_t port = ntohs(addr.sin_port);
    close(probe);
    char telemetry[256];
    snprintf(telemetry, sizeof(telemetry), "{\"prometheus_port\": %u}", port);
    write_config(NULL, telemetry);
    json_t *r = tp_control_plane_reload(cp);
    assert_true(json_is_true(json_object_get(r, "ok")));
    assert_true(json_is_true(json_object_get(json_object_get(r, "changes"), "telemetry")));
    json_decref(r);
    assert_int_equal(tp_control_plane_http_port(cp), port);
    const char *resp = http_request(port, "GET", "/metrics");
    assert_true(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
    assert_non_null(strstr(resp, "Content-Type: text/plain; version=0.0.4\r\n"));
    assert_non_null(strstr(resp, "\r\n\r\n# HELP tickplane_bus_ring_published_total "));
    resp = http_request(port, "GET", "/metrics?x=1");
    assert_true(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
    /* HEAD: the headers only. */
    resp = http_request(port, "HEAD", "/metrics");
    assert_true(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
    assert_null(strstr(resp, "# TYPE"));
    resp = http_request(port, "POST", "/metrics");
    assert_true(strncmp(resp, "HTTP/1.1 405 Method Not Allowed\r\n", 33) == 0);
    assert_non_null(strstr(resp, "Allow: GET, HEAD\r\n"));
    resp = http_request(port, "GET", "/secret");
    assert_true(strncmp(resp, "HTTP/1.1 404 Not Found\r\n", 24) == 0);
    resp = http_request(port, "GET", "/metricsx");
    assert_true(strncmp(resp, "HTTP/1.1 404 Not Found\r\n", 24) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_reload_adds_channel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_file_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_restart_needed_and_apply_failure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changed_channel_and_filter, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sighup_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_metrics_file_and_verb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_http_endpoint_after_reload, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
