/*
 * bench_clear: what clearing ONE instrument's order-level book costs at production sizing.
 *
 * MDP3 recovery clears instruments one at a time (every SnapshotFullRefreshOrderBook53's first
 * chunk, and snapshot52 for an order-level book), on the data lcore, while the lcore's other
 * channels wait. This program fills a tp_books the way a live session leaves it and then times
 * tp_mbo_clear of single instruments:
 *   - ITCH-like instruments: increasing ids shared by all of them, most orders deleted soon
 *     after their add, so the young orders sit in the recent-order window and the survivors
 *     have moved to the overflow table;
 *   - MDP3-like instruments: sparse 64-bit ids, which collide in the window, so most of their
 *     orders live in the overflow table.
 * Each clear is followed by re-adding the instrument's orders under the same ids (what the
 * snapshot does), so the tables stay as full and a cleared book's old ids come back.
 *
 * Output: one JSON object per line: the setup, then per kind of instrument the clears' median,
 * 99th percentile and maximum in ms of CPU time and the orders each cleared, then the totals
 * after the run.
 *
 *   bench_clear [--instruments N] [--max-orders N] [--itch-orders N] [--mdp3-orders N]
 *               [--clears N] [--seed N]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "table_memory.h"
#include "tp_books.h"
#include "tp_instruments.h"
#include "tp_mbo.h"

struct options {
    uint32_t instruments;
    uint32_t max_orders;
    uint32_t itch_orders; /* live orders left by the ITCH-like flow */
    uint32_t mdp3_orders; /* live orders of the MDP3-like instruments */
    uint32_t clears;      /* clears timed per kind */
    uint64_t seed;
};

/* splitmix64: the ids and choices, reproducible from the seed. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/*
 * Milliseconds of this thread's CPU time: a clear that the shared machine's scheduler interrupts
 * is not charged for the wait. The fill's time is wall time (CLOCK_MONOTONIC).
 */
static double now_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One live order the benchmark remembers, to re-add it after its instrument's clear. */
struct live_order {
    uint64_t id;
    uint32_t instr;
    uint8_t side;
    int64_t price;
};

/* A price within the production depth (10 levels a side): 8 ticks around 100.00. */
static int64_t order_price(uint64_t r, unsigned side)
{
    int64_t tick = (int64_t)(r % 8);
    return (side == TP_SIDE_BID ? 10000 - tick : 10001 + tick) * 10000000;
}

static void add_order(struct tp_books *b, const struct live_order *o)
{
    struct tp_book_change out[TP_BOOK_CHANGES_MAX];

    if (tp_mbo_add(b, o->instr, o->id, o->side, o->price, 100, o->id, out) < 0) {
        fprintf(stderr, "bench_clear: add of order %" PRIu64 " refused\n", o->id);
        exit(1);
    }
}

/*
 * ITCH-like flow over instruments [0, half): ids 1, 2, 3... each to a random instrument; 15 in
 * 16 orders are deleted 64 ids after their add, the rest stay. Runs until `want` orders stay.
 */
static uint32_t fill_itch(struct tp_books *b, const struct options *opt, struct live_order *kept,
                          uint64_t *rng)
{
    struct tp_book_change out[TP_BOOK_CHANGES_MAX];
    struct live_order pending[64];
    uint32_t n = 0, half = opt->instruments / 2;
    uint64_t id = 1;

    while (n < opt->itch_orders) {
        uint64_t r = next_random(rng);
        struct live_order o = {.id = id,
                               .instr = (uint32_t)(r % half),
                               .side = (uint8_t)((r >> 32) & 1),
                               .price = order_price(r >> 40, (r >> 32) & 1)};
        struct live_order *old = &pending[id % 64];
        if (id > 64) {
            if ((old->id & 15) != 0)
                tp_mbo_delete(b, old->instr, old->id, out);
            else
                kept[n++] = *old;
        }
        add_order(b, &o);
        *old = o;
        id++;
    }
    /* The last 64 stay live as well (young orders in the window). */
    for (uint64_t k = 0; k < 64 && n < opt->itch_orders + 64; k++)
        kept[n++] = pending[k];
    return n;
}

/* MDP3-like orders: sparse random ids over instruments [half, instruments). */
static uint32_t fill_mdp3(struct tp_books *b, const struct options *opt, struct live_order *kept,
                          uint64_t *rng)
{
    uint32_t half = opt->instruments / 2;

    for (uint32_t n = 0; n < opt->mdp3_orders; n++) {
        uint64_t r = next_random(rng);
        kept[n] = (struct live_order){.id = next_random(rng) >> 1,
                                      .instr = half + (uint32_t)(r % (opt->instruments - half)),
                                      .side = (uint8_t)((r >> 32) & 1),
                                      .price = order_price(r >> 40, (r >> 32) & 1)};
        add_order(b, &kept[n]);
    }
    return opt->mdp3_orders;
}

/*
 * Times `clears` clears of instruments of one kind (those of kept[0..n)), each followed by
 * re-adding its orders, and prints the figures.
 */
static void time_clears(struct tp_books *b, const char *kind, const struct live_order *kept,
                        uint32_t n, uint32_t clears, uint64_t *rng)
{
    struct tp_book_change out[TP_BOOK_CHANGES_MAX];
    double *ms = calloc(clears, sizeof(double));
    uint64_t orders_cleared = 0;

    if (!ms || n == 0)
        exit(1);
    for (uint32_t c = 0; c < clears; c++) {
        uint32_t instr = kept[next_random(rng) % n].instr;
        uint32_t had = tp_books_orders(b, instr);
        double t0 = now_ms(CLOCK_THREAD_CPUTIME_ID);
        tp_mbo_clear(b, instr, out);
        ms[c] = now_ms(CLOCK_THREAD_CPUTIME_ID) - t0;
        orders_cleared += had;
        if (tp_books_orders(b, instr) != 0) {
            fprintf(stderr, "bench_clear: instrument %" PRIu32 " kept orders\n", instr);
            exit(1);
        }
        for (uint32_t k = 0; k < n; k++)
            if (kept[k].instr == instr)
                add_order(b, &kept[k]);
    }
    qsort(ms, clears, sizeof(double), compare_double);
    printf("{\"bench\":\"clear\",\"kind\":\"%s\",\"clears\":%" PRIu32 ",\"median_ms\":%.4f,"
           "\"p99_ms\":%.4f,\"max_ms\":%.4f,\"orders_per_clear\":%.1f}\n",
           kind, clears, ms[clears / 2], ms[(clears * 99) / 100], ms[clears - 1],
           (double)orders_cleared / clears);
    free(ms);
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    *v = strtoull(s, &end, 10);
    return errno || *end || end == s ? -1 : 0;
}

static int parse_options(int argc, char **argv, struct options *opt)
{
    *opt = (struct options){.instruments = 4000,
                            .max_orders = 8388608,
                            .itch_orders = 1000000,
                            .mdp3_orders = 1000000,
                            .clears = 40,
                            .seed = 1};
    for (int i = 1; i < argc; i += 2) {
        uint64_t v;
        if (i + 1 >= argc || parse_u64(argv[i + 1], &v) || v > UINT32_MAX)
            return -1;
        if (!strcmp(argv[i], "--instruments") && v >= 2)
            opt->instruments = (uint32_t)v;
        else if (!strcmp(argv[i], "--max-orders"))
            opt->max_orders = (uint32_t)v;
        else if (!strcmp(argv[i], "--itch-orders"))
            opt->itch_orders = (uint32_t)v;
        else if (!strcmp(argv[i], "--mdp3-orders"))
            opt->mdp3_orders = (uint32_t)v;
        else if (!strcmp(argv[i], "--clears") && v > 0)
            opt->clears = (uint32_t)v;
        else if (!strcmp(argv[i], "--seed"))
            opt->seed = v;
        else
            return -1;
    }
    /* Room for every live order, and for the 64 young ITCH orders on top. */
    return (uint64_t)opt->itch_orders + opt->mdp3_orders + 64 <= opt->max_orders ? 0 : -1;
}

int main(int argc, char **argv)
{
    struct options opt;
    uint64_t rng;

    if (parse_options(argc, argv, &opt)) {
        fprintf(stderr, "usage: bench_clear [--instruments N>=2] [--max-orders N] "
                        "[--itch-orders N] [--mdp3-orders N] [--clears N] [--seed N]\n");
        return 2;
    }
    rng = opt.seed;
    struct tp_books_params p = {
        .instruments = opt.instruments, .max_orders = opt.max_orders, .levels_per_side = 10};
    size_t size = tp_books_memsize(&p);
    struct tp_books *b = size ? tp_table_memory(size, true) : NULL;
    struct live_order *itch = calloc((size_t)opt.itch_orders + 64, sizeof(*itch));
    struct live_order *mdp3 = calloc(opt.mdp3_orders ? opt.mdp3_orders : 1, sizeof(*mdp3));

    if (!b || !itch || !mdp3 || tp_books_init(b, &p)) {
        fprintf(stderr, "bench_clear: no memory for the books\n");
        return 1;
    }
    for (uint32_t i = 0; i < opt.instruments; i++)
        tp_books_configure(b, i, TP_BOOK_TYPE_MBO, 0, 0);
    double t0 = now_ms(CLOCK_MONOTONIC);
    uint32_t n_itch = fill_itch(b, &opt, itch, &rng);
    uint32_t n_mdp3 = fill_mdp3(b, &opt, mdp3, &rng);
    const struct tp_books_totals *t = tp_books_totals(b);
    printf("{\"bench\":\"clear_setup\",\"instruments\":%" PRIu32 ",\"max_orders\":%" PRIu32
           ",\"memory_mb\":%.0f,\"window_slots\":%" PRIu64 ",\"live_orders\":%" PRIu64
           ",\"spilled\":%" PRIu64 ",\"fill_s\":%.1f}\n",
           opt.instruments, opt.max_orders, (double)size / (1 << 20), tp_books_recent_orders(b),
           t->live_orders, t->orders_spilled, (now_ms(CLOCK_MONOTONIC) - t0) / 1e3);
    time_clears(b, "itch", itch, n_itch, opt.clears, &rng);
    time_clears(b, "mdp3", mdp3, n_mdp3, opt.clears, &rng);
    printf("{\"bench\":\"clear_end\",\"live_orders\":%" PRIu64 ",\"peak_live_orders\":%" PRIu64
           ",\"order_capacity\":%" PRIu64 "}\n",
           t->live_orders, t->peak_live_orders, t->order_capacity);
    return t->live_orders == (uint64_t)n_itch + n_mdp3 ? 0 : 1;
}
