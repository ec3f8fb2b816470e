/*
 * Tests for dataplane/ports/classifier: exact and any-VLAN flows, collisions, capacity, and the
 * reasons frames are refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classifier.h"
#include "net_build.h"

#define GROUP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

static struct tp_classifier *make(uint32_t max_flows)
{
    struct tp_classifier_params p = {.max_flows = max_flows, .verify_udp_checksum = true};
    size_t size = tp_classifier_memsize(&p);
    assert_true(size > 0);
    void *mem = aligned_alloc(64, size);
    assert_non_null(mem);
    assert_int_equal(tp_classifier_init(mem, &p), 0);
    return mem;
}

static size_t frame_to(uint8_t *buf, size_t cap, uint32_t group, uint16_t port, int vlan,
                       size_t payload_len)
{
    struct tp_udp_frame_spec spec = {
        .src_ip = GROUP(10, 0, 0, 1),
        .dst_ip = group,
        .src_port = 5000,
        .dst_port = port,
        .vlan_count = vlan >= 0 ? 1 : 0,
        .vlan = {vlan >= 0 ? (uint16_t)vlan : 0, 0},
    };
    uint8_t payload[64];
    memset(payload, 0xab, sizeof(payload));
    int len = tp_net_build_udp(buf, cap, &spec, payload, payload_len);
    assert_true(len > 0);
    return (size_t)len;
}

static void test_params(void **state)
{
    (void)state;
    struct tp_classifier_params p = {.max_flows = 0};
    assert_int_equal(tp_classifier_memsize(&p), 0);
    char mem[64] __attribute__((aligned(64)));
    assert_int_equal(tp_classifier_init(mem, &p), -EINVAL);
}

static void test_exact_and_any_vlan(void **state)
{
    (void)state;
    struct tp_classifier *cls = make(8);
    uint32_t g = GROUP(224, 0, 31, 1);
    assert_int_equal(tp_classifier_add(cls, g, 14310, 100, 1), 0);
    assert_int_equal(tp_classifier_add(cls, g, 14310, TP_CLASSIFY_ANY_VLAN, 2), 0);
    assert_int_equal(tp_classifier_add(cls, g, 14310, 100, 3), -EEXIST);
    assert_int_equal(tp_classifier_add(cls, g, 14311, 4095, 3), -EINVAL);
    assert_int_equal(tp_classifier_add(cls, g, 14311, 1, TP_CLASSIFY_NONE), -EINVAL);

    struct tp_flow_key k = {.dst_ip = g, .dst_port = 14310, .vlan = 100};
    assert_int_equal(tp_classifier_lookup(cls, &k), 1); /* exact wins */
    k.vlan = 0;
    assert_int_equal(tp_classifier_lookup(cls, &k), 2); /* untagged: any-VLAN flow */
    k.vlan = 7;
    assert_int_equal(tp_classifier_lookup(cls, &k), 2);
    k.dst_port = 14311;
    assert_int_equal(tp_classifier_lookup(cls, &k), TP_CLASSIFY_NONE);
    k.dst_port = 14310;
    k.dst_ip = g + 1;
    assert_int_equal(tp_classifier_lookup(cls, &k), TP_CLASSIFY_NONE);
    free(cls);
}

/*
 * A lookup probes only for the kinds of flows the table holds: adds and removes (found or not)
 * keep that right, so each flow stays found with the other kind present, absent, or removed.
 */
static void test_kinds_follow_adds_and_removes(void **state)
{
    (void)state;
    struct tp_classifier *cls = make(8);
    uint32_t g = GROUP(233, 54, 12, 111);
    struct tp_flow_key tagged = {.dst_ip = g, .dst_port = 26477, .vlan = 100};
    struct tp_flow_key other = {.dst_ip = g, .dst_port = 26477, .vlan = 0};

    assert_int_equal(tp_classifier_lookup(cls, &tagged), TP_CLASSIFY_NONE); /* empty table */
    assert_int_equal(tp_classifier_add(cls, g, 26477, 100, 1), 0);          /* exact only */
    assert_int_equal(tp_classifier_lookup(cls, &tagged), 1);
    assert_int_equal(tp_classifier_lookup(cls, &other), TP_CLASSIFY_NONE);
    assert_int_equal(tp_classifier_remove(cls, g, 26477, 200), -ENOENT);
    assert_int_equal(tp_classifier_remove(cls, g, 26477, TP_CLASSIFY_ANY_VLAN), -ENOENT);
    assert_int_equal(tp_classifier_lookup(cls, &tagged), 1);

    assert_int_equal(tp_classifier_add(cls, g, 26477, TP_CLASSIFY_ANY_VLAN, 2), 0); /* both */
    assert_int_equal(tp_classifier_lookup(cls, &tagged), 1);
    assert_int_equal(tp_classifier_lookup(cls, &other), 2);

    assert_int_equal(tp_classifier_remove(cls, g, 26477, 100), 0); /* any-VLAN only */
    assert_int_equal(tp_classifier_lookup(cls, &tagged), 2);
    assert_int_equal(tp_classifier_lookup(cls, &other), 2);
    assert_int_equal(tp_classifier_remove(cls, g, 26477, 100), -ENOENT);
    assert_int_equal(tp_classifier_lookup(cls, &other), 2);

    assert_int_equal(tp_classifier_add(cls, g, 26477, 0, 3), 0); /* exact VLAN 0 beside it */
    assert_int_equal(tp_classifier_lookup(cls, &other), 3);
    assert_int_equal(tp_classifier_lookup(cls, &tagged), 2);

    assert_int_equal(tp_classifier_remove(cls, g, 26477, TP_CLASSIFY_ANY_VLAN), 0);
    assert_int_equal(tp_classifier_lookup(cls, &tagged), TP_CLASSIFY_NONE);
    assert_int_equal(tp_classifier_lookup(cls, &other), 3);
    assert_int_equal(tp_classifier_remove(cls, g, 26477, 0), 0); /* empty again */
    assert_int_equal(tp_classifier_lookup(cls, &other), TP_CLASSIFY_NONE);
    free(cls);
}

static void test_many_flows_and_capacity(void **state)
{
    (void)state;
    enum { N = 300 };
    struct tp_classifier *cls = make(N);
    /* Groups and ports that differ only in low bits: the hash must spread them. */
    for (uint32_t i = 0; i < N; i++)
        assert_int_equal(tp_classifier_add(cls, GROUP(224, 0, 31, 0) + (i & 15),
                                           (uint16_t)(14300 + i / 16), (uint16_t)(i % 3), i),
                         0);
    assert_int_equal(tp_classifier_add(cls, GROUP(233, 1, 1, 1), 1, 0, 999), -ENOSPC);
    for (uint32_t i = 0; i < N; i++) {
        struct tp_flow_key k = {.dst_ip = GROUP(224, 0, 31, 0) + (i & 15),
                                .dst_port = (uint16_t)(14300 + i / 16),
                                .vlan = (uint16_t)(i % 3)};
        assert_int_equal(tp_classifier_lookup(cls, &k), i);
        k.vlan = 3;
        assert_int_equal(tp_classifier_lookup(cls, &k), TP_CLASSIFY_NONE);
    }
    free(cls);
}

static void test_frames_counted_by_reason(void **state)
{
    (void)state;
    struct tp_classifier *cls = make(4);
    uint32_t g = GROUP(224, 0, 31, 1);
    assert_int_equal(tp_classifier_add(cls, g, 14310, 30, 5), 0);
    uint8_t buf[256];
    struct tp_udp_view view;

    size_t len = frame_to(buf, sizeof(buf), g, 14310, 30, 40);
    assert_int_equal(tp_classify_frame(cls, buf, len, &view), 5);
    assert_int_equal(view.payload_len, 40);
    assert_int_equal(view.payload[0], 0xab);
    assert_int_equal(view.src_port, 5000);

    /* Other VLAN, other port: no flow. */
    len = frame_to(buf, sizeof(buf), g, 14310, 31, 40);
    assert_int_equal(tp_classify_frame(cls, buf, len, &view), TP_CLASSIFY_NONE);
    len = frame_to(buf, sizeof(buf), g, 9, 30, 40);
    assert_int_equal(tp_classify_frame(cls, buf, len, &view), TP_CLASSIFY_NONE);

    /* Truncated at every length: malformed (or not UDP for the tiniest), never a match. */
    len = frame_to(buf, sizeof(buf), g, 14310, 30, 40);
    for (size_t cut = 0; cut < len - 40; cut++)
        assert_int_equal(tp_classify_frame(cls, buf, cut, &view), TP_CLASSIFY_NONE);

    /* ARP: not UDP. */
    memset(buf, 0, 60);
    buf[12] = 0x08;
    buf[13] = 0x06;
    assert_int_equal(tp_classify_frame(cls, buf, 60, &view), TP_CLASSIFY_NONE);

    const struct tp_classifier_counters *c = tp_classifier_counters(cls);
    size_t cuts = len - 40;
    assert_int_equal(c->matched + c->not_udp + c->malformed + c->no_flow + c->bad_checksum,
                     4 + cuts);
    assert_int_equal(c->matched, 1);
    assert_int_equal(c->no_flow, 2);
    assert_int_equal(c->malformed + c->not_udp, cuts + 1);
    assert_true(c->not_udp >= 1);
    assert_true(c->malformed >= cuts - 2);
    free(cls);
}

/* Fills in the UDP checksum of a frame built with tp_net_build_udp (which leaves it zero). */
static void set_udp_checksum(uint8_t *frame, size_t len)
{
    struct tp_udp_view v = {0};
    assert_int_equal(tp_net_parse_udp(frame, len, 0, &v), 0);
    uint8_t *udp = (uint8_t *)v.payload - 8;
    const uint8_t *ip = frame + v.ip_offset;
    uint32_t sum = 17 + (uint32_t)(v.payload_len + 8);
    for (int i = 12; i < 20; i += 2)
        sum += tp_load_be16(ip + i);
    for (size_t i = 0; i + 1 < (size_t)v.payload_len + 8; i += 2)
        sum += tp_load_be16(udp + i);
    if ((v.payload_len + 8) & 1)
        sum += (uint32_t)udp[v.payload_len + 7] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    uint16_t csum = (uint16_t)~sum;
    tp_store_be16(udp + 6, csum ? csum : 0xffff);
}

/* A classifier of one flow (line 1) and a frame of it with a correct checksum in buf. */
static struct tp_classifier *checksummed_frame(uint8_t *buf, size_t cap, size_t *len)
{
    struct tp_classifier *cls = make(4);
    uint32_t g = GROUP(224, 0, 31, 1);
    assert_int_equal(tp_classifier_add(cls, g, 14310, TP_CLASSIFY_ANY_VLAN, 1), 0);
    /* Odd payload length exercises the padded last byte. */
    *len = frame_to(buf, cap, g, 14310, -1, 41);
    set_udp_checksum(buf, *len);
    return cls;
}

static void test_udp_checksum(void **state)
{
    (void)state;
    uint32_t g = GROUP(224, 0, 31, 1);
    uint8_t buf[256];
    struct tp_udp_view view;
    size_t len;
    struct tp_classifier *cls = checksummed_frame(buf, sizeof(buf), &len);
    assert_int_equal(tp_classify_frame(cls, buf, len, &view), 1);
    /* One flipped payload bit: refused and counted. */
    buf[len - 5] ^= 0x10;
    assert_int_equal(tp_classify_frame(cls, buf, len, &view), TP_CLASSIFY_NONE);
    assert_int_equal(tp_classifier_counters(cls)->bad_checksum, 1);
    /* No checksum (zero): accepted as UDP allows. */
    len = frame_to(buf, sizeof(buf), g, 14310, -1, 40);
    assert_int_equal(tp_classify_frame(cls, buf, len, &view), 1);
    assert_int_equal(tp_classifier_counters(cls)->matched, 2);
    free(cls);
    /* Verification off: the corrupt frame passes (the framing checks are all that is left). */
    struct tp_classifier_params p = {.max_flows = 4, .verify_udp_checksum = false};
    cls = aligned_alloc(64, tp_classifier_memsize(&p));
    assert_int_equal(tp_classifier_init(cls, &p), 0);
    assert_int_equal(tp_classifier_add(cls, g, 14310, TP_CLASSIFY_ANY_VLAN, 1), 0);
    len = frame_to(buf, sizeof(buf), g, 14310, -1, 41);
    set_udp_checksum(buf, len);
    buf[len - 5] ^= 0x10;
    assert_int_equal(tp_classify_frame(cls, buf, len, &view), 1);
    free(cls);
}

/*
 * The NIC's verdict (mbuf offload flags): a checksum it verified is not summed again, even when
 * the bytes would not sum (the proof the software sum was skipped); without its word, or with
 * verification off, nothing changes; a corrupt frame it did not vouch for is still refused.
 */
static void test_udp_checksum_offload(void **state)
{
    (void)state;
    uint8_t buf[256];
    struct tp_udp_view view;
    size_t len;
    struct tp_classifier *cls = checksummed_frame(buf, sizeof(buf), &len);
    assert_int_equal(tp_classify_frame_offload(cls, buf, len, true, &view), 1);
    assert_int_equal(tp_classifier_counters(cls)->nic_checksum, 1);
    buf[len - 5] ^= 0x10;
    assert_int_equal(tp_classify_frame_offload(cls, buf, len, true, &view), 1);
    assert_int_equal(tp_classifier_counters(cls)->nic_checksum, 2);
    assert_int_equal(tp_classify_frame_offload(cls, buf, len, false, &view), TP_CLASSIFY_NONE);
    assert_int_equal(tp_classifier_counters(cls)->bad_checksum, 1);
    assert_int_equal(tp_classifier_counters(cls)->matched, 2);
    /* Frames of no flow are not counted as verified. */
    len = frame_to(buf, sizeof(buf), GROUP(224, 0, 31, 2), 14310, -1, 41);
    assert_int_equal(tp_classify_frame_offload(cls, buf, len, true, &view), TP_CLASSIFY_NONE);
    assert_int_equal(tp_classifier_counters(cls)->nic_checksum, 2);
    free(cls);
}

/*
 * What the per-frame path fills of the view: the key and payload the data lcore reads; where it
 * sums the checksum, the sources too (it parses the frame again for them).
 */
static void test_offload_view(void **state)
{
    (void)state;
    uint8_t buf[256];
    struct tp_udp_view view;
    size_t len;
    struct tp_classifier *cls = checksummed_frame(buf, sizeof(buf), &len);
    memset(&view, 0, sizeof(view));
    assert_int_equal(tp_classify_frame_offload(cls, buf, len, true, &view), 1);
    assert_int_equal(view.key.dst_ip, GROUP(224, 0, 31, 1));
    assert_int_equal(view.key.dst_port, 14310);
    assert_ptr_equal(view.payload + view.payload_len, buf + len);
    assert_int_equal(view.payload_len, 41);
    memset(&view, 0, sizeof(view));
    assert_int_equal(tp_classify_frame_offload(cls, buf, len, false, &view), 1);
    assert_int_equal(view.src_port, 5000);
    assert_int_equal(view.src_ip, GROUP(10, 0, 0, 1));
    assert_ptr_equal(view.payload + view.payload_len, buf + len);
    free(cls);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_exact_and_any_vlan),
        cmocka_unit_test(test_kinds_follow_adds_and_removes),
        cmocka_unit_test(test_many_flows_and_capacity),
        cmocka_unit_test(test_frames_counted_by_reason),
        cmocka_unit_test(test_udp_checksum),
        cmocka_unit_test(test_udp_checksum_offload),
        cmocka_unit_test(test_offload_view),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
