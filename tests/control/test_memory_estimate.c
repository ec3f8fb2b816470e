/*
 * The config's memory estimate against the tables the daemon really allocates per data lcore
 * (tp_books_memsize, tp_instruments_memsize, with the parameters dataplane/daemon/main.c's
 * build_tables gives them for the lcore's window of ids, tp_config_lcore_window): never below them,
 * so that a config that passes validation fits, and not far above, so that memory_mb is not wasted.
 * A change to the books' or registry's layout that the estimate does not follow fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "channel.h"
#include "config.h"
#include "tp_books.h"
#include "tp_instruments.h"
#include "tp_venue.h"

/* build_tables: an lcore with ITCH channels gets one locate map each plus four spares. */
#define ITCH_VENUES (2 + 4)

/* The tables data lcore l of cfg allocates: build_tables' parameters for its window. */
static uint64_t allocated(const struct tp_config *cfg, unsigned l)
{
    uint32_t lps = cfg->books.levels_per_side;
    uint32_t levels = lps < TP_CFG_ORDER_LEVELS_MIN ? TP_CFG_ORDER_LEVELS_MIN : lps;
    struct tp_cfg_window w = tp_config_lcore_window(cfg, l);
    struct tp_books_params bp = {.first_id = w.first_id,
                                 .instruments = w.ids,
                                 .max_orders = cfg->books.max_orders,
                                 .recent_orders = cfg->books.recent_orders,
                                 .levels_per_side = levels,
                                 .mbp_depth = lps < 255 ? lps : 255,
                                 .implied_depth = 2};
    struct tp_instruments_params ip = {.capacity = cfg->instruments.capacity,
                                       .itch_venues = ITCH_VENUES,
                                       .first_id = w.first_id,
                                       .ids = w.ids};
    size_t books = tp_books_memsize(&bp), registry = tp_instruments_memsize(&ip);
    assert_true(books > 0 && registry > 0);
    return books + registry;
}

/*
 * How the n lcores' windows are sized: layout 0 leaves every lcore to the even split, layout 1
 * gives lcore 0 just over half the capacity, layout 2 gives the last lcore all but one id for
 * each of the others.
 */
static void size_windows(struct tp_config *cfg, unsigned n, unsigned layout)
{
    uint32_t capacity = cfg->instruments.capacity;
    for (unsigned l = 0; l < n; l++)
        cfg->lcores[l].instruments = 0;
    if (layout == 1)
        cfg->lcores[0].instruments = capacity / 2 + 1;
    else if (layout == 2)
        cfg->lcores[n - 1].instruments = capacity - (n - 1);
}

static void test_estimate_covers_the_tables(void **state)
{
    (void)state;
    static const uint32_t capacities[] = {64, 1024, 4096, 65536};
    static const uint32_t orders[] = {0, 1000, 65536, 1u << 18, 1u << 21, 1u << 23};
    static const uint32_t depths[] = {1, 10, 256, 1000};
    struct tp_config cfg;

    for (unsigned n = 1; n <= 3; n++)
        for (unsigned layout = 0; layout < 3; layout++)
            for (size_t c = 0; c < sizeof(capacities) / sizeof(capacities[0]); c++)
                for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++)
                    for (size_t d = 0; d < sizeof(depths) / sizeof(depths[0]); d++) {
                        memset(&cfg, 0, sizeof(cfg));
                        cfg.n_channels = 3;
                        cfg.channels[0].protocol = cfg.channels[2].protocol = TP_CFG_PROTO_ITCH;
                        cfg.channels[1].protocol = TP_CFG_PROTO_MDP3;
                        cfg.instruments.capacity = capacities[c];
                        cfg.books.max_orders = orders[o];
                        cfg.books.levels_per_side = depths[d];
                        cfg.n_lcores = n;
                        size_windows(&cfg, n, layout);
                        for (unsigned l = 0; l < n; l++) {
                            uint64_t need = allocated(&cfg, l);
                            uint64_t estimate = tp_config_lcore_tables_estimate(&cfg, l);
                            if (estimate < need || estimate > need + need / 8 + (2u << 20))
                                fail_msg("capacity %u, max_orders %u, levels_per_side %u, lcore "
                                         "%u of %u (window of %u ids): estimate %llu bytes, the "
                                         "tables take %llu",
                                         capacities[c], orders[o], depths[d], l, n,
                                         tp_config_lcore_window(&cfg, l).ids,
                                         (unsigned long long)estimate, (unsigned long long)need);
                        }
                    }
}

/* A recent-order window asked for in the config is what the estimate counts, large or small. */
static void test_estimate_covers_a_window_asked_for(void **state)
{
    (void)state;
    static const uint32_t windows[] = {2, 1000, 1u << 20, 3000017, 1u << 24};
    static const uint32_t orders[] = {0, 1000, 1u << 21};
    struct tp_config cfg;

    for (size_t w = 0; w < sizeof(windows) / sizeof(windows[0]); w++)
        for (size_t o = 0; o < sizeof(orders) / sizeof(orders[0]); o++) {
            memset(&cfg, 0, sizeof(cfg));
            cfg.n_channels = 3; /* two ITCH channels: allocated()'s locate maps */
            cfg.channels[0].protocol = cfg.channels[2].protocol = TP_CFG_PROTO_ITCH;
            cfg.channels[1].protocol = TP_CFG_PROTO_MDP3;
            cfg.instruments.capacity = 1024;
            cfg.books.max_orders = orders[o];
            cfg.books.recent_orders = windows[w];
            cfg.books.levels_per_side = 10;
            cfg.n_lcores = 1;
            uint64_t need = allocated(&cfg, 0);
            uint64_t estimate = tp_config_lcore_tables_estimate(&cfg, 0);
            if (estimate < need || estimate > need + need / 8 + (2u << 20))
                fail_msg("recent_orders %u, max_orders %u: estimate %llu bytes, the tables take "
                         "%llu",
                         windows[w], orders[o], (unsigned long long)estimate,
                         (unsigned long long)need);
        }
}

/* The tables of a lone data lcore whose window is all of a capacity of `ids`. */
static uint64_t lone_lcore_tables(const struct tp_config *cfg, uint32_t ids)
{
    static struct tp_config lone;
    lone = *cfg;
    lone.n_lcores = 1;
    lone.lcores[0].instruments = 0;
    lone.instruments.capacity = ids;
    return tp_config_lcore_tables_estimate(&lone, 0);
}

/*
 * Each data lcore adds its own tables, for its own window of instrument ids; the rest (EAL,
 * mbufs) is counted once. An lcore's tables are those of its window's size, wherever it starts.
 */
static void test_estimate_per_lcore(void **state)
{
    (void)state;
    static struct tp_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.instruments.capacity = 4096;
    cfg.books.max_orders = 1u << 20;
    cfg.books.levels_per_side = 10;
    cfg.n_ports = 1;
    cfg.ports[0].mbuf_pool_size = 8191;
    cfg.n_lcores = 1;
    uint64_t one_tables = tp_config_lcore_tables_estimate(&cfg, 0);
    uint64_t rest = tp_config_memory_estimate(&cfg) - one_tables;
    assert_true(rest > 8191ull * 2048);

    cfg.n_lcores = 3;
    uint64_t even[3];
    for (unsigned l = 0; l < 3; l++)
        even[l] = tp_config_lcore_tables_estimate(&cfg, l);
    assert_int_equal(tp_config_memory_estimate(&cfg), rest + even[0] + even[1] + even[2]);
    assert_true(even[0] < one_tables); /* a third of the books, a whole order table */
    /* Windows of 1365, 1365 and 1366 ids. */
    assert_int_equal(even[0], lone_lcore_tables(&cfg, 1365));
    assert_int_equal(even[2], lone_lcore_tables(&cfg, 1366));

    /* Lcore 1 sized to 3000 ids: lcores 0 and 2 share the other 1096 (548 each). */
    cfg.lcores[1].instruments = 3000;
    uint64_t sized[3];
    for (unsigned l = 0; l < 3; l++)
        sized[l] = tp_config_lcore_tables_estimate(&cfg, l);
    assert_int_equal(sized[0], lone_lcore_tables(&cfg, 548));
    assert_int_equal(sized[1], lone_lcore_tables(&cfg, 3000));
    assert_int_equal(sized[2], sized[0]);
    assert_true(sized[1] > even[1] && even[1] > sized[0]);
    assert_int_equal(tp_config_memory_estimate(&cfg), rest + sized[0] + sized[1] + sized[2]);
}

/*
 * Each channel's own memory, as dataplane/daemon/channels.c allocates it (tp_channel_memsize with
 * at most TP_ARB_HELD_LIMIT held packets and a 4 MiB replay buffer for MDP3, whose RptSeq state
 * follows the registry's capacity): the channel estimate never below it, not far above, and the
 * whole estimate grows by it for every channel of the config.
 */
static void test_estimate_covers_the_channels(void **state)
{
    (void)state;
    static const uint32_t capacities[] = {64, 4096, 65536, 1u << 20};
    static struct tp_config cfg;

    for (size_t c = 0; c < sizeof(capacities) / sizeof(capacities[0]); c++) {
        struct tp_instruments_params ip = {.capacity = capacities[c], .itch_venues = 1};
        void *mem = aligned_alloc(64, (tp_instruments_memsize(&ip) + 63) & ~(size_t)63);
        assert_non_null(mem);
        assert_int_equal(tp_instruments_init(mem, &ip), 0);
        memset(&cfg, 0, sizeof(cfg));
        cfg.instruments.capacity = capacities[c];
        cfg.books.levels_per_side = 10;
        cfg.n_lcores = 1;
        cfg.n_channels = 3;
        cfg.channels[0].protocol = TP_CFG_PROTO_ITCH;
        cfg.channels[1].protocol = TP_CFG_PROTO_MDP3;
        cfg.channels[2].protocol = TP_CFG_PROTO_EOBI;
        for (unsigned ch = 0; ch < cfg.n_channels; ch++) {
            struct tp_channel_params chp = {
                .protocol = (enum tp_channel_protocol)cfg.channels[ch].protocol,
                .held_max = TP_ARB_HELD_LIMIT,
                .registry = mem,
                .replay_bytes = 4u << 20,
            };
            uint64_t need = tp_channel_memsize(&chp);
            uint64_t estimate = tp_config_channel_estimate(&cfg, ch);
            if (estimate < need || estimate > need + need / 8 + (64u << 10))
                fail_msg("capacity %u, %s channel: estimate %llu bytes, the channel takes %llu",
                         capacities[c], tp_venue_get(chp.protocol)->name,
                         (unsigned long long)estimate, (unsigned long long)need);
        }
        /* A second MDP3 channel adds its own (an ITCH one would add a locate map too). */
        uint64_t one = tp_config_memory_estimate(&cfg);
        cfg.n_channels = 4;
        cfg.channels[3].protocol = TP_CFG_PROTO_MDP3;
        assert_int_equal(tp_config_memory_estimate(&cfg) - one,
                         tp_config_channel_estimate(&cfg, 3));
        free(mem);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate_covers_the_tables),
        cmocka_unit_test(test_estimate_covers_a_window_asked_for),
        cmocka_unit_test(test_estimate_per_lcore),
        cmocka_unit_test(test_estimate_covers_the_channels),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
