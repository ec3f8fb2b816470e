/*
 * The control plane as one piece the daemon runs on its main lcore: the control socket, live
 * reload (control verb or SIGHUP), the Prometheus textfile and HTTP endpoint, all from one
 * non-blocking poll call. The daemon supplies what only it knows through hooks: the data-plane
 * side of the socket (struct tp_ctl_ops without reload/metrics, which are provided here), how to
 * apply a validated reload diff to the running data plane, and where the counters are.
 *
 * Reload: the file the running config came from (cfg->source) is loaded and validated; if it is
 * invalid or needs a restart, nothing changes and the reply says why. Otherwise hooks.apply gets
 * the new config and the diff; if it succeeds, entitlements, rate limits, telemetry and log levels
 * switch to the new config and it becomes the running one. If apply fails, the old config stays.
 * Every reload is logged: "reload applied" (notice) or "reload refused" (warning) with the reply.
 */
#ifndef TP_CONTROL_PLANE_H
#define TP_CONTROL_PLANE_H

#include <jansson.h>

#include "bus/counters.h"
#include "config.h"
#include "ctl_ops.h"
#include "prometheus.h"
#include "reload.h"
#include "server.h"
#include "util/histogram.h"

struct tp_control_plane;

struct tp_control_plane_hooks {
    /* send_command, status, stats, instruments, book (ops.reload and ops.metrics are ignored). */
    struct tp_ctl_ops ops;
    /*
     * Apply a reload to the running data plane: start added channels, stop removed ones, restart
     * changed ones, swap the instrument filter. 0, or a negative errno with why in err (the old
     * config then stays in force). NULL: reloads that change channels or filters are refused.
     */
    int (*apply)(void *ctx, const struct tp_config *next, const struct tp_config_diff *diff,
                 char *err, size_t err_size);
    const struct tp_counters *counters; /* the shared counters area, or NULL */
    /* A consistent copy of the receive-to-publish histogram and its ns per unit, or NULL. */
    void (*latency)(void *ctx, struct tp_histogram *out, double *ns_per_unit);
    /* The same for the time packets waited behind a gap (held until filled or given up). */
    void (*gap_wait)(void *ctx, struct tp_histogram *out, double *ns_per_unit);
    /* More Prometheus families the daemon renders itself (the consumers), or NULL. */
    void (*metrics)(void *ctx, struct tp_prom_buf *b);
    void *ctx; /* for apply, latency, gap_wait and metrics (ops has its own) */
};

/* Open the socket and (if configured) the HTTP endpoint. cfg is copied. 0 or -errno. */
int tp_control_plane_open(struct tp_control_plane **out, const struct tp_config *cfg,
                          const struct tp_control_plane_hooks *hooks);

/* Ask for a reload at the next poll. Async-signal-safe: call it from a SIGHUP handler. */
void tp_control_plane_request_reload(struct tp_control_plane *cp);

/* Serve the socket and HTTP, run a requested reload, write the metrics file when due. */
void tp_control_plane_poll(struct tp_control_plane *cp, int timeout_ms);

/* Reload now; returns the result object (as the control verb replies; caller decrefs). */
json_t *tp_control_plane_reload(struct tp_control_plane *cp);

/* Render all metrics (counters, latency, control socket) as Prometheus text. */
long tp_control_plane_metrics(struct tp_control_plane *cp, char *buf, size_t size);

/* The running config (changes after a successful reload). */
const struct tp_config *tp_control_plane_config(const struct tp_control_plane *cp);

/* The control socket's counters now (call from the control plane's thread). */
void tp_control_plane_server_stats(struct tp_control_plane *cp, struct tp_ctl_server_stats *out);

/* The HTTP port actually bound (0 if none). */
uint16_t tp_control_plane_http_port(const struct tp_control_plane *cp);

void tp_control_plane_close(struct tp_control_plane *cp);

#endif /* TP_CONTROL_PLANE_H */
