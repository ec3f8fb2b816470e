/* DPDK telemetry commands: see dpdk_telemetry.h. */
#include "dpdk_telemetry.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

static struct tp_telemetry_sources sources;

/* DPDK telemetry keys allow only [A-Za-z0-9_/]: "bus.ring.x" becomes "bus_ring_x". */
static void telemetry_key(char *name)
{
    for (char *p = name; *p != '\0'; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
              *p == '_' || *p == '/'))
            *p = '_';
}

/* A counter's name, copied bounded (the area may be another process's mapping). */
static void counter_name(const struct tp_counters *c, uint32_t i, char out[TP_COUNTER_NAME_LEN + 1])
{
    memcpy(out, c->slots[i].name, TP_COUNTER_NAME_LEN);
    out[TP_COUNTER_NAME_LEN] = '\0';
}

static uint32_t counters_count(const struct tp_counters *c)
{
    uint32_t n = atomic_load_explicit(&c->count, memory_order_acquire);
    return n > c->capacity ? c->capacity : n;
}

static int counters_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
    (void)cmd;
    const struct tp_counters *c = sources.counters;
    rte_tel_data_start_dict(d);
    if (c == NULL)
        return 0;
    const char *prefix = params ? params : "";
    uint32_t n = counters_count(c);
    unsigned added = 0;
    for (uint32_t i = 0; i < n && added < RTE_TEL_MAX_DICT_ENTRIES; i++) {
        char name[TP_COUNTER_NAME_LEN + 1];
        counter_name(c, i, name);
        if (name[0] == '\0' || strncmp(name, prefix, strlen(prefix)) != 0)
            continue; /* the prefix matches the counter's own name, dots included */
        telemetry_key(name);
        if (rte_tel_data_add_dict_u64(d, name, tp_counter_get(&c->slots[i])) == 0)
            added++;
    }
    return 0;
}

/* Whether counter i is "channel=LABEL." for the first LLEN characters of label. */
static bool of_channel(const struct tp_counters *c, uint32_t i, const char *label, size_t llen,
                       const char **rest)
{
    static const char tag[] = "channel=";
    static char name[TP_COUNTER_NAME_LEN + 1];
    counter_name(c, i, name);
    *rest = name + sizeof(tag) - 1;
    return strncmp(name, tag, sizeof(tag) - 1) == 0 && strncmp(*rest, label, llen) == 0 &&
           (*rest)[llen] == '.';
}

/* "channel=X.rest": X's counters, grouped under X, keyed by rest. */
static int channels_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
    (void)cmd;
    (void)params;
    rte_tel_data_start_dict(d);
    const struct tp_counters *c = sources.counters;
    if (c == NULL)
        return 0;
    static const char tag[] = "channel=";
    uint32_t n = counters_count(c);
    for (uint32_t i = 0; i < n; i++) {
        char label[TP_COUNTER_NAME_LEN + 1];
        counter_name(c, i, label);
        if (strncmp(label, tag, sizeof(tag) - 1) != 0)
            continue;
        memmove(label, label + sizeof(tag) - 1, strlen(label) - (sizeof(tag) - 1) + 1);
        size_t llen = strcspn(label, ".");
        label[llen] = '\0';
        const char *rest;
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = of_channel(c, j, label, llen, &rest);
        if (seen)
            continue; /* this channel's dict is out already */
        struct rte_tel_data *ch = rte_tel_data_alloc();
        if (ch == NULL)
            return -ENOMEM;
        rte_tel_data_start_dict(ch);
        for (uint32_t j = i; j < n; j++) {
            if (!of_channel(c, j, label, llen, &rest))
                continue;
            char key[TP_COUNTER_NAME_LEN + 1];
            snprintf(key, sizeof(key), "%s", rest + llen + 1);
            telemetry_key(key);
            rte_tel_data_add_dict_u64(ch, key, tp_counter_get(&c->slots[j]));
        }
        telemetry_key(label);
        if (rte_tel_data_add_dict_container(d, label, ch, 0) != 0)
            rte_tel_data_free(ch);
    }
    return 0;
}

static int consumers_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
    (void)cmd;
    (void)params;
    rte_tel_data_start_dict(d);
    if (sources.consumers == NULL)
        return 0;
    static struct tp_telemetry_consumer list[64];
    unsigned n = sources.consumers(sources.ctx, list, 64);
    for (unsigned i = 0; i < n; i++) {
        struct rte_tel_data *k = rte_tel_data_alloc();
        if (k == NULL)
            return -ENOMEM;
        rte_tel_data_start_dict(k);
        rte_tel_data_add_dict_u64(k, "records", list[i].records);
        rte_tel_data_add_dict_u64(k, "lag", list[i].lag);
        rte_tel_data_add_dict_u64(k, "lapped", list[i].lapped);
        rte_tel_data_add_dict_u64(k, "lost", list[i].lost);
        rte_tel_data_add_dict_u64(k, "resyncs", list[i].resyncs);
        char pid[16];
        snprintf(pid, sizeof(pid), "%d", list[i].pid);
        if (rte_tel_data_add_dict_container(d, pid, k, 0) != 0)
            rte_tel_data_free(k);
    }
    return 0;
}

/* A histogram source's summary in ns (an empty dict without the source). */
static int histogram_dict(void (*source)(void *, struct tp_histogram *, double *),
                          struct rte_tel_data *d)
{
    rte_tel_data_start_dict(d);
    if (source == NULL)
        return 0;
    struct tp_histogram *h = malloc(sizeof(*h));
    if (h == NULL)
        return -ENOMEM;
    double scale = 1.0;
    source(sources.ctx, h, &scale);
    static const struct {
        const char *name;
        double p;
    } rows[] = {{"p50_ns", 50.0},
                {"p90_ns", 90.0},
                {"p99_ns", 99.0},
                {"p999_ns", 99.9},
                {"p9999_ns", 99.99}};
    rte_tel_data_add_dict_u64(d, "count", h->count);
    rte_tel_data_add_dict_u64(d, "min_ns", h->count ? (uint64_t)((double)h->min * scale) : 0);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        rte_tel_data_add_dict_u64(d, rows[i].name,
                                  (uint64_t)((double)tp_hist_percentile(h, rows[i].p) * scale));
    rte_tel_data_add_dict_u64(d, "max_ns", (uint64_t)((double)h->max * scale));
    free(h);
    return 0;
}

static int latency_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
    (void)cmd;
    (void)params;
    return histogram_dict(sources.latency, d);
}

static int gap_wait_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
    (void)cmd;
    (void)params;
    return histogram_dict(sources.gap_wait, d);
}

static int control_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
    (void)cmd;
    (void)params;
    rte_tel_data_start_dict(d);
    if (sources.control == NULL)
        return 0;
    struct tp_ctl_server_stats s;
    sources.control(sources.ctx, &s);
    const struct {
        const char *name;
        uint64_t v;
    } rows[] = {{"clients", s.clients},
                {"subscriptions", s.subscriptions},
                {"accepted", s.accepted},
                {"rejected_full", s.rejected_full},
                {"requests", s.requests},
                {"errors", s.errors},
                {"bad_requests", s.bad_requests},
                {"lines_too_long", s.lines_too_long},
                {"rate_limited", s.rate_limited},
                {"refused", s.refused},
                {"slow_disconnects", s.slow_disconnects},
                {"commands_sent", s.commands_sent},
                {"commands_deferred", s.commands_deferred},
                {"commands_lost", s.commands_lost}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        rte_tel_data_add_dict_u64(d, rows[i].name, rows[i].v);
    return 0;
}

int tp_dpdk_telemetry_register(const struct tp_telemetry_sources *src)
{
    sources = *src;
    int rc = rte_telemetry_register_cmd("/tickplane/counters", counters_cmd,
                                        "tickplane shared counters. Parameter: name prefix");
    if (rc == 0)
        rc = rte_telemetry_register_cmd("/tickplane/latency", latency_cmd,
                                        "tickplane receive-to-publish latency (ns)");
    if (rc == 0)
        rc = rte_telemetry_register_cmd("/tickplane/gap_wait", gap_wait_cmd,
                                        "tickplane time packets waited behind a gap (ns)");
    if (rc == 0)
        rc = rte_telemetry_register_cmd("/tickplane/control", control_cmd,
                                        "tickplane control socket counters");
    if (rc == 0)
        rc = rte_telemetry_register_cmd("/tickplane/channels", channels_cmd,
                                        "tickplane counters per channel");
    if (rc == 0)
        rc = rte_telemetry_register_cmd("/tickplane/consumers", consumers_cmd,
                                        "tickplane bus consumers: records, lag, lapped, lost");
    return rc;
}
