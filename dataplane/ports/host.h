/*
 * The host side of a data-plane port: what the port must answer so that the network delivers
 * the feeds and the re-request server can reach us, without a kernel stack behind the port.
 *
 *  - IGMP (RFC 2236 v2, RFC 3376 v3): membership reports for the joined groups, sent twice on
 *    join (robustness 2, one unsolicited interval apart) and after a random delay within the
 *    query's Max Resp Time when a general or group-specific query arrives; a leave on
 *    tp_host_leave. Reports follow the querier's version: v3 until a v1/v2 query is heard.
 *    A group joined with a source is reported as IGMPv3 INCLUDE {source} (source-specific
 *    multicast); without one as EXCLUDE {} (any source).
 *  - ARP: answers requests for the port's address, and resolves the addresses we send to
 *    (the MoldUDP64 re-request server) with requests of its own, retried once a second.
 *
 * The data lcore that owns the port hands it every frame the classifier did not take
 * (tp_host_input) and asks it for frames to send (tp_host_next_frame) in its poll loop, telling
 * it whether each one went out (tp_host_frame_sent): a frame the port did not take stays due and
 * is written again at the next call, so a full tx queue or an empty mbuf pool delays a report or
 * an ARP reply instead of losing it. No DPDK, no allocation after init, no syscalls: time is the
 * caller's TSC.
 */
#ifndef TP_PORTS_HOST_H
#define TP_PORTS_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TP_HOST_MAX_GROUPS    64
#define TP_HOST_MAX_NEIGHBORS 8
#define TP_HOST_FRAME_MAX     128 /* every frame the host sends fits in this */

#define TP_HOST_NO_VLAN 0xffffu

/*
 * When the port has taken none of the host's frames for this long, everything due is given up
 * (counted in tx_given_up) and the host starts afresh: a one-second-old ARP reply or query answer
 * is as good as lost, and join reports and ARP requests have their own one-second schedule.
 */
#define TP_HOST_TX_GIVE_UP_MS 1000

struct tp_host_params {
    uint8_t mac[6];
    uint32_t ip;     /* host order; 0: reports are sent from 0.0.0.0 and ARP is not answered */
    uint16_t vlan;   /* VLAN of unicast traffic (ARP requests we send), or TP_HOST_NO_VLAN */
    uint64_t tsc_hz; /* TSC ticks per second */
    uint64_t seed;   /* for report delays (any value; tests fix it) */
};

/* What the host did, for the port's counters. */
struct tp_host_counters {
    uint64_t igmp_queries; /* queries received (general or group-specific) */
    uint64_t igmp_reports; /* reports sent (joins, answers) */
    uint64_t igmp_leaves;  /* leaves sent */
    uint64_t arp_requests; /* requests for our address received (a reply queued if room) */
    uint64_t arp_sent;     /* requests we sent to resolve a neighbor */
    uint64_t tx_retries;   /* sends that failed; the frame stayed due for the next call */
    uint64_t tx_given_up;  /* frames dropped after TP_HOST_TX_GIVE_UP_MS of failed sends */
    uint64_t arp_learned;  /* neighbor addresses learned */
    uint64_t ignored;      /* frames of no interest to the host (counted, dropped) */
    uint64_t malformed;    /* IGMP/ARP frames that do not add up */
};

struct tp_host;

size_t tp_host_memsize(void);
/* 0 or -EINVAL (no TSC rate); mem holds tp_host_memsize() bytes, 64-byte aligned. */
int tp_host_init(void *mem, const struct tp_host_params *params);

/*
 * Joins a group (host order; source 0 = any source; vlan TP_HOST_NO_VLAN = untagged) and
 * schedules the unsolicited reports. Joining a joined group adds a reference. Returns 0,
 * -ENOSPC when TP_HOST_MAX_GROUPS are joined, -EINVAL for a non-multicast group.
 */
int tp_host_join(struct tp_host *host, uint32_t group, uint32_t source, uint16_t vlan,
                 uint64_t now_tsc);

/* Drops a reference; the last one sends a leave. Returns 0 or -ENOENT. */
int tp_host_leave(struct tp_host *host, uint32_t group, uint64_t now_tsc);

/* Whether a group is joined (tests, status). */
bool tp_host_joined(const struct tp_host *host, uint32_t group);

/*
 * Takes a frame the classifier did not want. Returns true if it was for the host (IGMP query,
 * ARP), false otherwise (counted as ignored). Never keeps a pointer to the frame.
 */
bool tp_host_input(struct tp_host *host, const uint8_t *frame, size_t len, uint64_t now_tsc);

/*
 * Writes the next frame due at now_tsc into buf (at least TP_HOST_FRAME_MAX bytes) and returns
 * its length, or 0 when nothing is due. Nothing advances until tp_host_frame_sent says the frame
 * went out: calling again without it writes the same frame. The caller's loop is
 *
 *     while ((len = tp_host_next_frame(host, now, buf, cap)) > 0) {
 *         bool sent = transmit(buf, len);
 *         tp_host_frame_sent(host, now, sent);
 *         if (!sent)
 *             break;  (the port is full: try again at the next tick)
 *     }
 */
size_t tp_host_next_frame(struct tp_host *host, uint64_t now_tsc, uint8_t *buf, size_t cap);

/*
 * Settles the frame tp_host_next_frame last wrote; call it before any other call on the host.
 * sent: the port took it (the report, leave or ARP frame is done and counted). Not sent: it stays
 * due (counted in tx_retries) until it goes out or the port has taken nothing for
 * TP_HOST_TX_GIVE_UP_MS. Without a frame written since the last call, does nothing.
 */
void tp_host_frame_sent(struct tp_host *host, uint64_t now_tsc, bool sent);

/*
 * The MAC address of a unicast neighbor (host order ip). Returns 0 and fills mac, or -EAGAIN
 * while unresolved (an ARP request is scheduled; ask again later), -ENOSPC if the neighbor table
 * is full.
 */
int tp_host_resolve(struct tp_host *host, uint32_t ip, uint64_t now_tsc, uint8_t mac[6]);

const struct tp_host_counters *tp_host_counters(const struct tp_host *host);

#endif
