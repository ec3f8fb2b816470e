/*
 * Tests for the venues' recovery (dataplane/feeds/itch, dataplane/feeds/mdp3): the MoldUDP64
 * re-request state machine (when to ask, what, retry, give up) and the MDP3 recovery bookkeeping
 * (when the snapshot lines are needed, replay of buffered incrementals after a snapshot's
 * LastMsgSeqNumProcessed).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mdp3_packet.h"
#include "mdp3_recovery.h"
#include "mold_recovery.h"

static void test_mold_request_retry_give_up(void **state)
{
    (void)state;
    struct tp_mold_recovery rec;
    struct tp_mold_recovery_params p = {.retry_tsc = 50, .give_up_tsc = 1000, .max_messages = 10};
    tp_mold_recovery_init(&rec, &p);
    uint64_t seq;
    uint16_t count;
    struct tp_arb_gap open = {.from = 100, .to = 125};
    /* Nothing reported yet: no request, even with a gap open (its window is still running). */
    assert_int_equal(tp_mold_recovery_step(&rec, NULL, &open, 0, &seq, &count), TP_MOLD_REC_NONE);
    /* Reported: ask for the first piece. */
    assert_int_equal(tp_mold_recovery_step(&rec, &open, &open, 10, &seq, &count), TP_MOLD_REC_SEND);
    assert_int_equal(seq, 100);
    assert_int_equal(count, 10);
    /* Silence shorter than the retry time: wait. */
    assert_int_equal(tp_mold_recovery_step(&rec, NULL, &open, 59, &seq, &count), TP_MOLD_REC_NONE);
    /* Part of the piece arrived: keep waiting for the rest of it. */
    open.from = 105;
    assert_int_equal(tp_mold_recovery_step(&rec, NULL, &open, 40, &seq, &count), TP_MOLD_REC_NONE);
    /* The piece arrived: the next piece at once. */
    open.from = 110;
    assert_int_equal(tp_mold_recovery_step(&rec, NULL, &open, 45, &seq, &count), TP_MOLD_REC_SEND);
    assert_int_equal(seq, 110);
    assert_int_equal(count, 10);
    /* Silence: ask again after the retry time. */
    assert_int_equal(tp_mold_recovery_step(&rec, NULL, &open, 95, &seq, &count), TP_MOLD_REC_SEND);
    assert_int_equal(seq, 110);
    /* The last piece is shorter than max_messages. */
    open.from = 120;
    assert_int_equal(tp_mold_recovery_step(&rec, NULL, &open, 96, &seq, &count), TP_MOLD_REC_SEND);
    assert_int_equal(count, 5);
    /* Closed: recovered. */
    assert_int_equal(tp_mold_recovery_step(&rec, NULL, NULL, 97, &seq, &count), TP_MOLD_REC_NONE);
    assert_int_equal(rec.counters.recovered, 1);
    assert_int_equal(rec.counters.requests, 4);

    /* A gap the server never fills is given up after give_up_tsc from the first request. */
    struct tp_arb_gap gap = {.from = 500, .to = 501};
    assert_int_equal(tp_mold_recovery_step(&rec, &gap, &gap, 2000, &seq, &count), TP_MOLD_REC_SEND);
    int sends = 0;
    uint64_t t = 2000;
    enum tp_mold_recovery_action a;
    while ((a = tp_mold_recovery_step(&rec, NULL, &gap, ++t, &seq, &count)) != TP_MOLD_REC_GIVE_UP)
        sends += a == TP_MOLD_REC_SEND;
    assert_int_equal(t, 3000);
    assert_int_equal(sends, 19); /* one retry every 50 ticks */
    assert_int_equal(rec.counters.given_up, 1);
}

/* Builds an MDP3 packet with one message of `template_id` whose root block starts with u32 v. */
static size_t mdp3_packet(uint8_t *buf, uint32_t seq, uint16_t template_id, uint32_t v)
{
    memset(buf, 0, 128);
    memcpy(buf, &seq, 4);
    uint8_t *m = buf + TP_MDP3_PACKET_HEADER_LEN;
    uint16_t block = template_id == MKTDATA_SNAPSHOT_FULL_REFRESH52_TEMPLATE_ID
                         ? MKTDATA_SNAPSHOT_FULL_REFRESH52_BLOCK_LENGTH
                     : template_id == MKTDATA_SNAPSHOT_FULL_REFRESH_ORDER_BOOK53_TEMPLATE_ID
                         ? MKTDATA_SNAPSHOT_FULL_REFRESH_ORDER_BOOK53_BLOCK_LENGTH
                         : 11;
    uint16_t size = (uint16_t)(TP_MDP3_MSG_MIN_LEN + block + 3); /* + empty group header */
    memcpy(m, &size, 2);
    uint16_t hdr[4] = {block, template_id, MKTDATA_SCHEMA_ID, MKTDATA_SCHEMA_VERSION};
    memcpy(m + 2, hdr, 8);
    memcpy(m + 10, &v, 4);
    return TP_MDP3_PACKET_HEADER_LEN + size;
}

struct replayed {
    int n;
    uint32_t seqs[16];
};

static void record_replay(void *ctx, const uint8_t *pkt, uint16_t len, uint64_t rx_tsc)
{
    (void)len;
    (void)rx_tsc;
    struct replayed *r = ctx;
    memcpy(&r->seqs[r->n++], pkt, 4);
}

/*
 * A gap that closes while the next one is already open (both between two polls): the first is
 * recovered, and the second waits for its own report and gets its own give-up time instead of
 * the rest of the first's.
 */
/* Retries after 50 ticks, gives up after 1000, up to 100 messages a request. */
static void init_mold(struct tp_mold_recovery *rec)
{
    struct tp_mold_recovery_params p = {.retry_tsc = 50, .give_up_tsc = 1000, .max_messages = 100};
    tp_mold_recovery_init(rec, &p);
}

static void test_mold_next_gap_own_timer(void **state)
{
    (void)state;
    struct tp_mold_recovery rec;
    init_mold(&rec);
    uint64_t seq;
    uint16_t count;
    struct tp_arb_gap first = {.from = 100, .to = 110}, second = {.from = 200, .to = 205};
    assert_int_equal(tp_mold_recovery_step(&rec, &first, &first, 0, &seq, &count),
                     TP_MOLD_REC_SEND);
    /* 900 ticks later the first gap is filled and the second is open, not yet reported. */
    assert_int_equal(tp_mold_recovery_step(&rec, NULL, &second, 900, &seq, &count),
                     TP_MOLD_REC_NONE);
    assert_int_equal(rec.counters.recovered, 1);
    assert_int_equal(rec.counters.requests, 1);
    /* Reported: asked for at once, and still pursued past the first gap's give-up time. */
    assert_int_equal(tp_mold_recovery_step(&rec, &second, &second, 910, &seq, &count),
                     TP_MOLD_REC_SEND);
    assert_int_equal(seq, 200);
    assert_int_equal(count, 5);
    assert_int_equal(tp_mold_recovery_step(&rec, NULL, &second, 1500, &seq, &count),
                     TP_MOLD_REC_SEND); /* a retry, not a give-up */
    assert_int_equal(rec.counters.given_up, 0);
    assert_int_equal(tp_mold_recovery_step(&rec, NULL, &second, 1910, &seq, &count),
                     TP_MOLD_REC_GIVE_UP);
    assert_int_equal(rec.counters.given_up, 1);
    assert_int_equal(rec.counters.recovered, 1);
}

/*
 * A new session ends the gap being recovered: it was lost, not recovered (although no gap is
 * open after the arbiter's reset); a gap that had closed before the
 * lost one is still counted recovered; recovery starts over at the next report.
 */
static void test_mold_session_end(void **state)
{
    (void)state;
    struct tp_mold_recovery rec;
    init_mold(&rec);
    uint64_t seq;
    uint16_t count;
    struct tp_arb_gap gap = {.from = 100, .to = 110}, lost = {.from = 100, .to = 120};
    assert_int_equal(tp_mold_recovery_step(&rec, &gap, &gap, 0, &seq, &count), TP_MOLD_REC_SEND);
    /* The session ends while the gap is open: given up, and nothing is left to recover. */
    assert_true(tp_mold_recovery_session_end(&rec, &lost));
    assert_int_equal(rec.counters.given_up, 1);
    assert_int_equal(rec.counters.recovered, 0);
    assert_int_equal(tp_mold_recovery_step(&rec, NULL, NULL, 10, &seq, &count), TP_MOLD_REC_NONE);
    assert_int_equal(rec.counters.recovered, 0);
    /* No gap open at the end of a session and none being recovered: nothing given up. */
    assert_false(tp_mold_recovery_session_end(&rec, NULL));
    assert_int_equal(rec.counters.given_up, 1);
    /* A gap recovered (closed, not yet seen by a step) before another one the session lost. */
    assert_int_equal(tp_mold_recovery_step(&rec, &gap, &gap, 20, &seq, &count), TP_MOLD_REC_SEND);
    struct tp_arb_gap later = {.from = 300, .to = 301};
    assert_true(tp_mold_recovery_session_end(&rec, &later));
    assert_int_equal(rec.counters.recovered, 1);
    assert_int_equal(rec.counters.given_up, 2);
    /* The next report starts a recovery of its own. */
    assert_int_equal(tp_mold_recovery_step(&rec, &gap, &gap, 30, &seq, &count), TP_MOLD_REC_SEND);
    assert_int_equal(rec.counters.requests, 3);
}

static void test_mdp3_snapshot_and_replay(void **state)
{
    (void)state;
    static uint8_t buffer[4096];
    struct tp_mdp3_recovery rec;
    tp_mdp3_recovery_init(&rec, buffer, sizeof(buffer));
    /* At start the snapshot lines are needed until one whole cycle was seen. */
    assert_true(tp_mdp3_recovery_needed(&rec));
    uint8_t pkt[128];
    struct replayed r = {0};
    for (uint32_t s = 1; s <= 3; s++) {
        size_t len = mdp3_packet(pkt, s, MKTDATA_SNAPSHOT_FULL_REFRESH52_TEMPLATE_ID, 0);
        tp_mdp3_recovery_after_snapshot(&rec, pkt, (uint16_t)len, record_replay, &r);
    }
    assert_true(tp_mdp3_recovery_needed(&rec));
    size_t len = mdp3_packet(pkt, 1, MKTDATA_SNAPSHOT_FULL_REFRESH52_TEMPLATE_ID, 0);
    tp_mdp3_recovery_after_snapshot(&rec, pkt, (uint16_t)len, record_replay, &r);
    assert_false(tp_mdp3_recovery_needed(&rec)); /* the channel looped: cycle seen */
    assert_int_equal(rec.counters.cycles, 1);

    /* Nothing stale: incrementals are not kept. */
    len = mdp3_packet(pkt, 50, 46, 0);
    tp_mdp3_recovery_buffer(&rec, 50, pkt, (uint16_t)len, 0);
    assert_int_equal(rec.counters.buffered, 0);

    /* An instrument goes stale: incrementals 60..64 are kept. */
    tp_mdp3_recovery_on_stale(&rec, 1);
    assert_true(tp_mdp3_recovery_needed(&rec));
    for (uint32_t s = 60; s <= 64; s++) {
        len = mdp3_packet(pkt, s, 46, 0);
        tp_mdp3_recovery_buffer(&rec, s, pkt, (uint16_t)len, 0);
    }
    assert_int_equal(rec.counters.buffered, 5);
    /* A snapshot that reflects everything up to 62: 63 and 64 are replayed, in order. */
    len = mdp3_packet(pkt, 2, MKTDATA_SNAPSHOT_FULL_REFRESH52_TEMPLATE_ID, 62);
    assert_int_equal(tp_mdp3_snapshot_last_seq(pkt, len), 62);
    r.n = 0;
    tp_mdp3_recovery_after_snapshot(&rec, pkt, (uint16_t)len, record_replay, &r);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.seqs[0], 63);
    assert_int_equal(r.seqs[1], 64);
    tp_mdp3_recovery_on_stale(&rec, 0);
    assert_false(tp_mdp3_recovery_needed(&rec));
    assert_int_equal(rec.counters.recovered, 1);
    tp_mdp3_recovery_done(&rec);
    /* An incremental packet has no LastMsgSeqNumProcessed. */
    len = mdp3_packet(pkt, 70, 46, 5);
    assert_int_equal(tp_mdp3_snapshot_last_seq(pkt, len), 0);
    /* A full buffer stops buffering and counts it. */
    tp_mdp3_recovery_on_stale(&rec, 1);
    for (uint32_t s = 100; s < 200; s++) {
        len = mdp3_packet(pkt, s, 46, 0);
        tp_mdp3_recovery_buffer(&rec, s, pkt, (uint16_t)len, 0);
    }
    assert_true(rec.counters.buffer_full > 0);
    assert_true(rec.used <= sizeof(buffer));
}

/*
 * With order-level snapshot lines, an incomplete order view keeps the snapshot lines needed (and
 * the incrementals kept) until it is complete again; an order-level snapshot replays the kept
 * incrementals after its LastMsgSeqNumProcessed without counting a cycle. Without those lines an
 * incomplete order view needs nothing (there is nothing to refill it).
 */
static void test_mdp3_order_views_keep_the_snapshot_lines(void **state)
{
    (void)state;
    static uint8_t buffer[4096];
    struct tp_mdp3_recovery rec;
    uint8_t pkt[128];
    struct replayed r = {0};
    for (int mbo = 0; mbo <= 1; mbo++) {
        tp_mdp3_recovery_init(&rec, buffer, sizeof(buffer));
        rec.mbo_lines = mbo;
        rec.cycle_seen = true;
        assert_false(tp_mdp3_recovery_needed(&rec));
        tp_mdp3_recovery_on_orders(&rec, 1);
        tp_mdp3_recovery_on_orders(&rec, 1);
        assert_int_equal(rec.orders_incomplete, 2);
        assert_int_equal(tp_mdp3_recovery_needed(&rec), mbo);
        for (uint32_t s = 10; s <= 13; s++) {
            size_t len = mdp3_packet(pkt, s, 46, 0);
            tp_mdp3_recovery_buffer(&rec, s, pkt, (uint16_t)len, 0);
        }
        assert_int_equal(rec.counters.buffered, mbo ? 4 : 0);
        tp_mdp3_recovery_on_orders(&rec, 0);
        assert_int_equal(tp_mdp3_recovery_needed(&rec), mbo);
        tp_mdp3_recovery_on_orders(&rec, 0);
        assert_false(tp_mdp3_recovery_needed(&rec));
        tp_mdp3_recovery_on_orders(&rec, 0); /* never below zero */
        assert_int_equal(rec.orders_incomplete, 0);
    }
    /* The order-level snapshot as of 11: 12 and 13 replayed; its sequence is no cycle. */
    size_t len = mdp3_packet(pkt, 1, MKTDATA_SNAPSHOT_FULL_REFRESH_ORDER_BOOK53_TEMPLATE_ID, 11);
    assert_int_equal(tp_mdp3_snapshot_last_seq(pkt, len), 11);
    tp_mdp3_recovery_replay(&rec, pkt, (uint16_t)len, record_replay, &r);
    assert_int_equal(r.n, 2);
    assert_int_equal(r.seqs[0], 12);
    assert_int_equal(r.seqs[1], 13);
    assert_int_equal(rec.counters.snapshot_packets, 1);
    assert_int_equal(rec.counters.cycles, 0);
}

/*
 * The replay floor of order-level snapshots: with 10..13 kept, one as of 9 or later can be
 * replayed after; with nothing kept, only one as of the latest applied; once the buffer dropped
 * a packet, none below the latest applied, and the buffer restarts (complete again from the
 * next packet).
 */
static void test_mdp3_replay_floor(void **state)
{
    (void)state;
    static uint8_t buffer[1024];
    struct tp_mdp3_recovery rec;
    uint8_t pkt[128];
    /* Room for two packets and their headers (u32 seq, u16 len, u64 rx_tsc). */
    size_t one = 14 + mdp3_packet(pkt, 1, 46, 0);
    tp_mdp3_recovery_init(&rec, buffer, 2 * one);
    assert_int_equal(tp_mdp3_recovery_replay_floor(&rec, 9), 9);
    for (uint32_t s = 10; s <= 11; s++) {
        size_t len = mdp3_packet(pkt, s, 46, 0);
        tp_mdp3_recovery_buffer(&rec, s, pkt, (uint16_t)len, 0);
    }
    assert_int_equal(rec.counters.buffer_full, 0);
    assert_int_equal(tp_mdp3_recovery_replay_floor(&rec, 11), 9);
    /* Full: 12 is dropped, nothing before 12 qualifies, and the buffer starts again. */
    size_t len = mdp3_packet(pkt, 12, 46, 0);
    tp_mdp3_recovery_buffer(&rec, 12, pkt, (uint16_t)len, 0);
    assert_int_equal(rec.counters.buffer_full, 1);
    assert_int_equal(tp_mdp3_recovery_replay_floor(&rec, 12), 12);
    assert_int_equal(rec.used, 0);
    len = mdp3_packet(pkt, 13, 46, 0);
    tp_mdp3_recovery_buffer(&rec, 13, pkt, (uint16_t)len, 0);
    assert_int_equal(tp_mdp3_recovery_replay_floor(&rec, 13), 12);
    tp_mdp3_recovery_done(&rec);
    assert_int_equal(tp_mdp3_recovery_replay_floor(&rec, 13), 13);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mold_request_retry_give_up),
        cmocka_unit_test(test_mold_next_gap_own_timer),
        cmocka_unit_test(test_mold_session_end),
        cmocka_unit_test(test_mdp3_snapshot_and_replay),
        cmocka_unit_test(test_mdp3_order_views_keep_the_snapshot_lines),
        cmocka_unit_test(test_mdp3_replay_floor),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
