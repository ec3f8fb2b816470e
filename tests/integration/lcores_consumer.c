/*
 * lcores_consumer: a libtickplane strategy reading an instance with several data lcores.
 *
 *   lcores_consumer --instance NAME --rings N --truth VENUE=T.json [--truth ...] --ready FILE
 *                   [--timeout-s S]
 *
 * It attaches (the instance must publish N rings), subscribes DEPTH for every instrument,
 * creates FILE, and polls until the daemon closes the bus. It keeps, per instrument, the book the
 * library delivered with the last DEPTH event, then compares it and the conflated state table
 * with each simulator's ground truth (VENUE: 0 for the MDP3 venue, 1 for ITCH; the simulators
 * name their instruments alike, so each truth is matched within its venue only). Prints one JSON
 * line: per ring the records read, per venue the instruments compared and the range of their ids
 * (each lcore hands out its own window of ids). Exits 0 when every book matches.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tickplane/tickplane.h"
#include "truth_levels.h"

#define MAX_INSTRUMENTS 4096
#define MAX_LEVELS      32
#define MAX_TRUTHS      4

struct book {
    uint16_t n[2];
    struct tp_level l[2][MAX_LEVELS];
};

static struct book books[MAX_INSTRUMENTS];

struct truth {
    int venue;
    json_t *doc;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void copy_side(uint16_t *n, struct tp_level *dst, const struct tp_level *src, uint16_t count)
{
    *n = count < MAX_LEVELS ? count : MAX_LEVELS;
    memcpy(dst, src, *n * sizeof(*dst));
}

static void on_event(void *user, const struct tp_event *ev)
{
    uint64_t *events = user;
    if (ev->topic != TP_TOPIC_DEPTH || ev->instrument_id >= MAX_INSTRUMENTS)
        return;
    struct book *b = &books[ev->instrument_id];
    copy_side(&b->n[0], b->l[0], ev->book.bids, ev->book.bid_levels);
    copy_side(&b->n[1], b->l[1], ev->book.asks, ev->book.ask_levels);
    (*events)++;
}

/* Levels of one side against the truth's (empty MBP slots skipped). 0 when equal. */
/* Compares one truth file; appends its figures to out. Returns the number of failures. */
static int check_truth(struct tp_client *c, const struct truth *t, json_t *out)
{
    static struct tp_instrument_state st;
    int missing = 0, stale = 0, ring_bad = 0, state_bad = 0;
    int64_t min_id = -1, max_id = -1;
    uint32_t n_ids = tp_instrument_count(c);
    size_t i;
    json_t *inst;
    json_array_foreach(json_object_get(t->doc, "instruments"), i, inst)
    {
        const char *symbol = json_string_value(json_object_get(inst, "symbol"));
        /* MDP3 symbols add the contract month to the simulator's product: a prefix matches. */
        int64_t found = -1;
        for (uint32_t id = 0; id < n_ids && id < MAX_INSTRUMENTS && found < 0; id++)
            if (tp_read_state(c, id, &st) == 0 && st.book.symbol[0] && st.book.venue == t->venue &&
                strncmp(st.book.symbol, symbol, strlen(symbol)) == 0)
                found = id;
        if (found < 0) {
            missing++;
            fprintf(stderr, "%s: not in the state table\n", symbol);
            continue;
        }
        min_id = min_id < 0 || found < min_id ? found : min_id;
        max_id = found > max_id ? found : max_id;
        if (st.book.flags & (TP_EVENT_F_RECOVERING | TP_EVENT_F_STALE)) {
            stale++;
            continue;
        }
        json_t *bids = json_object_get(inst, "bids"), *asks = json_object_get(inst, "asks");
        const struct book *b = &books[found];
        ring_bad += (tp_test_compare_side(symbol, "library bid", bids, b->l[0], b->n[0], MAX_LEVELS,
                                          false) != 0);
        ring_bad += (tp_test_compare_side(symbol, "library ask", asks, b->l[1], b->n[1], MAX_LEVELS,
                                          false) != 0);
        state_bad += (tp_test_compare_side(symbol, "state bid", bids, st.bids, st.book.bid_levels,
                                           MAX_LEVELS, false) != 0);
        state_bad += (tp_test_compare_side(symbol, "state ask", asks, st.asks, st.book.ask_levels,
                                           MAX_LEVELS, false) != 0);
    }
    json_array_append_new(
        out, json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:I, s:I}", "venue", t->venue, "instruments",
                       (int)json_array_size(json_object_get(t->doc, "instruments")), "missing",
                       missing, "stale", stale, "book_mismatches", ring_bad, "state_mismatches",
                       state_bad, "min_id", (json_int_t)min_id, "max_id", (json_int_t)max_id));
    return missing + stale + ring_bad + state_bad;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"instance", required_argument, NULL, 'i'},  {"rings", required_argument, NULL, 'r'},
        {"truth", required_argument, NULL, 't'},     {"ready", required_argument, NULL, 'y'},
        {"timeout-s", required_argument, NULL, 's'}, {NULL, 0, NULL, 0}};
    const char *instance = NULL, *ready = NULL;
    unsigned rings = 0, n_truths = 0;
    double timeout_s = 50;
    struct truth truths[MAX_TRUTHS];
    int o;
    while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        json_error_t jerr;
        switch (o) {
        case 'i':
            instance = optarg;
            break;
        case 'r':
            rings = (unsigned)atoi(optarg);
            break;
        case 't':
            if (n_truths == MAX_TRUTHS || strchr(optarg, '=') == NULL)
                return 2;
            truths[n_truths].venue = atoi(optarg);
            truths[n_truths].doc = json_load_file(strchr(optarg, '=') + 1, 0, &jerr);
            if (truths[n_truths++].doc == NULL) {
                fprintf(stderr, "lcores_consumer: %s: %s\n", optarg, jerr.text);
                return 2;
            }
            break;
        case 'y':
            ready = optarg;
            break;
        case 's':
            timeout_s = atof(optarg);
            break;
        default:
            return 2;
        }
    }
    if (instance == NULL || ready == NULL || n_truths == 0)
        return 2;
    struct tp_client *c = NULL;
    struct tp_client_options opt = {.no_reader_segment = 1};
    char err[256];
    double start = now_s();
    while (tp_attach(&c, instance, &opt, err, sizeof(err)) != 0) {
        if (now_s() - start > 10) {
            fprintf(stderr, "lcores_consumer: %s\n", err);
            return 1;
        }
        usleep(10000);
    }
    if (tp_ring_count(c) != rings) {
        fprintf(stderr, "lcores_consumer: %u rings, expected %u\n", tp_ring_count(c), rings);
        return 1;
    }
    if (tp_subscribe(c, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_DEPTH)) != 0)
        return 1;
    FILE *f = fopen(ready, "w");
    if (f != NULL)
        fclose(f);
    uint64_t events = 0;
    int rc;
    /* Until the daemon closes the bus (its idle exit): every record read first. */
    while ((rc = tp_poll(c, on_event, &events, 256)) != -ESTALE && now_s() - start < timeout_s)
        if (rc == 0)
            usleep(1000);
    json_t *ring_records = json_array(), *venues = json_array();
    for (unsigned k = 0; k < tp_ring_count(c); k++) {
        struct tp_ring_stats rs;
        tp_ring_stats(c, k, &rs);
        json_array_append_new(ring_records, json_integer((json_int_t)rs.records));
    }
    int bad = rc == -ESTALE ? 0 : 1; /* a timeout is a failure */
    for (unsigned t = 0; t < n_truths; t++)
        bad += check_truth(c, &truths[t], venues);
    struct tp_client_stats cs;
    tp_stats(c, &cs);
    json_t *report = json_pack("{s:I, s:I, s:o, s:o, s:b}", "events", (json_int_t)events, "lost",
                               (json_int_t)cs.lost, "ring_records", ring_records, "venues", venues,
                               "closed", rc == -ESTALE);
    char *text = json_dumps(report, JSON_COMPACT);
    printf("%s\n", text);
    free(text);
    json_decref(report);
    tp_detach(c);
    for (unsigned t = 0; t < n_truths; t++)
        json_decref(truths[t].doc);
    return bad == 0 ? 0 : 1;
}
