/*
 * A/B line arbitration: see arbiter.h for what it promises.
 *
 * State is the next sequence the channel needs (`expected`), one past the highest sequence seen
 * (`horizon`), and the packets held beyond a gap, kept sorted by first sequence so draining pops
 * from the front. Packets arrive mostly in order, so insertion is nearly always an append.
 */
#include "arbiter.h"

#include <errno.h>
#include <string.h>

/*
 * An MDP3 line that goes back to MsgSeqNum 1 after more than this many packets has restarted;
 * closer to the start it is taken for reordering.
 */
#define MDP3_REORDER_TOLERANCE 8

size_t tp_arb_memsize(const struct tp_arb_params *params)
{
    size_t size = sizeof(struct tp_arb) + (size_t)params->held_max * sizeof(struct tp_arb_held_pkt);
    return (size + 63) & ~(size_t)63;
}

int tp_arb_init(void *mem, const struct tp_arb_params *params)
{
    if (mem == NULL || params == NULL || params->held_max == 0 ||
        params->held_max > TP_ARB_HELD_LIMIT ||
        (params->rules != TP_SEQ_MDP3 && params->rules != TP_SEQ_MOLDUDP64))
        return -EINVAL;
    struct tp_arb *arb = mem;
    memset(arb, 0, sizeof(*arb));
    arb->params = *params;
    return 0;
}

static void release_handle(struct tp_arb *arb, void *handle)
{
    if (arb->params.release != NULL)
        arb->params.release(arb->params.release_ctx, handle);
}

/*
 * Drops everything held and starts a new stream at sequence 1 (both venues restart there). An
 * open gap and the packets held beyond it are abandoned: noted for tp_arb_reset_loss, counted
 * as skipped.
 */
static void restart_stream(struct tp_arb *arb)
{
    arb->have_reset_loss = arb->started && arb->expected < arb->horizon;
    if (arb->have_reset_loss) {
        arb->reset_loss = (struct tp_arb_gap){.from = arb->expected, .to = arb->horizon};
        arb->counters.skipped_msgs += arb->horizon - arb->expected;
    }
    for (uint32_t i = arb->head; i < arb->n_held; i++)
        release_handle(arb, arb->held[i].handle);
    arb->head = arb->n_held = 0;
    arb->expected = arb->horizon = 1;
    arb->started = true;
    arb->gap_open = arb->gap_reported = arb->gap_urgent = arb->have_jump = false;
    arb->session_end = 0;
    arb->epoch++;
    arb->counters.resets++;
}

/*
 * Re-evaluates the gap after `expected` or `horizon` moved and the held packets were drained:
 * there is a gap exactly when something beyond `expected` was seen. A new gap position starts a
 * new wait window; a window that ends unreported was filled by the other line in time.
 */
static void note_gap_change(struct tp_arb *arb)
{
    bool open = arb->expected < arb->horizon;
    if (arb->gap_open && !arb->gap_reported && (!open || arb->gap_at != arb->expected))
        arb->counters.gap_filled++;
    if (open && (!arb->gap_open || arb->gap_at != arb->expected)) {
        arb->gap_at = arb->expected;
        /*
         * A gap in front of a held packet has been visible since that packet arrived: the other
         * line had all that time to fill it, unless the lines were still filling in order since
         * (a lone packet far ahead, e.g. a corrupt sequence, must not make every gap look old).
         */
        uint64_t since = arb->now;
        if (arb->head < arb->n_held)
            since = arb->held[arb->head].at > arb->last_delivery ? arb->held[arb->head].at
                                                                 : arb->last_delivery;
        arb->gap_since = since;
        arb->gap_reported = false;
        arb->gap_urgent = false; /* an overflow urged the previous gap, not this one */
    }
    arb->gap_open = open;
}

/* The common case, no gap before and none now, changes nothing: tested before the call. */
static inline void note_progress(struct tp_arb *arb)
{
    if (arb->gap_open || arb->expected < arb->horizon)
        note_gap_change(arb);
}

static bool session_equal(const uint8_t *a, const uint8_t *b)
{
    return memcmp(a, b, TP_ARB_SESSION_LEN) == 0;
}

/*
 * Whether the candidate session is the venue's: the current one ended, or every line that
 * carried packets now sends the candidate, TP_ARB_SESSION_CONFIRM in a row (a failover). One
 * stray packet a line, with the current session still flowing between them, never is.
 */
static bool candidate_confirmed(const struct tp_arb *arb)
{
    if (arb->session_end != 0)
        return true;
    for (unsigned l = TP_LINE_A; l <= TP_LINE_B; l++)
        if (arb->counters.line[l].packets > 0 &&
            arb->line[l].candidate_run < TP_ARB_SESSION_CONFIRM)
            return false;
    return true;
}

/* MoldUDP64: a new session id restarts the stream; the previous session's packets are stale. */
static enum tp_arb_verdict check_session(struct tp_arb *arb, enum tp_line line,
                                         const struct tp_arb_pkt *pkt)
{
    const uint8_t *session = pkt->session;
    struct tp_arb_line_state *ls = &arb->line[line];
    if (!arb->have_session) {
        memcpy(arb->session, session, TP_ARB_SESSION_LEN);
        arb->have_session = true;
    }
    if (session_equal(session, arb->session)) {
        if (pkt->end_of_session)
            arb->session_end = pkt->seq;
        return TP_ARB_DELIVER;
    }
    if (line == TP_LINE_RECOVERY ||
        (arb->have_prev_session && session_equal(session, arb->prev_session)))
        return TP_ARB_STALE;
    /* A new session starts at sequence 1: a packet far from its start is no new session. */
    if (arb->params.max_jump != 0 && pkt->seq > arb->params.max_jump)
        return TP_ARB_CORRUPT;
    if (!arb->have_candidate || !session_equal(session, arb->candidate)) {
        memcpy(arb->candidate, session, TP_ARB_SESSION_LEN);
        arb->have_candidate = true;
        for (unsigned l = 0; l < TP_LINE_COUNT; l++)
            arb->line[l].candidate_run = 0;
    }
    /* The line's count does not include this packet yet: any packet of the line since the last
     * candidate one (of the current session) breaks the run. */
    uint64_t packets = arb->counters.line[line].packets;
    ls->candidate_run =
        ls->candidate_run > 0 && packets == ls->candidate_after ? ls->candidate_run + 1 : 1;
    ls->candidate_after = packets + 1;
    if (!candidate_confirmed(arb))
        return TP_ARB_CORRUPT;
    arb->have_candidate = false;
    memcpy(arb->prev_session, arb->session, TP_ARB_SESSION_LEN);
    memcpy(arb->session, session, TP_ARB_SESSION_LEN);
    arb->have_prev_session = true;
    for (unsigned l = 0; l < TP_LINE_COUNT; l++)
        arb->line[l].candidate_run = 0;
    restart_stream(arb);
    return TP_ARB_RESET;
}

/*
 * MDP3: a line that goes back to MsgSeqNum 1 has restarted. The first line to do so resets the
 * channel; until the other line restarts too (its sequence goes backwards), its packets belong to
 * the old stream.
 */
static enum tp_arb_verdict check_restart(struct tp_arb *arb, enum tp_line line, uint64_t seq)
{
    if (line == TP_LINE_RECOVERY)
        return TP_ARB_DELIVER;
    struct tp_arb_line_state *ls = &arb->line[line];
    enum tp_arb_verdict verdict = TP_ARB_DELIVER;
    if (ls->seen && ls->epoch < arb->epoch) {
        if (seq >= ls->last_seq)
            return TP_ARB_STALE;
        ls->epoch = arb->epoch;
        ls->last_seq = 0;
    } else if (ls->seen && seq == 1 && ls->last_seq > 1 + MDP3_REORDER_TOLERANCE) {
        restart_stream(arb);
        ls->epoch = arb->epoch;
        ls->last_seq = 0;
        verdict = TP_ARB_RESET;
    } else if (!ls->seen) {
        ls->epoch = arb->epoch;
    }
    ls->seen = true;
    if (seq > ls->last_seq)
        ls->last_seq = seq;
    return verdict;
}

/*
 * A lone packet far ahead is more likely corrupt than a real jump. The jump is believed when a
 * second packet lands inside or right after the first one's range.
 */
static bool jump_is_plausible(struct tp_arb *arb, uint64_t seq, uint64_t end)
{
    /* Measured from the highest sequence seen: packets that keep coming in order behind a
     * long gap are not jumps. */
    if (arb->params.max_jump == 0 || seq <= arb->horizon ||
        seq - arb->horizon <= arb->params.max_jump)
        return true;
    if (arb->have_jump && seq >= arb->jump_from && seq <= arb->jump_to) {
        arb->have_jump = false;
        return true;
    }
    arb->have_jump = true;
    arb->jump_from = seq;
    arb->jump_to = end;
    return false;
}

/* Inserts in seq order, unless a held packet already covers this one or there is no room. */
static enum tp_arb_verdict hold(struct tp_arb *arb, enum tp_line line, uint64_t seq, uint32_t count,
                                void *handle)
{
    uint64_t end = seq + count;
    uint32_t pos = arb->n_held;
    while (pos > arb->head && arb->held[pos - 1].seq > seq)
        pos--;
    /* A held packet starting at or before seq that reaches end already covers this one. */
    for (uint32_t i = pos; i > arb->head; i--) {
        const struct tp_arb_held_pkt *h = &arb->held[i - 1];
        if (h->seq + h->count >= end)
            return TP_ARB_DUPLICATE;
        if (h->seq + h->count <= seq)
            break;
    }
    if (arb->n_held - arb->head == arb->params.held_max)
        return TP_ARB_OVERFLOW;
    if (arb->n_held == arb->params.held_max) {
        /* Out of room at the end: slide the live entries back to the start. */
        uint32_t live = arb->n_held - arb->head;
        memmove(&arb->held[0], &arb->held[arb->head], live * sizeof(arb->held[0]));
        pos -= arb->head;
        arb->head = 0;
        arb->n_held = live;
    }
    memmove(&arb->held[pos + 1], &arb->held[pos], (arb->n_held - pos) * sizeof(arb->held[0]));
    arb->held[pos] = (struct tp_arb_held_pkt){
        .seq = seq, .at = arb->now, .count = count, .line = line, .handle = handle};
    arb->n_held++;
    return TP_ARB_HELD;
}

enum tp_arb_verdict tp_arb_offer_slow(struct tp_arb *arb, enum tp_line line,
                                      const struct tp_arb_pkt *pkt, void *handle, uint64_t now_tsc,
                                      uint32_t *skip)
{
    *skip = 0;
    if ((unsigned)line >= TP_LINE_COUNT)
        return TP_ARB_CORRUPT;
    arb->now = now_tsc;
    struct tp_arb_line_counters *c = &arb->counters.line[line];
    enum tp_arb_verdict rule;
    if (arb->params.rules == TP_SEQ_MOLDUDP64) {
        if (pkt->session == NULL) {
            c->corrupt++;
            return TP_ARB_CORRUPT;
        }
        rule = check_session(arb, line, pkt);
    } else {
        rule = check_restart(arb, line, pkt->seq);
    }
    /* A reset is reported before the packet is counted: the caller offers it again. */
    if (rule == TP_ARB_RESET)
        return TP_ARB_RESET;
    c->packets++;
    if (rule == TP_ARB_STALE || rule == TP_ARB_CORRUPT) {
        if (rule == TP_ARB_STALE)
            c->stale++;
        else
            c->corrupt++;
        return rule;
    }

    uint64_t seq = pkt->seq;
    uint64_t end = seq + pkt->count;
    if (end < seq) {
        c->corrupt++;
        return TP_ARB_CORRUPT;
    }
    if (!arb->started) {
        arb->started = true;
        arb->expected = arb->horizon = arb->params.start_seq != 0 ? arb->params.start_seq : seq;
    }

    if (seq <= arb->expected) {
        if (pkt->count == 0)
            return TP_ARB_DELIVER; /* heartbeat at or behind the line: nothing to apply */
        if (end <= arb->expected) {
            c->duplicates++;
            return TP_ARB_DUPLICATE;
        }
        *skip = (uint32_t)(arb->expected - seq);
        arb->expected = end;
        if (end > arb->horizon)
            arb->horizon = end;
        c->delivered++;
        arb->last_delivery = now_tsc;
        /* With packets held the caller drains next, and the drain settles the gap. */
        if (!tp_arb_holding(arb))
            note_progress(arb);
        return TP_ARB_DELIVER;
    }

    /* Ahead of the sequence: a gap. */
    if (!jump_is_plausible(arb, seq, end)) {
        c->corrupt++;
        return TP_ARB_CORRUPT;
    }
    if (end > arb->horizon)
        arb->horizon = end;
    if (pkt->count == 0) {
        /* A heartbeat announcing sequences we have not seen. */
        note_progress(arb);
        return TP_ARB_DELIVER;
    }
    enum tp_arb_verdict verdict = hold(arb, line, seq, pkt->count, handle);
    if (verdict == TP_ARB_DUPLICATE)
        c->duplicates++;
    else if (verdict == TP_ARB_OVERFLOW)
        c->overflow++;
    else
        c->held++;
    note_progress(arb);
    if (verdict == TP_ARB_OVERFLOW)
        arb->gap_urgent = true;
    return verdict;
}

bool tp_arb_next_ready(struct tp_arb *arb, void **handle, uint32_t *skip)
{
    while (arb->head < arb->n_held) {
        struct tp_arb_held_pkt *h = &arb->held[arb->head];
        if (h->seq > arb->expected)
            break;
        arb->head++;
        uint64_t end = h->seq + h->count;
        if (end <= arb->expected) {
            /* Filled meanwhile by another copy. */
            arb->counters.line[h->line].duplicates++;
            release_handle(arb, h->handle);
            continue;
        }
        *handle = h->handle;
        *skip = (uint32_t)(arb->expected - h->seq);
        arb->expected = end;
        arb->counters.line[h->line].delivered++;
        return true;
    }
    if (arb->head == arb->n_held)
        arb->head = arb->n_held = 0;
    note_progress(arb);
    return false;
}

bool tp_arb_current_gap(const struct tp_arb *arb, struct tp_arb_gap *gap)
{
    if (!arb->started || arb->expected >= arb->horizon)
        return false;
    gap->from = arb->expected;
    gap->to = arb->head < arb->n_held ? arb->held[arb->head].seq : arb->horizon;
    return true;
}

bool tp_arb_poll(struct tp_arb *arb, uint64_t now_tsc, struct tp_arb_gap *gap)
{
    arb->now = now_tsc;
    if (!arb->gap_open || arb->gap_reported)
        return false;
    if (!arb->gap_urgent && now_tsc - arb->gap_since < arb->params.gap_wait_tsc)
        return false;
    if (!tp_arb_current_gap(arb, gap))
        return false;
    arb->gap_reported = true;
    arb->counters.gaps++;
    return true;
}

void tp_arb_skip_gap(struct tp_arb *arb)
{
    struct tp_arb_gap gap;
    if (!tp_arb_current_gap(arb, &gap))
        return;
    arb->counters.skipped_msgs += gap.to - gap.from;
    arb->expected = gap.to;
    /* The gap was dealt with: closing it must not count as filled by the other line. */
    arb->gap_reported = true;
    if (arb->head == arb->n_held)
        note_progress(arb);
}

bool tp_arb_reset_loss(const struct tp_arb *arb, struct tp_arb_gap *lost)
{
    if (arb->have_reset_loss)
        *lost = arb->reset_loss;
    return arb->have_reset_loss;
}

uint64_t tp_arb_expected(const struct tp_arb *arb)
{
    return arb->expected;
}

bool tp_arb_session_ended(const struct tp_arb *arb)
{
    return arb->session_end != 0 && arb->expected >= arb->session_end;
}

uint32_t tp_arb_epoch(const struct tp_arb *arb)
{
    return arb->epoch;
}

const struct tp_arb_counters *tp_arb_counters(const struct tp_arb *arb)
{
    return &arb->counters;
}
