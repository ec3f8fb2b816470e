/*
 * Shared between the connection layer (server.c) and the verb handlers (requests.c); not a public
 * interface.
 */
#ifndef TP_CTL_SERVER_INTERNAL_H
#define TP_CTL_SERVER_INTERNAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "ctl_ops.h"
#include "entitlements.h"
#include "server.h"

struct ctl_sub {
    uint32_t id;
    uint32_t topics;
    char venue[TP_CTL_VENUE_MAX];
    char pattern[TP_CTL_PATTERN_MAX];
};

struct ctl_client {
    int fd; /* -1: free slot */
    uint32_t id;
    struct tp_peer peer;
    char *in; /* max_line_bytes + 1 */
    size_t in_len;
    bool discarding; /* inside a line that was too long: skip to its newline */
    char *out;
    size_t out_len, out_cap;
    bool want_write;      /* EPOLLOUT armed */
    bool closing;         /* close once out is flushed */
    struct ctl_sub *subs; /* max_subscriptions */
    unsigned n_subs;
    uint32_t next_sub_id;
    uint64_t window_start_ms; /* rate limit: this second's start and count */
    uint32_t window_count;
    uint64_t last_input_ms; /* accept or last bytes read: the idle timeout's start */
};

/* Commands that found the ring full wait here and are retried at every poll. */
#define CTL_DEFERRED_MAX 1024

struct tp_ctl_server {
    int listen_fd, epoll_fd;
    char path[108];
    struct tp_cfg_control cfg;
    struct tp_cfg_entitlements ent;
    unsigned n_venues;
    char venues[TP_CFG_MAX_CHANNELS][TP_CFG_VENUE_MAX];
    struct tp_ctl_ops ops;
    struct ctl_client *clients; /* cfg.max_clients slots */
    unsigned n_slots;
    gid_t operator_gid;     /* cfg.operator_group's; (gid_t)-1: root only */
    gid_t admin_gid;        /* cfg.admin_group's; (gid_t)-1: none */
    uint64_t next_sweep_ms; /* the idle clients' next sweep */
    uint32_t next_client_id;
    struct tp_ctl_cmd deferred[CTL_DEFERRED_MAX];
    unsigned n_deferred;
    struct tp_ctl_server_stats stats;
};

/* Queue one JSON value (compact, newline-terminated) for the client; takes the reference. */
void ctl_send_json(struct tp_ctl_server *srv, struct ctl_client *c, json_t *msg);

/* Reply {"id": id, "ok": false, "error": ...} (id may be NULL). */
void ctl_reply_error(struct tp_ctl_server *srv, struct ctl_client *c, json_t *id, const char *fmt,
                     ...) __attribute__((format(printf, 4, 5)));

/* Hand a command to the data plane, deferring it if the ring is full (never for subscribe). */
int ctl_send_command(struct tp_ctl_server *srv, const struct tp_ctl_cmd *cmd, bool may_defer);

/* Handle one complete request line (no newline). */
void ctl_handle_line(struct tp_ctl_server *srv, struct ctl_client *c, const char *line, size_t len);

/* Remove a client's subscription i (telling the data plane). */
void ctl_drop_subscription(struct tp_ctl_server *srv, struct ctl_client *c, unsigned i);

#endif /* TP_CTL_SERVER_INTERNAL_H */
