/* MDP3 reference replay for the simulator tests (see mdp3_replay.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mdp3_replay.h"
#include "truth.h"

/* Book index of an MDEntryType: 0 bid, 1 ask, 2 implied bid, 3 implied ask; -1 otherwise. */
static int book_of(char type)
{
    switch (type) {
    case '0':
        return 0;
    case '1':
        return 1;
    case 'E':
        return 2;
    case 'F':
        return 3;
    default:
        return -1;
    }
}

static void mbp_apply(struct replay *r, struct ref_mbp *b, int side, uint8_t action, uint32_t level,
                      int64_t px, int64_t qty, int32_t orders)
{
    struct ref_level *lv = b->lv[side];
    uint32_t *n = &b->n[side];
    const uint32_t depth = side >= 2 ? IMPLIED_DEPTH : DEPTH;
    uint32_t k = level - 1;
    r->actions[action < 6 ? action : 0]++;
    switch (action) {
    case 0: /* New */
        if (level == 0 || k > *n) {
            r->errors++;
            return;
        }
        if (level > depth) {
            r->errors++;
            return;
        }
        memmove(lv + k + 1, lv + k, ((*n < depth ? *n : depth - 1) - k) * sizeof(*lv));
        lv[k] = (struct ref_level){px, qty, orders};
        *n = *n < depth ? *n + 1 : depth;
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
    if (id < 0 || id >= r->instruments) {
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
            int book =
                book_of(mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_type(&g));
            if (book < 0) {
                r->errors++;
                continue;
            }
            int32_t orders =
                mktdata_md_incremental_refresh_book46_no_md_entries_number_of_orders(&g);
            /* The implied book has no order counts: null on the wire, 0 in the truth. */
            if (book >= 2) {
                assert_int_equal(orders, MKTDATA_INT32_NULL_NULL_VALUE);
                orders = 0;
            }
            mbp_apply(r, &r->mbp[id], book,
                      mktdata_md_incremental_refresh_book46_no_md_entries_md_update_action(&g),
                      mktdata_md_incremental_refresh_book46_no_md_entries_md_price_level(&g),
                      mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_px_mantissa(&g),
                      mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_size(&g),
                      orders);
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
            int64_t px =
                mktdata_md_incremental_refresh_trade_summary48_no_md_entries_md_entry_px_mantissa(
                    &g);
            struct ref_mbp *t = &r->mbp[id];
            if (t->first_trade == 0)
                t->first_trade = t->trade_high = t->trade_low = px;
            t->trade_high = px > t->trade_high ? px : t->trade_high;
            t->trade_low = px < t->trade_low ? px : t->trade_low;
            t->last_trade = px;
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
            /* Statistics follow the event's trades: open = first, high/low = the extremes. */
            int64_t px =
                mktdata_md_incremental_refresh_session_statistics51_no_md_entries_md_entry_px_mantissa(
                    &g);
            struct ref_mbp *t = &r->mbp[id];
            switch (mktdata_md_incremental_refresh_session_statistics51_no_md_entries_md_entry_type(
                &g)) {
            case '4':
                r->errors += px != t->first_trade || t->stat_open != 0;
                t->stat_open = t->stat_high = t->stat_low = px;
                break;
            case '7':
                r->errors += px != t->trade_high || px <= t->stat_high;
                t->stat_high = px;
                break;
            case '8':
                r->errors += px != t->trade_low || px >= t->stat_low;
                t->stat_low = px;
                break;
            default:
                r->errors++;
            }
        }
        break;
    }
    case 49: {
        struct mktdata_md_incremental_refresh_daily_statistics49 b = {0};
        struct mktdata_md_incremental_refresh_daily_statistics49_no_md_entries g = {0};
        assert_int_equal(mktdata_md_incremental_refresh_daily_statistics49_wrap_for_decode(
                             &b, m->body, m->body_len, m->block_length, m->version),
                         0);
        r->last_mei = mktdata_md_incremental_refresh_daily_statistics49_match_event_indicator(&b);
        assert_int_equal(
            mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_wrap_for_decode(&b, &g),
            0);
        while (g.index < g.count) {
            assert_int_equal(
                mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_next(&g), 0);
            uint32_t id = instrument_of(
                r, mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_security_id(&g));
            check_rpt(r, id,
                      mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_rpt_seq(&g));
            int64_t px =
                mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_md_entry_px_mantissa(
                    &g);
            int64_t size =
                mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_md_entry_size(&g);
            struct ref_mbp *t = &r->mbp[id];
            switch (
                mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_md_entry_type(&g)) {
            case '6':
                /* The prior day's at the open (no trade yet), else the last trade's price. */
                r->errors += t->first_trade != 0 && px != t->last_trade;
                t->settlement = px;
                break;
            case 'B':
                t->cleared_volume = size;
                break;
            case 'C':
                t->open_interest = size;
                break;
            default:
                r->errors++;
            }
        }
        break;
    }
    case 50: {
        struct mktdata_md_incremental_refresh_limits_banding50 b = {0};
        struct mktdata_md_incremental_refresh_limits_banding50_no_md_entries g = {0};
        assert_int_equal(mktdata_md_incremental_refresh_limits_banding50_wrap_for_decode(
                             &b, m->body, m->body_len, m->block_length, m->version),
                         0);
        r->last_mei = mktdata_md_incremental_refresh_limits_banding50_match_event_indicator(&b);
        assert_int_equal(
            mktdata_md_incremental_refresh_limits_banding50_no_md_entries_wrap_for_decode(&b, &g),
            0);
        while (g.index < g.count) {
            assert_int_equal(mktdata_md_incremental_refresh_limits_banding50_no_md_entries_next(&g),
                             0);
            uint32_t id = instrument_of(
                r, mktdata_md_incremental_refresh_limits_banding50_no_md_entries_security_id(&g));
            check_rpt(r, id,
                      mktdata_md_incremental_refresh_limits_banding50_no_md_entries_rpt_seq(&g));
            struct ref_mbp *t = &r->mbp[id];
            t->high_limit =
                mktdata_md_incremental_refresh_limits_banding50_no_md_entries_high_limit_price_mantissa(
                    &g);
            t->low_limit =
                mktdata_md_incremental_refresh_limits_banding50_no_md_entries_low_limit_price_mantissa(
                    &g);
            t->max_variation =
                mktdata_md_incremental_refresh_limits_banding50_no_md_entries_max_price_variation_mantissa(
                    &g);
            /* A band around a price, and every trade so far inside it. */
            r->errors += t->low_limit >= t->high_limit || t->max_variation <= 0 ||
                         (t->first_trade != 0 &&
                          (t->last_trade > t->high_limit || t->last_trade < t->low_limit));
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
        /* Every book of the channel is cleared; RptSeqs restart; statistics carry on. */
        r->resets++;
        for (uint32_t i = 0; i < r->instruments; i++) {
            memset(r->mbp[i].n, 0, sizeof(r->mbp[i].n));
            r->mbp[i].rpt_seq = 0;
        }
        memset(r->mbo.orders, 0, r->mbo.cap * sizeof(*r->mbo.orders));
        break;
    }
    default:
        r->errors++;
        return;
    }
    if (r->last_mei & MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT) {
        r->end_of_events++;
        /* At event ends the statistics have caught up with the trades. */
        for (uint32_t i = 0; i < r->instruments; i++)
            if (r->mbp[i].stat_high != r->mbp[i].trade_high ||
                r->mbp[i].stat_low != r->mbp[i].trade_low)
                r->errors++;
        /* Books are consistent at event ends: never crossed. */
        for (uint32_t i = 0; i < r->instruments; i++)
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
    assert_int_equal(mktdata_snapshot_full_refresh52_tot_num_reports(&s), r->instruments);
    const int64_t null_price = INT64_MAX; /* PRICENULL9's null mantissa */
    const struct ref_mbp *t = &r->mbp[id];
    assert_int_equal(mktdata_snapshot_full_refresh52_high_limit_price_mantissa(&s),
                     t->high_limit ? t->high_limit : null_price);
    assert_int_equal(mktdata_snapshot_full_refresh52_low_limit_price_mantissa(&s),
                     t->high_limit ? t->low_limit : null_price);
    assert_int_equal(mktdata_snapshot_full_refresh52_max_price_variation_mantissa(&s),
                     t->high_limit ? t->max_variation : null_price);
    assert_int_equal(mktdata_snapshot_full_refresh52_no_md_entries_wrap_for_decode(&s, &g), 0);
    uint32_t seen[4] = {0, 0, 0, 0};
    while (g.index < g.count) {
        assert_int_equal(mktdata_snapshot_full_refresh52_no_md_entries_next(&g), 0);
        int side = book_of(mktdata_snapshot_full_refresh52_no_md_entries_md_entry_type(&g));
        if (side < 0)
            fail_msg("snapshot entry of an unknown type");
        int level = mktdata_snapshot_full_refresh52_no_md_entries_md_price_level(&g);
        assert_int_equal(level, seen[side] + 1);
        const struct ref_level *l = &r->mbp[id].lv[side][seen[side]++];
        assert_int_equal(mktdata_snapshot_full_refresh52_no_md_entries_md_entry_px_mantissa(&g),
                         l->px);
        assert_int_equal(mktdata_snapshot_full_refresh52_no_md_entries_md_entry_size(&g), l->qty);
        assert_int_equal(mktdata_snapshot_full_refresh52_no_md_entries_number_of_orders(&g),
                         side >= 2 ? MKTDATA_INT32_NULL_NULL_VALUE : l->orders);
    }
    for (int book = 0; book < 4; book++)
        assert_int_equal(seen[book], r->mbp[id].n[book]);
    r->snapshots_checked++;
}

/*
 * An order-level snapshot chunk: every order it lists is live in the reference with that price,
 * size and side; over all chunks of one instrument, exactly the reference's live orders.
 */
static void snapshot_mbo_message(struct replay *r, const struct tp_mdp3_msg *m)
{
    assert_int_equal(m->template_id, 53);
    struct mktdata_snapshot_full_refresh_order_book53 s = {0};
    struct mktdata_snapshot_full_refresh_order_book53_no_md_entries g = {0};
    assert_int_equal(mktdata_snapshot_full_refresh_order_book53_wrap_for_decode(
                         &s, m->body, m->body_len, m->block_length, m->version),
                     0);
    uint32_t id = instrument_of(r, mktdata_snapshot_full_refresh_order_book53_security_id(&s));
    assert_int_equal(mktdata_snapshot_full_refresh_order_book53_last_msg_seq_num_processed(&s),
                     r->last_incr_seq);
    uint32_t chunk = mktdata_snapshot_full_refresh_order_book53_current_chunk(&s);
    uint32_t chunks = mktdata_snapshot_full_refresh_order_book53_no_chunks(&s);
    assert_true(chunk >= 1 && chunk <= chunks);
    if (chunk == 1)
        r->mbo_snapshot_orders = 0;
    assert_int_equal(
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_wrap_for_decode(&s, &g), 0);
    while (g.index < g.count) {
        assert_int_equal(mktdata_snapshot_full_refresh_order_book53_no_md_entries_next(&g), 0);
        uint64_t oid = mktdata_snapshot_full_refresh_order_book53_no_md_entries_order_id(&g);
        assert_true(oid < r->mbo.cap);
        const struct ref_order *o = &r->mbo.orders[oid];
        assert_true(o->live);
        assert_int_equal(o->instrument, id);
        assert_int_equal(
            o->price9,
            mktdata_snapshot_full_refresh_order_book53_no_md_entries_md_entry_px_mantissa(&g));
        assert_int_equal(
            o->qty, mktdata_snapshot_full_refresh_order_book53_no_md_entries_md_display_qty(&g));
        assert_int_equal(
            o->side == 'B' ? '0' : '1',
            mktdata_snapshot_full_refresh_order_book53_no_md_entries_md_entry_type(&g));
        r->mbo_snapshot_orders++;
    }
    if (chunk == chunks) {
        uint64_t live = 0;
        for (uint64_t oid = 0; oid < r->mbo.cap; oid++)
            live += r->mbo.orders[oid].live && r->mbo.orders[oid].instrument == id;
        assert_int_equal(r->mbo_snapshot_orders, live);
        r->mbo_snapshots_checked++;
    }
}

/*
 * The part of a definition every template shares (T = the generated name): the instrument, the
 * loop size, the outright depth; then every group up to NoLotTypeRules is walked. Returns the
 * instrument and leaves the flyweight m ready for the template's own trailing groups.
 */
#define CHECK_DEFINITION(T, r, msg, m, id)                                                         \
    do {                                                                                           \
        struct mktdata_##T##_no_events ge_ = {0};                                                  \
        struct mktdata_##T##_no_md_feed_types gf_ = {0};                                           \
        struct mktdata_##T##_no_inst_attrib ga_ = {0};                                             \
        struct mktdata_##T##_no_lot_type_rules gl_ = {0};                                          \
        assert_int_equal(mktdata_##T##_wrap_for_decode(m, (msg)->body, (msg)->body_len,            \
                                                       (msg)->block_length, (msg)->version),       \
                         0);                                                                       \
        id = instrument_of(r, mktdata_##T##_security_id(m));                                       \
        assert_int_equal(mktdata_##T##_tot_num_reports(m), (r)->instruments);                      \
        assert_int_equal(mktdata_##T##_no_events_wrap_for_decode(m, &ge_), 0);                     \
        assert_int_equal(mktdata_##T##_no_md_feed_types_wrap_for_decode(m, &gf_), 0);              \
        assert_int_equal(mktdata_##T##_no_md_feed_types_next(&gf_), 0);                            \
        assert_memory_equal(mktdata_##T##_no_md_feed_types_md_feed_type(&gf_), "GBX", 3);          \
        assert_int_equal(mktdata_##T##_no_md_feed_types_market_depth(&gf_), DEPTH);                \
        while (gf_.index < gf_.count)                                                              \
            assert_int_equal(mktdata_##T##_no_md_feed_types_next(&gf_), 0);                        \
        assert_int_equal(mktdata_##T##_no_inst_attrib_wrap_for_decode(m, &ga_), 0);                \
        while (ga_.index < ga_.count)                                                              \
            assert_int_equal(mktdata_##T##_no_inst_attrib_next(&ga_), 0);                          \
        assert_int_equal(mktdata_##T##_no_lot_type_rules_wrap_for_decode(m, &gl_), 0);             \
        while (gl_.index < gl_.count)                                                              \
            assert_int_equal(mktdata_##T##_no_lot_type_rules_next(&gl_), 0);                       \
    } while (0)

/*
 * A definition: futures (54), except every fifth instrument from id 3 an option (55, with its
 * underlying) and every fifth from id 4 a calendar spread (56, two legs), as mdp3_feed.h says.
 */
static void definition_message(struct replay *r, const struct tp_mdp3_msg *m)
{
    uint32_t id;
    if (m->template_id == 55) {
        struct mktdata_md_instrument_definition_option55 d = {0};
        struct mktdata_md_instrument_definition_option55_no_underlyings gu = {0};
        CHECK_DEFINITION(md_instrument_definition_option55, r, m, &d, id);
        assert_int_equal(id % 5, 3);
        assert_int_equal(
            mktdata_md_instrument_definition_option55_no_underlyings_wrap_for_decode(&d, &gu), 0);
        assert_int_equal(gu.count, 1);
    } else if (m->template_id == 56) {
        struct mktdata_md_instrument_definition_spread56 d = {0};
        struct mktdata_md_instrument_definition_spread56_no_legs gl = {0};
        CHECK_DEFINITION(md_instrument_definition_spread56, r, m, &d, id);
        assert_int_equal(id % 5, 4);
        assert_int_equal(mktdata_md_instrument_definition_spread56_no_legs_wrap_for_decode(&d, &gl),
                         0);
        assert_int_equal(gl.count, 2);
    } else {
        assert_int_equal(m->template_id, 54);
        struct mktdata_md_instrument_definition_future54 d = {0};
        CHECK_DEFINITION(md_instrument_definition_future54, r, m, &d, id);
        assert_true(id % 5 < 3);
    }
    if (!r->incremental_started)
        r->defined[id] = 1;
}

void replay_init(struct replay *r, uint32_t instruments, uint64_t max_order_id)
{
    memset(r, 0, sizeof(*r));
    r->instruments = instruments;
    r->mbp = calloc(instruments, sizeof(*r->mbp));
    r->defined = calloc(instruments, sizeof(*r->defined));
    assert_non_null(r->mbp);
    assert_non_null(r->defined);
    ref_init(&r->mbo, instruments, max_order_id);
    for (int s = 0; s < TP_SIM_STREAMS; s++)
        r->expect_seq[s] = 1;
}

void replay_free(struct replay *r)
{
    free(r->mbp);
    free(r->defined);
    ref_free(&r->mbo);
}

void replay_packet(struct replay *r, int stream, const uint8_t *data, size_t len)
{
    struct tp_mdp3_packet pk = {0};
    struct tp_mdp3_msg m = {0};
    assert_int_equal(tp_mdp3_packet_init(&pk, data, len), 0);
    if (stream == TP_SIM_STREAM_INCREMENTAL)
        r->incremental_started = 1;
    /* Contiguous from 1, or restarting at 1: a channel reset, or a new loop of a cycling channel.
     */
    if (pk.seq != r->expect_seq[stream])
        assert_int_equal(pk.seq, 1);
    r->expect_seq[stream] = pk.seq + 1;
    int rc;
    while ((rc = tp_mdp3_packet_next(&pk, &m)) == 1) {
        assert_int_equal(m.schema_id, MKTDATA_SCHEMA_ID);
        r->templates[m.template_id & 63]++;
        if (stream == TP_SIM_STREAM_INCREMENTAL)
            incremental_message(r, &m);
        else if (stream == TP_SIM_STREAM_SNAPSHOT)
            snapshot_message(r, &m);
        else if (stream == TP_SIM_STREAM_SNAPSHOT_MBO)
            snapshot_mbo_message(r, &m);
        else
            definition_message(r, &m);
    }
    assert_int_equal(rc, 0);
    if (stream == TP_SIM_STREAM_INCREMENTAL)
        r->last_incr_seq = pk.seq;
}

void replay_all(const struct tp_sim_packet *packets, size_t n, struct replay *r,
                uint32_t instruments, uint64_t max_order_id)
{
    replay_init(r, instruments, max_order_id);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(mktdata_load_u32(packets[i].data), packets[i].seq);
        replay_packet(r, packets[i].stream, packets[i].data, packets[i].len);
    }
}

/* The reference levels of every instrument equal the truth file's. */
void check_mbp_truth(const struct replay *r, const char *path)
{
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    assert_non_null(root);
    json_t *instruments = json_object_get(root, "instruments");
    assert_int_equal(json_array_size(instruments), r->instruments);
    for (uint32_t i = 0; i < r->instruments; i++) {
        json_t *in = json_array_get(instruments, i);
        assert_int_equal(json_integer_value(json_object_get(in, "volume")), r->mbp[i].volume);
        static const char *const names[4] = {"bids", "asks", "implied_bids", "implied_asks"};
        for (int side = 0; side < 4; side++) {
            json_t *levels = json_object_get(in, names[side]);
            assert_non_null(levels);
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

void check_mdp3_stats(const struct replay *r, const struct tp_sim_mdp3_stats *stats)
{
    for (uint32_t id = 0; id < r->instruments; id++) {
        const struct ref_mbp *t = &r->mbp[id];
        const struct tp_sim_mdp3_stats *st = &stats[id];
        assert_int_equal(t->settlement, st->settlement9);
        assert_int_equal(t->cleared_volume, st->cleared_volume);
        assert_int_equal(t->open_interest, st->open_interest);
        assert_int_equal(t->high_limit, st->high_limit9);
        assert_int_equal(t->low_limit, st->low_limit9);
        assert_int_equal(t->max_variation, st->max_variation9);
    }
}
