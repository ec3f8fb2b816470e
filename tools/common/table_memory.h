/*
 * Table memory for the tools that run the data plane's code without DPDK (the replay, the
 * benchmarks): zeroed (an anonymous mapping), page-aligned, and on 2 MiB transparent huge pages
 * where the kernel allows it (madvise mode), as the daemon's DPDK hugepage memory is in
 * production; tables probed at random would otherwise spend their time in TLB misses. With
 * huge_pages false the mapping keeps 4 KiB pages, as the daemon has under --no-huge.
 */
#ifndef TP_TABLE_MEMORY_H
#define TP_TABLE_MEMORY_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/mman.h>

/* size bytes of zeroed memory, or NULL; released with munmap(p, size). */
static inline void *tp_table_memory(size_t size, bool huge_pages)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    if (p == MAP_FAILED)
        return NULL;
    madvise(p, size, huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    return p;
}

#endif /* TP_TABLE_MEMORY_H */
