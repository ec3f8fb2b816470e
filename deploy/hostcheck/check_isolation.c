/*
 * CPU isolation checks: the data lcores busy-poll, so the scheduler (isolcpus), the tick
 * (nohz_full) and RCU callbacks (rcu_nocbs) should all keep away from them.
 *
 * The kernel's live view (/sys/devices/system/cpu/isolated, .../nohz_full) wins over the
 * command line when it exists; rcu_nocbs is only on the command line. Since nohz_full cpus are
 * offloaded from RCU callbacks by the kernel too, rcu_nocbs counts them as covered.
 */
#include "checks.h"

#include <string.h>

/* Where the kernel shows one kind of isolation. */
struct isolation_source {
    const char *param;    /* kernel command line parameter */
    const char *sys_file; /* live view in sysfs, NULL when the kernel has none */
    const char *purpose;  /* what it does to the listed cpus, for the detail text */
};

static const struct isolation_source isolcpus_source = {
    "isolcpus", "/sys/devices/system/cpu/isolated", "keeps other tasks off"};
static const struct isolation_source nohz_source = {
    "nohz_full", "/sys/devices/system/cpu/nohz_full", "stops the scheduler tick on"};
static const struct isolation_source rcu_source = {"rcu_nocbs", NULL, "moves RCU callbacks off"};

/*
 * Reads the cpus isolated by one source into set; writes where it came from into origin.
 * Returns 0, or -errno when neither sysfs nor the command line can be read.
 */
static int read_isolated(const struct isolation_source *src, const char *root,
                         struct tp_cpuset *set, const char **origin)
{
    char value[1024];
    int rc;

    if (src->sys_file && tp_host_cpulist(set, root, src->sys_file) == 0) {
        *origin = src->sys_file;
        return 0;
    }
    *origin = "/proc/cmdline";
    tp_cpuset_clear(set);
    rc = tp_hostfs_cmdline_param(value, sizeof(value), root, src->param);
    if (rc < 0)
        return rc;
    if (rc == 1)
        tp_cpuset_parse_list(set, value, strlen(value), true);
    return 0;
}

/* The command that puts `param=cpus` on the kernel command line (replacing any old value). */
static void fix_cmdline(struct tp_check_result *r, const char *param, const char *cpus)
{
    tp_check_fix(r,
                 "sed -i -E 's/ ?%s=[^ \"]*//g; s/^GRUB_CMDLINE_LINUX=\"/&%s=%s /' "
                 "/etc/default/grub && update-grub && reboot",
                 param, param, cpus);
}

/* Compares the data lcores with the cpus one source isolates (shared by the three checks). */
static void check_source(const struct tp_hostcheck_params *p, struct tp_check_result *r,
                         const struct isolation_source *src, const struct tp_cpuset *also)
{
    struct tp_cpuset isolated, missing;
    char data_text[256], iso_text[256], miss_text[256];
    const char *origin;

    if (tp_cpuset_empty(&p->data_lcores)) {
        tp_check_set(r, TP_CHECK_SKIP,
                     "no data lcores configured (give --data-lcores or --config)");
        return;
    }
    if (read_isolated(src, p->root, &isolated, &origin) < 0) {
        tp_check_set(r, TP_CHECK_SKIP, "cannot read the kernel's %s setting (/proc/cmdline)",
                     src->param);
        return;
    }
    if (also)
        tp_cpuset_or(&isolated, &isolated, also);
    tp_cpuset_text(&p->data_lcores, data_text, sizeof(data_text));
    tp_cpuset_text(&isolated, iso_text, sizeof(iso_text));
    tp_cpuset_minus(&missing, &p->data_lcores, &isolated);
    tp_cpuset_text(&missing, miss_text, sizeof(miss_text));

    if (tp_cpuset_empty(&missing)) {
        tp_check_set(r, TP_CHECK_PASS, "data lcores %s are in %s (%s: %s)", data_text, src->param,
                     origin, iso_text);
        return;
    }
    fix_cmdline(r, src->param, data_text);
    if (tp_cpuset_empty(&isolated))
        tp_check_set(r, TP_CHECK_WARN,
                     "no cpu is in %s on this host (%s %s the cpus it lists): data lcores %s "
                     "are not protected",
                     src->param, src->param, src->purpose, data_text);
    else
        tp_check_set(r, TP_CHECK_FAIL,
                     "%s covers %s but not data lcores %s: the isolation is set up for other "
                     "cores than the ones that poll",
                     src->param, iso_text, miss_text);
}

void tp_check_cpu_isolation(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    struct tp_cpuset online, offline;
    char online_text[256], offline_text[256];

    /* A data lcore that is not online stops the daemon at start: say so before isolation. */
    if (!tp_cpuset_empty(&p->data_lcores) &&
        tp_host_cpulist(&online, p->root, "/sys/devices/system/cpu/online") == 0) {
        tp_cpuset_minus(&offline, &p->data_lcores, &online);
        if (!tp_cpuset_empty(&offline)) {
            tp_check_set(r, TP_CHECK_FAIL, "data lcores %s are not online cpus (online: %s)",
                         tp_cpuset_text(&offline, offline_text, sizeof(offline_text)),
                         tp_cpuset_text(&online, online_text, sizeof(online_text)));
            tp_check_fix(r, "choose data lcores among the online cpus %s in the config",
                         online_text);
            return;
        }
    }
    check_source(p, r, &isolcpus_source, NULL);
}

void tp_check_nohz_full(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    check_source(p, r, &nohz_source, NULL);
}

void tp_check_rcu_nocbs(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    struct tp_cpuset nohz;
    const char *origin;

    if (read_isolated(&nohz_source, p->root, &nohz, &origin) < 0)
        tp_cpuset_clear(&nohz);
    check_source(p, r, &rcu_source, &nohz);
}
