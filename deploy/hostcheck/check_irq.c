/*
 * Interrupts and the data lcores. A device interrupt on a busy-polling core costs several
 * microseconds of jitter each time, so device IRQs belong on the housekeeping cpus. irqbalance
 * moves IRQs around at run time and undoes manual affinity unless told to ban the data lcores.
 */
#include "checks.h"

#include <ctype.h>
#include <string.h>

#define LISTED_IRQS 8 /* IRQ numbers named in the detail text; the rest are only counted */

static bool all_digits(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return false;
    return true;
}

/* Is a process called irqbalance running? Scans /proc/<pid>/comm. */
static bool irqbalance_running(const char *root)
{
    DIR *dir = tp_hostfs_opendir(root, "/proc");
    struct dirent *e;
    char comm[64];
    bool found = false;

    if (!dir)
        return false;
    while (!found && (e = readdir(dir)) != NULL)
        if (all_digits(e->d_name) &&
            tp_hostfs_read(comm, sizeof(comm), root, "/proc/%s/comm", e->d_name) >= 0)
            found = strcmp(comm, "irqbalance") == 0;
    closedir(dir);
    return found;
}

/*
 * Cpus irqbalance is told to leave alone: IRQBALANCE_BANNED_CPULIST in /etc/default/irqbalance
 * (Debian's environment file for the service), optionally quoted.
 */
static void irqbalance_banned(const char *root, struct tp_cpuset *banned)
{
    static const char key[] = "IRQBALANCE_BANNED_CPULIST=";
    FILE *f = tp_hostfs_fopen(root, "/etc/default/irqbalance");
    char line[512];

    tp_cpuset_clear(banned);
    if (!f)
        return;
    while (fgets(line, sizeof(line), f)) {
        char *value = line + strspn(line, " \t");
        size_t len;

        if (strncmp(value, key, sizeof(key) - 1) != 0)
            continue;
        value += sizeof(key) - 1;
        len = strcspn(value, "\n#");
        if (len >= 2 && (value[0] == '"' || value[0] == '\'')) {
            value++;
            len = strcspn(value, "\"'\n");
        }
        tp_cpuset_parse_list(banned, value, len, false);
    }
    fclose(f);
}

void tp_check_irqbalance(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    struct tp_cpuset banned;
    char text[256];

    if (tp_cpuset_empty(&p->data_lcores)) {
        tp_check_set(r, TP_CHECK_SKIP,
                     "no data lcores configured (give --data-lcores or --config)");
        return;
    }
    if (!irqbalance_running(p->root)) {
        tp_check_set(r, TP_CHECK_PASS, "irqbalance is not running");
        return;
    }
    irqbalance_banned(p->root, &banned);
    if (tp_cpuset_contains(&banned, &p->data_lcores)) {
        tp_check_set(r, TP_CHECK_PASS, "irqbalance runs with data lcores banned (%s)",
                     tp_cpuset_text(&banned, text, sizeof(text)));
        return;
    }
    tp_cpuset_text(&p->data_lcores, text, sizeof(text));
    tp_check_set(r, TP_CHECK_WARN, "irqbalance is running and may move IRQs onto data lcores %s",
                 text);
    tp_check_fix(r,
                 "systemctl disable --now irqbalance (or: echo IRQBALANCE_BANNED_CPULIST=%s >> "
                 "/etc/default/irqbalance && systemctl restart irqbalance)",
                 text);
}

void tp_check_irq_affinity(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    struct tp_cpuset housekeeping, allowed, hit, default_set;
    char text[1024], house_text[256], mask[300], listed[128] = "";
    unsigned on_data = 0, seen = 0;
    size_t listed_len = 0;
    DIR *dir;
    struct dirent *e;

    if (tp_cpuset_empty(&p->data_lcores)) {
        tp_check_set(r, TP_CHECK_SKIP,
                     "no data lcores configured (give --data-lcores or --config)");
        return;
    }
    dir = tp_hostfs_opendir(p->root, "/proc/irq");
    if (!dir) {
        tp_check_set(r, TP_CHECK_SKIP, "cannot read /proc/irq");
        return;
    }
    while ((e = readdir(dir)) != NULL) {
        if (!all_digits(e->d_name))
            continue;
        int len = tp_hostfs_read(text, sizeof(text), p->root, "/proc/irq/%s/smp_affinity_list",
                                 e->d_name);
        if (len < 0 || tp_cpuset_parse_list(&allowed, text, (size_t)len, false) < 0)
            continue;
        seen++;
        tp_cpuset_and(&hit, &allowed, &p->data_lcores);
        if (tp_cpuset_empty(&hit))
            continue;
        if (on_data++ < LISTED_IRQS) {
            int n = snprintf(listed + listed_len, sizeof(listed) - listed_len, "%s%s",
                             listed_len ? "," : "", e->d_name);
            if (n > 0 && (size_t)n < sizeof(listed) - listed_len)
                listed_len += (size_t)n;
        }
    }
    closedir(dir);

    if (tp_host_housekeeping(&housekeeping, p) < 0 || tp_cpuset_empty(&housekeeping)) {
        tp_check_set(r, TP_CHECK_FAIL,
                     "no housekeeping cpu: every online cpu is a data lcore, so IRQs have "
                     "nowhere else to go");
        tp_check_fix(r, "leave at least one online cpu out of the data lcores in the config");
        return;
    }
    tp_cpuset_text(&housekeeping, house_text, sizeof(house_text));
    tp_cpuset_format_mask(&housekeeping, mask, sizeof(mask));
    tp_check_fix(r,
                 "for f in /proc/irq/*/smp_affinity_list; do echo %s > $f; done 2>/dev/null; "
                 "echo %s > /proc/irq/default_smp_affinity",
                 house_text, mask);

    if (on_data > 0) {
        tp_check_set(r, TP_CHECK_FAIL, "%u of %u IRQs may run on data lcores (IRQ %s%s)", on_data,
                     seen, listed, on_data > LISTED_IRQS ? ",..." : "");
        return;
    }
    if (tp_hostfs_read(text, sizeof(text), p->root, "/proc/irq/default_smp_affinity") >= 0 &&
        tp_cpuset_parse_mask(&default_set, text) == 0) {
        tp_cpuset_and(&hit, &default_set, &p->data_lcores);
        if (!tp_cpuset_empty(&hit)) {
            tp_check_set(r, TP_CHECK_WARN,
                         "no IRQ runs on data lcores now, but /proc/irq/default_smp_affinity (%s) "
                         "includes them: IRQs registered later will",
                         text);
            return;
        }
    }
    r->fix[0] = '\0';
    tp_check_set(r, TP_CHECK_PASS, "none of %u IRQs may run on data lcores", seen);
}
