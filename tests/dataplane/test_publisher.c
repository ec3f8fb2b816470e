/*
 * Tests for dataplane/publish: one tpout record per change record, endOfEvent on the last record
 * of each venue event only, the state table written at event boundaries from the books, level
 * actions mapped to tpout (DELETE_FROM, DELETE_THRU, CLEAR), recovery flags, no-interest skips.
 * A real bus (segments in /dev/shm) is written and read back with the ring reader.
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

#include "bus/bus.h"
#include "publisher.h"
#include "channel_bus.h"
#include "publisher_books.h"
#include "tpout_sbe.h"
#include "views/decode.h"

struct fixture {
    struct tp_bus_writer bus;
    struct tp_books *books;
    struct tp_instruments *registry;
    struct tp_publisher *pub;
    struct tp_feed_sink sink;
    struct tp_ring_reader reader;
    uint8_t batch[1 << 16];
};

static int setup(void **state)
{
    struct fixture *f = calloc(1, sizeof(*f));
    char instance[64];
    snprintf(instance, sizeof(instance), "tptestpub%d", (int)getpid());
    if (f == NULL || test_bus_writer_open(&f->bus, instance) != 0)
        return -1;
    test_books_make(&f->books, &f->registry);
    struct tp_publisher_params pp = {
        .bus = &f->bus, .books = f->books, .registry = f->registry, .instruments = 16, .depth = 4};
    f->pub = aligned_alloc(64, (tp_publisher_memsize(&pp) + 63) & ~(size_t)63);
    if (f->pub == NULL || tp_publisher_init(f->pub, &pp) != 0)
        return -1;
    tp_publisher_select(f->pub, 1, 7);
    f->sink = tp_publisher_sink(f->pub);
    if (tp_ring_reader_init(&f->reader, f->bus.ring.shared, f->batch, sizeof(f->batch)) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *f = *state;
    tp_bus_writer_close(&f->bus, 1);
    free(f->pub);
    free(f->books);
    free(f->registry);
    free(f);
    return 0;
}

/* The next record: its template, SBE flags byte and ring flags. Fails when the ring is empty. */
static const uint8_t *next_record(struct fixture *f, uint16_t *template_id, uint32_t *ring_flags)
{
    const struct tp_ring_record *rec;
    uint64_t lost;
    assert_int_equal(tp_ring_read(&f->reader, &rec, &lost), TP_RING_RECORD);
    assert_int_equal(rec->type, TP_REC_SBE);
    const uint8_t *msg = tp_ring_payload(rec);
    assert_int_equal(tpout_message_header_schema_id(msg), TPOUT_SCHEMA_ID);
    *template_id = tpout_message_header_template_id(msg);
    *ring_flags = rec->flags;
    return msg + TPOUT_MESSAGE_HEADER_ENCODED_LENGTH;
}

static void expect_empty(struct fixture *f)
{
    const struct tp_ring_record *rec;
    uint64_t lost;
    assert_int_equal(tp_ring_read(&f->reader, &rec, &lost), TP_RING_EMPTY);
}

static void test_event_records_and_state(void **state)
{
    struct fixture *f = *state;
    /* The definition is an event of its own. */
    f->sink.instrument(f->sink.ctx, 0);
    uint16_t tid;
    uint32_t rflags;
    const uint8_t *b = next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_INSTRUMENT_DEFINITION_TEMPLATE_ID);
    assert_int_equal(rflags & TP_PUB_F_END_OF_EVENT, TP_PUB_F_END_OF_EVENT);
    assert_memory_equal(b + TPOUT_INSTRUMENT_DEFINITION_SYMBOL_OFFSET, "TEST", 5);

    /* One event of two adds (2 records each: order + level): 4 records, only the last marked. */
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    struct tp_feed_info info = {.rx_tsc = 1234, .packet_seq = 42, .venue_time = 99};
    int n = test_books_add(f->books, 1, 0, 100000000000, 300, c);
    assert_int_equal(n, 2);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    n = test_books_add(f->books, 2, 1, 101000000000, 200, c);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    /* Before the end of the event the last record is still held back (claimed, uncommitted). */
    int seen = 0;
    for (int i = 0; i < 3; i++) {
        b = next_record(f, &tid, &rflags);
        assert_int_equal(b[TPOUT_BOOK_UPDATE_FLAGS_OFFSET] & TP_PUB_F_END_OF_EVENT, 0);
        assert_int_equal(tpout_load_u64(b + TPOUT_BOOK_UPDATE_RECV_TSC_OFFSET), 1234);
        assert_int_equal(tpout_load_u64(b + TPOUT_BOOK_UPDATE_VENUE_SEQ_OFFSET), 42);
        assert_int_equal(b[TPOUT_BOOK_UPDATE_VENUE_OFFSET], 1);
        seen += tid == TPOUT_BOOK_UPDATE_TEMPLATE_ID;
    }
    expect_empty(f);
    /* The state table is not touched mid-event. */
    struct tp_instrument_state st;
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.bid_levels, 0);
    f->sink.end_of_event(f->sink.ctx, &info);
    b = next_record(f, &tid, &rflags);
    seen += tid == TPOUT_BOOK_UPDATE_TEMPLATE_ID;
    assert_int_equal(seen, 2);
    assert_int_equal(b[TPOUT_BOOK_UPDATE_FLAGS_OFFSET] & TP_PUB_F_END_OF_EVENT,
                     TP_PUB_F_END_OF_EVENT);
    assert_int_equal(rflags & TP_PUB_F_END_OF_EVENT, TP_PUB_F_END_OF_EVENT);
    expect_empty(f);
    /* Now the state has both sides, from the books. */
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.bid_levels, 1);
    assert_int_equal(st.book.ask_levels, 1);
    assert_int_equal(st.bids[0].price, 100000000000);
    assert_int_equal(st.bids[0].qty, 300);
    assert_int_equal(st.asks[0].price, 101000000000);
    assert_int_equal(st.book.venue_seq, 42);
    assert_true(st.book.bus_sequence > 0);
    assert_memory_equal(st.book.symbol, "TEST", 5);
    const struct tp_publisher_counters *pc = tp_publisher_counters(f->pub);
    assert_int_equal(pc->records, 5);
}

static void test_level_actions_mapping(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_info info = {.rx_tsc = 1};
    struct tp_book_change c[3];
    memset(c, 0, sizeof(c));
    c[0] = (struct tp_book_change){.instrument = 0,
                                   .kind = TP_CHANGE_LEVEL,
                                   .book = TP_BOOK_DIRECT,
                                   .side = TP_SIDE_ASK,
                                   .action = TP_LEVEL_DELETE_FROM,
                                   .level = 3};
    c[1] = (struct tp_book_change){.instrument = 0,
                                   .kind = TP_CHANGE_LEVEL,
                                   .book = TP_BOOK_IMPLIED,
                                   .side = TP_SIDE_BID,
                                   .action = TP_LEVEL_DELETE_THRU};
    c[2] = (struct tp_book_change){.instrument = 0, .kind = TP_CHANGE_CLEAR};
    f->sink.changes(f->sink.ctx, &info, c, 3);
    f->sink.end_of_event(f->sink.ctx, &info);
    uint16_t tid;
    uint32_t rflags;
    /* DELETE_FROM 3: one BookUpdate of three deletes at level 1. */
    const uint8_t *b = next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_BOOK_UPDATE_TEMPLATE_ID);
    const uint8_t *g = b + TPOUT_BOOK_UPDATE_BLOCK_LENGTH;
    assert_int_equal(tpout_load_u16(g + 2), 3);
    for (int i = 0; i < 3; i++) {
        const uint8_t *e = g + 4 + i * TPOUT_BOOK_UPDATE_LEVELS_BLOCK_LENGTH;
        assert_int_equal(e[TPOUT_BOOK_UPDATE_LEVELS_SIDE_OFFSET], 1);
        assert_int_equal(e[TPOUT_BOOK_UPDATE_LEVELS_LEVEL_OFFSET], 1);
        assert_int_equal(e[TPOUT_BOOK_UPDATE_LEVELS_ACTION_OFFSET], 2);
    }
    /* DELETE_THRU of the implied book: a clear of the side, flagged implied. */
    b = next_record(f, &tid, &rflags);
    g = b + TPOUT_BOOK_UPDATE_BLOCK_LENGTH;
    assert_int_equal(b[TPOUT_BOOK_UPDATE_FLAGS_OFFSET] & TP_PUB_F_IMPLIED, TP_PUB_F_IMPLIED);
    assert_int_equal(tpout_load_u16(g + 2), 1);
    assert_int_equal(g[4 + TPOUT_BOOK_UPDATE_LEVELS_ACTION_OFFSET], 3);
    /* CLEAR: both sides cleared; last record of the event. */
    b = next_record(f, &tid, &rflags);
    g = b + TPOUT_BOOK_UPDATE_BLOCK_LENGTH;
    assert_int_equal(tpout_load_u16(g + 2), 2);
    assert_int_equal(g[4 + TPOUT_BOOK_UPDATE_LEVELS_ACTION_OFFSET], 3);
    assert_int_equal(g[4 + 24 + TPOUT_BOOK_UPDATE_LEVELS_SIDE_OFFSET], 1);
    assert_int_equal(rflags & TP_PUB_F_END_OF_EVENT, TP_PUB_F_END_OF_EVENT);
    expect_empty(f);
}

static void test_flags_and_interest(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_info info = {.rx_tsc = 1};
    /* Stale outside an event: a status record of its own, flags in the state entry. */
    f->sink.stale(f->sink.ctx, 0, 1, 5, 9);
    uint16_t tid;
    uint32_t rflags;
    const uint8_t *b = next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_INSTRUMENT_STATUS_TEMPLATE_ID);
    assert_int_equal(b[TPOUT_BOOK_UPDATE_FLAGS_OFFSET] & (TP_PUB_F_RECOVERING | TP_PUB_F_STALE),
                     TP_PUB_F_RECOVERING | TP_PUB_F_STALE);
    assert_int_equal(rflags & TP_PUB_F_END_OF_EVENT, TP_PUB_F_END_OF_EVENT);
    struct tp_instrument_state st;
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.flags & TP_PUB_F_STALE, TP_PUB_F_STALE);
    /* Later events of the instrument carry the flags too. */
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    int n = test_books_add(f->books, 3, 0, 99000000000, 10, c);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    /* Recovered in the middle of an event: its status record joins the event, unmarked. */
    f->sink.stale(f->sink.ctx, 0, 0, 0, 0);
    f->sink.end_of_event(f->sink.ctx, &info);
    int marked = 0, records = 0;
    const struct tp_ring_record *rec;
    uint64_t lost;
    while (tp_ring_read(&f->reader, &rec, &lost) == TP_RING_RECORD) {
        records++;
        marked += (rec->flags & TP_PUB_F_END_OF_EVENT) != 0;
    }
    assert_int_equal(records, n + 1);
    assert_int_equal(marked, 1);
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.flags & TP_PUB_F_STALE, 0);
    /* Nobody interested: nothing published, the state is still kept. */
    tp_bus_set_interest(&f->bus, 0, 0);
    n = test_books_add(f->books, 4, 1, 102000000000, 10, c);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    f->sink.end_of_event(f->sink.ctx, &info);
    expect_empty(f);
    assert_int_equal(tp_counter_get(f->bus.stats.no_interest), (uint64_t)n);
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.ask_levels, 1);
    assert_int_equal(st.asks[0].price, 102000000000);
}

/* An event rewrites only the parts of the state it changed; the ring's tail moves per event. */
static void test_state_parts_and_tail(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_info info = {.rx_tsc = 5, .packet_seq = 1};
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    uint64_t tail_before = atomic_load(&f->bus.ring.shared->tail);
    int n = test_books_add(f->books, 1, 0, 100000000000, 300, c);
    assert_int_equal(n, 2);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    /* Mid-event the first record is complete at the reader's cursor, but the shared tail (what
     * lagging readers and the published counter go by) has not moved. */
    const struct tp_ring_record *rec;
    uint64_t lost;
    assert_int_equal(tp_ring_read(&f->reader, &rec, &lost), TP_RING_RECORD);
    assert_int_equal(atomic_load(&f->bus.ring.shared->tail), tail_before);
    assert_int_equal(tp_counter_get(f->bus.stats.published), 0);
    f->sink.end_of_event(f->sink.ctx, &info);
    assert_true(atomic_load(&f->bus.ring.shared->tail) > tail_before);
    assert_int_equal(atomic_load(&f->bus.ring.shared->tail), f->bus.ring.tail);
    assert_int_equal(tp_counter_get(f->bus.stats.published), (uint64_t)n);
    struct tp_instrument_state st;
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.bid_levels, 1);
    assert_int_equal(st.book.last_trade.price, TP_PRICE_NULL);
    uint64_t updates = st.book.updates;

    /* A trade: last trade and volume change, the levels stay as they were. */
    info.packet_seq = 2;
    n = test_books_trade(f->books, 100500000000, 25, c);
    assert_int_equal(n, 1);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    f->sink.end_of_event(f->sink.ctx, &info);
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.last_trade.price, 100500000000);
    assert_int_equal(st.book.last_trade.qty, 25);
    assert_int_equal(st.book.last_trade.aggressor, 1);
    assert_int_equal(st.book.volume, 25);
    assert_int_equal(st.book.bid_levels, 1);
    assert_int_equal(st.bids[0].qty, 300);
    assert_int_equal(st.book.venue_seq, 2);
    assert_int_equal(st.book.updates, updates + 1);

    /* A halt: the status changes, the trade stays. */
    n = test_books_halt(f->books, c);
    assert_int_equal(n, 1);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    f->sink.end_of_event(f->sink.ctx, &info);
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.trading_status, 3); /* tpout TradingStatus halted */
    assert_int_equal(st.book.last_trade.price, 100500000000);
    assert_int_equal(st.book.bid_levels, 1);
}

/*
 * Inside an rx burst the shared tail and the published counter move once, at the burst's end;
 * every record is complete at the reader's cursor as soon as its event ends, and the state entry
 * written at each event's end covers every record the reader may have consumed by then.
 */
static void test_burst_moves_tail_once(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_info info = {.rx_tsc = 5, .packet_seq = 1};
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    const struct tp_ring_record *rec;
    struct tp_instrument_state st;
    uint64_t lost, tail_before = atomic_load(&f->bus.ring.shared->tail), total = 0;

    tp_publisher_begin_burst(f->pub);
    for (int k = 0; k < 2; k++) {
        int n = test_books_add(f->books, 1 + (uint64_t)k, 0, 100000000000 - k, 300, c);
        assert_int_equal(n, 2);
        f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
        f->sink.end_of_event(f->sink.ctx, &info);
        total += (uint64_t)n;
        for (int i = 0; i < n; i++)
            assert_int_equal(tp_ring_read(&f->reader, &rec, &lost), TP_RING_RECORD);
        assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
        assert_int_equal(st.book.bus_sequence, rec->sequence);
        assert_int_equal(st.book.bid_levels, k + 1);
        assert_int_equal(atomic_load(&f->bus.ring.shared->tail), tail_before);
        assert_int_equal(tp_counter_get(f->bus.stats.published), 0);
    }
    tp_publisher_end_burst(f->pub);
    assert_int_equal(atomic_load(&f->bus.ring.shared->tail), f->bus.ring.tail);
    assert_true(f->bus.ring.tail > tail_before);
    assert_int_equal(tp_counter_get(f->bus.stats.published), total);
    expect_empty(f);

    /* Outside a burst each event moves the tail again. */
    int n = test_books_add(f->books, 3, 0, 99000000000, 300, c);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    f->sink.end_of_event(f->sink.ctx, &info);
    assert_int_equal(atomic_load(&f->bus.ring.shared->tail), f->bus.ring.tail);
    assert_int_equal(tp_counter_get(f->bus.stats.published), total + (uint64_t)n);
}

/* Work deferred to the end of a burst: a log of who ran, and an event published from there. */
struct deferred_log {
    struct fixture *f;
    int ran[8];
    int n;
};

static struct deferred_log deferred_log;

static void deferred_work(void *ctx)
{
    int who = (int)(intptr_t)ctx;
    deferred_log.ran[deferred_log.n++] = who;
    if (who == 1) {
        /* Still inside the burst: the tail has not moved for the earlier event yet. */
        struct fixture *f = deferred_log.f;
        struct tp_book_change c[TP_BOOK_CHANGES_MAX];
        struct tp_feed_info info = {.rx_tsc = 5, .packet_seq = 9};
        assert_true(atomic_load(&f->bus.ring.shared->tail) < f->bus.ring.tail);
        int n = test_books_add(f->books, 9, 0, 99000000000, 100, c);
        f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
        f->sink.end_of_event(f->sink.ctx, &info);
    }
}

static void test_defer_runs_at_end_of_burst(void **state)
{
    struct fixture *f = *state;
    memset(&deferred_log, 0, sizeof(deferred_log));
    deferred_log.f = f;
    /* Outside a burst nothing can wait: the caller does its work now. */
    assert_false(tp_publisher_defer(f->pub, deferred_work, (void *)(intptr_t)1));

    tp_publisher_begin_burst(f->pub);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    struct tp_feed_info info = {.rx_tsc = 5, .packet_seq = 1};
    int n = test_books_add(f->books, 1, 0, 100000000000, 300, c);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    f->sink.end_of_event(f->sink.ctx, &info);
    assert_true(tp_publisher_defer(f->pub, deferred_work, (void *)(intptr_t)1));
    assert_true(tp_publisher_defer(f->pub, deferred_work, (void *)(intptr_t)2));
    assert_true(tp_publisher_defer(f->pub, deferred_work, (void *)(intptr_t)3));
    tp_publisher_defer_cancel(f->pub, (void *)(intptr_t)2); /* a channel removed mid-burst */
    assert_int_equal(deferred_log.n, 0);
    tp_publisher_end_burst(f->pub);
    assert_int_equal(deferred_log.n, 2);
    assert_int_equal(deferred_log.ran[0], 1);
    assert_int_equal(deferred_log.ran[1], 3);
    /* The tail moved once, after the deferred work: both events' records are below it. */
    assert_int_equal(atomic_load(&f->bus.ring.shared->tail), f->bus.ring.tail);
    assert_int_equal(tp_counter_get(f->bus.stats.published), 4);
    /* Registrations do not outlive their burst, and their number is bounded. */
    tp_publisher_end_burst(f->pub);
    assert_int_equal(deferred_log.n, 2);
    tp_publisher_begin_burst(f->pub);
    for (unsigned i = 0; i < TP_PUB_DEFER_MAX; i++)
        assert_true(tp_publisher_defer(f->pub, deferred_work, (void *)(intptr_t)4));
    assert_false(tp_publisher_defer(f->pub, deferred_work, (void *)(intptr_t)4));
    tp_publisher_defer_cancel(f->pub, (void *)(intptr_t)4);
    tp_publisher_end_burst(f->pub);
    assert_int_equal(deferred_log.n, 2);
}

/* Decodes the next record as a consumer does (client/views). */
static int next_event(struct fixture *f, struct tp_event *ev)
{
    const struct tp_ring_record *rec;
    uint64_t lost;
    assert_int_equal(tp_ring_read(&f->reader, &rec, &lost), TP_RING_RECORD);
    struct tp_level_change changes[8];
    return tp_decode_tpout(tp_ring_payload(rec), rec->length - TP_RING_RECORD_HEADER, ev, changes,
                           8);
}

/* The next OrderEvent (other records of the event skipped). */
static void next_order(struct fixture *f, struct tp_event *ev)
{
    while (next_event(f, ev) != TP_TOPIC_ORDERS)
        ;
}

/* One venue event of n change records through the sink. */
static void publish_event(struct fixture *f, const struct tp_book_change *c, int n)
{
    struct tp_feed_info info = {.rx_tsc = 1};
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    f->sink.end_of_event(f->sink.ctx, &info);
}

/* The next OrderEvent has this action, quantity and remaining quantity. */
static void expect_order(struct fixture *f, uint8_t action, int64_t qty, int64_t remaining)
{
    struct tp_event ev;
    next_order(f, &ev);
    assert_int_equal(ev.u.order.order_id, 7);
    assert_int_equal(ev.u.order.price, 101000000000);
    assert_int_equal(ev.u.order.action, action);
    assert_int_equal(ev.u.order.qty, qty);
    assert_int_equal(ev.u.order.remaining_qty, remaining);
}

/* An execution's OrderEvent carries the executed quantity, and what remains of the order. */
static void test_order_execution_quantities(void **state)
{
    struct fixture *f = *state;
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    struct tp_event ev;
    publish_event(f, c, test_books_add(f->books, 7, 1, 101000000000, 300, c));
    expect_order(f, 0, 300, 300);
    assert_int_equal(next_event(f, &ev), TP_TOPIC_DEPTH);
    expect_empty(f);

    /* Printable: 100 of 300 executed, 200 remain. */
    int n = test_books_execute(f->books, 7, 100, 1, c);
    assert_int_equal(n, 3); /* order, level, trade */
    publish_event(f, c, n);
    expect_order(f, 3, 100, 200);
    assert_int_equal(next_event(f, &ev), TP_TOPIC_DEPTH);
    assert_int_equal(next_event(f, &ev), TP_TOPIC_TRADES);
    assert_int_equal(ev.u.trade.qty, 100);

    /* Not printable: no trade record, the order record still says 50 executed; 150 remain. */
    n = test_books_execute(f->books, 7, 50, 0, c);
    assert_int_equal(n, 2);
    publish_event(f, c, n);
    expect_order(f, 3, 50, 150);
    assert_int_equal(next_event(f, &ev), TP_TOPIC_DEPTH);

    /* The rest, printable: 150 executed, nothing remains. */
    publish_event(f, c, test_books_execute(f->books, 7, 150, 1, c));
    expect_order(f, 3, 150, 0);
}

/* Close, VWAP and imbalance statistics are published with price and size; counts as quantity. */
static void test_statistics_published(void **state)
{
    struct fixture *f = *state;
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    struct tp_event ev;
    static const struct {
        int kind;
        int64_t price, qty;
        uint8_t stat_type;
        int64_t want_price, want_qty;
    } cases[] = {
        {TEST_STAT_CLOSE, 100250000000, 5000, TPOUT_STAT_TYPE_CLOSE, 100250000000, 5000},
        {TEST_STAT_VWAP, 100125000000, 12000, TPOUT_STAT_TYPE_VWAP, 100125000000, 12000},
        {TEST_STAT_IMBALANCE, 99900000000, 700, TPOUT_STAT_TYPE_IMBALANCE, 99900000000, 700},
        {TEST_STAT_OPEN_INTEREST, 0, 4321, TPOUT_STAT_TYPE_OPEN_INTEREST, INT64_MIN, 4321},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int n = test_books_stat(f->books, cases[i].kind, cases[i].price, cases[i].qty, c);
        assert_int_equal(n, 1);
        publish_event(f, c, n);
        assert_int_equal(next_event(f, &ev), TP_TOPIC_STATUS);
        assert_int_equal(ev.u.status.kind, TP_STATUS_EVENT_STAT);
        assert_int_equal(ev.u.status.stat_type, cases[i].stat_type);
        assert_int_equal(ev.u.status.price, cases[i].want_price);
        assert_int_equal(ev.u.status.qty, cases[i].want_qty);
    }
    expect_empty(f);
    assert_int_equal(tp_publisher_counters(f->pub)->skipped, 0);
}

/* The state entry's sides equal the books' best levels (the state table holds 4 levels here). */
static void expect_state_mirrors_books(struct fixture *f)
{
    struct tp_instrument_state st;
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    for (int ask = 0; ask < 2; ask++) {
        int64_t price[4], qty[4];
        uint32_t count[4];
        unsigned n = test_books_side(f->books, ask, price, qty, count, 4);
        const struct tp_level *lv = ask ? st.asks : st.bids;
        assert_int_equal(ask ? st.book.ask_levels : st.book.bid_levels, n);
        for (unsigned i = 0; i < n; i++) {
            assert_int_equal(lv[i].price, price[i]);
            assert_int_equal(lv[i].qty, qty[i]);
            assert_int_equal(lv[i].orders, (int32_t)count[i]);
        }
    }
}

/*
 * A side's one level change of an event (changed in place, new, removed) goes from the change
 * record into the state entry without a copy from the books; a side changed twice in one event
 * is copied. Random adds and executions on six prices a side (more than the 4 levels the table
 * holds), single and paired in one event, then the book drained one order at a time: after
 * every event the entry equals the books.
 */
static void test_state_levels_follow_books(void **state)
{
    struct fixture *f = *state;
    enum { ORDERS = 64 };
    int64_t left[ORDERS] = {0};
    struct tp_book_change c[4 * TP_BOOK_CHANGES_MAX];
    unsigned rng = 12345, in_place = 0;
    for (int step = 0; step < 3000; step++) {
        int n = 0, pair = (rng >> 20) % 4 == 0;
        for (int k = 0; k <= pair; k++) {
            rng = rng * 1103515245u + 12345u;
            uint64_t order = 1 + (rng >> 16) % ORDERS;
            if (left[order - 1] == 0) {
                int ask = order % 2;
                int64_t price =
                    (ask ? 101 + (int64_t)(rng >> 8) % 6 : 100 - (int64_t)(rng >> 8) % 6) *
                    1000000000;
                left[order - 1] = 10 + (rng >> 4) % 90;
                n += test_books_add(f->books, order, ask, price, left[order - 1], c + n);
            } else {
                int64_t qty = 1 + (int64_t)(rng >> 12) % left[order - 1];
                left[order - 1] -= qty;
                int m = test_books_execute(f->books, order, qty, 0, c + n);
                for (int i = n; i < n + m; i++)
                    in_place += c[i].kind == TP_CHANGE_LEVEL && c[i].action == TP_LEVEL_CHANGE;
                n += m;
            }
        }
        publish_event(f, c, n);
        expect_state_mirrors_books(f);
    }
    assert_true(in_place > 500); /* the in-place path was taken, not only the copy */
    /* Drain the book one order per event: levels go away from sides with fewer than 4 too. */
    for (uint64_t order = 1; order <= ORDERS; order++) {
        if (left[order - 1] == 0)
            continue;
        int n = test_books_execute(f->books, order, left[order - 1], 0, c);
        left[order - 1] = 0;
        publish_event(f, c, n);
        expect_state_mirrors_books(f);
    }
    struct tp_instrument_state st;
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.bid_levels + st.book.ask_levels, 0);
}

/*
 * Whether aggregated order levels are an instrument's depth is remembered per instrument until
 * its next definition: once the book is configured with venue levels too and the definition
 * reaches the sink, its order levels are no longer published as depth (only as OrderEvents).
 */
static void test_depth_kind_follows_definition(void **state)
{
    struct fixture *f = *state;
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    uint16_t tid;
    uint32_t rflags;
    int n = test_books_add(f->books, 1, 0, 100000000000, 300, c);
    publish_event(f, c, n);
    next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_ORDER_EVENT_TEMPLATE_ID);
    next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_BOOK_UPDATE_TEMPLATE_ID);

    assert_int_equal(test_books_retype(f->books, 1), 0);
    f->sink.instrument(f->sink.ctx, 0);
    next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_INSTRUMENT_DEFINITION_TEMPLATE_ID);
    n = test_books_add(f->books, 2, 0, 100000000000, 200, c);
    assert_int_equal(n, 2); /* an ORDER and a LEVEL record, as before */
    publish_event(f, c, n);
    next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_ORDER_EVENT_TEMPLATE_ID);
    expect_empty(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_event_records_and_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_level_actions_mapping, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flags_and_interest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_parts_and_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_burst_moves_tail_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_defer_runs_at_end_of_burst, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_execution_quantities, setup, teardown),
        cmocka_unit_test_setup_teardown(test_statistics_published, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_levels_follow_books, setup, teardown),
        cmocka_unit_test_setup_teardown(test_depth_kind_follows_definition, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
