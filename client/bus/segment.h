/*
 * Shared-memory segments: one file under /dev/shm (or a hugetlbfs mount) per bus part.
 *
 * Every segment starts with a versioned header (struct tp_seg_header, one page) so that
 *   - a reader refuses a segment it does not understand (wrong magic, kind or layout version),
 *     with a message that says why;
 *   - a reader learns that the writer restarted: a new writer never reuses a live file, it builds
 *     a new one under a temporary name, renames it over the old name and marks the old file
 *     REPLACED; a writer that closes cleanly marks its file CLOSED. A reader sees either in one
 *     load of the header's state word (tp_seg_writer_gone), which is cheap enough for a poll loop.
 *     A writer that died without marking anything is found by tp_seg_check_writer (a syscall: for
 *     side paths, not for the poll loop).
 *
 * The writer maps read-write; readers map PROT_READ only, so a reader cannot corrupt the bus.
 * Mode and group of the file are applied with fchmod/fchown before the file becomes visible.
 * Nothing here allocates after create/attach.
 */
#ifndef TP_SEGMENT_H
#define TP_SEGMENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Layout version 2: an instance may have several rings (one per data lcore) and ring 0's header
 * says how many; a version-1 reader would see ring 0 alone and miss the others' instruments
 * silently. Version 3: rings carry tpout version 3, whose OrderEvents of order-only books hold
 * their level changes under the record tag TP_RECORD_ORDER_DEPTH; a version-2 reader would drop
 * those records (an unknown tag) and with them the depth and orders of those books, silently.
 */
#define TP_SEG_MAGIC          0x3153454e414c504bULL /* "KPLANES1" little-endian */
#define TP_SEG_LAYOUT_VERSION 3u
#define TP_SEG_HEADER_SIZE    4096u /* data starts page-aligned after the header */
#define TP_SEG_NAME_MAX       64u
#define TP_SEG_PARAMS         8u

/* What a segment holds: a reader asks for the kind it expects. */
enum tp_seg_kind {
    TP_SEG_RING = 1,     /* broadcast ring (broadcast_ring.h) */
    TP_SEG_STATE = 2,    /* conflated state table (state_table.h) */
    TP_SEG_COUNTERS = 3, /* counters area (counters.h) */
};

/* Lifecycle of a segment file, in tp_seg_header.state. */
enum tp_seg_state {
    TP_SEG_STATE_INIT = 0,     /* being built; never visible under the public name */
    TP_SEG_STATE_LIVE = 1,     /* the writer is publishing into it */
    TP_SEG_STATE_CLOSED = 2,   /* the writer closed it cleanly */
    TP_SEG_STATE_REPLACED = 3, /* a newer writer replaced it: re-attach */
};

struct tp_seg_header {
    uint64_t magic;          /* TP_SEG_MAGIC */
    uint32_t layout_version; /* TP_SEG_LAYOUT_VERSION */
    uint32_t kind;           /* enum tp_seg_kind */
    uint64_t header_size;    /* TP_SEG_HEADER_SIZE */
    uint64_t data_size;      /* bytes usable after the header */
    uint64_t file_size;      /* header + data, rounded up to the file system's block */
    uint64_t created_ns;     /* CLOCK_REALTIME at creation */
    uint64_t writer_epoch;   /* unique per creation: a reader compares it after re-attach */
    uint32_t writer_pid;
    uint32_t reserved;
    uint64_t params[TP_SEG_PARAMS];      /* kind-specific sizes, for tools that only read headers */
    char name[TP_SEG_NAME_MAX];          /* instance name */
    _Alignas(64) _Atomic uint32_t state; /* enum tp_seg_state; own cache line */
};

/* A mapped segment, in the mapping process's private memory. */
struct tp_seg {
    struct tp_seg_header *hdr; /* const for readers (mapped PROT_READ) */
    void *data;                /* hdr + TP_SEG_HEADER_SIZE */
    size_t map_size;
    int writable;
    dev_t dev; /* identity of the file, to notice a replacement */
    ino_t ino;
    char path[256];
};

struct tp_seg_create_params {
    const char *path;       /* full path of the segment file */
    const char *instance;   /* instance name recorded in the header */
    uint32_t kind;          /* enum tp_seg_kind */
    uint64_t data_size;     /* bytes needed after the header */
    mode_t mode;            /* e.g. 0640 */
    gid_t gid;              /* group of the file; (gid_t)-1 keeps the creator's */
    const uint64_t *params; /* TP_SEG_PARAMS values copied into the header, or NULL */
};

/* Build "<dir>/tickplane.<instance>.<part>" into out. Returns -ENAMETOOLONG or -EINVAL (bad name).
 */
int tp_seg_path(char *out, size_t out_len, const char *dir, const char *instance, const char *part);

/*
 * Writer: create and map a new segment file (zero-filled data, header written, state INIT),
 * replacing any previous file at the path (marked REPLACED). The file becomes visible under its
 * name only by tp_seg_publish, after the caller has initialised the data.
 * Returns 0 or a negative errno; err gets a readable reason.
 */
int tp_seg_create(struct tp_seg *seg, const struct tp_seg_create_params *p, char *err,
                  size_t err_len);

/* Writer: mark LIVE and rename into place. Returns 0 or a negative errno. */
int tp_seg_publish(struct tp_seg *seg, char *err, size_t err_len);

/*
 * Reader: map an existing segment read-only, after checking magic, layout version, kind, sizes
 * and that it is LIVE. Returns 0 or:
 *   -ENOENT            no such segment (writer not started),
 *   -EBADF / -EINVAL   not a tickplane segment, or the wrong kind, or truncated,
 *   -EPROTONOSUPPORT   layout version differs from this library's (err says both versions),
 *   -ESTALE            the segment is CLOSED or REPLACED.
 */
int tp_seg_attach(struct tp_seg *seg, const char *path, uint32_t kind, char *err, size_t err_len);

/* Writer: mark CLOSED (if still ours and LIVE) and unmap. Readers: unmap. */
void tp_seg_close(struct tp_seg *seg);

/* Writer: remove the file name (used by tests and by a daemon shutting down for good). */
int tp_seg_unlink(const struct tp_seg *seg);

/* One load: non-zero when the writer closed or replaced this segment. Safe in a poll loop. */
static inline int tp_seg_writer_gone(const struct tp_seg *seg)
{
    return atomic_load_explicit(&seg->hdr->state, memory_order_acquire) != TP_SEG_STATE_LIVE;
}

/*
 * Side path (syscalls): 0 when the writer process is alive and the path still names this file;
 * -ESTALE when replaced/closed/renamed; -ESRCH when the writer process is gone.
 */
int tp_seg_check_writer(const struct tp_seg *seg);

#endif /* TP_SEGMENT_H */
