/*
 * ITCH late join and recovery through a snapshot (GLIMPSE 5.0): what a channel keeps while the
 * control plane fetches one, and the chunks the snapshot reaches the data lcore in.
 *
 * The control plane runs the GLIMPSE session (TCP) and hands its ITCH messages to the data
 * lcore in chunks through an rte_ring: BEGIN (an attempt starts: the books start over), DATA
 * (messages), END (the snapshot is whole: the MoldUDP64 sequence to continue from), FAILED (an
 * attempt failed; `final` when no attempt is left). The lcore applies one chunk at a time between
 * bursts, so it never blocks and its stall is bounded by a chunk's messages.
 *
 * Meanwhile the channel's multicast stream, after arbitration, is kept in a bounded ring of
 * messages (seq, bytes): when it is full the oldest goes (counted: messages older than any
 * snapshot still to come are the least needed). After END the kept messages are applied from the
 * snapshot's sequence on, exactly once: older ones are skipped, and a sequence missing between
 * the snapshot and the kept stream (a gap given up, or messages the full ring dropped) fails the
 * load (the books stay flagged and a new snapshot is asked for).
 *
 * States: OFF (no snapshot service configured), LIVE (messages go to the feed), WANTED (a
 * snapshot is needed: kept, waiting for BEGIN), LOADING (between BEGIN and END), REPLAYING (the
 * kept stream is being applied). `wanted` counts the requests the data lcore made; the control
 * plane reads it (relaxed atomic, one writer) to start a fetch.
 *
 * No DPDK, no allocation after init, single thread (the data lcore) except `wanted`.
 */
#ifndef TP_ITCH_SNAPSHOT_H
#define TP_ITCH_SNAPSHOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A kept message: 64 bytes with its sequence and length (ITCH messages take at most 50). */
#define TP_SNAP_MSG_MAX 54
struct tp_snap_slot {
    uint64_t seq;
    uint16_t len;
    uint8_t msg[TP_SNAP_MSG_MAX];
};

#define TP_SNAP_SLOT_BYTES sizeof(struct tp_snap_slot)

enum tp_snap_chunk_kind {
    TP_SNAP_CHUNK_BEGIN = 1,
    TP_SNAP_CHUNK_DATA = 2,
    TP_SNAP_CHUNK_END = 3,
    TP_SNAP_CHUNK_FAILED = 4,
};

/* Bytes of messages in a chunk: about 400 ITCH messages, tens of microseconds to apply. */
#define TP_SNAP_CHUNK_BYTES 16384

struct tp_snap_chunk {
    void *channel; /* the target; the data lcore applies only chunks for its own channels */
    uint32_t kind;
    uint32_t n_msgs;   /* DATA */
    uint32_t bytes;    /* DATA: of data[] used */
    uint32_t final;    /* FAILED: no attempt left */
    uint64_t next_seq; /* END */
    /* DATA: n_msgs times a u16 length (host order) then the message */
    uint8_t data[TP_SNAP_CHUNK_BYTES];
};

enum tp_snap_state {
    TP_SNAP_OFF = 0,
    TP_SNAP_LIVE,
    TP_SNAP_WANTED,
    TP_SNAP_LOADING,
    TP_SNAP_REPLAYING,
};

struct tp_snap_counters {
    uint64_t requests;            /* snapshots asked for by the data lcore */
    uint64_t begins;              /* attempts started (BEGIN chunks) */
    uint64_t loaded;              /* END chunks: snapshots received whole */
    uint64_t completed;           /* books healthy again after a snapshot */
    uint64_t failed;              /* attempts that failed (FAILED chunks) */
    uint64_t gave_up;             /* of which the last attempt: the books stay stale */
    uint64_t holes;               /* loads failed: a sequence missing after the snapshot */
    uint64_t messages;            /* snapshot messages applied */
    uint64_t kept;                /* multicast messages kept while not live */
    uint64_t kept_dropped;        /* the oldest kept, dropped: the ring was full */
    uint64_t kept_oversize;       /* too long to keep (no ITCH message is): skipped */
    uint64_t replayed;            /* kept messages applied after the snapshot */
    uint64_t skipped;             /* kept messages the snapshot already reflected */
    uint64_t kept_max;            /* the most messages kept at once */
    uint64_t longest_step_tsc;    /* the longest one chunk or replay step took (TSC, wall) */
    uint64_t longest_step_cpu_ns; /* the same in the lcore thread's CPU time */
};

struct tp_itch_snapshot {
    enum tp_snap_state state;
    uint32_t cap; /* kept messages at most */
    uint32_t head, count;
    uint64_t next_seq; /* REPLAYING: the next sequence to apply */
    struct tp_snap_slot *ring;
    struct tp_snap_counters counters;
    _Atomic uint64_t wanted; /* requests made: the control plane's trigger */
};

size_t tp_itch_snapshot_memsize(uint32_t cap);

/* mem: tp_itch_snapshot_memsize(cap) bytes (cap 0: OFF, mem unused). State LIVE otherwise. */
void tp_itch_snapshot_init(struct tp_itch_snapshot *s, void *mem, uint32_t cap);

/* Messages go to the feed only in LIVE (and OFF): otherwise they are kept. */
static inline bool tp_itch_snapshot_keeping(const struct tp_itch_snapshot *s)
{
    return s->state > TP_SNAP_LIVE;
}

/* A snapshot is needed (late join, a gap given up, an operator's request): LIVE -> WANTED, and
 * a request for the control plane. Ignored when OFF or already waiting for one. Returns
 * whether a request was made. */
bool tp_itch_snapshot_want(struct tp_itch_snapshot *s);

/* Keeps one multicast message (dropping the oldest when full). */
void tp_itch_snapshot_keep(struct tp_itch_snapshot *s, uint64_t seq, const uint8_t *msg,
                           uint16_t len);

/* The oldest kept message, removed (NULL when none). Valid until the next keep. */
const struct tp_snap_slot *tp_itch_snapshot_pop(struct tp_itch_snapshot *s);

/* Forgets every kept message. */
void tp_itch_snapshot_clear(struct tp_itch_snapshot *s);

/* A short name of a state, for logs and the status verb. */
const char *tp_itch_snapshot_state_name(enum tp_snap_state state);

#endif /* TP_ITCH_SNAPSHOT_H */
