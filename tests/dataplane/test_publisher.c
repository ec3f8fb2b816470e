/*
 * Tests for dataplane/publish: one tpout record per change record, endOfEvent on the last record
 * of each venue event only, the state table written at event boundaries from the books, level
 * actions mapped to tpout (DELETE_FROM, DELETE_THRU, CLEAR), recovery flags, no-interest skips.
 * A real bus (segments in /dev/shm) is written and read back with the ring reader.
 */
#include <errno.h>
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
#include "util/histogram.h"
#include "tickplane/tickplane.h"
#include "views/decode.h"

struct fixture {
    struct tp_bus_writer bus;
    struct tp_books *books;
    struct tp_instruments *registry;
    struct tp_publisher *pub;
    struct tp_feed_sink sink;
    struct tp_ring_reader reader;
    struct tp_state_table *state_kept; /* a stateless test's table, closed with the bus */
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

static void expect_state_mirrors_books(struct fixture *f);

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

    /*
     * One event of two adds: 2 change records each (order + level), one OrderEvent each carrying
     * its level in the `levels` group (order-only book), tagged TP_RECORD_ORDER_DEPTH; only the
     * last is marked.
     */
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    struct tp_feed_info info = {.rx_tsc = 1234, .packet_seq = 42, .venue_time = 99};
    int n = test_books_add(f->books, 1, 0, 100000000000, 300, c);
    assert_int_equal(n, 2);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    n = test_books_add(f->books, 2, 1, 101000000000, 200, c);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    /* Before the end of the event the last record is still held back (claimed, uncommitted). */
    b = next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_ORDER_EVENT_TEMPLATE_ID);
    assert_int_equal(b[TPOUT_BOOK_UPDATE_FLAGS_OFFSET] & TP_PUB_F_END_OF_EVENT, 0);
    assert_int_equal(tpout_load_u64(b + TPOUT_BOOK_UPDATE_RECV_TSC_OFFSET), 1234);
    assert_int_equal(tpout_load_u64(b + TPOUT_BOOK_UPDATE_VENUE_SEQ_OFFSET), 42);
    assert_int_equal(b[TPOUT_BOOK_UPDATE_VENUE_OFFSET], 1);
    /* the group: one 24-byte entry, level 1 of the bid side is new at 100 x 300, one order */
    const uint8_t *g = b + TPOUT_ORDER_EVENT_BLOCK_LENGTH;
    assert_int_equal(tpout_load_u16(g), TPOUT_ORDER_EVENT_LEVELS_BLOCK_LENGTH);
    assert_int_equal(tpout_load_u16(g + 2), 1);
    g += 4;
    assert_int_equal(g[TPOUT_ORDER_EVENT_LEVELS_SIDE_OFFSET], TPOUT_SIDE_BID);
    assert_int_equal(g[TPOUT_ORDER_EVENT_LEVELS_LEVEL_OFFSET], 1);
    assert_int_equal(g[TPOUT_ORDER_EVENT_LEVELS_ACTION_OFFSET], TPOUT_LEVEL_ACTION_INSERT);
    assert_int_equal(tpout_load_u32(g + TPOUT_ORDER_EVENT_LEVELS_ORDER_COUNT_OFFSET), 1);
    assert_int_equal(tpout_load_u64(g + TPOUT_ORDER_EVENT_LEVELS_PRICE_OFFSET), 100000000000);
    assert_int_equal(tpout_load_u64(g + TPOUT_ORDER_EVENT_LEVELS_QUANTITY_OFFSET), 300);
    expect_empty(f);
    /* The state table is not touched mid-event. */
    struct tp_instrument_state st;
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.bid_levels, 0);
    f->sink.end_of_event(f->sink.ctx, &info);
    b = next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_ORDER_EVENT_TEMPLATE_ID);
    assert_int_equal(tpout_load_u16(b + TPOUT_ORDER_EVENT_BLOCK_LENGTH + 2), 1);
    assert_int_equal(b[TPOUT_ORDER_EVENT_BLOCK_LENGTH + 4 + TPOUT_ORDER_EVENT_LEVELS_SIDE_OFFSET],
                     TPOUT_SIDE_ASK);
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
    assert_int_equal(pc->records, 3);
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

    /* NEW, CHANGE, DELETE and OVERLAY of venue levels: one BookUpdate of one entry each, an
     * overlay as a change; the implied one flagged. */
    static const uint8_t actions[] = {TP_LEVEL_NEW, TP_LEVEL_CHANGE, TP_LEVEL_DELETE,
                                      TP_LEVEL_OVERLAY};
    static const uint8_t out_actions[] = {0, 1, 2, 1};
    struct tp_book_change v[4];
    for (int i = 0; i < 4; i++)
        v[i] = (struct tp_book_change){.instrument = 0,
                                       .kind = TP_CHANGE_LEVEL,
                                       .book = i == 3 ? TP_BOOK_IMPLIED : TP_BOOK_DIRECT,
                                       .side = i == 1 ? TP_SIDE_ASK : TP_SIDE_BID,
                                       .action = actions[i],
                                       .level = (uint16_t)(2 + i),
                                       .count = (uint32_t)i,
                                       .price = 100 + i,
                                       .qty = 10 + i};
    f->sink.changes(f->sink.ctx, &info, v, 4);
    f->sink.end_of_event(f->sink.ctx, &info);
    for (int i = 0; i < 4; i++) {
        b = next_record(f, &tid, &rflags);
        assert_int_equal(tid, TPOUT_BOOK_UPDATE_TEMPLATE_ID);
        assert_int_equal(b[TPOUT_BOOK_UPDATE_FLAGS_OFFSET] & TP_PUB_F_IMPLIED,
                         i == 3 ? TP_PUB_F_IMPLIED : 0);
        g = b + TPOUT_BOOK_UPDATE_BLOCK_LENGTH;
        assert_int_equal(tpout_load_u16(g), TPOUT_BOOK_UPDATE_LEVELS_BLOCK_LENGTH);
        assert_int_equal(tpout_load_u16(g + 2), 1);
        g += 4;
        assert_int_equal(g[TPOUT_BOOK_UPDATE_LEVELS_SIDE_OFFSET], i == 1 ? 1 : 0);
        assert_int_equal(g[TPOUT_BOOK_UPDATE_LEVELS_LEVEL_OFFSET], 2 + i);
        assert_int_equal(g[TPOUT_BOOK_UPDATE_LEVELS_ACTION_OFFSET], out_actions[i]);
        assert_int_equal(tpout_load_u32(g + TPOUT_BOOK_UPDATE_LEVELS_ORDER_COUNT_OFFSET),
                         i == 0 ? (uint32_t)TPOUT_COUNT_NULL_VALUE : (uint32_t)i);
        assert_int_equal(tpout_load_u64(g + TPOUT_BOOK_UPDATE_LEVELS_PRICE_OFFSET), 100 + i);
        assert_int_equal(tpout_load_u64(g + TPOUT_BOOK_UPDATE_LEVELS_QUANTITY_OFFSET), 10 + i);
        assert_int_equal(rflags & TP_PUB_F_END_OF_EVENT, i == 3 ? TP_PUB_F_END_OF_EVENT : 0);
    }
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
    /* the add's OrderEvent (its level in its group), then the status */
    assert_int_equal(n, 2);
    assert_int_equal(records, 2);
    assert_int_equal(marked, 1);
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.flags & TP_PUB_F_STALE, 0);
    /* Nobody interested: nothing published, the state is still kept. */
    tp_bus_set_interest(&f->bus, 0, 0);
    n = test_books_add(f->books, 4, 1, 102000000000, 10, c);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    f->sink.end_of_event(f->sink.ctx, &info);
    expect_empty(f);
    assert_int_equal(tp_counter_get(f->bus.stats.no_interest), 1); /* the one OrderEvent */
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.ask_levels, 1);
    assert_int_equal(st.asks[0].price, 102000000000);
}

/* A bus without a state table (an event file's: tickplane-replay --events) gets the same records:
 * a status of its own outside an event, one that joins an event inside it; nothing is written. */
static int setup_stateless(void **state)
{
    if (setup(state) != 0)
        return -1;
    struct fixture *f = *state;
    f->state_kept = f->bus.state;
    f->bus.state = NULL;
    struct tp_publisher_params pp = {
        .bus = &f->bus, .books = f->books, .registry = f->registry, .instruments = 16, .depth = 4};
    if (tp_publisher_init(f->pub, &pp) != 0)
        return -1;
    tp_publisher_select(f->pub, 1, 7);
    return 0;
}

static int teardown_stateless(void **state)
{
    struct fixture *f = *state;
    f->bus.state = f->state_kept;
    return teardown(state);
}

static void test_stateless_bus(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_info info = {.rx_tsc = 1};
    uint16_t tid;
    uint32_t rflags;
    f->sink.stale(f->sink.ctx, 0, 1, 5, 9);
    next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_INSTRUMENT_STATUS_TEMPLATE_ID);
    assert_int_equal(rflags & TP_PUB_F_END_OF_EVENT, TP_PUB_F_END_OF_EVENT);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    int n = test_books_add(f->books, 3, 0, 99000000000, 10, c);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    f->sink.stale(f->sink.ctx, 0, 0, 0, 0);
    f->sink.end_of_event(f->sink.ctx, &info);
    next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_ORDER_EVENT_TEMPLATE_ID);
    assert_int_equal(rflags & TP_PUB_F_END_OF_EVENT, 0);
    next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_INSTRUMENT_STATUS_TEMPLATE_ID);
    assert_int_equal(rflags & TP_PUB_F_END_OF_EVENT, TP_PUB_F_END_OF_EVENT);
    expect_empty(f);
    assert_int_equal(tp_publisher_counters(f->pub)->state_writes, 0);
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
    n = test_books_add(f->books, 2, 0, 100000000000, 100, c);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    /* Mid-event the first record (the first add and its level) is complete at the reader's
     * cursor, but the shared tail (what lagging readers and the published counter go by) has not
     * moved. */
    const struct tp_ring_record *rec;
    uint64_t lost;
    assert_int_equal(tp_ring_read(&f->reader, &rec, &lost), TP_RING_RECORD);
    assert_int_equal(atomic_load(&f->bus.ring.shared->tail), tail_before);
    assert_int_equal(tp_counter_get(f->bus.stats.published), 0);
    f->sink.end_of_event(f->sink.ctx, &info);
    assert_true(atomic_load(&f->bus.ring.shared->tail) > tail_before);
    assert_int_equal(atomic_load(&f->bus.ring.shared->tail), f->bus.ring.tail);
    assert_int_equal(tp_counter_get(f->bus.stats.published), 2); /* one record per add */
    struct tp_instrument_state st;
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.bid_levels, 1);
    assert_int_equal(st.bids[0].qty, 400);
    assert_int_equal(st.bids[0].orders, 2);
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
    assert_int_equal(st.bids[0].qty, 400);
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
 * the burst's first event reaches a reader level with the tail as soon as it ends (the reader
 * then waits for the tail: broadcast_ring.h), and the state entry of an instrument is written
 * once, at the burst's end, claiming the burst's last record.
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
        info.packet_seq = 1 + (uint64_t)k;
        f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
        f->sink.end_of_event(f->sink.ctx, &info);
        total++; /* the add and its level: one OrderEvent */
        assert_int_equal(tp_ring_read(&f->reader, &rec, &lost),
                         k == 0 ? TP_RING_RECORD : TP_RING_EMPTY);
        /* the entry waits for the burst's end */
        assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
        assert_int_equal(st.book.bid_levels, 0);
        assert_int_equal(atomic_load(&f->bus.ring.shared->tail), tail_before);
        assert_int_equal(tp_counter_get(f->bus.stats.published), 0);
    }
    assert_int_equal(tp_publisher_counters(f->pub)->state_writes, 0);
    tp_publisher_end_burst(f->pub);
    assert_int_equal(tp_ring_read(&f->reader, &rec, &lost), TP_RING_RECORD);
    assert_int_equal(tp_publisher_counters(f->pub)->state_writes, 1);
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.bus_sequence, rec->sequence);
    assert_int_equal(st.book.bid_levels, 2);
    assert_int_equal(st.book.venue_seq, 2); /* the last event's */
    assert_int_equal(atomic_load(&f->bus.ring.shared->tail), f->bus.ring.tail);
    assert_true(f->bus.ring.tail > tail_before);
    assert_int_equal(tp_counter_get(f->bus.stats.published), total);
    expect_empty(f);

    /* Outside a burst each event moves the tail and writes the entry again. */
    int n = test_books_add(f->books, 3, 0, 99000000000, 300, c);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    f->sink.end_of_event(f->sink.ctx, &info);
    assert_int_equal(atomic_load(&f->bus.ring.shared->tail), f->bus.ring.tail);
    assert_int_equal(n, 2);
    assert_int_equal(tp_counter_get(f->bus.stats.published), total + 1);
    assert_int_equal(tp_publisher_counters(f->pub)->state_writes, 2);
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.bid_levels, 3);
}

/*
 * An event still open at the burst's end (an MDP3 event may span packets and bursts) keeps its
 * instrument's entry as it was, even for the burst's earlier, ended events of that instrument:
 * the entry is written when the event ends (outside a burst), or at the next burst's end.
 */
static void test_event_open_across_burst_end(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_info info = {.rx_tsc = 5, .packet_seq = 1};
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    struct tp_instrument_state st;
    for (int outside = 0; outside < 2; outside++) {
        tp_publisher_begin_burst(f->pub);
        int n = test_books_add(f->books, 1 + 2 * (uint64_t)outside, 0, 100000000000, 300, c);
        f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
        f->sink.end_of_event(f->sink.ctx, &info);
        n = test_books_add(f->books, 2 + 2 * (uint64_t)outside, 1, 101000000000, 200, c);
        f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n); /* the event goes on */
        tp_publisher_end_burst(f->pub);
        /* the entry is as before the burst: nothing of its ended event either */
        assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
        assert_int_equal(st.book.bid_levels, (uint16_t)outside);
        assert_int_equal(st.book.ask_levels, (uint16_t)outside);
        if (outside) {
            assert_int_equal(st.bids[0].qty, 300);
            assert_int_equal(st.asks[0].qty, 200);
        }
        if (!outside)
            tp_publisher_begin_burst(f->pub);
        f->sink.end_of_event(f->sink.ctx, &info);
        if (!outside) {
            assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
            assert_int_equal(st.book.ask_levels, 0);
            tp_publisher_end_burst(f->pub);
        }
        expect_state_mirrors_books(f);
        assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
        assert_int_equal(st.book.bus_sequence, f->bus.ring.next_sequence - 1);
    }
}

/*
 * A burst that ends more events than the publisher logs the venue fields of (TP_PUB_EVENT_LOG): the
 * entries of instruments no open event touches are written when the log is full, each with the
 * venue fields of its own last event; an instrument the ending event touched waits for the burst's
 * end.
 */
static void test_burst_longer_than_event_log(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_info info = {.rx_tsc = 5, .packet_seq = 1};
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    struct tp_instrument_state st;

    /* One event changes instrument 0, then TP_PUB_EVENT_LOG + 43 events change nothing. */
    tp_publisher_begin_burst(f->pub);
    int n = test_books_add(f->books, 1, 0, 100000000000, 100, c);
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    f->sink.end_of_event(f->sink.ctx, &info);
    for (uint64_t seq = 2; seq <= TP_PUB_EVENT_LOG + 44; seq++) {
        info.packet_seq = seq;
        f->sink.end_of_event(f->sink.ctx, &info);
        /* the log holds TP_PUB_EVENT_LOG events: the next one's end writes the entry */
        assert_int_equal(tp_publisher_counters(f->pub)->state_writes,
                         seq <= TP_PUB_EVENT_LOG ? 0 : 1);
    }
    tp_publisher_end_burst(f->pub);
    assert_int_equal(tp_publisher_counters(f->pub)->state_writes, 1);
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.venue_seq, 1); /* its own event's */
    assert_int_equal(st.bids[0].qty, 100);

    /* More events than the log holds, each changing instrument 0 (order 2 added, then deleted,
     * then added again...): one write, at the burst's end, with the last event's fields. */
    const uint64_t events = TP_PUB_EVENT_LOG + 44;
    tp_publisher_begin_burst(f->pub);
    for (uint64_t k = 1; k <= events; k++) {
        info.packet_seq = 1000 + k;
        n = k % 2 ? test_books_add(f->books, 2, 0, 100000000000, 200, c)
                  : test_books_delete(f->books, 2, c);
        f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
        f->sink.end_of_event(f->sink.ctx, &info);
    }
    assert_int_equal(tp_publisher_counters(f->pub)->state_writes, 1);
    tp_publisher_end_burst(f->pub);
    assert_int_equal(tp_publisher_counters(f->pub)->state_writes, 2);
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.venue_seq, 1000 + events);
    assert_int_equal(st.bids[0].qty, 100); /* the last event deleted order 2 */
    assert_int_equal(st.book.bus_sequence, f->bus.ring.next_sequence - 1);
    expect_state_mirrors_books(f);
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
    assert_int_equal(tp_counter_get(f->bus.stats.published), 2); /* one OrderEvent per add */
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

static uint64_t fixed_clock(void)
{
    return 1000;
}

/*
 * Receive-to-publish latency: the first published event and then one in TP_PUB_LATENCY_EVERY go
 * into the histogram, as clock() - rx_tsc; an event that published nothing neither counts nor
 * moves the sampling on.
 */
static void test_latency_sampling(void **state)
{
    struct fixture *f = *state;
    static struct tp_histogram latency;
    tp_hist_reset(&latency);
    struct tp_publisher_params pp = {.bus = &f->bus,
                                     .books = f->books,
                                     .registry = f->registry,
                                     .instruments = 16,
                                     .depth = 4,
                                     .latency = &latency,
                                     .clock = fixed_clock};
    struct tp_publisher *pub = aligned_alloc(64, (tp_publisher_memsize(&pp) + 63) & ~(size_t)63);
    assert_non_null(pub);
    assert_int_equal(tp_publisher_init(pub, &pp), 0);
    struct tp_feed_sink sink = tp_publisher_sink(pub);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    for (uint64_t i = 1; i <= 20; i++) {
        struct tp_feed_info info = {.rx_tsc = i};
        int n = test_books_add(f->books, 100 + i, 0, 100000000000, 10, c);
        sink.changes(sink.ctx, &info, c, (uint32_t)n);
        sink.end_of_event(sink.ctx, &info);
        struct tp_feed_info empty = {.rx_tsc = 500};
        sink.end_of_event(sink.ctx, &empty);
    }
    assert_int_equal(latency.count, 3); /* published events 1, 9 and 17 */
    assert_int_equal(latency.sum, (1000 - 1) + (1000 - 9) + (1000 - 17));
    assert_int_equal(latency.min, 1000 - 17);
    assert_int_equal(latency.max, 1000 - 1);
    free(pub);
}

/* Decodes the next record as a consumer does (client/views). */
static int next_event(struct fixture *f, struct tp_event *ev)
{
    const struct tp_ring_record *rec;
    uint64_t lost;
    assert_int_equal(tp_ring_read(&f->reader, &rec, &lost), TP_RING_RECORD);
    static struct tp_level_change changes[8];
    uint32_t n_levels;
    return tp_decode_tpout(tp_ring_payload(rec), rec->length - TP_RING_RECORD_HEADER, ev, changes,
                           8, &n_levels);
}

/* One venue event of n change records through the sink. */
static void publish_event(struct fixture *f, const struct tp_book_change *c, int n)
{
    struct tp_feed_info info = {.rx_tsc = 1};
    f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
    f->sink.end_of_event(f->sink.ctx, &info);
}

/* The next record is an OrderEvent with its level (order-only book), this action, quantity and
 * remaining quantity. */
static void expect_order(struct fixture *f, uint8_t action, int64_t qty, int64_t remaining)
{
    struct tp_event ev;
    assert_int_equal(next_event(f, &ev), TP_RECORD_ORDER_DEPTH);
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
    expect_empty(f);

    /* Printable: 100 of 300 executed, 200 remain. */
    int n = test_books_execute(f->books, 7, 100, 1, c);
    assert_int_equal(n, 3); /* order, level, trade */
    publish_event(f, c, n);
    expect_order(f, 3, 100, 200);
    assert_int_equal(next_event(f, &ev), TP_TOPIC_TRADES);
    assert_int_equal(ev.u.trade.qty, 100);

    /* Not printable: no trade record, the order record still says 50 executed; 150 remain. */
    n = test_books_execute(f->books, 7, 50, 0, c);
    assert_int_equal(n, 2);
    publish_event(f, c, n);
    expect_order(f, 3, 50, 150);

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
 * every event (or, in rx bursts, after every burst) the entry equals the books.
 */
static void random_walk(struct fixture *f, unsigned burst_max)
{
    enum { ORDERS = 64 };
    int64_t left[ORDERS] = {0};
    struct tp_book_change c[4 * TP_BOOK_CHANGES_MAX];
    unsigned rng = 12345, in_place = 0, in_burst = 0;
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
        if (burst_max > 1 && in_burst == 0) {
            tp_publisher_begin_burst(f->pub);
            in_burst = 1 + (rng >> 24) % burst_max; /* events in this burst */
        }
        publish_event(f, c, n);
        if (burst_max > 1 && --in_burst > 0)
            continue;
        if (burst_max > 1)
            tp_publisher_end_burst(f->pub);
        expect_state_mirrors_books(f);
    }
    if (in_burst > 0) {
        tp_publisher_end_burst(f->pub);
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

static void test_state_levels_follow_books(void **state)
{
    random_walk(*state, 1);
}

/* The same in rx bursts of 1 to 6 events: one entry write per burst, equal to the books. */
static void test_state_levels_follow_books_in_bursts(void **state)
{
    struct fixture *f = *state;
    random_walk(f, 6);
    assert_true(tp_publisher_counters(f->pub)->state_writes < 2000);
}

/*
 * Whether aggregated order levels are an instrument's depth is remembered per instrument until
 * its next definition: once the book is configured with venue levels too and the definition
 * reaches the sink, its order levels are no longer published as depth (OrderEvents without
 * levels).
 */
static void test_depth_kind_follows_definition(void **state)
{
    struct fixture *f = *state;
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    uint16_t tid;
    uint32_t rflags;
    int n = test_books_add(f->books, 1, 0, 100000000000, 300, c);
    publish_event(f, c, n);
    const uint8_t *b = next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_ORDER_EVENT_TEMPLATE_ID);
    assert_int_equal(tpout_load_u16(b + TPOUT_ORDER_EVENT_BLOCK_LENGTH + 2), 1); /* its level */
    expect_empty(f);

    assert_int_equal(test_books_retype(f->books, 1), 0);
    f->sink.instrument(f->sink.ctx, 0);
    next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_INSTRUMENT_DEFINITION_TEMPLATE_ID);
    n = test_books_add(f->books, 2, 0, 100000000000, 200, c);
    assert_int_equal(n, 2); /* an ORDER and a LEVEL record, as before */
    publish_event(f, c, n);
    b = next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_ORDER_EVENT_TEMPLATE_ID);
    assert_int_equal(tpout_load_u16(b + TPOUT_ORDER_EVENT_BLOCK_LENGTH + 2), 0); /* no levels */
    expect_empty(f);
}

/* A CLEAR of the order-level book alone (an MBO snapshot): the depth of an order-only book, so
 * published; beside venue levels (books with both kinds) it leaves their depth alone and goes
 * to order-level consumers as the removal of order id 0 (every order of the instrument). */
static void test_order_book_clear(void **state)
{
    struct fixture *f = *state;
    struct tp_feed_info info = {.rx_tsc = 1};
    struct tp_book_change c = {.instrument = 0, .kind = TP_CHANGE_CLEAR, .book = TP_BOOK_ORDERS};
    struct tp_book_change a[TP_BOOK_CHANGES_MAX];
    uint16_t tid;
    uint32_t rflags;
    publish_event(f, a, test_books_add(f->books, 1, 0, 100000000000, 300, a));
    next_record(f, &tid, &rflags);
    f->sink.changes(f->sink.ctx, &info, &c, 1);
    f->sink.end_of_event(f->sink.ctx, &info);
    next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_BOOK_UPDATE_TEMPLATE_ID);
    expect_empty(f);

    assert_int_equal(test_books_retype(f->books, 1), 0);
    f->sink.instrument(f->sink.ctx, 0);
    next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_INSTRUMENT_DEFINITION_TEMPLATE_ID);
    f->sink.changes(f->sink.ctx, &info, &c, 1);
    f->sink.end_of_event(f->sink.ctx, &info);
    const uint8_t *b = next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_ORDER_EVENT_TEMPLATE_ID);
    assert_int_equal(tpout_load_u64(b + TPOUT_ORDER_EVENT_ORDER_ID_OFFSET), 0);
    assert_int_equal(b[TPOUT_ORDER_EVENT_ACTION_OFFSET], 2); /* remove */
    assert_int_equal(tpout_load_u64(b + TPOUT_ORDER_EVENT_REMAINING_QUANTITY_OFFSET), 0);
    expect_empty(f);
    c.book = TP_BOOK_DIRECT; /* every book of the instrument */
    f->sink.changes(f->sink.ctx, &info, &c, 1);
    f->sink.end_of_event(f->sink.ctx, &info);
    next_record(f, &tid, &rflags);
    assert_int_equal(tid, TPOUT_BOOK_UPDATE_TEMPLATE_ID);
    expect_empty(f);
}

/* ---- the one-record form against the two-record form, as libtickplane delivers them ---------- */

/* Subscribers compared: each topic alone, and all three together. */
enum { SUB_DEPTH, SUB_ORDERS, SUB_TOP, SUB_ALL, SUBS };
static const uint32_t sub_topics[SUBS] = {
    TP_TOPIC_BIT(TP_TOPIC_DEPTH), TP_TOPIC_BIT(TP_TOPIC_ORDERS), TP_TOPIC_BIT(TP_TOPIC_TOP),
    TP_TOPIC_BIT(TP_TOPIC_DEPTH) | TP_TOPIC_BIT(TP_TOPIC_ORDERS) | TP_TOPIC_BIT(TP_TOPIC_TOP)};

#define SEEN_MAX   256
#define SEEN_LEVEL 8

/* An event as compared: all of it but its ring sequence and the message it points at. */
struct seen_event {
    uint32_t topic, instrument_id, flags, n_changes;
    uint64_t venue_seq, venue_time_ns, recv_tsc;
    struct tp_level_change changes[TP_BOOK_CHANGES_MAX];
    uint64_t order_id, priority;
    int64_t order_price, order_qty, remaining_qty;
    uint8_t order_side, order_action;
    struct tp_top_of_book top;
    uint16_t bid_levels, ask_levels;
    struct tp_level bids[SEEN_LEVEL], asks[SEEN_LEVEL];
};

struct seen {
    uint32_t n;
    struct seen_event ev[SEEN_MAX];
};

static void on_seen(void *user, const struct tp_event *ev)
{
    struct seen *s = user;
    assert_true(s->n < SEEN_MAX);
    struct seen_event *e = &s->ev[s->n++];
    memset(e, 0, sizeof(*e)); /* padding too: events are compared with memcmp */
    e->topic = ev->topic;
    e->instrument_id = ev->instrument_id;
    e->flags = ev->flags;
    e->venue_seq = ev->venue_seq;
    e->venue_time_ns = ev->venue_time_ns;
    e->recv_tsc = ev->recv_tsc;
    if (ev->topic == TP_TOPIC_DEPTH) {
        assert_true(ev->u.depth.count <= TP_BOOK_CHANGES_MAX);
        e->n_changes = ev->u.depth.count;
        memcpy(e->changes, ev->u.depth.changes, e->n_changes * sizeof(e->changes[0]));
    } else if (ev->topic == TP_TOPIC_ORDERS) {
        e->order_id = ev->u.order.order_id;
        e->priority = ev->u.order.priority;
        e->order_price = ev->u.order.price;
        e->order_qty = ev->u.order.qty;
        e->remaining_qty = ev->u.order.remaining_qty;
        e->order_side = ev->u.order.side;
        e->order_action = ev->u.order.action;
    } else if (ev->topic == TP_TOPIC_TOP) {
        e->top = ev->u.top;
    }
    e->bid_levels = ev->book.bid_levels;
    e->ask_levels = ev->book.ask_levels;
    for (unsigned i = 0; ev->book.bids != NULL && i < ev->book.bid_levels && i < SEEN_LEVEL; i++)
        e->bids[i] = ev->book.bids[i];
    for (unsigned i = 0; ev->book.asks != NULL && i < ev->book.ask_levels && i < SEEN_LEVEL; i++)
        e->asks[i] = ev->book.asks[i];
}

/* The tpout message header of a version-2 message (the two-record form's). */
static void v2_header(uint8_t *msg, uint16_t block, uint16_t template_id)
{
    tpout_message_header_set_block_length(msg, block);
    tpout_message_header_set_template_id(msg, template_id);
    tpout_message_header_set_schema_id(msg, TPOUT_SCHEMA_ID);
    tpout_message_header_set_version(msg, 2);
}

/*
 * What the publisher wrote before tpout version 3, encoded here with the generated encoders
 * (not the publisher's stores): each change record its own version-2 message (ORDER: an
 * OrderEvent, which had no levels group; LEVEL: a BookUpdate of one entry; TRADE: a Trade), the
 * event's last one marked endOfEvent.
 */
static void publish_two_record_form(struct tp_bus_writer *w, const struct tp_feed_info *info,
                                    const struct tp_book_change *c, int n)
{
    static const uint8_t order_action[] = {[TP_ORDER_ADD] = 0,
                                           [TP_ORDER_EXECUTE] = 3,
                                           [TP_ORDER_CANCEL] = 1,
                                           [TP_ORDER_DELETE] = 2,
                                           [TP_ORDER_MODIFY] = 1};
    for (int i = 0; i < n; i++) {
        uint8_t msg[256] = {0};
        uint8_t *body = msg + TPOUT_MESSAGE_HEADER_ENCODED_LENGTH;
        size_t cap = sizeof(msg) - TPOUT_MESSAGE_HEADER_ENCODED_LENGTH, len;
        uint8_t flags = i == n - 1 ? TP_PUB_F_END_OF_EVENT : 0;
        uint16_t topic;
        if (c[i].kind == TP_CHANGE_ORDER) {
            struct tpout_order_event m;
            assert_int_equal(tpout_order_event_wrap_for_encode(&m, body, cap), 0);
            tpout_order_event_set_venue_seq(&m, info->packet_seq);
            tpout_order_event_set_venue_time_ns(&m, info->venue_time);
            tpout_order_event_set_recv_tsc(&m, info->rx_tsc);
            tpout_order_event_set_instrument_id(&m, c[i].instrument);
            tpout_order_event_set_rpt_seq(&m, TPOUT_RPT_SEQ_NULL_VALUE);
            tpout_order_event_set_flags(&m, flags);
            tpout_order_event_set_venue(&m, 1);
            tpout_order_event_set_order_id(&m, c[i].order_id);
            tpout_order_event_set_priority(&m, c[i].aux);
            tpout_order_event_set_price_mantissa(&m, c[i].price);
            int64_t remaining = c[i].action == TP_ORDER_DELETE ? 0 : c[i].qty;
            tpout_order_event_set_quantity(&m, c[i].action == TP_ORDER_EXECUTE ? (int64_t)c[i].count
                                                                               : remaining);
            tpout_order_event_set_side(&m, c[i].side == TP_SIDE_ASK);
            tpout_order_event_set_action(&m, order_action[c[i].action]);
            tpout_order_event_set_remaining_quantity(&m, remaining);
            v2_header(msg, TPOUT_ORDER_EVENT_BLOCK_LENGTH, TPOUT_ORDER_EVENT_TEMPLATE_ID);
            len = TPOUT_ORDER_EVENT_BLOCK_LENGTH; /* version 2: no group */
            topic = TP_TOPIC_ORDERS;
        } else if (c[i].kind == TP_CHANGE_LEVEL) {
            struct tpout_book_update m;
            struct tpout_book_update_levels g;
            assert_int_equal(tpout_book_update_wrap_for_encode(&m, body, cap), 0);
            tpout_book_update_set_venue_seq(&m, info->packet_seq);
            tpout_book_update_set_venue_time_ns(&m, info->venue_time);
            tpout_book_update_set_recv_tsc(&m, info->rx_tsc);
            tpout_book_update_set_instrument_id(&m, c[i].instrument);
            tpout_book_update_set_rpt_seq(&m, TPOUT_RPT_SEQ_NULL_VALUE);
            tpout_book_update_set_flags(&m, flags);
            tpout_book_update_set_venue(&m, 1);
            assert_int_equal(tpout_book_update_levels_wrap_for_encode(&m, &g, 1), 0);
            assert_int_equal(tpout_book_update_levels_next(&g), 0);
            tpout_book_update_levels_set_side(&g, c[i].side == TP_SIDE_ASK);
            tpout_book_update_levels_set_level(&g, (uint8_t)c[i].level);
            tpout_book_update_levels_set_action(&g, c[i].action == TP_LEVEL_NEW      ? 0
                                                    : c[i].action == TP_LEVEL_DELETE ? 2
                                                                                     : 1);
            tpout_book_update_levels_set_order_count(&g, c[i].count ? (int32_t)c[i].count
                                                                    : TPOUT_COUNT_NULL_VALUE);
            tpout_book_update_levels_set_price_mantissa(&g, c[i].price);
            tpout_book_update_levels_set_quantity(&g, c[i].qty);
            v2_header(msg, TPOUT_BOOK_UPDATE_BLOCK_LENGTH, TPOUT_BOOK_UPDATE_TEMPLATE_ID);
            len = m.pos;
            topic = TP_TOPIC_DEPTH;
        } else {
            assert_int_equal(c[i].kind, TP_CHANGE_TRADE);
            struct tpout_trade m;
            assert_int_equal(tpout_trade_wrap_for_encode(&m, body, cap), 0);
            tpout_trade_set_venue_seq(&m, info->packet_seq);
            tpout_trade_set_venue_time_ns(&m, info->venue_time);
            tpout_trade_set_recv_tsc(&m, info->rx_tsc);
            tpout_trade_set_instrument_id(&m, c[i].instrument);
            tpout_trade_set_rpt_seq(&m, TPOUT_RPT_SEQ_NULL_VALUE);
            tpout_trade_set_flags(&m, flags);
            tpout_trade_set_venue(&m, 1);
            tpout_trade_set_price_mantissa(&m, c[i].price);
            tpout_trade_set_quantity(&m, c[i].qty);
            tpout_trade_set_trade_id(&m, c[i].aux);
            tpout_trade_set_order_count(&m, TPOUT_COUNT_NULL_VALUE);
            tpout_trade_set_aggressor_side(&m, c[i].side == TP_SIDE_BID   ? 1
                                               : c[i].side == TP_SIDE_ASK ? 2
                                                                          : 0);
            v2_header(msg, TPOUT_TRADE_BLOCK_LENGTH, TPOUT_TRADE_TEMPLATE_ID);
            len = TPOUT_TRADE_BLOCK_LENGTH;
            topic = TP_TOPIC_TRADES;
        }
        assert_true(tp_bus_publish(w, TP_REC_SBE, topic, c[i].instrument, flags, msg,
                                   (uint32_t)(TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + len)) > 0);
    }
}

/* One event of the script: its change records (at most 3 calls' worth). */
struct script_event {
    struct tp_book_change c[3 * TP_BOOK_CHANGES_MAX];
    int n;
};

/* The order-book script both forms are fed: adds, executions (printing or not), a partial
 * cancel, a delete, a replace, an event of two adds, a trade print. */
static int run_script(struct tp_books *books, struct script_event *ev)
{
    int k = 0;
#define STEP(call) ev[k].n = (call), assert_true(ev[k].n > 0), k++
    STEP(test_books_add(books, 1, 0, 100000000000, 10, ev[k].c));
    STEP(test_books_add(books, 2, 0, 100000000000, 5, ev[k].c));
    STEP(test_books_add(books, 3, 0, 99000000000, 7, ev[k].c));
    STEP(test_books_add(books, 4, 1, 101000000000, 3, ev[k].c));
    STEP(test_books_add(books, 5, 1, 102000000000, 4, ev[k].c));
    STEP(test_books_execute(books, 1, 4, 1, ev[k].c));
    STEP(test_books_execute(books, 2, 5, 0, ev[k].c));
    STEP(test_books_cancel(books, 3, 2, ev[k].c));
    STEP(test_books_delete(books, 4, ev[k].c));
    STEP(test_books_replace(books, 5, 6, 103000000000, 6, ev[k].c));
    ev[k].n = test_books_add(books, 7, 0, 98000000000, 9, ev[k].c);
    ev[k].n += test_books_add(books, 8, 1, 104000000000, 2, ev[k].c + ev[k].n);
    k++;
    STEP(test_books_trade(books, 100000000000, 3, ev[k].c));
    STEP(test_books_execute(books, 6, 6, 1, ev[k].c));
#undef STEP
    return k;
}

static void skip_snapshot(void *user, const struct tp_event *ev)
{
    (void)user;
    assert_true(ev->flags & TP_EVENT_F_SNAPSHOT);
}

static struct tp_client *subscriber(const char *instance, uint32_t topics)
{
    struct tp_client_options opt = {.no_reader_segment = 1};
    struct tp_client *c;
    char err[256];
    assert_int_equal(tp_attach(&c, instance, &opt, err, sizeof(err)), 0);
    assert_int_equal(tp_subscribe(c, NULL, 0, topics), 0);
    /* The subscription's current state (the buses' state tables differ): not compared. */
    while (tp_poll(c, skip_snapshot, NULL, 64) > 0)
        ;
    return c;
}

/*
 * Order-only books publish an order and the levels it changed as one record. Subscribers of
 * DEPTH, ORDERS, TOP and all three get exactly the events the two-record form (tpout version 2:
 * an OrderEvent, then a BookUpdate) gave them for the same change records, in the same order,
 * with the same flags and books; a subscriber of one topic sees nothing of the other.
 */
static void test_one_record_form_delivers_as_two(void **state)
{
    struct fixture *f = *state;
    char old_instance[64];
    snprintf(old_instance, sizeof(old_instance), "tptestpubv2%d", (int)getpid());
    struct tp_bus_writer old_bus;
    assert_int_equal(test_bus_writer_open(&old_bus, old_instance), 0);
    char new_instance[64];
    snprintf(new_instance, sizeof(new_instance), "tptestpub%d", (int)getpid());
    struct tp_client *sub_new[SUBS], *sub_old[SUBS];
    for (int s = 0; s < SUBS; s++) {
        sub_new[s] = subscriber(new_instance, sub_topics[s]);
        sub_old[s] = subscriber(old_instance, sub_topics[s]);
    }

    static struct script_event script[16];
    int events = run_script(f->books, script);
    uint64_t orders = 0, levels = 0, trades = 0;
    for (int e = 0; e < events; e++) {
        struct tp_feed_info info = {
            .rx_tsc = 1000 + (uint64_t)e, .packet_seq = 50 + (uint64_t)e, .venue_time = 7 * e};
        f->sink.changes(f->sink.ctx, &info, script[e].c, (uint32_t)script[e].n);
        f->sink.end_of_event(f->sink.ctx, &info);
        publish_two_record_form(&old_bus, &info, script[e].c, script[e].n);
        for (int i = 0; i < script[e].n; i++) {
            orders += script[e].c[i].kind == TP_CHANGE_ORDER;
            levels += script[e].c[i].kind == TP_CHANGE_LEVEL;
            trades += script[e].c[i].kind == TP_CHANGE_TRADE;
        }
    }
    /* Every level went into its order's record: one record per order and trade. */
    assert_int_equal(levels, 14);
    assert_int_equal(tp_publisher_counters(f->pub)->records, orders + trades);
    assert_int_equal(tp_counter_get(old_bus.stats.published), orders + levels + trades);

    static struct seen seen_new[SUBS], seen_old[SUBS];
    for (int s = 0; s < SUBS; s++) {
        memset(&seen_new[s], 0, sizeof(seen_new[s]));
        memset(&seen_old[s], 0, sizeof(seen_old[s]));
        while (tp_poll(sub_new[s], on_seen, &seen_new[s], 16) > 0)
            ;
        while (tp_poll(sub_old[s], on_seen, &seen_old[s], 16) > 0)
            ;
        assert_int_equal(seen_new[s].n, seen_old[s].n);
        for (uint32_t i = 0; i < seen_new[s].n; i++)
            assert_memory_equal(&seen_new[s].ev[i], &seen_old[s].ev[i], sizeof(struct seen_event));
        tp_detach(sub_new[s]);
        tp_detach(sub_old[s]);
    }
    /* And what they got is what each subscribed: every level change to DEPTH, every order to
     * ORDERS, nothing of the other topic. */
    uint32_t depth = 0, order = 0;
    for (uint32_t i = 0; i < seen_new[SUB_DEPTH].n; i++) {
        assert_int_equal(seen_new[SUB_DEPTH].ev[i].topic, TP_TOPIC_DEPTH);
        depth += seen_new[SUB_DEPTH].ev[i].n_changes;
    }
    assert_int_equal(depth, levels);
    assert_int_equal(seen_new[SUB_ORDERS].n, orders);
    for (uint32_t i = 0; i < seen_new[SUB_ORDERS].n; i++) {
        assert_int_equal(seen_new[SUB_ORDERS].ev[i].topic, TP_TOPIC_ORDERS);
        order += seen_new[SUB_ORDERS].ev[i].order_id != 0;
    }
    assert_int_equal(order, orders);
    for (uint32_t i = 0; i < seen_new[SUB_TOP].n; i++)
        assert_int_equal(seen_new[SUB_TOP].ev[i].topic, TP_TOPIC_TOP);
    assert_true(seen_new[SUB_TOP].n > 4);
    assert_int_equal(seen_new[SUB_ALL].n,
                     seen_new[SUB_DEPTH].n + seen_new[SUB_ORDERS].n + seen_new[SUB_TOP].n);
    tp_bus_writer_close(&old_bus, 1);
}

/* The records of ring reader r up to its end, into buf: (length, then the record's bytes) each. */
static size_t drain_records(struct tp_ring_reader *r, uint8_t *buf, size_t cap, uint32_t *count)
{
    const struct tp_ring_record *rec;
    uint64_t lost;
    size_t at = 0;
    *count = 0;
    while (tp_ring_read(r, &rec, &lost) == TP_RING_RECORD) {
        assert_true(at + sizeof(rec->length) + rec->length <= cap);
        memcpy(buf + at, &rec->length, sizeof(rec->length));
        memcpy(buf + at + sizeof(rec->length), rec, rec->length);
        at += sizeof(rec->length) + rec->length;
        (*count)++;
    }
    return at;
}

/* How expect_paths_identical hands the fixture's publisher each event. */
enum {
    PATHS_TWO_CALLS = 0, /* changes, then end_of_event */
    PATHS_ONE_CALL = 1,  /* event_changes */
    PATHS_IN_BURST = 2,  /* each event inside an rx burst (both publishers) */
};

/*
 * Two publishers, on two buses, over the same books: the fixture's gets each of the events that
 * `next` writes (changing the books as it goes) as it is (its own paths: on_orders,
 * on_venue_records, and with PATHS_ONE_CALL on_event_changes), the other after a record of an
 * unknown kind (skipped), which sends all of it the general way (on_any_changes) in two calls;
 * the last two events with instrument 0 stale. After every event their rings hold
 * byte-identical records (sequences included) and their state entries are identical. Returns how
 * many records had topic `topic`.
 */
static uint64_t expect_paths_identical(struct fixture *f, int events,
                                       int (*next)(struct fixture *f, void *ctx, int e,
                                                   struct tp_book_change *out),
                                       void *ctx, uint16_t topic, unsigned how)
{
    char instance[64];
    snprintf(instance, sizeof(instance), "tptestpubg%d", (int)getpid());
    struct tp_bus_writer bus;
    assert_int_equal(test_bus_writer_open(&bus, instance), 0);
    struct tp_publisher_params pp = {
        .bus = &bus, .books = f->books, .registry = f->registry, .instruments = 16, .depth = 4};
    struct tp_publisher *pub = aligned_alloc(64, (tp_publisher_memsize(&pp) + 63) & ~(size_t)63);
    assert_non_null(pub);
    assert_int_equal(tp_publisher_init(pub, &pp), 0);
    tp_publisher_select(pub, 1, 7);
    struct tp_feed_sink sink = tp_publisher_sink(pub);
    static uint8_t batch[1 << 16];
    struct tp_ring_reader reader;
    assert_int_equal(tp_ring_reader_init(&reader, bus.ring.shared, batch, sizeof(batch)), 0);
    f->sink.instrument(f->sink.ctx, 0);
    sink.instrument(sink.ctx, 0);

    static uint8_t got[1 << 16], want[1 << 16];
    uint64_t with_topic = 0;
    for (int e = 0; e <= events; e++) {
        if (e == events - 2) { /* the last two events of a stale instrument */
            tp_publisher_set_flags(f->pub, 0, TP_PUB_F_RECOVERING | TP_PUB_F_STALE);
            tp_publisher_set_flags(pub, 0, TP_PUB_F_RECOVERING | TP_PUB_F_STALE);
        }
        if (e == events) /* the state entries after a last event with stale flags cleared */
            break;
        struct tp_feed_info info = {
            .rx_tsc = 500 + (uint64_t)e, .packet_seq = 90 + (uint64_t)e, .venue_time = 3 * e};
        struct tp_book_change general[1 + 3 * TP_BOOK_CHANGES_MAX];
        memset(&general[0], 0, sizeof(general[0]));
        general[0].kind = 0x7f; /* no such kind: skipped, and the rest goes the general way */
        int n = next(f, ctx, e, &general[1]);
        assert_true(n > 0 && n <= 3 * TP_BOOK_CHANGES_MAX);
        if (how & PATHS_IN_BURST) {
            tp_publisher_begin_burst(f->pub);
            tp_publisher_begin_burst(pub);
        }
        if (how & PATHS_ONE_CALL) {
            f->sink.event_changes(f->sink.ctx, &info, &general[1], (uint32_t)n);
        } else {
            f->sink.changes(f->sink.ctx, &info, &general[1], (uint32_t)n);
            f->sink.end_of_event(f->sink.ctx, &info);
        }
        sink.changes(sink.ctx, &info, general, (uint32_t)n + 1);
        sink.end_of_event(sink.ctx, &info);
        if (how & PATHS_IN_BURST) {
            tp_publisher_end_burst(f->pub);
            tp_publisher_end_burst(pub);
        }

        uint32_t n_got, n_want;
        size_t got_len = drain_records(&f->reader, got, sizeof(got), &n_got);
        size_t want_len = drain_records(&reader, want, sizeof(want), &n_want);
        assert_true(n_got > 0);
        assert_int_equal(n_got, n_want);
        assert_int_equal(got_len, want_len);
        assert_memory_equal(got, want, got_len);
        for (size_t at = 0; at < got_len;) {
            /* Copied out: drain_records packs records without their alignment. */
            struct tp_ring_record rec;
            memcpy(&rec, got + at + sizeof(uint32_t), sizeof(rec));
            with_topic += rec.topic == topic;
            at += sizeof(uint32_t) + rec.length;
        }

        struct tp_instrument_state a, b;
        memset(&a, 0, sizeof(a));
        memset(&b, 0, sizeof(b));
        assert_int_equal(tp_state_read(f->bus.state, 0, &a, 10), 0);
        assert_int_equal(tp_state_read(bus.state, 0, &b, 10), 0);
        assert_memory_equal(&a, &b, sizeof(a));
    }
    /* The general way skipped the unknown record of each event, and whatever the other did. */
    assert_int_equal(tp_publisher_counters(pub)->skipped,
                     (uint64_t)events + tp_publisher_counters(f->pub)->skipped);
    free(pub);
    tp_bus_writer_close(&bus, 1);
    return with_topic;
}

/* expect_paths_identical's events from a script already applied to the books. */
static int script_copy(struct fixture *f, void *ctx, int e, struct tp_book_change *out)
{
    (void)f;
    const struct script_event *script = ctx;
    memcpy(out, script[e].c, (size_t)script[e].n * sizeof(*out));
    return script[e].n;
}

/*
 * The order script (run_script, then adds and a delete around the entry's depth), applied to the
 * books; returns its events.
 */
static int order_script(struct fixture *f, struct script_event *script)
{
    int events = run_script(f->books, script);
    /* Six bid levels (the entry holds four): adds at levels 5 and 6, then above them. */
    for (int i = 0; i < 6; i++, events++)
        script[events].n =
            test_books_add(f->books, 20 + (uint64_t)i, 0, 97000000000 - (int64_t)i * 1000000000,
                           1 + i, script[events].c);
    script[events].n = test_books_add(f->books, 30, 0, 99500000000, 4, script[events].c);
    events++;
    script[events].n = test_books_delete(f->books, 25, script[events].c);
    return events + 1;
}

/* expect_paths_identical over the order script, handing it the fixture's way `how`. */
static void expect_order_paths_identical(struct fixture *f, unsigned how)
{
    static struct script_event script[32];
    int events = order_script(f, script);
    uint64_t orders = 0, one_order_events = 0;
    for (int e = 0; e < events; e++) {
        for (int i = 0; i < script[e].n; i++)
            orders += script[e].c[i].kind == TP_CHANGE_ORDER;
        one_order_events += script[e].n == 2 && script[e].c[0].kind == TP_CHANGE_ORDER;
    }
    uint64_t order_depth_records =
        expect_paths_identical(f, events, script_copy, script, TP_RECORD_ORDER_DEPTH, how);
    expect_state_mirrors_books(f);
    /* Every order of the script had its level: each went as one record. */
    assert_int_equal(order_depth_records, orders);
    assert_true(orders >= 20);
    assert_true(one_order_events >= 10); /* on_event_changes' own case, with PATHS_ONE_CALL */
    assert_int_equal(tp_publisher_counters(f->pub)->skipped, 0);
    assert_int_equal(tp_publisher_counters(f->pub)->events, (uint64_t)events);
}

/*
 * on_changes publishes an order of an order-only book with the one level it changed on a path of
 * its own (on_orders); expect_paths_identical holds it to the general way across adds at levels
 * above and below the entry's depth, executions with and without a trade, cancels, deletes,
 * replaces (two orders in one event), trades alone, two orders in one event, and stale flags.
 */
static void test_order_path_matches_general_path(void **state)
{
    expect_order_paths_identical(*state, PATHS_TWO_CALLS);
}

/*
 * The sink's event_changes (what the ITCH feed calls for each message) gives the same ring bytes
 * and state entries as changes then end_of_event: an event of one order and its level is claimed
 * already flagged as the event's end and committed at once, the others go the two calls' way.
 */
static void test_one_call_matches_two_calls(void **state)
{
    expect_order_paths_identical(*state, PATHS_ONE_CALL);
}

/* The same inside rx bursts (the tail moves and the entries are written at each burst's end). */
static void test_one_call_matches_two_calls_in_bursts(void **state)
{
    expect_order_paths_identical(*state, PATHS_ONE_CALL | PATHS_IN_BURST);
}

/*
 * Inside rx bursts, an entry takes the venue fields of its instrument's last event whichever way
 * each event came: event_changes' orders of one call (their fields kept per instrument) and
 * orders of two calls (changes, end_of_event: the log), one after the other in both orders.
 */
static void test_entry_takes_last_event_fields(void **state)
{
    struct fixture *f = *state;
    f->sink.instrument(f->sink.ctx, 0);
    enum { END = 0, ONE = 1, TWO = 2 };
    static const int bursts[][4] = {
        {ONE, TWO, ONE, END}, {ONE, ONE, TWO, END}, {TWO, ONE, END}, {ONE, END}, {TWO, END}};
    uint64_t e = 0;
    for (size_t b = 0; b < sizeof(bursts) / sizeof(bursts[0]); b++) {
        tp_publisher_begin_burst(f->pub);
        for (int i = 0; bursts[b][i] != END; i++, e++) {
            struct tp_feed_info info = {
                .rx_tsc = 700 + e, .packet_seq = 40 + e, .venue_time = 11 * e + 1};
            struct tp_book_change c[TP_BOOK_CHANGES_MAX];
            int n = test_books_add(f->books, 100 + e, (int)(e & 1),
                                   (int64_t)(90 + 3 * e) * 1000000000, 5, c);
            assert_int_equal(n, 2); /* the order and its new level: event_changes' own case */
            if (bursts[b][i] == ONE) {
                f->sink.event_changes(f->sink.ctx, &info, c, (uint32_t)n);
            } else {
                f->sink.changes(f->sink.ctx, &info, c, (uint32_t)n);
                f->sink.end_of_event(f->sink.ctx, &info);
            }
        }
        tp_publisher_end_burst(f->pub);
        struct tp_instrument_state st;
        assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
        assert_int_equal(st.book.venue_seq, 40 + e - 1);
        assert_int_equal(st.book.venue_time_ns, 11 * (e - 1) + 1);
        assert_int_equal(st.book.recv_tsc, 700 + e - 1);
        expect_state_mirrors_books(f);
    }
    assert_int_equal(tp_publisher_counters(f->pub)->events, e);
}

/* Records of expect_paths_identical's venue events (venue_event). */
struct venue_counts {
    uint64_t levels, aggregated;
};

/*
 * Event e of the venue-levels script, applied to the books now (so each state entry is written
 * from the books as they are after its own event): levels of both sides (new, changed, deleted,
 * overlaid, several in one event, implied, below the entry's four, an empty slot), orders with
 * their aggregated levels, a trade and a statistic between levels, DELETE_FROM, DELETE_THRU and a
 * level deeper than 255, which the books never write but a feed could.
 */
static int venue_event(struct fixture *f, void *ctx, int e, struct tp_book_change *out)
{
    const int64_t px = 1000000000; /* 1.0 in price9 */
    int n = 0;
#define LEVEL(implied, ask, action, level, price, qty, count)                                      \
    (n += test_books_venue_level(f->books, implied, ask, action, level, (price)*px, qty, count,    \
                                 out + n))
    switch (e) {
    case 0:
        LEVEL(0, 0, TP_LEVEL_NEW, 1, 100, 10, 2);
        break;
    case 1:
        LEVEL(0, 1, TP_LEVEL_NEW, 1, 101, 5, 1);
        LEVEL(0, 0, TP_LEVEL_NEW, 2, 99, 7, 3);
        LEVEL(0, 0, TP_LEVEL_CHANGE, 1, 100, 12, 3);
        break;
    case 2:
        LEVEL(1, 0, TP_LEVEL_NEW, 1, 100, 4, 0);
        LEVEL(1, 1, TP_LEVEL_NEW, 1, 101, 6, 0);
        break;
    case 3:
        for (unsigned l = 3; l <= 6; l++)
            LEVEL(0, 0, TP_LEVEL_NEW, l, 99 - (int64_t)l, (int64_t)l, l);
        break;
    case 4:
        n = test_books_add(f->books, 1, 0, 98 * px, 3, out);
        break;
    case 5:
        n = test_books_add(f->books, 2, 1, 101 * px, 2, out);
        LEVEL(0, 1, TP_LEVEL_CHANGE, 1, 101, 7, 2);
        n += test_books_trade(f->books, 101 * px, 1, out + n);
        n += test_books_add(f->books, 3, 1, 102 * px, 4, out + n);
        LEVEL(0, 1, TP_LEVEL_NEW, 2, 102, 4, 1);
        out[n] = out[2]; /* the level change above, too deep for any consumer book: skipped */
        out[n++].level = 300;
        break;
    case 6:
        LEVEL(0, 0, TP_LEVEL_DELETE, 2, 99, 0, 0);
        LEVEL(0, 1, TP_LEVEL_OVERLAY, 1, 101, 9, 3);
        break;
    case 7:
        n = test_books_stat(f->books, TEST_STAT_CLOSE, 100 * px, 0, out);
        LEVEL(0, 0, TP_LEVEL_CHANGE, 1, 100, 11, 2);
        break;
    case 8:
        LEVEL(0, 0, TP_LEVEL_DELETE_FROM, 2, 0, 0, 0);
        LEVEL(0, 1, TP_LEVEL_NEW, 3, 103, 1, 1);
        break;
    case 9:
        LEVEL(0, 1, TP_LEVEL_DELETE_THRU, 0, 0, 0, 0);
        LEVEL(0, 0, TP_LEVEL_NEW, 2, 99, 2, 1);
        break;
    case 10: /* and the asks' second slot left empty */
        LEVEL(0, 0, TP_LEVEL_NEW, 1, 100, 1, 1);
        LEVEL(0, 1, TP_LEVEL_NEW, 1, 101, 1, 1);
        LEVEL(0, 1, TP_LEVEL_NEW, 3, 103, 3, 2);
        break;
    default:
        LEVEL(0, 0, TP_LEVEL_CHANGE, 1, 100, 2, 1);
        LEVEL(1, 0, TP_LEVEL_DELETE, 1, 100, 0, 0);
        break;
    }
#undef LEVEL
    struct venue_counts *counts = ctx;
    for (int i = 0; i < n; i++) {
        counts->levels += out[i].kind == TP_CHANGE_LEVEL && out[i].book != TP_BOOK_ORDERS;
        counts->aggregated += out[i].kind == TP_CHANGE_LEVEL && out[i].book == TP_BOOK_ORDERS;
    }
    return n;
}

/*
 * A book with venue levels (MDP3's): on_changes publishes its outright and implied levels and its
 * orders on a path of their own (on_venue_records), skipping the levels aggregated from the
 * orders; expect_paths_identical holds it to the general way over venue_event's script, with
 * stale flags in its last two events.
 */
static void test_venue_path_matches_general_path(void **state)
{
    struct fixture *f = *state;
    assert_int_equal(test_books_retype(f->books, 1), 0);
    struct venue_counts counts = {0};
    uint64_t depth_records =
        expect_paths_identical(f, 12, venue_event, &counts, TP_TOPIC_DEPTH, PATHS_TWO_CALLS);
    /* Each venue level went as one BookUpdate but the one deeper than 255; the levels aggregated
     * from the three orders went nowhere. */
    assert_int_equal(depth_records, counts.levels - 1);
    assert_int_equal(counts.aggregated, 3);
    assert_int_equal(tp_publisher_counters(f->pub)->skipped, 1);
    /* The entry holds the best four of the five outright bid levels (100 x 2, then 95, 99, 94:
     * as the venue placed them), and the two ask levels set after the asks were cleared, with
     * the empty slot between them closed up. */
    struct tp_instrument_state st;
    const int64_t px = 1000000000;
    assert_int_equal(tp_state_read(f->bus.state, 0, &st, 10), 0);
    assert_int_equal(st.book.bid_levels, 4);
    assert_int_equal(st.bids[0].price, 100 * px);
    assert_int_equal(st.bids[0].qty, 2);
    assert_int_equal(st.bids[1].price, 95 * px);
    assert_int_equal(st.bids[3].price, 94 * px);
    assert_int_equal(st.book.ask_levels, 2);
    assert_int_equal(st.asks[0].price, 101 * px);
    assert_int_equal(st.asks[1].price, 103 * px);
    assert_int_equal(st.asks[1].qty, 3);
    assert_int_equal(st.asks[1].orders, 2);
}

/* An output (tp_pub_output) that keeps each record as an event file does: u32 length, u16 topic,
 * u16 zero, the message padded to 8 bytes. It refuses the topic `refuse` (with one added: 0
 * refuses none). */
struct kept_records {
    uint8_t buf[1 << 16];
    size_t used;
    uint32_t claims;
    uint32_t commits;
    uint16_t refuse;
};

static uint8_t *keep_claim(void *ctx, uint16_t topic, uint32_t length)
{
    struct kept_records *k = ctx;
    k->claims++;
    if (topic + 1u == k->refuse)
        return NULL;
    assert_true(k->used + 8 + length + 8 <= sizeof(k->buf));
    memcpy(k->buf + k->used, &length, 4);
    memcpy(k->buf + k->used + 4, &topic, 2);
    memset(k->buf + k->used + 6, 0, 2 + ((length + 7) & ~7u));
    return k->buf + k->used + 8;
}

static void keep_commit(void *ctx)
{
    struct kept_records *k = ctx;
    uint32_t length;
    memcpy(&length, k->buf + k->used, 4);
    k->used += 8 + ((length + 7) & ~7u);
    k->commits++;
}

/* Every record of the ring so far, kept as keep_claim keeps them, but those of topic `skip` + 1. */
static size_t ring_records_kept(struct fixture *f, uint8_t *out, size_t cap, uint16_t skip)
{
    const struct tp_ring_record *rec;
    uint64_t lost;
    size_t used = 0;
    while (tp_ring_read(&f->reader, &rec, &lost) == TP_RING_RECORD) {
        uint32_t length = rec->length - TP_RING_RECORD_HEADER;
        uint16_t topic = rec->topic;
        if (topic + 1u == skip)
            continue;
        assert_true(used + 8 + length + 8 <= cap);
        memcpy(out + used, &length, 4);
        memcpy(out + used + 4, &topic, 2);
        memset(out + used + 6, 0, 2 + ((length + 7) & ~7u));
        memcpy(out + used + 8, tp_ring_payload(rec), length);
        used += 8 + ((length + 7) & ~7u);
    }
    return used;
}

/* The fixture's publisher parameters, with an output. */
static struct tp_publisher_params output_params(struct fixture *f,
                                                const struct tp_pub_output *output)
{
    return (struct tp_publisher_params){.bus = &f->bus,
                                        .books = f->books,
                                        .registry = f->registry,
                                        .instruments = 16,
                                        .depth = 4,
                                        .output = output};
}

/* The same calls to two sinks. */
static void both_changes(const struct tp_feed_sink *s, const struct tp_feed_info *info,
                         const struct tp_book_change *c, int n)
{
    for (int i = 0; i < 2; i++)
        s[i].changes(s[i].ctx, info, c, (uint32_t)n);
}

static void both_end(const struct tp_feed_sink *s, const struct tp_feed_info *info)
{
    for (int i = 0; i < 2; i++)
        s[i].end_of_event(s[i].ctx, info);
}

static void both_event(const struct tp_feed_sink *s, const struct tp_feed_info *info,
                       const struct tp_book_change *c, int n)
{
    for (int i = 0; i < 2; i++)
        s[i].event_changes(s[i].ctx, info, c, (uint32_t)n);
}

/*
 * A publisher with an output gives it the ring's records byte for byte, each committed before the
 * next claim, across every path (a definition, ITCH's one-call orders, two-call events with a
 * stale mark inside, trades, executions, a channel event); with a topic refused, the others are
 * the ring's still. A publisher with an output and a state table is refused.
 */
static void expect_output_matches_ring(struct fixture *f, uint16_t refuse)
{
    struct kept_records *kept = calloc(1, sizeof(*kept));
    uint8_t *ring = malloc(sizeof(kept->buf));
    assert_non_null(kept);
    assert_non_null(ring);
    kept->refuse = refuse;
    struct tp_pub_output output = {.claim = keep_claim, .commit = keep_commit, .ctx = kept};
    struct tp_publisher_params pp = output_params(f, &output);
    struct tp_publisher *out_pub =
        aligned_alloc(64, (tp_publisher_memsize(&pp) + 63) & ~(size_t)63);
    assert_non_null(out_pub);
    assert_int_equal(tp_publisher_init(out_pub, &pp), 0);
    tp_publisher_select(out_pub, 1, 7);
    struct tp_feed_sink s[2] = {f->sink, tp_publisher_sink(out_pub)};

    for (int i = 0; i < 2; i++)
        s[i].instrument(s[i].ctx, 0);
    struct tp_book_change c[TP_BOOK_CHANGES_MAX];
    struct tp_feed_info info = {.rx_tsc = 1234, .packet_seq = 42, .venue_time = 99};
    both_event(s, &info, c, test_books_add(f->books, 1, 0, 100000000000, 300, c));
    both_event(s, &info, c, test_books_add(f->books, 2, 1, 101000000000, 200, c));
    info.packet_seq++;
    both_changes(s, &info, c, test_books_add(f->books, 3, 0, 99000000000, 10, c));
    for (int i = 0; i < 2; i++)
        s[i].stale(s[i].ctx, 0, 1, 5, 9);
    both_changes(s, &info, c, test_books_trade(f->books, 100500000000, 25, c));
    both_end(s, &info);
    info.packet_seq++;
    both_event(s, &info, c, test_books_execute(f->books, 1, 100, 1, c));
    both_event(s, &info, c, test_books_replace(f->books, 2, 5, 102000000000, 50, c));
    for (int i = 0; i < 2; i++)
        s[i].stale(s[i].ctx, 0, 0, 0, 0);
    tp_publisher_channel_event(f->pub, TP_PUB_CHANNEL_GAP, 7, 9, 5);
    tp_publisher_channel_event(out_pub, TP_PUB_CHANNEL_GAP, 7, 9, 5);

    size_t ring_used = ring_records_kept(f, ring, sizeof(kept->buf), refuse);
    assert_true(ring_used > 0);
    assert_int_equal(kept->used, ring_used);
    assert_memory_equal(kept->buf, ring, ring_used);
    assert_int_equal(kept->commits, tp_publisher_counters(f->pub)->records -
                                        (refuse ? kept->claims - kept->commits : 0));
    assert_true(refuse == 0 ? kept->claims == kept->commits : kept->claims > kept->commits);

    free(out_pub);
    free(ring);
    free(kept);
}

static void test_output_matches_ring(void **state)
{
    expect_output_matches_ring(*state, 0);
}

static void test_output_refusing_a_topic(void **state)
{
    expect_output_matches_ring(*state, TP_RECORD_ORDER_DEPTH + 1);
}

/* A publisher with an output (kept in *kept), its sink given the instrument definition. */
static struct tp_publisher *output_publisher(struct fixture *f, struct kept_records *kept,
                                             struct tp_pub_output *output)
{
    *output = (struct tp_pub_output){.claim = keep_claim, .commit = keep_commit, .ctx = kept};
    struct tp_publisher_params pp = output_params(f, output);
    struct tp_publisher *pub = aligned_alloc(64, (tp_publisher_memsize(&pp) + 63) & ~(size_t)63);
    assert_non_null(pub);
    assert_int_equal(tp_publisher_init(pub, &pp), 0);
    tp_publisher_select(pub, 1, 7);
    struct tp_feed_sink sink = tp_publisher_sink(pub);
    sink.instrument(sink.ctx, 0);
    return pub;
}

/*
 * A publisher with an output takes an ITCH order message's changes unexpanded
 * (tp_feed_sink.order_changes) and writes the records event_changes writes for their expansion,
 * byte for byte: an add, a printable execution (with its trade), a replace, a deletion whose
 * level was missing, an order of an instrument nobody defined (the last two off the direct
 * path), and with recovery flags set.
 */
static void test_output_order_changes_match_records(void **state)
{
    struct fixture *f = *state;
    struct kept_records *kept = calloc(2, sizeof(*kept));
    assert_non_null(kept);
    struct tp_pub_output outputs[2];
    struct tp_publisher *direct = output_publisher(f, &kept[0], &outputs[0]);
    struct tp_publisher *records = output_publisher(f, &kept[1], &outputs[1]);
    struct tp_feed_sink s[2] = {tp_publisher_sink(direct), tp_publisher_sink(records)};
    assert_non_null(s[0].order_changes);

    const int64_t px = 1000000000;
    const uint64_t level_of = (uint64_t)300 << TP_ORDER_CHANGE_COUNT_BITS | 2; /* 300, 2 orders */
    const struct tp_order_change add = {.action = TP_ORDER_ADD,
                                        .side = TP_SIDE_ASK,
                                        .level_action = TP_LEVEL_NEW,
                                        .level = 1,
                                        .price = 101 * px,
                                        .qty = 200,
                                        .order_id = 11,
                                        .priority = 5,
                                        .level_size = level_of};
    struct tp_order_change exec = add;
    exec.action = TP_ORDER_EXECUTE;
    exec.level_action = TP_LEVEL_CHANGE;
    exec.flags = TP_ORDER_CHANGE_F_TRADE;
    exec.count = 50;
    exec.qty = 150;
    exec.trade_price = 101 * px;
    exec.match = 777;
    struct tp_order_change replace[2] = {add, add};
    replace[0].action = TP_ORDER_DELETE;
    replace[0].level_action = TP_LEVEL_DELETE;
    replace[0].level_size = 0;
    replace[1].order_id = 12;
    replace[1].price = 102 * px;
    replace[1].level = 2;
    struct tp_order_change no_level = add;
    no_level.action = TP_ORDER_DELETE;
    no_level.level = 0;
    struct tp_order_change undefined = add;
    undefined.instrument = 9;

    struct {
        const struct tp_order_change *oc;
        uint32_t n;
    } calls[] = {{&add, 1},       {&exec, 1}, {replace, 2}, {&no_level, 1},
                 {&undefined, 1}, {&add, 1},  {&exec, 1}};
    struct tp_feed_info info = {.rx_tsc = 1234, .packet_seq = 42, .venue_time = 99};
    for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
        if (i == 5) { /* the last two under recovery */
            tp_publisher_set_flags(direct, 0, TP_PUB_F_STALE);
            tp_publisher_set_flags(records, 0, TP_PUB_F_STALE);
        }
        struct tp_book_change c[6];
        uint32_t k = 0;
        for (uint32_t j = 0; j < calls[i].n; j++)
            k += tp_order_change_expand(&calls[i].oc[j], &c[k]);
        s[0].order_changes(s[0].ctx, &info, calls[i].oc, calls[i].n);
        s[1].event_changes(s[1].ctx, &info, c, k);
        info.packet_seq++;
    }

    /* add, exec + trade, two orders, no-level order, three more with the flag change's status */
    assert_true(kept[0].commits >= 8);
    assert_int_equal(kept[0].commits, kept[1].commits);
    assert_int_equal(kept[0].used, kept[1].used);
    assert_memory_equal(kept[0].buf, kept[1].buf, kept[1].used);
    assert_int_equal(tp_publisher_counters(direct)->events, tp_publisher_counters(records)->events);
    assert_int_equal(tp_publisher_counters(direct)->records,
                     tp_publisher_counters(records)->records);

    free(direct);
    free(records);
    free(kept);
}

static void test_output_needs_stateless_bus(void **state)
{
    struct fixture *f = *state;
    struct kept_records kept = {0};
    struct tp_pub_output output = {.claim = keep_claim, .commit = keep_commit, .ctx = &kept};
    struct tp_publisher_params pp = output_params(f, &output);
    assert_int_equal(tp_publisher_init(f->pub, &pp), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_event_records_and_state, setup, teardown),
        cmocka_unit_test_setup_teardown(test_level_actions_mapping, setup, teardown),
        cmocka_unit_test_setup_teardown(test_flags_and_interest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stateless_bus, setup_stateless, teardown_stateless),
        cmocka_unit_test_setup_teardown(test_state_parts_and_tail, setup, teardown),
        cmocka_unit_test_setup_teardown(test_burst_moves_tail_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_event_open_across_burst_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_burst_longer_than_event_log, setup, teardown),
        cmocka_unit_test_setup_teardown(test_defer_runs_at_end_of_burst, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_execution_quantities, setup, teardown),
        cmocka_unit_test_setup_teardown(test_statistics_published, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_levels_follow_books, setup, teardown),
        cmocka_unit_test_setup_teardown(test_state_levels_follow_books_in_bursts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_depth_kind_follows_definition, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_book_clear, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_record_form_delivers_as_two, setup, teardown),
        cmocka_unit_test_setup_teardown(test_latency_sampling, setup, teardown),
        cmocka_unit_test_setup_teardown(test_order_path_matches_general_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_call_matches_two_calls, setup, teardown),
        cmocka_unit_test_setup_teardown(test_one_call_matches_two_calls_in_bursts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_entry_takes_last_event_fields, setup, teardown),
        cmocka_unit_test_setup_teardown(test_venue_path_matches_general_path, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_matches_ring, setup_stateless,
                                        teardown_stateless),
        cmocka_unit_test_setup_teardown(test_output_refusing_a_topic, setup_stateless,
                                        teardown_stateless),
        cmocka_unit_test_setup_teardown(test_output_order_changes_match_records, setup_stateless,
                                        teardown_stateless),
        cmocka_unit_test_setup_teardown(test_output_needs_stateless_bus, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
