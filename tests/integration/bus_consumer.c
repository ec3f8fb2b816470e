/*
 * bus_consumer: an integration-test consumer of a running tickplane instance.
 *
 *   bus_consumer --instance NAME --truth T.json [--dir D] [--late] [--die-after N]
 *                [--idle-ms MS] [--timeout-s S] [--ready FILE] [--venue cme|nasdaq|eurex]
 *                [--until FILE] [--orders]
 *
 * It attaches to the instance's bus, rebuilds every book from the published level changes
 * (BookUpdate events, and the levels OrderEvents of order-only books carry; tpout LevelAction
 * semantics), and when the daemon has gone quiet (no packet for idle-ms),
 * compares both its own books and the conflated state table with the simulator's ground truth,
 * level by level (price, quantity, orders). Prints one JSON line and exits 0 when both match
 * ("flagged": instruments a status event marked RECOVERING or STALE during the run).
 *   --late       join mid-stream: start from the state table (entries carry the bus sequence
 *                they reflect) and apply only ring events newer than each entry;
 *   --die-after  kill itself with SIGKILL after N events (the daemon must not notice);
 *   --ready      create FILE once attached (the test starts the traffic after that);
 *   --until      the daemon's quiet spells do not end the run before FILE exists (the test
 *                creates it when the traffic is over: a loaded machine may stall a sender);
 *   --venue      compare only instruments of that venue (two simulators name their instruments
 *                alike: an instance running ITCH and MDP3 channels has both); eurex: EOBI
 *                instruments are named by SecurityID in decimal, the truth's security_id;
 *   --orders     also build the order-level view from the OrderEvents (order_view.h) and
 *                compare it with the truth's orders, order by order, for every book the state
 *                table does not flag (RECOVERING, STALE, or ORDERS_INCOMPLETE: counted apart);
 *   --latency    measure, per event, TSC now minus the event's recvTsc (the daemon's rx_burst
 *                time) when the callback sees it, and print the histogram in ns (benchmark).
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <x86intrin.h>

#include "bus/bus.h"
#include "order_view.h"
#include "tpout_sbe.h"
#include "truth_levels.h"
#include "util/histogram.h"

#define MAX_INSTRUMENTS 4096
#define MAX_LEVELS      64

struct side {
    unsigned n;
    struct tp_level l[MAX_LEVELS];
};

struct book {
    struct side s[2];
    uint64_t applied_after; /* late join: apply only ring records with a larger sequence */
    uint8_t seen;           /* 0: no book event yet, 1: the last was flagged, 2: healthy */
};

/* Book events by their recovery flags: a late joiner's first events must all be flagged (the
 * books are not the venue's until the snapshot is applied), and none flagged after healthy. */
static uint64_t healthy_first, relapses, flagged_events, healthy_events;

static struct book books[MAX_INSTRUMENTS];
/* Instruments a status event flagged RECOVERING or STALE at some point of the run. */
static bool flagged[MAX_INSTRUMENTS];

struct options {
    const char *instance;
    const char *dir;
    const char *truth;
    const char *ready;
    const char *until;
    bool late;
    bool latency;
    bool orders;
    uint64_t die_after;
    uint64_t idle_ms;
    uint64_t timeout_s;
    int venue; /* tpout venue (0 cme, 1 nasdaq, 2 eurex), -1: any */
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* tpout LevelAction on one side: insert, change (replace), remove, clear (empty the side). */
static void apply_level(struct side *s, unsigned action, unsigned level, int64_t price, int64_t qty,
                        int32_t orders)
{
    if (action == 3) {
        s->n = 0;
        return;
    }
    if (level == 0 || level > MAX_LEVELS)
        return;
    unsigned i = level - 1;
    struct tp_level v = {.price = price, .qty = qty, .orders = orders};
    switch (action) {
    case 0:
        if (i > s->n)
            i = s->n;
        memmove(&s->l[i + 1], &s->l[i], (MAX_LEVELS - 1 - i) * sizeof(s->l[0]));
        s->l[i] = v;
        if (s->n < MAX_LEVELS)
            s->n++;
        break;
    case 1:
        /* Levels are slots (MDP3): a change may fill a slot below the last one in use. */
        for (; s->n < i; s->n++)
            s->l[s->n] = (struct tp_level){0};
        s->l[i] = v;
        if (s->n == i)
            s->n++;
        break;
    case 2:
        if (i < s->n) {
            memmove(&s->l[i], &s->l[i + 1], (s->n - i - 1) * sizeof(s->l[0]));
            s->n--;
        }
        break;
    default:
        break;
    }
}

/*
 * One record's level changes: a BookUpdate's, or those an OrderEvent of an order-only book
 * carries in its `levels` group (tpout version 3). Both messages start with the same event header
 * and their level entries have one layout; an implied BookUpdate leaves the books alone.
 */
static void apply_level_changes(const struct tp_ring_record *rec)
{
    const uint8_t *msg = tp_ring_payload(rec);
    size_t len = rec->length - TP_RING_RECORD_HEADER;
    if (len < TPOUT_MESSAGE_HEADER_ENCODED_LENGTH)
        return;
    uint16_t template_id = tpout_message_header_template_id(msg);
    uint16_t block = tpout_message_header_block_length(msg);
    const uint8_t *body = msg + TPOUT_MESSAGE_HEADER_ENCODED_LENGTH;
    size_t body_len = len - TPOUT_MESSAGE_HEADER_ENCODED_LENGTH;
    if (template_id == TPOUT_BOOK_UPDATE_TEMPLATE_ID) {
        struct tpout_book_update m;
        if (tpout_book_update_wrap_for_decode(&m, body, body_len, block,
                                              tpout_message_header_version(msg)) < 0 ||
            (tpout_book_update_flags(&m) & 0x10) /* implied */)
            return;
    } else if (template_id == TPOUT_ORDER_EVENT_TEMPLATE_ID) {
        struct tpout_order_event m;
        if (tpout_order_event_wrap_for_decode(&m, body, body_len, block,
                                              tpout_message_header_version(msg)) < 0 ||
            tpout_message_header_version(msg) < TPOUT_ORDER_EVENT_LEVELS_SINCE_VERSION)
            return;
    } else {
        return;
    }
    uint32_t id = tpout_load_u32(body + TPOUT_BOOK_UPDATE_INSTRUMENT_ID_OFFSET);
    if (id >= MAX_INSTRUMENTS || rec->sequence <= books[id].applied_after)
        return;
    /* Both messages carry EventFlags at the same offset. */
    bool flagged =
        (body[TPOUT_BOOK_UPDATE_FLAGS_OFFSET] & (TP_EVENT_F_RECOVERING | TP_EVENT_F_STALE)) != 0;
    if (books[id].seen == 0)
        healthy_first += !flagged;
    else if (books[id].seen == 2 && flagged)
        relapses++;
    books[id].seen = flagged ? 1 : 2;
    flagged_events += flagged;
    healthy_events += !flagged;
    const uint8_t *g = body + block;
    const uint8_t *end = msg + len;
    if (g + 4 > end)
        return;
    uint16_t entry = tpout_load_u16(g), count = tpout_load_u16(g + 2);
    g += 4;
    for (unsigned i = 0; i < count && g + entry <= end; i++, g += entry) {
        int32_t orders = (int32_t)tpout_load_u32(g + 4);
        apply_level(&books[id].s[g[0] & 1], g[2], g[1], (int64_t)tpout_load_u64(g + 8),
                    (int64_t)tpout_load_u64(g + 16), orders);
    }
}

/* Notes the instrument of a status event that flags its book recovering or stale. */
static void note_status_flags(const struct tp_ring_record *rec)
{
    const uint8_t *msg = tp_ring_payload(rec);
    size_t len = rec->length - TP_RING_RECORD_HEADER;
    if (len < TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + TPOUT_INSTRUMENT_STATUS_BLOCK_LENGTH ||
        tpout_message_header_template_id(msg) != TPOUT_INSTRUMENT_STATUS_TEMPLATE_ID)
        return;
    const uint8_t *body = msg + TPOUT_MESSAGE_HEADER_ENCODED_LENGTH;
    uint32_t id = tpout_load_u32(body + TPOUT_INSTRUMENT_STATUS_INSTRUMENT_ID_OFFSET);
    if (id < MAX_INSTRUMENTS &&
        (body[TPOUT_INSTRUMENT_STATUS_FLAGS_OFFSET] & (TP_EVENT_F_RECOVERING | TP_EVENT_F_STALE)))
        flagged[id] = true;
}

/* Compares one side against the truth's array (empty slots skipped); returns mismatches. */
static int parse(int argc, char **argv, struct options *o)
{
    static const struct option opts[] = {{"instance", required_argument, NULL, 'i'},
                                         {"dir", required_argument, NULL, 'd'},
                                         {"truth", required_argument, NULL, 't'},
                                         {"ready", required_argument, NULL, 'r'},
                                         {"late", no_argument, NULL, 'l'},
                                         {"die-after", required_argument, NULL, 'k'},
                                         {"idle-ms", required_argument, NULL, 'm'},
                                         {"timeout-s", required_argument, NULL, 's'},
                                         {"latency", no_argument, NULL, 'L'},
                                         {"venue", required_argument, NULL, 'v'},
                                         {"until", required_argument, NULL, 'u'},
                                         {"orders", no_argument, NULL, 'o'},
                                         {NULL, 0, NULL, 0}};
    o->dir = "/dev/shm";
    o->venue = -1;
    o->idle_ms = 700;
    o->timeout_s = 50;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'i':
            o->instance = optarg;
            break;
        case 'd':
            o->dir = optarg;
            break;
        case 't':
            o->truth = optarg;
            break;
        case 'r':
            o->ready = optarg;
            break;
        case 'l':
            o->late = true;
            break;
        case 'L':
            o->latency = true;
            break;
        case 'o':
            o->orders = true;
            break;
        case 'k':
            o->die_after = strtoull(optarg, NULL, 10);
            break;
        case 'm':
            o->idle_ms = strtoull(optarg, NULL, 10);
            break;
        case 's':
            o->timeout_s = strtoull(optarg, NULL, 10);
            break;
        case 'u':
            o->until = optarg;
            break;
        case 'v': {
            static const char *const venues[] = {"cme", "nasdaq", "eurex"};
            o->venue = -1;
            for (int v = 0; v < 3; v++)
                if (strcmp(optarg, venues[v]) == 0)
                    o->venue = v;
            if (o->venue < 0)
                return -EINVAL;
            break;
        }
        default:
            return -EINVAL;
        }
    }
    return o->instance && o->truth && !(o->orders && o->late) ? 0 : -EINVAL;
}

/* Late join: every entry's levels, with the ring sequence it reflects. */
static void load_state(const struct tp_state_table *t)
{
    static struct tp_instrument_state st;
    for (uint32_t id = 0; id < t->instruments && id < MAX_INSTRUMENTS; id++) {
        if (tp_state_read(t, id, &st, 1000) != 0)
            continue;
        struct book *b = &books[id];
        b->applied_after = st.book.bus_sequence;
        b->s[0].n = st.book.bid_levels;
        b->s[1].n = st.book.ask_levels;
        memcpy(b->s[0].l, st.bids, st.book.bid_levels * sizeof(st.bids[0]));
        memcpy(b->s[1].l, st.asks, st.book.ask_levels * sizeof(st.asks[0]));
    }
}

int main(int argc, char **argv)
{
    struct options o = {0};
    if (parse(argc, argv, &o) != 0) {
        fprintf(stderr, "usage: bus_consumer --instance NAME --truth T.json [--dir D] [--late] "
                        "[--die-after N] [--idle-ms MS] [--timeout-s S] [--ready FILE] "
                        "[--venue cme|nasdaq|eurex] [--until FILE] [--orders]\n");
        return 2;
    }
    json_error_t jerr;
    json_t *truth = json_load_file(o.truth, 0, &jerr);
    if (truth == NULL) {
        fprintf(stderr, "bus_consumer: %s: %s\n", o.truth, jerr.text);
        return 2;
    }
    double deadline = now_s() + (double)o.timeout_s;
    struct tp_bus_reader r;
    char err[256];
    while (tp_bus_reader_open(&r, o.dir, o.instance, err, sizeof(err)) != 0) {
        if (now_s() > deadline) {
            fprintf(stderr, "bus_consumer: %s\n", err);
            return 1;
        }
        usleep(20000);
    }
    if (r.n_rings != 1) {
        /* The raw reader follows one ring; several data lcores are libtickplane's to merge. */
        fprintf(stderr, "bus_consumer: instance %s has %u rings, this consumer reads one\n",
                o.instance, r.n_rings);
        return 2;
    }
    static uint8_t batch[1 << 20];
    struct tp_ring_reader rr;
    if (tp_ring_reader_init(&rr, r.ring_mem, batch, sizeof(batch)) != 0) {
        fprintf(stderr, "bus_consumer: bad ring\n");
        return 1;
    }
    if (o.late)
        load_state(r.state);
    if (o.ready) {
        FILE *f = fopen(o.ready, "w");
        if (f)
            fclose(f);
    }
    static struct tp_histogram latency;
    tp_hist_reset(&latency);
    const struct tp_counter *rx = NULL;
    uint64_t events = 0, lost = 0, last_rx = 0;
    double quiet_since = now_s();
    for (;;) {
        const struct tp_ring_record *rec;
        uint64_t n_lost;
        int rc = tp_ring_read(&rr, &rec, &n_lost);
        if (rc == TP_RING_RECORD) {
            /* Definitions carry no receive time (recvTsc 0): not a packet's latency. */
            if (o.latency && rec->type == TP_REC_SBE &&
                rec->length >= TP_RING_RECORD_HEADER + TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + 24) {
                const uint8_t *b =
                    (const uint8_t *)tp_ring_payload(rec) + TPOUT_MESSAGE_HEADER_ENCODED_LENGTH;
                uint64_t rx = tpout_load_u64(b + 16);
                if (rx != 0)
                    tp_hist_record(&latency, __rdtsc() - rx);
            }
            if (rec->type == TP_REC_SBE) {
                apply_level_changes(rec);
                note_status_flags(rec);
                if (o.orders)
                    tp_test_orders_apply(rec);
            }
            if (++events == o.die_after)
                raise(SIGKILL);
            continue;
        }
        if (rc == TP_RING_LAPPED) {
            lost += n_lost;
            continue;
        }
        /* Empty ring: is the daemon still receiving? */
        if (rx == NULL)
            rx = tp_counters_find(r.counters, "dp.rx_packets");
        uint64_t v = rx ? tp_counter_get(rx) : 0;
        if (v != last_rx || v == 0 || (o.until != NULL && access(o.until, F_OK) != 0)) {
            last_rx = v;
            quiet_since = now_s();
        }
        if (tp_bus_reader_stale(&r) || (now_s() - quiet_since) * 1000 >= (double)o.idle_ms ||
            now_s() > deadline)
            break;
        if (!o.latency)
            usleep(1000); /* a latency run busy-polls, as a strategy would */
    }

    /* Compare the ring-built books and the state table with the truth, by symbol. */
    static struct tp_instrument_state st;
    uint32_t by_symbol[MAX_INSTRUMENTS];
    unsigned n_ids = 0;
    for (uint32_t id = 0; id < r.state->instruments && id < MAX_INSTRUMENTS; id++)
        by_symbol[n_ids++] = id;
    int ring_bad = 0, state_bad = 0, missing = 0, stale = 0;
    int orders_compared = 0, order_bad = 0, orders_incomplete = 0;
    size_t i;
    json_t *inst;
    json_array_foreach(json_object_get(truth, "instruments"), i, inst)
    {
        const char *symbol = json_string_value(json_object_get(inst, "symbol"));
        /* The simulator names MDP3 instruments by their product ("AAAA"), CME symbols add the
         * contract month ("AAAAZ6"): a prefix matches. EOBI names them by SecurityID: all of
         * it. */
        char security_id[24];
        bool eurex = o.venue == TPOUT_VENUE_EUREX;
        if (eurex) {
            snprintf(security_id, sizeof(security_id), "%lld",
                     (long long)json_integer_value(json_object_get(inst, "security_id")));
            symbol = security_id;
        }
        size_t len = strlen(symbol);
        int found = -1;
        for (unsigned k = 0; k < n_ids && found < 0; k++) {
            if (tp_state_read(r.state, by_symbol[k], &st, 1000) == 0 && st.book.symbol[0] &&
                (o.venue < 0 || st.book.venue == o.venue) &&
                strncmp(st.book.symbol, symbol, len) == 0 &&
                (!eurex || len == sizeof(st.book.symbol) || st.book.symbol[len] == '\0' ||
                 st.book.symbol[len] == ' '))
                found = (int)by_symbol[k];
        }
        if (found < 0) {
            missing++;
            fprintf(stderr, "%s: not in the state table\n", symbol);
            continue;
        }
        /* A book still waiting for recovery says so; it cannot be compared. */
        if (st.book.flags & (TP_EVENT_F_RECOVERING | TP_EVENT_F_STALE)) {
            stale++;
            continue;
        }
        json_t *bids = json_object_get(inst, "bids"), *asks = json_object_get(inst, "asks");
        ring_bad += tp_test_compare_side(symbol, "ring bid", bids, books[found].s[0].l,
                                         books[found].s[0].n, UINT32_MAX, true) != 0;
        ring_bad += tp_test_compare_side(symbol, "ring ask", asks, books[found].s[1].l,
                                         books[found].s[1].n, UINT32_MAX, true) != 0;
        state_bad += tp_test_compare_side(symbol, "state bid", bids, st.bids, st.book.bid_levels,
                                          UINT32_MAX, true) != 0;
        state_bad += tp_test_compare_side(symbol, "state ask", asks, st.asks, st.book.ask_levels,
                                          UINT32_MAX, true) != 0;
        if (!o.orders)
            continue;
        if (st.book.flags & TP_EVENT_F_ORDERS_INCOMPLETE) {
            orders_incomplete++; /* it says it lacks orders: not compared */
            continue;
        }
        orders_compared++;
        order_bad +=
            tp_test_orders_compare(symbol, (uint32_t)found, json_object_get(inst, "orders"));
    }
    int n_flagged = 0;
    for (uint32_t id = 0; id < MAX_INSTRUMENTS; id++)
        n_flagged += flagged[id];
    printf("{\"events\":%lu,\"lost\":%lu,\"instruments\":%zu,\"missing\":%d,\"stale\":%d,"
           "\"ring_mismatches\":%d,\"state_mismatches\":%d,\"rx_packets\":%lu,"
           "\"flagged\":%d,\"healthy_first\":%lu,\"relapses\":%lu,\"flagged_events\":%lu,"
           "\"healthy_events\":%lu,\"orders_compared\":%d,\"order_mismatches\":%d,"
           "\"orders_incomplete\":%d}\n",
           events, lost, json_array_size(json_object_get(truth, "instruments")), missing, stale,
           ring_bad, state_bad, last_rx, n_flagged, healthy_first, relapses, flagged_events,
           healthy_events, orders_compared, order_bad, orders_incomplete);
    if (o.latency) {
        /* TSC rate from the monotonic clock over 100 ms. */
        double t0 = now_s();
        uint64_t c0 = __rdtsc();
        usleep(100000);
        double hz = (double)(__rdtsc() - c0) / (now_s() - t0);
        printf("{\"rx_burst_to_consumer_ns\":");
        tp_hist_print_json(stdout, &latency, 1e9 / hz);
        printf("}\n");
    }
    tp_bus_reader_close(&r);
    json_decref(truth);
    return missing || state_bad || (ring_bad && !lost) || (order_bad && !lost) ? 1 : 0;
}
