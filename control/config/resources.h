/*
 * What a config needs from the host it starts on, checked before anything starts (the daemon,
 * after loading the config and before EAL) and by `tickplanectl check`, each problem with its
 * JSON path. Validation (config.h) cannot do this: a config is validated on other machines too.
 *
 *   bus.path        a directory this user can write, on a file system with room for every
 *                   segment of the instance (the exact bytes needed and free are named)
 *   control.socket  its directory exists and this user can write it; the path is free or a socket
 *   ports[i].pcap   a readable file in pcap or pcapng format (validation reads a preloaded one)
 *   channels[i].schema  readable and the SBE schema the MDP3 decoder was built from
 *   eal.memory_mb   fits the machine: free hugepages, or available memory with no_huge
 *   bus.group, control.group, control.operator_group, control.admin_group: exist on this host
 *
 * So nothing fails later inside DPDK, or with a SIGBUS on a full /dev/shm, for a reason the config
 * shows.
 */
#ifndef TP_CONFIG_RESOURCES_H
#define TP_CONFIG_RESOURCES_H

#include "config.h"

struct tp_bus_params; /* bus/bus.h */

/*
 * Counter slots of the daemon's counters segment for n data lcores: each lcore's own and its bus
 * writer's, and every channel name a reload may bring (dataplane.h's TP_DP_COUNTERS; the daemon
 * asserts that they agree).
 */
#define TP_CFG_BUS_COUNTERS(lcores) (64u + (lcores) * (64u + 4u) + 2u * 64u * 64u)

/* The bus the daemon creates for cfg (group not resolved: (gid_t)-1). */
void tp_config_bus_params(const struct tp_config *cfg, struct tp_bus_params *bp);

/* The daemon's data lcores' rings: one per data lcore, at least one. */
unsigned tp_config_bus_rings(const struct tp_config *cfg);

/*
 * Every check above (tp_config_check_host's groups included). 0, or -EINVAL with each problem
 * in errs (reset first). paths.meminfo and paths.hugepages name the kernel's files (tests give
 * their own); NULL: /proc/meminfo and /sys/kernel/mm/hugepages.
 */
struct tp_resource_paths {
    const char *meminfo;
    const char *hugepages;
};
int tp_config_check_resources(const struct tp_config *cfg, const struct tp_resource_paths *paths,
                              struct tp_config_errors *errs);

#endif /* TP_CONFIG_RESOURCES_H */
