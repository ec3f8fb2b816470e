/*
 * The "ports" section: each port's name, its device (exactly one of pci, vdev or pcap), rx queues,
 * descriptor counts, mbuf pool, MTU, promiscuous mode, NIC timestamps, address and, for a pcap
 * port, a capture to preload. Validates the ranges (descriptor counts a power of two, the mbuf
 * cache within the pool), that names and devices are unique and that a capture to preload can be
 * read; port_ref resolves the port names the other sections cite.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config_loader.h"
#include "preload_plan.h"

/*
 * A capture to preload: its frames, its largest frame's bytes and the memory the preload takes
 * (preload_plan.h, the rule dataplane/ports/preload.c creates its pools by). NULL, or why it
 * cannot be preloaded (in why).
 */
static const char *scan_pcap(struct tp_cfg_port *port, char *why, size_t why_len)
{
    FILE *f = fopen(port->pcap, "rb");
    if (f == NULL)
        return strerror(errno);
    struct tp_preload_plan plan;
    int rc = tp_preload_plan_scan(&plan, f, why, why_len);
    fclose(f);
    port->preload_frames = plan.frames;
    port->preload_max_frame = plan.max_frame;
    port->preload_bytes = tp_preload_plan_bytes(&plan);
    return rc == 0 ? NULL : why;
}

/* "preload": a pcap port only, one rx queue (one ring), a readable capture. */
static void parse_preload(struct loader *ld, const char *path, struct tp_cfg_port *port,
                          unsigned index)
{
    char child[TP_JW_PATH_MAX];
    tp_jw_path_key(child, path, "preload");
    if (port->kind != TP_CFG_PORT_PCAP) {
        tp_jw_error(ld->errs, child, "only a \"pcap\" port can be preloaded");
        return;
    }
    if (port->rx_queues != 1)
        tp_jw_error(ld->errs, child, "a preloaded port has one rx queue, not %u", port->rx_queues);
    if (port->pcap[0] == '\0')
        return;
    /* The daemon creates it with rte_eth_from_rings, which names it "net_ring_<name>". */
    snprintf(port->dev_name, sizeof(port->dev_name), "net_ring_preload%u", index);
    port->device[0] = '\0';
    char why_buf[160];
    const char *why = scan_pcap(port, why_buf, sizeof(why_buf));
    if (why != NULL)
        tp_jw_error(ld->errs, child, "cannot preload \"%s\": %s", port->pcap, why);
}

static void parse_port(struct loader *ld, const char *path, const json_t *obj, unsigned index)
{
    static const char *const keys[] = {"name",
                                       "pci",
                                       "vdev",
                                       "pcap",
                                       "rx_queues",
                                       "rx_descriptors",
                                       "tx_descriptors",
                                       "mbuf_pool_size",
                                       "mbuf_cache_size",
                                       "mtu",
                                       "promiscuous",
                                       "nic_timestamps",
                                       "ipv4",
                                       "preload",
                                       NULL};
    struct tp_cfg_port *port = &ld->cfg->ports[index];
    /* Field by field on zeroed memory: reload compares sections with memcmp, padding included. */
    memset(port, 0, sizeof(*port));
    port->rx_queues = 1;
    port->rx_descriptors = 1024;
    port->tx_descriptors = 512;
    port->mbuf_pool_size = 8191;
    port->mbuf_cache_size = 256;
    port->mtu = 1500;
    port->nic_timestamps = true;
    tp_jw_check_keys(ld->errs, path, obj, keys);
    char child[TP_JW_PATH_MAX];
    get_name(ld, path, obj, "name", true, port->name, sizeof(port->name));

    unsigned kinds = (json_object_get(obj, "pci") != NULL) +
                     (json_object_get(obj, "vdev") != NULL) +
                     (json_object_get(obj, "pcap") != NULL);
    if (kinds != 1) {
        tp_jw_error(ld->errs, path, "needs exactly one of \"pci\", \"vdev\" or \"pcap\"");
        ld->ports_ok = false;
    } else if (json_object_get(obj, "pci") != NULL) {
        port->kind = TP_CFG_PORT_PCI;
        if (tp_jw_string(ld->errs, path, obj, "pci", sizeof(port->pci), true, port->pci))
            memcpy(port->dev_name, port->pci, sizeof(port->dev_name));
    } else if (json_object_get(obj, "vdev") != NULL) {
        port->kind = TP_CFG_PORT_VDEV;
        if (tp_jw_string(ld->errs, path, obj, "vdev", sizeof(port->device), true, port->device)) {
            size_t len = strcspn(port->device, ",");
            tp_jw_path_key(child, path, "vdev");
            if (len >= sizeof(port->dev_name))
                tp_jw_error(ld->errs, child, "device name is longer than %zu bytes",
                            sizeof(port->dev_name) - 1);
            else
                memcpy(port->dev_name, port->device, len);
        }
    } else {
        port->kind = TP_CFG_PORT_PCAP;
        char file[TP_CFG_PATH_MAX];
        if (get_path(ld, path, obj, "pcap", true, false, file, sizeof(file))) {
            snprintf(port->dev_name, sizeof(port->dev_name), "net_pcap%u", index);
            snprintf(port->device, sizeof(port->device), "net_pcap%u,rx_pcap=%s", index, file);
            /* Only up to the NUL: reload compares ports with memcmp, and file is on the stack. */
            snprintf(port->pcap, sizeof(port->pcap), "%s", file);
        }
    }

    uint64_t v;
    if (tp_jw_uint(ld->errs, path, obj, "rx_queues", 1, 64, false, &v))
        port->rx_queues = (uint16_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "rx_descriptors", 64, 16384, false, &v)) {
        tp_jw_path_key(child, path, "rx_descriptors");
        if (is_power_of_two(v))
            port->rx_descriptors = (uint16_t)v;
        else
            tp_jw_error(ld->errs, child, "must be a power of two, got %llu", (unsigned long long)v);
    }
    if (tp_jw_uint(ld->errs, path, obj, "tx_descriptors", 64, 16384, false, &v)) {
        tp_jw_path_key(child, path, "tx_descriptors");
        if (is_power_of_two(v))
            port->tx_descriptors = (uint16_t)v;
        else
            tp_jw_error(ld->errs, child, "must be a power of two, got %llu", (unsigned long long)v);
    }
    if (tp_jw_uint(ld->errs, path, obj, "mbuf_pool_size", 1023, 1u << 24, false, &v))
        port->mbuf_pool_size = (uint32_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "mbuf_cache_size", 0, 512, false, &v))
        port->mbuf_cache_size = (uint16_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "mtu", 68, 9600, false, &v))
        port->mtu = (uint16_t)v;
    tp_jw_bool(ld->errs, path, obj, "promiscuous", false, &port->promiscuous);
    tp_jw_bool(ld->errs, path, obj, "nic_timestamps", false, &port->nic_timestamps);
    tp_jw_ipv4(ld->errs, path, obj, "ipv4", TP_JW_ADDR_UNICAST, false, &port->ipv4);

    /* DPDK's mempool rule: the per-core cache may hold at most 2/3 of the pool. */
    if ((uint64_t)port->mbuf_cache_size * 3 > (uint64_t)port->mbuf_pool_size * 2) {
        tp_jw_path_key(child, path, "mbuf_cache_size");
        tp_jw_error(ld->errs, child, "%u is more than 2/3 of mbuf_pool_size %u",
                    port->mbuf_cache_size, port->mbuf_pool_size);
    }
    /* Every descriptor of every queue holds an mbuf, plus a burst in flight. */
    uint64_t needed = (uint64_t)port->rx_queues * port->rx_descriptors + port->tx_descriptors + 64;
    if (port->mbuf_pool_size < needed) {
        tp_jw_path_key(child, path, "mbuf_pool_size");
        tp_jw_error(ld->errs, child,
                    "%u mbufs cannot fill %u rx queues x %u descriptors (need at least %llu)",
                    port->mbuf_pool_size, port->rx_queues, port->rx_descriptors,
                    (unsigned long long)needed);
    }
    tp_jw_bool(ld->errs, path, obj, "preload", false, &port->preload);
    if (port->preload)
        parse_preload(ld, path, port, index);
}

/* One ports[] element, checked against the ports before it. */
void parse_ports_item(struct loader *ld, const char *path, const json_t *obj)
{
    struct tp_config *cfg = ld->cfg;
    unsigned before = ld->errs->count;
    parse_port(ld, path, obj, cfg->n_ports);
    if (ld->errs->count != before)
        ld->ports_ok = false;
    for (unsigned j = 0; j < cfg->n_ports; j++) {
        char child[TP_JW_PATH_MAX];
        if (cfg->ports[cfg->n_ports].name[0] != '\0' &&
            strcmp(cfg->ports[j].name, cfg->ports[cfg->n_ports].name) == 0) {
            tp_jw_path_key(child, path, "name");
            tp_jw_error(ld->errs, child, "duplicate port name \"%s\" (also ports[%u])",
                        cfg->ports[j].name, j);
            ld->ports_ok = false;
        }
        if (cfg->ports[cfg->n_ports].dev_name[0] != '\0' &&
            strcmp(cfg->ports[j].dev_name, cfg->ports[cfg->n_ports].dev_name) == 0) {
            tp_jw_error(ld->errs, path, "device \"%s\" is already ports[%u]",
                        cfg->ports[j].dev_name, j);
            ld->ports_ok = false;
        }
    }
    cfg->n_ports++;
}

/* Resolve a port name at path to its index; -1 (with an error) if unknown. */
int port_ref(struct loader *ld, const char *path, const char *name)
{
    int idx = tp_config_port_index(ld->cfg, name);
    if (idx < 0 && ld->ports_ok) {
        const char *names[TP_CFG_MAX_PORTS + 1];
        NAME_LIST(names, ld->cfg->ports, ld->cfg->n_ports);
        unknown_name(ld, path, "port", name, names);
    }
    return idx;
}
