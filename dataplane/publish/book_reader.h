/*
 * Book reader: what the publisher needs from the registry and the books, in plain types.
 *
 * The publisher writes the client's state table (tickplane/tickplane.h), whose names overlap the
 * data plane's book and registry headers (struct tp_level, enum tp_trading_status); this file is
 * the one place that includes the data plane side and hands the publisher neutral copies, with
 * statuses and kinds already translated to the tpout numbering.
 */
#ifndef TP_PUBLISH_BOOK_READER_H
#define TP_PUBLISH_BOOK_READER_H

#include <stdint.h>

struct tp_books;
struct tp_instruments;

/* Same layout as the client's struct tp_level (price9, qty, orders). */
struct tp_pub_level {
    int64_t price;
    int64_t qty;
    int32_t orders;
    uint32_t reserved;
};

/* One instrument's conflatable state, tpout numbering. */
struct tp_pub_book {
    uint8_t trading_status; /* tpout TradingStatus */
    uint8_t aggressor;      /* tpout AggressorSide of the last trade */
    uint16_t bid_levels;
    uint16_t ask_levels;
    int64_t last_price; /* TP_PUB_PRICE_NULL when no trade */
    int64_t last_qty;
    int64_t volume;
    int64_t open, high, low, settle; /* TP_PUB_PRICE_NULL when unknown */
};

#define TP_PUB_PRICE_NULL INT64_MIN

struct tp_pub_definition {
    char symbol[24];
    int64_t venue_security_id; /* CME SecurityID, ITCH stock locate */
    int64_t tick;              /* price9, TP_PUB_PRICE_NULL when unknown */
    int64_t display_factor;
    uint32_t channel;
    uint8_t depth; /* 0 for an order book */
    uint8_t trading_status;
    uint8_t security_kind; /* tpout SecurityKind */
    uint8_t venue;         /* tpout Venue */
};

/* Parts of an instrument's state (what a change touched, what to read). */
#define TP_PUB_SIDE_BID     1u /* the bid levels */
#define TP_PUB_SIDE_ASK     2u /* the ask levels */
#define TP_PUB_PART_TRADE   4u /* last trade, aggressor, volume */
#define TP_PUB_PART_SESSION 8u /* trading status, open / high / low / settle */
#define TP_PUB_PART_ALL     15u

/*
 * Copies the parts of the instrument's state named in `parts` (TP_PUB_SIDE_*, TP_PUB_PART_*): for
 * a side, up to `depth` levels of its main book (the aggregated order book for MBO instruments,
 * the outright book otherwise) and its level count. Fields of other parts are left as they are,
 * so the state table is rewritten only where an event changed it. 0, or -EINVAL.
 */
int tp_pub_read_book(const struct tp_books *books, uint32_t id, unsigned depth, unsigned parts,
                     struct tp_pub_book *out, struct tp_pub_level *bids, struct tp_pub_level *asks);

/* The instrument's reference data. 0, or -ENOENT for an id never handed out. */
int tp_pub_read_definition(const struct tp_instruments *registry, uint32_t id,
                           struct tp_pub_definition *out);

/* Level `level` (1 = best) of one side (ask != 0) of an instrument's aggregated order book: 0,
 * or -ENOENT when the side has fewer levels (-EINVAL for a bad id). */
int tp_pub_read_order_level(const struct tp_books *books, uint32_t id, unsigned ask, unsigned level,
                            struct tp_pub_level *out);

/* Whether the instrument's depth is its order book (order-only instruments such as ITCH). */
int tp_pub_orders_are_depth(const struct tp_books *books, uint32_t id);

/* A data plane trading status (tp_instruments.h) in tpout numbering. */
uint8_t tp_pub_status(uint8_t status);

/* A data plane statistic kind (tp_books.h) as a tpout StatType, or -1 for an unknown kind. */
int tp_pub_stat_type(uint8_t kind);

#endif
