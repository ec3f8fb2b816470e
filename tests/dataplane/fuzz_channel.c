/*
 * libFuzzer target: a channel's receive pipeline (dataplane/daemon/channel.h) fed arbitrary
 * packets on its lines with time passing: frame checks, A/B arbitration (dataplane/lines),
 * MoldUDP64 re-requests and give-ups (dataplane/feeds/itch/mold_recovery), MDP3 snapshot recovery
 * and replay (dataplane/feeds/mdp3/mdp3_recovery), the ITCH and MDP3 feeds, books and publisher,
 * inside and outside rx bursts. Real registry, books, publisher and bus (segments in /dev/shm,
 * their names removed as soon as they are mapped: a crash leaves none behind).
 *
 * Input: byte 0 configures the channel (bit 0: MDP3, else ITCH; bit 1: a re-request server,
 * for MDP3 audit_always; bit 2: MDP3 snapshot lines; bit 3: definition lines; bit 4: order-level
 * MDP3 books; bit 5: adopt the first packet's sequence, else start at 1, and for MDP3 with
 * snapshot lines the order-level snapshot lines too; bits 6-7: held packets 4, 16, 64 or 4096).
 * Then records: a control byte (bits 0-2: line role, 6 the re-request replies (ITCH) or an
 * order-level snapshot line, A or B by the time step's low bit (MDP3), 7 for no packet; bit 3:
 * run the channel's
 * timers after it; bit 4: begin or end an rx burst before it; bits 5-7: time scale e), a time
 * step byte (the clock advances step << 3e ticks first), then for a packet its length (u16
 * big-endian) and bytes. Seeds: small captures of tickplane-sim (fuzz_channel_seeds.py).
 *
 * What the channel promises, checked after every call: each packet handle is given back through
 * io.release exactly once, and only one the channel kept (tp_channel_packet returned true, or it
 * is given back inside that call); io.view is asked only about held handles; a packet not kept
 * is never read again (its bytes are freed at once: ASan); after the burst ends and
 * tp_channel_stop, no handle is left. Counters never decrease; packets counts every offer and
 * malformed stays within it; the expected sequence never goes back within an epoch; an open gap
 * is never empty or reversed; every re-request is a MoldUDP64 request of the channel's session
 * for a non-empty piece of the open gap, at most max_messages long, one per request counted;
 * membership changes alternate join/leave per line; ITCH: the order events published between
 * channel events follow the message sequence, and no more messages are applied than distinct
 * (epoch, sequence) pairs were offered (none twice); MDP3: the recovery's stale count equals the
 * instruments the feed has stale, its count of incomplete order views the feed's flagged ones,
 * and it listens to the snapshot lines (and the order-level ones) exactly when its joins say so.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "channel.h"
#include "channel_bus.h"
#include "moldudp64.h"
#include "net_bytes.h"
#include "publisher.h"
#include "tp_books.h"
#include "tp_instruments.h"

#define INSTRUMENTS   16 /* the test bus's state table (channel_bus.c) */
#define MAX_PACKETS   4096
#define GAP_WAIT      100 /* ticks */
#define RETRY         1000
#define GIVE_UP       20000
#define MAX_MESSAGES  8
#define REPLAY_BYTES  2048
#define CHANNEL_INDEX 3
#define MSG_SLOTS     16384 /* distinct ITCH messages of an input (power of two) */

#define check(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_channel: %s:%d: %s\n", __FILE__, __LINE__, #cond);               \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* A packet handed to the channel: its handle is its address in the pool. */
enum pkt_state { PKT_FREE, PKT_OFFERED, PKT_HELD, PKT_RELEASED };

struct pkt {
    uint8_t *payload; /* malloc'd, exactly len bytes */
    uint16_t len;
    uint64_t rx_tsc;
    enum pkt_state state;
};

static struct {
    struct tp_bus_writer *bus;
    struct tp_channel *ch;
    struct pkt pool[MAX_PACKETS];
    unsigned n_pkts;
    uint64_t rerequests; /* send_rerequest calls */
    bool joined[TP_ROLES];
    bool have_seq; /* ITCH: an order event was published since the last channel event */
    uint64_t last_seq;
    /* ITCH: every (arbiter epoch, message sequence) offered in a well-framed packet, once. */
    struct msg_slot {
        uint64_t seq;
        uint32_t epoch;
        uint32_t input; /* the input that filled the slot (slots of older ones are free) */
    } msgs[MSG_SLOTS];
    uint32_t input;
    uint32_t distinct;
    bool msgs_full; /* more than the table holds: the bound is not checked */
} fz;

static struct pkt *pkt_of(void *handle)
{
    struct pkt *p = handle;
    check(p >= fz.pool && p < fz.pool + fz.n_pkts);
    return p;
}

static void view(void *ctx, void *handle, const uint8_t **payload, uint16_t *len, uint64_t *rx_tsc)
{
    (void)ctx;
    struct pkt *p = pkt_of(handle);
    check(p->state == PKT_HELD);
    *payload = p->payload;
    *len = p->len;
    *rx_tsc = p->rx_tsc;
}

static void release(void *ctx, void *handle)
{
    (void)ctx;
    struct pkt *p = pkt_of(handle);
    check(p->state == PKT_OFFERED || p->state == PKT_HELD);
    free(p->payload);
    p->payload = NULL;
    p->state = PKT_RELEASED;
}

/* A re-request: the channel's session, a non-empty piece of the gap open now. */
static int send_rerequest(void *ctx, uint32_t channel, const uint8_t *payload, size_t len)
{
    (void)ctx;
    struct tp_channel *ch = fz.ch;
    struct tp_arb_gap gap;
    check(channel == CHANNEL_INDEX && len == TP_MOLD_REQUEST_LEN);
    check(memcmp(payload, ch->session, TP_MOLD_SESSION_LEN) == 0);
    uint64_t seq = tp_load_be64(payload + 10);
    uint16_t count = tp_load_be16(payload + 18);
    check(count >= 1 && count <= MAX_MESSAGES);
    check(tp_arb_current_gap(ch->arb, &gap));
    check(seq >= gap.from && seq + count <= gap.to);
    fz.rerequests++;
    return 0;
}

static void membership(void *ctx, uint32_t channel, enum tp_line_role role, bool join)
{
    (void)ctx;
    check(channel == CHANNEL_INDEX);
    check(role == TP_ROLE_SNAP_A || role == TP_ROLE_SNAP_B || role == TP_ROLE_DEF_A ||
          role == TP_ROLE_DEF_B ||
          (fz.ch->recovery.mbo_lines && (role == TP_ROLE_SMBO_A || role == TP_ROLE_SMBO_B)));
    check(fz.joined[role] != join);
    fz.joined[role] = join;
}

/* ---- invariants --------------------------------------------------------------------------- */

/* Counters as last seen, to check that none decreases. */
struct seen {
    struct tp_channel_counters ch;
    struct tp_arb_counters arb;
    struct tp_mold_recovery_counters mold;
    struct tp_mdp3_recovery_counters mdp3;
    uint64_t offers;
    uint64_t expected;
    uint32_t epoch;
};

static void never_less(const void *before, const void *now, size_t size)
{
    const uint64_t *a = before, *b = now;
    for (size_t i = 0; i < size / sizeof(uint64_t); i++)
        check(b[i] >= a[i]);
}

/*
 * Reads what the publisher wrote since the last call. ITCH: the order events of a session come
 * in message sequence (a message applied twice, or after a later one, goes back), a channel event
 * (reset, gap) starts afresh. The ring's tail moves at the end of a burst: read between bursts.
 */
static void read_published(bool check_order)
{
    struct test_record r;
    while (test_bus_next(&r)) {
        if (r.kind == TEST_REC_CHANNEL_EVENT) {
            fz.have_seq = false;
        } else if (r.kind == TEST_REC_ORDER && check_order) {
            check(!fz.have_seq || r.venue_seq >= fz.last_seq);
            fz.have_seq = true;
            fz.last_seq = r.venue_seq;
        }
    }
}

/* Notes the messages [seq, seq + count) of an arbiter epoch as offered. */
static void note_messages(uint32_t epoch, uint64_t seq, uint32_t count)
{
    for (uint32_t i = 0; i < count && !fz.msgs_full; i++) {
        uint64_t h = ((seq + i) * 0x9e3779b97f4a7c15ull) ^ epoch;
        uint32_t k = (uint32_t)(h >> 32) & (MSG_SLOTS - 1);
        while (fz.msgs[k].input == fz.input &&
               (fz.msgs[k].seq != seq + i || fz.msgs[k].epoch != epoch))
            k = (k + 1) & (MSG_SLOTS - 1);
        if (fz.msgs[k].input == fz.input)
            continue;
        fz.msgs[k] = (struct msg_slot){.seq = seq + i, .epoch = epoch, .input = fz.input};
        fz.msgs_full = ++fz.distinct > MSG_SLOTS / 2;
    }
}

static void check_channel(struct seen *s)
{
    struct tp_channel *ch = fz.ch;
    read_published(ch->params.protocol == TP_CHANNEL_ITCH);
    never_less(&s->ch, &ch->counters, sizeof(s->ch));
    /* The arbiter's block is padded to a cache line: compare its counters only. */
    never_less(&s->arb, tp_arb_counters(ch->arb),
               offsetof(struct tp_arb_counters, resets) + sizeof(uint64_t));
    never_less(&s->mold, &ch->mold.counters, sizeof(s->mold));
    s->ch = ch->counters;
    s->arb = *tp_arb_counters(ch->arb);
    s->mold = ch->mold.counters;
    check(ch->counters.packets == s->offers && ch->counters.malformed <= s->offers);
    check(ch->mold.counters.requests == fz.rerequests);

    uint32_t epoch = tp_arb_epoch(ch->arb);
    uint64_t expected = tp_arb_expected(ch->arb);
    check(epoch >= s->epoch);
    if (epoch == s->epoch)
        check(expected >= s->expected);
    s->epoch = epoch;
    s->expected = expected;
    struct tp_arb_gap gap;
    if (tp_arb_current_gap(ch->arb, &gap))
        check(gap.from < gap.to);

    /* No message is applied twice: never more applied than distinct ones offered. */
    if (ch->params.protocol == TP_CHANNEL_ITCH && !fz.msgs_full)
        check(ch->counters.messages <= fz.distinct);
    if (ch->params.protocol != TP_CHANNEL_MDP3)
        return;
    never_less(&s->mdp3, &ch->recovery.counters, sizeof(s->mdp3));
    s->mdp3 = ch->recovery.counters;
    uint32_t stale = 0, incomplete = 0;
    for (uint32_t id = 0; id < INSTRUMENTS; id++) {
        const struct tp_mdp3_instrument_state *st = tp_mdp3_feed_state(&ch->mdp3, id);
        stale += st != NULL && st->stale;
        incomplete += st != NULL && st->orders_flagged;
    }
    check(ch->recovery.stale == stale);
    check(ch->recovery.orders_incomplete == incomplete);
    if (ch->params.has_snapshot)
        check(ch->recovery.joined == fz.joined[TP_ROLE_SNAP_A] &&
              ch->recovery.joined == fz.joined[TP_ROLE_SNAP_B]);
    if (ch->recovery.mbo_lines)
        check(ch->recovery.joined == fz.joined[TP_ROLE_SMBO_A] &&
              ch->recovery.joined == fz.joined[TP_ROLE_SMBO_B]);
    /* Auditing all session: the snapshot lines are never left. */
    if (ch->params.has_snapshot && ch->params.audit_always)
        check(ch->recovery.joined);
    check(ch->mdp3.counters.snapshot_mismatch <= ch->mdp3.counters.snapshots_audited);
}

/* ---- the driver --------------------------------------------------------------------------- */

static void *zalloc(size_t size)
{
    size = (size + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, size ? size : 64);
    check(p != NULL);
    memset(p, 0, size);
    return p;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char instance[64];
    snprintf(instance, sizeof(instance), "tpfuzzch%d", (int)getpid());
    fz.bus = test_bus_open(instance);
    check(fz.bus != NULL);
    return 0;
}

/* Offers one packet (a fresh copy of exactly len bytes) and settles its handle. */
static void offer(enum tp_line_role role, const uint8_t *bytes, uint16_t len, uint64_t now,
                  struct seen *s)
{
    if (fz.n_pkts == MAX_PACKETS)
        return;
    struct pkt *p = &fz.pool[fz.n_pkts++];
    *p = (struct pkt){.payload = malloc(len ? len : 1), .len = len, .rx_tsc = now};
    check(p->payload != NULL);
    memcpy(p->payload, bytes, len);
    p->state = PKT_OFFERED;
    s->offers++;
    struct tp_mold_packet mold;
    int kind = fz.ch->params.protocol == TP_CHANNEL_ITCH ? tp_mold_parse(&mold, bytes, len) : -1;
    uint64_t malformed = fz.ch->counters.malformed;
    bool kept = tp_channel_packet(fz.ch, role, p->payload, len, p, now);
    /* A packet the channel framed belongs to the arbiter's epoch after the offer (a reset it
     * caused drops what was held before). */
    if (kind == TP_MOLD_MESSAGES && fz.ch->counters.malformed == malformed)
        note_messages(tp_arb_epoch(fz.ch->arb), mold.sequence, mold.count);
    if (kept) {
        /* Kept: held until released (it may already be, applied within the call). */
        if (p->state == PKT_OFFERED)
            p->state = PKT_HELD;
        return;
    }
    /* Not kept: the caller frees it now; the channel must not have released it. */
    check(p->state == PKT_OFFERED);
    free(p->payload);
    p->payload = NULL;
    p->state = PKT_FREE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint32_t held_max[4] = {4, 16, 64, 4096};
    if (size < 1)
        return 0;
    uint8_t cfg = data[0];
    bool mdp3 = cfg & 1;
    memset(fz.joined, 0, sizeof(fz.joined));
    fz.n_pkts = 0;
    fz.rerequests = 0;
    read_published(false);
    fz.have_seq = false;
    fz.input++;
    fz.distinct = 0;
    fz.msgs_full = false;

    struct tp_instruments_params ip = {.capacity = INSTRUMENTS, .itch_venues = 1};
    struct tp_books_params bp = {.instruments = INSTRUMENTS,
                                 .max_orders = 256,
                                 .levels_per_side = 16,
                                 .mbp_depth = 10,
                                 .implied_depth = 2};
    struct tp_instruments *registry = zalloc(tp_instruments_memsize(&ip));
    struct tp_books *books = zalloc(tp_books_memsize(&bp));
    check(tp_instruments_init(registry, &ip) == 0 && tp_books_init(books, &bp) == 0);
    struct tp_publisher_params pp = {.bus = fz.bus,
                                     .books = books,
                                     .registry = registry,
                                     .instruments = INSTRUMENTS,
                                     .depth = 4};
    struct tp_publisher *pub = zalloc(tp_publisher_memsize(&pp));
    check(tp_publisher_init(pub, &pp) == 0);
    struct tp_channel_params cp = {
        .protocol = mdp3 ? TP_CHANNEL_MDP3 : TP_CHANNEL_ITCH,
        .index = CHANNEL_INDEX,
        .channel_id = 310,
        .held_max = held_max[cfg >> 6],
        .gap_wait_tsc = GAP_WAIT,
        .start_seq = (cfg & 0x20) ? 0 : 1,
        .mold = {.retry_tsc = RETRY, .give_up_tsc = GIVE_UP, .max_messages = MAX_MESSAGES},
        .registry = registry,
        .books = books,
        .mdp3_book_type = (cfg & 0x10) ? TP_BOOK_TYPE_MBP_MBO : TP_BOOK_TYPE_MBP,
        .has_snapshot = mdp3 && (cfg & 4),
        .has_definitions = mdp3 && (cfg & 8),
        .has_snapshot_mbo = mdp3 && (cfg & 4) && (cfg & 0x20),
        .audit_always = mdp3 && (cfg & 2), /* the re-request bit is ITCH's */
        .replay_bytes = REPLAY_BYTES,
        .publisher = pub,
        .io = {.view = view,
               .release = release,
               .send_rerequest = (cfg & 2) ? send_rerequest : NULL,
               .membership = membership},
    };
    fz.ch = zalloc(tp_channel_memsize(&cp));
    check(tp_channel_init(fz.ch, &cp) == 0);
    /* The lines a channel listens to at start (channel.c joins them through the config). */
    fz.joined[TP_ROLE_SNAP_A] = fz.joined[TP_ROLE_SNAP_B] = cp.has_snapshot;
    fz.joined[TP_ROLE_DEF_A] = fz.joined[TP_ROLE_DEF_B] = cp.has_definitions;
    fz.joined[TP_ROLE_SMBO_A] = fz.joined[TP_ROLE_SMBO_B] = cp.has_snapshot_mbo;

    struct seen s = {0};
    s.epoch = tp_arb_epoch(fz.ch->arb);
    s.expected = tp_arb_expected(fz.ch->arb);
    uint64_t now = 1;
    bool in_burst = false;
    size_t at = 1;
    while (at + 2 <= size) {
        uint8_t ctl = data[at], step = data[at + 1];
        at += 2;
        now += (uint64_t)step << (3 * (ctl >> 5));
        if (ctl & 0x10) {
            if (in_burst)
                tp_publisher_end_burst(pub);
            else
                tp_publisher_begin_burst(pub);
            in_burst = !in_burst;
            check_channel(&s);
        }
        unsigned role = ctl & 7;
        if (role != 7) {
            if (at + 2 > size)
                break;
            size_t len = tp_load_be16(data + at);
            at += 2;
            len = len < size - at ? len : size - at;
            enum tp_line_role line = (enum tp_line_role)role;
            if (role == 6)
                line = !mdp3 ? TP_ROLE_RETRANS : (step & 1) ? TP_ROLE_SMBO_B : TP_ROLE_SMBO_A;
            offer(line, data + at, (uint16_t)len, now, &s);
            at += len;
            check_channel(&s);
        }
        if (ctl & 8) {
            tp_channel_poll(fz.ch, now);
            check_channel(&s);
        }
    }
    if (in_burst)
        tp_publisher_end_burst(pub);
    check_channel(&s);
    uint32_t marked = tp_channel_stop(fz.ch, now);
    check(marked <= tp_instruments_count(registry));
    read_published(false);
    for (unsigned i = 0; i < fz.n_pkts; i++)
        check(fz.pool[i].state == PKT_FREE || fz.pool[i].state == PKT_RELEASED);

    free(fz.ch);
    free(pub);
    free(books);
    free(registry);
    return 0;
}
