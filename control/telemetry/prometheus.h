/*
 * Prometheus text exposition (format 0.0.4) of tickplane's counters and latency histograms, for
 * the `metrics` control verb, the textfile collector file and an HTTP scrape.
 *
 * Counter names in the shared counters area are dot-separated; a segment "key=value" becomes a
 * label, the other segments make the metric name:
 *     "line.channel=cme-901.side=a.received"  ->
 * tickplane_line_received_total{channel="cme-901",side="a"} Characters outside [a-zA-Z0-9_] in
 * names become '_'; label values are escaped. Metrics of one family are written together under one
 * # HELP and # TYPE line, as the format requires, so `promtool check metrics` finds nothing to
 * say. Counters are Prometheus counters (suffix _total) except the few that can fall (a peak, a
 * consumer's lag), which are gauges; histograms are Prometheus histograms in seconds, with
 * cumulative buckets from 1 us to 10 s that dashboards can rate over any window.
 *
 * Output goes into a caller's fixed buffer; nothing is allocated except a sort index.
 */
#ifndef TP_PROMETHEUS_H
#define TP_PROMETHEUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bus/counters.h"
#include "server.h"
#include "util/histogram.h"

struct tp_prom_buf {
    char *data;
    size_t size;
    size_t len;    /* bytes written (data is always NUL-terminated) */
    bool overflow; /* something did not fit: the output is incomplete */
};

void tp_prom_buf_init(struct tp_prom_buf *b, char *mem, size_t size);

/*
 * Split a counter name into a metric family (prefix + "_" + name segments, sanitized) and a label
 * list ('key="value",...' without braces, "" if none). Returns 0, or -EINVAL for a name with no
 * metric segment or a bad label key.
 */
int tp_prom_split_name(const char *counter_name, const char *prefix, char *family,
                       size_t family_size, char *labels, size_t labels_size);

/*
 * Every registered counter of the area as "<prefix>_<name>_total{labels,instance="..."} value"
 * (a gauge without "_total"), each family under its # HELP and # TYPE lines.
 * Reads names defensively (the area may be a mapping of another process). Returns the number of
 * counters written, or -ENOMEM.
 */
int tp_prom_counters(struct tp_prom_buf *b, const struct tp_counters *c, const char *prefix,
                     const char *instance);

/* A histogram (name ending in _seconds); values are multiplied by seconds_per_unit. */
void tp_prom_histogram(struct tp_prom_buf *b, const char *name, const char *help,
                       const char *labels, const struct tp_histogram *h, double seconds_per_unit);

/* A family's "# HELP" and "# TYPE" lines, then its samples: family{labels,instance="I"} value. */
void tp_prom_family(struct tp_prom_buf *b, const char *family, const char *type, const char *help);
void tp_prom_sample(struct tp_prom_buf *b, const char *family, const char *labels,
                    const char *instance, uint64_t value);

/* tickplane_build_info{version,commit,instance} 1. */
void tp_prom_build_info(struct tp_prom_buf *b, const char *instance, const char *version,
                        const char *commit);

/* The control socket's own counters (tickplane_control_*). */
void tp_prom_ctl_stats(struct tp_prom_buf *b, const char *instance,
                       const struct tp_ctl_server_stats *s);

/* Write text to path atomically (temporary file in the same directory, then rename). 0 or -errno.
 */
int tp_prom_write_file(const char *path, const char *text, size_t len);

#endif /* TP_PROMETHEUS_H */
