/*
 * Publisher: change records -> tpout events on the bus, state table at event boundaries.
 * See publisher.h.
 *
 * Every tpout message starts with the same 40-byte event header at the same offsets, so one
 * function writes it for all of them and the per-kind encoders add their fields.
 */
#include "publisher.h"

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "book_reader.h"
#include "bus/bus.h"
#include "tpout_sbe.h"
#include "util/histogram.h"

_Static_assert(sizeof(struct tp_pub_level) == sizeof(struct tp_level), "level layout");
_Static_assert(offsetof(struct tp_pub_level, orders) == offsetof(struct tp_level, orders),
               "level layout");

#define HDR               TPOUT_MESSAGE_HEADER_ENCODED_LENGTH
#define GROUP_HDR         TPOUT_GROUP_SIZE_ENCODING_ENCODED_LENGTH
#define LEVEL_ENTRY       TPOUT_BOOK_UPDATE_LEVELS_BLOCK_LENGTH
#define MAX_LEVEL_ENTRIES 255 /* a DELETE_FROM removes at most 255 levels of an MBP book */

/*
 * Private parts bits, beside TP_PUB_SIDE_* / TP_PUB_PART_*: the event changed one level of a side
 * of an order book (a level changed in place, added or removed), so the state entry follows that
 * change record (shifting the levels below it) instead of copying the side from the books. A
 * second change to the side in the same event, or any other kind, asks for the full copy
 * (TP_PUB_SIDE_*).
 */
#define PART_LEVEL_BID (TP_PUB_SIDE_BID << 4)
#define PART_LEVEL_ASK (TP_PUB_SIDE_ASK << 4)

/* Whether an instrument's depth is its aggregated order book (tp_pub_orders_are_depth), cached
 * per instrument until its next definition, which may configure its book anew. */
enum { DEPTH_UNKNOWN = 0, DEPTH_ORDERS = 1, DEPTH_VENUE_LEVELS = 2 };

/* tpout LevelAction */
enum { OUT_LEVEL_NEW = 0, OUT_LEVEL_CHANGE = 1, OUT_LEVEL_DELETE = 2, OUT_LEVEL_CLEAR = 3 };

/* The venue fields of an ended event, for the state entries of the instruments it touched. */
struct tp_pub_event_info {
    uint64_t venue_seq;
    uint64_t venue_time;
    uint64_t rx_tsc;
};

/* dirty_event of an instrument whose last event was one order that event_changes published and
 * ended in the same call: its venue fields are in one_call[id], not in the log (events are
 * numbered from 1). */
#define ONE_CALL_EVENT 0u

/* The one level change the current event made to a side (PART_LEVEL_*). */
struct tp_pub_inplace {
    int64_t price;
    int64_t qty;
    uint32_t count;
    uint16_t level; /* 1 = best */
    uint8_t action; /* TP_LEVEL_CHANGE, TP_LEVEL_NEW or TP_LEVEL_DELETE */
};

struct tp_publisher {
    struct tp_publisher_params params;
    struct tp_publisher_counters counters;
    /* The bus's state table (NULL: none), cached: ids below state_instruments have an entry the
     * publisher writes (the lower of the two capacities), with state_depth levels a side. */
    struct tp_state_table *state;
    uint32_t state_instruments;
    uint32_t state_depth;
    /* Ids below this are both the registry's and the bus's (on_changes' ORDER path). */
    uint32_t known_instruments;
    /* The record claimed in the ring and not yet committed (its payload; the ring header is
     * written, but for the end-of-event flag its commit may add). */
    uint8_t *pending;
    uint8_t pending_flags;
    uint8_t venue; /* of the channel whose packets are being applied */
    bool in_burst; /* between tp_publisher_begin_burst and tp_publisher_end_burst */
    uint32_t channel_id;
    uint64_t last_sequence;     /* ring sequence of the latest commit */
    uint64_t event;             /* the current event's number: two-call events ended + 1 */
    uint32_t latency_countdown; /* published events until the next latency sample */
    uint64_t released_tsc;      /* held packets' release: latency counts from it (0: none) */
    uint64_t *dirty_event;      /* per instrument: the event that last marked it */
    /*
     * Instruments changed since their state entries were last written, each listed once: they
     * are written at the end of the event outside an rx burst, at the burst's end inside one
     * (write_due_states). An instrument's entry takes the venue fields of its last event,
     * dirty_event[id], from the log of the events ended since the list was last written
     * (ended[dirty_event[id] - ended_base]), or for an event of one call (ONE_CALL_EVENT, ITCH's
     * commonest) from one_call[id], which that call writes as it marks the instrument: the
     * event's fields are copied once either way, and only two-call events fill the log.
     */
    uint64_t listing; /* times the list was written, to list instruments once each time */
    /* Without a state table nothing is listed: the last numbered event that marked anything. */
    uint64_t marked_event;
    uint32_t n_due;
    uint32_t *due;
    uint64_t *listed; /* per instrument: the listing it is in */
    uint64_t ended_base;
    uint32_t n_ended;
    uint8_t *flags;      /* per instrument: recovering / stale / orders incomplete */
    uint8_t *parts;      /* per instrument: state parts the current event changed (TP_PUB_*) */
    uint8_t *defined;    /* per instrument: reference data already in its state entry */
    uint8_t *depth_kind; /* per instrument: DEPTH_* (whose levels its depth is), cached */
    struct tp_pub_inplace *inplace;     /* per instrument and side: the event's one level change */
    struct tp_pub_event_info *one_call; /* per instrument: its last ONE_CALL_EVENT's fields */
    uint32_t n_deferred;                /* work registered for the end of the burst */
    struct {
        void (*fn)(void *ctx);
        void *ctx;
    } deferred[TP_PUB_DEFER_MAX];
    struct tp_pub_event_info ended[TP_PUB_EVENT_LOG]; /* from event ended_base on */
};

static size_t align64(size_t n)
{
    return (n + 63) & ~(size_t)63;
}

size_t tp_publisher_memsize(const struct tp_publisher_params *p)
{
    if (p->instruments == 0 || p->depth == 0 || p->depth > TP_MAX_DEPTH)
        return 0;
    return align64(sizeof(struct tp_publisher)) + align64(p->instruments * sizeof(uint32_t)) +
           2 * align64(p->instruments * sizeof(uint64_t)) + 4 * align64(p->instruments) +
           align64(p->instruments * 2 * sizeof(struct tp_pub_inplace)) +
           align64(p->instruments * sizeof(struct tp_pub_event_info));
}

int tp_publisher_init(void *mem, const struct tp_publisher_params *p)
{
    /* An output's records have no bus sequence for a state entry to name. */
    if (mem == NULL || p->bus == NULL || p->books == NULL || p->registry == NULL ||
        tp_publisher_memsize(p) == 0 || (p->output != NULL && p->bus->state != NULL))
        return -EINVAL;
    struct tp_publisher *pub = mem;
    memset(mem, 0, tp_publisher_memsize(p));
    pub->params = *p;
    pub->state = p->bus->state;
    if (pub->state != NULL) {
        pub->state_instruments =
            p->instruments < pub->state->instruments ? p->instruments : pub->state->instruments;
        pub->state_depth = p->depth < pub->state->depth ? p->depth : pub->state->depth;
    }
    pub->known_instruments =
        p->instruments < p->bus->instruments ? p->instruments : p->bus->instruments;
    uint8_t *at = (uint8_t *)mem + align64(sizeof(*pub));
    pub->dirty_event = (uint64_t *)at;
    at += align64(p->instruments * sizeof(uint64_t));
    pub->flags = at;
    at += align64(p->instruments);
    pub->parts = at;
    at += align64(p->instruments);
    pub->defined = at;
    at += align64(p->instruments);
    pub->depth_kind = at;
    at += align64(p->instruments);
    pub->inplace = (struct tp_pub_inplace *)at;
    at += align64(p->instruments * 2 * sizeof(struct tp_pub_inplace));
    pub->due = (uint32_t *)at;
    at += align64(p->instruments * sizeof(uint32_t));
    pub->listed = (uint64_t *)at;
    at += align64(p->instruments * sizeof(uint64_t));
    pub->one_call = (struct tp_pub_event_info *)at;
    at += align64(p->instruments * sizeof(struct tp_pub_event_info));
    pub->event = 1;
    pub->ended_base = 1;
    pub->latency_countdown = 1; /* the first published event, then one in TP_PUB_LATENCY_EVERY */
    pub->listing = 1;
    return 0;
}

/* ---- the ring, or the output: one claimed record at a time --------------------------------- */

/*
 * The functions below that take `out` write to the output (tp_publisher_params.output) when it is
 * true, to the ring when false. The sink's paths pass a constant (the sink of a publisher with an
 * output has callbacks of its own), so the daemon's data path has no test of its own for it; the
 * rarer paths pass uses_output().
 */
static inline bool uses_output(const struct tp_publisher *pub)
{
    return pub->params.output != NULL;
}

__attribute__((always_inline)) static inline void commit_pending_to(struct tp_publisher *pub,
                                                                    bool out, uint8_t extra_flags)
{
    uint8_t *rec = pub->pending;
    if (rec == NULL)
        return;
    if (extra_flags != 0) { /* claim wrote the rest, and the ring header */
        uint8_t flags = pub->pending_flags | extra_flags;
        rec[HDR + TPOUT_BOOK_UPDATE_FLAGS_OFFSET] = flags;
        if (!out)
            tp_ring_claimed_header(rec)->flags = flags;
    }
    if (out)
        pub->params.output->commit(pub->params.output->ctx);
    else
        pub->last_sequence = tp_ring_commit_record(&pub->params.bus->ring, rec);
    pub->pending = NULL;
    pub->counters.records++;
}

/* Moves the ring's shared tail outside an rx burst. Out of line: inside one (the data path) it
 * is a test, and inlined it cost its callers' frames registers. */
__attribute__((noinline)) static void flush_outside_burst(struct tp_publisher *pub)
{
    tp_bus_flush(pub->params.bus);
}

/*
 * Commits the event's last record, flagged, and moves the ring's shared tail: now, or inside an
 * rx burst once at its end. Either way the record is complete (its sequence stored) before the
 * state entries of the event are written, so an entry's bus_sequence never falls behind a record
 * a reader may have consumed at its cursor.
 */
__attribute__((always_inline)) static inline void end_event_records_to(struct tp_publisher *pub,
                                                                       bool out)
{
    commit_pending_to(pub, out, TP_PUB_F_END_OF_EVENT);
    if (!pub->in_burst)
        flush_outside_burst(pub);
}

static void end_event_records(struct tp_publisher *pub)
{
    end_event_records_to(pub, uses_output(pub));
}

void tp_publisher_begin_burst(struct tp_publisher *pub)
{
    pub->in_burst = true;
}

static void write_state(struct tp_publisher *pub, uint32_t id,
                        const struct tp_pub_event_info *event, unsigned parts);

/*
 * Writes the state entry of every listed instrument, once each: those the ended events touched.
 * One still inside the open event (an MDP3 event may span bursts) stays listed until a later
 * burst's end, or its event's end outside a burst.
 */
static void write_due_states(struct tp_publisher *pub)
{
    uint32_t kept = 0;
    pub->listing++;
    for (uint32_t i = 0; i < pub->n_due; i++) {
        uint32_t id = pub->due[i];
        uint64_t event = pub->dirty_event[id];
        if (event == pub->event) {
            pub->due[kept++] = id;
            pub->listed[id] = pub->listing;
            continue;
        }
        write_state(
            pub, id,
            event == ONE_CALL_EVENT ? &pub->one_call[id] : &pub->ended[event - pub->ended_base], 0);
    }
    pub->n_due = kept;
    pub->ended_base = pub->event;
    pub->n_ended = 0;
}

/* Whether the current venue event has published or marked anything yet. */
static bool event_open(const struct tp_publisher *pub)
{
    if (pub->pending != NULL)
        return true;
    if (pub->state == NULL)
        return pub->marked_event == pub->event;
    for (uint32_t i = 0; i < pub->n_due; i++)
        if (pub->dirty_event[pub->due[i]] == pub->event)
            return true;
    return false;
}

void tp_publisher_end_burst(struct tp_publisher *pub)
{
    /* Deferred work publishes too: still inside the burst, so the tail moves once, below. */
    for (uint32_t i = 0; i < pub->n_deferred; i++)
        pub->deferred[i].fn(pub->deferred[i].ctx);
    pub->n_deferred = 0;
    /* The records are all committed: the entries may claim every sequence up to the last. */
    write_due_states(pub);
    pub->in_burst = false;
    tp_bus_flush(pub->params.bus);
}

bool tp_publisher_defer(struct tp_publisher *pub, void (*fn)(void *ctx), void *ctx)
{
    if (!pub->in_burst || pub->n_deferred == TP_PUB_DEFER_MAX)
        return false;
    pub->deferred[pub->n_deferred].fn = fn;
    pub->deferred[pub->n_deferred].ctx = ctx;
    pub->n_deferred++;
    return true;
}

void tp_publisher_defer_cancel(struct tp_publisher *pub, void *ctx)
{
    uint32_t kept = 0;
    for (uint32_t i = 0; i < pub->n_deferred; i++)
        if (pub->deferred[i].ctx != ctx)
            pub->deferred[kept++] = pub->deferred[i];
    pub->n_deferred = kept;
}

/* The SBE message header (blockLength, templateId, schemaId, version) as one word. */
_Static_assert(TPOUT_MESSAGE_HEADER_BLOCK_LENGTH_OFFSET == 0 &&
                   TPOUT_MESSAGE_HEADER_TEMPLATE_ID_OFFSET == 2 &&
                   TPOUT_MESSAGE_HEADER_SCHEMA_ID_OFFSET == 4 &&
                   TPOUT_MESSAGE_HEADER_VERSION_OFFSET == 6 && HDR == 8,
               "message header layout");
static inline uint64_t message_header(uint16_t block_len, uint16_t template_id)
{
    return (uint64_t)block_len | (uint64_t)template_id << 16 | (uint64_t)TPOUT_SCHEMA_ID << 32 |
           (uint64_t)TPOUT_SCHEMA_VERSION << 48;
}

/* The event header's last 16 bytes go as two words: (instrumentId, rptSeq) and (flags, venue,
 * six reserved zero bytes). */
_Static_assert(TPOUT_BOOK_UPDATE_RPT_SEQ_OFFSET == TPOUT_BOOK_UPDATE_INSTRUMENT_ID_OFFSET + 4 &&
                   TPOUT_BOOK_UPDATE_FLAGS_OFFSET == TPOUT_BOOK_UPDATE_INSTRUMENT_ID_OFFSET + 8 &&
                   TPOUT_BOOK_UPDATE_VENUE_OFFSET == TPOUT_BOOK_UPDATE_FLAGS_OFFSET + 1 &&
                   TPOUT_BOOK_UPDATE_RESERVED_OFFSET == TPOUT_BOOK_UPDATE_VENUE_OFFSET + 1 &&
                   TPOUT_BOOK_UPDATE_RESERVED_OFFSET + 6 == 40,
               "event header layout");

/*
 * Claims a record of block + group bytes for instrument id, which the bus wants, with `flags`
 * (the instrument's own included), and writes the ring's record header (all but the sequence,
 * which the commit stores), the SBE message header and the event header. Returns the block
 * start (after the message header) or NULL when the record is too large (counted), or when the
 * output does not take it.
 */
__attribute__((always_inline)) static inline uint8_t *
claim_wanted_to(struct tp_publisher *pub, bool out, uint32_t id, uint16_t template_id,
                uint16_t block_len, uint32_t extra_len, uint16_t topic, uint8_t flags,
                const struct tp_feed_info *info)
{
    struct tp_bus_writer *bus = pub->params.bus;
    commit_pending_to(pub, out, 0);
    uint8_t *rec;
    if (out) {
        rec =
            pub->params.output->claim(pub->params.output->ctx, topic, HDR + block_len + extra_len);
        if (rec == NULL)
            return NULL;
    } else {
        rec = tp_ring_claim_record(&bus->ring, HDR + block_len + extra_len, TP_REC_SBE, topic, id,
                                   flags);
        if (rec == NULL)
            return tp_bus_claim_refused(bus, id); /* too large */
    }
    tpout_store_u64(rec, message_header(block_len, template_id));
    uint8_t *b = rec + HDR;
    tpout_store_u64(b + TPOUT_BOOK_UPDATE_VENUE_SEQ_OFFSET, info->packet_seq);
    tpout_store_u64(b + TPOUT_BOOK_UPDATE_VENUE_TIME_NS_OFFSET, info->venue_time);
    tpout_store_u64(b + TPOUT_BOOK_UPDATE_RECV_TSC_OFFSET, info->rx_tsc);
    tpout_store_u64(b + TPOUT_BOOK_UPDATE_INSTRUMENT_ID_OFFSET,
                    id | (uint64_t)TPOUT_RPT_SEQ_NULL_VALUE << 32);
    tpout_store_u64(b + TPOUT_BOOK_UPDATE_FLAGS_OFFSET, flags | (uint64_t)pub->venue << 8);
    pub->pending = rec;
    pub->pending_flags = flags;
    return b;
}

__attribute__((always_inline)) static inline uint8_t *
claim_wanted(struct tp_publisher *pub, uint32_t id, uint16_t template_id, uint16_t block_len,
             uint32_t extra_len, uint16_t topic, uint8_t flags, const struct tp_feed_info *info)
{
    return claim_wanted_to(pub, uses_output(pub), id, template_id, block_len, extra_len, topic,
                           flags, info);
}

/* claim_wanted for any instrument: NULL when the bus does not want it (counted) or too large. */
__attribute__((always_inline)) static inline uint8_t *
claim(struct tp_publisher *pub, uint32_t id, uint16_t template_id, uint16_t block_len,
      uint32_t extra_len, uint16_t topic, uint8_t flags, const struct tp_feed_info *info)
{
    struct tp_bus_writer *bus = pub->params.bus;
    if (!tp_bus_wants(bus, id))
        return tp_bus_claim_refused(bus, id); /* counts bus.skipped_no_interest */
    if (id != UINT32_MAX)
        flags |= pub->flags[id];
    return claim_wanted(pub, id, template_id, block_len, extra_len, topic, flags, info);
}

/* orders_are_depth when the answer is not cached yet: asks the books, caches it. */
static bool orders_are_depth_lookup(struct tp_publisher *pub, uint32_t id)
{
    if (id >= pub->params.instruments)
        return tp_pub_orders_are_depth(pub->params.books, id);
    pub->depth_kind[id] =
        tp_pub_orders_are_depth(pub->params.books, id) ? DEPTH_ORDERS : DEPTH_VENUE_LEVELS;
    return pub->depth_kind[id] == DEPTH_ORDERS;
}

static inline bool orders_are_depth(struct tp_publisher *pub, uint32_t id)
{
    if (id < pub->params.instruments && pub->depth_kind[id] != DEPTH_UNKNOWN)
        return pub->depth_kind[id] == DEPTH_ORDERS;
    return orders_are_depth_lookup(pub, id);
}

/* Notes that event `event` (the current one, or ONE_CALL_EVENT) changed instrument id
 * (< params.instruments). With an output (`out`) there is no state table. */
__attribute__((always_inline)) static inline void mark_event_to(struct tp_publisher *pub, bool out,
                                                                uint32_t id, uint64_t event)
{
    if (out || pub->state == NULL) { /* no entry to write (an event file's bus) */
        if (event != ONE_CALL_EVENT)
            pub->marked_event = event;
        return;
    }
    /* Stored, not tested first: a load of a line out of L1 stalls, a store does not. */
    pub->dirty_event[id] = event;
    if (pub->listed[id] == pub->listing)
        return;
    pub->listed[id] = pub->listing;
    pub->due[pub->n_due++] = id;
    /* The event's or the burst's end writes the entry: start fetching its lock and header line now,
     * so the miss overlaps the encoding of the event's records. */
    if (id < pub->state_instruments)
        __builtin_prefetch(tp_state_entry_at(pub->state, id), 1);
}

__attribute__((always_inline)) static inline void mark_event(struct tp_publisher *pub, uint32_t id,
                                                             uint64_t event)
{
    mark_event_to(pub, false, id, event);
}

/* Notes that the current event changed instrument id (< params.instruments). */
__attribute__((always_inline)) static inline void mark_tracked(struct tp_publisher *pub,
                                                               uint32_t id)
{
    mark_event(pub, id, pub->event);
}

static inline void mark_dirty(struct tp_publisher *pub, uint32_t id)
{
    if (id < pub->params.instruments)
        mark_tracked(pub, id);
}

/* ---- change records -> tpout messages ------------------------------------------------------ */

_Static_assert(TPOUT_ORDER_EVENT_ACTION_OFFSET == TPOUT_ORDER_EVENT_SIDE_OFFSET + 1 &&
                   TPOUT_ORDER_EVENT_REMAINING_QUANTITY_OFFSET == TPOUT_ORDER_EVENT_SIDE_OFFSET + 8,
               "order event layout");
/* A group header is (blockLength u16, numInGroup u16): one 4-byte store. Both messages' level
 * groups have one entry layout, which write_level writes. */
_Static_assert(GROUP_HDR == 4 && TPOUT_ORDER_EVENT_LEVELS_BLOCK_LENGTH == LEVEL_ENTRY &&
                   TPOUT_ORDER_EVENT_LEVELS_PRICE_OFFSET == TPOUT_BOOK_UPDATE_LEVELS_PRICE_OFFSET &&
                   TPOUT_ORDER_EVENT_LEVELS_QUANTITY_OFFSET ==
                       TPOUT_BOOK_UPDATE_LEVELS_QUANTITY_OFFSET &&
                   TPOUT_ORDER_EVENT_LEVELS_ORDER_COUNT_OFFSET ==
                       TPOUT_BOOK_UPDATE_LEVELS_ORDER_COUNT_OFFSET,
               "level group layout");

static uint8_t *level_entry(uint8_t *b, uint16_t block_len, unsigned i)
{
    return b + block_len + GROUP_HDR + i * LEVEL_ENTRY;
}

/* A level entry in three 8-byte stores: (side, level, action, padding, orderCount), price, qty. */
_Static_assert(TPOUT_BOOK_UPDATE_LEVELS_SIDE_OFFSET == 0 &&
                   TPOUT_BOOK_UPDATE_LEVELS_LEVEL_OFFSET == 1 &&
                   TPOUT_BOOK_UPDATE_LEVELS_ACTION_OFFSET == 2 &&
                   TPOUT_BOOK_UPDATE_LEVELS_ORDER_COUNT_OFFSET == 4,
               "level entry layout");
static inline void write_level(uint8_t *e, uint8_t side, uint8_t level, uint8_t action,
                               int64_t price, int64_t qty, uint32_t count)
{
    uint32_t out_count = count ? count : (uint32_t)TPOUT_COUNT_NULL_VALUE;
    tpout_store_u64(e, side | (uint64_t)level << 8 | (uint64_t)action << 16 |
                           (uint64_t)out_count << 32);
    tpout_store_u64(e + TPOUT_BOOK_UPDATE_LEVELS_PRICE_OFFSET, (uint64_t)price);
    tpout_store_u64(e + TPOUT_BOOK_UPDATE_LEVELS_QUANTITY_OFFSET, (uint64_t)qty);
}

/* The levels group header of the BookUpdate claimed at b, for `entries` entries. */
static inline void write_level_group(uint8_t *b, unsigned entries)
{
    tpout_store_u32(b + TPOUT_BOOK_UPDATE_BLOCK_LENGTH, LEVEL_ENTRY | entries << 16);
}

__attribute__((always_inline)) static inline uint8_t *book_update(struct tp_publisher *pub,
                                                                  uint32_t id, unsigned entries,
                                                                  uint8_t flags,
                                                                  const struct tp_feed_info *info)
{
    uint8_t *b = claim(pub, id, TPOUT_BOOK_UPDATE_TEMPLATE_ID, TPOUT_BOOK_UPDATE_BLOCK_LENGTH,
                       GROUP_HDR + entries * LEVEL_ENTRY, TP_TOPIC_DEPTH, flags, info);
    if (b != NULL)
        write_level_group(b, entries);
    return b;
}

/* tpout LevelAction of a NEW, CHANGE, DELETE or OVERLAY record (the others have their own): the
 * first three have their tpout values (asserted with order_level), an overlay is a change. */
static inline uint8_t out_level_action(uint8_t action)
{
    return action < 3 ? action : OUT_LEVEL_CHANGE;
}

/* The first entry of the BookUpdate claimed at b: a NEW, CHANGE, DELETE or OVERLAY of a level (at
 * most 255). */
static inline void write_one_level(uint8_t *b, const struct tp_book_change *c)
{
    write_level(level_entry(b, TPOUT_BOOK_UPDATE_BLOCK_LENGTH, 0), c->side == TP_SIDE_ASK ? 1 : 0,
                (uint8_t)c->level, out_level_action(c->action), c->price, c->qty, c->count);
}

static void publish_level(struct tp_publisher *pub, const struct tp_book_change *c,
                          const struct tp_feed_info *info)
{
    if (c->level > 255 && c->action != TP_LEVEL_DELETE_THRU) {
        pub->counters.skipped++; /* deeper than any consumer book */
        return;
    }
    uint8_t flags = c->book == TP_BOOK_IMPLIED ? TP_PUB_F_IMPLIED : 0;
    uint8_t side = c->side == TP_SIDE_ASK ? 1 : 0;
    uint8_t *b;
    switch (c->action) {
    case TP_LEVEL_DELETE_THRU:
        b = book_update(pub, c->instrument, 1, flags, info);
        if (b != NULL)
            write_level(level_entry(b, TPOUT_BOOK_UPDATE_BLOCK_LENGTH, 0), side, 0, OUT_LEVEL_CLEAR,
                        TP_PUB_PRICE_NULL, 0, 0);
        return;
    case TP_LEVEL_DELETE_FROM: {
        unsigned k = c->level;
        b = book_update(pub, c->instrument, k, flags, info);
        for (unsigned i = 0; b != NULL && i < k; i++)
            write_level(level_entry(b, TPOUT_BOOK_UPDATE_BLOCK_LENGTH, i), side, 1,
                        OUT_LEVEL_DELETE, TP_PUB_PRICE_NULL, 0, 0);
        return;
    }
    default:
        b = book_update(pub, c->instrument, 1, flags, info);
        if (b != NULL)
            write_one_level(b, c);
        return;
    }
}

static void publish_clear(struct tp_publisher *pub, const struct tp_book_change *c,
                          const struct tp_feed_info *info)
{
    uint8_t *b = book_update(pub, c->instrument, 2, 0, info);
    for (unsigned side = 0; b != NULL && side < 2; side++)
        write_level(level_entry(b, TPOUT_BOOK_UPDATE_BLOCK_LENGTH, side), (uint8_t)side, 0,
                    OUT_LEVEL_CLEAR, TP_PUB_PRICE_NULL, 0, 0);
}

/*
 * The side of the state entry a level change alters (TP_PUB_SIDE_*), or 0: implied levels and
 * levels below the ones the entry holds leave it alone.
 */
static inline unsigned level_parts(const struct tp_publisher *pub, const struct tp_book_change *c)
{
    if (c->book == TP_BOOK_IMPLIED)
        return 0;
    if (c->level > pub->params.depth && c->action != TP_LEVEL_DELETE_THRU &&
        c->action != TP_LEVEL_DELETE_FROM)
        return 0;
    return c->side == TP_SIDE_ASK ? TP_PUB_SIDE_ASK : TP_PUB_SIDE_BID;
}

/*
 * Adds what a NEW, CHANGE or DELETE of a level of the book the state entry holds as depth (the
 * aggregated order book of an order-only instrument) alters to the instrument's parts. The entry
 * holds those levels best first with no gaps, so level L there is entry level L-1: the side's
 * first such change of the event is kept to be applied to the entry in place.
 */
static inline void note_depth_level(struct tp_publisher *pub, const struct tp_book_change *c)
{
    uint32_t id = c->instrument;
    /* Below the levels the entry holds, or no entry (an event file's bus has no state table):
     * write_state would drop the note unread, and noting it was a fifth of an event file's
     * encoding. */
    if (c->level > pub->params.depth || id >= pub->state_instruments)
        return;
    unsigned parts = c->side == TP_SIDE_ASK ? TP_PUB_SIDE_ASK : TP_PUB_SIDE_BID;
    unsigned side = parts == TP_PUB_SIDE_ASK;
    unsigned level_bit = parts << 4;
    if (!(pub->parts[id] & (parts | level_bit))) {
        pub->inplace[2 * id + side] = (struct tp_pub_inplace){.price = c->price,
                                                              .qty = c->qty,
                                                              .count = c->count,
                                                              .level = c->level,
                                                              .action = c->action};
        parts = level_bit;
    }
    pub->parts[id] |= parts;
}

/* Adds what level change c alters to the instrument's parts; `depth_book` as note_depth_level. */
static inline void note_level(struct tp_publisher *pub, const struct tp_book_change *c,
                              bool depth_book)
{
    if (depth_book && (c->action == TP_LEVEL_CHANGE || c->action == TP_LEVEL_NEW ||
                       c->action == TP_LEVEL_DELETE)) {
        note_depth_level(pub, c);
        return;
    }
    unsigned parts = level_parts(pub, c);
    if (parts != 0)
        pub->parts[c->instrument] |= parts;
}

/*
 * How many of the records after ORDER record c, up to end, are level changes its OrderEvent
 * carries: the LEVEL records of the instrument's aggregated order book that follow it (the level
 * the order left or joined; a modify to a new price has two), when that book is the instrument's
 * depth.
 */
_Static_assert(TP_LEVEL_NEW < 3 && TP_LEVEL_CHANGE < 3 && TP_LEVEL_DELETE < 3 &&
                   TP_LEVEL_DELETE_THRU >= 3 && TP_LEVEL_DELETE_FROM >= 3 && TP_LEVEL_OVERLAY >= 3,
               "the level actions an OrderEvent carries are those below 3");
_Static_assert((int)TP_LEVEL_NEW == OUT_LEVEL_NEW && (int)TP_LEVEL_CHANGE == OUT_LEVEL_CHANGE &&
                   (int)TP_LEVEL_DELETE == OUT_LEVEL_DELETE,
               "those actions are their tpout LevelAction values");
static inline bool order_level(const struct tp_book_change *order, const struct tp_book_change *l)
{
    return l->kind == TP_CHANGE_LEVEL && l->book == TP_BOOK_ORDERS && l->action < 3 &&
           l->instrument == order->instrument && l->level <= 255;
}

/* The level records after ORDER record c, up to end, that its OrderEvent carries when the
 * instrument's depth is its aggregated order book (order_level). */
static inline uint32_t levels_after(const struct tp_book_change *c,
                                    const struct tp_book_change *end)
{
    uint32_t k = 0; /* counted, not taken from the pointers: no division by the record size */
    while (c + k + 1 < end && order_level(c, c + k + 1))
        k++;
    return k;
}

static inline uint32_t order_levels(struct tp_publisher *pub, const struct tp_book_change *c,
                                    const struct tp_book_change *end)
{
    if (c + 1 == end || !orders_are_depth(pub, c->instrument))
        return 0;
    return levels_after(c, end);
}

/* tpout OrderAction of each TP_ORDER_* action: add 0, modify 1, delete 2, execute 3. A partial
 * cancel leaves the order with less quantity: a modify. */
static const uint8_t order_action[] = {[TP_ORDER_ADD] = 0,
                                       [TP_ORDER_EXECUTE] = 3,
                                       [TP_ORDER_CANCEL] = 1,
                                       [TP_ORDER_DELETE] = 2,
                                       [TP_ORDER_MODIFY] = 1};

/*
 * Writes the block of the OrderEvent claimed at b for an order with an ORDER record's fields, and
 * the header of its levels group of k entries. Returns where the first entry goes.
 */
__attribute__((always_inline)) static inline uint8_t *
write_order_block(uint8_t *b, uint64_t order_id, uint64_t priority, int64_t price, int64_t qty,
                  uint32_t count, uint8_t side, uint8_t action, uint32_t k)
{
    /* quantity: displayed (add, modify), executed (execute), 0 (delete); remainingQuantity: what
     * the order has left in every case. An execution's record carries what traded in count,
     * printing or not. */
    int64_t remaining = action == TP_ORDER_DELETE ? 0 : qty;
    int64_t quantity = action == TP_ORDER_EXECUTE ? (int64_t)count : remaining;
    tpout_store_u64(b + TPOUT_ORDER_EVENT_ORDER_ID_OFFSET, order_id);
    tpout_store_u64(b + TPOUT_ORDER_EVENT_PRIORITY_OFFSET, priority);
    tpout_store_u64(b + TPOUT_ORDER_EVENT_PRICE_OFFSET, (uint64_t)price);
    tpout_store_u64(b + TPOUT_ORDER_EVENT_QUANTITY_OFFSET, (uint64_t)quantity);
    /* side, action and six padding bytes in one store */
    tpout_store_u64(b + TPOUT_ORDER_EVENT_SIDE_OFFSET,
                    (side == TP_SIDE_ASK ? 1u : 0u) | (uint64_t)order_action[action] << 8);
    tpout_store_u64(b + TPOUT_ORDER_EVENT_REMAINING_QUANTITY_OFFSET, (uint64_t)remaining);
    /* the levels group: (blockLength, numInGroup), then the entries */
    tpout_store_u32(b + TPOUT_ORDER_EVENT_BLOCK_LENGTH, LEVEL_ENTRY | k << 16);
    return b + TPOUT_ORDER_EVENT_BLOCK_LENGTH + GROUP_HDR;
}

/*
 * Fills the OrderEvent claimed at b (NULL: refused) for ORDER record c, carrying the k level
 * changes that follow it, each also noted for the state entry (note_depth_level) when `tracked`.
 * Returns k, the level records it took.
 */
__attribute__((always_inline)) static inline uint32_t
write_order_event(struct tp_publisher *pub, uint8_t *b, const struct tp_book_change *c, uint32_t k,
                  bool tracked)
{
    if (b == NULL) {
        for (uint32_t j = 1; tracked && j <= k; j++)
            note_depth_level(pub, &c[j]); /* the state entry follows the books all the same */
        return k;
    }
    uint8_t *e = write_order_block(b, c->order_id, c->aux, c->price, c->qty, c->count, c->side,
                                   c->action, k);
    for (const struct tp_book_change *l = c + 1; l <= c + k; l++, e += LEVEL_ENTRY) {
        /* order_level took NEW, CHANGE and DELETE only: their tpout actions have their values */
        write_level(e, l->side == TP_SIDE_ASK ? 1 : 0, (uint8_t)l->level, l->action, l->price,
                    l->qty, l->count);
        if (tracked)
            note_depth_level(pub, l);
    }
    return k;
}

/*
 * An OrderEvent for ORDER record c, carrying the k level changes that follow it (order_levels).
 * Returns how many of those level records it took: k, or 0 for an order it cannot publish (they
 * then go on their own).
 */
static uint32_t publish_order(struct tp_publisher *pub, const struct tp_book_change *c, uint32_t k,
                              bool tracked, const struct tp_feed_info *info)
{
    if (c->action >= sizeof(order_action)) {
        pub->counters.skipped++;
        return 0;
    }
    uint8_t topic = k != 0 ? TP_RECORD_ORDER_DEPTH : TP_TOPIC_ORDERS;
    uint8_t *b = claim(pub, c->instrument, TPOUT_ORDER_EVENT_TEMPLATE_ID,
                       TPOUT_ORDER_EVENT_BLOCK_LENGTH, GROUP_HDR + k * LEVEL_ENTRY, topic, 0, info);
    return write_order_event(pub, b, c, k, tracked);
}

/* A Trade of instrument id; `aggressor` is the side of the order that took liquidity. */
__attribute__((always_inline)) static inline void
publish_trade_of(struct tp_publisher *pub, uint32_t id, int64_t price, int64_t qty,
                 uint64_t trade_id, uint8_t aggressor, const struct tp_feed_info *info)
{
    uint8_t *b = claim(pub, id, TPOUT_TRADE_TEMPLATE_ID, TPOUT_TRADE_BLOCK_LENGTH, 0,
                       TP_TOPIC_TRADES, 0, info);
    if (b == NULL)
        return;
    tpout_store_u64(b + TPOUT_TRADE_PRICE_OFFSET, (uint64_t)price);
    tpout_store_u64(b + TPOUT_TRADE_QUANTITY_OFFSET, (uint64_t)qty);
    tpout_store_u64(b + TPOUT_TRADE_TRADE_ID_OFFSET, trade_id);
    tpout_store_u32(b + TPOUT_TRADE_ORDER_COUNT_OFFSET, (uint32_t)TPOUT_COUNT_NULL_VALUE);
    b[TPOUT_TRADE_AGGRESSOR_SIDE_OFFSET] = aggressor == TP_SIDE_BID   ? 1
                                           : aggressor == TP_SIDE_ASK ? 2
                                                                      : 0;
    memset(b + TPOUT_TRADE_AGGRESSOR_SIDE_OFFSET + 1, 0,
           TPOUT_TRADE_BLOCK_LENGTH - TPOUT_TRADE_AGGRESSOR_SIDE_OFFSET - 1);
}

static void publish_trade(struct tp_publisher *pub, const struct tp_book_change *c,
                          const struct tp_feed_info *info)
{
    publish_trade_of(pub, c->instrument, c->price, c->qty, c->aux, c->side, info);
}

static void publish_status(struct tp_publisher *pub, uint32_t id, uint8_t status,
                           uint8_t venue_status, const struct tp_feed_info *info)
{
    uint8_t *b = claim(pub, id, TPOUT_INSTRUMENT_STATUS_TEMPLATE_ID,
                       TPOUT_INSTRUMENT_STATUS_BLOCK_LENGTH, 0, TP_TOPIC_STATUS, 0, info);
    if (b == NULL)
        return;
    b[TPOUT_INSTRUMENT_STATUS_TRADING_STATUS_OFFSET] = status;
    b[TPOUT_INSTRUMENT_STATUS_VENUE_STATUS_OFFSET] = venue_status;
    memset(b + TPOUT_INSTRUMENT_STATUS_VENUE_STATUS_OFFSET + 1, 0,
           TPOUT_INSTRUMENT_STATUS_BLOCK_LENGTH - TPOUT_INSTRUMENT_STATUS_VENUE_STATUS_OFFSET - 1);
}

static void publish_stat(struct tp_publisher *pub, const struct tp_book_change *c,
                         const struct tp_feed_info *info)
{
    int type = tp_pub_stat_type(c->action);
    if (type < 0) {
        pub->counters.skipped++;
        return;
    }
    uint8_t *b = claim(pub, c->instrument, TPOUT_STATISTICS_TEMPLATE_ID,
                       TPOUT_STATISTICS_BLOCK_LENGTH, 0, TP_TOPIC_STATUS, 0, info);
    if (b == NULL)
        return;
    /* Volumes and open interest are counts: the value is the quantity and there is no price.
     * Price statistics carry the size the venue gave with them (ITCH crosses: shares; VWAP:
     * volume), null when it gave none; an imbalance always has its size, even 0. */
    int is_count = type == TPOUT_STAT_TYPE_VOLUME || type == TPOUT_STAT_TYPE_OPEN_INTEREST ||
                   type == TPOUT_STAT_TYPE_CLEARED_VOLUME;
    int has_qty = is_count || type == TPOUT_STAT_TYPE_IMBALANCE || c->qty != 0;
    memset(b + TPOUT_STATISTICS_STAT_TYPE_OFFSET, 0,
           TPOUT_STATISTICS_BLOCK_LENGTH - TPOUT_STATISTICS_STAT_TYPE_OFFSET);
    b[TPOUT_STATISTICS_STAT_TYPE_OFFSET] = (uint8_t)type;
    tpout_store_u64(b + TPOUT_STATISTICS_PRICE_OFFSET,
                    (uint64_t)(is_count ? TP_PUB_PRICE_NULL : c->price));
    tpout_store_u64(b + TPOUT_STATISTICS_QUANTITY_OFFSET,
                    (uint64_t)(has_qty ? c->qty : TPOUT_QUANTITY_NULL_NULL_VALUE));
}

/*
 * Publishes each change record and notes what it alters in the instrument's state entry, written
 * at the event's end. One dispatch on the kind does both, and each record marks its instrument
 * (a variable remembering the last one marked cost more: gcc kept it on the stack across the
 * inlined claim). Out of line: on_changes keeps ITCH's ORDER path to itself.
 */
__attribute__((noinline)) static void on_any_changes(struct tp_publisher *pub,
                                                     const struct tp_feed_info *info,
                                                     const struct tp_book_change *c, uint32_t n)
{
    for (const struct tp_book_change *r = c, *end = c + n; r < end; r++) {
        uint32_t id = r->instrument;
        bool tracked = id < pub->params.instruments;
        switch (r->kind) {
        case TP_CHANGE_LEVEL: {
            /* Orders-aggregated levels are the depth of order-only books; books with both kinds
             * publish their venue levels and send the orders as OrderEvents. */
            bool depth_book = r->book == TP_BOOK_ORDERS;
            if (depth_book && !orders_are_depth(pub, id))
                continue;
            publish_level(pub, r, info);
            if (tracked)
                note_level(pub, r, depth_book);
            break;
        }
        case TP_CHANGE_ORDER:
            /* An order and the levels it changed go as one record (order-only books). */
            r += publish_order(pub, r, order_levels(pub, r, end), tracked, info);
            break;
        case TP_CHANGE_TRADE:
            publish_trade(pub, r, info);
            if (tracked)
                pub->parts[id] |= TP_PUB_PART_TRADE;
            break;
        case TP_CHANGE_CLEAR:
            /* An order-level book emptied alone (an MBO snapshot) leaves the venue levels, the
             * depth of books with both kinds, as they are: as for its level records. Order-level
             * consumers hear it as the removal of order id 0: every order of the instrument. */
            if (r->book == TP_BOOK_ORDERS && !orders_are_depth(pub, id)) {
                const struct tp_book_change all = {.instrument = id,
                                                   .kind = TP_CHANGE_ORDER,
                                                   .action = TP_ORDER_DELETE,
                                                   .side = TP_SIDE_BID,
                                                   .price = TP_PUB_PRICE_NULL};
                publish_order(pub, &all, 0, false, info);
                continue;
            }
            publish_clear(pub, r, info);
            if (tracked)
                pub->parts[id] |= TP_PUB_PART_ALL;
            break;
        case TP_CHANGE_STATUS:
            publish_status(pub, id, tp_pub_status(r->action), r->action, info);
            if (tracked)
                pub->parts[id] |= TP_PUB_PART_SESSION;
            break;
        case TP_CHANGE_STAT:
            publish_stat(pub, r, info);
            if (tracked)
                pub->parts[id] |= TP_PUB_PART_SESSION;
            break;
        default:
            pub->counters.skipped++;
            continue;
        }
        mark_dirty(pub, id);
    }
}

/* Whether record c is an order of a known instrument whose depth is its aggregated orders. */
static inline bool order_of_order_book(const struct tp_publisher *pub,
                                       const struct tp_book_change *c)
{
    return c->kind == TP_CHANGE_ORDER && c->instrument < pub->known_instruments &&
           pub->depth_kind[c->instrument] == DEPTH_ORDERS;
}

/*
 * Whether such an order (order_of_order_book) goes on on_changes' own path: ITCH's commonest
 * record, an order the bus wants, followed by the one level record it changed (order_levels 1).
 */
static inline bool order_with_one_level(const struct tp_publisher *pub,
                                        const struct tp_book_change *c,
                                        const struct tp_book_change *end)
{
    return pub->params.bus->interest[c->instrument] != 0 && c->action < sizeof(order_action) &&
           c + 1 < end && order_level(c, c + 1) && (c + 2 == end || !order_level(c, c + 2));
}

/*
 * The OrderEvent of order c (order_with_one_level) with the level record after it, its state note
 * and mark (mark_event with `event`); `end_flags` are added to the record's flags
 * (TP_PUB_F_END_OF_EVENT: the event's last, flagged as it is claimed). Returns whether the record
 * was claimed.
 */
__attribute__((always_inline)) static inline bool
publish_order_with_level(struct tp_publisher *pub, bool out, const struct tp_book_change *c,
                         uint8_t end_flags, uint64_t event, const struct tp_feed_info *info)
{
    uint32_t id = c->instrument;
    uint8_t *b = claim_wanted_to(pub, out, id, TPOUT_ORDER_EVENT_TEMPLATE_ID,
                                 TPOUT_ORDER_EVENT_BLOCK_LENGTH, GROUP_HDR + LEVEL_ENTRY,
                                 TP_RECORD_ORDER_DEPTH, pub->flags[id] | end_flags, info);
    write_order_event(pub, b, c, 1, !out); /* an output has no state entry to note it for */
    mark_event_to(pub, out, id, event);
    return b != NULL;
}

/*
 * ITCH's orders, each with the one level it changed (order_with_one_level), one OrderEvent each,
 * from c on (order_of_order_book is true of c); the records from the first other one on go to
 * on_any_changes. Its own function, so gcc keeps this path's values in registers and its sizes
 * constant.
 */
__attribute__((always_inline)) static inline void orders_to(struct tp_publisher *pub, bool out,
                                                            const struct tp_feed_info *info,
                                                            const struct tp_book_change *c,
                                                            uint32_t n)
{
    const struct tp_book_change *end = c + n;
    while (order_with_one_level(pub, c, end)) {
        publish_order_with_level(pub, out, c, 0, pub->event, info);
        c += 2;
        if (c == end)
            return;
        if (!order_of_order_book(pub, c))
            break;
    }
    on_any_changes(pub, info, c, (uint32_t)(end - c));
}

__attribute__((noinline)) static void on_orders(struct tp_publisher *pub,
                                                const struct tp_feed_info *info,
                                                const struct tp_book_change *c, uint32_t n)
{
    orders_to(pub, false, info, c, n);
}

__attribute__((noinline)) static void on_orders_output(struct tp_publisher *pub,
                                                       const struct tp_feed_info *info,
                                                       const struct tp_book_change *c, uint32_t n)
{
    orders_to(pub, true, info, c, n);
}

/*
 * Whether record c is a level of a venue's own book (MDP3's outright or implied levels) that
 * publish_level sends as a BookUpdate of one entry, of a known instrument the bus wants.
 */
static inline bool venue_level(const struct tp_publisher *pub, const struct tp_book_change *c)
{
    return c->kind == TP_CHANGE_LEVEL && c->book != TP_BOOK_ORDERS &&
           c->action != TP_LEVEL_DELETE_THRU && c->action != TP_LEVEL_DELETE_FROM &&
           c->level <= 255 && c->instrument < pub->known_instruments &&
           pub->params.bus->interest[c->instrument] != 0;
}

/*
 * Whether record c is an order of a book whose depth is its venue levels (MDP3's MBO orders), of
 * a known instrument the bus wants: publish_order sends it with no level entries (order_levels 0).
 */
static inline bool venue_order(struct tp_publisher *pub, const struct tp_book_change *c)
{
    return c->kind == TP_CHANGE_ORDER && c->instrument < pub->known_instruments &&
           c->action < sizeof(order_action) && pub->params.bus->interest[c->instrument] != 0 &&
           !orders_are_depth(pub, c->instrument);
}

/*
 * Whether record c is a level aggregated from the orders of a known instrument whose depth is its
 * venue levels (MDP3's MBO books): not published (on_any_changes skips it too).
 */
static inline bool aggregated_level_of_venue_book(struct tp_publisher *pub,
                                                  const struct tp_book_change *c)
{
    return c->kind == TP_CHANGE_LEVEL && c->book == TP_BOOK_ORDERS &&
           c->instrument < pub->known_instruments && !orders_are_depth(pub, c->instrument);
}

/*
 * MDP3's records: venue levels (venue_level), one BookUpdate each, and orders of books with
 * venue levels (venue_order), one OrderEvent each without levels, skipping the levels aggregated
 * from those orders, from c on; any other record goes to on_any_changes alone, but an order of an
 * order-only book, which takes the rest of the call there. The same records, bytes and state
 * notes as the general loop, with the sizes constant, the bounds and interest tested once and no
 * kind dispatch.
 */
__attribute__((always_inline)) static inline void
venue_records_to(struct tp_publisher *pub, bool out, const struct tp_feed_info *info,
                 const struct tp_book_change *c, uint32_t n)
{
    for (const struct tp_book_change *end = c + n; c < end; c++) {
        uint32_t id = c->instrument;
        if (venue_level(pub, c)) {
            uint8_t flags = (c->book == TP_BOOK_IMPLIED ? TP_PUB_F_IMPLIED : 0) | pub->flags[id];
            uint8_t *b = claim_wanted_to(pub, out, id, TPOUT_BOOK_UPDATE_TEMPLATE_ID,
                                         TPOUT_BOOK_UPDATE_BLOCK_LENGTH, GROUP_HDR + LEVEL_ENTRY,
                                         TP_TOPIC_DEPTH, flags, info);
            if (b != NULL) {
                write_level_group(b, 1);
                write_one_level(b, c);
            }
            pub->parts[id] |= level_parts(pub, c);
        } else if (venue_order(pub, c)) {
            uint8_t *b = claim_wanted_to(pub, out, id, TPOUT_ORDER_EVENT_TEMPLATE_ID,
                                         TPOUT_ORDER_EVENT_BLOCK_LENGTH, GROUP_HDR, TP_TOPIC_ORDERS,
                                         pub->flags[id], info);
            write_order_event(pub, b, c, 0, false);
            /* The aggregated levels it changed follow it: skipped, as below, with no more tests
             * of the instrument (venue_order made them). */
            c += levels_after(c, end);
        } else if (aggregated_level_of_venue_book(pub, c)) {
            continue; /* consumers get the venue's levels */
        } else if (c->kind != TP_CHANGE_ORDER) {
            /* A trade, statistic, status, clear or other level: alone through the general loop
             * (an event's call has them among its venue records). */
            on_any_changes(pub, info, c, 1);
            continue;
        } else {
            on_any_changes(pub, info, c, (uint32_t)(end - c));
            return;
        }
        mark_tracked(pub, id);
    }
}

__attribute__((noinline)) static void on_venue_records(struct tp_publisher *pub,
                                                       const struct tp_feed_info *info,
                                                       const struct tp_book_change *c, uint32_t n)
{
    venue_records_to(pub, false, info, c, n);
}

__attribute__((noinline)) static void on_venue_records_output(struct tp_publisher *pub,
                                                              const struct tp_feed_info *info,
                                                              const struct tp_book_change *c,
                                                              uint32_t n)
{
    venue_records_to(pub, true, info, c, n);
}

/*
 * The sink's changes callback: a call that starts with an order of an order-only book goes to
 * on_orders (ITCH's), the others (MDP3's) to on_venue_records, each jumped to with no frame here.
 */
__attribute__((always_inline)) static inline void changes_to(struct tp_publisher *pub, bool out,
                                                             const struct tp_feed_info *info,
                                                             const struct tp_book_change *c,
                                                             uint32_t n)
{
    if (n != 0 && order_of_order_book(pub, c))
        (out ? on_orders_output : on_orders)(pub, info, c, n);
    else
        (out ? on_venue_records_output : on_venue_records)(pub, info, c, n);
}

static void on_changes(void *ctx, const struct tp_feed_info *info, const struct tp_book_change *c,
                       uint32_t n)
{
    changes_to(ctx, false, info, c, n);
}

static void on_changes_output(void *ctx, const struct tp_feed_info *info,
                              const struct tp_book_change *c, uint32_t n)
{
    changes_to(ctx, true, info, c, n);
}

/* ---- state table ---------------------------------------------------------------------------- */

/*
 * Applies a side's one level change of the event to the entry's copy of that side (`*levels`
 * levels, best first, at most `depth`): a changed level is rewritten, a new one shifts those
 * below it down (the last falls off a full side), a removed one shifts them up (a full side takes
 * the next level from the books). False when the change does not fit the entry (then the side
 * is copied from the books instead).
 */
__attribute__((always_inline)) static inline bool
apply_level_change(const struct tp_publisher *pub, uint32_t id, unsigned ask,
                   const struct tp_pub_inplace *in, unsigned depth, struct tp_level *lv,
                   uint16_t *levels)
{
    unsigned n = *levels, at = in->level - 1u;
    if (in->level == 0 || in->level > depth || n > depth)
        return false;
    struct tp_level level = {
        .price = in->price, .qty = in->qty, .orders = (int32_t)in->count, .reserved = 0};
    switch (in->action) {
    case TP_LEVEL_CHANGE:
        if (at >= n)
            return false;
        lv[at] = level;
        return true;
    case TP_LEVEL_NEW: {
        if (at > n)
            return false;
        unsigned kept = n < depth ? n : depth - 1; /* levels that stay in the entry */
        memmove(lv + at + 1, lv + at, (kept - at) * sizeof(*lv));
        lv[at] = level;
        *levels = (uint16_t)(kept + 1);
        return true;
    }
    case TP_LEVEL_DELETE:
        if (at >= n)
            return false;
        memmove(lv + at, lv + at + 1, (n - at - 1) * sizeof(*lv));
        if (n < depth)
            *levels = (uint16_t)(n - 1);
        else /* the side was full: the level below it comes up, if the books have one */
            *levels = tp_pub_read_order_level(pub->params.books, id, ask, depth,
                                              (struct tp_pub_level *)&lv[depth - 1]) == 0
                          ? (uint16_t)depth
                          : (uint16_t)(depth - 1);
        return true;
    default:
        return false;
    }
}

/*
 * Writes instrument id's state entry: the sequence fields always, the parts of the state in
 * `parts` (TP_PUB_SIDE_*, TP_PUB_PART_*, PART_LEVEL_*: what the event changed), everything the
 * first time or after a new definition.
 */
static void write_state(struct tp_publisher *pub, uint32_t id,
                        const struct tp_pub_event_info *event, unsigned parts)
{
    struct tp_state_table *table = pub->state;
    if (id >= pub->params.instruments)
        return;
    /* What the instrument's events changed since its entry was last written goes in now. */
    parts |= pub->parts[id];
    pub->parts[id] = 0;
    if (id >= pub->state_instruments)
        return;
    unsigned depth = pub->state_depth;
    struct tp_pub_definition def;
    bool define = !pub->defined[id];
    if (define) {
        if (tp_pub_read_definition(pub->params.registry, id, &def) != 0)
            return;
        parts = TP_PUB_PART_ALL;
    }
    struct tp_state_entry *e = tp_state_write_begin(table, id);
    struct tp_book_header *h = &e->book;
    /* A side with one level change follows it; if it cannot, it is copied below. */
    if ((parts & (PART_LEVEL_BID | TP_PUB_SIDE_BID)) == PART_LEVEL_BID &&
        !apply_level_change(pub, id, 0, &pub->inplace[2 * id], depth, tp_state_bids(e),
                            &h->bid_levels))
        parts |= TP_PUB_SIDE_BID;
    if ((parts & (PART_LEVEL_ASK | TP_PUB_SIDE_ASK)) == PART_LEVEL_ASK &&
        !apply_level_change(pub, id, 1, &pub->inplace[2 * id + 1], depth, tp_state_asks(table, e),
                            &h->ask_levels))
        parts |= TP_PUB_SIDE_ASK;
    /* The levels go from the books straight into the entry, inside the sequence lock (an event
     * that changed one level of a side, the commonest, has nothing to read there). */
    struct tp_pub_book book;
    if ((parts & TP_PUB_PART_ALL) != 0 &&
        tp_pub_read_book(pub->params.books, id, depth, parts & TP_PUB_PART_ALL, &book,
                         (struct tp_pub_level *)tp_state_bids(e),
                         (struct tp_pub_level *)tp_state_asks(table, e)) != 0) {
        tp_state_write_end(e);
        return;
    }
    if (define) {
        h->instrument_id = id;
        h->venue = def.venue;
        h->security_kind = def.security_kind;
        memcpy(h->symbol, def.symbol, TP_SYMBOL_LEN);
        h->tick_size = def.tick;
        h->rpt_seq = TPOUT_RPT_SEQ_NULL_VALUE;
        pub->defined[id] = 1;
    }
    h->flags = pub->flags[id];
    h->bus_sequence = pub->last_sequence;
    if (event != NULL) {
        h->venue_seq = event->venue_seq;
        h->venue_time_ns = event->venue_time;
        h->recv_tsc = event->rx_tsc;
    }
    h->updates++;
    if (parts & TP_PUB_SIDE_BID)
        h->bid_levels = book.bid_levels;
    if (parts & TP_PUB_SIDE_ASK)
        h->ask_levels = book.ask_levels;
    if (parts & TP_PUB_PART_TRADE) {
        h->last_trade.price = book.last_price;
        h->last_trade.qty = book.last_qty;
        h->last_trade.aggressor = book.aggressor;
        h->volume = book.volume;
    }
    if (parts & TP_PUB_PART_SESSION) {
        h->trading_status = book.trading_status;
        h->open = book.open;
        h->high = book.high;
        h->low = book.low;
        h->settle = book.settle;
    }
    tp_state_write_end(e);
    pub->counters.state_writes++;
}

/* Receive-to-publish latency of the event just published (one in TP_PUB_LATENCY_EVERY). */
__attribute__((noinline, cold)) static void sample_latency(struct tp_publisher *pub,
                                                           const struct tp_feed_info *info)
{
    pub->latency_countdown = TP_PUB_LATENCY_EVERY;
    uint64_t from = info->rx_tsc > pub->released_tsc ? info->rx_tsc : pub->released_tsc;
    if (pub->params.latency != NULL && pub->params.clock != NULL)
        tp_hist_record(pub->params.latency, pub->params.clock() - from);
}

void tp_publisher_held(struct tp_publisher *pub, uint64_t rx_tsc, uint64_t released_tsc)
{
    if (pub->params.gap_wait != NULL)
        tp_hist_record(pub->params.gap_wait, released_tsc > rx_tsc ? released_tsc - rx_tsc : 0);
    if (released_tsc > pub->released_tsc)
        pub->released_tsc = released_tsc;
}

void tp_publisher_held_applied(struct tp_publisher *pub)
{
    pub->released_tsc = 0;
}

static inline struct tp_pub_event_info event_info(const struct tp_feed_info *info)
{
    return (struct tp_pub_event_info){
        .venue_seq = info->packet_seq, .venue_time = info->venue_time, .rx_tsc = info->rx_tsc};
}

/*
 * What follows the end of an event whose venue fields are kept (`published`: the event had a
 * record): the state entries outside a burst, the latency sample. Inside an rx burst the entries
 * are written at its end, once per instrument (the state table is a conflated view: the burst's
 * events of an instrument give one entry).
 */
__attribute__((always_inline)) static inline void
event_done(struct tp_publisher *pub, const struct tp_feed_info *info, bool published)
{
    pub->counters.events++;
    if (!pub->in_burst)
        write_due_states(pub);
    if (published && --pub->latency_countdown == 0)
        sample_latency(pub, info);
}

/* What follows the commit of a numbered event's last record: the log of its venue fields (the
 * entries are written now when the log is full), then event_done. */
__attribute__((always_inline)) static inline void
event_ended(struct tp_publisher *pub, const struct tp_feed_info *info, bool published)
{
    if (pub->n_ended == TP_PUB_EVENT_LOG)
        write_due_states(pub);
    pub->ended[pub->n_ended++] = event_info(info);
    pub->event++;
    event_done(pub, info, published);
}

__attribute__((always_inline)) static inline void
end_of_event_to(struct tp_publisher *pub, bool out, const struct tp_feed_info *info)
{
    bool published = pub->pending != NULL;
    end_event_records_to(pub, out);
    event_ended(pub, info, published);
}

static void on_end_of_event(void *ctx, const struct tp_feed_info *info)
{
    end_of_event_to(ctx, false, info);
}

static void on_end_of_event_output(void *ctx, const struct tp_feed_info *info)
{
    end_of_event_to(ctx, true, info);
}

/*
 * The sink's event_changes callback (ITCH: every message is an event): on_changes then
 * on_end_of_event. An event of one order with its one level, ITCH's commonest, has its record
 * claimed with the end-of-event flag and committed at once, with nothing rewritten, and its venue
 * fields go straight to its instrument's one_call (ONE_CALL_EVENT), not through the log.
 */
__attribute__((always_inline)) static inline void
event_changes_to(struct tp_publisher *pub, bool out, const struct tp_feed_info *info,
                 const struct tp_book_change *c, uint32_t n)
{
    if (n == 2 && order_of_order_book(pub, c) && order_with_one_level(pub, c, c + 2)) {
        bool published =
            publish_order_with_level(pub, out, c, TP_PUB_F_END_OF_EVENT, ONE_CALL_EVENT, info);
        if (!out) /* an output's bus has no state entry to take them */
            pub->one_call[c->instrument] = event_info(info);
        /* flagged already: end_event_records without the rewrite */
        commit_pending_to(pub, out, 0);
        if (!pub->in_burst)
            flush_outside_burst(pub);
        event_done(pub, info, published);
        return;
    }
    changes_to(pub, out, info, c, n);
    end_of_event_to(pub, out, info);
}

static void on_event_changes(void *ctx, const struct tp_feed_info *info,
                             const struct tp_book_change *c, uint32_t n)
{
    event_changes_to(ctx, false, info, c, n);
}

static void on_event_changes_output(void *ctx, const struct tp_feed_info *info,
                                    const struct tp_book_change *c, uint32_t n)
{
    event_changes_to(ctx, true, info, c, n);
}

/*
 * Whether order change oc goes on on_order_changes_output's own path: the order of a known
 * instrument the bus wants, whose depth is its orders, with the one level it changed (1 to 255:
 * order_level). The others take the records' path.
 */
static inline bool order_change_direct(const struct tp_publisher *pub,
                                       const struct tp_order_change *oc)
{
    uint32_t id = oc->instrument;
    return id < pub->known_instruments && pub->depth_kind[id] == DEPTH_ORDERS &&
           pub->params.bus->interest[id] != 0 && oc->action < sizeof(order_action) &&
           oc->level - 1u < 255u && oc->level_action < 3;
}

/* The OrderEvent of order change oc (order_change_direct) with its level, claimed with
 * `end_flags` added (order_with_one_level's record, for an output); whether it was claimed. */
__attribute__((always_inline)) static inline bool
publish_order_change(struct tp_publisher *pub, const struct tp_order_change *oc, uint8_t end_flags,
                     const struct tp_feed_info *info)
{
    uint32_t id = oc->instrument;
    uint8_t *b = claim_wanted_to(pub, true, id, TPOUT_ORDER_EVENT_TEMPLATE_ID,
                                 TPOUT_ORDER_EVENT_BLOCK_LENGTH, GROUP_HDR + LEVEL_ENTRY,
                                 TP_RECORD_ORDER_DEPTH, pub->flags[id] | end_flags, info);
    if (b == NULL)
        return false;
    uint8_t *e = write_order_block(b, oc->order_id, oc->priority, oc->price, oc->qty, oc->count,
                                   oc->side, oc->action, 1);
    write_level(e, oc->side == TP_SIDE_ASK ? 1 : 0, (uint8_t)oc->level, oc->level_action, oc->price,
                (int64_t)(oc->level_size >> TP_ORDER_CHANGE_COUNT_BITS),
                (uint32_t)(oc->level_size & ((1u << TP_ORDER_CHANGE_COUNT_BITS) - 1)));
    return true;
}

/* on_order_changes_output's way for changes off its path: expanded, as records. Out of line, so
 * that the records' room is not in the common path's frame. */
__attribute__((noinline)) static void order_changes_as_records(struct tp_publisher *pub,
                                                               const struct tp_feed_info *info,
                                                               const struct tp_order_change *oc,
                                                               uint32_t n)
{
    struct tp_book_change records[6];
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        k += tp_order_change_expand(&oc[i], &records[k]);
    event_changes_to(pub, true, info, records, k);
}

/*
 * The sink's order_changes callback of a publisher with an output (an ITCH order message's
 * changes, unexpanded: tp_order_change.h): the records event_changes publishes for their
 * expansion, byte for byte, encoded from the order changes with no records written in between.
 * A change off the common path (order_change_direct) has the message's changes expanded and
 * published as records. The output's bus has no state table: nothing is noted for an entry.
 */
static void on_order_changes_output(void *ctx, const struct tp_feed_info *info,
                                    const struct tp_order_change *oc, uint32_t n)
{
    struct tp_publisher *pub = ctx;
    const struct tp_order_change *last = &oc[n - 1];
    if (!order_change_direct(pub, oc) || (n > 1 && !order_change_direct(pub, last))) {
        order_changes_as_records(pub, info, oc, n);
        return;
    }
    if (n == 1 && !(oc->flags & TP_ORDER_CHANGE_F_TRADE)) {
        /* ITCH's commonest event, as event_changes_to's one-call path: claimed flagged as the
         * event's last and committed at once. */
        bool published = publish_order_change(pub, oc, TP_PUB_F_END_OF_EVENT, info);
        commit_pending_to(pub, true, 0);
        if (!pub->in_burst)
            flush_outside_burst(pub);
        event_done(pub, info, published);
        return;
    }
    for (const struct tp_order_change *c = oc; c <= last; c++) {
        publish_order_change(pub, c, 0, info);
        if (c->flags & TP_ORDER_CHANGE_F_TRADE)
            publish_trade_of(pub, c->instrument, c->trade_price, c->count, c->match,
                             c->side == TP_SIDE_BID ? TP_SIDE_ASK : TP_SIDE_BID, info);
        mark_event_to(pub, true, c->instrument, pub->event);
    }
    end_of_event_to(pub, true, info);
}

static void on_instrument(void *ctx, uint32_t id)
{
    struct tp_publisher *pub = ctx;
    if (id < pub->params.instruments)
        pub->depth_kind[id] = DEPTH_UNKNOWN; /* the definition may have configured its book anew */
    struct tp_pub_definition def;
    if (tp_pub_read_definition(pub->params.registry, id, &def) != 0)
        return;
    /*
     * The state entry names the instrument before its definition record can be read, so a
     * reader that looks the new instrument up on that record finds it there.
     */
    pub->defined[id] = 0;
    write_state(pub, id, NULL, TP_PUB_PART_ALL);
    struct tp_feed_info info = {0};
    uint8_t *b = claim(pub, id, TPOUT_INSTRUMENT_DEFINITION_TEMPLATE_ID,
                       TPOUT_INSTRUMENT_DEFINITION_BLOCK_LENGTH, 0, TP_TOPIC_DEFINITIONS, 0, &info);
    if (b != NULL) {
        memset(b + TPOUT_INSTRUMENT_DEFINITION_VENUE_SECURITY_ID_OFFSET, 0,
               TPOUT_INSTRUMENT_DEFINITION_BLOCK_LENGTH -
                   TPOUT_INSTRUMENT_DEFINITION_VENUE_SECURITY_ID_OFFSET);
        tpout_store_u64(b + TPOUT_INSTRUMENT_DEFINITION_VENUE_SECURITY_ID_OFFSET,
                        (uint64_t)def.venue_security_id);
        tpout_store_u64(b + TPOUT_INSTRUMENT_DEFINITION_TICK_SIZE_OFFSET, (uint64_t)def.tick);
        tpout_store_u64(b + TPOUT_INSTRUMENT_DEFINITION_DISPLAY_FACTOR_OFFSET,
                        (uint64_t)def.display_factor);
        memcpy(b + TPOUT_INSTRUMENT_DEFINITION_SYMBOL_OFFSET, def.symbol, sizeof(def.symbol));
        b[TPOUT_INSTRUMENT_DEFINITION_DEPTH_OFFSET] = def.depth;
        b[TPOUT_INSTRUMENT_DEFINITION_TRADING_STATUS_OFFSET] = def.trading_status;
        b[TPOUT_INSTRUMENT_DEFINITION_SECURITY_KIND_OFFSET] = def.security_kind;
        tpout_store_u32(b + TPOUT_INSTRUMENT_DEFINITION_CHANNEL_ID_OFFSET, pub->channel_id);
        tpout_store_u64(b + TPOUT_INSTRUMENT_DEFINITION_CONTRACT_MULTIPLIER_OFFSET, 0);
    }
    /* A definition is complete in itself. */
    end_event_records(pub);
}

static void on_stale(void *ctx, uint32_t id, int stale, uint32_t expected, uint32_t got)
{
    (void)expected;
    (void)got;
    struct tp_publisher *pub = ctx;
    tp_publisher_set_flags(pub, id, stale ? TP_PUB_F_RECOVERY : 0);
}

static void on_orders_incomplete(void *ctx, uint32_t id, int incomplete)
{
    tp_publisher_set_orders_incomplete(ctx, id, incomplete != 0);
}

/* The instrument's flags become `flags`: consumers see a change as a status event. */
static void change_flags(struct tp_publisher *pub, uint32_t id, uint8_t flags)
{
    if (pub->flags[id] == flags)
        return;
    pub->flags[id] = flags;
    /* Consumers see the change as a status event carrying the new flags. Inside a venue event
     * (a feed marks an instrument stale mid-event) it becomes part of that event. */
    bool in_event = event_open(pub);
    struct tp_pub_book book;
    if (tp_pub_read_book(pub->params.books, id, 0, TP_PUB_PART_SESSION, &book, NULL, NULL) != 0)
        return;
    struct tp_feed_info info = {0};
    publish_status(pub, id, book.trading_status, 0, &info);
    if (in_event) {
        mark_dirty(pub, id);
        return;
    }
    end_event_records(pub);
    write_state(pub, id, NULL, 0);
}

void tp_publisher_set_flags(struct tp_publisher *pub, uint32_t id, uint8_t flags)
{
    if (id < pub->params.instruments)
        change_flags(
            pub, id,
            (uint8_t)((pub->flags[id] & ~TP_PUB_F_RECOVERY) | (flags & TP_PUB_F_RECOVERY)));
}

void tp_publisher_set_orders_incomplete(struct tp_publisher *pub, uint32_t id, bool incomplete)
{
    if (id < pub->params.instruments)
        change_flags(pub, id,
                     (uint8_t)((pub->flags[id] & ~TP_PUB_F_ORDERS_INCOMPLETE) |
                               (incomplete ? TP_PUB_F_ORDERS_INCOMPLETE : 0)));
}

uint8_t tp_publisher_flags(const struct tp_publisher *pub, uint32_t id)
{
    return id < pub->params.instruments ? pub->flags[id] & TP_PUB_F_RECOVERY : 0;
}

uint8_t tp_publisher_all_flags(const struct tp_publisher *pub, uint32_t id)
{
    return id < pub->params.instruments ? pub->flags[id] : 0;
}

void tp_publisher_select(struct tp_publisher *pub, uint8_t venue, uint32_t channel_id)
{
    pub->venue = venue;
    pub->channel_id = channel_id;
}

struct tp_feed_sink tp_publisher_sink(struct tp_publisher *pub)
{
    bool out = uses_output(pub);
    return (struct tp_feed_sink){.ctx = pub,
                                 .changes = out ? on_changes_output : on_changes,
                                 .end_of_event = out ? on_end_of_event_output : on_end_of_event,
                                 .instrument = on_instrument,
                                 .stale = on_stale,
                                 .orders_incomplete = on_orders_incomplete,
                                 .event_changes = out ? on_event_changes_output : on_event_changes,
                                 .order_changes = out ? on_order_changes_output : NULL};
}

void tp_publisher_channel_event(struct tp_publisher *pub, enum tp_pub_channel_event type,
                                uint64_t from, uint64_t to, uint64_t rx_tsc)
{
    struct tp_feed_info info = {.rx_tsc = rx_tsc, .packet_seq = from};
    uint8_t *b = claim(pub, UINT32_MAX, TPOUT_CHANNEL_EVENT_TEMPLATE_ID,
                       TPOUT_CHANNEL_EVENT_BLOCK_LENGTH, 0, TP_TOPIC_STATUS, 0, &info);
    if (b != NULL) {
        memset(b + TPOUT_CHANNEL_EVENT_EVENT_TYPE_OFFSET, 0,
               TPOUT_CHANNEL_EVENT_BLOCK_LENGTH - TPOUT_CHANNEL_EVENT_EVENT_TYPE_OFFSET);
        b[TPOUT_CHANNEL_EVENT_EVENT_TYPE_OFFSET] = (uint8_t)type;
        tpout_store_u32(b + TPOUT_CHANNEL_EVENT_CHANNEL_ID_OFFSET, pub->channel_id);
        tpout_store_u64(b + TPOUT_CHANNEL_EVENT_GAP_FROM_OFFSET, from);
        tpout_store_u64(b + TPOUT_CHANNEL_EVENT_GAP_TO_OFFSET, to);
    }
    end_event_records(pub);
}

void tp_publisher_refresh_all(struct tp_publisher *pub)
{
    for (uint32_t id = 0; id < pub->params.instruments; id++)
        write_state(pub, id, NULL, TP_PUB_PART_ALL);
}

const struct tp_publisher_counters *tp_publisher_counters(const struct tp_publisher *pub)
{
    return &pub->counters;
}
