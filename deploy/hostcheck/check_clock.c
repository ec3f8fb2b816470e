/*
 * Time: tickplane stamps every packet with the TSC and converts with one frequency measured at
 * start, so the TSC must tick at a constant rate (constant_tsc) and keep ticking in idle states
 * (nonstop_tsc). The kernel's clocksource being tsc also shows the kernel found it stable
 * (it falls back to hpet or acpi_pm, which cost microseconds per read, when it does not).
 */
#include "checks.h"

#include <string.h>

#define CLOCKSOURCE_DIR "/sys/devices/system/clocksource/clocksource0"

static bool has_word(const char *list, const char *word)
{
    size_t len = strlen(word);

    for (const char *s = list; (s = strstr(s, word)) != NULL; s += len)
        if ((s == list || s[-1] == ' ' || s[-1] == '\t') &&
            (s[len] == '\0' || s[len] == ' ' || s[len] == '\n'))
            return true;
    return false;
}

/* Clocks of hypervisors: usable, but a VM is not where latency figures mean much. */
static bool is_virtual_clock(const char *name)
{
    return strcmp(name, "kvm-clock") == 0 || strncmp(name, "hyperv", 6) == 0 ||
           strcmp(name, "xen") == 0;
}

void tp_check_clocksource(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    char current[64], available[256];

    if (tp_hostfs_read(current, sizeof(current), p->root, CLOCKSOURCE_DIR "/current_clocksource") <
        0) {
        tp_check_set(r, TP_CHECK_SKIP, "cannot read " CLOCKSOURCE_DIR "/current_clocksource");
        return;
    }
    if (tp_hostfs_read(available, sizeof(available), p->root,
                       CLOCKSOURCE_DIR "/available_clocksource") < 0)
        available[0] = '\0';

    /* arch_sys_counter is the arm64 equivalent of the tsc: constant and cheap to read. */
    if (strcmp(current, "tsc") == 0 || strcmp(current, "arch_sys_counter") == 0) {
        tp_check_set(r, TP_CHECK_PASS, "clocksource is %s", current);
        return;
    }
    if (is_virtual_clock(current)) {
        tp_check_set(r, TP_CHECK_WARN,
                     "clocksource is %s (virtual machine): time reads go through the "
                     "hypervisor's clock; run on bare metal for production",
                     current);
        if (has_word(available, "tsc"))
            tp_check_fix(r, "echo tsc > " CLOCKSOURCE_DIR "/current_clocksource");
        return;
    }
    if (has_word(available, "tsc")) {
        tp_check_set(r, TP_CHECK_FAIL, "clocksource is %s, a slow clock (tsc is available)",
                     current);
        tp_check_fix(r, "echo tsc > " CLOCKSOURCE_DIR "/current_clocksource (persist: add "
                        "clocksource=tsc to GRUB_CMDLINE_LINUX in /etc/default/grub, update-grub)");
    } else {
        tp_check_set(r, TP_CHECK_FAIL,
                     "clocksource is %s and tsc is not available: the kernel found the TSC "
                     "unstable",
                     current);
        tp_check_fix(r, "dmesg | grep -i -e tsc -e clocksource (find why; check BIOS power "
                        "settings; tsc=reliable only if the TSC is known synchronised)");
    }
}

void tp_check_tsc_invariant(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    FILE *f = tp_hostfs_fopen(p->root, "/proc/cpuinfo");
    char line[8192];
    bool found = false, constant = false, nonstop = false;

    if (!f) {
        tp_check_set(r, TP_CHECK_SKIP, "cannot read /proc/cpuinfo");
        return;
    }
    /* The first cpu's flags stand for all: the kernel only sets these when every cpu has them. */
    while (!found && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "flags", 5) != 0 || !strchr(line, ':'))
            continue;
        found = true;
        constant = has_word(line, "constant_tsc");
        nonstop = has_word(line, "nonstop_tsc");
        if (!has_word(line, "tsc")) {
            fclose(f);
            tp_check_set(r, TP_CHECK_FAIL, "this cpu has no TSC");
            tp_check_fix(r, "run on an x86-64 cpu with an invariant TSC");
            return;
        }
    }
    fclose(f);
    if (!found) {
        tp_check_set(r, TP_CHECK_SKIP,
                     "no x86 'flags' line in /proc/cpuinfo (not x86): TSC flags do not apply");
        return;
    }
    if (constant && nonstop) {
        tp_check_set(r, TP_CHECK_PASS, "invariant TSC (constant_tsc and nonstop_tsc)");
    } else if (constant) {
        tp_check_set(r, TP_CHECK_WARN,
                     "constant_tsc but no nonstop_tsc: the TSC may stop in deep idle states");
        tp_check_fix(r, "keep cpus out of deep C-states: add intel_idle.max_cstate=1 "
                        "processor.max_cstate=1 to GRUB_CMDLINE_LINUX, update-grub, reboot");
    } else {
        tp_check_set(r, TP_CHECK_FAIL,
                     "no constant_tsc: the TSC rate follows the cpu frequency, so TSC receive "
                     "timestamps cannot be converted to time");
        tp_check_fix(r, "use a cpu with an invariant TSC, or NIC hardware timestamps");
    }
}
