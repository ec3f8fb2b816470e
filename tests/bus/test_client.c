/*
 * libtickplane against a real bus instance: filtering, the views (depth, top only on change,
 * trades, status, channel events), a strategy's own transformer, late join from the state table,
 * lap -> loss event -> resync, batch limit and lag, malformed payloads, writer restart, version
 * refusal, the reader's counters segment, and a killed writer's stale heartbeat.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bus/bus.h"
#include "tickplane/tickplane.h"
#include "tmpdir.h"
#include "tpout_sbe.h"

#define INSTRUMENTS 4
#define DEPTH       10

static char dir[64];

/* The writer's own book per instrument: the oracle the reader's book must equal. */
struct oracle {
    struct tp_level side[2][DEPTH];
    uint16_t count[2];
};

struct writer {
    struct tp_bus_writer bus;
    struct oracle books[INSTRUMENTS];
};

static int setup(void **state)
{
    (void)state;
    return tmpdir_make(dir, sizeof(dir), "client");
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(dir);
}

static void writer_open(struct writer *w, const char *instance, uint64_t ring_bytes)
{
    char err[256];
    memset(w, 0, sizeof(*w));
    struct tp_bus_params p = {.instance = instance,
                              .dir = dir,
                              .ring_bytes = ring_bytes,
                              .max_record = 512,
                              .instruments = INSTRUMENTS,
                              .depth = DEPTH,
                              .counters = 16,
                              .mode = 0644,
                              .gid = (gid_t)-1};
    assert_int_equal(tp_bus_writer_open(&w->bus, &p, err, sizeof(err)), 0);
    static const char *symbols[INSTRUMENTS] = {"ESZ6", "NQZ6", "AAPL", "MSFT"};
    for (uint32_t id = 0; id < INSTRUMENTS; id++) {
        struct tp_state_entry *e = tp_state_write_begin(w->bus.state, id);
        memcpy(e->book.symbol, symbols[id], strlen(symbols[id]));
        tp_state_write_end(e);
    }
}

static struct tp_client *attach(const char *instance)
{
    char err[256];
    struct tp_client *c = NULL;
    struct tp_client_options opt = {.shm_dir = dir};
    int rc = tp_attach(&c, instance, &opt, err, sizeof(err));
    if (rc != 0)
        print_error("attach: %s\n", err);
    assert_int_equal(rc, 0);
    return c;
}

/* Oracle: apply one change with tpout semantics (simple, independent code). */
static void oracle_apply(struct oracle *o, const struct tp_level_change *c)
{
    struct tp_level *lv = o->side[c->side];
    uint16_t *n = &o->count[c->side];
    int i = c->level - 1;
    struct tp_level in = {.price = c->price, .qty = c->qty, .orders = c->orders};
    if (c->action == 3) {
        *n = 0;
    } else if (c->action == 0) {
        for (int k = (*n < DEPTH ? *n : DEPTH - 1); k > i; k--)
            lv[k] = lv[k - 1];
        lv[i] = in;
        if (*n < DEPTH)
            (*n)++;
    } else if (c->action == 1) {
        lv[i] = in;
    } else {
        for (int k = i; k + 1 < *n; k++)
            lv[k] = lv[k + 1];
        (*n)--;
    }
}

/* Update the state entry (for the record about to be published), then publish BookUpdate. */
static uint64_t pub_book(struct writer *w, uint32_t id, const struct tp_level_change *ch, int n)
{
    struct oracle *o = &w->books[id];
    for (int i = 0; i < n; i++)
        oracle_apply(o, &ch[i]);
    struct tp_state_entry *e = tp_state_write_begin(w->bus.state, id);
    e->book.bus_sequence = tp_bus_next_sequence(&w->bus);
    e->book.bid_levels = o->count[0];
    e->book.ask_levels = o->count[1];
    memcpy(tp_state_bids(e), o->side[0], sizeof(o->side[0]));
    memcpy(tp_state_asks(w->bus.state, e), o->side[1], sizeof(o->side[1]));
    tp_state_write_end(e);

    uint8_t buf[512];
    struct tpout_book_update m;
    struct tpout_book_update_levels g;
    assert_int_equal(tpout_book_update_wrap_and_apply_header(&m, buf, sizeof(buf)), 0);
    tpout_book_update_set_instrument_id(&m, id);
    tpout_book_update_set_venue_seq(&m, 1000 + id);
    tpout_book_update_set_flags(&m, TPOUT_EVENT_FLAGS_END_OF_EVENT);
    assert_int_equal(tpout_book_update_levels_wrap_for_encode(&m, &g, (uint32_t)n), 0);
    for (int i = 0; i < n; i++) {
        assert_int_equal(tpout_book_update_levels_next(&g), 0);
        tpout_book_update_levels_set_side(&g, ch[i].side);
        tpout_book_update_levels_set_level(&g, ch[i].level);
        tpout_book_update_levels_set_action(&g, ch[i].action);
        tpout_book_update_levels_set_order_count(&g, ch[i].orders);
        tpout_book_update_levels_set_price_mantissa(&g, ch[i].price);
        tpout_book_update_levels_set_quantity(&g, ch[i].qty);
    }
    uint32_t len =
        (uint32_t)(TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + tpout_book_update_encoded_length(&m));
    return tp_bus_publish(&w->bus, TP_REC_SBE, TP_TOPIC_DEPTH, id, TP_EVENT_F_END_OF_EVENT, buf,
                          len);
}

static uint64_t pub_trade(struct writer *w, uint32_t id, int64_t px, int64_t qty)
{
    uint8_t buf[128];
    struct tpout_trade m;
    assert_int_equal(tpout_trade_wrap_and_apply_header(&m, buf, sizeof(buf)), 0);
    tpout_trade_set_instrument_id(&m, id);
    tpout_trade_set_price_mantissa(&m, px);
    tpout_trade_set_quantity(&m, qty);
    tpout_trade_set_trade_id(&m, 77);
    tpout_trade_set_aggressor_side(&m, TPOUT_AGGRESSOR_SIDE_BUY);
    uint32_t len = (uint32_t)(TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + tpout_trade_encoded_length(&m));
    return tp_bus_publish(&w->bus, TP_REC_SBE, TP_TOPIC_TRADES, id, 0, buf, len);
}

static uint64_t pub_channel_gap(struct writer *w, uint64_t from, uint64_t to)
{
    uint8_t buf[128];
    struct tpout_channel_event m;
    assert_int_equal(tpout_channel_event_wrap_and_apply_header(&m, buf, sizeof(buf)), 0);
    tpout_channel_event_set_instrument_id(&m, TPOUT_INSTRUMENT_ID_NULL_VALUE);
    tpout_channel_event_set_event_type(&m, TPOUT_CHANNEL_EVENT_TYPE_GAP);
    tpout_channel_event_set_channel_id(&m, 310);
    tpout_channel_event_set_gap_from(&m, from);
    tpout_channel_event_set_gap_to(&m, to);
    uint32_t len =
        (uint32_t)(TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + tpout_channel_event_encoded_length(&m));
    return tp_bus_publish(&w->bus, TP_REC_SBE, TP_TOPIC_STATUS, TP_INSTRUMENT_NONE, 0, buf, len);
}

static uint64_t pub_trading_status(struct writer *w, uint32_t id, uint8_t status)
{
    uint8_t buf[128];
    struct tpout_instrument_status m;
    assert_int_equal(tpout_instrument_status_wrap_and_apply_header(&m, buf, sizeof(buf)), 0);
    tpout_instrument_status_set_instrument_id(&m, id);
    tpout_instrument_status_set_trading_status(&m, status);
    tpout_instrument_status_set_venue_status(&m, 17);
    uint32_t len = (uint32_t)(TPOUT_MESSAGE_HEADER_ENCODED_LENGTH +
                              tpout_instrument_status_encoded_length(&m));
    return tp_bus_publish(&w->bus, TP_REC_SBE, TP_TOPIC_STATUS, id, 0, buf, len);
}

/* Everything a poll delivered, copied out of the callback. */
#define MAX_SEEN 4096
struct seen {
    struct tp_event ev[MAX_SEEN];
    struct tp_level bids[MAX_SEEN][2];
    int n;
};

static void collect(void *user, const struct tp_event *ev)
{
    struct seen *s = user;
    assert_true(s->n < MAX_SEEN);
    s->ev[s->n] = *ev;
    for (int i = 0; i < 2 && i < ev->book.bid_levels; i++)
        s->bids[s->n][i] = ev->book.bids[i];
    s->n++;
}

/* Poll until the ring is read to its end (a poll may deliver nothing when all was filtered). */
static int drain(struct tp_client *c, struct seen *s)
{
    int total = 0;
    struct tp_client_stats st;
    do {
        int rc = tp_poll(c, collect, s, 16);
        assert_true(rc >= 0);
        total += rc;
        tp_stats(c, &st);
    } while (st.lag > 0);
    /* Events queued inside the library (a loss notice, resync steps) need polls of their own. */
    for (int rc = 1; rc > 0;) {
        rc = tp_poll(c, collect, s, 16);
        assert_true(rc >= 0);
        total += rc;
    }
    return total;
}

static struct tp_level_change lc(int side, int level, int action, int64_t px, int64_t qty)
{
    return (struct tp_level_change){.side = (uint8_t)side,
                                    .level = (uint8_t)level,
                                    .action = (uint8_t)action,
                                    .orders = 1,
                                    .price = px,
                                    .qty = qty};
}

static void assert_book_equals_oracle(const struct tp_book_view *v, const struct oracle *o)
{
    assert_int_equal(v->bid_levels, o->count[0]);
    assert_int_equal(v->ask_levels, o->count[1]);
    for (int i = 0; i < o->count[0]; i++) {
        assert_int_equal(v->bids[i].price, o->side[0][i].price);
        assert_int_equal(v->bids[i].qty, o->side[0][i].qty);
    }
    for (int i = 0; i < o->count[1]; i++) {
        assert_int_equal(v->asks[i].price, o->side[1][i].price);
        assert_int_equal(v->asks[i].qty, o->side[1][i].qty);
    }
}

static struct seen seen;

/* A new subscription's first events: n current-state events, each flagged SNAPSHOT and RESYNC. */
static void drain_current_state(struct tp_client *c, int n)
{
    memset(&seen, 0, sizeof(seen));
    drain(c, &seen);
    assert_int_equal(seen.n, n);
    for (int i = 0; i < n; i++) {
        assert_true(seen.ev[i].flags & TP_EVENT_F_SNAPSHOT);
        assert_true(seen.ev[i].flags & TP_EVENT_F_RESYNC);
        assert_null(seen.ev[i].sbe);
    }
}

static void test_filter_and_views(void **state)
{
    (void)state;
    struct writer *w = malloc(sizeof(*w));
    writer_open(w, "views", 1 << 16);
    struct tp_client *c = attach("views");
    assert_int_equal(tp_instrument_count(c), INSTRUMENTS);
    assert_int_equal(tp_find_instrument(c, "AAPL"), 2);
    assert_int_equal(tp_find_instrument(c, "AAP"), -ENOENT);

    uint32_t one = 1, two = 2;
    assert_int_equal(
        tp_subscribe(c, &one, 1, TP_TOPIC_BIT(TP_TOPIC_TOP) | TP_TOPIC_BIT(TP_TOPIC_DEPTH)), 0);
    assert_int_equal(tp_subscribe(c, &two, 1, TP_TOPIC_BIT(TP_TOPIC_TRADES)), 0);
    assert_int_equal(tp_subscribe(c, &one, 1, TP_TOPIC_BIT(TP_TOPIC_LOSS)), -EINVAL);
    uint32_t bad = INSTRUMENTS;
    assert_int_equal(tp_subscribe(c, &bad, 1, TP_TOPIC_BIT(TP_TOPIC_TOP)), -ERANGE);
    /* Instrument 1's empty book (DEPTH, then TOP), nothing for 2: it has not traded. */
    drain_current_state(c, 2);
    assert_int_equal(seen.ev[0].topic, TP_TOPIC_DEPTH);
    assert_int_equal(seen.ev[0].instrument_id, 1);
    assert_int_equal(seen.ev[1].topic, TP_TOPIC_TOP);
    assert_int_equal(seen.ev[1].u.top.bid_price, TP_PRICE_NULL);
    assert_int_equal(seen.ev[1].u.top.ask_price, TP_PRICE_NULL);

    struct tp_level_change ch[3];
    ch[0] = lc(0, 1, 0, 100, 5); /* bid 100 x5 */
    ch[1] = lc(1, 1, 0, 101, 7); /* ask 101 x7 */
    pub_book(w, 1, ch, 2);
    pub_book(w, 0, ch, 2); /* instrument 0: nobody subscribed */
    pub_trade(w, 2, 100, 3);
    pub_trade(w, 1, 100, 3);    /* trades of 1: not subscribed */
    ch[0] = lc(0, 2, 0, 99, 4); /* second bid level: top unchanged */
    pub_book(w, 1, ch, 1);
    ch[0] = lc(0, 1, 2, 0, 0); /* delete best bid: 99 becomes the top */
    pub_book(w, 1, ch, 1);

    memset(&seen, 0, sizeof(seen));
    drain(c, &seen);
    /* DEPTH+TOP, TRADE, DEPTH (no TOP: unchanged), DEPTH+TOP. */
    assert_int_equal(seen.n, 6);
    assert_int_equal(seen.ev[0].topic, TP_TOPIC_DEPTH);
    assert_int_equal(seen.ev[0].u.depth.count, 2);
    assert_int_equal(seen.ev[0].venue_seq, 1001);
    assert_true(seen.ev[0].flags & TP_EVENT_F_END_OF_EVENT);
    assert_int_equal(seen.ev[1].topic, TP_TOPIC_TOP);
    assert_int_equal(seen.ev[1].u.top.bid_price, 100);
    assert_int_equal(seen.ev[1].u.top.ask_qty, 7);
    assert_int_equal(seen.ev[2].topic, TP_TOPIC_TRADES);
    assert_int_equal(seen.ev[2].instrument_id, 2);
    assert_int_equal(seen.ev[2].u.trade.qty, 3);
    assert_int_equal(seen.ev[2].u.trade.aggressor, 1);
    assert_int_equal(seen.ev[3].topic, TP_TOPIC_DEPTH);
    assert_int_equal(seen.ev[3].book.bid_levels, 2);
    assert_int_equal(seen.bids[3][1].price, 99);
    assert_int_equal(seen.ev[4].topic, TP_TOPIC_DEPTH);
    assert_int_equal(seen.ev[5].topic, TP_TOPIC_TOP);
    assert_int_equal(seen.ev[5].u.top.bid_price, 99);
    assert_int_equal(seen.ev[5].u.top.bid_qty, 4);
    assert_non_null(seen.ev[5].sbe);

    struct tp_client_stats st;
    tp_stats(c, &st);
    assert_int_equal(st.records, 6);
    assert_int_equal(st.filtered, 2);
    assert_int_equal(st.delivered, 2 + 6); /* the current state first, then the records' */
    assert_int_equal(st.lost, 0);
    assert_int_equal(st.lag, 0);

    /* Channel-wide events reach STATUS subscribers of any instrument. */
    pub_channel_gap(w, 10, 12);
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(drain(c, &seen), 0);
    assert_int_equal(tp_subscribe(c, &two, 1, TP_TOPIC_BIT(TP_TOPIC_STATUS)), 0);
    pub_channel_gap(w, 13, 14);
    assert_int_equal(drain(c, &seen), 1);
    assert_int_equal(seen.ev[0].instrument_id, TP_INSTRUMENT_NONE);
    assert_int_equal(seen.ev[0].u.status.kind, TP_STATUS_EVENT_CHANNEL);
    assert_int_equal(seen.ev[0].u.status.qty, 13);
    assert_int_equal(seen.ev[0].u.status.gap_to, 14);
    assert_int_equal(seen.ev[0].u.status.channel_id, 310);
    /* A trading status right after it: the fields a trading status does not carry read zero,
     * not what the channel event before it held. */
    pub_channel_gap(w, 15, 16);
    pub_trading_status(w, 2, 2);
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(drain(c, &seen), 2);
    const struct tp_status_event *ts = &seen.ev[1].u.status;
    assert_int_equal(seen.ev[1].instrument_id, 2);
    assert_int_equal(ts->kind, TP_STATUS_EVENT_TRADING);
    assert_int_equal(ts->trading_status, 2);
    assert_int_equal(ts->venue_status, 17);
    assert_int_equal(ts->stat_type, 0);
    assert_int_equal(ts->channel_id, 0);
    assert_int_equal(ts->price, TP_PRICE_NULL);
    assert_int_equal(ts->qty, 0);
    assert_int_equal(ts->gap_to, 0);

    /* Unsubscribe: nothing more for instrument 1. */
    assert_int_equal(
        tp_unsubscribe(c, &one, 1, TP_TOPIC_BIT(TP_TOPIC_TOP) | TP_TOPIC_BIT(TP_TOPIC_DEPTH)), 0);
    ch[0] = lc(0, 1, 1, 99, 40);
    pub_book(w, 1, ch, 1);
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(drain(c, &seen), 0);

    tp_detach(c);
    tp_bus_writer_close(&w->bus, 1);
    free(w);
}

static void test_late_join_and_lap_resync(void **state)
{
    (void)state;
    struct writer *w = malloc(sizeof(*w));
    writer_open(w, "lap", 4096); /* tiny ring: easy to lap */
    struct tp_level_change ch[2];
    for (int i = 0; i < 5; i++) {
        ch[0] = lc(0, 1, 0, 100 + i, 1 + i);
        pub_book(w, 3, ch, 1);
    }
    /* A late joiner gets the current book from the state table at subscribe time. */
    struct tp_client *c = attach("lap");
    uint32_t id = 3;
    assert_int_equal(
        tp_subscribe(c, &id, 1, TP_TOPIC_BIT(TP_TOPIC_DEPTH) | TP_TOPIC_BIT(TP_TOPIC_TOP)), 0);
    struct tp_instrument_state *s = malloc(sizeof(*s));
    assert_int_equal(tp_read_state(c, 3, s), 0);
    assert_int_equal(s->book.bid_levels, 5);
    assert_int_equal(s->bids[0].price, 104);
    /* ... and its first events are that book: DEPTH with the five bids, TOP at 104. */
    drain_current_state(c, 2);
    assert_int_equal(seen.ev[0].topic, TP_TOPIC_DEPTH);
    assert_int_equal(seen.ev[0].book.bid_levels, 5);
    assert_int_equal(seen.ev[1].topic, TP_TOPIC_TOP);
    assert_int_equal(seen.ev[1].u.top.bid_price, 104);
    assert_int_equal(seen.ev[1].u.top.bid_qty, 5);

    ch[0] = lc(1, 1, 0, 200, 9);
    pub_book(w, 3, ch, 1);
    memset(&seen, 0, sizeof(seen));
    drain(c, &seen);
    assert_int_equal(seen.n, 2);
    assert_book_equals_oracle(&seen.ev[0].book, &w->books[3]);

    /* Now fall far behind: the 4 KiB ring is overwritten many times. */
    for (int i = 0; i < 300; i++) {
        ch[0] = lc(i % 2, 1 + (i % 3), 1, 0, 10 + i); /* change qty at levels 1..3 (price kept) */
        ch[0].price = w->books[3].side[i % 2][i % 3].price;
        if (w->books[3].count[i % 2] <= i % 3)
            ch[0] = lc(i % 2, 1, 1, w->books[3].side[i % 2][0].price, 10 + i);
        pub_book(w, 3, ch, 1);
        pub_trade(w, 0, 1, 1); /* traffic for others */
    }
    memset(&seen, 0, sizeof(seen));
    drain(c, &seen);
    assert_true(seen.n >= 2);
    assert_int_equal(seen.ev[0].topic, TP_TOPIC_LOSS);
    assert_true(seen.ev[0].u.lost > 400);
    assert_int_equal(seen.ev[1].topic, TP_TOPIC_DEPTH);
    assert_true(seen.ev[1].flags & TP_EVENT_F_RESYNC);
    /* After the resync and whatever records were still in the ring, the book is the truth. */
    const struct tp_event *last_depth = NULL;
    for (int i = 0; i < seen.n; i++)
        if (seen.ev[i].topic == TP_TOPIC_DEPTH)
            last_depth = &seen.ev[i];
    assert_non_null(last_depth);
    assert_book_equals_oracle(&last_depth->book, &w->books[3]); /* the library's live book */
    struct tp_client_stats st;
    tp_stats(c, &st);
    assert_int_equal(st.lapped, 1);
    assert_int_equal(st.lost, seen.ev[0].u.lost);
    assert_int_equal(st.resyncs, 1);
    assert_int_equal(st.malformed, 0);
    /* One more change after the lap: applied on top of the resynced book. */
    ch[0] = lc(0, 1, 0, 500, 1);
    pub_book(w, 3, ch, 1);
    memset(&seen, 0, sizeof(seen));
    drain(c, &seen);
    assert_int_equal(seen.ev[0].topic, TP_TOPIC_DEPTH);
    assert_book_equals_oracle(&seen.ev[0].book, &w->books[3]);
    assert_int_equal(seen.ev[1].topic, TP_TOPIC_TOP);
    assert_int_equal(seen.ev[1].u.top.bid_price, 500);
    free(s);
    tp_detach(c);
    tp_bus_writer_close(&w->bus, 1);
    free(w);
}

/* A strategy's own transformer: large trades only, as a topic of its own. */
static int big_trades(void *ctx, const struct tp_record_view *rec, struct tp_event *out)
{
    int64_t *threshold = ctx;
    if (rec->type != TP_REC_SBE || out->u.trade.qty < *threshold)
        return 0;
    out->u.user = rec->payload;
    return 1;
}

static void test_user_transformer_batch_limit_and_lag(void **state)
{
    (void)state;
    struct writer *w = malloc(sizeof(*w));
    writer_open(w, "user", 1 << 16);
    struct tp_client *c = attach("user");
    int64_t threshold = 50;
    int topic =
        tp_add_transformer(c, "big-trades", TP_TOPIC_BIT(TP_TOPIC_TRADES), big_trades, &threshold);
    assert_int_equal(topic, TP_TOPIC_USER_FIRST);
    assert_int_equal(
        tp_add_transformer(c, "bad", TP_TOPIC_BIT(TP_TOPIC_USER_FIRST), big_trades, NULL), -EINVAL);
    assert_int_equal(tp_subscribe(c, NULL, 0, TP_TOPIC_BIT((uint32_t)topic)), 0);
    for (int i = 0; i < 100; i++)
        pub_trade(w, (uint32_t)(i % INSTRUMENTS), 10, i);
    /* Batch limit: at most 10 records per poll; the rest is lag. */
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(tp_poll(c, collect, &seen, 10), 0); /* trades 0..9 are all small */
    struct tp_client_stats st;
    tp_stats(c, &st);
    assert_int_equal(st.records, 10);
    assert_int_equal(st.lag, 90);
    drain(c, &seen);
    assert_int_equal(seen.n, 50);
    assert_int_equal(seen.ev[0].topic, topic);
    assert_int_equal(seen.ev[0].u.trade.qty, 50);
    assert_int_equal(seen.ev[49].u.trade.qty, 99);
    tp_detach(c);
    tp_bus_writer_close(&w->bus, 1);
    free(w);
}

/* An EOBI instrument: tpout venue 2, EUREX by default, named by its SecurityID. */
static void test_eobi_instrument_info(void **state)
{
    (void)state;
    struct writer *w = malloc(sizeof(*w));
    writer_open(w, "eobi", 1 << 16);
    struct tp_state_entry *e = tp_state_write_begin(w->bus.state, 1);
    snprintf(e->book.symbol, sizeof(e->book.symbol), "%d", 4128839);
    e->book.venue = 2;
    tp_state_write_end(e);
    struct tp_client *c = attach("eobi");
    struct tp_instrument_info info;
    assert_int_equal(tp_instrument_info(c, 1, &info), 0);
    assert_string_equal(info.symbol, "4128839");
    assert_int_equal(info.venue, 2);
    assert_string_equal(info.venue_name, "EUREX");
    tp_detach(c);
    tp_bus_writer_close(&w->bus, 1);
    free(w);
}

static void test_symbol_info_and_current_state(void **state)
{
    (void)state;
    struct writer *w = malloc(sizeof(*w));
    writer_open(w, "info", 1 << 16);
    struct tp_state_entry *e = tp_state_write_begin(w->bus.state, 2);
    e->book.venue = 1;
    e->book.tick_size = 10000000; /* 0.01 */
    e->book.flags = TP_EVENT_F_STALE;
    e->book.last_trade.price = 190120000000;
    e->book.last_trade.qty = 50;
    e->book.last_trade.trade_id = 9;
    e->book.last_trade.aggressor = 2;
    e->book.bid_levels = 1;
    tp_state_bids(e)[0] = (struct tp_level){.price = 190110000000, .qty = 300, .orders = 2};
    tp_state_write_end(e);
    e = tp_state_write_begin(w->bus.state, 3);
    memcpy(e->book.symbol, "MSFT    ", 8); /* ITCH pads with spaces */
    tp_state_write_end(e);
    e = tp_state_write_begin(w->bus.state, 1);
    memset(e->book.symbol, 0, sizeof(e->book.symbol)); /* not defined yet */
    tp_state_write_end(e);
    struct tp_client *c = attach("info");

    char sym[TP_SYMBOL_LEN + 1];
    assert_int_equal(tp_symbol(c, 2, sym), 0);
    assert_string_equal(sym, "AAPL");
    assert_int_equal(tp_symbol(c, 3, sym), 0);
    assert_string_equal(sym, "MSFT");
    assert_int_equal(tp_symbol(c, 1, sym), -ENOENT);
    assert_int_equal(tp_symbol(c, INSTRUMENTS, sym), -ERANGE);
    struct tp_instrument_info info;
    assert_int_equal(tp_instrument_info(c, 2, &info), 0);
    assert_int_equal(info.instrument_id, 2);
    assert_string_equal(info.symbol, "AAPL");
    assert_int_equal(info.venue, 1);
    assert_string_equal(info.venue_name, "NASDAQ");
    assert_int_equal(info.tick_size, 10000000);
    assert_true(info.flags & TP_EVENT_F_STALE);
    assert_int_equal(tp_instrument_info(c, 0, &info), 0);
    assert_string_equal(info.venue_name, "CME");

    /* Subscribing TOP and TRADES: the current top (flagged as the book is: stale) and the last
     * trade come first, before the record published after the subscription. */
    uint32_t id = 2;
    assert_int_equal(
        tp_subscribe(c, &id, 1, TP_TOPIC_BIT(TP_TOPIC_TOP) | TP_TOPIC_BIT(TP_TOPIC_TRADES)), 0);
    pub_trade(w, 2, 190130000000, 7);
    memset(&seen, 0, sizeof(seen));
    drain(c, &seen);
    assert_int_equal(seen.n, 3);
    assert_int_equal(seen.ev[0].topic, TP_TOPIC_TOP);
    assert_int_equal(seen.ev[0].instrument_id, 2);
    assert_int_equal(seen.ev[0].flags &
                         (TP_EVENT_F_SNAPSHOT | TP_EVENT_F_RESYNC | TP_EVENT_F_STALE),
                     TP_EVENT_F_SNAPSHOT | TP_EVENT_F_RESYNC | TP_EVENT_F_STALE);
    assert_int_equal(seen.ev[0].u.top.bid_price, 190110000000);
    assert_int_equal(seen.ev[0].u.top.bid_qty, 300);
    assert_int_equal(seen.ev[0].u.top.ask_price, TP_PRICE_NULL);
    assert_int_equal(seen.ev[1].topic, TP_TOPIC_TRADES);
    assert_true(seen.ev[1].flags & TP_EVENT_F_SNAPSHOT);
    assert_int_equal(seen.ev[1].u.trade.price, 190120000000);
    assert_int_equal(seen.ev[1].u.trade.qty, 50);
    assert_int_equal(seen.ev[1].u.trade.trade_id, 9);
    assert_int_equal(seen.ev[1].u.trade.aggressor, 2);
    assert_int_equal(seen.ev[2].topic, TP_TOPIC_TRADES);
    assert_false(seen.ev[2].flags & TP_EVENT_F_SNAPSHOT);
    assert_int_equal(seen.ev[2].u.trade.qty, 7);

    /* Topics already held bring no second snapshot; one dropped before the poll brings none. */
    assert_int_equal(tp_subscribe(c, &id, 1, TP_TOPIC_BIT(TP_TOPIC_TOP)), 0);
    uint32_t other = 3;
    assert_int_equal(tp_subscribe(c, &other, 1, TP_TOPIC_BIT(TP_TOPIC_TOP)), 0);
    assert_int_equal(tp_unsubscribe(c, &other, 1, TP_TOPIC_BIT(TP_TOPIC_TOP)), 0);
    memset(&seen, 0, sizeof(seen));
    drain(c, &seen);
    assert_int_equal(seen.n, 0);
    tp_detach(c);
    tp_bus_writer_close(&w->bus, 1);
    free(w);
}

static void test_format_price(void **state)
{
    (void)state;
    char buf[32];
    static const struct {
        int64_t price, tick;
        const char *text;
    } cases[] = {
        {115000000000, TP_PRICE_NULL, "115.00"},
        {11500000000, 0, "11.50"},
        {153770000000, TP_PRICE_NULL, "153.77"},
        {4500250000000, 250000000, "4500.25"},
        {153770000000, 100000, "153.7700"}, /* a 0.0001 tick: four decimals */
        {25000000, 5000000, "0.025"},
        {123456789, 10000000, "0.123456789"}, /* off the tick: every digit kept */
        {-500000000, TP_PRICE_NULL, "-0.50"},
        {0, TP_PRICE_NULL, "0.00"},
        {INT64_MIN + 1, TP_PRICE_NULL, "-9223372036.854775807"},
        {TP_PRICE_NULL, 10000000, "-"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int n = tp_format_price(cases[i].price, cases[i].tick, buf, sizeof(buf));
        assert_string_equal(buf, cases[i].text);
        assert_int_equal(n, (int)strlen(cases[i].text));
    }
    assert_int_equal(tp_format_price(115000000000, TP_PRICE_NULL, buf, 4), 6); /* truncated */
    assert_string_equal(buf, "115");
}

static void test_malformed_payloads_counted(void **state)
{
    (void)state;
    struct writer *w = malloc(sizeof(*w));
    writer_open(w, "bad", 1 << 16);
    struct tp_client *c = attach("bad");
    assert_int_equal(tp_subscribe(c, NULL, 0, TP_TOPICS_BUILTIN), 0);
    drain_current_state(c, 2 * INSTRUMENTS); /* every empty book's DEPTH and TOP */
    uint8_t junk[64];
    memset(junk, 0xab, sizeof(junk));
    tp_bus_publish(&w->bus, TP_REC_SBE, TP_TOPIC_TRADES, 1, 0, junk, sizeof(junk));
    /* A truncated trade: the header promises a 72-byte block. */
    uint8_t buf[128];
    struct tpout_trade m;
    tpout_trade_wrap_and_apply_header(&m, buf, sizeof(buf));
    tp_bus_publish(&w->bus, TP_REC_SBE, TP_TOPIC_TRADES, 1, 0, buf, 40);
    /* A BookUpdate whose group claims more entries than it holds. */
    struct tpout_book_update bu;
    struct tpout_book_update_levels g;
    tpout_book_update_wrap_and_apply_header(&bu, buf, sizeof(buf));
    tpout_book_update_levels_wrap_for_encode(&bu, &g, 3);
    tp_bus_publish(&w->bus, TP_REC_SBE, TP_TOPIC_DEPTH, 1, 0, buf, 8 + 40 + 4 + 24);
    /* A trade tagged as a DEPTH record. */
    tpout_trade_wrap_and_apply_header(&m, buf, sizeof(buf));
    tp_bus_publish(&w->bus, TP_REC_SBE, TP_TOPIC_DEPTH, 1, 0, buf, 8 + 72);
    pub_trade(w, 1, 5, 5); /* and a good one */
    memset(&seen, 0, sizeof(seen));
    drain(c, &seen);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.ev[0].u.trade.price, 5);
    struct tp_client_stats st;
    tp_stats(c, &st);
    assert_int_equal(st.malformed, 4);
    tp_detach(c);
    tp_bus_writer_close(&w->bus, 1);
    free(w);
}

static void test_restart_version_and_reader_counters(void **state)
{
    (void)state;
    struct writer *w = malloc(sizeof(*w));
    writer_open(w, "life", 1 << 16);
    struct tp_client *c = attach("life");
    assert_int_equal(tp_subscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_TRADES)), 0);
    pub_trade(w, 0, 1, 1);
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(drain(c, &seen), 1);
    assert_int_equal(tp_check_writer(c), 0);

    /* This reader's counters are visible to a side-car while it runs. */
    char path[256], err[256], part[32];
    snprintf(part, sizeof(part), "reader.%d", (int)getpid());
    assert_int_equal(tp_seg_path(path, sizeof(path), dir, "life", part), 0);
    struct tp_seg side;
    assert_int_equal(tp_seg_attach(&side, path, TP_SEG_COUNTERS, err, sizeof(err)), 0);
    assert_int_equal(tp_counter_get(tp_counters_find(side.data, "reader.records")), 1);
    assert_int_equal(tp_counter_get(tp_counters_find(side.data, "reader.delivered")), 1);
    tp_seg_close(&side);

    /*
     * The writer restarts: the old writer's last record is still delivered, then poll says so,
     * and re-attach continues with the new instance.
     */
    pub_trade(w, 0, 5, 6);
    struct writer *w2 = malloc(sizeof(*w2));
    writer_open(w2, "life", 1 << 16);
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(tp_poll(c, collect, &seen, 16), 1);
    assert_int_equal(seen.ev[0].bus_sequence, 2);
    assert_int_equal(tp_poll(c, collect, &seen, 16), -ESTALE);
    assert_int_equal(tp_check_writer(c), -ESTALE);
    assert_int_equal(tp_reattach(c, err, sizeof(err)), 0);
    pub_trade(w2, 2, 3, 4);
    memset(&seen, 0, sizeof(seen));
    assert_int_equal(drain(c, &seen), 1);
    assert_int_equal(seen.ev[0].bus_sequence, 1);
    tp_detach(c);
    struct stat st;
    assert_int_equal(stat(path, &st), -1); /* counters segment removed on detach */

    /* A segment of another layout version is refused with a clear reason. */
    w2->bus.ring_seg.hdr->layout_version = TP_SEG_LAYOUT_VERSION + 1;
    struct tp_client_options opt = {.shm_dir = dir};
    assert_int_equal(tp_attach(&c, "life", &opt, err, sizeof(err)), -EPROTONOSUPPORT);
    assert_non_null(strstr(err, "layout version"));
    w2->bus.ring_seg.hdr->layout_version = TP_SEG_LAYOUT_VERSION;
    assert_int_equal(tp_attach(&c, "nothing", &opt, err, sizeof(err)), -ENOENT);
    tp_bus_writer_close(&w->bus, 0);
    tp_bus_writer_close(&w2->bus, 1);
    free(w);
    free(w2);
}

/* Every segment of the writer's instance beats at `when` (what the daemon's control loop does). */
/* The writer's last beat was at `when` (stored: a beat never moves the heartbeat back). */
static void beat_all(struct writer *w, uint64_t when)
{
    atomic_store(&w->bus.ring_seg.hdr->heartbeat_ns, when);
    atomic_store(&w->bus.state_seg.hdr->heartbeat_ns, when);
    atomic_store(&w->bus.counters_seg.hdr->heartbeat_ns, when);
}

/*
 * A killed daemon leaves its segments LIVE: tp_attach refuses them once the heartbeat is older
 * than the timeout (the option's, the environment's, or 2 s), tp_check_heartbeat and
 * tp_check_writer report it to a strategy attached before; a fresh heartbeat or none (a writer
 * that keeps none) is accepted.
 */
static void test_stale_heartbeat_refused(void **state)
{
    (void)state;
    struct writer *w = malloc(sizeof(*w));
    writer_open(w, "beat", 1 << 16);
    char err[256] = "";
    struct tp_client *c = attach("beat"); /* keeps no heartbeat: accepted */
    assert_int_equal(tp_check_heartbeat(c), 0);
    assert_int_equal(tp_check_writer(c), 0);
    tp_detach(c);

    uint64_t now = tp_seg_clock_ns();
    beat_all(w, now);
    c = attach("beat");
    assert_int_equal(tp_check_heartbeat(c), 0);
    assert_int_equal(tp_check_writer(c), 0);

    /* The daemon is killed: 3 s without a beat. The strategy attached before is told. */
    beat_all(w, now - 3000000000ull);
    assert_int_equal(tp_check_heartbeat(c), -EOWNERDEAD);
    assert_int_equal(tp_check_writer(c), -EOWNERDEAD);
    assert_non_null(strstr(tp_last_error(c), "last beat"));
    assert_non_null(strstr(tp_last_error(c), "killed or is hung"));
    tp_detach(c);

    /* One started afterwards is refused, with the reason. */
    struct tp_client_options opt = {.shm_dir = dir};
    c = NULL;
    assert_int_equal(tp_attach(&c, "beat", &opt, err, sizeof(err)), -EOWNERDEAD);
    assert_null(c);
    assert_non_null(strstr(err, "instance beat"));
    assert_non_null(strstr(err, "more than the 2000 ms allowed"));

    /* The timeout is the caller's: the option, else the environment. */
    opt.heartbeat_timeout_ms = 5000;
    assert_int_equal(tp_attach(&c, "beat", &opt, err, sizeof(err)), 0);
    assert_int_equal(tp_check_heartbeat(c), 0);
    tp_detach(c);
    opt.heartbeat_timeout_ms = 0;
    setenv(TP_HEARTBEAT_TIMEOUT_ENV, "5000", 1);
    assert_int_equal(tp_attach(&c, "beat", &opt, err, sizeof(err)), 0);
    tp_detach(c);
    setenv(TP_HEARTBEAT_TIMEOUT_ENV, "1000", 1);
    beat_all(w, tp_seg_clock_ns() - 1500000000ull);
    assert_int_equal(tp_attach(&c, "beat", &opt, err, sizeof(err)), -EOWNERDEAD);
    assert_non_null(strstr(err, "more than the 1000 ms allowed"));
    unsetenv(TP_HEARTBEAT_TIMEOUT_ENV);

    /* Every segment of the instance counts: here only the counters segment stopped. */
    beat_all(w, tp_seg_clock_ns());
    atomic_store(&w->bus.counters_seg.hdr->heartbeat_ns, tp_seg_clock_ns() - 3000000000ull);
    assert_int_equal(tp_attach(&c, "beat", &opt, err, sizeof(err)), -EOWNERDEAD);
    beat_all(w, tp_seg_clock_ns());
    assert_int_equal(tp_attach(&c, "beat", &opt, err, sizeof(err)), 0);
    tp_detach(c);

    /* Without a choice of the strategy's, the daemon's word (bus.heartbeat_timeout_ms, in the
     * headers) is the timeout: 3 s without a beat is alive with its 10 s, dead with 1 s asked. */
    w->bus.state_seg.hdr->heartbeat_timeout_ms = 10000;
    beat_all(w, tp_seg_clock_ns() - 3000000000ull);
    assert_int_equal(tp_attach(&c, "beat", &opt, err, sizeof(err)), 0);
    assert_int_equal(tp_check_heartbeat(c), 0);
    assert_int_equal(tp_check_writer(c), 0);
    tp_detach(c);
    opt.heartbeat_timeout_ms = 1000;
    assert_int_equal(tp_attach(&c, "beat", &opt, err, sizeof(err)), -EOWNERDEAD);
    assert_non_null(strstr(err, "more than the 1000 ms allowed"));
    tp_bus_writer_close(&w->bus, 1);
    free(w);
}

/* A reader killed before tp_detach leaves its reader segment; the path of pid's. */
static pid_t killed_reader(const char *instance, char *path, size_t size)
{
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        struct tp_client *c = NULL;
        struct tp_client_options opt = {.shm_dir = dir};
        char err[256];
        _exit(tp_attach(&c, instance, &opt, err, sizeof(err)) == 0 ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_int_equal(WEXITSTATUS(status), 0);
    snprintf(path, size, "%s/tickplane.%s.reader.%d", dir, instance, (int)child);
    return child;
}

/*
 * Reader segments are mode 0640 (others than the reader's group cannot read what it receives),
 * and the segments of readers that are gone are removed: by the next attach and by
 * tp_bus_sweep_readers (the daemon's sweep); a live reader's stays.
 */
static void test_reader_segments_of_killed_readers_removed(void **state)
{
    (void)state;
    struct writer *w = malloc(sizeof(*w));
    writer_open(w, "sweep", 1 << 16);
    char path[256], own[256];
    killed_reader("sweep", path, sizeof(path));
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    struct tp_client *c = attach("sweep");
    assert_int_equal(stat(path, &st), -1);
    snprintf(own, sizeof(own), "%s/tickplane.sweep.reader.%d", dir, (int)getpid());
    assert_int_equal(stat(own, &st), 0);

    killed_reader("sweep", path, sizeof(path));
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(tp_bus_sweep_readers(dir, "sweep"), 1);
    assert_int_equal(stat(path, &st), -1);
    assert_int_equal(stat(own, &st), 0); /* alive */
    assert_int_equal(tp_bus_sweep_readers(dir, "sweep"), 0);
    tp_detach(c);
    tp_bus_writer_close(&w->bus, 1);
    free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filter_and_views),
        cmocka_unit_test(test_late_join_and_lap_resync),
        cmocka_unit_test(test_user_transformer_batch_limit_and_lag),
        cmocka_unit_test(test_malformed_payloads_counted),
        cmocka_unit_test(test_symbol_info_and_current_state),
        cmocka_unit_test(test_eobi_instrument_info),
        cmocka_unit_test(test_format_price),
        cmocka_unit_test(test_restart_version_and_reader_counters),
        cmocka_unit_test(test_stale_heartbeat_refused),
        cmocka_unit_test(test_reader_segments_of_killed_readers_removed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
