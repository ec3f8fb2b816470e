/*
 * An ITCH channel's snapshot loads (GLIMPSE): the chunks the control plane sends, and the kept
 * multicast stream applied after them. See itch_snapshot.h for the promise, channel.h for the
 * calls.
 */
#include <string.h>

#include "channel.h"
#include "itch50.h"
#include "publisher.h"
#include "tp_instruments.h"

/* Kept messages applied per poll: a slice of the stream, tens of microseconds of the lcore. */
#define REPLAY_SLICE 512

static void select_itch_publisher(const struct tp_channel *ch)
{
    tp_publisher_select(ch->params.publisher, 1, ch->params.channel_id);
}

bool tp_channel_snapshot_want(struct tp_channel *ch)
{
    return tp_itch_snapshot_want(&ch->snap);
}

/*
 * Applies one message (snapshot or kept stream). An instrument it defines (stock directory) is
 * flagged recovering at once, before any of its book events: no consumer sees it healthy until
 * the load completes.
 */
static void apply(struct tp_channel *ch, const uint8_t *msg, uint16_t len, uint64_t seq,
                  uint64_t now)
{
    struct tp_feed_info info = {.rx_tsc = now, .packet_seq = seq};
    if (tp_itch_feed_message(&ch->itch, msg, len, &info) < 0)
        ch->counters.feed_errors++;
    if (msg[0] == TP_ITCH_STOCK_DIRECTORY && len >= 3) {
        uint32_t id1 = ch->itch.locates[tp_load_be16(msg + 1)];
        if (id1 != 0)
            tp_publisher_set_flags(ch->params.publisher, id1 - 1, TP_PUB_F_RECOVERING);
    }
}

/* The load failed for good, or the stream has a hole: stale, and (hole) a new snapshot. */
static void load_failed(struct tp_channel *ch, bool ask_again)
{
    tp_itch_snapshot_clear(&ch->snap);
    tp_channel_mark_stale(ch);
    ch->snap.state = TP_SNAP_LIVE;
    if (ask_again)
        tp_itch_snapshot_want(&ch->snap);
}

/*
 * The load is complete: the books the snapshot and the kept stream built are the venue's. Only
 * the RECOVERING flag goes: a book a message was refused on meanwhile stays STALE. Whether the
 * channel is behind the venue (a gap, silence) is decided afresh at the next poll.
 */
static void lift_recovering(struct tp_channel *ch)
{
    uint32_t n = tp_instruments_count(ch->params.registry);
    for (uint32_t id = tp_instruments_first_id(ch->params.registry); id < n; id++) {
        const struct tp_instrument *in = tp_instruments_get(ch->params.registry, id);
        if (in != NULL && in->venue == TP_VENUE_NASDAQ_ITCH &&
            in->channel == ch->params.itch_slot &&
            tp_publisher_flags(ch->params.publisher, id) == TP_PUB_F_RECOVERING)
            tp_publisher_set_flags(ch->params.publisher, id, 0);
    }
    ch->behind = false;
}

void tp_channel_snapshot_poll(struct tp_channel *ch, uint64_t now)
{
    struct tp_itch_snapshot *s = &ch->snap;
    if (s->state != TP_SNAP_REPLAYING)
        return;
    select_itch_publisher(ch);
    for (uint32_t i = 0; i < REPLAY_SLICE; i++) {
        const struct tp_snap_slot *slot = tp_itch_snapshot_pop(s);
        if (slot == NULL)
            break;
        if (slot->seq < s->next_seq) {
            s->counters.skipped++;
            continue;
        }
        if (slot->seq > s->next_seq) {
            /* Messages between the snapshot and the kept stream are missing. */
            s->counters.holes++;
            load_failed(ch, true);
            return;
        }
        apply(ch, slot->msg, slot->len, slot->seq, now);
        s->counters.replayed++;
        s->next_seq++;
    }
    if (s->count > 0)
        return;
    /* Everything kept is applied: live once the stream has reached the snapshot's sequence. */
    uint64_t expected = tp_arb_expected(ch->arb);
    if (expected < s->next_seq)
        return; /* the feed still has to catch up: its messages are skipped as they come */
    if (expected > s->next_seq) {
        s->counters.holes++;
        load_failed(ch, true);
        return;
    }
    s->state = TP_SNAP_LIVE;
    s->counters.completed++;
    lift_recovering(ch);
}

static void begin(struct tp_channel *ch, uint64_t now)
{
    struct tp_itch_snapshot *s = &ch->snap;
    if (s->state == TP_SNAP_OFF)
        return;
    s->counters.begins++;
    /* Kept from now on, if not already (an operator's request). */
    if (s->state == TP_SNAP_LIVE || s->state == TP_SNAP_REPLAYING) {
        if (s->state == TP_SNAP_LIVE)
            s->counters.requests++;
        tp_itch_snapshot_clear(s);
    }
    s->state = TP_SNAP_LOADING;
    /* The snapshot is the whole book: what the books held goes (their order ids come again). */
    tp_channel_clear_books(ch, now, TP_PUB_F_RECOVERING);
}

static void data(struct tp_channel *ch, const struct tp_snap_chunk *c, uint64_t now)
{
    if (ch->snap.state != TP_SNAP_LOADING)
        return; /* an attempt whose BEGIN was not seen (the channel was re-attached) */
    select_itch_publisher(ch);
    const uint8_t *at = c->data, *end = c->data + (c->bytes <= sizeof(c->data) ? c->bytes : 0);
    for (uint32_t i = 0; i < c->n_msgs; i++) {
        uint16_t len;
        if ((size_t)(end - at) < sizeof(len))
            break;
        memcpy(&len, at, sizeof(len));
        at += sizeof(len);
        if (len == 0 || (size_t)(end - at) < len)
            break;
        apply(ch, at, len, 0, now);
        ch->snap.counters.messages++;
        at += len;
    }
}

void tp_channel_snapshot_chunk(struct tp_channel *ch, const struct tp_snap_chunk *c, uint64_t now)
{
    struct tp_itch_snapshot *s = &ch->snap;
    if (ch->venue->recovery != TP_RECOVER_REREQUEST || s->state == TP_SNAP_OFF)
        return;
    /* Messages delivered before the chunk go first (kept, or applied while live). */
    tp_channel_poll(ch, now);
    switch (c->kind) {
    case TP_SNAP_CHUNK_BEGIN:
        begin(ch, now);
        break;
    case TP_SNAP_CHUNK_DATA:
        data(ch, c, now);
        break;
    case TP_SNAP_CHUNK_END:
        if (s->state != TP_SNAP_LOADING)
            break;
        s->counters.loaded++;
        s->state = TP_SNAP_REPLAYING;
        s->next_seq = c->next_seq;
        tp_channel_snapshot_poll(ch, now);
        break;
    case TP_SNAP_CHUNK_FAILED:
        if (s->state != TP_SNAP_LOADING && s->state != TP_SNAP_WANTED)
            break;
        s->counters.failed++;
        if (c->final) {
            s->counters.gave_up++;
            load_failed(ch, false);
        } else {
            s->state = TP_SNAP_WANTED; /* the next attempt's BEGIN starts over */
        }
        break;
    default:
        break;
    }
}
