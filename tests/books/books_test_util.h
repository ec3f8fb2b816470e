/*
 * Helpers shared by the books tests: a tp_books (and registry) in ordinary aligned memory.
 */
#ifndef BOOKS_TEST_UTIL_H
#define BOOKS_TEST_UTIL_H

#include <stdlib.h>
#include <string.h>

#include "tp_books.h"
#include "tp_instruments.h"

static inline void *test_zalloc(size_t size)
{
    size_t rounded = (size + 63) & ~(size_t)63;
    void *p = aligned_alloc(64, rounded);

    if (p)
        memset(p, 0, rounded);
    return p;
}

static inline struct tp_books *test_books(uint32_t instruments, uint32_t max_orders,
                                          uint32_t levels, uint32_t depth, uint32_t implied)
{
    struct tp_books_params p = {.instruments = instruments,
                                .max_orders = max_orders,
                                .levels_per_side = levels,
                                .mbp_depth = depth,
                                .implied_depth = implied};
    void *mem = test_zalloc(tp_books_memsize(&p));

    if (!mem || tp_books_init(mem, &p) != 0) {
        free(mem);
        return NULL;
    }
    return mem;
}

/* Books of these params whose instruments all have an order-level book, or NULL. */
static inline struct tp_books *test_mbo_books(const struct tp_books_params *p)
{
    void *mem = test_zalloc(tp_books_memsize(p));

    if (!mem || tp_books_init(mem, p) != 0) {
        free(mem);
        return NULL;
    }
    for (uint32_t i = 0; i < p->instruments; i++) {
        if (tp_books_configure(mem, p->first_id + i, TP_BOOK_TYPE_MBO, 0, 0) != 0) {
            free(mem);
            return NULL;
        }
    }
    return mem;
}

static inline struct tp_instruments *test_registry(uint32_t capacity, uint16_t itch_venues)
{
    struct tp_instruments_params p = {.capacity = capacity, .itch_venues = itch_venues};
    void *mem = test_zalloc(tp_instruments_memsize(&p));

    if (!mem || tp_instruments_init(mem, &p) != 0) {
        free(mem);
        return NULL;
    }
    return mem;
}

#endif /* BOOKS_TEST_UTIL_H */
