/*
 * The control socket: a UNIX stream socket speaking JSON lines (protocol.md), served from the
 * main lcore with epoll, never blocking. Each request line is answered with exactly one reply line
 * (plus unsolicited {"event": ...} lines, e.g. when a reload revokes a subscription).
 *
 * Hostile clients are contained: lines are bounded (control.max_line_bytes; longer ones get an
 * error and are skipped), requests are rate limited per client, replies queue in a bounded buffer
 * (a client that does not read is disconnected), and a connection over control.max_clients is told
 * so and closed. No user can lock the others out: one uid holds at most
 * control.max_clients_per_uid connections (root: no limit), the last control.reserved_clients
 * slots take only root and members of control.operator_group, and a connection without
 * subscriptions that sends nothing for control.idle_timeout_ms is closed. None of this touches
 * other clients or the data plane.
 */
#ifndef TP_CTL_SERVER_H
#define TP_CTL_SERVER_H

#include <stdint.h>

#include "config.h"
#include "ctl_ops.h"

struct tp_ctl_server;

/* Counters (single writer: the main lcore). */
struct tp_ctl_server_stats {
    uint64_t clients;           /* connected now */
    uint64_t accepted;          /* connections accepted */
    uint64_t rejected_full;     /* connections refused over max_clients or into reserved slots */
    uint64_t rejected_uid;      /* connections refused over max_clients_per_uid */
    uint64_t idle_closed;       /* connections closed by the idle timeout */
    uint64_t requests;          /* request lines processed */
    uint64_t errors;            /* error replies (all causes) */
    uint64_t bad_requests;      /* bad JSON, not an object, unknown verb, bad arguments */
    uint64_t lines_too_long;    /* lines over max_line_bytes */
    uint64_t rate_limited;      /* requests over max_requests_per_sec */
    uint64_t refused;           /* entitlement refusals */
    uint64_t slow_disconnects;  /* clients dropped because their replies piled up */
    uint64_t subscriptions;     /* active now, all clients */
    uint64_t commands_sent;     /* commands handed to the data plane */
    uint64_t commands_deferred; /* commands queued because the ring was full */
    uint64_t commands_lost;     /* commands dropped because even the deferral queue was full */
};

/* Largest reply backlog for one client before it is disconnected as a slow reader. */
#define TP_CTL_MAX_OUTPUT (1u << 20)

/*
 * Create the socket at cfg->control.socket_path with cfg->control.socket_mode (a stale socket file
 * is replaced; a live one is -EADDRINUSE) and start listening. cfg is copied (control,
 * entitlements, venues); ops is copied. Returns 0 or -errno.
 */
int tp_ctl_server_open(struct tp_ctl_server **out, const struct tp_config *cfg,
                       const struct tp_ctl_ops *ops);

/* The epoll descriptor, readable when there is work (to nest in a bigger event loop). */
int tp_ctl_server_fd(const struct tp_ctl_server *srv);

/* Serve whatever is ready, waiting at most timeout_ms (0 = do not wait). Returns events handled. */
int tp_ctl_server_poll(struct tp_ctl_server *srv, int timeout_ms);

/*
 * Apply a reloaded config: entitlements, venues and per-client limits. Every existing subscription
 * is checked again; those no longer allowed are removed (the data plane is told) and their client
 * gets {"event": "revoked", ...}. Socket path, mode and the other control limits need a restart.
 */
void tp_ctl_server_update(struct tp_ctl_server *srv, const struct tp_config *cfg);

void tp_ctl_server_stats(const struct tp_ctl_server *srv, struct tp_ctl_server_stats *out);

/* Close every client (telling the data plane) and the socket, unlink it, free everything. */
void tp_ctl_server_close(struct tp_ctl_server *srv);

#endif /* TP_CTL_SERVER_H */
