/* Model events -> ITCH 5.0 messages through the codec's writers (codecs/itch/itch50.h). */
#include "itch_feed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "truth.h"

static size_t system_event(uint8_t *out, char code, uint64_t time_ns)
{
    struct tp_itch_system_event v = {.timestamp = time_ns, .event_code = code};
    return (size_t)tp_itch_system_event_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
}

static size_t stock_directory(uint8_t *out, const struct tp_sim_model *m, uint32_t id,
                              uint64_t time_ns)
{
    struct tp_itch_stock_directory v = {
        .stock_locate = TP_SIM_LOCATE(id),
        .timestamp = time_ns,
        .market_category = 'Q', /* NASDAQ Global Select */
        .financial_status_indicator = 'N',
        .round_lot_size = 100,
        .round_lots_only = 'N',
        .issue_classification = 'C', /* common stock */
        .issue_sub_type = {'Z', ' '},
        .authenticity = 'P', /* production */
        .short_sale_threshold_indicator = 'N',
        .ipo_flag = 'N',
        .luld_reference_price_tier = '1',
        .etp_flag = 'N',
        .inverse_indicator = 'N',
    };
    memcpy(v.stock, m->instruments[id].symbol, 8);
    return (size_t)tp_itch_stock_directory_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
}

static size_t trading_action(uint8_t *out, const struct tp_sim_model *m, uint32_t id, char state,
                             uint64_t time_ns)
{
    struct tp_itch_stock_trading_action v = {.stock_locate = TP_SIM_LOCATE(id),
                                             .timestamp = time_ns,
                                             .trading_state = state,
                                             .reserved = ' '};
    memcpy(v.stock, m->instruments[id].symbol, 8);
    tp_itch_alpha_set(v.reason, 4, state == 'H' ? "T1" : ""); /* T1: halt, news pending */
    return (size_t)tp_itch_stock_trading_action_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
}

/* Market-wide circuit breaker levels, once at the start of the day. */
static size_t mwcb_levels(uint8_t *out, uint64_t time_ns)
{
    struct tp_itch_mwcb_decline_level v = {.timestamp = time_ns,
                                           .level1 = tp_itch_p9_to_price8(3100000000000LL),
                                           .level2 = tp_itch_p9_to_price8(2900000000000LL),
                                           .level3 = tp_itch_p9_to_price8(2600000000000LL)};
    return (size_t)tp_itch_mwcb_decline_level_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
}

static size_t reg_sho(uint8_t *out, const struct tp_sim_model *m, uint32_t id, uint64_t time_ns)
{
    struct tp_itch_reg_sho_restriction v = {
        .stock_locate = TP_SIM_LOCATE(id), .timestamp = time_ns, .reg_sho_action = '0'};
    memcpy(v.stock, m->instruments[id].symbol, 8);
    return (size_t)tp_itch_reg_sho_restriction_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
}

static size_t participant(uint8_t *out, const struct tp_sim_model *m, uint32_t id, uint64_t time_ns)
{
    struct tp_itch_market_participant_position v = {.stock_locate = TP_SIM_LOCATE(id),
                                                    .timestamp = time_ns,
                                                    .mpid = {'T', 'P', 'S', 'M'},
                                                    .primary_market_maker = 'N',
                                                    .market_maker_mode = 'N',
                                                    .market_participant_state = 'A'};
    memcpy(v.stock, m->instruments[id].symbol, 8);
    return (size_t)tp_itch_market_participant_position_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
}

/* Closing-cross imbalance indication around the best bid (no cross is executed). */
static size_t imbalance(uint8_t *out, const struct tp_sim_model *m, uint32_t id, uint64_t time_ns)
{
    struct tp_sim_level best;
    const struct tp_sim_instrument *in = &m->instruments[id];
    int64_t ref =
        tp_sim_model_levels(m, id, 'B', &best, 1) ? best.price9 : in->ref_ticks * in->tick9;
    struct tp_itch_noii v = {.stock_locate = TP_SIM_LOCATE(id),
                             .timestamp = time_ns,
                             .paired_shares = 0,
                             .imbalance_shares = 0,
                             .imbalance_direction = 'N',
                             .far_price = tp_itch_p9_to_price4(ref),
                             .near_price = tp_itch_p9_to_price4(ref),
                             .current_reference_price = tp_itch_p9_to_price4(ref),
                             .cross_type = 'C',
                             .price_variation_indicator = ' '};
    memcpy(v.stock, in->symbol, 8);
    return (size_t)tp_itch_noii_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
}

size_t tp_sim_itch_encode_event(const struct tp_sim_model *m, const struct tp_sim_event *e,
                                uint8_t out[TP_SIM_ITCH_MAX_MSG])
{
    uint16_t locate = TP_SIM_LOCATE(e->instrument);
    const char *symbol = m->instruments[e->instrument].symbol;
    int n;
    switch (e->kind) {
    case TP_SIM_EV_ADD: {
        struct tp_itch_add_order_mpid v = {.stock_locate = locate,
                                           .timestamp = e->time_ns,
                                           .order_ref = e->order_id,
                                           .side = (char)e->side,
                                           .shares = (uint32_t)e->qty,
                                           .price = tp_itch_p9_to_price4(e->price9)};
        memcpy(v.stock, symbol, 8);
        /* Every twentieth order carries a market participant id ('F'). */
        if (e->order_id % 20 == 0) {
            memcpy(v.attribution, "TPSM", 4);
            n = tp_itch_add_order_mpid_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
        } else {
            struct tp_itch_add_order a;
            memcpy(&a, &v, sizeof(a)); /* same leading members, same order */
            n = tp_itch_add_order_encode(out, TP_SIM_ITCH_MAX_MSG, &a);
        }
        break;
    }
    case TP_SIM_EV_EXECUTE:
        if (e->with_price) {
            struct tp_itch_order_executed_with_price v = {.stock_locate = locate,
                                                          .timestamp = e->time_ns,
                                                          .order_ref = e->order_id,
                                                          .executed_shares = (uint32_t)e->qty,
                                                          .match_number = e->match_id,
                                                          .printable = 'Y',
                                                          .execution_price =
                                                              tp_itch_p9_to_price4(e->price9)};
            n = tp_itch_order_executed_with_price_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
        } else {
            struct tp_itch_order_executed v = {.stock_locate = locate,
                                               .timestamp = e->time_ns,
                                               .order_ref = e->order_id,
                                               .executed_shares = (uint32_t)e->qty,
                                               .match_number = e->match_id};
            n = tp_itch_order_executed_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
        }
        break;
    case TP_SIM_EV_CANCEL: {
        struct tp_itch_order_cancel v = {.stock_locate = locate,
                                         .timestamp = e->time_ns,
                                         .order_ref = e->order_id,
                                         .cancelled_shares = (uint32_t)e->qty};
        n = tp_itch_order_cancel_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
        break;
    }
    case TP_SIM_EV_DELETE: {
        struct tp_itch_order_delete v = {
            .stock_locate = locate, .timestamp = e->time_ns, .order_ref = e->order_id};
        n = tp_itch_order_delete_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
        break;
    }
    case TP_SIM_EV_REPLACE: {
        struct tp_itch_order_replace v = {.stock_locate = locate,
                                          .timestamp = e->time_ns,
                                          .original_order_ref = e->order_id,
                                          .new_order_ref = e->new_order_id,
                                          .shares = (uint32_t)e->qty,
                                          .price = tp_itch_p9_to_price4(e->price9)};
        n = tp_itch_order_replace_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
        break;
    }
    case TP_SIM_EV_TRADE: {
        struct tp_itch_trade v = {.stock_locate = locate,
                                  .timestamp = e->time_ns,
                                  .side = (char)e->side,
                                  .shares = (uint32_t)e->qty,
                                  .price = tp_itch_p9_to_price4(e->price9),
                                  .match_number = e->match_id};
        memcpy(v.stock, symbol, 8);
        n = tp_itch_trade_encode(out, TP_SIM_ITCH_MAX_MSG, &v);
        break;
    }
    default:
        return trading_action(out, m, e->instrument, e->status == TP_SIM_STATUS_HALTED ? 'H' : 'T',
                              e->time_ns);
    }
    return (size_t)n;
}

int tp_sim_itch_run(struct tp_sim_model *m, uint64_t events, const struct tp_sim_msg_sink *sink)
{
    uint8_t msg[TP_SIM_ITCH_MAX_MSG];
    uint64_t t = m->now_ns;
    int rc = 0;
    /* Start of day, timestamped just before the first event. */
    static const char start_codes[] = {'O', 'S'};
    for (size_t i = 0; i < sizeof(start_codes) && rc == 0; i++)
        rc = sink->message(sink->ctx, msg, system_event(msg, start_codes[i], t), t);
    for (uint32_t id = 0; id < m->params.instruments && rc == 0; id++)
        rc = sink->message(sink->ctx, msg, stock_directory(msg, m, id, t), t);
    if (rc == 0)
        rc = sink->message(sink->ctx, msg, mwcb_levels(msg, t), t);
    for (uint32_t id = 0; id < m->params.instruments && rc == 0; id++) {
        rc = sink->message(sink->ctx, msg, trading_action(msg, m, id, 'T', t), t);
        if (rc == 0)
            rc = sink->message(sink->ctx, msg, reg_sho(msg, m, id, t), t);
        if (rc == 0)
            rc = sink->message(sink->ctx, msg, participant(msg, m, id, t), t);
    }
    if (rc == 0)
        rc = sink->message(sink->ctx, msg, system_event(msg, 'Q', t), t);

    while (rc == 0 && m->events_total < events) {
        const struct tp_sim_event *ev;
        int n = tp_sim_model_step(m, &ev);
        if (n < 0)
            return n;
        for (int i = 0; i < n && rc == 0; i++)
            rc = sink->message(sink->ctx, msg, tp_sim_itch_encode_event(m, &ev[i], msg),
                               ev[i].time_ns);
        if (rc == 0 && sink->step_done != NULL)
            rc = sink->step_done(sink->ctx);
    }

    t = m->now_ns + 1000;
    for (uint32_t id = 0; id < m->params.instruments && rc == 0; id++)
        rc = sink->message(sink->ctx, msg, imbalance(msg, m, id, t), t);
    static const char end_codes[] = {'M', 'E', 'C'};
    for (size_t i = 0; i < sizeof(end_codes) && rc == 0; i++)
        rc = sink->message(sink->ctx, msg, system_event(msg, end_codes[i], t), t);
    return rc;
}

static int by_order_id(const void *a, const void *b)
{
    uint64_t x = ((const struct tp_sim_order *)a)->id, y = ((const struct tp_sim_order *)b)->id;
    return x < y ? -1 : x > y;
}

int tp_sim_itch_snapshot(const struct tp_sim_model *m, const struct tp_sim_msg_sink *sink)
{
    uint8_t msg[TP_SIM_ITCH_MAX_MSG];
    uint64_t t = m->now_ns;
    int rc = sink->message(sink->ctx, msg, system_event(msg, 'Q', t), t);
    for (uint32_t id = 0; id < m->params.instruments && rc == 0; id++) {
        rc = sink->message(sink->ctx, msg, stock_directory(msg, m, id, t), t);
        char state = m->instruments[id].status == TP_SIM_STATUS_HALTED ? 'H' : 'T';
        if (rc == 0)
            rc = sink->message(sink->ctx, msg, trading_action(msg, m, id, state, t), t);
        if (rc == 0)
            rc = sink->message(sink->ctx, msg, reg_sho(msg, m, id, t), t);
    }
    for (uint32_t id = 0; id < m->params.instruments && rc == 0; id++) {
        const struct tp_sim_instrument *in = &m->instruments[id];
        if (in->n_orders == 0)
            continue;
        struct tp_sim_order *orders = malloc(in->n_orders * sizeof(*orders));
        if (orders == NULL)
            return -ENOMEM;
        for (uint32_t k = 0; k < in->n_orders; k++)
            orders[k] = m->pool[in->orders[k]];
        qsort(orders, in->n_orders, sizeof(*orders), by_order_id);
        for (uint32_t k = 0; k < in->n_orders && rc == 0; k++) {
            struct tp_sim_event add = {.time_ns = t,
                                       .order_id = orders[k].id,
                                       .price9 = orders[k].ticks * in->tick9,
                                       .qty = orders[k].qty,
                                       .instrument = id,
                                       .kind = TP_SIM_EV_ADD,
                                       .side = orders[k].side};
            rc = sink->message(sink->ctx, msg, tp_sim_itch_encode_event(m, &add, msg), t);
        }
        free(orders);
    }
    return rc;
}
