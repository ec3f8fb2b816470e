/*
 * Simulator: live output. MoldUDP64 packets of a small ITCH session are sent as UDP multicast
 * on the loopback interface (never anything else) to lines A and B, at a given rate or in venue
 * time; receivers joined to both groups get every packet, byte for byte, and the pacing holds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cmocka.h>

#include "faults.h"
#include "itch_feed.h"
#include "live_out.h"
#include "mold_out.h"
#include "sim_test_util.h"

#define GROUP_A 0xefff0a01u /* 239.255.10.1 */
#define GROUP_B 0xefff0a02u /* 239.255.10.2 */

struct recorded {
    struct captured packets;
    struct tp_sim_live_out *live;
};

/* Keeps a copy of every packet, then sends it live. */
static int record_and_send(void *ctx, const struct tp_sim_packet *p)
{
    struct recorded *r = ctx;
    int rc = capture_packet(&r->packets, p);
    return rc < 0 ? rc : tp_sim_live_packet(r->live, p);
}

static int faults_packet(void *ctx, const struct tp_sim_packet *p)
{
    return tp_sim_faults_packet(ctx, p);
}

static int receiver(uint32_t group, uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    assert_true(fd >= 0);
    int one = 1, big = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(group)};
    assert_int_equal(bind(fd, (struct sockaddr *)&addr, sizeof(addr)), 0);
    socklen_t len = sizeof(addr);
    getsockname(fd, (struct sockaddr *)&addr, &len);
    *port = ntohs(addr.sin_port);
    struct ip_mreq mreq = {.imr_multiaddr.s_addr = htonl(group),
                           .imr_interface.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(setsockopt(fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof(mreq)), 0);
    struct timeval tv = {.tv_sec = 1};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    return fd;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Sends a 400-event ITCH session live (rate > 0: packets per second; speed > 0: venue time) and
 * checks that both receivers got every packet byte for byte. Returns the elapsed time; the
 * packets sent are left in *rec.
 */
static uint64_t live_session(uint64_t rate, double speed, struct recorded *rec)
{
    uint16_t port_a, port_b;
    int fd_a = receiver(GROUP_A, &port_a), fd_b = receiver(GROUP_B, &port_b);

    struct tp_sim_endpoints ep;
    tp_sim_endpoints_default(&ep, TP_SIM_VENUE_ITCH);
    ep.ep[TP_SIM_STREAM_INCREMENTAL][TP_SIM_LINE_A].group = GROUP_A;
    ep.ep[TP_SIM_STREAM_INCREMENTAL][TP_SIM_LINE_A].port = port_a;
    ep.ep[TP_SIM_STREAM_INCREMENTAL][TP_SIM_LINE_B].group = GROUP_B;
    ep.ep[TP_SIM_STREAM_INCREMENTAL][TP_SIM_LINE_B].port = port_b;
    struct tp_sim_live_out live;
    assert_int_equal(tp_sim_live_open(&live, &ep, "lo", rate, NULL), 0);
    if (speed > 0)
        tp_sim_live_follow_venue_time(&live, speed);
    memset(rec, 0, sizeof(*rec));
    rec->live = &live;
    struct tp_sim_fault_params fp = {.seed = 1};
    fp.line[0].enabled = fp.line[1].enabled = 1;
    struct tp_sim_faults faults;
    struct tp_sim_packet_sink to_live = {.packet = record_and_send, .ctx = rec};
    assert_int_equal(tp_sim_faults_init(&faults, &fp, &to_live), 0);
    struct tp_sim_mold_params mp;
    tp_sim_mold_params_default(&mp);
    struct tp_sim_mold_out mold;
    struct tp_sim_packet_sink to_faults = {.packet = faults_packet, .ctx = &faults};
    assert_int_equal(tp_sim_mold_init(&mold, &mp, &to_faults, NULL), 0);

    struct tp_sim_params p;
    tp_sim_params_default(&p);
    p.instruments = 20;
    struct tp_sim_model m;
    assert_int_equal(tp_sim_model_init(&m, &p), 0);
    struct tp_sim_msg_sink sink = {.message = tp_sim_mold_message, .ctx = &mold};
    uint64_t start = now_ns();
    assert_int_equal(tp_sim_itch_run(&m, 400, &sink), 0);
    assert_int_equal(tp_sim_mold_finish(&mold), 0);
    assert_int_equal(tp_sim_faults_finish(&faults), 0);
    uint64_t elapsed = now_ns() - start;

    assert_true(rec->packets.n > 100);
    assert_int_equal(live.sent, rec->packets.n);
    assert_int_equal(live.errors, 0);

    uint8_t buf[2048];
    size_t got[2] = {0, 0};
    for (size_t i = 0; i < rec->packets.n; i++) {
        int line = rec->packets.p[i].line;
        ssize_t n = recv(line == 0 ? fd_a : fd_b, buf, sizeof(buf), 0);
        assert_int_equal(n, rec->packets.p[i].len);
        assert_memory_equal(buf, rec->packets.p[i].data, rec->packets.p[i].len);
        got[line]++;
    }
    assert_int_equal(got[0], got[1]);
    tp_sim_faults_free(&faults);
    tp_sim_live_close(&live);
    tp_sim_model_free(&m);
    close(fd_a);
    close(fd_b);
    return elapsed;
}

static void test_live_at_a_rate(void **state)
{
    (void)state;
    struct recorded rec;
    uint64_t elapsed = live_session(4000, 0.0, &rec);
    /* 4000 packets/s: n packets take at least (n - 1) / 4000 s. */
    assert_true(elapsed >= (rec.packets.n - 1) * 250000ULL * 9 / 10);
    free(rec.packets.p);
}

static void test_live_in_venue_time(void **state)
{
    (void)state;
    struct recorded rec;
    uint64_t elapsed = live_session(0, 0.02, &rec); /* 50 times slower than the venue */
    uint64_t span = rec.packets.p[rec.packets.n - 1].time_ns - rec.packets.p[0].time_ns;
    assert_true(span > 100000);
    assert_true(elapsed >= span * 50 * 9 / 10);
    free(rec.packets.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_live_at_a_rate),
        cmocka_unit_test(test_live_in_venue_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
