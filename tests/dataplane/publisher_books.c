/* Test helper: see publisher_books.h. */
#include "publisher_books.h"

#include <stdlib.h>
#include <string.h>

#include "tp_books.h"
#include "tp_instruments.h"
#include "tp_mbo.h"
#include "tp_mbp.h"

void test_books_make(struct tp_books **books, struct tp_instruments **registry)
{
    struct tp_instruments_params ip = {.capacity = 16, .itch_venues = 1};
    struct tp_books_params bp = {.instruments = 16,
                                 .max_orders = 1024,
                                 .levels_per_side = 64,
                                 .mbp_depth = 10,
                                 .implied_depth = 2};
    *registry = aligned_alloc(64, (tp_instruments_memsize(&ip) + 63) & ~(size_t)63);
    *books = aligned_alloc(64, (tp_books_memsize(&bp) + 63) & ~(size_t)63);
    tp_instruments_init(*registry, &ip);
    tp_books_init(*books, &bp);
    struct tp_instrument def;
    memset(&def, 0, sizeof(def));
    def.venue = TP_VENUE_NASDAQ_ITCH;
    def.kind = TP_KIND_EQUITY;
    def.book_type = TP_BOOK_TYPE_MBO;
    def.itch_locate = 1;
    def.display_factor = 1000000000;
    strcpy(def.symbol, "TEST");
    int64_t id = tp_instruments_define(*registry, &def);
    tp_books_configure(*books, (uint32_t)id, TP_BOOK_TYPE_MBO, 0, 0);
}

int test_books_add(struct tp_books *books, uint64_t order, int ask, int64_t price, int64_t qty,
                   struct tp_book_change *out)
{
    return tp_mbo_add(books, 0, order, ask ? TP_SIDE_ASK : TP_SIDE_BID, price, qty, order, out);
}

int test_books_trade(struct tp_books *books, int64_t price, int64_t qty, struct tp_book_change *out)
{
    return tp_books_trade(books, 0, price, qty, TP_SIDE_BID, 77, out);
}

int test_books_halt(struct tp_books *books, struct tp_book_change *out)
{
    return tp_books_status(books, 0, TP_STATUS_HALTED, out);
}

int test_books_execute(struct tp_books *books, uint64_t order, int64_t qty, int printable,
                       struct tp_book_change *out)
{
    return tp_mbo_execute(books, 0, order, qty, TP_MBO_ORDER_PRICE, printable, 900 + order, out);
}

int test_books_cancel(struct tp_books *books, uint64_t order, int64_t qty,
                      struct tp_book_change *out)
{
    return tp_mbo_cancel(books, 0, order, qty, out);
}

int test_books_delete(struct tp_books *books, uint64_t order, struct tp_book_change *out)
{
    return tp_mbo_delete(books, 0, order, out);
}

int test_books_replace(struct tp_books *books, uint64_t order, uint64_t new_order, int64_t price,
                       int64_t qty, struct tp_book_change *out)
{
    return tp_mbo_replace(books, 0, order, new_order, price, qty, new_order, out);
}

int test_books_stat(struct tp_books *books, int kind, int64_t price, int64_t qty,
                    struct tp_book_change *out)
{
    static const enum tp_stat_kind kinds[] = {[TEST_STAT_CLOSE] = TP_STAT_CLOSE,
                                              [TEST_STAT_VWAP] = TP_STAT_VWAP,
                                              [TEST_STAT_IMBALANCE] = TP_STAT_IMBALANCE,
                                              [TEST_STAT_OPEN_INTEREST] = TP_STAT_OPEN_INTEREST};
    return tp_books_stat(books, 0, kinds[kind], price, qty, out);
}

unsigned test_books_side(const struct tp_books *books, int ask, int64_t *price, int64_t *qty,
                         uint32_t *count, unsigned max)
{
    struct tp_level lv[64];
    uint32_t n = tp_books_copy_levels(books, 0, TP_BOOK_ORDERS, ask ? TP_SIDE_ASK : TP_SIDE_BID, lv,
                                      max < 64 ? max : 64);
    for (uint32_t i = 0; i < n; i++) {
        price[i] = lv[i].price;
        qty[i] = lv[i].qty;
        count[i] = lv[i].count;
    }
    return n;
}

int test_books_retype(struct tp_books *books, int order_and_venue_levels)
{
    return tp_books_configure(books, 0,
                              order_and_venue_levels ? TP_BOOK_TYPE_MBP_MBO : TP_BOOK_TYPE_MBO,
                              order_and_venue_levels ? 10 : 0, order_and_venue_levels ? 2 : 0);
}

int test_books_venue_level(struct tp_books *books, int implied, int ask, int action, unsigned level,
                           int64_t price, int64_t qty, uint32_t count, struct tp_book_change *out)
{
    return tp_mbp_update(books, 0, implied ? TP_BOOK_IMPLIED : TP_BOOK_DIRECT,
                         ask ? TP_SIDE_ASK : TP_SIDE_BID, (enum tp_level_action)action, level,
                         price, qty, count, out);
}
