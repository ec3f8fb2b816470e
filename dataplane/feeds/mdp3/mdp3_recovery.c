/*
 * MDP3 snapshot recovery: see mdp3_recovery.h.
 */
#include "mdp3_recovery.h"

#include <string.h>

#include "mdp3_packet.h"

#define REC_HDR 14 /* u32 seq, u16 len, u64 rx_tsc */

size_t tp_mdp3_recovery_memsize(size_t buffer_bytes)
{
    return buffer_bytes;
}

void tp_mdp3_recovery_init(struct tp_mdp3_recovery *rec, void *buffer, size_t buffer_bytes)
{
    memset(rec, 0, sizeof(*rec));
    rec->buf = buffer;
    rec->cap = buffer_bytes;
}

void tp_mdp3_recovery_on_stale(struct tp_mdp3_recovery *rec, int stale)
{
    if (stale) {
        rec->stale++;
        rec->counters.stale_events++;
    } else if (rec->stale > 0) {
        rec->stale--;
        rec->counters.recovered++;
    }
}

void tp_mdp3_recovery_on_orders(struct tp_mdp3_recovery *rec, int incomplete)
{
    if (incomplete)
        rec->orders_incomplete++;
    else if (rec->orders_incomplete > 0)
        rec->orders_incomplete--;
}

void tp_mdp3_recovery_buffer(struct tp_mdp3_recovery *rec, uint32_t seq, const uint8_t *pkt,
                             uint16_t len, uint64_t rx_tsc)
{
    if (!tp_mdp3_recovery_needed(rec))
        return; /* no snapshot awaited: nothing to replay */
    if (rec->cap - rec->used < REC_HDR + (size_t)len) {
        rec->counters.buffer_full++;
        rec->kept_to_end = false;
        return;
    }
    if (rec->used == 0) {
        rec->kept_from = seq;
        rec->kept_to_end = true;
    }
    uint8_t *at = rec->buf + rec->used;
    memcpy(at, &seq, 4);
    memcpy(at + 4, &len, 2);
    memcpy(at + 6, &rx_tsc, 8);
    memcpy(at + REC_HDR, pkt, len);
    rec->used += REC_HDR + (size_t)len;
    rec->counters.buffered++;
}

uint32_t tp_mdp3_snapshot_last_seq(const uint8_t *pkt, size_t len)
{
    struct tp_mdp3_packet p;
    struct tp_mdp3_msg m;
    if (tp_mdp3_packet_init(&p, pkt, len) != 0)
        return 0;
    while (tp_mdp3_packet_next(&p, &m) == 1) {
        if (m.template_id == MKTDATA_SNAPSHOT_FULL_REFRESH52_TEMPLATE_ID) {
            struct mktdata_snapshot_full_refresh52 s;
            if (mktdata_snapshot_full_refresh52_wrap_for_decode(&s, m.body, m.body_len,
                                                                m.block_length, m.version) == 0)
                return mktdata_snapshot_full_refresh52_last_msg_seq_num_processed(&s);
        } else if (m.template_id == MKTDATA_SNAPSHOT_FULL_REFRESH_ORDER_BOOK53_TEMPLATE_ID) {
            struct mktdata_snapshot_full_refresh_order_book53 s;
            if (mktdata_snapshot_full_refresh_order_book53_wrap_for_decode(
                    &s, m.body, m.body_len, m.block_length, m.version) == 0)
                return mktdata_snapshot_full_refresh_order_book53_last_msg_seq_num_processed(&s);
        }
    }
    return 0;
}

void tp_mdp3_recovery_after_snapshot(struct tp_mdp3_recovery *rec, const uint8_t *pkt, uint16_t len,
                                     void (*apply)(void *ctx, const uint8_t *pkt, uint16_t len,
                                                   uint64_t rx_tsc),
                                     void *ctx)
{
    struct tp_mdp3_packet p;
    if (tp_mdp3_packet_init(&p, pkt, len) == 0) {
        /* The snapshot channel loops, restarting at sequence 1: a cycle is complete. */
        if (rec->cycle_packets > 0 && p.seq <= rec->last_snap_seq) {
            rec->cycle_seen = true;
            rec->counters.cycles++;
            rec->cycle_packets = 0;
        }
        rec->last_snap_seq = p.seq;
        rec->cycle_packets++;
    }
    tp_mdp3_recovery_replay(rec, pkt, len, apply, ctx);
}

void tp_mdp3_recovery_replay(struct tp_mdp3_recovery *rec, const uint8_t *pkt, uint16_t len,
                             void (*apply)(void *ctx, const uint8_t *pkt, uint16_t len,
                                           uint64_t rx_tsc),
                             void *ctx)
{
    rec->counters.snapshot_packets++;
    uint32_t last = tp_mdp3_snapshot_last_seq(pkt, len);
    if (last == 0)
        return;
    for (size_t off = 0; off + REC_HDR <= rec->used;) {
        uint32_t seq;
        uint16_t n;
        uint64_t rx_tsc;
        memcpy(&seq, rec->buf + off, 4);
        memcpy(&n, rec->buf + off + 4, 2);
        memcpy(&rx_tsc, rec->buf + off + 6, 8);
        if (seq > last) {
            apply(ctx, rec->buf + off + REC_HDR, n, rx_tsc);
            rec->counters.replayed++;
        }
        off += REC_HDR + (size_t)n;
    }
}

uint32_t tp_mdp3_recovery_replay_floor(struct tp_mdp3_recovery *rec, uint32_t applied_seq)
{
    if (rec->used > 0 && rec->kept_to_end)
        return rec->kept_from - 1;
    rec->used = 0; /* none kept, or some dropped: complete again from the next incremental */
    return applied_seq;
}

void tp_mdp3_recovery_done(struct tp_mdp3_recovery *rec)
{
    rec->used = 0;
    rec->kept_to_end = false;
}
