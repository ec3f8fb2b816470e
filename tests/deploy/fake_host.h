/*
 * Fake /proc and /sys trees for the host-check tests.
 *
 * fake_host_create() builds, in a new temp dir, a host that is tuned the way tickplane wants:
 * 4 cpus on 2 NUMA nodes (0-1 on node 0, 2-3 on node 1), data lcores 2-3 isolated (isolcpus,
 * nohz_full, rcu_nocbs), performance governor, IRQs on 0-1, no watchdog, vm.stat_interval 10,
 * tsc clocksource with an invariant TSC, THP never, 1 GiB of 2 MiB hugepages on node 1 with
 * hugetlbfs mounted, unlimited memlock, and port 0000:3b:00.0 on node 1 bound to vfio-pci with
 * an IOMMU group. Every check passes on it; each test then breaks one thing.
 */
#ifndef TP_TESTS_FAKE_HOST_H
#define TP_TESTS_FAKE_HOST_H

#include <stddef.h>

#define FAKE_PCI "0000:3b:00.0"

/* Creates the tuned host; root receives its path. Fails the test on error. */
void fake_host_create(char *root, size_t size);

/* Removes the whole tree. */
void fake_host_destroy(const char *root);

/* Writes content to root/path (creating directories); fails the test on error. */
void fake_write(const char *root, const char *path, const char *content);

/* Creates root/path as a symlink to target (creating directories). */
void fake_symlink(const char *root, const char *path, const char *target);

/* Creates root/path as a directory (and its parents). */
void fake_mkdir(const char *root, const char *path);

/* Removes root/path, a file, a symlink or a whole directory. */
void fake_remove(const char *root, const char *path);

#endif
