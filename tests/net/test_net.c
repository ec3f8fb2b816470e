/*
 * test_net.c - Ethernet / 802.1Q / IPv4 / UDP parsing and building, and the pcap writer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "net_build.h"
#include "net_parse.h"
#include "pcap_writer.h"

static const uint8_t payload[] = "MoldUDP64 payload bytes";

static struct tp_udp_frame_spec base_spec(void)
{
    struct tp_udp_frame_spec s = {
        .src_mac = {0xd4, 0xaf, 0xf7, 0xcb, 0x20, 0xd5},
        .src_ip = 0xcec87f8a, /* 206.200.127.138 */
        .dst_ip = 0xe9360c6f, /* 233.54.12.111 */
        .src_port = 49653,
        .dst_port = 26477,
        .ip_id = 7,
    };
    return s;
}

/* Parses with the exact captured length in a malloc'd copy so ASan sees any over-read. */
static int parse_exact(const uint8_t *frame, size_t len, unsigned flags, struct tp_udp_view *v)
{
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, frame, len);
    int rc = tp_net_parse_udp(copy, len, flags, v);
    if (rc == 0) /* payload pointed into the copy: rebase it onto the caller's frame */
        v->payload = frame + (v->payload - copy);
    free(copy);
    return rc;
}

static void check_view(const struct tp_udp_view *v, const uint8_t *frame, size_t headers,
                       uint16_t vlan, uint16_t outer, uint8_t count)
{
    assert_int_equal(v->key.dst_ip, 0xe9360c6f);
    assert_int_equal(v->key.dst_port, 26477);
    assert_int_equal(v->key.vlan, vlan);
    assert_int_equal(v->outer_vlan, outer);
    assert_int_equal(v->vlan_count, count);
    assert_int_equal(v->src_ip, 0xcec87f8a);
    assert_int_equal(v->src_port, 49653);
    assert_ptr_equal(v->payload, frame + headers);
    assert_int_equal(v->payload_len, sizeof(payload));
    assert_memory_equal(v->payload, payload, sizeof(payload));
}

static void test_untagged_single_and_double_tags(void **state)
{
    (void)state;
    uint8_t frame[256];
    struct tp_udp_view v;
    struct tp_udp_frame_spec s = base_spec();

    int n = tp_net_build_udp(frame, sizeof(frame), &s, payload, sizeof(payload));
    assert_int_equal(n, 14 + 20 + 8 + sizeof(payload));
    assert_int_equal(parse_exact(frame, (size_t)n, TP_NET_CHECK_IP_CSUM, &v), 0);
    check_view(&v, frame, 42, 0, 0, 0);
    /* multicast destination MAC derived from the group */
    static const uint8_t mac[6] = {0x01, 0x00, 0x5e, 0x36, 0x0c, 0x6f};
    assert_memory_equal(frame, mac, 6);

    s.vlan_count = 1;
    s.vlan[0] = 141;
    n = tp_net_build_udp(frame, sizeof(frame), &s, payload, sizeof(payload));
    assert_int_equal(frame[12], 0x81);
    assert_int_equal(parse_exact(frame, (size_t)n, TP_NET_CHECK_IP_CSUM, &v), 0);
    check_view(&v, frame, 46, 141, 141, 1);
    assert_int_equal(v.ip_offset, 18);

    s.vlan_count = 2;
    s.outer_tpid = TP_ETHERTYPE_QINQ;
    s.vlan[0] = 300;
    s.vlan[1] = 4095;
    n = tp_net_build_udp(frame, sizeof(frame), &s, payload, sizeof(payload));
    assert_int_equal(frame[12], 0x88);
    assert_int_equal(frame[13], 0xa8);
    assert_int_equal(parse_exact(frame, (size_t)n, TP_NET_CHECK_IP_CSUM, &v), 0);
    check_view(&v, frame, 50, 4095, 300, 2);

    s.outer_tpid = 0; /* two 0x8100 tags */
    n = tp_net_build_udp(frame, sizeof(frame), &s, payload, sizeof(payload));
    assert_int_equal(frame[12], 0x81);
    assert_int_equal(parse_exact(frame, (size_t)n, 0, &v), 0);
    check_view(&v, frame, 50, 4095, 300, 2);

    /* A third tag is refused: insert one more 0x8100 tag by hand. */
    uint8_t three[256];
    memcpy(three, frame, 12);
    tp_store_be16(three + 12, TP_ETHERTYPE_VLAN);
    tp_store_be16(three + 14, 5);
    memcpy(three + 16, frame + 12, (size_t)n - 12);
    assert_int_equal(parse_exact(three, (size_t)n + 4, 0, &v), TP_NET_EVLAN);

    s.vlan_count = 3;
    assert_int_equal(tp_net_build_udp(frame, sizeof(frame), &s, payload, sizeof(payload)), -EINVAL);
}

static void test_ethernet_padding_is_ignored(void **state)
{
    (void)state;
    uint8_t frame[64] = {0};
    struct tp_udp_frame_spec s = base_spec();
    uint8_t tiny[4] = {1, 2, 3, 4};
    int n = tp_net_build_udp(frame, sizeof(frame), &s, tiny, sizeof(tiny));
    assert_int_equal(n, 46);
    struct tp_udp_view v;
    assert_int_equal(parse_exact(frame, 60, 0, &v), 0); /* padded to the 60-byte minimum */
    assert_int_equal(v.payload_len, 4);
}

static void test_ip_options_are_skipped(void **state)
{
    (void)state;
    uint8_t frame[256], opt[256];
    struct tp_udp_frame_spec s = base_spec();
    int n = tp_net_build_udp(frame, sizeof(frame), &s, payload, sizeof(payload));
    /* Same frame with 8 bytes of IPv4 options (NOPs + end). */
    memcpy(opt, frame, 34);
    memset(opt + 34, 1, 7);
    opt[41] = 0;
    memcpy(opt + 42, frame + 34, (size_t)n - 34);
    opt[14] = 0x47;
    tp_store_be16(opt + 16, (uint16_t)(tp_load_be16(frame + 16) + 8));
    tp_store_be16(opt + 24, 0);
    tp_store_be16(opt + 24, tp_ipv4_checksum(opt + 14, 28));
    struct tp_udp_view v;
    assert_int_equal(parse_exact(opt, (size_t)n + 8, TP_NET_CHECK_IP_CSUM, &v), 0);
    check_view(&v, opt, 50, 0, 0, 0);
    /* IHL pointing past the captured bytes */
    opt[14] = 0x4f;
    assert_int_equal(parse_exact(opt, 14 + 40, 0, &v), TP_NET_ESHORT);
}

static void test_fragments_rejected(void **state)
{
    (void)state;
    uint8_t frame[256];
    struct tp_udp_frame_spec s = base_spec();
    int n = tp_net_build_udp(frame, sizeof(frame), &s, payload, sizeof(payload));
    struct tp_udp_view v;
    tp_store_be16(frame + 20, 0x2000); /* more fragments */
    assert_int_equal(parse_exact(frame, (size_t)n, 0, &v), TP_NET_EFRAG);
    tp_store_be16(frame + 20, 0x0001); /* offset 8 bytes, last fragment */
    assert_int_equal(parse_exact(frame, (size_t)n, 0, &v), TP_NET_EFRAG);
    tp_store_be16(frame + 20, 0x4000); /* DF only: fine */
    assert_int_equal(parse_exact(frame, (size_t)n, 0, &v), 0);
}

/* Every prefix of valid tagged frames is refused, and never read beyond (ASan). */
static void test_every_truncation_refused(void **state)
{
    (void)state;
    uint8_t frame[256];
    struct tp_udp_frame_spec s = base_spec();
    for (uint8_t tags = 0; tags <= 2; tags++) {
        s.vlan_count = tags;
        s.vlan[0] = 10;
        s.vlan[1] = 20;
        int n = tp_net_build_udp(frame, sizeof(frame), &s, payload, sizeof(payload));
        struct tp_udp_view v;
        for (size_t len = 0; len < (size_t)n; len++)
            assert_true(parse_exact(frame, len, 0, &v) < 0);
        assert_int_equal(parse_exact(frame, (size_t)n, 0, &v), 0);
    }
}

/* The view fields tp_net_parse_udp fills, compared one by one (padding differs). */
static void assert_same_view(const struct tp_udp_view *a, const struct tp_udp_view *b)
{
    assert_true(tp_flow_key_equal(&a->key, &b->key));
    assert_int_equal(a->src_ip, b->src_ip);
    assert_int_equal(a->src_port, b->src_port);
    assert_int_equal(a->outer_vlan, b->outer_vlan);
    assert_int_equal(a->vlan_count, b->vlan_count);
    assert_int_equal(a->ip_offset, b->ip_offset);
    assert_ptr_equal(a->payload, b->payload);
    assert_int_equal(a->payload_len, b->payload_len);
}

/*
 * The short path for the common frame shape agrees with the general parser on every frame near
 * that shape: each length, each header byte set to values that make or break it (types, TPIDs,
 * version and header length, fragment bits, protocol, both length fields), each tag count.
 */
static void test_common_shape_path_agrees_with_general(void **state)
{
    (void)state;
    static const uint8_t values[] = {0x00, 0x01, 0x05, 0x08, 0x11, 0x1c, 0x20, 0x3f,
                                     0x40, 0x45, 0x46, 0x81, 0x88, 0x91, 0xa8, 0xff};
    uint8_t frame[256];
    unsigned agreed = 0, accepted = 0;
    struct tp_udp_frame_spec s = base_spec();
    for (uint8_t tags = 0; tags <= 2; tags++) {
        s.vlan_count = tags;
        s.vlan[0] = 10;
        s.vlan[1] = 4095;
        int n = tp_net_build_udp(frame, sizeof(frame), &s, payload, sizeof(payload));
        assert_true(n > 0);
        size_t headers = TP_ETHER_HDR_LEN + tags * TP_VLAN_TAG_LEN + TP_IPV4_MIN_HDR;
        for (size_t at = 12; at < headers + TP_UDP_HDR_LEN; at++) {
            for (size_t k = 0; k <= sizeof(values); k++) {
                uint8_t saved = frame[at];
                if (k < sizeof(values))
                    frame[at] = values[k];
                for (size_t len = (size_t)n - 2; len <= (size_t)n + 2; len++) {
                    struct tp_udp_view fast, general, key_only;
                    int rc = tp_net_parse_udp(frame, len, 0, &fast);
                    assert_int_equal(rc, tp_net_parse_udp_any(frame, len, 0, &general));
                    /* TP_NET_KEY_ONLY: the same outcome, key and payload. */
                    assert_int_equal(rc, tp_net_parse_udp(frame, len, TP_NET_KEY_ONLY, &key_only));
                    if (rc == 0) {
                        assert_same_view(&fast, &general);
                        assert_true(tp_flow_key_equal(&key_only.key, &general.key));
                        assert_ptr_equal(key_only.payload, general.payload);
                        assert_int_equal(key_only.payload_len, general.payload_len);
                        accepted++;
                    }
                    agreed++;
                }
                frame[at] = saved;
            }
        }
    }
    assert_true(agreed > 5000);
    assert_true(accepted > 100);
}

static void test_bad_lengths_and_types(void **state)
{
    (void)state;
    uint8_t frame[256];
    struct tp_udp_frame_spec s = base_spec();
    int n = tp_net_build_udp(frame, sizeof(frame), &s, payload, sizeof(payload));
    struct tp_udp_view v;
    uint8_t work[256];
#define MUTATE(stmt, expect)                                                                       \
    do {                                                                                           \
        memcpy(work, frame, (size_t)n);                                                            \
        stmt;                                                                                      \
        assert_int_equal(parse_exact(work, (size_t)n, 0, &v), expect);                             \
    } while (0)
    MUTATE(tp_store_be16(work + 16, (uint16_t)(n - 14 + 1)), TP_NET_EIPLEN); /* total > frame */
    MUTATE(tp_store_be16(work + 16, 19), TP_NET_EIPLEN);                     /* total < IHL */
    MUTATE(tp_store_be16(work + 16, 27), TP_NET_EUDPLEN); /* no room for UDP header */
    MUTATE(tp_store_be16(work + 38, 7), TP_NET_EUDPLEN);  /* UDP length < 8 */
    MUTATE(tp_store_be16(work + 38, (uint16_t)(n - 34 + 1)), TP_NET_EUDPLEN);
    MUTATE(work[14] = 0x44, TP_NET_EIPHDR); /* IHL 4 */
    MUTATE(work[14] = 0x65, TP_NET_EIPHDR); /* version 6 */
    MUTATE(work[23] = 6, TP_NET_ENOTUDP);   /* TCP */
    MUTATE(tp_store_be16(work + 12, 0x86dd), TP_NET_ENOTIPV4);
    MUTATE(tp_store_be16(work + 12, 0x0806), TP_NET_ENOTIPV4);
    /* a shorter UDP length inside the IP payload: payload shrinks accordingly */
    MUTATE(tp_store_be16(work + 38, 8 + 3), 0);
    assert_int_equal(v.payload_len, 3);

    /* checksum: only checked on request */
    memcpy(work, frame, (size_t)n);
    work[22] ^= 1; /* TTL changes, checksum now wrong */
    assert_int_equal(parse_exact(work, (size_t)n, 0, &v), 0);
    assert_int_equal(parse_exact(work, (size_t)n, TP_NET_CHECK_IP_CSUM, &v), TP_NET_ECSUM);
    assert_string_equal(tp_net_strerror(TP_NET_ECSUM), "bad IPv4 header checksum");
    assert_string_equal(tp_net_strerror(TP_NET_EFRAG), "IPv4 fragment");
}

static void test_build_limits(void **state)
{
    (void)state;
    uint8_t frame[64];
    struct tp_udp_frame_spec s = base_spec();
    assert_int_equal(tp_net_udp_headers_len(&s), 42);
    assert_int_equal(tp_net_build_udp(frame, 42 + 2, &s, payload, 3), -ENOSPC);
    assert_int_equal(tp_net_build_udp(frame, sizeof(frame), &s, payload, 70000), -EINVAL);
    /* unicast destination keeps the given MAC */
    s.dst_ip = 0x0a000001;
    memcpy(s.dst_mac, "\x02\x00\x00\x00\x00\x01", 6);
    assert_int_equal(tp_net_build_udp(frame, sizeof(frame), &s, payload, 3), 45);
    assert_memory_equal(frame, "\x02\x00\x00\x00\x00\x01", 6);
}

/* RFC 768 receiver check, written out independently: pseudo-header plus segment sums to 0xffff. */
static int udp_segment_sums_to_ones(const uint8_t *ip, const uint8_t *udp, size_t udp_len)
{
    uint32_t sum = TP_IPPROTO_UDP + (uint32_t)udp_len;
    for (size_t i = 12; i < 20; i += 2)
        sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
    for (size_t i = 0; i < udp_len; i += 2)
        sum += (uint32_t)(udp[i] << 8 | (i + 1 < udp_len ? udp[i + 1] : 0));
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return sum == 0xffff;
}

static void test_udp_checksum(void **state)
{
    (void)state;
    uint8_t frame[128];
    struct tp_udp_frame_spec s = base_spec();
    s.vlan_count = 1;
    s.vlan[0] = 5;
    /* even and odd payload lengths */
    for (size_t len = sizeof(payload); len >= sizeof(payload) - 1; len--) {
        int n = tp_net_build_udp(frame, sizeof(frame), &s, payload, len);
        assert_int_equal(n, 46 + (int)len);
        const uint8_t *ip = frame + 18, *udp = frame + 38;
        assert_int_equal(tp_load_be16(udp + 6), 0); /* the builder alone still writes 0 */
        tp_net_write_udp_checksum(frame, &s, len);
        assert_int_not_equal(tp_load_be16(udp + 6), 0);
        assert_true(udp_segment_sums_to_ones(ip, udp, 8 + len));
        /* the stored field does not feed its own computation */
        assert_int_equal(tp_udp_checksum(s.src_ip, s.dst_ip, udp, 8 + len), tp_load_be16(udp + 6));
        struct tp_udp_view v;
        assert_int_equal(parse_exact(frame, (size_t)n, TP_NET_CHECK_IP_CSUM, &v), 0);
        assert_true(tp_udp_checksum_ok(&v));
        frame[46 + len / 2] ^= 0x10; /* one flipped payload bit is detected */
        assert_false(udp_segment_sums_to_ones(ip, udp, 8 + len));
        assert_false(tp_udp_checksum_ok(&v));
        tp_store_be16(frame + 38 + 6, 0); /* no checksum: nothing to check */
        assert_true(tp_udp_checksum_ok(&v));
        assert_int_equal(parse_exact(frame, (size_t)n, TP_NET_CHECK_IP_CSUM, &v), 0);
    }
    /* hand-worked: 0xcec8+0x7f8a+0xe936+0x0c6f+17+11 + 0xc1f5+0x676d+11 + 0x4d6f+0x6c00 folds to
     * 0x26f3, whose complement is 0xd90c (the 0xaaaa in the checksum field is skipped) */
    assert_int_equal(tp_udp_checksum(0xcec87f8a, 0xe9360c6f,
                                     (const uint8_t *)"\xc1\xf5\x67\x6d\x00\x0b\xaa\xaaMol", 11),
                     0xd90c);
    /* a sum of 0xffff would give checksum 0, which means "none": it is sent as 0xffff */
    uint8_t zero_sum[8] = {0xff, 0xde, 0, 0, 0, 8, 0, 0}; /* 17 + 8 + 0xffde + 8 = 0xffff */
    assert_int_equal(tp_udp_checksum(0, 0, zero_sum, 8), 0xffff);
}

/* The UDP checksum the plain way: 16-bit words one at a time, folded after every addition. */
static uint16_t reference_udp_checksum(uint32_t src, uint32_t dst, const uint8_t *udp, size_t len)
{
    uint32_t words[] = {src >> 16, src & 0xffff, dst >> 16, dst & 0xffff, 17, (uint32_t)len};
    uint32_t sum = 0;
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
        sum += words[i];
    for (size_t i = 0; i < len; i += 2) {
        if (i == 6)
            continue; /* the checksum field itself */
        sum += (uint32_t)udp[i] << 8 | (i + 1 < len ? udp[i + 1] : 0);
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum = (sum & 0xffff) + (sum >> 16);
    uint16_t csum = (uint16_t)~sum;
    return csum == 0 ? 0xffff : csum;
}

/*
 * The word-at-a-time sum against the reference: every length from 0 to 600 bytes (odd ones, and
 * tails of 1 to 15 bytes after the 16-byte blocks and the 32-bit words), at every alignment of a
 * 16-byte load, with random bytes, with all ones (a carry out of every word: a fold done once or
 * a carry dropped shows) and with bytes that make the 32-bit halves carry into each other; and
 * the largest datagram IPv4 carries, all ones, where wide accumulators come closest to
 * overflowing.
 */
static void test_udp_checksum_matches_reference(void **state)
{
    (void)state;
    static uint8_t buf[640];
    uint32_t seed = 12345;
    for (int pattern = 0; pattern < 3; pattern++) {
        for (size_t i = 0; i < sizeof(buf); i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = pattern == 0   ? (uint8_t)(seed >> 16)
                     : pattern == 1 ? 0xff
                                    : (i & 1 ? 0x01 : 0xff);
        }
        for (size_t align = 0; align < 16; align++)
            for (size_t len = 0; len <= 600; len++)
                assert_int_equal(tp_udp_checksum(0xfffffffe, 0xe9360c6f, buf + align, len),
                                 reference_udp_checksum(0xfffffffe, 0xe9360c6f, buf + align, len));
    }
    /* all ones, hand-worked: pseudo-header 0xffff+0xffff+0xffff+0xffff+17+12 folds to 0x1d;
     * ports, length and the 4 payload bytes are five 0xffff words, which leave it 0x1d: the
     * checksum is ~0x1d = 0xffe2 */
    uint8_t ones[12];
    memset(ones, 0xff, sizeof(ones));
    assert_int_equal(tp_udp_checksum(0xffffffff, 0xffffffff, ones, sizeof(ones)), 0xffe2);
    assert_int_equal(reference_udp_checksum(0xffffffff, 0xffffffff, ones, sizeof(ones)), 0xffe2);
    static uint8_t largest[65535 - 20];
    memset(largest, 0xff, sizeof(largest));
    for (size_t len = sizeof(largest) - 1; len <= sizeof(largest); len++)
        assert_int_equal(tp_udp_checksum(0xffffffff, 0xffffffff, largest, len),
                         reference_udp_checksum(0xffffffff, 0xffffffff, largest, len));
}

static void test_pcap_writer_reads_back_with_libpcap(void **state)
{
    (void)state;
    char path[] = "/tmp/tp_test_net_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    uint8_t frame[256];
    struct tp_udp_frame_spec s = base_spec();
    int n = tp_net_build_udp(frame, sizeof(frame), &s, payload, sizeof(payload));
    struct tp_pcap_writer w;
    assert_int_equal(tp_pcap_writer_open(&w, path), 0);
    assert_int_equal(tp_pcap_writer_write(&w, 1692711000000239038ull, frame, (size_t)n), 0);
    assert_int_equal(tp_pcap_writer_write(&w, 1692711000000239039ull, frame, 60), 0);
    assert_int_equal(tp_pcap_writer_close(&w), 0);

    char err[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
    assert_non_null(p);
    assert_int_equal(pcap_datalink(p), DLT_EN10MB);
    struct pcap_pkthdr *h;
    const u_char *data;
    assert_int_equal(pcap_next_ex(p, &h, &data), 1);
    assert_int_equal(h->caplen, n);
    assert_int_equal(h->ts.tv_sec, 1692711000);
    assert_int_equal(h->ts.tv_usec, 239038); /* nanoseconds with NANO precision */
    assert_memory_equal(data, frame, (size_t)n);
    assert_int_equal(pcap_next_ex(p, &h, &data), 1);
    assert_int_equal(h->caplen, 60);
    assert_int_equal(h->ts.tv_usec, 239039);
    assert_int_equal(pcap_next_ex(p, &h, &data), PCAP_ERROR_BREAK);
    pcap_close(p);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_untagged_single_and_double_tags),
        cmocka_unit_test(test_ethernet_padding_is_ignored),
        cmocka_unit_test(test_ip_options_are_skipped),
        cmocka_unit_test(test_fragments_rejected),
        cmocka_unit_test(test_every_truncation_refused),
        cmocka_unit_test(test_common_shape_path_agrees_with_general),
        cmocka_unit_test(test_bad_lengths_and_types),
        cmocka_unit_test(test_build_limits),
        cmocka_unit_test(test_udp_checksum),
        cmocka_unit_test(test_udp_checksum_matches_reference),
        cmocka_unit_test(test_pcap_writer_reads_back_with_libpcap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
