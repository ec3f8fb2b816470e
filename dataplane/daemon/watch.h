/*
 * The operator's view of a running daemon, kept by the main lcore from what the data plane
 * already publishes (the shared counters, the state table, the ports' statistics, the consumers'
 * own counters segments), so the data lcores never wait for it and never log:
 *
 *   - one log line per operational event (log.h), rate-limited per kind and channel: gaps
 *     detected, filled, re-requested, recovered and given up; session changes; books marked stale
 *     and healthy again (per venue, with the instrument counts); capacity exhausted; NIC drops
 *     rising; consumers lapped;
 *   - each book's state (ok, STALE, RECOVERING, HALTED) with its reason and since when, for the
 *     book and instruments verbs;
 *   - the NIC's drop counters (port=NAME.nic.imissed, .ierrors, .rx_nombuf, .ipackets) in the
 *     shared counters, and the consumers (pid, records, lag, lapped, lost, resyncs) for the
 *     metrics, the stats verb and DPDK telemetry.
 *
 * Counters are compared every 100 ms, the state table, ports and consumers every second. An
 * event is seen within that period of the counter that records it.
 */
#ifndef TP_DAEMON_WATCH_H
#define TP_DAEMON_WATCH_H

#include <jansson.h>
#include <stdint.h>

#include "daemon.h"
#include "dpdk_telemetry.h"
#include "prometheus.h"

struct tp_watch;

/* After the bus and the lcores are built (registers the NIC counters). 0 or -errno. */
int tp_watch_open(struct tp_watch **out, struct tp_daemon *d);

/* Main lcore, every tick: does what is due at now_ms (CLOCK_MONOTONIC). */
void tp_watch_tick(struct tp_watch *w, uint64_t now_ms);

/*
 * The state of instrument id as of the last scan: adds "state" ("ok", "STALE", "RECOVERING",
 * "HALTED"), "reason" and "since" (UTC, ISO 8601; when the watcher first saw that state) to obj.
 */
void tp_watch_describe(const struct tp_watch *w, uint32_t id, json_t *obj);

/* Books per venue at the last scan: {"NASDAQ": {"instruments", "stale", "recovering"}, ...}. */
json_t *tp_watch_books(const struct tp_watch *w);

/* The consumers seen at the last scan: [{"pid", "records", "lag", "lapped", "lost", "resyncs"}]. */
json_t *tp_watch_consumers(const struct tp_watch *w);

/* Copy at most max consumers (any thread: DPDK telemetry's); returns how many. */
unsigned tp_watch_consumers_copy(struct tp_watch *w, struct tp_telemetry_consumer *out,
                                 unsigned max);

/* The consumers as Prometheus families tickplane_consumer_*{pid,instance}. */
void tp_watch_consumer_metrics(const struct tp_watch *w, struct tp_prom_buf *b);

void tp_watch_close(struct tp_watch *w);

#endif /* TP_DAEMON_WATCH_H */
