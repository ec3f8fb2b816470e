/*
 * Tests for a channel of a venue whose feed orders its own packets (TP_FRAMING_SEGMENTS: Eurex
 * EOBI, one ApplSeqNum per market segment): both lines' packets reach the feed, a packet lost on
 * one line is taken from the other (the packets after it wait for it), a gap on both flags the
 * segment's books stale and joins the snapshot lines, and the snapshot cycle rebuilds the books
 * (then the buffered packets after it) and leaves the lines; what the channel published says so.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "channel.h"
#include "channel_bus.h"
#include "channel_tables.h"
#include "eobi_build.h"
#include "publisher.h"
#include "tp_books.h"
#include "tp_eobi_feed.h"
#include "tp_instruments.h"
#include "util/histogram.h"

#define SEG   589
#define SEC_A 1001
#define SEC_B 1002
#define PX(x) ((int64_t)((x)*100000000.0 + 0.5)) /* EOBI price: 8 decimals */
#define P9(x) (PX(x) * 10)                       /* book price: 9 decimals */
#define T0    UINT64_C(1700000000000000000)
#define BUY   1
#define SELL  2
#define WAIT  1000 /* TSC ticks a hole waits for the other line */

struct fixture {
    struct tp_bus_writer *bus;
    struct tp_instruments *registry;
    struct tp_books *books;
    struct tp_publisher *pub;
    struct tp_histogram *gap_wait;
    struct tp_channel *ch;
    uint64_t rx; /* the receive time of the packets offered */
    unsigned joins, leaves;
    bool joined;
    uint8_t pkt[1500];
    struct tp_eobi_builder b;
};

/* Nothing is held: view and release are never called. */
static void view(void *ctx, void *handle, const uint8_t **payload, uint16_t *len, uint64_t *rx)
{
    (void)ctx, (void)handle, (void)payload, (void)len, (void)rx;
    fail_msg("the channel held a packet");
}

static void release(void *ctx, void *handle)
{
    (void)ctx, (void)handle;
    fail_msg("the channel released a packet it never held");
}

/* The snapshot lines joined and left (both at once: A then B). */
static void membership(void *ctx, uint32_t channel, enum tp_line_role role, bool join)
{
    struct fixture *f = ctx;
    assert_int_equal(channel, 3);
    assert_true(role == TP_ROLE_SNAP_A || role == TP_ROLE_SNAP_B);
    if (role == TP_ROLE_SNAP_A) {
        assert_true(join != f->joined);
        f->joins += join;
        f->leaves += !join;
        f->joined = join;
    }
}

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct test_channel_tables t;
    test_channel_tables_open(&t, "tptestche", 0);
    f->bus = t.bus;
    f->registry = t.registry;
    f->books = t.books;
    f->pub = t.pub;
    f->gap_wait = t.gap_wait;
    f->rx = 9;
    struct tp_channel_params cp = {
        .protocol = TP_CHANNEL_EOBI,
        .index = 3,
        .channel_id = 11,
        .held_max = 64,
        .gap_wait_tsc = WAIT,
        .registry = f->registry,
        .books = f->books,
        .publisher = f->pub,
        .has_snapshot = true,
        .io = {.ctx = f, .view = view, .release = release, .membership = membership},
    };
    f->ch = test_zalloc(tp_channel_memsize(&cp));
    assert_non_null(f->ch);
    assert_int_equal(tp_channel_init(f->ch, &cp), 0);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    test_bus_close(f->bus);
    free(f->ch);
    free(f->pub);
    free(f->books);
    free(f->registry);
    free(f);
    return 0;
}

/* Incremental packet `seq` of SEG with one order add, offered on the lines given. */
static void add_packet(struct fixture *f, uint64_t seq, int64_t sec, uint8_t side, double px,
                       int32_t qty, bool on_a, bool on_b)
{
    struct tp_eobi_packet_header h = {.appl_seq_num = seq,
                                      .market_segment_id = SEG,
                                      .completion_indicator = 1,
                                      .transact_time = T0 + seq};
    tp_eobi_build_begin(&f->b, f->pkt, sizeof(f->pkt), &h, (uint32_t)seq);
    struct tp_eobi_order_add v = {.trd_reg_ts_time_in = T0 + seq,
                                  .security_id = sec,
                                  .trd_reg_ts_time_priority = T0 + seq,
                                  .display_qty = qty,
                                  .side = side,
                                  .ord_type = 2,
                                  .price = PX(px)};
    TP_EOBI_BUILD(&f->b, order_add, &v);
    assert_int_equal(f->b.error, 0);
    if (on_a)
        assert_false(
            tp_channel_packet(f->ch, TP_ROLE_INCR_A, f->pkt, (uint16_t)f->b.len, NULL, f->rx));
    if (on_b)
        assert_false(
            tp_channel_packet(f->ch, TP_ROLE_INCR_B, f->pkt, (uint16_t)f->b.len, NULL, f->rx));
}

static void snapshot_instrument(struct fixture *f, int64_t sec, uint16_t orders)
{
    struct tp_eobi_instrument_summary is = {.security_id = sec,
                                            .tot_no_orders = orders,
                                            .security_status = 1,
                                            .security_trading_status = 203};
    TP_EOBI_BUILD(&f->b, instrument_summary, &is);
}

static void snapshot_order(struct fixture *f, uint8_t side, uint64_t seq, double px, int32_t qty)
{
    struct tp_eobi_snapshot_order o = {
        .trd_reg_ts_time_priority = T0 + seq, .display_qty = qty, .side = side, .price = PX(px)};
    TP_EOBI_BUILD(&f->b, snapshot_order, &o);
}

/* SEG's snapshot reflecting packets 1..4 (whole, in one packet), offered on `role`. */
static void snapshot_up_to_4(struct fixture *f, enum tp_line_role role)
{
    struct tp_eobi_packet_header h = {
        .market_segment_id = SEG, .completion_indicator = 1, .transact_time = T0};
    struct tp_eobi_product_summary ps = {
        .last_msg_seq_num_processed = 4, .trading_session_sub_id = 3, .trad_ses_status = 2};
    tp_eobi_build_begin(&f->b, f->pkt, sizeof(f->pkt), &h, 1);
    TP_EOBI_BUILD(&f->b, product_summary, &ps);
    snapshot_instrument(f, SEC_A, 3);
    snapshot_order(f, BUY, 1, 100.0, 10);
    snapshot_order(f, SELL, 3, 101.0, 5);
    snapshot_order(f, BUY, 4, 99.0, 4);
    snapshot_instrument(f, SEC_B, 1);
    snapshot_order(f, BUY, 2, 50.0, 10);
    assert_int_equal(f->b.error, 0);
    assert_false(tp_channel_packet(f->ch, role, f->pkt, (uint16_t)f->b.len, NULL, 9));
}

/* The same snapshot in two packets: part 1 (ProductSummary, SEC_A and its orders) or part 2
 * (SEC_B and its order, completing), offered on `role`. */
static void snapshot_part(struct fixture *f, int part, enum tp_line_role role)
{
    struct tp_eobi_packet_header h = {
        .market_segment_id = SEG, .completion_indicator = part == 2, .transact_time = T0};
    struct tp_eobi_product_summary ps = {
        .last_msg_seq_num_processed = 4, .trading_session_sub_id = 3, .trad_ses_status = 2};
    tp_eobi_build_begin(&f->b, f->pkt, sizeof(f->pkt), &h, part == 1 ? 1 : 6);
    if (part == 1) {
        TP_EOBI_BUILD(&f->b, product_summary, &ps);
        snapshot_instrument(f, SEC_A, 3);
        snapshot_order(f, BUY, 1, 100.0, 10);
        snapshot_order(f, SELL, 3, 101.0, 5);
        snapshot_order(f, BUY, 4, 99.0, 4);
    } else {
        snapshot_instrument(f, SEC_B, 1);
        snapshot_order(f, BUY, 2, 50.0, 10);
    }
    assert_int_equal(f->b.error, 0);
    assert_false(tp_channel_packet(f->ch, role, f->pkt, (uint16_t)f->b.len, NULL, f->rx));
}

static uint32_t id_of(struct fixture *f, int64_t sec)
{
    return tp_eobi_feed_instrument(f->ch->feed, sec);
}

static void expect_level(struct fixture *f, int64_t sec, enum tp_side side, uint32_t index,
                         double px, int64_t qty)
{
    struct tp_level l;
    assert_int_equal(tp_books_level(f->books, id_of(f, sec), TP_BOOK_ORDERS, side, index, &l), 0);
    assert_int_equal(l.price, P9(px));
    assert_int_equal(l.qty, qty);
    assert_int_equal(l.count, 1);
}

static void test_ab_loss_and_gap_on_both_lines_recovered_from_snapshots(void **state)
{
    struct fixture *f = *state;
    tp_channel_start(f->ch);
    add_packet(f, 1, SEC_A, BUY, 100.0, 10, true, true);  /* both lines: B's copy skipped */
    add_packet(f, 2, SEC_B, BUY, 50.0, 10, false, true);  /* lost on A */
    add_packet(f, 3, SEC_A, SELL, 101.0, 5, true, false); /* lost on B */
    const struct tp_eobi_feed *feed = f->ch->feed;
    assert_int_equal(feed->counters.duplicates, 1);
    assert_int_equal(feed->counters.gaps, 0);
    assert_int_equal(f->joins, 0);
    uint32_t a = id_of(f, SEC_A), b = id_of(f, SEC_B);
    assert_int_equal(tp_publisher_flags(f->pub, a), 0);
    assert_int_equal(tp_publisher_flags(f->pub, b), 0);
    expect_level(f, SEC_B, TP_SIDE_BID, 1, 50.0, 10);
    /* A snapshot while nothing waits for one is not read. */
    snapshot_up_to_4(f, TP_ROLE_SNAP_A);
    assert_int_equal(feed->counters.snapshots_ignored, 1);
    assert_int_equal(feed->counters.snapshots, 0);

    /* 4 is lost on both lines: 5 shows the hole, which waits for the other line; when the wait
     * is over it is a gap: the segment's books are flagged, the snapshot lines joined, 5 kept
     * for after the snapshot. */
    add_packet(f, 5, SEC_A, SELL, 102.0, 3, true, true);
    assert_int_equal(feed->counters.gaps, 0);
    assert_int_equal(feed->counters.held, 1);
    assert_int_equal(feed->counters.duplicates, 2); /* B's copy of 5 too */
    tp_channel_poll(f->ch, f->rx + WAIT - 1);
    assert_int_equal(feed->counters.gaps, 0);
    assert_int_equal(tp_publisher_flags(f->pub, a), 0);
    tp_channel_poll(f->ch, f->rx + WAIT);
    assert_int_equal(f->gap_wait->count, 1); /* 5's wait ended at the give-up */
    assert_int_equal(f->gap_wait->max, WAIT);
    assert_int_equal(feed->counters.gaps, 1);
    assert_int_equal(f->joins, 1);
    assert_true(tp_publisher_flags(f->pub, a) & TP_PUB_F_STALE);
    assert_true(tp_publisher_flags(f->pub, b) & TP_PUB_F_STALE);
    assert_int_equal(tp_books_levels(f->books, a, TP_BOOK_ORDERS, TP_SIDE_ASK), 1);

    /* The cycle's snapshot up to 4 on line B, then 5 from the buffer: the venue's books. */
    snapshot_up_to_4(f, TP_ROLE_SNAP_B);
    assert_int_equal(feed->counters.snapshots, 1);
    assert_int_equal(tp_eobi_feed_recovering(feed), 0);
    assert_int_equal(f->leaves, 1);
    assert_false(f->joined);
    assert_int_equal(tp_publisher_flags(f->pub, a), 0);
    assert_int_equal(tp_publisher_flags(f->pub, b), 0);
    /* Line A's copy of the same snapshot comes after the segment recovered: not read. */
    snapshot_up_to_4(f, TP_ROLE_SNAP_A);
    assert_int_equal(feed->counters.snapshots_ignored, 2);
    assert_int_equal(feed->counters.snapshots, 1);

    add_packet(f, 6, SEC_A, BUY, 98.0, 1, false, true); /* lost on A */
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 10);
    expect_level(f, SEC_A, TP_SIDE_BID, 2, 99.0, 4); /* packet 4, from the snapshot */
    expect_level(f, SEC_A, TP_SIDE_BID, 3, 98.0, 1);
    expect_level(f, SEC_A, TP_SIDE_ASK, 1, 101.0, 5);
    expect_level(f, SEC_A, TP_SIDE_ASK, 2, 102.0, 3); /* packet 5, kept during the gap */
    assert_int_equal(tp_books_levels(f->books, a, TP_BOOK_ORDERS, TP_SIDE_BID), 3);
    assert_int_equal(tp_books_levels(f->books, a, TP_BOOK_ORDERS, TP_SIDE_ASK), 2);
    expect_level(f, SEC_B, TP_SIDE_BID, 1, 50.0, 10);
    assert_int_equal(tp_books_levels(f->books, b, TP_BOOK_ORDERS, TP_SIDE_BID), 1);
    assert_int_equal(f->ch->counters.packets, 10);
    assert_int_equal(feed->counters.gaps_filled, 0);
    assert_int_equal(f->ch->counters.feed_errors, 0);
    assert_int_equal(f->ch->counters.messages, feed->counters.messages);
    assert_true(f->ch->counters.messages >= 6);

    /* Stopping the channel clears and flags its books. */
    assert_int_equal(tp_channel_stop(f->ch, 10), 2);
    assert_int_equal(tp_books_levels(f->books, a, TP_BOOK_ORDERS, TP_SIDE_BID), 0);
    assert_int_equal(tp_publisher_flags(f->pub, a), TP_PUB_F_STALE);
}

/* The channel started; packets 1 and 3 came on both lines, 2 on neither (so far). */
static void hole_at_2(struct fixture *f)
{
    tp_channel_start(f->ch);
    add_packet(f, 1, SEC_A, BUY, 100.0, 10, true, true);
    add_packet(f, 3, SEC_A, SELL, 101.0, 5, true, true);
}

/*
 * A packet lost on line A that line B brings later (within the wait) is no gap: the packets A
 * brought after it wait for it, then all apply in order; no book is flagged, no snapshot is
 * joined, and each held packet's wait is recorded.
 */
static void test_hole_on_a_filled_by_b_later(void **state)
{
    struct fixture *f = *state;
    const struct tp_eobi_feed *feed = f->ch->feed;
    tp_channel_start(f->ch);
    add_packet(f, 1, SEC_A, BUY, 100.0, 10, true, false);
    f->rx = 100;
    add_packet(f, 3, SEC_A, SELL, 101.0, 5, true, false); /* 2 lost on A */
    f->rx = 150;
    add_packet(f, 4, SEC_A, BUY, 99.0, 4, true, false);
    uint32_t a = id_of(f, SEC_A);
    assert_int_equal(feed->counters.held, 2);
    assert_int_equal(tp_books_levels(f->books, a, TP_BOOK_ORDERS, TP_SIDE_ASK), 0);
    tp_channel_poll(f->ch, 100 + WAIT - 1); /* the wait is not over */
    /* Line B, late: 1 (a duplicate), 2 (the hole), then 3 and 4 (applied from A already). */
    f->rx = 100 + WAIT - 1;
    add_packet(f, 1, SEC_A, BUY, 100.0, 10, false, true);
    add_packet(f, 2, SEC_B, BUY, 50.0, 10, false, true);
    add_packet(f, 3, SEC_A, SELL, 101.0, 5, false, true);
    add_packet(f, 4, SEC_A, BUY, 99.0, 4, false, true);
    tp_channel_poll(f->ch, 100 + 10 * WAIT);
    assert_int_equal(feed->counters.gaps, 0);
    assert_int_equal(feed->counters.gaps_filled, 1);
    assert_int_equal(feed->counters.duplicates, 3);
    assert_int_equal(feed->counters.snapshot_packets, 0);
    assert_int_equal(f->joins, 0);
    uint32_t b = id_of(f, SEC_B);
    assert_int_equal(tp_publisher_flags(f->pub, a), 0);
    assert_int_equal(tp_publisher_flags(f->pub, b), 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 10);
    expect_level(f, SEC_A, TP_SIDE_BID, 2, 99.0, 4);
    expect_level(f, SEC_A, TP_SIDE_ASK, 1, 101.0, 5);
    expect_level(f, SEC_B, TP_SIDE_BID, 1, 50.0, 10);
    assert_int_equal(f->gap_wait->count, 2); /* 3 and 4, released when 2 came */
    assert_int_equal(f->gap_wait->max, WAIT - 1);
    assert_int_equal(f->gap_wait->min, WAIT - 1 - 50);
    /* The next packet on either line carries on. */
    add_packet(f, 5, SEC_A, SELL, 102.0, 3, true, true);
    expect_level(f, SEC_A, TP_SIDE_ASK, 2, 102.0, 3);
    assert_int_equal(f->ch->counters.feed_errors, 0);
}

/* A packet lost on A, and on B too: the next packet past the wait declares the gap itself. */
static void test_hole_on_both_lines_seen_by_a_later_packet(void **state)
{
    struct fixture *f = *state;
    const struct tp_eobi_feed *feed = f->ch->feed;
    hole_at_2(f); /* 2 lost on both lines */
    assert_int_equal(feed->counters.gaps, 0);
    f->rx += WAIT;
    add_packet(f, 4, SEC_A, BUY, 99.0, 4, true, false);
    assert_int_equal(feed->counters.gaps, 1);
    assert_int_equal(f->joins, 1);
    assert_true(tp_publisher_flags(f->pub, id_of(f, SEC_A)) & TP_PUB_F_STALE);
    /* 3 and 4 wait for the snapshot (one that reflects 2 will do). */
    const struct tp_eobi_segment *seg = tp_eobi_feed_segment(feed, SEG);
    assert_int_equal(seg->resume_seq, 3);
    assert_int_equal(seg->buffered_first, 3);
    assert_int_equal(seg->buffered_last, 4);
}

/*
 * The snapshot comes on both snapshot lines: a packet lost on one is taken from the other, and
 * the second copy of each packet is dropped (it would break the snapshot's MsgSeqNum run).
 */
static void test_snapshot_from_either_line(void **state)
{
    struct fixture *f = *state;
    const struct tp_eobi_feed *feed = f->ch->feed;
    hole_at_2(f); /* 2 and 4 lost on both lines */
    tp_channel_poll(f->ch, f->rx + WAIT);
    assert_int_equal(feed->counters.gaps, 1);
    assert_int_equal(f->joins, 1);
    snapshot_part(f, 1, TP_ROLE_SNAP_A);
    snapshot_part(f, 1, TP_ROLE_SNAP_B); /* the copy */
    snapshot_part(f, 2, TP_ROLE_SNAP_B); /* lost on A */
    assert_int_equal(feed->counters.snapshot_duplicates, 1);
    assert_int_equal(feed->counters.snapshots_broken, 0);
    assert_int_equal(feed->counters.snapshots, 1);
    assert_int_equal(f->leaves, 1);
    assert_int_equal(tp_publisher_flags(f->pub, id_of(f, SEC_A)), 0);
    assert_int_equal(tp_publisher_flags(f->pub, id_of(f, SEC_B)), 0);
    expect_level(f, SEC_A, TP_SIDE_BID, 2, 99.0, 4);
    expect_level(f, SEC_B, TP_SIDE_BID, 1, 50.0, 10);
    add_packet(f, 5, SEC_A, SELL, 102.0, 3, false, true);
    expect_level(f, SEC_A, TP_SIDE_ASK, 2, 102.0, 3);
}

/* A snapshot that covers a hole still waiting for the other line ends the wait: rebuilt now. */
static void test_snapshot_during_the_wait(void **state)
{
    struct fixture *f = *state;
    const struct tp_eobi_feed *feed = f->ch->feed;
    hole_at_2(f);
    add_packet(f, 5, SEC_A, SELL, 102.0, 3, true, true); /* 4 too */
    assert_int_equal(feed->counters.gaps, 0);
    snapshot_up_to_4(f, TP_ROLE_SNAP_A);
    assert_int_equal(feed->counters.gaps, 1);
    assert_int_equal(feed->counters.snapshots, 1);
    assert_int_equal(tp_eobi_feed_recovering(feed), 0);
    assert_int_equal(f->gap_wait->count, 2); /* 3 and 5 waited until the snapshot */
    assert_int_equal(tp_publisher_flags(f->pub, id_of(f, SEC_A)), 0);
    expect_level(f, SEC_A, TP_SIDE_ASK, 2, 102.0, 3); /* 5, after the snapshot */
    expect_level(f, SEC_B, TP_SIDE_BID, 1, 50.0, 10);
}

/* A packet that does not frame is counted as the feed's error and changes nothing. */
static void test_malformed_packet(void **state)
{
    struct fixture *f = *state;
    add_packet(f, 1, SEC_A, BUY, 100.0, 10, true, false);
    uint8_t junk[7] = {1, 2, 3, 4, 5, 6, 7};
    assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_B, junk, sizeof(junk), NULL, 9));
    assert_int_equal(f->ch->counters.feed_errors, 1);
    expect_level(f, SEC_A, TP_SIDE_BID, 1, 100.0, 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_ab_loss_and_gap_on_both_lines_recovered_from_snapshots,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_hole_on_a_filled_by_b_later, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hole_on_both_lines_seen_by_a_later_packet, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_from_either_line, setup, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_during_the_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_packet, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
