/*
 * Tests for dataplane/lines/arbiter: first copy wins, gaps wait for the other line, reported gaps
 * are skipped or filled by retransmission, venue sequence resets, overflow and corrupt jumps.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "arbiter.h"

#define WAIT 100 /* gap window in fake TSC ticks */

/* Handles are small integers cast to pointers; released ones are recorded. */
struct released {
    int n;
    uintptr_t ids[256];
};

static void record_release(void *ctx, void *handle)
{
    struct released *r = ctx;
    if (r->n < 256)
        r->ids[r->n++] = (uintptr_t)handle;
}

struct fixture {
    struct tp_arb *arb;
    struct released released;
};

static struct tp_arb *make_arb(struct fixture *f, enum tp_seq_rules rules, uint32_t held_max,
                               uint64_t start_seq, uint64_t max_jump)
{
    struct tp_arb_params p = {
        .rules = rules,
        .held_max = held_max,
        .gap_wait_tsc = WAIT,
        .start_seq = start_seq,
        .max_jump = max_jump,
        .release = record_release,
        .release_ctx = &f->released,
    };
    void *mem = aligned_alloc(64, tp_arb_memsize(&p));
    assert_non_null(mem);
    assert_int_equal(tp_arb_init(mem, &p), 0);
    f->arb = mem;
    f->released.n = 0;
    return f->arb;
}

static enum tp_arb_verdict offer_mdp3(struct tp_arb *arb, enum tp_line line, uint64_t seq,
                                      uint64_t now)
{
    struct tp_arb_pkt pkt = {.seq = seq, .count = 1};
    uint32_t skip = 99;
    enum tp_arb_verdict v = tp_arb_offer(arb, line, &pkt, (void *)(uintptr_t)seq, now, &skip);
    if (v == TP_ARB_DELIVER)
        assert_int_equal(skip, 0);
    return v;
}

/* Drains ready packets into out[], returns how many. */
static int drain(struct tp_arb *arb, uintptr_t *out, int max)
{
    int n = 0;
    void *h;
    uint32_t skip;
    while (tp_arb_next_ready(arb, &h, &skip)) {
        assert_true(n < max);
        out[n++] = (uintptr_t)h;
    }
    return n;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    free(f->arb);
    free(f);
    return 0;
}

static int setup(void **state)
{
    *state = calloc(1, sizeof(struct fixture));
    return *state == NULL;
}

static void test_rejects_bad_params(void **state)
{
    (void)state;
    struct tp_arb_params p = {.rules = TP_SEQ_MDP3, .held_max = 0};
    char mem[4096] __attribute__((aligned(64)));
    assert_int_equal(tp_arb_init(mem, &p), -EINVAL);
    p.held_max = TP_ARB_HELD_LIMIT + 1;
    assert_int_equal(tp_arb_init(mem, &p), -EINVAL);
    p.held_max = 4;
    p.rules = (enum tp_seq_rules)7;
    assert_int_equal(tp_arb_init(mem, &p), -EINVAL);
    p.rules = TP_SEQ_MDP3;
    assert_int_equal(tp_arb_init(mem, &p), 0);
}

static void test_first_copy_wins(void **state)
{
    struct fixture *f = *state;
    struct tp_arb *arb = make_arb(f, TP_SEQ_MDP3, 16, 1, 0);
    for (uint64_t s = 1; s <= 5; s++) {
        assert_int_equal(offer_mdp3(arb, TP_LINE_A, s, s), TP_ARB_DELIVER);
        assert_int_equal(offer_mdp3(arb, TP_LINE_B, s, s), TP_ARB_DUPLICATE);
    }
    /* B ahead of A for a while: B's copies win, A's are the duplicates. */
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 6, 6), TP_ARB_DELIVER);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 6, 6), TP_ARB_DUPLICATE);
    const struct tp_arb_counters *c = tp_arb_counters(arb);
    assert_int_equal(c->line[TP_LINE_A].delivered, 5);
    assert_int_equal(c->line[TP_LINE_B].delivered, 1);
    assert_int_equal(c->line[TP_LINE_A].duplicates, 1);
    assert_int_equal(c->line[TP_LINE_B].duplicates, 5);
    assert_int_equal(c->line[TP_LINE_A].packets, 6);
    assert_int_equal(tp_arb_expected(arb), 7);
    struct tp_arb_gap gap;
    assert_false(tp_arb_current_gap(arb, &gap));
    assert_false(tp_arb_poll(arb, 10000, &gap));
}

static void test_gap_filled_by_other_line(void **state)
{
    struct fixture *f = *state;
    struct tp_arb *arb = make_arb(f, TP_SEQ_MDP3, 16, 1, 0);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 1, 0), TP_ARB_DELIVER);
    /* A lost 2 and 3. */
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 4, 10), TP_ARB_HELD);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 5, 11), TP_ARB_HELD);
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 5, 12), TP_ARB_DUPLICATE);
    struct tp_arb_gap gap;
    assert_true(tp_arb_current_gap(arb, &gap));
    assert_int_equal(gap.from, 2);
    assert_int_equal(gap.to, 4);
    assert_false(tp_arb_poll(arb, 10 + WAIT - 1, &gap)); /* still inside the window */
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 2, 50), TP_ARB_DELIVER);
    uintptr_t out[8];
    assert_int_equal(drain(arb, out, 8), 0); /* 3 still missing */
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 3, 60), TP_ARB_DELIVER);
    assert_int_equal(drain(arb, out, 8), 2);
    assert_int_equal(out[0], 4);
    assert_int_equal(out[1], 5);
    assert_int_equal(tp_arb_expected(arb), 6);
    assert_false(tp_arb_poll(arb, 100000, &gap));
    const struct tp_arb_counters *c = tp_arb_counters(arb);
    assert_int_equal(c->gaps, 0);
    assert_int_equal(c->gap_filled, 2); /* [2,4) then [3,4) each closed within their window */
    assert_int_equal(c->line[TP_LINE_A].held, 2);
    assert_int_equal(c->line[TP_LINE_A].delivered, 3);
    assert_int_equal(c->line[TP_LINE_B].delivered, 2);
    assert_int_equal(f->released.n, 0);
}

static void test_gap_expires_and_is_skipped(void **state)
{
    struct fixture *f = *state;
    struct tp_arb *arb = make_arb(f, TP_SEQ_MDP3, 16, 1, 0);
    offer_mdp3(arb, TP_LINE_A, 1, 0);
    offer_mdp3(arb, TP_LINE_B, 1, 0);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 3, 1000), TP_ARB_HELD);
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 3, 1001), TP_ARB_DUPLICATE);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 6, 1002), TP_ARB_HELD);
    struct tp_arb_gap gap;
    assert_false(tp_arb_poll(arb, 1000 + WAIT - 1, &gap));
    assert_true(tp_arb_poll(arb, 1000 + WAIT, &gap));
    assert_int_equal(gap.from, 2);
    assert_int_equal(gap.to, 3);
    /* Reported once only. */
    assert_false(tp_arb_poll(arb, 5000, &gap));
    tp_arb_skip_gap(arb);
    uintptr_t out[8];
    assert_int_equal(drain(arb, out, 8), 1);
    assert_int_equal(out[0], 3);
    /* The next gap [4,6) has been visible since 6 arrived (at 1002): the other line had that
     * long already, so it is reported at once, not after a new window. */
    assert_true(tp_arb_current_gap(arb, &gap));
    assert_int_equal(gap.from, 4);
    assert_int_equal(gap.to, 6);
    assert_true(tp_arb_poll(arb, 5000, &gap));
    assert_int_equal(gap.from, 4);
    tp_arb_skip_gap(arb);
    assert_int_equal(drain(arb, out, 8), 1);
    assert_int_equal(out[0], 6);
    assert_int_equal(tp_arb_expected(arb), 7);
    const struct tp_arb_counters *c = tp_arb_counters(arb);
    assert_int_equal(c->gaps, 2);
    assert_int_equal(c->gap_filled, 0);
    assert_int_equal(c->skipped_msgs, 3);
    /* A late copy of a skipped packet is behind the line now. */
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 2, 6000), TP_ARB_DUPLICATE);
}

static void test_start_seq_and_learning(void **state)
{
    struct fixture *f = *state;
    struct tp_arb *arb = make_arb(f, TP_SEQ_MDP3, 16, 0, 0);
    assert_int_equal(tp_arb_expected(arb), 0);
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 1000, 0), TP_ARB_DELIVER);
    assert_int_equal(tp_arb_expected(arb), 1001);
    free(arb);

    arb = make_arb(f, TP_SEQ_MDP3, 16, 1, 0);
    /* Expecting 1: packet 2 first (reordered at start) waits. */
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 2, 0), TP_ARB_HELD);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 1, 1), TP_ARB_DELIVER);
    uintptr_t out[4];
    assert_int_equal(drain(arb, out, 4), 1);
    assert_int_equal(out[0], 2);
    assert_int_equal(tp_arb_counters(arb)->resets, 0);
}

static enum tp_arb_verdict offer_mold(struct tp_arb *arb, enum tp_line line, const char *session,
                                      uint64_t seq, uint32_t count, uint64_t now, uint32_t *skip)
{
    struct tp_arb_pkt pkt = {.seq = seq, .count = count, .session = (const uint8_t *)session};
    return tp_arb_offer(arb, line, &pkt, (void *)(uintptr_t)seq, now, skip);
}

static void test_mold_ranges_and_retransmission(void **state)
{
    struct fixture *f = *state;
    struct tp_arb *arb = make_arb(f, TP_SEQ_MOLDUDP64, 16, 1, 0);
    uint32_t skip;
    const char *s = "SESSION001";
    assert_int_equal(offer_mold(arb, TP_LINE_A, s, 1, 3, 0, &skip), TP_ARB_DELIVER); /* 1..3 */
    assert_int_equal(skip, 0);
    /* B's packet boundaries differ: 2..5 overlaps, deliver the new part only. */
    assert_int_equal(offer_mold(arb, TP_LINE_B, s, 2, 4, 1, &skip), TP_ARB_DELIVER);
    assert_int_equal(skip, 2);
    assert_int_equal(tp_arb_expected(arb), 6);
    /* Heartbeat at the line: nothing. */
    assert_int_equal(offer_mold(arb, TP_LINE_A, s, 6, 0, 2, &skip), TP_ARB_DELIVER);
    struct tp_arb_gap gap;
    assert_false(tp_arb_current_gap(arb, &gap));
    /* Heartbeat announcing 6..9 were sent: a gap with nothing held. */
    assert_int_equal(offer_mold(arb, TP_LINE_A, s, 10, 0, 3, &skip), TP_ARB_DELIVER);
    assert_true(tp_arb_current_gap(arb, &gap));
    assert_int_equal(gap.from, 6);
    assert_int_equal(gap.to, 10);
    assert_int_equal(offer_mold(arb, TP_LINE_A, s, 10, 2, 4, &skip), TP_ARB_HELD); /* 10..11 */
    assert_true(tp_arb_poll(arb, 3 + WAIT, &gap));
    assert_int_equal(gap.from, 6);
    assert_int_equal(gap.to, 10);
    /* Retransmission answers with its own boundaries: 6..7, then 8..11 (overlaps the held). */
    assert_int_equal(offer_mold(arb, TP_LINE_RECOVERY, s, 6, 2, 200, &skip), TP_ARB_DELIVER);
    uintptr_t out[4];
    assert_int_equal(drain(arb, out, 4), 0);
    assert_int_equal(offer_mold(arb, TP_LINE_RECOVERY, s, 8, 4, 201, &skip), TP_ARB_DELIVER);
    assert_int_equal(skip, 0);
    assert_int_equal(tp_arb_expected(arb), 12);
    /* The held 10..11 is wholly covered now: released as a duplicate, not delivered. */
    assert_int_equal(drain(arb, out, 4), 0);
    assert_int_equal(f->released.n, 1);
    assert_int_equal(f->released.ids[0], 10);
    const struct tp_arb_counters *c = tp_arb_counters(arb);
    assert_int_equal(c->line[TP_LINE_RECOVERY].delivered, 2);
    assert_int_equal(c->line[TP_LINE_A].duplicates, 1);
    assert_int_equal(c->gaps, 1);
    /* Retransmission from another session is stale. */
    assert_int_equal(offer_mold(arb, TP_LINE_RECOVERY, "OTHERSESS1", 12, 1, 300, &skip),
                     TP_ARB_STALE);
    assert_int_equal(tp_arb_epoch(arb), 0);
}

static void test_mold_partial_hold_overlap(void **state)
{
    struct fixture *f = *state;
    struct tp_arb *arb = make_arb(f, TP_SEQ_MOLDUDP64, 16, 1, 0);
    uint32_t skip;
    const char *s = "SESSION001";
    offer_mold(arb, TP_LINE_A, s, 1, 1, 0, &skip);
    assert_int_equal(offer_mold(arb, TP_LINE_A, s, 5, 4, 1, &skip), TP_ARB_HELD); /* 5..8 */
    assert_int_equal(offer_mold(arb, TP_LINE_B, s, 6, 2, 1, &skip), TP_ARB_DUPLICATE);
    assert_int_equal(offer_mold(arb, TP_LINE_B, s, 3, 4, 1, &skip), TP_ARB_HELD); /* 3..6 */
    assert_int_equal(offer_mold(arb, TP_LINE_B, s, 2, 1, 2, &skip), TP_ARB_DELIVER);
    void *h;
    assert_true(tp_arb_next_ready(arb, &h, &skip));
    assert_int_equal((uintptr_t)h, 3);
    assert_int_equal(skip, 0);
    assert_true(tp_arb_next_ready(arb, &h, &skip));
    assert_int_equal((uintptr_t)h, 5);
    assert_int_equal(skip, 2); /* 5 and 6 came with 3..6 */
    assert_false(tp_arb_next_ready(arb, &h, &skip));
    assert_int_equal(tp_arb_expected(arb), 9);
}

/* The current session's end-of-session packet: count 0, the sequence that would come next. */
static enum tp_arb_verdict offer_mold_end(struct tp_arb *arb, enum tp_line line,
                                          const char *session, uint64_t seq, uint64_t now)
{
    uint32_t skip;
    struct tp_arb_pkt pkt = {
        .seq = seq, .count = 0, .session = (const uint8_t *)session, .end_of_session = true};
    return tp_arb_offer(arb, line, &pkt, NULL, now, &skip);
}

/* A failover: every line moves to the new session, TP_ARB_SESSION_CONFIRM packets in a row. */
static void test_mold_session_change(void **state)
{
    struct fixture *f = *state;
    struct tp_arb *arb = make_arb(f, TP_SEQ_MOLDUDP64, 16, 1, 0);
    uint32_t skip;
    const char *s1 = "SESSION001", *s2 = "SESSION002";
    offer_mold(arb, TP_LINE_A, s1, 1, 10, 0, &skip);
    offer_mold(arb, TP_LINE_B, s1, 1, 10, 0, &skip);
    assert_int_equal(offer_mold(arb, TP_LINE_A, s1, 20, 1, 0, &skip), TP_ARB_HELD);
    /* Line A moves to the new session: not believed while line B has not moved too. */
    assert_int_equal(offer_mold(arb, TP_LINE_A, s2, 1, 2, 1, &skip), TP_ARB_CORRUPT);
    assert_int_equal(offer_mold(arb, TP_LINE_A, s2, 3, 2, 1, &skip), TP_ARB_CORRUPT);
    assert_int_equal(offer_mold(arb, TP_LINE_B, s2, 1, 2, 1, &skip), TP_ARB_CORRUPT);
    assert_int_equal(f->released.n, 0);
    /* B's second packet of it in a row: both lines moved, reset; the held packet is handed
     * back. */
    assert_int_equal(offer_mold(arb, TP_LINE_B, s2, 3, 2, 1, &skip), TP_ARB_RESET);
    assert_int_equal(f->released.n, 1);
    assert_int_equal(f->released.ids[0], 20);
    assert_int_equal(tp_arb_epoch(arb), 1);
    /* The gap 11..19 and the held packet 20 are abandoned: reported, counted as skipped. */
    struct tp_arb_gap lost;
    assert_true(tp_arb_reset_loss(arb, &lost));
    assert_int_equal(lost.from, 11);
    assert_int_equal(lost.to, 21);
    assert_int_equal(tp_arb_counters(arb)->skipped_msgs, 10);
    assert_int_equal(tp_arb_expected(arb), 1);
    /* Offered again, it is a packet of the new stream, beyond the ones dropped meanwhile. */
    assert_int_equal(offer_mold(arb, TP_LINE_B, s2, 3, 2, 1, &skip), TP_ARB_HELD);
    assert_int_equal(offer_mold(arb, TP_LINE_A, s2, 1, 2, 2, &skip), TP_ARB_DELIVER);
    void *h;
    assert_true(tp_arb_next_ready(arb, &h, &skip));
    assert_false(tp_arb_next_ready(arb, &h, &skip));
    /* An old-session packet after the move: stale, not a gap or a reset. */
    assert_int_equal(offer_mold(arb, TP_LINE_B, s1, 11, 5, 2, &skip), TP_ARB_STALE);
    assert_int_equal(offer_mold(arb, TP_LINE_B, s2, 5, 1, 3, &skip), TP_ARB_DELIVER);
    struct tp_arb_gap gap;
    assert_false(tp_arb_current_gap(arb, &gap));
    const struct tp_arb_counters *c = tp_arb_counters(arb);
    assert_int_equal(c->resets, 1);
    assert_int_equal(c->line[TP_LINE_B].stale, 1);
    /* A corrupt session id alone changes nothing. */
    assert_int_equal(offer_mold(arb, TP_LINE_B, "SESSIOX002", 6, 1, 4, &skip), TP_ARB_CORRUPT);
    assert_int_equal(offer_mold(arb, TP_LINE_B, s2, 6, 1, 4, &skip), TP_ARB_DELIVER);
    assert_int_equal(tp_arb_epoch(arb), 1);
    /* SESSION002 ends; the next one's first packet is believed at once, even with its first
     * packets lost: reset, then a gap from 1. */
    assert_false(tp_arb_session_ended(arb));
    assert_int_equal(offer_mold_end(arb, TP_LINE_A, s2, 7, 4), TP_ARB_DELIVER);
    assert_true(tp_arb_session_ended(arb));
    assert_int_equal(offer_mold(arb, TP_LINE_A, "SESSION003", 6, 1, 4, &skip), TP_ARB_RESET);
    assert_false(tp_arb_session_ended(arb));
    /* SESSION002 ended with nothing missing: no loss, no more skipped. */
    assert_false(tp_arb_reset_loss(arb, &lost));
    assert_int_equal(tp_arb_counters(arb)->skipped_msgs, 10);
    assert_int_equal(offer_mold(arb, TP_LINE_A, "SESSION003", 6, 1, 4, &skip), TP_ARB_HELD);
    assert_true(tp_arb_current_gap(arb, &gap));
    assert_int_equal(gap.from, 1);
    assert_int_equal(gap.to, 6);
    /* Missing session id on a MoldUDP64 channel is refused. */
    struct tp_arb_pkt bad = {.seq = 1, .count = 1, .session = NULL};
    assert_int_equal(tp_arb_offer(arb, TP_LINE_A, &bad, NULL, 5, &skip), TP_ARB_CORRUPT);
}

/*
 * Forged or stray packets of another session, one on each line (valid as far as framing goes),
 * while the current session goes on: never a new session, each dropped as corrupt, and the
 * current session's packets keep being applied. Nor one line alone, however many it sends, nor
 * a packet far from a session's start.
 */
static void test_mold_stray_sessions_change_nothing(void **state)
{
    struct fixture *f = *state;
    struct tp_arb *arb = make_arb(f, TP_SEQ_MOLDUDP64, 16, 1, 4096);
    uint32_t skip;
    const char *s1 = "SESSION001", *forged = "FORGED0001";
    assert_int_equal(offer_mold(arb, TP_LINE_A, s1, 1, 2, 0, &skip), TP_ARB_DELIVER);
    assert_int_equal(offer_mold(arb, TP_LINE_B, s1, 1, 2, 0, &skip), TP_ARB_DUPLICATE);
    uint64_t seq = 3;
    for (int round = 0; round < 50; round++) {
        assert_int_equal(offer_mold(arb, TP_LINE_A, forged, 1, 1, 0, &skip), TP_ARB_CORRUPT);
        assert_int_equal(offer_mold(arb, TP_LINE_B, forged, 1, 1, 0, &skip), TP_ARB_CORRUPT);
        assert_int_equal(offer_mold(arb, TP_LINE_A, s1, seq, 2, 0, &skip), TP_ARB_DELIVER);
        assert_int_equal(offer_mold(arb, TP_LINE_B, s1, seq, 2, 0, &skip), TP_ARB_DUPLICATE);
        seq += 2;
    }
    /* Line A alone moves (B keeps the current session): not believed. */
    for (uint64_t k = 1; k < 10; k++)
        assert_int_equal(offer_mold(arb, TP_LINE_A, forged, k, 1, 0, &skip), TP_ARB_CORRUPT);
    assert_int_equal(offer_mold(arb, TP_LINE_B, s1, seq, 1, 0, &skip), TP_ARB_DELIVER);
    seq++;
    assert_int_equal(offer_mold(arb, TP_LINE_B, forged, 10, 1, 0, &skip), TP_ARB_CORRUPT);
    assert_int_equal(offer_mold(arb, TP_LINE_B, s1, seq, 1, 0, &skip), TP_ARB_DELIVER);
    seq++;
    /* Far from a session's start: no new session, whatever the lines do. */
    for (int k = 0; k < 4; k++) {
        assert_int_equal(offer_mold(arb, TP_LINE_A, forged, 100000, 1, 0, &skip), TP_ARB_CORRUPT);
        assert_int_equal(offer_mold(arb, TP_LINE_B, forged, 100000, 1, 0, &skip), TP_ARB_CORRUPT);
    }
    assert_int_equal(tp_arb_epoch(arb), 0);
    assert_int_equal(tp_arb_counters(arb)->resets, 0);
    assert_int_equal(tp_arb_expected(arb), seq);
    assert_int_equal(tp_arb_counters(arb)->line[TP_LINE_A].corrupt, 50 + 9 + 4);
    assert_int_equal(tp_arb_counters(arb)->line[TP_LINE_B].corrupt, 50 + 1 + 4);
    assert_int_equal(f->released.n, 0);
}

static void test_mdp3_sequence_reset(void **state)
{
    struct fixture *f = *state;
    struct tp_arb *arb = make_arb(f, TP_SEQ_MDP3, 16, 1, 0);
    for (uint64_t s = 1; s <= 100; s++) {
        offer_mdp3(arb, TP_LINE_A, s, s);
        offer_mdp3(arb, TP_LINE_B, s, s);
    }
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 102, 101), TP_ARB_HELD);
    /* Line A restarts at 1. */
    struct tp_arb_gap lost;
    assert_false(tp_arb_reset_loss(arb, &lost)); /* no reset yet */
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 1, 102), TP_ARB_RESET);
    assert_int_equal(f->released.n, 1);
    assert_int_equal(f->released.ids[0], 102);
    /* 101 was missing and 102 is dropped unapplied: both lost with the old stream. */
    assert_true(tp_arb_reset_loss(arb, &lost));
    assert_int_equal(lost.from, 101);
    assert_int_equal(lost.to, 103);
    assert_int_equal(tp_arb_counters(arb)->skipped_msgs, 2);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 1, 102), TP_ARB_DELIVER);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 2, 103), TP_ARB_DELIVER);
    /* B lags with the old stream: stale, even though 101 would look like a far jump. */
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 101, 104), TP_ARB_STALE);
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 102, 104), TP_ARB_STALE);
    /* B restarts: its copies are duplicates, then it can win again. */
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 1, 105), TP_ARB_DUPLICATE);
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 2, 105), TP_ARB_DUPLICATE);
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 3, 106), TP_ARB_DELIVER);
    const struct tp_arb_counters *c = tp_arb_counters(arb);
    assert_int_equal(c->resets, 1);
    assert_int_equal(c->line[TP_LINE_B].stale, 2);
    struct tp_arb_gap gap;
    assert_false(tp_arb_current_gap(arb, &gap));
}

static void test_overflow_reports_at_once(void **state)
{
    struct fixture *f = *state;
    struct tp_arb *arb = make_arb(f, TP_SEQ_MDP3, 3, 1, 0);
    offer_mdp3(arb, TP_LINE_A, 1, 0);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 3, 1), TP_ARB_HELD);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 4, 1), TP_ARB_HELD);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 5, 1), TP_ARB_HELD);
    struct tp_arb_gap gap;
    assert_false(tp_arb_poll(arb, 2, &gap));
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 6, 2), TP_ARB_OVERFLOW);
    assert_true(tp_arb_poll(arb, 2, &gap)); /* no waiting once the buffer is full */
    assert_int_equal(gap.from, 2);
    assert_int_equal(gap.to, 3);
    tp_arb_skip_gap(arb);
    uintptr_t out[8];
    assert_int_equal(drain(arb, out, 8), 3);
    /* 6 was dropped: the next gap covers it. */
    assert_true(tp_arb_current_gap(arb, &gap));
    assert_int_equal(gap.from, 6);
    assert_int_equal(gap.to, 7);
    assert_int_equal(tp_arb_counters(arb)->line[TP_LINE_A].overflow, 1);
}

static void test_held_buffer_slides(void **state)
{
    struct fixture *f = *state;
    /*
     * Two gaps per round with a 4-packet buffer: the first drain stops at the second gap, so the
     * buffer fills from the end while its front is empty and must slide back.
     */
    struct tp_arb *arb = make_arb(f, TP_SEQ_MDP3, 4, 1, 0);
    uint64_t now = 0;
    uintptr_t out[8];
    offer_mdp3(arb, TP_LINE_A, 1, now);
    for (uint64_t b = 1; b < 700; b += 7) {
        assert_int_equal(offer_mdp3(arb, TP_LINE_A, b + 5, now), TP_ARB_HELD);
        assert_int_equal(offer_mdp3(arb, TP_LINE_A, b + 2, now), TP_ARB_HELD); /* sorted in */
        assert_int_equal(offer_mdp3(arb, TP_LINE_A, b + 4, now), TP_ARB_HELD);
        assert_int_equal(offer_mdp3(arb, TP_LINE_B, b + 1, now), TP_ARB_DELIVER);
        assert_int_equal(drain(arb, out, 8), 1);
        assert_int_equal(out[0], b + 2);
        assert_int_equal(offer_mdp3(arb, TP_LINE_A, b + 6, now), TP_ARB_HELD);
        assert_int_equal(offer_mdp3(arb, TP_LINE_A, b + 7, now), TP_ARB_HELD); /* slides */
        assert_int_equal(offer_mdp3(arb, TP_LINE_A, b + 8, now), TP_ARB_OVERFLOW);
        assert_int_equal(offer_mdp3(arb, TP_LINE_B, b + 3, now), TP_ARB_DELIVER);
        assert_int_equal(drain(arb, out, 8), 4);
        for (int i = 0; i < 4; i++)
            assert_int_equal(out[i], b + 4 + i);
        now++;
        assert_int_equal(tp_arb_expected(arb), b + 8);
    }
    assert_int_equal(f->released.n, 0);
}

static void test_corrupt_jump(void **state)
{
    struct fixture *f = *state;
    struct tp_arb *arb = make_arb(f, TP_SEQ_MDP3, 16, 1, 1000);
    offer_mdp3(arb, TP_LINE_A, 1, 0);
    /* A lone packet claiming a huge sequence: dropped. */
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 0x7fffffff, 1), TP_ARB_CORRUPT);
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 2, 2), TP_ARB_DELIVER);
    struct tp_arb_gap gap;
    assert_false(tp_arb_current_gap(arb, &gap));
    /* A real jump: the other line confirms it with the same sequence. */
    assert_int_equal(offer_mdp3(arb, TP_LINE_A, 50000, 3), TP_ARB_CORRUPT);
    assert_int_equal(offer_mdp3(arb, TP_LINE_B, 50000, 3), TP_ARB_HELD);
    assert_true(tp_arb_current_gap(arb, &gap));
    assert_int_equal(gap.from, 3);
    assert_int_equal(gap.to, 50000);
    assert_int_equal(tp_arb_counters(arb)->line[TP_LINE_A].corrupt, 2);
}

/* xorshift: a reproducible stream for the randomized test. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)rng_state;
}

/*
 * Two lines each lose 2% independently, duplicate 1% and swap neighbours 2%; some sequences are
 * lost on both. Whatever the interleaving, the output is strictly increasing, contains every
 * sequence one line delivered, and skips exactly the ones both lost.
 */
static void test_random_loss_reorder_duplicates(void **state)
{
    struct fixture *f = *state;
    enum { N = 20000 };
    /* The buffer holds more than a window's worth of packets, as a deployment must. */
    struct tp_arb *arb = make_arb(f, TP_SEQ_MDP3, 256, 1, 1u << 20);
    static uint64_t line_pkts[2][2 * N];
    int line_len[2] = {0, 0};
    static uint8_t on_line[N + 1];
    memset(on_line, 0, sizeof(on_line));
    for (uint64_t s = 1; s <= N; s++) {
        bool both_lost = rnd() % 500 == 0;
        for (int l = 0; l < 2; l++) {
            if (both_lost || rnd() % 50 == 0)
                continue;
            on_line[s] = 1;
            line_pkts[l][line_len[l]++] = s;
            if (rnd() % 100 == 0)
                line_pkts[l][line_len[l]++] = s;
        }
    }
    /* Tail sequence present on both so the last gap is closed by something. */
    for (int l = 0; l < 2; l++) {
        for (int i = 1; i < line_len[l]; i++)
            if (rnd() % 50 == 0) {
                uint64_t t = line_pkts[l][i];
                line_pkts[l][i] = line_pkts[l][i - 1];
                line_pkts[l][i - 1] = t;
            }
        line_pkts[l][line_len[l]++] = N + 1;
    }
    on_line[0] = 0;
    int pos[2] = {0, 0};
    uint64_t now = 0, last = 0, delivered = 0;
    while (pos[0] < line_len[0] || pos[1] < line_len[1]) {
        int l = pos[0] >= line_len[0] ? 1 : pos[1] >= line_len[1] ? 0 : (int)(rnd() & 1);
        /* Keep the lines roughly together, as real A/B feeds are. */
        if (pos[1 - l] < line_len[1 - l] &&
            line_pkts[l][pos[l]] > line_pkts[1 - l][pos[1 - l]] + 20)
            l = 1 - l;
        uint64_t s = line_pkts[l][pos[l]++];
        now += 1;
        enum tp_arb_verdict v = offer_mdp3(arb, l == 0 ? TP_LINE_A : TP_LINE_B, s, now);
        uintptr_t out[128];
        int n = 0;
        if (v == TP_ARB_DELIVER) {
            out[n++] = s;
            n += drain(arb, out + n, 127);
        }
        struct tp_arb_gap gap;
        if (tp_arb_poll(arb, now, &gap)) {
            /* Only sequences both lines lost may be given up. */
            for (uint64_t g = gap.from; g < gap.to; g++)
                assert_int_equal(on_line[g], 0);
            tp_arb_skip_gap(arb);
            n += drain(arb, out + n, 128 - n);
        }
        for (int i = 0; i < n; i++) {
            assert_true(out[i] > last);
            for (uint64_t g = last + 1; g < out[i]; g++)
                assert_int_equal(on_line[g], 0);
            last = out[i];
            delivered++;
        }
    }
    assert_int_equal(last, N + 1);
    uint64_t expected_delivered = 1;
    for (uint64_t s = 1; s <= N; s++)
        expected_delivered += on_line[s];
    assert_int_equal(delivered, expected_delivered);
    const struct tp_arb_counters *c = tp_arb_counters(arb);
    assert_int_equal(c->line[0].delivered + c->line[1].delivered, expected_delivered);
    assert_int_equal(c->skipped_msgs, N - (expected_delivered - 1));
    /* The run did exercise every path: windows filled, gaps given up, copies dropped. */
    assert_true(c->gaps > 10);
    assert_true(c->gap_filled > 100);
    assert_true(c->line[0].duplicates > 1000 && c->line[1].duplicates > 1000);
    assert_true(c->line[0].held > 0 && c->line[1].held > 0);
    assert_int_equal(f->released.n, 0);
}

/* One arbiter offered through tp_arb_offer (inline fast path), one through the slow path. */
struct twin {
    struct tp_arb *fast, *slow;
    size_t size;
};

/* Both give back the same ready packets. */
static void twin_drain(struct twin *t)
{
    void *hf, *hs;
    uint32_t sf, ss;
    while (tp_arb_next_ready(t->fast, &hf, &sf)) {
        assert_true(tp_arb_next_ready(t->slow, &hs, &ss));
        assert_ptr_equal(hf, hs);
        assert_int_equal(sf, ss);
    }
    assert_false(tp_arb_next_ready(t->slow, &hs, &ss));
}

/* Offers the same packet to both; every verdict, skip and byte of state must agree. */
static enum tp_arb_verdict twin_offer(struct twin *t, enum tp_line line, uint64_t seq,
                                      uint32_t count, const uint8_t *session, bool end,
                                      uint64_t now)
{
    struct tp_arb_pkt pkt = {.seq = seq, .count = count, .session = session, .end_of_session = end};
    uint32_t skip_fast = 77, skip_slow = 88;
    enum tp_arb_verdict v =
        tp_arb_offer(t->fast, line, &pkt, (void *)(uintptr_t)seq, now, &skip_fast);
    assert_int_equal(
        tp_arb_offer_slow(t->slow, line, &pkt, (void *)(uintptr_t)seq, now, &skip_slow), v);
    assert_int_equal(skip_fast, skip_slow);
    if (v == TP_ARB_DELIVER || v == TP_ARB_RESET)
        twin_drain(t);
    struct tp_arb_gap gf, gs;
    bool reported = tp_arb_poll(t->fast, now, &gf);
    assert_int_equal(tp_arb_poll(t->slow, now, &gs), reported);
    if (reported) {
        tp_arb_skip_gap(t->fast);
        tp_arb_skip_gap(t->slow);
        twin_drain(t);
    }
    assert_memory_equal(t->fast, t->slow, t->size);
    return v;
}

/*
 * The inline fast path has exactly the slow path's effects: two arbiters, one offered through
 * each, see the same random MoldUDP64 and MDP3 traffic (in order mostly, with losses,
 * duplicates, reordering, heartbeats, retransmissions, new sessions and restarts) and stay
 * byte for byte equal. The run takes the fast path most of the time, and every other verdict.
 */
static void test_fast_path_equals_slow_path(void **state)
{
    (void)state;
    static const uint8_t sessions[3][TP_ARB_SESSION_LEN] = {"SESSION001", "SESSION002",
                                                            "SESSION003"};
    for (int rules = 0; rules < 2; rules++) {
        struct fixture f = {0}; /* one release context: the two states must be equal */
        struct twin t;
        enum tp_seq_rules r = rules ? TP_SEQ_MOLDUDP64 : TP_SEQ_MDP3;
        t.fast = make_arb(&f, r, 8, 1, 64);
        t.slow = make_arb(&f, r, 8, 1, 64);
        struct tp_arb_params p = {.held_max = 8};
        t.size = tp_arb_memsize(&p);
        uint64_t next = 1, now = 0;
        int session = 0;
        uint64_t seen[8] = {0};
        for (int i = 0; i < 40000; i++) {
            uint32_t count = r == TP_SEQ_MDP3 ? 1 : 1 + (uint32_t)(rnd() % 5);
            uint64_t seq = next;
            enum tp_line line = (enum tp_line)(rnd() % 2);
            uint32_t pick = (uint32_t)(rnd() % 100);
            if (pick < 3)
                seq = next + 1 + rnd() % 6; /* ahead: a gap */
            else if (pick < 6)
                seq = next > 3 ? next - 1 - rnd() % 3 : next; /* a late copy */
            else if (pick < 7)
                line = TP_LINE_RECOVERY;
            else if (pick < 8)
                count = 0; /* heartbeat */
            else if (pick < 9)
                line = (enum tp_line)3; /* no such line */
            else if (pick == 9 && rnd() % 20 == 0) {
                /* A restart: MDP3 from MsgSeqNum 1; MoldUDP64 ends the session, then a new one
                 * starts. */
                if (r == TP_SEQ_MOLDUDP64)
                    seen[twin_offer(&t, line, next, 0, sessions[session], true, ++now)]++;
                seq = next = 1;
                session = (session + 1) % 3;
            } else if (pick >= 10 && pick < 13)
                seq = next += 1 + rnd() % 3; /* lost on both lines */
            now += 1 + rnd() % 40;
            enum tp_arb_verdict v = twin_offer(&t, line, seq, count, sessions[session], false, now);
            seen[v]++;
            if (v == TP_ARB_DELIVER && seq + count > next)
                next = seq + count;
            next = tp_arb_expected(t.fast) > next ? tp_arb_expected(t.fast) : next;
        }
        assert_true(seen[TP_ARB_DELIVER] > 25000);
        assert_true(seen[TP_ARB_HELD] > 100 && seen[TP_ARB_DUPLICATE] > 100);
        assert_true(seen[TP_ARB_CORRUPT] > 100 && seen[TP_ARB_RESET] > 2);
        assert_true(tp_arb_counters(t.fast)->gaps > 10);
        free(t.fast);
        free(t.slow);
    }
}

/* A MoldUDP64 packet offered by the randomized test: the handle is its index. */
struct mold_offer {
    uint64_t seq;
    uint32_t count;
};

/*
 * MoldUDP64 packets of any range (1-60 messages, some starting behind the next sequence) on
 * lines A, B and the recovery line, held in buffers of 1-64 packets: whatever the order, what is
 * delivered and drained applies each message once, in sequence (a packet's messages after its
 * skip start exactly where the previous one ended), and the arbiter's next sequence is where
 * the applied messages end.
 */
static void test_random_mold_ranges_apply_in_sequence(void **state)
{
    struct fixture *f = *state;
    static struct mold_offer offers[600];
    uint64_t delivered = 0, drained = 0;
    for (int run = 0; run < 2000; run++) {
        free(f->arb);
        struct tp_arb *arb = make_arb(f, TP_SEQ_MOLDUDP64, 1 + rnd() % 64, 1, 4096);
        uint64_t applied = 1, now = 0;
        for (uintptr_t k = 0; k < 600; k++) {
            now += 1 + rnd() % 5;
            uint64_t seq = 1 + rnd() % 200;
            if (rnd() % 3 == 0)
                seq = (applied > 10 ? applied - rnd() % 10 : applied) + rnd() % 8;
            offers[k] = (struct mold_offer){seq, 1 + rnd() % (rnd() % 4 ? 4 : 60)};
            uint32_t skip;
            struct tp_arb_pkt pkt = {
                .seq = seq, .count = offers[k].count, .session = (const uint8_t *)"SESSION001"};
            enum tp_arb_verdict v = tp_arb_offer(arb, rnd() % 3, &pkt, (void *)k, now, &skip);
            if (v == TP_ARB_DELIVER) {
                assert_int_equal(seq + skip, applied);
                applied = seq + offers[k].count;
                delivered++;
                void *h;
                while (tp_arb_next_ready(arb, &h, &skip)) {
                    const struct mold_offer *o = &offers[(uintptr_t)h];
                    assert_int_equal(o->seq + skip, applied);
                    applied = o->seq + o->count;
                    drained++;
                }
            }
            struct tp_arb_gap gap;
            tp_arb_poll(arb, now, &gap); /* reported only: nothing is skipped */
            assert_int_equal(tp_arb_expected(arb), applied);
        }
    }
    /* Both ways of delivery were taken many times. */
    assert_true(delivered > 100000 && drained > 10000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_path_equals_slow_path),
        cmocka_unit_test(test_rejects_bad_params),
        cmocka_unit_test_setup_teardown(test_first_copy_wins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap_filled_by_other_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap_expires_and_is_skipped, setup, teardown),
        cmocka_unit_test_setup_teardown(test_start_seq_and_learning, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mold_ranges_and_retransmission, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mold_partial_hold_overlap, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mold_session_change, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mold_stray_sessions_change_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mdp3_sequence_reset, setup, teardown),
        cmocka_unit_test_setup_teardown(test_overflow_reports_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_held_buffer_slides, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupt_jump, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_loss_reorder_duplicates, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random_mold_ranges_apply_in_sequence, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
