/*
 * EOBI feed handler (see tp_eobi_feed.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "eobi.h"
#include "tp_eobi_feed.h"
#include "tp_mbo.h"

#define NO_SEGMENT TP_EOBI_FEED_SEGMENTS

_Static_assert((TP_EOBI_FEED_SEGMENTS & (TP_EOBI_FEED_SEGMENTS - 1)) == 0, "a power of two");
_Static_assert(TP_EOBI_FEED_SEGMENTS <= UINT16_MAX, "segment indexes are u16");
_Static_assert((TP_EOBI_FEED_SECURITIES & (TP_EOBI_FEED_SECURITIES - 1)) == 0, "a power of two");
_Static_assert(TP_EOBI_FEED_BUFFER_BYTES <= UINT32_MAX, "buffer offsets are u32");

/* A message the book operations refused or could not read: the segment must recover. */
#define GAP_NEEDED (-EPROTO)

int tp_eobi_feed_init(struct tp_eobi_feed *f, struct tp_instruments *registry,
                      struct tp_books *books, const struct tp_instrument_filter *filter,
                      uint16_t channel, const struct tp_feed_sink *sink)
{
    if (!f || !registry || !books || tp_books_params(books)->max_orders == 0)
        return -EINVAL;
    memset(f, 0, offsetof(struct tp_eobi_feed, segments));
    memset(f->segments, 0, sizeof(f->segments));
    memset(f->securities, 0, sizeof(f->securities));
    f->registry = registry;
    f->books = books;
    f->filter = filter;
    f->channel = channel;
    f->snapshot_segment = NO_SEGMENT;
    f->release = TP_EOBI_RELEASE_DEFAULT;
    if (sink)
        f->sink = *sink;
    return 0;
}

int tp_eobi_feed_set_release(struct tp_eobi_feed *f, enum tp_eobi_release release)
{
    if (f == NULL || (unsigned)release >= TP_EOBI_RELEASES)
        return -EINVAL;
    f->release = (uint8_t)release;
    return 0;
}

/* The packet in the feed's release, as the 6.0 form the feed reads; -EPROTO: another release. */
static int in_release(struct tp_eobi_feed *f, const uint8_t **pkt, size_t *len)
{
    enum tp_eobi_release other;
    if (tp_eobi_release_check(f->release, *pkt, *len, &other) < 0) {
        f->counters.release_mismatch++;
        f->release_seen = (uint8_t)other;
        return -EPROTO;
    }
    if (f->release != TP_EOBI_RELEASE_6_0) {
        int n = tp_eobi_packet_to_v6(f->release, *pkt, *len, f->converted, sizeof(f->converted));
        if (n >= 0) {
            *pkt = f->converted;
            *len = (size_t)n;
        }
    }
    return 0;
}

/* ---- segments and instruments ------------------------------------------------------- */

static uint32_t segment_home(int32_t id)
{
    return (uint32_t)(((uint64_t)((uint32_t)id * 2654435769u) * TP_EOBI_FEED_SEGMENTS) >> 32);
}

/* Index of a segment; a new one is taken when `create` (NO_SEGMENT when there is no room). */
static uint32_t segment_index(struct tp_eobi_feed *f, int32_t id, int create)
{
    uint32_t i = segment_home(id);

    for (; f->segments[i].used; i = (i + 1) & (TP_EOBI_FEED_SEGMENTS - 1))
        if (f->segments[i].market_segment_id == id)
            return i;
    if (!create || f->n_segments >= TP_EOBI_FEED_SEGMENTS / 2)
        return NO_SEGMENT;
    f->n_segments++;
    f->segments[i].used = 1;
    f->segments[i].market_segment_id = id;
    f->segments[i].snapshot_instr = TP_INSTRUMENT_NONE;
    return i;
}

static uint32_t security_home(int64_t id)
{
    return (uint32_t)(((uint64_t)id * UINT64_C(0x9E3779B97F4A7C15)) >> 32) &
           (TP_EOBI_FEED_SECURITIES - 1);
}

/* The slot of a SecurityID, or the free slot where it would go. */
static struct tp_eobi_security *security_slot(const struct tp_eobi_feed *f, int64_t id)
{
    uint32_t i = security_home(id);

    for (; f->securities[i].id1; i = (i + 1) & (TP_EOBI_FEED_SECURITIES - 1))
        if (f->securities[i].security_id == id)
            break;
    return (struct tp_eobi_security *)&f->securities[i];
}

static inline uint32_t security_instrument(const struct tp_eobi_security *s)
{
    return s->id1 == 0 || s->id1 == TP_EOBI_FILTERED ? TP_INSTRUMENT_NONE : s->id1 - 1;
}

static void mark(struct tp_eobi_feed *f, uint32_t instr, int stale, uint32_t expected, uint32_t got)
{
    if (f->sink.stale)
        f->sink.stale(f->sink.ctx, instr, stale, expected, got);
}

static void publish(struct tp_eobi_feed *f, int n)
{
    if (n > 0 && f->sink.changes)
        f->sink.changes(f->sink.ctx, &f->info, f->changes, (uint32_t)n);
}

static void set_status(struct tp_eobi_feed *f, uint32_t instr, uint8_t status);

/* Defines the instrument of a new SecurityID in slot s, bound to segment si. */
static uint32_t define(struct tp_eobi_feed *f, struct tp_eobi_security *s, int64_t security_id,
                       uint32_t si)
{
    struct tp_eobi_segment *seg = &f->segments[si];
    struct tp_instrument def;
    int64_t id;

    if (f->n_securities >= TP_EOBI_FEED_SECURITIES / 2) {
        f->counters.registry_full++;
        return TP_INSTRUMENT_NONE;
    }
    memset(&def, 0, sizeof(def));
    snprintf(def.symbol, sizeof(def.symbol), "%" PRId64, security_id);
    if (seg->market_segment_id >= 0 && seg->market_segment_id <= 9999999)
        snprintf(def.security_group, sizeof(def.security_group), "%" PRId32,
                 seg->market_segment_id);
    s->security_id = security_id;
    s->segment = (uint16_t)si;
    f->n_securities++;
    if (f->filter && !tp_instrument_filter_match(f->filter, def.symbol, def.security_group)) {
        s->id1 = TP_EOBI_FILTERED;
        f->counters.filtered++;
        return TP_INSTRUMENT_NONE;
    }
    def.venue = TP_VENUE_EUREX_EOBI;
    def.kind = TP_KIND_UNKNOWN;
    def.book_type = TP_BOOK_TYPE_MBO;
    def.channel = f->channel;
    def.display_factor = 1000000000;
    id = tp_instruments_define(f->registry, &def);
    if (id < 0 || tp_books_configure(f->books, (uint32_t)id, TP_BOOK_TYPE_MBO, 0, 0) != 0) {
        /* The slot stays taken, as filtered: the SecurityID is refused once, not per message. */
        s->id1 = TP_EOBI_FILTERED;
        f->counters.registry_full++;
        return TP_INSTRUMENT_NONE;
    }
    s->id1 = (uint32_t)id + 1;
    s->next = seg->first_security;
    seg->first_security = (uint32_t)(s - f->securities) + 1;
    seg->instruments++;
    f->counters.definitions++;
    if (f->sink.instrument)
        f->sink.instrument(f->sink.ctx, (uint32_t)id);
    /* A new instrument trades as its product does until it has a state of its own. */
    set_status(f, (uint32_t)id, seg->status);
    /* Defined while its segment recovers (from the snapshot): not trusted until it is over. */
    if (seg->state == TP_EOBI_SEGMENT_RECOVERING)
        mark(f, (uint32_t)id, 1, 0, 0);
    return (uint32_t)id;
}

/* The instrument of a message of segment si (defined if new), or TP_INSTRUMENT_NONE (counted). */
static uint32_t instrument_of(struct tp_eobi_feed *f, uint32_t si, int64_t security_id,
                              struct tp_eobi_security **slot)
{
    struct tp_eobi_security *s = security_slot(f, security_id);
    uint32_t instr = s->id1 ? security_instrument(s) : define(f, s, security_id, si);

    *slot = s;
    if (instr == TP_INSTRUMENT_NONE && s->id1 == TP_EOBI_FILTERED)
        f->counters.filtered_messages++;
    return instr;
}

/* Calls fn(f, slot) for each instrument of segment si. */
#define FOR_EACH_INSTRUMENT(f, si, s)                                                              \
    for (struct tp_eobi_security *s = (f)->segments[si].first_security                             \
                                          ? &(f)->securities[(f)->segments[si].first_security - 1] \
                                          : NULL;                                                  \
         s != NULL; s = s->next ? &(f)->securities[s->next - 1] : NULL)

/* ---- the recovery buffer ---------------------------------------------------------- */

/* Removes the buffered packets of segment si below ApplSeqNum `below`, moving the others'
 * bytes down (the entries are in the order of their bytes). */
static void drop_buffered_below(struct tp_eobi_feed *f, uint32_t si, uint64_t below)
{
    uint32_t kept = 0, used = 0;

    for (uint32_t i = 0; i < f->n_buffered; i++) {
        struct tp_eobi_buffered r = f->buffered[i];
        if (r.segment == si && r.appl_seq_num < below)
            continue;
        memmove(f->buffer + used, f->buffer + r.offset, r.len);
        r.offset = used;
        used += r.len;
        f->buffered[kept++] = r;
    }
    f->n_buffered = kept;
    f->buffer_used = used;
}

/* Removes every buffered packet of segment si. */
static void drop_buffered(struct tp_eobi_feed *f, uint32_t si)
{
    drop_buffered_below(f, si, UINT64_MAX);
    f->segments[si].buffered_first = f->segments[si].buffered_last = 0;
}

/*
 * Segment si's books can no longer be vouched for: it recovers from a snapshot that reflects
 * every packet before resume_seq, and its instruments are stale meanwhile.
 */
static void segment_gap(struct tp_eobi_feed *f, uint32_t si, uint64_t resume_seq, uint32_t expected,
                        uint32_t got)
{
    struct tp_eobi_segment *seg = &f->segments[si];

    if (seg->state == TP_EOBI_SEGMENT_RECOVERING)
        return;
    seg->state = TP_EOBI_SEGMENT_RECOVERING;
    seg->resume_seq = resume_seq;
    seg->buffered_first = seg->buffered_last = 0;
    f->recovering++;
    f->counters.gaps++;
    FOR_EACH_INSTRUMENT(f, si, s)
    {
        mark(f, s->id1 - 1, 1, expected, got);
    }
}

/*
 * A lone packet of a segment already followed whose ApplSeqNum jumps more than TP_EOBI_MAX_JUMP
 * beyond the one expected next (or the highest taken): dropped (implausible), unless it continues a
 * jump seen just before (above it, within TP_EOBI_MAX_JUMP), which confirms both. Every other
 * packet raises the highest.
 */
static bool implausible_jump(struct tp_eobi_feed *f, struct tp_eobi_segment *seg,
                             const uint8_t *pkt, uint64_t seq)
{
    if (seg->state == 0 || tp_eobi_packet_header_appl_seq_reset_indicator(pkt) == 1) {
        seg->highest_seq = seq;
        seg->jump_seq = 0;
        return false;
    }
    uint64_t highest = seg->highest_seq > seg->next_seq ? seg->highest_seq : seg->next_seq;
    if (seq > highest + TP_EOBI_MAX_JUMP &&
        !(seg->jump_seq != 0 && seq > seg->jump_seq && seq - seg->jump_seq <= TP_EOBI_MAX_JUMP)) {
        seg->jump_seq = seq;
        f->counters.implausible++;
        return true;
    }
    if (seq > seg->highest_seq)
        seg->highest_seq = seq;
    seg->jump_seq = 0;
    return false;
}

/* ---- trading status --------------------------------------------------------------- */

static uint8_t instrument_status(uint8_t security_status, uint8_t trading_status)
{
    if (security_status == 9)
        return TP_STATUS_HALTED;
    if (security_status == 2 || security_status == 4)
        return TP_STATUS_CLOSED;
    switch (trading_status) {
    case 2:
    case 201:
        return TP_STATUS_HALTED;
    case 200:
        return TP_STATUS_CLOSED;
    case 203:
        return TP_STATUS_OPEN;
    case 202:
    case 204:
    case 205:
    case 212:
    case 213:
        return TP_STATUS_PRE_OPEN;
    case 206:
    case 207:
    case 208:
    case 209:
    case 210:
    case 211:
        return TP_STATUS_PAUSED;
    default:
        return TP_STATUS_UNKNOWN;
    }
}

static uint8_t product_status(uint8_t trad_ses_status, uint8_t sub_id)
{
    if (trad_ses_status == 1)
        return TP_STATUS_HALTED;
    if (trad_ses_status == 3)
        return TP_STATUS_CLOSED;
    if (trad_ses_status != 2)
        return TP_STATUS_UNKNOWN;
    switch (sub_id) {
    case 1:
        return TP_STATUS_PRE_OPEN;
    case 3:
        return TP_STATUS_OPEN;
    case 4:
        return TP_STATUS_PAUSED;
    case 5:
    case 7:
        return TP_STATUS_CLOSED;
    default:
        return TP_STATUS_UNKNOWN;
    }
}

static void set_status(struct tp_eobi_feed *f, uint32_t instr, uint8_t status)
{
    struct tp_instrument *in;

    if (status == TP_STATUS_UNKNOWN)
        return;
    in = tp_instruments_get(f->registry, instr);
    if (in)
        in->trading_status = status;
    publish(f, tp_books_status(f->books, instr, status, f->changes));
}

static void set_product_status(struct tp_eobi_feed *f, uint32_t si, uint8_t status)
{
    if (status == TP_STATUS_UNKNOWN)
        return;
    f->segments[si].status = status;
    FOR_EACH_INSTRUMENT(f, si, s)
    {
        if (!s->own_state)
            set_status(f, s->id1 - 1, status);
    }
}

static void set_stat(struct tp_eobi_feed *f, uint32_t instr, enum tp_stat_kind kind, int64_t price,
                     int32_t qty)
{
    int n;

    if (price == TP_EOBI_PRICE_NULL)
        return;
    n = tp_books_stat(f->books, instr, kind, tp_eobi_price_to_p9(price),
                      qty == TP_EOBI_QTY_NULL ? 0 : qty, f->changes);
    if (n < 0)
        f->counters.rejected++;
    publish(f, n);
}

/* ---- incremental messages --------------------------------------------------------- */

/* The book's id of an order, or 0 with -EBADMSG for a side or priority no order has. */
static int order_key(uint64_t priority, uint8_t side, uint64_t *id, enum tp_side *s)
{
    *s = tp_eobi_side(side);
    if (*s == TP_SIDE_NONE || priority >> 63)
        return -EBADMSG;
    *id = tp_eobi_order_id(priority, *s);
    return 0;
}

/* An order-level book call's result: records published, refusals counted (a gap). */
static int book_result(struct tp_eobi_feed *f, int n)
{
    if (n < 0) {
        f->counters.rejected++;
        return GAP_NEEDED;
    }
    publish(f, n);
    return 0;
}

/*
 * An execution of LastQty: it must leave the order in the book (partial) or not (full);
 * anything else says the book was not the venue's.
 */
static int execution(struct tp_eobi_feed *f, uint32_t instr, const uint8_t *m, int full)
{
    struct tp_books *b = f->books;
    enum tp_side side;
    uint64_t id;
    int n, live;

    if (order_key(tp_eobi_full_order_execution_trd_reg_ts_time_priority(m),
                  tp_eobi_full_order_execution_side(m), &id, &side) != 0)
        return -EBADMSG;
    n = tp_mbo_execute(b, instr, id, tp_eobi_full_order_execution_last_qty(m),
                       tp_eobi_price_to_p9(tp_eobi_full_order_execution_last_px(m)), 0,
                       tp_eobi_full_order_execution_trd_match_id(m), f->changes);
    if (n < 0)
        return book_result(f, n);
    publish(f, n);
    live = tp_mbo_order(b, instr, id, NULL, NULL, NULL, NULL) == 0;
    if (live == !full)
        return 0;
    f->counters.execution_mismatch++;
    if (live)
        publish(f, tp_mbo_delete(b, instr, id, f->changes));
    return GAP_NEEDED;
}

static int order_modify(struct tp_eobi_feed *f, uint32_t instr, const uint8_t *m)
{
    uint64_t prev = tp_eobi_order_modify_trd_reg_ts_prev_time_priority(m);
    uint64_t prio = tp_eobi_order_modify_trd_reg_ts_time_priority(m);
    int64_t price = tp_eobi_price_to_p9(tp_eobi_order_modify_price(m));
    int32_t qty = tp_eobi_order_modify_display_qty(m);
    uint64_t old_id, new_id;
    enum tp_side side;

    if (order_key(prev, tp_eobi_order_modify_side(m), &old_id, &side) != 0 ||
        order_key(prio, tp_eobi_order_modify_side(m), &new_id, &side) != 0)
        return -EBADMSG;
    if (old_id == new_id)
        return book_result(f, tp_mbo_modify(f->books, instr, old_id, price, qty, prio, f->changes));
    return book_result(
        f, tp_mbo_replace(f->books, instr, old_id, new_id, price, qty, prio, f->changes));
}

/* The SecurityID of an instrument message of a template that has one (checked), else 0. */
static int64_t message_security_id(int template_id, const uint8_t *m)
{
    switch (template_id) {
    case TP_EOBI_ORDER_ADD:
        return tp_eobi_order_add_security_id(m);
    case TP_EOBI_ORDER_MODIFY:
        return tp_eobi_order_modify_security_id(m);
    case TP_EOBI_ORDER_MODIFY_SAME_PRIO:
        return tp_eobi_order_modify_same_prio_security_id(m);
    case TP_EOBI_ORDER_DELETE:
        return tp_eobi_order_delete_security_id(m);
    case TP_EOBI_ORDER_MASS_DELETE:
        return tp_eobi_order_mass_delete_security_id(m);
    case TP_EOBI_FULL_ORDER_EXECUTION:
    case TP_EOBI_PARTIAL_ORDER_EXECUTION:
        return tp_eobi_full_order_execution_security_id(m);
    case TP_EOBI_TRADE_REPORT:
        return tp_eobi_trade_report_security_id(m);
    case TP_EOBI_EXECUTION_SUMMARY:
        return tp_eobi_execution_summary_security_id(m);
    case TP_EOBI_INSTRUMENT_STATE_CHANGE:
        return tp_eobi_instrument_state_change_security_id(m);
    case TP_EOBI_AUCTION_BBO:
        return tp_eobi_auction_bbo_security_id(m);
    case TP_EOBI_AUCTION_CLEARING_PRICE:
        return tp_eobi_auction_clearing_price_security_id(m);
    default:
        return 0;
    }
}

/* Applies one checked instrument message to instrument `instr`: 0, -EBADMSG or GAP_NEEDED. */
static int apply_instrument(struct tp_eobi_feed *f, int t, uint32_t instr,
                            struct tp_eobi_security *s, const uint8_t *m)
{
    struct tp_books *b = f->books;
    enum tp_side side;
    uint64_t id;

    switch (t) {
    case TP_EOBI_ORDER_ADD:
        if (order_key(tp_eobi_order_add_trd_reg_ts_time_priority(m), tp_eobi_order_add_side(m), &id,
                      &side) != 0)
            return -EBADMSG;
        return book_result(
            f, tp_mbo_add(b, instr, id, side, tp_eobi_price_to_p9(tp_eobi_order_add_price(m)),
                          tp_eobi_order_add_display_qty(m),
                          tp_eobi_order_add_trd_reg_ts_time_priority(m), f->changes));
    case TP_EOBI_ORDER_MODIFY:
        return order_modify(f, instr, m);
    case TP_EOBI_ORDER_MODIFY_SAME_PRIO:
        if (order_key(tp_eobi_order_modify_same_prio_trd_reg_ts_time_priority(m),
                      tp_eobi_order_modify_same_prio_side(m), &id, &side) != 0)
            return -EBADMSG;
        return book_result(
            f, tp_mbo_modify(
                   b, instr, id, tp_eobi_price_to_p9(tp_eobi_order_modify_same_prio_price(m)),
                   tp_eobi_order_modify_same_prio_display_qty(m),
                   tp_eobi_order_modify_same_prio_trd_reg_ts_time_priority(m), f->changes));
    case TP_EOBI_ORDER_DELETE:
        if (order_key(tp_eobi_order_delete_trd_reg_ts_time_priority(m),
                      tp_eobi_order_delete_side(m), &id, &side) != 0)
            return -EBADMSG;
        return book_result(f, tp_mbo_delete(b, instr, id, f->changes));
    case TP_EOBI_ORDER_MASS_DELETE:
        return book_result(f, tp_mbo_clear(b, instr, f->changes));
    case TP_EOBI_FULL_ORDER_EXECUTION:
        return execution(f, instr, m, 1);
    case TP_EOBI_PARTIAL_ORDER_EXECUTION:
        return execution(f, instr, m, 0);
    case TP_EOBI_EXECUTION_SUMMARY: {
        int n = tp_books_trade(b, instr, tp_eobi_price_to_p9(tp_eobi_execution_summary_last_px(m)),
                               tp_eobi_execution_summary_last_qty(m),
                               tp_eobi_side(tp_eobi_execution_summary_aggressor_side(m)),
                               tp_eobi_execution_summary_exec_id(m), f->changes);
        f->counters.rejected += n < 0;
        publish(f, n);
        return 0;
    }
    case TP_EOBI_TRADE_REPORT: {
        int n = tp_books_trade(b, instr, tp_eobi_price_to_p9(tp_eobi_trade_report_last_px(m)),
                               tp_eobi_trade_report_last_qty(m), TP_SIDE_NONE,
                               tp_eobi_trade_report_trd_match_id(m), f->changes);
        f->counters.rejected += n < 0;
        publish(f, n);
        return 0;
    }
    case TP_EOBI_INSTRUMENT_STATE_CHANGE:
        s->own_state = 1;
        set_status(f, instr,
                   instrument_status(tp_eobi_instrument_state_change_security_status(m),
                                     tp_eobi_instrument_state_change_security_trading_status(m)));
        return 0;
    case TP_EOBI_AUCTION_BBO:
        set_stat(f, instr, TP_STAT_AUCTION_BID, tp_eobi_auction_bbo_bid_px(m),
                 tp_eobi_auction_bbo_bid_size(m));
        set_stat(f, instr, TP_STAT_AUCTION_OFFER, tp_eobi_auction_bbo_offer_px(m),
                 tp_eobi_auction_bbo_offer_size(m));
        return 0;
    case TP_EOBI_AUCTION_CLEARING_PRICE:
        set_stat(f, instr, TP_STAT_INDICATIVE_OPEN, tp_eobi_auction_clearing_price_last_px(m),
                 tp_eobi_auction_clearing_price_last_qty(m));
        set_stat(f, instr, TP_STAT_IMBALANCE, tp_eobi_auction_clearing_price_last_px(m),
                 tp_eobi_auction_clearing_price_imbalance_qty(m));
        return 0;
    default:
        f->counters.ignored++;
        return 0;
    }
}

/* One message of an incremental packet of segment si: 0, -EBADMSG or GAP_NEEDED. */
static int apply_message(struct tp_eobi_feed *f, uint32_t si, const struct tp_eobi_msg *msg)
{
    int t = tp_eobi_check(msg->data, msg->len);
    struct tp_eobi_security *s;
    int64_t security_id;
    uint32_t instr;
    int rc;

    if (t == -ENOMSG) {
        f->counters.unknown_template++;
        return 0;
    }
    if (t < 0) {
        f->counters.malformed++;
        return -EBADMSG;
    }
    f->counters.messages++;
    if (t == TP_EOBI_PRODUCT_STATE_CHANGE) {
        set_product_status(
            f, si,
            product_status(tp_eobi_product_state_change_trad_ses_status(msg->data),
                           tp_eobi_product_state_change_trading_session_sub_id(msg->data)));
        return 0;
    }
    security_id = message_security_id(t, msg->data);
    if (security_id == 0) {
        /* Heartbeats, quote and cross requests, top of book, snapshot templates here. */
        f->counters.ignored += t != TP_EOBI_PACKET_HEADER;
        f->counters.malformed += t == TP_EOBI_PACKET_HEADER;
        return t == TP_EOBI_PACKET_HEADER ? -EBADMSG : 0;
    }
    instr = instrument_of(f, si, security_id, &s);
    if (instr == TP_INSTRUMENT_NONE)
        return 0;
    rc = apply_instrument(f, t, instr, s, msg->data);
    f->counters.malformed += rc == -EBADMSG; /* a side or priority no order has */
    return rc;
}

/* Fills the info every sink call of a packet carries. */
static void packet_info(struct tp_eobi_feed *f, const uint8_t *pkt, uint64_t rx_tsc)
{
    f->info.rx_tsc = rx_tsc;
    f->info.packet_seq = tp_eobi_packet_header_appl_seq_num(pkt);
    f->info.venue_time = tp_eobi_packet_header_transact_time(pkt);
    f->info.sending_time = 0;
}

static void end_of_event(struct tp_eobi_feed *f)
{
    f->counters.events++;
    if (f->sink.end_of_event)
        f->sink.end_of_event(f->sink.ctx, &f->info);
}

/*
 * Applies a framed incremental packet of HEALTHY segment si (its ApplSeqNum is next_seq). A
 * message the feed cannot apply makes the segment recover from a snapshot that includes this
 * packet. Returns 0 or -EBADMSG.
 */
static int apply_packet(struct tp_eobi_feed *f, uint32_t si, const uint8_t *pkt, size_t len,
                        uint64_t rx_tsc)
{
    struct tp_eobi_segment *seg = &f->segments[si];
    uint64_t seq = tp_eobi_packet_header_appl_seq_num(pkt);
    struct tp_eobi_packet p;
    struct tp_eobi_msg m;
    int rc = 0, r;

    tp_eobi_packet_init(&p, pkt, len);
    packet_info(f, pkt, rx_tsc);
    seg->next_seq = seq + 1;
    while ((r = tp_eobi_packet_next(&p, &m)) > 0) {
        rc = apply_message(f, si, &m);
        if (rc != 0)
            break;
    }
    if (r < 0) {
        f->counters.malformed++;
        rc = -EBADMSG;
    }
    if (rc != 0) {
        segment_gap(f, si, seq + 1, 0, 0);
        end_of_event(f); /* what was applied is published; the books are flagged */
        return rc == GAP_NEEDED ? 0 : -EBADMSG;
    }
    if (tp_eobi_packet_header_completion_indicator(pkt) == 1)
        end_of_event(f);
    return 0;
}

/* ---- waiting for the other line ------------------------------------------------------ */

/* The calls below are kept out of tp_eobi_feed_packet: inlined, they cost every packet. */

/* Segment si waits for the other line: packets up to `through` exist (seen at `now`). */
static void wait_begin(struct tp_eobi_feed *f, uint32_t si, uint64_t through, uint64_t now)
{
    struct tp_eobi_segment *seg = &f->segments[si];

    if (!seg->holding) {
        seg->holding = 1;
        seg->wait_since = now;
        f->holding++;
    }
    if (through > seg->wait_through)
        seg->wait_through = through;
}

static void wait_end(struct tp_eobi_feed *f, uint32_t si)
{
    f->segments[si].holding = 0;
    f->segments[si].wait_through = 0;
    f->holding--;
}

/*
 * Puts a packet of segment si in the buffer in ApplSeqNum order among the segment's packets.
 * Returns 0, 1 when it is there already (the other line's copy) or -ENOSPC (no room).
 */
static int buffer_insert(struct tp_eobi_feed *f, uint32_t si, const uint8_t *pkt, size_t len,
                         uint64_t seq, uint64_t rx_tsc)
{
    uint32_t at = f->n_buffered;

    for (uint32_t i = f->n_buffered; i-- > 0;) {
        const struct tp_eobi_buffered *r = &f->buffered[i];
        if (r->segment != si)
            continue;
        if (r->appl_seq_num == seq)
            return 1;
        if (r->appl_seq_num < seq)
            break;
        at = i;
    }
    if (f->n_buffered == TP_EOBI_FEED_BUFFER_PACKETS ||
        len > TP_EOBI_FEED_BUFFER_BYTES - f->buffer_used)
        return -ENOSPC;
    /* The bytes go where the entry goes: drop_buffered_below keeps both in one order. */
    uint32_t offset = at < f->n_buffered ? f->buffered[at].offset : f->buffer_used;
    memmove(f->buffer + offset + len, f->buffer + offset, f->buffer_used - offset);
    memcpy(f->buffer + offset, pkt, len);
    for (uint32_t i = at; i < f->n_buffered; i++)
        f->buffered[i].offset += (uint32_t)len;
    memmove(&f->buffered[at + 1], &f->buffered[at], (f->n_buffered - at) * sizeof(f->buffered[0]));
    f->buffered[at] = (struct tp_eobi_buffered){
        .appl_seq_num = seq,
        .rx_tsc = rx_tsc,
        .offset = offset,
        .len = (uint16_t)len,
        .segment = (uint16_t)si,
    };
    f->n_buffered++;
    f->buffer_used += (uint32_t)len;
    return 0;
}

/*
 * Keeps a packet of HEALTHY segment si that came after a hole (ApplSeqNum above next_seq) while
 * the other line may still bring what is missing: in the buffer, in ApplSeqNum order among the
 * segment's held packets. Returns 0, or -ENOSPC when the buffer has no room for it.
 */
static __attribute__((noinline)) int hold_packet(struct tp_eobi_feed *f, uint32_t si,
                                                 const uint8_t *pkt, size_t len, uint64_t seq,
                                                 uint64_t rx_tsc)
{
    int rc = buffer_insert(f, si, pkt, len, seq, rx_tsc);

    if (rc < 0)
        return rc;
    if (rc == 1) {
        f->counters.duplicates++; /* the other line's copy */
        return 0;
    }
    f->counters.held++;
    wait_begin(f, si, seq, rx_tsc);
    return 0;
}

/*
 * Holding segment si went RECOVERING: its held packets become its recovery buffer, as far as
 * they run unbroken to the last (a snapshot must reflect every packet before that run).
 */
static __attribute__((noinline)) void hold_to_recovery(struct tp_eobi_feed *f, uint32_t si)
{
    struct tp_eobi_segment *seg = &f->segments[si];
    uint64_t first = 0, last = 0, through = seg->wait_through;

    if (!seg->holding || seg->state != TP_EOBI_SEGMENT_RECOVERING)
        return;
    wait_end(f, si);
    for (uint32_t i = 0; i < f->n_buffered; i++) {
        const struct tp_eobi_buffered *r = &f->buffered[i];
        if (r->segment != si || r->appl_seq_num < seg->resume_seq)
            continue;
        if (last == 0 || r->appl_seq_num != last + 1)
            first = r->appl_seq_num;
        last = r->appl_seq_num;
    }
    drop_buffered_below(f, si, first != 0 ? first : UINT64_MAX);
    if (first != 0) {
        seg->resume_seq = seg->buffered_first = first;
        seg->buffered_last = last;
    } else if (seg->resume_seq <= through) {
        seg->resume_seq = through + 1; /* packets up to it exist, none kept */
    }
}

/*
 * The other line did not fill segment si's hole in time: a gap. Each held packet's wait ends
 * here (released: the caller's gap-wait record); they are kept for after the snapshot.
 */
static __attribute__((noinline)) void hold_expire(struct tp_eobi_feed *f, uint32_t si, uint64_t now)
{
    struct tp_eobi_segment *seg = &f->segments[si];

    if (seg->state == TP_EOBI_SEGMENT_HEALTHY) {
        for (uint32_t i = 0; f->released && i < f->n_buffered; i++)
            if (f->buffered[i].segment == si)
                f->released(f->released_ctx, f->buffered[i].rx_tsc, now);
        segment_gap(f, si, seg->next_seq + 1, (uint32_t)seg->next_seq, (uint32_t)seg->wait_through);
    }
    hold_to_recovery(f, si);
}

/*
 * The packet at segment si's hole was applied (at `now`): the held packets now in sequence
 * follow it, and the wait goes on from the oldest packet still held, if any.
 */
static __attribute__((noinline)) void release_held(struct tp_eobi_feed *f, uint32_t si,
                                                   uint64_t now)
{
    struct tp_eobi_segment *seg = &f->segments[si];
    uint64_t oldest = UINT64_MAX;
    int left = 0;

    for (uint32_t i = 0; i < f->n_buffered && seg->state == TP_EOBI_SEGMENT_HEALTHY; i++) {
        const struct tp_eobi_buffered *r = &f->buffered[i];
        if (r->segment != si)
            continue;
        if (r->appl_seq_num != seg->next_seq)
            break;
        if (f->released)
            f->released(f->released_ctx, r->rx_tsc, now);
        apply_packet(f, si, f->buffer + r->offset, r->len, r->rx_tsc);
    }
    if (seg->state != TP_EOBI_SEGMENT_HEALTHY) {
        hold_to_recovery(f, si); /* a held packet the books refused */
        return;
    }
    drop_buffered_below(f, si, seg->next_seq);
    for (uint32_t i = 0; i < f->n_buffered; i++)
        if (f->buffered[i].segment == si) {
            left = 1;
            if (f->buffered[i].rx_tsc < oldest)
                oldest = f->buffered[i].rx_tsc;
        }
    if (left)
        seg->wait_since = oldest;
    else if (seg->wait_through < seg->next_seq)
        wait_end(f, si);
}

void tp_eobi_feed_arbitrate(struct tp_eobi_feed *f, uint64_t gap_wait_tsc,
                            void (*released)(void *ctx, uint64_t rx_tsc, uint64_t released_tsc),
                            void *ctx)
{
    f->gap_wait_tsc = gap_wait_tsc;
    f->released = released;
    f->released_ctx = ctx;
}

/* Whether segment si's wait, begun at wait_since, is over at `now`. */
static int wait_over(const struct tp_eobi_feed *f, const struct tp_eobi_segment *seg, uint64_t now)
{
    return now >= seg->wait_since && now - seg->wait_since >= f->gap_wait_tsc;
}

static int snapshot_wait_over(const struct tp_eobi_feed *f, uint64_t now);
static void snapshot_give_up(struct tp_eobi_feed *f);

void tp_eobi_feed_poll(struct tp_eobi_feed *f, uint64_t now)
{
    for (uint32_t si = 0; si < TP_EOBI_FEED_SEGMENTS && f->holding > 0; si++)
        if (f->segments[si].holding && wait_over(f, &f->segments[si], now))
            hold_expire(f, si, now);
    while (snapshot_wait_over(f, now))
        snapshot_give_up(f);
}

/* A packet of heartbeats: a LastMsgSeqNumProcessed past the segment's last packet is a gap. */
static int heartbeats(struct tp_eobi_feed *f, uint32_t si, struct tp_eobi_packet *p,
                      uint64_t rx_tsc)
{
    struct tp_eobi_segment *seg = &f->segments[si];
    struct tp_eobi_msg m;
    int r;

    while ((r = tp_eobi_packet_next(p, &m)) > 0) {
        int t = tp_eobi_check(m.data, m.len);
        if (t != TP_EOBI_HEARTBEAT) {
            f->counters.malformed++;
            return -EBADMSG;
        }
        f->counters.messages++;
        if (seg->state != TP_EOBI_SEGMENT_HEALTHY)
            continue;
        uint32_t last = (uint32_t)(seg->next_seq - 1);
        int32_t ahead = (int32_t)(tp_eobi_heartbeat_last_msg_seq_num_processed(m.data) - last);
        if (ahead > 0 && f->gap_wait_tsc != 0)
            wait_begin(f, si, seg->next_seq - 1 + (uint64_t)ahead, rx_tsc);
        else if (ahead > 0)
            segment_gap(f, si, seg->next_seq + (uint64_t)ahead, (uint32_t)seg->next_seq,
                        last + (uint32_t)ahead);
    }
    if (r < 0) {
        f->counters.malformed++;
        return -EBADMSG;
    }
    return 0;
}

/* Whether RECOVERING segment si's buffer runs unbroken from buffered_first to buffered_last. */
static int buffer_unbroken(const struct tp_eobi_feed *f, uint32_t si)
{
    const struct tp_eobi_segment *seg = &f->segments[si];
    uint64_t n = 0;

    for (uint32_t i = 0; i < f->n_buffered; i++)
        n += f->buffered[i].segment == si;
    return n == seg->buffered_last - seg->buffered_first + 1;
}

/*
 * A packet of RECOVERING segment si below the last it buffered, while a hole in the buffer waits
 * for the other line: it goes in its place; the hole is filled when the run is unbroken again.
 */
static __attribute__((noinline)) void buffer_fill(struct tp_eobi_feed *f, uint32_t si,
                                                  const uint8_t *pkt, size_t len, uint64_t seq,
                                                  uint64_t rx_tsc)
{
    int rc = buffer_insert(f, si, pkt, len, seq, rx_tsc);

    if (rc == 1) {
        f->counters.duplicates++;
        return;
    }
    if (rc < 0) {
        hold_to_recovery(f, si); /* no room: the hole cannot wait */
        return;
    }
    f->counters.buffered++;
    if (buffer_unbroken(f, si)) {
        wait_end(f, si);
        f->counters.buffer_filled++;
    }
}

/*
 * Buffers an incremental packet of RECOVERING segment si. A hole in the buffered run waits for
 * the other line (when the caller asked for it) as a HEALTHY segment's does; when the wait is
 * over, only the run after the last hole is kept: a snapshot must reach it.
 */
static void buffer_packet(struct tp_eobi_feed *f, uint32_t si, const uint8_t *pkt, size_t len,
                          uint64_t seq, uint64_t rx_tsc)
{
    struct tp_eobi_segment *seg = &f->segments[si];

    if (seg->holding && wait_over(f, seg, rx_tsc))
        hold_to_recovery(f, si);
    if (seg->buffered_last != 0) {
        if (seq <= seg->buffered_last) {
            if (seg->holding && seq > seg->buffered_first)
                buffer_fill(f, si, pkt, len, seq, rx_tsc);
            else
                f->counters.duplicates++;
            return;
        }
        if (seq != seg->buffered_last + 1 && f->gap_wait_tsc != 0) {
            wait_begin(f, si, seq, rx_tsc); /* the other line may still bring the hole */
        } else if (seq != seg->buffered_last + 1) {
            /* A hole in the buffered run: only a snapshot after it can follow it. */
            drop_buffered(f, si);
            seg->resume_seq = seq;
        }
    } else if (seg->resume_seq != 0 && seq < seg->resume_seq) {
        f->counters.duplicates++; /* the snapshot must reflect it anyway */
        return;
    }
    if (seg->buffered_last == 0)
        seg->resume_seq = seq;
    if (f->n_buffered == TP_EOBI_FEED_BUFFER_PACKETS ||
        len > TP_EOBI_FEED_BUFFER_BYTES - f->buffer_used) {
        if (seg->holding)
            wait_end(f, si);
        drop_buffered(f, si);
        if (f->n_buffered == TP_EOBI_FEED_BUFFER_PACKETS ||
            len > TP_EOBI_FEED_BUFFER_BYTES - f->buffer_used) {
            f->counters.buffer_overflow++;
            seg->resume_seq = seq + 1;
            return;
        }
        /* The run restarts here: the snapshot must reach this packet. */
        f->counters.buffer_overflow++;
        seg->resume_seq = seq;
    }
    memcpy(f->buffer + f->buffer_used, pkt, len);
    f->buffered[f->n_buffered++] = (struct tp_eobi_buffered){
        .appl_seq_num = seq,
        .rx_tsc = rx_tsc,
        .offset = f->buffer_used,
        .len = (uint16_t)len,
        .segment = (uint16_t)si,
    };
    f->buffer_used += (uint32_t)len;
    if (seg->buffered_last == 0)
        seg->buffered_first = seq;
    seg->buffered_last = seq;
    f->counters.buffered++;
}

/*
 * An incremental packet (ApplSeqNum seq) of HEALTHY segment si while it holds a hole whose wait
 * is not over: the other line's copy of the hole fills it, a later packet is held too, an
 * ApplSeqNum reset or a full buffer is a gap.
 */
static __attribute__((noinline)) int holding_packet(struct tp_eobi_feed *f, uint32_t si,
                                                    const uint8_t *pkt, size_t len, uint64_t seq,
                                                    uint64_t rx_tsc)
{
    struct tp_eobi_segment *seg = &f->segments[si];
    int rc;

    if (tp_eobi_packet_header_appl_seq_reset_indicator(pkt) == 1) {
        drop_buffered(f, si); /* numbered in the sequence that ended */
        wait_end(f, si);
        segment_gap(f, si, 0, (uint32_t)seg->next_seq, (uint32_t)seq);
    } else if (seq < seg->next_seq) {
        f->counters.duplicates++;
        return 0;
    } else if (seq > seg->next_seq) {
        if (hold_packet(f, si, pkt, len, seq, rx_tsc) == 0)
            return 0;
        segment_gap(f, si, 0, (uint32_t)seg->next_seq, (uint32_t)seq);
        hold_to_recovery(f, si);
    } else {
        f->counters.gaps_filled++; /* the other line's copy of the hole */
        rc = apply_packet(f, si, pkt, len, rx_tsc);
        if (seg->state == TP_EOBI_SEGMENT_HEALTHY)
            release_held(f, si, rx_tsc);
        else
            hold_to_recovery(f, si);
        return rc;
    }
    buffer_packet(f, si, pkt, len, seq, rx_tsc); /* a gap: kept for after the snapshot */
    return 0;
}

int tp_eobi_feed_packet(struct tp_eobi_feed *f, const uint8_t *pkt, size_t len, uint64_t rx_tsc)
{
    struct tp_eobi_packet p;
    struct tp_eobi_segment *seg;
    uint64_t seq;
    uint32_t si;

    f->counters.packets++;
    if (in_release(f, &pkt, &len) != 0)
        return -EPROTO;
    if (tp_eobi_packet_init(&p, pkt, len) != 0 || len > UINT16_MAX) {
        f->counters.malformed++;
        return -EBADMSG;
    }
    si = segment_index(f, tp_eobi_packet_header_market_segment_id(pkt), 1);
    if (si == NO_SEGMENT) {
        f->counters.registry_full++;
        return -ENOSPC;
    }
    seg = &f->segments[si];
    if (p.pos + TP_EOBI_MESSAGE_HEADER_LEN <= len &&
        tp_eobi_template_id(pkt + p.pos) == TP_EOBI_HEARTBEAT)
        return heartbeats(f, si, &p, rx_tsc);
    seq = tp_eobi_packet_header_appl_seq_num(pkt);
    if (__builtin_expect(seq == 0, 0)) {
        /* ApplSeqNum counts from 1; 0 is the buffer's "nothing buffered", and no packet's. */
        f->counters.malformed++;
        return -EBADMSG;
    }
    if (implausible_jump(f, seg, pkt, seq))
        return 0;
    if (__builtin_expect(seg->holding, 0) && seg->state == TP_EOBI_SEGMENT_HEALTHY) {
        if (!wait_over(f, seg, rx_tsc))
            return holding_packet(f, si, pkt, len, seq, rx_tsc);
        hold_expire(f, si, rx_tsc); /* then as any RECOVERING segment's */
    }
    if (seg->state == 0) {
        if (seq == 1) {
            seg->state = TP_EOBI_SEGMENT_HEALTHY;
            seg->next_seq = 1;
        } else {
            segment_gap(f, si, 0, 0, (uint32_t)seq);
        }
    } else if (seg->state == TP_EOBI_SEGMENT_HEALTHY) {
        if (tp_eobi_packet_header_appl_seq_reset_indicator(pkt) == 1) {
            segment_gap(f, si, 0, (uint32_t)seg->next_seq, (uint32_t)seq);
        } else if (seq < seg->next_seq) {
            f->counters.duplicates++;
            return 0;
        } else if (seq > seg->next_seq) {
            /* The other line may still bring the hole: wait for it, as long as allowed. */
            if (f->gap_wait_tsc != 0 && hold_packet(f, si, pkt, len, seq, rx_tsc) == 0)
                return 0;
            segment_gap(f, si, 0, (uint32_t)seg->next_seq, (uint32_t)seq);
        }
    } else if (tp_eobi_packet_header_appl_seq_reset_indicator(pkt) == 1) {
        if (seg->holding)
            wait_end(f, si);
        drop_buffered(f, si);
        seg->resume_seq = 0;
    }
    if (seg->state == TP_EOBI_SEGMENT_RECOVERING) {
        buffer_packet(f, si, pkt, len, seq, rx_tsc);
        return 0;
    }
    return apply_packet(f, si, pkt, len, rx_tsc);
}

/* ---- snapshots ---------------------------------------------------------------------- */

/* InstrumentSummary MDEntryType of the last trade (price, size); TradeVolume is 66. */
#define MD_ENTRY_TRADE 2

/* MDEntryType -> statistic, or TP_STAT_COUNT for the entries the books keep no statistic of. */
static enum tp_stat_kind entry_stat(uint8_t type)
{
    switch (type) {
    case 4:
        return TP_STAT_OPEN;
    case 5:
        return TP_STAT_CLOSE;
    case 7:
        return TP_STAT_HIGH;
    case 8:
        return TP_STAT_LOW;
    case 66:
        return TP_STAT_SESSION_VOLUME;
    default:
        return TP_STAT_COUNT;
    }
}

/* Segment si recovered: its instruments are fresh again. */
static void snapshot_recovered(struct tp_eobi_feed *f, uint32_t si)
{
    FOR_EACH_INSTRUMENT(f, si, s)
    {
        mark(f, s->id1 - 1, 0, 0, 0);
    }
    end_of_event(f);
}

/*
 * The segment whose snapshot was being applied is at its end: recover it if it was whole and
 * `completed` (its last packet, CompletionIndicator complete, was seen: a lost tail would leave
 * no other trace).
 */
static void snapshot_finish(struct tp_eobi_feed *f, int completed)
{
    uint32_t si = f->snapshot_segment;
    struct tp_eobi_segment *seg;
    uint64_t last_buffered;

    if (si == NO_SEGMENT)
        return;
    f->snapshot_segment = NO_SEGMENT;
    seg = &f->segments[si];
    seg->snapshot_active = 0;
    if (!completed || !seg->snapshot_whole || seg->snapshot_orders != 0) {
        f->counters.snapshots_broken++;
        seg->snapshot_skipping = 1;
        end_of_event(f);
        return;
    }
    if (seg->resume_seq != 0 && seg->snapshot_seq + 1 < seg->resume_seq) {
        /* Packets after it were lost while it came: it no longer reaches the buffered run. */
        f->counters.snapshots_old++;
        seg->snapshot_skipping = 1;
        end_of_event(f);
        return;
    }
    /* The instruments the snapshot did not name have no orders and no state left. */
    FOR_EACH_INSTRUMENT(f, si, s)
    {
        if (!s->in_snapshot)
            publish(f, tp_books_clear(f->books, s->id1 - 1, 0, f->changes));
    }
    f->counters.snapshots++;
    seg->state = TP_EOBI_SEGMENT_HEALTHY;
    seg->next_seq = seg->snapshot_seq + 1;
    f->recovering--;
    if (seg->holding) {
        /* The buffer's hole waits on: the packets before it apply, those after it stay held. */
        drop_buffered_below(f, si, seg->next_seq);
        release_held(f, si, f->info.rx_tsc);
        if (seg->state == TP_EOBI_SEGMENT_HEALTHY)
            snapshot_recovered(f, si);
        return;
    }
    last_buffered = seg->buffered_last;
    for (uint32_t i = 0; i < f->n_buffered && seg->state == TP_EOBI_SEGMENT_HEALTHY; i++) {
        const struct tp_eobi_buffered *r = &f->buffered[i];
        if (r->segment == si && r->appl_seq_num > seg->snapshot_seq)
            apply_packet(f, si, f->buffer + r->offset, r->len, r->rx_tsc);
    }
    drop_buffered(f, si);
    if (seg->state != TP_EOBI_SEGMENT_HEALTHY) {
        /* A buffered packet did not apply: the next snapshot must reach past all of them. */
        if (seg->resume_seq <= last_buffered)
            seg->resume_seq = last_buffered + 1;
        return;
    }
    snapshot_recovered(f, si);
}

/* A ProductSummary of segment si: its snapshot starts, if the segment waits for one. */
static void snapshot_begin(struct tp_eobi_feed *f, uint32_t si, const struct tp_eobi_msg *m)
{
    struct tp_eobi_segment *seg = &f->segments[si];
    uint64_t last = tp_eobi_product_summary_last_msg_seq_num_processed(m->data);

    if (seg->state == 0)
        segment_gap(f, si, 0, 0, 0); /* joined on the snapshot: no incremental seen yet */
    seg->snapshot_skipping = seg->resume_seq != 0 && last + 1 < seg->resume_seq;
    if (seg->snapshot_skipping) {
        f->counters.snapshots_old++;
        return;
    }
    seg->snapshot_active = 1;
    seg->snapshot_whole = 1;
    seg->snapshot_seq = last;
    seg->snapshot_time = f->info.venue_time; /* packet_info: this packet's TransactTime */
    seg->snapshot_msg_seq = m->msg_seq_num + 1;
    seg->snapshot_instr = TP_INSTRUMENT_NONE;
    seg->snapshot_orders = 0;
    f->snapshot_segment = (uint16_t)si;
    FOR_EACH_INSTRUMENT(f, si, s)
    {
        s->in_snapshot = 0;
    }
    set_product_status(f, si,
                       product_status(tp_eobi_product_summary_trad_ses_status(m->data),
                                      tp_eobi_product_summary_trading_session_sub_id(m->data)));
}

static void instrument_summary(struct tp_eobi_feed *f, uint32_t si, const uint8_t *m)
{
    struct tp_eobi_segment *seg = &f->segments[si];
    struct tp_eobi_security *s;
    uint32_t instr;
    uint8_t status;

    if (seg->snapshot_orders != 0)
        seg->snapshot_whole = 0; /* the previous instrument's orders were not all there */
    seg->snapshot_orders = tp_eobi_instrument_summary_tot_no_orders(m);
    instr = instrument_of(f, si, tp_eobi_instrument_summary_security_id(m), &s);
    seg->snapshot_instr = instr;
    if (instr == TP_INSTRUMENT_NONE)
        return;
    s->in_snapshot = 1;
    /* Volume, last trade and statistics stay: the entries below overwrite the ones the venue
     * sends, the volume and last trade (TradeVolume, Trade) with the trades of lost packets. */
    publish(f, tp_books_clear(f->books, instr, 1, f->changes));
    status = instrument_status(tp_eobi_instrument_summary_security_status(m),
                               tp_eobi_instrument_summary_security_trading_status(m));
    s->own_state = status != TP_STATUS_UNKNOWN;
    set_status(f, instr, status != TP_STATUS_UNKNOWN ? status : seg->status);
    for (unsigned i = 0; i < tp_eobi_instrument_summary_no_md_entries(m); i++) {
        const uint8_t *e = tp_eobi_md_entry(m, i);
        uint8_t type = tp_eobi_md_entry_md_entry_type(e);
        enum tp_stat_kind kind = entry_stat(type);
        int32_t size = tp_eobi_md_entry_md_entry_size(e);
        int64_t px = tp_eobi_md_entry_md_entry_px(e);
        if (type == MD_ENTRY_TRADE && px != TP_EOBI_PRICE_NULL && size != TP_EOBI_QTY_NULL)
            tp_books_adopt_totals(f->books, instr, -1, tp_eobi_price_to_p9(px), size);
        if (kind == TP_STAT_SESSION_VOLUME && size != TP_EOBI_QTY_NULL && size >= 0) {
            tp_books_adopt_totals(f->books, instr, size, 0, 0);
            f->counters.volume_adopted++;
        }
        if (kind == TP_STAT_SESSION_VOLUME)
            set_stat(f, instr, kind, 0, size);
        else if (kind != TP_STAT_COUNT)
            set_stat(f, instr, kind, tp_eobi_md_entry_md_entry_px(e),
                     tp_eobi_md_entry_md_entry_size(e));
    }
}

static void snapshot_order(struct tp_eobi_feed *f, uint32_t si, const uint8_t *m)
{
    struct tp_eobi_segment *seg = &f->segments[si];
    uint64_t prio = tp_eobi_snapshot_order_trd_reg_ts_time_priority(m);
    enum tp_side side;
    uint64_t id;
    int n;

    if (seg->snapshot_orders == 0) {
        seg->snapshot_whole = 0;
        return;
    }
    seg->snapshot_orders--;
    if (seg->snapshot_instr == TP_INSTRUMENT_NONE)
        return;
    if (order_key(prio, tp_eobi_snapshot_order_side(m), &id, &side) != 0) {
        f->counters.malformed++;
        seg->snapshot_whole = 0;
        return;
    }
    n = tp_mbo_add(f->books, seg->snapshot_instr, id, side,
                   tp_eobi_price_to_p9(tp_eobi_snapshot_order_price(m)),
                   tp_eobi_snapshot_order_display_qty(m), prio, f->changes);
    if (n < 0) {
        f->counters.rejected++;
        seg->snapshot_whole = 0;
        return;
    }
    publish(f, n);
}

/* The first message of a snapshot packet (framed by p, not consumed), or 0 when none frames. */
static int first_message(const struct tp_eobi_packet *p, struct tp_eobi_msg *m)
{
    struct tp_eobi_packet q = *p;

    return tp_eobi_packet_next(&q, m) > 0 ? tp_eobi_check(m->data, m->len) : 0;
}

/* Whether a snapshot packet starts a snapshot that reflects ApplSeqNum `seq`. */
static int snapshot_reflects(const struct tp_eobi_packet *p, uint64_t seq)
{
    struct tp_eobi_msg m;

    return first_message(p, &m) == TP_EOBI_PRODUCT_SUMMARY &&
           tp_eobi_product_summary_last_msg_seq_num_processed(m.data) >= seq;
}

/*
 * Whether a snapshot packet of segment si belongs to the pass being applied: every packet of a
 * pass carries its TransactTime (MsgSeqNums restart at each pass, so a later pass's packet may
 * have the very MsgSeqNum the pass expects next: only its TransactTime tells it apart).
 */
static int snapshot_same_pass(const struct tp_eobi_feed *f, uint32_t si,
                              const struct tp_eobi_packet *p)
{
    return f->segments[si].snapshot_active && f->snapshot_segment == si &&
           tp_eobi_packet_header_transact_time(p->data) == f->segments[si].snapshot_time;
}

/*
 * Whether a snapshot packet of segment si is the other line's copy of one applied: of the pass
 * being applied, its messages come before the next one it expects (a ProductSummary: of the
 * same LastMsgSeqNumProcessed too).
 */
static int snapshot_duplicate(const struct tp_eobi_feed *f, uint32_t si,
                              const struct tp_eobi_packet *p)
{
    const struct tp_eobi_segment *seg = &f->segments[si];
    struct tp_eobi_msg m;
    int t = first_message(p, &m);

    if (t <= 0 || !snapshot_same_pass(f, si, p) || m.msg_seq_num >= seg->snapshot_msg_seq)
        return 0;
    return t != TP_EOBI_PRODUCT_SUMMARY ||
           tp_eobi_product_summary_last_msg_seq_num_processed(m.data) == seg->snapshot_seq;
}

/* A snapshot packet of segment si (framed by p) for the snapshot being applied, as it comes. */
static int snapshot_apply(struct tp_eobi_feed *f, uint32_t si, struct tp_eobi_packet *p,
                          const uint8_t *pkt, uint64_t rx_tsc)
{
    struct tp_eobi_segment *seg = &f->segments[si];
    struct tp_eobi_msg m;
    int r;

    /* Held packets applied before this one may have recovered the segment (snapshot_arbitrate):
     * a second pass would recover it twice and miscount the segments that still recover. */
    if (seg->state == TP_EOBI_SEGMENT_HEALTHY) {
        f->counters.snapshots_ignored++;
        return 0;
    }
    if (snapshot_duplicate(f, si, p)) {
        f->counters.snapshot_duplicates++;
        return 0;
    }
    /* Another segment's pass, or a later pass of this one: the pass being applied lost its
     * tail. */
    if (f->snapshot_segment != NO_SEGMENT && !snapshot_same_pass(f, si, p))
        snapshot_finish(f, 0);
    packet_info(f, pkt, rx_tsc);
    while ((r = tp_eobi_packet_next(p, &m)) > 0) {
        int t = tp_eobi_check(m.data, m.len);
        if (t == -EBADMSG) {
            f->counters.malformed++;
            if (seg->snapshot_active)
                seg->snapshot_whole = 0;
            continue;
        }
        if (t == TP_EOBI_PRODUCT_SUMMARY) {
            snapshot_finish(f, 0);
            f->counters.messages++;
            snapshot_begin(f, si, &m);
            continue;
        }
        if (!seg->snapshot_active)
            continue;
        f->counters.messages += t > 0;
        if (m.msg_seq_num != seg->snapshot_msg_seq)
            seg->snapshot_whole = 0;
        seg->snapshot_msg_seq = m.msg_seq_num + 1;
        if (t == -ENOMSG)
            f->counters.unknown_template++;
        else if (t == TP_EOBI_INSTRUMENT_SUMMARY)
            instrument_summary(f, si, m.data);
        else if (t == TP_EOBI_SNAPSHOT_ORDER)
            snapshot_order(f, si, m.data);
        else
            f->counters.ignored++;
    }
    if (r < 0) {
        f->counters.malformed++;
        if (seg->snapshot_active)
            seg->snapshot_whole = 0;
    }
    if (seg->snapshot_active && tp_eobi_packet_header_completion_indicator(pkt) == 1)
        snapshot_finish(f, 1);
    return r < 0 ? -EBADMSG : 0;
}

/* ---- holding the snapshot stream for the other line --------------------------------- */

/*
 * Both snapshot lines carry the same packets in the same order, one segment's pass after the
 * other. A packet that does not continue the stream shows a hole: it and the packets after it
 * wait (in arrival order) for the other line's copy of what is missing, as long as the
 * incremental feed waits, before that pass is given up.
 */

/* The first message of a packet (framed only: template and MsgSeqNum), or 0 when it has none. */
static int first_framed(const struct tp_eobi_packet *p, struct tp_eobi_msg *m)
{
    struct tp_eobi_packet q = *p;

    return tp_eobi_packet_next(&q, m) > 0;
}

/*
 * Whether a snapshot packet of segment si shows a hole before it: a snapshot is being applied and
 * the packet is neither its next nor a copy of one applied (a later message, or the next pass: its
 * tail is missing), or none is and the packet continues a pass of a recovering segment whose
 * ProductSummary was not seen.
 */
static int snapshot_hole_before(const struct tp_eobi_feed *f, uint32_t si,
                                const struct tp_eobi_packet *p)
{
    const struct tp_eobi_segment *seg = &f->segments[si];
    struct tp_eobi_msg m;

    if (!first_framed(p, &m) || snapshot_duplicate(f, si, p))
        return 0;
    if (f->snapshot_segment != NO_SEGMENT)
        return !snapshot_same_pass(f, si, p) || m.template_id == TP_EOBI_PRODUCT_SUMMARY ||
               m.msg_seq_num > f->segments[si].snapshot_msg_seq;
    return m.template_id != TP_EOBI_PRODUCT_SUMMARY && seg->state == TP_EOBI_SEGMENT_RECOVERING &&
           !seg->snapshot_skipping;
}

/* Whether one of the first n held packets begins a pass of segment si. */
static int held_pass_begins(const struct tp_eobi_feed *f, uint32_t si, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        const struct tp_eobi_held_snapshot *h = &f->held_snapshots[i];
        struct tp_eobi_packet p;
        struct tp_eobi_msg m;
        tp_eobi_packet_init(&p, f->snapshot_hold + h->offset, h->len);
        if (h->segment == si && first_framed(&p, &m) && m.template_id == TP_EOBI_PRODUCT_SUMMARY)
            return 1;
    }
    return 0;
}

/* Whether a snapshot packet of segment si starts the pass the first held packet is in. */
static int snapshot_starts_held_pass(const struct tp_eobi_feed *f, uint32_t si,
                                     const struct tp_eobi_packet *p, const struct tp_eobi_msg *m)
{
    const struct tp_eobi_held_snapshot *h = &f->held_snapshots[0];

    return h->segment == si && m->template_id == TP_EOBI_PRODUCT_SUMMARY &&
           tp_eobi_packet_header_transact_time(f->snapshot_hold + h->offset) ==
               tp_eobi_packet_header_transact_time(p->data);
}

/*
 * Whether a snapshot packet of segment si, behind the first n held packets, is what the hold
 * waits for (a packet after the next pass of its segment began belongs to that pass). When the
 * hold waits for the tail of the pass being applied, the start of the pass the hold is in,
 * from the other line, ends the wait: that line lost the tail too.
 */
static int snapshot_fills_hole(const struct tp_eobi_feed *f, uint32_t si,
                               const struct tp_eobi_packet *p, uint32_t n)
{
    struct tp_eobi_msg m;

    if (!first_framed(p, &m))
        return 0;
    if (f->snapshot_segment != NO_SEGMENT && snapshot_same_pass(f, si, p))
        return m.template_id != TP_EOBI_PRODUCT_SUMMARY &&
               m.msg_seq_num == f->segments[si].snapshot_msg_seq && !held_pass_begins(f, si, n);
    return snapshot_starts_held_pass(f, si, p, &m) && !held_pass_begins(f, si, n);
}

/* Whether a packet is held already (the other line's copy of it). */
static int snapshot_held_copy(const struct tp_eobi_feed *f, const uint8_t *pkt, size_t len)
{
    for (uint32_t i = 0; i < f->n_snapshot_held; i++) {
        const struct tp_eobi_held_snapshot *h = &f->held_snapshots[i];
        if (h->len == len && memcmp(f->snapshot_hold + h->offset, pkt, len) == 0)
            return 1;
    }
    return 0;
}

/* Holds a snapshot packet of segment si behind the others: 0, or -ENOSPC (no room). */
static int snapshot_hold(struct tp_eobi_feed *f, uint32_t si, const uint8_t *pkt, size_t len,
                         uint64_t rx_tsc)
{
    if (f->n_snapshot_held == TP_EOBI_SNAPSHOT_HOLD_PACKETS || len > UINT16_MAX ||
        len > TP_EOBI_SNAPSHOT_HOLD_BYTES - f->snapshot_hold_used)
        return -ENOSPC;
    if (f->n_snapshot_held == 0)
        f->snapshot_wait_since = rx_tsc;
    memcpy(f->snapshot_hold + f->snapshot_hold_used, pkt, len);
    f->held_snapshots[f->n_snapshot_held++] = (struct tp_eobi_held_snapshot){
        .rx_tsc = rx_tsc,
        .offset = f->snapshot_hold_used,
        .len = (uint16_t)len,
        .segment = (uint16_t)si,
    };
    f->snapshot_hold_used += (uint32_t)len;
    f->counters.snapshot_held++;
    return 0;
}

/* Removes held packet i, keeping the others' bytes in their order. */
static void snapshot_unhold(struct tp_eobi_feed *f, uint32_t i)
{
    struct tp_eobi_held_snapshot gone = f->held_snapshots[i];

    memmove(f->snapshot_hold + gone.offset, f->snapshot_hold + gone.offset + gone.len,
            f->snapshot_hold_used - gone.offset - gone.len);
    f->snapshot_hold_used -= gone.len;
    f->n_snapshot_held--;
    for (uint32_t k = i; k < f->n_snapshot_held; k++) {
        f->held_snapshots[k] = f->held_snapshots[k + 1];
        f->held_snapshots[k].offset -= gone.len;
    }
}

/* Applies held packet i and removes it. */
static void snapshot_apply_held(struct tp_eobi_feed *f, uint32_t i)
{
    const struct tp_eobi_held_snapshot *h = &f->held_snapshots[i];
    const uint8_t *pkt = f->snapshot_hold + h->offset;
    struct tp_eobi_packet p;

    tp_eobi_packet_init(&p, pkt, h->len);
    snapshot_apply(f, h->segment, &p, pkt, h->rx_tsc);
    snapshot_unhold(f, i);
}

/*
 * Applies the held packets in order while the stream runs on, taking a later one that fills a
 * hole out of turn; at a hole none fills, the rest wait from when its first packet came.
 */
static void snapshot_release(struct tp_eobi_feed *f)
{
    while (f->n_snapshot_held > 0) {
        const struct tp_eobi_held_snapshot *h = &f->held_snapshots[0];
        struct tp_eobi_packet p;
        uint32_t fill = 0;

        tp_eobi_packet_init(&p, f->snapshot_hold + h->offset, h->len);
        if (!snapshot_hole_before(f, h->segment, &p)) {
            snapshot_apply_held(f, 0);
            continue;
        }
        for (uint32_t i = 1; i < f->n_snapshot_held && fill == 0; i++) {
            h = &f->held_snapshots[i];
            tp_eobi_packet_init(&p, f->snapshot_hold + h->offset, h->len);
            if (snapshot_fills_hole(f, h->segment, &p, i))
                fill = i;
        }
        if (fill == 0) {
            f->snapshot_wait_since = f->held_snapshots[0].rx_tsc;
            return;
        }
        f->counters.snapshot_filled++;
        snapshot_apply_held(f, fill);
    }
}

/* The other line did not fill the hole in time: the pass it is in is given up. */
static void snapshot_give_up(struct tp_eobi_feed *f)
{
    f->counters.snapshot_given_up++;
    if (f->snapshot_segment != NO_SEGMENT)
        snapshot_finish(f, 0);
    else
        f->segments[f->held_snapshots[0].segment].snapshot_skipping = 1;
    snapshot_release(f);
}

static int snapshot_wait_over(const struct tp_eobi_feed *f, uint64_t now)
{
    return f->n_snapshot_held > 0 && now >= f->snapshot_wait_since &&
           now - f->snapshot_wait_since >= f->gap_wait_tsc;
}

/* A snapshot packet of a segment that is not HEALTHY, with the other line waited for. */
static __attribute__((noinline)) int snapshot_arbitrate(struct tp_eobi_feed *f, uint32_t si,
                                                        struct tp_eobi_packet *p,
                                                        const uint8_t *pkt, size_t len,
                                                        uint64_t rx_tsc)
{
    while (snapshot_wait_over(f, rx_tsc))
        snapshot_give_up(f);
    while (f->n_snapshot_held > 0) {
        if (snapshot_fills_hole(f, si, p, f->n_snapshot_held)) {
            int rc = snapshot_apply(f, si, p, pkt, rx_tsc);
            f->counters.snapshot_filled++;
            snapshot_release(f);
            return rc;
        }
        if (snapshot_duplicate(f, si, p) || snapshot_held_copy(f, pkt, len)) {
            f->counters.snapshot_duplicates++;
            return 0;
        }
        if (snapshot_hold(f, si, pkt, len, rx_tsc) == 0)
            return 0;
        snapshot_give_up(f); /* no room: what is held cannot wait longer */
    }
    if (snapshot_hole_before(f, si, p) && snapshot_hold(f, si, pkt, len, rx_tsc) == 0)
        return 0;
    return snapshot_apply(f, si, p, pkt, rx_tsc);
}

int tp_eobi_feed_snapshot_packet(struct tp_eobi_feed *f, const uint8_t *pkt, size_t len,
                                 uint64_t rx_tsc)
{
    struct tp_eobi_packet p;
    struct tp_eobi_segment *seg;
    uint32_t si;

    f->counters.snapshot_packets++;
    if (in_release(f, &pkt, &len) != 0) {
        if (f->snapshot_segment != NO_SEGMENT)
            f->segments[f->snapshot_segment].snapshot_whole = 0;
        return -EPROTO;
    }
    if (tp_eobi_packet_init(&p, pkt, len) != 0) {
        f->counters.malformed++;
        if (f->snapshot_segment != NO_SEGMENT)
            f->segments[f->snapshot_segment].snapshot_whole = 0;
        return -EBADMSG;
    }
    si = segment_index(f, tp_eobi_packet_header_market_segment_id(pkt), 1);
    if (si == NO_SEGMENT) {
        f->counters.registry_full++;
        return -ENOSPC;
    }
    seg = &f->segments[si];
    if (seg->holding && seg->state == TP_EOBI_SEGMENT_HEALTHY &&
        snapshot_reflects(&p, seg->next_seq))
        hold_expire(f, si, rx_tsc); /* the hole is in the snapshot here: no need to wait */
    if (seg->state == TP_EOBI_SEGMENT_HEALTHY) {
        /* Nothing in it can change a healthy segment: not even read. */
        f->counters.snapshots_ignored++;
        return 0;
    }
    if (f->gap_wait_tsc != 0)
        return snapshot_arbitrate(f, si, &p, pkt, len, rx_tsc);
    return snapshot_apply(f, si, &p, pkt, rx_tsc);
}

void tp_eobi_feed_snapshot_end(struct tp_eobi_feed *f)
{
    while (f->n_snapshot_held > 0)
        snapshot_give_up(f);
    snapshot_finish(f, 0);
}

/* ---- queries ------------------------------------------------------------------------ */

uint32_t tp_eobi_feed_recovering(const struct tp_eobi_feed *f)
{
    return f->recovering;
}

const struct tp_eobi_segment *tp_eobi_feed_segment(const struct tp_eobi_feed *f,
                                                   int32_t market_segment_id)
{
    uint32_t si = segment_index((struct tp_eobi_feed *)f, market_segment_id, 0);

    return si == NO_SEGMENT ? NULL : &f->segments[si];
}

uint32_t tp_eobi_feed_instrument(const struct tp_eobi_feed *f, int64_t security_id)
{
    return security_instrument(security_slot(f, security_id));
}
