/*
 * CPU frequency governor of the data lcores. Busy polling wants the highest frequency all the
 * time: a dynamic governor changes it under load (each transition stalls the core for
 * microseconds), and acpi-cpufreq's "powersave" pins the lowest frequency.
 */
#include "checks.h"

#include <string.h>

/* intel_pstate and amd-pstate-epp implement "powersave" as dynamic scaling, not a pinned minimum.
 */
static bool powersave_is_dynamic(const char *driver)
{
    return strcmp(driver, "intel_pstate") == 0 || strncmp(driver, "amd-pstate", 10) == 0;
}

/* "2 3 5": the cpus as shell words, for the fix loop. */
static void format_words(const struct tp_cpuset *set, char *out, size_t size)
{
    size_t used = 0;

    out[0] = '\0';
    for (unsigned cpu = 0; cpu < TP_CPUSET_MAX && used + 1 < size; cpu++) {
        if (!tp_cpuset_has(set, cpu))
            continue;
        int n = snprintf(out + used, size - used, "%s%u", used ? " " : "", cpu);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

void tp_check_cpu_governor(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    struct tp_cpuset slow, pinned, seen;
    char governor[64], driver[64], text[256], words[256];
    char dynamic[64] = ""; /* one dynamic governor seen, for the detail text */

    if (tp_cpuset_empty(&p->data_lcores)) {
        tp_check_set(r, TP_CHECK_SKIP,
                     "no data lcores configured (give --data-lcores or --config)");
        return;
    }
    tp_cpuset_clear(&slow);
    tp_cpuset_clear(&pinned);
    tp_cpuset_clear(&seen);
    for (unsigned cpu = 0; cpu < TP_CPUSET_MAX; cpu++) {
        if (!tp_cpuset_has(&p->data_lcores, cpu) ||
            tp_hostfs_read(governor, sizeof(governor), p->root,
                           "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_governor", cpu) < 0)
            continue;
        tp_cpuset_add(&seen, cpu);
        if (strcmp(governor, "performance") == 0)
            continue;
        tp_cpuset_add(&slow, cpu);
        if (tp_hostfs_read(driver, sizeof(driver), p->root,
                           "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_driver", cpu) < 0)
            driver[0] = '\0';
        if (strcmp(governor, "powersave") == 0 && !powersave_is_dynamic(driver))
            tp_cpuset_add(&pinned, cpu);
        else
            snprintf(dynamic, sizeof(dynamic), "%s", governor);
    }

    if (tp_cpuset_empty(&seen)) {
        tp_check_set(r, TP_CHECK_SKIP,
                     "no cpufreq for the data lcores (virtual machine, or no cpufreq driver): "
                     "the frequency is set by the firmware or hypervisor");
        return;
    }
    if (tp_cpuset_empty(&slow)) {
        tp_check_set(r, TP_CHECK_PASS, "data lcores %s run the performance governor",
                     tp_cpuset_text(&seen, text, sizeof(text)));
        return;
    }
    format_words(&slow, words, sizeof(words));
    tp_check_fix(r,
                 "for c in %s; do echo performance > "
                 "/sys/devices/system/cpu/cpu$c/cpufreq/scaling_governor; done "
                 "(persist: cpupower frequency-set -g performance in a boot unit)",
                 words);
    if (!tp_cpuset_empty(&pinned))
        tp_check_set(r, TP_CHECK_FAIL,
                     "data lcores %s use the powersave governor, which pins the lowest frequency",
                     tp_cpuset_text(&pinned, text, sizeof(text)));
    else
        tp_check_set(r, TP_CHECK_WARN,
                     "data lcores %s use a dynamic governor (%s): frequency changes stall the "
                     "busy loop",
                     tp_cpuset_text(&slow, text, sizeof(text)), dynamic);
}
