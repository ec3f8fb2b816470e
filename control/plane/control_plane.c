/* The control plane runner: see control_plane.h. */
#include "control_plane.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_metrics.h"
#include "log.h"
#include "prometheus.h"
#include "tp_version.h"

struct tp_control_plane {
    struct tp_config *cfg;  /* running */
    struct tp_config *next; /* scratch for reloads */
    struct tp_config_errors errs;
    struct tp_config_diff diff;
    struct tp_control_plane_hooks hooks;
    struct tp_ctl_server *server;
    struct tp_http_metrics *http;
    volatile sig_atomic_t reload_requested;
    uint64_t next_export_ms;
    char *metrics_buf; /* for the textfile */
};

#define METRICS_BUFFER (1u << 20)

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * The socket's ops all get the control plane as context: reload and metrics are served here, the
 * rest is forwarded to the daemon's ops with the daemon's own context.
 */
static int send_command_op(void *ctx, const struct tp_ctl_cmd *cmd)
{
    const struct tp_ctl_ops *d = &((struct tp_control_plane *)ctx)->hooks.ops;
    return d->send_command ? d->send_command(d->ctx, cmd) : 0;
}

static json_t *status_op(void *ctx)
{
    const struct tp_ctl_ops *d = &((struct tp_control_plane *)ctx)->hooks.ops;
    return d->status ? d->status(d->ctx) : NULL;
}

static json_t *stats_op(void *ctx)
{
    const struct tp_ctl_ops *d = &((struct tp_control_plane *)ctx)->hooks.ops;
    return d->stats ? d->stats(d->ctx) : NULL;
}

static json_t *instruments_op(void *ctx, const char *pattern, unsigned limit)
{
    const struct tp_ctl_ops *d = &((struct tp_control_plane *)ctx)->hooks.ops;
    return d->instruments ? d->instruments(d->ctx, pattern, limit) : NULL;
}

static json_t *book_op(void *ctx, const char *venue, const char *symbol, unsigned depth, char *err,
                       size_t err_size)
{
    const struct tp_ctl_ops *d = &((struct tp_control_plane *)ctx)->hooks.ops;
    return d->book ? d->book(d->ctx, venue, symbol, depth, err, err_size) : NULL;
}

static json_t *recover_op(void *ctx, const char *channel, char *err, size_t err_size)
{
    const struct tp_ctl_ops *d = &((struct tp_control_plane *)ctx)->hooks.ops;
    if (d->recover == NULL) {
        snprintf(err, err_size, "recover not available");
        return NULL;
    }
    return d->recover(d->ctx, channel, err, err_size);
}

static json_t *reload_op(void *ctx)
{
    return tp_control_plane_reload(ctx);
}

static long metrics_op(void *ctx, char *buf, size_t size)
{
    return tp_control_plane_metrics(ctx, buf, size);
}

/* (Re)open the HTTP endpoint for the telemetry section; failures are reported, not fatal. */
static void open_http(struct tp_control_plane *cp)
{
    if (cp->http != NULL) {
        tp_http_metrics_close(cp->http);
        cp->http = NULL;
    }
    if (cp->cfg->telemetry.prometheus_port == 0)
        return;
    const struct tp_cfg_telemetry *t = &cp->cfg->telemetry;
    int rc =
        tp_http_metrics_open(&cp->http, t->prometheus_address, t->prometheus_port, metrics_op, cp);
    if (rc != 0)
        tp_log(TP_LOG_TELEMETRY, TP_LOG_ERR, "cannot listen on %u.%u.%u.%u:%u: %s",
               t->prometheus_address >> 24, (t->prometheus_address >> 16) & 255,
               (t->prometheus_address >> 8) & 255, t->prometheus_address & 255, t->prometheus_port,
               strerror(-rc));
}

/* The config's log levels and burst, for every component. */
static void apply_logging(const struct tp_cfg_logging *l)
{
    for (unsigned c = 0; c < TP_LOG_COMPONENTS && c < TP_CFG_LOG_COMPONENTS; c++)
        tp_log_set_level(c, l->components[c] ? l->components[c] : l->level);
    tp_log_set_burst(l->burst);
}

int tp_control_plane_open(struct tp_control_plane **out, const struct tp_config *cfg,
                          const struct tp_control_plane_hooks *hooks)
{
    struct tp_control_plane *cp = calloc(1, sizeof(*cp));
    if (cp == NULL)
        return -ENOMEM;
    cp->cfg = malloc(sizeof(*cp->cfg));
    cp->next = malloc(sizeof(*cp->next));
    cp->metrics_buf = malloc(METRICS_BUFFER);
    if (cp->cfg == NULL || cp->next == NULL || cp->metrics_buf == NULL) {
        tp_control_plane_close(cp);
        return -ENOMEM;
    }
    *cp->cfg = *cfg;
    cp->hooks = *hooks;
    apply_logging(&cfg->logging);
    const struct tp_ctl_ops ops = {.ctx = cp,
                                   .send_command = send_command_op,
                                   .status = status_op,
                                   .stats = stats_op,
                                   .instruments = instruments_op,
                                   .book = book_op,
                                   .recover = recover_op,
                                   .reload = reload_op,
                                   .metrics = metrics_op};
    int rc = tp_ctl_server_open(&cp->server, cfg, &ops);
    if (rc != 0) {
        tp_control_plane_close(cp);
        return rc;
    }
    open_http(cp);
    *out = cp;
    return 0;
}

void tp_control_plane_request_reload(struct tp_control_plane *cp)
{
    cp->reload_requested = 1;
}

/* Log one reload outcome, one line. */
static void log_reload(const json_t *result)
{
    char *text = json_dumps(result, JSON_COMPACT);
    bool ok = json_is_true(json_object_get(result, "ok"));
    tp_log(TP_LOG_RELOAD, ok ? TP_LOG_NOTICE : TP_LOG_WARNING, "reload %s: %s",
           ok ? "applied" : "refused", text ? text : "?");
    free(text);
}

json_t *tp_control_plane_reload(struct tp_control_plane *cp)
{
    int rc;
    if (cp->cfg->source[0] == '\0') {
        memset(&cp->errs, 0, sizeof(cp->errs));
        snprintf(cp->errs.items[0].message, sizeof(cp->errs.items[0].message),
                 "the running config was not loaded from a file");
        cp->errs.count = 1;
        rc = -ENOENT;
    } else {
        rc = tp_reload_prepare(cp->cfg, cp->cfg->source, cp->next, &cp->diff, &cp->errs);
    }
    char why[256] = "";
    bool needs_apply = rc == 0 && (cp->diff.n_added || cp->diff.n_removed || cp->diff.n_changed ||
                                   cp->diff.filters_changed);
    if (needs_apply) {
        if (cp->hooks.apply == NULL) {
            snprintf(why, sizeof(why), "this daemon cannot change channels or filters live");
            rc = -ENOTSUP;
        } else {
            rc = cp->hooks.apply(cp->hooks.ctx, cp->next, &cp->diff, why, sizeof(why));
        }
    }
    json_t *result = tp_reload_result_json(rc, &cp->errs, &cp->diff, cp->cfg, cp->next);
    if (why[0] != '\0')
        json_array_append_new(json_object_get(result, "errors"), json_string(why));
    if (rc == 0) {
        bool telemetry = cp->diff.telemetry_changed;
        /* The new config becomes the running one; the socket follows it. */
        struct tp_config *old = cp->cfg;
        cp->cfg = cp->next;
        cp->next = old;
        if (cp->diff.entitlements_changed || cp->diff.rate_limit_changed || cp->diff.n_added ||
            cp->diff.n_removed)
            tp_ctl_server_update(cp->server, cp->cfg);
        if (telemetry) {
            open_http(cp);
            cp->next_export_ms = 0;
        }
        if (cp->diff.logging_changed)
            apply_logging(&cp->cfg->logging);
    }
    log_reload(result);
    return result;
}

/* One histogram hook's family in seconds; -ENOMEM without room for its copy. */
static int metrics_histogram(struct tp_control_plane *cp, struct tp_prom_buf *b,
                             void (*hook)(void *, struct tp_histogram *, double *),
                             const char *name, const char *help)
{
    if (hook == NULL)
        return 0;
    struct tp_histogram *h = malloc(sizeof(*h));
    if (h == NULL)
        return -ENOMEM;
    double scale = 1.0;
    hook(cp->hooks.ctx, h, &scale);
    char labels[160];
    snprintf(labels, sizeof(labels), "instance=\"%s\"", cp->cfg->name);
    tp_prom_histogram(b, name, help, labels, h, scale / 1e9);
    free(h);
    return 0;
}

long tp_control_plane_metrics(struct tp_control_plane *cp, char *buf, size_t size)
{
    struct tp_prom_buf b;
    tp_prom_buf_init(&b, buf, size);
    if (cp->hooks.counters != NULL &&
        tp_prom_counters(&b, cp->hooks.counters, "tickplane", cp->cfg->name) < 0)
        return -ENOMEM;
    if (metrics_histogram(cp, &b, cp->hooks.latency, "tickplane_rx_to_publish_seconds",
                          "Receive (rx_burst) to publish latency; a packet held behind a gap "
                          "counts from its release") != 0 ||
        metrics_histogram(cp, &b, cp->hooks.gap_wait, "tickplane_gap_wait_seconds",
                          "Time packets were held behind a sequence gap, from receipt until the "
                          "gap was filled or given up") != 0)
        return -ENOMEM;
    if (cp->hooks.metrics != NULL)
        cp->hooks.metrics(cp->hooks.ctx, &b);
    tp_prom_build_info(&b, cp->cfg->name, TP_VERSION, TP_COMMIT);
    struct tp_ctl_server_stats s;
    tp_ctl_server_stats(cp->server, &s);
    tp_prom_ctl_stats(&b, cp->cfg->name, &s);
    return b.overflow ? -ENOSPC : (long)b.len;
}

static void export_file(struct tp_control_plane *cp, uint64_t now)
{
    const struct tp_cfg_telemetry *t = &cp->cfg->telemetry;
    if (t->prometheus_file[0] == '\0' || now < cp->next_export_ms)
        return;
    cp->next_export_ms = now + t->interval_ms;
    long n = tp_control_plane_metrics(cp, cp->metrics_buf, METRICS_BUFFER);
    int rc = n < 0 ? (int)n : tp_prom_write_file(t->prometheus_file, cp->metrics_buf, (size_t)n);
    if (rc != 0)
        tp_log(TP_LOG_TELEMETRY, TP_LOG_ERR, "%s: %s", t->prometheus_file, strerror(-rc));
}

void tp_control_plane_poll(struct tp_control_plane *cp, int timeout_ms)
{
    if (cp->reload_requested) {
        cp->reload_requested = 0;
        json_decref(tp_control_plane_reload(cp));
    }
    struct pollfd fds[2 + TP_HTTP_MAX_CLIENTS];
    unsigned n = 0;
    fds[n++] = (struct pollfd){.fd = tp_ctl_server_fd(cp->server), .events = POLLIN};
    if (cp->http != NULL)
        n += tp_http_metrics_pollfds(cp->http, fds + n);
    /* Wake up in time for the next metrics file. */
    uint64_t now = now_ms();
    if (cp->cfg->telemetry.prometheus_file[0] != '\0') {
        uint64_t due = cp->next_export_ms > now ? cp->next_export_ms - now : 0;
        if (timeout_ms < 0 || due < (uint64_t)timeout_ms)
            timeout_ms = (int)due;
    }
    poll(fds, n, timeout_ms);
    tp_ctl_server_poll(cp->server, 0);
    now = now_ms();
    if (cp->http != NULL)
        tp_http_metrics_serve(cp->http, now);
    export_file(cp, now);
}

const struct tp_config *tp_control_plane_config(const struct tp_control_plane *cp)
{
    return cp->cfg;
}

void tp_control_plane_server_stats(struct tp_control_plane *cp, struct tp_ctl_server_stats *out)
{
    tp_ctl_server_stats(cp->server, out);
}

uint16_t tp_control_plane_http_port(const struct tp_control_plane *cp)
{
    return cp->http ? tp_http_metrics_port(cp->http) : 0;
}

void tp_control_plane_close(struct tp_control_plane *cp)
{
    if (cp->server != NULL)
        tp_ctl_server_close(cp->server);
    if (cp->http != NULL)
        tp_http_metrics_close(cp->http);
    free(cp->cfg);
    free(cp->next);
    free(cp->metrics_buf);
    free(cp);
}
