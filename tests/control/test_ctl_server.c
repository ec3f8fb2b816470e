/*
 * Control socket tests over real UNIX sockets: the verbs, entitlement refusals for other uids
 * (forked children that setuid), revocation on reload, and hostile clients (bad JSON, huge lines,
 * unknown verbs, floods, clients that never read, too many clients, a full command ring).
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "config.h"
#include "fake_daemon.h"
#include "server.h"

/* ---------------------------------------------------------- fixtures */

static char dir[64], sock_path[128];
static struct tp_config *cfg;
static struct tp_ctl_server *srv;

static const char *config_fmt =
    "{\"eal\": {\"lcores\": \"0-1\"},"
    " \"ports\": [{\"name\": \"p0\", \"vdev\": \"net_null0\"}],"
    " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"p0\"}], \"channels\": [\"cme\", "
    "\"itch\"]}],"
    " \"channels\": [{\"name\": \"cme\", \"protocol\": \"mdp3\","
    "                 \"lines\": {\"a\": {\"group\": \"224.0.31.1\", \"port\": 1}}},"
    "                {\"name\": \"itch\", \"protocol\": \"itch\","
    "                 \"lines\": {\"a\": {\"group\": \"233.54.12.111\", \"port\": 2}}}],"
    " \"control\": {\"socket\": \"%s\", \"max_clients\": 4, \"max_line_bytes\": 1024,"
    "               \"max_subscriptions\": 8, \"max_requests_per_sec\": %u},"
    " \"entitlements\": {\"default\": \"deny\", \"rules\": ["
    "    {\"uid\": 4242, \"venues\": [\"CME\"], \"instruments\": [\"ES*\"],"
    "     \"topics\": [\"top\", \"trades\"]}%s,"
    "    {\"gid\": 4343, \"venues\": [\"NASDAQ\"], \"topics\": [\"top\"]}]}}";

static void load_config(struct tp_config *out, unsigned rate, bool with_extra_rule)
{
    char json[4096];
    snprintf(json, sizeof(json), config_fmt, sock_path, rate,
             with_extra_rule ? ",{\"uid\": 4242, \"venues\": [\"CME\"], \"topics\": [\"depth\"]}"
                             : "");
    struct tp_config_errors errs;
    int rc = tp_config_load_string(json, NULL, out, &errs);
    if (rc != 0) {
        char buf[4096];
        tp_config_errors_format(&errs, buf, sizeof(buf));
        fprintf(stderr, "%s", buf);
    }
    assert_int_equal(rc, 0);
}

/* control.admin_group: a group of this host (any but root's), whose gid the admin child takes. */
static char admin_group[64];
static gid_t admin_gid;

static void pick_admin_group(void)
{
    setgrent();
    const struct group *g;
    while ((g = getgrent()) != NULL &&
           (g->gr_gid == 0 || strlen(g->gr_name) >= sizeof(admin_group)))
        ;
    assert_non_null(g);
    strcpy(admin_group, g->gr_name);
    admin_gid = g->gr_gid;
    endgrent();
}

static int open_server(unsigned rate)
{
    memset(&daemon_state, 0, sizeof(daemon_state));
    strcpy(dir, "/tmp/tp-ctl-XXXXXX");
    assert_non_null(mkdtemp(dir));
    chmod(dir, 0755); /* the setuid children must reach the socket */
    snprintf(sock_path, sizeof(sock_path), "%s/ctl.sock", dir);
    cfg = malloc(sizeof(*cfg));
    load_config(cfg, rate, true);
    pick_admin_group();
    strcpy(cfg->control.admin_group, admin_group);
    int rc = tp_ctl_server_open(&srv, cfg, &fake_ops);
    assert_int_equal(rc, 0);
    struct stat st;
    assert_int_equal(stat(sock_path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0660); /* the configured default mode */
    chmod(sock_path, 0666);                    /* test only: let other uids connect */
    return 0;
}

static int setup(void **state)
{
    (void)state;
    return open_server(1000);
}

static int setup_slow_rate(void **state)
{
    (void)state;
    return open_server(50);
}

static int teardown(void **state)
{
    (void)state;
    tp_ctl_server_close(srv);
    free(cfg);
    assert_int_equal(access(sock_path, F_OK), -1); /* unlinked */
    rmdir(dir);
    return 0;
}

/* ---------------------------------------------------------- client helpers */

static int client_connect(void)
{
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, sock_path);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0)
        return -1;
    return fd;
}

static void send_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
        if (n <= 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

static void send_text(int fd, const char *text)
{
    send_all(fd, text, strlen(text));
}

/* Per-fd read buffers so several clients can be read line by line. */
static char rbuf[16][1 << 16];
static size_t rlen[16];

/*
 * Next reply line of fd, serving the control socket meanwhile (when serve is true; a forked
 * child has no server to drive). NULL on EOF or after ~2 s.
 */
static json_t *read_reply_ex(int fd, bool serve)
{
    char *buf = rbuf[fd % 16];
    size_t *len = &rlen[fd % 16];
    for (int tries = 0; tries < 400; tries++) {
        char *nl = memchr(buf, '\n', *len);
        if (nl != NULL) {
            json_error_t jerr;
            json_t *v = json_loadb(buf, (size_t)(nl - buf), 0, &jerr);
            size_t used = (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, *len - used);
            *len -= used;
            return v;
        }
        if (serve)
            tp_ctl_server_poll(srv, 5);
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, serve ? 0 : 5) == 1) {
            ssize_t n = recv(fd, buf + *len, sizeof(rbuf[0]) - *len, MSG_DONTWAIT);
            if (n == 0 || (n < 0 && errno != EAGAIN))
                return NULL;
            if (n > 0)
                *len += (size_t)n;
        }
    }
    return NULL;
}

static json_t *read_reply(int fd)
{
    return read_reply_ex(fd, true);
}

static json_t *request(int fd, const char *line)
{
    send_all(fd, line, strlen(line));
    send_text(fd, "\n");
    return read_reply(fd);
}

static const char *error_of(json_t *reply)
{
    return json_string_value(json_object_get(reply, "error"));
}

static void assert_error(json_t *reply, const char *message)
{
    assert_non_null(reply);
    assert_true(json_is_false(json_object_get(reply, "ok")));
    if (error_of(reply) == NULL || strcmp(error_of(reply), message) != 0)
        fprintf(stderr, "got error \"%s\", wanted \"%s\"\n", error_of(reply), message);
    assert_string_equal(error_of(reply), message);
    json_decref(reply);
}

static void assert_ok(json_t *reply)
{
    assert_non_null(reply);
    if (!json_is_true(json_object_get(reply, "ok")))
        fprintf(stderr, "not ok: %s\n", error_of(reply));
    assert_true(json_is_true(json_object_get(reply, "ok")));
}

static void close_client(int fd)
{
    rlen[fd % 16] = 0;
    close(fd);
}

static struct tp_ctl_server_stats stats(void)
{
    struct tp_ctl_server_stats s;
    tp_ctl_server_stats(srv, &s);
    return s;
}

/* ---------------------------------------------------------- verbs (as root) */

static void test_status_stats_metrics_echo_id(void **state)
{
    (void)state;
    int fd = client_connect();
    assert_true(fd >= 0);
    json_t *r = request(fd, "{\"id\": 7, \"cmd\": \"status\"}");
    assert_ok(r);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 7);
    assert_string_equal(json_string_value(json_object_get(r, "daemon")), "fake");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "control"), "clients")),
                     1);
    json_decref(r);
    r = request(fd, "{\"cmd\": \"stats\", \"id\": \"s\"}");
    assert_ok(r);
    assert_string_equal(json_string_value(json_object_get(r, "id")), "s");
    assert_non_null(json_object_get(r, "control"));
    json_decref(r);
    r = request(fd, "{\"cmd\": \"metrics\"}");
    assert_ok(r);
    assert_true(strncmp(json_string_value(json_object_get(r, "metrics")), "tp_up 1\n", 8) == 0);
    json_decref(r);
    close_client(fd);
}

static void test_subscribe_unsubscribe_commands(void **state)
{
    (void)state;
    int fd = client_connect();
    /* Root, no venue: one subscription per venue. */
    json_t *r = request(fd, "{\"cmd\": \"subscribe\", \"instruments\": [\"ES*\"], "
                            "\"topics\": [\"top\", \"trades\"]}");
    assert_ok(r);
    json_t *subs = json_object_get(r, "subscriptions");
    assert_int_equal(json_array_size(subs), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(subs, 0), "venue")),
                        "CME");
    json_decref(r);
    assert_int_equal(daemon_state.n_cmds, 2);
    const struct tp_ctl_cmd *c0 = &daemon_state.cmds[0];
    assert_int_equal(c0->op, TP_CTL_SUBSCRIBE);
    assert_int_equal(c0->topics, TP_CFG_TOPIC_TOP | TP_CFG_TOPIC_TRADES);
    assert_string_equal(c0->pattern, "ES*");
    assert_string_equal(c0->venue, "CME");
    assert_string_equal(daemon_state.cmds[1].venue, "NASDAQ");
    assert_int_equal(stats().subscriptions, 2);

    r = request(fd, "{\"cmd\": \"subscriptions\"}");
    assert_ok(r);
    assert_int_equal(json_array_size(json_object_get(r, "subscriptions")), 2);
    json_decref(r);

    r = request(fd, "{\"cmd\": \"unsubscribe\", \"subscription\": 1}");
    assert_ok(r);
    assert_int_equal(json_integer_value(json_array_get(json_object_get(r, "removed"), 0)), 1);
    json_decref(r);
    assert_int_equal(daemon_state.n_cmds, 3);
    assert_int_equal(daemon_state.cmds[2].op, TP_CTL_UNSUBSCRIBE);
    assert_int_equal(daemon_state.cmds[2].sub_id, 1);
    assert_error(request(fd, "{\"cmd\": \"unsubscribe\", \"subscription\": 1}"),
                 "no such subscription");

    /* Subscription limit (8 per client). */
    assert_ok(r = request(fd, "{\"cmd\": \"subscribe\", \"venue\": \"CME\", \"instruments\": "
                              "[\"A\", \"B\", \"C\", \"D\", \"E\", \"F\", \"G\"], \"topics\": "
                              "\"top\"}"));
    json_decref(r);
    assert_error(request(fd, "{\"cmd\": \"subscribe\", \"venue\": \"CME\", \"instruments\": "
                             "\"H\", \"topics\": \"top\"}"),
                 "subscription limit reached (8 per client)");

    /* Disconnecting tells the data plane to drop everything of this client. */
    uint32_t client_id = daemon_state.cmds[0].client_id;
    close_client(fd);
    for (int i = 0; i < 20 && stats().clients > 0; i++)
        tp_ctl_server_poll(srv, 5);
    const struct tp_ctl_cmd *last = &daemon_state.cmds[daemon_state.n_cmds - 1];
    assert_int_equal(last->op, TP_CTL_UNSUBSCRIBE_CLIENT);
    assert_int_equal(last->client_id, client_id);
    assert_int_equal(stats().subscriptions, 0);
}

static void test_instruments_and_book(void **state)
{
    (void)state;
    int fd = client_connect();
    json_t *r = request(fd, "{\"cmd\": \"instruments\", \"pattern\": \"*Z6\"}");
    assert_ok(r);
    assert_int_equal(json_array_size(json_object_get(r, "instruments")), 2); /* AAPL filtered */
    json_decref(r);
    r = request(fd, "{\"cmd\": \"book\", \"instrument\": \"ESZ6\", \"venue\": \"CME\", "
                    "\"depth\": 5}");
    assert_ok(r);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "book"), "depth")), 5);
    json_decref(r);
    assert_error(request(fd, "{\"cmd\": \"book\", \"instrument\": \"ESZ6\"}"),
                 "several venues: say which with \"venue\"");
    assert_error(request(fd, "{\"cmd\": \"book\", \"instrument\": \"XX\", \"venue\": \"CME\"}"),
                 "unknown instrument XX");
    assert_error(request(fd, "{\"cmd\": \"book\", \"instrument\": \"ES*\", \"venue\": \"CME\"}"),
                 "book needs \"instrument\" (a symbol, no wildcards) and \"depth\" 1-1000");
    /* A venue no channel has now is the daemon's to answer: a removed channel's instruments
     * stay in its state table, flagged stale. */
    r = request(fd, "{\"cmd\": \"book\", \"instrument\": \"ESZ6\", \"venue\": \"CMX\"}");
    assert_ok(r);
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "book"), "venue")),
                        "CMX");
    json_decref(r);
    assert_error(request(fd, "{\"cmd\": \"book\", \"instrument\": \"ESZ6\", \"venue\": 3}"),
                 "\"venue\" must be a string");
    close_client(fd);
}

static void test_reload_as_root(void **state)
{
    (void)state;
    int fd = client_connect();
    json_t *r = request(fd, "{\"cmd\": \"reload\"}");
    assert_ok(r);
    assert_true(json_is_true(json_object_get(json_object_get(r, "reload"), "ok")));
    json_decref(r);
    assert_int_equal(daemon_state.reloads, 1);
    close_client(fd);
}

/* ---------------------------------------------------------- hostile clients */

static void test_bad_requests_get_errors(void **state)
{
    (void)state;
    int fd = client_connect(), other = client_connect();
    assert_error(request(fd, "{not json"), "bad JSON: string or '}' expected near 'not'");
    assert_error(request(fd, "[1,2]"), "request must be a JSON object");
    assert_error(request(fd, "{\"cmd\": \"format-disk\"}"),
                 "unknown cmd \"format-disk\" (subscribe, unsubscribe, subscriptions, "
                 "instruments, book, status, stats, metrics, reload, recover)");
    assert_error(request(fd, "{\"nocmd\": 1}"), "missing \"cmd\"");
    /* recover: the test runs as the daemon's user (admin); the fake daemon has no snapshots. */
    assert_error(request(fd, "{\"cmd\": \"recover\"}"), "\"channel\" must name a channel");
    assert_error(request(fd, "{\"cmd\": \"recover\", \"channel\": \"itch\"}"),
                 "recover not available");
    assert_error(request(fd, "{\"cmd\": \"subscribe\", \"instruments\": 5, \"topics\": \"top\"}"),
                 "\"instruments\" must be a string or a list of 1 to 32 strings");
    assert_error(request(fd, "{\"cmd\": \"subscribe\", \"instruments\": \"ES*\", "
                             "\"topics\": \"quotes\"}"),
                 "unknown topic \"quotes\" (depth, top, trades, mbo, status, definitions)");
    assert_error(request(fd, "{\"cmd\": \"subscribe\", \"instruments\": \"ES Z6\", "
                             "\"topics\": \"top\"}"),
                 "bad instrument pattern \"ES Z6\" (1-63 printable characters)");
    assert_error(
        request(fd, "{\"cmd\": \"unsubscribe\"}"),
        "give one of \"subscription\" (number), \"instrument\" (pattern) or \"all\": true");
    /* The other client is unaffected. */
    json_t *r = request(other, "{\"cmd\": \"status\"}");
    assert_ok(r);
    json_decref(r);
    assert_true(stats().bad_requests >= 8);
    close_client(fd);
    close_client(other);
}

static void test_huge_line_is_refused_once_then_next_line_works(void **state)
{
    (void)state;
    int fd = client_connect();
    size_t huge = 20000;
    char *line = malloc(huge);
    memset(line, 'x', huge);
    send_all(fd, line, huge);
    free(line);
    send_text(fd, "\n{\"id\": 2, \"cmd\": \"status\"}\n");
    assert_error(read_reply(fd), "line too long (limit 1024 bytes)");
    json_t *r = read_reply(fd);
    assert_ok(r);
    assert_int_equal(json_integer_value(json_object_get(r, "id")), 2);
    json_decref(r);
    assert_int_equal(stats().lines_too_long, 1);
    close_client(fd);
}

static void test_many_requests_in_one_write(void **state)
{
    (void)state;
    int fd = client_connect();
    char batch[4096] = "";
    for (int i = 0; i < 20; i++)
        snprintf(batch + strlen(batch), sizeof(batch) - strlen(batch),
                 "{\"id\": %d, \"cmd\": \"status\"}\n", i);
    send_all(fd, batch, strlen(batch));
    for (int i = 0; i < 20; i++) {
        json_t *r = read_reply(fd);
        assert_ok(r);
        assert_int_equal(json_integer_value(json_object_get(r, "id")), i); /* in order */
        json_decref(r);
    }
    close_client(fd);
}

static void test_flood_is_rate_limited_and_others_still_served(void **state)
{
    (void)state;
    int flood = client_connect(), other = client_connect();
    char batch[64 * 40] = "";
    for (int i = 0; i < 60; i++)
        strcat(batch, "{\"cmd\":\"status\"}\n");
    send_all(flood, batch, strlen(batch));
    unsigned ok = 0, limited = 0;
    for (int i = 0; i < 60; i++) {
        json_t *r = read_reply(flood);
        assert_non_null(r);
        if (json_is_true(json_object_get(r, "ok")))
            ok++;
        else if (strcmp(error_of(r), "rate limited (limit 50 requests/s)") == 0)
            limited++;
        json_decref(r);
    }
    /* Within one second: exactly the budget passes (a window edge could split it: allow 2x). */
    assert_true(ok >= 50 && ok <= 60);
    assert_int_equal(ok + limited, 60);
    assert_true(limited > 0 || ok == 60);
    json_t *r = request(other, "{\"cmd\": \"status\"}");
    assert_ok(r);
    json_decref(r);
    close_client(flood);
    close_client(other);
}

static void test_client_that_never_reads_is_dropped(void **state)
{
    (void)state;
    daemon_state.metrics_bytes = 200000;
    int fd = client_connect(), other = client_connect();
    int rcv = 4096;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
    for (int i = 0; i < 30; i++)
        send_text(fd, "{\"cmd\":\"metrics\"}\n");
    for (int i = 0; i < 200 && stats().slow_disconnects == 0; i++)
        tp_ctl_server_poll(srv, 2);
    assert_int_equal(stats().slow_disconnects, 1);
    for (int i = 0; i < 50 && stats().clients > 1; i++)
        tp_ctl_server_poll(srv, 2);
    assert_int_equal(stats().clients, 1);
    json_t *r = request(other, "{\"cmd\": \"status\"}");
    assert_ok(r);
    json_decref(r);
    close_client(fd);
    close_client(other);
}

static void test_too_many_clients(void **state)
{
    (void)state;
    int fds[4];
    for (int i = 0; i < 4; i++) {
        fds[i] = client_connect();
        json_t *r = request(fds[i], "{\"cmd\": \"status\"}");
        assert_ok(r);
        json_decref(r);
    }
    int extra = client_connect();
    assert_error(read_reply(extra), "too many clients (limit 4)");
    assert_null(read_reply(extra)); /* closed */
    assert_int_equal(stats().rejected_full, 1);
    close_client(extra);
    for (int i = 0; i < 4; i++)
        close_client(fds[i]);
}

static void test_connection_storm(void **state)
{
    (void)state;
    int good = client_connect();
    json_t *r = request(good, "{\"cmd\": \"status\"}");
    assert_ok(r);
    json_decref(r);
    /* 30 connections at once: 3 fit (limit 4), 27 are told and closed, a few per poll. */
    int storm[30];
    for (int i = 0; i < 30; i++)
        storm[i] = client_connect();
    for (int i = 0; i < 20; i++)
        tp_ctl_server_poll(srv, 2);
    assert_int_equal(stats().rejected_full, 27);
    assert_int_equal(stats().clients, 4);
    r = request(good, "{\"cmd\": \"status\"}");
    assert_ok(r);
    json_decref(r);
    for (int i = 0; i < 30; i++)
        close(storm[i]);
    close_client(good);
}

static void test_full_ring(void **state)
{
    (void)state;
    int fd = client_connect();
    daemon_state.ring_full = true;
    assert_error(request(fd, "{\"cmd\": \"subscribe\", \"venue\": \"CME\", \"instruments\": "
                             "\"ES*\", \"topics\": \"top\"}"),
                 "data plane busy, try again");
    assert_int_equal(stats().subscriptions, 0);
    daemon_state.ring_full = false;
    json_t *r = request(fd, "{\"cmd\": \"subscribe\", \"venue\": \"CME\", \"instruments\": "
                            "\"ES*\", \"topics\": \"top\"}");
    assert_ok(r);
    json_decref(r);
    /* An unsubscribe while the ring is full is deferred, not lost. */
    daemon_state.ring_full = true;
    r = request(fd, "{\"cmd\": \"unsubscribe\", \"all\": true}");
    assert_ok(r);
    json_decref(r);
    unsigned before = daemon_state.n_cmds;
    assert_int_equal(stats().commands_deferred, 1);
    daemon_state.ring_full = false;
    tp_ctl_server_poll(srv, 0);
    assert_int_equal(daemon_state.n_cmds, before + 1);
    assert_int_equal(daemon_state.cmds[before].op, TP_CTL_UNSUBSCRIBE);
    close_client(fd);
}

static void test_live_socket_is_not_stolen(void **state)
{
    (void)state;
    struct tp_ctl_server *second;
    assert_int_equal(tp_ctl_server_open(&second, cfg, &fake_ops), -EADDRINUSE);
}

/* control.group owns the socket from before listen; a group the host lacks opens nothing. */
static void test_socket_group(void **state)
{
    (void)state;
    const struct group *gr = getgrnam("nogroup");
    assert_non_null(gr);
    gid_t gid = gr->gr_gid;
    struct tp_config *other = malloc(sizeof(*other));
    *other = *cfg;
    snprintf(other->control.socket_path, sizeof(other->control.socket_path), "%s/grp.sock", dir);
    strcpy(other->control.socket_group, "nogroup");
    struct tp_ctl_server *second;
    assert_int_equal(tp_ctl_server_open(&second, other, &fake_ops), 0);
    struct stat st;
    assert_int_equal(stat(other->control.socket_path, &st), 0);
    assert_int_equal(st.st_gid, gid);
    assert_int_equal(st.st_mode & 0777, 0660);
    tp_ctl_server_close(second);
    strcpy(other->control.socket_group, "tp-no-such-group");
    assert_int_equal(tp_ctl_server_open(&second, other, &fake_ops), -ENOENT);
    assert_int_equal(access(other->control.socket_path, F_OK), -1);
    free(other);
}

static void test_stale_socket_is_replaced(void **state)
{
    (void)state;
    /* Make a stale socket file at another path: bound, then its listener closed. */
    struct tp_config *other = malloc(sizeof(*other));
    *other = *cfg;
    snprintf(other->control.socket_path, sizeof(other->control.socket_path), "%s/stale.sock", dir);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, other->control.socket_path);
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    close(fd);
    struct tp_ctl_server *second;
    assert_int_equal(tp_ctl_server_open(&second, other, &fake_ops), 0);
    tp_ctl_server_close(second);
    free(other);
}

/*
 * The path appears only once the socket listens: a client that waits for the file is never
 * refused. A PATH.new a crashed start left behind is replaced and none is left.
 */
static void test_socket_path_appears_listening(void **state)
{
    (void)state;
    struct tp_config *other = malloc(sizeof(*other));
    *other = *cfg;
    snprintf(other->control.socket_path, sizeof(other->control.socket_path), "%s/late.sock", dir);
    char pending[sizeof(other->control.socket_path) + 8];
    snprintf(pending, sizeof(pending), "%s.new", other->control.socket_path);
    int leftover = open(pending, O_CREAT | O_WRONLY, 0600);
    assert_true(leftover >= 0);
    close(leftover);
    struct tp_ctl_server *second;
    assert_int_equal(tp_ctl_server_open(&second, other, &fake_ops), 0);
    assert_int_equal(access(pending, F_OK), -1);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    strcpy(addr.sun_path, other->control.socket_path);
    assert_int_equal(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    close(fd);
    tp_ctl_server_close(second);
    free(other);
}

/* ---------------------------------------------------------- other uids */

/*
 * Run fn in a child as uid/gid, while the parent serves the socket. The child's exit status is
 * the number of the first failed check (0 = all passed).
 */
static int run_as(uid_t uid, gid_t gid, int (*fn)(int sync_fd), void (*on_sync)(void))
{
    int sync[2];
    assert_int_equal(pipe(sync), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(sync[0]);
        if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid(uid) != 0)
            _exit(100);
        _exit(fn(sync[1]));
    }
    close(sync[1]);
    fcntl(sync[0], F_SETFL, O_NONBLOCK);
    int status = 0;
    for (int i = 0; i < 2000; i++) {
        tp_ctl_server_poll(srv, 2);
        char byte;
        if (read(sync[0], &byte, 1) == 1 && on_sync != NULL)
            on_sync();
        if (waitpid(pid, &status, WNOHANG) == pid)
            break;
    }
    close(sync[0]);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

static int child_request_check(int fd, const char *line, const char *want_error)
{
    send_all(fd, line, strlen(line));
    send_text(fd, "\n");
    json_t *r = read_reply_ex(fd, false);
    if (r == NULL)
        return 0;
    const char *err = error_of(r);
    int ok = want_error == NULL ? json_is_true(json_object_get(r, "ok"))
                                : err != NULL && strcmp(err, want_error) == 0;
    if (!ok)
        fprintf(stderr, "child: \"%s\" -> %s\n", line, err ? err : "ok");
    json_decref(r);
    return ok;
}

static int child_4242(int sync_fd)
{
    (void)sync_fd;
    int fd = client_connect();
    if (fd < 0)
        return 1;
    if (!child_request_check(fd,
                             "{\"cmd\":\"subscribe\",\"venue\":\"CME\",\"instruments\":"
                             "\"ES*\",\"topics\":[\"top\",\"trades\"]}",
                             NULL))
        return 2;
    /* The parent (root) lists every client's subscriptions now (see operator_sees_4242). */
    if (write(sync_fd, "s", 1) != 1)
        return 11;
    if (!child_request_check(
            fd, "{\"cmd\":\"subscriptions\",\"all\":true}",
            "refused: every client's subscriptions need root, the daemon's user or "
            "control.admin_group"))
        return 10;
    if (!child_request_check(fd,
                             "{\"cmd\":\"subscribe\",\"instruments\":\"AAPL\",\"topics\":"
                             "\"top\"}",
                             "refused: uid 4242 is not entitled to topic top of CME \"AAPL\""))
        return 3;
    if (!child_request_check(fd,
                             "{\"cmd\":\"subscribe\",\"venue\":\"CME\",\"instruments\":"
                             "\"ESZ6\",\"topics\":\"mbo\"}",
                             "refused: uid 4242 is not entitled to topic mbo of CME \"ESZ6\""))
        return 4;
    if (!child_request_check(fd,
                             "{\"cmd\":\"subscribe\",\"venue\":\"NASDAQ\",\"instruments\":"
                             "\"AAPL\",\"topics\":\"top\"}",
                             "refused: uid 4242 is not entitled to venue NASDAQ"))
        return 5;
    /* A pattern wider than the grant is refused: "E*" would include EUR... */
    if (!child_request_check(fd,
                             "{\"cmd\":\"subscribe\",\"venue\":\"CME\",\"instruments\":"
                             "\"E*\",\"topics\":\"trades\"}",
                             "refused: uid 4242 is not entitled to topic trades of CME \"E*\""))
        return 6;
    if (!child_request_check(fd, "{\"cmd\":\"reload\"}",
                             "refused: reload needs root or the daemon's user"))
        return 7;
    /* The instrument list only shows what this uid may see: CME (all of it, via the depth rule). */
    send_text(fd, "{\"cmd\":\"instruments\"}\n");
    json_t *r = read_reply_ex(fd, false);
    json_t *list = json_object_get(r, "instruments");
    if (json_array_size(list) != 2 ||
        strcmp(json_string_value(json_object_get(json_array_get(list, 0), "symbol")), "ESZ6") ||
        strcmp(json_string_value(json_object_get(json_array_get(list, 1), "symbol")), "NQZ6"))
        return 8;
    json_decref(r);
    /* Depth of ESZ6 comes from the extra rule (topic depth on CME). */
    if (!child_request_check(fd, "{\"cmd\":\"book\",\"venue\":\"CME\",\"instrument\":\"ESZ6\"}",
                             NULL))
        return 9;
    close(fd);
    return 0;
}

/* Root asks for every client's subscriptions while uid 4242 holds its ES* one. */
static bool operator_saw_4242;

static void operator_sees_4242(void)
{
    int fd = client_connect();
    json_t *r = request(fd, "{\"cmd\": \"subscriptions\", \"all\": true}");
    assert_ok(r);
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "clients"), i, c)
    {
        const json_t *subs = json_object_get(c, "subscriptions");
        if (json_integer_value(json_object_get(c, "uid")) == 4242 && json_array_size(subs) == 1 &&
            strcmp(json_string_value(json_object_get(json_array_get(subs, 0), "instrument")),
                   "ES*") == 0 &&
            json_integer_value(json_object_get(c, "pid")) > 0)
            operator_saw_4242 = true;
    }
    json_decref(r);
    close_client(fd);
}

/* A member of control.admin_group (by its primary group: uid 6000 has no passwd entry). */
static int child_admin(int sync_fd)
{
    (void)sync_fd;
    int fd = client_connect();
    if (fd < 0)
        return 1;
    send_text(fd, "{\"cmd\":\"subscriptions\",\"all\":true}\n");
    json_t *r = read_reply_ex(fd, false);
    bool saw_itself = false;
    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(r, "clients"), i, c)
    {
        saw_itself |= json_integer_value(json_object_get(c, "uid")) == 6000 &&
                      json_integer_value(json_object_get(c, "gid")) == (json_int_t)admin_gid;
    }
    int rc = r != NULL && json_is_true(json_object_get(r, "ok")) && saw_itself ? 0 : 2;
    json_decref(r);
    close(fd);
    return rc;
}

/* Neither root, the daemon's user nor in control.admin_group. */
static int child_not_admin(int sync_fd)
{
    (void)sync_fd;
    int fd = client_connect();
    if (fd < 0)
        return 1;
    if (!child_request_check(fd, "{\"cmd\":\"subscriptions\",\"all\":true}",
                             "refused: every client's subscriptions need root, the daemon's user "
                             "or control.admin_group"))
        return 2;
    if (!child_request_check(fd, "{\"cmd\":\"subscriptions\"}", NULL)) /* its own: allowed */
        return 3;
    close(fd);
    return 0;
}

static void test_admin_group_lists_every_client(void **state)
{
    (void)state;
    uint64_t refused = stats().refused;
    assert_int_equal(run_as(6000, admin_gid, child_admin, NULL), 0);
    assert_int_equal(stats().refused, refused);
    gid_t other = admin_gid + 1;
    while (getgrgid(other) != NULL) /* a gid no group of this host has */
        other++;
    assert_int_equal(run_as(6001, other, child_not_admin, NULL), 0);
    assert_int_equal(stats().refused, refused + 1);
}

static void test_entitlements_by_uid(void **state)
{
    (void)state;
    assert_int_equal(run_as(4242, 4242, child_4242, operator_sees_4242), 0);
    assert_true(operator_saw_4242);
    assert_true(stats().refused >= 5);
}

static int child_group_member(int sync_fd)
{
    (void)sync_fd;
    int fd = client_connect();
    if (fd < 0)
        return 1;
    if (!child_request_check(fd,
                             "{\"cmd\":\"subscribe\",\"instruments\":\"AAPL\",\"topics\":"
                             "\"top\"}",
                             NULL))
        return 2;
    if (!child_request_check(fd,
                             "{\"cmd\":\"subscribe\",\"instruments\":\"AAPL\",\"topics\":"
                             "\"trades\"}",
                             "refused: uid 5000 is not entitled to topic trades of NASDAQ "
                             "\"AAPL\""))
        return 3;
    close(fd);
    return 0;
}

static int child_nobody(int sync_fd)
{
    (void)sync_fd;
    int fd = client_connect();
    if (fd < 0)
        return 1;
    if (!child_request_check(fd,
                             "{\"cmd\":\"subscribe\",\"instruments\":\"ES*\",\"topics\":"
                             "\"top\"}",
                             "refused: uid 5555 has no entitlements"))
        return 2;
    if (!child_request_check(fd, "{\"cmd\":\"book\",\"venue\":\"CME\",\"instrument\":\"ESZ6\"}",
                             "refused: uid 5555 has no entitlements"))
        return 3;
    close(fd);
    return 0;
}

static void test_entitlements_by_group_and_default_deny(void **state)
{
    (void)state;
    assert_int_equal(run_as(5000, 4343, child_group_member, NULL), 0);
    assert_int_equal(run_as(5555, 5555, child_nobody, NULL), 0);
}

/* Revocation: the child subscribes, the parent reloads without the rule, the child is told. */
static void reload_without_rule(void)
{
    struct tp_config *next = malloc(sizeof(*next));
    load_config(next, 1000, false);
    next->entitlements.rules[0].topics = TP_CFG_TOPIC_TOP; /* trades no longer granted */
    tp_ctl_server_update(srv, next);
    free(next);
}

static int child_revoked(int sync_fd)
{
    int fd = client_connect();
    if (fd < 0)
        return 1;
    if (!child_request_check(fd,
                             "{\"cmd\":\"subscribe\",\"venue\":\"CME\",\"instruments\":"
                             "\"ES*\",\"topics\":\"trades\"}",
                             NULL))
        return 2;
    if (!child_request_check(fd,
                             "{\"cmd\":\"subscribe\",\"venue\":\"CME\",\"instruments\":"
                             "\"ESH7\",\"topics\":\"top\"}",
                             NULL))
        return 3;
    if (write(sync_fd, "r", 1) != 1)
        return 4;
    json_t *ev = read_reply_ex(fd, false);
    if (ev == NULL || strcmp(json_string_value(json_object_get(ev, "event")), "revoked") != 0 ||
        json_integer_value(json_object_get(ev, "subscription")) != 1 ||
        strcmp(json_string_value(json_object_get(ev, "reason")),
               "uid 4242 is not entitled to topic trades of CME \"ES*\"") != 0)
        return 5;
    json_decref(ev);
    send_text(fd, "{\"cmd\":\"subscriptions\"}\n");
    json_t *r = read_reply_ex(fd, false);
    json_t *list = json_object_get(r, "subscriptions");
    if (json_array_size(list) != 1 ||
        json_integer_value(json_object_get(json_array_get(list, 0), "subscription")) != 2)
        return 6;
    json_decref(r);
    close(fd);
    return 0;
}

static void test_reload_revokes_subscriptions(void **state)
{
    (void)state;
    assert_int_equal(run_as(4242, 4242, child_revoked, reload_without_rule), 0);
    /* The data plane was told: an UNSUBSCRIBE for subscription 1. */
    bool found = false;
    for (unsigned i = 0; i < daemon_state.n_cmds; i++)
        found |= daemon_state.cmds[i].op == TP_CTL_UNSUBSCRIBE && daemon_state.cmds[i].sub_id == 1;
    assert_true(found);
}

int main(void)
{
    if (geteuid() != 0)
        fprintf(stderr, "note: not root, the setuid entitlement tests will fail\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_status_stats_metrics_echo_id, setup, teardown),
        cmocka_unit_test_setup_teardown(test_subscribe_unsubscribe_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_instruments_and_book, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload_as_root, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_requests_get_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_huge_line_is_refused_once_then_next_line_works, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_many_requests_in_one_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flood_is_rate_limited_and_others_still_served,
                                        setup_slow_rate, teardown),
        cmocka_unit_test_setup_teardown(test_client_that_never_reads_is_dropped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_many_clients, setup, teardown),
        cmocka_unit_test_setup_teardown(test_connection_storm, setup, teardown),
        cmocka_unit_test_setup_teardown(test_full_ring, setup, teardown),
        cmocka_unit_test_setup_teardown(test_live_socket_is_not_stolen, setup, teardown),
        cmocka_unit_test_setup_teardown(test_socket_path_appears_listening, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stale_socket_is_replaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_socket_group, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entitlements_by_uid, setup, teardown),
        cmocka_unit_test_setup_teardown(test_admin_group_lists_every_client, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entitlements_by_group_and_default_deny, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reload_revokes_subscriptions, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
