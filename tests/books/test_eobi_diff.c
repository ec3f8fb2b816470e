/*
 * Randomized differential test of the EOBI feed and its order-level books.
 *
 * A random venue (two market segments, four instruments) sends EOBI packets of random order
 * events: adds, modifies that keep or lose priority, same-priority modifies, deletes, partial and
 * full executions with their execution summaries, mass deletes, trade reports. A deliberately
 * simple model keeps the venue's truth: orders in a plain array, levels as (qty, count) per price
 * tick. Packets are lost now and then; the feed must notice, flag the segment's books and recover
 * them from snapshots the model writes (delivered a few packets late, so that buffered packets
 * follow them, and themselves lost now and then). After every packet, every book the sink has not
 * flagged stale equals the model's levels on both sides (but those of a segment whose last packet
 * was lost: nothing can tell the feed before the segment's next packet): no wrong book is ever
 * shown as healthy once the feed could know.
 * At the end one last snapshot per recovering segment leaves every book healthy and equal.
 *
 * The same on two lines (run_lines): each packet and snapshot packet goes out on lines A and B,
 * B late, each line losing, duplicating and reordering some (within the wait), some lost on both;
 * the feed arbitrates them itself. Whenever a segment has applied every packet sent and waits
 * for nothing, its books are unflagged and equal the model; at the end every book equals the
 * model or is flagged, and the last snapshots leave every book healthy and equal.
 *
 * TP_EOBI_DIFF_PACKETS sets the number of incremental packets (default 200000).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "books_test_util.h"
#include "eobi_build.h"
#include "tp_eobi_feed.h"
#include "tp_mbo.h"

#define SEGMENTS   2
#define SECURITIES 4 /* security k is in segment k % SEGMENTS */
#define TICKS      50
#define TICK       1000000 /* EOBI price of one tick: 0.01 */
#define MAX_ORDERS 1500
#define PKT_MAX    1400
#define SNAP_PKTS  64
#define SNAP_DELAY 3 /* incremental packets between a snapshot's making and its delivery */
#define T0         UINT64_C(1700000000000000000)

static const int32_t segment_ids[SEGMENTS] = {589, 1300000};

struct order {
    uint8_t live;
    uint8_t side; /* enum tp_side */
    uint8_t sec;
    int32_t tick;
    int32_t qty;
    uint64_t prio;
};

struct model {
    uint64_t rng;
    struct order orders[MAX_ORDERS];
    uint32_t live[MAX_ORDERS]; /* indexes of live orders */
    uint32_t n_live;
    int64_t qty[SECURITIES][2][TICKS + 1];
    uint32_t count[SECURITIES][2][TICKS + 1];
    uint64_t next_prio;
    uint64_t seq[SEGMENTS]; /* last ApplSeqNum sent per segment */
    uint32_t match;
};

struct pending_snapshot {
    int active;
    uint32_t delay;
    uint32_t n;
    uint8_t pkt[SNAP_PKTS][PKT_MAX];
    size_t len[SNAP_PKTS];
};

struct harness {
    struct model m;
    struct tp_instruments *reg;
    struct tp_books *books;
    struct tp_eobi_feed *feed;
    uint8_t stale[SECURITIES + 1]; /* by dense id */
    struct pending_snapshot snap[SEGMENTS];
    uint8_t pkt[PKT_MAX];
    struct tp_eobi_builder b;
    /* The segment's last packet was lost: nothing has told the feed yet, its books are behind
     * the model until its next packet arrives (and reveals the gap). */
    uint8_t unnoticed[SEGMENTS];
    uint64_t checks, recoveries_seen, lost, lost_snapshots;
    uint64_t passes; /* snapshot passes made */
};

static uint64_t rnd(struct model *m)
{
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 7;
    m->rng ^= m->rng << 17;
    return m->rng;
}

static uint32_t below(struct model *m, uint32_t n)
{
    return (uint32_t)(rnd(m) % n);
}

static void on_stale(void *ctx, uint32_t instr, int stale, uint32_t expected, uint32_t got)
{
    struct harness *h = ctx;

    (void)expected, (void)got;
    assert_true(instr <= SECURITIES);
    h->stale[instr] = stale != 0;
}

static int64_t security_id(unsigned sec)
{
    return 5000 + (int64_t)sec;
}

/* ---- the model's order operations ---- */

static void level_add(struct model *m, const struct order *o, int32_t qty, int whole)
{
    m->qty[o->sec][o->side][o->tick] += qty;
    m->count[o->sec][o->side][o->tick] += (uint32_t)whole;
}

static void order_remove(struct model *m, uint32_t live_index)
{
    struct order *o = &m->orders[m->live[live_index]];

    level_add(m, o, -o->qty, -1);
    o->live = 0;
    m->live[live_index] = m->live[--m->n_live];
}

/* A live order of segment seg (its index in live[]), or -1. */
static int pick_order(struct model *m, unsigned seg)
{
    for (int tries = 0; tries < 8 && m->n_live > 0; tries++) {
        uint32_t i = below(m, m->n_live);
        if (m->orders[m->live[i]].sec % SEGMENTS == seg)
            return (int)i;
    }
    return -1;
}

static uint8_t eobi_side(uint8_t side)
{
    return side == TP_SIDE_BID ? 1 : 2;
}

static int64_t price_of(int32_t tick)
{
    return (int64_t)tick * TICK;
}

/* ---- events: the model changes and the message describing it goes into the packet ---- */

static void ev_add(struct harness *h, unsigned seg)
{
    struct model *m = &h->m;
    uint32_t slot;

    if (m->n_live == MAX_ORDERS)
        return;
    for (slot = below(m, MAX_ORDERS); m->orders[slot].live; slot = (slot + 1) % MAX_ORDERS)
        ;
    struct order *o = &m->orders[slot];
    o->live = 1;
    o->sec = (uint8_t)(seg + SEGMENTS * below(m, SECURITIES / SEGMENTS));
    o->side = (uint8_t)below(m, 2);
    o->tick = o->side == TP_SIDE_BID ? 1 + (int32_t)below(m, 30) : 20 + (int32_t)below(m, 31);
    o->qty = 1 + (int32_t)below(m, 100);
    o->prio = m->next_prio++;
    m->live[m->n_live++] = slot;
    level_add(m, o, o->qty, 1);
    struct tp_eobi_order_add v = {.trd_reg_ts_time_in = o->prio,
                                  .security_id = security_id(o->sec),
                                  .trd_reg_ts_time_priority = o->prio,
                                  .display_qty = o->qty,
                                  .side = eobi_side(o->side),
                                  .ord_type = 2,
                                  .price = price_of(o->tick)};
    TP_EOBI_BUILD(&h->b, order_add, &v);
}

static void ev_modify(struct harness *h, unsigned seg, int kind)
{
    struct model *m = &h->m;
    int i = pick_order(m, seg);

    if (i < 0)
        return;
    struct order *o = &m->orders[m->live[i]];
    struct order old = *o;
    level_add(m, o, -o->qty, -1);
    if (kind == 0) { /* quantity down: priority kept */
        o->qty = o->qty > 1 ? 1 + (int32_t)below(m, (uint32_t)o->qty - 1) : 1;
    } else if (kind == 1) { /* new price and quantity: priority lost */
        o->tick = o->side == TP_SIDE_BID ? 1 + (int32_t)below(m, 30) : 20 + (int32_t)below(m, 31);
        o->qty = 1 + (int32_t)below(m, 100);
        o->prio = m->next_prio++;
    } else { /* same priority, any quantity */
        o->qty = 1 + (int32_t)below(m, 100);
    }
    level_add(m, o, o->qty, 1);
    if (kind == 2) {
        struct tp_eobi_order_modify_same_prio v = {.prev_display_qty = old.qty,
                                                   .security_id = security_id(o->sec),
                                                   .trd_reg_ts_time_priority = o->prio,
                                                   .display_qty = o->qty,
                                                   .side = eobi_side(o->side),
                                                   .price = price_of(o->tick)};
        TP_EOBI_BUILD(&h->b, order_modify_same_prio, &v);
        return;
    }
    struct tp_eobi_order_modify v = {.trd_reg_ts_prev_time_priority = old.prio,
                                     .prev_price = price_of(old.tick),
                                     .prev_display_qty = old.qty,
                                     .security_id = security_id(o->sec),
                                     .trd_reg_ts_time_priority = o->prio,
                                     .display_qty = o->qty,
                                     .side = eobi_side(o->side),
                                     .price = price_of(o->tick)};
    TP_EOBI_BUILD(&h->b, order_modify, &v);
}

static void ev_delete(struct harness *h, unsigned seg)
{
    struct model *m = &h->m;
    int i = pick_order(m, seg);

    if (i < 0)
        return;
    struct order o = m->orders[m->live[i]];
    order_remove(m, (uint32_t)i);
    struct tp_eobi_order_delete v = {.security_id = security_id(o.sec),
                                     .trd_reg_ts_time_priority = o.prio,
                                     .display_qty = o.qty,
                                     .side = eobi_side(o.side),
                                     .price = price_of(o.tick)};
    TP_EOBI_BUILD(&h->b, order_delete, &v);
}

#define EXECUTION_INIT(o, q)                                                                       \
    {                                                                                              \
        .side = eobi_side((o).side), .price = price_of((o).tick),                                  \
        .trd_reg_ts_time_priority = (o).prio, .security_id = security_id((o).sec),                 \
        .trd_match_id = m->match, .last_qty = (q), .last_px = price_of((o).tick)                   \
    }

static void ev_execute(struct harness *h, unsigned seg, int full)
{
    struct model *m = &h->m;
    int i = pick_order(m, seg);

    if (i < 0)
        return;
    struct order o = m->orders[m->live[i]];
    if (!full && o.qty < 2)
        full = 1;
    int32_t q = full ? o.qty : 1 + (int32_t)below(m, (uint32_t)o.qty - 1);
    m->match++;
    struct tp_eobi_execution_summary sum = {.security_id = security_id(o.sec),
                                            .exec_id = m->match,
                                            .last_qty = q,
                                            .aggressor_side = o.side == TP_SIDE_BID ? 2 : 1,
                                            .last_px = price_of(o.tick)};
    TP_EOBI_BUILD(&h->b, execution_summary, &sum);
    if (full) {
        order_remove(m, (uint32_t)i);
        struct tp_eobi_full_order_execution v = EXECUTION_INIT(o, q);
        TP_EOBI_BUILD(&h->b, full_order_execution, &v);
    } else {
        struct order *live = &m->orders[m->live[i]];
        live->qty -= q;
        level_add(m, live, -q, 0);
        struct tp_eobi_partial_order_execution v = EXECUTION_INIT(o, q);
        TP_EOBI_BUILD(&h->b, partial_order_execution, &v);
    }
}

static void ev_mass_delete(struct harness *h, unsigned seg)
{
    struct model *m = &h->m;
    uint8_t sec = (uint8_t)(seg + SEGMENTS * below(m, SECURITIES / SEGMENTS));

    for (uint32_t i = 0; i < m->n_live;) {
        if (m->orders[m->live[i]].sec == sec)
            order_remove(m, i);
        else
            i++;
    }
    struct tp_eobi_order_mass_delete v = {.security_id = security_id(sec)};
    TP_EOBI_BUILD(&h->b, order_mass_delete, &v);
}

static void ev_trade_report(struct harness *h, unsigned seg)
{
    struct tp_eobi_trade_report v = {.security_id = security_id(seg),
                                     .trd_match_id = ++h->m.match,
                                     .last_qty = 5,
                                     .last_px = price_of(25)};
    TP_EOBI_BUILD(&h->b, trade_report, &v);
}

/* ---- snapshots ---- */

static void snapshot_packet_begin(struct harness *h, unsigned seg, struct tp_eobi_builder *b,
                                  uint32_t msg_seq)
{
    struct pending_snapshot *s = &h->snap[seg];
    /* Each pass is sent later than the one before: its copy on the other line is told by it. */
    struct tp_eobi_packet_header hd = {.market_segment_id = segment_ids[seg],
                                       .transact_time = T0 + h->passes};

    tp_eobi_build_begin(b, s->pkt[s->n], PKT_MAX, &hd, msg_seq);
}

/* Closes the snapshot packet being built if less than `need` bytes are left, starts the next. */
static void snapshot_room(struct harness *h, unsigned seg, struct tp_eobi_builder *b, size_t need)
{
    struct pending_snapshot *s = &h->snap[seg];

    if (tp_eobi_build_room(b) >= need)
        return;
    s->len[s->n++] = b->len;
    assert_true(s->n < SNAP_PKTS);
    snapshot_packet_begin(h, seg, b, b->msg_seq_num);
}

/* The model writes segment seg's snapshot: the truth after its last packet sent. */
static void make_snapshot(struct harness *h, unsigned seg)
{
    struct model *m = &h->m;
    struct pending_snapshot *s = &h->snap[seg];
    struct tp_eobi_builder b;
    struct tp_eobi_product_summary ps = {.last_msg_seq_num_processed = (uint32_t)m->seq[seg],
                                         .trading_session_sub_id = 3,
                                         .trad_ses_status = 2};

    s->active = 1;
    s->delay = SNAP_DELAY;
    s->n = 0;
    h->passes++;
    snapshot_packet_begin(h, seg, &b, 1);
    TP_EOBI_BUILD(&b, product_summary, &ps);
    for (unsigned sec = seg; sec < SECURITIES; sec += SEGMENTS) {
        uint16_t orders = 0;
        for (uint32_t i = 0; i < m->n_live; i++)
            orders += m->orders[m->live[i]].sec == sec;
        struct tp_eobi_instrument_summary is = {.security_id = security_id(sec),
                                                .tot_no_orders = orders,
                                                .security_status = 1,
                                                .security_trading_status = 203};
        snapshot_room(h, seg, &b, 40);
        TP_EOBI_BUILD(&b, instrument_summary, &is);
        for (uint32_t i = 0; i < m->n_live; i++) {
            const struct order *o = &m->orders[m->live[i]];
            if (o->sec != sec)
                continue;
            struct tp_eobi_snapshot_order v = {.trd_reg_ts_time_priority = o->prio,
                                               .display_qty = o->qty,
                                               .side = eobi_side(o->side),
                                               .price = price_of(o->tick)};
            snapshot_room(h, seg, &b, 32);
            TP_EOBI_BUILD(&b, snapshot_order, &v);
        }
    }
    assert_int_equal(b.error, 0);
    s->pkt[s->n][21] = 1; /* CompletionIndicator: the segment's last snapshot packet */
    s->len[s->n++] = b.len;
}

static void deliver_snapshot(struct harness *h, unsigned seg)
{
    struct pending_snapshot *s = &h->snap[seg];

    for (uint32_t i = 0; i < s->n; i++) {
        if (below(&h->m, 100) < 3) {
            h->lost_snapshots++;
            continue;
        }
        assert_int_equal(tp_eobi_feed_snapshot_packet(h->feed, s->pkt[i], s->len[i], 0), 0);
    }
    tp_eobi_feed_snapshot_end(h->feed);
    s->active = 0;
}

/* ---- the comparison ---- */

static void check_book(struct harness *h, unsigned sec, uint32_t id);

/* Every unflagged book equals the model on both sides. */
static void check_books(struct harness *h)
{
    for (unsigned sec = 0; sec < SECURITIES; sec++) {
        uint32_t id = tp_eobi_feed_instrument(h->feed, security_id(sec));
        if (id == TP_INSTRUMENT_NONE || h->stale[id] || h->unnoticed[sec % SEGMENTS])
            continue;
        check_book(h, sec, id);
    }
}

/* Security sec's book (dense id) equals the model on both sides. */
static void check_book(struct harness *h, unsigned sec, uint32_t id)
{
    struct model *m = &h->m;

    h->checks++;
    for (unsigned side = 0; side < 2; side++) {
        uint32_t k = 0;
        for (int i = 0; i <= TICKS; i++) {
            int tick = side == TP_SIDE_BID ? TICKS - i : i;
            if (m->count[sec][side][tick] == 0)
                continue;
            struct tp_level l;
            k++;
            assert_int_equal(
                tp_books_level(h->books, id, TP_BOOK_ORDERS, (enum tp_side)side, k, &l), 0);
            assert_int_equal(l.price, price_of(tick) * 10);
            assert_int_equal(l.qty, m->qty[sec][side][tick]);
            assert_int_equal(l.count, m->count[sec][side][tick]);
        }
        assert_int_equal(tp_books_levels(h->books, id, TP_BOOK_ORDERS, (enum tp_side)side), k);
    }
}

/* The model's next incremental packet, in h->pkt: returns its segment. */
static unsigned next_packet(struct harness *h)
{
    struct model *m = &h->m;
    unsigned seg = below(m, SEGMENTS);
    struct tp_eobi_packet_header hd = {.appl_seq_num = ++m->seq[seg],
                                       .market_segment_id = segment_ids[seg],
                                       .completion_indicator = 1,
                                       .transact_time = T0 + m->seq[seg]};
    uint32_t events = 1 + below(m, 3);

    tp_eobi_build_begin(&h->b, h->pkt, PKT_MAX, &hd, (uint32_t)m->seq[seg]);
    for (uint32_t e = 0; e < events; e++) {
        uint32_t r = below(m, 1000);
        if (r < 380 || m->n_live < 20)
            ev_add(h, seg);
        else if (r < 460)
            ev_modify(h, seg, 0);
        else if (r < 540)
            ev_modify(h, seg, 1);
        else if (r < 600)
            ev_modify(h, seg, 2);
        else if (r < 780)
            ev_delete(h, seg);
        else if (r < 880)
            ev_execute(h, seg, 0);
        else if (r < 985)
            ev_execute(h, seg, 1);
        else if (r < 990)
            ev_mass_delete(h, seg);
        else
            ev_trade_report(h, seg);
    }
    assert_int_equal(h->b.error, 0);
    return seg;
}

static void one_packet(struct harness *h)
{
    struct model *m = &h->m;
    unsigned seg = next_packet(h);

    h->unnoticed[seg] = below(m, 1000) < 15;
    if (h->unnoticed[seg])
        h->lost++;
    else
        assert_int_equal(tp_eobi_feed_packet(h->feed, h->pkt, h->b.len, 0), 0);
}

static void run(uint64_t seed, uint64_t packets)
{
    struct harness *h = test_zalloc(sizeof(*h));
    struct tp_feed_sink sink = {.stale = on_stale};

    assert_non_null(h);
    sink.ctx = h;
    h->m.rng = seed;
    h->m.next_prio = T0;
    h->reg = test_registry(SECURITIES + 1, 0);
    h->books = test_books(SECURITIES + 1, MAX_ORDERS + 16, TICKS + 4, 0, 0);
    h->feed = test_zalloc(sizeof(*h->feed));
    assert_non_null(h->feed);
    assert_int_equal(tp_eobi_feed_init(h->feed, h->reg, h->books, NULL, 0, &sink), 0);
    for (uint64_t p = 0; p < packets; p++) {
        one_packet(h);
        for (unsigned seg = 0; seg < SEGMENTS; seg++) {
            const struct tp_eobi_segment *s = tp_eobi_feed_segment(h->feed, segment_ids[seg]);
            if (h->snap[seg].active && --h->snap[seg].delay == 0)
                deliver_snapshot(h, seg);
            else if (!h->snap[seg].active && s && s->state == TP_EOBI_SEGMENT_RECOVERING) {
                h->recoveries_seen++;
                make_snapshot(h, seg);
            }
        }
        check_books(h);
    }
    /*
     * The venue goes quiet: its heartbeats tell the last ApplSeqNum of each segment (a lost last
     * packet is a gap now), and the last snapshots recover every segment (lossless this time).
     */
    for (unsigned seg = 0; seg < SEGMENTS; seg++) {
        struct tp_eobi_packet_header hd = {.market_segment_id = segment_ids[seg]};
        tp_eobi_build_begin(&h->b, h->pkt, PKT_MAX, &hd, 0);
        tp_eobi_build_heartbeat(&h->b, (uint32_t)h->m.seq[seg]);
        assert_int_equal(tp_eobi_feed_packet(h->feed, h->pkt, h->b.len, 0), 0);
        h->unnoticed[seg] = 0;
        const struct tp_eobi_segment *s = tp_eobi_feed_segment(h->feed, segment_ids[seg]);
        if (s && s->state == TP_EOBI_SEGMENT_RECOVERING) {
            make_snapshot(h, seg);
            for (uint32_t i = 0; i < h->snap[seg].n; i++)
                tp_eobi_feed_snapshot_packet(h->feed, h->snap[seg].pkt[i], h->snap[seg].len[i], 0);
            tp_eobi_feed_snapshot_end(h->feed);
        }
    }
    assert_int_equal(tp_eobi_feed_recovering(h->feed), 0);
    for (unsigned id = 0; id <= SECURITIES; id++)
        assert_int_equal(h->stale[id], 0);
    uint64_t checks_before = h->checks;
    check_books(h);
    assert_int_equal(h->checks - checks_before, SECURITIES);
    /* The run exercised what it is about. */
    assert_true(h->lost > 0);
    assert_true(h->feed->counters.snapshots > 0);
    assert_true(h->feed->counters.gaps > 0);
    assert_true(packets < 10000 || h->feed->counters.snapshots_broken > 0);
    assert_true(h->feed->counters.buffered > 0);
    assert_int_equal(h->feed->counters.rejected, 0);
    assert_int_equal(h->feed->counters.execution_mismatch, 0);
    print_message(
        "eobi diff seed %llu: %llu packets, %llu lost, %llu gaps, %llu snapshots "
        "(%llu broken), %llu book checks\n",
        (unsigned long long)seed, (unsigned long long)packets, (unsigned long long)h->lost,
        (unsigned long long)h->feed->counters.gaps, (unsigned long long)h->feed->counters.snapshots,
        (unsigned long long)h->feed->counters.snapshots_broken, (unsigned long long)h->checks);
    free(h->feed);
    free(h->books);
    free(h->reg);
    free(h);
}

/* ---- lines A and B, arbitrated by the feed ---- */

#define LINE_STEP 10  /* time between two of the venue's packets (rx TSC) */
#define LINE_LAG  35  /* line B comes this much after line A */
#define LINE_WAIT 100 /* a hole waits this long for the other line: more than lag and reorder */
#define IN_FLIGHT 256

/* One line's copy of a packet, on its way. */
struct copy {
    uint64_t time, serial;
    uint8_t snapshot;
    uint16_t len;
    uint8_t pkt[PKT_MAX];
};

struct lines {
    struct copy q[IN_FLIGHT];
    uint32_t n;
    uint64_t now, serial;
    uint64_t pass_until; /* one segment's snapshot pass is on the lines until then */
    uint64_t lost_one, lost_both, duplicated, reordered, snapshot_lost_one, snapshot_lost_both;
};

static void put(struct lines *L, uint64_t time, uint8_t snapshot, const uint8_t *pkt, size_t len)
{
    assert_true(L->n < IN_FLIGHT);
    struct copy *c = &L->q[L->n++];
    c->time = time;
    c->serial = L->serial++;
    c->snapshot = snapshot;
    c->len = (uint16_t)len;
    memcpy(c->pkt, pkt, len);
}

/* Delivers every copy due by `until` in time order, the feed polled as time goes. */
static void deliver_until(struct harness *h, struct lines *L, uint64_t until)
{
    for (;;) {
        uint32_t best = L->n;
        for (uint32_t i = 0; i < L->n; i++)
            if (L->q[i].time <= until &&
                (best == L->n || L->q[i].time < L->q[best].time ||
                 (L->q[i].time == L->q[best].time && L->q[i].serial < L->q[best].serial)))
                best = i;
        if (best == L->n)
            break;
        const struct copy *c = &L->q[best];
        tp_eobi_feed_poll(h->feed, c->time);
        int rc = c->snapshot ? tp_eobi_feed_snapshot_packet(h->feed, c->pkt, c->len, c->time)
                             : tp_eobi_feed_packet(h->feed, c->pkt, c->len, c->time);
        assert_int_equal(rc, 0);
        L->q[best] = L->q[--L->n];
    }
    tp_eobi_feed_poll(h->feed, until);
}

/* The incremental packet in h->pkt on both lines: lost on one or both, duplicated, reordered. */
static void send_lines(struct harness *h, struct lines *L)
{
    struct model *m = &h->m;
    uint32_t r = below(m, 1000);

    if (r < 10) {
        L->lost_both++;
        return;
    }
    for (int line = 0; line < 2; line++) {
        uint64_t t = L->now + (line ? LINE_LAG : 0);
        if (below(m, 1000) < 40) {
            L->lost_one++;
            continue;
        }
        if (below(m, 1000) < 30) {
            t += LINE_STEP + LINE_STEP / 2; /* after its successor */
            L->reordered++;
        }
        put(L, t, 0, h->pkt, h->b.len);
        if (below(m, 1000) < 10) {
            put(L, t + 3, 0, h->pkt, h->b.len);
            L->duplicated++;
        }
    }
}

/* Segment seg's snapshot pass on both lines, each losing some of it, some lost on both. */
static void send_pass(struct harness *h, struct lines *L, unsigned seg)
{
    struct pending_snapshot *s = &h->snap[seg];
    uint64_t t = L->now + 3 * LINE_STEP;

    make_snapshot(h, seg);
    for (uint32_t i = 0; i < s->n; i++, t += 2) {
        if (below(&h->m, 1000) < 10) {
            L->snapshot_lost_both++;
            continue;
        }
        for (int line = 0; line < 2; line++) {
            if (below(&h->m, 1000) < 50)
                L->snapshot_lost_one++;
            else
                put(L, t + (line ? LINE_LAG : 0), 1, s->pkt[i], s->len[i]);
        }
    }
    L->pass_until = t + LINE_LAG + LINE_WAIT + 1;
}

/*
 * A segment that has applied every packet sent and waits for nothing: its books are healthy and
 * equal the model.
 */
static void check_caught_up(struct harness *h)
{
    for (unsigned seg = 0; seg < SEGMENTS; seg++) {
        const struct tp_eobi_segment *s = tp_eobi_feed_segment(h->feed, segment_ids[seg]);
        if (!s || s->state != TP_EOBI_SEGMENT_HEALTHY || s->holding ||
            s->next_seq != h->m.seq[seg] + 1)
            continue;
        for (unsigned sec = seg; sec < SECURITIES; sec += SEGMENTS) {
            uint32_t id = tp_eobi_feed_instrument(h->feed, security_id(sec));
            if (id == TP_INSTRUMENT_NONE)
                continue;
            assert_int_equal(h->stale[id], 0);
            check_book(h, sec, id);
        }
    }
}

static void run_lines(uint64_t seed, uint64_t packets)
{
    struct harness *h = test_zalloc(sizeof(*h));
    struct lines *L = test_zalloc(sizeof(*L));
    struct tp_feed_sink sink = {.stale = on_stale};

    assert_non_null(h);
    assert_non_null(L);
    sink.ctx = h;
    h->m.rng = seed;
    h->m.next_prio = T0;
    h->reg = test_registry(SECURITIES + 1, 0);
    h->books = test_books(SECURITIES + 1, MAX_ORDERS + 16, TICKS + 4, 0, 0);
    h->feed = test_zalloc(sizeof(*h->feed));
    assert_non_null(h->feed);
    assert_int_equal(tp_eobi_feed_init(h->feed, h->reg, h->books, NULL, 0, &sink), 0);
    tp_eobi_feed_arbitrate(h->feed, LINE_WAIT, NULL, NULL);
    for (uint64_t p = 0; p < packets; p++) {
        L->now += LINE_STEP;
        next_packet(h);
        send_lines(h, L);
        deliver_until(h, L, L->now);
        for (unsigned seg = 0; seg < SEGMENTS && L->now >= L->pass_until; seg++) {
            const struct tp_eobi_segment *s = tp_eobi_feed_segment(h->feed, segment_ids[seg]);
            if (s && s->state == TP_EOBI_SEGMENT_RECOVERING) {
                h->recoveries_seen++;
                send_pass(h, L, seg);
            }
        }
        check_caught_up(h);
    }
    /* The lines drain, the heartbeats tell each segment's last packet, the waits end. */
    L->now += LINE_LAG + 2 * LINE_STEP;
    deliver_until(h, L, L->now);
    for (unsigned seg = 0; seg < SEGMENTS; seg++) {
        struct tp_eobi_packet_header hd = {.market_segment_id = segment_ids[seg]};
        tp_eobi_build_begin(&h->b, h->pkt, PKT_MAX, &hd, 0);
        tp_eobi_build_heartbeat(&h->b, (uint32_t)h->m.seq[seg]);
        assert_int_equal(tp_eobi_feed_packet(h->feed, h->pkt, h->b.len, L->now), 0);
    }
    L->now += LINE_WAIT + LINE_LAG + 64 * 2;
    deliver_until(h, L, L->now);
    /* Every book is the model's, or flagged. */
    for (unsigned sec = 0; sec < SECURITIES; sec++) {
        uint32_t id = tp_eobi_feed_instrument(h->feed, security_id(sec));
        if (id != TP_INSTRUMENT_NONE && !h->stale[id])
            check_book(h, sec, id);
    }
    /* The last passes, lossless, one after the other, recover every segment. */
    for (unsigned seg = 0; seg < SEGMENTS; seg++) {
        const struct tp_eobi_segment *s = tp_eobi_feed_segment(h->feed, segment_ids[seg]);
        if (s && s->state == TP_EOBI_SEGMENT_RECOVERING) {
            make_snapshot(h, seg);
            for (uint32_t i = 0; i < h->snap[seg].n; i++)
                assert_int_equal(tp_eobi_feed_snapshot_packet(h->feed, h->snap[seg].pkt[i],
                                                              h->snap[seg].len[i], L->now),
                                 0);
        }
    }
    assert_int_equal(tp_eobi_feed_recovering(h->feed), 0);
    for (unsigned id = 0; id <= SECURITIES; id++)
        assert_int_equal(h->stale[id], 0);
    uint64_t checks_before = h->checks;
    check_books(h);
    assert_int_equal(h->checks - checks_before, SECURITIES);
    /* The run exercised what it is about. */
    const struct tp_eobi_feed_counters *c = &h->feed->counters;
    assert_true(c->held > 0 && c->gaps_filled > 0 && c->duplicates > 0);
    assert_true(c->gaps > 0 && c->snapshots > 0);
    /* The rarer events: a session of less than 100,000 packets may see none of one of them. */
    assert_true(packets < 100000 ||
                (c->snapshot_held > 0 && c->snapshot_filled > 0 && c->snapshot_given_up > 0 &&
                 c->snapshot_duplicates > 0 && c->buffer_filled > 0));
    assert_int_equal(c->rejected, 0);
    assert_int_equal(c->execution_mismatch, 0);
    assert_int_equal(c->malformed, 0);
    print_message("eobi diff on two lines, seed %llu: %llu packets, %llu lost on one line, %llu "
                  "on both, %llu reordered, %llu duplicated; held %llu, filled %llu, gaps %llu; "
                  "snapshot packets held %llu, filled %llu, given up %llu; snapshots %llu "
                  "(%llu broken), %llu book checks\n",
                  (unsigned long long)seed, (unsigned long long)packets,
                  (unsigned long long)L->lost_one, (unsigned long long)L->lost_both,
                  (unsigned long long)L->reordered, (unsigned long long)L->duplicated,
                  (unsigned long long)c->held, (unsigned long long)c->gaps_filled,
                  (unsigned long long)c->gaps, (unsigned long long)c->snapshot_held,
                  (unsigned long long)c->snapshot_filled, (unsigned long long)c->snapshot_given_up,
                  (unsigned long long)c->snapshots, (unsigned long long)c->snapshots_broken,
                  (unsigned long long)h->checks);
    free(h->feed);
    free(h->books);
    free(h->reg);
    free(L);
    free(h);
}

static uint64_t packets_per_run(void)
{
    const char *s = getenv("TP_EOBI_DIFF_PACKETS");
    return s ? strtoull(s, NULL, 10) : 200000;
}

static void test_diff_seed_1(void **state)
{
    (void)state;
    run(0x9E3779B97F4A7C15ull, packets_per_run());
}

static void test_diff_seed_2(void **state)
{
    (void)state;
    run(0xD1B54A32D192ED03ull, packets_per_run());
}

/*
 * Two-line sessions: seed 1, seed 2, then seeds 3..20 as k times seed 1 (mod 2^64), those with
 * half the packets (the suite's time). Seeds 2, 5 and 8 caught a later snapshot pass's
 * packet taken as the continuation of a pass whose tail was lost on both lines (refusals).
 */
#define TWO_LINE_SEED(k) ((k) == 2 ? 0xD1B54A32D192ED03ull : (uint64_t)(k)*0x9E3779B97F4A7C15ull)
#define TWO_LINE_TEST(k)                                                                           \
    static void test_diff_two_lines_seed_##k(void **state)                                         \
    {                                                                                              \
        (void)state;                                                                               \
        run_lines(TWO_LINE_SEED(k), (k) <= 2 ? packets_per_run() : packets_per_run() / 2);         \
    }
TWO_LINE_TEST(1)
TWO_LINE_TEST(2)
TWO_LINE_TEST(3)
TWO_LINE_TEST(4)
TWO_LINE_TEST(5)
TWO_LINE_TEST(6)
TWO_LINE_TEST(7)
TWO_LINE_TEST(8)
TWO_LINE_TEST(9)
TWO_LINE_TEST(10)
TWO_LINE_TEST(11)
TWO_LINE_TEST(12)
TWO_LINE_TEST(13)
TWO_LINE_TEST(14)
TWO_LINE_TEST(15)
TWO_LINE_TEST(16)
TWO_LINE_TEST(17)
TWO_LINE_TEST(18)
TWO_LINE_TEST(19)
TWO_LINE_TEST(20)

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff_seed_1),
        cmocka_unit_test(test_diff_seed_2),
        cmocka_unit_test(test_diff_two_lines_seed_1),
        cmocka_unit_test(test_diff_two_lines_seed_2),
        cmocka_unit_test(test_diff_two_lines_seed_3),
        cmocka_unit_test(test_diff_two_lines_seed_4),
        cmocka_unit_test(test_diff_two_lines_seed_5),
        cmocka_unit_test(test_diff_two_lines_seed_6),
        cmocka_unit_test(test_diff_two_lines_seed_7),
        cmocka_unit_test(test_diff_two_lines_seed_8),
        cmocka_unit_test(test_diff_two_lines_seed_9),
        cmocka_unit_test(test_diff_two_lines_seed_10),
        cmocka_unit_test(test_diff_two_lines_seed_11),
        cmocka_unit_test(test_diff_two_lines_seed_12),
        cmocka_unit_test(test_diff_two_lines_seed_13),
        cmocka_unit_test(test_diff_two_lines_seed_14),
        cmocka_unit_test(test_diff_two_lines_seed_15),
        cmocka_unit_test(test_diff_two_lines_seed_16),
        cmocka_unit_test(test_diff_two_lines_seed_17),
        cmocka_unit_test(test_diff_two_lines_seed_18),
        cmocka_unit_test(test_diff_two_lines_seed_19),
        cmocka_unit_test(test_diff_two_lines_seed_20),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
