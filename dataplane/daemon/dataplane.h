/*
 * The data plane of the tickplane daemon: what a data lcore owns and the loop it runs.
 *
 * The l2fwd/l3fwd shape: every data lcore busy-polls rte_eth_rx_burst on its (port, queue)
 * pairs, classifies each frame to a channel line, and runs the channel pipeline
 * (channel.h) inline: arbitrate, decode, apply to books, publish. Frames of no channel go to the
 * port's host side (IGMP, ARP: ports/host.h) when the lcore owns the port, else are dropped.
 * Timers (gap windows, re-requests, IGMP reports) run every TIMER_PERIOD of TSC. Counters are
 * copied into the bus counters area every COUNTER_PERIOD (single writer: this lcore).
 *
 * Nothing here allocates, locks or makes syscalls after start-up (the af_packet and pcap PMDs
 * make their own syscalls inside rx/tx; real NICs do not).
 */
#ifndef TP_DAEMON_DATAPLANE_H
#define TP_DAEMON_DATAPLANE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "channel.h"
#include "classifier.h"
#include "host.h"
#include "nic_clock.h"
#include "port.h"
#include "reconfig.h"
#include "util/histogram.h"

#define TP_DP_MAX_RXQ 16

struct tp_counter;
struct tp_publisher;
struct tp_bus_writer;
struct tp_interest;
struct tp_instruments;
struct rte_ring;
struct rte_mempool;

/* A port as the data lcore sees it. */
struct tp_dp_port {
    struct tp_port port;
    struct tp_host *host; /* IGMP/ARP, owned by this lcore; NULL if another lcore owns it */
    uint32_t ip;          /* our address on this port (host order), 0 if unknown */
    uint16_t tx_queue;
    bool can_send;
    /* port.rx_timestamp: the NIC's clock read by the lcore polling the port (its only writer). */
    struct tp_nic_clock nic_clock;
};

#define TP_DP_LCORE_EXPORTS 64 /* the lcore's own counters (its channels' are in their slots) */
/* Counters area: each lcore's and its bus writer's, and every channel name a reload may bring
 * (a removed channel's names stay registered; added again, it reuses them). */
#define TP_DP_COUNTERS(lcores)                                                                     \
    (64 + (lcores) * (TP_DP_LCORE_EXPORTS + 4) + 2 * TP_DP_MAX_CHANNELS * TP_DP_SLOT_EXPORTS)

/* The lcore's own counters (the classifier, host and channels keep theirs). */
struct tp_dp_stats {
    uint64_t rx_packets;
    uint64_t rx_bursts;
    uint64_t multi_segment; /* frames in chained mbufs: dropped (feeds never need them) */
    uint64_t host_frames;   /* frames the host side took (IGMP, ARP) */
    uint64_t tx_frames;
    uint64_t tx_dropped;            /* no mbuf, no tx queue, or the queue was full */
    uint64_t rerequests_unresolved; /* re-request not sent: server MAC not known yet */
    uint64_t rx_nic_time; /* frames whose receive time is the NIC's stamp (else the TSC's) */
    /* Counter exports of the loop (100 a second, traffic or not): when it stops growing while
     * the daemon's heartbeat goes on, this lcore is wedged (the heartbeat is the main lcore's). */
    uint64_t ticks;
};

struct tp_dp_lcore {
    unsigned lcore_id;
    unsigned n_rxq;
    struct {
        uint16_t port; /* index into ports */
        uint16_t queue;
    } rxq[TP_DP_MAX_RXQ];
    unsigned n_ports;
    struct tp_dp_port
        *ports[TP_DP_MAX_PORTS]; /* indexed like the config's; NULL: not polled here */
    /* The channels by slot, the classifier, and the reload hand-shake (reconfig.h). */
    struct tp_dp_set set;
    struct rte_ring *reconfig; /* struct tp_dp_cmd elements, main lcore -> this lcore */
    struct tp_publisher *publisher;
    struct tp_histogram latency;  /* rx -> publish, TSC ticks */
    struct tp_histogram gap_wait; /* held packets: rx -> release (gap filled, given up), TSC */
    uint64_t tsc_hz;
    /* Written by this lcore, read by main (relaxed): when the last feed frame arrived, and when
     * it last polled (stored every counter period: it was running then, not preempted). */
    _Atomic uint64_t last_rx_tsc;
    _Atomic uint64_t last_poll_tsc;
    uint64_t first_rx_tsc; /* the first feed frame (throughput over the busy span) */
    /*
     * This lcore thread's CPU time (ns) at the first feed frame, and over its busy span as of the
     * last counter period with feed frames: the span less what the host's scheduler gave other
     * tasks, which a shared benchmark host makes most of a wall-clock span's noise.
     */
    uint64_t first_rx_cpu_ns;
    _Atomic uint64_t busy_cpu_ns;
    _Atomic uint64_t rx_packets;
    /* Subscriptions: commands from the control socket, applied here (the only writer). */
    struct rte_ring *commands; /* struct tp_ctl_cmd elements, control plane -> this lcore */
    struct tp_interest *interest;
    struct tp_bus_writer *bus;       /* this lcore's writer (its own ring) */
    struct tp_bus_writer *beats;     /* the instance's writers: beaten 100 times a second too */
    struct tp_instruments *registry; /* this lcore's window of instrument ids */
    uint64_t interest_generation;    /* of the interest table when last applied to the bus */
    uint32_t interest_instruments;   /* instruments the bus interest flags cover */
    /* Copies of `latency` and `gap_wait` for the control plane, under a sequence count (odd:
     * being written). */
    _Atomic uint64_t latency_seq;
    struct tp_histogram latency_export;
    struct tp_histogram gap_wait_export;
    /* ITCH snapshots: struct tp_snap_chunk pointers from the main lcore (its GLIMPSE sessions),
     * applied a few per timer tick and given back to their pool. NULL: none configured. */
    struct rte_ring *snapshots;
    struct rte_mempool *snapshot_pool;
    struct tp_dp_stats stats;
    unsigned n_exports;
    struct tp_dp_export exports[TP_DP_LCORE_EXPORTS];
    atomic_bool *quit;
};

/* The lcore's main loop (rte_eal_remote_launch); returns when *quit becomes true. */
int tp_dp_lcore_main(void *arg);

/*
 * Control plane: consistent copies of the lcore's rx -> publish and gap-wait histograms. False,
 * and the copies are not to be used, when the lcore stayed inside its own copy for a thousand
 * tries (it is off its core): the caller never waits on a data lcore.
 */
bool tp_dp_latency_copy(struct tp_dp_lcore *lc, struct tp_histogram *latency,
                        struct tp_histogram *gap_wait);

/*
 * The rx timestamp field of mbufs (registered once at start-up). The data lcore writes a frame's
 * receive time there, in TSC ticks: the NIC's stamp mapped to the TSC where the port has them
 * (tp_port.rx_timestamp, once the port's clock model is ready), else the TSC at rx_burst.
 */
int tp_dp_register_timestamp(void);

/* Sends a MoldUDP64 re-request (the channel io callback; ctx is the lcore). */
int tp_dp_send_rerequest(void *ctx, uint32_t channel, const uint8_t *payload, size_t len);

/* Joins / leaves the groups of a slot's line role (channel io callback; ctx is the lcore). */
void tp_dp_membership(void *ctx, uint32_t channel, enum tp_line_role role, bool join);

/* Channel io callbacks over mbufs. */
void tp_dp_mbuf_view(void *ctx, void *handle, const uint8_t **payload, uint16_t *len,
                     uint64_t *rx_tsc);
void tp_dp_mbuf_release(void *ctx, void *handle);

/* The reconfiguration ring's size: every command of the largest reload fits at once. */
#define TP_DP_RECONFIG_RING 512

#endif
