/*
 * MDP3 snapshot recovery: when to listen to the market recovery (snapshot) channel, and the
 * incrementals to replay after a snapshot.
 *
 * The MDP3 feed (dataplane/feeds/mdp3/tp_mdp3_feed.h) tracks RptSeq per instrument: an instrument
 * whose RptSeq jumps goes stale (only that one: the others keep flowing) until a snapshot newer
 * than its book arrives. This module:
 *  - counts stale instruments (the feed's stale callbacks) and says when the snapshot channel is
 *    needed: at start (until one full snapshot cycle was seen) and while anything is stale;
 *  - keeps a copy of the incremental packets received while recovering, and after each snapshot
 *    packet replays those after its LastMsgSeqNumProcessed (the feed skips entries at or below an
 *    instrument's RptSeq, so replaying is harmless for instruments that did not need it);
 *  - notices the end of a snapshot cycle (the snapshot channel restarts its sequence);
 *  - with order-level (MBO) snapshot lines, counts the order books whose order view is
 *    incomplete (the feed's orders watcher) and needs the snapshot lines until none is, so every
 *    order book a price-level snapshot emptied is refilled by its order-level snapshot (53),
 *    with the incrementals after its LastMsgSeqNumProcessed replayed (tp_mdp3_recovery_replay).
 * The buffer is sized at init; when it fills, buffering stops (counted) and the stale
 * instruments recover from the next cycle's snapshots instead. No DPDK, no allocation after init.
 */
#ifndef TP_RECOVERY_MDP3_RECOVERY_H
#define TP_RECOVERY_MDP3_RECOVERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp_mdp3_recovery_counters {
    uint64_t stale_events;     /* instruments that went stale */
    uint64_t recovered;        /* instruments recovered by a snapshot */
    uint64_t snapshot_packets; /* snapshot packets handed to the feed */
    uint64_t cycles;           /* snapshot cycles seen complete */
    uint64_t buffered;         /* incremental packets copied while recovering */
    uint64_t replayed;         /* incremental packets replayed after snapshots */
    uint64_t buffer_full;      /* packets not buffered: buffer full */
    uint64_t joins;            /* times the snapshot channel was joined */
};

struct tp_mdp3_recovery {
    struct tp_mdp3_recovery_counters counters;
    uint32_t stale;             /* instruments stale now */
    uint32_t orders_incomplete; /* order books whose order view is incomplete now */
    bool mbo_lines;             /* order-level snapshot lines configured: they refill those */
    bool cycle_seen;            /* one full snapshot cycle since start */
    bool joined;                /* the channel listens to the snapshot lines */
    uint32_t last_snap_seq;     /* latest snapshot packet sequence (cycle detection) */
    uint32_t cycle_packets;     /* snapshot packets in the current cycle */
    uint8_t *buf;               /* buffered packets: [u32 seq][u16 len][u64 rx_tsc][payload] */
    size_t cap;
    size_t used;
    uint32_t kept_from; /* the first packet buffered (used > 0) */
    bool kept_to_end;   /* every incremental since kept_from is buffered (none was dropped) */
};

size_t tp_mdp3_recovery_memsize(size_t buffer_bytes);
/* mem: tp_mdp3_recovery_memsize() bytes. */
void tp_mdp3_recovery_init(struct tp_mdp3_recovery *rec, void *buffer, size_t buffer_bytes);

/* The feed's stale callback: an instrument went stale (stale != 0) or recovered. */
void tp_mdp3_recovery_on_stale(struct tp_mdp3_recovery *rec, int stale);

/* Whether the snapshot channel is needed now (inline: asked after every incremental). */
static inline bool tp_mdp3_recovery_needed(const struct tp_mdp3_recovery *rec)
{
    return rec->stale > 0 || !rec->cycle_seen || (rec->mbo_lines && rec->orders_incomplete > 0);
}

/* The feed's orders watcher: an order view became incomplete (incomplete != 0) or complete. */
void tp_mdp3_recovery_on_orders(struct tp_mdp3_recovery *rec, int incomplete);

/* An incremental packet applied while the snapshot channel is needed: keep a copy to replay. */
void tp_mdp3_recovery_buffer(struct tp_mdp3_recovery *rec, uint32_t seq, const uint8_t *pkt,
                             uint16_t len, uint64_t rx_tsc);

/*
 * A snapshot packet (already handed to the feed): notes cycle progress and replays, in order,
 * the buffered incrementals after its LastMsgSeqNumProcessed through `apply`.
 */
void tp_mdp3_recovery_after_snapshot(struct tp_mdp3_recovery *rec, const uint8_t *pkt, uint16_t len,
                                     void (*apply)(void *ctx, const uint8_t *pkt, uint16_t len,
                                                   uint64_t rx_tsc),
                                     void *ctx);

/*
 * An order-level snapshot packet (already handed to the feed): replays, in order, the buffered
 * incrementals after its LastMsgSeqNumProcessed through `apply` (its loop's sequence is its own:
 * no cycle is noted).
 */
void tp_mdp3_recovery_replay(struct tp_mdp3_recovery *rec, const uint8_t *pkt, uint16_t len,
                             void (*apply)(void *ctx, const uint8_t *pkt, uint16_t len,
                                           uint64_t rx_tsc),
                             void *ctx);

/*
 * The lowest LastMsgSeqNumProcessed an order-level snapshot may have to be loaded into a book
 * that is in sync (tp_mdp3_feed.replay_floor): the incrementals after it, through
 * `applied_seq` (the latest applied), are all buffered to be replayed, or none was applied.
 * Order entries carry no RptSeq, so a replay with a hole would leave the order book wrong with
 * nothing to tell. A buffer that dropped packets (full) restarts here, empty, so the snapshots
 * after the next incrementals qualify (the price-level ones need no such care: their replayed
 * entries are checked by RptSeq).
 */
uint32_t tp_mdp3_recovery_replay_floor(struct tp_mdp3_recovery *rec, uint32_t applied_seq);

/* Nothing stale and a cycle seen: forget the buffer (the caller leaves the snapshot lines). */
void tp_mdp3_recovery_done(struct tp_mdp3_recovery *rec);

/* LastMsgSeqNumProcessed of the packet's first snapshot message, or 0 if it has none. */
uint32_t tp_mdp3_snapshot_last_seq(const uint8_t *pkt, size_t len);

#endif
