/* tpout message -> struct tp_event (see decode.h). */
#include "decode.h"

#include <errno.h>
#include <string.h>

#include "tpout_sbe.h"

/* The 40-byte event header is the same in every message; read it with the message's own accessors.
 */
#define DECODE_HEADER(msg, m, ev)                                                                  \
    do {                                                                                           \
        (ev)->venue_seq = tpout_##msg##_venue_seq(m);                                              \
        (ev)->venue_time_ns = tpout_##msg##_venue_time_ns(m);                                      \
        (ev)->recv_tsc = tpout_##msg##_recv_tsc(m);                                                \
        (ev)->flags |= tpout_##msg##_flags(m);                                                     \
    } while (0)

/* Optional price9: the schema's null mantissa is INT64_MIN, the same as TP_PRICE_NULL. */
_Static_assert(TP_PRICE_NULL == INT64_MIN, "price null");
_Static_assert(TP_COUNT_NULL == TPOUT_COUNT_NULL_VALUE, "count null");

/*
 * The level entries of a group (BookUpdate's, or an OrderEvent's of version 3: the same layout),
 * each checked by the group's wrap, into changes[]. The count, or -EBADMSG.
 */
_Static_assert(TPOUT_ORDER_EVENT_LEVELS_SIDE_OFFSET == TPOUT_BOOK_UPDATE_LEVELS_SIDE_OFFSET &&
                   TPOUT_ORDER_EVENT_LEVELS_LEVEL_OFFSET == TPOUT_BOOK_UPDATE_LEVELS_LEVEL_OFFSET &&
                   TPOUT_ORDER_EVENT_LEVELS_ACTION_OFFSET ==
                       TPOUT_BOOK_UPDATE_LEVELS_ACTION_OFFSET &&
                   TPOUT_ORDER_EVENT_LEVELS_ORDER_COUNT_OFFSET ==
                       TPOUT_BOOK_UPDATE_LEVELS_ORDER_COUNT_OFFSET &&
                   TPOUT_ORDER_EVENT_LEVELS_PRICE_OFFSET == TPOUT_BOOK_UPDATE_LEVELS_PRICE_OFFSET &&
                   TPOUT_ORDER_EVENT_LEVELS_QUANTITY_OFFSET ==
                       TPOUT_BOOK_UPDATE_LEVELS_QUANTITY_OFFSET,
               "one level entry layout");
static int read_levels(const uint8_t *entries, uint16_t block_length, uint32_t count,
                       struct tp_level_change *changes, uint32_t max_changes)
{
    if (count > max_changes)
        return -EBADMSG;
    for (uint32_t i = 0; i < count; i++) {
        const uint8_t *e = entries + (size_t)i * block_length;
        struct tp_level_change *c = &changes[i];
        c->side = e[TPOUT_BOOK_UPDATE_LEVELS_SIDE_OFFSET];
        c->level = e[TPOUT_BOOK_UPDATE_LEVELS_LEVEL_OFFSET];
        c->action = e[TPOUT_BOOK_UPDATE_LEVELS_ACTION_OFFSET];
        c->reserved = 0;
        c->orders = tpout_load_i32(e + TPOUT_BOOK_UPDATE_LEVELS_ORDER_COUNT_OFFSET);
        c->price = tpout_load_i64(e + TPOUT_BOOK_UPDATE_LEVELS_PRICE_OFFSET);
        c->qty = tpout_load_i64(e + TPOUT_BOOK_UPDATE_LEVELS_QUANTITY_OFFSET);
        if (c->side > TPOUT_SIDE_ASK || c->action > TPOUT_LEVEL_ACTION_CLEAR)
            return -EBADMSG;
    }
    return (int)count;
}

static int decode_book_update(const uint8_t *body, size_t len, uint16_t block, uint16_t version,
                              struct tp_event *ev, struct tp_level_change *changes,
                              uint32_t max_changes)
{
    struct tpout_book_update m;
    struct tpout_book_update_levels g;
    if (tpout_book_update_wrap_for_decode(&m, body, len, block, version) != 0 ||
        tpout_book_update_levels_wrap_for_decode(&m, &g) != 0)
        return -EBADMSG;
    DECODE_HEADER(book_update, &m, ev);
    int n = read_levels(g.entries, g.block_length, g.count, changes, max_changes);
    if (n < 0)
        return -EBADMSG;
    ev->u.depth.changes = changes;
    ev->u.depth.count = (uint32_t)n;
    return TP_TOPIC_DEPTH;
}

static int decode_top(const uint8_t *body, size_t len, uint16_t block, uint16_t version,
                      struct tp_event *ev)
{
    struct tpout_top_of_book m;
    if (tpout_top_of_book_wrap_for_decode(&m, body, len, block, version) != 0)
        return -EBADMSG;
    DECODE_HEADER(top_of_book, &m, ev);
    ev->u.top = (struct tp_top_of_book){
        .bid_price = tpout_top_of_book_bid_price_mantissa(&m),
        .bid_qty = tpout_top_of_book_bid_quantity(&m),
        .ask_price = tpout_top_of_book_ask_price_mantissa(&m),
        .ask_qty = tpout_top_of_book_ask_quantity(&m),
        .bid_orders = tpout_top_of_book_bid_count(&m),
        .ask_orders = tpout_top_of_book_ask_count(&m),
    };
    return TP_TOPIC_TOP;
}

static int decode_trade(const uint8_t *body, size_t len, uint16_t block, uint16_t version,
                        struct tp_event *ev)
{
    struct tpout_trade m;
    if (tpout_trade_wrap_for_decode(&m, body, len, block, version) != 0)
        return -EBADMSG;
    DECODE_HEADER(trade, &m, ev);
    ev->u.trade = (struct tp_trade_event){
        .price = tpout_trade_price_mantissa(&m),
        .qty = tpout_trade_quantity(&m),
        .trade_id = tpout_trade_trade_id(&m),
        .orders = tpout_trade_order_count(&m),
        .aggressor = tpout_trade_aggressor_side(&m),
    };
    return TP_TOPIC_TRADES;
}

/* An OrderEvent; with level entries (version 3) it is a TP_RECORD_ORDER_DEPTH (decode.h). */
static int decode_order(const uint8_t *body, size_t len, uint16_t block, uint16_t version,
                        struct tp_event *ev, struct tp_level_change *changes, uint32_t max_changes,
                        uint32_t *n_levels)
{
    struct tpout_order_event m;
    struct tpout_order_event_levels g;
    if (tpout_order_event_wrap_for_decode(&m, body, len, block, version) != 0 ||
        tpout_order_event_levels_wrap_for_decode(&m, &g) != 0)
        return -EBADMSG;
    DECODE_HEADER(order_event, &m, ev);
    ev->u.order = (struct tp_order_event){
        .order_id = tpout_order_event_order_id(&m),
        .priority = tpout_order_event_priority(&m),
        .price = tpout_order_event_price_mantissa(&m),
        .qty = tpout_order_event_quantity(&m),
        .side = tpout_order_event_side(&m),
        .action = tpout_order_event_action(&m),
        .remaining_qty = tpout_order_event_remaining_quantity(&m),
    };
    if (g.count == 0)
        return TP_TOPIC_ORDERS;
    int n = read_levels(g.entries, g.block_length, g.count, changes, max_changes);
    if (n < 0)
        return -EBADMSG;
    *n_levels = (uint32_t)n;
    return TP_RECORD_ORDER_DEPTH;
}

static int decode_definition(const uint8_t *body, size_t len, uint16_t block, uint16_t version,
                             struct tp_event *ev)
{
    struct tpout_instrument_definition m;
    if (tpout_instrument_definition_wrap_for_decode(&m, body, len, block, version) != 0)
        return -EBADMSG;
    DECODE_HEADER(instrument_definition, &m, ev);
    struct tp_definition_event *d = &ev->u.definition;
    *d = (struct tp_definition_event){
        .venue_security_id = tpout_instrument_definition_venue_security_id(&m),
        .tick_size = tpout_instrument_definition_tick_size_mantissa(&m),
        .display_factor = tpout_instrument_definition_display_factor_mantissa(&m),
        .contract_multiplier = tpout_instrument_definition_contract_multiplier(&m),
        .channel_id = tpout_instrument_definition_channel_id(&m),
        .depth = tpout_instrument_definition_depth(&m),
        .trading_status = tpout_instrument_definition_trading_status(&m),
        .security_kind = tpout_instrument_definition_security_kind(&m),
        .venue = tpout_instrument_definition_venue(&m),
    };
    memcpy(d->symbol, tpout_instrument_definition_symbol(&m), TP_SYMBOL_LEN);
    return TP_TOPIC_DEFINITIONS;
}

static int decode_status(const uint8_t *body, size_t len, uint16_t block, uint16_t version,
                         struct tp_event *ev)
{
    struct tpout_instrument_status m;
    if (tpout_instrument_status_wrap_for_decode(&m, body, len, block, version) != 0)
        return -EBADMSG;
    DECODE_HEADER(instrument_status, &m, ev);
    ev->u.status = (struct tp_status_event){
        .kind = TP_STATUS_EVENT_TRADING,
        .trading_status = tpout_instrument_status_trading_status(&m),
        .venue_status = tpout_instrument_status_venue_status(&m),
        .price = TP_PRICE_NULL,
    };
    return TP_TOPIC_STATUS;
}

static int decode_statistics(const uint8_t *body, size_t len, uint16_t block, uint16_t version,
                             struct tp_event *ev)
{
    struct tpout_statistics m;
    if (tpout_statistics_wrap_for_decode(&m, body, len, block, version) != 0)
        return -EBADMSG;
    DECODE_HEADER(statistics, &m, ev);
    ev->u.status = (struct tp_status_event){
        .kind = TP_STATUS_EVENT_STAT,
        .stat_type = tpout_statistics_stat_type(&m),
        .price = tpout_statistics_price_mantissa(&m),
        .qty = tpout_statistics_quantity(&m),
    };
    return TP_TOPIC_STATUS;
}

static int decode_channel(const uint8_t *body, size_t len, uint16_t block, uint16_t version,
                          struct tp_event *ev)
{
    struct tpout_channel_event m;
    if (tpout_channel_event_wrap_for_decode(&m, body, len, block, version) != 0)
        return -EBADMSG;
    DECODE_HEADER(channel_event, &m, ev);
    ev->u.status = (struct tp_status_event){
        .kind = TP_STATUS_EVENT_CHANNEL,
        .stat_type = tpout_channel_event_event_type(&m),
        .channel_id = tpout_channel_event_channel_id(&m),
        .price = TP_PRICE_NULL,
        .qty = (int64_t)tpout_channel_event_gap_from(&m),
        .gap_to = tpout_channel_event_gap_to(&m),
    };
    return TP_TOPIC_STATUS;
}

int tp_decode_tpout(const void *payload, uint32_t length, struct tp_event *ev,
                    struct tp_level_change *changes, uint32_t max_changes, uint32_t *n_levels)
{
    const uint8_t *p = payload;
    if (length < TPOUT_MESSAGE_HEADER_ENCODED_LENGTH ||
        tpout_message_header_schema_id(p) != TPOUT_SCHEMA_ID)
        return -EBADMSG;
    uint16_t block = tpout_message_header_block_length(p);
    uint16_t version = tpout_message_header_version(p);
    const uint8_t *body = p + TPOUT_MESSAGE_HEADER_ENCODED_LENGTH;
    size_t len = length - TPOUT_MESSAGE_HEADER_ENCODED_LENGTH;
    ev->sbe = payload;
    ev->sbe_length = length;
    switch (tpout_message_header_template_id(p)) {
    case TPOUT_BOOK_UPDATE_TEMPLATE_ID:
        return decode_book_update(body, len, block, version, ev, changes, max_changes);
    case TPOUT_TOP_OF_BOOK_TEMPLATE_ID:
        return decode_top(body, len, block, version, ev);
    case TPOUT_TRADE_TEMPLATE_ID:
        return decode_trade(body, len, block, version, ev);
    case TPOUT_ORDER_EVENT_TEMPLATE_ID:
        return decode_order(body, len, block, version, ev, changes, max_changes, n_levels);
    case TPOUT_INSTRUMENT_DEFINITION_TEMPLATE_ID:
        return decode_definition(body, len, block, version, ev);
    case TPOUT_INSTRUMENT_STATUS_TEMPLATE_ID:
        return decode_status(body, len, block, version, ev);
    case TPOUT_STATISTICS_TEMPLATE_ID:
        return decode_statistics(body, len, block, version, ev);
    case TPOUT_CHANNEL_EVENT_TEMPLATE_ID:
        return decode_channel(body, len, block, version, ev);
    default:
        return -EBADMSG;
    }
}
