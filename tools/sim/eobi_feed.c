/*
 * The model's events as a Eurex T7 EOBI channel (see eobi_feed.h).
 */
#include <errno.h>
#include <string.h>

#include "eobi_build.h"
#include "eobi_feed.h"
#include "eobi_release.h"
#include "truth.h"

void tp_sim_eobi_params_default(struct tp_sim_eobi_params *p)
{
    memset(p, 0, sizeof(*p));
    p->segments = 2;
    p->first_segment_id = 589;
    p->snapshot_every = 200;
    p->midnight_epoch_ns = UINT64_C(1764633600000000000); /* 2025-12-02 00:00 UTC */
    p->release = TP_EOBI_RELEASE_DEFAULT;
}

int tp_sim_eobi_init(struct tp_sim_eobi_feed *f, struct tp_sim_model *m,
                     const struct tp_sim_eobi_params *p, const struct tp_sim_packet_sink *sink)
{
    if (p->segments < 1 || p->segments > 64 || p->release >= TP_EOBI_RELEASES)
        return -EINVAL;
    memset(f, 0, sizeof(*f));
    f->model = m;
    f->params = *p;
    f->sink = *sink;
    return 0;
}

static uint32_t segment_of(const struct tp_sim_eobi_feed *f, uint32_t instrument)
{
    return instrument % f->params.segments;
}

static uint8_t eobi_side(uint8_t side)
{
    return side == 'B' ? 1 : 2;
}

/* price9 -> EOBI price (8 decimals): the model's ticks are multiples of 10 price9. */
static int64_t eobi_price(int64_t price9)
{
    return price9 / 10;
}

/* An open packet of segment `segment` in f->pkt on `stream`, numbered `seq`. */
static void packet_begin(struct tp_sim_eobi_feed *f, struct tp_eobi_builder *b, uint32_t segment,
                         uint64_t seq, uint32_t msg_seq)
{
    struct tp_eobi_packet_header h = {.appl_seq_num = seq,
                                      .market_segment_id =
                                          f->params.first_segment_id + (int32_t)segment,
                                      .transact_time = f->params.midnight_epoch_ns + f->now_ns};
    tp_eobi_build_begin(b, f->pkt.data,
                        f->params.release == TP_EOBI_RELEASE_6_0 ? TP_SIM_MAX_PAYLOAD
                                                                 : TP_SIM_MAX_PAYLOAD * 2 / 3,
                        &h, msg_seq);
}

static int packet_send(struct tp_sim_eobi_feed *f, struct tp_eobi_builder *b, uint8_t stream,
                       int complete, uint32_t count)
{
    f->pkt.data[21] = complete ? 1 : 0; /* PacketHeader CompletionIndicator */
    f->pkt.time_ns = f->now_ns;
    f->pkt.seq = tp_eobi_packet_header_appl_seq_num(f->pkt.data);
    f->pkt.count = count;
    f->pkt.index = f->index[stream]++;
    f->pkt.len = (uint16_t)b->len;
    if (f->params.release != TP_EOBI_RELEASE_6_0) {
        uint8_t v6[TP_SIM_MAX_PAYLOAD];
        memcpy(v6, f->pkt.data, b->len);
        int n =
            tp_eobi_packet_from_v6(f->params.release, v6, b->len, f->pkt.data, TP_SIM_MAX_PAYLOAD);
        if (n < 0)
            return n;
        f->pkt.len = (uint16_t)n;
    }
    f->pkt.stream = stream;
    f->pkt.line = 0;
    f->pkt.corrupt_xor = 0;
    f->pkt.corrupt_at = 0;
    return f->sink.packet(f->sink.ctx, &f->pkt);
}

/*
 * An InstrumentSummary with the session's totals as entries: TradeVolume (66) and, once the
 * instrument has traded, the last trade (2).
 */
static void instrument_summary(struct tp_eobi_builder *b,
                               const struct tp_eobi_instrument_summary *is,
                               const struct tp_sim_instrument *in)
{
    struct tp_eobi_md_entry volume = {.md_entry_px = TP_EOBI_PRICE_NULL,
                                      .md_entry_size = (int32_t)in->volume,
                                      .md_entry_type = 66};
    struct tp_eobi_md_entry last = {.md_entry_px = eobi_price(in->last_price9),
                                    .md_entry_size = (int32_t)in->last_qty,
                                    .md_entry_type = 2};

    TP_EOBI_BUILD(b, instrument_summary, is);
    if (in->volume <= INT32_MAX)
        tp_eobi_build_md_entry(b, &volume);
    if (in->trades > 0)
        tp_eobi_build_md_entry(b, &last);
}

/* Segment s's snapshot: its state after its last incremental packet. */
static int snapshot(struct tp_sim_eobi_feed *f, uint32_t s)
{
    const struct tp_sim_model *m = f->model;
    struct tp_eobi_builder b;
    struct tp_eobi_product_summary ps = {.last_msg_seq_num_processed = (uint32_t)f->seq[s],
                                         .trading_session_id = 1,
                                         .trading_session_sub_id = 3,
                                         .trad_ses_status = 2};
    uint32_t count = 0;
    int rc;

    packet_begin(f, &b, s, 0, 1);
    TP_EOBI_BUILD(&b, product_summary, &ps);
    count++;
    for (uint32_t id = s; id < m->params.instruments; id += f->params.segments) {
        const struct tp_sim_instrument *in = &m->instruments[id];
        if (in->n_orders > UINT16_MAX)
            return -ERANGE; /* TotNoOrders cannot say it */
        struct tp_eobi_instrument_summary is = {.security_id = TP_SIM_SECURITY_ID(id),
                                                .tot_no_orders = (uint16_t)in->n_orders,
                                                .security_status = 1,
                                                .security_trading_status =
                                                    in->status == TP_SIM_STATUS_HALTED ? 2 : 203};
        for (uint32_t k = 0; k <= in->n_orders; k++) {
            struct tp_eobi_snapshot_order o;
            if (k > 0) {
                const struct tp_sim_order *src = &m->pool[in->orders[k - 1]];
                o = (struct tp_eobi_snapshot_order){.trd_reg_ts_time_priority =
                                                        TP_SIM_EOBI_PRIORITY(src->id),
                                                    .display_qty = (int32_t)src->qty,
                                                    .side = eobi_side(src->side),
                                                    .ord_type = 2,
                                                    .price = eobi_price(src->ticks * in->tick9)};
            }
            /* A SnapshotOrder is 40 bytes, an InstrumentSummary with its two entries 72. */
            if (tp_eobi_build_room(&b) < (k == 0 ? 40u + 2 * TP_EOBI_MD_ENTRY_LEN : 40u)) {
                rc = packet_send(f, &b, TP_SIM_STREAM_SNAPSHOT, 0, count);
                if (rc < 0)
                    return rc;
                f->snapshot_packets++;
                count = 0;
                packet_begin(f, &b, s, 0, b.msg_seq_num);
            }
            if (k == 0)
                instrument_summary(&b, &is, in);
            else
                TP_EOBI_BUILD(&b, snapshot_order, &o);
            count++;
        }
    }
    if (b.error < 0)
        return b.error;
    f->snapshots++;
    f->snapshot_packets++;
    return packet_send(f, &b, TP_SIM_STREAM_SNAPSHOT, 1, count);
}

/* Appends the messages of one event to the packet b of its segment. */
static void event_messages(struct tp_sim_eobi_feed *f, struct tp_eobi_builder *b,
                           const struct tp_sim_event *ev, uint32_t *count)
{
    int64_t sec = TP_SIM_SECURITY_ID(ev->instrument);
    uint64_t prio = TP_SIM_EOBI_PRIORITY(ev->order_id);
    uint8_t side = eobi_side(ev->side);
    uint64_t t = f->params.midnight_epoch_ns + ev->time_ns;

    switch (ev->kind) {
    case TP_SIM_EV_ADD: {
        struct tp_eobi_order_add v = {.trd_reg_ts_time_in = t,
                                      .security_id = sec,
                                      .trd_reg_ts_time_priority = prio,
                                      .display_qty = (int32_t)ev->qty,
                                      .side = side,
                                      .ord_type = 2,
                                      .price = eobi_price(ev->price9)};
        TP_EOBI_BUILD(b, order_add, &v);
        break;
    }
    case TP_SIM_EV_CANCEL: {
        struct tp_eobi_order_modify_same_prio v = {.trd_reg_ts_time_in = t,
                                                   .transact_time = t,
                                                   .prev_display_qty =
                                                       (int32_t)(ev->remaining + ev->qty),
                                                   .security_id = sec,
                                                   .trd_reg_ts_time_priority = prio,
                                                   .display_qty = (int32_t)ev->remaining,
                                                   .side = side,
                                                   .ord_type = 2,
                                                   .price = eobi_price(ev->old_price9)};
        TP_EOBI_BUILD(b, order_modify_same_prio, &v);
        break;
    }
    case TP_SIM_EV_DELETE: {
        struct tp_eobi_order_delete v = {.trd_reg_ts_time_in = t,
                                         .transact_time = t,
                                         .security_id = sec,
                                         .trd_reg_ts_time_priority = prio,
                                         .display_qty = (int32_t)ev->old_qty,
                                         .side = side,
                                         .ord_type = 2,
                                         .price = eobi_price(ev->old_price9)};
        TP_EOBI_BUILD(b, order_delete, &v);
        break;
    }
    case TP_SIM_EV_REPLACE: {
        struct tp_eobi_order_modify v = {.trd_reg_ts_time_in = t,
                                         .trd_reg_ts_prev_time_priority = prio,
                                         .prev_price = eobi_price(ev->old_price9),
                                         .prev_display_qty = (int32_t)ev->old_qty,
                                         .security_id = sec,
                                         .trd_reg_ts_time_priority =
                                             TP_SIM_EOBI_PRIORITY(ev->new_order_id),
                                         .display_qty = (int32_t)ev->qty,
                                         .side = side,
                                         .ord_type = 2,
                                         .price = eobi_price(ev->price9)};
        TP_EOBI_BUILD(b, order_modify, &v);
        break;
    }
    case TP_SIM_EV_EXECUTE: {
        struct tp_eobi_execution_summary s = {.security_id = sec,
                                              .aggressor_time = t,
                                              .request_time = t,
                                              .exec_id = ev->match_id,
                                              .last_qty = (int32_t)ev->qty,
                                              .aggressor_side = side == 1 ? 2 : 1,
                                              .last_px = eobi_price(ev->price9)};
        TP_EOBI_BUILD(b, execution_summary, &s);
        (*count)++;
        /* Full and partial executions share one layout (two types). */
#define EXECUTION(M)                                                                               \
    do {                                                                                           \
        struct tp_eobi_##M v = {.side = side,                                                      \
                                .ord_type = 2,                                                     \
                                .price = eobi_price(ev->old_price9),                               \
                                .trd_reg_ts_time_priority = prio,                                  \
                                .security_id = sec,                                                \
                                .trd_match_id = (uint32_t)ev->match_id,                            \
                                .last_qty = (int32_t)ev->qty,                                      \
                                .last_px = eobi_price(ev->price9)};                                \
        TP_EOBI_BUILD(b, M, &v);                                                                   \
    } while (0)
        if (ev->remaining == 0)
            EXECUTION(full_order_execution);
        else
            EXECUTION(partial_order_execution);
#undef EXECUTION
        break;
    }
    case TP_SIM_EV_TRADE: {
        struct tp_eobi_trade_report v = {.security_id = sec,
                                         .transact_time = t,
                                         .trd_match_id = (uint32_t)ev->match_id,
                                         .last_qty = (int32_t)ev->qty,
                                         .last_px = eobi_price(ev->price9),
                                         .match_type = 5};
        TP_EOBI_BUILD(b, trade_report, &v);
        break;
    }
    case TP_SIM_EV_STATUS: {
        struct tp_eobi_instrument_state_change v = {
            .security_id = sec,
            .security_status = 1,
            .security_trading_status = ev->status == TP_SIM_STATUS_HALTED ? 2 : 203,
            .transact_time = t};
        TP_EOBI_BUILD(b, instrument_state_change, &v);
        break;
    }
    default:
        return;
    }
    (*count)++;
}

/* Largest message of one event: ExecutionSummary + an execution. */
#define EVENT_ROOM (64 + 52)

static int after_packet(struct tp_sim_eobi_feed *f)
{
    f->packets++;
    if (f->params.snapshot_every == 0 || ++f->since_snapshot < f->params.snapshot_every)
        return 0;
    f->since_snapshot = 0;
    int rc = snapshot(f, f->next_snapshot);
    f->next_snapshot = (f->next_snapshot + 1) % f->params.segments;
    return rc;
}

/* One model step: its events, packet by packet, on the incremental stream. */
static int publish_step(struct tp_sim_eobi_feed *f, const struct tp_sim_event *ev, int n)
{
    struct tp_eobi_builder b;
    uint32_t count = 0, segment = UINT32_MAX;
    int rc = 0;

    for (int i = 0; i < n && rc == 0; i++) {
        uint32_t s = segment_of(f, ev[i].instrument);
        f->now_ns = ev[i].time_ns;
        if (segment != UINT32_MAX && (s != segment || tp_eobi_build_room(&b) < EVENT_ROOM)) {
            rc = packet_send(f, &b, TP_SIM_STREAM_INCREMENTAL, s != segment, count);
            if (rc == 0)
                rc = after_packet(f);
            segment = UINT32_MAX;
        }
        if (segment == UINT32_MAX) {
            segment = s;
            count = 0;
            packet_begin(f, &b, s, ++f->seq[s], (uint32_t)f->messages + 1);
        }
        uint32_t before = count;
        event_messages(f, &b, &ev[i], &count);
        f->messages += count - before;
    }
    if (rc == 0 && segment != UINT32_MAX) {
        rc = b.error < 0 ? b.error : packet_send(f, &b, TP_SIM_STREAM_INCREMENTAL, 1, count);
        if (rc == 0)
            rc = after_packet(f);
    }
    return rc;
}

int tp_sim_eobi_run(struct tp_sim_eobi_feed *f, uint64_t events)
{
    struct tp_sim_model *m = f->model;
    int rc = 0;

    f->now_ns = m->now_ns;
    /* Start of day: every product opens for continuous trading. */
    for (uint32_t s = 0; rc == 0 && s < f->params.segments; s++) {
        struct tp_eobi_builder b;
        struct tp_eobi_product_state_change v = {.trading_session_id = 1,
                                                 .trading_session_sub_id = 3,
                                                 .trad_ses_status = 2,
                                                 .transact_time =
                                                     f->params.midnight_epoch_ns + f->now_ns};
        packet_begin(f, &b, s, ++f->seq[s], (uint32_t)f->messages + 1);
        TP_EOBI_BUILD(&b, product_state_change, &v);
        f->messages++;
        rc = packet_send(f, &b, TP_SIM_STREAM_INCREMENTAL, 1, 1);
        if (rc == 0)
            rc = after_packet(f);
    }
    while (rc == 0 && m->events_total < events) {
        const struct tp_sim_event *ev;
        int n = tp_sim_model_step(m, &ev);
        if (n < 0)
            return n;
        rc = publish_step(f, ev, n);
    }
    /* Quiet: each segment's heartbeat says its last ApplSeqNum, then the closing loop. */
    for (uint32_t s = 0; rc == 0 && s < f->params.segments; s++) {
        struct tp_eobi_builder b;
        packet_begin(f, &b, s, f->seq[s], 0);
        tp_eobi_build_heartbeat(&b, (uint32_t)f->seq[s]);
        rc = packet_send(f, &b, TP_SIM_STREAM_INCREMENTAL, 1, 0);
        f->heartbeats++;
    }
    for (uint32_t s = 0; rc == 0 && s < f->params.segments; s++)
        rc = snapshot(f, s);
    return rc;
}

json_t *tp_sim_eobi_report(const struct tp_sim_eobi_feed *f)
{
    json_t *seqs = json_array();
    for (uint32_t s = 0; s < f->params.segments; s++)
        json_array_append_new(seqs, json_pack("{s:i,s:I}", "market_segment_id",
                                              (int)(f->params.first_segment_id + (int32_t)s),
                                              "last_appl_seq_num", (json_int_t)f->seq[s]));
    return json_pack("{s:I,s:I,s:I,s:I,s:I,s:o}", "messages", (json_int_t)f->messages, "packets",
                     (json_int_t)f->packets, "snapshots", (json_int_t)f->snapshots,
                     "snapshot_packets", (json_int_t)f->snapshot_packets, "heartbeats",
                     (json_int_t)f->heartbeats, "segments", seqs);
}

uint16_t tp_sim_eobi_heartbeat(const struct tp_sim_packet *src, uint8_t *out)
{
    struct tp_eobi_packet_header h = {
        .appl_seq_num = tp_eobi_packet_header_appl_seq_num(src->data) - 1,
        .market_segment_id = tp_eobi_packet_header_market_segment_id(src->data),
        .completion_indicator = 1,
        .transact_time = tp_eobi_packet_header_transact_time(src->data)};
    struct tp_eobi_builder b;

    tp_eobi_build_begin(&b, out, TP_SIM_MAX_PAYLOAD, &h, 0);
    tp_eobi_build_heartbeat(&b, (uint32_t)h.appl_seq_num);
    return (uint16_t)b.len;
}
