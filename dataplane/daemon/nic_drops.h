/*
 * A port's NIC drop counters (imissed, ierrors, rx_nombuf as rte_eth_stats_get gives them),
 * compared scan by scan on the main lcore: a rise of any logs one "NIC drops rising" warning,
 * with each counter's rise and total, through a limiter of the port's own. No DPDK: the watch
 * reads the counters, this decides what to say.
 */
#ifndef TP_DAEMON_NIC_DROPS_H
#define TP_DAEMON_NIC_DROPS_H

#include <stdbool.h>
#include <stdint.h>

#include "log.h"

/* Zero-initialise one per port. */
struct tp_nic_drops {
    uint64_t imissed, ierrors, rx_nombuf; /* at the last scan */
    struct tp_log_limit limit;
};

/* The port's counters now; true (and a line, unless the limiter drops it) if any rose. */
bool tp_nic_drops_scan(struct tp_nic_drops *d, const char *port, uint64_t imissed, uint64_t ierrors,
                       uint64_t rx_nombuf);

#endif
