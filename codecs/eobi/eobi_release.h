/*
 * eobi_release.h - the T7 releases whose EOBI layouts tickplane reads, and the conversion of a
 * packet of one release to the 6.0 layouts of eobi.h (the ones the feed reads) and back.
 *
 * Eurex changes EOBI layouts with T7 releases and runs two at once during a migration
 * (simulation on the new release, production on the old one), on different multicast groups.
 * The release is therefore a property of a channel (config key "release"; the build's default,
 * -Deobi_release, for a channel that names none and for the tools).
 *
 * Releases:
 *   6.0  the layouts of eobi.h.
 *   7.0  quantities become decimals: every quantity field (DisplayQty, PrevDisplayQty, LastQty,
 *        BidSize, OfferSize, ImbalanceQty, MDEntrySize, RestingHiddenQty, RestingCxlQty) is an
 *        int64 with 4 implied decimals instead of an int32 (null: INT64_MIN). So every message
 *        the book uses grows or moves its fields:
 *          OrderAdd 48 -> 56, OrderModify 72 -> 80, OrderDelete 56 -> 64,
 *          OrderModifySamePrio 64 -> 72 (OrderDetailsComp: Side, OrdType and Price move by 4;
 *          the pad after OrdType is 6 bytes);
 *          Full/PartialOrderExecution 52 -> 56: TrdMatchID moves from 36 to 12, Price from 12
 *          to 16, TrdRegTSTimePriority from 20 to 24, SecurityID from 28 to 32;
 *          TradeReport stays 48 but LastQty moves to 24 and TrdMatchID to 40;
 *          ExecutionSummary 64 -> 80 (LastPx moves from 48 to 56);
 *          InstrumentStateChange gains SoldOutIndicator (at 21, same length);
 *          AuctionBBO 56 -> 64, AuctionClearingPrice 48 -> 56;
 *          InstrumentSummary's fixed part 40 -> 48 (SoldOutIndicator at 39, NoMDEntries moves
 *          from 39 to 40) and its entries 16 -> 24 bytes; SnapshotOrder 32 -> 40;
 *          CrossRequest 32 -> 44 (LastPx, Side, CrossRequestType, InputSource added),
 *          QuoteRequest 32 -> 40, TopOfBook 40 -> 56 (BidSize, OfferSize added).
 *        Template ids, the PacketHeader, Heartbeat, OrderMassDelete, ProductStateChange and
 *        ProductSummary are unchanged.
 *
 * Telling releases apart. An EOBI packet names no layout version: only lengths differ. A message
 * fits a release when its BodyLen is that release's layout length, padded to at most the next
 * multiple of 8 (the venue pads: a 6.0 PartialOrderExecution of 52 bytes is sent as 56). A packet
 * is of another release when the first of its messages that fits some releases but not all fits
 * not the channel's (tp_eobi_release_check: the first release it fits). A packet whose messages
 * fit every release (heartbeats, executions without their ExecutionSummary, mass deletes, trade
 * reports, state changes) cannot be told apart and is read as the channel's release. Each
 * release is one column of the layout-length table: another release adds one.
 *
 * Conversion to 6.0 (tp_eobi_packet_to_v6): field by field by name; a 7.0 quantity is carried
 * when it is whole and fits an int32 (the book counts whole contracts): otherwise, as for a
 * message shorter than its layout, the message is written as a bare header that the 6.0 check
 * refuses (the feed counts it malformed and recovers the segment). Fields that 7.0 added
 * (SoldOutIndicator, CrossRequest's and TopOfBook's new fields) are not carried: the book uses
 * none of them. Unknown templates are copied as they are.
 */
#ifndef TP_EOBI_RELEASE_H
#define TP_EOBI_RELEASE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "eobi.h"
#include "eobi_release_default.h" /* TP_EOBI_RELEASE_DEFAULT: -Deobi_release */

enum tp_eobi_release {
    TP_EOBI_RELEASE_6_0 = 0,
    TP_EOBI_RELEASE_7_0 = 1,
    TP_EOBI_RELEASES = 2,
};

/* "6.0", "7.0". */
static inline const char *tp_eobi_release_name(enum tp_eobi_release r)
{
    return r == TP_EOBI_RELEASE_7_0 ? "7.0" : "6.0";
}

/* The release a name ("6.0", "7.0") gives, or -1. */
static inline int tp_eobi_release_parse(const char *name)
{
    for (int r = 0; r < TP_EOBI_RELEASES; r++)
        if (strcmp(name, tp_eobi_release_name((enum tp_eobi_release)r)) == 0)
            return r;
    return -1;
}

/* The names of the releases, for messages: "6.0, 7.0". */
#define TP_EOBI_RELEASE_NAMES "6.0, 7.0"

/* The release a tool's option names into *release: 0, or -EINVAL with why in err. */
static inline int tp_eobi_release_option(const char *name, enum tp_eobi_release *release, char *err,
                                         size_t errlen)
{
    int r = tp_eobi_release_parse(name);
    if (r < 0) {
        snprintf(err, errlen, "unknown T7 release '%s' (known: %s)", name, TP_EOBI_RELEASE_NAMES);
        return -EINVAL;
    }
    *release = (enum tp_eobi_release)r;
    return 0;
}

#define TP_EOBI70_MD_ENTRY_LEN         24
#define TP_EOBI70_NO_MD_ENTRIES_OFFSET 40
#define TP_EOBI_QTY_SCALE              10000 /* 7.0 quantities: 4 implied decimals */

/* A 7.0 quantity as a 6.0 one: null stays null; *ok = 0 when it is not whole or not an int32. */
static inline int32_t tp_eobi_qty_to_v6(int64_t qty, int *ok)
{
    if (qty == INT64_MIN)
        return TP_EOBI_QTY_NULL;
    if (qty % TP_EOBI_QTY_SCALE != 0 || qty / TP_EOBI_QTY_SCALE > INT32_MAX ||
        qty / TP_EOBI_QTY_SCALE <= INT32_MIN) {
        *ok = 0;
        return 0;
    }
    return (int32_t)(qty / TP_EOBI_QTY_SCALE);
}

static inline int64_t tp_eobi_qty_from_v6(int32_t qty)
{
    return qty == TP_EOBI_QTY_NULL ? INT64_MIN : (int64_t)qty * TP_EOBI_QTY_SCALE;
}

/* ---- the 7.0 layout table -------------------------------------------------------------- */

/* clang-format off */

/* X(TemplateID, C name as in eobi.h, manual name, 7.0 layout length, header included). */
#define TP_EOBI70_MESSAGES(X)                                                                      \
    X(13001, heartbeat, "Heartbeat", 16)                                                           \
    X(13002, packet_header, "PacketHeader", 32)                                                    \
    X(13100, order_add, "OrderAdd", 56)                                                            \
    X(13101, order_modify, "OrderModify", 80)                                                      \
    X(13102, order_delete, "OrderDelete", 64)                                                      \
    X(13103, order_mass_delete, "OrderMassDelete", 24)                                             \
    X(13104, full_order_execution, "FullOrderExecution", 56)                                       \
    X(13105, partial_order_execution, "PartialOrderExecution", 56)                                 \
    X(13106, order_modify_same_prio, "OrderModifySamePrio", 72)                                    \
    X(13201, trade_report, "TradeReport", 48)                                                      \
    X(13202, execution_summary, "ExecutionSummary", 80)                                            \
    X(13300, product_state_change, "ProductStateChange", 24)                                       \
    X(13301, instrument_state_change, "InstrumentStateChange", 32)                                 \
    X(13500, auction_bbo, "AuctionBBO", 64)                                                        \
    X(13501, auction_clearing_price, "AuctionClearingPrice", 56)                                   \
    X(13502, cross_request, "CrossRequest", 44)                                                    \
    X(13503, quote_request, "QuoteRequest", 40)                                                    \
    X(13504, top_of_book, "TopOfBook", 56)                                                         \
    X(13600, product_summary, "ProductSummary", 24)                                                \
    X(13601, instrument_summary, "InstrumentSummary", 48)                                          \
    X(13602, snapshot_order, "SnapshotOrder", 40)

/*
 * F(message, C name, wire name, kind, offset): a field 6.0 has too (same C name: it converts);
 * N(...): a field new in 7.0 (printed, not carried to the 6.0 form).
 */
#define TP_EOBI70_ORDER_DETAILS(F, N, M, O)                                                        \
    F(M, trd_reg_ts_time_priority, "trdregtstimepriority", U64, (O))                               \
    F(M, display_qty, "displayqty", QTY, (O) + 8)                                                  \
    F(M, side, "side", U8, (O) + 16)                                                               \
    F(M, ord_type, "ordtype", U8, (O) + 17)                                                        \
    F(M, pad6, "pad6", PAD6, (O) + 18)                                                             \
    F(M, price, "price", PRICE, (O) + 24)

#define TP_EOBI70_FIELDS_heartbeat(F, N, M) TP_EOBI_FIELDS_heartbeat(F, M)
#define TP_EOBI70_FIELDS_packet_header(F, N, M) TP_EOBI_FIELDS_packet_header(F, M)
#define TP_EOBI70_FIELDS_order_mass_delete(F, N, M) TP_EOBI_FIELDS_order_mass_delete(F, M)
#define TP_EOBI70_FIELDS_product_state_change(F, N, M) TP_EOBI_FIELDS_product_state_change(F, M)
#define TP_EOBI70_FIELDS_product_summary(F, N, M) TP_EOBI_FIELDS_product_summary(F, M)

#define TP_EOBI70_FIELDS_order_add(F, N, M)                                                        \
    F(M, trd_reg_ts_time_in, "trdregtstimein", U64, 8)                                             \
    F(M, security_id, "securityid", I64, 16)                                                       \
    TP_EOBI70_ORDER_DETAILS(F, N, M, 24)

#define TP_EOBI70_FIELDS_order_modify(F, N, M)                                                     \
    F(M, trd_reg_ts_time_in, "trdregtstimein", U64, 8)                                             \
    F(M, trd_reg_ts_prev_time_priority, "trdregtsprevtimepriority", U64, 16)                       \
    F(M, prev_price, "prevprice", PRICE, 24)                                                       \
    F(M, prev_display_qty, "prevdisplayqty", QTY, 32)                                              \
    F(M, security_id, "securityid", I64, 40)                                                       \
    TP_EOBI70_ORDER_DETAILS(F, N, M, 48)

#define TP_EOBI70_FIELDS_order_delete(F, N, M)                                                     \
    F(M, trd_reg_ts_time_in, "trdregtstimein", U64, 8)                                             \
    F(M, transact_time, "transacttime", U64, 16)                                                   \
    F(M, security_id, "securityid", I64, 24)                                                       \
    TP_EOBI70_ORDER_DETAILS(F, N, M, 32)

#define TP_EOBI70_EXECUTION_FIELDS(F, N, M)                                                        \
    F(M, side, "side", U8, 8)                                                                      \
    F(M, ord_type, "ordtype", U8, 9)                                                               \
    F(M, algorithmic_trade_indicator, "algorithmictradeindicator", U8, 10)                         \
    F(M, pad1, "pad1", PAD1, 11)                                                                   \
    F(M, trd_match_id, "trdmatchid", U32, 12)                                                      \
    F(M, price, "price", PRICE, 16)                                                                \
    F(M, trd_reg_ts_time_priority, "trdregtstimepriority", U64, 24)                                \
    F(M, security_id, "securityid", I64, 32)                                                       \
    F(M, last_qty, "lastqty", QTY, 40)                                                             \
    F(M, last_px, "lastpx", PRICE, 48)

#define TP_EOBI70_FIELDS_full_order_execution(F, N, M)    TP_EOBI70_EXECUTION_FIELDS(F, N, M)
#define TP_EOBI70_FIELDS_partial_order_execution(F, N, M) TP_EOBI70_EXECUTION_FIELDS(F, N, M)

#define TP_EOBI70_FIELDS_order_modify_same_prio(F, N, M)                                           \
    F(M, trd_reg_ts_time_in, "trdregtstimein", U64, 8)                                             \
    F(M, transact_time, "transacttime", U64, 16)                                                   \
    F(M, prev_display_qty, "prevdisplayqty", QTY, 24)                                              \
    F(M, security_id, "securityid", I64, 32)                                                       \
    TP_EOBI70_ORDER_DETAILS(F, N, M, 40)

#define TP_EOBI70_FIELDS_trade_report(F, N, M)                                                     \
    F(M, security_id, "securityid", I64, 8)                                                        \
    F(M, transact_time, "transacttime", U64, 16)                                                   \
    F(M, last_qty, "lastqty", QTY, 24)                                                             \
    F(M, last_px, "lastpx", PRICE, 32)                                                             \
    F(M, trd_match_id, "trdmatchid", U32, 40)                                                      \
    F(M, match_type, "matchtype", U8, 44)                                                          \
    F(M, match_sub_type, "matchsubtype", U8, 45)                                                   \
    F(M, algorithmic_trade_indicator, "algorithmictradeindicator", U8, 46)                         \
    F(M, trade_condition, "tradecondition", U8, 47)

#define TP_EOBI70_FIELDS_execution_summary(F, N, M)                                                \
    F(M, security_id, "securityid", I64, 8)                                                        \
    F(M, aggressor_time, "aggressortime", U64, 16)                                                 \
    F(M, request_time, "requesttime", U64, 24)                                                     \
    F(M, exec_id, "execid", U64, 32)                                                               \
    F(M, last_qty, "lastqty", QTY, 40)                                                             \
    F(M, aggressor_side, "aggressorside", U8, 48)                                                  \
    F(M, trade_condition, "tradecondition", U8, 49)                                                \
    F(M, pad6, "pad6", PAD6, 50)                                                                   \
    F(M, last_px, "lastpx", PRICE, 56)                                                             \
    F(M, resting_hidden_qty, "restinghiddenqty", QTY, 64)                                          \
    F(M, resting_cxl_qty, "restingcxlqty", QTY, 72)

#define TP_EOBI70_FIELDS_instrument_state_change(F, N, M)                                          \
    TP_EOBI_INSTRUMENT_STATE_CHANGE_HEAD(F, M)                                                     \
    N(M, sold_out_indicator, "soldoutindicator", U8, 21)                                           \
    F(M, pad2, "pad2", PAD2, 22)                                                                   \
    F(M, transact_time, "transacttime", U64, 24)

#define TP_EOBI70_FIELDS_auction_bbo(F, N, M)                                                      \
    F(M, transact_time, "transacttime", U64, 8)                                                    \
    F(M, security_id, "securityid", I64, 16)                                                       \
    F(M, bid_px, "bidpx", PRICE, 24)                                                               \
    F(M, offer_px, "offerpx", PRICE, 32)                                                           \
    F(M, bid_size, "bidsize", QTY, 40)                                                             \
    F(M, offer_size, "offersize", QTY, 48)                                                         \
    F(M, potential_security_trading_event, "potentialsecuritytradingevent", U8, 56)                \
    F(M, pad7, "pad7", PAD7, 57)

#define TP_EOBI70_FIELDS_auction_clearing_price(F, N, M)                                           \
    F(M, transact_time, "transacttime", U64, 8)                                                    \
    F(M, security_id, "securityid", I64, 16)                                                       \
    F(M, last_px, "lastpx", PRICE, 24)                                                             \
    F(M, last_qty, "lastqty", QTY, 32)                                                             \
    F(M, imbalance_qty, "imbalanceqty", QTY, 40)                                                   \
    F(M, security_trading_status, "securitytradingstatus", U8, 48)                                 \
    F(M, potential_security_trading_event, "potentialsecuritytradingevent", U8, 49)                \
    F(M, pad6, "pad6", PAD6, 50)

#define TP_EOBI70_FIELDS_cross_request(F, N, M)                                                    \
    F(M, security_id, "securityid", I64, 8)                                                        \
    N(M, last_px, "lastpx", PRICE, 16)                                                             \
    F(M, last_qty, "lastqty", QTY, 24)                                                             \
    N(M, side, "side", U8, 32)                                                                     \
    N(M, cross_request_type, "crossrequesttype", U8, 33)                                           \
    N(M, input_source, "inputsource", U8, 34)                                                      \
    F(M, pad1, "pad1", PAD1, 35)                                                                   \
    F(M, transact_time, "transacttime", U64, 36)

#define TP_EOBI70_FIELDS_quote_request(F, N, M)                                                    \
    F(M, security_id, "securityid", I64, 8)                                                        \
    F(M, last_qty, "lastqty", QTY, 16)                                                             \
    F(M, side, "side", U8, 24)                                                                     \
    F(M, pad7, "pad7", PAD7, 25)                                                                   \
    F(M, transact_time, "transacttime", U64, 32)

#define TP_EOBI70_FIELDS_top_of_book(F, N, M)                                                      \
    F(M, transact_time, "transacttime", U64, 8)                                                    \
    F(M, security_id, "securityid", I64, 16)                                                       \
    F(M, bid_px, "bidpx", PRICE, 24)                                                               \
    F(M, offer_px, "offerpx", PRICE, 32)                                                           \
    N(M, bid_size, "bidsize", QTY, 40)                                                             \
    N(M, offer_size, "offersize", QTY, 48)

/* The fixed part; NoMDEntries entries of TP_EOBI70_FIELDS_md_entry follow it. */
#define TP_EOBI70_FIELDS_instrument_summary(F, N, M)                                               \
    TP_EOBI_INSTRUMENT_SUMMARY_HEAD(F, M)                                                          \
    N(M, sold_out_indicator, "soldoutindicator", U8, 39)                                           \
    F(M, no_md_entries, "nomdentries", U8, 40)                                                     \
    F(M, pad7, "pad7", PAD7, 41)

#define TP_EOBI70_FIELDS_md_entry(F, N, M)                                                         \
    F(M, md_entry_px, "mdentrypx", PRICE, 0)                                                       \
    F(M, md_entry_size, "mdentrysize", QTY, 8)                                                     \
    F(M, md_entry_type, "mdentrytype", U8, 16)                                                     \
    F(M, trade_condition, "tradecondition", U8, 17)                                                \
    F(M, pad6, "pad6", PAD6, 18)

#define TP_EOBI70_FIELDS_snapshot_order(F, N, M) TP_EOBI70_ORDER_DETAILS(F, N, M, 8)

/* ---- generated: 7.0 message -> 6.0 struct, and 6.0 struct -> 7.0 message ---------------- */

#define TP_EOBI70_GET_U8(d, p)    (d) = *(p);
#define TP_EOBI70_GET_U16(d, p)   (d) = tp_eobi_le16(p);
#define TP_EOBI70_GET_U32(d, p)   (d) = tp_eobi_le32(p);
#define TP_EOBI70_GET_I32(d, p)   (d) = (int32_t)tp_eobi_le32(p);
#define TP_EOBI70_GET_U64(d, p)   (d) = tp_eobi_le64(p);
#define TP_EOBI70_GET_I64(d, p)   (d) = (int64_t)tp_eobi_le64(p);
#define TP_EOBI70_GET_PRICE(d, p) (d) = (int64_t)tp_eobi_le64(p);
#define TP_EOBI70_GET_QTY(d, p)   (d) = tp_eobi_qty_to_v6((int64_t)tp_eobi_le64(p), &ok);
#define TP_EOBI70_GET_PAD1(d, p)
#define TP_EOBI70_GET_PAD2(d, p)
#define TP_EOBI70_GET_PAD3(d, p)
#define TP_EOBI70_GET_PAD4(d, p)
#define TP_EOBI70_GET_PAD6(d, p)
#define TP_EOBI70_GET_PAD7(d, p)
#define TP_EOBI70_GEN_GET(M, f, name, kind, off) TP_EOBI70_GET_##kind(v->f, msg + (off))
#define TP_EOBI70_GEN_SKIP(M, f, name, kind, off)
#define TP_EOBI_GEN_PUT_QTY(p, v) tp_eobi_store64(p, (uint64_t)tp_eobi_qty_from_v6(v));
#define TP_EOBI70_GEN_PUT_PAD(M, f, name, kind, off) TP_EOBI_GEN_PUT_##kind(buf + (off), 0)
#define TP_EOBI70_GEN_PUT(M, f, name, kind, off) TP_EOBI_GEN_PUT_##kind(buf + (off), v->f)

/*
 * tp_eobi70_<m>_decode(msg, v): a 7.0 message (that holds its layout) into the 6.0 struct; 0, or
 * -ERANGE when a quantity is not whole or not an int32.
 * tp_eobi70_<m>_encode(buf, cap, v, seq): the 6.0 struct as a 7.0 message (fields new in 7.0
 * zero); bytes written or -ENOSPC.
 */
#define TP_EOBI70_GEN_MESSAGE(T, M, NAME, LEN)                                                     \
    static inline int tp_eobi70_##M##_decode(const uint8_t *msg, struct tp_eobi_##M *v)            \
    {                                                                                              \
        int ok = 1;                                                                                \
        memset(v, 0, sizeof(*v));                                                                  \
        TP_EOBI70_FIELDS_##M(TP_EOBI70_GEN_GET, TP_EOBI70_GEN_SKIP, M) return ok ? 0 : -ERANGE;    \
    }                                                                                              \
    static inline int tp_eobi70_##M##_encode(uint8_t *buf, size_t cap,                             \
                                             const struct tp_eobi_##M *v, uint32_t msg_seq_num)    \
    {                                                                                              \
        if (tp_eobi_message_begin(buf, cap, (LEN), (T), msg_seq_num) != 0)                         \
            return -ENOSPC;                                                                        \
        TP_EOBI70_FIELDS_##M(TP_EOBI70_GEN_PUT, TP_EOBI70_GEN_SKIP, M) return (LEN);               \
    }

/* clang-format on */

TP_EOBI70_MESSAGES(TP_EOBI70_GEN_MESSAGE)

static inline int tp_eobi70_md_entry_decode(const uint8_t *msg, struct tp_eobi_md_entry *v)
{
    int ok = 1;
    memset(v, 0, sizeof(*v));
    TP_EOBI70_FIELDS_md_entry(TP_EOBI70_GEN_GET, TP_EOBI70_GEN_SKIP, md_entry) return ok ? 0
                                                                                         : -ERANGE;
}

static inline void tp_eobi70_md_entry_put(uint8_t *buf, const struct tp_eobi_md_entry *v)
{
    memset(buf, 0, TP_EOBI70_MD_ENTRY_LEN);
    TP_EOBI70_FIELDS_md_entry(TP_EOBI70_GEN_PUT, TP_EOBI70_GEN_SKIP, md_entry)
}

#define TP_EOBI70_GEN_SIZE_CHECK(T, M, NAME, LEN)                                                  \
    _Static_assert(TP_EOBI_MESSAGE_HEADER_LEN TP_EOBI70_FIELDS_##M(TP_EOBI_GEN_WIDTH,              \
                                                                   TP_EOBI_GEN_WIDTH, M) == (LEN), \
                   #M " 7.0 length");
TP_EOBI70_MESSAGES(TP_EOBI70_GEN_SIZE_CHECK)
_Static_assert(0 TP_EOBI70_FIELDS_md_entry(TP_EOBI_GEN_WIDTH, TP_EOBI_GEN_WIDTH, md_entry) ==
                   TP_EOBI70_MD_ENTRY_LEN,
               "md_entry 7.0 length");

/* ---- packets ----------------------------------------------------------------------------- */

/*
 * Bytes a message of len bytes needs in release r: its layout, plus its entries for an
 * InstrumentSummary (counted when the fixed part is there). 0 for a template r does not have.
 */
size_t tp_eobi_release_needed(enum tp_eobi_release r, const uint8_t *msg, size_t len);

/* tp_eobi_check for release r's layouts: the template id, -ENOMSG or -EBADMSG. */
int tp_eobi_release_check_message(enum tp_eobi_release r, const uint8_t *msg, size_t len);

/* Whether a message of len bytes (its BodyLen) fits release r's layout (see above). */
int tp_eobi_release_fits(enum tp_eobi_release r, const uint8_t *msg, size_t len);

/*
 * The release check of a packet for a channel of release r: 0 when it may be read as r (it does
 * not frame, or the first message that fits some releases but not all fits r), or -EPROTO when
 * that message fits release *other (the first it fits) and not r (the packet must be dropped,
 * not read).
 */
int tp_eobi_release_check(enum tp_eobi_release r, const uint8_t *pkt, size_t len,
                          enum tp_eobi_release *other);

/*
 * Converts a packet of release r (len bytes) to the 6.0 layouts in out (cap bytes; len bytes are
 * always enough: no 6.0 layout is longer than its 7.0 one). Returns the bytes written, or
 * -EBADMSG when the packet has no PacketHeader (nothing written). A message that does not frame
 * ends the packet there, as tp_eobi_packet_next does; one shorter than its layout or with a
 * quantity 6.0 cannot hold becomes a bare message header (malformed for the 6.0 check).
 */
int tp_eobi_packet_to_v6(enum tp_eobi_release r, const uint8_t *pkt, size_t len, uint8_t *out,
                         size_t cap);

/*
 * Converts a 6.0 packet to release r in out (cap bytes; 2 * len are always enough). Returns the
 * bytes written, -EBADMSG when the packet has no PacketHeader or a message does not hold its 6.0
 * layout, or -ENOSPC. Unknown templates are copied as they are.
 */
int tp_eobi_packet_from_v6(enum tp_eobi_release r, const uint8_t *pkt, size_t len, uint8_t *out,
                           size_t cap);

#endif /* TP_EOBI_RELEASE_H */
