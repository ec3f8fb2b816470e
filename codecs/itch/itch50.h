/*
 * itch50.h - Nasdaq TotalView-ITCH 5.0: flyweight readers and writers for every message type.
 *
 * Promise: every message of the 5.0 specification (S R H Y L V W K J h A F E C X D U P Q B I N O)
 * can be checked, read in place and written. Reading never touches a byte before the message's
 * length has been checked once against the exact length the specification gives its type
 * (tp_itch_check); after that, accessors read fixed offsets with no further checks.
 *
 * The wire format is big-endian, unaligned, with 6-byte timestamps (ns since midnight),
 * Price(4) (4 implied decimals, uint32) and Price(8) (8 implied decimals, uint64). The project's
 * common price unit is "price9" (int64, 9 implied decimals): tp_itch_price4_to_p9 and
 * tp_itch_price8_to_p9 convert, and every price field has a *_p9 accessor too.
 *
 * One table describes the layout: TP_ITCH_MESSAGES lists the types, TP_ITCH_FIELDS_<name> lists
 * each type's fields (C name, specification name, kind, offset) exactly as the specification's
 * tables do. From it the preprocessor generates, for a message <m> with field <f>:
 *
 *   T    tp_itch_<m>_<f>(const uint8_t *msg)          read in place (after tp_itch_check)
 *   int64_t tp_itch_<m>_<f>_p9(const uint8_t *msg)    price fields only: value in price9
 *   struct tp_itch_<m>                                 plain values, for writers and tests
 *   int  tp_itch_<m>_encode(uint8_t *buf, size_t cap, const struct tp_itch_<m> *v)
 *                                                      -> bytes written, or -ENOSPC
 *   int  tp_itch_<m>_decode(const uint8_t *msg, size_t len, struct tp_itch_<m> *v)
 *                                                      -> 0, or -EBADMSG (type/length wrong)
 *
 * Alpha fields (stock, mpid, ...) are left-justified and space padded on the wire. Readers return
 * a pointer to the bytes in place (NOT NUL-terminated: Alpha(8) is 8 bytes, see TP_ITCH_WIDTH_*);
 * structs hold char arrays of the exact width (tp_itch_alpha_set fills one from a C string).
 * Message types are plain chars ('A' for add_order ...): see enum tp_itch_type.
 * Header only, no allocation; the JSON printer is in itch50_json.h.
 */
#ifndef TP_ITCH50_H
#define TP_ITCH50_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "net_bytes.h"

/* ---- field kinds: wire width and C type ------------------------------------------------ */

enum tp_itch_kind {
    TP_ITCH_KIND_CHAR,   /* Alpha(1): one ASCII code */
    TP_ITCH_KIND_U16,    /* Integer(2) */
    TP_ITCH_KIND_U32,    /* Integer(4) */
    TP_ITCH_KIND_U64,    /* Integer(8) */
    TP_ITCH_KIND_TS,     /* Timestamp(6): ns since midnight */
    TP_ITCH_KIND_PRICE4, /* Price(4): uint32, 4 implied decimals */
    TP_ITCH_KIND_PRICE8, /* Price(8): uint64, 8 implied decimals */
    TP_ITCH_KIND_ALPHA2, /* Alpha(2) */
    TP_ITCH_KIND_ALPHA4, /* Alpha(4) */
    TP_ITCH_KIND_ALPHA8, /* Alpha(8) */
};

#define TP_ITCH_WIDTH_CHAR   1
#define TP_ITCH_WIDTH_U16    2
#define TP_ITCH_WIDTH_U32    4
#define TP_ITCH_WIDTH_U64    8
#define TP_ITCH_WIDTH_TS     6
#define TP_ITCH_WIDTH_PRICE4 4
#define TP_ITCH_WIDTH_PRICE8 8
#define TP_ITCH_WIDTH_ALPHA2 2
#define TP_ITCH_WIDTH_ALPHA4 4
#define TP_ITCH_WIDTH_ALPHA8 8

/* The longest message (noii, 50 bytes): a buffer this big holds any valid message. */
#define TP_ITCH_MAX_MESSAGE_LEN 50

/* ---- price conversions ---------------------------------------------------------------- */

/* Price(4) -> price9. Cannot overflow: 2^32 * 10^5 < 2^63. */
static inline int64_t tp_itch_price4_to_p9(uint32_t price4)
{
    return (int64_t)price4 * 100000;
}

/* Price(8) -> price9. Values beyond the int64 range (not real prices) saturate at INT64_MAX. */
static inline int64_t tp_itch_price8_to_p9(uint64_t price8)
{
    return price8 > (uint64_t)INT64_MAX / 10 ? INT64_MAX : (int64_t)(price8 * 10);
}

/* price9 -> Price(4), truncating digits beyond the 4th decimal (writers: the simulator). */
static inline uint32_t tp_itch_p9_to_price4(int64_t p9)
{
    return (uint32_t)(p9 / 100000);
}

static inline uint64_t tp_itch_p9_to_price8(int64_t p9)
{
    return (uint64_t)(p9 / 10);
}

/* Fills an Alpha(width) field from a C string: left-justified, space padded, truncated. */
static inline void tp_itch_alpha_set(char *dst, size_t width, const char *src)
{
    size_t n = 0;
    while (n < width && src[n] != '\0')
        n++;
    memcpy(dst, src, n);
    memset(dst + n, ' ', width - n);
}

/* ---- the layout table (from the ITCH 5.0 specification, section 1) -------------------- */

/* The tables read best one field per line, as in the specification. */
/* clang-format off */

/* X(type char, C name, exact length in bytes) for every message type. */
#define TP_ITCH_MESSAGES(X)                                                                        \
    X('S', system_event, 12)                                                                       \
    X('R', stock_directory, 39)                                                                    \
    X('H', stock_trading_action, 25)                                                               \
    X('Y', reg_sho_restriction, 20)                                                                \
    X('L', market_participant_position, 26)                                                        \
    X('V', mwcb_decline_level, 35)                                                                 \
    X('W', mwcb_status, 12)                                                                        \
    X('K', ipo_quoting_period_update, 28)                                                          \
    X('J', luld_auction_collar, 35)                                                                \
    X('h', operational_halt, 21)                                                                   \
    X('A', add_order, 36)                                                                          \
    X('F', add_order_mpid, 40)                                                                     \
    X('E', order_executed, 31)                                                                     \
    X('C', order_executed_with_price, 36)                                                          \
    X('X', order_cancel, 23)                                                                       \
    X('D', order_delete, 19)                                                                       \
    X('U', order_replace, 35)                                                                      \
    X('P', trade, 44)                                                                              \
    X('Q', cross_trade, 40)                                                                        \
    X('B', broken_trade, 19)                                                                       \
    X('I', noii, 50)                                                                               \
    X('N', rpii, 20)                                                                               \
    X('O', dlcr_price_discovery, 48)

enum tp_itch_type {
    TP_ITCH_SYSTEM_EVENT = 'S',
    TP_ITCH_STOCK_DIRECTORY = 'R',
    TP_ITCH_STOCK_TRADING_ACTION = 'H',
    TP_ITCH_REG_SHO_RESTRICTION = 'Y',
    TP_ITCH_MARKET_PARTICIPANT_POSITION = 'L',
    TP_ITCH_MWCB_DECLINE_LEVEL = 'V',
    TP_ITCH_MWCB_STATUS = 'W',
    TP_ITCH_IPO_QUOTING_PERIOD_UPDATE = 'K',
    TP_ITCH_LULD_AUCTION_COLLAR = 'J',
    TP_ITCH_OPERATIONAL_HALT = 'h',
    TP_ITCH_ADD_ORDER = 'A',
    TP_ITCH_ADD_ORDER_MPID = 'F',
    TP_ITCH_ORDER_EXECUTED = 'E',
    TP_ITCH_ORDER_EXECUTED_WITH_PRICE = 'C',
    TP_ITCH_ORDER_CANCEL = 'X',
    TP_ITCH_ORDER_DELETE = 'D',
    TP_ITCH_ORDER_REPLACE = 'U',
    TP_ITCH_TRADE = 'P',
    TP_ITCH_CROSS_TRADE = 'Q',
    TP_ITCH_BROKEN_TRADE = 'B',
    TP_ITCH_NOII = 'I',
    TP_ITCH_RPII = 'N',
    TP_ITCH_DLCR_PRICE_DISCOVERY = 'O',
};

/*
 * Fields: F(message, C name, specification name, kind, byte offset). Offset 0 is the message
 * type; every message starts with the same three header fields.
 */
#define TP_ITCH_HEADER_FIELDS(F, M)                                                                \
    F(M, stock_locate, "stock_locate", U16, 1)                                                     \
    F(M, tracking_number, "tracking_number", U16, 3)                                               \
    F(M, timestamp, "timestamp", TS, 5)

#define TP_ITCH_FIELDS_system_event(F, M)                                                          \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, event_code, "event_code", CHAR, 11)

#define TP_ITCH_FIELDS_stock_directory(F, M)                                                       \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, stock, "stock", ALPHA8, 11)                                                               \
    F(M, market_category, "market_category", CHAR, 19)                                             \
    F(M, financial_status_indicator, "financial_status_indicator", CHAR, 20)                       \
    F(M, round_lot_size, "round_lot_size", U32, 21)                                                \
    F(M, round_lots_only, "round_lots_only", CHAR, 25)                                             \
    F(M, issue_classification, "issue_classification", CHAR, 26)                                   \
    F(M, issue_sub_type, "issue_sub_type", ALPHA2, 27)                                             \
    F(M, authenticity, "authenticity", CHAR, 29)                                                   \
    F(M, short_sale_threshold_indicator, "short_sale_threshold_indicator", CHAR, 30)               \
    F(M, ipo_flag, "ipo_flag", CHAR, 31)                                                           \
    F(M, luld_reference_price_tier, "luld_reference_price_tier", CHAR, 32)                         \
    F(M, etp_flag, "etp_flag", CHAR, 33)                                                           \
    F(M, etp_leverage_factor, "etp_leverage_factor", U32, 34)                                      \
    F(M, inverse_indicator, "inverse_indicator", CHAR, 38)

#define TP_ITCH_FIELDS_stock_trading_action(F, M)                                                  \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, stock, "stock", ALPHA8, 11)                                                               \
    F(M, trading_state, "trading_state", CHAR, 19)                                                 \
    F(M, reserved, "reserved", CHAR, 20)                                                           \
    F(M, reason, "reason", ALPHA4, 21)

#define TP_ITCH_FIELDS_reg_sho_restriction(F, M)                                                   \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, stock, "stock", ALPHA8, 11)                                                               \
    F(M, reg_sho_action, "reg_sho_action", CHAR, 19)

#define TP_ITCH_FIELDS_market_participant_position(F, M)                                           \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, mpid, "mpid", ALPHA4, 11)                                                                 \
    F(M, stock, "stock", ALPHA8, 15)                                                               \
    F(M, primary_market_maker, "primary_market_maker", CHAR, 23)                                   \
    F(M, market_maker_mode, "market_maker_mode", CHAR, 24)                                         \
    F(M, market_participant_state, "market_participant_state", CHAR, 25)

#define TP_ITCH_FIELDS_mwcb_decline_level(F, M)                                                    \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, level1, "level_1", PRICE8, 11)                                                            \
    F(M, level2, "level_2", PRICE8, 19)                                                            \
    F(M, level3, "level_3", PRICE8, 27)

#define TP_ITCH_FIELDS_mwcb_status(F, M)                                                           \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, breached_level, "breached_level", CHAR, 11)

#define TP_ITCH_FIELDS_ipo_quoting_period_update(F, M)                                             \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, stock, "stock", ALPHA8, 11)                                                               \
    F(M, ipo_quotation_release_time, "ipo_quotation_release_time", U32, 19)                        \
    F(M, ipo_quotation_release_qualifier, "ipo_quotation_release_qualifier", CHAR, 23)             \
    F(M, ipo_price, "ipo_price", PRICE4, 24)

#define TP_ITCH_FIELDS_luld_auction_collar(F, M)                                                   \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, stock, "stock", ALPHA8, 11)                                                               \
    F(M, reference_price, "auction_collar_reference_price", PRICE4, 19)                            \
    F(M, upper_price, "upper_auction_collar_price", PRICE4, 23)                                    \
    F(M, lower_price, "lower_auction_collar_price", PRICE4, 27)                                    \
    F(M, extension, "auction_collar_extension", U32, 31)

#define TP_ITCH_FIELDS_operational_halt(F, M)                                                      \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, stock, "stock", ALPHA8, 11)                                                               \
    F(M, market_code, "market_code", CHAR, 19)                                                     \
    F(M, operational_halt_action, "operational_halt_action", CHAR, 20)

#define TP_ITCH_FIELDS_add_order(F, M)                                                             \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, order_ref, "order_reference_number", U64, 11)                                             \
    F(M, side, "buy_sell_indicator", CHAR, 19)                                                     \
    F(M, shares, "shares", U32, 20)                                                                \
    F(M, stock, "stock", ALPHA8, 24)                                                               \
    F(M, price, "price", PRICE4, 32)

#define TP_ITCH_FIELDS_add_order_mpid(F, M)                                                        \
    TP_ITCH_FIELDS_add_order(F, M)                                                                 \
    F(M, attribution, "attribution", ALPHA4, 36)

#define TP_ITCH_FIELDS_order_executed(F, M)                                                        \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, order_ref, "order_reference_number", U64, 11)                                             \
    F(M, executed_shares, "executed_shares", U32, 19)                                              \
    F(M, match_number, "match_number", U64, 23)

#define TP_ITCH_FIELDS_order_executed_with_price(F, M)                                             \
    TP_ITCH_FIELDS_order_executed(F, M)                                                            \
    F(M, printable, "printable", CHAR, 31)                                                         \
    F(M, execution_price, "execution_price", PRICE4, 32)

#define TP_ITCH_FIELDS_order_cancel(F, M)                                                          \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, order_ref, "order_reference_number", U64, 11)                                             \
    F(M, cancelled_shares, "cancelled_shares", U32, 19)

#define TP_ITCH_FIELDS_order_delete(F, M)                                                          \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, order_ref, "order_reference_number", U64, 11)

#define TP_ITCH_FIELDS_order_replace(F, M)                                                         \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, original_order_ref, "original_order_reference_number", U64, 11)                           \
    F(M, new_order_ref, "new_order_reference_number", U64, 19)                                     \
    F(M, shares, "shares", U32, 27)                                                                \
    F(M, price, "price", PRICE4, 31)

#define TP_ITCH_FIELDS_trade(F, M)                                                                 \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, order_ref, "order_reference_number", U64, 11)                                             \
    F(M, side, "buy_sell_indicator", CHAR, 19)                                                     \
    F(M, shares, "shares", U32, 20)                                                                \
    F(M, stock, "stock", ALPHA8, 24)                                                               \
    F(M, price, "price", PRICE4, 32)                                                               \
    F(M, match_number, "match_number", U64, 36)

#define TP_ITCH_FIELDS_cross_trade(F, M)                                                           \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, shares, "shares", U64, 11)                                                                \
    F(M, stock, "stock", ALPHA8, 19)                                                               \
    F(M, cross_price, "cross_price", PRICE4, 27)                                                   \
    F(M, match_number, "match_number", U64, 31)                                                    \
    F(M, cross_type, "cross_type", CHAR, 39)

#define TP_ITCH_FIELDS_broken_trade(F, M)                                                          \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, match_number, "match_number", U64, 11)

#define TP_ITCH_FIELDS_noii(F, M)                                                                  \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, paired_shares, "paired_shares", U64, 11)                                                  \
    F(M, imbalance_shares, "imbalance_shares", U64, 19)                                            \
    F(M, imbalance_direction, "imbalance_direction", CHAR, 27)                                     \
    F(M, stock, "stock", ALPHA8, 28)                                                               \
    F(M, far_price, "far_price", PRICE4, 36)                                                       \
    F(M, near_price, "near_price", PRICE4, 40)                                                     \
    F(M, current_reference_price, "current_reference_price", PRICE4, 44)                           \
    F(M, cross_type, "cross_type", CHAR, 48)                                                       \
    F(M, price_variation_indicator, "price_variation_indicator", CHAR, 49)

#define TP_ITCH_FIELDS_rpii(F, M)                                                                  \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, stock, "stock", ALPHA8, 11)                                                               \
    F(M, interest_flag, "interest_flag", CHAR, 19)

#define TP_ITCH_FIELDS_dlcr_price_discovery(F, M)                                                  \
    TP_ITCH_HEADER_FIELDS(F, M)                                                                    \
    F(M, stock, "stock", ALPHA8, 11)                                                               \
    F(M, open_eligibility_status, "open_eligibility_status", CHAR, 19)                             \
    F(M, minimum_allowable_price, "minimum_allowable_price", PRICE4, 20)                           \
    F(M, maximum_allowable_price, "maximum_allowable_price", PRICE4, 24)                           \
    F(M, near_execution_price, "near_execution_price", PRICE4, 28)                                 \
    F(M, near_execution_time, "near_execution_time", U64, 32)                                      \
    F(M, lower_price_range_collar, "lower_price_range_collar", PRICE4, 40)                         \
    F(M, upper_price_range_collar, "upper_price_range_collar", PRICE4, 44)

/* clang-format on */

/* ---- message checks ------------------------------------------------------------------- */

/* Exact length of a message of this type, or 0 for a type the specification does not define. */
static inline size_t tp_itch_message_length(uint8_t type)
{
    switch (type) {
#define TP_ITCH_LENGTH_CASE(T, M, LEN)                                                             \
    case T:                                                                                        \
        return LEN;
        TP_ITCH_MESSAGES(TP_ITCH_LENGTH_CASE)
#undef TP_ITCH_LENGTH_CASE
    default:
        return 0;
    }
}

/*
 * The one check before reading a message in place: returns its type (a positive char) when
 * len is exactly the length of that type, -ENOMSG for an unknown type or an empty message,
 * -EBADMSG when the length is wrong.
 */
static inline int tp_itch_check(const uint8_t *msg, size_t len)
{
    if (len == 0)
        return -ENOMSG;
    size_t want = tp_itch_message_length(msg[0]);
    if (want == 0)
        return -ENOMSG;
    return len == want ? msg[0] : -EBADMSG;
}

/* Header fields shared by every type (valid after tp_itch_check). */
static inline uint16_t tp_itch_stock_locate(const uint8_t *msg)
{
    return tp_load_be16(msg + 1);
}

static inline uint16_t tp_itch_tracking_number(const uint8_t *msg)
{
    return tp_load_be16(msg + 3);
}

static inline uint64_t tp_itch_timestamp(const uint8_t *msg)
{
    return tp_load_be48(msg + 5);
}

/* ---- generated code: readers, structs, writers (one expansion per message) ------------- */

/* clang-format off */

/* C type of each kind inside the value structs. */
#define TP_ITCH_MEMBER_CHAR(f)   char f;
#define TP_ITCH_MEMBER_U16(f)    uint16_t f;
#define TP_ITCH_MEMBER_U32(f)    uint32_t f;
#define TP_ITCH_MEMBER_U64(f)    uint64_t f;
#define TP_ITCH_MEMBER_TS(f)     uint64_t f;
#define TP_ITCH_MEMBER_PRICE4(f) uint32_t f;
#define TP_ITCH_MEMBER_PRICE8(f) uint64_t f;
#define TP_ITCH_MEMBER_ALPHA2(f) char f[2];
#define TP_ITCH_MEMBER_ALPHA4(f) char f[4];
#define TP_ITCH_MEMBER_ALPHA8(f) char f[8];

/* In-place readers. */
#define TP_ITCH_READER_SCALAR(M, f, T, expr)                                                       \
    static inline T tp_itch_##M##_##f(const uint8_t *msg)                                          \
    {                                                                                              \
        return expr;                                                                               \
    }
#define TP_ITCH_READER_CHAR(M, f, off) TP_ITCH_READER_SCALAR(M, f, char, (char)msg[off])
#define TP_ITCH_READER_U16(M, f, off)  TP_ITCH_READER_SCALAR(M, f, uint16_t, tp_load_be16(msg + off))
#define TP_ITCH_READER_U32(M, f, off)  TP_ITCH_READER_SCALAR(M, f, uint32_t, tp_load_be32(msg + off))
#define TP_ITCH_READER_U64(M, f, off)  TP_ITCH_READER_SCALAR(M, f, uint64_t, tp_load_be64(msg + off))
#define TP_ITCH_READER_TS(M, f, off)   TP_ITCH_READER_SCALAR(M, f, uint64_t, tp_load_be48(msg + off))
#define TP_ITCH_READER_PRICE4(M, f, off)                                                           \
    TP_ITCH_READER_SCALAR(M, f, uint32_t, tp_load_be32(msg + off))                                 \
    TP_ITCH_READER_SCALAR(M, f##_p9, int64_t, tp_itch_price4_to_p9(tp_load_be32(msg + off)))
#define TP_ITCH_READER_PRICE8(M, f, off)                                                           \
    TP_ITCH_READER_SCALAR(M, f, uint64_t, tp_load_be64(msg + off))                                 \
    TP_ITCH_READER_SCALAR(M, f##_p9, int64_t, tp_itch_price8_to_p9(tp_load_be64(msg + off)))
#define TP_ITCH_READER_ALPHA2(M, f, off)                                                           \
    TP_ITCH_READER_SCALAR(M, f, const char *, (const char *)msg + off)
#define TP_ITCH_READER_ALPHA4(M, f, off) TP_ITCH_READER_ALPHA2(M, f, off)
#define TP_ITCH_READER_ALPHA8(M, f, off) TP_ITCH_READER_ALPHA2(M, f, off)

/* Store one struct member at its offset. */
#define TP_ITCH_PUT_CHAR(p, v)   (*(p) = (uint8_t)(v))
#define TP_ITCH_PUT_U16(p, v)    tp_store_be16(p, v)
#define TP_ITCH_PUT_U32(p, v)    tp_store_be32(p, v)
#define TP_ITCH_PUT_U64(p, v)    tp_store_be64(p, v)
#define TP_ITCH_PUT_TS(p, v)     tp_store_be48(p, v)
#define TP_ITCH_PUT_PRICE4(p, v) tp_store_be32(p, v)
#define TP_ITCH_PUT_PRICE8(p, v) tp_store_be64(p, v)
#define TP_ITCH_PUT_ALPHA2(p, v) memcpy(p, v, 2)
#define TP_ITCH_PUT_ALPHA4(p, v) memcpy(p, v, 4)
#define TP_ITCH_PUT_ALPHA8(p, v) memcpy(p, v, 8)

/* Load one member from its offset. */
#define TP_ITCH_GET_CHAR(v, p)   ((v) = (char)*(p))
#define TP_ITCH_GET_U16(v, p)    ((v) = tp_load_be16(p))
#define TP_ITCH_GET_U32(v, p)    ((v) = tp_load_be32(p))
#define TP_ITCH_GET_U64(v, p)    ((v) = tp_load_be64(p))
#define TP_ITCH_GET_TS(v, p)     ((v) = tp_load_be48(p))
#define TP_ITCH_GET_PRICE4(v, p) ((v) = tp_load_be32(p))
#define TP_ITCH_GET_PRICE8(v, p) ((v) = tp_load_be64(p))
#define TP_ITCH_GET_ALPHA2(v, p) memcpy(v, p, 2)
#define TP_ITCH_GET_ALPHA4(v, p) memcpy(v, p, 4)
#define TP_ITCH_GET_ALPHA8(v, p) memcpy(v, p, 8)

#define TP_ITCH_GEN_MEMBER(M, f, name, kind, off) TP_ITCH_MEMBER_##kind(f)
#define TP_ITCH_GEN_READER(M, f, name, kind, off) TP_ITCH_READER_##kind(M, f, off)
#define TP_ITCH_GEN_PUT(M, f, name, kind, off)    TP_ITCH_PUT_##kind(buf + (off), v->f);
#define TP_ITCH_GEN_GET(M, f, name, kind, off)    TP_ITCH_GET_##kind(v->f, msg + (off));

#define TP_ITCH_GEN_MESSAGE(T, M, LEN)                                                             \
    struct tp_itch_##M {                                                                           \
        TP_ITCH_FIELDS_##M(TP_ITCH_GEN_MEMBER, M)                                                  \
    };                                                                                             \
    TP_ITCH_FIELDS_##M(TP_ITCH_GEN_READER, M)                                                      \
                                                                                                   \
    static inline int tp_itch_##M##_encode(uint8_t *buf, size_t cap, const struct tp_itch_##M *v)  \
    {                                                                                              \
        if (cap < (LEN))                                                                           \
            return -ENOSPC;                                                                        \
        buf[0] = (uint8_t)(T);                                                                     \
        TP_ITCH_FIELDS_##M(TP_ITCH_GEN_PUT, M) return (LEN);                                       \
    }                                                                                              \
                                                                                                   \
    static inline int tp_itch_##M##_decode(const uint8_t *msg, size_t len, struct tp_itch_##M *v)  \
    {                                                                                              \
        if (len != (LEN) || msg[0] != (uint8_t)(T))                                                \
            return -EBADMSG;                                                                       \
        TP_ITCH_FIELDS_##M(TP_ITCH_GEN_GET, M) return 0;                                           \
    }

/* clang-format on */

TP_ITCH_MESSAGES(TP_ITCH_GEN_MESSAGE)

/* Compile-time proof that each type's field widths add up to its length (type byte included). */
#define TP_ITCH_GEN_WIDTH(M, f, name, kind, off) +TP_ITCH_WIDTH_##kind
#define TP_ITCH_GEN_SIZE_CHECK(T, M, LEN)                                                          \
    _Static_assert(1 TP_ITCH_FIELDS_##M(TP_ITCH_GEN_WIDTH, M) == (LEN), #M " length");
TP_ITCH_MESSAGES(TP_ITCH_GEN_SIZE_CHECK)

#endif /* TP_ITCH50_H */
