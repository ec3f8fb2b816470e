/*
 * Simulator: the MDP3 channel, decoded with the codec (codecs/mdp3 + generated mdp3_sbe.h) and
 * replayed through the simple reference books below, ends with exactly the truth file's books
 * (price levels from message 46, orders from message 47); sequence numbers, RptSeqs, snapshots,
 * definitions, end-of-event marks, every MDUpdateAction and a channel reset are checked on the way.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mdp3_feed.h"
#include "mdp3_packet.h"
#include "model.h"
#include "mdp3_replay.h"
#include "sim_test_util.h"
#include "truth.h"

#define INSTRUMENTS 40

static void generate(uint64_t seed, uint64_t events, uint64_t reset_at, struct captured *c,
                     struct tp_sim_model *m, struct tp_sim_mdp3_feed *f)
{
    struct tp_sim_params p;
    tp_sim_params_default(&p);
    p.seed = seed;
    p.instruments = INSTRUMENTS;
    assert_int_equal(tp_sim_model_init(m, &p), 0);
    struct tp_sim_mdp3_params mp;
    tp_sim_mdp3_params_default(&mp);
    mp.depth = DEPTH;
    mp.snapshot_every = 20;
    mp.snapshot_batch = 5;
    mp.definition_every = 100;
    mp.reset_at_message = reset_at;
    struct tp_sim_packet_sink sink = {.packet = capture_packet, .ctx = c};
    memset(c, 0, sizeof(*c));
    assert_int_equal(tp_sim_mdp3_init(f, m, &mp, &sink), 0);
    assert_int_equal(tp_sim_mdp3_run(f, events), 0);
}

/*
 * Replays the captured packets, checks that the replay met no inconsistency and that its levels
 * and orders equal the model's truth file; returns the replay for further checks.
 */
static struct replay *replay_against_truth(const struct captured *c, const struct tp_sim_model *m)
{
    char path[256];
    temp_path(path, sizeof(path), ".json");
    assert_int_equal(tp_sim_truth_write(m, DEPTH, TP_SIM_IMPLIED_DEPTH, path), 0);
    struct replay *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    replay_all(c->p, c->n, r, INSTRUMENTS, m->next_order_id);
    assert_int_equal(r->errors, 0);
    assert_int_equal(r->mbo.errors, 0);
    check_mbp_truth(r, path);
    assert_int_equal(ref_compare_truth(&r->mbo, path, DEPTH), 0);
    unlink(path);
    return r;
}

static void test_replay_equals_truth(void **state)
{
    (void)state;
    struct captured c;
    struct tp_sim_model m;
    struct tp_sim_mdp3_feed f;
    generate(5, 30000, 0, &c, &m, &f);
    struct replay *r = replay_against_truth(&c, &m);

    /* The implied books were published too. */
    size_t implied = 0;
    for (int i = 0; i < INSTRUMENTS; i++)
        implied += r->mbp[i].n[2] + r->mbp[i].n[3];
    assert_true(implied > INSTRUMENTS);
    /* Every update action and message kind was exercised. */
    for (int a = 0; a < 6; a++)
        assert_true(r->actions[a] > 0);
    static const int templates[] = {46, 47, 48, 49, 50, 37, 51, 30, 52, 53, 54, 55, 56};
    for (size_t t = 0; t < sizeof(templates) / sizeof(templates[0]); t++)
        assert_true(r->templates[templates[t]] > 0);
    /* Snapshots checked along the way; definitions of all instruments before the first
     * incremental packet; the stream ends at an event boundary. */
    assert_true(r->snapshots_checked > 100);
    assert_int_equal(r->mbo_snapshots_checked, r->snapshots_checked);
    for (int i = 0; i < INSTRUMENTS; i++)
        assert_true(r->defined[i]);
    assert_true(r->end_of_events > 1000);
    /* Daily statistics and limits as the simulator last sent them; the limits moved with the
     * price (more 50s than the open's one per instrument), and traded instruments settled at
     * their last trade. */
    check_mdp3_stats(r, f.stats);
    assert_true(r->templates[50] > INSTRUMENTS);
    for (int i = 0; i < INSTRUMENTS; i++)
        if (m.instruments[i].trades > 0)
            assert_int_equal(f.stats[i].settlement9, m.instruments[i].last_price9);
    assert_true(r->last_mei & MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT);
    /* Several messages per packet on the incremental channel. */
    size_t incr = 0;
    for (size_t i = 0; i < c.n; i++)
        incr += c.p[i].stream == TP_SIM_STREAM_INCREMENTAL;
    uint64_t incr_msgs = 0;
    for (int t = 0; t < 64; t++)
        if (t < 52 || t > 56)
            incr_msgs += r->templates[t];
    assert_true(incr_msgs > 2 * incr);

    replay_free(r);
    free(r);
    free(c.p);
    tp_sim_mdp3_free(&f);
    tp_sim_model_free(&m);
}

static void test_channel_reset(void **state)
{
    (void)state;
    struct captured c;
    struct tp_sim_model m;
    struct tp_sim_mdp3_feed f;
    generate(6, 12000, 6000, &c, &m, &f);
    struct replay *r = replay_against_truth(&c, &m);
    assert_int_equal(r->resets, 1);
    assert_int_equal(f.channel_resets, 1);
    check_mdp3_stats(r, f.stats); /* statistics carry on over the reset */
    /* The reset packet restarted the sequence at 1, after a higher one. */
    int found = 0;
    for (size_t i = 1; i < c.n && !found; i++)
        if (c.p[i].stream == TP_SIM_STREAM_INCREMENTAL && c.p[i].seq == 1) {
            struct tp_mdp3_packet pk = {0};
            struct tp_mdp3_msg msg = {0};
            tp_mdp3_packet_init(&pk, c.p[i].data, c.p[i].len);
            assert_int_equal(tp_mdp3_packet_next(&pk, &msg), 1);
            found = msg.template_id == 4;
        }
    assert_true(found);
    replay_free(r);
    free(r);
    free(c.p);
    tp_sim_mdp3_free(&f);
    tp_sim_model_free(&m);
}

static void test_same_seed_same_bytes(void **state)
{
    (void)state;
    struct captured a, b;
    struct tp_sim_model ma, mb;
    struct tp_sim_mdp3_feed fa, fb;
    generate(9, 5000, 0, &a, &ma, &fa);
    generate(9, 5000, 0, &b, &mb, &fb);
    assert_int_equal(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        assert_int_equal(a.p[i].len, b.p[i].len);
        assert_memory_equal(a.p[i].data, b.p[i].data, a.p[i].len);
    }
    free(b.p);
    tp_sim_mdp3_free(&fb);
    tp_sim_model_free(&mb);
    struct captured d;
    generate(10, 5000, 0, &d, &mb, &fb);
    int differ = a.n != d.n;
    for (size_t i = 0; !differ && i < a.n; i++)
        differ = a.p[i].len != d.p[i].len || memcmp(a.p[i].data, d.p[i].data, a.p[i].len) != 0;
    assert_true(differ);
    free(a.p);
    free(d.p);
    tp_sim_mdp3_free(&fa);
    tp_sim_mdp3_free(&fb);
    tp_sim_model_free(&ma);
    tp_sim_model_free(&mb);
}

/* A heartbeats-only line carries AdminHeartbeat12 under the previous MsgSeqNum. */
static void test_heartbeat_packet(void **state)
{
    (void)state;
    struct captured c;
    struct tp_sim_model m;
    struct tp_sim_mdp3_feed f;
    generate(11, 2000, 0, &c, &m, &f);
    const struct tp_sim_packet *src = NULL;
    for (size_t i = 0; i < c.n && src == NULL; i++)
        if (c.p[i].stream == TP_SIM_STREAM_INCREMENTAL && c.p[i].seq > 10)
            src = &c.p[i];
    assert_non_null(src);
    uint8_t out[TP_SIM_MAX_PAYLOAD];
    uint16_t len = tp_sim_mdp3_heartbeat(src, out);
    struct tp_mdp3_packet pk = {0}, orig = {0};
    struct tp_mdp3_msg msg = {0};
    assert_int_equal(tp_mdp3_packet_init(&pk, out, len), 0);
    assert_int_equal(tp_mdp3_packet_init(&orig, src->data, src->len), 0);
    assert_int_equal(pk.seq, src->seq - 1);
    assert_int_equal(pk.sending_time, orig.sending_time);
    assert_int_equal(tp_mdp3_packet_next(&pk, &msg), 1);
    assert_int_equal(msg.template_id, 12);
    assert_int_equal(tp_mdp3_packet_next(&pk, &msg), 0);
    free(c.p);
    tp_sim_mdp3_free(&f);
    tp_sim_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_equals_truth),
        cmocka_unit_test(test_channel_reset),
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_heartbeat_packet),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
