/*
 * net_build.h - writing Ethernet / 802.1Q / IPv4 / UDP frames (simulator, tests, pcap tools).
 *
 * Promise: tp_net_build_udp writes a frame that tp_net_parse_udp accepts with the same flow key,
 * source and payload, with a correct IPv4 header checksum (UDP checksum 0, "not computed", which
 * UDP over IPv4 allows). tp_net_write_udp_checksum then fills in a real UDP checksum for callers
 * that want one. Nothing is written past cap.
 */
#ifndef TP_NET_BUILD_H
#define TP_NET_BUILD_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_parse.h"

struct tp_udp_frame_spec {
    uint8_t dst_mac[6]; /* all zero: derived from dst_ip when it is multicast */
    uint8_t src_mac[6];
    uint8_t vlan_count;  /* 0, 1 or 2 */
    uint16_t outer_tpid; /* TPID of the outer tag when vlan_count == 2; 0 means 0x8100 */
    uint16_t vlan[2];    /* [0] outermost */
    uint32_t src_ip;     /* host order */
    uint32_t dst_ip;
    uint16_t src_port;
    uint16_t dst_port;
    uint8_t ttl; /* 0 means 64 */
    uint16_t ip_id;
};

/* Bytes of headers before the UDP payload for this spec. */
size_t tp_net_udp_headers_len(const struct tp_udp_frame_spec *spec);

/*
 * Writes the headers for a payload of payload_len bytes that the caller has placed (or will
 * place) at frame + tp_net_udp_headers_len(spec). Returns the frame length, -ENOSPC when the
 * frame exceeds cap, -EINVAL for a bad spec (vlan_count > 2) or a payload too large for UDP.
 */
int tp_net_write_udp_headers(uint8_t *frame, size_t cap, const struct tp_udp_frame_spec *spec,
                             size_t payload_len);

/* Headers plus a copy of the payload; same returns as tp_net_write_udp_headers. */
int tp_net_build_udp(uint8_t *frame, size_t cap, const struct tp_udp_frame_spec *spec,
                     const uint8_t *payload, size_t payload_len);

/*
 * The UDP checksum (RFC 768) of a segment of udp_len bytes (header and payload) between src_ip and
 * dst_ip (host order), IPv4 pseudo-header included: the value that belongs in the checksum field.
 * The field's current content is ignored; a computed 0 is returned as 0xffff (0 means "none").
 */
uint16_t tp_udp_checksum(uint32_t src_ip, uint32_t dst_ip, const uint8_t *udp, size_t udp_len);

/* Whether a datagram tp_net_parse_udp accepted (v, whole: sources too) carries no checksum (0,
 * which UDP over IPv4 allows) or the right one. */
bool tp_udp_checksum_ok(const struct tp_udp_view *v);

/*
 * Stores the UDP checksum into a frame that tp_net_write_udp_headers / tp_net_build_udp wrote for
 * spec and payload_len, once the payload is in place.
 */
void tp_net_write_udp_checksum(uint8_t *frame, const struct tp_udp_frame_spec *spec,
                               size_t payload_len);

/* The Ethernet address of an IPv4 multicast group (01:00:5e + low 23 bits). */
void tp_net_multicast_mac(uint32_t group, uint8_t mac[6]);

#endif /* TP_NET_BUILD_H */
