/*
 * ITCH feed handler (see tp_itch_feed.h).
 */
#include <errno.h>
#include <string.h>

#include "itch50.h"
#include "tp_books_prefetch.h"
#include "tp_itch_feed.h"
#include "tp_mbo_ops.h"

int tp_itch_feed_init(struct tp_itch_feed *f, struct tp_instruments *registry,
                      struct tp_books *books, const struct tp_instrument_filter *filter,
                      uint16_t channel, const struct tp_feed_sink *sink)
{
    if (!f || !registry || !books)
        return -EINVAL;
    /* A new source starts a new session of its locate map. */
    if (tp_instruments_reset_locates(registry, channel) != 0)
        return -EINVAL;
    memset(f, 0, sizeof(*f));
    f->registry = registry;
    f->books = books;
    f->filter = filter;
    f->channel = channel;
    f->locates = tp_instruments_locate_map(registry, channel);
    f->next_priority = 1;
    if (sink)
        f->sink = *sink;
    return 0;
}

/* Dense id of a message's stock locate, or TP_INSTRUMENT_NONE (the map stores id + 1). */
static inline uint32_t locate_instrument(const struct tp_itch_feed *f, const uint8_t *msg)
{
    return f->locates[tp_itch_stock_locate(msg)] - 1;
}

/*
 * B or S, anything else NONE, by one table lookup (the side of an add is random, so no branch).
 * The table holds side ^ TP_SIDE_NONE, so that the bytes it does not name give NONE.
 */
static const uint8_t itch_sides[256] = {
    ['B'] = TP_SIDE_BID ^ TP_SIDE_NONE, ['S'] = TP_SIDE_ASK ^ TP_SIDE_NONE};

static inline enum tp_side itch_side(char c)
{
    return (enum tp_side)(itch_sides[(uint8_t)c] ^ TP_SIDE_NONE);
}

static uint8_t itch_trading_state(char c)
{
    switch (c) {
    case 'H':
        return TP_STATUS_HALTED;
    case 'P':
        return TP_STATUS_PAUSED;
    case 'Q':
        return TP_STATUS_QUOTATION_ONLY;
    case 'T':
        return TP_STATUS_OPEN;
    default:
        return TP_STATUS_UNKNOWN;
    }
}

/* R: defines (or redefines) the instrument and binds its locate. */
static int stock_directory(struct tp_itch_feed *f, const uint8_t *msg)
{
    struct tp_instrument def;
    int64_t id;

    memset(&def, 0, sizeof(def));
    tp_symbol_copy(def.symbol, sizeof(def.symbol), tp_itch_stock_directory_stock(msg),
                   TP_ITCH_WIDTH_ALPHA8);
    def.security_group[0] = tp_itch_stock_directory_market_category(msg);
    if (def.symbol[0] == '\0') {
        f->counters.malformed++;
        return -EBADMSG;
    }
    if (f->filter && !tp_instrument_filter_match(f->filter, def.symbol, def.security_group)) {
        f->counters.filtered++;
        return 0;
    }
    def.venue = TP_VENUE_NASDAQ_ITCH;
    def.kind = TP_KIND_EQUITY;
    def.book_type = TP_BOOK_TYPE_MBO;
    def.channel = f->channel;
    def.itch_locate = tp_itch_stock_locate(msg);
    def.tick = tp_itch_price4_to_p9(1); /* Price(4) resolution */
    def.display_factor = 1000000000;
    id = tp_instruments_define(f->registry, &def);
    if (id < 0) {
        f->counters.registry_full += id == -ENOSPC;
        f->counters.malformed += id != -ENOSPC;
        return (int)id;
    }
    /* A redefinition keeps the status the trading action messages gave it. */
    if (tp_books_configure(f->books, (uint32_t)id, TP_BOOK_TYPE_MBO, 0, 0) != 0) {
        f->counters.registry_full++;
        return -ENOSPC;
    }
    f->counters.definitions++;
    if (f->sink.instrument)
        f->sink.instrument(f->sink.ctx, (uint32_t)id);
    return 0;
}

/*
 * Applies one checked message of `type` to instrument `instr`; returns records or -errno. With
 * `compact` (a constant in each copy of the loop) the order messages write order changes into
 * f->order_changes and return their number instead; the other messages always write records.
 */
static inline __attribute__((always_inline)) int
apply(struct tp_itch_feed *f, int type, uint32_t instr, const uint8_t *msg, bool compact)
{
    struct tp_books *b = f->books;
    struct tp_book_change *out = f->changes;
    struct mbo_out order_out = {.c = out, .oc = f->order_changes, .compact = compact};
    int n;

    switch (type) {
    case TP_ITCH_ADD_ORDER:
    case TP_ITCH_ADD_ORDER_MPID: /* same layout, attribution appended */
        return tp_mbo_add_inline(b, instr, tp_itch_add_order_order_ref(msg),
                                 itch_side(tp_itch_add_order_side(msg)),
                                 tp_itch_add_order_price_p9(msg), tp_itch_add_order_shares(msg),
                                 f->next_priority++, order_out);
    case TP_ITCH_ORDER_EXECUTED:
        return tp_mbo_execute_inline(b, instr, tp_itch_order_executed_order_ref(msg),
                                     tp_itch_order_executed_executed_shares(msg),
                                     TP_MBO_ORDER_PRICE, 1,
                                     tp_itch_order_executed_match_number(msg), order_out);
    case TP_ITCH_ORDER_EXECUTED_WITH_PRICE:
        return tp_mbo_execute_inline(b, instr, tp_itch_order_executed_with_price_order_ref(msg),
                                     tp_itch_order_executed_with_price_executed_shares(msg),
                                     tp_itch_order_executed_with_price_execution_price_p9(msg),
                                     tp_itch_order_executed_with_price_printable(msg) == 'Y',
                                     tp_itch_order_executed_with_price_match_number(msg),
                                     order_out);
    case TP_ITCH_ORDER_CANCEL:
        return tp_mbo_cancel_inline(b, instr, tp_itch_order_cancel_order_ref(msg),
                                    tp_itch_order_cancel_cancelled_shares(msg), order_out);
    case TP_ITCH_ORDER_DELETE:
        return tp_mbo_delete_inline(b, instr, tp_itch_order_delete_order_ref(msg), order_out);
    case TP_ITCH_ORDER_REPLACE:
        return tp_mbo_replace_inline(
            b, instr, tp_itch_order_replace_original_order_ref(msg),
            tp_itch_order_replace_new_order_ref(msg), tp_itch_order_replace_price_p9(msg),
            tp_itch_order_replace_shares(msg), f->next_priority++, order_out);
    case TP_ITCH_TRADE: {
        /* The indicator names the resting (non-displayed) order: the aggressor is the other. */
        enum tp_side resting = itch_side(tp_itch_trade_side(msg));
        enum tp_side aggressor = resting == TP_SIDE_BID   ? TP_SIDE_ASK
                                 : resting == TP_SIDE_ASK ? TP_SIDE_BID
                                                          : TP_SIDE_NONE;
        return tp_books_trade(b, instr, tp_itch_trade_price_p9(msg), tp_itch_trade_shares(msg),
                              aggressor, tp_itch_trade_match_number(msg), out);
    }
    case TP_ITCH_CROSS_TRADE: {
        uint64_t shares = tp_itch_cross_trade_shares(msg);
        int64_t price = tp_itch_cross_trade_cross_price_p9(msg);
        char cross = tp_itch_cross_trade_cross_type(msg);
        n = 0;
        if (shares > 0 && shares <= INT64_MAX) {
            n = tp_books_trade(b, instr, price, (int64_t)shares, TP_SIDE_NONE,
                               tp_itch_cross_trade_match_number(msg), out);
            if (n < 0)
                return n;
        }
        if (cross == 'O' || cross == 'C') {
            int m = tp_books_stat(b, instr, cross == 'O' ? TP_STAT_OPEN : TP_STAT_CLOSE, price,
                                  (int64_t)(shares <= INT64_MAX ? shares : 0), out + n);
            n += m < 0 ? 0 : m;
        }
        return n;
    }
    case TP_ITCH_NOII: {
        uint64_t imbalance = tp_itch_noii_imbalance_shares(msg);
        return tp_books_stat(b, instr, TP_STAT_IMBALANCE,
                             tp_itch_noii_current_reference_price_p9(msg),
                             (int64_t)(imbalance <= INT64_MAX ? imbalance : INT64_MAX), out);
    }
    case TP_ITCH_STOCK_TRADING_ACTION: {
        uint8_t status = itch_trading_state(tp_itch_stock_trading_action_trading_state(msg));
        struct tp_instrument *in = tp_instruments_get(f->registry, instr);
        if (in)
            in->trading_status = status;
        return tp_books_status(b, instr, status, out);
    }
    default:
        f->counters.ignored++;
        return 0;
    }
}

/*
 * The message's timestamp (tp_itch_timestamp: 6 bytes at offset 5) as the low 48 bits of the 8
 * bytes at offset 3: one load and a byte swap instead of two of each (a checked message is at
 * least 12 bytes long).
 */
static inline uint64_t itch_timestamp(const uint8_t *msg)
{
    return tp_load_be64(msg + 3) & ((UINT64_C(1) << 48) - 1);
}

/*
 * The types not applied through their stock locate. One table lookup sends them aside: a switch
 * on the type here would add branches that random order messages mispredict.
 */
static const uint8_t not_by_locate[256] = {
    [TP_ITCH_STOCK_DIRECTORY] = 1,    [TP_ITCH_BROKEN_TRADE] = 1, [TP_ITCH_SYSTEM_EVENT] = 1,
    [TP_ITCH_MWCB_DECLINE_LEVEL] = 1, [TP_ITCH_MWCB_STATUS] = 1,
};

static int not_by_locate_message(struct tp_itch_feed *f, int type, const uint8_t *msg)
{
    switch (type) {
    case TP_ITCH_STOCK_DIRECTORY:
        return stock_directory(f, msg);
    case TP_ITCH_BROKEN_TRADE:
        f->counters.broken_trades++;
        return 0;
    default:
        f->counters.ignored++; /* market-wide: no instrument state to change */
        return 0;
    }
}

/*
 * The order messages (the ones apply() gives order changes for): each carries an order reference
 * at offset 11 (and is >= 19 bytes).
 */
static const uint8_t order_message[256] = {
    ['A'] = 1, ['F'] = 1, ['E'] = 1, ['C'] = 1, ['X'] = 1, ['D'] = 1, ['U'] = 1,
};

/*
 * One message (counted by the caller): the body of tp_itch_feed_message, forced inline into the
 * burst loop too (as a call it cost 17 instructions a message in saving and restoring registers).
 */
static inline __attribute__((always_inline)) int feed_one(struct tp_itch_feed *f,
                                                          const uint8_t *msg, size_t len,
                                                          struct tp_feed_info *info, bool compact)
{
    int type = tp_itch_check(msg, len);
    uint32_t instr;
    int n;

    if (type < 0) {
        f->counters.malformed++;
        return -EBADMSG;
    }
    info->venue_time = itch_timestamp(msg);
    if (not_by_locate[type])
        return not_by_locate_message(f, type, msg);
    instr = locate_instrument(f, msg);
    if (instr == TP_INSTRUMENT_NONE) {
        f->counters.unknown_instrument++;
        return -ENOENT;
    }
    n = apply(f, type, instr, msg, compact);
    if (n < 0) {
        /* An order the book does not hold, or no room for one: the book is no longer the
         * venue's, and nothing on the line will repair it. */
        f->counters.rejected++;
        if (f->sink.stale)
            f->sink.stale(f->sink.ctx, instr, 1, 0, 0);
        return n;
    }
    if (n == 0)
        return 0;
    if (compact && order_message[type]) {
        f->sink.order_changes(f->sink.ctx, info, f->order_changes, (uint32_t)n);
        return 0;
    }
    /* Each message is its own event: one call for both when the sink takes it. */
    if (f->sink.event_changes) {
        f->sink.event_changes(f->sink.ctx, info, f->changes, (uint32_t)n);
        return 0;
    }
    if (f->sink.changes)
        f->sink.changes(f->sink.ctx, info, f->changes, (uint32_t)n);
    if (f->sink.end_of_event)
        f->sink.end_of_event(f->sink.ctx, info);
    return 0;
}

/*
 * The copies with order changes are calls of their own, so that the records' copies, which the
 * data plane runs a packet of one or two messages at a time, keep their code and registers.
 */
static __attribute__((noinline)) int feed_one_compact(struct tp_itch_feed *f, const uint8_t *msg,
                                                      size_t len, struct tp_feed_info *info)
{
    return feed_one(f, msg, len, info, true);
}

int tp_itch_feed_message(struct tp_itch_feed *f, const uint8_t *msg, size_t len,
                         struct tp_feed_info *info)
{
    f->counters.messages++;
    if (f->sink.order_changes)
        return feed_one_compact(f, msg, len, info);
    return feed_one(f, msg, len, info, false);
}

/* Instrument of an order message if it is one of the books', else TP_INSTRUMENT_NONE. */
static inline uint32_t order_message_instrument(const struct tp_itch_feed *f, const uint8_t *msg,
                                                size_t len)
{
    uint32_t instr;

    if (len < 19 || !order_message[msg[0]])
        return TP_INSTRUMENT_NONE;
    instr = locate_instrument(f, msg);
    /* TP_INSTRUMENT_NONE is never one of them either. */
    return tp_books_has(f->books, instr) ? instr : TP_INSTRUMENT_NONE;
}

/*
 * The cache lines an order message will touch, in two steps, as hints only (the locate read here
 * may still change before the message is applied: a stock directory ahead of it). First the
 * order table slot of its (original) order reference, the instrument's order-level state, and
 * the instrument state a trade updates, which only executions need: the type of the message
 * ahead is random, and a test on it was mispredicted more often than the extra prefetch costs.
 * A replace's new reference needs no hint: new ids are the venue's next ones, whose window slots
 * are next to those of the orders just added, already in cache.
 * Both steps are forced inline: gcc takes a function that only prefetches for one without side
 * effects and drops the calls whose result nothing else uses, which here was every hint (the
 * replay ran 1.4x slower on the 2000-symbol file).
 */
static inline __attribute__((always_inline)) uint32_t
prefetch_orders(const struct tp_itch_feed *f, const uint8_t *msg, size_t len)
{
    uint32_t instr = order_message_instrument(f, msg, len);

    if (instr == TP_INSTRUMENT_NONE)
        return instr;
    tp_books_hint_hot(f->books, instr);
    tp_books_hint_order(f->books, instr, tp_load_be64(msg + 11));
    tp_books_hint_book(f->books, instr);
    return instr;
}

/*
 * Then, once that state is in cache, the best levels of both sides of the instrument the first
 * step found: the side is in the order, not the message, except for adds, and picking the add's
 * side would cost a test on the message type that is mispredicted more often than the extra
 * prefetch costs.
 */
static inline __attribute__((always_inline)) void prefetch_levels(const struct tp_itch_feed *f,
                                                                  uint32_t instr)
{
    if (instr != TP_INSTRUMENT_NONE)
        tp_books_hint_levels(f->books, instr);
}

/*
 * The burst loop; info->packet_seq advances by seq_step after each message. Forced inline into
 * its two callers, twice each (with and without order changes), so that each copy has its step
 * and its kind of output as constants (a burst's 0 adds nothing per message).
 */
static inline __attribute__((always_inline)) uint32_t
feed_burst(struct tp_itch_feed *f, const uint8_t *const *msgs, const uint16_t *lens, uint32_t n,
           struct tp_feed_info *info, uint64_t seq_step, bool compact)
{
    const uint32_t far = TP_ITCH_FEED_AHEAD, near = TP_ITCH_FEED_AHEAD / 2;
    /* Instrument of message i (from the first step) at [i % far], for the second step. */
    uint32_t ahead[TP_ITCH_FEED_AHEAD];
    uint32_t skipped = 0;

    f->counters.messages += n; /* counted here, not in feed_one: one add per burst */
    for (uint32_t i = 0; i < n && i < far; i++)
        ahead[i] = prefetch_orders(f, msgs[i], lens[i]);
    for (uint32_t i = 0; i < n && i < near; i++)
        prefetch_levels(f, ahead[i]);
    for (uint32_t i = 0; i < n; i++) {
        /* The first step reuses slot i % far: message i's levels were prefetched near ago. */
        if (i + far < n) {
            prefetch_levels(f, ahead[(i + near) % far]);
            ahead[i % far] = prefetch_orders(f, msgs[i + far], lens[i + far]);
        } else if (i + near < n) {
            prefetch_levels(f, ahead[(i + near) % far]);
        }
        skipped += feed_one(f, msgs[i], lens[i], info, compact) < 0;
        info->packet_seq += seq_step;
    }
    return skipped;
}

/* The burst loop with order changes, a call of its own (see feed_one_compact). */
static __attribute__((noinline)) uint32_t
feed_burst_compact(struct tp_itch_feed *f, const uint8_t *const *msgs, const uint16_t *lens,
                   uint32_t n, struct tp_feed_info *info, uint64_t seq_step)
{
    return seq_step ? feed_burst(f, msgs, lens, n, info, 1, true)
                    : feed_burst(f, msgs, lens, n, info, 0, true);
}

uint32_t tp_itch_feed_burst(struct tp_itch_feed *f, const uint8_t *const *msgs,
                            const uint16_t *lens, uint32_t n, struct tp_feed_info *info)
{
    if (f->sink.order_changes)
        return feed_burst_compact(f, msgs, lens, n, info, 0);
    return feed_burst(f, msgs, lens, n, info, 0, false);
}

uint32_t tp_itch_feed_sequenced(struct tp_itch_feed *f, const uint8_t *const *msgs,
                                const uint16_t *lens, uint32_t n, struct tp_feed_info *info)
{
    if (f->sink.order_changes)
        return feed_burst_compact(f, msgs, lens, n, info, 1);
    return feed_burst(f, msgs, lens, n, info, 1, false);
}
