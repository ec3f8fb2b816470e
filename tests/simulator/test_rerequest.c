/*
 * Simulator: the MoldUDP64 re-request server answers a request for a recent window with the
 * right messages, refuses what it no longer holds, and does so over real UDP on loopback.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mold_out.h"
#include "moldudp64.h"
#include "rerequest.h"

#define SESSION "TPSIM00001"

/* Message with sequence seq: its length and bytes derive from seq. */
static size_t make_msg(uint64_t seq, uint8_t *out)
{
    size_t len = 12 + seq % 30;
    for (size_t i = 0; i < len; i++)
        out[i] = (uint8_t)(seq * 31 + i);
    return len;
}

static void fill(struct tp_sim_mold_store *s, uint64_t n)
{
    uint8_t msg[64];
    tp_sim_mold_store_reset(s, SESSION, 1);
    for (uint64_t seq = 1; seq <= n; seq++)
        tp_sim_mold_store_add(s, seq, msg, make_msg(seq, msg));
}

static size_t request(uint8_t *buf, const char *session, uint64_t seq, uint16_t count)
{
    struct tp_mold_request r;
    memcpy(r.session, session, TP_MOLD_SESSION_LEN);
    r.sequence = seq;
    r.count = count;
    return (size_t)tp_mold_request_encode(buf, TP_MOLD_REQUEST_LEN, &r);
}

/* Checks that a reply carries messages first.. of the store's sequence; returns the count. */
static uint16_t check_reply(const uint8_t *reply, size_t len, uint64_t first)
{
    struct tp_mold_packet p;
    assert_int_equal(tp_mold_parse(&p, reply, len), TP_MOLD_MESSAGES);
    assert_memory_equal(p.session, SESSION, TP_MOLD_SESSION_LEN);
    assert_int_equal(p.sequence, first);
    const uint8_t *msg;
    uint16_t mlen;
    uint8_t want[64];
    uint64_t seq = first;
    int rc;
    while ((rc = tp_mold_next(&p, &msg, &mlen)) == 1) {
        size_t wlen = make_msg(seq++, want);
        assert_int_equal(mlen, wlen);
        assert_memory_equal(msg, want, wlen);
    }
    assert_int_equal(rc, 0);
    return p.count;
}

static void test_answers_window(void **state)
{
    (void)state;
    struct tp_sim_mold_store s;
    assert_int_equal(tp_sim_mold_store_init(&s, 1000, 1400), 0);
    fill(&s, 5000);
    uint8_t req[TP_MOLD_REQUEST_LEN], out[1500];

    /* Inside the window: exactly the 10 messages asked for. */
    size_t len = tp_sim_mold_store_answer(&s, req, request(req, SESSION, 4500, 10), out, 1500);
    assert_true(len > 0);
    assert_int_equal(check_reply(out, len, 4500), 10);
    /* At the end of the stream: only what exists. */
    len = tp_sim_mold_store_answer(&s, req, request(req, SESSION, 4995, 100), out, 1500);
    assert_int_equal(check_reply(out, len, 4995), 6);
    /* A large request: as many as fit in one packet, starting at the sequence asked. */
    len = tp_sim_mold_store_answer(&s, req, request(req, SESSION, 4001, 500), out, 1500);
    uint16_t got = check_reply(out, len, 4001);
    assert_true(got > 10 && got < 500);
    assert_true(len <= 1400);
    /* The oldest message held is 4001; 4000 is gone. */
    assert_int_equal(tp_sim_mold_store_answer(&s, req, request(req, SESSION, 4000, 1), out, 1500),
                     0);
    assert_int_equal(tp_sim_mold_store_answer(&s, req, request(req, SESSION, 5001, 1), out, 1500),
                     0);
    assert_int_equal(
        tp_sim_mold_store_answer(&s, req, request(req, "OTHERSESS1", 4500, 1), out, 1500), 0);
    assert_int_equal(tp_sim_mold_store_answer(&s, req, 19, out, 1500), 0); /* malformed */
    assert_int_equal(s.answered, 3);
    assert_int_equal(s.refused, 4);
    tp_sim_mold_store_free(&s);
}

/* A store of messages 1..3000 (window 2000) served on a loopback port; *to is the server. */
static void open_loopback_server(struct tp_sim_mold_store *s, struct tp_sim_rerequest_server *srv,
                                 struct sockaddr_in *to)
{
    assert_int_equal(tp_sim_mold_store_init(s, 2000, 1400), 0);
    fill(s, 3000);
    assert_int_equal(tp_sim_rerequest_open(srv, s, INADDR_LOOPBACK, 0), 0);
    uint16_t port = tp_sim_rerequest_port(srv);
    assert_true(port != 0);
    *to = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(port)};
    to->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

static void test_udp_loopback(void **state)
{
    (void)state;
    struct tp_sim_mold_store s;
    struct tp_sim_rerequest_server srv;
    struct sockaddr_in to;
    open_loopback_server(&s, &srv, &to);

    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    struct timeval tv = {.tv_sec = 2};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    uint8_t req[TP_MOLD_REQUEST_LEN], reply[1500];

    /* Two requests in a row (a gap and a later one); each gets its own answer. */
    size_t rl = request(req, SESSION, 1500, 20);
    assert_int_equal(sendto(fd, req, rl, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)rl);
    rl = request(req, SESSION, 2990, 5);
    assert_int_equal(sendto(fd, req, rl, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)rl);
    int handled = 0;
    while (handled < 2) {
        int n = tp_sim_rerequest_serve(&srv, 1000);
        assert_true(n > 0);
        handled += n;
    }
    ssize_t n = recv(fd, reply, sizeof(reply), 0);
    assert_true(n > 0);
    assert_int_equal(check_reply(reply, (size_t)n, 1500), 20);
    n = recv(fd, reply, sizeof(reply), 0);
    assert_true(n > 0);
    assert_int_equal(check_reply(reply, (size_t)n, 2990), 5);

    /* Out of the window: no answer at all. */
    rl = request(req, SESSION, 10, 5);
    sendto(fd, req, rl, 0, (struct sockaddr *)&to, sizeof(to));
    assert_int_equal(tp_sim_rerequest_serve(&srv, 1000), 1);
    struct timeval quick = {.tv_usec = 100000};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &quick, sizeof(quick));
    assert_true(recv(fd, reply, sizeof(reply), 0) < 0);

    close(fd);
    tp_sim_rerequest_close(&srv);
    tp_sim_mold_store_free(&s);
}

/*
 * The linger after the last packet answers every request of its whole span, not only the first
 * burst: a child sends one request at once and another 200 ms later, during a 600 ms linger.
 */
static void test_linger_answers_late_requests(void **state)
{
    (void)state;
    struct tp_sim_mold_store s;
    struct tp_sim_rerequest_server srv;
    struct sockaddr_in to;
    open_loopback_server(&s, &srv, &to);
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        int fd = socket(AF_INET, SOCK_DGRAM, 0);
        uint8_t req[TP_MOLD_REQUEST_LEN];
        size_t rl = request(req, SESSION, 1500, 20);
        sendto(fd, req, rl, 0, (struct sockaddr *)&to, sizeof(to));
        usleep(200000);
        rl = request(req, SESSION, 2990, 5);
        sendto(fd, req, rl, 0, (struct sockaddr *)&to, sizeof(to));
        _exit(0);
    }
    assert_int_equal(tp_sim_rerequest_linger(&srv, 600), 2);
    assert_int_equal(s.answered, 2);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    tp_sim_rerequest_close(&srv);
    tp_sim_mold_store_free(&s);
}

/* The packetizer fills the store with the sequence numbers it sends, across a sequence reset. */
static int drop_packet(void *ctx, const struct tp_sim_packet *p)
{
    uint64_t *packets = ctx;
    (void)p;
    (*packets)++;
    return 0;
}

static void test_store_follows_packetizer(void **state)
{
    (void)state;
    struct tp_sim_mold_store s;
    assert_int_equal(tp_sim_mold_store_init(&s, 100, 1400), 0);
    struct tp_sim_mold_params mp;
    tp_sim_mold_params_default(&mp);
    mp.reset_at_message = 300;
    uint64_t packets = 0;
    struct tp_sim_packet_sink sink = {.packet = drop_packet, .ctx = &packets};
    struct tp_sim_mold_out o;
    assert_int_equal(tp_sim_mold_init(&o, &mp, &sink, &s), 0);
    uint8_t msg[64];
    for (uint64_t i = 0; i < 500; i++) {
        uint64_t seq = i < 300 ? i + 1 : i - 299;
        assert_int_equal(tp_sim_mold_message(&o, msg, make_msg(seq, msg), i * 100), 0);
    }
    assert_int_equal(tp_sim_mold_finish(&o), 0);
    assert_int_equal(o.sessions, 2);
    assert_int_equal(o.reset_at_seq, 301);
    assert_memory_equal(s.session, "TPSIM00002", 10);
    assert_int_equal(s.next_seq, 201);
    uint8_t req[TP_MOLD_REQUEST_LEN], out[1500];
    size_t len =
        tp_sim_mold_store_answer(&s, req, request(req, "TPSIM00002", 150, 3), out, sizeof(out));
    struct tp_mold_packet p;
    assert_int_equal(tp_mold_parse(&p, out, len), TP_MOLD_MESSAGES);
    assert_int_equal(p.sequence, 150);
    assert_int_equal(p.count, 3);
    assert_true(packets > 0);
    tp_sim_mold_store_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_answers_window),
        cmocka_unit_test(test_udp_loopback),
        cmocka_unit_test(test_linger_answers_late_requests),
        cmocka_unit_test(test_store_follows_packetizer),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
