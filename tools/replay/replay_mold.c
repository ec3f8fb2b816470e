/*
 * MoldUDP64 packets of a capture through the data plane's arbiter: see replay_mold.h.
 */
#include "replay_mold.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "arbiter.h"
#include "moldudp64.h"
#include "net_bytes.h"
#include "replay_input.h"

/* Warnings of one kind printed before they are only counted. */
#define WARNINGS_MAX 20

int replay_mold_open(struct replay *r)
{
    struct tp_arb_params p = {
        .rules = TP_SEQ_MOLDUDP64,
        .held_max = REPLAY_HELD_MAX,
        .gap_wait_tsc = r->gap_wait_ns,
        /* A session starts at 1: a capture that does not has lost its start, unless a snapshot
         * (replay_snapshot.h) holds everything before its sequence. */
        .start_seq = r->snapshot_next_seq ? r->snapshot_next_seq : 1,
        .max_jump = 4096,
    };
    size_t size = tp_arb_memsize(&p);
    r->arb = aligned_alloc(64, size);
    if (r->arb == NULL)
        return -ENOMEM;
    return tp_arb_init(r->arb, &p);
}

void replay_mold_close(struct replay *r)
{
    free(r->arb);
    r->arb = NULL;
}

static void warn(struct replay *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void warn(struct replay *r, const char *fmt, ...)
{
    r->warnings++;
    if (r->warn == NULL || r->warnings > WARNINGS_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("tickplane-replay: ", r->warn);
    vfprintf(r->warn, fmt, ap);
    fputc('\n', r->warn);
    va_end(ap);
    if (r->warnings == WARNINGS_MAX)
        fputs("tickplane-replay: further warnings are only counted (\"warnings\")\n", r->warn);
}

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
            tp_itch_feed_message(&r->itch, msg, n, &info);
        r->messages++;
    }
}

/* A held packet's payload: the handle is its first byte, the UDP header before it its size. */
static void apply_held(struct replay *r, void *handle, uint32_t skip, uint64_t ts)
{
    const uint8_t *payload = handle;
    uint16_t udp_len = tp_load_be16(payload - 4);
    apply(r, payload, (uint16_t)(udp_len - 8), skip, ts);
}

static void drain(struct replay *r, uint64_t ts)
{
    void *handle;
    uint32_t skip;
    while (tp_arb_next_ready(r->arb, &handle, &skip))
        apply_held(r, handle, skip, ts);
}

/* Gives the open gap up (no re-request offline) and flags the books. */
static void give_up(struct replay *r, uint64_t record, size_t offset, const char *when)
{
    struct tp_arb_gap gap;
    if (!tp_arb_current_gap(r->arb, &gap))
        return;
    r->gaps_given_up++;
    if (gap.from == 1)
        warn(r,
             "%s: the capture starts at sequence %" PRIu64 ": messages [1, %" PRIu64
             ") are missing, books are incomplete (flagged stale)",
             when, gap.to, gap.to);
    else
        warn(r,
             "%s: messages [%" PRIu64 ", %" PRIu64 ") lost on every line (packet %" PRIu64
             ", offset %zu): books flagged stale",
             when, gap.from, gap.to, record, offset);
    tp_arb_skip_gap(r->arb);
    drain(r, 0);
    mark_stale(r);
}

/* A session id as text for a warning: its bytes may be anything (a corrupt packet). */
static const char *session_text(const uint8_t *session, char out[TP_MOLD_SESSION_LEN + 1])
{
    for (int i = 0; i < TP_MOLD_SESSION_LEN; i++)
        out[i] =
            session[i] >= 0x20 && session[i] < 0x7f && session[i] != '"' ? (char)session[i] : '?';
    out[TP_MOLD_SESSION_LEN] = '\0';
    return out;
}

static enum tp_line line_of(struct replay *r, const struct tp_udp_view *u)
{
    uint32_t dst = u->key.dst_ip;
    if ((dst >> 28) != 0xe)
        return TP_LINE_RECOVERY;
    if (r->line_a_group == 0)
        r->line_a_group = dst;
    return dst == r->line_a_group ? TP_LINE_A : TP_LINE_B;
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
    enum tp_line line = line_of(r, u);
    char text[TP_MOLD_SESSION_LEN + 1];
    uint64_t expected = tp_arb_expected(r->arb);
    uint32_t skip;
    enum tp_arb_verdict v = tp_arb_offer(r->arb, line, &ap, (void *)u->payload, ts, &skip);
    if (v == TP_ARB_RESET) {
        struct tp_arb_gap lost;
        warn(r,
             "packet %" PRIu64 " (offset %zu): new MoldUDP64 session \"%s\" after sequence "
             "%" PRIu64,
             record, offset, session_text(pkt.session, text), expected - 1);
        if (tp_arb_reset_loss(r->arb, &lost)) {
            warn(r,
                 "messages [%" PRIu64 ", %" PRIu64 ") of the old session never arrived: "
                 "books flagged stale",
                 lost.from, lost.to);
            mark_stale(r);
        }
        r->sessions++;
        v = tp_arb_offer(r->arb, line, &ap, (void *)u->payload, ts, &skip);
    }
    switch (v) {
    case TP_ARB_DELIVER:
        if (ap.count > 0)
            apply(r, u->payload, u->payload_len, skip, ts);
        drain(r, ts);
        break;
    case TP_ARB_DUPLICATE:
        r->duplicates++;
        break;
    case TP_ARB_CORRUPT:
        r->corrupt++;
        if (expected == 0)
            warn(r,
                 "packet %" PRIu64 " (offset %zu): the first packet, sequence %" PRIu64
                 " of session \"%s\", is far past a session's start: dropped until another "
                 "confirms it",
                 record, offset, pkt.sequence, session_text(pkt.session, text));
        else
            warn(r,
                 "packet %" PRIu64 " (offset %zu): sequence %" PRIu64 " of session \"%s\" "
                 "dropped as implausible (expected %" PRIu64 ")",
                 record, offset, pkt.sequence, session_text(pkt.session, text), expected);
        break;
    default:
        break; /* held, old session, held buffer full: the arbiter counts them */
    }
    struct tp_arb_gap gap;
    if (tp_arb_poll(r->arb, ts, &gap)) {
        char when[64];
        snprintf(when, sizeof(when), "packet %" PRIu64, record);
        give_up(r, record, offset, when);
    }
}

void replay_mold_finish(struct replay *r)
{
    give_up(r, r->packets, r->len, "end of capture");
}
