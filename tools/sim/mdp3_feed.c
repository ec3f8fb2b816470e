/* Model events -> CME MDP 3.0 packets through the generated SBE codec (mdp3_sbe.h). */
#include "mdp3_feed.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "truth.h"

#define NULL_PRICE9 INT64_MAX
#define MEI_EOE     MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT

/* Entries per message: small messages pack well and stay far below the group limit of 254. */
#define BOOK_ENTRIES_PER_MSG  20
#define ORDER_ENTRIES_PER_MSG 24
#define FILLS_PER_MSG         24

enum pending_kind { PK_TRADE, PK_VOLUME, PK_STATS, PK_QUOTE, PK_OTHER };
static const uint8_t last_bit[] = {
    MKTDATA_MATCH_EVENT_INDICATOR_LAST_TRADE_MSG, MKTDATA_MATCH_EVENT_INDICATOR_LAST_VOLUME_MSG,
    MKTDATA_MATCH_EVENT_INDICATOR_LAST_STATS_MSG, MKTDATA_MATCH_EVENT_INDICATOR_LAST_QUOTE_MSG, 0};

void tp_sim_mdp3_params_default(struct tp_sim_mdp3_params *p)
{
    memset(p, 0, sizeof(*p));
    p->depth = 10;
    p->snapshot_every = 50;
    p->snapshot_batch = 10;
    p->definition_every = 400;
    p->definition_batch = 20;
    p->pack_window_ns = 1000;
    p->max_payload = 1400;
    p->appl_id = 901;
    p->midnight_epoch_ns = 1764460800ULL * 1000000000ULL;
}

static uint16_t trade_date(const struct tp_sim_mdp3_feed *f)
{
    return (uint16_t)(f->params.midnight_epoch_ns / (86400ULL * 1000000000ULL));
}

/* The books of an instrument: outright bid and ask, implied bid and ask, as MDEntryType. */
enum { BOOK_BID, BOOK_ASK, BOOK_IMPLIED_BID, BOOK_IMPLIED_ASK, BOOKS };
static const char book_entry_type[BOOKS] = {'0', '1', 'E', 'F'};

static struct tp_sim_level *view_of(struct tp_sim_mdp3_feed *f, uint32_t id, int book)
{
    return &f->view[((size_t)id * BOOKS + (size_t)book) * f->params.depth];
}

int tp_sim_mdp3_init(struct tp_sim_mdp3_feed *f, struct tp_sim_model *m,
                     const struct tp_sim_mdp3_params *p, const struct tp_sim_packet_sink *sink)
{
    memset(f, 0, sizeof(*f));
    f->params = *p;
    f->model = m;
    f->sink = *sink;
    uint32_t n = m->params.instruments;
    if (p->depth < TP_SIM_IMPLIED_DEPTH || p->depth > TP_SIM_MDP3_MAX_DEPTH ||
        p->max_payload > TP_SIM_MAX_PAYLOAD || p->max_payload < 1000)
        return -EINVAL;
    f->view = calloc((size_t)n * BOOKS * p->depth, sizeof(*f->view));
    f->view_n = calloc((size_t)n * BOOKS, sizeof(*f->view_n));
    f->rpt_seq = calloc(n, sizeof(*f->rpt_seq));
    f->high9 = calloc(n, sizeof(*f->high9));
    f->low9 = calloc(n, sizeof(*f->low9));
    f->stats = calloc(n, sizeof(*f->stats));
    if (!f->view || !f->view_n || !f->rpt_seq || !f->high9 || !f->low9 || !f->stats) {
        tp_sim_mdp3_free(f);
        return -ENOMEM;
    }
    for (int s = 0; s < TP_SIM_STREAMS; s++)
        f->stream[s].next_seq = 1;
    f->unseen_left = p->unseen_events;
    return 0;
}

void tp_sim_mdp3_free(struct tp_sim_mdp3_feed *f)
{
    free(f->view);
    free(f->view_n);
    free(f->rpt_seq);
    free(f->high9);
    free(f->low9);
    free(f->stats);
    f->stats = NULL;
    f->view = NULL;
    f->view_n = NULL;
    f->rpt_seq = NULL;
    f->high9 = f->low9 = NULL;
}

/* ---- packets ------------------------------------------------------------------------- */

static int flush_stream(struct tp_sim_mdp3_feed *f, int s)
{
    struct tp_sim_mdp3_stream *st = &f->stream[s];
    if (!st->open)
        return 0;
    st->open = 0;
    st->pkt.len = (uint16_t)st->writer.len;
    st->pkt.stream = (uint8_t)s;
    st->pkt.index = st->index++;
    st->pkt.time_ns = st->last_time_ns; /* sent when its last message is ready */
    /* A full packet holds many events: it is sent (SendingTime) after the last one's match. */
    if (f->params.pack_window_ns == TP_SIM_PACK_FILL)
        mktdata_store_u64(st->pkt.data + 4, f->params.midnight_epoch_ns + st->last_time_ns);
    return f->sink.packet(f->sink.ctx, &st->pkt);
}

static void open_stream(struct tp_sim_mdp3_feed *f, int s)
{
    struct tp_sim_mdp3_stream *st = &f->stream[s];
    st->pkt.seq = st->next_seq++;
    st->pkt.count = 0;
    st->first_time_ns = f->now_ns;
    tp_mdp3_writer_init(&st->writer, st->pkt.data, f->params.max_payload, (uint32_t)st->pkt.seq,
                        f->params.midnight_epoch_ns + f->now_ns);
    st->open = 1;
}

/* Appends one SBE message (header + body) to the stream's packet, opening packets as needed. */
static int put_message(struct tp_sim_mdp3_feed *f, int s, const uint8_t *msg, size_t len)
{
    struct tp_sim_mdp3_stream *st = &f->stream[s];
    int rc;
    if (st->open &&
        tp_sim_past_pack_window(st->first_time_ns, f->now_ns, f->params.pack_window_ns) &&
        (rc = flush_stream(f, s)) < 0)
        return rc;
    for (int attempt = 0; attempt < 2; attempt++) {
        if (!st->open)
            open_stream(f, s);
        size_t room;
        uint8_t *dst = tp_mdp3_writer_reserve(&st->writer, &room);
        if (dst != NULL && room >= len) {
            memcpy(dst, msg, len);
            rc = tp_mdp3_writer_commit(&st->writer, len);
            if (rc < 0)
                return rc;
            st->pkt.count++;
            st->messages++;
            st->last_time_ns = f->now_ns;
            f->templates[mktdata_message_header_template_id(msg) & 63]++;
            return 0;
        }
        if ((rc = flush_stream(f, s)) < 0)
            return rc;
    }
    return -EMSGSIZE;
}

/* ---- the event being assembled -------------------------------------------------------- */

static uint8_t *event_room(struct tp_sim_mdp3_feed *f, size_t *cap);
static int commit_event(struct tp_sim_mdp3_feed *f, int end_of_event);

/* The incremental templates whose entries take RptSeqs. */
static int carries_rpt_seq(uint16_t template_id)
{
    switch (template_id) {
    case MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_TEMPLATE_ID:
    case MKTDATA_MD_INCREMENTAL_REFRESH_TRADE_SUMMARY48_TEMPLATE_ID:
    case MKTDATA_MD_INCREMENTAL_REFRESH_VOLUME37_TEMPLATE_ID:
    case MKTDATA_MD_INCREMENTAL_REFRESH_DAILY_STATISTICS49_TEMPLATE_ID:
    case MKTDATA_MD_INCREMENTAL_REFRESH_LIMITS_BANDING50_TEMPLATE_ID:
    case MKTDATA_MD_INCREMENTAL_REFRESH_SESSION_STATISTICS51_TEMPLATE_ID:
        return 1;
    default:
        return 0;
    }
}

/* Records the message just encoded at event_room(); mei is its MatchEventIndicator offset. */
static void event_push(struct tp_sim_mdp3_feed *f, size_t len, size_t mei_offset, uint8_t kind)
{
    struct tp_sim_mdp3_pending *p = &f->pending[f->n_pending++];
    p->offset = f->ev_len;
    p->len = len;
    p->mei = f->ev_len + MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH + mei_offset;
    p->kind = kind;
    p->unseen = f->hiding && carries_rpt_seq(mktdata_load_u16(f->ev + f->ev_len + 2));
    f->ev_len += len;
}

/* Room for the next message of the event: sends the pending ones first when it is full. */
static uint8_t *event_room(struct tp_sim_mdp3_feed *f, size_t *cap)
{
    if (f->n_pending == TP_SIM_MDP3_EVENT_MSGS || TP_SIM_MDP3_EVENT_BUF - f->ev_len < 2048)
        f->error = f->error ? f->error : commit_event(f, 0);
    *cap = TP_SIM_MDP3_EVENT_BUF - f->ev_len;
    return f->ev + f->ev_len;
}

/* Sets the Last*Msg bits (and EndOfEvent when the event ends here) and sends the messages. */
static int commit_event(struct tp_sim_mdp3_feed *f, int end_of_event)
{
    int last_of_kind[5] = {-1, -1, -1, -1, -1};
    /* Unseen messages go before the bits are set: the event's sent messages carry them. */
    uint32_t kept = 0;
    for (uint32_t i = 0; i < f->n_pending; i++)
        if (!f->pending[i].unseen)
            f->pending[kept++] = f->pending[i];
    f->n_pending = kept;
    for (uint32_t i = 0; i < f->n_pending; i++)
        last_of_kind[f->pending[i].kind] = (int)i;
    for (int k = 0; k < 5; k++)
        if (end_of_event && last_of_kind[k] >= 0)
            f->ev[f->pending[last_of_kind[k]].mei] |= last_bit[k];
    if (end_of_event && f->n_pending > 0)
        f->ev[f->pending[f->n_pending - 1].mei] |= MEI_EOE;
    int rc = 0;
    for (uint32_t i = 0; i < f->n_pending && rc == 0; i++)
        rc = put_message(f, TP_SIM_STREAM_INCREMENTAL, f->ev + f->pending[i].offset,
                         f->pending[i].len);
    f->n_pending = 0;
    f->ev_len = 0;
    return rc;
}

/* ---- incremental messages ------------------------------------------------------------- */

struct book_entry {
    int64_t price9;
    int64_t qty;
    int32_t orders;
    uint8_t level;
    uint8_t action;
    char type;
};

/* DeleteThru and DeleteFrom carry no level data: size and order count are null. */
static int clears(uint8_t action)
{
    return action == MKTDATA_MD_UPDATE_ACTION_DELETE_THRU ||
           action == MKTDATA_MD_UPDATE_ACTION_DELETE_FROM;
}

/*
 * Writes entries [first, first + count) of one instrument as one message at buf (cap bytes) and
 * returns its length with the message header.
 */
typedef size_t (*entries_writer)(struct tp_sim_mdp3_feed *f, uint8_t *buf, size_t cap, uint32_t id,
                                 const void *entries, uint32_t first, uint32_t count);

/* n entries of one instrument as quote messages of the event, at most per_msg entries each. */
static void emit_entries(struct tp_sim_mdp3_feed *f, uint32_t id, const void *entries, uint32_t n,
                         uint32_t per_msg, entries_writer write, size_t mei_offset)
{
    for (uint32_t first = 0; first < n; first += per_msg) {
        uint32_t count = n - first < per_msg ? n - first : per_msg;
        size_t cap;
        uint8_t *buf = event_room(f, &cap);
        event_push(f, write(f, buf, cap, id, entries, first, count), mei_offset, PK_QUOTE);
    }
}

/* MDIncrementalRefreshBook46: price levels (no order entries). */
static size_t write_book46(struct tp_sim_mdp3_feed *f, uint8_t *buf, size_t cap, uint32_t id,
                           const void *entries, uint32_t first, uint32_t count)
{
    const struct book_entry *e = entries;
    struct mktdata_md_incremental_refresh_book46 m = {0};
    struct mktdata_md_incremental_refresh_book46_no_md_entries g = {0};
    struct mktdata_md_incremental_refresh_book46_no_order_id_entries o = {0};
    mktdata_md_incremental_refresh_book46_wrap_and_apply_header(&m, buf, cap);
    mktdata_md_incremental_refresh_book46_set_transact_time(&m, f->params.midnight_epoch_ns +
                                                                    f->now_ns);
    mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_encode(&m, &g, count);
    for (uint32_t i = first; i < first + count; i++) {
        mktdata_md_incremental_refresh_book46_no_md_entries_next(&g);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_entry_px_mantissa(&g,
                                                                                     e[i].price9);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_entry_size(
            &g, clears(e[i].action) ? INT32_MAX : (int32_t)e[i].qty);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_security_id(&g,
                                                                            TP_SIM_SECURITY_ID(id));
        mktdata_md_incremental_refresh_book46_no_md_entries_set_rpt_seq(&g, ++f->rpt_seq[id]);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_number_of_orders(
            &g,
            clears(e[i].action) || e[i].type == 'E' || e[i].type == 'F' ? INT32_MAX : e[i].orders);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_price_level(&g, e[i].level);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_update_action(&g, e[i].action);
        mktdata_md_incremental_refresh_book46_no_md_entries_set_md_entry_type(&g, e[i].type);
        f->actions[e[i].action]++;
    }
    mktdata_md_incremental_refresh_book46_no_order_id_entries_wrap_for_encode(&m, &o, 0);
    return MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
           mktdata_md_incremental_refresh_book46_encoded_length(&m);
}

static void emit_book(struct tp_sim_mdp3_feed *f, uint32_t id, const struct book_entry *e,
                      uint32_t n)
{
    emit_entries(f, id, e, n, BOOK_ENTRIES_PER_MSG, write_book46,
                 MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_MATCH_EVENT_INDICATOR_OFFSET);
}

static int same_level(const struct tp_sim_level *a, const struct tp_sim_level *b)
{
    return a->price9 == b->price9 && a->qty == b->qty && a->orders == b->orders;
}

static void add_entry(struct book_entry *out, uint32_t *n, const struct tp_sim_level *l,
                      uint32_t index, uint8_t action, char type)
{
    out[(*n)++] = (struct book_entry){.price9 = l ? l->price9 : NULL_PRICE9,
                                      .qty = l ? l->qty : 0,
                                      .orders = l ? (int32_t)l->orders : 0,
                                      .level = (uint8_t)index,
                                      .action = action,
                                      .type = type};
}

/*
 * Entries that turn the published levels `work` (n of them) into `want` (nn): DeleteThru when
 * the side empties, DeleteFrom when the top levels were taken, Overlay when one level changed
 * its price in place, otherwise Deletes (deepest first) then News and Changes top down.
 */
static uint32_t diff_side(struct tp_sim_level *work, uint32_t n, const struct tp_sim_level *want,
                          uint32_t nn, uint32_t depth, char type, struct book_entry *out)
{
    uint32_t count = 0;
    int bid = type == '0' || type == 'E';
    if (n > 0 && nn == 0) {
        add_entry(out, &count, NULL, 1, MKTDATA_MD_UPDATE_ACTION_DELETE_THRU, type);
        return count;
    }
    if (n == nn && n > 0) {
        uint32_t differ = 0, at = 0;
        for (uint32_t i = 0; i < n; i++)
            if (!same_level(&work[i], &want[i])) {
                differ++;
                at = i;
            }
        /* One level replaced by another price that keeps the order of the side. */
        if (differ == 1 && work[at].price9 != want[at].price9 &&
            (at == 0 || (bid ? want[at].price9 < want[at - 1].price9
                             : want[at].price9 > want[at - 1].price9))) {
            int present = 0;
            for (uint32_t j = 0; j < nn; j++)
                present |= want[j].price9 == work[at].price9;
            if (!present) {
                add_entry(out, &count, &want[at], at + 1, MKTDATA_MD_UPDATE_ACTION_OVERLAY, type);
                return count;
            }
        }
    }
    /* Leading levels better than the new best and gone from it: taken by a sweep. */
    uint32_t taken = 0;
    while (taken < n && nn > 0 &&
           (bid ? work[taken].price9 > want[0].price9 : work[taken].price9 < want[0].price9))
        taken++;
    if (taken >= 2) {
        add_entry(out, &count, NULL, taken, MKTDATA_MD_UPDATE_ACTION_DELETE_FROM, type);
        memmove(work, work + taken, (n - taken) * sizeof(*work));
        n -= taken;
    }
    for (uint32_t i = n; i-- > 0;) {
        int present = 0;
        for (uint32_t j = 0; j < nn; j++)
            present |= want[j].price9 == work[i].price9;
        if (!present) {
            add_entry(out, &count, &work[i], i + 1, MKTDATA_MD_UPDATE_ACTION_DELETE, type);
            memmove(work + i, work + i + 1, (n - i - 1) * sizeof(*work));
            n--;
        }
    }
    for (uint32_t j = 0; j < nn; j++) {
        if (j < n && work[j].price9 == want[j].price9) {
            if (!same_level(&work[j], &want[j]))
                add_entry(out, &count, &want[j], j + 1, MKTDATA_MD_UPDATE_ACTION_CHANGE, type);
        } else {
            add_entry(out, &count, &want[j], j + 1, MKTDATA_MD_UPDATE_ACTION_NEW, type);
            uint32_t keep = n < depth ? n : depth - 1;
            memmove(work + j + 1, work + j, (keep - j) * sizeof(*work));
            n = keep + 1;
        }
        work[j] = want[j];
    }
    return count;
}

/* Publishes the difference between the published levels and the model's, all four books. */
static void publish_levels(struct tp_sim_mdp3_feed *f, uint32_t id)
{
    struct tp_sim_level want[TP_SIM_MDP3_MAX_DEPTH];
    struct book_entry entries[BOOKS * (2 * TP_SIM_MDP3_MAX_DEPTH + 1)];
    uint32_t n = 0;
    for (int book = 0; book < BOOKS; book++) {
        uint8_t side = book == BOOK_BID || book == BOOK_IMPLIED_BID ? 'B' : 'S';
        int implied = book >= BOOK_IMPLIED_BID;
        uint32_t depth = implied ? TP_SIM_IMPLIED_DEPTH : f->params.depth;
        uint32_t nn = implied ? tp_sim_model_implied_levels(f->model, id, side, want, depth)
                              : tp_sim_model_levels(f->model, id, side, want, depth);
        struct tp_sim_level *work = view_of(f, id, book);
        n += diff_side(work, f->view_n[id * BOOKS + book], want, nn, depth, book_entry_type[book],
                       entries + n);
        memcpy(work, want, nn * sizeof(*want));
        f->view_n[id * BOOKS + book] = nn;
    }
    if (n > 0)
        emit_book(f, id, entries, n);
}

struct order_entry {
    uint64_t order_id;
    int64_t price9;
    int64_t qty;
    uint8_t action;
    char type;
};

/* MDIncrementalRefreshOrderBook47: order-level entries. */
static size_t write_order_book47(struct tp_sim_mdp3_feed *f, uint8_t *buf, size_t cap, uint32_t id,
                                 const void *entries, uint32_t first, uint32_t count)
{
    const struct order_entry *e = entries;
    struct mktdata_md_incremental_refresh_order_book47 m = {0};
    struct mktdata_md_incremental_refresh_order_book47_no_md_entries g = {0};
    mktdata_md_incremental_refresh_order_book47_wrap_and_apply_header(&m, buf, cap);
    mktdata_md_incremental_refresh_order_book47_set_transact_time(&m, f->params.midnight_epoch_ns +
                                                                          f->now_ns);
    mktdata_md_incremental_refresh_order_book47_no_md_entries_wrap_for_encode(&m, &g, count);
    for (uint32_t i = first; i < first + count; i++) {
        mktdata_md_incremental_refresh_order_book47_no_md_entries_next(&g);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_order_id(&g, e[i].order_id);
        /* Priority follows arrival: order ids grow with time. */
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_order_priority(
            &g, e[i].order_id);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_entry_px_mantissa(
            &g, e[i].price9);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_display_qty(
            &g, (int32_t)e[i].qty);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_security_id(
            &g, TP_SIM_SECURITY_ID(id));
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_update_action(&g,
                                                                                       e[i].action);
        mktdata_md_incremental_refresh_order_book47_no_md_entries_set_md_entry_type(&g, e[i].type);
    }
    return MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
           mktdata_md_incremental_refresh_order_book47_encoded_length(&m);
}

static void emit_orders(struct tp_sim_mdp3_feed *f, uint32_t id, const struct order_entry *e,
                        uint32_t n)
{
    emit_entries(f, id, e, n, ORDER_ENTRIES_PER_MSG, write_order_book47,
                 MKTDATA_MD_INCREMENTAL_REFRESH_ORDER_BOOK47_MATCH_EVENT_INDICATOR_OFFSET);
}

static char book_type(uint8_t side)
{
    return side == 'B' ? '0' : '1';
}

/* Order-level entries for the events of one step (all on one instrument). */
static void publish_orders(struct tp_sim_mdp3_feed *f, const struct tp_sim_event *ev, int n)
{
    struct order_entry stack[64];
    struct order_entry *e = stack;
    size_t need = 2 * (size_t)n;
    if (need > 64 && (e = malloc(need * sizeof(*e))) == NULL) {
        f->error = -ENOMEM;
        return;
    }
    uint32_t count = 0;
    for (int i = 0; i < n; i++) {
        const struct tp_sim_event *x = &ev[i];
        char type = book_type(x->side);
        switch (x->kind) {
        case TP_SIM_EV_ADD:
            e[count++] = (struct order_entry){x->order_id, x->price9, x->qty, 0, type};
            break;
        case TP_SIM_EV_CANCEL:
        case TP_SIM_EV_EXECUTE:
            e[count++] = (struct order_entry){x->order_id, x->old_price9, x->remaining,
                                              x->remaining > 0 ? 1 : 2, type};
            break;
        case TP_SIM_EV_DELETE:
            e[count++] = (struct order_entry){x->order_id, x->old_price9, 0, 2, type};
            break;
        case TP_SIM_EV_REPLACE:
            e[count++] = (struct order_entry){x->order_id, x->old_price9, 0, 2, type};
            e[count++] = (struct order_entry){x->new_order_id, x->price9, x->qty, 0, type};
            break;
        default:
            break;
        }
    }
    if (count > 0)
        emit_orders(f, ev[0].instrument, e, count);
    if (e != stack)
        free(e);
}

/* Trade summaries: one entry per run of fills at one price, with the filled orders. */
static void publish_trades(struct tp_sim_mdp3_feed *f, const struct tp_sim_event *ev, int n)
{
    int i = 0;
    while (i < n) {
        if (ev[i].kind != TP_SIM_EV_EXECUTE && ev[i].kind != TP_SIM_EV_TRADE) {
            i++;
            continue;
        }
        int j = i;
        int64_t qty = 0;
        while (j < n && j - i < FILLS_PER_MSG && ev[j].kind == ev[i].kind &&
               ev[j].price9 == ev[i].price9 && ev[i].kind == TP_SIM_EV_EXECUTE)
            qty += ev[j++].qty;
        if (j == i) /* a hidden trade: no resting displayed order */
            qty = ev[j++].qty;
        uint32_t id = ev[i].instrument;
        int fills = ev[i].kind == TP_SIM_EV_EXECUTE ? j - i : 0;
        size_t cap;
        uint8_t *buf = event_room(f, &cap);
        struct mktdata_md_incremental_refresh_trade_summary48 m = {0};
        struct mktdata_md_incremental_refresh_trade_summary48_no_md_entries g = {0};
        struct mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries o = {0};
        mktdata_md_incremental_refresh_trade_summary48_wrap_and_apply_header(&m, buf, cap);
        mktdata_md_incremental_refresh_trade_summary48_set_transact_time(
            &m, f->params.midnight_epoch_ns + f->now_ns);
        mktdata_md_incremental_refresh_trade_summary48_no_md_entries_wrap_for_encode(&m, &g, 1);
        mktdata_md_incremental_refresh_trade_summary48_no_md_entries_next(&g);
        mktdata_md_incremental_refresh_trade_summary48_no_md_entries_set_md_entry_px_mantissa(
            &g, ev[i].price9);
        mktdata_md_incremental_refresh_trade_summary48_no_md_entries_set_md_entry_size(
            &g, (int32_t)qty);
        mktdata_md_incremental_refresh_trade_summary48_no_md_entries_set_security_id(
            &g, TP_SIM_SECURITY_ID(id));
        mktdata_md_incremental_refresh_trade_summary48_no_md_entries_set_rpt_seq(&g,
                                                                                 ++f->rpt_seq[id]);
        mktdata_md_incremental_refresh_trade_summary48_no_md_entries_set_number_of_orders(&g,
                                                                                          fills);
        /* The aggressor takes the resting side: a resting bid was hit by a seller. */
        mktdata_md_incremental_refresh_trade_summary48_no_md_entries_set_aggressor_side(
            &g, ev[i].side == 'B' ? 2 : 1);
        mktdata_md_incremental_refresh_trade_summary48_no_md_entries_set_md_update_action(&g, 0);
        mktdata_md_incremental_refresh_trade_summary48_no_md_entries_set_md_trade_entry_id(
            &g, (uint32_t)ev[i].match_id);
        mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries_wrap_for_encode(
            &m, &o, (uint32_t)fills);
        for (int k = 0; k < fills; k++) {
            mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries_next(&o);
            mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries_set_order_id(
                &o, ev[i + k].order_id);
            mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries_set_last_qty(
                &o, (int32_t)ev[i + k].qty);
        }
        event_push(f,
                   MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                       mktdata_md_incremental_refresh_trade_summary48_encoded_length(&m),
                   MKTDATA_MD_INCREMENTAL_REFRESH_TRADE_SUMMARY48_MATCH_EVENT_INDICATOR_OFFSET,
                   PK_TRADE);
        i = j;
    }
}

static void publish_volume(struct tp_sim_mdp3_feed *f, uint32_t id)
{
    size_t cap;
    uint8_t *buf = event_room(f, &cap);
    struct mktdata_md_incremental_refresh_volume37 m = {0};
    struct mktdata_md_incremental_refresh_volume37_no_md_entries g = {0};
    mktdata_md_incremental_refresh_volume37_wrap_and_apply_header(&m, buf, cap);
    mktdata_md_incremental_refresh_volume37_set_transact_time(&m, f->params.midnight_epoch_ns +
                                                                      f->now_ns);
    mktdata_md_incremental_refresh_volume37_no_md_entries_wrap_for_encode(&m, &g, 1);
    mktdata_md_incremental_refresh_volume37_no_md_entries_next(&g);
    mktdata_md_incremental_refresh_volume37_no_md_entries_set_md_entry_size(
        &g, (int32_t)f->model->instruments[id].volume);
    mktdata_md_incremental_refresh_volume37_no_md_entries_set_security_id(&g,
                                                                          TP_SIM_SECURITY_ID(id));
    mktdata_md_incremental_refresh_volume37_no_md_entries_set_rpt_seq(&g, ++f->rpt_seq[id]);
    mktdata_md_incremental_refresh_volume37_no_md_entries_set_md_update_action(&g, 0);
    event_push(f,
               MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                   mktdata_md_incremental_refresh_volume37_encoded_length(&m),
               MKTDATA_MD_INCREMENTAL_REFRESH_VOLUME37_MATCH_EVENT_INDICATOR_OFFSET, PK_VOLUME);
}

/* Open, high and low trade prices when the event's trades set them (one entry each at most). */
static void publish_stats(struct tp_sim_mdp3_feed *f, uint32_t id, const struct tp_sim_event *ev,
                          int n)
{
    struct stat_entry {
        int64_t price9;
        char type;
    } s[3];
    int count = 0, traded = 0;
    int64_t lo = 0, hi = 0, first = 0;
    for (int i = 0; i < n; i++) {
        if (ev[i].kind != TP_SIM_EV_EXECUTE && ev[i].kind != TP_SIM_EV_TRADE)
            continue;
        int64_t px = ev[i].price9;
        if (!traded)
            first = lo = hi = px;
        lo = px < lo ? px : lo;
        hi = px > hi ? px : hi;
        traded = 1;
    }
    if (!traded)
        return;
    if (f->high9[id] == 0) { /* the session's first trade opens it */
        f->high9[id] = f->low9[id] = first;
        s[count++] = (struct stat_entry){first, '4'};
    }
    if (hi > f->high9[id]) {
        f->high9[id] = hi;
        s[count++] = (struct stat_entry){hi, '7'};
    }
    if (lo < f->low9[id]) {
        f->low9[id] = lo;
        s[count++] = (struct stat_entry){lo, '8'};
    }
    if (count == 0)
        return;
    size_t cap;
    uint8_t *buf = event_room(f, &cap);
    struct mktdata_md_incremental_refresh_session_statistics51 m = {0};
    struct mktdata_md_incremental_refresh_session_statistics51_no_md_entries g = {0};
    mktdata_md_incremental_refresh_session_statistics51_wrap_and_apply_header(&m, buf, cap);
    mktdata_md_incremental_refresh_session_statistics51_set_transact_time(
        &m, f->params.midnight_epoch_ns + f->now_ns);
    mktdata_md_incremental_refresh_session_statistics51_no_md_entries_wrap_for_encode(
        &m, &g, (uint32_t)count);
    for (int i = 0; i < count; i++) {
        mktdata_md_incremental_refresh_session_statistics51_no_md_entries_next(&g);
        mktdata_md_incremental_refresh_session_statistics51_no_md_entries_set_md_entry_px_mantissa(
            &g, s[i].price9);
        mktdata_md_incremental_refresh_session_statistics51_no_md_entries_set_security_id(
            &g, TP_SIM_SECURITY_ID(id));
        mktdata_md_incremental_refresh_session_statistics51_no_md_entries_set_rpt_seq(
            &g, ++f->rpt_seq[id]);
        mktdata_md_incremental_refresh_session_statistics51_no_md_entries_set_open_close_settl_flag(
            &g, s[i].type == '4' ? 0 : MKTDATA_U_INT8_NULL_VALUE);
        mktdata_md_incremental_refresh_session_statistics51_no_md_entries_set_md_update_action(&g,
                                                                                               0);
        mktdata_md_incremental_refresh_session_statistics51_no_md_entries_set_md_entry_type(
            &g, s[i].type);
        mktdata_md_incremental_refresh_session_statistics51_no_md_entries_set_md_entry_size(
            &g, MKTDATA_INT32_NULL_NULL_VALUE);
    }
    event_push(f,
               MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                   mktdata_md_incremental_refresh_session_statistics51_encoded_length(&m),
               MKTDATA_MD_INCREMENTAL_REFRESH_SESSION_STATISTICS51_MATCH_EVENT_INDICATOR_OFFSET,
               PK_STATS);
}

static void publish_status(struct tp_sim_mdp3_feed *f, const struct tp_sim_event *e)
{
    size_t cap;
    uint8_t *buf = event_room(f, &cap);
    struct mktdata_security_status30 m = {0};
    mktdata_security_status30_wrap_and_apply_header(&m, buf, cap);
    mktdata_security_status30_set_transact_time(&m, f->params.midnight_epoch_ns + f->now_ns);
    mktdata_security_status30_set_security_group(&m, "TP", 2);
    mktdata_security_status30_set_asset(&m, f->model->instruments[e->instrument].symbol, 4);
    mktdata_security_status30_set_security_id(&m, TP_SIM_SECURITY_ID(e->instrument));
    mktdata_security_status30_set_trade_date(&m, trade_date(f));
    int halted = e->status == TP_SIM_STATUS_HALTED;
    mktdata_security_status30_set_security_trading_status(
        &m, halted ? MKTDATA_SECURITY_TRADING_STATUS_TRADING_HALT
                   : MKTDATA_SECURITY_TRADING_STATUS_READY_TO_TRADE);
    mktdata_security_status30_set_halt_reason(&m, halted ? 1 : 0); /* surveillance / schedule */
    mktdata_security_status30_set_security_trading_event(&m, 0);
    event_push(f,
               MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH + mktdata_security_status30_encoded_length(&m),
               MKTDATA_SECURITY_STATUS30_MATCH_EVENT_INDICATOR_OFFSET, PK_OTHER);
}

/* DailyStatistics49: the prior day's settlement, cleared volume and open interest at the open;
 * only the final settlement at the close. */
static void publish_daily(struct tp_sim_mdp3_feed *f, uint32_t id, int close)
{
    const struct tp_sim_instrument *in = &f->model->instruments[id];
    struct tp_sim_mdp3_stats *st = &f->stats[id];
    struct daily_entry {
        char type;
        int64_t price9;
        int64_t size;
    } e[3];
    int count = 0;
    if (close) {
        st->settlement9 = in->last_price9;
        e[count++] = (struct daily_entry){'6', st->settlement9, MKTDATA_INT32_NULL_NULL_VALUE};
    } else {
        /* Deterministic per instrument, so that any run can be checked against the report. */
        st->settlement9 = in->ref_ticks * in->tick9;
        st->cleared_volume = 1000 + 37 * (int64_t)id;
        st->open_interest = 5000 + 101 * (int64_t)id;
        e[count++] = (struct daily_entry){'6', st->settlement9, MKTDATA_INT32_NULL_NULL_VALUE};
        e[count++] = (struct daily_entry){'B', NULL_PRICE9, st->cleared_volume};
        e[count++] = (struct daily_entry){'C', NULL_PRICE9, st->open_interest};
    }
    size_t cap;
    uint8_t *buf = event_room(f, &cap);
    struct mktdata_md_incremental_refresh_daily_statistics49 m = {0};
    struct mktdata_md_incremental_refresh_daily_statistics49_no_md_entries g = {0};
    mktdata_md_incremental_refresh_daily_statistics49_wrap_and_apply_header(&m, buf, cap);
    mktdata_md_incremental_refresh_daily_statistics49_set_transact_time(
        &m, f->params.midnight_epoch_ns + f->now_ns);
    mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_wrap_for_encode(
        &m, &g, (uint32_t)count);
    for (int i = 0; i < count; i++) {
        mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_next(&g);
        mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_set_md_entry_px_mantissa(
            &g, e[i].price9);
        mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_set_md_entry_size(
            &g, (int32_t)e[i].size);
        mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_set_security_id(
            &g, TP_SIM_SECURITY_ID(id));
        mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_set_rpt_seq(
            &g, ++f->rpt_seq[id]);
        mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_set_trading_reference_date(
            &g, trade_date(f));
        mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_set_settl_price_type(
            &g, e[i].type == '6'
                    ? MKTDATA_SETTL_PRICE_TYPE_FINAL_DAILY | MKTDATA_SETTL_PRICE_TYPE_ACTUAL
                    : 0);
        mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_set_md_update_action(&g, 0);
        mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_set_md_entry_type(
            &g, e[i].type);
    }
    event_push(f,
               MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                   mktdata_md_incremental_refresh_daily_statistics49_encoded_length(&m),
               MKTDATA_MD_INCREMENTAL_REFRESH_DAILY_STATISTICS49_MATCH_EVENT_INDICATOR_OFFSET,
               PK_STATS);
}

/* LimitsBanding50: limits centred on center9 (see mdp3_feed.h). */
static void publish_limits(struct tp_sim_mdp3_feed *f, uint32_t id, int64_t center9)
{
    const struct tp_sim_instrument *in = &f->model->instruments[id];
    struct tp_sim_mdp3_stats *st = &f->stats[id];
    const int64_t band_ticks = 8;
    st->band_center9 = center9;
    st->high_limit9 = center9 + band_ticks * in->tick9;
    st->low_limit9 = center9 - band_ticks * in->tick9;
    st->max_variation9 = band_ticks * in->tick9 / 2;
    size_t cap;
    uint8_t *buf = event_room(f, &cap);
    struct mktdata_md_incremental_refresh_limits_banding50 m = {0};
    struct mktdata_md_incremental_refresh_limits_banding50_no_md_entries g = {0};
    mktdata_md_incremental_refresh_limits_banding50_wrap_and_apply_header(&m, buf, cap);
    mktdata_md_incremental_refresh_limits_banding50_set_transact_time(
        &m, f->params.midnight_epoch_ns + f->now_ns);
    mktdata_md_incremental_refresh_limits_banding50_no_md_entries_wrap_for_encode(&m, &g, 1);
    mktdata_md_incremental_refresh_limits_banding50_no_md_entries_next(&g);
    mktdata_md_incremental_refresh_limits_banding50_no_md_entries_set_high_limit_price_mantissa(
        &g, st->high_limit9);
    mktdata_md_incremental_refresh_limits_banding50_no_md_entries_set_low_limit_price_mantissa(
        &g, st->low_limit9);
    mktdata_md_incremental_refresh_limits_banding50_no_md_entries_set_max_price_variation_mantissa(
        &g, st->max_variation9);
    mktdata_md_incremental_refresh_limits_banding50_no_md_entries_set_security_id(
        &g, TP_SIM_SECURITY_ID(id));
    mktdata_md_incremental_refresh_limits_banding50_no_md_entries_set_rpt_seq(&g, ++f->rpt_seq[id]);
    event_push(f,
               MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                   mktdata_md_incremental_refresh_limits_banding50_encoded_length(&m),
               MKTDATA_MD_INCREMENTAL_REFRESH_LIMITS_BANDING50_MATCH_EVENT_INDICATOR_OFFSET,
               PK_OTHER);
}

/* Before the first model event: each instrument's daily statistics and limits, one event each. */
static int publish_open(struct tp_sim_mdp3_feed *f)
{
    int rc = 0;
    for (uint32_t id = 0; id < f->model->params.instruments && rc == 0; id++) {
        const struct tp_sim_instrument *in = &f->model->instruments[id];
        f->hiding = f->params.unseen_events > 0 && id == f->params.unseen_id;
        publish_daily(f, id, 0);
        publish_limits(f, id, in->ref_ticks * in->tick9);
        rc = commit_event(f, 1);
        if (f->hiding)
            f->unseen_rpt_seq = f->rpt_seq[id];
        f->hiding = 0;
        rc = f->error ? f->error : rc;
    }
    return rc;
}

/* After the last model event: the final settlement of each instrument that traded. */
static int publish_close(struct tp_sim_mdp3_feed *f)
{
    int rc = 0;
    for (uint32_t id = 0; id < f->model->params.instruments && rc == 0; id++) {
        if (f->model->instruments[id].trades == 0)
            continue;
        publish_daily(f, id, 1);
        rc = commit_event(f, 1);
        rc = f->error ? f->error : rc;
    }
    return rc;
}

/* One model step = one matching event. */
static int publish_step(struct tp_sim_mdp3_feed *f, const struct tp_sim_event *ev, int n)
{
    uint32_t id = ev[0].instrument;
    int traded = 0;
    f->hiding = id == f->params.unseen_id && f->unseen_left > 0;
    f->unseen_left -= f->hiding;
    for (int i = 0; i < n; i++)
        traded |= ev[i].kind == TP_SIM_EV_EXECUTE || ev[i].kind == TP_SIM_EV_TRADE;
    f->now_ns = ev[0].time_ns;
    if (traded) {
        publish_trades(f, ev, n);
        publish_volume(f, id);
        publish_stats(f, id, ev, n);
        /* Dynamic limits follow the price: re-centred when a trade strays from the centre. */
        const struct tp_sim_mdp3_stats *st = &f->stats[id];
        int64_t last = f->model->instruments[id].last_price9;
        int64_t off = last > st->band_center9 ? last - st->band_center9 : st->band_center9 - last;
        if (2 * off > st->max_variation9)
            publish_limits(f, id, last);
    }
    publish_levels(f, id);
    publish_orders(f, ev, n);
    for (int i = 0; i < n; i++)
        if (ev[i].kind == TP_SIM_EV_STATUS)
            publish_status(f, &ev[i]);
    int rc = commit_event(f, 1);
    if (f->hiding)
        f->unseen_rpt_seq = f->rpt_seq[id];
    f->hiding = 0;
    return f->error ? f->error : rc;
}

/* ---- channel reset -------------------------------------------------------------------- */

/* The whole book of an instrument as New entries (after a channel reset). */
static int republish(struct tp_sim_mdp3_feed *f, uint32_t id)
{
    const struct tp_sim_instrument *in = &f->model->instruments[id];
    publish_levels(f, id);
    struct order_entry e[ORDER_ENTRIES_PER_MSG];
    uint32_t n = 0;
    for (uint32_t i = 0; i < in->n_orders; i++) {
        const struct tp_sim_order *o = &f->model->pool[in->orders[i]];
        e[n++] = (struct order_entry){o->id, o->ticks * in->tick9, o->qty, 0, book_type(o->side)};
        if (n == ORDER_ENTRIES_PER_MSG) {
            emit_orders(f, id, e, n);
            n = 0;
        }
    }
    if (n > 0)
        emit_orders(f, id, e, n);
    int rc = commit_event(f, 1);
    return f->error ? f->error : rc;
}

static int channel_reset(struct tp_sim_mdp3_feed *f)
{
    int rc = flush_stream(f, TP_SIM_STREAM_INCREMENTAL);
    if (rc < 0)
        return rc;
    f->stream[TP_SIM_STREAM_INCREMENTAL].next_seq = 1;
    size_t cap;
    uint8_t *buf = event_room(f, &cap);
    struct mktdata_channel_reset4 m = {0};
    struct mktdata_channel_reset4_no_md_entries g = {0};
    mktdata_channel_reset4_wrap_and_apply_header(&m, buf, cap);
    mktdata_channel_reset4_set_transact_time(&m, f->params.midnight_epoch_ns + f->now_ns);
    mktdata_channel_reset4_no_md_entries_wrap_for_encode(&m, &g, 1);
    mktdata_channel_reset4_no_md_entries_next(&g);
    mktdata_channel_reset4_no_md_entries_set_appl_id(&g, f->params.appl_id);
    event_push(f, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH + mktdata_channel_reset4_encoded_length(&m),
               MKTDATA_CHANNEL_RESET4_MATCH_EVENT_INDICATOR_OFFSET, PK_OTHER);
    if ((rc = commit_event(f, 1)) < 0 || (rc = flush_stream(f, TP_SIM_STREAM_INCREMENTAL)) < 0)
        return rc;
    f->channel_resets++;
    memset(f->view_n, 0, sizeof(*f->view_n) * BOOKS * f->model->params.instruments);
    memset(f->rpt_seq, 0, sizeof(*f->rpt_seq) * f->model->params.instruments);
    for (uint32_t id = 0; id < f->model->params.instruments && rc == 0; id++)
        rc = republish(f, id);
    return rc;
}

/* ---- snapshot and definition channels --------------------------------------------------- */

static int send_snapshot(struct tp_sim_mdp3_feed *f, uint32_t id)
{
    const struct tp_sim_instrument *in = &f->model->instruments[id];
    uint8_t buf[TP_SIM_MAX_PAYLOAD];
    struct mktdata_snapshot_full_refresh52 m = {0};
    struct mktdata_snapshot_full_refresh52_no_md_entries g = {0};
    mktdata_snapshot_full_refresh52_wrap_and_apply_header(&m, buf, sizeof(buf));
    uint64_t now = f->params.midnight_epoch_ns + f->now_ns;
    /* The snapshot includes every incremental packet sent so far (the open one was flushed). */
    mktdata_snapshot_full_refresh52_set_last_msg_seq_num_processed(
        &m, f->stream[TP_SIM_STREAM_INCREMENTAL].next_seq - 1);
    mktdata_snapshot_full_refresh52_set_tot_num_reports(&m, f->model->params.instruments);
    mktdata_snapshot_full_refresh52_set_security_id(&m, TP_SIM_SECURITY_ID(id));
    mktdata_snapshot_full_refresh52_set_rpt_seq(&m, f->rpt_seq[id]);
    mktdata_snapshot_full_refresh52_set_transact_time(&m, now);
    mktdata_snapshot_full_refresh52_set_last_update_time(&m, now);
    mktdata_snapshot_full_refresh52_set_trade_date(&m, trade_date(f));
    mktdata_snapshot_full_refresh52_set_md_security_trading_status(
        &m, in->status == TP_SIM_STATUS_HALTED ? MKTDATA_SECURITY_TRADING_STATUS_TRADING_HALT
                                               : MKTDATA_SECURITY_TRADING_STATUS_READY_TO_TRADE);
    /* Zero before the open's limits were sent: null then. */
    const struct tp_sim_mdp3_stats *st = &f->stats[id];
    mktdata_snapshot_full_refresh52_set_high_limit_price_mantissa(
        &m, st->high_limit9 ? st->high_limit9 : NULL_PRICE9);
    mktdata_snapshot_full_refresh52_set_low_limit_price_mantissa(
        &m, st->high_limit9 ? st->low_limit9 : NULL_PRICE9);
    mktdata_snapshot_full_refresh52_set_max_price_variation_mantissa(
        &m, st->high_limit9 ? st->max_variation9 : NULL_PRICE9);
    uint32_t entries = 0;
    for (int book = 0; book < BOOKS; book++)
        entries += f->view_n[id * BOOKS + book];
    mktdata_snapshot_full_refresh52_no_md_entries_wrap_for_encode(&m, &g, entries);
    for (int book = 0; book < BOOKS; book++) {
        const struct tp_sim_level *lv = view_of(f, id, book);
        int implied = book >= BOOK_IMPLIED_BID;
        for (uint32_t i = 0; i < f->view_n[id * BOOKS + book]; i++) {
            mktdata_snapshot_full_refresh52_no_md_entries_next(&g);
            mktdata_snapshot_full_refresh52_no_md_entries_set_md_entry_px_mantissa(&g,
                                                                                   lv[i].price9);
            mktdata_snapshot_full_refresh52_no_md_entries_set_md_entry_size(&g, (int32_t)lv[i].qty);
            mktdata_snapshot_full_refresh52_no_md_entries_set_number_of_orders(
                &g, implied ? INT32_MAX : (int32_t)lv[i].orders);
            mktdata_snapshot_full_refresh52_no_md_entries_set_md_price_level(&g, (int8_t)(i + 1));
            mktdata_snapshot_full_refresh52_no_md_entries_set_trading_reference_date(
                &g, MKTDATA_LOCAL_MKT_DATE_NULL_VALUE);
            mktdata_snapshot_full_refresh52_no_md_entries_set_open_close_settl_flag(
                &g, MKTDATA_U_INT8_NULL_VALUE);
            mktdata_snapshot_full_refresh52_no_md_entries_set_md_entry_type(&g,
                                                                            book_entry_type[book]);
        }
    }
    int rc = put_message(f, TP_SIM_STREAM_SNAPSHOT, buf,
                         MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                             mktdata_snapshot_full_refresh52_encoded_length(&m));
    return rc < 0 ? rc : flush_stream(f, TP_SIM_STREAM_SNAPSHOT); /* one per packet */
}

/* Orders per SnapshotFullRefreshOrderBook53 chunk (28 + 3 + 29 * 40 bytes fits a packet). */
#define MBO_SNAPSHOT_ORDERS 40

/* The instrument's live orders, in chunks of one message per packet. */
static int send_snapshot_mbo(struct tp_sim_mdp3_feed *f, uint32_t id)
{
    const struct tp_sim_instrument *in = &f->model->instruments[id];
    uint32_t chunks =
        in->n_orders == 0 ? 1 : (in->n_orders + MBO_SNAPSHOT_ORDERS - 1) / MBO_SNAPSHOT_ORDERS;
    int rc = 0;
    for (uint32_t chunk = 0; chunk < chunks && rc == 0; chunk++) {
        uint32_t first = chunk * MBO_SNAPSHOT_ORDERS;
        uint32_t count =
            in->n_orders - first < MBO_SNAPSHOT_ORDERS ? in->n_orders - first : MBO_SNAPSHOT_ORDERS;
        uint8_t buf[TP_SIM_MAX_PAYLOAD];
        struct mktdata_snapshot_full_refresh_order_book53 m = {0};
        struct mktdata_snapshot_full_refresh_order_book53_no_md_entries g = {0};
        mktdata_snapshot_full_refresh_order_book53_wrap_and_apply_header(&m, buf, sizeof(buf));
        mktdata_snapshot_full_refresh_order_book53_set_last_msg_seq_num_processed(
            &m, f->stream[TP_SIM_STREAM_INCREMENTAL].next_seq - 1);
        mktdata_snapshot_full_refresh_order_book53_set_tot_num_reports(
            &m, f->model->params.instruments);
        mktdata_snapshot_full_refresh_order_book53_set_security_id(&m, TP_SIM_SECURITY_ID(id));
        mktdata_snapshot_full_refresh_order_book53_set_no_chunks(&m, chunks);
        mktdata_snapshot_full_refresh_order_book53_set_current_chunk(&m, chunk + 1);
        mktdata_snapshot_full_refresh_order_book53_set_transact_time(
            &m, f->params.midnight_epoch_ns + f->now_ns);
        mktdata_snapshot_full_refresh_order_book53_no_md_entries_wrap_for_encode(&m, &g, count);
        for (uint32_t i = first; i < first + count; i++) {
            const struct tp_sim_order *o = &f->model->pool[in->orders[i]];
            mktdata_snapshot_full_refresh_order_book53_no_md_entries_next(&g);
            mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_order_id(&g, o->id);
            mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_order_priority(&g,
                                                                                           o->id);
            mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_entry_px_mantissa(
                &g, o->ticks * in->tick9);
            mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_display_qty(
                &g, (int32_t)o->qty);
            mktdata_snapshot_full_refresh_order_book53_no_md_entries_set_md_entry_type(
                &g, book_type(o->side));
        }
        rc = put_message(f, TP_SIM_STREAM_SNAPSHOT_MBO, buf,
                         MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                             mktdata_snapshot_full_refresh_order_book53_encoded_length(&m));
        if (rc == 0)
            rc = flush_stream(f, TP_SIM_STREAM_SNAPSHOT_MBO);
    }
    return rc;
}

/*
 * The simulator's instruments are futures, except that every fifth from id 3 is an option on
 * one and every fifth from id 4 a calendar spread: each kind has its definition template.
 */
static int definition_template(uint32_t id)
{
    return id % 5 == 3 ? 55 : id % 5 == 4 ? 56 : 54;
}

/*
 * The fields and groups the three definition templates share (T = the generated name), in
 * schema order up to NoLotTypeRules; each template then adds its own fields and groups.
 */
#define DEFINITION_COMMON(T, m, f, id, symbol, security_type, cfi)                                 \
    do {                                                                                           \
        const struct tp_sim_instrument *in_ = &(f)->model->instruments[id];                        \
        mktdata_##T##_set_match_event_indicator(m, MEI_EOE);                                       \
        mktdata_##T##_set_tot_num_reports(m, (f)->model->params.instruments);                      \
        mktdata_##T##_set_security_update_action(m, 'A');                                          \
        mktdata_##T##_set_last_update_time(m, (f)->params.midnight_epoch_ns + (f)->now_ns);        \
        mktdata_##T##_set_md_security_trading_status(                                              \
            m, MKTDATA_SECURITY_TRADING_STATUS_READY_TO_TRADE);                                    \
        mktdata_##T##_set_appl_id(m, (f)->params.appl_id);                                         \
        mktdata_##T##_set_market_segment_id(m, 99);                                                \
        mktdata_##T##_set_underlying_product(m, 2);                                                \
        mktdata_##T##_set_security_exchange(m, "XCME", 4);                                         \
        mktdata_##T##_set_security_group(m, "TP", 2);                                              \
        mktdata_##T##_set_asset(m, in_->symbol, 4);                                                \
        mktdata_##T##_set_symbol(m, symbol, strlen(symbol));                                       \
        mktdata_##T##_set_security_id(m, TP_SIM_SECURITY_ID(id));                                  \
        mktdata_##T##_set_security_type(m, security_type, strlen(security_type));                  \
        mktdata_##T##_set_cfi_code(m, cfi, 6);                                                     \
        mktdata_##T##_set_maturity_month_year_year(m, 2026);                                       \
        mktdata_##T##_set_maturity_month_year_month(m, 12);                                        \
        mktdata_##T##_set_maturity_month_year_day(m, 255);                                         \
        mktdata_##T##_set_maturity_month_year_week(m, 255);                                        \
        mktdata_##T##_set_currency(m, "USD", 3);                                                   \
        mktdata_##T##_set_match_algorithm(m, 'F');                                                 \
        mktdata_##T##_set_min_trade_vol(m, 1);                                                     \
        mktdata_##T##_set_max_trade_vol(m, 100000);                                                \
        mktdata_##T##_set_min_price_increment_mantissa(m, in_->tick9);                             \
        mktdata_##T##_set_display_factor_mantissa(m, 1000000000);                                  \
        mktdata_##T##_set_main_fraction(m, MKTDATA_U_INT8_NULL_VALUE);                             \
        mktdata_##T##_set_sub_fraction(m, MKTDATA_U_INT8_NULL_VALUE);                              \
        mktdata_##T##_set_price_display_format(m, 2);                                              \
        mktdata_##T##_set_unit_of_measure(m, "IPNT", 4);                                           \
        mktdata_##T##_set_trading_reference_price_mantissa(m, in_->ref_ticks * in_->tick9);        \
        mktdata_##T##_set_open_interest_qty(m, MKTDATA_INT32_NULL_NULL_VALUE);                     \
        mktdata_##T##_set_cleared_volume(m, MKTDATA_INT32_NULL_NULL_VALUE);                        \
        mktdata_##T##_set_high_limit_price_mantissa(m, NULL_PRICE9);                               \
        mktdata_##T##_set_low_limit_price_mantissa(m, NULL_PRICE9);                                \
        mktdata_##T##_set_user_defined_instrument(m, 'N');                                         \
        mktdata_##T##_set_trading_reference_date(m, MKTDATA_LOCAL_MKT_DATE_NULL_VALUE);            \
        struct mktdata_##T##_no_events ge_ = {0};                                                  \
        mktdata_##T##_no_events_wrap_for_encode(m, &ge_, 0);                                       \
        struct mktdata_##T##_no_md_feed_types gf_ = {0};                                           \
        mktdata_##T##_no_md_feed_types_wrap_for_encode(m, &gf_, 2);                                \
        mktdata_##T##_no_md_feed_types_next(&gf_);                                                 \
        mktdata_##T##_no_md_feed_types_set_md_feed_type(&gf_, "GBX", 3);                           \
        mktdata_##T##_no_md_feed_types_set_market_depth(&gf_, (int8_t)(f)->params.depth);          \
        mktdata_##T##_no_md_feed_types_next(&gf_);                                                 \
        mktdata_##T##_no_md_feed_types_set_md_feed_type(&gf_, "GBI", 3);                           \
        mktdata_##T##_no_md_feed_types_set_market_depth(&gf_, 2);                                  \
        struct mktdata_##T##_no_inst_attrib ga_ = {0};                                             \
        mktdata_##T##_no_inst_attrib_wrap_for_encode(m, &ga_, 1);                                  \
        mktdata_##T##_no_inst_attrib_next(&ga_);                                                   \
        mktdata_##T##_no_inst_attrib_set_inst_attrib_value(&ga_, 1);                               \
        struct mktdata_##T##_no_lot_type_rules gl_ = {0};                                          \
        mktdata_##T##_no_lot_type_rules_wrap_for_encode(m, &gl_, 0);                               \
    } while (0)

/* An outright future: "AAAAZ6" (December 2026). */
static size_t write_future54(struct tp_sim_mdp3_feed *f, uint32_t id, uint8_t *buf, size_t cap,
                             const char *product)
{
    struct mktdata_md_instrument_definition_future54 m = {0};
    mktdata_md_instrument_definition_future54_wrap_and_apply_header(&m, buf, cap);
    char symbol[8];
    snprintf(symbol, sizeof(symbol), "%sZ6", product);
    mktdata_md_instrument_definition_future54_set_settl_currency(&m, "USD", 3);
    mktdata_md_instrument_definition_future54_set_unit_of_measure_qty_mantissa(&m, NULL_PRICE9);
    mktdata_md_instrument_definition_future54_set_max_price_variation_mantissa(&m, NULL_PRICE9);
    mktdata_md_instrument_definition_future54_set_decay_quantity(&m, MKTDATA_INT32_NULL_NULL_VALUE);
    mktdata_md_instrument_definition_future54_set_decay_start_date(
        &m, MKTDATA_LOCAL_MKT_DATE_NULL_VALUE);
    mktdata_md_instrument_definition_future54_set_original_contract_size(
        &m, MKTDATA_INT32_NULL_NULL_VALUE);
    mktdata_md_instrument_definition_future54_set_contract_multiplier(
        &m, MKTDATA_INT32_NULL_NULL_VALUE);
    mktdata_md_instrument_definition_future54_set_contract_multiplier_unit(
        &m, MKTDATA_INT8_NULL_NULL_VALUE);
    mktdata_md_instrument_definition_future54_set_flow_schedule_type(&m,
                                                                     MKTDATA_INT8_NULL_NULL_VALUE);
    mktdata_md_instrument_definition_future54_set_min_price_increment_amount_mantissa(&m,
                                                                                      NULL_PRICE9);
    DEFINITION_COMMON(md_instrument_definition_future54, &m, f, id, symbol, "FUT", "FFICSX");
    return MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
           mktdata_md_instrument_definition_future54_encoded_length(&m);
}

/* A call on the product's future: "AAADZ6 C100" (strike: the reference price). */
static size_t write_option55(struct tp_sim_mdp3_feed *f, uint32_t id, uint8_t *buf, size_t cap,
                             const char *product)
{
    const struct tp_sim_instrument *in = &f->model->instruments[id];
    int64_t strike9 = in->ref_ticks * in->tick9;
    struct mktdata_md_instrument_definition_option55 m = {0};
    mktdata_md_instrument_definition_option55_wrap_and_apply_header(&m, buf, cap);
    char symbol[21], underlying[8];
    snprintf(symbol, sizeof(symbol), "%sZ6 C%lld", product, (long long)(strike9 / 1000000000));
    snprintf(underlying, sizeof(underlying), "%sZ6", product);
    mktdata_md_instrument_definition_option55_set_put_or_call(&m, 1);
    mktdata_md_instrument_definition_option55_set_strike_price_mantissa(&m, strike9);
    mktdata_md_instrument_definition_option55_set_strike_currency(&m, "USD", 3);
    mktdata_md_instrument_definition_option55_set_settl_currency(&m, "USD", 3);
    mktdata_md_instrument_definition_option55_set_min_cab_price_mantissa(&m, NULL_PRICE9);
    mktdata_md_instrument_definition_option55_set_tick_rule(&m, MKTDATA_INT8_NULL_NULL_VALUE);
    mktdata_md_instrument_definition_option55_set_unit_of_measure_qty_mantissa(&m, NULL_PRICE9);
    mktdata_md_instrument_definition_option55_set_min_price_increment_amount_mantissa(&m,
                                                                                      NULL_PRICE9);
    DEFINITION_COMMON(md_instrument_definition_option55, &m, f, id, symbol, "OOF", "OCAFPS");
    struct mktdata_md_instrument_definition_option55_no_underlyings gu = {0};
    mktdata_md_instrument_definition_option55_no_underlyings_wrap_for_encode(&m, &gu, 1);
    mktdata_md_instrument_definition_option55_no_underlyings_next(&gu);
    /* The underlying future is not listed on this channel: an id outside the simulator's. */
    mktdata_md_instrument_definition_option55_no_underlyings_set_underlying_security_id(
        &gu, TP_SIM_SECURITY_ID(id) + 500000);
    mktdata_md_instrument_definition_option55_no_underlyings_set_underlying_symbol(
        &gu, underlying, strlen(underlying));
    struct mktdata_md_instrument_definition_option55_no_related_instruments gr = {0};
    mktdata_md_instrument_definition_option55_no_related_instruments_wrap_for_encode(&m, &gr, 0);
    return MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
           mktdata_md_instrument_definition_option55_encoded_length(&m);
}

/* A calendar spread, December 2026 against March 2027: "AAAEZ6-AAAEH7", two legs. */
static size_t write_spread56(struct tp_sim_mdp3_feed *f, uint32_t id, uint8_t *buf, size_t cap,
                             const char *product)
{
    struct mktdata_md_instrument_definition_spread56 m = {0};
    mktdata_md_instrument_definition_spread56_wrap_and_apply_header(&m, buf, cap);
    char symbol[21];
    snprintf(symbol, sizeof(symbol), "%sZ6-%sH7", product, product);
    mktdata_md_instrument_definition_spread56_set_security_sub_type(&m, "SP", 2);
    mktdata_md_instrument_definition_spread56_set_price_ratio_mantissa(&m, NULL_PRICE9);
    mktdata_md_instrument_definition_spread56_set_tick_rule(&m, MKTDATA_INT8_NULL_NULL_VALUE);
    mktdata_md_instrument_definition_spread56_set_max_price_variation_mantissa(&m, NULL_PRICE9);
    DEFINITION_COMMON(md_instrument_definition_spread56, &m, f, id, symbol, "FUT", "FMIXSX");
    struct mktdata_md_instrument_definition_spread56_no_legs gl = {0};
    mktdata_md_instrument_definition_spread56_no_legs_wrap_for_encode(&m, &gl, 2);
    for (int leg = 0; leg < 2; leg++) {
        mktdata_md_instrument_definition_spread56_no_legs_next(&gl);
        /* Legs outside the simulator's ids, as for the option's underlying. */
        mktdata_md_instrument_definition_spread56_no_legs_set_leg_security_id(
            &gl, TP_SIM_SECURITY_ID(id) + 600000 + leg);
        mktdata_md_instrument_definition_spread56_no_legs_set_leg_side(&gl, leg == 0 ? 1 : 2);
        mktdata_md_instrument_definition_spread56_no_legs_set_leg_ratio_qty(&gl, 1);
        mktdata_md_instrument_definition_spread56_no_legs_set_leg_price_mantissa(&gl, NULL_PRICE9);
        mktdata_md_instrument_definition_spread56_no_legs_set_leg_option_delta_mantissa(
            &gl, MKTDATA_INT32_NULL_NULL_VALUE); /* DecimalQty null: INT32_MAX */
    }
    return MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
           mktdata_md_instrument_definition_spread56_encoded_length(&m);
}

static int send_definition(struct tp_sim_mdp3_feed *f, uint32_t id)
{
    uint8_t buf[512];
    char product[5];
    memcpy(product, f->model->instruments[id].symbol, 4);
    product[4] = '\0';
    size_t len;
    switch (definition_template(id)) {
    case 55:
        len = write_option55(f, id, buf, sizeof(buf), product);
        break;
    case 56:
        len = write_spread56(f, id, buf, sizeof(buf), product);
        break;
    default:
        len = write_future54(f, id, buf, sizeof(buf), product);
    }
    return put_message(f, TP_SIM_STREAM_DEFINITION, buf, len);
}

/* Sends the next `batch` items of a cycling channel; the channel's MsgSeqNum restarts per loop. */
static int send_batch(struct tp_sim_mdp3_feed *f, int stream, uint32_t *cursor, uint32_t batch,
                      uint64_t *loops)
{
    uint32_t n = f->model->params.instruments;
    int rc = 0;
    for (uint32_t k = 0; k < batch && rc == 0; k++) {
        if (*cursor == 0) {
            f->stream[stream].next_seq = 1;
            if (stream == TP_SIM_STREAM_SNAPSHOT)
                f->stream[TP_SIM_STREAM_SNAPSHOT_MBO].next_seq = 1;
        }
        if (stream == TP_SIM_STREAM_DEFINITION) {
            rc = send_definition(f, *cursor);
        } else {
            /* Each instrument's book by price level, then by order. */
            rc = send_snapshot(f, *cursor);
            if (rc == 0)
                rc = send_snapshot_mbo(f, *cursor);
        }
        if (++*cursor == n) {
            *cursor = 0;
            (*loops)++;
        }
    }
    return rc < 0 ? rc : flush_stream(f, stream);
}

/* After each incremental packet: snapshot and definition batches when they are due. */
static int side_channels(struct tp_sim_mdp3_feed *f)
{
    const struct tp_sim_mdp3_params *p = &f->params;
    int rc = 0;
    if (p->snapshot_every > 0 && ++f->since_snapshot >= p->snapshot_every) {
        f->since_snapshot = 0;
        rc = flush_stream(f, TP_SIM_STREAM_INCREMENTAL);
        if (rc == 0)
            rc = send_batch(f, TP_SIM_STREAM_SNAPSHOT, &f->snapshot_cursor, p->snapshot_batch,
                            &f->snapshot_loops);
    }
    if (rc == 0 && p->definition_every > 0 && ++f->since_definition >= p->definition_every) {
        f->since_definition = 0;
        rc = send_batch(f, TP_SIM_STREAM_DEFINITION, &f->definition_cursor, p->definition_batch,
                        &f->definition_loops);
    }
    return rc;
}

int tp_sim_mdp3_run(struct tp_sim_mdp3_feed *f, uint64_t events)
{
    struct tp_sim_model *m = f->model;
    f->now_ns = m->now_ns;
    /* A full definition loop before the first incremental packet. */
    int rc = send_batch(f, TP_SIM_STREAM_DEFINITION, &f->definition_cursor, m->params.instruments,
                        &f->definition_loops);
    if (rc == 0)
        rc = publish_open(f);
    while (rc == 0 && m->events_total < events) {
        if (f->params.reset_at_message != 0 && m->events_total >= f->params.reset_at_message &&
            f->channel_resets == 0) {
            rc = channel_reset(f);
            if (rc < 0)
                break;
        }
        const struct tp_sim_event *ev;
        int n = tp_sim_model_step(m, &ev);
        if (n < 0)
            return n;
        uint32_t before = f->stream[TP_SIM_STREAM_INCREMENTAL].index;
        rc = publish_step(f, ev, n);
        if (rc == 0 && f->stream[TP_SIM_STREAM_INCREMENTAL].index != before)
            rc = side_channels(f);
    }
    if (rc == 0)
        rc = publish_close(f);
    if (rc == 0)
        rc = flush_stream(f, TP_SIM_STREAM_INCREMENTAL);
    if (rc == 0 && f->params.snapshot_every > 0)
        rc = send_batch(f, TP_SIM_STREAM_SNAPSHOT, &f->snapshot_cursor, m->params.instruments,
                        &f->snapshot_loops); /* a closing loop: the final state */
    return rc;
}

json_t *tp_sim_mdp3_report(const struct tp_sim_mdp3_feed *f)
{
    json_t *templates = json_object();
    for (int t = 0; t < 64; t++)
        if (f->templates[t] > 0) {
            char key[8];
            snprintf(key, sizeof(key), "%d", t);
            json_object_set_new(templates, key, json_integer((json_int_t)f->templates[t]));
        }
    static const char *const names[6] = {"New",        "Change",     "Delete",
                                         "DeleteThru", "DeleteFrom", "Overlay"};
    json_t *actions = json_object();
    for (int a = 0; a < 6; a++)
        json_object_set_new(actions, names[a], json_integer((json_int_t)f->actions[a]));
    static const char *const kind_names[] = {"future", "option", "spread"};
    json_t *stats = json_object();
    for (uint32_t id = 0; id < f->model->params.instruments; id++) {
        const struct tp_sim_mdp3_stats *st = &f->stats[id];
        char symbol[9];
        memcpy(symbol, f->model->instruments[id].symbol, sizeof(symbol));
        for (int i = 7; i >= 0 && symbol[i] == ' '; i--)
            symbol[i] = '\0';
        json_object_set_new(
            stats, symbol,
            json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I}", "kind",
                      kind_names[definition_template(id) - 54], "settlement9",
                      (json_int_t)st->settlement9, "cleared_volume", (json_int_t)st->cleared_volume,
                      "open_interest", (json_int_t)st->open_interest, "high_limit9",
                      (json_int_t)st->high_limit9, "low_limit9", (json_int_t)st->low_limit9,
                      "max_variation9", (json_int_t)st->max_variation9));
    }
    json_t *report =
        json_pack("{s:o,s:o,s:o,s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "templates", templates,
                  "book_actions", actions, "statistics", stats, "incremental_packets",
                  (json_int_t)f->stream[TP_SIM_STREAM_INCREMENTAL].index, "snapshot_packets",
                  (json_int_t)f->stream[TP_SIM_STREAM_SNAPSHOT].index, "snapshot_mbo_packets",
                  (json_int_t)f->stream[TP_SIM_STREAM_SNAPSHOT_MBO].index, "definition_packets",
                  (json_int_t)f->stream[TP_SIM_STREAM_DEFINITION].index, "snapshot_loops",
                  (json_int_t)f->snapshot_loops, "definition_loops",
                  (json_int_t)f->definition_loops, "channel_resets", (json_int_t)f->channel_resets);
    if (f->params.unseen_events > 0)
        json_object_set_new(report, "unseen",
                            json_pack("{s:I,s:I,s:I}", "instrument",
                                      (json_int_t)f->params.unseen_id, "events",
                                      (json_int_t)(f->params.unseen_events - f->unseen_left),
                                      "last_rpt_seq", (json_int_t)f->unseen_rpt_seq));
    return report;
}

uint16_t tp_sim_mdp3_heartbeat(const struct tp_sim_packet *src, uint8_t *out)
{
    struct tp_mdp3_writer w;
    uint64_t sending_time = mktdata_load_u64(src->data + 4);
    tp_mdp3_writer_init(&w, out, TP_SIM_MAX_PAYLOAD, (uint32_t)(src->seq - 1), sending_time);
    size_t room;
    uint8_t *dst = tp_mdp3_writer_reserve(&w, &room);
    struct mktdata_admin_heartbeat12 m = {0};
    mktdata_admin_heartbeat12_wrap_and_apply_header(&m, dst, room);
    tp_mdp3_writer_commit(&w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                                  mktdata_admin_heartbeat12_encoded_length(&m));
    return (uint16_t)w.len;
}
