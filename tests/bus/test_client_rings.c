/*
 * A bus with several writers (one per data lcore): one ring each, one shared state table. The
 * segments and their header (ring count, index, run), per-writer counters, and libtickplane
 * reading every ring: each instrument's events in order, per-ring statistics, and a lap of one
 * ring reported for that ring (LOSS event, resync from the state table) while the other flows;
 * an implied update leaves the reader's (outright) book alone.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "bus/bus.h"
#include "publish_level.h"
#include "tickplane/tickplane.h"
#include "tmpdir.h"

#define INSTRUMENTS 4 /* ids 0-1 on writer 0, 2-3 on writer 1 */
#define WRITERS     2

static char dir[64];
static struct tp_bus_writer ws[WRITERS];

static int setup(void **state)
{
    (void)state;
    return tmpdir_make(dir, sizeof(dir), "rings");
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(dir);
}

static void open_writers(const char *instance)
{
    char err[256];
    struct tp_bus_params p = {.instance = instance,
                              .dir = dir,
                              .ring_bytes = 65536,
                              .max_record = 512,
                              .instruments = INSTRUMENTS,
                              .depth = 4,
                              .counters = 32,
                              .mode = 0644,
                              .gid = (gid_t)-1};
    int rc = tp_bus_writers_open(ws, WRITERS, &p, err, sizeof(err));
    if (rc != 0)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    static const char *symbols[INSTRUMENTS] = {"ESZ6", "NQZ6", "AAPL", "MSFT"};
    for (uint32_t id = 0; id < INSTRUMENTS; id++) {
        struct tp_state_entry *e = tp_state_write_begin(ws[id / 2].state, id);
        memcpy(e->book.symbol, symbols[id], strlen(symbols[id]));
        tp_state_write_end(e);
    }
}

static void close_writers(void)
{
    for (unsigned k = WRITERS; k-- > 0;)
        tp_bus_writer_close(&ws[k], 1);
}

/* A level-1 bid of instrument id at price px on its writer, its state entry written first. */
static void publish_bid(uint32_t id, int64_t px)
{
    struct tp_bus_writer *w = &ws[id / 2];
    struct tp_state_entry *e = tp_state_write_begin(w->state, id);
    e->book.bus_sequence = tp_bus_next_sequence(w);
    e->book.bid_levels = 1;
    tp_state_bids(e)[0] = (struct tp_level){.price = px, .qty = 1};
    tp_state_write_end(e);
    assert_true(publish_level(w, id, 0, 1, px == 100 ? 0 : 1, px, 1) != 0);
}

struct seen {
    uint64_t depth_events[INSTRUMENTS];
    int64_t last_price[INSTRUMENTS];
    unsigned out_of_order;
    unsigned losses;
    uint64_t lost;
    uint64_t loss_ring;
    unsigned resyncs;
    uint16_t book_bids[INSTRUMENTS]; /* the reader's book after the last DEPTH event */
    int64_t book_best_bid[INSTRUMENTS];
};

static void count_snapshot(void *user, const struct tp_event *ev)
{
    assert_true(ev->flags & TP_EVENT_F_SNAPSHOT);
    (*(int *)user)++;
}

/* Subscribed DEPTH for every instrument: one current-state event each comes first. */
static void drain_current_state(struct tp_client *c)
{
    int n = 0;
    while (tp_poll(c, count_snapshot, &n, 64) > 0)
        ;
    assert_int_equal(n, INSTRUMENTS);
}

static void on_event(void *user, const struct tp_event *ev)
{
    struct seen *s = user;
    if (ev->topic == TP_TOPIC_LOSS) {
        s->losses++;
        s->lost += ev->u.lost;
        s->loss_ring = ev->venue_seq;
        return;
    }
    if (ev->topic != TP_TOPIC_DEPTH || ev->instrument_id >= INSTRUMENTS)
        return;
    uint32_t id = ev->instrument_id;
    if (ev->flags & TP_EVENT_F_RESYNC) {
        s->resyncs++;
        s->last_price[id] = ev->book.bids[0].price;
        return;
    }
    int64_t px = ev->u.depth.changes[0].price;
    s->book_bids[id] = ev->book.bid_levels;
    s->book_best_bid[id] = ev->book.bid_levels ? ev->book.bids[0].price : 0;
    if (px <= s->last_price[id] && !(ev->flags & TP_EVENT_F_IMPLIED))
        s->out_of_order++;
    s->last_price[id] = px;
    s->depth_events[id]++;
}

static struct tp_client *attach(const char *instance)
{
    char err[256];
    struct tp_client *c = NULL;
    struct tp_client_options opt = {.shm_dir = dir, .no_reader_segment = 1};
    int rc = tp_attach(&c, instance, &opt, err, sizeof(err));
    if (rc != 0)
        print_error("attach: %s\n", err);
    assert_int_equal(rc, 0);
    return c;
}

static void test_segments_and_counters(void **state)
{
    (void)state;
    open_writers("segs");
    char path[128];
    struct stat st;
    snprintf(path, sizeof(path), "%s/tickplane.segs.ring", dir);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof(path), "%s/tickplane.segs.ring.1", dir);
    assert_int_equal(stat(path, &st), 0);
    snprintf(path, sizeof(path), "%s/tickplane.segs.ring.2", dir);
    assert_int_equal(stat(path, &st), -1);
    /* The writers share the state table and counters, each with its own ring and counters. */
    assert_ptr_equal(ws[0].state, ws[1].state);
    assert_ptr_not_equal(ws[0].ring.shared, ws[1].ring.shared);
    assert_string_equal(ws[0].stats.published->name, "bus.published");
    assert_string_equal(ws[1].stats.published->name, "bus.ring=1.published");
    publish_bid(2, 100);
    assert_int_equal(tp_counter_get(ws[1].stats.published), 1);
    assert_int_equal(tp_counter_get(ws[0].stats.published), 0);

    struct tp_bus_reader r;
    char err[256];
    assert_int_equal(tp_bus_reader_open(&r, dir, "segs", err, sizeof(err)), 0);
    assert_int_equal(r.n_rings, 2);
    assert_ptr_equal(tp_bus_reader_ring(&r, 0), r.ring_mem);
    assert_non_null(tp_bus_reader_ring(&r, 1));
    assert_null(tp_bus_reader_ring(&r, 2));
    assert_int_equal(tp_bus_reader_ring_seg(&r, 1)->hdr->params[TP_BUS_RING_PARAM_INDEX], 1);
    assert_false(tp_bus_reader_stale(&r));
    /* A writer that closes its ring makes the whole instance stale for readers. */
    tp_bus_writer_close(&ws[1], 0);
    assert_true(tp_bus_reader_stale(&r));
    tp_bus_reader_close(&r);
    tp_bus_writer_close(&ws[0], 1);
    /* Too many writers, or too few counter slots for their counters, are refused. */
    struct tp_bus_params p = {.instance = "segs",
                              .dir = dir,
                              .ring_bytes = 65536,
                              .max_record = 512,
                              .instruments = 4,
                              .depth = 4,
                              .counters = 8,
                              .mode = 0644,
                              .gid = (gid_t)-1};
    assert_int_equal(tp_bus_writers_open(ws, 2, &p, err, sizeof(err)), -EINVAL);
    assert_int_equal(tp_bus_writers_open(ws, TP_BUS_MAX_RINGS + 1, &p, err, sizeof(err)), -EINVAL);
}

static void test_client_reads_every_ring_in_order(void **state)
{
    (void)state;
    open_writers("order");
    struct tp_client *c = attach("order");
    assert_int_equal(tp_ring_count(c), 2);
    assert_int_equal(tp_subscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_DEPTH)), 0);
    drain_current_state(c);
    /* Interleaved publishing on both writers, each instrument's prices rising. */
    for (int64_t px = 100; px < 140; px++)
        for (uint32_t id = 0; id < INSTRUMENTS; id++)
            publish_bid(id, px);
    struct seen s = {0};
    int n, total = 0;
    while ((n = tp_poll(c, on_event, &s, 7)) > 0)
        total += n;
    assert_int_equal(n, 0);
    assert_int_equal(total, 40 * INSTRUMENTS);
    assert_int_equal(s.out_of_order, 0);
    for (uint32_t id = 0; id < INSTRUMENTS; id++) {
        assert_int_equal(s.depth_events[id], 40);
        assert_int_equal(s.last_price[id], 139);
    }
    struct tp_ring_stats rs;
    for (unsigned k = 0; k < WRITERS; k++) {
        assert_int_equal(tp_ring_stats(c, k, &rs), 0);
        assert_int_equal(rs.records, 80);
        assert_int_equal(rs.lapped, 0);
        assert_int_equal(rs.lag, 0);
    }
    assert_int_equal(tp_ring_stats(c, 2, &rs), -ERANGE);
    struct tp_client_stats cs;
    tp_stats(c, &cs);
    assert_int_equal(cs.records, 160);
    tp_detach(c);
    close_writers();
}

static void test_lap_of_one_ring(void **state)
{
    (void)state;
    open_writers("lap");
    struct tp_client *c = attach("lap");
    assert_int_equal(tp_subscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_DEPTH)), 0);
    drain_current_state(c);
    /* Writer 1 goes round its 64 KiB ring several times; writer 0 publishes a few. */
    for (int64_t px = 100; px < 3100; px++)
        publish_bid(3, px);
    for (int64_t px = 100; px < 105; px++)
        publish_bid(0, px);
    struct seen s = {0};
    while (tp_poll(c, on_event, &s, 64) > 0)
        ;
    assert_int_equal(s.losses, 1);
    assert_int_equal(s.loss_ring, 1);
    assert_true(s.lost > 0);
    assert_true(s.resyncs >= 1);
    assert_int_equal(s.last_price[3], 3099); /* the state table gave the latest book */
    assert_int_equal(s.depth_events[0], 5);  /* ring 0 lost nothing */
    assert_int_equal(s.last_price[0], 104);
    struct tp_ring_stats r0, r1;
    assert_int_equal(tp_ring_stats(c, 0, &r0), 0);
    assert_int_equal(tp_ring_stats(c, 1, &r1), 0);
    assert_int_equal(r0.lapped, 0);
    assert_int_equal(r0.lost, 0);
    assert_int_equal(r1.lapped, 1);
    assert_int_equal(r1.lost, s.lost);
    assert_int_equal(r1.records + r1.lost, 3000);
    tp_detach(c);
    close_writers();
}

/* An implied update (MDP3) is delivered but leaves the reader's book, the outright one, alone. */
static void test_implied_update_leaves_the_book(void **state)
{
    (void)state;
    open_writers("implied");
    struct tp_client *c = attach("implied");
    assert_int_equal(tp_subscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_DEPTH)), 0);
    drain_current_state(c);
    publish_bid(0, 100);
    uint8_t buf[128];
    struct tpout_book_update m;
    struct tpout_book_update_levels g;
    tpout_book_update_wrap_and_apply_header(&m, buf, sizeof(buf));
    tpout_book_update_set_instrument_id(&m, 0);
    tpout_book_update_set_flags(&m, TP_EVENT_F_IMPLIED);
    tpout_book_update_levels_wrap_for_encode(&m, &g, 1);
    tpout_book_update_levels_next(&g);
    tpout_book_update_levels_set_side(&g, 0);
    tpout_book_update_levels_set_level(&g, 1);
    tpout_book_update_levels_set_action(&g, 0);
    tpout_book_update_levels_set_price_mantissa(&g, 99);
    tpout_book_update_levels_set_quantity(&g, 5);
    uint32_t len =
        (uint32_t)(TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + tpout_book_update_encoded_length(&m));
    assert_true(
        tp_bus_publish(&ws[0], TP_REC_SBE, TP_TOPIC_DEPTH, 0, TP_EVENT_F_IMPLIED, buf, len) != 0);
    struct seen s = {0};
    while (tp_poll(c, on_event, &s, 64) > 0)
        ;
    assert_int_equal(s.depth_events[0], 2); /* both delivered */
    assert_int_equal(s.last_price[0], 99);  /* the implied change itself */
    assert_int_equal(s.book_bids[0], 1);    /* the book: the outright level only */
    assert_int_equal(s.book_best_bid[0], 100);
    tp_detach(c);
    close_writers();
}

/* A second ring's writer that closes makes the instance stale: its last record comes first. */
static void test_closed_ring_is_stale_after_its_records(void **state)
{
    (void)state;
    open_writers("stale");
    struct tp_client *c = attach("stale");
    assert_int_equal(tp_subscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_DEPTH)), 0);
    drain_current_state(c);
    publish_bid(2, 100);
    assert_int_equal(tp_poll(c, on_event, &(struct seen){0}, 64), 1);
    assert_int_equal(tp_poll(c, on_event, &(struct seen){0}, 64), 0);
    publish_bid(3, 100);
    tp_bus_writer_close(&ws[1], 1);
    struct seen s = {0};
    assert_int_equal(tp_poll(c, on_event, &s, 64), 1);
    assert_int_equal(s.depth_events[3], 1);
    assert_int_equal(tp_poll(c, on_event, &s, 64), -ESTALE);
    tp_detach(c);
    close_writers();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_segments_and_counters),
        cmocka_unit_test(test_client_reads_every_ring_in_order),
        cmocka_unit_test(test_lap_of_one_ring),
        cmocka_unit_test(test_implied_update_leaves_the_book),
        cmocka_unit_test(test_closed_ring_is_stale_after_its_records),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
