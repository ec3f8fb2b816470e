/*
 * A capture preloaded into mbufs and served by a net_ring port: the daemon's receive path without
 * the cost of a capture PMD (net_pcap reads each frame with libpcap and copies it into a fresh
 * mbuf on the data lcore), so a benchmark or test measures rx_burst, classify, channel, publish
 * and mbuf release alone.
 *
 * Promises:
 *  - tp_preload_open reads every frame of the capture into its own single-segment mbuf, in
 *    capture order, enqueues them all in one single-consumer rte_ring, and creates the ethdev
 *    dev_name ("net_ring_<name>": rte_eth_from_rings names its devices so) with that ring as its
 *    only rx queue and a small tx ring. tp_port_open then opens it like any other device.
 *  - The mbufs come from pools sized to the capture: one per size class of data room (headroom +
 *    frame, rounded up to TP_PRELOAD_ROOM_STEP bytes) that has frames, exactly as many mbufs as
 *    it has frames: the plan control/config's memory estimate counts (preload_plan.h). One pool
 *    with every mbuf sized for the largest frame would take 4 times the memory on a capture of
 *    small packets with a few full ones (itch1m: 119 bytes on average, 1,435 at most). Freed
 *    mbufs go back to their own pool.
 *  - The capture is a classic pcap file read with codecs/net's pcap_reader (no libpcap), the
 *    reader the config's check uses: a capture the config accepted is read the same way here.
 *  - The ring is never refilled: once the lcore has drained it, rx_burst returns nothing and the
 *    lcore idles (the daemon's --idle-exit-ms ends the run).
 *  - What the data plane sends on the port (IGMP reports at join, ARP replies) stays in the tx
 *    ring: nothing reads it. tp_preload_close frees it, and frames still in the rx ring, after
 *    tp_port_close.
 * Control path only (EAL initialised, main lcore).
 */
#ifndef TP_PORTS_PRELOAD_H
#define TP_PORTS_PRELOAD_H

#include <stddef.h>
#include <stdint.h>

#include "preload_plan.h"

struct rte_mempool;
struct rte_ring;

/* Frames the data plane may send on a preloaded port before the tx ring refuses them. */
#define TP_PRELOAD_TX_RING 1024

struct tp_preload {
    struct rte_mempool *pools[TP_PRELOAD_CLASSES]; /* by size class (tp_preload_class) */
    struct tp_preload_plan plan;                   /* frames preloaded, per class, the largest */
    struct rte_ring *rx;
    struct rte_ring *tx;
};

/*
 * Reads the capture at pcap_path into mbufs on NUMA socket `socket` and creates the net_ring
 * device dev_name. 0, or -errno with a sentence in err (nothing left allocated).
 */
int tp_preload_open(struct tp_preload *pl, const char *dev_name, const char *pcap_path, int socket,
                    char *err, size_t err_len);

/* Frees the frames left in both rings, the rings and the pools. The port must be closed. */
void tp_preload_close(struct tp_preload *pl);

#endif
