/* Test helper: see channel_tables.h. */
#include "channel_tables.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "channel_bus.h"
#include "publisher.h"
#include "util/histogram.h"
#include "tp_books.h"
#include "tp_instruments.h"

void *test_zalloc(size_t n)
{
    size_t size = (n + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, size);
    if (p != NULL)
        memset(p, 0, size);
    return p;
}

void test_channel_tables_open(struct test_channel_tables *t, const char *prefix,
                              uint16_t itch_venues)
{
    char instance[64];
    snprintf(instance, sizeof(instance), "%s%d", prefix, (int)getpid());
    t->bus = test_bus_open(instance);
    assert_non_null(t->bus);
    struct tp_instruments_params ip = {.capacity = 16, .itch_venues = itch_venues};
    struct tp_books_params bp = {.instruments = 16, .max_orders = 1024, .levels_per_side = 64};
    t->registry = test_zalloc(tp_instruments_memsize(&ip));
    t->books = test_zalloc(tp_books_memsize(&bp));
    assert_non_null(t->registry);
    assert_non_null(t->books);
    assert_int_equal(tp_instruments_init(t->registry, &ip), 0);
    assert_int_equal(tp_books_init(t->books, &bp), 0);
    static struct tp_histogram gap_wait;
    tp_hist_reset(&gap_wait);
    t->gap_wait = &gap_wait;
    struct tp_publisher_params pp = {.bus = t->bus,
                                     .books = t->books,
                                     .registry = t->registry,
                                     .instruments = 16,
                                     .depth = 4,
                                     .gap_wait = &gap_wait};
    t->pub = test_zalloc(tp_publisher_memsize(&pp));
    assert_non_null(t->pub);
    assert_int_equal(tp_publisher_init(t->pub, &pp), 0);
}
