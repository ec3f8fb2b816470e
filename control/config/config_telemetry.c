/*
 * The "telemetry" section (metrics): the Prometheus text file, HTTP port and listening address,
 * the update interval and whether DPDK telemetry is on. Validates the ranges and that the address
 * is a unicast host address (or 0.0.0.0 for every interface).
 */
#include <string.h>

#include "config_loader.h"

void parse_telemetry(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"prometheus_file", "prometheus_port", "prometheus_address",
                                       "interval_ms",     "dpdk_telemetry",  NULL};
    struct tp_cfg_telemetry *t = &ld->cfg->telemetry;
    t->interval_ms = 1000;
    t->prometheus_address = 0x7f000001; /* loopback: metrics are not for the whole network */
    t->dpdk_telemetry = true;
    json_t *obj = tp_jw_get(ld->errs, "", root, "telemetry", JSON_OBJECT, false);
    if (obj == NULL)
        return;
    tp_jw_check_keys(ld->errs, "telemetry", obj, keys);
    get_path(ld, "telemetry", obj, "prometheus_file", false, false, t->prometheus_file,
             sizeof(t->prometheus_file));
    uint64_t v;
    if (tp_jw_uint(ld->errs, "telemetry", obj, "prometheus_port", 1, 65535, false, &v))
        t->prometheus_port = (uint16_t)v;
    if (tp_jw_uint(ld->errs, "telemetry", obj, "interval_ms", 100, 3600000, false, &v))
        t->interval_ms = (uint32_t)v;
    tp_jw_bool(ld->errs, "telemetry", obj, "dpdk_telemetry", false, &t->dpdk_telemetry);
    /* "0.0.0.0" listens on every interface; otherwise one host address of this machine. */
    const json_t *addr = json_object_get(obj, "prometheus_address");
    if (json_is_string(addr) && strcmp(json_string_value(addr), "0.0.0.0") == 0)
        t->prometheus_address = 0;
    else
        tp_jw_ipv4(ld->errs, "telemetry", obj, "prometheus_address", TP_JW_ADDR_UNICAST, false,
                   &t->prometheus_address);
}
