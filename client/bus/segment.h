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
 *   - a reader learns that the writer died without marking anything (SIGKILL, the OOM killer):
 *     a writer that keeps a heartbeat (the daemon) stores CLOCK_MONOTONIC in every header it
 *     writes at least every few milliseconds (tp_seg_heartbeat); a reader compares it with its
 *     own clock (tp_seg_heartbeat_stale: one vDSO clock read and one load, no syscall in
 *     practice). CLOCK_MONOTONIC is one clock for the whole machine, so this works for a reader
 *     in another PID namespace (a container), where the writer's pid means nothing; it does not
 *     work across time namespaces (they offset CLOCK_MONOTONIC) or across machines.
 *     A writer that keeps no heartbeat (heartbeat 0: tools, tests, a replay) is found by
 *     tp_seg_check_writer's pid check (a syscall: for side paths, not for the poll loop).
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
#include <time.h>

/*
 * Layout version 2: an instance may have several rings (one per data lcore) and ring 0's header
 * says how many; a version-1 reader would see ring 0 alone and miss the others' instruments
 * silently. Version 3: rings carry tpout version 3, whose OrderEvents of order-only books hold
 * their level changes under the record tag TP_RECORD_ORDER_DEPTH; a version-2 reader would drop
 * those records (an unknown tag) and with them the depth and orders of those books, silently.
 * Version 4: the header carries the writer's PID namespace (params[] moved) and heartbeat; a
 * version-3 reader would misread params[] and take a killed daemon's segments for a live, quiet
 * market.
 */
#define TP_SEG_MAGIC          0x3153454e414c504bULL /* "KPLANES1" little-endian */
#define TP_SEG_LAYOUT_VERSION 4u
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
    /* How old the heartbeat may be before readers take the writer for dead (ms); 0: the
     * reader's default (writers before this field wrote 0 here). */
    uint32_t heartbeat_timeout_ms;
    uint64_t writer_pid_ns;              /* inode of the writer's PID namespace; 0: unknown */
    uint64_t params[TP_SEG_PARAMS];      /* kind-specific sizes, for tools that only read headers */
    char name[TP_SEG_NAME_MAX];          /* instance name */
    _Alignas(64) _Atomic uint32_t state; /* enum tp_seg_state; own cache line */
    /* CLOCK_MONOTONIC ns of the writer's last beat; 0: this writer keeps no heartbeat. Own cache
     * line: the beats do not disturb readers polling `state`. */
    _Alignas(64) _Atomic uint64_t heartbeat_ns;
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
    const char *path;              /* full path of the segment file */
    const char *instance;          /* instance name recorded in the header */
    uint32_t kind;                 /* enum tp_seg_kind */
    uint64_t data_size;            /* bytes needed after the header */
    mode_t mode;                   /* e.g. 0640 */
    gid_t gid;                     /* group of the file; (gid_t)-1 keeps the creator's */
    const uint64_t *params;        /* TP_SEG_PARAMS values copied into the header, or NULL */
    uint32_t heartbeat_timeout_ms; /* the header's (0: the readers' default) */
};

/* Inode of the calling process's PID namespace (two processes share it when equal); 0 when
 * /proc is not mounted. */
uint64_t tp_seg_pid_namespace(void);

/* Build "<dir>/tickplane.<instance>.<part>" into out. Returns -ENAMETOOLONG or -EINVAL (bad name).
 */
int tp_seg_path(char *out, size_t out_len, const char *dir, const char *instance, const char *part);

/* The size of a segment file holding data_size bytes on a file system of this block size
 * (hugetlbfs: the huge page size), header included. */
uint64_t tp_seg_file_size(uint64_t data_size, uint64_t block);

/*
 * Writer: create and map a new segment file (zero-filled data, header written, state INIT),
 * replacing any previous file at the path (marked REPLACED). The file's blocks are allocated
 * here (posix_fallocate): a file system without room for it is -ENOSPC now, not a SIGBUS when
 * the data plane first writes a page. The file becomes visible under its name only by
 * tp_seg_publish, after the caller has initialised the data; its temporary file is removed on
 * every failure (here, in tp_seg_publish, or by tp_seg_close of a segment never published).
 * Returns 0 or a negative errno; err gets a readable reason.
 */
int tp_seg_create(struct tp_seg *seg, const struct tp_seg_create_params *p, char *err,
                  size_t err_len);

/* Writer: mark LIVE and rename into place. Returns 0 or a negative errno. */
int tp_seg_publish(struct tp_seg *seg, char *err, size_t err_len);

/* The system user the packaged daemon runs as (deploy/debian). */
#define TP_SEG_SERVICE_USER "tickplane"
/* Names (user name or uid) one more user whose segments readers accept. */
#define TP_SEG_OWNER_ENV "TICKPLANE_BUS_OWNER"

/* Whether a reader accepts segments owned by uid: root, the reader's own user, the service user
 * or the user TICKPLANE_BUS_OWNER names. */
int tp_seg_writer_trusted(uid_t uid);

/*
 * Reader: map an existing segment read-only, after checking magic, layout version, kind, sizes
 * and that it is LIVE, and that it is a regular file of a trusted owner (tp_seg_writer_trusted)
 * writable by its owner alone. Returns 0 or:
 *   -ENOENT            no such segment (writer not started),
 *   -EPERM             another user's file, or one others may write (err names owner or mode),
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

/* CLOCK_MONOTONIC in ns, the heartbeat's clock (vDSO: no syscall on Linux/x86-64). */
static inline uint64_t tp_seg_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Writer: one beat (now_ns from tp_seg_clock_ns, never 0). Several threads of the writer may
 * beat (the daemon's main and data lcores): the beat only moves forward, so a thread that read
 * its clock before being preempted never sets it back over a fresher one. One load and, at most
 * a few times, one compare-and-swap.
 */
static inline void tp_seg_heartbeat(struct tp_seg *seg, uint64_t now_ns)
{
    uint64_t beat = atomic_load_explicit(&seg->hdr->heartbeat_ns, memory_order_relaxed);
    while (beat < now_ns &&
           !atomic_compare_exchange_weak_explicit(&seg->hdr->heartbeat_ns, &beat, now_ns,
                                                  memory_order_release, memory_order_relaxed))
        ;
}

/*
 * Reader: how long ago (ns) the writer last beat at now_ns; 0 when it keeps no heartbeat or beat
 * after the reader read its clock. One load.
 */
static inline uint64_t tp_seg_heartbeat_age(const struct tp_seg *seg, uint64_t now_ns)
{
    uint64_t beat = atomic_load_explicit(&seg->hdr->heartbeat_ns, memory_order_acquire);
    return beat != 0 && now_ns > beat ? now_ns - beat : 0;
}

/* Reader: non-zero when the writer keeps a heartbeat and its last beat is older than max_age_ns. */
static inline int tp_seg_heartbeat_stale(const struct tp_seg *seg, uint64_t now_ns,
                                         uint64_t max_age_ns)
{
    return tp_seg_heartbeat_age(seg, now_ns) > max_age_ns;
}

/*
 * Side path (syscalls): 0 when the writer is alive and the path still names this file; -ESTALE
 * when replaced/closed/renamed; -EOWNERDEAD when the writer keeps a heartbeat and it is older
 * than max_age_ns (killed or hung). The pid check is made only for a writer that keeps no
 * heartbeat and runs in the reader's PID namespace (elsewhere its pid names another process or
 * none): -ESRCH when that process is gone; such a writer in another namespace is taken as alive.
 */
int tp_seg_check_writer(const struct tp_seg *seg, uint64_t max_age_ns);

#endif /* TP_SEGMENT_H */
