/*
 * A channel's receive pipeline: see channel.h.
 */
#include "channel.h"

#include <errno.h>
#include <string.h>

#include "moldudp64.h"
#include "publisher.h"
#include "tp_instruments.h"

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

static struct tp_arb_params arb_params(const struct tp_channel_params *p)
{
    return (struct tp_arb_params){
        .rules = p->protocol == TP_CHANNEL_ITCH ? TP_SEQ_MOLDUDP64 : TP_SEQ_MDP3,
        .held_max = p->held_max,
        .gap_wait_tsc = p->gap_wait_tsc,
        .start_seq = p->start_seq,
        .max_jump = 1u << 24,
        .release = p->io.release,
        .release_ctx = p->io.ctx,
    };
}

size_t tp_channel_memsize(const struct tp_channel_params *p)
{
    struct tp_arb_params a = arb_params(p);
    return align64(sizeof(struct tp_channel)) + tp_arb_memsize(&a);
}

int tp_channel_init(void *mem, const struct tp_channel_params *p)
{
    if (mem == NULL || p->registry == NULL || p->books == NULL || p->publisher == NULL ||
        p->io.view == NULL || p->io.release == NULL ||
        (p->protocol != TP_CHANNEL_ITCH && p->protocol != TP_CHANNEL_MDP3))
        return -EINVAL;
    struct tp_channel *ch = mem;
    memset(ch, 0, sizeof(*ch));
    ch->params = *p;
    ch->arb = (struct tp_arb *)((uint8_t *)mem + align64(sizeof(*ch)));
    struct tp_arb_params a = arb_params(p);
    int rc = tp_arb_init(ch->arb, &a);
    if (rc != 0)
        return rc;
    tp_mold_recovery_init(&ch->mold, &p->mold);
    if (p->protocol == TP_CHANNEL_ITCH) {
        struct tp_feed_sink sink = tp_publisher_sink(p->publisher);
        rc = tp_itch_feed_init(&ch->itch, p->registry, p->books, p->filter, p->itch_slot, &sink);
    }
    return rc;
}

/* ---- MoldUDP64 / ITCH --------------------------------------------------------------------- */

/* Walks every block once: true when the packet frames exactly (see moldudp64.h). */
static bool mold_frames(const uint8_t *payload, uint16_t len, struct tp_mold_packet *p, int *kind)
{
    *kind = tp_mold_parse(p, payload, len);
    if (*kind < 0)
        return false;
    struct tp_mold_packet walk = *p;
    const uint8_t *msg;
    uint16_t n;
    int rc;
    while ((rc = tp_mold_next(&walk, &msg, &n)) == 1)
        ;
    return rc == 0;
}

/* Applies the messages of a checked packet after the first `skip`. */
static void mold_apply(struct tp_channel *ch, const uint8_t *payload, uint16_t len, uint32_t skip,
                       uint64_t rx_tsc)
{
    struct tp_mold_packet p;
    if (tp_mold_parse(&p, payload, len) != TP_MOLD_MESSAGES)
        return;
    memcpy(ch->session, p.session, TP_ARB_SESSION_LEN);
    struct tp_feed_info info = {.rx_tsc = rx_tsc};
    const uint8_t *msg;
    uint16_t n;
    for (uint32_t i = 0; tp_mold_next(&p, &msg, &n) == 1; i++) {
        if (i < skip)
            continue;
        info.packet_seq = p.sequence + i;
        ch->counters.messages++;
        if (tp_itch_feed_message(&ch->itch, msg, n, &info) < 0)
            ch->counters.feed_errors++;
    }
}

/* ---- common -------------------------------------------------------------------------------- */

static void apply(struct tp_channel *ch, const uint8_t *payload, uint16_t len, uint32_t skip,
                  uint64_t rx_tsc)
{
    if (ch->params.protocol == TP_CHANNEL_ITCH)
        mold_apply(ch, payload, len, skip, rx_tsc);
    else
        ch->counters.unsupported++;
}

/* Applies every held packet that is now in sequence. */
static void drain(struct tp_channel *ch)
{
    void *handle;
    uint32_t skip;
    while (tp_arb_next_ready(ch->arb, &handle, &skip)) {
        const uint8_t *payload;
        uint16_t len;
        uint64_t rx_tsc;
        ch->params.io.view(ch->params.io.ctx, handle, &payload, &len, &rx_tsc);
        apply(ch, payload, len, skip, rx_tsc);
        ch->params.io.release(ch->params.io.ctx, handle);
    }
}

/* A new MoldUDP64 session (a new trading day) or an MDP3 sequence restart. */
static void on_reset(struct tp_channel *ch, uint64_t rx_tsc)
{
    ch->counters.resets++;
    if (ch->params.protocol == TP_CHANNEL_ITCH)
        tp_instruments_reset_locates(ch->params.registry, ch->params.itch_slot);
    tp_publisher_channel_event(ch->params.publisher, TP_PUB_CHANNEL_RESET, 0, 0, rx_tsc);
}

bool tp_channel_packet(struct tp_channel *ch, enum tp_line_role role, const uint8_t *payload,
                       uint16_t len, void *handle, uint64_t rx_tsc)
{
    ch->counters.packets++;
    tp_publisher_select(ch->params.publisher, ch->params.protocol == TP_CHANNEL_ITCH ? 1 : 0,
                        ch->params.channel_id);
    struct tp_arb_pkt pkt;
    if (ch->params.protocol == TP_CHANNEL_ITCH) {
        struct tp_mold_packet p;
        int kind;
        if (!mold_frames(payload, len, &p, &kind)) {
            ch->counters.malformed++;
            return false;
        }
        pkt = (struct tp_arb_pkt){.seq = p.sequence,
                                  .count = kind == TP_MOLD_MESSAGES ? p.count : 0,
                                  .session = p.session};
    } else {
        ch->counters.unsupported++;
        return false;
    }
    enum tp_line line = role == TP_ROLE_RETRANS  ? TP_LINE_RECOVERY
                        : role == TP_ROLE_INCR_B ? TP_LINE_B
                                                 : TP_LINE_A;
    uint32_t skip;
    enum tp_arb_verdict v = tp_arb_offer(ch->arb, line, &pkt, handle, rx_tsc, &skip);
    if (v == TP_ARB_RESET) {
        on_reset(ch, rx_tsc);
        v = tp_arb_offer(ch->arb, line, &pkt, handle, rx_tsc, &skip);
    }
    if (v == TP_ARB_HELD)
        return true;
    if (v == TP_ARB_DELIVER) {
        apply(ch, payload, len, skip, rx_tsc);
        drain(ch);
    }
    return false;
}

/* Gives the current gap up: the books of the channel can no longer be trusted. */
static void give_up(struct tp_channel *ch, uint64_t now)
{
    struct tp_arb_gap gap;
    if (tp_arb_current_gap(ch->arb, &gap))
        tp_publisher_channel_event(ch->params.publisher, TP_PUB_CHANNEL_GAP, gap.from, gap.to - 1,
                                   now);
    tp_arb_skip_gap(ch->arb);
    drain(ch);
    if (ch->stale)
        return;
    ch->stale = true;
    ch->counters.stale_marks++;
    uint32_t n = tp_instruments_count(ch->params.registry);
    for (uint32_t id = 0; id < n; id++) {
        const struct tp_instrument *in = tp_instruments_get(ch->params.registry, id);
        if (in != NULL && in->venue == TP_VENUE_NASDAQ_ITCH && in->channel == ch->params.itch_slot)
            tp_publisher_set_flags(ch->params.publisher, id, TP_PUB_F_STALE);
    }
}

static void send_request(struct tp_channel *ch, uint64_t seq, uint16_t count)
{
    struct tp_mold_request req = {.sequence = seq, .count = count};
    memcpy(req.session, ch->session, TP_MOLD_SESSION_LEN);
    uint8_t buf[TP_MOLD_REQUEST_LEN];
    int len = tp_mold_request_encode(buf, sizeof(buf), &req);
    if (len > 0)
        ch->params.io.send_rerequest(ch->params.io.ctx, ch->params.index, buf, (size_t)len);
}

void tp_channel_poll(struct tp_channel *ch, uint64_t now)
{
    tp_publisher_select(ch->params.publisher, ch->params.protocol == TP_CHANNEL_ITCH ? 1 : 0,
                        ch->params.channel_id);
    struct tp_arb_gap reported, open;
    bool was_reported = tp_arb_poll(ch->arb, now, &reported);
    if (ch->params.protocol != TP_CHANNEL_ITCH || ch->params.io.send_rerequest == NULL) {
        /* Nothing to ask: MDP3 instruments recover through their own sequence (RptSeq). */
        if (was_reported) {
            if (ch->params.protocol == TP_CHANNEL_ITCH) {
                give_up(ch, now);
            } else {
                tp_publisher_channel_event(ch->params.publisher, TP_PUB_CHANNEL_GAP, reported.from,
                                           reported.to - 1, now);
                tp_arb_skip_gap(ch->arb);
                drain(ch);
            }
        }
        return;
    }
    bool is_open = tp_arb_current_gap(ch->arb, &open);
    uint64_t seq;
    uint16_t count;
    switch (tp_mold_recovery_step(&ch->mold, was_reported ? &reported : NULL,
                                  is_open ? &open : NULL, now, &seq, &count)) {
    case TP_MOLD_REC_SEND:
        send_request(ch, seq, count);
        break;
    case TP_MOLD_REC_GIVE_UP:
        give_up(ch, now);
        break;
    default:
        break;
    }
}
