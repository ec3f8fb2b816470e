/*
 * Internal to the host checks: the check functions and the helpers they share.
 * Each check fills one result: status, what it found (detail) and the fix command.
 */
#ifndef TP_HOSTCHECK_CHECKS_H
#define TP_HOSTCHECK_CHECKS_H

#include "hostcheck.h"
#include "hostfs.h"

typedef void tp_check_fn(const struct tp_hostcheck_params *params, struct tp_check_result *result);

/* Sets the status and the detail text (printf-style). */
void tp_check_set(struct tp_check_result *result, enum tp_check_status status, const char *fmt, ...)
    TP_PRINTF(3, 4);
/* Sets the fix text (printf-style). */
void tp_check_fix(struct tp_check_result *result, const char *fmt, ...) TP_PRINTF(2, 3);

/* Reads a cpu list file (e.g. /sys/devices/system/cpu/online). Returns 0 or -errno. */
int tp_host_cpulist(struct tp_cpuset *set, const char *root, const char *path);

/* Housekeeping cpus: online cpus that are not data lcores. Returns 0 or -errno. */
int tp_host_housekeeping(struct tp_cpuset *set, const struct tp_hostcheck_params *params);

/* NUMA node of a PCI device: >= 0, -1 when the firmware does not say, -errno if unreadable. */
int tp_host_pci_numa_node(const char *root, const char *pci);

/* Number of NUMA nodes the kernel knows (1 on a non-NUMA kernel). */
unsigned tp_host_numa_nodes(const char *root);

/* Formats a cpu set as a list, "none" when empty (for detail texts). */
const char *tp_cpuset_text(const struct tp_cpuset *set, char *buf, size_t size);

tp_check_fn tp_check_cpu_isolation;
tp_check_fn tp_check_nohz_full;
tp_check_fn tp_check_rcu_nocbs;
tp_check_fn tp_check_cpu_governor;
tp_check_fn tp_check_irqbalance;
tp_check_fn tp_check_irq_affinity;
tp_check_fn tp_check_watchdog;
tp_check_fn tp_check_vm_stat_interval;
tp_check_fn tp_check_clocksource;
tp_check_fn tp_check_tsc_invariant;
tp_check_fn tp_check_thp;
tp_check_fn tp_check_hugepages;
tp_check_fn tp_check_memlock;
tp_check_fn tp_check_nic_driver;
tp_check_fn tp_check_numa_locality;

#endif
