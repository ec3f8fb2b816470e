/*
 * Events as rows of fixed-layout tables, one table per view: what a columnar reader (numpy,
 * pandas: client/python/tickplane) takes in one block, from an event file or from tp_poll.
 *
 * Every row starts with the same head. The tables:
 *   TOP          one row per venue event that changed an instrument's best bid or offer, at the
 *                event's end (when its books are consistent), with the event's last trade of
 *                that instrument, if any (the trade that moved the top; MBP-1 / TBBO style);
 *   DEPTH        one row per level change (BookUpdate entries, OrderEvent level entries);
 *   BOOK         the best TP_ROWS_BOOK_LEVELS levels of each side, at the end of every venue event
 *                that changed any of them (MBP-10 style);
 *   TRADES, ORDERS, STATUS, DEFINITIONS   one row per event of that topic.
 * The top comes from the client library's own book of the instrument (views/local_book.h), built
 * from the depth records: no other book implementation.
 *
 * A table with capacity 0 is not filled. A table that is full counts the rows it could not take
 * (dropped) and takes no more.
 */
#ifndef TICKPLANE_ROWS_H
#define TICKPLANE_ROWS_H

#include <stddef.h>
#include <stdint.h>

#include "tickplane/event_file.h"
#include "tickplane/tickplane.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tp_rows_table {
    TP_ROWS_TOP = 0,
    TP_ROWS_DEPTH = 1,
    TP_ROWS_TRADES = 2,
    TP_ROWS_ORDERS = 3,
    TP_ROWS_STATUS = 4,
    TP_ROWS_DEFINITIONS = 5,
    TP_ROWS_BOOK = 6,
    TP_ROWS_TABLES = 7,
};

#define TP_ROWS_BOOK_LEVELS 10u

struct tp_row_head {
    uint64_t recv_tsc; /* receive time (event files of captures: ns since the epoch) */
    uint64_t venue_time_ns;
    uint64_t venue_seq;
    uint64_t record; /* bus sequence (live), or the record's index in the event file */
    uint32_t instrument_id;
    uint32_t flags; /* TP_EVENT_F_* */
};

struct tp_top_row {
    struct tp_row_head h;
    int64_t bid_price, bid_qty, ask_price, ask_qty; /* price9; TP_PRICE_NULL for an empty side */
    int32_t bid_orders, ask_orders;
    int64_t trade_price; /* the event's last trade, TP_PRICE_NULL when it had none */
    int64_t trade_qty;
    uint8_t trade_aggressor; /* 0 none, 1 buy, 2 sell */
    uint8_t reserved[7];
};

struct tp_depth_row {
    struct tp_row_head h;
    int64_t price, qty;
    int32_t orders;
    uint8_t side, level, action, reserved; /* tpout LevelAction */
};

struct tp_trade_row {
    struct tp_row_head h;
    int64_t price, qty;
    uint64_t trade_id;
    int32_t orders;
    uint8_t aggressor, reserved[3];
};

struct tp_order_row {
    struct tp_row_head h;
    uint64_t order_id, priority;
    int64_t price, qty, remaining_qty;
    uint8_t side, action, reserved[6]; /* tpout OrderAction */
};

struct tp_status_row {
    struct tp_row_head h;
    int64_t price, qty;
    uint64_t gap_to;
    uint32_t channel_id;
    uint8_t kind, trading_status, venue_status, stat_type; /* enum tp_status_kind, ... */
};

struct tp_definition_row {
    struct tp_row_head h;
    int64_t venue_security_id, tick_size, display_factor, contract_multiplier;
    char symbol[TP_SYMBOL_LEN];
    uint32_t channel_id;
    uint8_t depth, trading_status, security_kind, venue;
};

struct tp_book_row {
    struct tp_row_head h;
    uint16_t bid_levels, ask_levels; /* valid levels per side, <= TP_ROWS_BOOK_LEVELS */
    uint32_t reserved;
    struct tp_level bids[TP_ROWS_BOOK_LEVELS]; /* [0] is the best */
    struct tp_level asks[TP_ROWS_BOOK_LEVELS];
};

struct tp_rows_buffer {
    void *rows;
    uint64_t capacity; /* rows */
    uint64_t count;    /* rows written */
    uint64_t dropped;  /* rows that did not fit */
};

struct tp_rows_instrument;

struct tp_rows {
    struct tp_rows_buffer t[TP_ROWS_TABLES];
    uint64_t malformed; /* records that failed to decode (skipped) */
    /* Book and top tracking per instrument (grown on demand), and the event's instruments. */
    struct tp_rows_instrument *instruments;
    uint32_t n_instruments;
    uint32_t *touched;
    uint32_t n_touched, touched_cap;
};

/* Row size of each table (a reader checks its own layout against these). */
size_t tp_rows_row_size(enum tp_rows_table table);

/* Empty tables, no buffers: set t[k].rows / capacity before adding. */
void tp_rows_init(struct tp_rows *rows);
void tp_rows_free(struct tp_rows *rows);

/*
 * Adds one delivered event (a tp_event_fn: user is the struct tp_rows). DEPTH events must carry
 * the book after the change (as tp_poll's do); the TOP table follows from them, at each event's
 * end. TOP events, LOSS and user topics add nothing.
 */
void tp_rows_add_event(void *user, const struct tp_event *ev);

/*
 * Records of an event file (a reader opened with tp_event_file_open) into the tables, keeping the
 * instruments for which keep[id] is non-zero (keep NULL: all; ids >= n_keep: none; channel-wide
 * events always). Returns 1 when it stopped because a table has room for fewer rows than one more
 * record may need (TP_ROWS_RECORD_MAX, and the TOP / BOOK rows of the instruments of the event
 * still open: take the rows, set the counts to 0, call again), 0 at the
 * end of the file, or an event file error (the rows of the records before it are kept).
 * Only the tables with a capacity are filled, and only the records they need are decoded.
 * counts_only: fill nothing, add to t[k].count the rows each table with a capacity (its value is
 * not used) would take (for TOP and BOOK, an upper bound), to the end of the file.
 */
#define TP_ROWS_RECORD_MAX 256u
int tp_rows_read(struct tp_rows *rows, struct tp_event_file_reader *rd, const uint8_t *keep,
                 uint32_t n_keep, int counts_only);

/* Rows of the instruments touched by a venue event not yet ended (a file cut mid-event). */
void tp_rows_flush(struct tp_rows *rows);

#ifdef __cplusplus
}
#endif

#endif /* TICKPLANE_ROWS_H */
