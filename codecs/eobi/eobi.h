/*
 * eobi.h - Eurex T7 Enhanced Order Book Interface (EOBI), release 6.0: packet framing and
 * flyweight readers and writers for the messages a book and its recovery need. Other releases
 * (eobi_release.h) are converted to these layouts, which the feed reads.
 *
 * Wire format: little-endian, fixed layouts, unaligned. A UDP payload is one packet: a
 * PacketHeader (itself a message, template 13002: ApplSeqNum, MarketSegmentID, PartitionID,
 * CompletionIndicator, ApplSeqResetIndicator, TransactTime), then messages back to back. Every
 * message starts with the 8-byte MessageHeaderComp: BodyLen u16 (the whole message, header
 * included), TemplateID u16, MsgSeqNum u32. Prices are int64 with 8 implied decimals
 * (null: INT64_MIN); quantities int32 (null: INT32_MIN).
 *
 * Promise: nothing here reads outside [data, data + len) of a packet.
 *   - tp_eobi_packet_init checks the PacketHeader (template, BodyLen inside the payload);
 *   - tp_eobi_packet_next checks each BodyLen once: at least a message header, at most what
 *     is left of the packet. A zero, short or overlong BodyLen ends the packet with -EBADMSG
 *     and its offset (messages returned before stay valid: they were inside the packet);
 *   - tp_eobi_check is the one check before reading a message in place: a known template whose
 *     BodyLen holds its 6.0 layout (and its repeating group, for InstrumentSummary). Bytes
 *     past the layout are allowed and ignored (the venue pads some messages); a message shorter
 *     than its layout is refused, never read.
 * After tp_eobi_check, the accessors read fixed offsets with no further checks.
 *
 * One table describes the layouts: TP_EOBI_MESSAGES lists the templates, TP_EOBI_FIELDS_<name>
 * each template's fields (C name, wire name, kind, offset from the message start) in wire
 * order; tests/conformance checks them against real 6.0 packets and an independent decoder. From it
 * the preprocessor generates, for message <m>, field <f>:
 *
 *   T    tp_eobi_<m>_<f>(const uint8_t *msg)       read in place (after tp_eobi_check)
 *   struct tp_eobi_<m>                              plain values (pads left out)
 *   int  tp_eobi_<m>_encode(uint8_t *buf, size_t cap, const struct tp_eobi_<m> *v, uint32_t seq)
 *                                                   -> bytes written (header and zero pads
 *                                                      included), or -ENOSPC
 *
 * Header only, no allocation; the JSON printer is in eobi_json.h.
 */
#ifndef TP_EOBI_H
#define TP_EOBI_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- little-endian loads and stores at any alignment ------------------------------------ */

static inline uint16_t tp_eobi_le16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? v : __builtin_bswap16(v);
}

static inline uint32_t tp_eobi_le32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? v : __builtin_bswap32(v);
}

static inline uint64_t tp_eobi_le64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? v : __builtin_bswap64(v);
}

static inline void tp_eobi_store16(uint8_t *p, uint16_t v)
{
    v = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? v : __builtin_bswap16(v);
    memcpy(p, &v, sizeof(v));
}

static inline void tp_eobi_store32(uint8_t *p, uint32_t v)
{
    v = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? v : __builtin_bswap32(v);
    memcpy(p, &v, sizeof(v));
}

static inline void tp_eobi_store64(uint8_t *p, uint64_t v)
{
    v = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? v : __builtin_bswap64(v);
    memcpy(p, &v, sizeof(v));
}

/* ---- field kinds: wire width and C type ------------------------------------------------ */

enum tp_eobi_kind {
    TP_EOBI_KIND_U8,
    TP_EOBI_KIND_U16,
    TP_EOBI_KIND_U32,
    TP_EOBI_KIND_I32,
    TP_EOBI_KIND_U64,
    TP_EOBI_KIND_I64,
    TP_EOBI_KIND_PRICE, /* int64, 8 implied decimals */
    TP_EOBI_KIND_QTY,   /* int64, 4 implied decimals (quantities from release 7.0 on) */
    TP_EOBI_KIND_PAD,   /* padding (PAD1 ... PAD7 in the tables: 1 ... 7 bytes) */
};

/* Table kind -> enum tp_eobi_kind. */
#define TP_EOBI_KIND_OF_U8    TP_EOBI_KIND_U8
#define TP_EOBI_KIND_OF_U16   TP_EOBI_KIND_U16
#define TP_EOBI_KIND_OF_U32   TP_EOBI_KIND_U32
#define TP_EOBI_KIND_OF_I32   TP_EOBI_KIND_I32
#define TP_EOBI_KIND_OF_U64   TP_EOBI_KIND_U64
#define TP_EOBI_KIND_OF_I64   TP_EOBI_KIND_I64
#define TP_EOBI_KIND_OF_PRICE TP_EOBI_KIND_PRICE
#define TP_EOBI_KIND_OF_QTY   TP_EOBI_KIND_QTY
#define TP_EOBI_KIND_OF_PAD1  TP_EOBI_KIND_PAD
#define TP_EOBI_KIND_OF_PAD2  TP_EOBI_KIND_PAD
#define TP_EOBI_KIND_OF_PAD3  TP_EOBI_KIND_PAD
#define TP_EOBI_KIND_OF_PAD4  TP_EOBI_KIND_PAD
#define TP_EOBI_KIND_OF_PAD6  TP_EOBI_KIND_PAD
#define TP_EOBI_KIND_OF_PAD7  TP_EOBI_KIND_PAD

#define TP_EOBI_WIDTH_U8    1
#define TP_EOBI_WIDTH_U16   2
#define TP_EOBI_WIDTH_U32   4
#define TP_EOBI_WIDTH_I32   4
#define TP_EOBI_WIDTH_U64   8
#define TP_EOBI_WIDTH_I64   8
#define TP_EOBI_WIDTH_PRICE 8
#define TP_EOBI_WIDTH_QTY   8
#define TP_EOBI_WIDTH_PAD1  1
#define TP_EOBI_WIDTH_PAD2  2
#define TP_EOBI_WIDTH_PAD3  3
#define TP_EOBI_WIDTH_PAD4  4
#define TP_EOBI_WIDTH_PAD6  6
#define TP_EOBI_WIDTH_PAD7  7

#define TP_EOBI_PRICE_NULL INT64_MIN
#define TP_EOBI_QTY_NULL   INT32_MIN

#define TP_EOBI_MESSAGE_HEADER_LEN 8  /* BodyLen, TemplateID, MsgSeqNum */
#define TP_EOBI_PACKET_HEADER_LEN  32 /* the PacketHeader message */
#define TP_EOBI_MD_ENTRY_LEN       16 /* one MDInstrumentEntryGrpComp of InstrumentSummary */
/* The MsgSeqNum of a PacketHeader and of a Heartbeat: they are not sequenced. */
#define TP_EOBI_NO_MSG_SEQ_NUM 0xFFFFFFFFu

/* Price (8 implied decimals) -> price9, saturating values no real price takes. */
static inline int64_t tp_eobi_price_to_p9(int64_t price)
{
    if (price > INT64_MAX / 10)
        return INT64_MAX;
    if (price < INT64_MIN / 10)
        return INT64_MIN;
    return price * 10;
}

/* ---- the layout table (T7 release 6.0 message layouts) ---------------------------------- */

/* The tables read best one field per line, as in the manual. */
/* clang-format off */

/* X(TemplateID, C name, manual name, layout length in bytes, message header included). */
#define TP_EOBI_MESSAGES(X)                                                                        \
    X(13001, heartbeat, "Heartbeat", 16)                                                           \
    X(13002, packet_header, "PacketHeader", 32)                                                    \
    X(13100, order_add, "OrderAdd", 48)                                                            \
    X(13101, order_modify, "OrderModify", 72)                                                      \
    X(13102, order_delete, "OrderDelete", 56)                                                      \
    X(13103, order_mass_delete, "OrderMassDelete", 24)                                             \
    X(13104, full_order_execution, "FullOrderExecution", 52)                                       \
    X(13105, partial_order_execution, "PartialOrderExecution", 52)                                 \
    X(13106, order_modify_same_prio, "OrderModifySamePrio", 64)                                    \
    X(13201, trade_report, "TradeReport", 48)                                                      \
    X(13202, execution_summary, "ExecutionSummary", 64)                                            \
    X(13300, product_state_change, "ProductStateChange", 24)                                       \
    X(13301, instrument_state_change, "InstrumentStateChange", 32)                                 \
    X(13500, auction_bbo, "AuctionBBO", 56)                                                        \
    X(13501, auction_clearing_price, "AuctionClearingPrice", 48)                                   \
    X(13502, cross_request, "CrossRequest", 32)                                                    \
    X(13503, quote_request, "QuoteRequest", 32)                                                    \
    X(13504, top_of_book, "TopOfBook", 40)                                                         \
    X(13600, product_summary, "ProductSummary", 24)                                                \
    X(13601, instrument_summary, "InstrumentSummary", 40)                                          \
    X(13602, snapshot_order, "SnapshotOrder", 32)

enum tp_eobi_template {
    TP_EOBI_HEARTBEAT = 13001,
    TP_EOBI_PACKET_HEADER = 13002,
    TP_EOBI_ORDER_ADD = 13100,
    TP_EOBI_ORDER_MODIFY = 13101,
    TP_EOBI_ORDER_DELETE = 13102,
    TP_EOBI_ORDER_MASS_DELETE = 13103,
    TP_EOBI_FULL_ORDER_EXECUTION = 13104,
    TP_EOBI_PARTIAL_ORDER_EXECUTION = 13105,
    TP_EOBI_ORDER_MODIFY_SAME_PRIO = 13106,
    TP_EOBI_TRADE_REPORT = 13201,
    TP_EOBI_EXECUTION_SUMMARY = 13202,
    TP_EOBI_PRODUCT_STATE_CHANGE = 13300,
    TP_EOBI_INSTRUMENT_STATE_CHANGE = 13301,
    TP_EOBI_AUCTION_BBO = 13500,
    TP_EOBI_AUCTION_CLEARING_PRICE = 13501,
    TP_EOBI_CROSS_REQUEST = 13502,
    TP_EOBI_QUOTE_REQUEST = 13503,
    TP_EOBI_TOP_OF_BOOK = 13504,
    TP_EOBI_PRODUCT_SUMMARY = 13600,
    TP_EOBI_INSTRUMENT_SUMMARY = 13601,
    TP_EOBI_SNAPSHOT_ORDER = 13602,
};

/* F(message, C name, wire name, kind, byte offset from the message start). */

/* OrderDetailsComp, the order part of several messages, at offset O. */
#define TP_EOBI_ORDER_DETAILS(F, M, O)                                                             \
    F(M, trd_reg_ts_time_priority, "trdregtstimepriority", U64, (O))                               \
    F(M, display_qty, "displayqty", I32, (O) + 8)                                                  \
    F(M, side, "side", U8, (O) + 12)                                                               \
    F(M, ord_type, "ordtype", U8, (O) + 13)                                                        \
    F(M, pad2, "pad2", PAD2, (O) + 14)                                                             \
    F(M, price, "price", PRICE, (O) + 16)

#define TP_EOBI_FIELDS_heartbeat(F, M)                                                             \
    F(M, last_msg_seq_num_processed, "lastmsgseqnumprocessed", U32, 8)                             \
    F(M, pad4, "pad4", PAD4, 12)

#define TP_EOBI_FIELDS_packet_header(F, M)                                                         \
    F(M, appl_seq_num, "applseqnum", U64, 8)                                                       \
    F(M, market_segment_id, "marketsegmentid", I32, 16)                                            \
    F(M, partition_id, "partitionid", U8, 20)                                                      \
    F(M, completion_indicator, "completionindicator", U8, 21)                                      \
    F(M, appl_seq_reset_indicator, "applseqresetindicator", U8, 22)                                \
    F(M, pad1, "pad1", PAD1, 23)                                                                   \
    F(M, transact_time, "transacttime", U64, 24)

#define TP_EOBI_FIELDS_order_add(F, M)                                                             \
    F(M, trd_reg_ts_time_in, "trdregtstimein", U64, 8)                                             \
    F(M, security_id, "securityid", I64, 16)                                                       \
    TP_EOBI_ORDER_DETAILS(F, M, 24)

#define TP_EOBI_FIELDS_order_modify(F, M)                                                          \
    F(M, trd_reg_ts_time_in, "trdregtstimein", U64, 8)                                             \
    F(M, trd_reg_ts_prev_time_priority, "trdregtsprevtimepriority", U64, 16)                       \
    F(M, prev_price, "prevprice", PRICE, 24)                                                       \
    F(M, prev_display_qty, "prevdisplayqty", I32, 32)                                              \
    F(M, pad4, "pad4", PAD4, 36)                                                                   \
    F(M, security_id, "securityid", I64, 40)                                                       \
    TP_EOBI_ORDER_DETAILS(F, M, 48)

#define TP_EOBI_FIELDS_order_delete(F, M)                                                          \
    F(M, trd_reg_ts_time_in, "trdregtstimein", U64, 8)                                             \
    F(M, transact_time, "transacttime", U64, 16)                                                   \
    F(M, security_id, "securityid", I64, 24)                                                       \
    TP_EOBI_ORDER_DETAILS(F, M, 32)

#define TP_EOBI_FIELDS_order_mass_delete(F, M)                                                     \
    F(M, security_id, "securityid", I64, 8)                                                        \
    F(M, transact_time, "transacttime", U64, 16)

/* Full and partial executions share one layout. */
#define TP_EOBI_EXECUTION_FIELDS(F, M)                                                             \
    F(M, side, "side", U8, 8)                                                                      \
    F(M, ord_type, "ordtype", U8, 9)                                                               \
    F(M, algorithmic_trade_indicator, "algorithmictradeindicator", U8, 10)                         \
    F(M, pad1, "pad1", PAD1, 11)                                                                   \
    F(M, price, "price", PRICE, 12)                                                                \
    F(M, trd_reg_ts_time_priority, "trdregtstimepriority", U64, 20)                                \
    F(M, security_id, "securityid", I64, 28)                                                       \
    F(M, trd_match_id, "trdmatchid", U32, 36)                                                      \
    F(M, last_qty, "lastqty", I32, 40)                                                             \
    F(M, last_px, "lastpx", PRICE, 44)

#define TP_EOBI_FIELDS_full_order_execution(F, M)    TP_EOBI_EXECUTION_FIELDS(F, M)
#define TP_EOBI_FIELDS_partial_order_execution(F, M) TP_EOBI_EXECUTION_FIELDS(F, M)

#define TP_EOBI_FIELDS_order_modify_same_prio(F, M)                                                \
    F(M, trd_reg_ts_time_in, "trdregtstimein", U64, 8)                                             \
    F(M, transact_time, "transacttime", U64, 16)                                                   \
    F(M, prev_display_qty, "prevdisplayqty", I32, 24)                                              \
    F(M, pad4, "pad4", PAD4, 28)                                                                   \
    F(M, security_id, "securityid", I64, 32)                                                       \
    TP_EOBI_ORDER_DETAILS(F, M, 40)

#define TP_EOBI_FIELDS_trade_report(F, M)                                                          \
    F(M, security_id, "securityid", I64, 8)                                                        \
    F(M, transact_time, "transacttime", U64, 16)                                                   \
    F(M, trd_match_id, "trdmatchid", U32, 24)                                                      \
    F(M, last_qty, "lastqty", I32, 28)                                                             \
    F(M, last_px, "lastpx", PRICE, 32)                                                             \
    F(M, match_type, "matchtype", U8, 40)                                                          \
    F(M, match_sub_type, "matchsubtype", U8, 41)                                                   \
    F(M, algorithmic_trade_indicator, "algorithmictradeindicator", U8, 42)                         \
    F(M, trade_condition, "tradecondition", U8, 43)                                                \
    F(M, pad4, "pad4", PAD4, 44)

#define TP_EOBI_FIELDS_execution_summary(F, M)                                                     \
    F(M, security_id, "securityid", I64, 8)                                                        \
    F(M, aggressor_time, "aggressortime", U64, 16)                                                 \
    F(M, request_time, "requesttime", U64, 24)                                                     \
    F(M, exec_id, "execid", U64, 32)                                                               \
    F(M, last_qty, "lastqty", I32, 40)                                                             \
    F(M, aggressor_side, "aggressorside", U8, 44)                                                  \
    F(M, trade_condition, "tradecondition", U8, 45)                                                \
    F(M, pad2, "pad2", PAD2, 46)                                                                   \
    F(M, last_px, "lastpx", PRICE, 48)                                                             \
    F(M, resting_hidden_qty, "restinghiddenqty", I32, 56)                                          \
    F(M, resting_cxl_qty, "restingcxlqty", I32, 60)

#define TP_EOBI_FIELDS_product_state_change(F, M)                                                  \
    F(M, trading_session_id, "tradingsessionid", U8, 8)                                            \
    F(M, trading_session_sub_id, "tradingsessionsubid", U8, 9)                                     \
    F(M, trad_ses_status, "tradsesstatus", U8, 10)                                                 \
    F(M, market_condition, "marketcondition", U8, 11)                                              \
    F(M, fast_market_indicator, "fastmarketindicator", U8, 12)                                     \
    F(M, pad3, "pad3", PAD3, 13)                                                                   \
    F(M, transact_time, "transacttime", U64, 16)

/* The first fields of InstrumentStateChange, the same in every release of eobi_release.h. */
#define TP_EOBI_INSTRUMENT_STATE_CHANGE_HEAD(F, M)                                                 \
    F(M, security_id, "securityid", I64, 8)                                                        \
    F(M, security_status, "securitystatus", U8, 16)                                                \
    F(M, security_trading_status, "securitytradingstatus", U8, 17)                                 \
    F(M, market_condition, "marketcondition", U8, 18)                                              \
    F(M, fast_market_indicator, "fastmarketindicator", U8, 19)                                     \
    F(M, security_trading_event, "securitytradingevent", U8, 20)

#define TP_EOBI_FIELDS_instrument_state_change(F, M)                                               \
    TP_EOBI_INSTRUMENT_STATE_CHANGE_HEAD(F, M)                                                     \
    F(M, pad3, "pad3", PAD3, 21)                                                                   \
    F(M, transact_time, "transacttime", U64, 24)

#define TP_EOBI_FIELDS_auction_bbo(F, M)                                                           \
    F(M, transact_time, "transacttime", U64, 8)                                                    \
    F(M, security_id, "securityid", I64, 16)                                                       \
    F(M, bid_px, "bidpx", PRICE, 24)                                                               \
    F(M, offer_px, "offerpx", PRICE, 32)                                                           \
    F(M, bid_size, "bidsize", I32, 40)                                                             \
    F(M, offer_size, "offersize", I32, 44)                                                         \
    F(M, potential_security_trading_event, "potentialsecuritytradingevent", U8, 48)                \
    F(M, pad7, "pad7", PAD7, 49)

#define TP_EOBI_FIELDS_auction_clearing_price(F, M)                                                \
    F(M, transact_time, "transacttime", U64, 8)                                                    \
    F(M, security_id, "securityid", I64, 16)                                                       \
    F(M, last_px, "lastpx", PRICE, 24)                                                             \
    F(M, last_qty, "lastqty", I32, 32)                                                             \
    F(M, imbalance_qty, "imbalanceqty", I32, 36)                                                   \
    F(M, security_trading_status, "securitytradingstatus", U8, 40)                                 \
    F(M, potential_security_trading_event, "potentialsecuritytradingevent", U8, 41)                \
    F(M, pad6, "pad6", PAD6, 42)

#define TP_EOBI_FIELDS_cross_request(F, M)                                                         \
    F(M, security_id, "securityid", I64, 8)                                                        \
    F(M, last_qty, "lastqty", I32, 16)                                                             \
    F(M, pad4, "pad4", PAD4, 20)                                                                   \
    F(M, transact_time, "transacttime", U64, 24)

#define TP_EOBI_FIELDS_quote_request(F, M)                                                         \
    F(M, security_id, "securityid", I64, 8)                                                        \
    F(M, last_qty, "lastqty", I32, 16)                                                             \
    F(M, side, "side", U8, 20)                                                                     \
    F(M, pad3, "pad3", PAD3, 21)                                                                   \
    F(M, transact_time, "transacttime", U64, 24)

#define TP_EOBI_FIELDS_top_of_book(F, M)                                                           \
    F(M, transact_time, "transacttime", U64, 8)                                                    \
    F(M, security_id, "securityid", I64, 16)                                                       \
    F(M, bid_px, "bidpx", PRICE, 24)                                                               \
    F(M, offer_px, "offerpx", PRICE, 32)

#define TP_EOBI_FIELDS_product_summary(F, M)                                                       \
    F(M, last_msg_seq_num_processed, "lastmsgseqnumprocessed", U32, 8)                             \
    F(M, trading_session_id, "tradingsessionid", U8, 12)                                           \
    F(M, trading_session_sub_id, "tradingsessionsubid", U8, 13)                                    \
    F(M, trad_ses_status, "tradsesstatus", U8, 14)                                                 \
    F(M, market_condition, "marketcondition", U8, 15)                                              \
    F(M, fast_market_indicator, "fastmarketindicator", U8, 16)                                     \
    F(M, pad7, "pad7", PAD7, 17)

/* The first fields of InstrumentSummary, the same in every release of eobi_release.h. */
#define TP_EOBI_INSTRUMENT_SUMMARY_HEAD(F, M)                                                      \
    F(M, security_id, "securityid", I64, 8)                                                        \
    F(M, last_update_time, "lastupdatetime", U64, 16)                                              \
    F(M, trd_reg_ts_execution_time, "trdregtsexecutiontime", U64, 24)                              \
    F(M, tot_no_orders, "totnoorders", U16, 32)                                                    \
    F(M, security_status, "securitystatus", U8, 34)                                                \
    F(M, security_trading_status, "securitytradingstatus", U8, 35)                                 \
    F(M, market_condition, "marketcondition", U8, 36)                                              \
    F(M, fast_market_indicator, "fastmarketindicator", U8, 37)                                     \
    F(M, security_trading_event, "securitytradingevent", U8, 38)

/* The fixed part; NoMDEntries entries of TP_EOBI_FIELDS_md_entry follow it. */
#define TP_EOBI_FIELDS_instrument_summary(F, M)                                                    \
    TP_EOBI_INSTRUMENT_SUMMARY_HEAD(F, M)                                                          \
    F(M, no_md_entries, "nomdentries", U8, 39)

/* MDInstrumentEntryGrpComp: offsets from the entry's start. */
#define TP_EOBI_FIELDS_md_entry(F, M)                                                              \
    F(M, md_entry_px, "mdentrypx", PRICE, 0)                                                       \
    F(M, md_entry_size, "mdentrysize", I32, 8)                                                     \
    F(M, md_entry_type, "mdentrytype", U8, 12)                                                     \
    F(M, trade_condition, "tradecondition", U8, 13)                                                \
    F(M, pad2, "pad2", PAD2, 14)

#define TP_EOBI_FIELDS_snapshot_order(F, M) TP_EOBI_ORDER_DETAILS(F, M, 8)

/* clang-format on */

/* ---- message header and checks ------------------------------------------------------- */

static inline uint16_t tp_eobi_body_len(const uint8_t *msg)
{
    return tp_eobi_le16(msg);
}

static inline uint16_t tp_eobi_template_id(const uint8_t *msg)
{
    return tp_eobi_le16(msg + 2);
}

static inline uint32_t tp_eobi_msg_seq_num(const uint8_t *msg)
{
    return tp_eobi_le32(msg + 4);
}

/* Layout length of a template (fixed part, header included), or 0 for one not in the table. */
static inline size_t tp_eobi_layout_length(uint16_t template_id)
{
    switch (template_id) {
#define TP_EOBI_LENGTH_CASE(T, M, NAME, LEN)                                                       \
    case T:                                                                                        \
        return LEN;
        TP_EOBI_MESSAGES(TP_EOBI_LENGTH_CASE)
#undef TP_EOBI_LENGTH_CASE
    default:
        return 0;
    }
}

/*
 * Bytes a message needs to be read: its layout, plus its repeating group for InstrumentSummary
 * (which needs the fixed part to be there to count it). 0 for an unknown template.
 */
static inline size_t tp_eobi_needed_length(const uint8_t *msg, size_t len)
{
    uint16_t template_id = tp_eobi_template_id(msg);
    size_t need = tp_eobi_layout_length(template_id);
    if (template_id == TP_EOBI_INSTRUMENT_SUMMARY && len >= need)
        need += (size_t)msg[39] * TP_EOBI_MD_ENTRY_LEN;
    return need;
}

/*
 * The one check before reading a message of len bytes (as framed: len is its BodyLen) in
 * place: its template id when len holds the template's layout (and group), -ENOMSG for a
 * template this codec does not decode, -EBADMSG when len is shorter than a message header,
 * differs from the BodyLen, or is shorter than the layout.
 */
static inline int tp_eobi_check(const uint8_t *msg, size_t len)
{
    if (len < TP_EOBI_MESSAGE_HEADER_LEN || tp_eobi_body_len(msg) != len)
        return -EBADMSG;
    size_t need = tp_eobi_needed_length(msg, len);
    if (need == 0)
        return -ENOMSG;
    return len >= need ? tp_eobi_template_id(msg) : -EBADMSG;
}

/* Entry i of an InstrumentSummary that passed tp_eobi_check (i < its NoMDEntries). */
static inline const uint8_t *tp_eobi_md_entry(const uint8_t *instrument_summary, unsigned i)
{
    return instrument_summary + 40 + (size_t)i * TP_EOBI_MD_ENTRY_LEN;
}

/* ---- packet framing ------------------------------------------------------------------ */

/* A packet being iterated. */
struct tp_eobi_packet {
    const uint8_t *data; /* packet start: its PacketHeader */
    size_t len;          /* packet length */
    size_t pos;          /* offset of the next message */
    size_t error_offset; /* offset of the malformed message after -EBADMSG */
};

/* One message of a packet. */
struct tp_eobi_msg {
    const uint8_t *data;  /* the message, header included */
    uint16_t len;         /* BodyLen */
    uint16_t template_id; /* TemplateID */
    uint32_t msg_seq_num; /* MsgSeqNum */
    size_t offset;        /* of the message in the packet */
};

/*
 * Checks the PacketHeader of a packet of len bytes: 0, or -EBADMSG when len is shorter than a
 * PacketHeader, its template is not 13002, or its BodyLen is shorter than the 6.0 header or
 * longer than the packet. Messages start at the header's BodyLen. On failure the packet
 * iterates as empty.
 */
static inline int tp_eobi_packet_init(struct tp_eobi_packet *p, const uint8_t *data, size_t len)
{
    p->data = data;
    p->len = p->pos = 0;
    p->error_offset = 0;
    if (len < TP_EOBI_PACKET_HEADER_LEN || tp_eobi_template_id(data) != TP_EOBI_PACKET_HEADER)
        return -EBADMSG;
    uint16_t header = tp_eobi_body_len(data);
    if (header < TP_EOBI_PACKET_HEADER_LEN || header > len)
        return -EBADMSG;
    p->len = len;
    p->pos = header;
    return 0;
}

/*
 * Next message: 1 with *m filled, 0 at the end of the packet, -EBADMSG when the message at
 * p->error_offset has a BodyLen below a message header or beyond the packet (the rest cannot
 * be framed; the iteration ends there).
 */
static inline int tp_eobi_packet_next(struct tp_eobi_packet *p, struct tp_eobi_msg *m)
{
    size_t left = p->len - p->pos;
    if (left == 0)
        return 0;
    const uint8_t *d = p->data + p->pos;
    uint16_t n = left < TP_EOBI_MESSAGE_HEADER_LEN ? 0 : tp_eobi_body_len(d);
    if (n < TP_EOBI_MESSAGE_HEADER_LEN || n > left) {
        p->error_offset = p->pos;
        p->pos = p->len;
        return -EBADMSG;
    }
    m->data = d;
    m->len = n;
    m->template_id = tp_eobi_template_id(d);
    m->msg_seq_num = tp_eobi_msg_seq_num(d);
    m->offset = p->pos;
    p->pos += n;
    return 1;
}

/* A writer's start: a zeroed layout of len bytes with its message header; -ENOSPC if cap < len. */
static inline int tp_eobi_message_begin(uint8_t *buf, size_t cap, uint16_t len,
                                        uint16_t template_id, uint32_t msg_seq_num)
{
    if (cap < len)
        return -ENOSPC;
    memset(buf, 0, len);
    tp_eobi_store16(buf, len);
    tp_eobi_store16(buf + 2, template_id);
    tp_eobi_store32(buf + 4, msg_seq_num);
    return 0;
}

/* ---- generated code: readers, structs, writers (one expansion per message) ------------- */

/* clang-format off */

#define TP_EOBI_MEMBER_U8(f)    uint8_t f;
#define TP_EOBI_MEMBER_U16(f)   uint16_t f;
#define TP_EOBI_MEMBER_U32(f)   uint32_t f;
#define TP_EOBI_MEMBER_I32(f)   int32_t f;
#define TP_EOBI_MEMBER_U64(f)   uint64_t f;
#define TP_EOBI_MEMBER_I64(f)   int64_t f;
#define TP_EOBI_MEMBER_PRICE(f) int64_t f;
#define TP_EOBI_MEMBER_PAD1(f)
#define TP_EOBI_MEMBER_PAD2(f)
#define TP_EOBI_MEMBER_PAD3(f)
#define TP_EOBI_MEMBER_PAD4(f)
#define TP_EOBI_MEMBER_PAD6(f)
#define TP_EOBI_MEMBER_PAD7(f)

#define TP_EOBI_READER(M, f, T, expr)                                                              \
    static inline T tp_eobi_##M##_##f(const uint8_t *msg)                                          \
    {                                                                                              \
        return expr;                                                                               \
    }
#define TP_EOBI_READER_U8(M, f, off)    TP_EOBI_READER(M, f, uint8_t, msg[off])
#define TP_EOBI_READER_U16(M, f, off)   TP_EOBI_READER(M, f, uint16_t, tp_eobi_le16(msg + (off)))
#define TP_EOBI_READER_U32(M, f, off)   TP_EOBI_READER(M, f, uint32_t, tp_eobi_le32(msg + (off)))
#define TP_EOBI_READER_I32(M, f, off)                                                              \
    TP_EOBI_READER(M, f, int32_t, (int32_t)tp_eobi_le32(msg + (off)))
#define TP_EOBI_READER_U64(M, f, off)   TP_EOBI_READER(M, f, uint64_t, tp_eobi_le64(msg + (off)))
#define TP_EOBI_READER_I64(M, f, off)                                                              \
    TP_EOBI_READER(M, f, int64_t, (int64_t)tp_eobi_le64(msg + (off)))
#define TP_EOBI_READER_PRICE(M, f, off) TP_EOBI_READER_I64(M, f, off)
#define TP_EOBI_READER_PAD1(M, f, off)
#define TP_EOBI_READER_PAD2(M, f, off)
#define TP_EOBI_READER_PAD3(M, f, off)
#define TP_EOBI_READER_PAD4(M, f, off)
#define TP_EOBI_READER_PAD6(M, f, off)
#define TP_EOBI_READER_PAD7(M, f, off)

#define TP_EOBI_PUT_U8(p, v)    (*(p) = (v))
#define TP_EOBI_PUT_U16(p, v)   tp_eobi_store16(p, v)
#define TP_EOBI_PUT_U32(p, v)   tp_eobi_store32(p, v)
#define TP_EOBI_PUT_I32(p, v)   tp_eobi_store32(p, (uint32_t)(v))
#define TP_EOBI_PUT_U64(p, v)   tp_eobi_store64(p, v)
#define TP_EOBI_PUT_I64(p, v)   tp_eobi_store64(p, (uint64_t)(v))
#define TP_EOBI_PUT_PRICE(p, v) tp_eobi_store64(p, (uint64_t)(v))

#define TP_EOBI_GEN_MEMBER(M, f, name, kind, off) TP_EOBI_MEMBER_##kind(f)
#define TP_EOBI_GEN_READER(M, f, name, kind, off) TP_EOBI_READER_##kind(M, f, off)
#define TP_EOBI_GEN_PUT(M, f, name, kind, off)    TP_EOBI_GEN_PUT_##kind(buf + (off), v->f)
#define TP_EOBI_GEN_PUT_U8(p, v)    TP_EOBI_PUT_U8(p, v);
#define TP_EOBI_GEN_PUT_U16(p, v)   TP_EOBI_PUT_U16(p, v);
#define TP_EOBI_GEN_PUT_U32(p, v)   TP_EOBI_PUT_U32(p, v);
#define TP_EOBI_GEN_PUT_I32(p, v)   TP_EOBI_PUT_I32(p, v);
#define TP_EOBI_GEN_PUT_U64(p, v)   TP_EOBI_PUT_U64(p, v);
#define TP_EOBI_GEN_PUT_I64(p, v)   TP_EOBI_PUT_I64(p, v);
#define TP_EOBI_GEN_PUT_PRICE(p, v) TP_EOBI_PUT_PRICE(p, v);
#define TP_EOBI_GEN_PUT_PAD1(p, v)
#define TP_EOBI_GEN_PUT_PAD2(p, v)
#define TP_EOBI_GEN_PUT_PAD3(p, v)
#define TP_EOBI_GEN_PUT_PAD4(p, v)
#define TP_EOBI_GEN_PUT_PAD6(p, v)
#define TP_EOBI_GEN_PUT_PAD7(p, v)

/* Writers zero the whole layout first: pads and, for InstrumentSummary, NoMDEntries (the
 * caller appends entries with tp_eobi_md_entry_encode). */
#define TP_EOBI_GEN_MESSAGE(T, M, NAME, LEN)                                                       \
    struct tp_eobi_##M {                                                                           \
        TP_EOBI_FIELDS_##M(TP_EOBI_GEN_MEMBER, M)                                                  \
    };                                                                                             \
    TP_EOBI_FIELDS_##M(TP_EOBI_GEN_READER, M)                                                      \
                                                                                                   \
    static inline int tp_eobi_##M##_encode(uint8_t *buf, size_t cap, const struct tp_eobi_##M *v,  \
                                           uint32_t msg_seq_num)                                   \
    {                                                                                              \
        if (tp_eobi_message_begin(buf, cap, (LEN), (T), msg_seq_num) != 0)                         \
            return -ENOSPC;                                                                        \
        TP_EOBI_FIELDS_##M(TP_EOBI_GEN_PUT, M) return (LEN);                                       \
    }

/* clang-format on */

TP_EOBI_MESSAGES(TP_EOBI_GEN_MESSAGE)

/* InstrumentSummary entries: struct tp_eobi_md_entry and tp_eobi_md_entry_<f>(entry). */
struct tp_eobi_md_entry {
    TP_EOBI_FIELDS_md_entry(TP_EOBI_GEN_MEMBER, md_entry)
};
TP_EOBI_FIELDS_md_entry(TP_EOBI_GEN_READER, md_entry)

    /* Writes one InstrumentSummary entry at entry (TP_EOBI_MD_ENTRY_LEN bytes), pad zeroed. */
    static inline void tp_eobi_md_entry_put(uint8_t *buf, const struct tp_eobi_md_entry *v)
{
    memset(buf, 0, TP_EOBI_MD_ENTRY_LEN);
    TP_EOBI_FIELDS_md_entry(TP_EOBI_GEN_PUT, md_entry)
}

/*
 * Appends an entry to the InstrumentSummary of *len bytes at msg (cap bytes): writes it, counts
 * it in NoMDEntries, grows BodyLen and *len. 0, or -ENOSPC (also when 255 are there already).
 */
static inline int tp_eobi_md_entry_encode(uint8_t *msg, size_t cap, size_t *len,
                                          const struct tp_eobi_md_entry *v)
{
    if (msg[39] == UINT8_MAX || *len + TP_EOBI_MD_ENTRY_LEN > cap ||
        *len + TP_EOBI_MD_ENTRY_LEN > UINT16_MAX)
        return -ENOSPC;
    tp_eobi_md_entry_put(msg + *len, v);
    msg[39]++;
    *len += TP_EOBI_MD_ENTRY_LEN;
    tp_eobi_store16(msg, (uint16_t)*len);
    return 0;
}

/* Compile-time proof that each layout's field widths add up to its length (the unit test
 * checks that each field starts where the one before ends). */
#define TP_EOBI_GEN_WIDTH(M, f, name, kind, off) +TP_EOBI_WIDTH_##kind
#define TP_EOBI_GEN_SIZE_CHECK(T, M, NAME, LEN)                                                    \
    _Static_assert(TP_EOBI_MESSAGE_HEADER_LEN TP_EOBI_FIELDS_##M(TP_EOBI_GEN_WIDTH, M) == (LEN),   \
                   #M " length");
TP_EOBI_MESSAGES(TP_EOBI_GEN_SIZE_CHECK)
_Static_assert(0 TP_EOBI_FIELDS_md_entry(TP_EOBI_GEN_WIDTH, md_entry) == TP_EOBI_MD_ENTRY_LEN,
               "md_entry length");

#endif /* TP_EOBI_H */
