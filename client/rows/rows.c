/* Events as table rows (see tickplane/rows.h). */
#include "tickplane/rows.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tickplane/event_file.h"
#include "tpout_sbe.h"
#include "views/decode.h"
#include "views/local_book.h"

/* BOOK: the best levels after the instrument's last DEPTH event, and those last written (no
 * heads). */
struct tp_rows_levels {
    struct tp_book_row now;
    struct tp_book_row written;
};

/* Per instrument: its book (file path only: live DEPTH events bring the library's), the top last
 * written to the TOP table, and what the current venue event did to it. The BOOK table's levels
 * are apart, allocated when that table is filled: the rest is read at every record of the
 * instrument and stays within a few cache lines. */
struct tp_rows_instrument {
    struct tp_local_book *book;
    struct tp_rows_levels *levels;
    struct tp_top_of_book top; /* of the book after the instrument's last DEPTH event */
    struct tp_top_of_book written;
    struct tp_row_head last; /* head of the instrument's last record in the event */
    struct tp_trade_event trade;
    bool has_top;      /* top is known (a DEPTH event came) */
    bool written_any;  /* a TOP row was written */
    bool written_book; /* a BOOK row was written */
    bool touched;      /* in rows->touched */
    bool traded;       /* trade is this event's */
};

static const size_t row_sizes[TP_ROWS_TABLES] = {
    sizeof(struct tp_top_row),   sizeof(struct tp_depth_row),  sizeof(struct tp_trade_row),
    sizeof(struct tp_order_row), sizeof(struct tp_status_row), sizeof(struct tp_definition_row),
    sizeof(struct tp_book_row),
};

/* Tables that follow the instruments' books. */
static bool books_wanted(const struct tp_rows *rows)
{
    return rows->t[TP_ROWS_TOP].capacity != 0 || rows->t[TP_ROWS_BOOK].capacity != 0;
}

size_t tp_rows_row_size(enum tp_rows_table table)
{
    return (unsigned)table < TP_ROWS_TABLES ? row_sizes[table] : 0;
}

void tp_rows_init(struct tp_rows *rows)
{
    memset(rows, 0, sizeof(*rows));
}

void tp_rows_free(struct tp_rows *rows)
{
    for (uint32_t i = 0; i < rows->n_instruments; i++) {
        free(rows->instruments[i].book);
        free(rows->instruments[i].levels);
    }
    free(rows->instruments);
    free(rows->touched);
    tp_rows_init(rows);
}

/* The next free row of a table, or NULL (not wanted, or full: counted). */
static void *next_row(struct tp_rows *rows, enum tp_rows_table t)
{
    struct tp_rows_buffer *b = &rows->t[t];
    if (b->capacity == 0)
        return NULL;
    if (b->count == b->capacity) {
        b->dropped++;
        return NULL;
    }
    return (uint8_t *)b->rows + b->count++ * row_sizes[t];
}

static struct tp_rows_instrument *instrument(struct tp_rows *rows, uint32_t id)
{
    if (id == TP_INSTRUMENT_NONE)
        return NULL;
    if (id >= rows->n_instruments) {
        uint32_t n = rows->n_instruments ? rows->n_instruments : 64;
        while (n <= id)
            n *= 2;
        struct tp_rows_instrument *grown = realloc(rows->instruments, n * sizeof(*grown));
        uint32_t *touched = realloc(rows->touched, n * sizeof(*touched));
        if (grown != NULL)
            rows->instruments = grown;
        if (touched != NULL)
            rows->touched = touched;
        if (grown == NULL || touched == NULL)
            return NULL;
        memset(grown + rows->n_instruments, 0, (n - rows->n_instruments) * sizeof(*grown));
        rows->n_instruments = n;
    }
    return &rows->instruments[id];
}

static struct tp_row_head head_of(const struct tp_event *ev)
{
    return (struct tp_row_head){.recv_tsc = ev->recv_tsc,
                                .venue_time_ns = ev->venue_time_ns,
                                .venue_seq = ev->venue_seq,
                                .record = ev->bus_sequence,
                                .instrument_id = ev->instrument_id,
                                .flags = ev->flags};
}

static void touch(struct tp_rows *rows, struct tp_rows_instrument *in, uint32_t id,
                  const struct tp_event *ev)
{
    in->last = head_of(ev);
    if (!in->touched) {
        in->touched = true;
        rows->touched[rows->n_touched++] = id;
    }
}

static bool same_top(const struct tp_top_of_book *a, const struct tp_top_of_book *b)
{
    return a->bid_price == b->bid_price && a->bid_qty == b->bid_qty &&
           a->ask_price == b->ask_price && a->ask_qty == b->ask_qty &&
           a->bid_orders == b->bid_orders && a->ask_orders == b->ask_orders;
}

/* The end of a venue event: a TOP row for each instrument whose best levels it changed. */
static void end_of_event(struct tp_rows *rows)
{
    for (uint32_t k = 0; k < rows->n_touched; k++) {
        struct tp_rows_instrument *in = &rows->instruments[rows->touched[k]];
        if (in->has_top && (!in->written_any || !same_top(&in->top, &in->written))) {
            struct tp_top_row *r = next_row(rows, TP_ROWS_TOP);
            if (r != NULL) {
                memset(r, 0, sizeof(*r));
                r->h = in->last;
                r->bid_price = in->top.bid_price;
                r->bid_qty = in->top.bid_qty;
                r->ask_price = in->top.ask_price;
                r->ask_qty = in->top.ask_qty;
                r->bid_orders = in->top.bid_orders;
                r->ask_orders = in->top.ask_orders;
                r->trade_price = in->traded ? in->trade.price : TP_PRICE_NULL;
                r->trade_qty = in->traded ? in->trade.qty : 0;
                r->trade_aggressor = in->traded ? in->trade.aggressor : 0;
            }
            in->written = in->top;
            in->written_any = true;
        }
        struct tp_rows_levels *lv = in->levels;
        if (in->has_top && lv != NULL && rows->t[TP_ROWS_BOOK].capacity != 0 &&
            (!in->written_book || memcmp(&lv->now, &lv->written, sizeof(lv->now)))) {
            struct tp_book_row *r = next_row(rows, TP_ROWS_BOOK);
            if (r != NULL) {
                *r = lv->now;
                r->h = in->last;
            }
            lv->written = lv->now;
            in->written_book = true;
        }
        in->touched = false;
        in->traded = false;
    }
    rows->n_touched = 0;
}

static void top_of_view(const struct tp_book_view *v, struct tp_top_of_book *top)
{
    const struct tp_level empty = {.price = TP_PRICE_NULL, .qty = 0, .orders = 0};
    const struct tp_level *b = v->bid_levels ? &v->bids[0] : &empty;
    const struct tp_level *a = v->ask_levels ? &v->asks[0] : &empty;
    *top = (struct tp_top_of_book){.bid_price = b->price,
                                   .bid_qty = b->qty,
                                   .ask_price = a->price,
                                   .ask_qty = a->qty,
                                   .bid_orders = b->orders,
                                   .ask_orders = a->orders};
}

/* The best levels of a book view; the unused entries zero, so rows compare whole. */
static void book_of_view(const struct tp_book_view *v, struct tp_book_row *b)
{
    memset(b, 0, sizeof(*b));
    b->bid_levels = v->bid_levels < TP_ROWS_BOOK_LEVELS ? v->bid_levels : TP_ROWS_BOOK_LEVELS;
    b->ask_levels = v->ask_levels < TP_ROWS_BOOK_LEVELS ? v->ask_levels : TP_ROWS_BOOK_LEVELS;
    memcpy(b->bids, v->bids, b->bid_levels * sizeof(b->bids[0]));
    memcpy(b->asks, v->asks, b->ask_levels * sizeof(b->asks[0]));
}

/* A DEPTH event's rows, and the book of `in` (NULL: TOP and BOOK are not filled) after it. */
static void add_depth(struct tp_rows *rows, const struct tp_event *ev,
                      struct tp_rows_instrument *in)
{
    for (uint32_t i = 0; rows->t[TP_ROWS_DEPTH].capacity != 0 && i < ev->u.depth.count; i++) {
        const struct tp_level_change *c = &ev->u.depth.changes[i];
        struct tp_depth_row *r = next_row(rows, TP_ROWS_DEPTH);
        if (r == NULL)
            break;
        *r = (struct tp_depth_row){.h = head_of(ev),
                                   .price = c->price,
                                   .qty = c->qty,
                                   .orders = c->orders,
                                   .side = c->side,
                                   .level = c->level,
                                   .action = c->action};
    }
    /* Implied updates leave the outright book, and so the top, alone. */
    if (in == NULL || (ev->flags & TP_EVENT_F_IMPLIED))
        return;
    top_of_view(&ev->book, &in->top);
    if (rows->t[TP_ROWS_BOOK].capacity != 0) {
        if (in->levels == NULL && (in->levels = malloc(sizeof(*in->levels))) == NULL)
            rows->t[TP_ROWS_BOOK].dropped++; /* its BOOK rows cannot be known */
        else
            book_of_view(&ev->book, &in->levels->now);
    }
    in->has_top = true;
    touch(rows, in, ev->instrument_id, ev);
}

void tp_rows_add_event(void *user, const struct tp_event *ev)
{
    struct tp_rows *rows = user;
    struct tp_row_head h = head_of(ev);

    switch (ev->topic) {
    case TP_TOPIC_DEPTH:
        add_depth(rows, ev, books_wanted(rows) ? instrument(rows, ev->instrument_id) : NULL);
        break;
    case TP_TOPIC_TRADES: {
        struct tp_trade_row *r = next_row(rows, TP_ROWS_TRADES);
        if (r != NULL)
            *r = (struct tp_trade_row){.h = h,
                                       .price = ev->u.trade.price,
                                       .qty = ev->u.trade.qty,
                                       .trade_id = ev->u.trade.trade_id,
                                       .orders = ev->u.trade.orders,
                                       .aggressor = ev->u.trade.aggressor};
        struct tp_rows_instrument *in =
            books_wanted(rows) ? instrument(rows, ev->instrument_id) : NULL;
        if (in != NULL) {
            in->trade = ev->u.trade;
            in->traded = true;
            touch(rows, in, ev->instrument_id, ev);
        }
        break;
    }
    case TP_TOPIC_ORDERS: {
        struct tp_order_row *r = next_row(rows, TP_ROWS_ORDERS);
        if (r != NULL)
            *r = (struct tp_order_row){.h = h,
                                       .order_id = ev->u.order.order_id,
                                       .priority = ev->u.order.priority,
                                       .price = ev->u.order.price,
                                       .qty = ev->u.order.qty,
                                       .remaining_qty = ev->u.order.remaining_qty,
                                       .side = ev->u.order.side,
                                       .action = ev->u.order.action};
        break;
    }
    case TP_TOPIC_STATUS: {
        struct tp_status_row *r = next_row(rows, TP_ROWS_STATUS);
        if (r != NULL)
            *r = (struct tp_status_row){.h = h,
                                        .price = ev->u.status.price,
                                        .qty = ev->u.status.qty,
                                        .gap_to = ev->u.status.gap_to,
                                        .channel_id = ev->u.status.channel_id,
                                        .kind = ev->u.status.kind,
                                        .trading_status = ev->u.status.trading_status,
                                        .venue_status = ev->u.status.venue_status,
                                        .stat_type = ev->u.status.stat_type};
        break;
    }
    case TP_TOPIC_DEFINITIONS: {
        const struct tp_definition_event *d = &ev->u.definition;
        struct tp_definition_row *r = next_row(rows, TP_ROWS_DEFINITIONS);
        if (r != NULL) {
            *r = (struct tp_definition_row){.h = h,
                                            .venue_security_id = d->venue_security_id,
                                            .tick_size = d->tick_size,
                                            .display_factor = d->display_factor,
                                            .contract_multiplier = d->contract_multiplier,
                                            .channel_id = d->channel_id,
                                            .depth = d->depth,
                                            .trading_status = d->trading_status,
                                            .security_kind = d->security_kind,
                                            .venue = d->venue};
            memcpy(r->symbol, d->symbol, TP_SYMBOL_LEN);
        }
        break;
    }
    default:
        return; /* TOP, LOSS, user topics */
    }
    if (ev->flags & TP_EVENT_F_END_OF_EVENT)
        end_of_event(rows);
}

/* The rows one record would add, for the counting pass. */
static void count_record(struct tp_rows *rows, int source, const struct tp_event *ev,
                         uint32_t n_levels)
{
    switch (source) {
    case TP_RECORD_ORDER_DEPTH:
        rows->t[TP_ROWS_ORDERS].count++;
        rows->t[TP_ROWS_DEPTH].count += n_levels;
        rows->t[TP_ROWS_TOP].count++;
        rows->t[TP_ROWS_BOOK].count++;
        break;
    case TP_TOPIC_DEPTH:
        rows->t[TP_ROWS_DEPTH].count += ev->u.depth.count;
        rows->t[TP_ROWS_TOP].count++;
        rows->t[TP_ROWS_BOOK].count++;
        break;
    case TP_TOPIC_TRADES:
    case TP_TOPIC_ORDERS:
    case TP_TOPIC_STATUS:
    case TP_TOPIC_DEFINITIONS:
        rows->t[source].count++; /* the table numbers follow the topics from TRADES on */
        break;
    default:
        break;
    }
}
_Static_assert((int)TP_ROWS_TRADES == (int)TP_TOPIC_TRADES &&
                   (int)TP_ROWS_ORDERS == (int)TP_TOPIC_ORDERS &&
                   (int)TP_ROWS_STATUS == (int)TP_TOPIC_STATUS &&
                   (int)TP_ROWS_DEFINITIONS == (int)TP_TOPIC_DEFINITIONS,
               "tables numbered as topics");

/* A DEPTH event from decoded level changes, applied to the instrument's own book first. */
static void file_depth(struct tp_rows *rows, struct tp_event *ev, uint32_t n)
{
    struct tp_rows_instrument *in = books_wanted(rows) ? instrument(rows, ev->instrument_id) : NULL;
    ev->topic = TP_TOPIC_DEPTH;
    ev->book = (struct tp_book_view){0};
    ev->u.depth.count = n;
    if (in != NULL) {
        if (in->book == NULL && (in->book = malloc(sizeof(*in->book))) != NULL)
            tp_local_book_clear(in->book);
        if (in->book != NULL) {
            if (!(ev->flags & TP_EVENT_F_IMPLIED))
                for (uint32_t i = 0; i < n; i++)
                    if (tp_local_book_apply(in->book, &ev->u.depth.changes[i]) != 0)
                        rows->malformed++;
            tp_local_book_view(in->book, &ev->book);
        }
    }
    add_depth(rows, ev, in);
    if (ev->flags & TP_EVENT_F_END_OF_EVENT)
        end_of_event(rows);
}

/* Whether every table that is filled (bits of `wanted`) has room for one more record's rows: its
 * own, and the TOP and BOOK rows of every instrument of the open event, which its end writes. */
static bool room(const struct tp_rows *rows, uint32_t wanted)
{
    for (; wanted != 0; wanted &= wanted - 1) {
        const struct tp_rows_buffer *b = &rows->t[__builtin_ctz(wanted)];
        if (b->capacity - b->count < TP_ROWS_RECORD_MAX + rows->n_touched)
            return false;
    }
    return true;
}

/* The instrument of any tpout message: the event header's, at the same offset in all. */
static uint32_t instrument_of(const uint8_t *msg, uint32_t length)
{
    const uint8_t *p = msg + 8 + 24;
    if (length < 8 + 28)
        return TP_INSTRUMENT_NONE;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The tables a message feeds (bits 1 << enum tp_rows_table), from its template. The TOP and BOOK
 * tables need every record of their instruments' events: trades for TOP, and each record's end
 * of event. */
#define BOOK_TABLES (1u << TP_ROWS_TOP | 1u << TP_ROWS_BOOK)
static uint32_t tables_of(const uint8_t *msg)
{
    switch (msg[2] | msg[3] << 8) {
    case TPOUT_BOOK_UPDATE_TEMPLATE_ID:
        return 1u << TP_ROWS_DEPTH | BOOK_TABLES;
    case TPOUT_TRADE_TEMPLATE_ID:
        return 1u << TP_ROWS_TRADES | BOOK_TABLES;
    case TPOUT_ORDER_EVENT_TEMPLATE_ID:
        return 1u << TP_ROWS_ORDERS | 1u << TP_ROWS_DEPTH | BOOK_TABLES;
    case TPOUT_INSTRUMENT_DEFINITION_TEMPLATE_ID:
        return 1u << TP_ROWS_DEFINITIONS | BOOK_TABLES;
    case TPOUT_INSTRUMENT_STATUS_TEMPLATE_ID:
    case TPOUT_STATISTICS_TEMPLATE_ID:
    case TPOUT_CHANNEL_EVENT_TEMPLATE_ID:
        return 1u << TP_ROWS_STATUS | BOOK_TABLES;
    default:
        return BOOK_TABLES; /* for its end of event */
    }
}

int tp_rows_read(struct tp_rows *rows, struct tp_event_file_reader *rd, const uint8_t *keep,
                 uint32_t n_keep, int counts_only)
{
    struct tp_event_file_record rec;
    struct tp_level_change changes[TP_ROWS_RECORD_MAX];
    uint32_t wanted = 0;
    int rc;

    for (int t = 0; t < TP_ROWS_TABLES; t++)
        wanted |= rows->t[t].capacity != 0 ? 1u << t : 0;
    while (counts_only || room(rows, wanted)) {
        if ((rc = tp_event_file_next(rd, &rec)) != 1)
            return rc;
        struct tp_event ev;
        uint32_t n_levels = 0;
        ev.flags = 0;
        ev.instrument_id = instrument_of(rec.message, rec.length);
        if ((keep != NULL && ev.instrument_id != TP_INSTRUMENT_NONE &&
             (ev.instrument_id >= n_keep || !keep[ev.instrument_id])) ||
            !(wanted & tables_of(rec.message))) {
            /* Not decoded; its end of a venue event still ends the event for the others. */
            if (!counts_only && rec.length > 8 + 32 &&
                (rec.message[8 + 32] & TP_EVENT_F_END_OF_EVENT))
                end_of_event(rows);
            continue;
        }
        int source =
            tp_decode_tpout(rec.message, rec.length, &ev, changes, TP_ROWS_RECORD_MAX, &n_levels);
        if (source < 0) {
            rows->malformed++;
            continue;
        }
        ev.bus_sequence = rd->records - 1;
        if (counts_only) {
            count_record(rows, source, &ev, n_levels);
        } else if (source == TP_RECORD_ORDER_DEPTH) {
            /* The order, then its level changes, as tp_poll delivers such a record. */
            uint32_t flags = ev.flags;
            ev.topic = TP_TOPIC_ORDERS;
            ev.flags = flags & ~TP_EVENT_F_END_OF_EVENT;
            if (wanted & 1u << TP_ROWS_ORDERS)
                tp_rows_add_event(rows, &ev);
            ev.flags = flags;
            ev.u.depth.changes = changes;
            /* Without DEPTH, TOP and BOOK no event is open: the levels have nothing to feed. */
            if (wanted & (1u << TP_ROWS_DEPTH | BOOK_TABLES))
                file_depth(rows, &ev, n_levels);
        } else if (source == TP_TOPIC_DEPTH) {
            file_depth(rows, &ev, ev.u.depth.count);
        } else {
            ev.topic = (uint32_t)source;
            tp_rows_add_event(rows, &ev);
        }
    }
    return 1;
}

void tp_rows_flush(struct tp_rows *rows)
{
    end_of_event(rows);
}
