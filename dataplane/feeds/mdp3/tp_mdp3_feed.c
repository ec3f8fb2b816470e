/*
 * MDP3 feed handler (see tp_mdp3_feed.h).
 */
#include <errno.h>
#include <string.h>

#include "mdp3_packet.h"
#include "tp_books_prefetch.h"
#include "tp_mbo.h"
#include "tp_mbp.h"
#include "tp_mdp3_feed.h"

#define END_OF_EVENT  MKTDATA_MATCH_EVENT_INDICATOR_END_OF_EVENT
#define PRICE_NULL    INT64_MAX /* PRICENULL9 mantissa null value */
#define DEFAULT_DEPTH 10        /* when a definition names no GBX depth */

/*
 * Packets of a burst prefetched ahead of the one applied (a packet carries 2-3 messages, each
 * with several entries: one packet's time covers a miss; 2 measured no better).
 */
#define PREFETCH_AHEAD 1

/*
 * Order hints issued per order entry and per message applied: two per entry keep the ring
 * draining when the next packet has more order entries than the current one.
 */
#define HINTS_PER_ENTRY 2

/* Normalized status of an MDP3 SecurityTradingStatus; TP_STATUS_UNKNOWN means "no change". */
static uint8_t mdp3_status(uint8_t s)
{
    switch (s) {
    case 2: /* TradingHalt */
        return TP_STATUS_HALTED;
    case 4:  /* Close */
    case 18: /* NotAvailableForTrading */
    case 26: /* PostClose */
        return TP_STATUS_CLOSED;
    case 15: /* NewPriceIndication */
    case 21: /* PreOpen */
    case 24: /* PreCross */
    case 25: /* Cross */
        return TP_STATUS_PRE_OPEN;
    case 17: /* ReadyToTrade */
        return TP_STATUS_OPEN;
    default: /* 20 UnknownOrInvalid, 103 NoChange, null */
        return TP_STATUS_UNKNOWN;
    }
}

/* mantissa * 10^exponent as price9 (PRICE_NULL stays null; out-of-range values saturate). */
static int64_t price9(int64_t mantissa, int8_t exponent)
{
    if (mantissa == PRICE_NULL || exponent == -9)
        return mantissa;
    for (; exponent > -9; exponent--) {
        if (mantissa > INT64_MAX / 10 || mantissa < INT64_MIN / 10)
            return mantissa > 0 ? INT64_MAX - 1 : INT64_MIN;
        mantissa *= 10;
    }
    for (; exponent < -9; exponent++)
        mantissa /= 10;
    return mantissa;
}

size_t tp_mdp3_feed_memsize(uint32_t instruments)
{
    return (size_t)instruments * sizeof(struct tp_mdp3_instrument_state);
}

int tp_mdp3_feed_init(struct tp_mdp3_feed *f, void *state_mem, struct tp_instruments *registry,
                      struct tp_books *books, const struct tp_instrument_filter *filter,
                      uint16_t channel, uint8_t book_type, const struct tp_feed_sink *sink)
{
    if (!f || !state_mem || !registry || !books ||
        (book_type != TP_BOOK_TYPE_MBP && book_type != TP_BOOK_TYPE_MBP_MBO))
        return -EINVAL;
    memset(f, 0, sizeof(*f));
    f->registry = registry;
    f->books = books;
    f->filter = filter;
    f->channel = channel;
    f->book_type = book_type;
    f->capacity = tp_instruments_capacity(registry);
    f->last_id = TP_INSTRUMENT_NONE;
    f->secids = tp_instruments_secid_table(registry);
    f->state = state_mem;
    memset(f->state, 0, tp_mdp3_feed_memsize(f->capacity));
    if (sink)
        f->sink = *sink;
    return 0;
}

void tp_mdp3_feed_watch(struct tp_mdp3_feed *f, tp_mdp3_feed_stale_fn fn, void *ctx)
{
    f->watch = fn;
    f->watch_ctx = ctx;
}

void tp_mdp3_feed_watch_orders(struct tp_mdp3_feed *f, tp_mdp3_feed_stale_fn fn, void *ctx)
{
    f->watch_orders = fn;
    f->watch_orders_ctx = ctx;
}

const struct tp_mdp3_instrument_state *tp_mdp3_feed_state(const struct tp_mdp3_feed *f,
                                                          uint32_t instrument)
{
    return instrument < f->capacity ? &f->state[instrument] : NULL;
}

/* ---- change buffer ------------------------------------------------------------------------ */

/* Hands every waiting record to the sink (tp_mdp3_feed.h says when). Out of line: called from
 * each message's handler, it would keep the handlers from being inlined. */
static __attribute__((noinline)) void flush(struct tp_mdp3_feed *f)
{
    if (f->n_changes && f->sink.changes)
        f->sink.changes(f->sink.ctx, &f->info, f->changes, f->n_changes);
    f->n_changes = 0;
    f->message_first = 0;
}

/*
 * Before a sink call other than changes: the records of the messages before the current one go
 * first, the current message's wait (with one call per message they came after it). Their info is
 * the current one: a message that changes it flushes first (set_venue_time).
 */
static void flush_earlier_messages(struct tp_mdp3_feed *f)
{
    uint32_t earlier = f->message_first;

    if (earlier == 0)
        return;
    if (f->sink.changes)
        f->sink.changes(f->sink.ctx, &f->info, f->changes, earlier);
    f->n_changes -= earlier;
    memmove(f->changes, f->changes + earlier, f->n_changes * sizeof(f->changes[0]));
    f->message_first = 0;
}

/* A message's TransactTime, set before its first record: the records waiting keep theirs. */
static inline void set_venue_time(struct tp_mdp3_feed *f, uint64_t venue_time)
{
    if (venue_time != f->info.venue_time)
        flush(f);
    f->info.venue_time = venue_time;
}

/* Room for one book call's records. */
static struct tp_book_change *room(struct tp_mdp3_feed *f)
{
    if (f->n_changes > TP_MDP3_FEED_CHANGES - TP_BOOK_CHANGES_MAX)
        flush(f);
    return &f->changes[f->n_changes];
}

/* Accounts for a book call's result: records kept, or the rejection counted. */
static void took(struct tp_mdp3_feed *f, int n)
{
    if (n < 0)
        f->counters.rejected++;
    else
        f->n_changes += (uint32_t)n;
}

static void mark(struct tp_mdp3_feed *f, uint32_t instr, int stale, uint32_t expected,
                 uint32_t got);

/*
 * The book of `instr` refused an incremental change (tp_mdp3_feed.h, "Refusals"): counted, and the
 * instrument marked stale until a snapshot of it is applied.
 */
static __attribute__((noinline)) void refused(struct tp_mdp3_feed *f, uint32_t instr)
{
    struct tp_mdp3_instrument_state *st = &f->state[instr];

    f->counters.rejected++;
    if (st->stale)
        return;
    st->stale = 1;
    f->counters.refusal_marks++;
    mark(f, instr, 1, st->rpt_seq, st->rpt_seq);
}

/* took() for an incremental change of instrument `instr`'s book: a refusal marks it stale. */
static inline void took_change(struct tp_mdp3_feed *f, uint32_t instr, int n)
{
    if (__builtin_expect(n < 0, 0))
        refused(f, instr);
    else
        f->n_changes += (uint32_t)n;
}

/* ---- instruments and sequence ------------------------------------------------------------- */

/*
 * Instrument of a SecurityID (within the capacity), or TP_INSTRUMENT_NONE. The last one found
 * answers without a lookup; only found ones are remembered (an unknown one may be defined later).
 */
static inline uint32_t lookup(struct tp_mdp3_feed *f, int32_t security_id)
{
    if (security_id == f->last_security_id && f->last_id != TP_INSTRUMENT_NONE)
        return f->last_id;
    uint32_t id = tp_secid_find(&f->secids, security_id);
    if (id >= f->capacity)
        return TP_INSTRUMENT_NONE;
    f->last_security_id = security_id;
    f->last_id = id;
    return id;
}

static inline uint32_t instrument_of(struct tp_mdp3_feed *f, int32_t security_id)
{
    uint32_t id = lookup(f, security_id);

    if (id == TP_INSTRUMENT_NONE)
        f->counters.unknown_instrument++;
    return id;
}

/* An instrument went stale (stale != 0) or is trusted again: the sink and the watcher hear it. */
static void mark(struct tp_mdp3_feed *f, uint32_t instr, int stale, uint32_t expected, uint32_t got)
{
    flush_earlier_messages(f);
    if (f->watch)
        f->watch(f->watch_ctx, stale);
    if (f->sink.stale)
        f->sink.stale(f->sink.ctx, instr, stale, expected, got);
}

/*
 * Tells the sink and the orders watcher when instrument `instr`'s order view becomes incomplete
 * or complete (tp_mdp3_feed.h, "Order view"), after its orders_complete changed: flagged before
 * the current message's records (they show the incomplete view), cleared after every waiting
 * record (the ones that completed it).
 */
static void order_view(struct tp_mdp3_feed *f, uint32_t instr)
{
    struct tp_mdp3_instrument_state *st = &f->state[instr];
    const struct tp_book *bk = tp_books_get(f->books, instr);
    uint8_t incomplete = bk && (bk->type & TP_BOOK_TYPE_MBO) && !st->orders_complete;

    if (incomplete == st->orders_flagged)
        return;
    st->orders_flagged = incomplete;
    if (incomplete) {
        f->counters.orders_incomplete_marks++;
        flush_earlier_messages(f);
    } else {
        flush(f);
    }
    if (f->watch_orders)
        f->watch_orders(f->watch_orders_ctx, incomplete);
    if (f->sink.orders_incomplete)
        f->sink.orders_incomplete(f->sink.ctx, instr, incomplete);
}

/* rpt_seq_accept's cases other than the next RptSeq of an instrument in sync. */
static __attribute__((noinline)) int rpt_seq_check(struct tp_mdp3_feed *f, uint32_t instr,
                                                   uint32_t rpt_seq)
{
    struct tp_mdp3_instrument_state *st = &f->state[instr];

    if (st->rpt_seq != 0 && rpt_seq <= st->rpt_seq) {
        f->counters.duplicates++;
        return 0;
    }
    if (st->rpt_seq != 0 && rpt_seq != st->rpt_seq + 1 && !st->stale) {
        st->stale = 1;
        f->counters.rpt_seq_gaps++;
        mark(f, instr, 1, st->rpt_seq + 1, rpt_seq);
    }
    st->rpt_seq = rpt_seq;
    if (st->stale) {
        f->counters.stale_skipped++;
        return 0;
    }
    return 1;
}

/*
 * Checks an entry's RptSeq against its instrument: 1 to apply the entry, 0 to skip it (an old
 * entry, or the instrument is stale). A jump makes the instrument stale. The next RptSeq of an
 * instrument in sync (rpt_seq > 1 leaves out a first one and a wrap to 0) is taken inline.
 */
static inline int rpt_seq_accept(struct tp_mdp3_feed *f, uint32_t instr, uint32_t rpt_seq)
{
    struct tp_mdp3_instrument_state *st = &f->state[instr];

    if (__builtin_expect(rpt_seq > 1 && rpt_seq - 1 == st->rpt_seq && !st->stale, 1)) {
        st->rpt_seq = rpt_seq;
        return 1;
    }
    return rpt_seq_check(f, instr, rpt_seq);
}

/*
 * The first id of this feed's registry, and one past the last it handed out: with several data
 * lcores, each registry (and its books) serves its own window of the instance's ids, so a walk
 * over the channel's instruments starts at the window, not at 0.
 */
static uint32_t ids_first(const struct tp_mdp3_feed *f)
{
    return tp_instruments_first_id(f->registry);
}

static uint32_t ids_end(const struct tp_mdp3_feed *f)
{
    uint32_t n = tp_instruments_count(f->registry);
    return n < f->capacity ? n : f->capacity;
}

/* Whether an instrument is one this channel defined (a registry may serve several channels). */
static int of_channel(const struct tp_mdp3_feed *f, const struct tp_instrument *in)
{
    return in->venue == TP_VENUE_CME_MDP3 && in->channel == f->channel;
}

/* Status of one instrument, in the registry and the book. */
static void set_status(struct tp_mdp3_feed *f, uint32_t instr, uint8_t mdp3)
{
    uint8_t status = mdp3_status(mdp3);
    struct tp_instrument *in = tp_instruments_get(f->registry, instr);

    if (status == TP_STATUS_UNKNOWN || !in)
        return;
    in->trading_status = status;
    took(f, tp_books_status(f->books, instr, status, room(f)));
}

static void set_stat(struct tp_mdp3_feed *f, uint32_t instr, enum tp_stat_kind kind, int64_t price,
                     int64_t qty)
{
    took(f, tp_books_stat(f->books, instr, kind, price, qty, room(f)));
}

/* ---- definitions -------------------------------------------------------------------------- */

/*
 * The part every definition template shares, read by each template's own accessors (the
 * generated code has one struct per template).
 */
struct definition {
    char update_action;
    uint8_t trading_status;
    int32_t security_id;
    const char *symbol, *group;
    int64_t tick, display_factor;
    uint8_t depth, implied_depth;
    uint8_t kind;
};

static void define(struct tp_mdp3_feed *f, const struct definition *d)
{
    struct tp_instrument def;
    int64_t id;

    memset(&def, 0, sizeof(def));
    tp_symbol_copy(def.symbol, sizeof(def.symbol), d->symbol, MKTDATA_SYMBOL_LENGTH);
    tp_symbol_copy(def.security_group, sizeof(def.security_group), d->group,
                   MKTDATA_SECURITY_GROUP_LENGTH);
    if (d->update_action == 'D') {
        f->counters.filtered++; /* deleted: ids are dense and stay; nothing to define */
        return;
    }
    if (f->filter && !tp_instrument_filter_match(f->filter, def.symbol, def.security_group)) {
        f->counters.filtered++;
        return;
    }
    def.venue = TP_VENUE_CME_MDP3;
    def.kind = d->kind;
    def.book_type = f->book_type;
    def.channel = f->channel;
    def.security_id = d->security_id;
    def.tick = d->tick == PRICE_NULL ? 0 : d->tick;
    def.display_factor = d->display_factor == PRICE_NULL ? 0 : d->display_factor;
    def.market_depth = d->depth ? d->depth : DEFAULT_DEPTH;
    def.implied_depth = d->implied_depth;
    /*
     * The definition channel repeats definitions all session long, with the status as of when the
     * loop was cut: it only sets the status of an instrument that has none yet; after that the
     * security status messages and snapshots own it.
     */
    id = tp_instruments_by_security_id(f->registry, d->security_id);
    if (id == TP_INSTRUMENT_NONE ||
        tp_instruments_get(f->registry, (uint32_t)id)->trading_status == TP_STATUS_UNKNOWN)
        def.trading_status = mdp3_status(d->trading_status);
    id = tp_instruments_define(f->registry, &def);
    if (id < 0 || (uint32_t)id >= f->capacity ||
        tp_books_configure(f->books, (uint32_t)id, f->book_type, def.market_depth,
                           def.implied_depth) != 0) {
        f->counters.registry_full++;
        return;
    }
    if (def.trading_status != TP_STATUS_UNKNOWN &&
        tp_books_get(f->books, (uint32_t)id)->status == TP_STATUS_UNKNOWN)
        took(f, tp_books_status(f->books, (uint32_t)id, def.trading_status, room(f)));
    f->counters.definitions++;
    flush_earlier_messages(f);
    if (f->sink.instrument)
        f->sink.instrument(f->sink.ctx, (uint32_t)id);
    order_view(f, (uint32_t)id); /* orders from before the feed's first message are unknown */
}

/* GBX (outright) and GBI (implied) depths from a definition's NoMDFeedTypes entry. */
static void feed_type_depth(struct definition *d, const char *type, int8_t depth)
{
    if (depth <= 0)
        return;
    if (memcmp(type, "GBX", 3) == 0)
        d->depth = (uint8_t)depth;
    else if (memcmp(type, "GBI", 3) == 0)
        d->implied_depth = (uint8_t)depth;
}

/*
 * The three definition templates differ in layout but not in what tickplane keeps; this macro
 * reads one of them (T = the generated name) into a struct definition. Groups are visited in
 * schema order, skipping the ones before NoMDFeedTypes.
 */
#define READ_DEFINITION(T, KIND, SKIP_GROUPS)                                                      \
    static int read_##T(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)                     \
    {                                                                                              \
        struct mktdata_##T m;                                                                      \
        struct mktdata_##T##_no_md_feed_types g;                                                   \
        struct definition d = {0};                                                                 \
        if (mktdata_##T##_wrap_for_decode(&m, msg->body, msg->body_len, msg->block_length,         \
                                          msg->version) < 0)                                       \
            return -EBADMSG;                                                                       \
        d.kind = KIND;                                                                             \
        d.update_action = mktdata_##T##_security_update_action(&m);                                \
        d.trading_status = mktdata_##T##_md_security_trading_status(&m);                           \
        d.security_id = mktdata_##T##_security_id(&m);                                             \
        d.symbol = mktdata_##T##_symbol(&m);                                                       \
        d.group = mktdata_##T##_security_group(&m);                                                \
        d.tick = price9(mktdata_##T##_min_price_increment_mantissa(&m),                            \
                        mktdata_##T##_min_price_increment_exponent(&m));                           \
        d.display_factor = price9(mktdata_##T##_display_factor_mantissa(&m),                       \
                                  mktdata_##T##_display_factor_exponent(&m));                      \
        SKIP_GROUPS                                                                                \
        if (mktdata_##T##_no_md_feed_types_wrap_for_decode(&m, &g) < 0)                            \
            return -EBADMSG;                                                                       \
        while (g.index < g.count) {                                                                \
            if (mktdata_##T##_no_md_feed_types_next(&g) < 0)                                       \
                return -EBADMSG;                                                                   \
            feed_type_depth(&d, mktdata_##T##_no_md_feed_types_md_feed_type(&g),                   \
                            mktdata_##T##_no_md_feed_types_market_depth(&g));                      \
        }                                                                                          \
        define(f, &d);                                                                             \
        return mktdata_##T##_match_event_indicator(&m);                                            \
    }

/* Skips a group the handler does not read, entry by entry (each entry is bounds checked). */
#define SKIP_GROUP(T, G)                                                                           \
    {                                                                                              \
        struct mktdata_##T##_##G s;                                                                \
        if (mktdata_##T##_##G##_wrap_for_decode(&m, &s) < 0)                                       \
            return -EBADMSG;                                                                       \
        while (s.index < s.count)                                                                  \
            if (mktdata_##T##_##G##_next(&s) < 0)                                                  \
                return -EBADMSG;                                                                   \
    }

READ_DEFINITION(md_instrument_definition_future54, TP_KIND_FUTURE,
                SKIP_GROUP(md_instrument_definition_future54, no_events))
READ_DEFINITION(md_instrument_definition_option55, TP_KIND_OPTION,
                SKIP_GROUP(md_instrument_definition_option55, no_events))
READ_DEFINITION(md_instrument_definition_spread56, TP_KIND_SPREAD,
                SKIP_GROUP(md_instrument_definition_spread56, no_events))

/* ---- incremental book --------------------------------------------------------------------- */

/*
 * The level entries by MDEntryTypeBook byte: IS_LEVEL | book << 1 | side << 2, 0 for anything else
 * (a table load instead of a switch: every 46 and 47 entry asks).
 */
#define IS_LEVEL 1
static const uint8_t level_entry[256] = {
    ['0'] = IS_LEVEL | TP_BOOK_DIRECT << 1 | TP_SIDE_BID << 2,
    ['1'] = IS_LEVEL | TP_BOOK_DIRECT << 1 | TP_SIDE_ASK << 2,
    ['E'] = IS_LEVEL | TP_BOOK_IMPLIED << 1 | TP_SIDE_BID << 2,
    ['F'] = IS_LEVEL | TP_BOOK_IMPLIED << 1 | TP_SIDE_ASK << 2,
};

/* Book side and kind of an MDEntryTypeBook value; 0 if it is not a level. */
static inline int book_entry(char type, enum tp_book_kind *book, enum tp_side *side)
{
    uint8_t k = level_entry[(uint8_t)type];

    *book = (enum tp_book_kind)(k >> 1 & 1);
    *side = (enum tp_side)(k >> 2);
    return k & IS_LEVEL;
}

/*
 * 46 and 47, the messages of nearly every packet, are read at their fields' schema offsets, not
 * through the generated wrap/next calls, whose cursor structs (stored and reloaded for every
 * entry) cost more than the reads. Their groups have fixed-size entries; each is checked once,
 * exactly as the generated decoder checks it: a root or an entry shorter than its last field, a
 * dimension or entries past the message's end make the message malformed (the apply pass) or
 * give no hints (the prefetch pass), and nothing outside the message is read.
 */
#define B46(F)     MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_##F##_OFFSET
#define B46_MD(F)  MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_NO_MD_ENTRIES_##F##_OFFSET
#define B46_OID(F) MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_NO_ORDER_ID_ENTRIES_##F##_OFFSET
#define B47(F)     MKTDATA_MD_INCREMENTAL_REFRESH_ORDER_BOOK47_##F##_OFFSET
#define B47_MD(F)  MKTDATA_MD_INCREMENTAL_REFRESH_ORDER_BOOK47_NO_MD_ENTRIES_##F##_OFFSET

/* The shortest root blocks and entries the generated decoder accepts: their last field's end. */
#define B46_ROOT_MIN (B46(MATCH_EVENT_INDICATOR) + 1)
#define B46_MD_MIN   (B46_MD(MD_ENTRY_TYPE) + 1)
#define B46_OID_MIN  (B46_OID(ORDER_UPDATE_ACTION) + 1)
#define B47_ROOT_MIN (B47(MATCH_EVENT_INDICATOR) + 1)
#define B47_MD_MIN   (B47_MD(MD_ENTRY_TYPE) + 1)

_Static_assert(sizeof(mktdata_group_size_num_in_group(NULL)) == 1,
               "46 indexes its entries by ReferenceID in 256 slots: NumInGroup must be a uint8");

/* A group of fixed-size entries. */
struct group {
    const uint8_t *entry; /* entry 0 */
    uint32_t count;
    uint16_t entry_len;
};

/*
 * The first group of a message: where it starts, or NULL when the root block is shorter than
 * min_len or longer than the message.
 */
static inline const uint8_t *root_block(const struct tp_mdp3_msg *msg, uint16_t min_len)
{
    if (msg->block_length > msg->body_len || msg->block_length < min_len)
        return NULL;
    return msg->body + msg->block_length;
}

/*
 * The group whose dimension (dim_len bytes, giving entry_len and count) starts at `at`, in a
 * message ending at `end`: where the group ends (the next group), or NULL if it does not fit or
 * its entries are shorter than min_len.
 */
static inline const uint8_t *group_of(const uint8_t *at, const uint8_t *end, size_t dim_len,
                                      uint16_t entry_len, uint32_t count, uint16_t min_len,
                                      struct group *g)
{
    at += dim_len;
    if (entry_len < min_len || (size_t)count * entry_len > (size_t)(end - at))
        return NULL;
    g->entry = at;
    g->entry_len = entry_len;
    g->count = count;
    return at + (size_t)count * entry_len;
}

/* A group with the 3-byte dimension (groupSize). */
static inline const uint8_t *group3(const uint8_t *at, const uint8_t *end, uint16_t min_len,
                                    struct group *g)
{
    if (!at || (size_t)(end - at) < MKTDATA_GROUP_SIZE_ENCODED_LENGTH)
        return NULL;
    return group_of(at, end, MKTDATA_GROUP_SIZE_ENCODED_LENGTH, mktdata_group_size_block_length(at),
                    mktdata_group_size_num_in_group(at), min_len, g);
}

/* A group with the 8-byte dimension (groupSize8Byte). */
static inline const uint8_t *group8(const uint8_t *at, const uint8_t *end, uint16_t min_len,
                                    struct group *g)
{
    if (!at || (size_t)(end - at) < MKTDATA_GROUP_SIZE8_BYTE_ENCODED_LENGTH)
        return NULL;
    return group_of(at, end, MKTDATA_GROUP_SIZE8_BYTE_ENCODED_LENGTH,
                    mktdata_group_size8_byte_block_length(at),
                    mktdata_group_size8_byte_num_in_group(at), min_len, g);
}

/* A message's end. */
static inline const uint8_t *end_of(const struct tp_mdp3_msg *msg)
{
    return msg->body + msg->body_len;
}

/* ---- spaced order hints (tp_mdp3_feed.hints) ---------------------------------------------- */

/* Keeps the order-table line of an order id to prefetch later. */
static inline void queue_hint(struct tp_mdp3_feed *f, uint64_t order_id)
{
    f->hints[f->hint_head++ % TP_MDP3_FEED_HINTS] = tp_books_order_line(f->books, order_id);
    if (f->hint_head - f->hint_tail > TP_MDP3_FEED_HINTS)
        f->hint_tail = f->hint_head - TP_MDP3_FEED_HINTS;
}

/* Prefetches the oldest line kept, if any. */
static inline void issue_hint(struct tp_mdp3_feed *f)
{
    if (f->hint_tail != f->hint_head)
        __builtin_prefetch(f->hints[f->hint_tail++ % TP_MDP3_FEED_HINTS], 1);
}

/* Whether the latest packet not replayed set instrument `instr` from a snapshot. */
static bool recovered_by_snapshot(const struct tp_mdp3_feed *f, uint32_t instr)
{
    for (uint32_t i = 0; i < f->n_recovered; i++)
        if (f->recovered[i] == instr)
            return true;
    return false;
}

/*
 * A snapshot set instrument `instr`'s books: the replay that follows applies its order entries
 * (tp_mdp3_feed_replay). With no room left to say so, it is marked stale again.
 */
static void set_from_snapshot(struct tp_mdp3_feed *f, uint32_t instr)
{
    if (recovered_by_snapshot(f, instr))
        return;
    if (f->n_recovered < TP_MDP3_FEED_RECOVERED_MAX) {
        f->recovered[f->n_recovered++] = instr;
        return;
    }
    f->state[instr].stale = 1;
    mark(f, instr, 1, f->state[instr].rpt_seq, f->state[instr].rpt_seq);
}

/* An order entry (46 NoOrderIDEntries, 47) applied to the order-level book. */
static void order_entry(struct tp_mdp3_feed *f, uint32_t instr, uint8_t action, uint64_t id,
                        enum tp_side side, int64_t price, int32_t qty, uint64_t priority)
{
    const struct tp_book *bk = tp_books_get(f->books, instr);

    if (!bk || !(bk->type & TP_BOOK_TYPE_MBO))
        return; /* MBP-only book: the order entries are not kept */
    if (f->state[instr].stale) {
        f->counters.stale_skipped++;
        return;
    }
    if (f->replaying && !recovered_by_snapshot(f, instr)) {
        f->counters.duplicates++;
        return;
    }
    for (int i = 0; i < HINTS_PER_ENTRY; i++)
        issue_hint(f);
    int n;
    switch (action) {
    case 0: /* New */
        n = tp_mbo_add(f->books, instr, id, side, price, qty, priority, room(f));
        break;
    case 1: /* Change */
        n = tp_mbo_modify(f->books, instr, id, price, qty, priority, room(f));
        break;
    case 2: /* Delete */
        n = tp_mbo_delete(f->books, instr, id, room(f));
        break;
    default:
        refused(f, instr);
        return;
    }
    struct tp_mdp3_instrument_state *st = &f->state[instr];
    st->orders_seq = (uint32_t)f->info.packet_seq;
    /* An order the book does not hold, while it does not hold the venue's older ones. */
    if (n == -ENOENT && !st->orders_complete)
        took(f, n);
    else
        took_change(f, instr, n);
}

/* The venue emptied the instrument's books: its order book is complete, as of this packet. */
static void orders_reset(struct tp_mdp3_feed *f, uint32_t instr)
{
    f->state[instr].orders_complete = 1;
    f->state[instr].orders_seq = (uint32_t)f->info.packet_seq;
    order_view(f, instr);
}

/*
 * Whether a level the book refused lies within the venue's book but beyond the depth this book
 * keeps (books.levels_per_side below the definition's): the levels kept are unaffected, which is
 * no refusal of the venue's change.
 */
static __attribute__((noinline)) bool kept_shallower(struct tp_mdp3_feed *f, uint32_t instr,
                                                     enum tp_book_kind book, uint32_t level)
{
    const struct tp_book *bk = tp_books_get(f->books, instr);
    const struct tp_instrument *in = tp_instruments_get(f->registry, instr);

    if (!bk || !in)
        return false;
    if (book == TP_BOOK_DIRECT)
        return level > bk->depth && level <= in->market_depth;
    return level > bk->implied_depth && level <= in->implied_depth;
}

static int book46(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    const uint8_t *end = end_of(msg), *at, *e;
    struct group g, o;

    at = group3(root_block(msg, B46_ROOT_MIN), end, B46_MD_MIN, &g);
    if (!at)
        return -EBADMSG;
    set_venue_time(f, mktdata_load_u64(msg->body + B46(TRANSACT_TIME)));
    e = g.entry;
    for (uint32_t i = 1; i <= g.count; i++, e += g.entry_len) {
        enum tp_book_kind book = TP_BOOK_DIRECT;
        enum tp_side side = TP_SIDE_NONE;
        struct tp_mdp3_entry_ref *ref = &f->refs[i];
        ref->instrument = instrument_of(f, mktdata_load_i32(e + B46_MD(SECURITY_ID)));
        ref->price = mktdata_load_i64(e + B46_MD(MD_ENTRY_PX));
        ref->side = TP_SIDE_NONE;
        char type = (char)e[B46_MD(MD_ENTRY_TYPE)];
        if (book_entry(type, &book, &side))
            ref->side = (uint8_t)side;
        if (ref->instrument == TP_INSTRUMENT_NONE ||
            !rpt_seq_accept(f, ref->instrument, mktdata_load_u32(e + B46_MD(RPT_SEQ))))
            continue;
        if (type == 'J') { /* book reset */
            took_change(f, ref->instrument, tp_books_clear(f->books, ref->instrument, 1, room(f)));
            orders_reset(f, ref->instrument);
            continue;
        }
        if (ref->side == TP_SIDE_NONE) {
            f->counters.rejected++;
            continue;
        }
        int32_t orders = mktdata_load_i32(e + B46_MD(NUMBER_OF_ORDERS));
        int32_t size = mktdata_load_i32(e + B46_MD(MD_ENTRY_SIZE));
        uint8_t level = e[B46_MD(MD_PRICE_LEVEL)];
        int n = tp_mbp_update(
            f->books, ref->instrument, book, side, e[B46_MD(MD_UPDATE_ACTION)], level, ref->price,
            size == MKTDATA_INT32_NULL_NULL_VALUE ? 0 : size,
            orders == MKTDATA_INT32_NULL_NULL_VALUE || orders < 0 ? 0 : (uint32_t)orders, room(f));
        if (n < 0 && kept_shallower(f, ref->instrument, book, level))
            took(f, n);
        else
            took_change(f, ref->instrument, n);
    }
    /* Order entries name their price level entry by ReferenceID (1-based). */
    if (!group8(at, end, B46_OID_MIN, &o))
        return -EBADMSG;
    e = o.entry;
    for (uint32_t i = 0; i < o.count; i++, e += o.entry_len) {
        uint8_t refid = e[B46_OID(REFERENCE_ID)];
        int32_t qty = mktdata_load_i32(e + B46_OID(MD_DISPLAY_QTY));
        if (refid == 0 || refid > g.count || f->refs[refid].instrument == TP_INSTRUMENT_NONE ||
            f->refs[refid].side == TP_SIDE_NONE) {
            f->counters.rejected++;
            continue;
        }
        order_entry(f, f->refs[refid].instrument, e[B46_OID(ORDER_UPDATE_ACTION)],
                    mktdata_load_u64(e + B46_OID(ORDER_ID)), (enum tp_side)f->refs[refid].side,
                    f->refs[refid].price, qty == MKTDATA_INT32_NULL_NULL_VALUE ? 0 : qty,
                    mktdata_load_u64(e + B46_OID(MD_ORDER_PRIORITY)));
    }
    return msg->body[B46(MATCH_EVENT_INDICATOR)];
}

static int order_book47(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    const uint8_t *e;
    struct group g;

    if (!group3(root_block(msg, B47_ROOT_MIN), end_of(msg), B47_MD_MIN, &g))
        return -EBADMSG;
    set_venue_time(f, mktdata_load_u64(msg->body + B47(TRANSACT_TIME)));
    e = g.entry;
    for (uint32_t i = 0; i < g.count; i++, e += g.entry_len) {
        enum tp_book_kind book;
        enum tp_side side;
        uint32_t instr = instrument_of(f, mktdata_load_i32(e + B47_MD(SECURITY_ID)));
        if (instr == TP_INSTRUMENT_NONE)
            continue;
        if (!book_entry((char)e[B47_MD(MD_ENTRY_TYPE)], &book, &side) || book != TP_BOOK_DIRECT) {
            f->counters.rejected++;
            continue;
        }
        int32_t qty = mktdata_load_i32(e + B47_MD(MD_DISPLAY_QTY));
        order_entry(f, instr, e[B47_MD(MD_UPDATE_ACTION)], mktdata_load_u64(e + B47_MD(ORDER_ID)),
                    side, mktdata_load_i64(e + B47_MD(MD_ENTRY_PX)),
                    qty == MKTDATA_INT32_NULL_NULL_VALUE ? 0 : qty,
                    mktdata_load_u64(e + B47_MD(MD_ORDER_PRIORITY)));
    }
    return msg->body[B47(MATCH_EVENT_INDICATOR)];
}

/* ---- trades, statistics, status ----------------------------------------------------------- */

static int trade_summary48(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    struct mktdata_md_incremental_refresh_trade_summary48 m;
    struct mktdata_md_incremental_refresh_trade_summary48_no_md_entries g;
    struct mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries o;

    if (mktdata_md_incremental_refresh_trade_summary48_wrap_for_decode(
            &m, msg->body, msg->body_len, msg->block_length, msg->version) < 0 ||
        mktdata_md_incremental_refresh_trade_summary48_no_md_entries_wrap_for_decode(&m, &g) < 0)
        return -EBADMSG;
    set_venue_time(f, mktdata_md_incremental_refresh_trade_summary48_transact_time(&m));
    while (g.index < g.count) {
        if (mktdata_md_incremental_refresh_trade_summary48_no_md_entries_next(&g) < 0)
            return -EBADMSG;
        uint32_t instr = instrument_of(
            f, mktdata_md_incremental_refresh_trade_summary48_no_md_entries_security_id(&g));
        if (instr == TP_INSTRUMENT_NONE ||
            !rpt_seq_accept(
                f, instr, mktdata_md_incremental_refresh_trade_summary48_no_md_entries_rpt_seq(&g)))
            continue;
        if (mktdata_md_incremental_refresh_trade_summary48_no_md_entries_md_update_action(&g) != 0)
            continue; /* a trade bust/correction: the book of trades is not rewritten */
        uint8_t aggressor =
            mktdata_md_incremental_refresh_trade_summary48_no_md_entries_aggressor_side(&g);
        took(f,
             tp_books_trade(
                 f->books, instr,
                 mktdata_md_incremental_refresh_trade_summary48_no_md_entries_md_entry_px_mantissa(
                     &g),
                 mktdata_md_incremental_refresh_trade_summary48_no_md_entries_md_entry_size(&g),
                 aggressor == 1   ? TP_SIDE_BID
                 : aggressor == 2 ? TP_SIDE_ASK
                                  : TP_SIDE_NONE,
                 mktdata_md_incremental_refresh_trade_summary48_no_md_entries_md_trade_entry_id(&g),
                 room(f)));
    }
    /* The order entries (which resting orders traded) are not applied: 47 carries the book. */
    if (mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries_wrap_for_decode(&m, &o) <
        0)
        return -EBADMSG;
    while (o.index < o.count)
        if (mktdata_md_incremental_refresh_trade_summary48_no_order_id_entries_next(&o) < 0)
            return -EBADMSG;
    return mktdata_md_incremental_refresh_trade_summary48_match_event_indicator(&m);
}

static int daily_statistics49(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    struct mktdata_md_incremental_refresh_daily_statistics49 m;
    struct mktdata_md_incremental_refresh_daily_statistics49_no_md_entries g;

    if (mktdata_md_incremental_refresh_daily_statistics49_wrap_for_decode(
            &m, msg->body, msg->body_len, msg->block_length, msg->version) < 0 ||
        mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_wrap_for_decode(&m, &g) < 0)
        return -EBADMSG;
    set_venue_time(f, mktdata_md_incremental_refresh_daily_statistics49_transact_time(&m));
    while (g.index < g.count) {
        if (mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_next(&g) < 0)
            return -EBADMSG;
        uint32_t instr = instrument_of(
            f, mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_security_id(&g));
        if (instr == TP_INSTRUMENT_NONE ||
            !rpt_seq_accept(
                f, instr,
                mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_rpt_seq(&g)))
            continue;
        int64_t px =
            mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_md_entry_px_mantissa(
                &g);
        int64_t size =
            mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_md_entry_size(&g);
        switch (mktdata_md_incremental_refresh_daily_statistics49_no_md_entries_md_entry_type(&g)) {
        case '6':
            set_stat(f, instr, TP_STAT_SETTLEMENT, px, 0);
            break;
        case 'B':
            set_stat(f, instr, TP_STAT_CLEARED_VOLUME, 0, size);
            break;
        case 'C':
            set_stat(f, instr, TP_STAT_OPEN_INTEREST, 0, size);
            break;
        case 'W':
            set_stat(f, instr, TP_STAT_FIXING, px, 0);
            break;
        default:
            f->counters.rejected++;
        }
    }
    return mktdata_md_incremental_refresh_daily_statistics49_match_event_indicator(&m);
}

static int limits_banding50(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    struct mktdata_md_incremental_refresh_limits_banding50 m;
    struct mktdata_md_incremental_refresh_limits_banding50_no_md_entries g;

    if (mktdata_md_incremental_refresh_limits_banding50_wrap_for_decode(
            &m, msg->body, msg->body_len, msg->block_length, msg->version) < 0 ||
        mktdata_md_incremental_refresh_limits_banding50_no_md_entries_wrap_for_decode(&m, &g) < 0)
        return -EBADMSG;
    set_venue_time(f, mktdata_md_incremental_refresh_limits_banding50_transact_time(&m));
    while (g.index < g.count) {
        if (mktdata_md_incremental_refresh_limits_banding50_no_md_entries_next(&g) < 0)
            return -EBADMSG;
        uint32_t instr = instrument_of(
            f, mktdata_md_incremental_refresh_limits_banding50_no_md_entries_security_id(&g));
        if (instr == TP_INSTRUMENT_NONE ||
            !rpt_seq_accept(
                f, instr,
                mktdata_md_incremental_refresh_limits_banding50_no_md_entries_rpt_seq(&g)))
            continue;
        int64_t high =
            mktdata_md_incremental_refresh_limits_banding50_no_md_entries_high_limit_price_mantissa(
                &g);
        int64_t low =
            mktdata_md_incremental_refresh_limits_banding50_no_md_entries_low_limit_price_mantissa(
                &g);
        int64_t var = price9(
            mktdata_md_incremental_refresh_limits_banding50_no_md_entries_max_price_variation_mantissa(
                &g),
            mktdata_md_incremental_refresh_limits_banding50_no_md_entries_max_price_variation_exponent(
                &g));
        if (high != PRICE_NULL)
            set_stat(f, instr, TP_STAT_HIGH_LIMIT, high, 0);
        if (low != PRICE_NULL)
            set_stat(f, instr, TP_STAT_LOW_LIMIT, low, 0);
        if (var != PRICE_NULL)
            set_stat(f, instr, TP_STAT_MAX_PRICE_VARIATION, var, 0);
    }
    return mktdata_md_incremental_refresh_limits_banding50_match_event_indicator(&m);
}

/* Statistic kind of a session statistics / snapshot entry type, or -1. */
static int session_stat_kind(char type)
{
    switch (type) {
    case '4':
        return TP_STAT_OPEN;
    case '6':
        return TP_STAT_SETTLEMENT;
    case '7':
        return TP_STAT_HIGH;
    case '8':
        return TP_STAT_LOW;
    case 'N':
        return TP_STAT_HIGH_BID;
    case 'O':
        return TP_STAT_LOW_OFFER;
    case 'W':
        return TP_STAT_FIXING;
    case 'B':
        return TP_STAT_CLEARED_VOLUME;
    case 'C':
        return TP_STAT_OPEN_INTEREST;
    case 'e':
        return TP_STAT_SESSION_VOLUME;
    default:
        return -1;
    }
}

static int session_statistics51(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    struct mktdata_md_incremental_refresh_session_statistics51 m;
    struct mktdata_md_incremental_refresh_session_statistics51_no_md_entries g;

    if (mktdata_md_incremental_refresh_session_statistics51_wrap_for_decode(
            &m, msg->body, msg->body_len, msg->block_length, msg->version) < 0 ||
        mktdata_md_incremental_refresh_session_statistics51_no_md_entries_wrap_for_decode(&m, &g) <
            0)
        return -EBADMSG;
    set_venue_time(f, mktdata_md_incremental_refresh_session_statistics51_transact_time(&m));
    while (g.index < g.count) {
        if (mktdata_md_incremental_refresh_session_statistics51_no_md_entries_next(&g) < 0)
            return -EBADMSG;
        uint32_t instr = instrument_of(
            f, mktdata_md_incremental_refresh_session_statistics51_no_md_entries_security_id(&g));
        if (instr == TP_INSTRUMENT_NONE ||
            !rpt_seq_accept(
                f, instr,
                mktdata_md_incremental_refresh_session_statistics51_no_md_entries_rpt_seq(&g)))
            continue;
        int kind = session_stat_kind(
            mktdata_md_incremental_refresh_session_statistics51_no_md_entries_md_entry_type(&g));
        if (kind < 0) {
            f->counters.rejected++;
            continue;
        }
        set_stat(
            f, instr, (enum tp_stat_kind)kind,
            mktdata_md_incremental_refresh_session_statistics51_no_md_entries_md_entry_px_mantissa(
                &g),
            0);
    }
    return mktdata_md_incremental_refresh_session_statistics51_match_event_indicator(&m);
}

static int volume37(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    struct mktdata_md_incremental_refresh_volume37 m;
    struct mktdata_md_incremental_refresh_volume37_no_md_entries g;

    if (mktdata_md_incremental_refresh_volume37_wrap_for_decode(
            &m, msg->body, msg->body_len, msg->block_length, msg->version) < 0 ||
        mktdata_md_incremental_refresh_volume37_no_md_entries_wrap_for_decode(&m, &g) < 0)
        return -EBADMSG;
    set_venue_time(f, mktdata_md_incremental_refresh_volume37_transact_time(&m));
    while (g.index < g.count) {
        if (mktdata_md_incremental_refresh_volume37_no_md_entries_next(&g) < 0)
            return -EBADMSG;
        uint32_t instr =
            instrument_of(f, mktdata_md_incremental_refresh_volume37_no_md_entries_security_id(&g));
        if (instr == TP_INSTRUMENT_NONE ||
            !rpt_seq_accept(f, instr,
                            mktdata_md_incremental_refresh_volume37_no_md_entries_rpt_seq(&g)))
            continue;
        set_stat(f, instr, TP_STAT_SESSION_VOLUME, 0,
                 mktdata_md_incremental_refresh_volume37_no_md_entries_md_entry_size(&g));
    }
    return mktdata_md_incremental_refresh_volume37_match_event_indicator(&m);
}

static int security_status30(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    struct mktdata_security_status30 m;
    char group[TP_SECURITY_GROUP_MAX];

    if (mktdata_security_status30_wrap_for_decode(&m, msg->body, msg->body_len, msg->block_length,
                                                  msg->version) < 0)
        return -EBADMSG;
    set_venue_time(f, mktdata_security_status30_transact_time(&m));
    int32_t security_id = mktdata_security_status30_security_id(&m);
    uint8_t status = mktdata_security_status30_security_trading_status(&m);
    if (security_id != MKTDATA_INT32_NULL_VALUE && security_id != 0) {
        uint32_t instr = instrument_of(f, security_id);
        if (instr != TP_INSTRUMENT_NONE)
            set_status(f, instr, status);
    } else {
        /* A status for a whole security group of this channel. */
        tp_symbol_copy(group, sizeof(group), mktdata_security_status30_security_group(&m),
                       MKTDATA_SECURITY_GROUP_LENGTH);
        for (uint32_t i = ids_first(f); i < ids_end(f); i++) {
            const struct tp_instrument *in = tp_instruments_get(f->registry, i);
            if (of_channel(f, in) && strcmp(in->security_group, group) == 0)
                set_status(f, i, status);
        }
    }
    return mktdata_security_status30_match_event_indicator(&m);
}

static int channel_reset4(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    struct mktdata_channel_reset4 m;

    if (mktdata_channel_reset4_wrap_for_decode(&m, msg->body, msg->body_len, msg->block_length,
                                               msg->version) < 0)
        return -EBADMSG;
    set_venue_time(f, mktdata_channel_reset4_transact_time(&m));
    f->counters.channel_resets++;
    /* Every book of the channel restarts empty, and so does every RptSeq. The order books are
     * emptied in one pass over the order tables (tp_books_mark_for_clear). */
    for (uint32_t i = ids_first(f); i < ids_end(f); i++)
        if (of_channel(f, tp_instruments_get(f->registry, i)))
            tp_books_mark_for_clear(f->books, i);
    tp_books_drop_marked_orders(f->books);
    for (uint32_t i = ids_first(f); i < ids_end(f); i++) {
        if (!of_channel(f, tp_instruments_get(f->registry, i)))
            continue;
        took(f, tp_books_clear(f->books, i, 0, room(f)));
        orders_reset(f, i);
        f->state[i].rpt_seq = 0;
        if (f->state[i].stale)
            mark(f, i, 0, 0, 0);
        f->state[i].stale = 0;
    }
    return mktdata_channel_reset4_match_event_indicator(&m);
}

/* ---- snapshots ---------------------------------------------------------------------------- */

static void recovered(struct tp_mdp3_feed *f, uint32_t instr, uint32_t rpt_seq)
{
    struct tp_mdp3_instrument_state *st = &f->state[instr];
    int was_stale = st->stale;

    st->rpt_seq = rpt_seq;
    st->stale = 0;
    f->counters.snapshots++;
    if (was_stale) {
        flush(f); /* the snapshot's records first: trusted once they are applied */
        mark(f, instr, 0, rpt_seq, rpt_seq);
    }
    set_from_snapshot(f, instr);
}

/* A snapshot entry that is a price level, as the book keeps it. */
struct snapshot_level {
    enum tp_book_kind book;
    enum tp_side side;
    uint32_t level; /* 1 = best; 0: none given */
    struct tp_level lv;
};

/* Reads the current entry of a snapshot 52: 1 and *out if it is a price level, else 0. */
static int snapshot_level(const struct mktdata_snapshot_full_refresh52_no_md_entries *g,
                          struct snapshot_level *out)
{
    if (!book_entry(mktdata_snapshot_full_refresh52_no_md_entries_md_entry_type(g), &out->book,
                    &out->side))
        return 0;
    int8_t level = mktdata_snapshot_full_refresh52_no_md_entries_md_price_level(g);
    int32_t size = mktdata_snapshot_full_refresh52_no_md_entries_md_entry_size(g);
    int32_t orders = mktdata_snapshot_full_refresh52_no_md_entries_number_of_orders(g);
    out->level = level > 0 ? (uint32_t)level : 0;
    out->lv = (struct tp_level){
        .price = mktdata_snapshot_full_refresh52_no_md_entries_md_entry_px_mantissa(g),
        .qty = size == MKTDATA_INT32_NULL_NULL_VALUE ? 0 : size,
        .count = orders == MKTDATA_INT32_NULL_NULL_VALUE || orders < 0 ? 0 : (uint32_t)orders,
    };
    return 1;
}

/*
 * The book audit (tp_mdp3_feed.h): whether instrument `instr`'s price levels are those the
 * snapshot's entries (g, not yet read) would give it. An entry the book would refuse (no level,
 * beyond the depth, no quantity) leaves its level empty there too. The book's four sides are
 * copied first (one call each, not one per level), then the entries read once: every level the
 * snapshot fills must equal the book's, and the book must fill no other (the filled ones are
 * counted per side).
 */
static bool snapshot_matches(const struct tp_mdp3_feed *f, uint32_t instr,
                             struct mktdata_snapshot_full_refresh52_no_md_entries g)
{
    const struct tp_book *bk = tp_books_get(f->books, instr);
    struct tp_level lv[2][2][UINT8_MAX]; /* [book][side]: depths are at most 255 */
    uint32_t n[2][2], depth[2], held[2][2] = {{0}}, filled[2][2] = {{0}};
    struct snapshot_level s;

    if (!bk || !(bk->type & TP_BOOK_TYPE_MBP))
        return true;
    depth[TP_BOOK_DIRECT] = bk->depth;
    depth[TP_BOOK_IMPLIED] = bk->implied_depth;
    for (unsigned book = TP_BOOK_DIRECT; book <= TP_BOOK_IMPLIED; book++)
        for (unsigned side = TP_SIDE_BID; side <= TP_SIDE_ASK; side++) {
            n[book][side] =
                tp_books_copy_levels(f->books, instr, book, side, lv[book][side], depth[book]);
            for (uint32_t i = 0; i < n[book][side]; i++)
                held[book][side] += lv[book][side][i].qty != 0;
        }
    while (mktdata_snapshot_full_refresh52_no_md_entries_next(&g) == 0) {
        if (!snapshot_level(&g, &s) || s.level == 0 || s.level > depth[s.book] || s.lv.qty <= 0)
            continue;
        const struct tp_level *have = &lv[s.book][s.side][s.level - 1];
        if (s.level > n[s.book][s.side] || have->price != s.lv.price || have->qty != s.lv.qty ||
            have->count != s.lv.count)
            return false;
        filled[s.book][s.side]++;
    }
    return memcmp(held, filled, sizeof(held)) == 0;
}

/*
 * A snapshot of an in-sync book at its own RptSeq that differs from it (snapshot_matches): the
 * book was wrong. Counted, and the instrument marked stale until the snapshot, applied next,
 * recovers it.
 */
static void snapshot_mismatch(struct tp_mdp3_feed *f, uint32_t instr, uint32_t rpt_seq)
{
    f->counters.snapshot_mismatch++;
    tp_books_count_snapshot_mismatch(f->books, instr);
    f->state[instr].stale = 1;
    mark(f, instr, 1, rpt_seq, rpt_seq);
}

static int snapshot52(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    struct mktdata_snapshot_full_refresh52 m;
    struct mktdata_snapshot_full_refresh52_no_md_entries g;
    struct snapshot_level s;

    if (mktdata_snapshot_full_refresh52_wrap_for_decode(&m, msg->body, msg->body_len,
                                                        msg->block_length, msg->version) < 0 ||
        mktdata_snapshot_full_refresh52_no_md_entries_wrap_for_decode(&m, &g) < 0)
        return -EBADMSG;
    set_venue_time(f, mktdata_snapshot_full_refresh52_transact_time(&m));
    uint32_t instr = instrument_of(f, mktdata_snapshot_full_refresh52_security_id(&m));
    uint32_t rpt_seq = mktdata_snapshot_full_refresh52_rpt_seq(&m);
    if (instr == TP_INSTRUMENT_NONE)
        return END_OF_EVENT;
    const struct tp_mdp3_instrument_state *st = &f->state[instr];
    /* A book that is in sync and at least as new as the snapshot keeps going, unless the
     * snapshot is at its RptSeq and says it is wrong. */
    if (!st->stale && st->rpt_seq >= rpt_seq && st->rpt_seq != 0) {
        if (st->rpt_seq == rpt_seq) {
            f->counters.snapshots_audited++;
            if (!snapshot_matches(f, instr, g))
                snapshot_mismatch(f, instr, rpt_seq);
        }
        if (!st->stale) {
            f->counters.snapshots_old++;
            return END_OF_EVENT;
        }
    }
    /* The orders go with the levels; an order-level snapshot brings them back. */
    f->state[instr].orders_complete = 0;
    order_view(f, instr);
    took(f, tp_books_clear(f->books, instr, 1, room(f)));
    f->state[instr].orders_seq = mktdata_snapshot_full_refresh52_last_msg_seq_num_processed(&m);
    set_status(f, instr, mktdata_snapshot_full_refresh52_md_security_trading_status(&m));
    int64_t high = mktdata_snapshot_full_refresh52_high_limit_price_mantissa(&m);
    int64_t low = mktdata_snapshot_full_refresh52_low_limit_price_mantissa(&m);
    if (high != PRICE_NULL)
        set_stat(f, instr, TP_STAT_HIGH_LIMIT, high, 0);
    if (low != PRICE_NULL)
        set_stat(f, instr, TP_STAT_LOW_LIMIT, low, 0);
    while (g.index < g.count) {
        if (mktdata_snapshot_full_refresh52_no_md_entries_next(&g) < 0)
            return -EBADMSG;
        if (snapshot_level(&g, &s)) {
            took(f, tp_mbp_update(f->books, instr, s.book, s.side, TP_LEVEL_OVERLAY, s.level,
                                  s.lv.price, s.lv.qty, s.lv.count, room(f)));
            continue;
        }
        char type = mktdata_snapshot_full_refresh52_no_md_entries_md_entry_type(&g);
        int64_t px = mktdata_snapshot_full_refresh52_no_md_entries_md_entry_px_mantissa(&g);
        int32_t size = mktdata_snapshot_full_refresh52_no_md_entries_md_entry_size(&g);
        size = size == MKTDATA_INT32_NULL_NULL_VALUE ? 0 : size;
        int kind = session_stat_kind(type);
        if (kind == TP_STAT_CLEARED_VOLUME || kind == TP_STAT_OPEN_INTEREST ||
            kind == TP_STAT_SESSION_VOLUME)
            set_stat(f, instr, (enum tp_stat_kind)kind, 0, size);
        else if (kind >= 0)
            set_stat(f, instr, (enum tp_stat_kind)kind, px, 0);
    }
    recovered(f, instr, rpt_seq);
    /* A snapshot message is a complete state of its instrument: an event of its own. */
    return END_OF_EVENT;
}

#define B53(F)       mktdata_snapshot_full_refresh_order_book53_##F
#define B53_ENTRY(F) mktdata_snapshot_full_refresh_order_book53_no_md_entries_##F

/* An order of an order-level snapshot, as the book keeps it. */
struct snapshot_order {
    uint64_t id, priority;
    enum tp_side side;
    int64_t price, qty;
};

/* Reads the current entry of a 53 chunk: 1 and *o, or 0 if it is not an outright book order. */
static int snapshot_order(const struct mktdata_snapshot_full_refresh_order_book53_no_md_entries *g,
                          struct snapshot_order *o)
{
    enum tp_book_kind book;

    if (!book_entry(B53_ENTRY(md_entry_type)(g), &book, &o->side) || book != TP_BOOK_DIRECT)
        return 0;
    int32_t qty = B53_ENTRY(md_display_qty)(g);
    o->id = B53_ENTRY(order_id)(g);
    o->priority = B53_ENTRY(md_order_priority)(g);
    o->price = B53_ENTRY(md_entry_px_mantissa)(g);
    o->qty = qty == MKTDATA_INT32_NULL_NULL_VALUE ? 0 : qty;
    return 1;
}

/*
 * The order audit of one chunk (tp_mdp3_feed.h, "Book audit"): 1 if every order of the chunk (g,
 * not yet read) is live in instrument `instr`'s book as the chunk gives it (counted in *matched),
 * 0 if one is not, -EBADMSG if the chunk is malformed.
 */
static int snapshot_orders_match(const struct tp_mdp3_feed *f, uint32_t instr,
                                 struct mktdata_snapshot_full_refresh_order_book53_no_md_entries g,
                                 uint32_t *matched)
{
    struct snapshot_order o;
    enum tp_side side;
    int64_t price, qty;
    uint64_t priority;
    int same = 1;

    while (g.index < g.count) {
        if (B53_ENTRY(next)(&g) < 0)
            return -EBADMSG;
        if (!same)
            continue; /* the rest is read for its framing only */
        if (!snapshot_order(&g, &o) ||
            tp_mbo_order(f->books, instr, o.id, &side, &price, &qty, &priority) != 0 ||
            side != o.side || price != o.price || qty != o.qty || priority != o.priority)
            same = 0;
        else
            (*matched)++;
    }
    return same;
}

/* Loads one chunk's orders (g, not yet read) into instrument `instr`'s order book. */
static int snapshot_orders_load(struct tp_mdp3_feed *f, uint32_t instr,
                                struct mktdata_snapshot_full_refresh_order_book53_no_md_entries g)
{
    struct snapshot_order o;

    while (g.index < g.count) {
        if (B53_ENTRY(next)(&g) < 0)
            return -EBADMSG;
        if (!snapshot_order(&g, &o)) {
            f->counters.rejected++;
            continue;
        }
        int n = tp_mbo_add(f->books, instr, o.id, o.side, o.price, o.qty, o.priority, room(f));
        if (n < 0) {
            /* An order the book could not take: it is not the venue's after the load either. */
            f->mbo.refused = true;
            refused(f, instr);
        } else {
            f->n_changes += (uint32_t)n;
        }
    }
    return 0;
}

/*
 * What the first chunk of a 53 of instrument `instr` (LastMsgSeqNumProcessed last_seq) does with
 * the book: load it, audit it, or nothing (tp_mdp3_feed.h, "Book audit").
 */
static uint8_t snapshot_orders_mode(struct tp_mdp3_feed *f, uint32_t instr, uint32_t last_seq)
{
    const struct tp_mdp3_instrument_state *st = &f->state[instr];

    if (st->stale)
        return TP_MDP3_MBO_LOAD;
    if (!st->orders_complete) {
        if (last_seq <= f->incr_seq && last_seq >= f->replay_floor)
            return TP_MDP3_MBO_LOAD;
        /* ahead: the incrementals to come would apply twice; below the floor: those after it
         * would not all be replayed */
        f->counters.snapshots_old++;
        return TP_MDP3_MBO_IDLE;
    }
    if (st->orders_seq <= last_seq && last_seq <= f->incr_seq) {
        f->counters.snapshots_audited++;
        return TP_MDP3_MBO_AUDIT;
    }
    f->counters.snapshots_old++;
    return TP_MDP3_MBO_IDLE;
}

static int snapshot_order_book53(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    struct mktdata_snapshot_full_refresh_order_book53 m;
    struct mktdata_snapshot_full_refresh_order_book53_no_md_entries g;
    struct tp_mdp3_mbo_snapshot *s = &f->mbo;
    const struct tp_book *bk;

    if (B53(wrap_for_decode)(&m, msg->body, msg->body_len, msg->block_length, msg->version) < 0 ||
        B53(no_md_entries_wrap_for_decode)(&m, &g) < 0)
        return -EBADMSG;
    set_venue_time(f, B53(transact_time)(&m));
    uint32_t instr = instrument_of(f, B53(security_id)(&m));
    bk = instr == TP_INSTRUMENT_NONE ? NULL : tp_books_get(f->books, instr);
    if (!bk || !(bk->type & TP_BOOK_TYPE_MBO))
        return END_OF_EVENT;
    uint32_t chunk = B53(current_chunk)(&m), last_seq = B53(last_msg_seq_num_processed)(&m);
    struct tp_mdp3_instrument_state *st = &f->state[instr];
    if (chunk <= 1) {
        *s = (struct tp_mdp3_mbo_snapshot){.mode = snapshot_orders_mode(f, instr, last_seq),
                                           .instrument = instr,
                                           .last_seq = last_seq};
        if (s->mode == TP_MDP3_MBO_LOAD)
            took(f, tp_mbo_clear(f->books, instr, room(f)));
    } else if (s->instrument != instr || s->next_chunk != chunk || s->last_seq != last_seq) {
        s->mode = TP_MDP3_MBO_IDLE; /* a chunk out of its order: the snapshot is not whole */
    }
    s->next_chunk = chunk + 1;
    bool last = chunk >= B53(no_chunks)(&m);
    if (s->mode == TP_MDP3_MBO_AUDIT) {
        /* The book moved on (or went stale) between chunks: no longer the snapshot's moment. */
        if (st->stale || st->orders_seq > last_seq) {
            s->mode = TP_MDP3_MBO_IDLE;
            return END_OF_EVENT;
        }
        int same = snapshot_orders_match(f, instr, g, &s->matched);
        if (same < 0)
            return same;
        if (same && last)
            same = s->matched == tp_books_orders(f->books, instr);
        if (same) {
            if (last) {
                s->mode = TP_MDP3_MBO_IDLE;
                f->counters.snapshots_old++;
            }
            return END_OF_EVENT;
        }
        f->counters.order_snapshot_mismatch++;
        snapshot_mismatch(f, instr, st->rpt_seq);
        if (chunk > 1) { /* the earlier chunks are gone: the next snapshot applied recovers it */
            s->mode = TP_MDP3_MBO_IDLE;
            return END_OF_EVENT;
        }
        s->mode = TP_MDP3_MBO_LOAD;
        s->adopt = true;
        took(f, tp_mbo_clear(f->books, instr, room(f)));
    }
    if (s->mode != TP_MDP3_MBO_LOAD)
        return END_OF_EVENT;
    if (snapshot_orders_load(f, instr, g) < 0)
        return -EBADMSG;
    if (last) {
        s->mode = TP_MDP3_MBO_IDLE;
        st->orders_complete = !s->refused;
        st->orders_seq = last_seq;
        set_from_snapshot(f, instr);
        order_view(f, instr);
        if (s->adopt && !s->refused) {
            flush(f); /* the snapshot's records first: trusted once they are applied */
            st->stale = 0;
            mark(f, instr, 0, st->rpt_seq, st->rpt_seq);
        }
    }
    return END_OF_EVENT;
}

/* ---- packets ------------------------------------------------------------------------------ */

/*
 * The hints below are the books' inline ones (tp_books_prefetch.h): issued for every entry, a
 * call each cost more than the prefetch. An entry of the instrument the previous entry named
 * (the common case) issues none: its lines are on their way already.
 */

/* The state an entry of instrument `instr` reads first: its RptSeq and its book. */
static inline void prefetch_instrument(const struct tp_mdp3_feed *f, uint32_t instr)
{
    if (instr >= f->capacity || !tp_books_has(f->books, instr))
        return;
    __builtin_prefetch(&f->state[instr], 1);
    tp_books_hint_book(f->books, instr);
}

/*
 * Keeps the order-table line of an order entry that looks up a resting order (Change, Delete): a
 * New's id is the venue's next one, whose window slot is next to those just added, in cache.
 */
static inline void queue_order_hint(struct tp_mdp3_feed *f, uint8_t action, uint64_t order_id)
{
    if (action != 0)
        queue_hint(f, order_id);
}

static void prefetch_book46(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg, int orders)
{
    const uint8_t *end = end_of(msg), *at, *e;
    uint32_t prev = TP_INSTRUMENT_NONE;
    struct group g, o;

    at = group3(root_block(msg, B46_ROOT_MIN), end, B46_MD_MIN, &g);
    if (!at)
        return;
    e = g.entry;
    for (uint32_t i = 0; i < g.count; i++, e += g.entry_len) {
        uint32_t instr = lookup(f, mktdata_load_i32(e + B46_MD(SECURITY_ID)));
        if (instr != prev)
            prefetch_instrument(f, instr);
        prev = instr;
    }
    if (!orders || !group8(at, end, B46_OID_MIN, &o))
        return;
    e = o.entry;
    for (uint32_t i = 0; i < o.count; i++, e += o.entry_len)
        queue_order_hint(f, e[B46_OID(ORDER_UPDATE_ACTION)],
                         mktdata_load_u64(e + B46_OID(ORDER_ID)));
}

static void prefetch_order_book47(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    const uint8_t *e;
    struct group g;

    if (!group3(root_block(msg, B47_ROOT_MIN), end_of(msg), B47_MD_MIN, &g))
        return;
    e = g.entry;
    for (uint32_t i = 0; i < g.count; i++, e += g.entry_len)
        queue_order_hint(f, e[B47_MD(MD_UPDATE_ACTION)], mktdata_load_u64(e + B47_MD(ORDER_ID)));
}

/*
 * Bytes of the packet's leading whole messages, walked with tp_mdp3_packet_next_framed: all of
 * it when the caller framed it already, else up to its first malformed message.
 */
static inline size_t whole_messages(const struct tp_mdp3_feed_pkt *pkt)
{
    return pkt->framed ? pkt->len : tp_mdp3_packet_framed_len(pkt->data, pkt->len);
}

/*
 * A first pass over a packet, run PREFETCH_AHEAD packets before it is applied: it prefetches the
 * RptSeq state and book of every price-level entry's instrument (46), and with order-level books
 * keeps the order-table line of every order entry that looks up a resting order (46, 47) in the
 * feed's hint ring, which the apply pass prefetches a few at a time (issue_hint): a packet's order
 * hints issued together do not warm the lines on a Zen 4 core (a delete's first load takes as
 * long as with no hint), the same hints spaced out do. So the misses overlap the packets applied
 * meanwhile instead of each stalling the entry that needs it. Hints only: nothing is checked or
 * counted here (the registry may change before the packet is applied); the apply pass does that.
 * Its lookups leave the last SecurityID found remembered, which only spares the apply pass a
 * lookup.
 */
static void prefetch_packet(struct tp_mdp3_feed *f, const struct tp_mdp3_feed_pkt *pkt)
{
    struct tp_mdp3_packet p;
    struct tp_mdp3_msg msg;
    int orders = f->book_type == TP_BOOK_TYPE_MBP_MBO;

    if (tp_mdp3_packet_init(&p, pkt->data, whole_messages(pkt)) < 0)
        return;
    while (tp_mdp3_packet_next_framed(&p, &msg) == 1) {
        if (msg.schema_id != MKTDATA_SCHEMA_ID)
            continue;
        if (msg.template_id == MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_TEMPLATE_ID)
            prefetch_book46(f, &msg, orders);
        else if (orders &&
                 msg.template_id == MKTDATA_MD_INCREMENTAL_REFRESH_ORDER_BOOK47_TEMPLATE_ID)
            prefetch_order_book47(f, &msg);
    }
}

/* Applies one message; returns its MatchEventIndicator (>= 0) or -EBADMSG. */
static int apply(struct tp_mdp3_feed *f, const struct tp_mdp3_msg *msg)
{
    switch (msg->template_id) {
    case MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_TEMPLATE_ID:
        return book46(f, msg);
    case MKTDATA_MD_INCREMENTAL_REFRESH_ORDER_BOOK47_TEMPLATE_ID:
        return order_book47(f, msg);
    case MKTDATA_MD_INCREMENTAL_REFRESH_TRADE_SUMMARY48_TEMPLATE_ID:
        return trade_summary48(f, msg);
    case MKTDATA_MD_INCREMENTAL_REFRESH_DAILY_STATISTICS49_TEMPLATE_ID:
        return daily_statistics49(f, msg);
    case MKTDATA_MD_INCREMENTAL_REFRESH_LIMITS_BANDING50_TEMPLATE_ID:
        return limits_banding50(f, msg);
    case MKTDATA_MD_INCREMENTAL_REFRESH_SESSION_STATISTICS51_TEMPLATE_ID:
        return session_statistics51(f, msg);
    case MKTDATA_MD_INCREMENTAL_REFRESH_VOLUME37_TEMPLATE_ID:
        return volume37(f, msg);
    case MKTDATA_SECURITY_STATUS30_TEMPLATE_ID:
        return security_status30(f, msg);
    case MKTDATA_CHANNEL_RESET4_TEMPLATE_ID:
        return channel_reset4(f, msg);
    case MKTDATA_SNAPSHOT_FULL_REFRESH52_TEMPLATE_ID:
        return snapshot52(f, msg);
    case MKTDATA_SNAPSHOT_FULL_REFRESH_ORDER_BOOK53_TEMPLATE_ID:
        return snapshot_order_book53(f, msg);
    case MKTDATA_MD_INSTRUMENT_DEFINITION_FUTURE54_TEMPLATE_ID:
        return read_md_instrument_definition_future54(f, msg);
    case MKTDATA_MD_INSTRUMENT_DEFINITION_OPTION55_TEMPLATE_ID:
        return read_md_instrument_definition_option55(f, msg);
    case MKTDATA_MD_INSTRUMENT_DEFINITION_SPREAD56_TEMPLATE_ID:
        return read_md_instrument_definition_spread56(f, msg);
    default:
        f->counters.unknown_template++;
        return 0;
    }
}

/* The templates of the incremental lines, by template id (all below 64). */
static const bool is_incremental[64] = {
    [MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_TEMPLATE_ID] = true,
    [MKTDATA_MD_INCREMENTAL_REFRESH_ORDER_BOOK47_TEMPLATE_ID] = true,
    [MKTDATA_MD_INCREMENTAL_REFRESH_TRADE_SUMMARY48_TEMPLATE_ID] = true,
    [MKTDATA_MD_INCREMENTAL_REFRESH_DAILY_STATISTICS49_TEMPLATE_ID] = true,
    [MKTDATA_MD_INCREMENTAL_REFRESH_LIMITS_BANDING50_TEMPLATE_ID] = true,
    [MKTDATA_MD_INCREMENTAL_REFRESH_SESSION_STATISTICS51_TEMPLATE_ID] = true,
    [MKTDATA_MD_INCREMENTAL_REFRESH_VOLUME37_TEMPLATE_ID] = true,
    [MKTDATA_SECURITY_STATUS30_TEMPLATE_ID] = true,
    [MKTDATA_CHANNEL_RESET4_TEMPLATE_ID] = true,
    [MKTDATA_ADMIN_HEARTBEAT12_TEMPLATE_ID] = true,
};

/* Applies one packet: 0, or -EBADMSG if anything was malformed. */
static int apply_packet(struct tp_mdp3_feed *f, const struct tp_mdp3_feed_pkt *pkt)
{
    struct tp_mdp3_packet p;
    struct tp_mdp3_msg msg;
    int mei, bad = 0;
    bool incremental = false;
    size_t whole = whole_messages(pkt);

    f->counters.packets++;
    if (!f->replaying)
        f->n_recovered = 0;
    if (tp_mdp3_packet_init(&p, pkt->data, whole) < 0) {
        f->counters.malformed++;
        return -EBADMSG;
    }
    f->info.rx_tsc = pkt->rx_tsc;
    f->info.packet_seq = p.seq;
    f->info.sending_time = p.sending_time;
    f->info.venue_time = 0;
    while (tp_mdp3_packet_next_framed(&p, &msg) == 1) {
        f->counters.messages++;
        if (msg.schema_id != MKTDATA_SCHEMA_ID) {
            f->counters.other_schema++;
            continue;
        }
        issue_hint(f);
        f->message_first = f->n_changes;
        incremental |= msg.template_id < 64 && is_incremental[msg.template_id];
        mei = apply(f, &msg);
        if (mei < 0) {
            /* Entries before the malformed part stay applied, as the venue sent them. */
            f->counters.malformed++;
            bad = 1;
            mei = 0;
        }
        if (mei & END_OF_EVENT) {
            flush(f);
            f->counters.events++;
            if (f->sink.end_of_event)
                f->sink.end_of_event(f->sink.ctx, &f->info);
        }
    }
    /* What waits goes with this packet's info: the next packet's is another. */
    flush(f);
    if (incremental && !f->replaying)
        f->incr_seq = p.seq;
    if (whole != pkt->len) { /* a malformed message ended the packet */
        f->counters.malformed++;
        bad = 1;
    }
    return bad ? -EBADMSG : 0;
}

uint32_t tp_mdp3_feed_burst(struct tp_mdp3_feed *f, const struct tp_mdp3_feed_pkt *pkts, uint32_t n,
                            tp_mdp3_feed_applied_fn applied, void *ctx)
{
    uint32_t bad = 0;

    /* The first packets get no pass: just before they are applied, it would save no wait. */
    for (uint32_t i = 0; i < n; i++) {
        if (i + PREFETCH_AHEAD < n)
            prefetch_packet(f, &pkts[i + PREFETCH_AHEAD]);
        int rc = apply_packet(f, &pkts[i]);
        bad += rc < 0;
        if (applied)
            applied(ctx, &pkts[i], rc);
    }
    /* The lines left were the last packet's own: a later burst has other packets. */
    f->hint_tail = f->hint_head;
    return bad;
}

int tp_mdp3_feed_packet(struct tp_mdp3_feed *f, const uint8_t *pkt, size_t len, uint64_t rx_tsc)
{
    const struct tp_mdp3_feed_pkt one = {.data = pkt, .len = len, .rx_tsc = rx_tsc};

    return tp_mdp3_feed_burst(f, &one, 1, NULL, NULL) ? -EBADMSG : 0;
}

int tp_mdp3_feed_replay(struct tp_mdp3_feed *f, const uint8_t *pkt, size_t len, uint64_t rx_tsc)
{
    f->replaying = true;
    int rc = tp_mdp3_feed_packet(f, pkt, len, rx_tsc);
    f->replaying = false;
    return rc;
}
