/*
 * Memory: hugepages for DPDK on the NUMA node of each port (packet buffers and tables on the
 * wrong node cost a cross-socket hop per access), a hugetlbfs mount so DPDK can map them,
 * transparent hugepages that do not compact memory behind the process's back, and a
 * locked-memory limit that lets DPDK pin its memory (vfio counts DMA-mapped memory against it).
 */
#include "checks.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#ifndef TP_TUNE_DIR
#define TP_TUNE_DIR "/usr/libexec/tickplane"
#endif

#define MAX_NODES        64
#define MIB              (UINT64_C(1) << 20)
#define DEFAULT_RESERVE  1024 /* MiB suggested when the requirement is not known */
#define CAP_IPC_LOCK_BIT 14

/* The word in [brackets] of a sysfs choice file: "always [madvise] never" -> "madvise". */
static int selected_choice(const char *root, const char *path, char *out, size_t size)
{
    char text[256];
    const char *open, *close;

    if (tp_hostfs_read(text, sizeof(text), root, "%s", path) < 0)
        return -1;
    open = strchr(text, '[');
    close = open ? strchr(open, ']') : NULL;
    if (!close || (size_t)(close - open - 1) >= size)
        return -1;
    memcpy(out, open + 1, (size_t)(close - open - 1));
    out[close - open - 1] = '\0';
    return 0;
}

void tp_check_thp(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    char enabled[32], defrag[32];

    if (selected_choice(p->root, "/sys/kernel/mm/transparent_hugepage/enabled", enabled,
                        sizeof(enabled)) < 0) {
        tp_check_set(r, TP_CHECK_PASS, "kernel without transparent hugepages");
        return;
    }
    if (strcmp(enabled, "always") != 0) {
        tp_check_set(r, TP_CHECK_PASS, "transparent hugepages: %s", enabled);
        return;
    }
    tp_check_fix(r, "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled && echo madvise > "
                    "/sys/kernel/mm/transparent_hugepage/defrag (persist: "
                    "transparent_hugepage=madvise on the kernel command line)");
    if (selected_choice(p->root, "/sys/kernel/mm/transparent_hugepage/defrag", defrag,
                        sizeof(defrag)) == 0 &&
        strcmp(defrag, "always") == 0)
        tp_check_set(r, TP_CHECK_FAIL,
                     "transparent hugepages always, defrag always: page faults anywhere on the "
                     "host stall in direct compaction");
    else
        tp_check_set(r, TP_CHECK_WARN,
                     "transparent hugepages always: khugepaged scans and collapses pages in the "
                     "background");
}

/* Hugepage bytes reserved and free, per NUMA node. */
struct node_pages {
    uint64_t total[MAX_NODES];
    uint64_t free[MAX_NODES];
    uint64_t page_size; /* smallest page size seen, for the fix */
};

/* Adds every hugepages-<size>kB directory under dir (one node's or the global one). */
static void add_pool_dir(const char *root, const char *dir, unsigned node, struct node_pages *np)
{
    DIR *d = tp_hostfs_opendir(root, "%s", dir);
    struct dirent *e;

    if (!d)
        return;
    while ((e = readdir(d)) != NULL) {
        unsigned long kb;
        long nr, nfree;
        char *end;

        if (strncmp(e->d_name, "hugepages-", 10) != 0)
            continue;
        kb = strtoul(e->d_name + 10, &end, 10);
        if (kb == 0 || strcmp(end, "kB") != 0 ||
            tp_hostfs_read_long(&nr, root, "%s/%s/nr_hugepages", dir, e->d_name) < 0 ||
            tp_hostfs_read_long(&nfree, root, "%s/%s/free_hugepages", dir, e->d_name) < 0 ||
            nr < 0 || nfree < 0)
            continue;
        np->total[node] += (uint64_t)nr * kb * 1024;
        np->free[node] += (uint64_t)nfree * kb * 1024;
        if (np->page_size == 0 || (uint64_t)kb * 1024 < np->page_size)
            np->page_size = (uint64_t)kb * 1024;
    }
    closedir(d);
}

/* Fills np; returns the number of nodes (1 on a kernel without NUMA). */
static unsigned read_node_pages(const char *root, struct node_pages *np)
{
    unsigned nodes = 0;
    char dir[64];

    memset(np, 0, sizeof(*np));
    for (unsigned node = 0; node < MAX_NODES; node++) {
        snprintf(dir, sizeof(dir), "/sys/devices/system/node/node%u/hugepages", node);
        if (!tp_hostfs_exists(root, "/sys/devices/system/node/node%u", node))
            continue;
        add_pool_dir(root, dir, node, np);
        nodes = node + 1;
    }
    if (nodes == 0) {
        add_pool_dir(root, "/sys/kernel/mm/hugepages", 0, np);
        nodes = 1;
    }
    return nodes;
}

static bool hugetlbfs_mounted(const char *root)
{
    FILE *f = tp_hostfs_fopen(root, "/proc/mounts");
    char line[1024];
    bool found = false;

    if (!f)
        return false;
    while (!found && fgets(line, sizeof(line), f))
        found = strstr(line, " hugetlbfs ") != NULL;
    fclose(f);
    return found;
}

void tp_check_hugepages(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    struct node_pages np;
    unsigned nodes = read_node_pages(p->root, &np);
    uint64_t total = 0, need_mib, need;
    int unknown = -1; /* index of a port whose NUMA node is unknown */

    for (unsigned n = 0; n < nodes; n++)
        total += np.total[n];
    if (np.page_size == 0)
        np.page_size = 2 * MIB;
    need = p->hugepage_bytes > np.page_size ? p->hugepage_bytes : np.page_size;
    need_mib = p->hugepage_bytes ? (need + MIB - 1) / MIB : DEFAULT_RESERVE;

    if (p->no_hugepages) {
        tp_check_set(r, TP_CHECK_WARN,
                     "the config runs DPDK without hugepages (eal.no_huge): fine for tests and "
                     "demos, slow and unpinned for production");
        tp_check_fix(r,
                     "set eal.no_huge to false in the config and reserve hugepages: " TP_TUNE_DIR
                     "/reserve-hugepages.sh --node 0 --mb %" PRIu64,
                     need_mib);
        return;
    }
    if (total == 0) {
        tp_check_set(r, TP_CHECK_FAIL,
                     "no hugepages reserved on this host (DPDK would need --no-huge, which is "
                     "for tests only)");
        int node = p->n_pci ? tp_host_pci_numa_node(p->root, p->pci[0]) : 0;
        tp_check_fix(r, TP_TUNE_DIR "/reserve-hugepages.sh --node %d --mb %" PRIu64,
                     node > 0 ? node : 0, need_mib);
        return;
    }

    for (unsigned i = 0; i < p->n_pci; i++) {
        int node = tp_host_pci_numa_node(p->root, p->pci[i]);

        if (node < 0 && nodes == 1)
            node = 0; /* one node: the firmware's "-1" cannot mean anything else */
        if (node < 0) {
            unknown = (int)i;
            continue;
        }
        if ((unsigned)node >= MAX_NODES || np.free[node] < need) {
            tp_check_set(r, TP_CHECK_FAIL,
                         "port %s is on NUMA node %d, which has %" PRIu64
                         " MiB of free hugepages; need %" PRIu64 " MiB",
                         p->pci[i], node, (unsigned)node < MAX_NODES ? np.free[node] / MIB : 0,
                         (need + MIB - 1) / MIB);
            tp_check_fix(r, TP_TUNE_DIR "/reserve-hugepages.sh --node %d --mb %" PRIu64, node,
                         need_mib);
            return;
        }
    }
    if (p->n_pci == 0) {
        uint64_t best = 0;
        for (unsigned n = 0; n < nodes; n++)
            best = np.free[n] > best ? np.free[n] : best;
        if (best < need) {
            tp_check_set(r, TP_CHECK_FAIL,
                         "%" PRIu64 " MiB of hugepages reserved but at most %" PRIu64
                         " MiB free on any node; need %" PRIu64 " MiB",
                         total / MIB, best / MIB, (need + MIB - 1) / MIB);
            tp_check_fix(r, TP_TUNE_DIR "/reserve-hugepages.sh --node 0 --mb %" PRIu64, need_mib);
            return;
        }
    }
    if (!hugetlbfs_mounted(p->root)) {
        tp_check_set(r, TP_CHECK_FAIL,
                     "hugepages are reserved but no hugetlbfs is mounted: DPDK cannot map them");
        tp_check_fix(r, "mkdir -p /dev/hugepages && mount -t hugetlbfs nodev /dev/hugepages");
        return;
    }
    if (unknown >= 0) {
        tp_check_set(r, TP_CHECK_WARN,
                     "the firmware does not give the NUMA node of port %s (numa_node -1) on "
                     "this %u-node host: cannot tell whether its hugepages are local",
                     p->pci[unknown], nodes);
        tp_check_fix(
            r, "place hugepages on every node: " TP_TUNE_DIR "/reserve-hugepages.sh --mb %" PRIu64,
            need_mib);
        return;
    }
    tp_check_set(r, TP_CHECK_PASS, "%" PRIu64 " MiB of hugepages reserved%s%s", total / MIB,
                 p->n_pci ? ", enough free on each port's NUMA node" : " (no PCI port given)",
                 p->hugepage_bytes ? "" : " (no size requirement given)");
}

unsigned tp_hostcheck_hugepage_plan(const struct tp_hostcheck_params *p, unsigned *nodes,
                                    uint64_t *mib, unsigned max)
{
    uint64_t need = p->hugepage_bytes ? (p->hugepage_bytes + MIB - 1) / MIB : DEFAULT_RESERVE;
    unsigned n = 0;

    if (p->no_hugepages)
        return 0;
    for (unsigned i = 0; i <= p->n_pci && n < max; i++) {
        int node = i < p->n_pci ? tp_host_pci_numa_node(p->root, p->pci[i]) : 0;
        bool listed = false;

        if (i == p->n_pci && n > 0)
            break; /* node 0 only stands in when no port gave a node */
        if (node < 0)
            node = 0;
        for (unsigned k = 0; k < n; k++)
            listed |= nodes[k] == (unsigned)node;
        if (!listed) {
            nodes[n] = (unsigned)node;
            mib[n] = need;
            n++;
        }
    }
    return n;
}

/* Soft RLIMIT_MEMLOCK from /proc/self/limits: 1 with *bytes set, 0 if unlimited, -1 unknown. */
static int memlock_limit(const char *root, uint64_t *bytes)
{
    FILE *f = tp_hostfs_fopen(root, "/proc/self/limits");
    char line[256];
    int rc = -1;

    if (!f)
        return -1;
    while (rc < 0 && fgets(line, sizeof(line), f)) {
        char *value, *end;

        if (strncmp(line, "Max locked memory", 17) != 0)
            continue;
        value = line + 17 + strspn(line + 17, " \t");
        if (strncmp(value, "unlimited", 9) == 0) {
            rc = 0;
        } else {
            *bytes = strtoull(value, &end, 10);
            rc = end != value ? 1 : -1;
        }
    }
    fclose(f);
    return rc;
}

/* Does this process hold CAP_IPC_LOCK (which lifts the memlock limit)? */
static bool has_ipc_lock(const char *root)
{
    FILE *f = tp_hostfs_fopen(root, "/proc/self/status");
    char line[256];
    bool found = false;

    if (!f)
        return false;
    while (fgets(line, sizeof(line), f))
        if (strncmp(line, "CapEff:", 7) == 0)
            found = (strtoull(line + 7, NULL, 16) >> CAP_IPC_LOCK_BIT) & 1;
    fclose(f);
    return found;
}

void tp_check_memlock(const struct tp_hostcheck_params *p, struct tp_check_result *r)
{
    uint64_t limit = 0;
    int rc = memlock_limit(p->root, &limit);

    if (rc < 0) {
        tp_check_set(r, TP_CHECK_SKIP, "cannot read the locked-memory limit (/proc/self/limits)");
        return;
    }
    if (rc == 0) {
        tp_check_set(r, TP_CHECK_PASS, "locked-memory limit is unlimited");
        return;
    }
    if (has_ipc_lock(p->root)) {
        tp_check_set(r, TP_CHECK_PASS,
                     "locked-memory limit is %" PRIu64 " KiB, lifted by CAP_IPC_LOCK",
                     limit / 1024);
        return;
    }
    tp_check_fix(r, "LimitMEMLOCK=infinity in the systemd unit (shell: ulimit -l unlimited), or "
                    "AmbientCapabilities=CAP_IPC_LOCK");
    if (p->hugepage_bytes && limit >= p->hugepage_bytes) {
        r->fix[0] = '\0';
        tp_check_set(r, TP_CHECK_PASS,
                     "locked-memory limit %" PRIu64 " MiB covers the %" PRIu64 " MiB needed",
                     limit / MIB, p->hugepage_bytes / MIB);
    } else if (p->hugepage_bytes) {
        tp_check_set(r, TP_CHECK_FAIL,
                     "locked-memory limit is %" PRIu64 " KiB without CAP_IPC_LOCK; DPDK needs to "
                     "lock %" PRIu64 " MiB",
                     limit / 1024, p->hugepage_bytes / MIB);
    } else {
        tp_check_set(r, TP_CHECK_WARN,
                     "locked-memory limit is %" PRIu64 " KiB without CAP_IPC_LOCK: vfio maps "
                     "and DPDK locks its memory against it",
                     limit / 1024);
    }
}
