/*
 * A/B line arbitration for one channel: merges the packets of line A, line B and the
 * recovery line (retransmissions) into one gap-free sequence.
 *
 * Promises:
 *  - The first copy of a sequence number wins; later copies are counted and dropped.
 *  - Packets beyond a gap are held (up to `held_max`) while the other line gets a short window
 *    (`gap_wait_tsc`, time supplied by the caller as TSC) to fill it. When the window expires,
 *    tp_arb_poll() reports the gap once; the caller then recovers it (retransmission arrives on
 *    TP_LINE_RECOVERY) or gives it up with tp_arb_skip_gap().
 *  - Sequences are message sequences: a packet covers [seq, seq + count). MDP3 packets have
 *    count 1 (packet sequence); MoldUDP64 packets carry their message count (0 = heartbeat). A
 *    packet that overlaps what was applied is delivered with `skip` = messages to pass over.
 *  - Sequence resets follow the venue: MoldUDP64 starts a new session (a different 10-byte session
 *    id) at sequence 1, either after the current session's end-of-session packet (then its first
 *    packet is believed) or by failing over on every line: the new id is believed once each line
 *    that carried the current session has sent TP_ARB_SESSION_CONFIRM packets of it in a row,
 *    near its start (sequence <= max_jump). A packet of another session that breaks these rules
 *    (a stray or forged one, or one line alone) is dropped as corrupt. MDP3
 * restarts at MsgSeqNum 1. The line that lags behind a reset keeps sending the old stream for a
 * while: those packets are dropped as stale, not taken as gaps. A gap open at a reset cannot be
 * filled any more: it is abandoned with the packets held beyond it (tp_arb_reset_loss).
 *  - A lone packet whose sequence jumps more than `max_jump` beyond the highest sequence seen is
 *    taken as corrupt and dropped; a second packet that continues the jump confirms it.
 *  - No allocation after init, no locks, single thread (the data lcore that owns the channel).
 *    Held packets are opaque handles (mbufs in the daemon): the arbiter never reads them and hands
 *    every one back, either through tp_arb_next_ready() or through the release callback.
 */
#ifndef TP_LINES_ARBITER_H
#define TP_LINES_ARBITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Where a packet came from. */
enum tp_line {
    TP_LINE_A = 0,
    TP_LINE_B = 1,
    TP_LINE_RECOVERY = 2, /* retransmitted (MoldUDP64 re-request replies) */
    TP_LINE_COUNT = 3,
};

/* Which venue's sequencing rules apply. */
enum tp_seq_rules {
    TP_SEQ_MDP3,      /* packet MsgSeqNum, reset = restart at 1 */
    TP_SEQ_MOLDUDP64, /* message sequence, reset = new session starting at 1 */
};

#define TP_ARB_SESSION_LEN     10 /* MoldUDP64 session id bytes */
#define TP_ARB_SESSION_CONFIRM 2  /* packets in a row a line sends of a new session */
#define TP_ARB_HELD_LIMIT      4096

struct tp_arb_params {
    enum tp_seq_rules rules;
    uint32_t held_max;     /* packets held while a gap is open: 1..TP_ARB_HELD_LIMIT */
    uint64_t gap_wait_tsc; /* how long a gap waits for the other line before it is reported */
    uint64_t start_seq;    /* first expected sequence; 0 = adopt the first packet's */
    uint64_t max_jump;     /* larger lone forward jumps are dropped as corrupt; 0 = no limit */
    /* Called for every held handle the arbiter drops (duplicate, reset). May be NULL. */
    void (*release)(void *ctx, void *handle);
    void *release_ctx;
};

/* What the caller read from the packet header. */
struct tp_arb_pkt {
    uint64_t seq;           /* first message sequence in the packet */
    uint32_t count;         /* messages in the packet (MDP3: 1) */
    const uint8_t *session; /* MoldUDP64: TP_ARB_SESSION_LEN bytes; MDP3: NULL */
    bool end_of_session;    /* MoldUDP64 end-of-session packet (count 0, seq: the next one) */
};

enum tp_arb_verdict {
    TP_ARB_DELIVER,   /* apply now (after passing over `skip` messages), then drain */
    TP_ARB_RESET,     /* sequence reset: reset the channel's state, then apply as DELIVER */
    TP_ARB_HELD,      /* the arbiter keeps the handle; it comes back from tp_arb_next_ready */
    TP_ARB_DUPLICATE, /* already applied or already held: drop */
    TP_ARB_STALE,     /* old session / old stream from a line that lags a reset: drop */
    TP_ARB_OVERFLOW,  /* beyond a gap with the held buffer full: drop (the gap will cover it) */
    TP_ARB_CORRUPT,   /* implausible sequence jump: drop */
};

/* Per-line counters, written only by the owning lcore. */
struct tp_arb_line_counters {
    uint64_t packets;    /* offered */
    uint64_t delivered;  /* first copies applied (directly or after being held) */
    uint64_t duplicates; /* copies dropped */
    uint64_t held;       /* packets that waited behind a gap */
    uint64_t stale;      /* dropped: old session / stream */
    uint64_t overflow;   /* dropped: held buffer full */
    uint64_t corrupt;    /* dropped: implausible jump */
};

/* Channel counters: one cache-line-aligned block so readers never share a line with hot state. */
struct tp_arb_counters {
    struct tp_arb_line_counters line[TP_LINE_COUNT];
    uint64_t gaps;         /* gaps reported after their wait window */
    uint64_t gap_filled;   /* gaps closed by the other line within the window */
    uint64_t skipped_msgs; /* messages given up (tp_arb_skip_gap) or abandoned by a reset */
    uint64_t resets;       /* sequence resets / new sessions */
} __attribute__((aligned(64)));

/* A gap: messages [from, to) are missing. */
struct tp_arb_gap {
    uint64_t from;
    uint64_t to;
};

/* ---- the arbiter's state: laid out here for the inline fast path below, not for callers ---- */

struct tp_arb_held_pkt {
    uint64_t seq;
    uint64_t at; /* TSC of arrival: the gap before it has been visible since then */
    uint32_t count;
    uint32_t line;
    void *handle;
};

struct tp_arb_line_state {
    uint64_t last_seq; /* highest sequence seen on the line in its current stream */
    uint32_t epoch;    /* streams the line has started */
    bool seen;
    /* MoldUDP64: packets in a row of the candidate session, and the line's packet count after
     * the last of them (another packet since breaks the run: no store on the fast path). */
    uint32_t candidate_run;
    uint64_t candidate_after;
};

struct tp_arb {
    struct tp_arb_counters counters; /* first: its own cache lines */
    struct tp_arb_params params;
    uint64_t expected;
    uint64_t horizon;
    uint64_t now;
    uint64_t gap_at;        /* `expected` when the current gap window opened */
    uint64_t gap_since;     /* TSC when it opened */
    uint64_t last_delivery; /* TSC of the latest packet a line delivered in sequence */
    uint64_t session_end;   /* MoldUDP64: the current session's end (its next seq); 0: none */
    uint64_t jump_from;     /* an unconfirmed jump: [jump_from, jump_to] */
    uint64_t jump_to;
    uint32_t epoch;
    uint32_t head; /* held[head..n_held) are the held packets, sorted by seq */
    uint32_t n_held;
    bool started;
    bool gap_open;
    bool gap_reported;
    bool gap_urgent; /* held buffer overflowed: report without waiting */
    bool have_jump;
    bool have_session;
    bool have_prev_session;
    bool have_candidate;
    bool have_reset_loss;
    struct tp_arb_gap reset_loss; /* what the latest reset abandoned (have_reset_loss) */
    uint8_t session[TP_ARB_SESSION_LEN];
    uint8_t candidate[TP_ARB_SESSION_LEN]; /* a new session id not believed yet */
    uint8_t prev_session[TP_ARB_SESSION_LEN];
    struct tp_arb_line_state line[TP_LINE_COUNT];
    struct tp_arb_held_pkt held[];
};

size_t tp_arb_memsize(const struct tp_arb_params *params);
/* Returns 0 or -EINVAL. `mem` holds tp_arb_memsize() bytes, 64-byte aligned. */
int tp_arb_init(void *mem, const struct tp_arb_params *params);

/* tp_arb_offer for every packet but the common one (see there). */
enum tp_arb_verdict tp_arb_offer_slow(struct tp_arb *arb, enum tp_line line,
                                      const struct tp_arb_pkt *pkt, void *handle, uint64_t now_tsc,
                                      uint32_t *skip);

/* True while packets wait behind a gap: only then can tp_arb_next_ready() return one. */
static inline bool tp_arb_holding(const struct tp_arb *arb)
{
    return arb->head != arb->n_held;
}

/*
 * Whether tp_arb_offer delivers this packet on its inline path: the next one in sequence
 * ([seq, end), end > seq) on line A or B of the current stream, with no gap open and nothing
 * beyond it seen. `rules`: the arbiter's (a constant where the caller knows it). No stores: a
 * caller may test this, decline the packet for its own reasons, and offer it later.
 */
static inline __attribute__((always_inline)) bool
tp_arb_in_order(const struct tp_arb *arb, enum tp_seq_rules rules, enum tp_line line, uint64_t seq,
                uint64_t end, const uint8_t *session)
{
    /* expected == horizon: nothing beyond it was seen (no gap, nothing left to hold the packet
     * behind); seq > 1: no MDP3 restart; end > seq: messages, and no overflow. */
    if (!(seq == arb->expected && arb->expected == arb->horizon && !arb->gap_open && end > seq &&
          seq > 1 && line <= TP_LINE_B))
        return false;
    if (rules == TP_SEQ_MOLDUDP64)
        return session != NULL && memcmp(session, arb->session, TP_ARB_SESSION_LEN) == 0;
    const struct tp_arb_line_state *ls = &arb->line[line];
    return ls->seen && ls->epoch == arb->epoch;
}

/* Delivers a packet tp_arb_in_order accepted (with the same arguments), as tp_arb_offer does. */
static inline __attribute__((always_inline)) void
tp_arb_deliver_in_order(struct tp_arb *arb, enum tp_seq_rules rules, enum tp_line line,
                        uint64_t seq, uint64_t end, uint64_t now_tsc)
{
    if (rules == TP_SEQ_MDP3 && seq > arb->line[line].last_seq)
        arb->line[line].last_seq = seq;
    arb->now = now_tsc;
    arb->last_delivery = now_tsc;
    arb->expected = arb->horizon = end;
    arb->counters.line[line].packets++;
    arb->counters.line[line].delivered++;
}

/*
 * Offers one packet received on `line` at `now_tsc`. For TP_ARB_DELIVER and TP_ARB_RESET the
 * caller applies the packet's messages after the first *skip, then calls tp_arb_next_ready()
 * until it returns false (nothing to do unless tp_arb_holding()). For TP_ARB_HELD the arbiter
 * now owns `handle`.
 *
 * Inline: the common packet (tp_arb_in_order) is delivered here with exactly the slow path's
 * effects. Forced inline: gcc kept it a function of its own, and the call spilled the caller's
 * registers.
 */
static inline __attribute__((always_inline)) enum tp_arb_verdict
tp_arb_offer(struct tp_arb *arb, enum tp_line line, const struct tp_arb_pkt *pkt, void *handle,
             uint64_t now_tsc, uint32_t *skip)
{
    /* Read once: the stores below could alias *pkt as far as the compiler knows. */
    uint64_t seq = pkt->seq, end = seq + pkt->count;
    enum tp_seq_rules rules = arb->params.rules;
    if (__builtin_expect(!tp_arb_in_order(arb, rules, line, seq, end, pkt->session), 0))
        return tp_arb_offer_slow(arb, line, pkt, handle, now_tsc, skip);
    *skip = 0;
    tp_arb_deliver_in_order(arb, rules, line, seq, end, now_tsc);
    return TP_ARB_DELIVER;
}

/* Pops the held packet that is next in sequence, if any (ownership returns to the caller). */
bool tp_arb_next_ready(struct tp_arb *arb, void **handle, uint32_t *skip);

/* Reports (once) a gap whose wait window expired by `now_tsc`. Returns true and fills *gap. */
bool tp_arb_poll(struct tp_arb *arb, uint64_t now_tsc, struct tp_arb_gap *gap);

/* The gap currently open, whether or not its window expired. Returns false if none. */
bool tp_arb_current_gap(const struct tp_arb *arb, struct tp_arb_gap *gap);

/* Gives up the current gap: the next sequence becomes the gap's end. Then drain next_ready. */
void tp_arb_skip_gap(struct tp_arb *arb);

/*
 * What the latest reset abandoned: the gap open when it came and the packets held beyond it,
 * dropped unapplied, as messages [from, to) of the old stream (counted in skipped_msgs). False
 * when nothing was missing at the latest reset, or there was none. Read it on TP_ARB_RESET.
 */
bool tp_arb_reset_loss(const struct tp_arb *arb, struct tp_arb_gap *lost);

/* The next sequence the channel needs (0 before the first packet when start_seq is 0). */
uint64_t tp_arb_expected(const struct tp_arb *arb);

/* MoldUDP64: the current session's end-of-session packet arrived and nothing before it is
 * missing (silence is normal then). */
bool tp_arb_session_ended(const struct tp_arb *arb);

/* Times the arbiter has reset (sessions / stream restarts seen). */
uint32_t tp_arb_epoch(const struct tp_arb *arb);

const struct tp_arb_counters *tp_arb_counters(const struct tp_arb *arb);

#endif
