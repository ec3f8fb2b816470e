/* DPDK telemetry commands: see dpdk_telemetry.h. */
#include "dpdk_telemetry.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_telemetry.h>

static struct tp_telemetry_sources sources;

static int counters_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
    (void)cmd;
    const struct tp_counters *c = sources.counters;
    rte_tel_data_start_dict(d);
    if (c == NULL)
        return 0;
    const char *prefix = params ? params : "";
    uint32_t n = atomic_load_explicit(&c->count, memory_order_acquire);
    if (n > c->capacity)
        n = c->capacity;
    unsigned added = 0;
    for (uint32_t i = 0; i < n && added < RTE_TEL_MAX_DICT_ENTRIES; i++) {
        char name[TP_COUNTER_NAME_LEN + 1];
        memcpy(name, c->slots[i].name, TP_COUNTER_NAME_LEN);
        name[TP_COUNTER_NAME_LEN] = '\0';
        if (name[0] == '\0' || strncmp(name, prefix, strlen(prefix)) != 0)
            continue; /* the prefix matches the counter's own name, dots included */
        /* DPDK telemetry keys allow only [A-Za-z0-9_/]: "bus.ring.x" becomes "bus_ring_x". */
        for (char *p = name; *p != '\0'; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                  (*p >= '0' && *p <= '9') || *p == '_' || *p == '/'))
                *p = '_';
        if (rte_tel_data_add_dict_u64(d, name, tp_counter_get(&c->slots[i])) == 0)
            added++;
    }
    return 0;
}

static int latency_cmd(const char *cmd, const char *params, struct rte_tel_data *d)
{
    (void)cmd;
    (void)params;
    rte_tel_data_start_dict(d);
    if (sources.latency == NULL)
        return 0;
    struct tp_histogram *h = malloc(sizeof(*h));
    if (h == NULL)
        return -ENOMEM;
    double scale = 1.0;
    sources.latency(sources.ctx, h, &scale);
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
        rc = rte_telemetry_register_cmd("/tickplane/control", control_cmd,
                                        "tickplane control socket counters");
    return rc;
}
