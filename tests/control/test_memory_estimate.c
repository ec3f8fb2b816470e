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

static uint64_t allocated(uint32_t capacity, uint32_t max_orders, uint32_t levels_per_side)
{
    uint32_t levels =
        levels_per_side < TP_CFG_ORDER_LEVELS_MIN ? TP_CFG_ORDER_LEVELS_MIN : levels_per_side;
    struct tp_books_params bp = {.instruments = capacity,
                                 .max_orders = max_orders,
                                 .levels_per_side = levels,
                                 .mbp_depth = levels_per_side < 255 ? levels_per_side : 255,
                                 .implied_depth = 2};
    struct tp_instruments_params ip = {.capacity = capacity, .itch_venues = ITCH_VENUES};
    size_t books = tp_books_memsize(&bp), registry = tp_instruments_memsize(&ip);
    assert_true(books > 0 && registry > 0);
    return books + registry;
}

static void test_estimate_covers_the_tables(void **state)
{
    (void)state;
    static const uint32_t capacities[] = {64, 1024, 4096, 65536};
    static const uint32_t orders[] = {0, 1000, 65536, 1u << 18, 1u << 21, 1u << 23};
    static const uint32_t depths[] = {1, 10, 256, 1000};
    struct tp_config cfg;

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
                uint64_t need = allocated(capacities[c], orders[o], depths[d]);
                uint64_t estimate = tp_config_lcore_tables_estimate(&cfg);
                if (estimate < need || estimate > need + need / 8 + (2u << 20))
                    fail_msg("capacity %u, max_orders %u, levels_per_side %u: estimate %llu "
                             "bytes, the tables take %llu",
                             capacities[c], orders[o], depths[d], (unsigned long long)estimate,
                             (unsigned long long)need);
            }
}

/* Each data lcore adds its own tables; the rest (EAL, mbufs) is counted once. */
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
    uint64_t one = tp_config_memory_estimate(&cfg);
    cfg.n_lcores = 3;
    assert_int_equal(tp_config_memory_estimate(&cfg) - one,
                     2 * tp_config_lcore_tables_estimate(&cfg));
    assert_true(one > tp_config_lcore_tables_estimate(&cfg) + 8191ull * 2048);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimate_covers_the_tables),
        cmocka_unit_test(test_estimate_per_lcore),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
