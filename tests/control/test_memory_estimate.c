/*
 * The config's memory estimate against the tables the daemon really allocates per data lcore
 * (tp_books_memsize, tp_instruments_memsize, with the parameters dataplane/daemon/main.c's
 * build_tables gives them): never below them, so that a config that passes validation fits, and
 * not far above, so that memory_mb is not wasted. A change to the books' or registry's layout
 * that the estimate does not follow fails here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "tp_books.h"
#include "tp_instruments.h"

/* build_tables: an lcore with ITCH channels gets one locate map each plus four spares. */
#define ITCH_VENUES (2 + 4)

/* The tables of the data lcore with the largest window of n (build_tables' split). */
static uint64_t allocated(uint32_t capacity, uint32_t max_orders, uint32_t levels_per_side,
                          unsigned n)
{
    uint32_t levels =
        levels_per_side < TP_CFG_ORDER_LEVELS_MIN ? TP_CFG_ORDER_LEVELS_MIN : levels_per_side;
    uint64_t most = 0;
    for (unsigned l = 0; l < n; l++) {
        uint32_t first = (uint32_t)((uint64_t)capacity * l / n);
        uint32_t end = (uint32_t)((uint64_t)capacity * (l + 1) / n);
        struct tp_books_params bp = {.first_id = first,
                                     .instruments = end - first,
                                     .max_orders = max_orders,
                                     .levels_per_side = levels,
                                     .mbp_depth = levels_per_side < 255 ? levels_per_side : 255,
                                     .implied_depth = 2};
        struct tp_instruments_params ip = {.capacity = capacity,
                                           .itch_venues = ITCH_VENUES,
                                           .first_id = first,
                                           .ids = end - first};
        size_t books = tp_books_memsize(&bp), registry = tp_instruments_memsize(&ip);
        assert_true(books > 0 && registry > 0);
        if (books + registry > most)
            most = books + registry;
    }
    return most;
}

static void test_estimate_covers_the_tables(void **state)
{
    (void)state;
    static const uint32_t capacities[] = {64, 1024, 4096, 65536};
    static const uint32_t orders[] = {0, 1000, 65536, 1u << 18, 1u << 21, 1u << 23};
    static const uint32_t depths[] = {1, 10, 256, 1000};
    struct tp_config cfg;

    for (unsigned n = 1; n <= 3; n++)
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
                    uint64_t need = allocated(capacities[c], orders[o], depths[d], n);
                    uint64_t estimate = tp_config_lcore_tables_estimate(&cfg);
                    if (estimate < need || estimate > need + need / 8 + (2u << 20))
                        fail_msg("capacity %u, max_orders %u, levels_per_side %u, %u lcores: "
                                 "estimate %llu bytes, the tables take %llu",
                                 capacities[c], orders[o], depths[d], n,
                                 (unsigned long long)estimate, (unsigned long long)need);
                }
}

/*
 * Each data lcore adds its own tables, for its share of the instruments; the rest (EAL, mbufs)
 * is counted once.
 */
static void test_estimate_per_lcore(void **state)
{
    (void)state;
    struct tp_config cfg;
    memset(&cfg, 0, sizeof(cfg));
    cfg.instruments.capacity = 4096;
    cfg.books.max_orders = 1u << 20;
    cfg.books.levels_per_side = 10;
    cfg.n_ports = 1;
    cfg.ports[0].mbuf_pool_size = 8191;
    cfg.n_lcores = 1;
    uint64_t one_tables = tp_config_lcore_tables_estimate(&cfg);
    uint64_t rest = tp_config_memory_estimate(&cfg) - one_tables;
    assert_true(rest > 8191ull * 2048);
    cfg.n_lcores = 3;
    uint64_t three_tables = tp_config_lcore_tables_estimate(&cfg);
    assert_int_equal(tp_config_memory_estimate(&cfg), rest + 3 * three_tables);
    assert_true(three_tables < one_tables); /* a third of the books, a whole order table */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate_covers_the_tables),
        cmocka_unit_test(test_estimate_per_lcore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
