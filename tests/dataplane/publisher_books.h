/*
 * Test helper for test_publisher.c: a registry and books with one ITCH instrument, kept in a
 * file of its own because the data plane's book headers and the client's bus headers share names
 * (see dataplane/publish/book_reader.h).
 */
#ifndef TP_TEST_PUBLISHER_BOOKS_H
#define TP_TEST_PUBLISHER_BOOKS_H

#include <stdint.h>

#include "tp_book_change.h"

struct tp_books;
struct tp_instruments;

/* Creates both (aligned_alloc) with instrument 0 = "TEST" (ITCH, order book). */
void test_books_make(struct tp_books **books, struct tp_instruments **registry);

/* Adds an order; returns the change records written into out (TP_BOOK_CHANGES_MAX). */
int test_books_add(struct tp_books *books, uint64_t order, int ask, int64_t price, int64_t qty,
                   struct tp_book_change *out);

/* A trade print on instrument 0 (aggressor bid), and a trading status change (halted). */
int test_books_trade(struct tp_books *books, int64_t price, int64_t qty,
                     struct tp_book_change *out);
int test_books_halt(struct tp_books *books, struct tp_book_change *out);

/* Executes qty of order `order` (instrument 0); printable ones print a trade. */
int test_books_execute(struct tp_books *books, uint64_t order, int64_t qty, int printable,
                       struct tp_book_change *out);

/* Cancels qty of order `order`, deletes it, or replaces it by new_order (instrument 0). */
int test_books_cancel(struct tp_books *books, uint64_t order, int64_t qty,
                      struct tp_book_change *out);
int test_books_delete(struct tp_books *books, uint64_t order, struct tp_book_change *out);
int test_books_replace(struct tp_books *books, uint64_t order, uint64_t new_order, int64_t price,
                       int64_t qty, struct tp_book_change *out);

/* A session statistic of instrument 0; kind: TEST_STAT_*. */
enum { TEST_STAT_CLOSE, TEST_STAT_VWAP, TEST_STAT_IMBALANCE, TEST_STAT_OPEN_INTEREST };
int test_books_stat(struct tp_books *books, int kind, int64_t price, int64_t qty,
                    struct tp_book_change *out);

/* Instrument 0's best `max` aggregated order levels of one side, best first; returns how many. */
unsigned test_books_side(const struct tp_books *books, int ask, int64_t *price, int64_t *qty,
                         uint32_t *count, unsigned max);

/* Configures instrument 0's book anew: order book only (0) or venue levels (10 outright, 2
 * implied) and orders (1). Returns what tp_books_configure returns. */
int test_books_retype(struct tp_books *books, int order_and_venue_levels);

/* A venue's book entry for instrument 0 (a book with venue levels: test_books_retype(books, 1)):
 * implied or outright, action a tp_level_action (DELETE_FROM: `level` levels from the best). */
int test_books_venue_level(struct tp_books *books, int implied, int ask, int action, unsigned level,
                           int64_t price, int64_t qty, uint32_t count, struct tp_book_change *out);

#endif
