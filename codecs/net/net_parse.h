/*
 * net_parse.h - Ethernet / 802.1Q / IPv4 / UDP parsing for the receive path.
 *
 * Promise: tp_net_parse_udp reads nothing outside [frame, frame + len) and accepts a frame only
 * when every length agrees: the headers fit the captured bytes, the IPv4 header length is at
 * least 20 and inside the frame (options are skipped), the IPv4 total length covers the header
 * and fits the frame (Ethernet padding after it is ignored), the UDP length is at least 8 and
 * inside the IPv4 payload. Fragments (MF set or offset != 0) are rejected: market data never
 * fragments, and a first fragment's UDP length would lie about the bytes present.
 * Up to two VLAN tags (TPID 0x8100, 0x88a8 or 0x9100) are accepted, in any combination.
 * The IPv4 header checksum is checked only with TP_NET_CHECK_IP_CSUM (some captures zero it).
 *
 * The flow key identifies a feed line: destination IPv4 address and UDP port, and the VLAN id of
 * the innermost tag (0 when untagged; a priority tag has id 0 too, which means the same thing).
 * Addresses and ports are in host byte order. Header only; no allocation.
 */
#ifndef TP_NET_PARSE_H
#define TP_NET_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "net_bytes.h"

#define TP_ETHER_HDR_LEN   14
#define TP_VLAN_TAG_LEN    4
#define TP_IPV4_MIN_HDR    20
#define TP_UDP_HDR_LEN     8
#define TP_ETHERTYPE_IPV4  0x0800
#define TP_ETHERTYPE_VLAN  0x8100
#define TP_ETHERTYPE_QINQ  0x88a8
#define TP_ETHERTYPE_QINQ1 0x9100 /* pre-standard QinQ, still seen on switches */
#define TP_IPPROTO_UDP     17
#define TP_NET_MAX_VLANS   2

/* Flags for tp_net_parse_udp. */
#define TP_NET_CHECK_IP_CSUM 1u
/* Only the flow key, payload and payload_len need be filled (the rest of the view may be left as
 * it was): the per-frame path of the classifier, which reads nothing else. */
#define TP_NET_KEY_ONLY 2u

/* Why a frame was refused (all negative). */
enum tp_net_error {
    TP_NET_ESHORT = -1,   /* captured bytes end inside a header */
    TP_NET_ENOTIPV4 = -2, /* not IPv4 (ARP, IPv6, LLDP, ...) */
    TP_NET_EVLAN = -3,    /* more than two VLAN tags */
    TP_NET_EIPHDR = -4,   /* IP version not 4, or header length < 20 */
    TP_NET_EIPLEN = -5,   /* IPv4 total length shorter than its header or beyond the frame */
    TP_NET_EFRAG = -6,    /* an IPv4 fragment */
    TP_NET_ENOTUDP = -7,  /* IPv4 but not UDP */
    TP_NET_EUDPLEN = -8,  /* UDP length < 8 or beyond the IPv4 payload */
    TP_NET_ECSUM = -9,    /* IPv4 header checksum wrong (only with TP_NET_CHECK_IP_CSUM) */
};

struct tp_flow_key {
    uint32_t dst_ip;   /* host order */
    uint16_t dst_port; /* host order */
    uint16_t vlan;     /* innermost VLAN id, 0 if untagged */
};

struct tp_udp_view {
    struct tp_flow_key key;
    uint32_t src_ip;
    uint16_t src_port;
    uint16_t outer_vlan;    /* outermost VLAN id (== key.vlan with one tag, 0 untagged) */
    uint8_t vlan_count;     /* 0, 1 or 2 */
    uint16_t ip_offset;     /* where the IPv4 header starts (set for TP_NET_ENOTUDP too) */
    const uint8_t *payload; /* UDP payload, inside the frame */
    uint16_t payload_len;
};

static inline int tp_flow_key_equal(const struct tp_flow_key *a, const struct tp_flow_key *b)
{
    return a->dst_ip == b->dst_ip && a->dst_port == b->dst_port && a->vlan == b->vlan;
}

/* Ones-complement sum of an IPv4 header; a correct header (checksum included) sums to 0. */
static inline uint16_t tp_ipv4_checksum(const uint8_t *hdr, size_t len)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += tp_load_be16(hdr + i);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

static inline int tp_net_is_vlan_tpid(uint16_t type)
{
    return type == TP_ETHERTYPE_VLAN || type == TP_ETHERTYPE_QINQ || type == TP_ETHERTYPE_QINQ1;
}

/* tp_net_parse_udp for any frame shape; the common shape has a shorter path below. Kept out of
 * line so that the short path's callers stay small. */
__attribute__((noinline, unused)) static int
tp_net_parse_udp_any(const uint8_t *frame, size_t len, unsigned flags, struct tp_udp_view *out)
{
    if (len < TP_ETHER_HDR_LEN)
        return TP_NET_ESHORT;
    size_t off = 12;
    uint16_t type = tp_load_be16(frame + off);
    out->vlan_count = 0;
    out->outer_vlan = 0;
    out->key.vlan = 0;
    while (tp_net_is_vlan_tpid(type)) {
        if (out->vlan_count == TP_NET_MAX_VLANS)
            return TP_NET_EVLAN;
        if (len < off + 2 + TP_VLAN_TAG_LEN)
            return TP_NET_ESHORT;
        uint16_t vid = tp_load_be16(frame + off + 2) & 0x0fff;
        if (out->vlan_count == 0)
            out->outer_vlan = vid;
        out->key.vlan = vid;
        out->vlan_count++;
        off += TP_VLAN_TAG_LEN;
        type = tp_load_be16(frame + off);
    }
    if (type != TP_ETHERTYPE_IPV4)
        return TP_NET_ENOTIPV4;
    off += 2;

    const uint8_t *ip = frame + off;
    size_t left = len - off;
    if (left < TP_IPV4_MIN_HDR)
        return TP_NET_ESHORT;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    if ((ip[0] >> 4) != 4 || ihl < TP_IPV4_MIN_HDR)
        return TP_NET_EIPHDR;
    if (ihl > left)
        return TP_NET_ESHORT;
    size_t total = tp_load_be16(ip + 2);
    if (total < ihl || total > left)
        return TP_NET_EIPLEN;
    if (tp_load_be16(ip + 6) & 0x3fff) /* MF flag or fragment offset */
        return TP_NET_EFRAG;
    out->ip_offset = (uint16_t)off; /* also for TP_NET_ENOTUDP: the protocol is at ip_offset + 9 */
    if (ip[9] != TP_IPPROTO_UDP)
        return TP_NET_ENOTUDP;
    if ((flags & TP_NET_CHECK_IP_CSUM) && tp_ipv4_checksum(ip, ihl) != 0)
        return TP_NET_ECSUM;

    const uint8_t *udp = ip + ihl;
    size_t ip_payload = total - ihl;
    if (ip_payload < TP_UDP_HDR_LEN)
        return TP_NET_EUDPLEN;
    size_t udp_len = tp_load_be16(udp + 4);
    if (udp_len < TP_UDP_HDR_LEN || udp_len > ip_payload)
        return TP_NET_EUDPLEN;

    out->src_ip = tp_load_be32(ip + 12);
    out->key.dst_ip = tp_load_be32(ip + 16);
    out->src_port = tp_load_be16(udp);
    out->key.dst_port = tp_load_be16(udp + 2);
    out->payload = udp + TP_UDP_HDR_LEN;
    out->payload_len = (uint16_t)(udp_len - TP_UDP_HDR_LEN);
    return 0;
}

/*
 * Parses one Ethernet frame of len captured bytes; 0 and *out filled, or enum tp_net_error.
 * Market data frames are almost all untagged or once-tagged (802.1Q) IPv4 without options,
 * unfragmented UDP: those are accepted here with the checks that shape needs (the same
 * outcome and view as tp_net_parse_udp_any); any other frame, or one that fails a check,
 * goes through tp_net_parse_udp_any, which accepts or refuses it with its reason.
 */
static inline int tp_net_parse_udp(const uint8_t *frame, size_t len, unsigned flags,
                                   struct tp_udp_view *out)
{
    /* Both headers fit whatever the shape: 14 + 4 (one tag) + 20 + 8. */
    if (len >= TP_ETHER_HDR_LEN + TP_VLAN_TAG_LEN + TP_IPV4_MIN_HDR + TP_UDP_HDR_LEN &&
        !(flags & TP_NET_CHECK_IP_CSUM)) {
        uint16_t type = tp_load_be16(frame + 12);
        uint16_t vid = 0;
        size_t off = TP_ETHER_HDR_LEN;
        if (type == TP_ETHERTYPE_VLAN) {
            vid = tp_load_be16(frame + 14) & 0x0fff;
            type = tp_load_be16(frame + 16);
            off += TP_VLAN_TAG_LEN;
        }
        const uint8_t *ip = frame + off;
        const uint8_t *udp = ip + TP_IPV4_MIN_HDR;
        size_t total = tp_load_be16(ip + 2);
        size_t udp_len = tp_load_be16(udp + 4);
        if (type == TP_ETHERTYPE_IPV4 && ip[0] == 0x45 && ip[9] == TP_IPPROTO_UDP &&
            (tp_load_be16(ip + 6) & 0x3fff) == 0 && total <= len - off &&
            total >= TP_IPV4_MIN_HDR + TP_UDP_HDR_LEN && udp_len >= TP_UDP_HDR_LEN &&
            udp_len <= total - TP_IPV4_MIN_HDR) {
            out->key.dst_ip = tp_load_be32(ip + 16);
            out->key.dst_port = tp_load_be16(udp + 2);
            out->key.vlan = vid;
            if (!(flags & TP_NET_KEY_ONLY)) {
                out->src_ip = tp_load_be32(ip + 12);
                out->src_port = tp_load_be16(udp);
                out->outer_vlan = vid;
                out->vlan_count = off != TP_ETHER_HDR_LEN;
                out->ip_offset = (uint16_t)off;
            }
            out->payload = udp + TP_UDP_HDR_LEN;
            out->payload_len = (uint16_t)(udp_len - TP_UDP_HDR_LEN);
            return 0;
        }
    }
    return tp_net_parse_udp_any(frame, len, flags, out);
}

/* A short English reason for an enum tp_net_error (tools and logs). */
const char *tp_net_strerror(int err);

#endif /* TP_NET_PARSE_H */
