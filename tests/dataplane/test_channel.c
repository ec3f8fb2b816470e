/*
 * Tests for dataplane/daemon/channel.c, the ITCH path: packets delivered inside an rx burst are
 * kept and their messages applied together at the end of the burst, in sequence, before any
 * channel event that follows them, with every handle given back once; outside a burst they are
 * applied at once as before. The MDP3 path: the silence of the incremental lines while the
 * channel trades. Real registry, books, publisher and bus (segments in /dev/shm).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "channel.h"
#include "channel_bus.h"
#include "mdp3_packet.h"
#include "moldudp64.h"
#include "net_bytes.h"
#include "publisher.h"
#include "tp_books.h"
#include "tp_mbo.h"
#include "tp_instruments.h"
#include "util/histogram.h"

#define MAX_RELEASED 256

struct fixture {
    struct tp_bus_writer *bus;
    struct tp_instruments *registry;
    struct tp_books *books;
    struct tp_publisher *pub;
    struct tp_channel *ch;
    unsigned released;
    uintptr_t released_handles[MAX_RELEASED];
    unsigned rerequests;
    bool joined[TP_ROLES]; /* the lines the channel listens to (io.membership) */
};

static void *zalloc(size_t n)
{
    size_t size = (n + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, size);
    if (p != NULL)
        memset(p, 0, size);
    return p;
}

/* Held packets live in the test's buffers: the handle is the buffer's address. */
struct held {
    uint8_t bytes[1500];
    uint16_t len;
    uint64_t rx; /* its receive time (TSC ticks) */
};

static void view(void *ctx, void *handle, const uint8_t **payload, uint16_t *len, uint64_t *rx)
{
    (void)ctx;
    const struct held *h = handle;
    *payload = h->bytes;
    *len = h->len;
    *rx = h->rx;
}

static void release(void *ctx, void *handle)
{
    struct fixture *f = ctx;
    if (f->released < MAX_RELEASED)
        f->released_handles[f->released] = (uintptr_t)handle;
    f->released++;
}

static int count_rerequest(void *ctx, uint32_t channel, const uint8_t *payload, size_t len)
{
    (void)channel, (void)payload, (void)len;
    ((struct fixture *)ctx)->rerequests++;
    return 0;
}

/* The publisher's histograms and clock: every fixture's, reset by setup_channel. */
static struct tp_histogram latency_hist, gap_wait_hist;
static uint64_t clock_now;

static uint64_t test_clock(void)
{
    return clock_now;
}

/* Messages the next channel keeps while a snapshot loads (0: no snapshot service). */
static uint32_t snapshot_messages;
/* Price levels per side of the next fixture's books (0: order-only books, as ITCH's). */
static uint32_t mbp_depth;

/* A channel whose gaps wait gap_wait ticks, with a re-request server or none. */
static int setup_channel(void **state, uint64_t gap_wait, bool server)
{
    struct fixture *f = calloc(1, sizeof(*f));
    char instance[64];
    snprintf(instance, sizeof(instance), "tptestch%d", (int)getpid());
    f->bus = test_bus_open(instance);
    assert_non_null(f->bus);
    struct tp_instruments_params ip = {.capacity = 16, .itch_venues = 1};
    struct tp_books_params bp = {
        .instruments = 16, .max_orders = 1024, .levels_per_side = 64, .mbp_depth = mbp_depth};
    f->registry = zalloc(tp_instruments_memsize(&ip));
    f->books = zalloc(tp_books_memsize(&bp));
    assert_int_equal(tp_instruments_init(f->registry, &ip), 0);
    assert_int_equal(tp_books_init(f->books, &bp), 0);
    tp_hist_reset(&latency_hist);
    tp_hist_reset(&gap_wait_hist);
    struct tp_publisher_params pp = {.bus = f->bus,
                                     .books = f->books,
                                     .registry = f->registry,
                                     .instruments = 16,
                                     .depth = 4,
                                     .latency = &latency_hist,
                                     .gap_wait = &gap_wait_hist,
                                     .clock = test_clock};
    f->pub = zalloc(tp_publisher_memsize(&pp));
    assert_int_equal(tp_publisher_init(f->pub, &pp), 0);
    struct tp_channel_params cp = {
        .protocol = TP_CHANNEL_ITCH,
        .channel_id = 7,
        .held_max = 64,
        .gap_wait_tsc = gap_wait,
        .start_seq = snapshot_messages > 0 ? 0 : 1, /* as the daemon: a late joiner adopts */
        .snapshot_messages = snapshot_messages,
        .mold = {.retry_tsc = 1000, .give_up_tsc = 100000, .max_messages = 16},
        .registry = f->registry,
        .books = f->books,
        .publisher = f->pub,
        .io = {.ctx = f,
               .view = view,
               .release = release,
               .send_rerequest = server ? count_rerequest : NULL},
    };
    f->ch = zalloc(tp_channel_memsize(&cp));
    assert_int_equal(tp_channel_init(f->ch, &cp), 0);
    *state = f;
    return 0;
}

/* Gaps wait for ever (nothing is lost unless a test says so). */
static int setup(void **state)
{
    return setup_channel(state, UINT64_MAX / 4, false);
}

/* Gaps are reported after 10 ticks; no re-request server: a reported gap is given up. */
static int setup_give_up(void **state)
{
    return setup_channel(state, 10, false);
}

/* Gaps are reported after 10 ticks and asked for from a re-request server. */
static int setup_server(void **state)
{
    return setup_channel(state, 10, true);
}

/* As setup_server, and both lines silent for 1000 ticks flags the books. */
static int setup_silence(void **state)
{
    setup_channel(state, 10, true);
    struct fixture *f = *state;
    f->ch->params.silence_tsc = 1000;
    return 0;
}

/* The fixture's channel as an MDP3 channel (id 310, starting at sequence 1) with these books. */
static struct tp_channel_params mdp3_params(struct fixture *f, uint8_t book_type)
{
    struct tp_channel_params cp = f->ch->params;
    cp.protocol = TP_CHANNEL_MDP3;
    cp.channel_id = 310;
    cp.mdp3_book_type = book_type;
    cp.start_seq = 1;
    return cp;
}

/* Replaces the fixture's channel by one made with these parameters. */
static void remake_channel(struct fixture *f, const struct tp_channel_params *cp)
{
    free(f->ch);
    f->ch = zalloc(tp_channel_memsize(cp));
    assert_int_equal(tp_channel_init(f->ch, cp), 0);
}

/* An MDP3 channel (id 310, price-level books, no snapshot lines) whose gaps wait 10 ticks, and
 * both incremental lines silent for 1000 ticks flags the books. */
static int setup_mdp3_silence(void **state)
{
    setup_channel(state, 10, false);
    struct fixture *f = *state;
    struct tp_channel_params cp = mdp3_params(f, TP_BOOK_TYPE_MBP);
    cp.silence_tsc = 1000;
    remake_channel(f, &cp);
    return 0;
}

static void membership(void *ctx, uint32_t channel, enum tp_line_role role, bool join)
{
    (void)channel;
    ((struct fixture *)ctx)->joined[role] = join;
}

/* An MDP3 channel (id 310, order-level books) with snapshot and MBO snapshot lines, all joined at
 * start as the daemon does, incrementals kept for replay. */
static int setup_mdp3_mbo(void **state)
{
    mbp_depth = 10;
    setup_channel(state, 10, false);
    mbp_depth = 0;
    struct fixture *f = *state;
    struct tp_channel_params cp = mdp3_params(f, TP_BOOK_TYPE_MBP_MBO);
    cp.has_snapshot = cp.has_snapshot_mbo = true;
    cp.replay_bytes = 65536;
    cp.io.membership = membership;
    remake_channel(f, &cp);
    for (unsigned r = TP_ROLE_SNAP_A; r <= TP_ROLE_SMBO_B; r++)
        f->joined[r] = r != TP_ROLE_DEF_A && r != TP_ROLE_DEF_B;
    return 0;
}

/* Gaps given up after 10 ticks (no server); a snapshot service, 64 messages kept. */
static int setup_snapshot(void **state)
{
    snapshot_messages = 64;
    int rc = setup_channel(state, 10, false);
    snapshot_messages = 0;
    return rc;
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

/* ITCH messages of stock locate 1. */
enum { DIRECTORY_LEN = 39, ADD_LEN = 36, DELETE_LEN = 19 };

/* A stock directory message binding `locate` to an 8-byte padded symbol. */
static void directory_of(uint8_t *m, uint16_t locate, const char *symbol)
{
    memset(m, 0, DIRECTORY_LEN);
    m[0] = 'R';
    tp_store_be16(m + 1, locate);
    memcpy(m + 11, symbol, 8);
    m[19] = 'Q';
}

static void directory(uint8_t *m)
{
    directory_of(m, 1, "AAPL    ");
}

static void add(uint8_t *m, uint64_t order, uint32_t price)
{
    memset(m, 0, ADD_LEN);
    m[0] = 'A';
    tp_store_be16(m + 1, 1);
    tp_store_be64(m + 11, order);
    m[19] = 'B';
    tp_store_be32(m + 20, 100);
    memcpy(m + 24, "AAPL    ", 8);
    tp_store_be32(m + 32, price);
}

static void delete_order(uint8_t *m, uint64_t order)
{
    memset(m, 0, DELETE_LEN);
    m[0] = 'D';
    tp_store_be16(m + 1, 1);
    tp_store_be64(m + 11, order);
}

/* A MoldUDP64 packet of session `session` starting at `seq`, messages appended with put(). */
static void packet(struct held *h, const char *session, uint64_t seq)
{
    memcpy(h->bytes, session, 10);
    tp_store_be64(h->bytes + 10, seq);
    tp_store_be16(h->bytes + 18, 0);
    h->len = 20;
    h->rx = 5;
}

/* A session's end-of-session packet: count 0xFFFF, `seq` the sequence that would come next. */
static void end_packet(struct held *h, const char *session, uint64_t seq)
{
    packet(h, session, seq);
    tp_store_be16(h->bytes + 18, 0xFFFF);
}

static uint8_t *put(struct held *h, uint16_t len)
{
    uint8_t *m = h->bytes + h->len + 2;
    tp_store_be16(h->bytes + h->len, len);
    h->len = (uint16_t)(h->len + 2 + len);
    tp_store_be16(h->bytes + 18, (uint16_t)(tp_load_be16(h->bytes + 18) + 1));
    return m;
}

static bool offer(struct fixture *f, struct held *h)
{
    return tp_channel_packet(f->ch, TP_ROLE_INCR_A, h->bytes, h->len, h, h->rx);
}

/* Sequence numbers of the OrderEvents published so far, in ring order; returns how many. */
static unsigned order_sequences(uint64_t *seqs, unsigned max)
{
    struct test_record r;
    unsigned n = 0;
    while (test_bus_next(&r))
        if (r.kind == TEST_REC_ORDER && n < max)
            seqs[n++] = r.venue_seq;
    return n;
}

/* Three packets: R + A(1) at 1-2, A(2) + A(3) at 3-4, D(1) at 5. */
static void three_packets(struct held p[3])
{
    packet(&p[0], "SESSION001", 1);
    directory(put(&p[0], DIRECTORY_LEN));
    add(put(&p[0], ADD_LEN), 1, 1900000);
    packet(&p[1], "SESSION001", 3);
    add(put(&p[1], ADD_LEN), 2, 1910000);
    add(put(&p[1], ADD_LEN), 3, 1890000);
    packet(&p[2], "SESSION001", 5);
    delete_order(put(&p[2], DELETE_LEN), 1);
}

static void test_outside_burst_applies_at_once(void **state)
{
    struct fixture *f = *state;
    struct held p[3];
    three_packets(p);
    for (int i = 0; i < 3; i++)
        assert_false(offer(f, &p[i]));
    assert_int_equal(f->ch->counters.messages, 5);
    assert_int_equal(f->released, 0); /* the caller frees what it was not told was kept */
    uint64_t seqs[8];
    assert_int_equal(order_sequences(seqs, 8), 4);
    assert_int_equal(seqs[0], 2);
    assert_int_equal(seqs[3], 5);
}

static void test_burst_applies_at_its_end(void **state)
{
    struct fixture *f = *state;
    struct held p[3];
    three_packets(p);
    tp_publisher_begin_burst(f->pub);
    for (int i = 0; i < 3; i++)
        assert_true(offer(f, &p[i])); /* kept until the end of the burst */
    struct test_record r;
    assert_int_equal(test_bus_next(&r), 0);
    assert_int_equal(f->ch->counters.messages, 0);
    assert_int_equal(tp_publisher_counters(f->pub)->records, 0);
    assert_int_equal(f->released, 0);
    tp_publisher_end_burst(f->pub);
    assert_int_equal(f->ch->counters.messages, 5);
    assert_int_equal(f->ch->counters.feed_errors, 0);
    /* Each handle back once, in order, after its messages were applied. */
    assert_int_equal(f->released, 3);
    for (int i = 0; i < 3; i++)
        assert_int_equal(f->released_handles[i], (uintptr_t)&p[i]);
    uint64_t seqs[8];
    assert_int_equal(order_sequences(seqs, 8), 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(seqs[i], 2 + i); /* each message with its own sequence */
    /* Order 1 was deleted after the others were added: the book holds 2 and 3. */
    struct tp_level lv[4];
    assert_int_equal(tp_books_copy_levels(f->books, 0, TP_BOOK_ORDERS, TP_SIDE_BID, lv, 4), 2);
}

static void test_gap_filled_inside_burst(void **state)
{
    struct fixture *f = *state;
    struct held p[3];
    three_packets(p);
    tp_publisher_begin_burst(f->pub);
    assert_true(offer(f, &p[0]));
    assert_true(offer(f, &p[2])); /* 5 behind a gap: held by the arbiter */
    assert_true(offer(f, &p[1])); /* fills it: 3-4 delivered, 5 drained behind them */
    tp_publisher_end_burst(f->pub);
    assert_int_equal(f->ch->counters.messages, 5);
    assert_int_equal(f->released, 3);
    assert_int_equal(f->released_handles[0], (uintptr_t)&p[0]);
    assert_int_equal(f->released_handles[1], (uintptr_t)&p[1]);
    assert_int_equal(f->released_handles[2], (uintptr_t)&p[2]);
    uint64_t seqs[8];
    assert_int_equal(order_sequences(seqs, 8), 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(seqs[i], 2 + i);
}

/*
 * Copies that overlap what was applied, delivered at once (line B) and drained from the held
 * buffer: each applies only the messages after the overlap, once.
 */
static void test_overlapping_copies_skip_what_was_applied(void **state)
{
    struct fixture *f = *state;
    struct held p[3];
    packet(&p[0], "SESSION001", 1);
    directory(put(&p[0], DIRECTORY_LEN));
    add(put(&p[0], ADD_LEN), 1, 1900000);
    packet(&p[1], "SESSION001", 2); /* A(1) again, then A(2) at 3 and A(3) at 4 */
    add(put(&p[1], ADD_LEN), 1, 1900000);
    add(put(&p[1], ADD_LEN), 2, 1910000);
    add(put(&p[1], ADD_LEN), 3, 1890000);
    packet(&p[2], "SESSION001", 4); /* A(3) again, then D(1) at 5 */
    add(put(&p[2], ADD_LEN), 3, 1890000);
    delete_order(put(&p[2], DELETE_LEN), 1);
    tp_publisher_begin_burst(f->pub);
    assert_true(offer(f, &p[0]));
    assert_true(offer(f, &p[2])); /* 4 behind the gap at 3: held */
    assert_true(tp_channel_packet(f->ch, TP_ROLE_INCR_B, p[1].bytes, p[1].len, &p[1], 5));
    tp_publisher_end_burst(f->pub);
    assert_int_equal(f->ch->counters.messages, 5);
    assert_int_equal(f->ch->counters.feed_errors, 0);
    assert_int_equal(f->released, 3);
    uint64_t seqs[8];
    assert_int_equal(order_sequences(seqs, 8), 4);
    for (int i = 0; i < 4; i++)
        assert_int_equal(seqs[i], 2 + i);
    /* Order 1 added once and deleted: orders 2 and 3 rest on two levels. */
    struct tp_level lv[4];
    assert_int_equal(tp_books_copy_levels(f->books, 0, TP_BOOK_ORDERS, TP_SIDE_BID, lv, 4), 2);
}

static void test_reset_after_the_last_session(void **state)
{
    struct fixture *f = *state;
    struct held p[3];
    three_packets(p);
    packet(&p[2], "SESSION002", 1); /* a new session: the channel resets */
    add(put(&p[2], ADD_LEN), 9, 1900000);
    struct held end;
    end_packet(&end, "SESSION001", 5);
    tp_publisher_begin_burst(f->pub);
    assert_true(offer(f, &p[0]));
    assert_true(offer(f, &p[1]));
    /* The venue ends the session: the next one's first packet starts the new stream. */
    assert_true(offer(f, &end));
    assert_true(offer(f, &p[2]));
    tp_publisher_end_burst(f->pub);
    assert_int_equal(f->ch->counters.resets, 1);
    assert_int_equal(f->ch->counters.messages, 5);
    /* The old session's orders, then the reset event, then the new session's order. */
    struct test_record r;
    uint64_t orders_before_reset = 0, orders_after_reset = 0;
    bool reset_seen = false;
    while (test_bus_next(&r)) {
        if (r.kind == TEST_REC_ORDER) {
            if (reset_seen)
                orders_after_reset++;
            else
                orders_before_reset++;
        }
        if (r.kind == TEST_REC_CHANNEL_EVENT)
            reset_seen = true;
    }
    assert_true(reset_seen);
    assert_int_equal(orders_before_reset, 3);
    assert_int_equal(orders_after_reset, 1);
    assert_memory_equal(f->ch->session, "SESSION002", 10);
}

/*
 * The publisher serves every channel of the lcore: a channel names itself before it publishes,
 * also when another channel was the last to publish and nothing of its own is pending (a reset
 * outside a burst, after its packets were applied at once).
 */
static void test_reset_event_names_its_channel(void **state)
{
    struct fixture *f = *state;
    struct held p[3];
    three_packets(p);
    packet(&p[2], "SESSION002", 1);
    add(put(&p[2], ADD_LEN), 9, 1900000);
    assert_false(offer(f, &p[0]));
    assert_false(offer(f, &p[1]));
    struct held end;
    end_packet(&end, "SESSION001", 5);
    assert_false(offer(f, &end));
    tp_publisher_select(f->pub, 0, 99); /* another channel published since */
    assert_false(offer(f, &p[2]));
    assert_int_equal(f->ch->counters.resets, 1);
    struct test_record r;
    unsigned resets = 0;
    while (test_bus_next(&r))
        if (r.kind == TEST_REC_CHANNEL_EVENT) {
            assert_int_equal(r.channel_id, 7);
            resets++;
        }
    assert_int_equal(resets, 1);
}

static void test_many_packets_in_one_burst(void **state)
{
    struct fixture *f = *state;
    enum { N = TP_CHANNEL_PENDING_MAX + 10 };
    static struct held p[N];
    packet(&p[0], "SESSION001", 1);
    directory(put(&p[0], DIRECTORY_LEN));
    for (int i = 1; i < N; i++) {
        packet(&p[i], "SESSION001", (uint64_t)i + 1);
        add(put(&p[i], ADD_LEN), (uint64_t)i, 1900000 + (uint32_t)(i % 8) * 100);
    }
    tp_publisher_begin_burst(f->pub);
    for (int i = 0; i < N; i++)
        assert_true(offer(f, &p[i]));
    /* More than a channel keeps: the first ones were applied (in order) to make room. */
    assert_int_equal(f->released, TP_CHANNEL_PENDING_MAX);
    tp_publisher_end_burst(f->pub);
    assert_int_equal(f->ch->counters.messages, N);
    assert_int_equal(f->released, N);
    for (int i = 0; i < N; i++)
        assert_int_equal(f->released_handles[i], (uintptr_t)&p[i]);
    static uint64_t seqs[N];
    assert_int_equal(order_sequences(seqs, N), N - 1);
    for (int i = 0; i < N - 1; i++)
        assert_int_equal(seqs[i], 2 + i);
}

/*
 * Inside a burst the common packet (line A or B, in order, nothing held) is kept without the
 * general path, the others take it: both count alike. Line B's copies are duplicates, a
 * malformed packet and a retransmission are refused or held as before, and what is kept is
 * applied once, in order, with every handle back.
 */
static void test_common_and_general_packets_count_alike(void **state)
{
    struct fixture *f = *state;
    enum { N = 12 };
    static struct held p[N], bad;
    packet(&p[0], "SESSION001", 1);
    directory(put(&p[0], DIRECTORY_LEN));
    for (int i = 1; i < N; i++) {
        packet(&p[i], "SESSION001", (uint64_t)i + 1);
        add(put(&p[i], ADD_LEN), (uint64_t)i, 1900000 + (uint32_t)i * 100);
    }
    bad = p[3];
    bad.len--; /* its last block runs past the end */
    tp_publisher_begin_burst(f->pub);
    for (int i = 0; i < N; i++) {
        if (i == 5)
            continue; /* lost on line A: 6 onwards wait behind the gap */
        assert_true(tp_channel_packet(f->ch, TP_ROLE_INCR_A, p[i].bytes, p[i].len, &p[i], 5));
        if (i % 2 == 0) /* line B's copy of every other packet */
            assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_B, p[i].bytes, p[i].len, NULL, 6));
        if (i == 3)
            assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_A, bad.bytes, bad.len, &bad, 5));
    }
    /* Line B fills the gap; the packets held behind it follow. */
    assert_true(tp_channel_packet(f->ch, TP_ROLE_INCR_B, p[5].bytes, p[5].len, &p[5], 6));
    tp_publisher_end_burst(f->pub);
    const struct tp_arb_counters *c = tp_arb_counters(f->ch->arb);
    assert_int_equal(c->line[TP_LINE_A].packets, N - 1); /* bad never reaches the arbiter */
    assert_int_equal(f->ch->counters.malformed, 1);
    assert_int_equal(f->ch->counters.packets, (N - 1) + 1 + N / 2 + 1);
    assert_int_equal(c->line[TP_LINE_A].delivered, N - 1);
    assert_int_equal(c->line[TP_LINE_A].held, N - 6);
    assert_int_equal(c->line[TP_LINE_B].packets, N / 2 + 1);
    assert_int_equal(c->line[TP_LINE_B].duplicates, N / 2);
    assert_int_equal(c->line[TP_LINE_B].delivered, 1);
    assert_int_equal(c->gap_filled, 1);
    assert_int_equal(f->ch->counters.messages, N);
    assert_int_equal(f->released, N);
    for (int i = 0; i < N; i++)
        assert_int_equal(f->released_handles[i], (uintptr_t)&p[i]);
    uint64_t seqs[N];
    assert_int_equal(order_sequences(seqs, N), N - 1);
    for (int i = 0; i < N - 1; i++)
        assert_int_equal(seqs[i], 2 + i);
}

/* A MoldUDP64 packet at `seq` of `n` empty blocks (framed, refused by the feed); its length. */
static uint16_t empty_blocks(uint8_t *buf, uint64_t seq, uint16_t n)
{
    memcpy(buf, "SESSION001", 10);
    tp_store_be64(buf + 10, seq);
    tp_store_be16(buf + 18, n);
    memset(buf + 20, 0, 2 * (size_t)n);
    return (uint16_t)(20 + 2 * n);
}

/*
 * The channel stages the blocks of the packets it keeps for the end of the burst; once it stages
 * more than any one payload can hold, the packets it keeps are applied at once, in order, and
 * every message is applied once with its own sequence number.
 */
static void test_stage_full_applies_what_came_before(void **state)
{
    struct fixture *f = *state;
    enum { EMPTY = 30000 }; /* two packets of them hold more blocks than any payload can */
    static uint8_t big[2][20 + 2 * EMPTY];
    struct held p[2];
    uint16_t big_len0 = empty_blocks(big[0], 1, EMPTY);
    packet(&p[0], "SESSION001", EMPTY + 1);
    directory(put(&p[0], DIRECTORY_LEN));
    add(put(&p[0], ADD_LEN), 1, 1900000);
    uint16_t big_len1 = empty_blocks(big[1], EMPTY + 3, EMPTY);
    packet(&p[1], "SESSION001", 2 * EMPTY + 3);
    add(put(&p[1], ADD_LEN), 2, 1910000);
    tp_publisher_begin_burst(f->pub);
    assert_true(tp_channel_packet(f->ch, TP_ROLE_INCR_A, big[0], big_len0, big[0], 5));
    assert_true(offer(f, &p[0]));
    assert_int_equal(f->released, 0);
    assert_true(tp_channel_packet(f->ch, TP_ROLE_INCR_A, big[1], big_len1, big[1], 5));
    assert_int_equal(f->released, 3); /* more blocks than a payload holds: applied */
    assert_int_equal(f->ch->counters.messages, 2 * EMPTY + 2);
    assert_true(offer(f, &p[1]));
    tp_publisher_end_burst(f->pub);
    assert_int_equal(f->ch->counters.messages, 2 * EMPTY + 3);
    assert_int_equal(f->ch->counters.feed_errors, 2 * EMPTY);
    assert_int_equal(f->released, 4);
    assert_int_equal(f->released_handles[0], (uintptr_t)big[0]);
    assert_int_equal(f->released_handles[1], (uintptr_t)&p[0]);
    assert_int_equal(f->released_handles[2], (uintptr_t)big[1]);
    assert_int_equal(f->released_handles[3], (uintptr_t)&p[1]);
    uint64_t seqs[4];
    assert_int_equal(order_sequences(seqs, 4), 2);
    assert_int_equal(seqs[0], EMPTY + 2);
    assert_int_equal(seqs[1], 2 * EMPTY + 3);
    struct tp_level lv[4];
    assert_int_equal(tp_books_copy_levels(f->books, 0, TP_BOOK_ORDERS, TP_SIDE_BID, lv, 4), 2);
}

static void test_stop_inside_burst(void **state)
{
    struct fixture *f = *state;
    struct held p[3];
    three_packets(p);
    tp_publisher_begin_burst(f->pub);
    assert_true(offer(f, &p[0]));
    assert_true(offer(f, &p[1]));
    /* Removed mid-burst: what it delivered is applied and given back, nothing stays due. */
    tp_channel_stop(f->ch, 6);
    assert_int_equal(f->ch->counters.messages, 4);
    assert_int_equal(f->released, 2);
    memset(f->ch, 0xff, sizeof(*f->ch)); /* the end of the burst must not touch it */
    tp_publisher_end_burst(f->pub);
    assert_int_equal(f->released, 2);
}

/* What was published since the last call: channel events (their first sequence) and the
 * instruments of the other records. */
struct published {
    unsigned n_events, n_other;
    uint64_t event_seq[8];
    uint32_t other_instrument[32];
};

static void read_published(struct published *out)
{
    struct test_record r;
    memset(out, 0, sizeof(*out));
    while (test_bus_next(&r)) {
        if (r.kind == TEST_REC_CHANNEL_EVENT && out->n_events < 8)
            out->event_seq[out->n_events++] = r.venue_seq;
        else if (r.kind == TEST_REC_OTHER && out->n_other < 32)
            out->other_instrument[out->n_other++] = r.instrument;
    }
}

/*
 * Offers AAPL's directory and an order at 1-2, then an order at `next` (> 3): 3..next-1 are
 * missing and the second packet is held behind them.
 */
static void offer_with_gap(struct fixture *f, struct held p[2], uint64_t next)
{
    packet(&p[0], "SESSION001", 1);
    directory(put(&p[0], DIRECTORY_LEN));
    add(put(&p[0], ADD_LEN), 1, 1900000);
    packet(&p[1], "SESSION001", next);
    add(put(&p[1], ADD_LEN), 2, 1910000);
    assert_false(offer(f, &p[0]));
    assert_true(offer(f, &p[1]));
}

/* Eight orders at `seq`.. received at `rx`: the publisher samples the latency of one of them. */
static void eight_adds(struct held *h, uint64_t seq, uint64_t rx)
{
    packet(h, "SESSION001", seq);
    for (uint64_t i = 0; i < 8; i++)
        add(put(h, ADD_LEN), 10 + seq + i, 1900000);
    h->rx = rx;
}

/* AAPL's directory at 1, received and published at 100. */
static void offer_directory(struct fixture *f, struct held *h)
{
    clock_now = 100;
    packet(h, "SESSION001", 1);
    directory(put(h, DIRECTORY_LEN));
    h->rx = 100;
    assert_false(offer(f, h));
}

/*
 * A packet held behind a gap until the packet that fills it arrives: its wait (rx 200 to the
 * filler's rx 1000) is one gap-wait sample, and its events' latency counts from the release
 * (clock 1010: at most 10 ticks), not from its own rx (810). In-order packets wait for nothing.
 */
static void test_gap_wait_until_filled(void **state)
{
    struct fixture *f = *state;
    struct held p[3];
    offer_directory(f, &p[0]);
    eight_adds(&p[1], 2, 1000);
    eight_adds(&p[2], 10, 200);
    clock_now = 1010;
    assert_true(offer(f, &p[2])); /* 10-17 behind the gap 2-9: held */
    assert_int_equal(gap_wait_hist.count, 0);
    assert_false(offer(f, &p[1])); /* fills it: 10-17 released at 1000 */
    assert_int_equal(f->ch->counters.messages, 17);
    assert_int_equal(gap_wait_hist.count, 1);
    assert_int_equal(gap_wait_hist.min, 800);
    assert_int_equal(gap_wait_hist.max, 800);
    assert_true(latency_hist.count >= 2);
    assert_int_equal(latency_hist.max, 10);
    /* Once the released packets are applied, a packet counts from its own rx again, even one
     * stamped before that release (a NIC's stamp of a frame read later). */
    eight_adds(&p[0], 18, 950);
    assert_false(offer(f, &p[0]));
    assert_int_equal(latency_hist.max, 60);
    assert_int_equal(gap_wait_hist.count, 1);
}

/* A gap given up at poll time 5000: the packet held since rx 200 waited 4800 ticks. */
static void test_gap_wait_until_given_up(void **state)
{
    struct fixture *f = *state;
    struct held p[2];
    offer_directory(f, &p[0]);
    eight_adds(&p[1], 3, 200); /* 2 is lost */
    assert_true(offer(f, &p[1]));
    clock_now = 5000;
    tp_channel_poll(f->ch, 5000); /* reported and given up (no re-request server) */
    assert_int_equal(f->ch->counters.stale_marks, 1);
    assert_int_equal(gap_wait_hist.count, 1);
    assert_int_equal(gap_wait_hist.min, 4800);
    assert_int_equal(latency_hist.max, 0); /* published at the release: no wait in the latency */
}

/*
 * Every give-up marks the instruments the channel has defined by then: one defined after the
 * first give-up is marked at the second (the channel's stale flag used to stop every later
 * give-up from marking anything), one already stale gets no second status event.
 */
static void test_each_give_up_marks_instruments_defined_since(void **state)
{
    struct fixture *f = *state;
    struct held p[4];
    struct published pub;
    offer_with_gap(f, p, 4); /* 3 is lost */
    read_published(&pub);
    tp_channel_poll(f->ch, 100); /* reported and given up: AAPL (id 0) is stale */
    read_published(&pub);
    assert_int_equal(pub.n_events, 1);
    assert_int_equal(pub.event_seq[0], 3);
    assert_int_equal(pub.n_other, 1);
    assert_int_equal(pub.other_instrument[0], 0);
    assert_int_equal(f->ch->counters.stale_marks, 1);

    packet(&p[2], "SESSION001", 5); /* MSFT (id 1) defined after the first loss; 7 is lost */
    directory_of(put(&p[2], DIRECTORY_LEN), 2, "MSFT    ");
    add(put(&p[2], ADD_LEN), 3, 1900000);
    packet(&p[3], "SESSION001", 8);
    add(put(&p[3], ADD_LEN), 4, 1920000);
    assert_false(offer(f, &p[2]));
    assert_true(offer(f, &p[3]));
    assert_int_equal(tp_instruments_count(f->registry), 2);
    read_published(&pub);
    tp_channel_poll(f->ch, 200);
    read_published(&pub);
    assert_int_equal(pub.n_events, 1);
    assert_int_equal(pub.event_seq[0], 7);
    assert_int_equal(pub.n_other, 1);
    assert_int_equal(pub.other_instrument[0], 1);
    assert_int_equal(f->ch->counters.stale_marks, 2);
    assert_int_equal(f->ch->counters.messages, 6);
}

/*
 * A gap being re-requested when a new session starts is lost, not recovered: the mold counters
 * say given up, consumers get the old session's lost range (the gap and the packet held beyond
 * it, which the arbiter dropped) before the reset, and the books are marked stale.
 */
static void test_gap_ended_by_new_session_is_lost(void **state)
{
    struct fixture *f = *state;
    struct held p[3];
    struct published pub;
    offer_with_gap(f, p, 5); /* 3-4 lost, 5 held */
    tp_channel_poll(f->ch, 100);
    assert_int_equal(f->rerequests, 1);
    read_published(&pub);
    packet(&p[2], "SESSION002", 1);
    add(put(&p[2], ADD_LEN), 9, 1900000);
    struct held end;
    end_packet(&end, "SESSION001", 6); /* the session ends with 3-4 still missing */
    assert_false(offer(f, &end));
    assert_false(offer(f, &p[2]));
    tp_channel_poll(f->ch, 200);
    assert_int_equal(f->ch->mold.counters.recovered, 0);
    assert_int_equal(f->ch->mold.counters.given_up, 1);
    assert_int_equal(f->ch->counters.stale_marks, 1);
    assert_int_equal(f->ch->counters.resets, 1);
    assert_int_equal(tp_arb_counters(f->ch->arb)->skipped_msgs, 3);
    assert_int_equal(f->released, 1); /* the held packet, dropped unapplied */
    assert_int_equal(f->ch->counters.messages, 3);
    read_published(&pub);
    /* The re-request had flagged the channel behind (RECOVERY_STARTED, read above); the new
     * session is in sequence, so it is no longer behind: RECOVERED, and AAPL stays stale. */
    assert_int_equal(pub.n_events, 3);
    assert_int_equal(pub.event_seq[0], 3); /* GAP 3..5 of SESSION001 */
    assert_int_equal(pub.event_seq[1], 0); /* RESET */
    assert_int_equal(pub.event_seq[2], 0); /* RECOVERED */
    assert_int_equal(pub.n_other, 1);      /* AAPL's status: stale */
    assert_int_equal(pub.other_instrument[0], 0);
}

/*
 * A gap the other line did not fill is re-requested: until the retransmission fills it the
 * channel's books are behind the venue and say so (RECOVERING, between a RECOVERY_STARTED and
 * a RECOVERED channel event), then they are healthy again.
 */
static void test_books_recovering_while_gap_rerequested(void **state)
{
    struct fixture *f = *state;
    struct held p[3];
    struct published pub;
    offer_with_gap(f, p, 5); /* 3-4 lost, 5 held */
    read_published(&pub);
    assert_int_equal(tp_publisher_flags(f->pub, 0), 0);
    tp_channel_poll(f->ch, 100);
    assert_int_equal(f->rerequests, 1);
    assert_int_equal(tp_publisher_flags(f->pub, 0), TP_PUB_F_RECOVERING);
    read_published(&pub);
    assert_int_equal(pub.n_events, 1); /* RECOVERY_STARTED */
    assert_int_equal(pub.n_other, 1);  /* AAPL's status: recovering */
    assert_int_equal(f->ch->counters.recovering_marks, 1);
    packet(&p[2], "SESSION001", 3); /* the retransmission */
    add(put(&p[2], ADD_LEN), 3, 1900000);
    add(put(&p[2], ADD_LEN), 4, 1900000);
    assert_false(tp_channel_packet(f->ch, TP_ROLE_RETRANS, p[2].bytes, p[2].len, &p[2], 150));
    tp_channel_poll(f->ch, 200);
    assert_int_equal(tp_publisher_flags(f->pub, 0), 0);
    read_published(&pub);
    assert_int_equal(pub.n_events, 1); /* RECOVERED */
    assert_int_equal(pub.n_other, 1);  /* AAPL's status: healthy */
    assert_int_equal(f->ch->mold.counters.recovered, 1);
    assert_int_equal(f->ch->counters.recovering_marks, 1);
    assert_int_equal(f->ch->counters.messages, 5);
}

/*
 * Both lines silent for longer than a MoldUDP64 sender stays quiet: the books may be missing
 * what was lost at the end of the stream, and are flagged until a packet shows nothing is
 * missing. After the session's end in sequence, silence is normal.
 */
static void test_books_recovering_while_feed_silent(void **state)
{
    struct fixture *f = *state;
    struct held p[3], beat, end;
    three_packets(p);
    for (int i = 0; i < 3; i++)
        assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_A, p[i].bytes, p[i].len, &p[i], 10));
    tp_channel_poll(f->ch, 900);
    assert_int_equal(tp_publisher_flags(f->pub, 0), 0);
    tp_channel_poll(f->ch, 2000);
    assert_int_equal(tp_publisher_flags(f->pub, 0), TP_PUB_F_RECOVERING);
    assert_int_equal(f->ch->counters.silences, 1);
    /* A heartbeat that shows messages 6-7 missing: still behind, through the gap's window
     * (10 ticks) and its re-request, until they arrive. */
    packet(&beat, "SESSION001", 8);
    assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_B, beat.bytes, beat.len, &beat, 2100));
    tp_channel_poll(f->ch, 2101);
    assert_int_equal(tp_publisher_flags(f->pub, 0), TP_PUB_F_RECOVERING);
    tp_channel_poll(f->ch, 2200);
    assert_int_equal(f->rerequests, 1);
    assert_int_equal(tp_publisher_flags(f->pub, 0), TP_PUB_F_RECOVERING);
    struct held again;
    packet(&again, "SESSION001", 6);
    add(put(&again, ADD_LEN), 4, 1900000);
    add(put(&again, ADD_LEN), 5, 1900000);
    assert_false(tp_channel_packet(f->ch, TP_ROLE_RETRANS, again.bytes, again.len, &again, 2250));
    tp_channel_poll(f->ch, 2300);
    assert_int_equal(tp_publisher_flags(f->pub, 0), 0);
    end_packet(&end, "SESSION001", 8);
    assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_A, end.bytes, end.len, &end, 2400));
    tp_channel_poll(f->ch, 100000);
    assert_int_equal(tp_publisher_flags(f->pub, 0), 0);
    assert_int_equal(f->ch->counters.silences, 1);
    assert_int_equal(f->ch->counters.recovering_marks, 1);
}

/* A message the book refuses (an order it does not hold) flags the instrument stale. */
static void test_refused_message_flags_stale(void **state)
{
    struct fixture *f = *state;
    struct held p[2];
    packet(&p[0], "SESSION001", 1);
    directory(put(&p[0], DIRECTORY_LEN));
    add(put(&p[0], ADD_LEN), 1, 1900000);
    packet(&p[1], "SESSION001", 3);
    delete_order(put(&p[1], DELETE_LEN), 99);
    assert_false(offer(f, &p[0]));
    assert_int_equal(tp_publisher_flags(f->pub, 0), 0);
    assert_false(offer(f, &p[1]));
    assert_int_equal(f->ch->counters.feed_errors, 1);
    assert_int_equal(tp_publisher_flags(f->pub, 0), TP_PUB_F_RECOVERING | TP_PUB_F_STALE);
}

/* ---- ITCH snapshots (channel_snapshot.c) ---------------------------------------------------- */

/* Order events published so far: how many carried no recovery flag, how many one. */
static void order_flags(unsigned *healthy, unsigned *flagged)
{
    struct test_record r;
    *healthy = *flagged = 0;
    while (test_bus_next(&r))
        if (r.kind == TEST_REC_ORDER) {
            if (r.flags & (TP_PUB_F_RECOVERING | TP_PUB_F_STALE))
                (*flagged)++;
            else
                (*healthy)++;
        }
}

static void chunk(struct fixture *f, uint32_t kind, uint64_t next_seq, uint32_t final)
{
    static struct tp_snap_chunk c;
    memset(&c, 0, sizeof(c));
    c.channel = f->ch;
    c.kind = kind;
    c.next_seq = next_seq;
    c.final = final;
    tp_channel_snapshot_chunk(f->ch, &c, 50);
}

/* A DATA chunk for the channel that starts with the stock directory of AAPL. */
static struct tp_snap_chunk *directory_chunk(struct fixture *f)
{
    static struct tp_snap_chunk c;
    memset(&c, 0, sizeof(c));
    c.channel = f->ch;
    c.kind = TP_SNAP_CHUNK_DATA;
    uint16_t len = DIRECTORY_LEN;
    memcpy(c.data, &len, 2);
    directory(c.data + 2);
    c.bytes = 2 + DIRECTORY_LEN;
    c.n_msgs = 1;
    return &c;
}

/* A DATA chunk: the stock directory of AAPL, then an add for each order id in orders. */
static void snapshot_data(struct fixture *f, const uint64_t *orders, unsigned n)
{
    struct tp_snap_chunk *c = directory_chunk(f);
    for (unsigned i = 0; i < n; i++) {
        uint16_t len = ADD_LEN;
        memcpy(c->data + c->bytes, &len, 2);
        add(c->data + c->bytes + 2, orders[i], 1900000 + (uint32_t)orders[i] * 100);
        c->bytes += 2 + ADD_LEN;
        c->n_msgs++;
    }
    tp_channel_snapshot_chunk(f->ch, c, 50);
}

/* One packet of one message at seq: an add (order id) or, with del, a delete. */
static bool offer_one(struct fixture *f, struct held *h, uint64_t seq, uint64_t order, bool del)
{
    packet(h, "SESSION001", seq);
    if (del)
        delete_order(put(h, DELETE_LEN), order);
    else
        add(put(h, ADD_LEN), order, 1900000 + (uint32_t)order * 100);
    return offer(f, h);
}

/*
 * A channel joining at sequence 100 asks for a snapshot and keeps the stream; the snapshot
 * (taken at 101: it holds orders 5 and 10) is applied, then the kept stream from 101 on exactly
 * once (100, which it reflects, skipped). Every book event before the end is flagged; the books
 * are healthy after it.
 */
static void test_late_join_through_snapshot(void **state)
{
    struct fixture *f = *state;
    struct held p[6];
    assert_false(offer_one(f, &p[0], 100, 10, false));
    assert_int_equal(f->ch->snap.state, TP_SNAP_WANTED);
    assert_int_equal(atomic_load(&f->ch->snap.wanted), 1);
    assert_false(offer_one(f, &p[1], 101, 11, false));
    assert_false(offer_one(f, &p[2], 102, 10, true));
    assert_int_equal(tp_instruments_count(f->registry), 0); /* kept, not applied */
    assert_int_equal(f->ch->snap.counters.kept, 3);
    chunk(f, TP_SNAP_CHUNK_BEGIN, 0, 0);
    const uint64_t orders[] = {5, 10};
    snapshot_data(f, orders, 2);
    assert_int_equal(f->ch->snap.state, TP_SNAP_LOADING);
    assert_false(offer_one(f, &p[3], 103, 12, false)); /* still kept while loading */
    unsigned healthy, flagged;
    order_flags(&healthy, &flagged);
    assert_int_equal(healthy, 0);
    assert_int_equal(flagged, 2);
    chunk(f, TP_SNAP_CHUNK_END, 101, 0);
    assert_int_equal(f->ch->snap.state, TP_SNAP_LIVE);
    assert_int_equal(f->ch->snap.counters.skipped, 1);
    assert_int_equal(f->ch->snap.counters.replayed, 3);
    assert_int_equal(f->ch->snap.counters.completed, 1);
    assert_int_equal(f->ch->counters.feed_errors, 0);
    order_flags(&healthy, &flagged);
    assert_int_equal(healthy, 0); /* the replayed stream too: flagged until the end */
    assert_int_equal(flagged, 3);
    /* Orders 5, 11, 12 rest (10 was deleted), each on its own level. */
    struct tp_level lv[4];
    assert_int_equal(tp_books_copy_levels(f->books, 0, TP_BOOK_ORDERS, TP_SIDE_BID, lv, 4), 3);
    assert_false(offer_one(f, &p[4], 104, 13, false)); /* live: applied at once, healthy */
    order_flags(&healthy, &flagged);
    assert_int_equal(healthy, 1);
    assert_int_equal(flagged, 0);
    assert_int_equal(tp_books_copy_levels(f->books, 0, TP_BOOK_ORDERS, TP_SIDE_BID, lv, 4), 4);
}

/* A snapshot older than the first message kept leaves a hole: stale, and a new one asked for. */
static void test_snapshot_older_than_stream_asks_again(void **state)
{
    struct fixture *f = *state;
    struct held p[2];
    assert_false(offer_one(f, &p[0], 100, 10, false));
    assert_false(offer_one(f, &p[1], 101, 11, false));
    chunk(f, TP_SNAP_CHUNK_BEGIN, 0, 0);
    const uint64_t orders[] = {5};
    snapshot_data(f, orders, 1);
    chunk(f, TP_SNAP_CHUNK_END, 98, 0); /* 98 and 99 are nowhere */
    assert_int_equal(f->ch->snap.counters.holes, 1);
    assert_int_equal(f->ch->snap.counters.completed, 0);
    assert_int_equal(f->ch->snap.state, TP_SNAP_WANTED);
    assert_int_equal(atomic_load(&f->ch->snap.wanted), 2);
    assert_int_equal(f->ch->counters.stale_marks, 1);
}

/* The snapshot ends before the stream reaches its sequence: live only once the stream does. */
static void test_snapshot_ahead_of_stream_waits(void **state)
{
    struct fixture *f = *state;
    struct held p[4];
    assert_false(offer_one(f, &p[0], 100, 10, false));
    chunk(f, TP_SNAP_CHUNK_BEGIN, 0, 0);
    const uint64_t orders[] = {10, 11};
    snapshot_data(f, orders, 2);
    chunk(f, TP_SNAP_CHUNK_END, 102, 0); /* reflects 100 and 101 */
    assert_int_equal(f->ch->snap.state, TP_SNAP_REPLAYING);
    assert_false(offer_one(f, &p[1], 101, 11, false)); /* kept, and skipped: reflected */
    tp_channel_poll(f->ch, 60);
    assert_int_equal(f->ch->snap.state, TP_SNAP_LIVE); /* 102 is the next the stream brings */
    assert_false(offer_one(f, &p[2], 102, 10, true));
    assert_int_equal(f->ch->snap.counters.skipped, 2);
    assert_int_equal(f->ch->snap.counters.replayed, 0);
    assert_int_equal(f->ch->counters.feed_errors, 0); /* 11 was not added twice */
    struct tp_level lv[4];
    assert_int_equal(tp_books_copy_levels(f->books, 0, TP_BOOK_ORDERS, TP_SIDE_BID, lv, 4), 1);
}

/* Attempts that fail: the next BEGIN starts over; the last one leaves the books stale. */
static void test_snapshot_given_up_stays_stale(void **state)
{
    struct fixture *f = *state;
    struct held p[3];
    assert_false(offer_one(f, &p[0], 100, 10, false));
    chunk(f, TP_SNAP_CHUNK_BEGIN, 0, 0);
    const uint64_t orders[] = {10};
    snapshot_data(f, orders, 1);
    chunk(f, TP_SNAP_CHUNK_FAILED, 0, 0); /* dropped halfway: another attempt follows */
    assert_int_equal(f->ch->snap.state, TP_SNAP_WANTED);
    chunk(f, TP_SNAP_CHUNK_BEGIN, 0, 0);
    chunk(f, TP_SNAP_CHUNK_FAILED, 0, 1); /* refused, no attempt left */
    assert_int_equal(f->ch->snap.counters.failed, 2);
    assert_int_equal(f->ch->snap.counters.gave_up, 1);
    assert_int_equal(f->ch->snap.state, TP_SNAP_LIVE);
    assert_int_equal(f->ch->counters.stale_marks, 1);
    unsigned healthy, flagged;
    order_flags(&healthy, &flagged);
    assert_false(offer_one(f, &p[1], 101, 11, false));
    order_flags(&healthy, &flagged);
    assert_int_equal(healthy, 0);
    assert_int_equal(flagged, 1);
}

/* A DATA chunk filled to its last byte is applied whole (1 directory, 424 adds, 11 deletes). */
static void test_snapshot_chunk_filled_to_the_end(void **state)
{
    struct fixture *f = *state;
    struct held p;
    assert_false(offer_one(f, &p, 100, 9999, false));
    chunk(f, TP_SNAP_CHUNK_BEGIN, 0, 0);
    struct tp_snap_chunk *c = directory_chunk(f);
    for (unsigned i = 0; i < 424 + 11; i++) {
        uint16_t len = i < 424 ? ADD_LEN : DELETE_LEN;
        memcpy(c->data + c->bytes, &len, 2);
        if (i < 424)
            add(c->data + c->bytes + 2, 1 + i, 1900000);
        else
            delete_order(c->data + c->bytes + 2, 1 + i - 424);
        c->bytes += 2u + len;
        c->n_msgs++;
    }
    assert_int_equal(c->bytes, TP_SNAP_CHUNK_BYTES);
    tp_channel_snapshot_chunk(f->ch, c, 50);
    assert_int_equal(f->ch->snap.counters.messages, c->n_msgs);
    assert_int_equal(tp_books_orders(f->books, 0), 413);
    assert_int_equal(f->ch->counters.feed_errors, 0);
}

/* Gaps re-requested from a server; a snapshot service, 64 messages kept. */
static int setup_snapshot_server(void **state)
{
    snapshot_messages = 64;
    int rc = setup_channel(state, 10, true);
    snapshot_messages = 0;
    return rc;
}

/*
 * A gap opened and filled while a snapshot loads does not make the books healthy (the load's
 * flags hold until it completes); a message refused while the kept stream is applied leaves its
 * book STALE after the load, the others healthy.
 */
static void test_snapshot_flags_hold_through_a_filled_gap(void **state)
{
    struct fixture *f = *state;
    struct held p[4];
    assert_false(offer_one(f, &p[0], 100, 10, false));
    chunk(f, TP_SNAP_CHUNK_BEGIN, 0, 0);
    const uint64_t orders[] = {5, 10};
    snapshot_data(f, orders, 2);
    assert_int_equal(tp_publisher_flags(f->pub, 0), TP_PUB_F_RECOVERING);
    assert_true(offer_one(f, &p[2], 102, 77, true)); /* 101 missing; 77 is no live order */
    tp_channel_poll(f->ch, 100);                     /* reported, re-requested */
    assert_int_equal(f->rerequests, 1);
    packet(&p[1], "SESSION001", 101);
    add(put(&p[1], ADD_LEN), 11, 1900000);
    assert_false(tp_channel_packet(f->ch, TP_ROLE_RETRANS, p[1].bytes, p[1].len, &p[1], 150));
    tp_channel_poll(f->ch, 200); /* filled: still loading, still flagged */
    assert_int_equal(tp_publisher_flags(f->pub, 0), TP_PUB_F_RECOVERING);
    chunk(f, TP_SNAP_CHUNK_END, 101, 0);
    assert_int_equal(f->ch->snap.state, TP_SNAP_LIVE);
    assert_int_equal(f->ch->snap.counters.replayed, 2);
    assert_int_equal(f->ch->counters.feed_errors, 1); /* the delete of 77 */
    assert_int_equal(tp_publisher_flags(f->pub, 0), TP_PUB_F_RECOVERING | TP_PUB_F_STALE);
}

/* The same load with a clean stream: healthy once it completes. */
static void test_snapshot_clean_load_is_healthy(void **state)
{
    struct fixture *f = *state;
    struct held p[2];
    assert_false(offer_one(f, &p[0], 100, 10, false));
    chunk(f, TP_SNAP_CHUNK_BEGIN, 0, 0);
    const uint64_t orders[] = {5, 10};
    snapshot_data(f, orders, 2);
    assert_false(offer_one(f, &p[1], 101, 10, true));
    chunk(f, TP_SNAP_CHUNK_END, 101, 0);
    assert_int_equal(f->ch->snap.state, TP_SNAP_LIVE);
    assert_int_equal(tp_publisher_flags(f->pub, 0), 0);
    assert_int_equal(tp_books_orders(f->books, 0), 1);
}

/* A gap no one fills is given up: stale, and with a snapshot service a snapshot is asked for. */
static void test_gap_given_up_asks_for_snapshot(void **state)
{
    struct fixture *f = *state;
    struct held p[2];
    assert_false(offer_one(f, &p[0], 1, 10, false));
    assert_int_equal(f->ch->snap.state, TP_SNAP_LIVE); /* joined at the start: no snapshot */
    assert_true(offer_one(f, &p[1], 3, 11, false));    /* 2 is missing: held */
    tp_channel_poll(f->ch, 100);
    assert_int_equal(f->ch->snap.state, TP_SNAP_WANTED);
    assert_int_equal(atomic_load(&f->ch->snap.wanted), 1);
}

/* ---- MDP3 ------------------------------------------------------------------------------- */

/* An MDP3 packet of MsgSeqNum `seq` with one message: the definition of ESZ6 (SecurityID 1001,
 * group ES, ReadyToTrade) if `define`, else a security status of group ES. */
static void mdp3_packet(struct held *h, uint32_t seq, bool define, uint8_t status)
{
    struct tp_mdp3_writer w;
    size_t room;
    assert_int_equal(tp_mdp3_writer_init(&w, h->bytes, sizeof(h->bytes), seq, 1000 + seq), 0);
    uint8_t *dst = tp_mdp3_writer_reserve(&w, &room);
    assert_non_null(dst);
    size_t len;
    if (define) {
        struct mktdata_md_instrument_definition_future54 m;
        struct mktdata_md_instrument_definition_future54_no_events ev;
        struct mktdata_md_instrument_definition_future54_no_md_feed_types ft;
        struct mktdata_md_instrument_definition_future54_no_inst_attrib ia;
        struct mktdata_md_instrument_definition_future54_no_lot_type_rules lt;
        assert_int_equal(
            mktdata_md_instrument_definition_future54_wrap_and_apply_header(&m, dst, room), 0);
        mktdata_md_instrument_definition_future54_set_security_update_action(&m, 'A');
        mktdata_md_instrument_definition_future54_set_md_security_trading_status(&m, status);
        mktdata_md_instrument_definition_future54_set_security_id(&m, 1001);
        mktdata_md_instrument_definition_future54_set_symbol(&m, "ESZ6", 4);
        mktdata_md_instrument_definition_future54_set_security_group(&m, "ES", 2);
        mktdata_md_instrument_definition_future54_set_match_event_indicator(
            &m, MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT);
        mktdata_md_instrument_definition_future54_no_events_wrap_for_encode(&m, &ev, 0);
        mktdata_md_instrument_definition_future54_no_md_feed_types_wrap_for_encode(&m, &ft, 0);
        mktdata_md_instrument_definition_future54_no_inst_attrib_wrap_for_encode(&m, &ia, 0);
        mktdata_md_instrument_definition_future54_no_lot_type_rules_wrap_for_encode(&m, &lt, 0);
        len = mktdata_md_instrument_definition_future54_encoded_length(&m);
    } else {
        struct mktdata_security_status30 m;
        assert_int_equal(mktdata_security_status30_wrap_and_apply_header(&m, dst, room), 0);
        mktdata_security_status30_set_security_group(&m, "ES", 2);
        mktdata_security_status30_set_security_id(&m, 0);
        mktdata_security_status30_set_security_trading_status(&m, status);
        mktdata_security_status30_set_match_event_indicator(
            &m, MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT);
        len = mktdata_security_status30_encoded_length(&m);
    }
    assert_int_equal(tp_mdp3_writer_commit(&w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH + len), 0);
    h->len = (uint16_t)w.len;
}

/*
 * Both MDP3 incremental lines silent for longer than silence_tsc while the channel trades: the
 * books may be missing what was lost, and are flagged RECOVERING until a packet arrives. A
 * snapshot-line packet is not the incremental lines speaking. Once every instrument of the
 * channel is closed (the security status of its group), silence is normal.
 */
static void test_mdp3_books_recovering_while_incrementals_silent(void **state)
{
    struct fixture *f = *state;
    struct held p[4], snap;
    mdp3_packet(&p[0], 1, true, 17); /* ReadyToTrade */
    assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_A, p[0].bytes, p[0].len, &p[0], 10));
    uint32_t es = tp_instruments_by_security_id(f->registry, 1001);
    assert_int_equal(es, 0);
    assert_int_equal(tp_instruments_get(f->registry, es)->trading_status, TP_STATUS_OPEN);
    tp_channel_poll(f->ch, 20);
    tp_channel_poll(f->ch, 900);
    assert_int_equal(tp_publisher_flags(f->pub, es), 0);
    /* A snapshot line's packet (not listened to) does not end the silence. */
    mdp3_packet(&snap, 1, false, 17);
    assert_false(tp_channel_packet(f->ch, TP_ROLE_SNAP_A, snap.bytes, snap.len, &snap, 950));
    tp_channel_poll(f->ch, 1100);
    assert_int_equal(tp_publisher_flags(f->pub, es), TP_PUB_F_RECOVERING);
    assert_int_equal(f->ch->counters.silences, 1);
    assert_int_equal(f->ch->counters.recovering_marks, 1);
    tp_channel_poll(f->ch, 5000);
    assert_int_equal(f->ch->counters.silences, 1);
    /* The next packet, in sequence on line B: nothing was missed, the flag goes. */
    mdp3_packet(&p[1], 2, false, 17);
    assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_B, p[1].bytes, p[1].len, &p[1], 5100));
    tp_channel_poll(f->ch, 5101);
    assert_int_equal(tp_publisher_flags(f->pub, es), 0);
    /* The group closes: its silence is the venue's. */
    mdp3_packet(&p[2], 3, false, 4); /* Close */
    assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_A, p[2].bytes, p[2].len, &p[2], 5200));
    tp_channel_poll(f->ch, 5201);
    assert_int_equal(tp_instruments_get(f->registry, es)->trading_status, TP_STATUS_CLOSED);
    tp_channel_poll(f->ch, 100000);
    assert_int_equal(tp_publisher_flags(f->pub, es), 0);
    assert_int_equal(f->ch->counters.silences, 1);
    /* Pre-open the next day: silence counts again. */
    mdp3_packet(&p[3], 4, false, 21); /* PreOpen */
    assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_A, p[3].bytes, p[3].len, &p[3], 100100));
    tp_channel_poll(f->ch, 100101);
    tp_channel_poll(f->ch, 101200);
    assert_int_equal(tp_publisher_flags(f->pub, es), TP_PUB_F_RECOVERING);
    assert_int_equal(f->ch->counters.silences, 2);
}

/* ---- randomized: two lossy lines, stops, re-requests, bursts ------------------------------- */

/*
 * The channel's one promise to consumers, over random sessions: a book shown unflagged is the
 * venue's. Each run sends AAPL's directory and RND_MESSAGES - 1 adds and deletes (a delete names
 * an order live at that point, so the stream is valid) in packets of 1-4 messages on line A and
 * line B (B up to 40 ticks behind), each line losing packets at random and both lines losing runs
 * of packets; then the end of the session. The receiver is stopped now and then (up to 1500
 * ticks), and what arrives meanwhile beyond its ring's room is dropped, as a kernel ring drops
 * it. It takes what arrived in rx bursts of 1-70 packets and runs the timers after each step.
 * Re-requests are answered 5-100 ticks later (one in ten answers lost). After every step, while
 * the book is unflagged, the order events published so far must follow the message sequence
 * with nothing missing up to the arbiter's next sequence, and the state table's levels must be
 * the book after them; at the end, after the give-up and silence times, an unflagged book has
 * every message applied once, in order, and the state table shows it; a run that skipped
 * nothing has no message refused (a refusal flags the book, and would hide a misordering). The
 * receiver's packets are its own as a driver's mbufs are: one the channel releases, or declines,
 * is wiped at once, and one released that it did not keep fails the run. Each host profile
 * (rnd_profile) runs 300 sessions; the figures above are the quiet host's.
 */
#define RND_MESSAGES 400
#define RND_ARRIVALS 4096

/*
 * How the host treats the packets. A loaded host also reorders a line (a packet comes up to
 * `late_max` ticks late, as from another cpu's backlog), delivers copies twice, stops the
 * receiver for longer with a deeper ring, and its re-request replies come in several packets
 * that may start before the asked sequence and end after it.
 */
struct rnd_profile {
    const char *name;
    unsigned ring;     /* packets the receiver's ring holds while it is stopped */
    unsigned stop;     /* a stop lasts 200 + up to this many ticks */
    unsigned reply;    /* a reply comes 5 + up to this many ticks after its request */
    unsigned skew;     /* line B is up to this many ticks behind A */
    unsigned late;     /* of 100 line packets come up to late_max ticks late */
    unsigned late_max; /* ticks */
    unsigned twice;    /* of 100 line packets arrive a second time, up to late_max later */
    unsigned split;    /* replies come in packets of 1..split messages (0: one packet) */
    unsigned wider;    /* of 100 replies start up to 4 before the request, end up to 4 after */
};

static const struct rnd_profile rnd_quiet = {"quiet", 24, 1301, 96, 41, 0, 0, 0, 0, 0};
static const struct rnd_profile rnd_loaded = {"loaded", 300, 5000, 96, 41, 10, 2000, 10, 4, 30};
static const struct rnd_profile *rnd_p;

struct rnd_msg {
    uint8_t bytes[ADD_LEN];
    uint16_t len;
};

struct rnd_arrival {
    uint64_t at;
    enum tp_line_role role;
    bool kept; /* the channel said it keeps the packet, and has not released it yet */
    struct held pkt;
};

static struct rnd {
    uint64_t x;
    struct rnd_msg msgs[RND_MESSAGES + 1]; /* by sequence, 1.. */
    struct rnd_arrival *arrivals;          /* kept in time order */
    unsigned n_arrivals, next_arrival;
    uint64_t now;
    unsigned reply_loss; /* of 100 */
} rnd;

/*
 * A packet the channel gave back (released, or declined) is gone, as an mbuf back in its pool:
 * its bytes are wiped, so that a later read of them shows in the books. Releasing one it never
 * kept, or twice, fails at once.
 */
static void rnd_gone(struct rnd_arrival *a)
{
    memset(a->pkt.bytes, 0xEE, a->pkt.len);
}

static void rnd_release(void *ctx, void *handle)
{
    (void)ctx;
    struct rnd_arrival *a =
        (struct rnd_arrival *)((uint8_t *)handle - offsetof(struct rnd_arrival, pkt));
    if (!a->kept)
        fail_msg("a packet released that the channel did not keep (or released twice)");
    a->kept = false;
    rnd_gone(a);
}

static uint64_t rnd_next(void)
{
    rnd.x ^= rnd.x << 13;
    rnd.x ^= rnd.x >> 7;
    rnd.x ^= rnd.x << 17;
    return rnd.x;
}

static unsigned rnd_below(unsigned n)
{
    return (unsigned)(rnd_next() % n);
}

/* Inserts a packet arriving at `at` on `role` (messages [seq, seq + count); count 0 with
 * `end`: the end of the session) in time order, after those arriving at the same time. */
static void rnd_arrive(uint64_t at, enum tp_line_role role, uint64_t seq, uint32_t count, bool end)
{
    if (rnd.n_arrivals == RND_ARRIVALS)
        return; /* as if lost */
    unsigned i = rnd.n_arrivals++;
    for (; i > rnd.next_arrival && rnd.arrivals[i - 1].at > at; i--)
        rnd.arrivals[i] = rnd.arrivals[i - 1];
    struct rnd_arrival *a = &rnd.arrivals[i];
    a->at = at;
    a->role = role;
    a->kept = false;
    if (end) {
        end_packet(&a->pkt, "SESSION001", seq);
    } else {
        packet(&a->pkt, "SESSION001", seq);
        for (uint64_t q = seq; q < seq + count; q++)
            memcpy(put(&a->pkt, rnd.msgs[q].len), rnd.msgs[q].bytes, rnd.msgs[q].len);
    }
    a->pkt.rx = at;
}

/* The re-request server: answers what exists of the request some ticks later, or never. */
static int rnd_rerequest(void *ctx, uint32_t channel, const uint8_t *payload, size_t len)
{
    (void)ctx, (void)channel;
    struct tp_mold_request r;
    if (tp_mold_request_decode(payload, len, &r) < 0 || r.sequence < 1 ||
        r.sequence > RND_MESSAGES || rnd_below(100) < rnd.reply_loss)
        return 0;
    uint64_t from = r.sequence;
    uint64_t end = r.sequence + r.count;
    if (rnd_below(100) < rnd_p->wider) {
        from -= from > 5 ? rnd_below(5) : 0;
        end += rnd_below(5);
    }
    if (end > RND_MESSAGES + 1)
        end = RND_MESSAGES + 1;
    uint64_t t = rnd.now + 5 + rnd_below(rnd_p->reply);
    while (from < end) {
        uint64_t n = rnd_p->split ? 1 + rnd_below(rnd_p->split) : end - from;
        if (n > end - from)
            n = end - from;
        rnd_arrive(t + (rnd_p->split ? rnd_below(rnd_p->reply) : 0), TP_ROLE_RETRANS, from,
                   (uint32_t)n, false);
        from += n;
    }
    return 0;
}

/* The session: AAPL's directory, then adds at 8 prices and deletes of live orders. */
static void rnd_session(void)
{
    uint64_t live[RND_MESSAGES];
    unsigned n_live = 0;
    directory(rnd.msgs[1].bytes);
    rnd.msgs[1].len = DIRECTORY_LEN;
    for (uint64_t q = 2; q <= RND_MESSAGES; q++) {
        struct rnd_msg *m = &rnd.msgs[q];
        if (n_live > 0 && rnd_below(4) == 0) {
            unsigned k = rnd_below(n_live);
            delete_order(m->bytes, live[k]);
            m->len = DELETE_LEN;
            live[k] = live[--n_live];
        } else {
            add(m->bytes, q, 1900000 + 100 * rnd_below(8));
            m->len = ADD_LEN;
            live[n_live++] = q;
        }
    }
}

/* Lines A and B: packets of 1-4 messages, each line's losses, runs lost on both. */
static void rnd_lines(void)
{
    uint64_t skew = rnd_below(rnd_p->skew), at = 100;
    unsigned both_lost = 0;
    for (uint64_t q = 1; q <= RND_MESSAGES; at += 10) {
        uint32_t count = 1 + rnd_below(4);
        if (q + count > RND_MESSAGES + 1)
            count = (uint32_t)(RND_MESSAGES + 1 - q);
        if (both_lost == 0 && rnd_below(100) == 0)
            both_lost = 1 + rnd_below(5);
        if (both_lost > 0) {
            both_lost--;
        } else {
            for (int l = 0; l < 2; l++) {
                if (rnd_below(100) < 5)
                    continue;
                uint64_t t = at + (l ? skew : 0);
                enum tp_line_role role = l ? TP_ROLE_INCR_B : TP_ROLE_INCR_A;
                if (rnd_below(100) < rnd_p->late)
                    t += rnd_below(rnd_p->late_max);
                rnd_arrive(t, role, q, count, false);
                if (rnd_below(100) < rnd_p->twice)
                    rnd_arrive(t + rnd_below(rnd_p->late_max), role, q, count, false);
            }
        }
        q += count;
    }
    for (int line = 0; line < 2; line++)
        if (rnd_below(100) >= 5)
            rnd_arrive(at + (line ? skew : 0), line ? TP_ROLE_INCR_B : TP_ROLE_INCR_A,
                       RND_MESSAGES + 1, 0, true);
}

/* What the order events published so far say: the last sequence applied in order from 2, and
 * whether one came out of order or after a hole. */
struct rnd_applied {
    uint64_t upto;
    bool broken;
};

static void rnd_read(struct rnd_applied *a)
{
    struct test_record r;
    while (test_bus_next(&r))
        if (r.kind == TEST_REC_ORDER) {
            if (r.venue_seq == a->upto + 1)
                a->upto++;
            else
                a->broken = true;
        }
}

/* AAPL's bids after messages [1, upto] (adds at 8 prices, all bids), best first: how many
 * levels, at most max. */
static unsigned rnd_model_bids(uint64_t upto, struct test_level *levels, unsigned max)
{
    int32_t orders[8] = {0};
    int32_t price_of[RND_MESSAGES + 1];
    for (uint64_t q = 2; q <= upto && q <= RND_MESSAGES; q++) {
        const uint8_t *m = rnd.msgs[q].bytes;
        if (m[0] == 'A') {
            price_of[q] = (int32_t)((tp_load_be32(m + 32) - 1900000) / 100);
            orders[price_of[q]]++;
        } else {
            orders[price_of[tp_load_be64(m + 11)]]--;
        }
    }
    unsigned n = 0;
    for (int k = 7; k >= 0 && n < max; k--)
        if (orders[k] > 0)
            levels[n++] = (struct test_level){.price = (int64_t)(1900000 + 100 * k) * 100000,
                                              .qty = 100 * orders[k],
                                              .orders = orders[k]};
    return n;
}

/* Whether the state table's AAPL bids are those after messages [1, upto]. */
static bool rnd_state_right(uint64_t upto)
{
    struct test_level got[4], want[4];
    int n = test_bus_state_bids(0, got, 4);
    unsigned k = rnd_model_bids(upto, want, 4);
    if (n != (int)k)
        return false;
    for (unsigned i = 0; i < k; i++)
        if (got[i].price != want[i].price || got[i].qty != want[i].qty ||
            got[i].orders != want[i].orders)
            return false;
    return true;
}

/* One step of the receiver: what arrived by now, in bursts (a stopped receiver's ring keeps
 * its profile's ring of packets), then the timers. */
static void rnd_step(struct fixture *f, uint64_t now)
{
    unsigned due = rnd.next_arrival;
    while (due < rnd.n_arrivals && rnd.arrivals[due].at <= now)
        due++;
    unsigned room = due - rnd.next_arrival;
    if (now - rnd.now > 100 && room > rnd_p->ring)
        room = rnd_p->ring; /* stopped: the ring overflowed, the later packets are gone */
    rnd.now = now;
    unsigned taken = 0;
    while (taken < room) {
        unsigned burst = 1 + rnd_below(70);
        tp_publisher_begin_burst(f->pub);
        for (; burst > 0 && taken < room; burst--, taken++) {
            struct rnd_arrival *a = &rnd.arrivals[rnd.next_arrival + taken];
            a->pkt.rx = now;
            a->kept = true; /* set first: the call may release it before it returns */
            if (!tp_channel_packet(f->ch, a->role, a->pkt.bytes, a->pkt.len, &a->pkt, now)) {
                if (!a->kept)
                    fail_msg("a packet released by the channel and declined too");
                a->kept = false;
                rnd_gone(a);
            }
        }
        tp_publisher_end_burst(f->pub);
    }
    rnd.next_arrival = due;
    tp_channel_poll(f->ch, now);
}

/* 300 random sessions of a profile. */
static void rnd_runs(const struct rnd_profile *profile)
{
    rnd_p = profile;
    unsigned exact = 0, flagged = 0;
    uint64_t held = 0, replies = 0; /* packets held behind gaps, replies that filled them */
    for (unsigned run = 0; run < 300; run++) {
        void *fs;
        setup_channel(&fs, 10, true);
        struct fixture *f = fs;
        struct tp_channel_params cp = f->ch->params;
        free(f->ch);
        cp.silence_tsc = 3000;
        cp.io.send_rerequest = rnd_rerequest;
        cp.io.release = rnd_release; /* the arbiter keeps its own copy: set before init */
        f->ch = zalloc(tp_channel_memsize(&cp));
        assert_int_equal(tp_channel_init(f->ch, &cp), 0);
        rnd.x = 0x9E3779B97F4A7C15ull * (run + 1);
        rnd.n_arrivals = rnd.next_arrival = 0;
        rnd.now = 0;
        rnd.reply_loss = 10;
        rnd_session();
        rnd_lines();
        struct rnd_applied applied = {.upto = 1};
        uint64_t now = 0;
        while (rnd.next_arrival < rnd.n_arrivals || now < 300000) {
            now += rnd_below(50) == 0 ? 200 + rnd_below(rnd_p->stop) : 1 + rnd_below(20);
            rnd_step(f, now);
            rnd_read(&applied);
            uint8_t flags = tp_publisher_flags(f->pub, 0);
            if (flags == 0 && tp_instruments_count(f->registry) > 0) {
                if (applied.broken || applied.upto + 1 != tp_arb_expected(f->ch->arb) ||
                    !rnd_state_right(applied.upto))
                    fail_msg("%s run %u at %lu: unflagged, order events up to %lu%s, arbiter "
                             "expects %lu, state table %s",
                             rnd_p->name, run, (unsigned long)now, (unsigned long)applied.upto,
                             applied.broken ? " with a hole" : "",
                             (unsigned long)tp_arb_expected(f->ch->arb),
                             rnd_state_right(applied.upto) ? "right" : "wrong");
            }
        }
        uint8_t flags = tp_publisher_flags(f->pub, 0);
        if (flags == 0 &&
            (applied.broken || applied.upto != RND_MESSAGES || !rnd_state_right(RND_MESSAGES)))
            fail_msg("%s run %u: unflagged at the end with order events up to %lu of %u%s",
                     rnd_p->name, run, (unsigned long)applied.upto, RND_MESSAGES,
                     applied.broken ? " with a hole" : "");
        /* Nothing skipped: every message was applied once, in order (the session is valid), so
         * the book refused none: a refusal flags the book, and would hide a misordering. */
        if (tp_arb_counters(f->ch->arb)->skipped_msgs == 0 && f->ch->counters.feed_errors != 0)
            fail_msg("%s run %u: %lu messages refused with nothing skipped", rnd_p->name, run,
                     (unsigned long)f->ch->counters.feed_errors);
        const struct tp_arb_counters *c = tp_arb_counters(f->ch->arb);
        held += c->line[TP_LINE_A].held + c->line[TP_LINE_B].held;
        replies += c->line[TP_LINE_RECOVERY].delivered;
        exact += flags == 0;
        flagged += flags != 0;
        teardown(&fs);
    }
    print_message("random sessions (%s host): %u exact, %u flagged, %lu packets held, %lu "
                  "replies applied\n",
                  rnd_p->name, exact, flagged, (unsigned long)held, (unsigned long)replies);
    assert_true(held > 1000 && replies > 1000);
    /* A good part of the runs recover everything: the test looks at healthy books too. */
    assert_true(3 * exact >= exact + flagged);
}

/* An MDP3 packet of MsgSeqNum `seq` with one 47 adding order `id` (bid, 4000.25 x 5) of ESZ6. */
static void mdp3_add_order(struct held *h, uint32_t seq, uint64_t id)
{
    struct tp_mdp3_writer w;
    size_t room;
    assert_int_equal(tp_mdp3_writer_init(&w, h->bytes, sizeof(h->bytes), seq, 1000 + seq), 0);
    uint8_t *dst = tp_mdp3_writer_reserve(&w, &room);
    struct mktdata_md_incremental_refresh_order_book47 m;
    struct mktdata_md_incremental_refresh_order_book47_no_md_entries g;
    assert_int_equal(
        mktdata_md_incremental_refresh_order_book47_wrap_and_apply_header(&m, dst, room), 0);
    mktdata_md_incremental_refresh_order_book47_set_match_event_indicator(
        &m, MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT);
    mktdata_md_incremental_refresh_order_book47_no_md_entries_wrap_for_encode(&m, &g, 1);
    mktdata_md_incremental_refresh_order_book47_no_md_entries_next(&g);
    mktdata_md_incremental_refresh_order_book47_no_md_entries_set_order_id(&g, id);
    mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_order_priority(&g, id);
    mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_entry_px_mantissa(
        &g, 4000250000000);
    mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_display_qty(&g, 5);
    mktdata_md_incremental_refresh_order_book47_no_md_entries_set_security_id(&g, 1001);
    mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_update_action(&g, 0);
    mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_entry_type(&g, '0');
    assert_int_equal(tp_mdp3_writer_commit(
                         &w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                 mktdata_md_incremental_refresh_order_book47_encoded_length(&m)),
                     0);
    h->len = (uint16_t)w.len;
}

/* A snapshot packet of MsgSeqNum `seq`: ESZ6's price-level snapshot (52, RptSeq 1, no levels) as
 * of incremental `last`, or with `order` its order-level one (53) holding that one order. */
static void mdp3_snapshot(struct held *h, uint32_t seq, uint32_t last, uint64_t order)
{
    struct tp_mdp3_writer w;
    size_t room;
    assert_int_equal(tp_mdp3_writer_init(&w, h->bytes, sizeof(h->bytes), seq, 1000 + seq), 0);
    uint8_t *dst = tp_mdp3_writer_reserve(&w, &room);
    size_t len;
    if (order == 0) {
        struct mktdata_snapshot_full_refresh52 m;
        struct mktdata_snapshot_full_refresh52_no_md_entries g;
        assert_int_equal(mktdata_snapshot_full_refresh52_wrap_and_apply_header(&m, dst, room), 0);
        mktdata_snapshot_full_refresh52_set_last_msg_seq_num_processed(&m, last);
        mktdata_snapshot_full_refresh52_set_security_id(&m, 1001);
        mktdata_snapshot_full_refresh52_set_rpt_seq(&m, 1);
        mktdata_snapshot_full_refresh52_set_md_security_trading_status(&m, 17);
        mktdata_snapshot_full_refresh52_set_high_limit_price_mantissa(&m, INT64_MAX);
        mktdata_snapshot_full_refresh52_set_low_limit_price_mantissa(&m, INT64_MAX);
        mktdata_snapshot_full_refresh52_set_max_price_variation_mantissa(&m, INT64_MAX);
        mktdata_snapshot_full_refresh52_no_md_entries_wrap_for_encode(&m, &g, 0);
        len = mktdata_snapshot_full_refresh52_encoded_length(&m);
    } else {
        struct mktdata_snapshot_full_refresh_order_book53 m;
        struct mktdata_snapshot_full_refresh_order_book53_no_md_entries g;
        assert_int_equal(
            mktdata_snapshot_full_refresh_order_book53_wrap_and_apply_header(&m, dst, room), 0);
        mktdata_snapshot_full_refresh_order_book53_set_last_msg_seq_num_processed(&m, last);
        mktdata_snapshot_full_refresh_order_book53_set_security_id(&m, 1001);
        mktdata_snapshot_full_refresh_order_book53_set_no_chunks(&m, 1);
        mktdata_snapshot_full_refresh_order_book53_set_current_chunk(&m, 1);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_wrap_for_encode(&m, &g, 1);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_next(&g);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_order_id(&g, order);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_order_priority(&g, order);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_entry_px_mantissa(
            &g, 4000000000000);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_display_qty(&g, 3);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_entry_type(&g, '1');
        len = mktdata_snapshot_full_refresh_order_book53_encoded_length(&m);
    }
    assert_int_equal(tp_mdp3_writer_commit(&w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH + len), 0);
    h->len = (uint16_t)w.len;
}

/*
 * With MBO snapshot lines, an order book's incomplete order view keeps the channel on the
 * snapshot lines after a full snapshot cycle; its 53 (on an MBO line, the other line's copy
 * ignored) loads it, the incrementals after the 53's LastMsgSeqNumProcessed are replayed onto it,
 * the ordersIncomplete flag goes, and the channel leaves both pairs of lines.
 */
static void test_mdp3_mbo_snapshot_refills_the_order_book(void **state)
{
    struct fixture *f = *state;
    struct held def, snap[2], add7, mbo, mbo_b;
    mdp3_packet(&def, 1, true, 17);
    assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_A, def.bytes, def.len, &def, 10));
    uint32_t es = tp_instruments_by_security_id(f->registry, 1001);
    assert_int_equal(f->ch->mdp3.counters.definitions, 1);
    assert_int_equal(tp_publisher_all_flags(f->pub, es), TP_PUB_F_ORDERS_INCOMPLETE);
    assert_int_equal(tp_publisher_flags(f->pub, es), 0); /* its price levels are not flagged */
    assert_int_equal(f->ch->recovery.orders_incomplete, 1);
    /* A whole snapshot cycle (the loop restarts at 1): the price-level book is the venue's. */
    mdp3_snapshot(&snap[0], 1, 1, 0);
    mdp3_snapshot(&snap[1], 1, 1, 0);
    assert_false(
        tp_channel_packet(f->ch, TP_ROLE_SNAP_A, snap[0].bytes, snap[0].len, &snap[0], 20));
    mdp3_snapshot(&snap[1], 2, 1, 0);
    assert_false(
        tp_channel_packet(f->ch, TP_ROLE_SNAP_A, snap[1].bytes, snap[1].len, &snap[1], 21));
    assert_false(
        tp_channel_packet(f->ch, TP_ROLE_SNAP_A, snap[0].bytes, snap[0].len, &snap[0], 22));
    assert_true(f->ch->recovery.cycle_seen);
    /* Still on every snapshot line: the order view waits for its 53. */
    assert_true(f->joined[TP_ROLE_SNAP_A] && f->joined[TP_ROLE_SMBO_A] &&
                f->joined[TP_ROLE_SMBO_B]);
    assert_true(tp_publisher_all_flags(f->pub, es) & TP_PUB_F_ORDERS_INCOMPLETE);
    /* An order added at 2, then the 53 as of 1 (order 5): loaded, 2 replayed onto it. */
    mdp3_add_order(&add7, 2, 7);
    assert_false(tp_channel_packet(f->ch, TP_ROLE_INCR_A, add7.bytes, add7.len, &add7, 30));
    assert_int_equal(tp_books_orders(f->books, es), 1);
    mdp3_snapshot(&mbo, 1, 1, 5);
    mbo_b = mbo;
    assert_false(tp_channel_packet(f->ch, TP_ROLE_SMBO_A, mbo.bytes, mbo.len, &mbo, 40));
    enum tp_side side;
    int64_t price, qty;
    uint64_t priority;
    assert_int_equal(tp_mbo_order(f->books, es, 5, &side, &price, &qty, &priority), 0);
    assert_int_equal(side, TP_SIDE_ASK);
    assert_int_equal(qty, 3);
    assert_int_equal(tp_mbo_order(f->books, es, 7, &side, &price, &qty, &priority), 0);
    assert_int_equal(tp_books_orders(f->books, es), 2);
    assert_true(f->ch->recovery.counters.replayed >= 1);
    assert_int_equal(tp_publisher_all_flags(f->pub, es), 0);
    assert_int_equal(f->ch->recovery.orders_incomplete, 0);
    assert_false(f->joined[TP_ROLE_SNAP_A] || f->joined[TP_ROLE_SNAP_B] ||
                 f->joined[TP_ROLE_SMBO_A] || f->joined[TP_ROLE_SMBO_B]);
    /* The other MBO line's copy, once left: ignored. */
    uint64_t packets = f->ch->recovery.counters.snapshot_packets;
    assert_false(tp_channel_packet(f->ch, TP_ROLE_SMBO_B, mbo_b.bytes, mbo_b.len, &mbo_b, 41));
    assert_int_equal(f->ch->recovery.counters.snapshot_packets, packets);
    assert_int_equal(tp_books_orders(f->books, es), 2);
    assert_int_equal(f->ch->mdp3.counters.rejected, 0);
}

static void test_random_books_right_or_flagged(void **state)
{
    (void)state;
    rnd.arrivals = calloc(RND_ARRIVALS, sizeof(*rnd.arrivals));
    assert_non_null(rnd.arrivals);
    rnd_runs(&rnd_quiet);
    rnd_runs(&rnd_loaded);
    free(rnd.arrivals);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_mdp3_mbo_snapshot_refills_the_order_book,
                                        setup_mdp3_mbo, teardown),
        cmocka_unit_test_setup_teardown(test_late_join_through_snapshot, setup_snapshot, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_older_than_stream_asks_again, setup_snapshot,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_ahead_of_stream_waits, setup_snapshot,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_given_up_stays_stale, setup_snapshot,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_gap_given_up_asks_for_snapshot, setup_snapshot,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_chunk_filled_to_the_end, setup_snapshot,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_flags_hold_through_a_filled_gap,
                                        setup_snapshot_server, teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_clean_load_is_healthy, setup_snapshot_server,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_outside_burst_applies_at_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_books_recovering_while_gap_rerequested, setup_server,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_mdp3_books_recovering_while_incrementals_silent,
                                        setup_mdp3_silence, teardown),
        cmocka_unit_test_setup_teardown(test_books_recovering_while_feed_silent, setup_silence,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_refused_message_flags_stale, setup, teardown),
        cmocka_unit_test_setup_teardown(test_burst_applies_at_its_end, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap_filled_inside_burst, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap_wait_until_filled, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gap_wait_until_given_up, setup_give_up, teardown),
        cmocka_unit_test_setup_teardown(test_overlapping_copies_skip_what_was_applied, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_reset_after_the_last_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reset_event_names_its_channel, setup, teardown),
        cmocka_unit_test_setup_teardown(test_many_packets_in_one_burst, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stage_full_applies_what_came_before, setup, teardown),
        cmocka_unit_test_setup_teardown(test_common_and_general_packets_count_alike, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stop_inside_burst, setup, teardown),
        cmocka_unit_test_setup_teardown(test_each_give_up_marks_instruments_defined_since,
                                        setup_give_up, teardown),
        cmocka_unit_test_setup_teardown(test_gap_ended_by_new_session_is_lost, setup_server,
                                        teardown),
        cmocka_unit_test(test_random_books_right_or_flagged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
