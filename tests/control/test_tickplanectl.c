/*
 * tickplanectl end to end: the real binary against a control socket served in this process (with
 * the fake daemon behind it), output and exit status checked; plus the renderer's exact text.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"
#include "fake_daemon.h"
#include "render.h"
#include "stat.h"
#include "server.h"

static char dir[64], sock_path[128];
static struct tp_config *cfg;
static struct tp_ctl_server *srv;

static int setup(void **state)
{
    (void)state;
    memset(&daemon_state, 0, sizeof(daemon_state));
    strcpy(dir, "/tmp/tp-ctl-cli-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(sock_path, sizeof(sock_path), "%s/ctl.sock", dir);
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"eal\": {\"lcores\": \"0-1\"},"
             " \"ports\": [{\"name\": \"p0\", \"vdev\": \"net_null0\"}],"
             " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"p0\"}], \"channels\": [\"c\", "
             "\"n\"]}],"
             " \"channels\": [{\"name\": \"c\", \"protocol\": \"mdp3\","
             "   \"lines\": {\"a\": {\"group\": \"224.0.31.1\", \"port\": 1}}},"
             "  {\"name\": \"n\", \"protocol\": \"itch\","
             "   \"lines\": {\"a\": {\"group\": \"224.0.31.2\", \"port\": 1}}}],"
             " \"control\": {\"socket\": \"%s\"}}",
             sock_path);
    cfg = malloc(sizeof(*cfg));
    struct tp_config_errors errs;
    assert_int_equal(tp_config_load_string(json, NULL, cfg, &errs), 0);
    assert_int_equal(tp_ctl_server_open(&srv, cfg, &fake_ops), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tp_ctl_server_close(srv);
    free(cfg);
    rmdir(dir);
    return 0;
}

struct run {
    int status;
    char out[65536];
    char err[4096];
};

static void drain(int fd, char *buf, size_t size, size_t *len)
{
    for (;;) {
        ssize_t n = read(fd, buf + *len, size - 1 - *len);
        if (n <= 0)
            break;
        *len += (size_t)n;
    }
    buf[*len] = '\0';
}

/*
 * Run tickplanectl -s SOCKET args..., serving the socket meanwhile. If interrupt_when is given,
 * SIGINT is sent once it returns true.
 */
static void run_ctl(struct run *r, bool (*interrupt_when)(void), ...)
{
    char *argv[16] = {TP_TICKPLANECTL, "-s", sock_path};
    int argc = 3;
    va_list ap;
    va_start(ap, interrupt_when);
    for (char *a; (a = va_arg(ap, char *)) != NULL && argc < 15;)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    int out[2], err[2];
    assert_int_equal(pipe(out), 0);
    assert_int_equal(pipe(err), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        dup2(err[1], STDERR_FILENO);
        execv(argv[0], argv);
        _exit(127);
    }
    close(out[1]);
    close(err[1]);
    fcntl(out[0], F_SETFL, O_NONBLOCK);
    fcntl(err[0], F_SETFL, O_NONBLOCK);
    size_t olen = 0, elen = 0;
    bool interrupted = false;
    r->status = -1;
    for (int i = 0; i < 5000; i++) {
        tp_ctl_server_poll(srv, 1);
        drain(out[0], r->out, sizeof(r->out), &olen);
        drain(err[0], r->err, sizeof(r->err), &elen);
        if (interrupt_when != NULL && !interrupted && interrupt_when()) {
            kill(pid, SIGINT);
            interrupted = true;
        }
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid) {
            r->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128;
            break;
        }
    }
    drain(out[0], r->out, sizeof(r->out), &olen);
    drain(err[0], r->err, sizeof(r->err), &elen);
    close(out[0]);
    close(err[0]);
}

static void test_status_and_metrics(void **state)
{
    (void)state;
    static struct run r;
    run_ctl(&r, NULL, "status", NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "\"daemon\": \"fake\""));
    assert_non_null(strstr(r.out, "\"control\": {"));
    run_ctl(&r, NULL, "metrics", NULL);
    assert_int_equal(r.status, 0);
    assert_true(strncmp(r.out, "tp_up 1\n", 8) == 0);
}

static void test_book(void **state)
{
    (void)state;
    static struct run r;
    run_ctl(&r, NULL, "book", "ESZ6", "--venue", "CME", "--depth", "5", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "ESZ6 (CME)\n"
                               "   BID QTY            BID | ASK               ASK QTY\n"
                               "        10        4500.25 | 4500.50                 7\n");
    run_ctl(&r, NULL, "book", "XX", "--venue", "CME", NULL);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.err, "tickplanectl: unknown instrument XX\n");
}

static void test_instruments_reload_raw(void **state)
{
    (void)state;
    static struct run r;
    run_ctl(&r, NULL, "instruments", "*Z6", NULL);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "CME      ESZ6\nCME      NQZ6\n");
    run_ctl(&r, NULL, "reload", NULL);
    assert_int_equal(r.status, 0);
    assert_int_equal(daemon_state.reloads, 1);
    run_ctl(&r, NULL, "raw", "{\"cmd\":\"nope\",\"id\":3}", NULL);
    assert_int_equal(r.status, 1);
    assert_true(strncmp(r.out, "{\"id\":3,\"ok\":false,\"error\":\"unknown cmd \\\"nope\\\"", 47) ==
                0);
}

static void test_top_once(void **state)
{
    (void)state;
    static struct run r;
    run_ctl(&r, NULL, "top", "--once", "--venue", "CME", NULL);
    if (r.status != 0)
        fprintf(stderr, "stderr: %s\nstdout: %s\n", r.err, r.out);
    assert_int_equal(r.status, 0);
    /* Skip the first line (it has the time). */
    const char *rest = strchr(r.out, '\n');
    assert_non_null(rest);
    assert_true(strncmp(r.out, "tickplane top of book  ", 23) == 0);
    assert_non_null(strstr(r.out, "(3 instruments)"));
    assert_string_equal(
        rest + 1,
        "SYMBOL       VENUE       BID QTY            BID            ASK    ASK QTY  STATE\n"
        "ESZ6         CME              10        4500.25        4500.50          7\n"
        "NQZ6         CME                              ?                          \n");
}

static bool subscribed(void)
{
    return daemon_state.n_cmds >= 1;
}

static void test_subscribe_holds_until_interrupted(void **state)
{
    (void)state;
    static struct run r;
    run_ctl(&r, subscribed, "subscribe", "ES*", "--topics", "top,trades", "--venue", "CME", NULL);
    assert_int_equal(r.status, 0);
    assert_int_equal(daemon_state.cmds[0].op, TP_CTL_SUBSCRIBE);
    assert_int_equal(daemon_state.cmds[0].topics, TP_CFG_TOPIC_TOP | TP_CFG_TOPIC_TRADES);
    assert_non_null(strstr(r.out, "\"instrument\": \"ES*\""));
    /* The CLI left: the socket told the data plane to drop its subscriptions. */
    for (int i = 0;
         i < 100 && daemon_state.cmds[daemon_state.n_cmds - 1].op != TP_CTL_UNSUBSCRIBE_CLIENT; i++)
        tp_ctl_server_poll(srv, 2);
    assert_int_equal(daemon_state.cmds[daemon_state.n_cmds - 1].op, TP_CTL_UNSUBSCRIBE_CLIENT);
}

/* configs/demo.json with its files (socket, capture, metrics) in this test's directory. */
static void write_demo_config(const char *path)
{
    FILE *in = fopen(TP_CONFIGS_DIR "/demo.json", "r");
    assert_non_null(in);
    static char text[16384], out[32768];
    size_t n = fread(text, 1, sizeof(text) - 1, in);
    fclose(in);
    text[n] = '\0';
    const char *from = "/tmp/tickplane-demo";
    size_t o = 0;
    for (const char *p = text; *p;) {
        if (strncmp(p, from, strlen(from)) == 0) {
            o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", dir);
            p += strlen(from);
        } else {
            out[o++] = *p++;
        }
    }
    out[o] = '\0';
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(out, f);
    fclose(f);
}

/* A classic pcap file header (microseconds, version 2.4, Ethernet) and no record. */
static void write_pcap_header(const char *path)
{
    static const uint8_t header[24] = {0xd4, 0xc3, 0xb2, 0xa1, 2,    0,    4, 0, 0, 0, 0, 0,
                                       0,    0,    0,    0,    0xff, 0xff, 0, 0, 1, 0, 0, 0};
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(header, 1, sizeof(header), f), sizeof(header));
    fclose(f);
}

static void test_errors_and_check(void **state)
{
    (void)state;
    static struct run r;
    char *argv_bad[] = {TP_TICKPLANECTL, "-s", "/nonexistent/ctl.sock", "status", NULL};
    pid_t pid = fork();
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, STDERR_FILENO);
        execv(argv_bad[0], argv_bad);
        _exit(127);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_int_equal(WEXITSTATUS(status), 2);
    /* check: the config and what it needs of this host (the capture, the socket's directory). */
    char config[128], pcap[128];
    snprintf(config, sizeof(config), "%s/demo.json", dir);
    snprintf(pcap, sizeof(pcap), "%s/demo.pcap", dir);
    write_demo_config(config);
    run_ctl(&r, NULL, "check", config, NULL);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "ports[0].pcap: \""));
    assert_non_null(strstr(r.err, "demo.pcap\": No such file or directory"));
    write_pcap_header(pcap);
    run_ctl(&r, NULL, "check", config, NULL);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "valid (2 channels, 1 data lcores"));
    unlink(pcap);
    unlink(config);
    run_ctl(&r, NULL, "frobnicate", NULL);
    assert_int_equal(r.status, 2);
    assert_non_null(strstr(r.err, "usage: tickplanectl"));
}

static void test_render_state(void **state)
{
    (void)state;
    char out[320];
    json_t *o = json_pack("{s:s, s:s, s:s, s:s}", "status", "trading", "state", "STALE", "since",
                          "2026-12-02T00:31:02Z", "reason", "a gap given up");
    tp_render_state(o, true, out, sizeof(out));
    assert_string_equal(out, "STALE since 2026-12-02T00:31:02Z: a gap given up");
    tp_render_state(o, false, out, sizeof(out));
    assert_string_equal(out, "STALE");
    json_decref(o);
    /* Without the daemon's state: the book's own flags. */
    o = json_pack("{s:s, s:b, s:b}", "status", "trading", "stale", 0, "recovering", 1);
    tp_render_state(o, true, out, sizeof(out));
    assert_string_equal(out, "RECOVERING");
    json_decref(o);
    o = json_pack("{s:s, s:s, s:s}", "status", "trading", "state", "ok", "since", "x");
    tp_render_state(o, true, out, sizeof(out));
    assert_string_equal(out, "");
    json_decref(o);
    /* A stale book in the top-of-book row. */
    o = json_pack("{s:[], s:[], s:s}", "bids", "asks", "state", "STALE");
    char text[512] = "";
    FILE *f = fmemopen(text, sizeof(text), "w");
    tp_render_top_row(f, "NASDAQ", "AAAP", o);
    fclose(f);
    json_decref(o);
    char want[128];
    snprintf(want, sizeof(want), "%-12s %-8s%52s  STALE\n", "AAAP", "NASDAQ", "");
    assert_string_equal(text, want);
}

static void test_stat_view_rates(void **state)
{
    (void)state;
    json_t *prev =
        json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i}", "channel=itch.feed.messages", 1000,
                  "channel=itch.line=a.line.packets", 400, "channel=itch.arb.gaps", 1,
                  "port=p0.nic.ipackets", 500, "port=p0.nic.imissed", 0, "bus.published", 10,
                  "bus.ring=1.published", 5, "port=0.host.tx_retries", 0);
    json_t *now = json_pack(
        "{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:[{s:i, s:i, s:i, s:i, s:i, s:i}],"
        " s:{s:{s:i, s:i, s:i}}}",
        "channel=itch.feed.messages", 3000, "channel=itch.line=a.line.packets", 900,
        "channel=itch.arb.gaps", 4, "port=p0.nic.ipackets", 1500, "port=p0.nic.imissed", 7,
        "bus.published", 30, "bus.ring=1.published", 25, "port=0.host.tx_retries", 0,
        "channel=itch.mold.given_up", 2, "consumers", "pid", 42, "records", 50, "lag", 3, "lapped",
        1, "lost", 9, "resyncs", 2, "books", "NASDAQ", "instruments", 20, "stale", 5, "recovering",
        1);
    json_t *view = tp_stat_view(prev, now, 2.0);
    const json_t *ch = json_array_get(json_object_get(view, "channels"), 0);
    assert_string_equal(json_string_value(json_object_get(ch, "name")), "itch");
    assert_true(json_real_value(json_object_get(ch, "messages_per_s")) == 1000.0);
    assert_int_equal(json_integer_value(json_object_get(ch, "gaps")), 4);
    assert_int_equal(json_integer_value(json_object_get(ch, "given_up")), 2);
    const json_t *line = json_array_get(json_object_get(ch, "lines"), 0);
    assert_true(json_real_value(json_object_get(line, "packets_per_s")) == 250.0);
    /* Only NIC ports, not the host side's port=N counters. */
    assert_int_equal(json_array_size(json_object_get(view, "ports")), 1);
    const json_t *port = json_array_get(json_object_get(view, "ports"), 0);
    assert_true(json_real_value(json_object_get(port, "rx_per_s")) == 500.0);
    assert_int_equal(json_integer_value(json_object_get(port, "imissed")), 7);
    const json_t *bus = json_object_get(view, "bus");
    assert_int_equal(json_integer_value(json_object_get(bus, "published")), 55);
    assert_true(json_real_value(json_object_get(bus, "published_per_s")) == 20.0);
    char text[4096] = "";
    FILE *f = fmemopen(text, sizeof(text), "w");
    tp_stat_render(f, view);
    fclose(f);
    char want[256];
    snprintf(want, sizeof(want), "%-24s %4s %12s %10d %8d %8d %8d %8d %8d\n", "itch", "", "", 1000,
             4, 0, 0, 2, 0);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof(want), "%-24s %4s %12d\n", "", "a", 250);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof(want), "%-24s %12d %10d %10d\n", "NASDAQ", 20, 5, 1);
    assert_non_null(strstr(text, want));
    snprintf(want, sizeof(want), "%-24s %12d %10d %10d %10d\n", "p0", 500, 7, 0, 0);
    assert_non_null(strstr(text, want));
    assert_non_null(strstr(text, "BUS published 55 records, 20/s\n"));
    snprintf(want, sizeof(want), "%-24d %12d %10d %10d %10d %10d\n", 42, 50, 3, 1, 9, 2);
    assert_non_null(strstr(text, want));
    json_decref(view);
    /* A counter that went back (a channel re-added) is no negative rate. */
    view = tp_stat_view(now, prev, 1.0);
    ch = json_array_get(json_object_get(view, "channels"), 0);
    assert_true(json_real_value(json_object_get(ch, "messages_per_s")) == 0.0);
    json_decref(view);
    json_decref(prev);
    json_decref(now);
}

static void test_render_book_uneven_sides(void **state)
{
    (void)state;
    json_t *book =
        json_pack("{s:s, s:s, s:s, s:[{s:I,s:i},{s:I,s:i}], s:[]}", "symbol", "AAPL", "venue",
                  "NASDAQ", "status", "halted", "bids", "price9", (json_int_t)190120000000, "qty",
                  300, "price9", (json_int_t)190110000000, "qty", 100, "asks");
    char text[1024] = "";
    FILE *f = fmemopen(text, sizeof(text), "w");
    tp_render_book(f, book);
    fclose(f);
    json_decref(book);
    assert_string_equal(text, "AAPL (NASDAQ) halted HALTED\n"
                              "   BID QTY            BID | ASK               ASK QTY\n"
                              "       300         190.12 |                          \n"
                              "       100         190.11 |                          \n");
}

/* An order-level book lacking the venue's older orders says so under its (healthy) levels. */
static void test_render_book_orders_incomplete(void **state)
{
    (void)state;
    json_t *book = json_pack("{s:s, s:s, s:s, s:[{s:I,s:i}], s:[], s:b}", "symbol", "ESZ6", "venue",
                             "CME", "status", "trading", "bids", "price9",
                             (json_int_t)4000250000000, "qty", 5, "asks", "orders_incomplete", 1);
    char text[1024] = "";
    FILE *f = fmemopen(text, sizeof(text), "w");
    tp_render_book(f, book);
    fclose(f);
    json_decref(book);
    assert_string_equal(text,
                        "ESZ6 (CME) trading\n"
                        "   BID QTY            BID | ASK               ASK QTY\n"
                        "         5        4000.25 |                          \n"
                        "ORDERS INCOMPLETE: the order-level view lacks orders the venue holds "
                        "(price levels above are unaffected)\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_status_and_metrics, setup, teardown),
        cmocka_unit_test_setup_teardown(test_book, setup, teardown),
        cmocka_unit_test_setup_teardown(test_instruments_reload_raw, setup, teardown),
        cmocka_unit_test_setup_teardown(test_top_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subscribe_holds_until_interrupted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_errors_and_check, setup, teardown),
        cmocka_unit_test(test_render_book_uneven_sides),
        cmocka_unit_test(test_render_book_orders_incomplete),
        cmocka_unit_test(test_render_state),
        cmocka_unit_test(test_stat_view_rates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
