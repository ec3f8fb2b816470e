/*
 * A bus instance: the segments of one tickplane instance, as the writers create them and as
 * readers map them.
 *
 *   <dir>/tickplane.<instance>.ring      broadcast ring (events) of writer 0
 *   <dir>/tickplane.<instance>.ring.<k>  the ring of writer k, 1 <= k < rings (several writers)
 *   <dir>/tickplane.<instance>.state     conflated state table (one, shared by the writers)
 *   <dir>/tickplane.<instance>.counters  writer-side counters (the daemon adds its own slots)
 *   <dir>/tickplane.<instance>.reader.<pid>  one per reader: that reader's counters (it owns it)
 *
 * Writers: one per data lcore, each with its own ring (single producer), its own interest flags
 * and its own counters ("bus.*" for writer 0, "bus.ring=<k>.*" for the others). They share the
 * state table: each writes only the entries of its own instruments (an instrument belongs to one
 * writer), so every entry still has one writer. A reader learns how many rings there are from the
 * header of ring 0 (params[2]); every ring's header names its index (params[3]) and the epoch
 * of the state segment it was created with (params[4]), so a reader never mixes two runs' rings.
 * A single writer's bus is exactly the one-ring layout.
 *
 * The writer side is what the data plane publishes through: tp_bus_claim / tp_bus_commit (zero
 * copy) or tp_bus_publish, after updating the state table. It never waits and never makes a
 * syscall after tp_bus_writers_open. It skips instruments nobody is interested in
 * (tp_bus_set_interest; everything is interesting until told otherwise) and counts what it did.
 */
#ifndef TP_BUS_H
#define TP_BUS_H

#include <stdint.h>
#include <sys/types.h>

#include "broadcast_ring.h"
#include "counters.h"
#include "segment.h"
#include "state_table.h"

#define TP_BUS_DEFAULT_DIR "/dev/shm"
#define TP_BUS_MAX_RINGS   16 /* writers (data lcores) of one instance */

/* Ring segment header params[] (tp_seg_header): what a reader checks across the rings. */
enum {
    TP_BUS_RING_PARAM_BYTES = 0,
    TP_BUS_RING_PARAM_MAX_RECORD = 1,
    TP_BUS_RING_PARAM_RINGS = 2,       /* rings of the instance (0 from older writers: 1) */
    TP_BUS_RING_PARAM_INDEX = 3,       /* this ring's index */
    TP_BUS_RING_PARAM_STATE_EPOCH = 4, /* writer_epoch of the state segment of its run */
};

struct tp_bus_params {
    const char *instance; /* [A-Za-z0-9_-]+ */
    const char *dir;      /* NULL: TP_BUS_DEFAULT_DIR (or a hugetlbfs mount) */
    uint64_t ring_bytes;  /* ring data capacity, a power of two */
    uint32_t max_record;  /* largest record (header + SBE message) */
    uint32_t instruments; /* state table entries */
    uint32_t depth;       /* state table levels per side, <= TP_MAX_DEPTH */
    uint32_t counters;    /* counter slots in the counters segment (>= 8) */
    mode_t mode;          /* segment file mode, e.g. 0640 */
    gid_t gid;            /* segment group; (gid_t)-1: the creator's */
    /* Told to readers in every header: how old a beat may be (ms); 0: their default. */
    uint32_t heartbeat_timeout_ms;
};

/* Writer-side counters, in the counters segment. */
struct tp_bus_writer_counters {
    struct tp_counter *published;       /* records written */
    struct tp_counter *published_bytes; /* record bytes written (aligned) */
    struct tp_counter *no_interest;     /* records skipped: nobody subscribed to the instrument */
    struct tp_counter *too_large;       /* records refused: over max_record */
};

struct tp_bus_writer {
    struct tp_seg ring_seg;
    struct tp_seg state_seg;    /* writer 0 only (the others point at its table) */
    struct tp_seg counters_seg; /* writer 0 only */
    struct tp_ring_writer ring;
    struct tp_state_table *state;
    struct tp_counters *counters;
    struct tp_bus_writer_counters stats;
    uint8_t *interest; /* per instrument: non-zero = publish; private to the writer */
    uint32_t instruments;
    /* The ring at the last flush: what was committed since is added to the shared counters
     * once per flush, from the ring's own positions (nothing counted per record). */
    uint64_t flushed_sequence;
    uint64_t flushed_bytes; /* ring tail minus padding */
};

/*
 * Create the instance's segments for n writers (1..TP_BUS_MAX_RINGS; ws[0..n)), replacing a
 * previous run's, and publish them: counters, state, rings n-1..1, ring 0 last, so a reader that
 * finds ring 0 finds the rest. 0 or -errno (nothing left open).
 */
int tp_bus_writers_open(struct tp_bus_writer *ws, unsigned n, const struct tp_bus_params *p,
                        char *err, size_t err_len);

/*
 * The bytes n writers' segments take on a file system of this block size: every file of the
 * instance (rings, state table, counters), headers included. 0 when p is invalid.
 */
uint64_t tp_bus_footprint(const struct tp_bus_params *p, unsigned n, uint64_t block);

/* One writer: tp_bus_writers_open(w, 1, p, ...). */
int tp_bus_writer_open(struct tp_bus_writer *w, const struct tp_bus_params *p, char *err,
                       size_t err_len);

/* Mark the writer's segments CLOSED and unmap; unlink_files removes them too. Close writers
 * k >= 1 before writer 0 (they use its state table until then). */
void tp_bus_writer_close(struct tp_bus_writer *w, int unlink_files);

/* Data-plane thread only: whether records of instrument id are published at all. */
void tp_bus_set_interest(struct tp_bus_writer *w, uint32_t id, int interested);
void tp_bus_set_interest_all(struct tp_bus_writer *w, int interested);

static inline int tp_bus_wants(const struct tp_bus_writer *w, uint32_t id)
{
    return id == UINT32_MAX || (id < w->instruments && w->interest[id]);
}

/* The refusals of tp_bus_claim (counted out of line: they are rare). */
void *tp_bus_claim_refused(struct tp_bus_writer *w, uint32_t id);

/*
 * Reserve a record for instrument id (UINT32_MAX: channel-wide). Returns where to write the
 * payload, or NULL when nobody is interested or the payload is too large (counted). A non-NULL
 * claim must be followed by tp_bus_commit or tp_bus_commit_deferred.
 */
static inline void *tp_bus_claim(struct tp_bus_writer *w, uint32_t id, uint32_t payload_len)
{
    void *dst = tp_bus_wants(w, id) ? tp_ring_claim(&w->ring, payload_len) : NULL;
    return dst != NULL ? dst : tp_bus_claim_refused(w, id);
}

/*
 * Complete the claimed record without moving the shared tail: readers following at their cursor
 * see it at once, lagging readers, lag reports and the published counters at the next
 * tp_bus_flush (one shared store per burst).
 */
static inline uint64_t tp_bus_commit_deferred(struct tp_bus_writer *w, uint16_t type,
                                              uint16_t topic, uint32_t id, uint32_t flags)
{
    return tp_ring_commit_deferred(&w->ring, type, topic, id, flags);
}

/* Make every deferred record visible (e.g. at the end of each rx burst), and count them. */
static inline void tp_bus_flush(struct tp_bus_writer *w)
{
    tp_ring_flush(&w->ring);
    uint64_t bytes = w->ring.tail - w->ring.padded;
    tp_counter_add(w->stats.published, w->ring.next_sequence - w->flushed_sequence);
    tp_counter_add(w->stats.published_bytes, bytes - w->flushed_bytes);
    w->flushed_sequence = w->ring.next_sequence;
    w->flushed_bytes = bytes;
}

/* Publish the claimed record. Returns its ring sequence. */
static inline uint64_t tp_bus_commit(struct tp_bus_writer *w, uint16_t type, uint16_t topic,
                                     uint32_t id, uint32_t flags)
{
    uint64_t sequence = tp_bus_commit_deferred(w, type, topic, id, flags);
    tp_bus_flush(w);
    return sequence;
}

/*
 * Sequence the next committed record will get. The writer stores it in the state entry's
 * book.bus_sequence when it updates an instrument's state for that record, so a reader that
 * reloads the entry knows which ring records the copy already reflects (and skips them). The
 * state update for a record must happen before the next record is published.
 */
static inline uint64_t tp_bus_next_sequence(const struct tp_bus_writer *w)
{
    return w->ring.next_sequence;
}

/* claim + copy + commit. Returns the ring sequence, or 0 when skipped. */
uint64_t tp_bus_publish(struct tp_bus_writer *w, uint16_t type, uint16_t topic, uint32_t id,
                        uint32_t flags, const void *payload, uint32_t payload_len);

/*
 * Removes the reader segments (<dir>/tickplane.<instance>.reader.<pid>) of readers that are gone:
 * closed by their reader, or whose process no longer exists in this PID namespace (a reader in
 * another PID namespace is left: its pid means nothing here). Only files this process may remove
 * go (in a sticky directory such as /dev/shm: its own, or any as root). dir NULL: the default.
 * Returns how many were removed. Side path (a directory scan and a few syscalls per reader).
 */
unsigned tp_bus_sweep_readers(const char *dir, const char *instance);

/* Reader side: the instance's segments mapped read-only. */
struct tp_bus_reader {
    struct tp_seg ring_seg; /* ring 0 */
    struct tp_seg state_seg;
    struct tp_seg counters_seg;
    const struct tp_state_table *state;
    const struct tp_counters *counters;
    const void *ring_mem;                               /* ring 0 */
    unsigned n_rings;                                   /* >= 1 */
    struct tp_seg more_ring_segs[TP_BUS_MAX_RINGS - 1]; /* rings 1..n_rings-1 */
};

/*
 * Map an instance's segments read-only: every ring, the state table and the counters (see
 * tp_seg_attach for the errors; -ESTALE also when the rings are not of one run).
 */
int tp_bus_reader_open(struct tp_bus_reader *r, const char *dir, const char *instance, char *err,
                       size_t err_len);

void tp_bus_reader_close(struct tp_bus_reader *r);

/* Ring k (0 <= k < n_rings) and its segment. */
const void *tp_bus_reader_ring(const struct tp_bus_reader *r, unsigned k);
const struct tp_seg *tp_bus_reader_ring_seg(const struct tp_bus_reader *r, unsigned k);

/* One load per segment: non-zero once the writer closed or replaced the instance. */
int tp_bus_reader_stale(const struct tp_bus_reader *r);

#endif /* TP_BUS_H */
