/*
 * MoldUDP64 packets of a capture through the data plane's arbiter: see replay_mold.h.
 */
#include "replay_mold.h"

#include "moldudp64.h"
#include "replay_arb.h"
#include "replay_input.h"
#include "replay_itch.h"

/* Every ITCH instrument defined by now may have missed messages: flagged stale for good. */
static void mark_stale(struct replay *r)
{
    r->stale_marks++;
    if (r->share != NULL) {
        replay_share_flush(r);
        r->share->key = ++r->share->seq; /* a pass of its own in the order of what is published */
    }
    uint32_t n = tp_instruments_count(r->registry);
    for (uint32_t id = 0; id < n; id++) {
        const struct tp_instrument *in = tp_instruments_get(r->registry, id);
        if (in == NULL || in->venue != TP_VENUE_NASDAQ_ITCH || r->instrument_stale[id])
            continue;
        r->instrument_stale[id] = 1;
        /* The event file flags its records too, as the daemon's publisher does. */
        if (r->output != NULL && (r->share == NULL || replay_share_holds(r->share, id)))
            r->output->stale(r->output->ctx, id, 1, 0, 0);
    }
}

/* The messages of a delivered packet after the first `skip` (the overlap already applied). */
static void apply(struct replay *r, const uint8_t *payload, uint16_t len, uint32_t skip,
                  uint64_t ts)
{
    struct tp_mold_packet pkt;
    struct tp_feed_info info = {.rx_tsc = ts};
    if (tp_mold_parse(&pkt, payload, len) != TP_MOLD_MESSAGES)
        return;
    for (uint32_t i = 0; i < pkt.count; i++) {
        uint16_t n;
        const uint8_t *msg = tp_mold_next_framed(&pkt, &n);
        if (i < skip)
            continue;
        info.packet_seq = pkt.sequence + i;
        if (r->share != NULL)
            replay_share_message(r, msg, n, &info);
        else
            tp_itch_feed_message(replay_itch_feed(r), msg, n, &info);
        r->messages++;
    }
}

static const struct replay_arb_venue mold_venue = {
    .unit = "sequence",
    .items = "messages",
    .apply = apply,
    .lost = mark_stale,
    .lost_books = "books flagged stale",
    .late_books = "flagged stale",
};

int replay_mold_open(struct replay *r)
{
    /* A session starts at 1: a capture that does not has lost its start, unless a snapshot
     * (replay_snapshot.h) holds everything before its sequence. */
    return replay_arb_open(r, TP_SEQ_MOLDUDP64, r->snapshot_next_seq ? r->snapshot_next_seq : 1);
}

static enum tp_line line_of(struct replay *r, const struct tp_udp_view *u)
{
    struct replay_itch *it = replay_itch_of(r);
    uint32_t dst = u->key.dst_ip;
    if ((dst >> 28) != 0xe)
        return TP_LINE_RECOVERY;
    if (it->line_a_group == 0)
        it->line_a_group = dst;
    return dst == it->line_a_group ? TP_LINE_A : TP_LINE_B;
}

void replay_mold_packet(struct replay *r, const struct tp_udp_view *u, uint64_t ts, uint64_t record,
                        size_t offset)
{
    struct tp_mold_packet pkt;
    int kind = tp_mold_parse(&pkt, u->payload, u->payload_len);
    /* As in the daemon: a packet that does not frame exactly never reaches the arbiter, so the
     * other line's copy still counts. */
    if (kind < 0 || tp_mold_check(&pkt) < 0) {
        r->bad_packets++;
        return;
    }
    struct tp_arb_pkt ap = {.seq = pkt.sequence,
                            .count = kind == TP_MOLD_MESSAGES ? pkt.count : 0,
                            .session = pkt.session,
                            .end_of_session = kind == TP_MOLD_END};
    replay_arb_offer(r, &mold_venue, line_of(r, u), &ap, u->payload, u->payload_len, ts, record,
                     offset);
}

void replay_mold_finish(struct replay *r)
{
    replay_arb_finish(r, &mold_venue);
}
