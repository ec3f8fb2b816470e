/*
 * test_eobi_feed_release.c - the EOBI feed on a channel of T7 release 7.0: its packets (written
 * in 7.0 layouts, as the simulator does) build the same books as 6.0 ones, its snapshots recover a
 * segment, and a packet of the other release is counted and dropped, never read, on either
 * release's feed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "books_test_util.h"
#include "eobi_build.h"
#include "eobi_release.h"
#include "tp_eobi_feed.h"

#define SEG   589
#define SEC   1001
#define PX(x) ((int64_t)((x)*100000000.0 + 0.5))
#define BUY   1
#define SELL  2

struct fixture {
    struct tp_instruments *reg;
    struct tp_books *books;
    struct tp_eobi_feed *feed;
    uint32_t stale_marks, fresh_marks;
    uint8_t v6[1500];
    uint8_t wire[3000];
    size_t wire_len;
    struct tp_eobi_builder b;
};

static void on_stale(void *ctx, uint32_t instr, int stale, uint32_t expected, uint32_t got)
{
    struct fixture *f = ctx;
    (void)instr, (void)expected, (void)got;
    f->stale_marks += stale != 0;
    f->fresh_marks += stale == 0;
}

static struct fixture *make(enum tp_eobi_release release)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct tp_feed_sink sink = {.ctx = f, .stale = on_stale};
    assert_non_null(f);
    f->reg = test_registry(16, 0);
    f->books = test_books(16, 256, 16, 0, 0);
    f->feed = test_zalloc(sizeof(*f->feed));
    assert_non_null(f->feed);
    assert_int_equal(tp_eobi_feed_init(f->feed, f->reg, f->books, NULL, 1, &sink), 0);
    assert_int_equal(tp_eobi_feed_set_release(f->feed, release), 0);
    return f;
}

static void destroy(struct fixture *f)
{
    free(f->feed);
    free(f->books);
    free(f->reg);
    free(f);
}

static void begin(struct fixture *f, uint64_t seq)
{
    struct tp_eobi_packet_header h = {
        .appl_seq_num = seq, .market_segment_id = SEG, .completion_indicator = 1};
    tp_eobi_build_begin(&f->b, f->v6, sizeof(f->v6), &h, (uint32_t)seq * 10);
}

static void add(struct fixture *f, uint8_t side, uint64_t prio, double px, int32_t qty)
{
    struct tp_eobi_order_add v = {.security_id = SEC,
                                  .trd_reg_ts_time_priority = prio,
                                  .display_qty = qty,
                                  .side = side,
                                  .price = PX(px)};
    TP_EOBI_BUILD(&f->b, order_add, &v);
}

/* The packet built so far, written in release r's layouts. */
static void write_as(struct fixture *f, enum tp_eobi_release r)
{
    assert_int_equal(f->b.error, 0);
    int n = tp_eobi_packet_from_v6(r, f->v6, f->b.len, f->wire, sizeof(f->wire));
    assert_true(n > 0);
    f->wire_len = (size_t)n;
}

static int send(struct fixture *f, enum tp_eobi_release r)
{
    write_as(f, r);
    return tp_eobi_feed_packet(f->feed, f->wire, f->wire_len, 5);
}

static int send_snapshot(struct fixture *f, enum tp_eobi_release r)
{
    write_as(f, r);
    return tp_eobi_feed_snapshot_packet(f->feed, f->wire, f->wire_len, 5);
}

static void expect_best(struct fixture *f, enum tp_side side, double px, int64_t qty,
                        uint32_t count)
{
    struct tp_level l;
    uint32_t id = tp_eobi_feed_instrument(f->feed, SEC);
    assert_int_equal(tp_books_level(f->books, id, TP_BOOK_ORDERS, side, 1, &l), 0);
    assert_int_equal(l.price, PX(px) * 10);
    assert_int_equal(l.qty, qty);
    assert_int_equal(l.count, count);
}

static void test_7_0_builds_books(void **state)
{
    (void)state;
    struct fixture *f = make(TP_EOBI_RELEASE_7_0);
    begin(f, 1);
    add(f, BUY, 100, 99.5, 10);
    add(f, BUY, 101, 99.5, 5);
    add(f, SELL, 102, 100.0, 7);
    assert_int_equal(send(f, TP_EOBI_RELEASE_7_0), 0);
    expect_best(f, TP_SIDE_BID, 99.5, 15, 2);
    expect_best(f, TP_SIDE_ASK, 100.0, 7, 1);

    begin(f, 2);
    struct tp_eobi_order_modify_same_prio m = {.security_id = SEC,
                                               .trd_reg_ts_time_priority = 100,
                                               .display_qty = 4,
                                               .side = BUY,
                                               .price = PX(99.5)};
    TP_EOBI_BUILD(&f->b, order_modify_same_prio, &m);
    struct tp_eobi_partial_order_execution x = {.side = SELL,
                                                .price = PX(100.0),
                                                .trd_reg_ts_time_priority = 102,
                                                .security_id = SEC,
                                                .trd_match_id = 9,
                                                .last_qty = 3,
                                                .last_px = PX(100.0)};
    TP_EOBI_BUILD(&f->b, partial_order_execution, &x);
    assert_int_equal(send(f, TP_EOBI_RELEASE_7_0), 0);
    expect_best(f, TP_SIDE_BID, 99.5, 9, 2);
    expect_best(f, TP_SIDE_ASK, 100.0, 4, 1);
    assert_int_equal(f->feed->counters.release_mismatch, 0);
    assert_int_equal(f->feed->counters.malformed, 0);
    assert_int_equal(f->stale_marks, 0);
    destroy(f);
}

/* A 6.0 packet on a 7.0 channel and a 7.0 one on a 6.0 channel: counted, dropped, a gap. */
static void test_other_release_dropped(void **state)
{
    (void)state;
    for (int r = 0; r < TP_EOBI_RELEASES; r++) {
        enum tp_eobi_release mine = (enum tp_eobi_release)r;
        enum tp_eobi_release other = (enum tp_eobi_release)(1 - r);
        struct fixture *f = make(mine);
        begin(f, 1);
        add(f, BUY, 100, 99.5, 10);
        assert_int_equal(send(f, mine), 0);
        expect_best(f, TP_SIDE_BID, 99.5, 10, 1);

        begin(f, 2);
        add(f, BUY, 101, 99.0, 50);
        assert_int_equal(send(f, other), -EPROTO);
        assert_int_equal(f->feed->counters.release_mismatch, 1);
        assert_int_equal(f->feed->release_seen, other);
        assert_int_equal(tp_books_levels(f->books, tp_eobi_feed_instrument(f->feed, SEC),
                                         TP_BOOK_ORDERS, TP_SIDE_BID),
                         1);
        assert_int_equal(f->feed->counters.malformed, 0);

        /* The packet is missing from the segment: the next one is a gap, the book stale. */
        begin(f, 3);
        add(f, SELL, 102, 100.0, 1);
        assert_int_equal(send(f, mine), 0);
        assert_int_equal(f->feed->counters.gaps, 1);
        assert_int_equal(f->stale_marks, 1);
        assert_int_equal(tp_eobi_feed_recovering(f->feed), 1);

        /* The other release's snapshot cannot recover it either (a ProductSummary alone has
         * one layout in both: its InstrumentSummary tells). */
        begin(f, 1);
        struct tp_eobi_product_summary ps = {.last_msg_seq_num_processed = 3};
        TP_EOBI_BUILD(&f->b, product_summary, &ps);
        struct tp_eobi_instrument_summary is = {.security_id = SEC};
        TP_EOBI_BUILD(&f->b, instrument_summary, &is);
        assert_int_equal(send_snapshot(f, other), -EPROTO);
        assert_int_equal(f->feed->counters.release_mismatch, 2);
        assert_int_equal(tp_eobi_feed_recovering(f->feed), 1);
        destroy(f);
    }
}

/* A late joiner recovers from a 7.0 snapshot (InstrumentSummary entries and SnapshotOrders). */
static void test_7_0_snapshot_recovers(void **state)
{
    (void)state;
    struct fixture *f = make(TP_EOBI_RELEASE_7_0);
    begin(f, 9);
    add(f, SELL, 300, 101.0, 2);
    assert_int_equal(send(f, TP_EOBI_RELEASE_7_0), 0);
    assert_int_equal(tp_eobi_feed_recovering(f->feed), 1);

    begin(f, 1);
    struct tp_eobi_product_summary ps = {.last_msg_seq_num_processed = 8, .trad_ses_status = 2};
    TP_EOBI_BUILD(&f->b, product_summary, &ps);
    struct tp_eobi_instrument_summary is = {.security_id = SEC,
                                            .tot_no_orders = 2,
                                            .security_status = 1,
                                            .security_trading_status = 203};
    TP_EOBI_BUILD(&f->b, instrument_summary, &is);
    struct tp_eobi_md_entry e = {.md_entry_px = PX(100.5), .md_entry_size = 20, .md_entry_type = 2};
    assert_int_equal(tp_eobi_build_md_entry(&f->b, &e), 0);
    struct tp_eobi_snapshot_order o1 = {
        .trd_reg_ts_time_priority = 200, .display_qty = 6, .side = BUY, .price = PX(99.0)};
    struct tp_eobi_snapshot_order o2 = {
        .trd_reg_ts_time_priority = 201, .display_qty = 8, .side = SELL, .price = PX(101.0)};
    TP_EOBI_BUILD(&f->b, snapshot_order, &o1);
    TP_EOBI_BUILD(&f->b, snapshot_order, &o2);
    f->b.buf[21] = 1; /* the segment's last snapshot packet */
    assert_int_equal(send_snapshot(f, TP_EOBI_RELEASE_7_0), 0);
    assert_int_equal(f->feed->counters.snapshots, 1);
    assert_int_equal(tp_eobi_feed_recovering(f->feed), 0);
    expect_best(f, TP_SIDE_BID, 99.0, 6, 1);
    expect_best(f, TP_SIDE_ASK, 101.0, 10, 2); /* the snapshot's order and the buffered add */
    assert_int_equal(f->feed->counters.release_mismatch, 0);
    destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_7_0_builds_books),
        cmocka_unit_test(test_other_release_dropped),
        cmocka_unit_test(test_7_0_snapshot_recovers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
