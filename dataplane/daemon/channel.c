/*
 * A channel's receive pipeline: see channel.h.
 */
#include "channel.h"

#include <errno.h>
#include <string.h>

#include "mdp3_packet.h"
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
        .rules = tp_venue_get(p->protocol)->sequence,
        .held_max = p->held_max,
        .gap_wait_tsc = p->gap_wait_tsc,
        .start_seq = p->start_seq,
        .max_jump = 4096, /* a real jump is confirmed by the next packet */
        .release = p->io.release,
        .release_ctx = p->io.ctx,
    };
}

/*
 * The ITCH stage: the blocks of any payload (a block takes at least 2 bytes) fit in
 * STAGE_PACKET_MAX entries. The pending packets keep at most that many (more are applied at
 * once), so the blocks of the next packet always fit behind them without a test.
 */
#define STAGE_PACKET_MAX (UINT16_MAX / 2)
#define STAGE_MAX        (2 * STAGE_PACKET_MAX)

/* The ITCH stage: STAGE_MAX message pointers, then as many lengths. */
static size_t stage_size(const struct tp_channel_params *p)
{
    if (tp_venue_get(p->protocol)->framing != TP_FRAMING_MESSAGES)
        return 0;
    return align64(STAGE_MAX * sizeof(const uint8_t *)) + align64(STAGE_MAX * sizeof(uint16_t));
}

static size_t snapshot_size(const struct tp_channel_params *p)
{
    if (tp_venue_get(p->protocol)->recovery != TP_RECOVER_REREQUEST)
        return 0;
    return align64(tp_itch_snapshot_memsize(p->snapshot_messages));
}

static size_t mdp3_state_size(const struct tp_channel_params *p)
{
    if (tp_venue_get(p->protocol)->framing != TP_FRAMING_PACKETS)
        return 0;
    return align64(tp_mdp3_feed_memsize(tp_instruments_capacity(p->registry))) +
           align64(tp_mdp3_recovery_memsize(p->replay_bytes));
}

/* A TP_FRAMING_SEGMENTS venue's feed, after the arbiter. */
static size_t segments_feed_size(const struct tp_channel_params *p)
{
    const struct tp_venue_ops *v = tp_venue_get(p->protocol);
    return v->framing == TP_FRAMING_SEGMENTS ? align64(v->feed->feed_size) : 0;
}

size_t tp_channel_memsize(const struct tp_channel_params *p)
{
    if (tp_venue_get(p->protocol) == NULL)
        return 0;
    struct tp_arb_params a = arb_params(p);
    return align64(sizeof(struct tp_channel)) + align64(tp_arb_memsize(&a)) + stage_size(p) +
           snapshot_size(p) + mdp3_state_size(p) + segments_feed_size(p);
}

static tp_channel_packet_fn *packet_path(enum tp_venue_framing framing);

/* Names this channel to the publisher (its venue's tpout venue) for the events that follow. */
static void select_publisher(const struct tp_channel *ch)
{
    tp_publisher_select(ch->params.publisher, ch->venue->tpout_venue, ch->params.channel_id);
}

/* Whether instrument `in` is fed by this channel (its venue's, on its locate map or channel id). */
static bool feeds_instrument(const struct tp_channel *ch, const struct tp_instrument *in)
{
    return in->venue == ch->venue->registry_venue && in->channel == ch->feed_channel;
}

/* The feed's stale marks: the recovery counts the instruments it must recover. */
static void count_stale(void *ctx, int stale)
{
    tp_mdp3_recovery_on_stale(ctx, stale);
}

/* The feed's order views: with MBO snapshot lines the recovery waits for the incomplete ones. */
static void count_orders(void *ctx, int incomplete)
{
    tp_mdp3_recovery_on_orders(ctx, incomplete);
}

static int mdp3_init(struct tp_channel *ch, uint8_t *at)
{
    const struct tp_channel_params *p = &ch->params;
    /* The publisher's sink, called by the feed directly; the recovery watches stale marks. */
    struct tp_feed_sink sink = tp_publisher_sink(p->publisher);
    size_t state = align64(tp_mdp3_feed_memsize(tp_instruments_capacity(p->registry)));
    tp_mdp3_recovery_init(&ch->recovery, at + state, p->replay_bytes);
    /* Without snapshot lines there is nothing to wait for at start. */
    ch->recovery.cycle_seen = !p->has_snapshot;
    ch->recovery.joined = p->has_snapshot;
    ch->recovery.mbo_lines = p->has_snapshot && p->has_snapshot_mbo;
    ch->definitions_done = !p->has_definitions;
    ch->feed = &ch->mdp3;
    ch->feed_channel = (uint16_t)p->channel_id;
    int rc =
        tp_mdp3_feed_init(&ch->mdp3, at, p->registry, p->books, p->filter, (uint16_t)p->channel_id,
                          p->mdp3_book_type ? p->mdp3_book_type : TP_BOOK_TYPE_MBP, &sink);
    if (rc == 0) {
        tp_mdp3_feed_watch(&ch->mdp3, count_stale, &ch->recovery);
        tp_mdp3_feed_watch_orders(&ch->mdp3, count_orders, &ch->recovery);
    }
    return rc;
}

/* A packet the segments feed held for the other line ends its wait: the gap-wait histogram. */
static void segments_released(void *ctx, uint64_t rx_tsc, uint64_t released_tsc)
{
    const struct tp_channel *ch = ctx;
    tp_publisher_held(ch->params.publisher, rx_tsc, released_tsc);
}

int tp_channel_init(void *mem, const struct tp_channel_params *p)
{
    if (mem == NULL || p->registry == NULL || p->books == NULL || p->publisher == NULL ||
        p->io.view == NULL || p->io.release == NULL || tp_venue_get(p->protocol) == NULL)
        return -EINVAL;
    struct tp_channel *ch = mem;
    memset(ch, 0, sizeof(*ch));
    ch->params = *p;
    ch->venue = tp_venue_get(p->protocol);
    ch->packet = packet_path(ch->venue->framing);
    ch->arb = (struct tp_arb *)((uint8_t *)mem + align64(sizeof(*ch)));
    struct tp_arb_params a = arb_params(p);
    int rc = tp_arb_init(ch->arb, &a);
    if (rc != 0)
        return rc;
    tp_mold_recovery_init(&ch->mold, &p->mold);
    uint8_t *after_arb = (uint8_t *)ch->arb + align64(tp_arb_memsize(&a));
    if (ch->venue->framing == TP_FRAMING_MESSAGES) {
        ch->feed = &ch->itch;
        ch->feed_channel = p->itch_slot;
        ch->stage_msgs = (const uint8_t **)after_arb;
        ch->stage_lens = (uint16_t *)(after_arb + align64(STAGE_MAX * sizeof(const uint8_t *)));
        tp_itch_snapshot_init(&ch->snap, after_arb + stage_size(p), p->snapshot_messages);
        struct tp_feed_sink sink = tp_publisher_sink(p->publisher);
        return tp_itch_feed_init(&ch->itch, p->registry, p->books, p->filter, p->itch_slot, &sink);
    }
    if (ch->venue->framing == TP_FRAMING_SEGMENTS) {
        struct tp_feed_sink sink = tp_publisher_sink(p->publisher);
        ch->feed = after_arb;
        ch->feed_channel = (uint16_t)p->channel_id;
        rc = ch->venue->feed->init(after_arb, p->registry, p->books, p->filter,
                                   (uint16_t)p->channel_id, p->layout, &sink);
        if (rc == 0)
            ch->venue->feed->arbitrate(after_arb, p->gap_wait_tsc, segments_released, ch);
        return rc;
    }
    return mdp3_init(ch, after_arb);
}

/* ---- MoldUDP64 / ITCH --------------------------------------------------------------------- */

/*
 * Checks a packet's framing and writes its blocks after those the stage keeps (kept in turn
 * only if the packet is delivered: mold_stage_keep): the number of blocks (0 for control
 * packets), or -EBADMSG when the packet does not frame exactly (see moldudp64.h). There is
 * room: the stage keeps at most STAGE_PACKET_MAX blocks between packets.
 */
static inline int mold_frame(struct tp_channel *ch, const uint8_t *payload, uint16_t len,
                             struct tp_mold_packet *p, int *kind)
{
    *kind = tp_mold_parse(p, payload, len);
    if (*kind < 0)
        return -EBADMSG;
    return tp_mold_frame(p, ch->stage_msgs + ch->n_staged, ch->stage_lens + ch->n_staged);
}

/*
 * Stages the blocks of a packet that was held behind a gap, as mold_frame did when it was
 * offered (its bytes are as then: no checks), and returns how many; *seq: the first one's.
 */
static uint32_t mold_stage_held(struct tp_channel *ch, const uint8_t *payload, uint16_t len,
                                uint64_t *seq)
{
    struct tp_mold_packet p;
    int kind = tp_mold_parse(&p, payload, len);
    *seq = p.sequence;
    if (kind != TP_MOLD_MESSAGES)
        return 0;
    for (uint32_t i = 0; i < p.count; i++)
        ch->stage_msgs[ch->n_staged + i] =
            tp_mold_next_framed(&p, &ch->stage_lens[ch->n_staged + i]);
    return p.count;
}

/*
 * Keeps `count` staged blocks from stage index `from` for a delivered packet: they follow the
 * blocks kept before. They sit further on when an overlapping copy applied the packet's first
 * ones, or a flush emptied the stage after they were staged (a reset: on_reset).
 */
static inline void mold_stage_keep(struct tp_channel *ch, uint32_t from, uint32_t count)
{
    if (from != ch->n_staged) {
        memmove(ch->stage_msgs + ch->n_staged, ch->stage_msgs + from,
                count * sizeof(*ch->stage_msgs));
        memmove(ch->stage_lens + ch->n_staged, ch->stage_lens + from,
                count * sizeof(*ch->stage_lens));
    }
    ch->n_staged += count;
}

static void mold_feed(struct tp_channel *ch, uint32_t first, uint32_t n, struct tp_feed_info *info)
{
    if (__builtin_expect(tp_itch_snapshot_keeping(&ch->snap), 0)) {
        /* A snapshot is loading: the stream waits for it (applied after, from its sequence). */
        for (uint32_t i = 0; i < n; i++)
            tp_itch_snapshot_keep(&ch->snap, info->packet_seq + i, ch->stage_msgs[first + i],
                                  ch->stage_lens[first + i]);
        info->packet_seq += n;
        return;
    }
    ch->counters.feed_errors +=
        tp_itch_feed_sequenced(&ch->itch, ch->stage_msgs + first, ch->stage_lens + first, n, info);
}

/*
 * Applies the staged messages of every pending packet in order, in as few feed calls as their
 * receive times and sequence numbers allow (one per rx burst in the common case).
 */
static void mold_flush(struct tp_channel *ch)
{
    select_publisher(ch);
    struct tp_feed_info info = {0};
    const uint8_t *session = NULL; /* one for all: a new session flushes the old one's first */
    uint32_t first = 0, n = 0;     /* the feed call being gathered: stage [first, first + n) */
    ch->counters.messages += ch->n_staged;
    for (uint32_t i = 0; i < ch->n_pending; i++) {
        const struct tp_channel_pending *pk = &ch->pending[i];
        if (pk->count == 0)
            continue; /* heartbeat, end of session */
        session = pk->payload;
        /* A feed call covers messages numbered one after the other, received at one time. */
        if (n > 0 && (pk->rx_tsc != info.rx_tsc || pk->seq != info.packet_seq + n)) {
            mold_feed(ch, first, n, &info);
            first += n;
            n = 0;
        }
        if (n == 0) {
            info.rx_tsc = pk->rx_tsc;
            info.packet_seq = pk->seq;
        }
        n += pk->count;
    }
    if (n > 0)
        mold_feed(ch, first, n, &info);
    ch->n_staged = 0;
    if (session != NULL)
        memcpy(ch->session, session, TP_ARB_SESSION_LEN);
}

/* ---- MDP3 incrementals --------------------------------------------------------------------- */

static void mdp3_membership(struct tp_channel *ch);

/* After each incremental is applied: kept while a snapshot is awaited (in order, as it came). */
static void mdp3_applied(void *ctx, const struct tp_mdp3_feed_pkt *pkt, int rc)
{
    struct tp_channel *ch = ctx;
    struct tp_mdp3_packet p;
    ch->counters.feed_errors += rc < 0;
    if (!tp_mdp3_recovery_needed(&ch->recovery))
        return; /* nothing to replay after a snapshot */
    if (tp_mdp3_packet_init(&p, pkt->data, pkt->len) == 0)
        tp_mdp3_recovery_buffer(&ch->recovery, p.seq, pkt->data, (uint16_t)pkt->len, pkt->rx_tsc);
}

/*
 * Applies every pending incremental packet in one feed call (which prefetches the next packets'
 * state while it applies one), then joins or leaves the snapshot lines as recovery now needs.
 */
static void mdp3_flush(struct tp_channel *ch)
{
    struct tp_mdp3_feed_pkt pkts[TP_CHANNEL_PENDING_MAX];
    select_publisher(ch);
    for (uint32_t i = 0; i < ch->n_pending; i++)
        pkts[i] = (struct tp_mdp3_feed_pkt){.data = ch->pending[i].payload,
                                            .len = ch->pending[i].len,
                                            .rx_tsc = ch->pending[i].rx_tsc,
                                            .framed = true}; /* by tp_channel_packet */
    tp_mdp3_feed_burst(&ch->mdp3, pkts, ch->n_pending, mdp3_applied, ch);
    ch->counters.messages = ch->mdp3.counters.messages;
    mdp3_membership(ch);
}

/* ---- packets kept for the end of the burst ------------------------------------------------- */

/*
 * Applies the pending packets (the channel's protocol decides how) and gives back the handles
 * the channel owns.
 */
static void flush_pending(struct tp_channel *ch)
{
    if (ch->n_pending == 0)
        return;
    if (ch->venue->framing == TP_FRAMING_MESSAGES)
        mold_flush(ch);
    else
        mdp3_flush(ch);
    for (uint32_t i = 0; i < ch->n_pending; i++)
        if (ch->pending[i].release)
            ch->params.io.release(ch->params.io.ctx, ch->pending[i].handle);
    ch->n_pending = 0;
    tp_publisher_held_applied(ch->params.publisher);
}

/* Run by the publisher at the end of the rx burst. */
static void end_of_burst(void *ctx)
{
    struct tp_channel *ch = ctx;
    ch->flush_due = false;
    flush_pending(ch);
}

/* Adds a packet to the pending list (ITCH: with its first sequence and count). */
static inline __attribute__((always_inline)) void
add_pending(struct tp_channel *ch, const struct tp_channel_pending *pk, bool release, bool itch)
{
    /* Field by field: gcc copied a whole struct through the stack. */
    struct tp_channel_pending *to = &ch->pending[ch->n_pending++];
    to->payload = pk->payload;
    to->handle = pk->handle;
    to->rx_tsc = pk->rx_tsc;
    if (itch) {
        to->seq = pk->seq;
        to->count = pk->count;
    }
    to->len = pk->len;
    to->release = release;
}

/*
 * A packet in sequence: kept for the end of the rx burst when the publisher is inside one,
 * applied now otherwise. ITCH (`itch`: a constant where the caller knows it): pk->count messages
 * numbered from pk->seq, staged from stage index `staged`. `owned`: the channel held the packet
 * already (it releases it once applied). Returns true when the channel now keeps a packet the
 * caller gave it.
 */
static inline __attribute__((always_inline)) bool deliver(struct tp_channel *ch,
                                                          const struct tp_channel_pending *pk,
                                                          uint32_t staged, bool owned, bool itch)
{
    if (itch)
        mold_stage_keep(ch, staged, pk->count);
    if (!ch->flush_due)
        ch->flush_due = tp_publisher_defer(ch->params.publisher, end_of_burst, ch);
    add_pending(ch, pk, owned || ch->flush_due, itch);
    /* Applied now outside a burst, and inside one when the channel keeps all the packets, or
     * stages all the blocks, it can (see STAGE_PACKET_MAX): in order all the same. */
    if (!ch->flush_due || ch->n_pending == TP_CHANNEL_PENDING_MAX ||
        (itch && ch->n_staged > STAGE_PACKET_MAX))
        flush_pending(ch);
    return ch->flush_due && !owned;
}

/* ---- MDP3 side lines ----------------------------------------------------------------------- */

/* Applies one packet outside the incremental burst (`replay`: again, after a snapshot, as
 * tp_mdp3_feed_replay says). MDP3's messages are the feed's SBE messages, every line's (a packet
 * carries several). */
static void mdp3_feed_one(struct tp_channel *ch, const uint8_t *payload, uint16_t len,
                          uint64_t rx_tsc, bool replay)
{
    int rc = replay ? tp_mdp3_feed_replay(&ch->mdp3, payload, len, rx_tsc)
                    : tp_mdp3_feed_packet(&ch->mdp3, payload, len, rx_tsc);
    if (rc < 0)
        ch->counters.feed_errors++;
    ch->counters.messages = ch->mdp3.counters.messages;
}

/* Replays a buffered incremental. */
static void mdp3_replay(void *ctx, const uint8_t *payload, uint16_t len, uint64_t rx_tsc)
{
    mdp3_feed_one(ctx, payload, len, rx_tsc, true);
}

/*
 * Joins the snapshot lines while recovery needs them (or always, to audit the books), leaves
 * them when done; the incrementals kept for replay go once nothing awaits a snapshot.
 */
static void mdp3_membership(struct tp_channel *ch)
{
    struct tp_mdp3_recovery *rec = &ch->recovery;
    if (!ch->params.has_snapshot || ch->params.io.membership == NULL)
        return;
    bool needed = tp_mdp3_recovery_needed(rec);
    bool join = needed || ch->params.audit_always;
    if (join != rec->joined) {
        ch->params.io.membership(ch->params.io.ctx, ch->params.index, TP_ROLE_SNAP_A, join);
        ch->params.io.membership(ch->params.io.ctx, ch->params.index, TP_ROLE_SNAP_B, join);
        if (rec->mbo_lines) {
            ch->params.io.membership(ch->params.io.ctx, ch->params.index, TP_ROLE_SMBO_A, join);
            ch->params.io.membership(ch->params.io.ctx, ch->params.index, TP_ROLE_SMBO_B, join);
        }
        rec->joined = join;
        rec->counters.joins += join;
    }
    if (!needed)
        tp_mdp3_recovery_done(rec);
}

/* Snapshot and definition lines: not arbitrated; the feed ignores what it already has. */
static void mdp3_side_packet(struct tp_channel *ch, enum tp_line_role role, const uint8_t *payload,
                             uint16_t len, uint64_t rx_tsc)
{
    struct tp_mdp3_packet p;
    if (tp_mdp3_packet_init(&p, payload, len) != 0)
        return;
    if (role == TP_ROLE_DEF_A || role == TP_ROLE_DEF_B) {
        if (ch->definitions_done)
            return;
        if (p.seq <= ch->def_last_seq) {
            /* The definition channel loops: once round, every instrument is known. */
            if (p.seq == 1 && ch->params.io.membership != NULL) {
                ch->definitions_done = true;
                ch->params.io.membership(ch->params.io.ctx, ch->params.index, TP_ROLE_DEF_A, false);
                ch->params.io.membership(ch->params.io.ctx, ch->params.index, TP_ROLE_DEF_B, false);
            }
            return;
        }
        ch->def_last_seq = p.seq;
        flush_pending(ch); /* the incrementals received before it come first */
        select_publisher(ch);
        mdp3_feed_one(ch, payload, len, rx_tsc, false);
        return;
    }
    /* Incrementals received before it come first: they may also make the channel join. */
    flush_pending(ch);
    bool mbo = role == TP_ROLE_SMBO_A || role == TP_ROLE_SMBO_B;
    uint32_t *last_seq = mbo ? &ch->mbo_last_seq : &ch->snap_last_seq;
    if (!ch->recovery.joined || (mbo && !ch->recovery.mbo_lines) || p.seq == *last_seq)
        return; /* not listening, or the other line's copy */
    *last_seq = p.seq;
    /* An order-level snapshot loads an in-sync book only if what came after it is replayed. */
    if (mbo)
        ch->mdp3.replay_floor = tp_mdp3_recovery_replay_floor(&ch->recovery, ch->mdp3.incr_seq);
    select_publisher(ch);
    mdp3_feed_one(ch, payload, len, rx_tsc, false);
    if (mbo)
        tp_mdp3_recovery_replay(&ch->recovery, payload, len, mdp3_replay, ch);
    else
        tp_mdp3_recovery_after_snapshot(&ch->recovery, payload, len, mdp3_replay, ch);
    mdp3_membership(ch);
}

/* Applies every held packet that is now in sequence, released at `released` (its wait: the
 * publisher's gap-wait histogram). */
static void drain_held(struct tp_channel *ch, uint64_t released)
{
    void *handle;
    uint32_t skip;
    while (tp_arb_next_ready(ch->arb, &handle, &skip)) {
        struct tp_channel_pending pk = {.handle = handle};
        ch->params.io.view(ch->params.io.ctx, handle, &pk.payload, &pk.len, &pk.rx_tsc);
        tp_publisher_held(ch->params.publisher, pk.rx_tsc, released);
        bool itch = ch->venue->framing == TP_FRAMING_MESSAGES;
        if (itch) {
            uint32_t blocks = mold_stage_held(ch, pk.payload, pk.len, &pk.seq);
            pk.count = blocks > skip ? blocks - skip : 0;
            pk.seq += skip;
        }
        deliver(ch, &pk, ch->n_staged + skip, true, itch);
    }
}

/* drain_held when the arbiter holds packets (most packets find none held: no call). */
static inline void drain(struct tp_channel *ch, uint64_t released)
{
    if (tp_arb_holding(ch->arb))
        drain_held(ch, released);
}

/*
 * ITCH messages were lost for good: every instrument the channel has defined by now may have
 * missed some, and stays flagged stale (only a reload clears it: nothing re-sends an ITCH
 * book). Each loss marks anew, so instruments defined since an earlier one are marked too;
 * those already stale are left as they are (no new status event). An instrument defined after
 * the loss started its book after it and is not marked.
 */
static void mark_stale(struct tp_channel *ch)
{
    ch->counters.stale_marks++;
    uint32_t n = tp_instruments_count(ch->params.registry);
    for (uint32_t id = tp_instruments_first_id(ch->params.registry); id < n; id++) {
        const struct tp_instrument *in = tp_instruments_get(ch->params.registry, id);
        if (in != NULL && feeds_instrument(ch, in))
            tp_publisher_set_flags(ch->params.publisher, id, TP_PUB_F_STALE);
    }
}

void tp_channel_mark_stale(struct tp_channel *ch)
{
    mark_stale(ch);
}

/*
 * A new MoldUDP64 session or an MDP3 sequence restart: consumers are told. Books stay: a session
 * change (failover) continues the day's state, and a new day's stock directory rebinds every
 * locate as it comes; MDP3 says what to clear with ChannelReset4, which the feed applies.
 * A gap open when the stream restarted is lost with the packets held beyond it (the arbiter
 * dropped them): consumers get it as a gap of the old stream before the reset, and ITCH books,
 * which no request can complete any more, are marked stale as after a give-up (MDP3 instruments
 * find their own losses by RptSeq).
 */
static void on_reset(struct tp_channel *ch, uint64_t rx_tsc)
{
    flush_pending(ch); /* the last session's messages come first */
    select_publisher(ch);
    struct tp_arb_gap lost;
    bool was_lost = tp_arb_reset_loss(ch->arb, &lost);
    if (was_lost)
        tp_publisher_channel_event(ch->params.publisher, TP_PUB_CHANNEL_GAP, lost.from, lost.to - 1,
                                   rx_tsc);
    if (ch->venue->recovery == TP_RECOVER_REREQUEST) {
        bool given_up = ch->params.io.send_rerequest != NULL
                            ? tp_mold_recovery_session_end(&ch->mold, was_lost ? &lost : NULL)
                            : was_lost;
        if (given_up) {
            mark_stale(ch);
            tp_itch_snapshot_want(&ch->snap);
        }
    }
    ch->counters.resets++;
    tp_publisher_channel_event(ch->params.publisher, TP_PUB_CHANNEL_RESET, 0, 0, rx_tsc);
}

/* No MoldUDP64 session known yet (sessions are printable: a zero byte means none). */
static inline bool session_unknown(const struct tp_channel *ch)
{
    return __builtin_expect(ch->session[0] == '\0', 0);
}

/*
 * Arbitrates a packet whose framing passed and delivers it (ITCH: its `blocks` staged from stage
 * index `staged`). Forced inline into each protocol's path with `itch` a constant.
 */
static inline __attribute__((always_inline)) bool
arbitrate(struct tp_channel *ch, enum tp_line_role role, const struct tp_arb_pkt *pkt,
          const uint8_t *payload, uint16_t len, void *handle, uint64_t rx_tsc, uint32_t blocks,
          uint32_t staged, bool itch)
{
    enum tp_line line = role == TP_ROLE_RETRANS  ? TP_LINE_RECOVERY
                        : role == TP_ROLE_INCR_B ? TP_LINE_B
                                                 : TP_LINE_A;
    uint32_t skip;
    enum tp_arb_verdict v = tp_arb_offer(ch->arb, line, pkt, handle, rx_tsc, &skip);
    if (v == TP_ARB_RESET) {
        on_reset(ch, rx_tsc);
        v = tp_arb_offer_slow(ch->arb, line, pkt, handle, rx_tsc, &skip); /* rare: no inline */
    }
    if (v == TP_ARB_HELD)
        return true;
    bool kept = false;
    if (v == TP_ARB_DELIVER) {
        /* A heartbeat has no blocks; a packet delivered has more than it skips. */
        struct tp_channel_pending pk = {.payload = payload,
                                        .handle = handle,
                                        .rx_tsc = rx_tsc,
                                        .seq = pkt->seq + skip,
                                        .count = blocks - skip,
                                        .len = len};
        kept = deliver(ch, &pk, staged + skip, false, itch);
        drain(ch, rx_tsc);
    }
    return kept;
}

/*
 * Every packet but the common one (in_order). The publisher is selected where the
 * channel publishes (flushes, resets, MDP3 side lines), not for every packet: most packets only
 * wait for the end of the burst.
 */
static __attribute__((noinline)) bool channel_packet(struct tp_channel *ch, enum tp_line_role role,
                                                     const uint8_t *payload, uint16_t len,
                                                     void *handle, uint64_t rx_tsc)
{
    ch->counters.packets++;
    if (ch->venue->framing == TP_FRAMING_MESSAGES) {
        struct tp_mold_packet p;
        int kind;
        uint32_t staged = ch->n_staged; /* where its blocks go (kept if it is delivered) */
        int blocks = mold_frame(ch, payload, len, &p, &kind);
        if (blocks < 0) {
            ch->counters.malformed++;
            return false;
        }
        /* A channel started mid-session has applied nothing yet: its first re-requests name
         * the session of what it receives. */
        if (session_unknown(ch)) {
            memcpy(ch->session, p.session, TP_ARB_SESSION_LEN);
            /* Joined past the session's start: only a snapshot has what came before. */
            if (p.sequence > 1)
                tp_itch_snapshot_want(&ch->snap);
        }
        struct tp_arb_pkt pkt = {.seq = p.sequence,
                                 .count = kind == TP_MOLD_MESSAGES ? p.count : 0,
                                 .session = p.session,
                                 .end_of_session = kind == TP_MOLD_END};
        return arbitrate(ch, role, &pkt, payload, len, handle, rx_tsc, (uint32_t)blocks, staged,
                         true);
    }
    /* Checked once here: the feed walks the messages of a delivered packet unchecked. */
    if (!tp_mdp3_packet_frames(payload, len)) {
        ch->counters.malformed++;
        return false;
    }
    uint32_t seq = mktdata_load_u32(payload); /* MsgSeqNum */
    if (role != TP_ROLE_INCR_A && role != TP_ROLE_INCR_B) {
        mdp3_side_packet(ch, role, payload, len, rx_tsc);
        return false;
    }
    struct tp_arb_pkt pkt = {.seq = seq, .count = 1};
    return arbitrate(ch, role, &pkt, payload, len, handle, rx_tsc, 0, 0, false);
}

/*
 * MDP3: the framing check is the first to read a payload past its headers, one message length
 * after the other; each read waits for the one before it, and on a payload not yet in cache
 * (an MDP3 message spans a line or more) each was a miss of its own. The payload's further
 * lines are asked for first, so their misses overlap (its first line is the one the classifier
 * read). On ITCH payloads (messages of ~30 bytes) it measured no faster and cost instructions:
 * MDP3 only.
 */
static inline void prefetch_payload(const uint8_t *payload, uint16_t len)
{
    uintptr_t end = (uintptr_t)payload + len;
    for (uintptr_t line = ((uintptr_t)payload | 63) + 1; line < end; line += 64)
        __builtin_prefetch((const void *)line);
}

/*
 * The common packet inside an rx burst: of line A or B (MDP3: an incremental line), well framed,
 * next in sequence of the current stream, with nothing held and room to keep it for the end of
 * the burst. It is kept with exactly channel_packet's effects, and with no call: the general
 * path's calls made every packet save and restore six registers. Any other packet returns false
 * before anything the general path reads is changed (ITCH: its blocks are staged past those
 * kept, and staged again there). `itch`: a constant in each caller.
 */
static inline __attribute__((always_inline)) bool in_order(struct tp_channel *ch,
                                                           enum tp_line_role role,
                                                           const uint8_t *payload, uint16_t len,
                                                           void *handle, uint64_t rx_tsc, bool itch)
{
    struct tp_arb *arb = ch->arb;
    if (!ch->flush_due || ch->n_pending >= TP_CHANNEL_PENDING_MAX - 1 || tp_arb_holding(arb) ||
        (role != TP_ROLE_INCR_A && role != TP_ROLE_INCR_B))
        return false;
    enum tp_line line = role == TP_ROLE_INCR_B ? TP_LINE_B : TP_LINE_A;
    struct tp_channel_pending pk = {
        .payload = payload, .handle = handle, .rx_tsc = rx_tsc, .len = len};
    struct tp_mold_packet p;
    if (itch) {
        if (session_unknown(ch) || tp_mold_parse(&p, payload, len) != TP_MOLD_MESSAGES ||
            !tp_arb_in_order(arb, TP_SEQ_MOLDUDP64, line, p.sequence, p.sequence + p.count,
                             p.session))
            return false;
        int blocks =
            tp_mold_frame(&p, ch->stage_msgs + ch->n_staged, ch->stage_lens + ch->n_staged);
        if (blocks < 0 || ch->n_staged + (uint32_t)blocks > STAGE_PACKET_MAX)
            return false;
        pk.seq = p.sequence;
        pk.count = (uint32_t)blocks;
        ch->n_staged += pk.count;
    } else {
        /* The sequence is read once the header is known to be there. */
        if (len < TP_MDP3_PACKET_HEADER_LEN)
            return false;
        pk.seq = mktdata_load_u32(payload); /* MsgSeqNum */
        pk.count = 1;
        if (!tp_arb_in_order(arb, TP_SEQ_MDP3, line, pk.seq, pk.seq + 1, NULL) ||
            !tp_mdp3_packet_frames(payload, len))
            return false;
    }
    ch->counters.packets++;
    tp_arb_deliver_in_order(arb, itch ? TP_SEQ_MOLDUDP64 : TP_SEQ_MDP3, line, pk.seq,
                            pk.seq + pk.count, rx_tsc);
    add_pending(ch, &pk, true, itch);
    return true;
}

/*
 * Each protocol's packet path is a function of its own (tp_channel_packet jumps to it): in one
 * function, the MDP3 path's prefetch loop made gcc spill three registers in every turn of the
 * ITCH framing loop, and gcc saves the registers of a whole function before its first test, so
 * the path that jumps out of the other's function would save six registers twice.
 */
static __attribute__((noinline)) bool itch_packet(struct tp_channel *ch, enum tp_line_role role,
                                                  const uint8_t *payload, uint16_t len,
                                                  void *handle, uint64_t rx_tsc)
{
    return in_order(ch, role, payload, len, handle, rx_tsc, true) ||
           channel_packet(ch, role, payload, len, handle, rx_tsc);
}

static __attribute__((noinline)) bool mdp3_packet(struct tp_channel *ch, enum tp_line_role role,
                                                  const uint8_t *payload, uint16_t len,
                                                  void *handle, uint64_t rx_tsc)
{
    prefetch_payload(payload, len); /* for in_order's framing check or channel_packet's */
    return in_order(ch, role, payload, len, handle, rx_tsc, false) ||
           channel_packet(ch, role, payload, len, handle, rx_tsc);
}

/* ---- venues whose feed orders its packets (TP_FRAMING_SEGMENTS) ------------------------------ */

/* Joins the snapshot lines while the feed waits for a snapshot, leaves them when it does not. */
static void segments_membership(struct tp_channel *ch)
{
    bool join = ch->venue->feed->recovering(ch->feed) > 0;
    if (join == ch->snapshot_joined || ch->params.io.membership == NULL || !ch->params.has_snapshot)
        return;
    ch->params.io.membership(ch->params.io.ctx, ch->params.index, TP_ROLE_SNAP_A, join);
    ch->params.io.membership(ch->params.io.ctx, ch->params.index, TP_ROLE_SNAP_B, join);
    ch->snapshot_joined = join;
}

/*
 * Every packet of lines A and B goes to the feed as it comes (it skips the second copy by its
 * own sequences and holds a hole for the other line itself), and so does every snapshot packet
 * of either snapshot line (received while joined; the feed reads those of segments that wait
 * for one, and of a segment whose hole a snapshot covers). The channel holds no packet.
 */
static __attribute__((noinline)) bool segments_packet(struct tp_channel *ch, enum tp_line_role role,
                                                      const uint8_t *payload, uint16_t len,
                                                      void *handle, uint64_t rx_tsc)
{
    (void)handle; /* never kept */
    const struct tp_venue_feed_ops *feed = ch->venue->feed;
    ch->counters.packets++;
    select_publisher(ch);
    int rc = 0;
    if (role == TP_ROLE_INCR_A || role == TP_ROLE_INCR_B)
        rc = feed->packet(ch->feed, payload, len, rx_tsc);
    else if (role == TP_ROLE_SNAP_A || role == TP_ROLE_SNAP_B)
        rc = feed->snapshot(ch->feed, payload, len, rx_tsc);
    ch->counters.feed_errors += rc < 0;
    ch->counters.messages = feed->messages(ch->feed);
    tp_publisher_held_applied(ch->params.publisher);
    segments_membership(ch);
    return false;
}

/* The feed's waits for the other line that are over at `now` become gaps. */
static void segments_poll(struct tp_channel *ch, uint64_t now)
{
    select_publisher(ch);
    ch->venue->feed->poll(ch->feed, now);
    tp_publisher_held_applied(ch->params.publisher);
    segments_membership(ch);
}

/* The packet path of a venue's framing (the channel keeps it: one indirect jump a packet). */
static tp_channel_packet_fn *packet_path(enum tp_venue_framing framing)
{
    return framing == TP_FRAMING_MESSAGES  ? itch_packet
           : framing == TP_FRAMING_PACKETS ? mdp3_packet
                                           : segments_packet;
}

bool tp_channel_packet(struct tp_channel *ch, enum tp_line_role role, const uint8_t *payload,
                       uint16_t len, void *handle, uint64_t rx_tsc)
{
    return ch->packet(ch, role, payload, len, handle, rx_tsc);
}

/* Gives the current gap up: the books of the channel can no longer be trusted. */
static void give_up(struct tp_channel *ch, uint64_t now)
{
    struct tp_arb_gap gap;
    if (tp_arb_current_gap(ch->arb, &gap))
        tp_publisher_channel_event(ch->params.publisher, TP_PUB_CHANNEL_GAP, gap.from, gap.to - 1,
                                   now);
    tp_arb_skip_gap(ch->arb);
    drain(ch, now);
    flush_pending(ch); /* what the gap held back is applied before the books are marked */
    mark_stale(ch);
    tp_itch_snapshot_want(&ch->snap); /* no-op without a snapshot service */
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

static bool feeds_instrument(const struct tp_channel *ch, const struct tp_instrument *in);

/*
 * Flags the channel's unflagged books RECOVERING, or clears that flag, on every instrument it
 * feeds (one status event each; stale ones keep their flag).
 */
static void set_behind(struct tp_channel *ch, bool behind, uint64_t now)
{
    ch->behind = behind;
    if (behind)
        tp_publisher_channel_event(ch->params.publisher, TP_PUB_CHANNEL_RECOVERY_STARTED, 0, 0,
                                   now);
    uint8_t from = behind ? 0 : TP_PUB_F_RECOVERING, to = behind ? TP_PUB_F_RECOVERING : 0;
    uint32_t n = tp_instruments_count(ch->params.registry);
    for (uint32_t id = tp_instruments_first_id(ch->params.registry); id < n; id++) {
        const struct tp_instrument *in = tp_instruments_get(ch->params.registry, id);
        if (in != NULL && feeds_instrument(ch, in) &&
            tp_publisher_flags(ch->params.publisher, id) == from)
            tp_publisher_set_flags(ch->params.publisher, id, to);
    }
    if (!behind)
        tp_publisher_channel_event(ch->params.publisher, TP_PUB_CHANNEL_RECOVERED, 0, 0, now);
}

/*
 * MDP3: whether the channel trades, so that its incremental lines' silence says they are behind:
 * an instrument it feeds is open or pre-open (its last security status). Statuses change only
 * with packets, so the instruments are walked once per silence.
 */
static bool mdp3_session_open(struct tp_channel *ch)
{
    if (ch->session_checked_tsc == ch->last_rx_tsc)
        return ch->session_open;
    ch->session_checked_tsc = ch->last_rx_tsc;
    ch->session_open = false;
    uint32_t n = tp_instruments_count(ch->params.registry);
    for (uint32_t id = tp_instruments_first_id(ch->params.registry); id < n; id++) {
        const struct tp_instrument *in = tp_instruments_get(ch->params.registry, id);
        if (in != NULL && feeds_instrument(ch, in) &&
            (in->trading_status == TP_STATUS_OPEN || in->trading_status == TP_STATUS_PRE_OPEN)) {
            ch->session_open = true;
            break;
        }
    }
    return ch->session_open;
}

/* Packets received on the lines whose silence counts (MDP3: the incremental lines only, not
 * the snapshot and definition loops). */
static uint64_t lines_packets(const struct tp_channel *ch)
{
    if (ch->venue->recovery == TP_RECOVER_REREQUEST)
        return ch->counters.packets;
    const struct tp_arb_counters *c = tp_arb_counters(ch->arb);
    return c->line[TP_LINE_A].packets + c->line[TP_LINE_B].packets;
}

/*
 * Whether the books are behind the venue, as far as the channel can tell: a gap the other line
 * did not fill is open (ITCH: it is being re-requested), or both lines have been silent longer
 * than silence_tsc while the venue trades: ITCH in a session not ended (a MoldUDP64 sender sends
 * heartbeats), MDP3 while an instrument of the channel is open or pre-open. They are healthy
 * again once no gap is open and packets arrive (MDP3 instruments that missed something then go
 * stale by RptSeq).
 */
static void check_behind(struct tp_channel *ch, uint64_t now)
{
    /* Packets since the last poll: the lines spoke (no store per packet for this). */
    uint64_t packets = lines_packets(ch);
    if (packets != ch->polled_packets) {
        ch->polled_packets = packets;
        ch->last_rx_tsc = now;
    }
    if (ch->last_rx_tsc == 0)
        return; /* nothing received yet: no book to flag */
    if (tp_itch_snapshot_keeping(&ch->snap))
        return; /* a snapshot loads: its own flags hold until the books are the venue's */
    struct tp_arb_gap gap;
    bool silent = ch->params.silence_tsc != 0 && now - ch->last_rx_tsc > ch->params.silence_tsc &&
                  (ch->venue->recovery == TP_RECOVER_REREQUEST ? !tp_arb_session_ended(ch->arb)
                                                               : mdp3_session_open(ch));
    /* A gap open when the books were already behind (the packet that ended a silence showed
     * one) keeps them flagged through its wait window too. */
    bool behind =
        silent || ((ch->arb->gap_reported || ch->behind) && tp_arb_current_gap(ch->arb, &gap));
    if (behind == ch->behind)
        return;
    if (behind) {
        ch->counters.recovering_marks++;
        ch->counters.silences += silent;
    }
    set_behind(ch, behind, now);
}

void tp_channel_poll(struct tp_channel *ch, uint64_t now)
{
    if (ch->venue->framing == TP_FRAMING_SEGMENTS)
        segments_poll(ch, now);
    flush_pending(ch); /* timers act after every message delivered so far */
    if (ch->snap.state == TP_SNAP_REPLAYING)
        tp_channel_snapshot_poll(ch, now);
    select_publisher(ch);
    struct tp_arb_gap reported, open;
    bool was_reported = tp_arb_poll(ch->arb, now, &reported);
    bool rerequest = ch->venue->recovery == TP_RECOVER_REREQUEST;
    if (!rerequest || ch->params.io.send_rerequest == NULL) {
        /* Nothing to ask: MDP3 instruments recover through their own sequence (RptSeq). */
        if (was_reported) {
            if (rerequest) {
                give_up(ch, now);
            } else {
                tp_publisher_channel_event(ch->params.publisher, TP_PUB_CHANNEL_GAP, reported.from,
                                           reported.to - 1, now);
                tp_arb_skip_gap(ch->arb);
                drain(ch, now);
            }
        }
        check_behind(ch, now);
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
    check_behind(ch, now);
}

/* ---- start and stop (live reload) ---------------------------------------------------------- */

void tp_channel_start(struct tp_channel *ch)
{
    select_publisher(ch);
    uint32_t n = tp_instruments_count(ch->params.registry);
    for (uint32_t id = tp_instruments_first_id(ch->params.registry); id < n; id++) {
        const struct tp_instrument *in = tp_instruments_get(ch->params.registry, id);
        if (in != NULL && feeds_instrument(ch, in) &&
            (ch->params.filter == NULL ||
             tp_instrument_filter_match(ch->params.filter, in->symbol, in->security_group)))
            tp_publisher_set_flags(ch->params.publisher, id, 0);
    }
}

uint32_t tp_channel_stop(struct tp_channel *ch, uint64_t now_tsc)
{
    /* Delivered messages are applied; nothing runs for the channel at the end of the burst. */
    flush_pending(ch);
    if (ch->flush_due)
        tp_publisher_defer_cancel(ch->params.publisher, ch);
    ch->flush_due = false;
    /* Held packets: give every gap up and hand each packet back unapplied. A gap skip makes the
     * packets behind it ready; the bound only guards against an arbiter that never empties. */
    void *handle;
    uint32_t skip;
    struct tp_arb_gap gap;
    for (uint32_t round = 0; round <= ch->params.held_max + 1; round++) {
        while (tp_arb_next_ready(ch->arb, &handle, &skip))
            ch->params.io.release(ch->params.io.ctx, handle);
        if (!tp_arb_current_gap(ch->arb, &gap))
            break;
        tp_arb_skip_gap(ch->arb);
    }
    /* Its books empty and flagged stale: consumers see a CLEAR record and a status event. */
    uint32_t marked = tp_channel_clear_books(ch, now_tsc, TP_PUB_F_STALE);
    if (ch->venue->locate_map)
        tp_instruments_reset_locates(ch->params.registry, ch->params.itch_slot);
    return marked;
}

uint32_t tp_channel_clear_books(struct tp_channel *ch, uint64_t now_tsc, uint8_t flags)
{
    select_publisher(ch);
    struct tp_feed_sink sink = tp_publisher_sink(ch->params.publisher);
    struct tp_feed_info info = {.rx_tsc = now_tsc};
    struct tp_book_change changes[TP_BOOK_CHANGES_MAX];
    uint32_t n = tp_instruments_count(ch->params.registry), marked = 0;
    uint32_t first = tp_instruments_first_id(ch->params.registry);
    /* The order books go in one pass over the order tables: cleared one by one, thousands of
     * instruments took the lcore a minute at production sizing (tp_books_mark_for_clear). */
    for (uint32_t id = first; id < n; id++) {
        const struct tp_instrument *in = tp_instruments_get(ch->params.registry, id);
        if (in != NULL && feeds_instrument(ch, in))
            tp_books_mark_for_clear(ch->params.books, id);
    }
    tp_books_drop_marked_orders(ch->params.books);
    for (uint32_t id = first; id < n; id++) {
        const struct tp_instrument *in = tp_instruments_get(ch->params.registry, id);
        if (in == NULL || !feeds_instrument(ch, in))
            continue;
        int k = tp_books_clear(ch->params.books, id, 0, changes);
        if (k > 0) {
            sink.changes(sink.ctx, &info, changes, (uint32_t)k);
            sink.end_of_event(sink.ctx, &info);
        }
        tp_publisher_set_flags(ch->params.publisher, id, flags);
        marked++;
    }
    return marked;
}
