/*
 * Periodic kernel work that interrupts every cpu: the lockup watchdogs (a timer every few
 * seconds, plus a perf NMI for the hard-lockup detector) and the vmstat update
 * (every vm.stat_interval seconds).
 */
#include "checks.h"

#define STAT_INTERVAL_MIN 10 /* seconds: the vmstat worker then wakes rarely enough */

void tp_check_watchdog(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    struct tp_cpuset watched, hit;
    char text[256];
    long watchdog, nmi = 0;

    if (tp_hostfs_read_long(&watchdog, p->root, "/proc/sys/kernel/watchdog") < 0) {
        tp_check_set(r, TP_CHECK_SKIP, "cannot read /proc/sys/kernel/watchdog");
        return;
    }
    tp_hostfs_read_long(&nmi, p->root, "/proc/sys/kernel/nmi_watchdog");
    if (watchdog == 0) {
        tp_check_set(r, TP_CHECK_PASS, "lockup watchdogs are off (kernel.watchdog=0)");
        return;
    }
    /* watchdog_cpumask limits both detectors; with nohz_full it defaults to housekeeping cpus. */
    if (!tp_cpuset_empty(&p->data_lcores) &&
        tp_host_cpulist(&watched, p->root, "/proc/sys/kernel/watchdog_cpumask") == 0) {
        tp_cpuset_and(&hit, &watched, &p->data_lcores);
        if (tp_cpuset_empty(&hit)) {
            tp_check_set(r, TP_CHECK_PASS, "watchdogs run only on cpus %s, not on the data lcores",
                         tp_cpuset_text(&watched, text, sizeof(text)));
            return;
        }
    }
    tp_check_set(
        r, TP_CHECK_WARN,
        "lockup watchdog is on (kernel.watchdog=1, nmi_watchdog=%ld): a timer%s interrupts "
        "%s every few seconds",
        nmi, nmi ? " and a perf NMI" : "",
        tp_cpuset_empty(&p->data_lcores) ? "every cpu" : "the data lcores");
    tp_check_fix(r,
                 "sysctl -w kernel.watchdog=0 kernel.nmi_watchdog=0 && printf 'kernel.watchdog = "
                 "0\\nkernel.nmi_watchdog = 0\\n' > /etc/sysctl.d/90-tickplane-watchdog.conf");
}

void tp_check_vm_stat_interval(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    long interval;

    if (tp_hostfs_read_long(&interval, p->root, "/proc/sys/vm/stat_interval") < 0) {
        tp_check_set(r, TP_CHECK_SKIP, "cannot read /proc/sys/vm/stat_interval");
        return;
    }
    if (interval >= STAT_INTERVAL_MIN) {
        tp_check_set(r, TP_CHECK_PASS, "vm.stat_interval is %ld s", interval);
        return;
    }
    tp_check_set(r, TP_CHECK_WARN,
                 "vm.stat_interval is %ld s: the vmstat worker interrupts cpus that often "
                 "(want >= %d s)",
                 interval, STAT_INTERVAL_MIN);
    tp_check_fix(r,
                 "sysctl -w vm.stat_interval=%d && echo 'vm.stat_interval = %d' > "
                 "/etc/sysctl.d/90-tickplane-vmstat.conf",
                 STAT_INTERVAL_MIN, STAT_INTERVAL_MIN);
}
