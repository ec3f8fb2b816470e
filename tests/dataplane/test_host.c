/*
 * Tests for dataplane/ports/host: IGMPv3/v2 reports, queries and leaves, ARP answers and
 * neighbor resolution, and frames the port did not take. Frames are checked byte by byte against
 * RFC 2236 / 3376 / 826.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "host.h"
#include "net_build.h"
#include "net_parse.h"

#define HZ        1000000ull  /* fake TSC: 1 tick = 1 us */
#define MY_IP     0x0a000002u /* 10.0.0.2 */
#define PEER_IP   0x0a000001u
#define GROUP1    0xe0001f01u /* 224.0.31.1 */
#define GROUP2    0xe0001f02u
#define SSM_GROUP 0xe8010101u /* 232.1.1.1 */
#define SOURCE    0x0a0a0a0au

static const uint8_t my_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x01};

static struct tp_host *make_host(uint16_t vlan)
{
    struct tp_host_params p = {.ip = MY_IP, .vlan = vlan, .tsc_hz = HZ, .seed = 42};
    memcpy(p.mac, my_mac, 6);
    void *mem = aligned_alloc(64, tp_host_memsize());
    assert_non_null(mem);
    assert_int_equal(tp_host_init(mem, &p), 0);
    return mem;
}

/* The caller's part: the next due frame, which the port takes (tp_host_frame_sent(true)). */
static size_t send_next(struct tp_host *h, uint64_t now, uint8_t *f, size_t cap)
{
    size_t len = tp_host_next_frame(h, now, f, cap);
    if (len > 0)
        tp_host_frame_sent(h, now, true);
    return len;
}

/* A parsed IGMP frame the host sent. */
struct igmp_out {
    uint16_t vlan; /* TP_HOST_NO_VLAN if untagged */
    uint32_t dst_ip;
    const uint8_t *igmp;
    size_t igmp_len;
};

static void parse_igmp(const uint8_t *f, size_t len, struct igmp_out *out)
{
    size_t off = 12;
    out->vlan = TP_HOST_NO_VLAN;
    if (tp_load_be16(f + off) == TP_ETHERTYPE_VLAN) {
        out->vlan = tp_load_be16(f + off + 2) & 0xfff;
        off += 4;
    }
    assert_int_equal(tp_load_be16(f + off), TP_ETHERTYPE_IPV4);
    const uint8_t *ip = f + off + 2;
    assert_int_equal(ip[0], 0x46); /* IPv4 + Router Alert option */
    assert_int_equal(ip[1], 0xc0);
    assert_int_equal(ip[8], 1); /* TTL 1 */
    assert_int_equal(ip[9], 2); /* IGMP */
    assert_int_equal(ip[20], 0x94);
    assert_int_equal(ip[21], 0x04);
    assert_int_equal(tp_ipv4_checksum(ip, 24), 0);
    assert_int_equal(tp_load_be32(ip + 12), MY_IP);
    out->dst_ip = tp_load_be32(ip + 16);
    size_t total = tp_load_be16(ip + 2);
    assert_int_equal(off + 2 + total, len);
    out->igmp = ip + 24;
    out->igmp_len = total - 24;
    assert_int_equal(tp_ipv4_checksum(out->igmp, out->igmp_len), 0);
    /* Destination MAC is the IP multicast MAC of the destination address. */
    uint8_t mac[6];
    tp_net_multicast_mac(out->dst_ip, mac);
    assert_memory_equal(f, mac, 6);
    assert_memory_equal(f + 6, my_mac, 6);
}

static void expect_v3_record(const uint8_t *f, size_t len, uint8_t record, uint32_t group,
                             uint32_t source)
{
    struct igmp_out o;
    parse_igmp(f, len, &o);
    assert_int_equal(o.dst_ip, 0xe0000016u);
    assert_int_equal(o.igmp[0], 0x22);
    assert_int_equal(tp_load_be16(o.igmp + 6), 1);
    assert_int_equal(o.igmp[8], record);
    assert_int_equal(tp_load_be16(o.igmp + 10), source ? 1 : 0);
    assert_int_equal(tp_load_be32(o.igmp + 12), group);
    assert_int_equal(o.igmp_len, 16 + (source ? 4 : 0));
    if (source)
        assert_int_equal(tp_load_be32(o.igmp + 16), source);
}

static void test_join_sends_two_unsolicited_reports(void **state)
{
    (void)state;
    struct tp_host *h = make_host(TP_HOST_NO_VLAN);
    uint8_t f[TP_HOST_FRAME_MAX];
    assert_int_equal(send_next(h, 0, f, sizeof(f)), 0);
    assert_int_equal(tp_host_join(h, 0x0a000001u, 0, TP_HOST_NO_VLAN, 0), -EINVAL);
    assert_int_equal(tp_host_join(h, GROUP1, 0, 30, 1000), 0);
    size_t len = send_next(h, 1000, f, sizeof(f));
    assert_true(len > 0);
    expect_v3_record(f, len, 4 /* CHANGE_TO_EXCLUDE */, GROUP1, 0);
    struct igmp_out o;
    parse_igmp(f, len, &o);
    assert_int_equal(o.vlan, 30);
    assert_int_equal(send_next(h, 1000 + HZ - 1, f, sizeof(f)), 0);
    len = send_next(h, 1000 + HZ, f, sizeof(f));
    expect_v3_record(f, len, 4, GROUP1, 0);
    assert_int_equal(send_next(h, 1000 + 100 * HZ, f, sizeof(f)), 0);
    assert_int_equal(tp_host_counters(h)->igmp_reports, 2);
    assert_true(tp_host_joined(h, GROUP1));
    /* A second join only adds a reference: no new reports. */
    assert_int_equal(tp_host_join(h, GROUP1, 0, 30, 2000), 0);
    assert_int_equal(send_next(h, 3 * HZ, f, sizeof(f)), 0);
    free(h);
}

static void test_ssm_join_and_leave(void **state)
{
    (void)state;
    struct tp_host *h = make_host(TP_HOST_NO_VLAN);
    uint8_t f[TP_HOST_FRAME_MAX];
    assert_int_equal(tp_host_join(h, SSM_GROUP, SOURCE, TP_HOST_NO_VLAN, 0), 0);
    size_t len = send_next(h, 0, f, sizeof(f));
    expect_v3_record(f, len, 5 /* ALLOW_NEW_SOURCES */, SSM_GROUP, SOURCE);
    assert_int_equal(tp_host_leave(h, SSM_GROUP, 10), 0);
    len = send_next(h, 10, f, sizeof(f));
    expect_v3_record(f, len, 6 /* BLOCK_OLD_SOURCES */, SSM_GROUP, SOURCE);
    /* The pending second join report died with the leave. */
    assert_int_equal(send_next(h, 10 * HZ, f, sizeof(f)), 0);
    assert_false(tp_host_joined(h, SSM_GROUP));
    assert_int_equal(tp_host_leave(h, SSM_GROUP, 20), -ENOENT);
    assert_int_equal(tp_host_counters(h)->igmp_leaves, 1);
    free(h);
}

/* An IGMP query frame; v3 when v3 is true (12-byte message), else v2 (8 bytes). */
static size_t make_query(uint8_t *f, bool v3, uint8_t max_resp, uint32_t group)
{
    memset(f, 0, 128);
    uint8_t mac[6];
    tp_net_multicast_mac(0xe0000001u, mac);
    memcpy(f, mac, 6);
    memcpy(f + 6, peer_mac, 6);
    tp_store_be16(f + 12, TP_ETHERTYPE_IPV4);
    uint8_t *ip = f + 14;
    size_t igmp_len = v3 ? 12 : 8;
    ip[0] = 0x45;
    tp_store_be16(ip + 2, (uint16_t)(20 + igmp_len));
    ip[8] = 1;
    ip[9] = 2;
    tp_store_be32(ip + 12, PEER_IP);
    tp_store_be32(ip + 16, 0xe0000001u);
    tp_store_be16(ip + 10, tp_ipv4_checksum(ip, 20));
    uint8_t *igmp = ip + 20;
    igmp[0] = 0x11;
    igmp[1] = max_resp;
    tp_store_be32(igmp + 4, group);
    tp_store_be16(igmp + 2, tp_ipv4_checksum(igmp, igmp_len));
    return 14 + 20 + igmp_len;
}

static void drain_join_reports(struct tp_host *h)
{
    uint8_t f[TP_HOST_FRAME_MAX];
    while (send_next(h, 0, f, sizeof(f)) > 0)
        ;
    while (send_next(h, HZ, f, sizeof(f)) > 0)
        ;
}

static void test_general_query_v3(void **state)
{
    (void)state;
    struct tp_host *h = make_host(TP_HOST_NO_VLAN);
    tp_host_join(h, GROUP1, 0, TP_HOST_NO_VLAN, 0);
    tp_host_join(h, GROUP2, 0, TP_HOST_NO_VLAN, 0);
    drain_join_reports(h);
    uint8_t q[128], f[TP_HOST_FRAME_MAX];
    uint64_t t0 = 10 * HZ;
    /* Max Resp Code 20 = 2 s: both groups answer within 2 s, as current-state records. */
    assert_true(tp_host_input(h, q, make_query(q, true, 20, 0), t0));
    int seen1 = 0, seen2 = 0;
    for (uint64_t t = t0; t <= t0 + 2 * HZ; t += HZ / 100) {
        size_t len;
        while ((len = send_next(h, t, f, sizeof(f))) > 0) {
            struct igmp_out o;
            parse_igmp(f, len, &o);
            assert_int_equal(o.igmp[8], 2 /* MODE_IS_EXCLUDE */);
            uint32_t g = tp_load_be32(o.igmp + 12);
            seen1 += g == GROUP1;
            seen2 += g == GROUP2;
        }
    }
    assert_int_equal(seen1, 1);
    assert_int_equal(seen2, 1);
    /* A group-specific query answers for that group only. */
    assert_true(tp_host_input(h, q, make_query(q, true, 10, GROUP2), t0 + 3 * HZ));
    size_t len = send_next(h, t0 + 5 * HZ, f, sizeof(f));
    expect_v3_record(f, len, 2, GROUP2, 0);
    assert_int_equal(send_next(h, t0 + 5 * HZ, f, sizeof(f)), 0);
    assert_int_equal(tp_host_counters(h)->igmp_queries, 2);
    free(h);
}

static void test_v2_querier_switches_reports_to_v2(void **state)
{
    (void)state;
    struct tp_host *h = make_host(TP_HOST_NO_VLAN);
    tp_host_join(h, GROUP1, 0, TP_HOST_NO_VLAN, 0);
    drain_join_reports(h);
    uint8_t q[128], f[TP_HOST_FRAME_MAX];
    assert_true(tp_host_input(h, q, make_query(q, false, 1, 0), 5 * HZ));
    size_t len = send_next(h, 5 * HZ + HZ / 10, f, sizeof(f));
    assert_true(len > 0);
    struct igmp_out o;
    parse_igmp(f, len, &o);
    assert_int_equal(o.igmp[0], 0x16); /* v2 report, sent to the group itself */
    assert_int_equal(o.dst_ip, GROUP1);
    assert_int_equal(tp_load_be32(o.igmp + 4), GROUP1);
    assert_int_equal(o.igmp_len, 8);
    tp_host_leave(h, GROUP1, 6 * HZ);
    len = send_next(h, 6 * HZ, f, sizeof(f));
    parse_igmp(f, len, &o);
    assert_int_equal(o.igmp[0], 0x17); /* v2 leave to all routers */
    assert_int_equal(o.dst_ip, 0xe0000002u);
    /* After the older-querier timeout the host speaks v3 again. */
    tp_host_join(h, GROUP2, 0, TP_HOST_NO_VLAN, 300 * HZ);
    len = send_next(h, 300 * HZ, f, sizeof(f));
    expect_v3_record(f, len, 4, GROUP2, 0);
    free(h);
}

static void test_bad_igmp_checksum_counted(void **state)
{
    (void)state;
    struct tp_host *h = make_host(TP_HOST_NO_VLAN);
    tp_host_join(h, GROUP1, 0, TP_HOST_NO_VLAN, 0);
    drain_join_reports(h);
    uint8_t q[128], f[TP_HOST_FRAME_MAX];
    size_t len = make_query(q, true, 10, 0);
    q[len - 1] ^= 0x55;
    assert_true(tp_host_input(h, q, len, 5 * HZ));
    assert_int_equal(tp_host_counters(h)->malformed, 1);
    assert_int_equal(tp_host_counters(h)->igmp_queries, 0);
    assert_int_equal(send_next(h, 10 * HZ, f, sizeof(f)), 0);
    /* Truncations never read out of bounds and never answer. */
    len = make_query(q, true, 10, 0);
    for (size_t cut = 0; cut < len; cut++)
        tp_host_input(h, q, cut, 5 * HZ);
    assert_int_equal(send_next(h, 10 * HZ, f, sizeof(f)), 0);
    free(h);
}

static size_t make_arp(uint8_t *f, uint16_t op, const uint8_t sender_mac[6], uint32_t sender_ip,
                       uint32_t target_ip, int vlan)
{
    memset(f, 0xff, 6);
    memcpy(f + 6, sender_mac, 6);
    size_t off = 12;
    if (vlan >= 0) {
        tp_store_be16(f + off, TP_ETHERTYPE_VLAN);
        tp_store_be16(f + off + 2, (uint16_t)vlan);
        off += 4;
    }
    tp_store_be16(f + off, 0x0806);
    uint8_t *a = f + off + 2;
    tp_store_be16(a, 1);
    tp_store_be16(a + 2, 0x0800);
    a[4] = 6;
    a[5] = 4;
    tp_store_be16(a + 6, op);
    memcpy(a + 8, sender_mac, 6);
    tp_store_be32(a + 14, sender_ip);
    memset(a + 18, 0, 6);
    tp_store_be32(a + 24, target_ip);
    return off + 2 + 28;
}

static void test_arp_answer_and_resolve(void **state)
{
    (void)state;
    struct tp_host *h = make_host(TP_HOST_NO_VLAN);
    uint8_t q[128], f[TP_HOST_FRAME_MAX];
    /* Request for us, on VLAN 12: answered on VLAN 12 to the asker. */
    assert_true(tp_host_input(h, q, make_arp(q, 1, peer_mac, PEER_IP, MY_IP, 12), 0));
    size_t len = send_next(h, 0, f, sizeof(f));
    assert_int_equal(len, 60);
    assert_memory_equal(f, peer_mac, 6);
    assert_memory_equal(f + 6, my_mac, 6);
    assert_int_equal(tp_load_be16(f + 12), TP_ETHERTYPE_VLAN);
    assert_int_equal(tp_load_be16(f + 14), 12);
    const uint8_t *a = f + 18;
    assert_int_equal(tp_load_be16(a + 6), 2);
    assert_memory_equal(a + 8, my_mac, 6);
    assert_int_equal(tp_load_be32(a + 14), MY_IP);
    assert_memory_equal(a + 18, peer_mac, 6);
    assert_int_equal(tp_load_be32(a + 24), PEER_IP);
    /* Request for someone else: nothing to say. */
    assert_true(tp_host_input(h, q, make_arp(q, 1, peer_mac, PEER_IP, MY_IP + 5, -1), 0));
    assert_int_equal(send_next(h, 0, f, sizeof(f)), 0);

    /* Resolving the peer: a broadcast request, retried after a second, then the reply. */
    uint8_t mac[6];
    assert_int_equal(tp_host_resolve(h, PEER_IP, 100, mac), -EAGAIN);
    len = send_next(h, 100, f, sizeof(f));
    assert_true(len >= 42);
    assert_memory_equal(f, "\xff\xff\xff\xff\xff\xff", 6);
    assert_int_equal(tp_load_be16(f + 12 + 2 + 6), 1);
    assert_int_equal(tp_load_be32(f + 14 + 24), PEER_IP);
    assert_int_equal(send_next(h, 100 + HZ - 1, f, sizeof(f)), 0);
    assert_true(send_next(h, 100 + HZ, f, sizeof(f)) > 0);
    assert_true(tp_host_input(h, q, make_arp(q, 2, peer_mac, PEER_IP, MY_IP, -1), 200));
    assert_int_equal(tp_host_resolve(h, PEER_IP, 300, mac), 0);
    assert_memory_equal(mac, peer_mac, 6);
    assert_int_equal(send_next(h, 10 * HZ, f, sizeof(f)), 0);
    const struct tp_host_counters *c = tp_host_counters(h);
    assert_int_equal(c->arp_requests, 1);
    assert_int_equal(c->arp_sent, 2);
    assert_int_equal(c->arp_learned, 1);
    /* A UDP frame is not for the host. */
    struct tp_udp_frame_spec spec = {.src_ip = PEER_IP, .dst_ip = MY_IP, .dst_port = 9};
    int ulen = tp_net_build_udp(q, sizeof(q), &spec, (const uint8_t *)"x", 1);
    assert_false(tp_host_input(h, q, (size_t)ulen, 0));
    assert_int_equal(c->ignored, 1);
    free(h);
}

/* ---- frames the port did not take ------------------------------------------------------ */

/* The port refuses the next due frame (full tx queue, no mbuf). */
static size_t refuse_next(struct tp_host *h, uint64_t now, uint8_t *f, size_t cap)
{
    size_t len = tp_host_next_frame(h, now, f, cap);
    if (len > 0)
        tp_host_frame_sent(h, now, false);
    return len;
}

#define TICK (HZ / 10000) /* the daemon's timer: 100 us */

static void test_refused_join_report_sent_at_next_tick(void **state)
{
    (void)state;
    struct tp_host *h = make_host(TP_HOST_NO_VLAN);
    uint8_t f[TP_HOST_FRAME_MAX], again[TP_HOST_FRAME_MAX];
    tp_host_join(h, GROUP1, 0, TP_HOST_NO_VLAN, 0);
    size_t len = refuse_next(h, 0, f, sizeof(f));
    expect_v3_record(f, len, 4 /* CHANGE_TO_EXCLUDE */, GROUP1, 0);
    /* Nothing moved on: no report counted, and the same frame is due at the next tick. */
    const struct tp_host_counters *c = tp_host_counters(h);
    assert_int_equal(c->igmp_reports, 0);
    assert_int_equal(c->tx_retries, 1);
    assert_int_equal(send_next(h, TICK, again, sizeof(again)), len);
    assert_memory_equal(again, f, len);
    assert_int_equal(c->igmp_reports, 1);
    /* Sent: not again at the following ticks; the second report is one second after the send. */
    assert_int_equal(send_next(h, 2 * TICK, f, sizeof(f)), 0);
    assert_int_equal(send_next(h, TICK + HZ - 1, f, sizeof(f)), 0);
    len = send_next(h, TICK + HZ, f, sizeof(f));
    expect_v3_record(f, len, 4, GROUP1, 0);
    assert_int_equal(send_next(h, 10 * HZ, f, sizeof(f)), 0);
    assert_int_equal(c->igmp_reports, 2);
    assert_int_equal(c->tx_retries, 1);
    assert_int_equal(c->tx_given_up, 0);
    free(h);
}

static void test_refused_query_answer_arp_reply_and_leave_kept(void **state)
{
    (void)state;
    struct tp_host *h = make_host(TP_HOST_NO_VLAN);
    tp_host_join(h, GROUP1, 0, TP_HOST_NO_VLAN, 0);
    drain_join_reports(h);
    uint8_t q[128], f[TP_HOST_FRAME_MAX];
    const struct tp_host_counters *c = tp_host_counters(h);
    /* A query answer (Max Resp Time 0.1 s) refused when due is answered at the next tick. */
    uint64_t t = 10 * HZ;
    assert_true(tp_host_input(h, q, make_query(q, true, 1, 0), t));
    size_t len;
    while ((len = refuse_next(h, t, f, sizeof(f))) == 0)
        t += TICK;
    assert_true(t <= 10 * HZ + HZ / 10);
    expect_v3_record(f, len, 2 /* MODE_IS_EXCLUDE */, GROUP1, 0);
    len = send_next(h, t + TICK, f, sizeof(f));
    expect_v3_record(f, len, 2, GROUP1, 0);
    assert_int_equal(send_next(h, t + 2 * TICK, f, sizeof(f)), 0);
    assert_int_equal(c->igmp_reports, 3); /* two join reports, one answer */

    /* An ARP reply refused twice goes out at the third tick, once. */
    t = 20 * HZ;
    assert_true(tp_host_input(h, q, make_arp(q, 1, peer_mac, PEER_IP, MY_IP, -1), t));
    assert_int_equal(refuse_next(h, t, f, sizeof(f)), 60);
    assert_int_equal(refuse_next(h, t + TICK, f, sizeof(f)), 60);
    assert_int_equal(send_next(h, t + 2 * TICK, f, sizeof(f)), 60);
    assert_int_equal(tp_load_be16(f + 14 + 6), 2);
    assert_memory_equal(f, peer_mac, 6);
    assert_int_equal(send_next(h, t + 3 * TICK, f, sizeof(f)), 0);

    /* A refused leave: the group's slot waits for the leave to go out. */
    t = 30 * HZ;
    tp_host_leave(h, GROUP1, t);
    len = refuse_next(h, t, f, sizeof(f));
    expect_v3_record(f, len, 3 /* CHANGE_TO_INCLUDE */, GROUP1, 0);
    assert_int_equal(c->igmp_leaves, 0);
    len = send_next(h, t + TICK, f, sizeof(f));
    expect_v3_record(f, len, 3, GROUP1, 0);
    assert_int_equal(c->igmp_leaves, 1);
    assert_int_equal(send_next(h, t + 2 * TICK, f, sizeof(f)), 0);
    assert_int_equal(c->tx_retries, 4);
    free(h);
}

static void test_retry_resumes_at_the_refused_frame(void **state)
{
    (void)state;
    struct tp_host *h = make_host(TP_HOST_NO_VLAN);
    uint8_t f[TP_HOST_FRAME_MAX];
    tp_host_join(h, GROUP1, 0, TP_HOST_NO_VLAN, 0);
    tp_host_join(h, GROUP2, 0, TP_HOST_NO_VLAN, 0);
    /* The first frame goes out, the second is refused: the next tick sends the second only. */
    size_t len = send_next(h, 0, f, sizeof(f));
    expect_v3_record(f, len, 4, GROUP1, 0);
    len = refuse_next(h, 0, f, sizeof(f));
    expect_v3_record(f, len, 4, GROUP2, 0);
    len = send_next(h, TICK, f, sizeof(f));
    expect_v3_record(f, len, 4, GROUP2, 0);
    assert_int_equal(send_next(h, TICK, f, sizeof(f)), 0);
    /* Each group's second report follows its own first by one second. */
    len = send_next(h, HZ, f, sizeof(f));
    expect_v3_record(f, len, 4, GROUP1, 0);
    assert_int_equal(send_next(h, HZ, f, sizeof(f)), 0);
    len = send_next(h, TICK + HZ, f, sizeof(f));
    expect_v3_record(f, len, 4, GROUP2, 0);
    assert_int_equal(send_next(h, 10 * HZ, f, sizeof(f)), 0);
    assert_int_equal(tp_host_counters(h)->igmp_reports, 4);
    /* Writing a frame without settling it sends nothing: the same frame is written again. */
    tp_host_leave(h, GROUP1, 11 * HZ);
    uint8_t first[TP_HOST_FRAME_MAX];
    len = tp_host_next_frame(h, 11 * HZ, first, sizeof(first));
    assert_int_equal(tp_host_next_frame(h, 11 * HZ, f, sizeof(f)), len);
    assert_memory_equal(f, first, len);
    assert_int_equal(tp_host_counters(h)->igmp_leaves, 0);
    free(h);
}

static void test_refused_frames_given_up_after_the_bound(void **state)
{
    (void)state;
    struct tp_host *h = make_host(TP_HOST_NO_VLAN);
    uint8_t q[128], f[TP_HOST_FRAME_MAX];
    const struct tp_host_counters *c = tp_host_counters(h);
    const uint64_t bound = TP_HOST_TX_GIVE_UP_MS * HZ / 1000;
    tp_host_join(h, GROUP1, 0, TP_HOST_NO_VLAN, 0);
    assert_true(tp_host_input(h, q, make_arp(q, 1, peer_mac, PEER_IP, MY_IP, -1), 0));
    /* Every tick of the bound tries again (the ARP reply first: nothing behind it gets a turn). */
    uint64_t t = 0, tries = 0;
    for (; t < bound; t += TICK, tries++)
        assert_int_equal(refuse_next(h, t, f, sizeof(f)), 60);
    assert_int_equal(c->tx_retries, tries);
    assert_int_equal(c->tx_given_up, 0);
    /* At the bound everything due is given up, counted, and nothing is written. */
    assert_int_equal(tp_host_next_frame(h, t, f, sizeof(f)), 0);
    assert_int_equal(c->tx_given_up, 2); /* the ARP reply and the first join report */
    assert_int_equal(c->igmp_reports, 0);
    assert_int_equal(tp_host_next_frame(h, t + TICK, f, sizeof(f)), 0);
    /* The join goes on with its second report a second later, counted once sent. */
    size_t len = send_next(h, t + HZ, f, sizeof(f));
    expect_v3_record(f, len, 4, GROUP1, 0);
    assert_int_equal(c->igmp_reports, 1);
    /* A new failure starts a new count: refused again, it is retried, not given up at once. */
    t = 5 * HZ;
    assert_true(tp_host_input(h, q, make_arp(q, 1, peer_mac, PEER_IP, MY_IP, -1), t));
    assert_int_equal(refuse_next(h, t, f, sizeof(f)), 60);
    assert_int_equal(send_next(h, t + TICK, f, sizeof(f)), 60);
    assert_int_equal(c->tx_given_up, 2);
    assert_int_equal(send_next(h, t + 2 * TICK, f, sizeof(f)), 0);
    free(h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_join_sends_two_unsolicited_reports),
        cmocka_unit_test(test_ssm_join_and_leave),
        cmocka_unit_test(test_general_query_v3),
        cmocka_unit_test(test_v2_querier_switches_reports_to_v2),
        cmocka_unit_test(test_bad_igmp_checksum_counted),
        cmocka_unit_test(test_arp_answer_and_resolve),
        cmocka_unit_test(test_refused_join_report_sent_at_next_tick),
        cmocka_unit_test(test_refused_query_answer_arp_reply_and_leave_kept),
        cmocka_unit_test(test_retry_resumes_at_the_refused_frame),
        cmocka_unit_test(test_refused_frames_given_up_after_the_bound),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
