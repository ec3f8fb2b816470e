/*
 * A capture's packets through the data plane's line arbiter: see replay_arb.h.
 */
#include "replay_arb.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "net_bytes.h"
#include "replay_input.h"

/* Warnings printed before they are only counted. */
#define WARNINGS_MAX 20

int replay_arb_open(struct replay *r, enum tp_seq_rules rules, uint64_t start_seq)
{
    struct tp_arb_params p = {
        .rules = rules,
        .held_max = REPLAY_HELD_MAX,
        .gap_wait_tsc = r->gap_wait_ns         ? r->gap_wait_ns
                        : rules == TP_SEQ_MDP3 ? REPLAY_MDP3_GAP_WAIT_NS
                                               : REPLAY_GAP_WAIT_NS,
        .start_seq = start_seq,
        .max_jump = 4096, /* the daemon's: a real jump is confirmed by the next packet */
    };
    /* The size depends on held_max alone: an arbiter is prepared again in place. */
    if (r->arb == NULL)
        r->arb = aligned_alloc(64, tp_arb_memsize(&p));
    if (r->arb == NULL)
        return -ENOMEM;
    return tp_arb_init(r->arb, &p);
}

void replay_arb_close(struct replay *r)
{
    free(r->arb);
    r->arb = NULL;
}

static void print_warning(struct replay *r, const char *fmt, va_list ap)
{
    fputs("tickplane-replay: ", r->warn);
    vfprintf(r->warn, fmt, ap);
    fputc('\n', r->warn);
}

void replay_warn(struct replay *r, const char *fmt, ...)
{
    r->warnings++;
    if (r->warn == NULL || ++r->sequence_warnings > WARNINGS_MAX)
        return;
    va_list ap;
    va_start(ap, fmt);
    print_warning(r, fmt, ap);
    va_end(ap);
    if (r->sequence_warnings == WARNINGS_MAX)
        fputs("tickplane-replay: further warnings are only counted (\"warnings\")\n", r->warn);
}

void replay_warn_book(struct replay *r, const char *fmt, ...)
{
    r->warnings++;
    if (r->warn == NULL)
        return;
    va_list ap;
    va_start(ap, fmt);
    print_warning(r, fmt, ap);
    va_end(ap);
}

/* A held packet's payload: the handle is its first byte, the UDP header before it its size. */
static void apply_held(struct replay *r, const struct replay_arb_venue *v, void *handle,
                       uint32_t skip, uint64_t ts)
{
    const uint8_t *payload = handle;
    uint16_t udp_len = tp_load_be16(payload - 4);
    v->apply(r, payload, (uint16_t)(udp_len - 8), skip, ts);
}

static void drain(struct replay *r, const struct replay_arb_venue *v, uint64_t ts)
{
    void *handle;
    uint32_t skip;
    while (tp_arb_next_ready(r->arb, &handle, &skip))
        apply_held(r, v, handle, skip, ts);
}

/* Gives the open gap up (no re-request offline) and flags the books. */
static void give_up(struct replay *r, const struct replay_arb_venue *v, uint64_t record,
                    size_t offset, const char *when)
{
    struct tp_arb_gap gap;
    if (!tp_arb_current_gap(r->arb, &gap))
        return;
    r->gaps_given_up++;
    if (gap.from == 1)
        replay_warn(r,
                    "%s: the capture starts at %s %" PRIu64 ": %s [1, %" PRIu64
                    ") are missing, books are incomplete (%s)",
                    when, v->unit, gap.to, v->items, gap.to, v->late_books);
    else
        replay_warn(r,
                    "%s: %s [%" PRIu64 ", %" PRIu64 ") lost on every line (packet %" PRIu64
                    ", offset %zu): %s",
                    when, v->items, gap.from, gap.to, record, offset, v->lost_books);
    tp_arb_skip_gap(r->arb);
    drain(r, v, 0);
    v->lost(r);
}

/* A session id as text for a warning: its bytes may be anything (a corrupt packet). */
static const char *session_text(const uint8_t *session, char out[TP_ARB_SESSION_LEN + 1])
{
    for (int i = 0; i < TP_ARB_SESSION_LEN; i++)
        out[i] =
            session[i] >= 0x20 && session[i] < 0x7f && session[i] != '"' ? (char)session[i] : '?';
    out[TP_ARB_SESSION_LEN] = '\0';
    return out;
}

/* A reset the arbiter took: reported, and what it abandoned is lost. */
static void reset(struct replay *r, const struct replay_arb_venue *v, const struct tp_arb_pkt *ap,
                  uint64_t expected, uint64_t record, size_t offset)
{
    char text[TP_ARB_SESSION_LEN + 1];
    struct tp_arb_gap lost;
    if (ap->session != NULL)
        replay_warn(r,
                    "packet %" PRIu64 " (offset %zu): new MoldUDP64 session \"%s\" after "
                    "sequence %" PRIu64,
                    record, offset, session_text(ap->session, text), expected - 1);
    else
        replay_warn(r, "packet %" PRIu64 " (offset %zu): %s restarts at %" PRIu64 " after %" PRIu64,
                    record, offset, v->unit, ap->seq, expected - 1);
    if (tp_arb_reset_loss(r->arb, &lost)) {
        replay_warn(r, "%s [%" PRIu64 ", %" PRIu64 ") of the old %s never arrived: %s", v->items,
                    lost.from, lost.to, ap->session != NULL ? "session" : "stream", v->lost_books);
        v->lost(r);
    }
    r->sessions++;
}

/* A packet dropped as implausible: reported. */
static void corrupt(struct replay *r, const struct replay_arb_venue *v, const struct tp_arb_pkt *ap,
                    uint64_t expected, uint64_t record, size_t offset)
{
    char text[TP_ARB_SESSION_LEN + 1];
    r->corrupt++;
    if (ap->session == NULL)
        replay_warn(r,
                    "packet %" PRIu64 " (offset %zu): %s %" PRIu64
                    " dropped as implausible (expected %" PRIu64 ")",
                    record, offset, v->unit, ap->seq, expected);
    else if (expected == 0)
        replay_warn(r,
                    "packet %" PRIu64 " (offset %zu): the first packet, sequence %" PRIu64
                    " of session \"%s\", is far past a session's start: dropped until another "
                    "confirms it",
                    record, offset, ap->seq, session_text(ap->session, text));
    else
        replay_warn(r,
                    "packet %" PRIu64 " (offset %zu): sequence %" PRIu64 " of session \"%s\" "
                    "dropped as implausible (expected %" PRIu64 ")",
                    record, offset, ap->seq, session_text(ap->session, text), expected);
}

void replay_arb_offer(struct replay *r, const struct replay_arb_venue *v, enum tp_line line,
                      const struct tp_arb_pkt *ap, const uint8_t *payload, uint16_t len,
                      uint64_t ts, uint64_t record, size_t offset)
{
    uint64_t expected = tp_arb_expected(r->arb);
    uint32_t skip;
    enum tp_arb_verdict verdict = tp_arb_offer(r->arb, line, ap, (void *)payload, ts, &skip);
    if (verdict == TP_ARB_RESET) {
        reset(r, v, ap, expected, record, offset);
        verdict = tp_arb_offer(r->arb, line, ap, (void *)payload, ts, &skip);
    }
    switch (verdict) {
    case TP_ARB_DELIVER:
        if (ap->count > 0)
            v->apply(r, payload, len, skip, ts);
        drain(r, v, ts);
        break;
    case TP_ARB_DUPLICATE:
        r->duplicates++;
        break;
    case TP_ARB_CORRUPT:
        corrupt(r, v, ap, expected, record, offset);
        break;
    default:
        break; /* held, old session, held buffer full: the arbiter counts them */
    }
    struct tp_arb_gap gap;
    if (tp_arb_poll(r->arb, ts, &gap)) {
        char when[64];
        snprintf(when, sizeof(when), "packet %" PRIu64, record);
        give_up(r, v, record, offset, when);
    }
}

void replay_arb_finish(struct replay *r, const struct replay_arb_venue *v)
{
    give_up(r, v, r->packets, r->len, "end of capture");
}
