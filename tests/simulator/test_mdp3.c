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
#include "sim_test_util.h"
#include "truth.h"

#define DEPTH       10
#define INSTRUMENTS 40

struct captured {
    struct tp_sim_packet *p;
    size_t n, cap;
};

static int capture(void *ctx, const struct tp_sim_packet *p)
{
    struct captured *c = ctx;
    if (c->n == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 4096;
        c->p = realloc(c->p, c->cap * sizeof(*c->p));
        assert_non_null(c->p);
    }
    c->p[c->n++] = *p;
    return 0;
}

/* Reference price-level book: arrays, CME semantics as documented in tools/sim/mdp3_feed.h. */
struct ref_level {
    int64_t px, qty;
    int32_t orders;
};

struct ref_mbp {
    struct ref_level lv[2][DEPTH];
    uint32_t n[2];
    uint32_t rpt_seq;
    int64_t volume;
};

struct replay {
    struct ref_mbp mbp[INSTRUMENTS];
    struct ref_book mbo;
    uint32_t last_incr_seq;
    uint64_t actions[6];
    uint64_t templates[64];
    uint64_t errors;
    uint64_t end_of_events, snapshots_checked, resets;
    int defined[INSTRUMENTS];
    int incremental_started;
    uint8_t last_mei;
};

static void mbp_apply(struct replay *r, struct ref_mbp *b, int side, uint8_t action, uint32_t level,
                      int64_t px, int64_t qty, int32_t orders)
{
    struct ref_level *lv = b->lv[side];
    uint32_t *n = &b->n[side];
    uint32_t k = level - 1;
    r->actions[action < 6 ? action : 0]++;
    switch (action) {
    case 0: /* New */
        if (level == 0 || k > *n) {
            r->errors++;
            return;
        }
        memmove(lv + k + 1, lv + k, ((*n < DEPTH ? *n : DEPTH - 1) - k) * sizeof(*lv));
        lv[k] = (struct ref_level){px, qty, orders};
        *n = *n < DEPTH ? *n + 1 : DEPTH;
        return;
    case 1: /* Change */
    case 5: /* Overlay */
        if (level == 0 || k >= *n || (action == 1 && lv[k].px != px)) {
            r->errors++;
            return;
        }
        lv[k] = (struct ref_level){px, qty, orders};
        return;
    case 2: /* Delete */
        if (level == 0 || k >= *n) {
            r->errors++;
            return;
        }
        memmove(lv + k, lv + k + 1, (*n - k - 1) * sizeof(*lv));
        (*n)--;
        return;
    case 3: /* DeleteThru */
        *n = 0;
        return;
    case 4: /* DeleteFrom: levels 1..level */
        if (level >= *n) {
            *n = 0;
            return;
        }
        memmove(lv, lv + level, (*n - level) * sizeof(*lv));
        *n -= level;
        return;
    default:
        r->errors++;
    }
}

static uint32_t instrument_of(struct replay *r, int32_t security_id)
{
    int64_t id = (int64_t)security_id - TP_SIM_SECURITY_ID(0);
    if (id < 0 || id >= INSTRUMENTS) {
        r->errors++;
        return 0;
    }
    return (uint32_t)id;
}

static void check_rpt(struct replay *r, uint32_t id, uint32_t rpt)
{
    if (rpt != r->mbp[id].rpt_seq + 1)
        r->errors++;
    r->mbp[id].rpt_seq = rpt;
}

static void incremental_message(struct replay *r, const struct tp_mdp3_msg *m)
{
    switch (m->template_id) {
    case 46: {
        struct mktdata_md_incremental_refresh_book46 b = {0};
        struct mktdata_md_incremental_refresh_book46_no_md_entries g = {0};
        assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_for_decode(
                             &b, m->body, m->body_len, m->block_length, m->version),
                         0);
        r->last_mei = mktdata_md_incremental_refresh_book46_match_event_indicator(&b);
        assert_int_equal(
            mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_decode(&b, &g), 0);
        while (g.index < g.count) {
            assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_next(&g), 0);
            uint32_t id = instrument_of(
                r, mktdata_md_incremental_refresh_book46_no_md_entries_security_id(&g));
            check_rpt(r, id, mktdata_md_incremental_refresh_book46_no_md_entries_rpt_seq(&g));
            char type = mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_type(&g);
            assert_true(type == '0' || type == '1');
            mbp_apply(r, &r->mbp[id], type == '1',
                      mktdata_md_incremental_refresh_book46_no_md_entries_md_update_action(&g),
                      mktdata_md_incremental_refresh_book46_no_md_entries_md_price_level(&g),
                      mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_px_mantissa(&g),
                      mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_size(&g),
                      mktdata_md_incremental_refresh_book46_no_md_entries_number_of_orders(&g));
        }
        break;
    }
    case 47: {
        struct mktdata_md_incremental_refresh_order_book47 b = {0};
        struct mktdata_md_incremental_refresh_order_book47_no_md_entries g = {0};
        assert_int_equal(mktdata_md_incremental_refresh_order_book47_wrap_for_decode(
                             &b, m->body, m->body_len, m->block_length, m->version),
                         0);
        r->last_mei = mktdata_md_incremental_refresh_order_book47_match_event_indicator(&b);
        assert_int_equal(
            mktdata_md_incremental_refresh_order_book47_no_md_entries_wrap_for_decode(&b, &g), 0);
        while (g.index < g.count) {
            assert_int_equal(mktdata_md_incremental_refresh_order_book47_no_md_entries_next(&g), 0);
            uint32_t id = instrument_of(
                r, mktdata_md_incremental_refresh_order_book47_no_md_entries_security_id(&g));
            uint64_t oid = mktdata_md_incremental_refresh_order_book47_no_md_entries_order_id(&g);
            int64_t px =
                mktdata_md_incremental_refresh_order_book47_no_md_entries_md_entry_px_mantissa(&g);
            int32_t qty =
                mktdata_md_incremental_refresh_order_book47_no_md_entries_md_display_qty(&g);
            char type = mktdata_md_incremental_refresh_order_book47_no_md_entries_md_entry_type(&g);
            switch (
                mktdata_md_incremental_refresh_order_book47_no_md_entries_md_update_action(&g)) {
            case 0:
                ref_add(&r->mbo, oid, id, type == '0' ? 'B' : 'S', px, qty);
                break;
            case 1:
                if (oid >= r->mbo.cap || !r->mbo.orders[oid].live || qty <= 0)
                    r->errors++;
                else
                    r->mbo.orders[oid].qty = qty;
                break;
            case 2:
                ref_delete(&r->mbo, oid);
                break;
            default:
                r->errors++;
            }
        }
        break;
    }
    case 48: {
        struct mktdata_md_incremental_refresh_trade_summary48 b = {0};
        struct mktdata_md_incremental_refresh_trade_summary48_no_md_entries g = {0};
        struct mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries o = {0};
        assert_int_equal(mktdata_md_incremental_refresh_trade_summary48_wrap_for_decode(
                             &b, m->body, m->body_len, m->block_length, m->version),
                         0);
        r->last_mei = mktdata_md_incremental_refresh_trade_summary48_match_event_indicator(&b);
        assert_int_equal(
            mktdata_md_incremental_refresh_trade_summary48_no_md_entries_wrap_for_decode(&b, &g),
            0);
        int64_t size = 0;
        int32_t orders = 0;
        while (g.index < g.count) {
            assert_int_equal(mktdata_md_incremental_refresh_trade_summary48_no_md_entries_next(&g),
                             0);
            uint32_t id = instrument_of(
                r, mktdata_md_incremental_refresh_trade_summary48_no_md_entries_security_id(&g));
            check_rpt(r, id,
                      mktdata_md_incremental_refresh_trade_summary48_no_md_entries_rpt_seq(&g));
            size = mktdata_md_incremental_refresh_trade_summary48_no_md_entries_md_entry_size(&g);
            orders =
                mktdata_md_incremental_refresh_trade_summary48_no_md_entries_number_of_orders(&g);
        }
        assert_int_equal(
            mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries_wrap_for_decode(&b,
                                                                                               &o),
            0);
        int64_t filled = 0;
        while (o.index < o.count) {
            assert_int_equal(
                mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries_next(&o), 0);
            filled +=
                mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries_last_qty(&o);
        }
        /* The filled orders add up to the trade (hidden trades list no order). */
        assert_int_equal((int64_t)o.count, orders);
        if (orders > 0)
            assert_int_equal(filled, size);
        break;
    }
    case 37: {
        struct mktdata_md_incremental_refresh_volume37 b = {0};
        struct mktdata_md_incremental_refresh_volume37_no_md_entries g = {0};
        assert_int_equal(mktdata_md_incremental_refresh_volume37_wrap_for_decode(
                             &b, m->body, m->body_len, m->block_length, m->version),
                         0);
        r->last_mei = mktdata_md_incremental_refresh_volume37_match_event_indicator(&b);
        assert_int_equal(
            mktdata_md_incremental_refresh_volume37_no_md_entries_wrap_for_decode(&b, &g), 0);
        while (g.index < g.count) {
            assert_int_equal(mktdata_md_incremental_refresh_volume37_no_md_entries_next(&g), 0);
            uint32_t id = instrument_of(
                r, mktdata_md_incremental_refresh_volume37_no_md_entries_security_id(&g));
            check_rpt(r, id, mktdata_md_incremental_refresh_volume37_no_md_entries_rpt_seq(&g));
            r->mbp[id].volume =
                mktdata_md_incremental_refresh_volume37_no_md_entries_md_entry_size(&g);
        }
        break;
    }
    case 51: {
        struct mktdata_md_incremental_refresh_session_statistics51 b = {0};
        struct mktdata_md_incremental_refresh_session_statistics51_no_md_entries g = {0};
        assert_int_equal(mktdata_md_incremental_refresh_session_statistics51_wrap_for_decode(
                             &b, m->body, m->body_len, m->block_length, m->version),
                         0);
        r->last_mei = mktdata_md_incremental_refresh_session_statistics51_match_event_indicator(&b);
        assert_int_equal(
            mktdata_md_incremental_refresh_session_statistics51_no_md_entries_wrap_for_decode(&b,
                                                                                              &g),
            0);
        while (g.index < g.count) {
            assert_int_equal(
                mktdata_md_incremental_refresh_session_statistics51_no_md_entries_next(&g), 0);
            uint32_t id = instrument_of(
                r,
                mktdata_md_incremental_refresh_session_statistics51_no_md_entries_security_id(&g));
            check_rpt(
                r, id,
                mktdata_md_incremental_refresh_session_statistics51_no_md_entries_rpt_seq(&g));
        }
        break;
    }
    case 30: {
        struct mktdata_security_status30 b = {0};
        assert_int_equal(mktdata_security_status30_wrap_for_decode(&b, m->body, m->body_len,
                                                                   m->block_length, m->version),
                         0);
        r->last_mei = mktdata_security_status30_match_event_indicator(&b);
        instrument_of(r, mktdata_security_status30_security_id(&b));
        break;
    }
    case 4: {
        struct mktdata_channel_reset4 b = {0};
        assert_int_equal(mktdata_channel_reset4_wrap_for_decode(&b, m->body, m->body_len,
                                                                m->block_length, m->version),
                         0);
        r->last_mei = mktdata_channel_reset4_match_event_indicator(&b);
        /* Every book of the channel is cleared; RptSeqs restart. */
        r->resets++;
        memset(r->mbp, 0, sizeof(r->mbp));
        memset(r->mbo.orders, 0, r->mbo.cap * sizeof(*r->mbo.orders));
        break;
    }
    default:
        r->errors++;
        return;
    }
    if (r->last_mei & MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT) {
        r->end_of_events++;
        /* Books are consistent at event ends: never crossed. */
        for (uint32_t i = 0; i < INSTRUMENTS; i++)
            if (r->mbp[i].n[0] > 0 && r->mbp[i].n[1] > 0 &&
                r->mbp[i].lv[0][0].px >= r->mbp[i].lv[1][0].px)
                r->errors++;
    }
}

static void snapshot_message(struct replay *r, const struct tp_mdp3_msg *m)
{
    assert_int_equal(m->template_id, 52);
    struct mktdata_snapshot_full_refresh52 s = {0};
    struct mktdata_snapshot_full_refresh52_no_md_entries g = {0};
    assert_int_equal(mktdata_snapshot_full_refresh52_wrap_for_decode(&s, m->body, m->body_len,
                                                                     m->block_length, m->version),
                     0);
    uint32_t id = instrument_of(r, mktdata_snapshot_full_refresh52_security_id(&s));
    assert_int_equal(mktdata_snapshot_full_refresh52_last_msg_seq_num_processed(&s),
                     r->last_incr_seq);
    assert_int_equal(mktdata_snapshot_full_refresh52_rpt_seq(&s), r->mbp[id].rpt_seq);
    assert_int_equal(mktdata_snapshot_full_refresh52_tot_num_reports(&s), INSTRUMENTS);
    assert_int_equal(mktdata_snapshot_full_refresh52_no_md_entries_wrap_for_decode(&s, &g), 0);
    uint32_t seen[2] = {0, 0};
    while (g.index < g.count) {
        assert_int_equal(mktdata_snapshot_full_refresh52_no_md_entries_next(&g), 0);
        int side = mktdata_snapshot_full_refresh52_no_md_entries_md_entry_type(&g) == '1';
        int level = mktdata_snapshot_full_refresh52_no_md_entries_md_price_level(&g);
        assert_int_equal(level, seen[side] + 1);
        const struct ref_level *l = &r->mbp[id].lv[side][seen[side]++];
        assert_int_equal(mktdata_snapshot_full_refresh52_no_md_entries_md_entry_px_mantissa(&g),
                         l->px);
        assert_int_equal(mktdata_snapshot_full_refresh52_no_md_entries_md_entry_size(&g), l->qty);
        assert_int_equal(mktdata_snapshot_full_refresh52_no_md_entries_number_of_orders(&g),
                         l->orders);
    }
    assert_int_equal(seen[0], r->mbp[id].n[0]);
    assert_int_equal(seen[1], r->mbp[id].n[1]);
    r->snapshots_checked++;
}

static void definition_message(struct replay *r, const struct tp_mdp3_msg *m)
{
    assert_int_equal(m->template_id, 54);
    struct mktdata_md_instrument_definition_future54 d = {0};
    struct mktdata_md_instrument_definition_future54_no_events ge = {0};
    struct mktdata_md_instrument_definition_future54_no_md_feed_types gf = {0};
    assert_int_equal(mktdata_md_instrument_definition_future54_wrap_for_decode(
                         &d, m->body, m->body_len, m->block_length, m->version),
                     0);
    uint32_t id = instrument_of(r, mktdata_md_instrument_definition_future54_security_id(&d));
    if (!r->incremental_started)
        r->defined[id] = 1;
    assert_int_equal(mktdata_md_instrument_definition_future54_tot_num_reports(&d), INSTRUMENTS);
    assert_int_equal(mktdata_md_instrument_definition_future54_no_events_wrap_for_decode(&d, &ge),
                     0);
    assert_int_equal(
        mktdata_md_instrument_definition_future54_no_md_feed_types_wrap_for_decode(&d, &gf), 0);
    assert_int_equal(mktdata_md_instrument_definition_future54_no_md_feed_types_next(&gf), 0);
    assert_memory_equal(
        mktdata_md_instrument_definition_future54_no_md_feed_types_md_feed_type(&gf), "GBX", 3);
    assert_int_equal(mktdata_md_instrument_definition_future54_no_md_feed_types_market_depth(&gf),
                     DEPTH);
}

static void replay_all(const struct captured *c, struct replay *r, uint64_t max_order_id)
{
    memset(r, 0, sizeof(*r));
    ref_init(&r->mbo, INSTRUMENTS, max_order_id);
    uint32_t expect_seq[TP_SIM_STREAMS] = {1, 1, 1};
    for (size_t i = 0; i < c->n; i++) {
        const struct tp_sim_packet *p = &c->p[i];
        struct tp_mdp3_packet pk = {0};
        struct tp_mdp3_msg m = {0};
        assert_int_equal(tp_mdp3_packet_init(&pk, p->data, p->len), 0);
        assert_int_equal(pk.seq, p->seq);
        if (p->stream == TP_SIM_STREAM_INCREMENTAL) {
            r->incremental_started = 1;
            /* Contiguous from 1, or restarting at 1 for a channel reset. */
            if (pk.seq != expect_seq[0])
                assert_int_equal(pk.seq, 1);
            expect_seq[0] = pk.seq + 1;
        } else if (pk.seq != expect_seq[p->stream]) {
            assert_int_equal(pk.seq, 1); /* a new loop of the cycling channel */
        }
        expect_seq[p->stream] = pk.seq + 1;
        int rc;
        while ((rc = tp_mdp3_packet_next(&pk, &m)) == 1) {
            assert_int_equal(m.schema_id, MKTDATA_SCHEMA_ID);
            r->templates[m.template_id & 63]++;
            if (p->stream == TP_SIM_STREAM_INCREMENTAL)
                incremental_message(r, &m);
            else if (p->stream == TP_SIM_STREAM_SNAPSHOT)
                snapshot_message(r, &m);
            else
                definition_message(r, &m);
        }
        assert_int_equal(rc, 0);
        if (p->stream == TP_SIM_STREAM_INCREMENTAL)
            r->last_incr_seq = pk.seq;
    }
}

/* The reference levels of every instrument equal the truth file's. */
static void check_mbp_truth(const struct replay *r, const char *path)
{
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    assert_non_null(root);
    json_t *instruments = json_object_get(root, "instruments");
    assert_int_equal(json_array_size(instruments), INSTRUMENTS);
    for (uint32_t i = 0; i < INSTRUMENTS; i++) {
        json_t *in = json_array_get(instruments, i);
        assert_int_equal(json_integer_value(json_object_get(in, "volume")), r->mbp[i].volume);
        for (int side = 0; side < 2; side++) {
            json_t *levels = json_object_get(in, side ? "asks" : "bids");
            assert_int_equal(json_array_size(levels), r->mbp[i].n[side]);
            for (uint32_t k = 0; k < r->mbp[i].n[side]; k++) {
                json_t *l = json_array_get(levels, k);
                assert_int_equal(json_integer_value(json_object_get(l, "price9")),
                                 r->mbp[i].lv[side][k].px);
                assert_int_equal(json_integer_value(json_object_get(l, "qty")),
                                 r->mbp[i].lv[side][k].qty);
                assert_int_equal(json_integer_value(json_object_get(l, "orders")),
                                 r->mbp[i].lv[side][k].orders);
            }
        }
    }
    json_decref(root);
}

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
    struct tp_sim_packet_sink sink = {.packet = capture, .ctx = c};
    memset(c, 0, sizeof(*c));
    assert_int_equal(tp_sim_mdp3_init(f, m, &mp, &sink), 0);
    assert_int_equal(tp_sim_mdp3_run(f, events), 0);
}

static void test_replay_equals_truth(void **state)
{
    (void)state;
    struct captured c;
    struct tp_sim_model m;
    struct tp_sim_mdp3_feed f;
    generate(5, 30000, 0, &c, &m, &f);
    char path[256];
    temp_path(path, sizeof(path), ".json");
    assert_int_equal(tp_sim_truth_write(&m, DEPTH, path), 0);

    struct replay *r = calloc(1, sizeof(*r));
    replay_all(&c, r, m.next_order_id);
    assert_int_equal(r->errors, 0);
    assert_int_equal(r->mbo.errors, 0);
    check_mbp_truth(r, path);
    assert_int_equal(ref_compare_truth(&r->mbo, path, DEPTH), 0);

    /* Every update action and message kind was exercised. */
    for (int a = 0; a < 6; a++)
        assert_true(r->actions[a] > 0);
    static const int templates[] = {46, 47, 48, 37, 51, 30, 52, 54};
    for (size_t t = 0; t < sizeof(templates) / sizeof(templates[0]); t++)
        assert_true(r->templates[templates[t]] > 0);
    /* Snapshots checked along the way; definitions of all instruments before the first
     * incremental packet; the stream ends at an event boundary. */
    assert_true(r->snapshots_checked > 100);
    for (int i = 0; i < INSTRUMENTS; i++)
        assert_true(r->defined[i]);
    assert_true(r->end_of_events > 1000);
    assert_true(r->last_mei & MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT);
    /* Several messages per packet on the incremental channel. */
    size_t incr = 0;
    for (size_t i = 0; i < c.n; i++)
        incr += c.p[i].stream == TP_SIM_STREAM_INCREMENTAL;
    uint64_t incr_msgs = 0;
    for (int t = 0; t < 64; t++)
        if (t != 52 && t != 54)
            incr_msgs += r->templates[t];
    assert_true(incr_msgs > 2 * incr);

    unlink(path);
    ref_free(&r->mbo);
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
    char path[256];
    temp_path(path, sizeof(path), ".json");
    assert_int_equal(tp_sim_truth_write(&m, DEPTH, path), 0);
    struct replay *r = calloc(1, sizeof(*r));
    replay_all(&c, r, m.next_order_id);
    assert_int_equal(r->resets, 1);
    assert_int_equal(f.channel_resets, 1);
    assert_int_equal(r->errors, 0);
    assert_int_equal(r->mbo.errors, 0);
    check_mbp_truth(r, path);
    assert_int_equal(ref_compare_truth(&r->mbo, path, DEPTH), 0);
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
    unlink(path);
    ref_free(&r->mbo);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_equals_truth),
        cmocka_unit_test(test_channel_reset),
        cmocka_unit_test(test_same_seed_same_bytes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
