/*
 * test_soupbin_client.c - the SoupBinTCP client against a scripted server on a socketpair (good
 * sessions, hostile bytes, timeouts, back-pressure) and the GLIMPSE fetch against a loopback
 * listener (snapshot, refused login, a connection dropped halfway then a retry).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "glimpse.h"
#include "glimpse_session.h"
#include "soupbin_client.h"

struct received {
    int calls;
    int refuse_next; /* -EAGAIN this many times */
    size_t bytes;
    uint8_t last[64];
    uint16_t last_len;
};

static int on_sequenced(void *ctx, const uint8_t *msg, uint16_t len)
{
    struct received *r = ctx;
    if (r->refuse_next > 0) {
        r->refuse_next--;
        return -EAGAIN;
    }
    r->calls++;
    r->bytes += len;
    r->last_len = len < sizeof(r->last) ? len : sizeof(r->last);
    memcpy(r->last, msg, r->last_len);
    return 0;
}

static struct tp_soup_client_params params(void)
{
    struct tp_soup_client_params p = {.sequence = 1,
                                      .connect_timeout_ms = 1000,
                                      .login_timeout_ms = 500,
                                      .heartbeat_ms = 100,
                                      .idle_timeout_ms = 1000};
    strcpy(p.username, "tp");
    strcpy(p.password, "pw");
    return p;
}

struct pair {
    struct tp_soup_client *c;
    int server;
    struct received got;
};

static int setup(void **state)
{
    struct pair *pr = calloc(1, sizeof(*pr));
    pr->c = calloc(1, sizeof(*pr->c));
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    pr->server = sv[1];
    struct tp_soup_client_params p = params();
    struct tp_soup_client_ops ops = {.ctx = &pr->got, .sequenced = on_sequenced};
    tp_soup_client_adopt(pr->c, sv[0], &p, &ops, 0);
    *state = pr;
    return 0;
}

static int teardown(void **state)
{
    struct pair *pr = *state;
    if (pr->c->fd >= 0)
        close(pr->c->fd);
    close(pr->server);
    free(pr->c);
    free(pr);
    return 0;
}

static void server_send(struct pair *pr, const void *bytes, size_t n)
{
    assert_int_equal(write(pr->server, bytes, n), (ssize_t)n);
}

static void server_packet(struct pair *pr, uint8_t type, const void *payload, size_t n)
{
    uint8_t buf[256];
    int len = tp_soup_encode(buf, sizeof(buf), type, (const uint8_t *)payload, n);
    assert_true(len > 0);
    server_send(pr, buf, (size_t)len);
}

/* Reads the client's next packet (waiting up to a second) into *p (payload in buf). */
static void server_expect(struct pair *pr, uint8_t type, uint8_t *buf, size_t cap,
                          struct tp_soup_packet *p)
{
    struct pollfd fd = {.fd = pr->server, .events = POLLIN};
    assert_int_equal(poll(&fd, 1, 1000), 1);
    assert_int_equal(read(pr->server, buf, 2), 2);
    size_t n = (size_t)((buf[0] << 8) | buf[1]);
    assert_true(n + 2 <= cap);
    assert_int_equal(read(pr->server, buf + 2, n), (ssize_t)n);
    size_t need;
    assert_int_equal(tp_soup_frame(buf, n + 2, cap, p, &need), (int)(n + 2));
    assert_int_equal(tp_soup_check(p, TP_SOUP_FROM_CLIENT), 0);
    assert_int_equal(p->type, type);
}

static void login(struct pair *pr)
{
    uint8_t buf[64];
    struct tp_soup_packet p;
    assert_int_equal(tp_soup_client_poll(pr->c, 1), TP_SOUP_LOGGING_IN);
    server_expect(pr, 'L', buf, sizeof(buf), &p);
    assert_memory_equal(tp_soup_login_username(&p), "tp    ", 6);
    uint8_t acc[64];
    int n = tp_soup_encode_accepted(acc, sizeof(acc), "SESSION001", 1);
    server_send(pr, acc, (size_t)n);
    assert_int_equal(tp_soup_client_poll(pr->c, 2), TP_SOUP_LOGGED_IN);
    assert_memory_equal(pr->c->session, "SESSION001", 10);
    assert_int_equal(pr->c->next_sequence, 1);
}

static void test_session_to_end(void **state)
{
    struct pair *pr = *state;
    login(pr);
    server_packet(pr, 'S', "hello", 5);
    server_packet(pr, 'H', NULL, 0);
    server_packet(pr, '+', "debug text", 10);
    server_packet(pr, 'S', "world!", 6);
    server_packet(pr, 'Z', NULL, 0);
    assert_int_equal(tp_soup_client_poll(pr->c, 3), TP_SOUP_DONE);
    assert_int_equal(pr->got.calls, 2);
    assert_int_equal(pr->got.bytes, 11);
    assert_memory_equal(pr->got.last, "world!", 6);
    assert_int_equal(pr->c->counters.server_heartbeats, 1);
    assert_int_equal(pr->c->next_sequence, 3);
    assert_int_equal(pr->c->fd, -1);
}

/* A packet dribbled one byte per poll arrives whole, once. */
static void test_cut_packets(void **state)
{
    struct pair *pr = *state;
    login(pr);
    uint8_t buf[64];
    int n = tp_soup_encode(buf, sizeof(buf), 'S', (const uint8_t *)"0123456789", 10);
    for (int i = 0; i < n; i++) {
        assert_int_equal(pr->got.calls, 0);
        server_send(pr, buf + i, 1);
        assert_int_equal(tp_soup_client_poll(pr->c, 3), TP_SOUP_LOGGED_IN);
    }
    assert_int_equal(pr->got.calls, 1);
    assert_memory_equal(pr->got.last, "0123456789", 10);
}

/* Each hostile packet ends the session as malformed, with the message before it delivered. */
static void expect_malformed(struct pair *pr, const uint8_t *bytes, size_t n, bool logged_in)
{
    if (logged_in)
        login(pr);
    else
        assert_int_equal(tp_soup_client_poll(pr->c, 1), TP_SOUP_LOGGING_IN);
    server_send(pr, bytes, n);
    assert_int_equal(tp_soup_client_poll(pr->c, 3), TP_SOUP_FAILED);
    assert_int_equal(pr->c->fail, TP_SOUP_FAIL_MALFORMED);
    assert_string_equal(tp_soup_fail_name(pr->c->fail), "malformed_packet");
    assert_int_equal(pr->c->fd, -1);
}

static void test_zero_length(void **state)
{
    static const uint8_t b[] = {0, 3, 'S', 'a', 'b', 0, 0, 'S'};
    expect_malformed(*state, b, sizeof(b), true);
    assert_int_equal(((struct pair *)*state)->got.calls, 1);
}

static void test_unknown_type(void **state)
{
    static const uint8_t b[] = {0, 1, 'X'};
    expect_malformed(*state, b, sizeof(b), true);
}

static void test_client_type_from_server(void **state)
{
    static const uint8_t b[] = {0, 1, 'R'};
    expect_malformed(*state, b, sizeof(b), true);
}

static void test_heartbeat_with_payload(void **state)
{
    static const uint8_t b[] = {0, 2, 'H', 'x'};
    expect_malformed(*state, b, sizeof(b), true);
}

static void test_data_before_login(void **state)
{
    static const uint8_t b[] = {0, 2, 'S', 'x'};
    expect_malformed(*state, b, sizeof(b), false);
    assert_int_equal(((struct pair *)*state)->got.calls, 0);
}

static void test_accepted_not_numeric(void **state)
{
    uint8_t b[64];
    int n = tp_soup_encode_accepted(b, sizeof(b), "SESSION001", 1);
    b[n - 1] = 'x';
    expect_malformed(*state, b, (size_t)n, false);
}

/* A length that claims more than ever arrives: the client waits, then the close is reported. */
static void test_length_beyond_data(void **state)
{
    struct pair *pr = *state;
    login(pr);
    static const uint8_t b[] = {0xff, 0xff, 'S', 1, 2, 3};
    server_send(pr, b, sizeof(b));
    assert_int_equal(tp_soup_client_poll(pr->c, 3), TP_SOUP_LOGGED_IN);
    shutdown(pr->server, SHUT_WR);
    assert_int_equal(tp_soup_client_poll(pr->c, 4), TP_SOUP_FAILED);
    assert_int_equal(pr->c->fail, TP_SOUP_FAIL_CLOSED);
    assert_int_equal(pr->got.calls, 0);
}

static void test_rejected(void **state)
{
    struct pair *pr = *state;
    assert_int_equal(tp_soup_client_poll(pr->c, 1), TP_SOUP_LOGGING_IN);
    server_packet(pr, 'J', "A", 1);
    assert_int_equal(tp_soup_client_poll(pr->c, 2), TP_SOUP_FAILED);
    assert_int_equal(pr->c->fail, TP_SOUP_FAIL_REJECTED_AUTH);
    assert_string_equal(tp_soup_fail_name(pr->c->fail), "login_rejected_not_authorized");
}

static void test_rejected_session(void **state)
{
    struct pair *pr = *state;
    assert_int_equal(tp_soup_client_poll(pr->c, 1), TP_SOUP_LOGGING_IN);
    server_packet(pr, 'J', "S", 1);
    assert_int_equal(tp_soup_client_poll(pr->c, 2), TP_SOUP_FAILED);
    assert_int_equal(pr->c->fail, TP_SOUP_FAIL_REJECTED_SESSION);
}

static void test_login_timeout(void **state)
{
    struct pair *pr = *state;
    assert_int_equal(tp_soup_client_poll(pr->c, 1), TP_SOUP_LOGGING_IN);
    assert_int_equal(tp_soup_client_poll(pr->c, 499), TP_SOUP_LOGGING_IN);
    assert_int_equal(tp_soup_client_poll(pr->c, 502), TP_SOUP_FAILED);
    assert_int_equal(pr->c->fail, TP_SOUP_FAIL_LOGIN_TIMEOUT);
}

/* Heartbeats both ways: the client sends 'R' after heartbeat_ms of silence; the server's 'H'
 * keeps the session alive past idle_timeout_ms; silence then ends it. */
static void test_heartbeats_and_idle(void **state)
{
    struct pair *pr = *state;
    login(pr);
    assert_int_equal(tp_soup_client_poll(pr->c, 150), TP_SOUP_LOGGED_IN);
    uint8_t buf[16];
    struct tp_soup_packet p;
    server_expect(pr, 'R', buf, sizeof(buf), &p);
    assert_int_equal(pr->c->counters.client_heartbeats, 1);
    server_packet(pr, 'H', NULL, 0);
    assert_int_equal(tp_soup_client_poll(pr->c, 900), TP_SOUP_LOGGED_IN);
    assert_int_equal(tp_soup_client_poll(pr->c, 1800), TP_SOUP_LOGGED_IN);
    assert_int_equal(tp_soup_client_poll(pr->c, 1901), TP_SOUP_FAILED);
    assert_int_equal(pr->c->fail, TP_SOUP_FAIL_IDLE_TIMEOUT);
}

/* -EAGAIN keeps the message (and those after it) for the next poll, in order. */
static void test_back_pressure(void **state)
{
    struct pair *pr = *state;
    login(pr);
    pr->got.refuse_next = 2;
    server_packet(pr, 'S', "one", 3);
    server_packet(pr, 'S', "two", 3);
    assert_int_equal(tp_soup_client_poll(pr->c, 3), TP_SOUP_LOGGED_IN);
    assert_int_equal(pr->got.calls, 0);
    assert_int_equal(tp_soup_client_poll(pr->c, 4), TP_SOUP_LOGGED_IN);
    assert_int_equal(pr->got.calls, 0);
    assert_int_equal(tp_soup_client_poll(pr->c, 5), TP_SOUP_LOGGED_IN);
    assert_int_equal(pr->got.calls, 2);
    assert_memory_equal(pr->got.last, "two", 3);
}

static void test_logout(void **state)
{
    struct pair *pr = *state;
    login(pr);
    tp_soup_client_logout(pr->c);
    assert_int_equal(pr->c->state, TP_SOUP_DONE);
    uint8_t buf[16];
    struct tp_soup_packet p;
    server_expect(pr, 'O', buf, sizeof(buf), &p);
}

static void test_connect_refused(void **state)
{
    (void)state;
    /* A port nobody listens on: bind one, close it. */
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &len), 0);
    close(s);
    struct tp_soup_client *c = calloc(1, sizeof(*c));
    struct tp_soup_client_params p = params();
    p.addr = INADDR_LOOPBACK;
    p.port = ntohs(sa.sin_port);
    struct received got = {0};
    struct tp_soup_client_ops ops = {.ctx = &got, .sequenced = on_sequenced};
    tp_soup_client_start(c, &p, &ops, 0);
    enum tp_soup_state st = TP_SOUP_CONNECTING;
    for (int i = 0; i < 1000 && st == TP_SOUP_CONNECTING; i++) {
        struct pollfd fd = {.fd = c->fd, .events = POLLOUT};
        poll(&fd, 1, 10);
        st = tp_soup_client_poll(c, 1);
    }
    assert_int_equal(st, TP_SOUP_FAILED);
    assert_int_equal(c->fail, TP_SOUP_FAIL_CONNECT);
    assert_int_equal(c->last_errno, ECONNREFUSED);
    free(c);
}

/* ---- GLIMPSE over a loopback listener ------------------------------------------------------ */

struct fetch {
    int begins, ends, fails, finals;
    int messages;
    uint64_t next_seq;
    enum tp_soup_fail why;
};

static void f_begin(void *ctx, uint32_t attempt)
{
    struct fetch *f = ctx;
    f->begins++;
    f->messages = 0; /* a new attempt voids the last one's messages */
    assert_int_equal(attempt, f->begins);
}

static int f_message(void *ctx, const uint8_t *msg, uint16_t len)
{
    struct fetch *f = ctx;
    assert_true(len > 0);
    assert_int_equal(msg[0], 'A');
    f->messages++;
    return 0;
}

static void f_end(void *ctx, uint64_t next_seq)
{
    struct fetch *f = ctx;
    f->ends++;
    f->next_seq = next_seq;
}

static void f_failed(void *ctx, enum tp_soup_fail why, bool final)
{
    struct fetch *f = ctx;
    f->fails++;
    f->finals += final;
    f->why = why;
}

/* What the scripted server does with its n-th connection. */
enum script { SERVE_ALL, SERVE_HALF_THEN_CLOSE, REFUSE };

static int listener(uint16_t *port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof(sa);
    assert_int_equal(bind(s, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(s, 4), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&sa, &len), 0);
    *port = ntohs(sa.sin_port);
    return s;
}

static void serve(int conn, enum script what, int orders)
{
    uint8_t buf[128];
    /* The login request first. */
    struct pollfd fd = {.fd = conn, .events = POLLIN};
    assert_int_equal(poll(&fd, 1, 2000), 1);
    assert_int_equal(read(conn, buf, 49), 49);
    assert_int_equal(buf[2], 'L');
    if (what == REFUSE) {
        int n = tp_soup_encode(buf, sizeof(buf), 'J', (const uint8_t *)"A", 1);
        assert_int_equal(write(conn, buf, (size_t)n), n);
        return;
    }
    int n = tp_soup_encode_accepted(buf, sizeof(buf), "GLIMPSE001", 1);
    assert_int_equal(write(conn, buf, (size_t)n), n);
    int send = what == SERVE_HALF_THEN_CLOSE ? orders / 2 : orders;
    for (int i = 0; i < send; i++) {
        uint8_t add[36] = {'A'};
        n = tp_soup_encode(buf, sizeof(buf), 'S', add, sizeof(add));
        assert_int_equal(write(conn, buf, (size_t)n), n);
    }
    if (what == SERVE_ALL) {
        uint8_t g[TP_GLIMPSE_SNAPSHOT_LEN];
        tp_glimpse_snapshot_encode(g, sizeof(g), 777);
        n = tp_soup_encode(buf, sizeof(buf), 'S', g, sizeof(g));
        assert_int_equal(write(conn, buf, (size_t)n), n);
    }
}

/* Runs a fetch against a server that plays script[k] on connection k. */
static void run_fetch(const enum script *script, int connections, uint32_t attempts,
                      struct fetch *f, struct tp_glimpse_session *g)
{
    uint16_t port;
    int ls = listener(&port);
    struct tp_glimpse_params gp = {.soup = params(), .attempts = attempts, .retry_ms = 10};
    gp.soup.addr = INADDR_LOOPBACK;
    gp.soup.port = port;
    struct tp_glimpse_sink sink = {
        .ctx = f, .begin = f_begin, .message = f_message, .end = f_end, .failed = f_failed};
    tp_glimpse_init(g, &gp, &sink);
    uint64_t now = 0;
    assert_int_equal(tp_glimpse_start(g, now), 0);
    int served = 0;
    int conns[8];
    for (int i = 0; i < 5000 && tp_glimpse_poll(g, now) != TP_GLIMPSE_IDLE; i++, now++) {
        struct pollfd fd = {.fd = ls, .events = POLLIN};
        if (served < connections && poll(&fd, 1, 1) == 1) {
            conns[served] = accept(ls, NULL, NULL);
            assert_true(conns[served] >= 0);
            /* The client sends its login once connected: poll it out. */
            for (int k = 0; k < 100 && g->soup.state == TP_SOUP_CONNECTING; k++)
                tp_glimpse_poll(g, now);
            serve(conns[served], script[served], 10);
            if (script[served] == SERVE_HALF_THEN_CLOSE)
                close(conns[served]);
            served++;
        }
    }
    for (int k = 0; k < served; k++)
        if (script[k] != SERVE_HALF_THEN_CLOSE)
            close(conns[k]);
    close(ls);
}

static void test_glimpse_snapshot(void **state)
{
    (void)state;
    struct tp_glimpse_session *g = calloc(1, sizeof(*g));
    struct fetch f = {0};
    enum script s[] = {SERVE_ALL};
    run_fetch(s, 1, 3, &f, g);
    assert_int_equal(f.ends, 1);
    assert_int_equal(f.fails, 0);
    assert_int_equal(f.messages, 10);
    assert_int_equal(f.next_seq, 777);
    assert_int_equal(g->counters.completed, 1);
    assert_int_equal(g->counters.messages, 10);
    free(g);
}

static void test_glimpse_dropped_then_retried(void **state)
{
    (void)state;
    struct tp_glimpse_session *g = calloc(1, sizeof(*g));
    struct fetch f = {0};
    enum script s[] = {SERVE_HALF_THEN_CLOSE, SERVE_ALL};
    run_fetch(s, 2, 3, &f, g);
    assert_int_equal(f.begins, 2);
    assert_int_equal(f.fails, 1);
    assert_int_equal(f.finals, 0);
    assert_int_equal(f.why, TP_SOUP_FAIL_CLOSED);
    assert_int_equal(f.ends, 1);
    assert_int_equal(f.messages, 10); /* the second attempt's, whole */
    assert_int_equal(g->counters.dropped, 1);
    assert_int_equal(g->counters.completed, 1);
    assert_int_equal(g->counters.messages, 15);
    free(g);
}

static void test_glimpse_refused(void **state)
{
    (void)state;
    struct tp_glimpse_session *g = calloc(1, sizeof(*g));
    struct fetch f = {0};
    enum script s[] = {REFUSE, REFUSE};
    run_fetch(s, 2, 2, &f, g);
    assert_int_equal(f.begins, 2);
    assert_int_equal(f.fails, 2);
    assert_int_equal(f.finals, 1);
    assert_int_equal(f.ends, 0);
    assert_int_equal(f.why, TP_SOUP_FAIL_REJECTED_AUTH);
    assert_int_equal(g->counters.rejected, 2);
    assert_int_equal(g->counters.gave_up, 1);
    assert_int_equal(g->last_fail, TP_SOUP_FAIL_REJECTED_AUTH);
    free(g);
}

int main(void)
{
#define T(name) cmocka_unit_test_setup_teardown(name, setup, teardown)
    const struct CMUnitTest tests[] = {
        T(test_session_to_end),
        T(test_cut_packets),
        T(test_zero_length),
        T(test_unknown_type),
        T(test_client_type_from_server),
        T(test_heartbeat_with_payload),
        T(test_data_before_login),
        T(test_accepted_not_numeric),
        T(test_length_beyond_data),
        T(test_rejected),
        T(test_rejected_session),
        T(test_login_timeout),
        T(test_heartbeats_and_idle),
        T(test_back_pressure),
        T(test_logout),
        cmocka_unit_test(test_connect_refused),
        cmocka_unit_test(test_glimpse_snapshot),
        cmocka_unit_test(test_glimpse_dropped_then_retried),
        cmocka_unit_test(test_glimpse_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
