/*
 * Host checks: is this server tuned for a busy-polling data plane?
 *
 * Each check reads the kernel's view of the host (/proc, /sys) and says PASS, WARN, FAIL or SKIP,
 * what it found, and the exact command that fixes it. The `tickplane-doctor` tool prints them;
 * the daemon runs them at start and logs what is not PASS.
 *
 * Promises:
 *  - Every filesystem read goes through params->root ("/" on a real host), so tests run the
 *    checks against fake /proc and /sys trees.
 *  - Checks only read; they never change the host. Fixes are printed, never applied.
 *  - A check that this host cannot answer (no cpufreq in a VM, no port configured, ...) still
 *    runs and returns SKIP with the reason.
 *  - No allocation beyond the stack; results are fixed-size text.
 *
 * Severity:
 *  FAIL  the appliance will not start, will not work as configured, or something is certain to
 *        interrupt the data lcores (NIC on a kernel driver, no hugepages on the NIC's node,
 *        isolation set up on other cores than the data lcores, device IRQs routed to them).
 *  WARN  it runs, with avoidable jitter or risk (no isolation at all, governor, watchdog, ...).
 *  SKIP  cannot be checked here, with the reason.
 * Some checks have no FAIL level (irqbalance, watchdog, vm_stat_interval): they only add jitter.
 */
#ifndef TP_HOSTCHECK_H
#define TP_HOSTCHECK_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "cpuset.h"

#define TP_HOSTCHECK_MAX_PCI 16
#define TP_HOSTCHECK_TEXT    512

enum tp_check_status {
    TP_CHECK_PASS = 0,
    TP_CHECK_SKIP = 1,
    TP_CHECK_WARN = 2,
    TP_CHECK_FAIL = 3,
};
#define TP_CHECK_NSTATUS 4

/* What the checks compare the host against (normally filled from the daemon's config). */
struct tp_hostcheck_params {
    const char *root;                      /* filesystem root: "/" or a test tree */
    struct tp_cpuset data_lcores;          /* cores that busy-poll; empty = none configured */
    const char *pci[TP_HOSTCHECK_MAX_PCI]; /* port PCI addresses, "0000:3b:00.0" form */
    unsigned n_pci;
    uint64_t hugepage_bytes; /* needed on each port's NUMA node; 0 = unknown */
    bool no_hugepages;       /* DPDK runs with --no-huge (tests and demos) */
};

struct tp_check_result {
    const char *name; /* stable identifier, e.g. "cpu_isolation" */
    enum tp_check_status status;
    char detail[TP_HOSTCHECK_TEXT]; /* what was found */
    char fix[TP_HOSTCHECK_TEXT];    /* the command that fixes it; empty when PASS or SKIP */
};

#define TP_HOSTCHECK_NCHECKS 15

struct tp_hostcheck_report {
    struct tp_check_result results[TP_HOSTCHECK_NCHECKS];
    unsigned n;
    unsigned count[TP_CHECK_NSTATUS]; /* results per status */
};

/* Sets defaults: root "/", no data lcores, no ports, no hugepage requirement. */
void tp_hostcheck_params_init(struct tp_hostcheck_params *params);

/* Runs every check, in a fixed order. */
void tp_hostcheck_run(const struct tp_hostcheck_params *params, struct tp_hostcheck_report *report);

/* Runs the check called `name`; -ENOENT if there is no such check. */
int tp_hostcheck_run_one(const char *name, const struct tp_hostcheck_params *params,
                         struct tp_check_result *result);

/* Names of all checks in run order; *n receives their count. */
const char *const *tp_hostcheck_names(unsigned *n);

/*
 * Where hugepages must be reserved: one (NUMA node, MiB) pair per node that holds a PCI port
 * (node 0 when no port is configured or the firmware does not say), each asking for the whole
 * requirement since EAL allocates a port's pools on its node. Nothing when params->no_hugepages.
 * Returns the number of pairs written (at most max).
 */
unsigned tp_hostcheck_hugepage_plan(const struct tp_hostcheck_params *params, unsigned *nodes,
                                    uint64_t *mib, unsigned max);

/* "PASS", "SKIP", "WARN", "FAIL". */
const char *tp_check_status_name(enum tp_check_status status);

/* Human-readable report: one line per check, then its fix indented. With min_status WARN only
 * warnings and failures are printed (what the daemon logs at start). */
void tp_hostcheck_print_text(FILE *out, const struct tp_hostcheck_report *report,
                             enum tp_check_status min_status);

/* Machine-readable report: one JSON object {"checks":[...],"summary":{...}}. Returns 0, -ENOMEM or
 * -EIO. */
int tp_hostcheck_print_json(FILE *out, const struct tp_hostcheck_report *report);

#endif
