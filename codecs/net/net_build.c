/*
 * net_build.c - writing Ethernet / 802.1Q / IPv4 / UDP frames.
 */
#include "net_build.h"

#include <errno.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define MAX_UDP_PAYLOAD (65535 - TP_IPV4_MIN_HDR - TP_UDP_HDR_LEN)

size_t tp_net_udp_headers_len(const struct tp_udp_frame_spec *spec)
{
    return TP_ETHER_HDR_LEN + (size_t)spec->vlan_count * TP_VLAN_TAG_LEN + TP_IPV4_MIN_HDR +
           TP_UDP_HDR_LEN;
}

void tp_net_multicast_mac(uint32_t group, uint8_t mac[6])
{
    mac[0] = 0x01;
    mac[1] = 0x00;
    mac[2] = 0x5e;
    mac[3] = (uint8_t)((group >> 16) & 0x7f);
    mac[4] = (uint8_t)(group >> 8);
    mac[5] = (uint8_t)group;
}

static int is_zero_mac(const uint8_t mac[6])
{
    static const uint8_t zero[6];
    return memcmp(mac, zero, sizeof(zero)) == 0;
}

int tp_net_write_udp_headers(uint8_t *frame, size_t cap, const struct tp_udp_frame_spec *spec,
                             size_t payload_len)
{
    if (spec->vlan_count > TP_NET_MAX_VLANS || payload_len > MAX_UDP_PAYLOAD)
        return -EINVAL;
    size_t headers = tp_net_udp_headers_len(spec);
    if (cap < headers || cap - headers < payload_len)
        return -ENOSPC;

    uint8_t *p = frame;
    if (is_zero_mac(spec->dst_mac) && (spec->dst_ip >> 28) == 0xe)
        tp_net_multicast_mac(spec->dst_ip, p);
    else
        memcpy(p, spec->dst_mac, 6);
    memcpy(p + 6, spec->src_mac, 6);
    p += 12;
    for (unsigned i = 0; i < spec->vlan_count; i++) {
        uint16_t tpid = TP_ETHERTYPE_VLAN;
        if (i == 0 && spec->vlan_count == 2 && spec->outer_tpid != 0)
            tpid = spec->outer_tpid;
        tp_store_be16(p, tpid);
        tp_store_be16(p + 2, spec->vlan[i] & 0x0fff);
        p += TP_VLAN_TAG_LEN;
    }
    tp_store_be16(p, TP_ETHERTYPE_IPV4);
    p += 2;

    uint8_t *ip = p;
    ip[0] = 0x45; /* version 4, 20-byte header */
    ip[1] = 0;
    tp_store_be16(ip + 2, (uint16_t)(TP_IPV4_MIN_HDR + TP_UDP_HDR_LEN + payload_len));
    tp_store_be16(ip + 4, spec->ip_id);
    tp_store_be16(ip + 6, 0x4000); /* don't fragment */
    ip[8] = spec->ttl ? spec->ttl : 64;
    ip[9] = TP_IPPROTO_UDP;
    tp_store_be16(ip + 10, 0);
    tp_store_be32(ip + 12, spec->src_ip);
    tp_store_be32(ip + 16, spec->dst_ip);
    tp_store_be16(ip + 10, tp_ipv4_checksum(ip, TP_IPV4_MIN_HDR));

    uint8_t *udp = ip + TP_IPV4_MIN_HDR;
    tp_store_be16(udp, spec->src_port);
    tp_store_be16(udp + 2, spec->dst_port);
    tp_store_be16(udp + 4, (uint16_t)(TP_UDP_HDR_LEN + payload_len));
    tp_store_be16(udp + 6, 0);
    return (int)(headers + payload_len);
}

int tp_net_build_udp(uint8_t *frame, size_t cap, const struct tp_udp_frame_spec *spec,
                     const uint8_t *payload, size_t payload_len)
{
    int n = tp_net_write_udp_headers(frame, cap, spec, payload_len);
    if (n < 0)
        return n;
    memmove(frame + tp_net_udp_headers_len(spec), payload, payload_len);
    return n;
}

/*
 * Ones-complement sum of len bytes as big-endian 16-bit words (an odd last byte padded with
 * zero), folded to 16 bits. The bytes are summed as native words into wide accumulators (carries
 * pile up in the high bits and are folded once at the end), then brought to big-endian order: a
 * ones-complement sum of byte-swapped words is the byte-swapped sum (RFC 1071). With SSE2 (every
 * x86-64) 16 bytes at a time: eight 16-bit words widened into four 32-bit lanes, which cannot
 * overflow below 2^32 / (2 * 65535) = 32768 blocks (a UDP datagram has at most 4096). The rest,
 * and other machines, as native 32-bit words (2^16 = 1 modulo 0xffff, so a 32-bit word adds the
 * same as its two halves). Loads go through memcpy or unaligned loads: the data may sit at any
 * address.
 */
static uint16_t sum_be16(const uint8_t *p, size_t len)
{
    uint64_t sum = 0;
#ifdef __SSE2__
    if (len >= 16) {
        __m128i acc = _mm_setzero_si128(), zero = _mm_setzero_si128();
        for (; len >= 16; p += 16, len -= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
            acc = _mm_add_epi32(acc, _mm_unpacklo_epi16(v, zero));
            acc = _mm_add_epi32(acc, _mm_unpackhi_epi16(v, zero));
        }
        uint32_t lanes[4];
        _mm_storeu_si128((__m128i *)(void *)lanes, acc);
        sum = (uint64_t)lanes[0] + lanes[1] + lanes[2] + lanes[3];
    }
#endif
    uint32_t w32;
    uint16_t w16 = 0;
    for (; len >= 4; p += 4, len -= 4) {
        memcpy(&w32, p, sizeof(w32));
        sum += w32;
    }
    if (len >= 2) {
        memcpy(&w16, p, sizeof(w16));
        sum += w16;
        p += 2;
        len -= 2;
    }
    if (len) {
        uint8_t last[2] = {p[0], 0};
        memcpy(&w16, last, sizeof(w16));
        sum += w16;
    }
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap16((uint16_t)sum);
#else
    return (uint16_t)sum;
#endif
}

uint16_t tp_udp_checksum(uint32_t src_ip, uint32_t dst_ip, const uint8_t *udp, size_t udp_len)
{
    uint64_t sum = (src_ip >> 16) + (src_ip & 0xffff) + (dst_ip >> 16) + (dst_ip & 0xffff) +
                   TP_IPPROTO_UDP + (uint64_t)udp_len;
    sum += sum_be16(udp, udp_len < 6 ? udp_len : 6); /* ports and length */
    if (udp_len > TP_UDP_HDR_LEN)
        sum += sum_be16(udp + TP_UDP_HDR_LEN, udp_len - TP_UDP_HDR_LEN);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    uint16_t csum = (uint16_t)~sum;
    return csum == 0 ? 0xffff : csum;
}

bool tp_udp_checksum_ok(const struct tp_udp_view *v)
{
    const uint8_t *udp = v->payload - TP_UDP_HDR_LEN;
    uint16_t stored = tp_load_be16(udp + 6);

    return stored == 0 || stored == tp_udp_checksum(v->src_ip, v->key.dst_ip, udp,
                                                    TP_UDP_HDR_LEN + (size_t)v->payload_len);
}

void tp_net_write_udp_checksum(uint8_t *frame, const struct tp_udp_frame_spec *spec,
                               size_t payload_len)
{
    uint8_t *udp = frame + tp_net_udp_headers_len(spec) - TP_UDP_HDR_LEN;
    size_t udp_len = TP_UDP_HDR_LEN + payload_len;
    tp_store_be16(udp + 6, tp_udp_checksum(spec->src_ip, spec->dst_ip, udp, udp_len));
}
