/* Fake /proc and /sys trees for the host-check tests (see fake_host.h). */
#include "fake_host.h"

#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

static void join(char *out, size_t size, const char *root, const char *path)
{
    int n = snprintf(out, size, "%s%s", root, path);
    assert_true(n > 0 && (size_t)n < size);
}

/* mkdir -p of the directory part of full (or of full itself when whole is set). */
static void make_parents(char *full, int whole)
{
    for (char *s = full + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = '\0';
        assert_true(mkdir(full, 0755) == 0 || errno == EEXIST);
        *s = '/';
    }
    if (whole)
        assert_true(mkdir(full, 0755) == 0 || errno == EEXIST);
}

void fake_write(const char *root, const char *path, const char *content)
{
    char full[1024];
    FILE *f;

    join(full, sizeof(full), root, path);
    make_parents(full, 0);
    f = fopen(full, "w");
    assert_non_null(f);
    assert_true(fputs(content, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

void fake_symlink(const char *root, const char *path, const char *target)
{
    char full[1024];

    join(full, sizeof(full), root, path);
    make_parents(full, 0);
    unlink(full);
    assert_int_equal(symlink(target, full), 0);
}

void fake_mkdir(const char *root, const char *path)
{
    char full[1024];

    join(full, sizeof(full), root, path);
    make_parents(full, 1);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void fake_remove(const char *root, const char *path)
{
    char full[1024];

    join(full, sizeof(full), root, path);
    nftw(full, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void fake_host_destroy(const char *root)
{
    nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

void fake_host_create(char *root, size_t size)
{
    static const char *const cpuinfo =
        "processor\t: 0\nvendor_id\t: GenuineIntel\n"
        "flags\t\t: fpu vme de pse tsc msr pae constant_tsc arch_perfmon nonstop_tsc cpuid\n\n"
        "processor\t: 1\nvendor_id\t: GenuineIntel\n"
        "flags\t\t: fpu vme de pse tsc msr pae constant_tsc arch_perfmon nonstop_tsc cpuid\n\n";
    const char *tmp = getenv("TMPDIR");
    char path[128];

    /* tmpfs by default: thousands of small file operations, and the disk is shared. */
    if (!tmp)
        tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    assert_true(snprintf(root, size, "%s/tp-fakehost-XXXXXX", tmp) < (int)size);
    assert_non_null(mkdtemp(root));

    fake_write(root, "/proc/cmdline",
               "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=managed_irq,domain,2-3 "
               "nohz_full=2-3 rcu_nocbs=2-3 quiet -- isolcpus=0\n");
    fake_write(root, "/sys/devices/system/cpu/online", "0-3\n");
    fake_write(root, "/sys/devices/system/cpu/isolated", "2-3\n");
    fake_write(root, "/sys/devices/system/cpu/nohz_full", "2-3\n");
    for (unsigned cpu = 0; cpu < 4; cpu++) {
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_governor", cpu);
        fake_write(root, path, "performance\n");
        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_driver", cpu);
        fake_write(root, path, "acpi-cpufreq\n");
    }
    fake_write(root, "/proc/1/comm", "systemd\n");
    fake_write(root, "/proc/77/comm", "sshd\n");
    fake_write(root, "/proc/irq/24/smp_affinity_list", "0-1\n");
    fake_write(root, "/proc/irq/25/smp_affinity_list", "0\n");
    fake_write(root, "/proc/irq/default_smp_affinity", "3\n");
    fake_write(root, "/proc/sys/kernel/watchdog", "0\n");
    fake_write(root, "/proc/sys/kernel/nmi_watchdog", "0\n");
    fake_write(root, "/proc/sys/kernel/watchdog_cpumask", "0-1\n");
    fake_write(root, "/proc/sys/vm/stat_interval", "10\n");
    fake_write(root, "/sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc\n");
    fake_write(root, "/sys/devices/system/clocksource/clocksource0/available_clocksource",
               "tsc hpet acpi_pm \n");
    fake_write(root, "/proc/cpuinfo", cpuinfo);
    fake_write(root, "/sys/kernel/mm/transparent_hugepage/enabled", "always madvise [never]\n");
    fake_write(root, "/sys/kernel/mm/transparent_hugepage/defrag",
               "always defer defer+madvise [madvise] never\n");
    fake_write(root, "/sys/devices/system/node/online", "0-1\n");
    fake_write(root, "/sys/devices/system/node/node0/cpulist", "0-1\n");
    fake_write(root, "/sys/devices/system/node/node1/cpulist", "2-3\n");
    fake_write(root, "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/nr_hugepages",
               "0\n");
    fake_write(root, "/sys/devices/system/node/node0/hugepages/hugepages-2048kB/free_hugepages",
               "0\n");
    fake_write(root, "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages",
               "512\n");
    fake_write(root, "/sys/devices/system/node/node1/hugepages/hugepages-2048kB/free_hugepages",
               "512\n");
    fake_write(root, "/proc/mounts",
               "proc /proc proc rw 0 0\nhugetlbfs /dev/hugepages hugetlbfs rw,pagesize=2M 0 0\n");
    fake_write(root, "/proc/self/limits",
               "Limit                     Soft Limit           Hard Limit           Units\n"
               "Max open files            1024                 524288               files\n"
               "Max locked memory         unlimited            unlimited            bytes\n");
    fake_write(root, "/proc/self/status", "Name:\ttickplane\nCapEff:\t0000000000000000\n");
    fake_write(root, "/sys/bus/pci/devices/" FAKE_PCI "/numa_node", "1\n");
    fake_write(root, "/sys/bus/pci/devices/" FAKE_PCI "/local_cpulist", "2-3\n");
    fake_symlink(root, "/sys/bus/pci/devices/" FAKE_PCI "/driver",
                 "../../../bus/pci/drivers/vfio-pci");
    fake_mkdir(root, "/sys/kernel/iommu_groups/12");
    fake_symlink(root, "/sys/bus/pci/devices/" FAKE_PCI "/iommu_group",
                 "../../../../kernel/iommu_groups/12");
}
