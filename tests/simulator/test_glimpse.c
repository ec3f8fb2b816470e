/*
 * test_glimpse.c - the simulator's GLIMPSE snapshot: the snapshot taken mid-session plus the feed
 * from the sequence its 'G' names give exactly the model's final books (and neither alone does);
 * its server refuses bad credentials and the scripted logins, drops a connection mid-snapshot,
 * and otherwise sends the whole snapshot after login accepted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include "binaryfile.h"
#include "glimpse.h"
#include "glimpse_server.h"
#include "itch_feed.h"
#include "model.h"
#include "sim_test_util.h"
#include "soupbintcp.h"
#include "truth.h"

struct run {
    struct mem_sink feed;
    const struct tp_sim_model *m;
    uint64_t at;
    struct tp_sim_glimpse snap;
    int taken;
};

static int run_message(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns)
{
    return mem_sink_message(&((struct run *)ctx)->feed, msg, len, time_ns);
}

static int run_step_done(void *ctx)
{
    struct run *r = ctx;
    uint64_t next_seq = r->feed.messages + 1; /* the feed's messages count from 1 */
    if (r->taken || next_seq < r->at)
        return 0;
    r->taken = 1;
    return tp_sim_glimpse_build(&r->snap, r->m, next_seq);
}

static void generate(struct run *r, struct tp_sim_model *m, uint64_t at, uint64_t events)
{
    struct tp_sim_params p;
    tp_sim_params_default(&p);
    p.seed = 11;
    p.instruments = 40;
    assert_int_equal(tp_sim_model_init(m, &p), 0);
    memset(r, 0, sizeof(*r));
    r->m = m;
    r->at = at;
    struct tp_sim_msg_sink sink = {.message = run_message, .step_done = run_step_done, .ctx = r};
    assert_int_equal(tp_sim_itch_run(m, events, &sink), 0);
    assert_true(r->taken);
}

/* Applies the snapshot's messages; returns its next_seq ('G' must end it). */
static uint64_t apply_snapshot(const struct tp_sim_glimpse *g, struct ref_book *book,
                               uint64_t *adds)
{
    size_t at = 0;
    uint64_t next_seq = 0;
    while (at < g->len) {
        struct tp_soup_packet p;
        size_t need;
        int n = tp_soup_frame(g->packets + at, g->len - at, TP_SOUP_MAX_PACKET, &p, &need);
        assert_true(n > 0);
        assert_int_equal(tp_soup_check(&p, TP_SOUP_FROM_SERVER), 0);
        assert_int_equal(p.type, 'S');
        assert_int_equal(next_seq, 0); /* nothing after 'G' */
        if (tp_glimpse_snapshot_seq(p.payload, p.payload_len, &next_seq) != 0) {
            assert_true(tp_itch_check(p.payload, p.payload_len) > 0);
            *adds += p.payload[0] == 'A' || p.payload[0] == 'F';
            ref_apply_itch(book, p.payload, p.payload_len);
        }
        at += (size_t)n;
    }
    assert_true(next_seq > 0);
    return next_seq;
}

/* Applies the feed's messages with sequence >= from. */
static void apply_feed(const struct mem_sink *s, struct ref_book *book, uint64_t from)
{
    struct tp_binfile_reader r;
    const uint8_t *msg;
    uint16_t len;
    tp_binfile_reader_init(&r, s->buf, s->len);
    for (uint64_t seq = 1; tp_binfile_next(&r, &msg, &len) == 1; seq++)
        if (seq >= from)
            ref_apply_itch(book, msg, len);
}

static void test_snapshot_plus_feed_is_truth(void **state)
{
    (void)state;
    struct run r;
    struct tp_sim_model m;
    generate(&r, &m, 9000, 20000);
    assert_true(r.snap.next_seq >= 9000 && r.snap.next_seq < 9100);
    char path[256];
    temp_path(path, sizeof(path), ".json");
    assert_int_equal(tp_sim_truth_write(&m, 10, 0, path), 0);

    struct ref_book book;
    ref_init(&book, 40, m.next_order_id);
    uint64_t adds = 0;
    uint64_t next_seq = apply_snapshot(&r.snap, &book, &adds);
    assert_int_equal(next_seq, r.snap.next_seq);
    assert_int_equal(adds, r.snap.live_orders);
    assert_true(adds > 100);
    /* The snapshot alone is the books of mid-session, not the end. */
    assert_true(ref_compare_truth(&book, path, 10) > 0);
    apply_feed(&r.feed, &book, next_seq);
    assert_int_equal(book.errors, 0);
    assert_int_equal(ref_compare_truth(&book, path, 10), 0);
    ref_free(&book);

    /* The feed alone from there misses the orders that were resting. */
    ref_init(&book, 40, m.next_order_id);
    apply_feed(&r.feed, &book, next_seq);
    assert_true(book.errors > 0);
    ref_free(&book);

    unlink(path);
    tp_sim_glimpse_free(&r.snap);
    tp_sim_model_free(&m);
    mem_sink_free(&r.feed);
}

static void *serve_thread(void *arg)
{
    tp_sim_glimpse_serve(arg, 4000);
    return NULL;
}

/* One client session: returns the login answer's type; *got the sequenced bytes that followed. */
static uint8_t client_session(uint16_t port, const char *user, const char *pass, uint8_t *got,
                              size_t cap, size_t *got_len)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    uint8_t login[64];
    int n = tp_soup_encode_login(login, sizeof(login), user, pass, "", 1);
    assert_int_equal(write(fd, login, (size_t)n), n);
    size_t len = 0;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&p, 1, 3000), 1);
        ssize_t r = read(fd, got + len, cap - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        /* Whole once 'G' arrived: log out, as a client does. */
        uint64_t seq;
        if (len >= 24 && tp_glimpse_snapshot_seq(got + len - 21, 21, &seq) == 0) {
            uint8_t o[4];
            int on = tp_soup_encode_control(o, sizeof(o), 'O');
            assert_int_equal(write(fd, o, (size_t)on), on);
            break;
        }
    }
    close(fd);
    assert_true(len >= 3);
    uint8_t type = got[2];
    size_t head = type == 'A' ? 33 : 3; /* J: the reject code stays */
    assert_true(len >= head);
    memmove(got, got + head, len - head);
    *got_len = len - head;
    return type;
}

static void test_server_refuses_drops_and_serves(void **state)
{
    (void)state;
    struct run r;
    struct tp_sim_model m;
    generate(&r, &m, 3000, 6000);
    struct tp_sim_glimpse_faults faults = {.refuse = 1, .drops = 1, .drop_after = 5, .piece = 100};
    struct tp_sim_glimpse_server srv;
    assert_int_equal(tp_sim_glimpse_open(&srv, &r.snap, INADDR_LOOPBACK, 0, "tp", "pw", &faults),
                     0);
    uint16_t port = tp_sim_glimpse_port(&srv);
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, serve_thread, &srv), 0);
    size_t cap = r.snap.len + 64, len;
    uint8_t *got = malloc(cap);
    /* Scripted refusal, then a wrong password, then the drop, then the whole snapshot. */
    assert_int_equal(client_session(port, "tp", "pw", got, cap, &len), 'J');
    assert_int_equal(client_session(port, "tp", "wrong", got, cap, &len), 'J');
    assert_int_equal(got[0], 'A'); /* reject code: not authorized */
    assert_int_equal(client_session(port, "tp", "pw", got, cap, &len), 'A');
    size_t five = 0;
    for (int i = 0; i < 5; i++)
        five += 2 + ((size_t)r.snap.packets[five] << 8 | r.snap.packets[five + 1]);
    assert_int_equal(len, five);
    assert_int_equal(client_session(port, "tp", "pw", got, cap, &len), 'A');
    assert_int_equal(len, r.snap.len);
    assert_memory_equal(got, r.snap.packets, len);
    pthread_join(t, NULL);
    assert_int_equal(srv.logins, 4);
    assert_int_equal(srv.refused, 2);
    assert_int_equal(srv.dropped, 1);
    assert_int_equal(srv.served, 1);
    tp_sim_glimpse_close(&srv);
    free(got);
    tp_sim_glimpse_free(&r.snap);
    tp_sim_model_free(&m);
    mem_sink_free(&r.feed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_snapshot_plus_feed_is_truth),
        cmocka_unit_test(test_server_refuses_drops_and_serves),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
