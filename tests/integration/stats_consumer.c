/*
 * stats_consumer: an integration-test strategy that checks the statistics a running tickplane
 * instance publishes against what the simulator sent last (its report's mdp3.statistics).
 *
 *   stats_consumer --instance NAME --report R.json --ready FILE [--idle-ms MS] [--timeout-s S]
 *
 * Through libtickplane it subscribes the status topic of every instrument ("*", also those
 * defined later), creates FILE once attached, and keeps the last value of each
 * statistic per instrument. When no event has come for idle-ms (after the first one), or the
 * daemon has gone, it compares per symbol: settlement price, cleared volume, open interest,
 * high and low limit and maximum price variation (DailyStatistics49 and LimitsBanding50 on the
 * wire), and in the conflated state table the settlement and the security kind (the simulator
 * defines futures, options and spreads with templates 54, 55 and 56). Prints one JSON line; exit 0
 * when every instrument of the report was seen with every value equal.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tickplane/tickplane.h"
#include "tpout_sbe.h"

#define MAX_INSTRUMENTS 4096
#define N_STATS         (TPOUT_STAT_TYPE_IMBALANCE + 1)

struct stat_value {
    int64_t price, qty;
    bool present;
};

struct seen {
    struct stat_value stats[MAX_INSTRUMENTS][N_STATS];
    uint64_t events;
};

static struct seen seen;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void on_event(void *user, const struct tp_event *ev)
{
    struct seen *s = user;
    s->events++;
    if (ev->instrument_id >= MAX_INSTRUMENTS)
        return;
    if (ev->topic == TP_TOPIC_STATUS && ev->u.status.kind == TP_STATUS_EVENT_STAT &&
        ev->u.status.stat_type < N_STATS) {
        struct stat_value *v = &s->stats[ev->instrument_id][ev->u.status.stat_type];
        *v = (struct stat_value){ev->u.status.price, ev->u.status.qty, true};
    }
}

/*
 * The id of the instrument of a simulator product ("AAAA"): CME symbols add the contract month
 * to the product ("AAAAZ5"). -1 if none.
 */
static int64_t find_product(const struct tp_client *c, const char *product)
{
    struct tp_instrument_state st;
    for (uint32_t id = 0; id < tp_instrument_count(c) && id < MAX_INSTRUMENTS; id++)
        if (tp_read_state(c, id, &st) == 0 &&
            strncmp(st.book.symbol, product, strlen(product)) == 0)
            return id;
    return -1;
}

/* One expected value: the report's key, the statistic, and whether it is a price or a size. */
struct expectation {
    const char *key;
    uint8_t stat;
    bool is_price;
};

static const struct expectation expected[] = {
    {"settlement9", TPOUT_STAT_TYPE_SETTLE, true},
    {"cleared_volume", TPOUT_STAT_TYPE_CLEARED_VOLUME, false},
    {"open_interest", TPOUT_STAT_TYPE_OPEN_INTEREST, false},
    {"high_limit9", TPOUT_STAT_TYPE_HIGH_LIMIT, true},
    {"low_limit9", TPOUT_STAT_TYPE_LOW_LIMIT, true},
    {"max_variation9", TPOUT_STAT_TYPE_MAX_PRICE_VARIATION, true},
};

/* Compares every instrument of the report; returns the number of mismatches (printed). */
static unsigned compare(struct tp_client *c, json_t *report, unsigned *checked)
{
    json_t *stats = json_object_get(json_object_get(report, "mdp3"), "statistics");
    const char *symbol;
    json_t *want;
    unsigned bad = 0;
    *checked = 0;
    if (!json_is_object(stats) || json_object_size(stats) == 0) {
        fprintf(stderr, "the report has no mdp3.statistics\n");
        return 1;
    }
    json_object_foreach(stats, symbol, want)
    {
        int64_t id = find_product(c, symbol);
        if (id < 0) {
            fprintf(stderr, "%s: never defined\n", symbol);
            bad++;
            continue;
        }
        for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
            const struct expectation *e = &expected[i];
            int64_t value = json_integer_value(json_object_get(want, e->key));
            const struct stat_value *got = &seen.stats[id][e->stat];
            int64_t got_value = e->is_price ? got->price : got->qty;
            if (!got->present || got_value != value) {
                fprintf(stderr, "%s %s: want %lld, got %lld%s\n", symbol, e->key, (long long)value,
                        (long long)got_value, got->present ? "" : " (none)");
                bad++;
            }
        }
        /* The conflated state's settlement agrees with the last published one, and its kind
         * with the definition template the simulator used (54, 55, 56). */
        struct tp_instrument_state st;
        int64_t settle = json_integer_value(json_object_get(want, "settlement9"));
        const char *kind = json_string_value(json_object_get(want, "kind"));
        uint8_t want_kind = kind == NULL                  ? TPOUT_SECURITY_KIND_NULL_VALUE
                            : strcmp(kind, "option") == 0 ? TPOUT_SECURITY_KIND_OPTION
                            : strcmp(kind, "spread") == 0 ? TPOUT_SECURITY_KIND_SPREAD
                                                          : TPOUT_SECURITY_KIND_FUTURE;
        if (tp_read_state(c, (uint32_t)id, &st) != 0 || st.book.settle != settle ||
            st.book.security_kind != want_kind) {
            fprintf(stderr, "%s: state table settle %lld kind %u, want %lld %s\n", symbol,
                    (long long)st.book.settle, st.book.security_kind, (long long)settle,
                    kind ? kind : "(none)");
            bad++;
        }
        (*checked)++;
    }
    return bad;
}

int main(int argc, char **argv)
{
    const char *instance = NULL, *report_path = NULL, *ready = NULL;
    double idle_ms = 1500, timeout_s = 50;
    static const struct option longopts[] = {
        {"instance", required_argument, NULL, 'i'},  {"report", required_argument, NULL, 'r'},
        {"ready", required_argument, NULL, 'y'},     {"idle-ms", required_argument, NULL, 'm'},
        {"timeout-s", required_argument, NULL, 't'}, {NULL, 0, NULL, 0}};
    int opt;
    while ((opt = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (opt) {
        case 'i':
            instance = optarg;
            break;
        case 'r':
            report_path = optarg;
            break;
        case 'y':
            ready = optarg;
            break;
        case 'm':
            idle_ms = atof(optarg);
            break;
        case 't':
            timeout_s = atof(optarg);
            break;
        default:
            return 2;
        }
    }
    if (instance == NULL || report_path == NULL || ready == NULL) {
        fprintf(stderr, "usage: stats_consumer --instance NAME --report R.json --ready FILE "
                        "[--idle-ms MS] [--timeout-s S]\n");
        return 2;
    }
    /* The daemon creates the bus at start: wait for it. */
    struct tp_client *c = NULL;
    char err[256];
    double deadline = now_s() + timeout_s;
    while (tp_attach(&c, instance, NULL, err, sizeof(err)) != 0) {
        if (now_s() > deadline) {
            fprintf(stderr, "attach: %s\n", err);
            return 1;
        }
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    if (tp_subscribe_pattern(c, NULL, "*", TP_TOPIC_BIT(TP_TOPIC_STATUS)) < 0) {
        fprintf(stderr, "subscribe: %s\n", tp_last_error(c));
        return 1;
    }
    FILE *f = fopen(ready, "w");
    if (f == NULL)
        return 1;
    fclose(f);

    double last_event = now_s();
    for (;;) {
        uint64_t before = seen.events;
        int rc = tp_poll(c, on_event, &seen, 256);
        double now = now_s();
        if (rc == -ESTALE || now > deadline)
            break; /* the daemon has gone (everything it published was read) or time is up */
        if (seen.events != before) {
            last_event = now;
        } else {
            if (seen.events > 0 && (now - last_event) * 1000 >= idle_ms)
                break;
            struct timespec pause = {0, 1000 * 1000};
            nanosleep(&pause, NULL);
        }
    }

    json_error_t jerr;
    json_t *report = json_load_file(report_path, 0, &jerr);
    if (report == NULL) {
        fprintf(stderr, "%s: %s\n", report_path, jerr.text);
        return 1;
    }
    unsigned checked;
    unsigned bad = compare(c, report, &checked);
    printf("{\"events\":%llu,\"instruments\":%u,\"mismatches\":%u}\n",
           (unsigned long long)seen.events, checked, bad);
    json_decref(report);
    tp_detach(c);
    return bad == 0 && checked > 0 ? 0 : 1;
}
