/*
 * The ports: each PCI device must be bound to a driver DPDK can drive from user space
 * (vfio-pci, or uio; Mellanox cards stay on their kernel driver, which DPDK's mlx PMDs share:
 * "bifurcated"), and the data lcores should sit on the port's NUMA node so that packet DMA and
 * the polling core share one memory controller.
 */
#include "checks.h"

#include <string.h>

enum driver_kind { DRIVER_VFIO, DRIVER_BIFURCATED, DRIVER_UIO, DRIVER_KERNEL, DRIVER_NONE };

static enum driver_kind classify_driver(const char *driver)
{
    if (strcmp(driver, "vfio-pci") == 0)
        return DRIVER_VFIO;
    if (strcmp(driver, "mlx5_core") == 0 || strcmp(driver, "mlx4_core") == 0)
        return DRIVER_BIFURCATED;
    if (strcmp(driver, "uio_pci_generic") == 0 || strcmp(driver, "igb_uio") == 0)
        return DRIVER_UIO;
    return DRIVER_KERNEL;
}

/* The kernel interface name of a device still on its kernel driver ("" if none). */
static void kernel_ifname(const char *root, const char *pci, char *out, size_t size)
{
    DIR *d = tp_hostfs_opendir(root, "/sys/bus/pci/devices/%s/net", pci);
    struct dirent *e;

    out[0] = '\0';
    if (!d)
        return;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && strlen(e->d_name) < size) {
            memcpy(out, e->d_name, strlen(e->d_name) + 1);
            break;
        }
    closedir(d);
}

/* Checks one port; fills r only when the port is worse than what r already holds. */
static void check_port(const char *root, const char *pci, struct tp_check_result *r)
{
    struct tp_check_result one = {.name = r->name};
    char driver[64], ifname[64], down[96] = "";

    if (!tp_hostfs_exists(root, "/sys/bus/pci/devices/%s", pci)) {
        tp_check_set(&one, TP_CHECK_FAIL, "no PCI device %s on this host", pci);
        tp_check_fix(&one, "lspci -D | grep -i ethernet (then fix the port's pci address in "
                           "the config)");
    } else if (tp_hostfs_link_name(driver, sizeof(driver), root, "/sys/bus/pci/devices/%s/driver",
                                   pci) < 0) {
        tp_check_set(&one, TP_CHECK_FAIL, "%s has no driver bound", pci);
        tp_check_fix(&one, "modprobe vfio-pci && dpdk-devbind.py --bind=vfio-pci %s", pci);
    } else {
        switch (classify_driver(driver)) {
        case DRIVER_VFIO:
            if (tp_hostfs_exists(root, "/sys/bus/pci/devices/%s/iommu_group", pci)) {
                tp_check_set(&one, TP_CHECK_PASS, "%s on vfio-pci", pci);
            } else {
                tp_check_set(&one, TP_CHECK_WARN,
                             "%s on vfio-pci without an IOMMU group (no-IOMMU mode: the device "
                             "can DMA anywhere)",
                             pci);
                tp_check_fix(&one, "enable VT-d/AMD-Vi in the BIOS and add intel_iommu=on "
                                   "iommu=pt to GRUB_CMDLINE_LINUX, update-grub, reboot");
            }
            break;
        case DRIVER_BIFURCATED:
            tp_check_set(&one, TP_CHECK_PASS,
                         "%s on %s (bifurcated: DPDK's mlx PMD runs beside the kernel driver; "
                         "needs rdma-core)",
                         pci, driver);
            break;
        case DRIVER_UIO:
            tp_check_set(&one, TP_CHECK_WARN,
                         "%s on %s: no IOMMU protection, and uio needs root; prefer vfio-pci", pci,
                         driver);
            tp_check_fix(&one, "modprobe vfio-pci && dpdk-devbind.py --bind=vfio-pci %s", pci);
            break;
        default:
            kernel_ifname(root, pci, ifname, sizeof(ifname));
            if (ifname[0])
                snprintf(down, sizeof(down), "ip link set %s down && ", ifname);
            tp_check_set(&one, TP_CHECK_FAIL,
                         "%s is bound to kernel driver %s%s%s: DPDK cannot use it", pci, driver,
                         ifname[0] ? ", interface " : "", ifname);
            tp_check_fix(&one, "%smodprobe vfio-pci && dpdk-devbind.py --bind=vfio-pci %s", down,
                         pci);
            break;
        }
    }
    if (one.status > r->status || (one.status == r->status && !r->detail[0]))
        *r = one;
}

void tp_check_nic_driver(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    if (p->n_pci == 0) {
        tp_check_set(r, TP_CHECK_SKIP,
                     "no PCI port configured (virtual devices only): nothing to bind");
        return;
    }
    r->status = TP_CHECK_PASS;
    for (unsigned i = 0; i < p->n_pci; i++)
        check_port(p->root, p->pci[i], r);
    if (r->status == TP_CHECK_PASS && p->n_pci > 1)
        tp_check_set(r, TP_CHECK_PASS, "all %u ports are bound to DPDK-capable drivers", p->n_pci);
}

void tp_check_numa_locality(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    struct tp_cpuset local, near, remote;
    char text[256], local_text[256];
    unsigned known = 0;

    if (p->n_pci == 0 || tp_cpuset_empty(&p->data_lcores)) {
        tp_check_set(r, TP_CHECK_SKIP, "needs both data lcores and PCI ports");
        return;
    }
    if (tp_host_numa_nodes(p->root) == 1) {
        tp_check_set(r, TP_CHECK_PASS, "single NUMA node: every core is local to every port");
        return;
    }
    /* Cpus local to any port (the kernel's local_cpulist of each device). */
    tp_cpuset_clear(&near);
    for (unsigned i = 0; i < p->n_pci; i++) {
        char path[TP_HOSTFS_PATH_MAX];
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/local_cpulist", p->pci[i]);
        if (tp_host_cpulist(&local, p->root, path) < 0 || tp_cpuset_empty(&local) ||
            tp_host_pci_numa_node(p->root, p->pci[i]) < 0)
            continue;
        tp_cpuset_or(&near, &near, &local);
        known++;
    }
    if (known == 0) {
        tp_check_set(r, TP_CHECK_SKIP,
                     "the firmware does not give the ports' NUMA node (numa_node -1)");
        return;
    }
    tp_cpuset_minus(&remote, &p->data_lcores, &near);
    tp_cpuset_text(&near, local_text, sizeof(local_text));
    if (tp_cpuset_empty(&remote)) {
        tp_check_set(r, TP_CHECK_PASS, "data lcores are on the ports' NUMA node (cpus %s)",
                     local_text);
        return;
    }
    tp_check_fix(r, "choose data lcores among cpus %s (the ports' node) in the config", local_text);
    if (tp_cpuset_contains(&remote, &p->data_lcores))
        tp_check_set(r, TP_CHECK_FAIL,
                     "no data lcore is on a port's NUMA node: every packet crosses sockets");
    else
        tp_check_set(r, TP_CHECK_WARN, "data lcores %s are on another NUMA node than the ports",
                     tp_cpuset_text(&remote, text, sizeof(text)));
}
