/*
 * Packet classifier: Ethernet frame -> feed line, by (destination group, UDP port, VLAN).
 *
 * Promises:
 *  - One parse (codecs/net, bounds checked) and one or two probes of a small open-addressing
 *    table (linear probing, load factor <= 1/2, sized at init): one where the table holds
 *    flows of one kind (exact-VLAN or any-VLAN). No allocation after init.
 *  - A flow added with vlan TP_CLASSIFY_ANY_VLAN matches that group and port with any tag and
 *    untagged; an exact-VLAN flow wins over it.
 *  - A UDP checksum, when the sender computed one (non-zero) and verify_udp_checksum is set, is
 *    verified for frames of a configured flow: a corrupt copy is refused here, so the copy on
 *    the other line fills in. Where the receiving NIC verified it already (the caller says so,
 *    from the mbuf's offload flags) it is not summed again; a NIC's "bad" is checked in software
 *    like an unknown one (some NICs call a UDP checksum of 0, "none", bad).
 *  - Frames that are not UDP over IPv4, malformed, or of no configured flow are counted (by
 *    reason) and reported as TP_CLASSIFY_NONE; the caller drops them or hands them to the
 *    exception path (IGMP, ARP: see host.h).
 *  - No DPDK: works on any frame in memory (the daemon passes mbuf data, tests pass buffers).
 */
#ifndef TP_PORTS_CLASSIFIER_H
#define TP_PORTS_CLASSIFIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_parse.h"

#define TP_CLASSIFY_NONE     UINT32_MAX
#define TP_CLASSIFY_ANY_VLAN 0xffffu /* not a valid 12-bit VLAN id */

struct tp_classifier_params {
    uint32_t max_flows; /* flows that will be added (table size is the next power of two >= 2x) */
    /* Verify UDP checksums. Off where frames may carry a checksum the sender's NIC was meant to
     * finish (Linux veth / af_packet with checksum offload delivers partial sums). */
    bool verify_udp_checksum;
};

/* Why frames were not classified; single writer (the data lcore). */
struct tp_classifier_counters {
    /* Frames offered are the sum of these five (not counted apart: one store a frame less). */
    uint64_t matched;      /* returned a line */
    uint64_t not_udp;      /* well-formed, but not UDP over IPv4 (ARP, IGMP, IPv6, LLDP, ...) */
    uint64_t malformed;    /* lengths or headers that do not add up */
    uint64_t no_flow;      /* UDP to a destination nobody configured */
    uint64_t bad_checksum; /* UDP checksum present and wrong */
    uint64_t nic_checksum; /* matched frames whose UDP checksum the NIC verified */
} __attribute__((aligned(64)));

/* ---- the table: laid out here for the inline per-frame path below, not for callers ---- */

/* A (key, line) slot; an empty one has line == TP_CLASSIFY_NONE. */
struct tp_flow_slot {
    uint64_t key; /* group << 32 | port << 16 | vlan: a probe is one compare */
    uint32_t line;
    uint32_t reserved;
};

struct tp_classifier {
    struct tp_classifier_counters counters;
    uint32_t mask;
    uint32_t max_flows;
    bool verify_udp_checksum;
    uint32_t flows;
    /* Flows by kind: a lookup probes only for the kinds present (most setups use one). */
    uint32_t exact_vlan_flows;
    uint32_t any_vlan_flows;
    struct tp_flow_slot slots[];
};

static inline uint64_t tp_classifier_key(uint32_t group, uint16_t port, uint16_t vlan)
{
    return (uint64_t)group << 32 | (uint64_t)port << 16 | vlan;
}

/* Multiplicative hashing: the high bits of key * odd constant spread groups differing in low
 * bits. */
static inline uint32_t tp_classifier_slot(const struct tp_classifier *cls, uint64_t key)
{
    return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) & cls->mask;
}

/* The key is compared first: a hit costs one compare. An empty slot's key (0) may equal the key
 * sought, and then its line, TP_CLASSIFY_NONE, is the right answer all the same. */
static inline uint32_t tp_classifier_probe(const struct tp_classifier *cls, uint64_t key)
{
    for (uint32_t i = tp_classifier_slot(cls, key);; i = (i + 1) & cls->mask) {
        const struct tp_flow_slot *s = &cls->slots[i];
        if (s->key == key || s->line == TP_CLASSIFY_NONE)
            return s->line;
    }
}

/* The exact-VLAN flow, else the any-VLAN one; a kind the table holds none of is not probed. */
static inline uint32_t tp_classifier_lookup_inline(const struct tp_classifier *cls,
                                                   const struct tp_flow_key *key)
{
    uint64_t group_port = tp_classifier_key(key->dst_ip, key->dst_port, 0);
    if (cls->exact_vlan_flows != 0) {
        uint32_t line = tp_classifier_probe(cls, group_port | key->vlan);
        if (line != TP_CLASSIFY_NONE || cls->any_vlan_flows == 0)
            return line;
    }
    return tp_classifier_probe(cls, group_port | TP_CLASSIFY_ANY_VLAN);
}

/* The per-frame path's rare outcomes, out of line: a frame tp_net_parse_udp refused (rc:
 * counted, TP_CLASSIFY_NONE), and a matched frame's checksum summed in software (the frame is
 * parsed again into *v, sources too; returns its line, or TP_CLASSIFY_NONE when the checksum is
 * wrong). */
uint32_t tp_classifier_unparsed(struct tp_classifier *cls, int rc);
uint32_t tp_classifier_checksum(struct tp_classifier *cls, uint32_t line, const uint8_t *frame,
                                size_t len, struct tp_udp_view *v);

size_t tp_classifier_memsize(const struct tp_classifier_params *params);
/* 0 or -EINVAL; mem holds tp_classifier_memsize() bytes, 64-byte aligned. */
int tp_classifier_init(void *mem, const struct tp_classifier_params *params);

/*
 * Maps a flow (host order group and port; vlan 0..4094 or TP_CLASSIFY_ANY_VLAN) to `line`, a
 * caller-defined id other than TP_CLASSIFY_NONE. Returns 0, -EEXIST if the flow is already
 * mapped, -ENOSPC beyond max_flows, -EINVAL for a bad vlan or line.
 */
int tp_classifier_add(struct tp_classifier *cls, uint32_t group, uint16_t port, uint16_t vlan,
                      uint32_t line);

/* Unmaps a flow added with the same group, port and vlan (live reload). 0 or -ENOENT. */
int tp_classifier_remove(struct tp_classifier *cls, uint32_t group, uint16_t port, uint16_t vlan);

/* The line of a parsed flow key, or TP_CLASSIFY_NONE. */
uint32_t tp_classifier_lookup(const struct tp_classifier *cls, const struct tp_flow_key *key);

/*
 * Parses a frame and classifies it. Returns the line (and fills *view: payload, sources) or
 * TP_CLASSIFY_NONE (counted by reason; *view is filled only when the frame was UDP).
 */
uint32_t tp_classify_frame(struct tp_classifier *cls, const uint8_t *frame, size_t len,
                           struct tp_udp_view *view);

/*
 * tp_classify_frame for a frame whose UDP checksum the receiving NIC has verified when
 * udp_checksum_good is true (DPDK: RTE_MBUF_F_RX_L4_CKSUM_GOOD, or _NONE: the data is known
 * intact though the field is not): the checksum is then not computed again. Inline: it runs
 * for every frame the data lcore receives. Of *view it fills what the data lcore reads, the flow
 * key, payload and payload_len (all of it where the checksum is summed in software, or the frame
 * is not of the common shape: see net_parse.h); tp_classify_frame fills all of it.
 */
static inline uint32_t tp_classify_frame_offload(struct tp_classifier *cls, const uint8_t *frame,
                                                 size_t len, bool udp_checksum_good,
                                                 struct tp_udp_view *view)
{
    int rc = tp_net_parse_udp(frame, len, TP_NET_KEY_ONLY, view);
    if (__builtin_expect(rc != 0, 0))
        return tp_classifier_unparsed(cls, rc);
    uint32_t line = tp_classifier_lookup_inline(cls, &view->key);
    if (line == TP_CLASSIFY_NONE) {
        cls->counters.no_flow++;
        return line;
    }
    if (cls->verify_udp_checksum) {
        if (!udp_checksum_good)
            return tp_classifier_checksum(cls, line, frame, len, view);
        cls->counters.nic_checksum++;
    }
    cls->counters.matched++;
    return line;
}

const struct tp_classifier_counters *tp_classifier_counters(const struct tp_classifier *cls);

#endif
