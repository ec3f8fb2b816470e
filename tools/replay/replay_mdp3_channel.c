/*
 * MDP3 packets down the daemon's channel path: see replay_mdp3_channel.h.
 */
#include "replay_mdp3_channel.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "mdp3_packet.h"
#include "replay_arb.h"
#include "replay_input.h"
#include "replay_mdp3.h"
#include "tp_venue.h"

/* A feed call on packet `record`: its messages counted, a snapshot the audit found different
 * reported. */
static void feed(struct replay *r, const uint8_t *payload, uint16_t len, uint64_t ts)
{
    struct tp_mdp3_feed *f = &replay_mdp3_of(r)->feed;
    uint64_t before = f->counters.messages;
    uint64_t mismatches = f->counters.snapshot_mismatch;
    uint64_t order_mismatches = f->counters.order_snapshot_mismatch;
    int rc = tp_mdp3_feed_packet(f, payload, len, ts);
    r->bad_packets += rc < 0;
    r->messages += f->counters.messages - before;
    if (f->counters.order_snapshot_mismatch != order_mismatches)
        replay_warn_book(
            r,
            "packet %" PRIu64 " (offset %zu): an order-level snapshot (53) differs from "
            "its order book at the same LastMsgSeqNumProcessed (the book was wrong; the "
            "snapshot replaced it)",
            r->record, r->record_offset);
    else if (f->counters.snapshot_mismatch != mismatches)
        replay_warn_book(r,
                         "packet %" PRIu64 " (offset %zu): a snapshot differs from its book at the "
                         "same RptSeq (the book was wrong; the snapshot replaced it)",
                         r->record, r->record_offset);
}

/* A delivered incremental. */
static void apply(struct replay *r, const uint8_t *payload, uint16_t len, uint32_t skip,
                  uint64_t ts)
{
    (void)skip; /* one sequence a packet: nothing to pass over */
    feed(r, payload, len, ts);
}

/* The instruments that missed a loss find it by RptSeq: nothing to flag here. */
static void lost(struct replay *r)
{
    (void)r;
}

static const struct replay_arb_venue mdp3_venue = {
    .unit = "MsgSeqNum",
    .items = "packets",
    .apply = apply,
    .lost = lost,
    .lost_books = "the books that missed them go stale by RptSeq",
    .late_books = "books without a snapshot go stale by RptSeq",
};

int replay_mdp3_channel_open(struct replay_mdp3 *m)
{
    m->waiting = calloc(REPLAY_HELD_MAX, sizeof(*m->waiting));
    return m->waiting != NULL ? 0 : -ENOMEM;
}

/* The capture is MDP3: the arbiter takes its sequencing (before its first packet). */
static void start(struct replay *r, struct replay_mdp3 *m)
{
    /* The daemon's channel expects MsgSeqNum 1 first; the arbiter exists (replay_open). */
    replay_arb_open(r, tp_venue_mdp3.sequence, 1);
    m->started = true;
}

void replay_mdp3_channel_close(struct replay_mdp3 *m)
{
    free(m->waiting);
    m->waiting = NULL;
}

/* What a flow's first packet says it is, by its first message's template. */
static enum replay_line_kind kind_of(const uint8_t *payload, uint16_t len)
{
    struct tp_mdp3_packet p;
    struct tp_mdp3_msg m;
    if (tp_mdp3_packet_init(&p, payload, len) != 0 || tp_mdp3_packet_next(&p, &m) != 1)
        return REPLAY_KIND_INCREMENTAL;
    switch (m.template_id) {
    case MKTDATA_SNAPSHOT_FULL_REFRESH52_TEMPLATE_ID:
        return REPLAY_KIND_SNAPSHOT;
    case MKTDATA_SNAPSHOT_FULL_REFRESH_ORDER_BOOK53_TEMPLATE_ID:
        return REPLAY_KIND_SNAPSHOT_MBO;
    case MKTDATA_MD_INSTRUMENT_DEFINITION_FUTURE54_TEMPLATE_ID:
    case MKTDATA_MD_INSTRUMENT_DEFINITION_OPTION55_TEMPLATE_ID:
    case MKTDATA_MD_INSTRUMENT_DEFINITION_SPREAD56_TEMPLATE_ID:
        return REPLAY_KIND_DEFINITION;
    default:
        return REPLAY_KIND_INCREMENTAL;
    }
}

/* The instrument definition loop, until it comes round (the daemon then leaves its lines). */
static void definition(struct replay *r, const uint8_t *payload, uint16_t len, uint64_t ts)
{
    struct replay_mdp3 *m = replay_mdp3_of(r);
    uint32_t seq = mktdata_load_u32(payload);
    if (m->definitions_done)
        return;
    if (seq <= m->def_last_seq) {
        m->definitions_done = seq == 1;
        return;
    }
    m->def_last_seq = seq;
    feed(r, payload, len, ts);
}

/* A snapshot loop's packet (`mbo`: the MBO snapshot loop), each MsgSeqNum once. */
static void snapshot(struct replay *r, const uint8_t *payload, uint16_t len, uint64_t ts, bool mbo)
{
    struct replay_mdp3 *m = replay_mdp3_of(r);
    uint32_t seq = mktdata_load_u32(payload);
    if (seq == m->snap_last_seq[mbo])
        return; /* the other line's copy */
    m->snap_last_seq[mbo] = seq;
    feed(r, payload, len, ts);
}

/* A packet of a side loop (snapshot, MBO snapshot, definitions) down its path. */
static void side_packet(struct replay *r, const struct replay_mdp3_waiting *w)
{
    r->record = w->record;
    r->record_offset = w->offset;
    if (w->role == REPLAY_ROLE_DEF_A || w->role == REPLAY_ROLE_DEF_B)
        definition(r, w->payload, w->len, w->ts);
    else
        snapshot(r, w->payload, w->len, w->ts,
                 w->role == REPLAY_ROLE_SNAP_MBO_A || w->role == REPLAY_ROLE_SNAP_MBO_B);
}

/* The side packets that waited for the incrementals held behind a gap, once none is held. */
static void side_flush(struct replay *r)
{
    struct replay_mdp3 *m = replay_mdp3_of(r);
    for (uint32_t i = 0; i < m->n_waiting; i++)
        side_packet(r, &m->waiting[i]);
    m->n_waiting = 0;
}

void replay_mdp3_packet(struct replay *r, const struct tp_udp_view *u, uint64_t ts, uint64_t record,
                        size_t offset)
{
    struct replay_mdp3 *m = replay_mdp3_of(r);
    /* The channel's arbiter follows the venue's sequencing (tp_venue.h). */
    if (!m->started)
        start(r, m);
    /* Checked once, before any line's path, as the daemon does: the feed walks a packet's
     * messages unchecked, and a packet that does not frame never reaches the arbiter. */
    if (!tp_mdp3_packet_frames(u->payload, u->payload_len)) {
        r->bad_packets++;
        return;
    }
    enum replay_line_role role =
        replay_lines_role(&r->lines, u, kind_of(u->payload, u->payload_len));
    struct replay_mdp3_waiting w = {.payload = u->payload,
                                    .len = u->payload_len,
                                    .role = (uint8_t)role,
                                    .ts = ts,
                                    .record = record,
                                    .offset = offset};
    if (role == REPLAY_ROLE_UNMAPPED)
        return; /* no line of the channel: counted (replay_lines.unmapped) */
    if (role == REPLAY_ROLE_INCR_A || role == REPLAY_ROLE_INCR_B) {
        struct tp_arb_pkt ap = {.seq = mktdata_load_u32(u->payload), .count = 1};
        r->record = record;
        r->record_offset = offset;
        replay_arb_offer(r, &mdp3_venue, role == REPLAY_ROLE_INCR_B ? TP_LINE_B : TP_LINE_A, &ap,
                         u->payload, u->payload_len, ts, record, offset);
        if (!tp_arb_holding(r->arb))
            side_flush(r);
        return;
    }
    /* The incrementals received before a loop's packet come first, as in the daemon (which
     * applies those pending first): those held behind a gap too, or a snapshot taken after them
     * would be applied before them. */
    if (tp_arb_holding(r->arb) && m->n_waiting < REPLAY_HELD_MAX)
        m->waiting[m->n_waiting++] = w;
    else
        side_packet(r, &w);
}

void replay_mdp3_finish(struct replay *r)
{
    replay_arb_finish(r, &mdp3_venue);
    side_flush(r);
}
