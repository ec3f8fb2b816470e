/*
 * DPDK telemetry commands for tickplane, so `dpdk-telemetry.py` (and anything speaking the
 * telemetry socket) reads the same counters as the CLI and Prometheus:
 *
 *   /tickplane/counters[,PREFIX]  every shared counter (or those whose name starts with PREFIX),
 *                                 keys with characters outside [A-Za-z0-9_/] turned into '_'
 *                                 (DPDK's rule): "bus.ring.published" -> "bus_ring_published"
 *   /tickplane/latency            receive-to-publish summary in ns: count, min_ns, p50_ns, p90_ns,
 *                                 p99_ns, p999_ns, p9999_ns, max_ns
 *   /tickplane/gap_wait           the same of the time packets were held behind a gap
 *   /tickplane/channels           per channel (by its counter label) a dict of its counters:
 *                                 {"itch": {"feed_packets": .., "arb_gaps": .., "line_a_line_held":
 *                                 .., ...}, ...}
 *   /tickplane/consumers          per bus consumer (by pid) its records, lag, lapped, lost, resyncs
 *   /tickplane/control            the control socket's counters
 *
 * Handlers run on DPDK's telemetry thread, not the main lcore: they read only what is safe to read
 * concurrently (the counters area: atomic single-writer values), and call the daemon's snapshot
 * callbacks, which must hand over a consistent copy (for example one the main lcore refreshes).
 * Register once, before or after rte_eal_init.
 */
#ifndef TP_DPDK_TELEMETRY_H
#define TP_DPDK_TELEMETRY_H

#include "bus/counters.h"
#include "server.h"
#include "util/histogram.h"

/* One consumer of the bus as its own counters segment shows it. */
struct tp_telemetry_consumer {
    int pid;
    uint64_t records, lag, lapped, lost, resyncs;
};

struct tp_telemetry_sources {
    const struct tp_counters *counters; /* may be NULL */
    /* Copy the latency histogram into *out; ns_per_unit converts its values. NULL = none. */
    void (*latency)(void *ctx, struct tp_histogram *out, double *ns_per_unit);
    /* The same for the gap-wait histogram. NULL = none. */
    void (*gap_wait)(void *ctx, struct tp_histogram *out, double *ns_per_unit);
    /* Copy the control socket's counters. NULL = none. */
    void (*control)(void *ctx, struct tp_ctl_server_stats *out);
    /* Copy at most max consumers into out; returns how many. NULL = none. */
    unsigned (*consumers)(void *ctx, struct tp_telemetry_consumer *out, unsigned max);
    void *ctx;
};

/* Register the commands (the sources are copied). 0 or a negative errno. */
int tp_dpdk_telemetry_register(const struct tp_telemetry_sources *sources);

#endif /* TP_DPDK_TELEMETRY_H */
