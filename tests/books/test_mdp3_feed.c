/*
 * MDP3 feed handler on packets built with the generated encoders: definitions (filter, depth),
 * book entries, end-of-event marks, per-instrument RptSeq (a jump makes only that instrument
 * stale; its entries are skipped until a snapshot recovers it), duplicates from the other line,
 * snapshots, channel reset, unknown instruments and malformed packets; bursts (prefetch pass
 * ahead of the apply pass, instruments defined inside a burst, a burst inside a burst).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "books_test_util.h"
#include "mdp3_packet.h"
#include "tp_mbo.h"
#include "tp_mdp3_feed.h"

#define PX(n) ((int64_t)((n)*1000000000.0))
#define EOE   MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT

struct sink_log {
    uint32_t changes, events, stale_on, stale_off, instruments;
    uint32_t last_stale_instrument, expected, got;
    uint32_t changes_at_stale_on, changes_at_stale_off; /* records handed over by then */
};

static void on_changes(void *ctx, const struct tp_feed_info *info, const struct tp_book_change *c,
                       uint32_t n)
{
    struct sink_log *log = ctx;

    (void)info;
    (void)c;
    log->changes += n;
}

static void on_event(void *ctx, const struct tp_feed_info *info)
{
    (void)info;
    ((struct sink_log *)ctx)->events++;
}

static void on_instrument(void *ctx, uint32_t instrument)
{
    (void)instrument;
    ((struct sink_log *)ctx)->instruments++;
}

static void on_stale(void *ctx, uint32_t instrument, int stale, uint32_t expected, uint32_t got)
{
    struct sink_log *log = ctx;

    if (stale) {
        log->stale_on++;
        log->last_stale_instrument = instrument;
        log->expected = expected;
        log->got = got;
        log->changes_at_stale_on = log->changes;
    } else {
        log->stale_off++;
        log->changes_at_stale_off = log->changes;
    }
}

struct fixture {
    struct tp_instruments *reg;
    struct tp_books *books;
    void *state;
    struct tp_instrument_filter filter;
    struct tp_mdp3_feed feed;
    struct sink_log log;
    uint8_t pkt[1400];
    struct tp_mdp3_writer w;
    uint32_t seq;
    uint64_t transact_time; /* of the messages add_book46 writes */
};

/* ---- packet building ---------------------------------------------------------------------- */

static void packet_begin(struct fixture *f)
{
    f->seq++;
    assert_int_equal(tp_mdp3_writer_init(&f->w, f->pkt, sizeof(f->pkt), f->seq, 1000 + f->seq), 0);
}

static int packet_send(struct fixture *f)
{
    return tp_mdp3_feed_packet(&f->feed, f->pkt, f->w.len, 0);
}

static void add_definition(struct fixture *f, int32_t secid, const char *symbol, const char *group,
                           int8_t depth)
{
    struct mktdata_md_instrument_definition_future54 m;
    struct mktdata_md_instrument_definition_future54_no_events ev;
    struct mktdata_md_instrument_definition_future54_no_md_feed_types ft;
    struct mktdata_md_instrument_definition_future54_no_inst_attrib ia;
    struct mktdata_md_instrument_definition_future54_no_lot_type_rules lt;
    size_t room;
    uint8_t *dst = tp_mdp3_writer_reserve(&f->w, &room);

    assert_non_null(dst);
    assert_int_equal(mktdata_md_instrument_definition_future54_wrap_and_apply_header(&m, dst, room),
                     0);
    mktdata_md_instrument_definition_future54_set_security_update_action(&m, 'A');
    mktdata_md_instrument_definition_future54_set_md_security_trading_status(&m, 17);
    mktdata_md_instrument_definition_future54_set_security_id(&m, secid);
    mktdata_md_instrument_definition_future54_set_symbol(&m, symbol, strlen(symbol));
    mktdata_md_instrument_definition_future54_set_security_group(&m, group, strlen(group));
    mktdata_md_instrument_definition_future54_set_min_price_increment_mantissa(&m, PX(0.25));
    mktdata_md_instrument_definition_future54_set_display_factor_mantissa(&m, PX(1));
    mktdata_md_instrument_definition_future54_set_match_event_indicator(&m, EOE);
    assert_int_equal(
        mktdata_md_instrument_definition_future54_no_events_wrap_for_encode(&m, &ev, 0), 0);
    assert_int_equal(
        mktdata_md_instrument_definition_future54_no_md_feed_types_wrap_for_encode(&m, &ft, 2), 0);
    mktdata_md_instrument_definition_future54_no_md_feed_types_next(&ft);
    mktdata_md_instrument_definition_future54_no_md_feed_types_set_md_feed_type(&ft, "GBX", 3);
    mktdata_md_instrument_definition_future54_no_md_feed_types_set_market_depth(&ft, depth);
    mktdata_md_instrument_definition_future54_no_md_feed_types_next(&ft);
    mktdata_md_instrument_definition_future54_no_md_feed_types_set_md_feed_type(&ft, "GBI", 3);
    mktdata_md_instrument_definition_future54_no_md_feed_types_set_market_depth(&ft, 2);
    assert_int_equal(
        mktdata_md_instrument_definition_future54_no_inst_attrib_wrap_for_encode(&m, &ia, 0), 0);
    assert_int_equal(
        mktdata_md_instrument_definition_future54_no_lot_type_rules_wrap_for_encode(&m, &lt, 0), 0);
    assert_int_equal(tp_mdp3_writer_commit(
                         &f->w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                    mktdata_md_instrument_definition_future54_encoded_length(&m)),
                     0);
}

struct entry {
    int32_t secid;
    uint32_t rpt_seq;
    uint8_t level, action;
    char type;
    int64_t price;
    int32_t size, orders;
};

/* An order entry of message 46 (naming its price entry by ReferenceID) or 47. */
struct order {
    uint64_t id;
    int32_t qty;
    uint8_t action; /* 0 new, 1 change, 2 delete */
    uint8_t refid;  /* 46 */
};

/* Message 46: level entries e, then order entries o (naming level entries by ReferenceID). */
static void add_book46_orders(struct fixture *f, uint8_t mei, const struct entry *e, uint32_t n,
                              const struct order *o, uint32_t n_orders)
{
    struct mktdata_md_incremental_refresh_book46 m;
    struct mktdata_md_incremental_refresh_book46_no_md_entries g;
    struct mktdata_md_incremental_refresh_book46_no_order_id_entries oe;
    size_t room;
    uint8_t *dst = tp_mdp3_writer_reserve(&f->w, &room);

    assert_non_null(dst);
    assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_and_apply_header(&m, dst, room), 0);
    mktdata_md_incremental_refresh_book46_set_transact_time(&m, f->transact_time);
    mktdata_md_incremental_refresh_book46_set_match_event_indicator(&m, mei);
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_encode(&m, &g, n),
                     0);
    for (uint32_t i = 0; i < n; i++) {
        mktdata_md_incremental_refresh_book46_no_md_entries_next(&g);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_entry_px_mantissa(&g,
                                                                                     e[i].price);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_entry_size(&g, e[i].size);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_security_id(&g, e[i].secid);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_rpt_seq(&g, e[i].rpt_seq);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_number_of_orders(&g, e[i].orders);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_price_level(&g, e[i].level);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_update_action(&g, e[i].action);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_entry_type(&g, e[i].type);
    }
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_order_id_entries_wrap_for_encode(
                         &m, &oe, n_orders),
                     0);
    for (uint32_t i = 0; i < n_orders; i++) {
        mktdata_md_incremental_refresh_book46_no_order_id_entries_next(&oe);
        mktdata_md_incremental_refresh_book46_no_order_id_entries_set_order_id(&oe, o[i].id);
        mktdata_md_incremental_refresh_book46_no_order_id_entries_set_md_order_priority(&oe,
                                                                                        o[i].id);
        mktdata_md_incremental_refresh_book46_no_order_id_entries_set_md_display_qty(&oe, o[i].qty);
        mktdata_md_incremental_refresh_book46_no_order_id_entries_set_reference_id(&oe, o[i].refid);
        mktdata_md_incremental_refresh_book46_no_order_id_entries_set_order_update_action(
            &oe, o[i].action);
    }
    assert_int_equal(
        tp_mdp3_writer_commit(&f->w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                         mktdata_md_incremental_refresh_book46_encoded_length(&m)),
        0);
}

static void add_book46(struct fixture *f, uint8_t mei, const struct entry *e, uint32_t n)
{
    add_book46_orders(f, mei, e, n, NULL, 0);
}

/* Message 47: bid order entries of instrument secid at `price`. */
static void add_order_book47(struct fixture *f, int32_t secid, int64_t price, const struct order *o,
                             uint32_t n)
{
    struct mktdata_md_incremental_refresh_order_book47 m;
    struct mktdata_md_incremental_refresh_order_book47_no_md_entries g;
    size_t room;
    uint8_t *dst = tp_mdp3_writer_reserve(&f->w, &room);

    assert_non_null(dst);
    assert_int_equal(
        mktdata_md_incremental_refresh_order_book47_wrap_and_apply_header(&m, dst, room), 0);
    mktdata_md_incremental_refresh_order_book47_set_match_event_indicator(&m, EOE);
    assert_int_equal(
        mktdata_md_incremental_refresh_order_book47_no_md_entries_wrap_for_encode(&m, &g, n), 0);
    for (uint32_t i = 0; i < n; i++) {
        mktdata_md_incremental_refresh_order_book47_no_md_entries_next(&g);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_order_id(&g, o[i].id);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_order_priority(&g,
                                                                                        o[i].id);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_entry_px_mantissa(&g,
                                                                                           price);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_display_qty(&g, o[i].qty);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_security_id(&g, secid);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_update_action(&g,
                                                                                       o[i].action);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_entry_type(&g, '0');
    }
    assert_int_equal(tp_mdp3_writer_commit(
                         &f->w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                    mktdata_md_incremental_refresh_order_book47_encoded_length(&m)),
                     0);
}

static void add_snapshot52(struct fixture *f, int32_t secid, uint32_t rpt_seq,
                           const struct entry *e, uint32_t n)
{
    struct mktdata_snapshot_full_refresh52 m;
    struct mktdata_snapshot_full_refresh52_no_md_entries g;
    size_t room;
    uint8_t *dst = tp_mdp3_writer_reserve(&f->w, &room);

    assert_non_null(dst);
    assert_int_equal(mktdata_snapshot_full_refresh52_wrap_and_apply_header(&m, dst, room), 0);
    mktdata_snapshot_full_refresh52_set_security_id(&m, secid);
    mktdata_snapshot_full_refresh52_set_rpt_seq(&m, rpt_seq);
    mktdata_snapshot_full_refresh52_set_md_security_trading_status(&m, 17);
    mktdata_snapshot_full_refresh52_set_high_limit_price_mantissa(&m, INT64_MAX);
    mktdata_snapshot_full_refresh52_set_low_limit_price_mantissa(&m, INT64_MAX);
    mktdata_snapshot_full_refresh52_set_max_price_variation_mantissa(&m, INT64_MAX);
    assert_int_equal(mktdata_snapshot_full_refresh52_no_md_entries_wrap_for_encode(&m, &g, n), 0);
    for (uint32_t i = 0; i < n; i++) {
        mktdata_snapshot_full_refresh52_no_md_entries_next(&g);
        mktdata_snapshot_full_refresh52_no_md_entries_set_md_entry_px_mantissa(&g, e[i].price);
        mktdata_snapshot_full_refresh52_no_md_entries_set_md_entry_size(&g, e[i].size);
        mktdata_snapshot_full_refresh52_no_md_entries_set_number_of_orders(&g, e[i].orders);
        mktdata_snapshot_full_refresh52_no_md_entries_set_md_price_level(&g, (int8_t)e[i].level);
        mktdata_snapshot_full_refresh52_no_md_entries_set_md_entry_type(&g, e[i].type);
    }
    assert_int_equal(
        tp_mdp3_writer_commit(&f->w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                         mktdata_snapshot_full_refresh52_encoded_length(&m)),
        0);
}

/* An order of an order-level snapshot (priority: its id, as the incremental helpers give it). */
struct book_order {
    uint64_t id;
    char type; /* '0' bid, '1' ask */
    int64_t price;
    int32_t qty;
};

/* One chunk of an order-level snapshot (53). */
static void add_snapshot53(struct fixture *f, int32_t secid, uint32_t last_seq, uint32_t chunk,
                           uint32_t chunks, const struct book_order *o, uint32_t n)
{
    struct mktdata_snapshot_full_refresh_order_book53 m;
    struct mktdata_snapshot_full_refresh_order_book53_no_md_entries g;
    size_t room;
    uint8_t *dst = tp_mdp3_writer_reserve(&f->w, &room);

    assert_non_null(dst);
    assert_int_equal(
        mktdata_snapshot_full_refresh_order_book53_wrap_and_apply_header(&m, dst, room), 0);
    mktdata_snapshot_full_refresh_order_book53_set_last_msg_seq_num_processed(&m, last_seq);
    mktdata_snapshot_full_refresh_order_book53_set_security_id(&m, secid);
    mktdata_snapshot_full_refresh_order_book53_set_no_chunks(&m, chunks);
    mktdata_snapshot_full_refresh_order_book53_set_current_chunk(&m, chunk);
    assert_int_equal(
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_wrap_for_encode(&m, &g, n), 0);
    for (uint32_t i = 0; i < n; i++) {
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_next(&g);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_order_id(&g, o[i].id);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_order_priority(&g, o[i].id);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_entry_px_mantissa(
            &g, o[i].price);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_display_qty(&g, o[i].qty);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_entry_type(&g, o[i].type);
    }
    assert_int_equal(tp_mdp3_writer_commit(
                         &f->w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                    mktdata_snapshot_full_refresh_order_book53_encoded_length(&m)),
                     0);
}

static void add_channel_reset(struct fixture *f)
{
    struct mktdata_channel_reset4 m;
    struct mktdata_channel_reset4_no_md_entries g;
    size_t room;
    uint8_t *dst = tp_mdp3_writer_reserve(&f->w, &room);

    assert_int_equal(mktdata_channel_reset4_wrap_and_apply_header(&m, dst, room), 0);
    mktdata_channel_reset4_set_match_event_indicator(&m, EOE);
    assert_int_equal(mktdata_channel_reset4_no_md_entries_wrap_for_encode(&m, &g, 1), 0);
    mktdata_channel_reset4_no_md_entries_next(&g);
    assert_int_equal(tp_mdp3_writer_commit(&f->w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                                      mktdata_channel_reset4_encoded_length(&m)),
                     0);
}

/* SecurityStatus30 for a security group (SecurityID null) or one instrument. */
static void add_security_status(struct fixture *f, int32_t secid, const char *group, uint8_t status)
{
    struct mktdata_security_status30 m;
    size_t room;
    uint8_t *dst = tp_mdp3_writer_reserve(&f->w, &room);

    assert_non_null(dst);
    assert_int_equal(mktdata_security_status30_wrap_and_apply_header(&m, dst, room), 0);
    mktdata_security_status30_set_security_group(&m, group, strlen(group));
    mktdata_security_status30_set_security_id(&m, secid);
    mktdata_security_status30_set_security_trading_status(&m, status);
    mktdata_security_status30_set_match_event_indicator(&m, EOE);
    assert_int_equal(tp_mdp3_writer_commit(&f->w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                                      mktdata_security_status30_encoded_length(&m)),
                     0);
}

/* ---- fixture ------------------------------------------------------------------------------ */

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    f->transact_time = 5;
    struct tp_feed_sink sink = {.ctx = &f->log,
                                .changes = on_changes,
                                .end_of_event = on_event,
                                .instrument = on_instrument,
                                .stale = on_stale};

    f->reg = test_registry(8, 0);
    f->books = test_books(8, 64, 16, 10, 2);
    f->state = test_zalloc(tp_mdp3_feed_memsize(8));
    tp_instrument_filter_init(&f->filter);
    assert_int_equal(tp_instrument_filter_parse(&f->filter, "exclude:group:XX"), 0);
    assert_int_equal(tp_mdp3_feed_init(&f->feed, f->state, f->reg, f->books, &f->filter, 310,
                                       TP_BOOK_TYPE_MBP, &sink),
                     0);
    /* Two instruments kept, one filtered out by its security group. */
    packet_begin(f);
    add_definition(f, 1001, "ESZ6", "ES", 5);
    add_definition(f, 1002, "NQZ6", "NQ", 10);
    add_definition(f, 1003, "XXZ6", "XX", 10);
    assert_int_equal(packet_send(f), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;

    free(f->reg);
    free(f->books);
    free(f->state);
    free(f);
    return 0;
}

static int64_t best(struct fixture *f, uint32_t instr, enum tp_side side, int64_t *qty)
{
    struct tp_level lv;

    if (tp_books_level(f->books, instr, TP_BOOK_DIRECT, side, 1, &lv) != 0)
        return -1;
    *qty = lv.qty;
    return lv.price;
}

/* ---- tests -------------------------------------------------------------------------------- */

/* RptSeq 1 of ES (SecurityID 1001: 10 @ 4000 bid) and NQ (1002: 3 @ 15000 bid), one packet. */
static void send_first_bids(struct fixture *f)
{
    packet_begin(f);
    add_book46(f, EOE,
               (struct entry[]){{1001, 1, 1, TP_LEVEL_NEW, '0', PX(4000), 10, 2},
                                {1002, 1, 1, TP_LEVEL_NEW, '0', PX(15000), 3, 1}},
               2);
    assert_int_equal(packet_send(f), 0);
}

static void test_definitions(void **state)
{
    struct fixture *f = *state;
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    const struct tp_instrument *in = tp_instruments_get(f->reg, es);

    assert_int_equal(f->feed.counters.definitions, 2);
    assert_int_equal(f->feed.counters.filtered, 1);
    assert_int_equal(f->log.instruments, 2);
    assert_int_equal(tp_instruments_by_security_id(f->reg, 1003), TP_INSTRUMENT_NONE);
    assert_non_null(in);
    assert_string_equal(in->symbol, "ESZ6");
    assert_string_equal(in->security_group, "ES");
    assert_int_equal(in->market_depth, 5);
    assert_int_equal(in->implied_depth, 2);
    assert_int_equal(in->tick, PX(0.25));
    assert_int_equal(in->channel, 310);
    assert_int_equal(in->trading_status, TP_STATUS_OPEN);
    assert_int_equal(tp_books_get(f->books, es)->depth, 5);
    assert_int_equal(tp_instruments_by_symbol(f->reg, TP_VENUE_CME_MDP3, "NQZ6", 4),
                     tp_instruments_by_security_id(f->reg, 1002));
    /* A halt, then the definition loop repeats ESZ6 as "ready to trade": the halt stands. */
    packet_begin(f);
    add_snapshot52(f, 1001, 1, NULL, 0);
    assert_int_equal(packet_send(f), 0);
    tp_books_status(f->books, es, TP_STATUS_HALTED,
                    (struct tp_book_change[TP_BOOK_CHANGES_MAX]){0});
    tp_instruments_get(f->reg, es)->trading_status = TP_STATUS_HALTED;
    packet_begin(f);
    add_definition(f, 1001, "ESZ6", "ES", 5);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(tp_books_get(f->books, es)->status, TP_STATUS_HALTED);
    assert_int_equal(tp_instruments_get(f->reg, es)->trading_status, TP_STATUS_HALTED);
}

static void test_end_of_event_and_levels(void **state)
{
    struct fixture *f = *state;
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    int64_t qty;

    f->log.events = 0;
    f->log.changes = 0;
    packet_begin(f);
    /* One event over two messages: the end-of-event mark is on the second only. */
    add_book46(f, 0,
               (struct entry[]){{1001, 1, 1, TP_LEVEL_NEW, '0', PX(4000), 10, 2},
                                {1001, 2, 1, TP_LEVEL_NEW, '1', PX(4000.25), 7, 1}},
               2);
    add_book46(f, EOE, (struct entry[]){{1001, 3, 1, TP_LEVEL_NEW, 'E', PX(3999.75), 4, 0}}, 1);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->log.events, 1);
    assert_int_equal(f->log.changes, 3);
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), PX(4000));
    assert_int_equal(qty, 10);
    assert_int_equal(best(f, es, TP_SIDE_ASK, &qty), PX(4000.25));
    assert_int_equal(tp_books_levels(f->books, es, TP_BOOK_IMPLIED, TP_SIDE_BID), 1);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, es)->rpt_seq, 3);
}

static void test_rpt_seq_gap_makes_only_that_instrument_stale(void **state)
{
    struct fixture *f = *state;
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    uint32_t nq = tp_instruments_by_security_id(f->reg, 1002);
    int64_t qty;

    send_first_bids(f);
    /* RptSeq 2 of ES is lost: 3 arrives. NQ goes on normally in the same message. */
    packet_begin(f);
    add_book46(f, EOE,
               (struct entry[]){{1001, 3, 1, TP_LEVEL_CHANGE, '0', PX(4000), 99, 2},
                                {1002, 2, 1, TP_LEVEL_CHANGE, '0', PX(15000), 5, 1}},
               2);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->log.stale_on, 1);
    assert_int_equal(f->log.last_stale_instrument, es);
    assert_int_equal(f->log.expected, 2);
    assert_int_equal(f->log.got, 3);
    assert_true(tp_mdp3_feed_state(&f->feed, es)->stale);
    assert_false(tp_mdp3_feed_state(&f->feed, nq)->stale);
    best(f, es, TP_SIDE_BID, &qty);
    assert_int_equal(qty, 10); /* the entry after the gap was not applied */
    best(f, nq, TP_SIDE_BID, &qty);
    assert_int_equal(qty, 5);
    /* While stale, entries are skipped. */
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1001, 4, 1, TP_LEVEL_CHANGE, '0', PX(4000), 1, 1}}, 1);
    packet_send(f);
    best(f, es, TP_SIDE_BID, &qty);
    assert_int_equal(qty, 10);
    assert_int_equal(f->feed.counters.stale_skipped, 2);
    /* An old snapshot (RptSeq 4, as seen) recovers it; then RptSeq 5 applies. */
    packet_begin(f);
    add_snapshot52(f, 1001, 4,
                   (struct entry[]){{0, 0, 2, 0, '0', PX(3999.75), 8, 1},
                                    {0, 0, 1, 0, '0', PX(4000), 50, 3},
                                    {0, 0, 1, 0, '1', PX(4000.5), 6, 1}},
                   3);
    assert_int_equal(packet_send(f), 0);
    assert_false(tp_mdp3_feed_state(&f->feed, es)->stale);
    assert_int_equal(f->log.stale_off, 1);
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), PX(4000));
    assert_int_equal(qty, 50);
    assert_int_equal(tp_books_levels(f->books, es, TP_BOOK_DIRECT, TP_SIDE_BID), 2);
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1001, 5, 1, TP_LEVEL_DELETE, '0', PX(4000), 0, 0}}, 1);
    packet_send(f);
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), PX(3999.75));
    /* A snapshot older than an in-sync book is ignored. */
    packet_begin(f);
    add_snapshot52(f, 1001, 3, (struct entry[]){{0, 0, 1, 0, '0', PX(1), 1, 1}}, 1);
    packet_send(f);
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), PX(3999.75));
    assert_int_equal(f->feed.counters.snapshots_old, 1);
}

static void test_duplicates_and_unknown_instruments(void **state)
{
    struct fixture *f = *state;
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    int64_t qty;

    packet_begin(f);
    add_book46(f, EOE,
               (struct entry[]){{1001, 1, 1, TP_LEVEL_NEW, '0', PX(4000), 10, 2},
                                {1003, 1, 1, TP_LEVEL_NEW, '0', PX(1), 1, 1},
                                {7777, 1, 1, TP_LEVEL_NEW, '0', PX(1), 1, 1}},
               3);
    assert_int_equal(packet_send(f), 0);
    /* The same packet again (the other line): every entry is at or below its RptSeq. */
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->feed.counters.duplicates, 1);
    assert_int_equal(f->feed.counters.unknown_instrument, 4);
    best(f, es, TP_SIDE_BID, &qty);
    assert_int_equal(qty, 10);
    assert_int_equal(tp_books_levels(f->books, es, TP_BOOK_ORDERS, TP_SIDE_BID), 0);
}

static void test_channel_reset_clears_books(void **state)
{
    struct fixture *f = *state;
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    int64_t qty;

    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1001, 1, 1, TP_LEVEL_NEW, '0', PX(4000), 10, 2}}, 1);
    packet_send(f);
    packet_begin(f);
    add_channel_reset(f);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->feed.counters.channel_resets, 1);
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), -1);
    /* RptSeq restarts: 1 is accepted again. */
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1001, 1, 1, TP_LEVEL_NEW, '0', PX(4001), 3, 1}}, 1);
    packet_send(f);
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), PX(4001));
}

static void test_malformed_packets_counted(void **state)
{
    struct fixture *f = *state;
    uint64_t before = f->feed.counters.malformed;

    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1001, 1, 1, TP_LEVEL_NEW, '0', PX(4000), 10, 2}}, 1);
    /*
     * Every truncation of the packet (copied to a buffer of exactly that length, so ASan sees
     * any read beyond it) is counted; only the bare packet header is a valid, empty packet.
     */
    for (size_t len = 0; len < f->w.len; len++) {
        uint8_t *copy = malloc(len ? len : 1);
        memcpy(copy, f->pkt, len);
        assert_int_equal(tp_mdp3_feed_packet(&f->feed, copy, len, 0),
                         len == TP_MDP3_PACKET_HEADER_LEN ? 0 : -EBADMSG);
        free(copy);
    }
    assert_int_equal(f->feed.counters.malformed, before + f->w.len - 1);
}

/* The feed made an MBP_MBO one with `sink`, and CL (SecurityID 2001, depth 10) defined: its id. */
static uint32_t start_cl(struct fixture *f, const struct tp_feed_sink *sink)
{
    assert_int_equal(tp_mdp3_feed_init(&f->feed, f->state, f->reg, f->books, NULL, 310,
                                       TP_BOOK_TYPE_MBP_MBO, sink),
                     0);
    packet_begin(f);
    add_definition(f, 2001, "CLZ6", "CL", 10);
    assert_int_equal(packet_send(f), 0);
    uint32_t cl = tp_instruments_by_security_id(f->reg, 2001);
    assert_int_not_equal(cl, TP_INSTRUMENT_NONE);
    return cl;
}

/*
 * Order-level books (MBP_MBO): the order entries of 46 (through their ReferenceID) and 47 are
 * applied, whatever the prefetch pass over the packet does first; an entry naming a missing
 * ReferenceID, and one of an unknown SecurityID, are counted and skipped without harm.
 */
static void test_order_entries_with_mbo(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_sink sink = {.ctx = &f->log, .changes = on_changes, .end_of_event = on_event};
    uint32_t cl = start_cl(f, &sink);

    const struct order first[] = {{.id = 901, .qty = 4, .refid = 1},
                                  {.id = 902, .qty = 6, .refid = 1},
                                  {.id = 903, .qty = 1, .refid = 7}}; /* no such entry */
    const struct order second[] = {{.id = 904, .qty = 5}, {.id = 901, .action = 2}};
    packet_begin(f);
    const struct entry level = {.secid = 2001,
                                .rpt_seq = 1,
                                .level = 1,
                                .action = 0,
                                .type = '0',
                                .price = PX(70.25),
                                .size = 10,
                                .orders = 2};
    add_book46_orders(f, EOE, &level, 1, first, 3);
    add_order_book47(f, 2001, PX(70.00), second, 2);
    add_order_book47(f, 4242, PX(70.00), second, 1); /* unknown instrument */
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->feed.counters.rejected, 1);
    assert_int_equal(f->feed.counters.unknown_instrument, 1);
    /* Orders 902 (6 @ 70.25) and 904 (5 @ 70.00) are left: two order levels on the bid. */
    struct tp_level lv[4];
    assert_int_equal(tp_books_copy_levels(f->books, cl, TP_BOOK_ORDERS, TP_SIDE_BID, lv, 4), 2);
    int64_t total = lv[0].qty + lv[1].qty;
    assert_int_equal(total, 11);

    /* Order entries alternating between CL and ES, whose book (defined by setup's MBP feed)
     * keeps no orders: CL's are kept, ES's skipped, none refused. */
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    const struct entry levels[] = {
        {2001, 2, 2, TP_LEVEL_NEW, '0', PX(70.10), 3, 2},
        {1001, 1, 1, TP_LEVEL_NEW, '0', PX(4000), 10, 2},
    };
    const struct order mixed[] = {{.id = 911, .qty = 1, .refid = 1},
                                  {.id = 912, .qty = 1, .refid = 2},
                                  {.id = 913, .qty = 2, .refid = 1},
                                  {.id = 914, .qty = 1, .refid = 2}};
    packet_begin(f);
    add_book46_orders(f, EOE, levels, 2, mixed, 4);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->feed.counters.rejected, 1);
    assert_int_equal(tp_books_orders(f->books, cl), 4);
    assert_int_equal(tp_books_orders(f->books, es), 0);
    int64_t qty;
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), PX(4000));
    assert_int_equal(qty, 10);
}

/* ---- bursts ------------------------------------------------------------------------------- */

#define BURST_PACKETS 10

/* What the per-packet feed looked like after each packet, and what the burst's callback saw. */
struct burst_trace {
    struct tp_mdp3_feed *feed;
    uint32_t es;
    uint32_t calls;
    const uint8_t *data[BURST_PACKETS];
    int rc[BURST_PACKETS];
    uint64_t packets[BURST_PACKETS], stale_skipped[BURST_PACKETS];
    struct tp_mdp3_instrument_state es_state[BURST_PACKETS];
};

static void trace_packet(struct burst_trace *t, const uint8_t *data, int rc)
{
    uint32_t i = t->calls++;

    assert_true(i < BURST_PACKETS);
    t->data[i] = data;
    t->rc[i] = rc;
    t->packets[i] = t->feed->counters.packets;
    t->stale_skipped[i] = t->feed->counters.stale_skipped;
    t->es_state[i] = *tp_mdp3_feed_state(t->feed, t->es);
}

static void on_applied(void *ctx, const struct tp_mdp3_feed_pkt *pkt, int rc)
{
    trace_packet(ctx, pkt->data, rc);
}

/* Keeps the packet just built as pkts[n] (in bufs[n]). */
static void keep_packet(struct fixture *f, uint8_t bufs[][1400], struct tp_mdp3_feed_pkt *pkts,
                        uint32_t n)
{
    memcpy(bufs[n], f->pkt, f->w.len);
    pkts[n] = (struct tp_mdp3_feed_pkt){.data = bufs[n], .len = f->w.len, .rx_tsc = 100 + n};
}

/*
 * A burst applies exactly as its packets one by one: a RptSeq gap (stale), the other line's
 * copy, entries skipped while stale, a snapshot recovering the instrument, a truncated packet,
 * a channel reset and RptSeq restarting after it. Same counters, sink calls and books; the
 * callback comes after each packet, before the next is applied, with the packet's result.
 */
static void test_burst_equals_packets(void **state)
{
    struct fixture *f = *state, *g;
    static uint8_t bufs[BURST_PACKETS][1400];
    struct tp_mdp3_feed_pkt pkts[BURST_PACKETS];
    uint32_t n = 0;

    assert_int_equal(setup((void **)&g), 0);
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    uint32_t nq = tp_instruments_by_security_id(f->reg, 1002);
    assert_int_equal(tp_instruments_by_security_id(g->reg, 1001), es);
    packet_begin(f);
    add_book46(f, EOE,
               (struct entry[]){{1001, 1, 1, TP_LEVEL_NEW, '0', PX(4000), 10, 2},
                                {1002, 1, 1, TP_LEVEL_NEW, '1', PX(15000), 3, 1}},
               2);
    keep_packet(f, bufs, pkts, n++);
    packet_begin(f); /* ES RptSeq 2 lost */
    add_book46(f, EOE,
               (struct entry[]){{1001, 3, 1, TP_LEVEL_CHANGE, '0', PX(4000), 99, 2},
                                {1002, 2, 2, TP_LEVEL_NEW, '1', PX(15001), 4, 1}},
               2);
    keep_packet(f, bufs, pkts, n++);
    keep_packet(f, bufs, pkts, n++); /* the other line's copy */
    packet_begin(f);
    add_book46(f, 0, (struct entry[]){{1001, 4, 1, TP_LEVEL_CHANGE, '0', PX(4000), 1, 1}}, 1);
    add_book46(f, EOE, (struct entry[]){{1002, 3, 1, TP_LEVEL_DELETE, '1', PX(15000), 0, 0}}, 1);
    keep_packet(f, bufs, pkts, n++);
    packet_begin(f);
    add_snapshot52(f, 1001, 4, (struct entry[]){{0, 0, 1, 0, '0', PX(3999), 7, 1}}, 1);
    keep_packet(f, bufs, pkts, n++);
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1001, 5, 2, TP_LEVEL_NEW, '0', PX(3998), 2, 1}}, 1);
    keep_packet(f, bufs, pkts, n++);
    pkts[n - 1].len -= 3; /* truncated: counted, the rest of the packet skipped */
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1001, 5, 1, TP_LEVEL_CHANGE, '0', PX(3999), 9, 2}}, 1);
    keep_packet(f, bufs, pkts, n++);
    packet_begin(f);
    add_channel_reset(f);
    keep_packet(f, bufs, pkts, n++);
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1001, 1, 1, TP_LEVEL_NEW, '0', PX(4001), 3, 1}}, 1);
    keep_packet(f, bufs, pkts, n++);
    assert_int_equal(n, 9);

    struct burst_trace one = {.feed = &f->feed, .es = es}, burst = {.feed = &g->feed, .es = es};
    uint32_t bad = 0;
    for (uint32_t i = 0; i < n; i++) {
        int rc = tp_mdp3_feed_packet(&f->feed, pkts[i].data, pkts[i].len, pkts[i].rx_tsc);
        bad += rc < 0;
        trace_packet(&one, pkts[i].data, rc);
    }
    assert_int_equal(bad, 1);
    assert_int_equal(tp_mdp3_feed_burst(&g->feed, pkts, n, on_applied, &burst), 1);

    /* Per packet: same result, in order, with the feed exactly as after that packet alone. */
    assert_int_equal(burst.calls, n);
    for (uint32_t i = 0; i < n; i++) {
        assert_ptr_equal(burst.data[i], pkts[i].data);
        assert_int_equal(burst.rc[i], one.rc[i]);
        assert_int_equal(burst.packets[i], one.packets[i]);
        assert_int_equal(burst.packets[i], i + 2); /* and setup's definitions packet */
        assert_int_equal(burst.stale_skipped[i], one.stale_skipped[i]);
        assert_memory_equal(&burst.es_state[i], &one.es_state[i], sizeof(one.es_state[i]));
    }
    assert_true(one.es_state[1].stale && one.es_state[3].stale && !one.es_state[4].stale);
    /* The whole run: counters, sink calls and every level of both books. */
    assert_memory_equal(&g->feed.counters, &f->feed.counters, sizeof(f->feed.counters));
    assert_memory_equal(&g->log, &f->log, sizeof(f->log));
    assert_int_equal(f->feed.counters.rpt_seq_gaps, 1);
    assert_int_equal(f->feed.counters.channel_resets, 1);
    for (uint32_t id = es; id <= nq; id++)
        for (int side = TP_SIDE_BID; side <= TP_SIDE_ASK; side++) {
            struct tp_level a[10], b[10];
            uint32_t k = tp_books_copy_levels(f->books, id, TP_BOOK_DIRECT, side, a, 10);
            assert_int_equal(tp_books_copy_levels(g->books, id, TP_BOOK_DIRECT, side, b, 10), k);
            assert_memory_equal(a, b, k * sizeof(a[0]));
        }
    int64_t qty;
    assert_int_equal(best(g, es, TP_SIDE_BID, &qty), PX(4001));
    assert_int_equal(qty, 3);
    teardown((void **)&g);
}

/*
 * A packet of 20 messages, its last one truncated: the 19 before it are applied in order, alone
 * or second in a burst (walked by the prefetch pass while the first is applied), and the
 * truncation is counted once. (A per-burst array of framed messages must not drop the ones it
 * has no room for.)
 */
static void test_packet_of_many_messages(void **state)
{
    struct fixture *f = *state, *g;
    static uint8_t bufs[2][1400];
    struct tp_mdp3_feed_pkt pkts[2];
    int64_t qty;

    assert_int_equal(setup((void **)&g), 0);
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1002, 1, 1, TP_LEVEL_NEW, '1', PX(15000), 3, 1}}, 1);
    keep_packet(f, bufs, pkts, 0);
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1001, 1, 1, TP_LEVEL_NEW, '0', PX(4000), 1, 1}}, 1);
    for (uint32_t k = 2; k <= 20; k++)
        add_book46(f, EOE,
                   (struct entry[]){{1001, k, 1, TP_LEVEL_CHANGE, '0', PX(4000), (int32_t)k, 1}},
                   1);
    keep_packet(f, bufs, pkts, 1);
    pkts[1].len -= 1; /* the 20th message's MsgSize now exceeds the packet */

    uint64_t messages = f->feed.counters.messages, events = f->feed.counters.events;
    uint64_t malformed = f->feed.counters.malformed;
    assert_int_equal(tp_mdp3_feed_packet(&f->feed, pkts[1].data, pkts[1].len, 0), -EBADMSG);
    assert_int_equal(f->feed.counters.messages - messages, 19);
    assert_int_equal(f->feed.counters.events - events, 19);
    assert_int_equal(f->feed.counters.malformed - malformed, 1);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, es)->rpt_seq, 19);
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), PX(4000));
    assert_int_equal(qty, 19);

    messages = g->feed.counters.messages;
    assert_int_equal(tp_mdp3_feed_burst(&g->feed, pkts, 2, NULL, NULL), 1);
    assert_int_equal(g->feed.counters.messages - messages, 20);
    assert_int_equal(tp_mdp3_feed_state(&g->feed, es)->rpt_seq, 19);
    assert_int_equal(best(g, es, TP_SIDE_BID, &qty), PX(4000));
    assert_int_equal(qty, 19);
    teardown((void **)&g);
}

/*
 * A SecurityID unknown when the burst starts (its entries counted and skipped, the prefetch
 * pass of the packets ahead finding nothing) is found once a definition in the same burst
 * defines it: the feed remembers only SecurityIDs it found. Entries alternating between two
 * instruments reach each one's own book.
 */
static void test_instrument_defined_within_a_burst(void **state)
{
    struct fixture *f = *state;
    static uint8_t bufs[3][1400];
    struct tp_mdp3_feed_pkt pkts[3];
    int64_t qty;

    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1004, 1, 1, TP_LEVEL_NEW, '0', PX(70), 1, 1}}, 1);
    keep_packet(f, bufs, pkts, 0);
    packet_begin(f);
    add_definition(f, 1004, "CLZ6", "CL", 5);
    keep_packet(f, bufs, pkts, 1);
    packet_begin(f);
    add_book46(f, EOE,
               (struct entry[]){{1004, 2, 1, TP_LEVEL_NEW, '0', PX(71), 5, 1},
                                {1001, 1, 1, TP_LEVEL_NEW, '0', PX(4000), 10, 2},
                                {1004, 3, 1, TP_LEVEL_NEW, '1', PX(72), 6, 1},
                                {1001, 2, 1, TP_LEVEL_NEW, '1', PX(4001), 11, 2}},
               4);
    keep_packet(f, bufs, pkts, 2);
    assert_int_equal(tp_mdp3_feed_burst(&f->feed, pkts, 3, NULL, NULL), 0);
    assert_int_equal(f->feed.counters.unknown_instrument, 1);
    uint32_t cl = tp_instruments_by_security_id(f->reg, 1004);
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    assert_int_not_equal(cl, TP_INSTRUMENT_NONE);
    assert_int_equal(best(f, cl, TP_SIDE_BID, &qty), PX(71));
    assert_int_equal(qty, 5);
    assert_int_equal(best(f, cl, TP_SIDE_ASK, &qty), PX(72));
    assert_int_equal(qty, 6);
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), PX(4000));
    assert_int_equal(qty, 10);
    assert_int_equal(best(f, es, TP_SIDE_ASK, &qty), PX(4001));
    assert_int_equal(qty, 11);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, cl)->rpt_seq, 3);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, es)->rpt_seq, 2);
}

/*
 * The second packet of a burst gets its prefetch pass before the first is applied. A definition
 * and entries of its instrument in the first packet, and more in the second: the prefetch pass
 * misses the instrument, and the apply pass, once the definition is applied, finds it (a miss is
 * never taken as found: not remembered, not handed on).
 */
static void test_prefetch_miss_then_defined(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_sink sink = {.ctx = &f->log, .changes = on_changes, .end_of_event = on_event};
    static uint8_t bufs[2][1400];
    struct tp_mdp3_feed_pkt pkts[2];
    int64_t qty;

    assert_int_equal(tp_mdp3_feed_init(&f->feed, f->state, f->reg, f->books, NULL, 310,
                                       TP_BOOK_TYPE_MBP_MBO, &sink),
                     0);
    const struct order first[] = {{.id = 950, .qty = 4, .refid = 1}};
    const struct order second[] = {{.id = 951, .qty = 2}};
    packet_begin(f);
    add_definition(f, 2001, "CLZ6", "CL", 10);
    add_book46_orders(f, EOE, (struct entry[]){{2001, 1, 1, TP_LEVEL_NEW, '0', PX(70), 4, 1}}, 1,
                      first, 1);
    add_order_book47(f, 2001, PX(69), second, 1);
    keep_packet(f, bufs, pkts, 0);
    packet_begin(f);
    add_book46(f, EOE,
               (struct entry[]){{2001, 2, 1, TP_LEVEL_CHANGE, '0', PX(70), 9, 2},
                                {1001, 1, 1, TP_LEVEL_NEW, '1', PX(4001), 3, 1}},
               2);
    /* A 47 between two 46 entries of other instruments: each entry reaches its own. */
    add_order_book47(f, 1001, PX(4000), second, 1);
    add_book46(f, EOE, (struct entry[]){{1002, 1, 1, TP_LEVEL_NEW, '1', PX(15000), 5, 1}}, 1);
    keep_packet(f, bufs, pkts, 1);
    assert_int_equal(tp_instruments_by_security_id(f->reg, 2001), TP_INSTRUMENT_NONE);
    assert_int_equal(tp_mdp3_feed_burst(&f->feed, pkts, 2, NULL, NULL), 0);
    uint32_t cl = tp_instruments_by_security_id(f->reg, 2001);
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    assert_int_not_equal(cl, TP_INSTRUMENT_NONE);
    assert_int_equal(f->feed.counters.unknown_instrument, 0);
    assert_int_equal(f->feed.counters.rejected, 0);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, cl)->rpt_seq, 2);
    assert_int_equal(best(f, cl, TP_SIDE_BID, &qty), PX(70));
    assert_int_equal(qty, 9);
    assert_int_equal(tp_books_orders(f->books, cl), 2);
    assert_int_equal(best(f, es, TP_SIDE_ASK, &qty), PX(4001));
    assert_int_equal(qty, 3);
    uint32_t nq = tp_instruments_by_security_id(f->reg, 1002);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, nq)->rpt_seq, 1);
    assert_int_equal(best(f, nq, TP_SIDE_ASK, &qty), PX(15000));
    assert_int_equal(qty, 5);
}

/*
 * The prefetch pass keeps a line for each order entry that looks up a resting order (Change,
 * Delete: 47 and 46 by ReferenceID), none for a New nor for the first packet (no pass), and the
 * burst leaves the ring empty; the orders are applied all the same. A burst of adds (first
 * packet), a packet of adds and changes, and two of deletes (47, then 46 order entries).
 */
static void test_order_hints_kept_for_resting_orders(void **state)
{
    struct fixture *f = *state;
    static uint8_t bufs[4][1400];
    struct tp_mdp3_feed_pkt pkts[4];
    struct order adds[20], more[20], dels[20];
    const struct entry level = {2001, 1, 1, TP_LEVEL_NEW, '0', PX(70), 1, 1};

    assert_int_equal(tp_mdp3_feed_init(&f->feed, f->state, f->reg, f->books, NULL, 310,
                                       TP_BOOK_TYPE_MBP_MBO, NULL),
                     0);
    packet_begin(f);
    add_definition(f, 2001, "CLZ6", "CL", 10);
    assert_int_equal(packet_send(f), 0);
    uint32_t cl = tp_instruments_by_security_id(f->reg, 2001);
    for (uint32_t i = 0; i < 20; i++) {
        adds[i] = (struct order){.id = 100 + i, .qty = 1};
        /* 10 News, 10 Changes of the first adds. */
        more[i] = i < 10 ? (struct order){.id = 200 + i, .qty = 1}
                         : (struct order){.id = 100 + i - 10, .qty = 2, .action = 1};
        dels[i] = (struct order){.id = 100 + i, .action = 2, .refid = 1};
    }
    packet_begin(f);
    add_order_book47(f, 2001, PX(70), adds, 20);
    keep_packet(f, bufs, pkts, 0);
    packet_begin(f);
    add_order_book47(f, 2001, PX(70), more, 20);
    keep_packet(f, bufs, pkts, 1);
    packet_begin(f);
    add_order_book47(f, 2001, PX(70), dels, 12);
    keep_packet(f, bufs, pkts, 2);
    packet_begin(f);
    add_book46_orders(f, EOE, &level, 1, dels + 12, 8);
    keep_packet(f, bufs, pkts, 3);
    assert_int_equal(tp_mdp3_feed_burst(&f->feed, pkts, 4, NULL, NULL), 0);
    assert_int_equal(f->feed.hint_head, 10 + 12 + 8);
    assert_int_equal(f->feed.hint_tail, f->feed.hint_head);
    assert_int_equal(f->feed.counters.rejected, 0);
    /* Left: the 10 adds of the second packet, and the level 46 made. */
    assert_int_equal(tp_books_orders(f->books, cl), 10);
}

/*
 * n packets of one entry each for instrument secid at level 1 of `type`'s side: RptSeq 1..n, the
 * level new and then changed, sizes size0, size0 + 1, ...
 */
static void keep_entries(struct fixture *f, uint8_t bufs[][1400], struct tp_mdp3_feed_pkt *pkts,
                         uint32_t n, int32_t secid, char type, int64_t price, int32_t size0)
{
    for (uint32_t i = 0; i < n; i++) {
        packet_begin(f);
        add_book46(f, EOE,
                   (struct entry[]){{secid, i + 1, 1, i ? TP_LEVEL_CHANGE : TP_LEVEL_NEW, type,
                                     price, size0 + (int32_t)i, 1}},
                   1);
        keep_packet(f, bufs, pkts, i);
    }
}

/*
 * The first packet of a burst gets no prefetch pass, and 47 is not walked by it: the first packet
 * of a second burst (NQ) takes nothing the previous burst's prefetch pass found (ES), and the 46
 * entries after a 47 each reach their own instrument.
 */
static void test_bursts_with_price_level_books(void **state)
{
    struct fixture *f = *state;
    static uint8_t bufs[3][1400];
    struct tp_mdp3_feed_pkt pkts[3];
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    uint32_t nq = tp_instruments_by_security_id(f->reg, 1002);
    int64_t qty;

    keep_entries(f, bufs, pkts, 3, 1001, '0', PX(4000), 1);
    assert_int_equal(tp_mdp3_feed_burst(&f->feed, pkts, 3, NULL, NULL), 0);
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1002, 1, 1, TP_LEVEL_NEW, '1', PX(15000), 7, 1}}, 1);
    keep_packet(f, bufs, pkts, 0);
    packet_begin(f);
    add_order_book47(f, 1002, PX(15000), (struct order[]){{.id = 960, .qty = 1}}, 1);
    add_book46(f, EOE, (struct entry[]){{1001, 4, 1, TP_LEVEL_CHANGE, '0', PX(4000), 8, 1}}, 1);
    add_book46(f, EOE, (struct entry[]){{1002, 2, 1, TP_LEVEL_CHANGE, '1', PX(15000), 7, 1}}, 1);
    keep_packet(f, bufs, pkts, 1);
    assert_int_equal(tp_mdp3_feed_burst(&f->feed, pkts, 2, NULL, NULL), 0);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, es)->rpt_seq, 4);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, nq)->rpt_seq, 2);
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), PX(4000));
    assert_int_equal(qty, 8);
    assert_int_equal(best(f, nq, TP_SIDE_ASK, &qty), PX(15000));
    assert_int_equal(qty, 7);
    assert_int_equal(best(f, es, TP_SIDE_ASK, &qty), -1);
    assert_int_equal(f->feed.counters.rpt_seq_gaps + f->feed.counters.duplicates, 0);
}

/* A burst of NQ packets run from inside another burst's callback, after its first packet. */
struct nested {
    struct fixture *f;
    const struct tp_mdp3_feed_pkt *pkts;
    uint32_t calls;
};

static void on_applied_nested(void *ctx, const struct tp_mdp3_feed_pkt *pkt, int rc)
{
    struct nested *n = ctx;

    (void)pkt;
    assert_int_equal(rc, 0);
    if (n->calls++ == 0)
        assert_int_equal(tp_mdp3_feed_burst(&n->f->feed, n->pkts, 2, NULL, NULL), 0);
}

/*
 * A burst run from the callback of another (after its first packet): the outer burst's second
 * packet (ES), prefetched before the inner burst ran, still reaches ES, not the instrument of
 * the inner burst's packets (NQ), and both instruments' RptSeqs stay in order.
 */
static void test_burst_inside_a_burst(void **state)
{
    struct fixture *f = *state;
    static uint8_t bufs[5][1400];
    struct tp_mdp3_feed_pkt outer[3], inner[2];
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    uint32_t nq = tp_instruments_by_security_id(f->reg, 1002);
    int64_t qty;

    keep_entries(f, bufs, outer, 3, 1001, '0', PX(4000), 10);
    keep_entries(f, bufs + 3, inner, 2, 1002, '1', PX(15000), 20);
    struct nested n = {.f = f, .pkts = inner};
    assert_int_equal(tp_mdp3_feed_burst(&f->feed, outer, 3, on_applied_nested, &n), 0);
    assert_int_equal(n.calls, 3);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, es)->rpt_seq, 3);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, nq)->rpt_seq, 2);
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), PX(4000));
    assert_int_equal(qty, 12);
    assert_int_equal(best(f, nq, TP_SIDE_ASK, &qty), PX(15000));
    assert_int_equal(qty, 21);
    assert_int_equal(f->feed.counters.rpt_seq_gaps + f->feed.counters.duplicates, 0);
}

/* Applied-callback of test_46_47_refused_as_the_generated_decoder_does: each packet's result in
 * turn. */
static void record_rc(void *ctx, const struct tp_mdp3_feed_pkt *pkt, int rc)
{
    int *rcs = ctx;

    (void)pkt;
    rcs[rcs[3]++] = rc;
}

/*
 * Whether the generated decoder accepts every 46 and 47 of a packet: root block, groups and
 * entries (the feed reads them at their offsets and must refuse exactly what this refuses).
 */
static int generated_decoder_accepts(const uint8_t *data, size_t len)
{
    struct tp_mdp3_packet p;
    struct tp_mdp3_msg msg;
    int rc;

    if (tp_mdp3_packet_init(&p, data, len) < 0)
        return 0;
    while ((rc = tp_mdp3_packet_next(&p, &msg)) == 1) {
        if (msg.template_id == MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_TEMPLATE_ID) {
            struct mktdata_md_incremental_refresh_book46 m;
            struct mktdata_md_incremental_refresh_book46_no_md_entries g;
            struct mktdata_md_incremental_refresh_book46_no_order_id_entries o;
            if (mktdata_md_incremental_refresh_book46_wrap_for_decode(
                    &m, msg.body, msg.body_len, msg.block_length, msg.version) < 0 ||
                mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_decode(&m, &g) < 0)
                return 0;
            while (g.index < g.count)
                if (mktdata_md_incremental_refresh_book46_no_md_entries_next(&g) < 0)
                    return 0;
            if (mktdata_md_incremental_refresh_book46_no_order_id_entries_wrap_for_decode(&m, &o) <
                0)
                return 0;
        } else if (msg.template_id == MKTDATA_MD_INCREMENTAL_REFRESH_ORDER_BOOK47_TEMPLATE_ID) {
            struct mktdata_md_incremental_refresh_order_book47 m;
            struct mktdata_md_incremental_refresh_order_book47_no_md_entries g;
            if (mktdata_md_incremental_refresh_order_book47_wrap_for_decode(
                    &m, msg.body, msg.body_len, msg.block_length, msg.version) < 0 ||
                mktdata_md_incremental_refresh_order_book47_no_md_entries_wrap_for_decode(&m, &g) <
                    0)
                return 0;
        }
    }
    return rc == 0;
}

/*
 * The feed reads 46 and 47 at their fields' offsets (both passes), not through the generated
 * decoder: every value of each byte of the SBE block length and of the group dimensions (46:
 * level and order groups; 47) of the middle packet of a three-packet burst, every packet in a
 * buffer of exactly its length (ASan sees any read past it), with order-level books so that the
 * prefetch pass walks the order groups too. The middle packet is malformed exactly when the
 * generated decoder refuses it, alone or in the burst, and the packets around it are applied.
 */
static void test_46_47_refused_as_the_generated_decoder_does(void **state)
{
    struct fixture *f = *state;
    struct tp_mdp3_feed_pkt pkts[3];
    uint8_t *bufs[3];
    size_t pos[32], n_pos = 0;
    int malformed = 0, fine = 0;
    const struct order one[] = {{.id = 77, .qty = 1, .refid = 1}};

    assert_int_equal(tp_mdp3_feed_init(&f->feed, f->state, f->reg, f->books, NULL, 310,
                                       TP_BOOK_TYPE_MBP_MBO, NULL),
                     0);
    for (uint32_t i = 0; i < 3; i++) {
        packet_begin(f);
        add_book46_orders(f, EOE,
                          (struct entry[]){{1001, 1, 1, TP_LEVEL_OVERLAY, '0', PX(4000), 10, 2},
                                           {1002, 1, 1, TP_LEVEL_OVERLAY, '1', PX(15000), 3, 1}},
                          2, one, 1);
        add_order_book47(f, 1001, PX(3999), one, 1);
        bufs[i] = malloc(f->w.len);
        memcpy(bufs[i], f->pkt, f->w.len);
        pkts[i] = (struct tp_mdp3_feed_pkt){.data = bufs[i], .len = f->w.len};
    }
    /* The bytes to vary: the SBE block length and the group dimensions of each message. */
    size_t m46 = TP_MDP3_PACKET_HEADER_LEN + TP_MDP3_MSG_SIZE_LEN;
    size_t g46 = m46 + MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                 MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_BLOCK_LENGTH;
    size_t o46 = g46 + MKTDATA_GROUP_SIZE_ENCODED_LENGTH +
                 2 * MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_NO_MD_ENTRIES_BLOCK_LENGTH;
    size_t m47 = TP_MDP3_PACKET_HEADER_LEN + tp_mdp3_le16(bufs[1] + TP_MDP3_PACKET_HEADER_LEN) +
                 TP_MDP3_MSG_SIZE_LEN;
    size_t g47 = m47 + MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                 MKTDATA_MD_INCREMENTAL_REFRESH_ORDER_BOOK47_BLOCK_LENGTH;
    for (size_t i = 0; i < 2; i++)
        pos[n_pos++] = m46 + i, pos[n_pos++] = m47 + i;
    for (size_t i = 0; i < MKTDATA_GROUP_SIZE_ENCODED_LENGTH; i++)
        pos[n_pos++] = g46 + i, pos[n_pos++] = g47 + i;
    for (size_t i = 0; i < MKTDATA_GROUP_SIZE8_BYTE_ENCODED_LENGTH; i++)
        pos[n_pos++] = o46 + i;
    assert_true(pos[n_pos - 1] < pkts[1].len);

    for (size_t p = 0; p < n_pos; p++) {
        uint8_t was = bufs[1][pos[p]];
        for (int v = 0; v < 256; v++) {
            int rcs[4] = {0, 0, 0, 0};
            uint64_t packets = f->feed.counters.packets;
            bufs[1][pos[p]] = (uint8_t)v;
            uint32_t bad = tp_mdp3_feed_burst(&f->feed, pkts, 3, record_rc, rcs);
            assert_int_equal(rcs[3], 3);
            assert_int_equal(rcs[0], 0);
            assert_int_equal(rcs[2], 0);
            assert_int_equal(bad, rcs[1] != 0);
            assert_int_equal(rcs[1],
                             generated_decoder_accepts(bufs[1], pkts[1].len) ? 0 : -EBADMSG);
            assert_int_equal(tp_mdp3_feed_packet(&f->feed, bufs[1], pkts[1].len, 0), rcs[1]);
            assert_int_equal(f->feed.counters.packets, packets + 4);
            malformed += rcs[1] != 0;
            fine += rcs[1] == 0;
        }
        bufs[1][pos[p]] = was;
    }
    /* Both kinds were seen: the varied bytes did reach the decoder's checks. */
    assert_true(malformed > 0 && fine > 0);
    for (uint32_t i = 0; i < 3; i++)
        free(bufs[i]);
}

/*
 * Every registry read of the test and the feed goes through here (the test links with
 * -Wl,--wrap=tp_instruments_get): the lowest id asked for since the test reset it.
 */
static uint32_t lowest_id_read = UINT32_MAX;
struct tp_instrument *__real_tp_instruments_get(struct tp_instruments *r, uint32_t id);
struct tp_instrument *__wrap_tp_instruments_get(struct tp_instruments *r, uint32_t id);

struct tp_instrument *__wrap_tp_instruments_get(struct tp_instruments *r, uint32_t id)
{
    if (id < lowest_id_read)
        lowest_id_read = id;
    return __real_tp_instruments_get(r, id);
}

/*
 * A data lcore's window of the instance's ids, [4, 8) of 8, with two channels' feeds on its
 * registry and books (310: ES, NQ; 311: CL). A group status and a channel reset of 310 touch
 * only 310's instruments (the group's for the status), never read an id of another lcore's
 * window, and no book refuses anything.
 */
static void test_window_of_ids_status_and_channel_reset(void **state)
{
    struct fixture *f = *state, other = {0};
    struct tp_instruments_params rp = {.capacity = 8, .first_id = 4, .ids = 4};
    struct tp_books_params bp = {
        .first_id = 4, .instruments = 4, .mbp_depth = 10, .implied_depth = 2};
    struct tp_feed_sink sink = {.ctx = &f->log, .changes = on_changes, .end_of_event = on_event};
    void *other_state = test_zalloc(tp_mdp3_feed_memsize(8));
    int64_t qty;

    free(f->reg);
    free(f->books);
    f->reg = test_zalloc(tp_instruments_memsize(&rp));
    f->books = test_zalloc(tp_books_memsize(&bp));
    assert_int_equal(tp_instruments_init(f->reg, &rp), 0);
    assert_int_equal(tp_books_init(f->books, &bp), 0);
    assert_int_equal(
        tp_mdp3_feed_init(&f->feed, f->state, f->reg, f->books, NULL, 310, TP_BOOK_TYPE_MBP, &sink),
        0);
    assert_int_equal(tp_mdp3_feed_init(&other.feed, other_state, f->reg, f->books, NULL, 311,
                                       TP_BOOK_TYPE_MBP, &sink),
                     0);
    packet_begin(f);
    add_definition(f, 1001, "ESZ6", "ES", 5);
    add_definition(f, 1002, "NQZ6", "NQ", 5);
    assert_int_equal(packet_send(f), 0);
    packet_begin(f);
    add_definition(f, 2001, "CLZ6", "CL", 5);
    assert_int_equal(tp_mdp3_feed_packet(&other.feed, f->pkt, f->w.len, 0), 0);
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    uint32_t nq = tp_instruments_by_security_id(f->reg, 1002);
    uint32_t cl = tp_instruments_by_security_id(f->reg, 2001);
    assert_int_equal(es, 4);
    assert_int_equal(nq, 5);
    assert_int_equal(cl, 6);
    send_first_bids(f);
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{2001, 1, 1, TP_LEVEL_NEW, '0', PX(70), 4, 1}}, 1);
    assert_int_equal(tp_mdp3_feed_packet(&other.feed, f->pkt, f->w.len, 0), 0);

    /* Group ES halts (SecurityID null): ES only. */
    lowest_id_read = UINT32_MAX;
    packet_begin(f);
    add_security_status(f, MKTDATA_INT32_NULL_VALUE, "ES", 2);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(tp_books_get(f->books, es)->status, TP_STATUS_HALTED);
    assert_int_equal(tp_books_get(f->books, nq)->status, TP_STATUS_OPEN);
    assert_int_equal(tp_books_get(f->books, cl)->status, TP_STATUS_OPEN);
    assert_true(lowest_id_read >= 4);

    /* Channel 310 resets: ES and NQ are cleared and restart their RptSeq; CL keeps its book. */
    lowest_id_read = UINT32_MAX;
    packet_begin(f);
    add_channel_reset(f);
    assert_int_equal(packet_send(f), 0);
    assert_true(lowest_id_read >= 4);
    assert_int_equal(f->feed.counters.channel_resets, 1);
    assert_int_equal(f->feed.counters.rejected, 0);
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), -1);
    assert_int_equal(best(f, nq, TP_SIDE_BID, &qty), -1);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, es)->rpt_seq, 0);
    assert_int_equal(best(f, cl, TP_SIDE_BID, &qty), PX(70));
    assert_int_equal(qty, 4);
    for (uint32_t id = 4; id < 8; id++)
        assert_int_equal(tp_books_get(f->books, id)->counters.bad_input, 0);
    free(other_state);
}

/* ---- sink calls per event ----------------------------------------------------------------- */

/* The sink's callbacks in the order they came: 'C' changes (n records), 'E' end of event,
 * 'S' stale (its instrument in `instrument`). */
struct call_trace {
    uint32_t count;
    char kind[16];
    uint32_t n[16], instrument[16];
    uint64_t venue_time[16], packet_seq[16];
};

static void trace_call(struct call_trace *t, char kind, uint32_t n, uint32_t instrument,
                       const struct tp_feed_info *info)
{
    assert_true(t->count < 16);
    t->kind[t->count] = kind;
    t->n[t->count] = n;
    t->instrument[t->count] = instrument;
    t->venue_time[t->count] = info ? info->venue_time : 0;
    t->packet_seq[t->count] = info ? info->packet_seq : 0;
    t->count++;
}

static void trace_changes(void *ctx, const struct tp_feed_info *info,
                          const struct tp_book_change *c, uint32_t n)
{
    trace_call(ctx, 'C', n, c[0].instrument, info);
}

static void trace_event(void *ctx, const struct tp_feed_info *info)
{
    trace_call(ctx, 'E', 0, 0, info);
}

static void trace_stale(void *ctx, uint32_t instrument, int stale, uint32_t expected, uint32_t got)
{
    (void)stale;
    (void)expected;
    (void)got;
    trace_call(ctx, 'S', 0, instrument, NULL);
}

static void expect_call(const struct call_trace *t, uint32_t i, char kind, uint32_t n,
                        uint64_t venue_time)
{
    assert_true(i < t->count);
    assert_int_equal(t->kind[i], kind);
    assert_int_equal(t->n[i], n);
    if (kind != 'S')
        assert_int_equal(t->venue_time[i], venue_time);
}

/*
 * The records of an event's messages reach the sink in one call while the packet and the
 * TransactTime stay the same; a new TransactTime, the event's end, the packet's end and a stale
 * mark each deliver what waits first, and the stale mark still comes before the records of its
 * own message, as with one call per message.
 */
static void test_changes_delivered_once_per_event(void **state)
{
    struct fixture *f = *state;
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    uint32_t nq = tp_instruments_by_security_id(f->reg, 1002);
    struct call_trace t = {0};

    send_first_bids(f);
    f->feed.sink = (struct tp_feed_sink){
        .ctx = &t, .changes = trace_changes, .end_of_event = trace_event, .stale = trace_stale};

    /* One event of three messages at TransactTime 7: one call of 3 records. */
    f->transact_time = 7;
    packet_begin(f);
    add_book46(f, 0, (struct entry[]){{1001, 2, 2, TP_LEVEL_NEW, '0', PX(3999), 1, 1}}, 1);
    add_book46(f, 0, (struct entry[]){{1002, 2, 2, TP_LEVEL_NEW, '0', PX(14999), 1, 1}}, 1);
    add_book46(f, EOE, (struct entry[]){{1001, 3, 1, TP_LEVEL_NEW, '1', PX(4001), 1, 1}}, 1);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(t.count, 2);
    expect_call(&t, 0, 'C', 3, 7);
    assert_int_equal(t.instrument[0], es);
    expect_call(&t, 1, 'E', 0, 7);

    /* A new TransactTime inside the event, then an event left open at the packet's end. */
    t.count = 0;
    packet_begin(f);
    add_book46(f, 0, (struct entry[]){{1001, 4, 1, TP_LEVEL_CHANGE, '0', PX(4000), 2, 1}}, 1);
    f->transact_time = 8;
    add_book46(f, EOE, (struct entry[]){{1002, 3, 1, TP_LEVEL_CHANGE, '0', PX(15000), 2, 1}}, 1);
    add_book46(f, 0, (struct entry[]){{1002, 4, 1, TP_LEVEL_CHANGE, '0', PX(15000), 3, 1}}, 1);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(t.count, 4);
    expect_call(&t, 0, 'C', 1, 7);
    expect_call(&t, 1, 'C', 1, 8);
    expect_call(&t, 2, 'E', 0, 8);
    expect_call(&t, 3, 'C', 1, 8);
    assert_int_equal(t.packet_seq[3], t.packet_seq[0]);

    /* NQ's RptSeq jumps in the event's second message, after an ES entry of that message: the
     * first message's record, the stale mark, then the second message's ES record. */
    t.count = 0;
    packet_begin(f);
    add_book46(f, 0, (struct entry[]){{1001, 5, 1, TP_LEVEL_CHANGE, '0', PX(4000), 4, 1}}, 1);
    add_book46(f, EOE,
               (struct entry[]){{1001, 6, 1, TP_LEVEL_CHANGE, '0', PX(4000), 5, 1},
                                {1002, 9, 1, TP_LEVEL_CHANGE, '0', PX(15000), 9, 1}},
               2);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(t.count, 4);
    expect_call(&t, 0, 'C', 1, 8);
    expect_call(&t, 1, 'S', 0, 0);
    assert_int_equal(t.instrument[1], nq);
    expect_call(&t, 2, 'C', 1, 8);
    assert_int_equal(t.instrument[2], es);
    expect_call(&t, 3, 'E', 0, 8);
}

/* ---- book audit --------------------------------------------------------------------------- */

/* ES (depth 5, implied 2) at RptSeq 3: bids 10 @ 4000 (2 orders), 4 @ 3999.75; ask 7 @ 4000.25;
 * implied bid 2 @ 3999.5. */
static const struct entry es_book[] = {
    {1001, 1, 1, TP_LEVEL_NEW, '0', PX(4000), 10, 2},
    {1001, 2, 2, TP_LEVEL_NEW, '0', PX(3999.75), 4, 1},
    {1001, 3, 1, TP_LEVEL_NEW, '1', PX(4000.25), 7, 1},
    {1001, 4, 1, TP_LEVEL_NEW, 'E', PX(3999.5), 2, 0},
};

/* The same book as snapshot entries. */
static const struct entry es_snapshot[] = {
    {0, 0, 1, 0, '0', PX(4000), 10, 2},
    {0, 0, 2, 0, '0', PX(3999.75), 4, 1},
    {0, 0, 1, 0, '1', PX(4000.25), 7, 1},
    {0, 0, 1, 0, 'E', PX(3999.5), 2, 0},
};

static void send_es_book(struct fixture *f)
{
    packet_begin(f);
    add_book46(f, EOE, es_book, 4);
    assert_int_equal(packet_send(f), 0);
}

static void send_snapshot(struct fixture *f, int32_t secid, uint32_t rpt_seq, const struct entry *e,
                          uint32_t n)
{
    packet_begin(f);
    add_snapshot52(f, secid, rpt_seq, e, n);
    assert_int_equal(packet_send(f), 0);
}

static void expect_level(struct fixture *f, uint32_t instr, enum tp_book_kind book,
                         enum tp_side side, uint32_t index, int64_t price, int64_t qty,
                         uint32_t count)
{
    struct tp_level lv;

    assert_int_equal(tp_books_level(f->books, instr, book, side, index, &lv), 0);
    assert_int_equal(lv.price, price);
    assert_int_equal(lv.qty, qty);
    assert_int_equal(lv.count, count);
}

/* An in-sync book that lacks a level the venue's snapshot has at the same RptSeq: replaced. */
static void test_audit_replaces_a_book_that_differs(void **state)
{
    struct fixture *f = *state;
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);

    /* The book never saw the 3999.75 bid (it existed before the first incremental). */
    packet_begin(f);
    add_book46(f, EOE,
               (struct entry[]){es_book[0],
                                {1001, 2, 1, TP_LEVEL_CHANGE, '0', PX(4000), 10, 2},
                                es_book[2],
                                es_book[3]},
               4);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(tp_books_levels(f->books, es, TP_BOOK_DIRECT, TP_SIDE_BID), 1);
    uint32_t changes = f->log.changes;
    send_snapshot(f, 1001, 4, es_snapshot, 4);
    assert_int_equal(f->feed.counters.snapshots_audited, 1);
    assert_int_equal(f->feed.counters.snapshot_mismatch, 1);
    assert_int_equal(tp_books_get(f->books, es)->counters.snapshot_mismatch, 1);
    assert_int_equal(f->feed.counters.snapshots, 1);
    assert_int_equal(f->feed.counters.snapshots_old, 0);
    /* Flagged before the snapshot's records (clear + 4 levels), trusted again after them. */
    assert_int_equal(f->log.stale_on, 1);
    assert_int_equal(f->log.last_stale_instrument, es);
    assert_int_equal(f->log.changes_at_stale_on, changes);
    assert_int_equal(f->log.stale_off, 1);
    assert_int_equal(f->log.changes_at_stale_off, changes + 5);
    assert_false(tp_mdp3_feed_state(&f->feed, es)->stale);
    assert_int_equal(tp_mdp3_feed_state(&f->feed, es)->rpt_seq, 4);
    expect_level(f, es, TP_BOOK_DIRECT, TP_SIDE_BID, 1, PX(4000), 10, 2);
    expect_level(f, es, TP_BOOK_DIRECT, TP_SIDE_BID, 2, PX(3999.75), 4, 1);
    expect_level(f, es, TP_BOOK_DIRECT, TP_SIDE_ASK, 1, PX(4000.25), 7, 1);
    expect_level(f, es, TP_BOOK_IMPLIED, TP_SIDE_BID, 1, PX(3999.5), 2, 0);
    /* The next incremental applies on the adopted book. */
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1001, 5, 1, TP_LEVEL_DELETE, '0', PX(4000), 0, 0}}, 1);
    assert_int_equal(packet_send(f), 0);
    expect_level(f, es, TP_BOOK_DIRECT, TP_SIDE_BID, 1, PX(3999.75), 4, 1);
}

/* A book equal to the snapshot at its RptSeq: compared, nothing published, nothing counted. */
static void test_audit_of_a_matching_book_publishes_nothing(void **state)
{
    struct fixture *f = *state;
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);

    send_es_book(f);
    uint32_t changes = f->log.changes, events = f->log.events;
    /* The entries in another order, and one beyond the depth the book would refuse too. */
    send_snapshot(f, 1001, 4,
                  (struct entry[]){es_snapshot[3],
                                   es_snapshot[1],
                                   {0, 0, 6, 0, '0', PX(3998), 1, 1},
                                   es_snapshot[0],
                                   es_snapshot[2]},
                  5);
    assert_int_equal(f->feed.counters.snapshots_audited, 1);
    assert_int_equal(f->feed.counters.snapshot_mismatch, 0);
    assert_int_equal(tp_books_get(f->books, es)->counters.snapshot_mismatch, 0);
    assert_int_equal(f->feed.counters.snapshots_old, 1);
    assert_int_equal(f->feed.counters.snapshots, 0);
    assert_int_equal(f->log.changes, changes);
    assert_int_equal(f->log.stale_on, 0);
    assert_int_equal(f->log.stale_off, 0);
    assert_int_equal(f->log.events, events + 1); /* the snapshot message's own end of event */
}

/* Each way a book can differ (price, quantity, order count, a level missing on either side, one
 * too many, the implied book) is found, and the adopted book then matches the same snapshot. */
static void test_audit_finds_each_difference(void **state)
{
    struct fixture *f = *state;
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    struct entry snap[4];

    send_es_book(f);
    for (unsigned c = 0; c < 7; c++) {
        uint32_t n = 4;
        memcpy(snap, es_snapshot, sizeof(snap));
        switch (c) {
        case 0:
            snap[0].price = PX(4000.5);
            break;
        case 1:
            snap[1].size = 5;
            break;
        case 2:
            snap[2].orders = 3;
            break;
        case 3:
            snap[3].size = 1;
            break;
        case 4: /* the book holds an ask the venue does not */
            snap[2] = snap[3];
            n = 3;
            break;
        case 5: /* the venue has a second ask level */
            memcpy(snap, es_snapshot, sizeof(snap));
            snap[3] = (struct entry){0, 0, 2, 0, '1', PX(4000.5), 3, 1};
            break;
        case 6: /* back to the book of es_snapshot */
            break;
        }
        uint64_t before = f->feed.counters.snapshot_mismatch;
        send_snapshot(f, 1001, 4, snap, n);
        assert_int_equal(f->feed.counters.snapshot_mismatch, before + 1);
        send_snapshot(f, 1001, 4, snap, n);
        assert_int_equal(f->feed.counters.snapshot_mismatch, before + 1);
    }
    assert_int_equal(f->feed.counters.snapshots_audited, 14);
    assert_int_equal(tp_books_get(f->books, es)->counters.snapshot_mismatch, 7);
    assert_int_equal(f->log.stale_on, 7);
    assert_int_equal(f->log.stale_off, 7);
    assert_false(tp_mdp3_feed_state(&f->feed, es)->stale);
}

/* A snapshot behind or ahead of an in-sync book is not compared (nor counted as a mismatch). */
static void test_audit_only_at_the_same_rpt_seq(void **state)
{
    struct fixture *f = *state;
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    const struct entry other = {0, 0, 1, 0, '0', PX(1), 1, 1};

    send_es_book(f);
    send_snapshot(f, 1001, 3, &other, 1); /* behind: the book keeps going */
    assert_int_equal(f->feed.counters.snapshots_old, 1);
    expect_level(f, es, TP_BOOK_DIRECT, TP_SIDE_BID, 1, PX(4000), 10, 2);
    send_snapshot(f, 1001, 9, &other, 1); /* ahead: applied, as a newer state */
    assert_int_equal(f->feed.counters.snapshots, 1);
    expect_level(f, es, TP_BOOK_DIRECT, TP_SIDE_BID, 1, PX(1), 1, 1);
    assert_int_equal(f->feed.counters.snapshots_audited, 0);
    assert_int_equal(f->feed.counters.snapshot_mismatch, 0);
    assert_int_equal(f->log.stale_on, 0);
    assert_int_equal(f->log.stale_off, 0);
}

/* ---- refusals ----------------------------------------------------------------------------- */

/*
 * A level change outside the venue's book (level 7 of ES, defined 5 deep) is refused by the book:
 * ES is marked stale (only ES), its later entries are skipped, and the next snapshot of it
 * recovers it. A level within the definition's depth but beyond the depth the books keep is no
 * refusal of the venue's change: nothing is marked.
 */
static void test_refused_level_marks_the_instrument_stale(void **state)
{
    struct fixture *f = *state;
    uint32_t es = tp_instruments_by_security_id(f->reg, 1001);
    uint32_t nq = tp_instruments_by_security_id(f->reg, 1002);

    send_first_bids(f);
    packet_begin(f);
    add_book46(f, EOE,
               (struct entry[]){{1001, 2, 7, TP_LEVEL_NEW, '0', PX(3990), 1, 1},
                                {1002, 2, 2, TP_LEVEL_NEW, '0', PX(14999), 2, 1}},
               2);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->feed.counters.rejected, 1);
    assert_int_equal(f->feed.counters.refusal_marks, 1);
    assert_int_equal(f->log.stale_on, 1);
    assert_int_equal(f->log.last_stale_instrument, es);
    assert_true(tp_mdp3_feed_state(&f->feed, es)->stale);
    assert_false(tp_mdp3_feed_state(&f->feed, nq)->stale);
    assert_int_equal(tp_books_levels(f->books, nq, TP_BOOK_DIRECT, TP_SIDE_BID), 2);

    /* Stale: ES's next entry (in sequence) is skipped, not applied to a book known wrong. */
    uint64_t skipped = f->feed.counters.stale_skipped;
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1001, 3, 1, TP_LEVEL_CHANGE, '0', PX(4000), 20, 3}}, 1);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->feed.counters.stale_skipped, skipped + 1);
    int64_t qty;
    assert_int_equal(best(f, es, TP_SIDE_BID, &qty), PX(4000));
    assert_int_equal(qty, 10);

    /* The snapshot of ES is applied and clears the mark. */
    send_snapshot(f, 1001, 3, es_snapshot, 4);
    assert_int_equal(f->log.stale_off, 1);
    assert_false(tp_mdp3_feed_state(&f->feed, es)->stale);
    expect_level(f, es, TP_BOOK_DIRECT, TP_SIDE_BID, 2, PX(3999.75), 4, 1);

    /* Books kept 10 deep, an instrument the venue defines 12 deep: its level 11 is refused by the
     * book but marks nothing. */
    packet_begin(f);
    add_definition(f, 1004, "ZNZ6", "ZN", 12);
    assert_int_equal(packet_send(f), 0);
    uint32_t zn = tp_instruments_by_security_id(f->reg, 1004);
    packet_begin(f);
    add_book46(f, EOE, (struct entry[]){{1004, 1, 11, TP_LEVEL_NEW, '0', PX(110), 5, 1}}, 1);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->feed.counters.rejected, 2);
    assert_int_equal(f->feed.counters.refusal_marks, 1);
    assert_false(tp_mdp3_feed_state(&f->feed, zn)->stale);
    assert_int_equal(f->log.stale_on, 1);
}

/* CL's orders 901 (4) and 902 (6) bid at 70.25, as an order-level snapshot gives them. */
static const struct book_order cl_orders[] = {{901, '0', PX(70.25), 4}, {902, '0', PX(70.25), 6}};

static void send_cl_orders(struct fixture *f, uint32_t last_seq, uint32_t chunk, uint32_t chunks,
                           const struct book_order *o, uint32_t n)
{
    packet_begin(f);
    add_snapshot53(f, 2001, last_seq, chunk, chunks, o, n);
    assert_int_equal(packet_send(f), 0);
}

/* An MBP_MBO feed on CL (SecurityID 2001) with orders 901 and 902 resting at 70.25 (RptSeq 1),
 * its order book complete. */
static uint32_t start_mbo_book_with(struct fixture *f, const struct tp_feed_sink *sink)
{
    uint32_t cl = start_cl(f, sink);
    const struct entry level = {2001, 1, 1, TP_LEVEL_NEW, '0', PX(70.25), 10, 2};
    const struct order orders[] = {{.id = 901, .qty = 4, .refid = 1},
                                   {.id = 902, .qty = 6, .refid = 1}};
    packet_begin(f);
    add_book46_orders(f, EOE, &level, 1, orders, 2);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(tp_books_orders(f->books, cl), 2);
    assert_false(tp_mdp3_feed_state(&f->feed, cl)->orders_complete);
    /* The orders from before the first message are not known until an order-level snapshot
     * loads them: it does (the same two orders), as of that packet. */
    send_cl_orders(f, f->seq, 1, 1, cl_orders, 2);
    assert_true(tp_mdp3_feed_state(&f->feed, cl)->orders_complete);
    assert_int_equal(tp_books_orders(f->books, cl), 2);
    assert_int_equal(f->feed.counters.snapshots_audited, 0);
    return cl;
}

static uint32_t start_mbo_book(struct fixture *f)
{
    struct tp_feed_sink sink = {
        .ctx = &f->log, .changes = on_changes, .end_of_event = on_event, .stale = on_stale};
    return start_mbo_book_with(f, &sink);
}

/*
 * An order id that is not live (a delete, a change) and an order id already live (a new one) are
 * refused by the order-level book: the instrument is marked stale once, its later order entries
 * are skipped, and the next snapshot recovers it.
 */
static void test_refused_orders_mark_the_instrument_stale(void **state)
{
    struct fixture *f = *state;
    uint32_t cl = start_mbo_book(f);

    static const struct order refused[3][1] = {
        {{.id = 999, .action = 2}}, {{.id = 998, .qty = 3, .action = 1}}, {{.id = 902, .qty = 1}}};
    for (unsigned i = 0; i < 3; i++) {
        uint64_t rejected = f->feed.counters.rejected;
        packet_begin(f);
        add_order_book47(f, 2001, PX(70.25), refused[i], 1);
        assert_int_equal(packet_send(f), 0);
        assert_int_equal(f->feed.counters.rejected, rejected + (i == 0));
        assert_int_equal(f->feed.counters.refusal_marks, 1);
        assert_int_equal(f->log.stale_on, 1);
        assert_int_equal(f->log.last_stale_instrument, cl);
        assert_true(tp_mdp3_feed_state(&f->feed, cl)->stale);
        /* Kept for the snapshot: the later entries do not touch the book. */
        assert_int_equal(tp_books_orders(f->books, cl), 2);
        assert_int_equal(f->feed.counters.stale_skipped, i);
        /* The next mark would come from the next stale spell only. */
    }
    packet_begin(f);
    add_snapshot52(f, 2001, 1, (struct entry[]){{0, 0, 1, 0, '0', PX(70.25), 10, 2}}, 1);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->log.stale_off, 1);
    assert_false(tp_mdp3_feed_state(&f->feed, cl)->stale);
}

/* No room left in the order table for a new order: refused, and the instrument marked stale. */
static void test_order_table_full_marks_the_instrument_stale(void **state)
{
    struct fixture *f = *state;
    uint32_t cl = start_mbo_book(f);

    uint64_t id = 1000;
    while (f->log.stale_on == 0 && id < 1000 + 1024) {
        const struct order o = {.id = id++, .qty = 1};
        packet_begin(f);
        add_order_book47(f, 2001, PX(70), &o, 1);
        assert_int_equal(packet_send(f), 0);
    }
    assert_int_equal(f->log.stale_on, 1);
    assert_int_equal(f->log.last_stale_instrument, cl);
    assert_int_equal(f->feed.counters.refusal_marks, 1);
    assert_int_equal(f->feed.counters.rejected, 1);
    assert_true(tp_mdp3_feed_state(&f->feed, cl)->stale);
}

/*
 * A replayed incremental (tp_mdp3_feed_replay, after a snapshot packet) applies its order entries
 * to the instrument that snapshot set, and skips those of an in-sync book, which has them: applied
 * twice they would be refused and mark it stale.
 */
static void test_replay_applies_orders_only_where_a_snapshot_set_the_book(void **state)
{
    struct fixture *f = *state;
    uint32_t cl = start_mbo_book(f);
    packet_begin(f);
    add_definition(f, 2002, "NGZ6", "NG", 10);
    assert_int_equal(packet_send(f), 0);
    uint32_t ng = tp_instruments_by_security_id(f->reg, 2002);

    /* A packet with a new order on each: live, both applied. */
    const struct order cl_new = {.id = 903, .qty = 2}, ng_new = {.id = 701, .qty = 5};
    packet_begin(f);
    add_order_book47(f, 2001, PX(70.25), &cl_new, 1);
    add_order_book47(f, 2002, PX(3.5), &ng_new, 1);
    assert_int_equal(packet_send(f), 0);
    uint8_t kept[1400];
    size_t kept_len = f->w.len;
    memcpy(kept, f->pkt, kept_len);
    assert_int_equal(tp_books_orders(f->books, cl), 3);
    assert_int_equal(tp_books_orders(f->books, ng), 1);

    /* NG's snapshot, as of before that packet (no orders), then the packet replayed: NG gets its
     * order again, CL (in sync) is left alone and stays healthy. */
    packet_begin(f);
    add_snapshot52(f, 2002, 0, NULL, 0);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(tp_books_orders(f->books, ng), 0);
    uint64_t dups = f->feed.counters.duplicates;
    assert_int_equal(tp_mdp3_feed_replay(&f->feed, kept, kept_len, 0), 0);
    assert_int_equal(tp_books_orders(f->books, ng), 1);
    assert_int_equal(tp_books_orders(f->books, cl), 3);
    assert_int_equal(f->feed.counters.duplicates, dups + 1);
    assert_int_equal(f->feed.counters.rejected, 0);
    assert_int_equal(f->log.stale_on, 0);

    /* After a live packet, a replay is no snapshot's any more: NG's entry is skipped too. */
    send_first_bids(f);
    assert_int_equal(tp_mdp3_feed_replay(&f->feed, kept, kept_len, 0), 0);
    assert_int_equal(tp_books_orders(f->books, ng), 1);
    assert_int_equal(f->feed.counters.rejected, 0);
    assert_int_equal(f->log.stale_on, 0);
}

/*
 * Before an order-level snapshot loaded it, an order book does not hold the venue's older orders:
 * a delete or change of one it does not hold is counted, not marked; a new order id already live
 * is refused and marks it. After a price-level snapshot (which empties the order book) the same.
 */
static void test_incomplete_order_book_marks_only_what_it_can_tell(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_sink sink = {.ctx = &f->log, .changes = on_changes, .stale = on_stale};
    uint32_t cl = start_cl(f, &sink);
    const struct order older[] = {{.id = 800, .action = 2}, {.id = 801, .qty = 3, .action = 1}};
    packet_begin(f);
    add_order_book47(f, 2001, PX(70), older, 2);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->feed.counters.rejected, 2);
    assert_int_equal(f->feed.counters.refusal_marks, 0);
    assert_false(tp_mdp3_feed_state(&f->feed, cl)->stale);
    const struct order twice[] = {{.id = 805, .qty = 1}, {.id = 805, .qty = 1}};
    packet_begin(f);
    add_order_book47(f, 2001, PX(70), twice, 2);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->feed.counters.refusal_marks, 1);
    assert_true(tp_mdp3_feed_state(&f->feed, cl)->stale);
    /* A price-level snapshot recovers it, its order book emptied: the older orders are unknown
     * again, a delete of one marks nothing. */
    packet_begin(f);
    add_snapshot52(f, 2001, 1, NULL, 0);
    assert_int_equal(packet_send(f), 0);
    assert_false(tp_mdp3_feed_state(&f->feed, cl)->stale);
    assert_false(tp_mdp3_feed_state(&f->feed, cl)->orders_complete);
    packet_begin(f);
    add_order_book47(f, 2001, PX(70), older, 1);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->feed.counters.refusal_marks, 1);
    assert_false(tp_mdp3_feed_state(&f->feed, cl)->stale);
}

/* The order views the sink was told of (sink->orders_incomplete). */
struct view_log {
    uint32_t on, off, instrument;
    uint32_t changes_at_on, changes_at_off; /* records handed over by then */
};

static struct view_log view_log;

static void on_orders_incomplete(void *ctx, uint32_t instrument, int incomplete)
{
    struct sink_log *log = ctx;

    view_log.instrument = instrument;
    if (incomplete) {
        view_log.on++;
        view_log.changes_at_on = log->changes;
    } else {
        view_log.off++;
        view_log.changes_at_off = log->changes;
    }
}

/*
 * An order-level book's order view is flagged incomplete from its definition until an
 * order-level snapshot (53) loads it, again after a price-level snapshot (52) empties it (before
 * the snapshot's records), and cleared after the records of the 53 that refills it or of a
 * channel reset. A 53 past the incrementals applied is not loaded (they would apply twice).
 */
static void test_order_view_incomplete_until_an_order_snapshot(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_sink sink = {.ctx = &f->log,
                                .changes = on_changes,
                                .end_of_event = on_event,
                                .stale = on_stale,
                                .orders_incomplete = on_orders_incomplete};
    memset(&view_log, 0, sizeof(view_log));
    /* Flagged at its definition, cleared by its first 53. */
    uint32_t cl = start_mbo_book_with(f, &sink);
    assert_int_equal(view_log.on, 1);
    assert_int_equal(view_log.instrument, cl);
    assert_int_equal(f->feed.counters.orders_incomplete_marks, 1);
    assert_int_equal(view_log.off, 1);
    assert_int_equal(view_log.changes_at_off, f->log.changes); /* after the snapshot's records */
    assert_true(tp_mdp3_feed_state(&f->feed, cl)->orders_complete);

    /* A price-level snapshot ahead of the book: applied, the order book emptied and flagged
     * before any record of it goes. */
    uint32_t before = f->log.changes;
    packet_begin(f);
    add_snapshot52(f, 2001, 2, (struct entry[]){{0, 0, 1, 0, '0', PX(70.25), 10, 2}}, 1);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(view_log.on, 2);
    assert_int_equal(view_log.changes_at_on, before);
    assert_true(f->log.changes > before);
    assert_int_equal(tp_books_orders(f->books, cl), 0);
    assert_false(tp_mdp3_feed_state(&f->feed, cl)->stale);
    assert_false(tp_mdp3_feed_state(&f->feed, cl)->orders_complete);
    int64_t qty;
    assert_int_equal(best(f, cl, TP_SIDE_BID, &qty), PX(70.25));
    assert_int_equal(qty, 10);

    /* A change of an order it no longer holds: counted, the view stays flagged. */
    const struct order change = {.id = 901, .qty = 3, .action = 1};
    packet_begin(f);
    add_order_book47(f, 2001, PX(70.25), &change, 1);
    assert_int_equal(packet_send(f), 0);
    assert_false(tp_mdp3_feed_state(&f->feed, cl)->stale);
    assert_int_equal(view_log.off, 1);
    uint32_t applied = f->seq;

    /* A 53 past the incrementals applied: not loaded, still flagged. */
    uint64_t old = f->feed.counters.snapshots_old;
    send_cl_orders(f, applied + 5, 1, 1, cl_orders, 2);
    assert_int_equal(f->feed.counters.snapshots_old, old + 1);
    assert_int_equal(tp_books_orders(f->books, cl), 0);
    assert_int_equal(view_log.off, 1);

    /* One below the caller's replay floor (it could not replay what came after): not loaded. */
    f->feed.replay_floor = applied;
    send_cl_orders(f, applied - 1, 1, 1, cl_orders, 2);
    assert_int_equal(f->feed.counters.snapshots_old, old + 2);
    assert_int_equal(tp_books_orders(f->books, cl), 0);
    f->feed.replay_floor = 0;

    /* The next one, as of the incrementals applied: loaded, the view complete again. */
    const struct book_order now[] = {{901, '0', PX(70.25), 3}, {902, '0', PX(70.25), 6}};
    send_cl_orders(f, applied, 1, 1, now, 2);
    assert_int_equal(view_log.off, 2);
    assert_int_equal(tp_books_orders(f->books, cl), 2);
    assert_true(tp_mdp3_feed_state(&f->feed, cl)->orders_complete);
    assert_int_equal(f->log.stale_on, 0);

    /* Emptied again by a price-level snapshot, then a channel reset: complete (empty). */
    packet_begin(f);
    add_snapshot52(f, 2001, 3, NULL, 0);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(view_log.on, 3);
    packet_begin(f);
    add_channel_reset(f);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(view_log.off, 3);
    assert_int_equal(f->feed.counters.orders_incomplete_marks, 3);
}

/* A price-level book (MBP) has no order view to flag. */
static void test_price_level_book_has_no_order_view(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_sink sink = {
        .ctx = &f->log, .changes = on_changes, .orders_incomplete = on_orders_incomplete};
    memset(&view_log, 0, sizeof(view_log));
    assert_int_equal(
        tp_mdp3_feed_init(&f->feed, f->state, f->reg, f->books, NULL, 310, TP_BOOK_TYPE_MBP, &sink),
        0);
    packet_begin(f);
    add_definition(f, 2001, "CLZ6", "CL", 10);
    assert_int_equal(packet_send(f), 0);
    packet_begin(f);
    add_snapshot52(f, 2001, 2, NULL, 0);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(view_log.on + view_log.off, 0);
    assert_int_equal(f->feed.counters.orders_incomplete_marks, 0);
}

/* ---- order-level snapshot audit ----------------------------------------------------------- */

/* A complete order book equal to the order-level snapshot at its sequence: compared, nothing
 * published, nothing marked. */
static void test_order_audit_of_a_matching_book_publishes_nothing(void **state)
{
    struct fixture *f = *state;
    uint32_t cl = start_mbo_book(f);
    uint32_t changes = f->log.changes;
    uint32_t at = f->seq - 1; /* the orders' packet, before start_mbo_book's snapshot */

    /* In another order, in two chunks. */
    send_cl_orders(f, at, 1, 2, &cl_orders[1], 1);
    uint64_t old = f->feed.counters.snapshots_old;
    send_cl_orders(f, at, 2, 2, &cl_orders[0], 1);
    assert_int_equal(f->feed.counters.snapshots_audited, 1);
    assert_int_equal(f->feed.counters.snapshots_old, old + 1);
    assert_int_equal(f->feed.counters.snapshot_mismatch, 0);
    assert_int_equal(tp_books_get(f->books, cl)->counters.snapshot_mismatch, 0);
    assert_int_equal(f->log.changes, changes);
    assert_int_equal(f->log.stale_on, 0);
    assert_int_equal(tp_books_orders(f->books, cl), 2);
}

/* Each way an order book can differ from the snapshot in its first (only) chunk: found, counted,
 * the snapshot adopted and the instrument trusted again after it. */
static void test_order_audit_adopts_a_snapshot_that_differs(void **state)
{
    struct fixture *f = *state;
    uint32_t cl = start_mbo_book(f);
    uint32_t at = f->seq - 1;
    struct book_order snap[3];

    for (unsigned c = 0; c < 5; c++) {
        uint32_t n = 2;
        memcpy(snap, cl_orders, sizeof(cl_orders));
        switch (c) {
        case 0:
            snap[1].qty = 7;
            break;
        case 1:
            snap[0].price = PX(70.5);
            break;
        case 2:
            snap[0].type = '1';
            break;
        case 3: /* the book holds an order the venue does not */
            n = 1;
            break;
        case 4: /* the venue has an order the book does not */
            snap[2] = (struct book_order){903, '1', PX(71), 2};
            n = 3;
            break;
        }
        uint32_t changes = f->log.changes, marks = f->log.stale_on;
        uint64_t before = f->feed.counters.snapshot_mismatch;
        send_cl_orders(f, at, 1, 1, snap, n);
        assert_int_equal(f->feed.counters.snapshot_mismatch, before + 1);
        assert_int_equal(f->log.stale_on, marks + 1);
        assert_int_equal(f->log.changes_at_stale_on, changes);
        assert_int_equal(f->log.stale_off, marks + 1);
        /* The clear, then an order and its level record for each order. */
        assert_int_equal(f->log.changes_at_stale_off, changes + 1 + 2 * n);
        assert_false(tp_mdp3_feed_state(&f->feed, cl)->stale);
        assert_int_equal(tp_books_orders(f->books, cl), n);
        for (uint32_t i = 0; i < n; i++) {
            enum tp_side side;
            int64_t price, qty;
            assert_int_equal(tp_mbo_order(f->books, cl, snap[i].id, &side, &price, &qty, NULL), 0);
            assert_int_equal(side, snap[i].type == '0' ? TP_SIDE_BID : TP_SIDE_ASK);
            assert_int_equal(price, snap[i].price);
            assert_int_equal(qty, snap[i].qty);
        }
        /* The adopted book then matches the same snapshot. */
        send_cl_orders(f, at, 1, 1, snap, n);
        assert_int_equal(f->feed.counters.snapshot_mismatch, before + 1);
        /* Back to the book start_mbo_book built (a difference too), for the next case. */
        send_cl_orders(f, at, 1, 1, cl_orders, 2);
        assert_int_equal(f->feed.counters.snapshot_mismatch, before + 2);
    }
    assert_int_equal(f->feed.counters.snapshots_audited, 3 * 5);
    assert_int_equal(f->feed.counters.order_snapshot_mismatch, 2 * 5);
    assert_int_equal(tp_books_get(f->books, cl)->counters.snapshot_mismatch, 2 * 5);
    assert_int_equal(f->log.stale_on, f->log.stale_off);
}

/*
 * A difference found in a later chunk (the earlier ones are gone): counted, and the instrument
 * stays stale until a snapshot of it is applied. A snapshot behind the order book, or ahead of the
 * incrementals applied, is not compared.
 */
static void test_order_audit_later_chunk_and_alignment(void **state)
{
    struct fixture *f = *state;
    uint32_t cl = start_mbo_book(f);
    uint32_t at = f->seq - 1;

    send_cl_orders(f, at, 1, 2, &cl_orders[0], 1);
    const struct book_order other = {902, '0', PX(70.25), 5};
    send_cl_orders(f, at, 2, 2, &other, 1);
    assert_int_equal(f->feed.counters.snapshots_audited, 1);
    assert_int_equal(f->feed.counters.snapshot_mismatch, 1);
    assert_int_equal(f->log.stale_on, 1);
    assert_int_equal(f->log.stale_off, 0);
    assert_true(tp_mdp3_feed_state(&f->feed, cl)->stale);
    assert_int_equal(tp_books_orders(f->books, cl), 2); /* not adopted: half a snapshot */
    /* The next snapshot of CL applied recovers it. */
    packet_begin(f);
    add_snapshot52(f, 2001, 1, (struct entry[]){{0, 0, 1, 0, '0', PX(70.25), 10, 2}}, 1);
    assert_int_equal(packet_send(f), 0);
    assert_int_equal(f->log.stale_off, 1);
    send_cl_orders(f, at, 1, 1, cl_orders, 2);
    assert_true(tp_mdp3_feed_state(&f->feed, cl)->orders_complete);
    assert_int_equal(tp_books_orders(f->books, cl), 2);

    /* An order added after the snapshot's moment: behind the book, not compared nor applied. */
    const struct order later = {.id = 904, .qty = 1};
    packet_begin(f);
    add_order_book47(f, 2001, PX(70), &later, 1);
    assert_int_equal(packet_send(f), 0);
    uint64_t audited = f->feed.counters.snapshots_audited, old = f->feed.counters.snapshots_old;
    send_cl_orders(f, at, 1, 1, cl_orders, 2);
    assert_int_equal(f->feed.counters.snapshots_audited, audited);
    assert_int_equal(f->feed.counters.snapshots_old, old + 1);
    assert_int_equal(tp_books_orders(f->books, cl), 3);
    /* Ahead of the incrementals applied: not compared either. */
    send_cl_orders(f, f->seq + 5, 1, 1, cl_orders, 2);
    assert_int_equal(f->feed.counters.snapshots_audited, audited);
    assert_int_equal(f->feed.counters.snapshot_mismatch, 1);
    assert_int_equal(tp_books_orders(f->books, cl), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_definitions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_end_of_event_and_levels, setup, teardown),
        cmocka_unit_test_setup_teardown(test_changes_delivered_once_per_event, setup, teardown),
        cmocka_unit_test_setup_teardown(test_rpt_seq_gap_makes_only_that_instrument_stale, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_duplicates_and_unknown_instruments, setup, teardown),
        cmocka_unit_test_setup_teardown(test_channel_reset_clears_books, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_packets_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_entries_with_mbo, setup, teardown),
        cmocka_unit_test_setup_teardown(test_window_of_ids_status_and_channel_reset, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_burst_equals_packets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_instrument_defined_within_a_burst, setup, teardown),
        cmocka_unit_test_setup_teardown(test_packet_of_many_messages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_prefetch_miss_then_defined, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_hints_kept_for_resting_orders, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bursts_with_price_level_books, setup, teardown),
        cmocka_unit_test_setup_teardown(test_burst_inside_a_burst, setup, teardown),
        cmocka_unit_test_setup_teardown(test_46_47_refused_as_the_generated_decoder_does, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_audit_replaces_a_book_that_differs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_audit_of_a_matching_book_publishes_nothing, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_audit_finds_each_difference, setup, teardown),
        cmocka_unit_test_setup_teardown(test_audit_only_at_the_same_rpt_seq, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_level_marks_the_instrument_stale, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refused_orders_mark_the_instrument_stale, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_order_table_full_marks_the_instrument_stale, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_replay_applies_orders_only_where_a_snapshot_set_the_book, setup, teardown),
        cmocka_unit_test_setup_teardown(test_incomplete_order_book_marks_only_what_it_can_tell,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_view_incomplete_until_an_order_snapshot, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_price_level_book_has_no_order_view, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_audit_of_a_matching_book_publishes_nothing,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_audit_adopts_a_snapshot_that_differs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_order_audit_later_chunk_and_alignment, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
