/*
 * Host checks against fake /proc and /sys trees: the tuned host passes every check, and each
 * test breaks one setting and asserts the status, what the detail names and the fix command.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "config.h"
#include "fake_host.h"
#include "hostcheck.h"
#include "hostcheck_config.h"

struct host {
    char root[256];
    struct tp_hostcheck_params params;
    struct tp_check_result result;
};

static int setup(void **state)
{
    struct host *h = calloc(1, sizeof(*h));

    assert_non_null(h);
    fake_host_create(h->root, sizeof(h->root));
    tp_hostcheck_params_init(&h->params);
    h->params.root = h->root;
    assert_int_equal(tp_cpuset_parse_list(&h->params.data_lcores, "2-3", 3, false), 0);
    h->params.pci[0] = FAKE_PCI;
    h->params.n_pci = 1;
    h->params.hugepage_bytes = UINT64_C(512) << 20;
    *state = h;
    return 0;
}

static int teardown(void **state)
{
    struct host *h = *state;

    fake_host_destroy(h->root);
    free(h);
    return 0;
}

static void set_lcores(struct host *h, const char *list)
{
    assert_int_equal(tp_cpuset_parse_list(&h->params.data_lcores, list, strlen(list), false), 0);
}

/* Runs one check and asserts its status; returns the result for further assertions. */
static const struct tp_check_result *expect(struct host *h, const char *name,
                                            enum tp_check_status status)
{
    assert_int_equal(tp_hostcheck_run_one(name, &h->params, &h->result), 0);
    if (h->result.status != status)
        fail_msg("%s: expected %s, got %s: %s", name, tp_check_status_name(status),
                 tp_check_status_name(h->result.status), h->result.detail);
    assert_string_equal(h->result.name, name);
    /* Every WARN and FAIL tells the operator what to run; PASS and SKIP have nothing to fix. */
    if (status == TP_CHECK_WARN || status == TP_CHECK_FAIL)
        assert_true(h->result.fix[0] != '\0');
    else
        assert_string_equal(h->result.fix, "");
    return &h->result;
}

static void assert_contains(const char *text, const char *part)
{
    if (text == NULL)
        fail_msg("no text (looking for '%s')", part);
    else if (!strstr(text, part))
        fail_msg("'%s' does not contain '%s'", text, part);
}

/* ---- the tuned host ---- */

static void test_tuned_host_passes_everything(void **state)
{
    struct host *h = *state;
    struct tp_hostcheck_report report;
    unsigned n;
    const char *const *names = tp_hostcheck_names(&n);

    tp_hostcheck_run(&h->params, &report);
    assert_int_equal(report.n, TP_HOSTCHECK_NCHECKS);
    assert_int_equal(n, TP_HOSTCHECK_NCHECKS);
    for (unsigned i = 0; i < report.n; i++) {
        if (report.results[i].status != TP_CHECK_PASS)
            fail_msg("%s: %s", report.results[i].name, report.results[i].detail);
        assert_string_equal(report.results[i].name, names[i]);
    }
    assert_int_equal(report.count[TP_CHECK_PASS], TP_HOSTCHECK_NCHECKS);
    assert_int_equal(tp_hostcheck_run_one("no_such_check", &h->params, &h->result), -ENOENT);
}

static void test_no_lcores_no_ports_skips(void **state)
{
    struct host *h = *state;

    tp_cpuset_clear(&h->params.data_lcores);
    h->params.n_pci = 0;
    expect(h, "cpu_isolation", TP_CHECK_SKIP);
    expect(h, "nohz_full", TP_CHECK_SKIP);
    expect(h, "cpu_governor", TP_CHECK_SKIP);
    expect(h, "irqbalance", TP_CHECK_SKIP);
    expect(h, "irq_affinity", TP_CHECK_SKIP);
    expect(h, "nic_driver", TP_CHECK_SKIP);
    expect(h, "numa_locality", TP_CHECK_SKIP);
}

/* ---- isolation ---- */

static void test_isolation_none_warns(void **state)
{
    struct host *h = *state;

    fake_write(h->root, "/sys/devices/system/cpu/isolated", "\n");
    assert_contains(expect(h, "cpu_isolation", TP_CHECK_WARN)->fix, "isolcpus=2-3 ");
    assert_contains(h->result.fix, "update-grub");
}

static void test_isolation_other_cores_fails(void **state)
{
    struct host *h = *state;

    fake_write(h->root, "/sys/devices/system/cpu/isolated", "1-2\n");
    assert_contains(expect(h, "cpu_isolation", TP_CHECK_FAIL)->detail, "not data lcores 3");
}

static void test_isolation_offline_lcore_fails(void **state)
{
    struct host *h = *state;

    set_lcores(h, "2-5");
    assert_contains(expect(h, "cpu_isolation", TP_CHECK_FAIL)->detail, "4-5 are not online");
}

static void test_isolation_from_cmdline_when_no_sysfs(void **state)
{
    struct host *h = *state;

    /* The flags in isolcpus= are skipped, and the "isolcpus=0" after "--" belongs to init. */
    fake_remove(h->root, "/sys/devices/system/cpu/isolated");
    assert_contains(expect(h, "cpu_isolation", TP_CHECK_PASS)->detail, "/proc/cmdline");
    fake_write(h->root, "/proc/cmdline", "root=/dev/sda1 isolcpus=domain,1\n");
    expect(h, "cpu_isolation", TP_CHECK_FAIL);
    fake_write(h->root, "/proc/cmdline", "root=/dev/sda1 -- isolcpus=2-3\n");
    expect(h, "cpu_isolation", TP_CHECK_WARN);
}

static void test_nohz_full(void **state)
{
    struct host *h = *state;

    expect(h, "nohz_full", TP_CHECK_PASS);
    fake_write(h->root, "/sys/devices/system/cpu/nohz_full", "(null)\n");
    assert_contains(expect(h, "nohz_full", TP_CHECK_WARN)->fix, "nohz_full=2-3 ");
    fake_write(h->root, "/sys/devices/system/cpu/nohz_full", "3\n");
    assert_contains(expect(h, "nohz_full", TP_CHECK_FAIL)->detail, "not data lcores 2");
}

static void test_rcu_nocbs(void **state)
{
    struct host *h = *state;

    expect(h, "rcu_nocbs", TP_CHECK_PASS);
    /* nohz_full cpus are offloaded too, so nohz_full alone covers them. */
    fake_write(h->root, "/proc/cmdline", "root=/dev/sda1 nohz_full=2-3\n");
    expect(h, "rcu_nocbs", TP_CHECK_PASS);
    fake_write(h->root, "/sys/devices/system/cpu/nohz_full", "(null)\n");
    fake_write(h->root, "/proc/cmdline", "root=/dev/sda1\n");
    assert_contains(expect(h, "rcu_nocbs", TP_CHECK_WARN)->fix, "rcu_nocbs=2-3 ");
    fake_write(h->root, "/proc/cmdline", "root=/dev/sda1 rcu_nocbs=0-2\n");
    assert_contains(expect(h, "rcu_nocbs", TP_CHECK_FAIL)->detail, "not data lcores 3");
}

/* ---- governor ---- */

static void test_governor(void **state)
{
    struct host *h = *state;
    const char *gov3 = "/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor";

    fake_write(h->root, gov3, "schedutil\n");
    assert_contains(expect(h, "cpu_governor", TP_CHECK_WARN)->detail, "schedutil");
    assert_contains(h->result.fix, "for c in 3; do echo performance");

    fake_write(h->root, gov3, "powersave\n");
    assert_contains(expect(h, "cpu_governor", TP_CHECK_FAIL)->detail, "lowest frequency");

    /* intel_pstate's powersave scales dynamically: a warning, not a failure. */
    fake_write(h->root, "/sys/devices/system/cpu/cpu3/cpufreq/scaling_driver", "intel_pstate\n");
    expect(h, "cpu_governor", TP_CHECK_WARN);

    fake_remove(h->root, "/sys/devices/system/cpu/cpu2/cpufreq");
    fake_remove(h->root, "/sys/devices/system/cpu/cpu3/cpufreq");
    assert_contains(expect(h, "cpu_governor", TP_CHECK_SKIP)->detail, "no cpufreq");
}

/* The report as JSON, parsed back (fails the test if it is not valid JSON). */
static json_t *report_as_json(const struct tp_hostcheck_report *report)
{
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    json_error_t err;
    json_t *doc;

    assert_non_null(out);
    assert_int_equal(tp_hostcheck_print_json(out, report), 0);
    fclose(out);
    doc = json_loads(text, 0, &err);
    if (!doc)
        fail_msg("invalid JSON (%s): %s", err.text, text);
    free(text);
    return doc;
}

static void test_hostile_file_text_is_neutralised(void **state)
{
    struct host *h = *state;
    struct tp_hostcheck_report report;
    json_t *doc;

    /* An escape sequence and a byte that is not UTF-8, quoted back in the detail text. */
    fake_write(h->root, "/sys/devices/system/cpu/cpu3/cpufreq/scaling_governor",
               "\x1b[2Jweird\xff\n");
    assert_contains(expect(h, "cpu_governor", TP_CHECK_WARN)->detail, "(?[2Jweird?)");
    tp_hostcheck_run(&h->params, &report);
    doc = report_as_json(&report);
    assert_int_equal(json_array_size(json_object_get(doc, "checks")), TP_HOSTCHECK_NCHECKS);
    json_decref(doc);
}

/* ---- interrupts ---- */

static void test_irqbalance(void **state)
{
    struct host *h = *state;

    expect(h, "irqbalance", TP_CHECK_PASS);
    fake_write(h->root, "/proc/555/comm", "irqbalance\n");
    assert_contains(expect(h, "irqbalance", TP_CHECK_WARN)->fix, "IRQBALANCE_BANNED_CPULIST=2-3");
    fake_write(h->root, "/etc/default/irqbalance",
               "# Debian\nIRQBALANCE_ONESHOT=0\nIRQBALANCE_BANNED_CPULIST=\"2-3\"\n");
    assert_contains(expect(h, "irqbalance", TP_CHECK_PASS)->detail, "banned");
    fake_write(h->root, "/etc/default/irqbalance", "IRQBALANCE_BANNED_CPULIST=3\n");
    expect(h, "irqbalance", TP_CHECK_WARN);
}

static void test_irq_affinity(void **state)
{
    struct host *h = *state;

    assert_contains(expect(h, "irq_affinity", TP_CHECK_PASS)->detail, "none of 2 IRQs");

    fake_write(h->root, "/proc/irq/default_smp_affinity", "f\n");
    assert_contains(expect(h, "irq_affinity", TP_CHECK_WARN)->detail, "default_smp_affinity");
    assert_contains(h->result.fix, "echo 3 > /proc/irq/default_smp_affinity");

    fake_write(h->root, "/proc/irq/26/smp_affinity_list", "0-3\n");
    assert_contains(expect(h, "irq_affinity", TP_CHECK_FAIL)->detail, "1 of 3 IRQs");
    assert_contains(h->result.detail, "IRQ 26");
    assert_contains(h->result.fix, "do echo 0-1 > $f");

    /* Every cpu polls: nowhere to move IRQs to. */
    set_lcores(h, "0-3");
    assert_contains(expect(h, "irq_affinity", TP_CHECK_FAIL)->detail, "no housekeeping cpu");
}

/* ---- periodic kernel work ---- */

static void test_watchdog(void **state)
{
    struct host *h = *state;

    expect(h, "watchdog", TP_CHECK_PASS);
    fake_write(h->root, "/proc/sys/kernel/watchdog", "1\n");
    assert_contains(expect(h, "watchdog", TP_CHECK_PASS)->detail, "only on cpus 0-1");
    fake_write(h->root, "/proc/sys/kernel/watchdog_cpumask", "0-3\n");
    fake_write(h->root, "/proc/sys/kernel/nmi_watchdog", "1\n");
    assert_contains(expect(h, "watchdog", TP_CHECK_WARN)->detail, "perf NMI");
    assert_contains(h->result.fix, "sysctl -w kernel.watchdog=0");
    fake_remove(h->root, "/proc/sys/kernel/watchdog");
    expect(h, "watchdog", TP_CHECK_SKIP);
}

static void test_vm_stat_interval(void **state)
{
    struct host *h = *state;

    expect(h, "vm_stat_interval", TP_CHECK_PASS);
    fake_write(h->root, "/proc/sys/vm/stat_interval", "1\n");
    assert_contains(expect(h, "vm_stat_interval", TP_CHECK_WARN)->fix, "vm.stat_interval=10");
    fake_write(h->root, "/proc/sys/vm/stat_interval", "junk\n");
    expect(h, "vm_stat_interval", TP_CHECK_SKIP);
}

/* ---- time ---- */

static void test_clocksource(void **state)
{
    struct host *h = *state;
    const char *cur = "/sys/devices/system/clocksource/clocksource0/current_clocksource";
    const char *avail = "/sys/devices/system/clocksource/clocksource0/available_clocksource";

    fake_write(h->root, cur, "kvm-clock\n");
    assert_contains(expect(h, "clocksource", TP_CHECK_WARN)->detail, "virtual machine");
    fake_write(h->root, cur, "hpet\n");
    assert_contains(expect(h, "clocksource", TP_CHECK_FAIL)->fix, "echo tsc >");
    fake_write(h->root, avail, "hpet acpi_pm\n");
    assert_contains(expect(h, "clocksource", TP_CHECK_FAIL)->detail, "unstable");
    assert_contains(h->result.fix, "dmesg");
    fake_remove(h->root, cur);
    expect(h, "clocksource", TP_CHECK_SKIP);
}

static void test_tsc_invariant(void **state)
{
    struct host *h = *state;

    fake_write(h->root, "/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu tsc constant_tsc msr\n");
    assert_contains(expect(h, "tsc_invariant", TP_CHECK_WARN)->detail, "no nonstop_tsc");
    /* "constant_tsc" must be a whole word: "xconstant_tsc" does not count. */
    fake_write(h->root, "/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu tsc xconstant_tsc\n");
    expect(h, "tsc_invariant", TP_CHECK_FAIL);
    fake_write(h->root, "/proc/cpuinfo", "flags\t: tsc constant_tscx nonstop_tsc\n");
    expect(h, "tsc_invariant", TP_CHECK_FAIL);
    fake_write(h->root, "/proc/cpuinfo", "processor\t: 0\nFeatures\t: fp asimd evtstrm\n");
    expect(h, "tsc_invariant", TP_CHECK_SKIP);
}

/* ---- memory ---- */

static void test_thp(void **state)
{
    struct host *h = *state;
    const char *enabled = "/sys/kernel/mm/transparent_hugepage/enabled";

    fake_write(h->root, enabled, "always [madvise] never\n");
    expect(h, "thp", TP_CHECK_PASS);
    fake_write(h->root, enabled, "[always] madvise never\n");
    assert_contains(expect(h, "thp", TP_CHECK_WARN)->fix, "echo madvise >");
    fake_write(h->root, "/sys/kernel/mm/transparent_hugepage/defrag",
               "[always] defer defer+madvise madvise never\n");
    assert_contains(expect(h, "thp", TP_CHECK_FAIL)->detail, "direct compaction");
    fake_remove(h->root, "/sys/kernel/mm/transparent_hugepage");
    assert_contains(expect(h, "thp", TP_CHECK_PASS)->detail, "without");
}

static void set_node_pages(struct host *h, unsigned node, const char *nr, const char *free_pages)
{
    char path[128];

    snprintf(path, sizeof(path),
             "/sys/devices/system/node/node%u/hugepages/hugepages-2048kB/nr_hugepages", node);
    fake_write(h->root, path, nr);
    snprintf(path, sizeof(path),
             "/sys/devices/system/node/node%u/hugepages/hugepages-2048kB/free_hugepages", node);
    fake_write(h->root, path, free_pages);
}

static void test_hugepages_none_fails(void **state)
{
    struct host *h = *state;

    set_node_pages(h, 1, "0", "0");
    assert_contains(expect(h, "hugepages", TP_CHECK_FAIL)->detail, "no hugepages reserved");
    assert_contains(h->result.fix, "reserve-hugepages.sh --node 1 --mb 512");
}

static void test_hugepages_wrong_node_fails(void **state)
{
    struct host *h = *state;

    set_node_pages(h, 0, "1024", "1024");
    set_node_pages(h, 1, "0", "0");
    assert_contains(expect(h, "hugepages", TP_CHECK_FAIL)->detail, "NUMA node 1");
    assert_contains(h->result.fix, "--node 1 --mb 512");
    /* Without a port the pages on node 0 are enough. */
    h->params.n_pci = 0;
    expect(h, "hugepages", TP_CHECK_PASS);
}

static void test_hugepages_too_few_or_unmounted_fails(void **state)
{
    struct host *h = *state;

    h->params.hugepage_bytes = UINT64_C(2048) << 20;
    assert_contains(expect(h, "hugepages", TP_CHECK_FAIL)->detail, "need 2048 MiB");
    h->params.hugepage_bytes = UINT64_C(512) << 20;
    set_node_pages(h, 1, "512", "100"); /* reserved, but mostly taken by another process */
    expect(h, "hugepages", TP_CHECK_FAIL);
    set_node_pages(h, 1, "512", "512");
    fake_write(h->root, "/proc/mounts", "proc /proc proc rw 0 0\n");
    assert_contains(expect(h, "hugepages", TP_CHECK_FAIL)->fix, "mount -t hugetlbfs");
}

static void test_hugepages_unknown_node_warns(void **state)
{
    struct host *h = *state;

    fake_write(h->root, "/sys/bus/pci/devices/" FAKE_PCI "/numa_node", "-1\n");
    assert_contains(expect(h, "hugepages", TP_CHECK_WARN)->detail, "numa_node -1");
    /* On a single-node host -1 can only mean node 0. */
    fake_write(h->root, "/sys/devices/system/node/online", "0\n");
    fake_remove(h->root, "/sys/devices/system/node/node1");
    set_node_pages(h, 0, "512", "512");
    expect(h, "hugepages", TP_CHECK_PASS);
}

static void test_memlock(void **state)
{
    struct host *h = *state;
    const char *limits = "/proc/self/limits";

    expect(h, "memlock", TP_CHECK_PASS);
    fake_write(h->root, limits, "Max locked memory         65536        65536        bytes\n");
    assert_contains(expect(h, "memlock", TP_CHECK_FAIL)->fix, "LimitMEMLOCK=infinity");
    h->params.hugepage_bytes = 0;
    expect(h, "memlock", TP_CHECK_WARN);
    /* CAP_IPC_LOCK (bit 14) lifts the limit. */
    fake_write(h->root, "/proc/self/status", "Name:\tx\nCapEff:\t0000000000004000\n");
    assert_contains(expect(h, "memlock", TP_CHECK_PASS)->detail, "CAP_IPC_LOCK");
    fake_remove(h->root, limits);
    expect(h, "memlock", TP_CHECK_SKIP);
}

static void test_hugepage_plan(void **state)
{
    struct host *h = *state;
    unsigned nodes[4];
    uint64_t mib[4];

    /* Two ports on node 1 and one on node 0: one line per node, the whole need on each. */
    fake_write(h->root, "/sys/bus/pci/devices/0000:3b:00.1/numa_node", "1\n");
    fake_write(h->root, "/sys/bus/pci/devices/0000:af:00.0/numa_node", "0\n");
    h->params.pci[1] = "0000:3b:00.1";
    h->params.pci[2] = "0000:af:00.0";
    h->params.n_pci = 3;
    assert_int_equal(tp_hostcheck_hugepage_plan(&h->params, nodes, mib, 4), 2);
    assert_int_equal(nodes[0], 1);
    assert_int_equal(nodes[1], 0);
    assert_int_equal(mib[0], 512);
    assert_int_equal(mib[1], 512);
    assert_int_equal(tp_hostcheck_hugepage_plan(&h->params, nodes, mib, 1), 1);

    /* No port, or a port whose node is unknown: node 0; an unknown need: 1 GiB. */
    h->params.n_pci = 0;
    h->params.hugepage_bytes = 0;
    assert_int_equal(tp_hostcheck_hugepage_plan(&h->params, nodes, mib, 4), 1);
    assert_int_equal(nodes[0], 0);
    assert_int_equal(mib[0], 1024);
    fake_write(h->root, "/sys/bus/pci/devices/" FAKE_PCI "/numa_node", "-1\n");
    h->params.n_pci = 1;
    assert_int_equal(tp_hostcheck_hugepage_plan(&h->params, nodes, mib, 4), 1);
    assert_int_equal(nodes[0], 0);

    /* Without hugepages (eal.no_huge) nothing is reserved, and the check says so. */
    h->params.no_hugepages = true;
    assert_int_equal(tp_hostcheck_hugepage_plan(&h->params, nodes, mib, 4), 0);
    assert_contains(expect(h, "hugepages", TP_CHECK_WARN)->detail, "eal.no_huge");
}

/* ---- ports ---- */

static void set_driver(struct host *h, const char *driver)
{
    char target[128];

    snprintf(target, sizeof(target), "../../../bus/pci/drivers/%s", driver);
    fake_symlink(h->root, "/sys/bus/pci/devices/" FAKE_PCI "/driver", target);
}

static void test_nic_driver(void **state)
{
    struct host *h = *state;

    set_driver(h, "mlx5_core");
    assert_contains(expect(h, "nic_driver", TP_CHECK_PASS)->detail, "bifurcated");

    set_driver(h, "uio_pci_generic");
    assert_contains(expect(h, "nic_driver", TP_CHECK_WARN)->fix,
                    "dpdk-devbind.py --bind=vfio-pci " FAKE_PCI);

    set_driver(h, "vfio-pci");
    fake_remove(h->root, "/sys/bus/pci/devices/" FAKE_PCI "/iommu_group");
    assert_contains(expect(h, "nic_driver", TP_CHECK_WARN)->detail, "without an IOMMU group");

    set_driver(h, "ixgbe");
    fake_mkdir(h->root, "/sys/bus/pci/devices/" FAKE_PCI "/net/eth2");
    assert_contains(expect(h, "nic_driver", TP_CHECK_FAIL)->detail, "kernel driver ixgbe");
    assert_contains(h->result.fix, "ip link set eth2 down && ");
    assert_contains(h->result.fix, "dpdk-devbind.py --bind=vfio-pci " FAKE_PCI);

    fake_remove(h->root, "/sys/bus/pci/devices/" FAKE_PCI "/driver");
    assert_contains(expect(h, "nic_driver", TP_CHECK_FAIL)->detail, "no driver bound");
}

static void test_nic_worst_port_wins(void **state)
{
    struct host *h = *state;

    h->params.pci[1] = "0000:af:00.0"; /* not on this host */
    h->params.n_pci = 2;
    assert_contains(expect(h, "nic_driver", TP_CHECK_FAIL)->detail, "no PCI device 0000:af:00.0");
    h->params.pci[1] = FAKE_PCI;
    assert_contains(expect(h, "nic_driver", TP_CHECK_PASS)->detail, "all 2 ports");
}

static void test_numa_locality(void **state)
{
    struct host *h = *state;

    set_lcores(h, "1-3");
    assert_contains(expect(h, "numa_locality", TP_CHECK_WARN)->detail, "data lcores 1 ");
    set_lcores(h, "0-1");
    expect(h, "numa_locality", TP_CHECK_FAIL);
    assert_contains(h->result.fix, "among cpus 2-3");
    fake_write(h->root, "/sys/bus/pci/devices/" FAKE_PCI "/numa_node", "-1\n");
    expect(h, "numa_locality", TP_CHECK_SKIP);
    fake_write(h->root, "/sys/devices/system/node/online", "0\n");
    assert_contains(expect(h, "numa_locality", TP_CHECK_PASS)->detail, "single NUMA node");
}

/* ---- reports ---- */

static void test_reports(void **state)
{
    struct host *h = *state;
    struct tp_hostcheck_report report;
    char *text = NULL;
    size_t len = 0;
    FILE *out;
    json_t *doc, *checks;

    fake_write(h->root, "/proc/sys/vm/stat_interval", "1\n");
    fake_write(h->root, "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/free_hugepages",
               "0\n");
    tp_hostcheck_run(&h->params, &report);
    assert_int_equal(report.count[TP_CHECK_WARN], 1);
    assert_int_equal(report.count[TP_CHECK_FAIL], 1);

    /* Text, problems only: the two problems and their fixes, no PASS line. */
    out = open_memstream(&text, &len);
    tp_hostcheck_print_text(out, &report, TP_CHECK_WARN);
    fclose(out);
    assert_contains(text, "WARN  vm_stat_interval");
    assert_contains(text, "FAIL  hugepages");
    assert_contains(text, "fix: sysctl -w vm.stat_interval=10");
    assert_null(strstr(text, "PASS"));
    free(text);

    doc = report_as_json(&report);
    checks = json_object_get(doc, "checks");
    assert_int_equal(json_array_size(checks), TP_HOSTCHECK_NCHECKS);
    assert_string_equal(json_string_value(json_object_get(json_array_get(checks, 0), "name")),
                        "cpu_isolation");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "summary"), "FAIL")),
                     1);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "summary"), "PASS")),
                     TP_HOSTCHECK_NCHECKS - 2);
    json_decref(doc);
}

/* Loads configs/<name> and runs the daemon's start-up checks on the fake host; returns the log
 * (free it) after asserting the number of FAILs. */
static char *startup_log(struct host *h, const char *name, unsigned expected_fails)
{
    static struct tp_config cfg;
    static struct tp_config_errors errs;
    char path[512], *text = NULL;
    size_t len = 0;
    FILE *log;

    snprintf(path, sizeof(path), "%s/%s", TP_CONFIGS_DIR, name);
    assert_int_equal(tp_config_load_file(path, &cfg, &errs), 0);
    log = open_memstream(&text, &len);
    assert_int_equal(tp_hostcheck_startup(&cfg, h->root, log), expected_fails);
    fclose(log);
    return text;
}

/* The daemon's start-up call, with the demo and production configs of the repository. */
static void test_startup_from_config(void **state)
{
    struct host *h = *state;
    char *text;

    /* production.json polls on lcores 2-3 from ports 0000:3b:00.0/.1 with eal.memory_mb 4096:
     * the tuned fake host has 1 GiB on node 1 and no 0000:3b:00.1. */
    text = startup_log(h, "production.json", 2);
    assert_contains(text, "host checks: 0 warn, 2 fail");
    assert_contains(text, "FAIL  hugepages");
    assert_contains(text, "need 4096 MiB");
    assert_contains(text, "FAIL  nic_driver");
    assert_contains(text, "0000:3b:00.1");
    assert_null(strstr(text, "PASS"));
    free(text);

    /* The demo polls on lcore 1, outside the fake host's isolation (2-3) and in IRQ 24's
     * affinity (0-1): isolcpus, nohz_full, rcu_nocbs and irq_affinity fail; no hugepages warns. */
    text = startup_log(h, "demo.json", 4);
    assert_contains(text, "isolcpus covers 2-3 but not data lcores 1");
    assert_contains(text, "IRQ 24)");
    assert_contains(text, "WARN  hugepages");
    assert_contains(text, "eal.no_huge");
    free(text);
}

/* eal.lcores '@' mappings: the checks look at the CPUs the data lcores run on, not their ids. */
static void test_data_lcore_cpus_from_mappings(void **state)
{
    static struct tp_config cfg;
    static struct tp_config_errors errs;
    struct tp_hostcheck_params params;
    char path[512];
    (void)state;

    snprintf(path, sizeof(path), "%s/demo.json", TP_CONFIGS_DIR);
    assert_int_equal(tp_config_load_file(path, &cfg, &errs), 0);
    tp_hostcheck_params_from_config(&params, &cfg);
    assert_true(tp_cpuset_has(&params.data_lcores, 1)); /* the demo's data lcore 1, on CPU 1 */
    assert_null(tp_config_parse_lcores("0@0,1@(2-3)", &cfg.eal));
    tp_hostcheck_params_from_config(&params, &cfg);
    assert_false(tp_cpuset_has(&params.data_lcores, 1));
    assert_true(tp_cpuset_has(&params.data_lcores, 2));
    assert_true(tp_cpuset_has(&params.data_lcores, 3));
    assert_false(tp_cpuset_has(&params.data_lcores, 0));
}

#define HOST_TEST(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
    const struct CMUnitTest tests[] = {
        HOST_TEST(test_tuned_host_passes_everything),
        HOST_TEST(test_no_lcores_no_ports_skips),
        HOST_TEST(test_isolation_none_warns),
        HOST_TEST(test_isolation_other_cores_fails),
        HOST_TEST(test_isolation_offline_lcore_fails),
        HOST_TEST(test_isolation_from_cmdline_when_no_sysfs),
        HOST_TEST(test_nohz_full),
        HOST_TEST(test_rcu_nocbs),
        HOST_TEST(test_governor),
        HOST_TEST(test_hostile_file_text_is_neutralised),
        HOST_TEST(test_irqbalance),
        HOST_TEST(test_irq_affinity),
        HOST_TEST(test_watchdog),
        HOST_TEST(test_vm_stat_interval),
        HOST_TEST(test_clocksource),
        HOST_TEST(test_tsc_invariant),
        HOST_TEST(test_thp),
        HOST_TEST(test_hugepages_none_fails),
        HOST_TEST(test_hugepages_wrong_node_fails),
        HOST_TEST(test_hugepages_too_few_or_unmounted_fails),
        HOST_TEST(test_hugepages_unknown_node_warns),
        HOST_TEST(test_memlock),
        HOST_TEST(test_hugepage_plan),
        HOST_TEST(test_nic_driver),
        HOST_TEST(test_nic_worst_port_wins),
        HOST_TEST(test_numa_locality),
        HOST_TEST(test_reports),
        HOST_TEST(test_startup_from_config),
        cmocka_unit_test(test_data_lcore_cpus_from_mappings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
