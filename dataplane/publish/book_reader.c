/*
 * Book reader: see book_reader.h. Translates the data plane's registry and books into the
 * publisher's neutral types.
 */
#include "book_reader.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "tp_books.h"
#include "tp_instruments.h"

/* tpout TradingStatus values. */
enum {
    OUT_UNKNOWN = 0,
    OUT_PRE_OPEN = 1,
    OUT_TRADING = 2,
    OUT_HALTED = 3,
    OUT_PAUSED = 4,
    OUT_QUOTATION_ONLY = 5,
    OUT_CLOSED = 6,
};

uint8_t tp_pub_status(uint8_t status)
{
    switch (status) {
    case TP_STATUS_PRE_OPEN:
    case TP_STATUS_NO_CANCEL:
        return OUT_PRE_OPEN;
    case TP_STATUS_OPEN:
        return OUT_TRADING;
    case TP_STATUS_HALTED:
        return OUT_HALTED;
    case TP_STATUS_PAUSED:
        return OUT_PAUSED;
    case TP_STATUS_QUOTATION_ONLY:
        return OUT_QUOTATION_ONLY;
    case TP_STATUS_CLOSED:
        return OUT_CLOSED;
    default:
        return OUT_UNKNOWN;
    }
}

int tp_pub_stat_type(uint8_t kind)
{
    /* tpout StatType: open 0, high 1, low 2, settle 3, volume 4, openInterest 5, clearedVolume 6,
     * highestBid 7, lowestOffer 8, fixing 9, highLimit 10, lowLimit 11, maxPriceVariation 12,
     * indicativeOpen 13, close 14, vwap 15, imbalance 16, auctionBid 17, auctionOffer 18. */
    static const int8_t out[TP_STAT_COUNT] = {
        [TP_STAT_OPEN] = 0,
        [TP_STAT_HIGH] = 1,
        [TP_STAT_LOW] = 2,
        [TP_STAT_CLOSE] = 14,
        [TP_STAT_SETTLEMENT] = 3,
        [TP_STAT_CLEARED_VOLUME] = 6,
        [TP_STAT_OPEN_INTEREST] = 5,
        [TP_STAT_HIGH_LIMIT] = 10,
        [TP_STAT_LOW_LIMIT] = 11,
        [TP_STAT_HIGH_BID] = 7,
        [TP_STAT_LOW_OFFER] = 8,
        [TP_STAT_VWAP] = 15,
        [TP_STAT_INDICATIVE_OPEN] = 13,
        [TP_STAT_FIXING] = 9,
        [TP_STAT_IMBALANCE] = 16,
        [TP_STAT_SESSION_VOLUME] = 4,
        [TP_STAT_MAX_PRICE_VARIATION] = 12,
        [TP_STAT_AUCTION_BID] = 17,
        [TP_STAT_AUCTION_OFFER] = 18,
    };
    return kind < TP_STAT_COUNT ? out[kind] : -1;
}

static int64_t stat_price(const struct tp_book *bk, enum tp_stat_kind kind)
{
    return bk->stats[kind].present ? bk->stats[kind].price : TP_PUB_PRICE_NULL;
}

_Static_assert(sizeof(struct tp_pub_level) == sizeof(struct tp_level) &&
                   offsetof(struct tp_pub_level, qty) == offsetof(struct tp_level, qty) &&
                   offsetof(struct tp_pub_level, orders) == offsetof(struct tp_level, count),
               "tp_pub_level mirrors the books' tp_level");

/* One call per side (the levels go straight to the caller's array, usually the state entry). */
static void copy_side(const struct tp_books *books, uint32_t id, enum tp_book_kind kind,
                      enum tp_side side, unsigned depth, struct tp_pub_level *out, uint16_t *n)
{
    struct tp_level *lv = (struct tp_level *)out;
    uint32_t got = tp_books_copy_levels(books, id, kind, side, lv, depth);
    if (kind == TP_BOOK_ORDERS) {
        *n = (uint16_t)got; /* aggregated order levels are never empty */
        return;
    }
    /* MBP books may have empty slots inside their depth: close them up. The levels before the
     * first empty slot (usually all of them) stay where they are. */
    uint32_t k = 0;
    while (k < got && lv[k].qty != 0)
        k++;
    for (uint32_t i = k + 1; i < got; i++)
        if (lv[i].qty != 0)
            lv[k++] = lv[i];
    *n = (uint16_t)k;
}

int tp_pub_read_order_level(const struct tp_books *books, uint32_t id, unsigned ask, unsigned level,
                            struct tp_pub_level *out)
{
    return tp_books_level(books, id, TP_BOOK_ORDERS, ask ? TP_SIDE_ASK : TP_SIDE_BID, level,
                          (struct tp_level *)out);
}

int tp_pub_orders_are_depth(const struct tp_books *books, uint32_t id)
{
    const struct tp_book *bk = tp_books_get(books, id);
    return bk != NULL && bk->type == TP_BOOK_TYPE_MBO;
}

int tp_pub_read_book(const struct tp_books *books, uint32_t id, unsigned depth, unsigned parts,
                     struct tp_pub_book *out, struct tp_pub_level *bids, struct tp_pub_level *asks)
{
    const struct tp_book *bk = tp_books_get(books, id);
    if (bk == NULL)
        return -EINVAL;
    enum tp_book_kind kind = bk->type == TP_BOOK_TYPE_MBO ? TP_BOOK_ORDERS : TP_BOOK_DIRECT;
    if (parts & TP_PUB_SIDE_BID)
        copy_side(books, id, kind, TP_SIDE_BID, depth, bids, &out->bid_levels);
    if (parts & TP_PUB_SIDE_ASK)
        copy_side(books, id, kind, TP_SIDE_ASK, depth, asks, &out->ask_levels);
    if (parts & TP_PUB_PART_TRADE) {
        out->aggressor = bk->last_aggressor == TP_SIDE_BID   ? 1
                         : bk->last_aggressor == TP_SIDE_ASK ? 2
                                                             : 0;
        out->last_price = bk->trades ? bk->last_price : TP_PUB_PRICE_NULL;
        out->last_qty = bk->last_qty;
        out->volume = bk->volume;
    }
    if (parts & TP_PUB_PART_SESSION) {
        out->trading_status = tp_pub_status(bk->status);
        out->open = stat_price(bk, TP_STAT_OPEN);
        out->high = stat_price(bk, TP_STAT_HIGH);
        out->low = stat_price(bk, TP_STAT_LOW);
        out->settle = stat_price(bk, TP_STAT_SETTLEMENT);
    }
    return 0;
}

int tp_pub_read_definition(const struct tp_instruments *registry, uint32_t id,
                           struct tp_pub_definition *out)
{
    const struct tp_instrument *in = tp_instruments_get((struct tp_instruments *)registry, id);
    if (in == NULL)
        return -ENOENT;
    memset(out, 0, sizeof(*out));
    memcpy(out->symbol, in->symbol,
           sizeof(out->symbol) < sizeof(in->symbol) ? sizeof(out->symbol) : sizeof(in->symbol));
    out->venue_security_id = in->venue == TP_VENUE_CME_MDP3 ? in->security_id : in->itch_locate;
    out->tick = in->tick ? in->tick : TP_PUB_PRICE_NULL;
    out->display_factor = in->display_factor;
    out->channel = in->channel;
    out->depth = in->book_type == TP_BOOK_TYPE_MBO ? 0 : in->market_depth;
    out->trading_status = tp_pub_status(in->trading_status);
    out->security_kind = in->kind <= TP_KIND_EQUITY ? in->kind : 0;
    out->venue = in->venue == TP_VENUE_NASDAQ_ITCH ? 1 : in->venue == TP_VENUE_EUREX_EOBI ? 2 : 0;
    return 0;
}
