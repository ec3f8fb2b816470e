/*
 * The main lcore's side of ITCH snapshots: one GLIMPSE 5.0 session (control/snapshot) per ITCH
 * channel whose config has recovery.snapshot, polled from the control loop, and what it fetches
 * handed to the channel's data lcore as chunks (dataplane/feeds/itch/itch_snapshot.h) through that
 * lcore's rte_ring. TCP stays here; the data lcore only dequeues.
 *
 * A fetch starts when the channel asks (its `wanted` count moved: a late join, a gap given up,
 * a hole after a load), or on the operator's request (tickplanectl recover CHANNEL). Every
 * attempt, success and failure is logged on stderr with its reason and counted
 * (tp_daemon_snapshots_json). When the lcore falls behind, the chunk pool runs low and the
 * session stops reading (TCP back-pressure) instead of blocking anyone.
 *
 * A channel is found by name at every poll, so a reload that restarts it (a new channel in its
 * place, which joins late and asks for a snapshot) is served. Limits: the sessions, servers and
 * credentials are the start-up config's; a reload that adds a recovery.snapshot, or moves a
 * channel to another data lcore, takes effect at the next start.
 */
#ifndef TP_DAEMON_SNAPSHOTS_H
#define TP_DAEMON_SNAPSHOTS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp_daemon;

/* Pool and rings (before the lcores start) and a session per configured channel. 0 or -errno. */
int tp_daemon_snapshots_init(struct tp_daemon *d);

/* Starts fetches asked for, moves the sessions on, hands chunks to the lcores. */
void tp_daemon_snapshots_poll(struct tp_daemon *d, uint64_t now_ms);

/* Whether a fetch runs (the control loop then ticks faster). */
bool tp_daemon_snapshots_busy(const struct tp_daemon *d);

/* The operator's request for channel `name`: 0, or -errno with why in err. */
int tp_daemon_snapshot_request(struct tp_daemon *d, const char *name, char *err, size_t err_size);

/*
 * Per channel with a snapshot service: its fetches (attempts, completed, failed, rejected,
 * dropped, gave_up, last_failure) and, once the lcores stopped (the exit summary), the channel's
 * loads (`loads`: the lcore's counters, else read from the bus as channel=NAME.snapshot.*).
 */
json_t *tp_daemon_snapshots_json(const struct tp_daemon *d, bool lcores_stopped);

#endif /* TP_DAEMON_SNAPSHOTS_H */
