/*
 * Publisher: a feed sink (tp_feed_sink.h) that turns book change records into tpout SBE events
 * on the shared-memory bus.
 *
 * Promises:
 *  - One published record per change record (a DELETE_FROM of k levels is one BookUpdate with k
 *    level entries; a CLEAR is one BookUpdate clearing both sides), except on order-only books
 *    (depth = the orders aggregated, as ITCH's): there an ORDER record and the LEVEL records of
 *    the levels it changed, which follow it, are one OrderEvent whose `levels` group holds them
 *    (tpout version 3), tagged TP_RECORD_ORDER_DEPTH in the ring.
 *  - The last record of each venue event carries endOfEvent (in the SBE flags and the ring flags):
 *    the publisher keeps the latest record claimed in the ring and commits it when the next one
 *    comes or, flagged, at the end of the event. Nothing is copied twice.
 *  - Records are committed without moving the ring's shared tail; the tail (what lagging readers
 *    and lag reports use) and the bus's published counters move once per event, or once per rx
 *    burst between tp_publisher_begin_burst and tp_publisher_end_burst. Readers following at
 *    their cursor see each record as soon as it is committed either way.
 *  - The conflated state table is written only at event boundaries, so a reader never sees a
 *    half-applied event: outside an rx burst at each event's end, once per instrument the event
 *    touched; inside a burst (tp_publisher_begin_burst) once per instrument at the burst's end,
 *    for all the burst's ended events of that instrument (an instrument still inside an open
 *    event then waits for a later burst's end or its event's end), and earlier in a burst that
 *    ends more than TP_PUB_EVENT_LOG events of two calls (the log of their venue fields is full;
 *    event_changes' events of one order keep theirs per instrument). An entry's
 * bus_sequence is the last record committed when it is written, all of whose instrument's records
 * it reflects. Only the parts of the entry the events changed (levels of a side, last trade,
 * session status) are rewritten. A side of an order book with one level change since the entry was
 *    written (changed, new, removed) follows that change record (the levels below it shift),
 *    so the entry follows the books only if every change reaches
 *    the sink: after books change with their records off (tp_books_set_emit), call
 *    tp_publisher_refresh_all. A book configured anew (tp_books_configure) must be followed by
 *    the sink's instrument callback, as the feeds do: the publisher caches which levels are an
 *    instrument's depth until then.
 *  - Instruments under recovery (tp_publisher_set_flags) carry recovering / stale on every event
 *    and in their state entry; those whose order view is incomplete
 *    (tp_publisher_set_orders_incomplete) carry ordersIncomplete the same way.
 *  - Receive-to-publish latency (TSC ticks from the packet's rx_tsc to the commit of the event's
 *    last record) of one published event in TP_PUB_LATENCY_EVERY goes into the caller's
 *    histogram: reading the TSC costs about as much as a tenth of the event's publishing. The
 *    wait of a packet held behind a gap is not in it: tp_publisher_held records the wait in
 *    the gap-wait histogram, and until tp_publisher_held_applied the latency counts from the
 *    release, not from an earlier rx_tsc (records keep the packet's own rx_tsc).
 *  - With an output (tp_publisher_params.output) the same records, byte for byte, go to it
 *    instead of the ring, at the same points (claimed, then committed).
 * Single thread (the data lcore of the channel); no allocation after init, no syscalls.
 */
#ifndef TP_PUBLISH_PUBLISHER_H
#define TP_PUBLISH_PUBLISHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp_feed_sink.h"

struct tp_bus_writer;
struct tp_books;
struct tp_instruments;
struct tp_histogram;

#define TP_PUB_F_END_OF_EVENT 0x01u /* tpout EventFlags bits */
#define TP_PUB_F_RECOVERING   0x02u
#define TP_PUB_F_STALE        0x04u
#define TP_PUB_F_SNAPSHOT     0x08u
#define TP_PUB_F_IMPLIED      0x10u
/* The instrument's order-level view lacks orders the venue holds (its price levels are the
 * venue's unless RECOVERING or STALE say otherwise): tp_publisher_set_orders_incomplete. */
#define TP_PUB_F_ORDERS_INCOMPLETE 0x20u
#define TP_PUB_F_RECOVERY          (TP_PUB_F_RECOVERING | TP_PUB_F_STALE)

#define TP_PUB_LATENCY_EVERY 8u /* a power of two */

/*
 * Where the records go instead of the bus's ring (tickplane-replay --events: straight into an
 * event file's buffer, with no ring to copy them out of). claim gives room for one tpout message
 * of `length` bytes of `topic` (enum tp_topic, or TP_RECORD_ORDER_DEPTH), or NULL when the
 * output does not take it (the output counts it); commit completes the message claimed last,
 * whose flags the publisher may change until then. One claimed message at a time, committed
 * before the next claim (or never, when the capture ends inside an event, as on the bus). The
 * bus still decides which instruments are published; nothing goes into its ring, and no
 * sequence numbers a state entry (give such a bus no state table).
 */
struct tp_pub_output {
    uint8_t *(*claim)(void *ctx, uint16_t topic, uint32_t length);
    void (*commit)(void *ctx);
    void *ctx;
};

struct tp_publisher_params {
    struct tp_bus_writer *bus; /* open: its state table (or none) stays the same from init */
    const struct tp_books *books;
    const struct tp_instruments *registry;
    uint32_t instruments;          /* registry capacity */
    uint32_t depth;                /* levels per side written to the state table */
    struct tp_histogram *latency;  /* receive-to-publish, TSC ticks; may be NULL */
    struct tp_histogram *gap_wait; /* held packets' wait behind a gap, TSC ticks; may be NULL */
    uint64_t (*clock)(void);       /* TSC now (rte_rdtsc in the daemon); NULL: no latency */
    const struct tp_pub_output *output; /* NULL: the bus's ring (the daemon) */
};

struct tp_publisher_counters {
    uint64_t records; /* published */
    uint64_t events;  /* end-of-event marks */
    uint64_t skipped; /* change records with no tpout form (unknown kinds, levels past 255) */
    uint64_t state_writes;
};

struct tp_publisher;

size_t tp_publisher_memsize(const struct tp_publisher_params *params);
/* 0 or -EINVAL; mem holds tp_publisher_memsize() bytes, 64-byte aligned. */
int tp_publisher_init(void *mem, const struct tp_publisher_params *params);

/* The sink to give the feed handler (ctx points at the publisher; every callback set, event_changes
 * included, and order_changes for a publisher with an output: the same records, byte for byte,
 * encoded from the unexpanded order changes). */
struct tp_feed_sink tp_publisher_sink(struct tp_publisher *pub);

/*
 * Names the channel whose packets come next (one publisher serves every channel of a data lcore,
 * since the bus has one writer): venue (tpout Venue: 0 cme, 1 nasdaq, 2 eurex) and channel id stamp
 * the events that follow.
 */
void tp_publisher_select(struct tp_publisher *pub, uint8_t venue, uint32_t channel_id);

/*
 * An rx burst's worth of events: until tp_publisher_end_burst the ring's shared tail and the
 * published counters are not moved at each event's end but once, at the end of the burst (one
 * shared store per burst), and the state entries the burst's events changed are written there,
 * once per instrument. Records are written as without it.
 */
void tp_publisher_begin_burst(struct tp_publisher *pub);
void tp_publisher_end_burst(struct tp_publisher *pub);

/*
 * Events of two calls (changes, end_of_event) an rx burst may end before the state entries are
 * written anyway (the log of their venue fields is full). A burst of 32 full packets carries up
 * to ~3,300 of the smallest ITCH messages (events): below that, peak traffic of such events would
 * write the entries several times a burst.
 */
#define TP_PUB_EVENT_LOG 4096u

/*
 * Work a channel saves up for the end of the rx burst (a channel hands the ITCH messages of all
 * its packets of the burst to the feed in one call, which lets the feed prefetch far ahead).
 * Inside a burst: fn(ctx) is registered to run in tp_publisher_end_burst, in registration order
 * and before the ring's tail moves, and true is returned. Outside a burst, or with
 * TP_PUB_DEFER_MAX registrations already waiting: false, and the caller does its work now.
 * tp_publisher_defer_cancel drops the registrations of ctx (a channel being removed).
 */
#define TP_PUB_DEFER_MAX 64u
bool tp_publisher_defer(struct tp_publisher *pub, void (*fn)(void *ctx), void *ctx);
void tp_publisher_defer_cancel(struct tp_publisher *pub, void *ctx);

/*
 * A packet received at rx_tsc and held behind a gap is released at released_tsc (the packet that
 * filled the gap arrived, or the gap was given up): its wait goes into the gap-wait histogram,
 * and the events published until tp_publisher_held_applied count their latency from
 * released_tsc at the earliest. Call tp_publisher_held_applied once the released packets have
 * been applied.
 */
void tp_publisher_held(struct tp_publisher *pub, uint64_t rx_tsc, uint64_t released_tsc);
void tp_publisher_held_applied(struct tp_publisher *pub);

/*
 * Sets the recovery flags (TP_PUB_F_RECOVERY bits of `flags`) of an instrument; its
 * TP_PUB_F_ORDERS_INCOMPLETE stays as it is. A change is published as a status event.
 */
void tp_publisher_set_flags(struct tp_publisher *pub, uint32_t instrument, uint8_t flags);
/* The recovery flags an instrument's events carry now (0 for an id out of range). */
uint8_t tp_publisher_flags(const struct tp_publisher *pub, uint32_t instrument);
/* Sets or clears an instrument's TP_PUB_F_ORDERS_INCOMPLETE, as tp_publisher_set_flags does. */
void tp_publisher_set_orders_incomplete(struct tp_publisher *pub, uint32_t instrument,
                                        bool incomplete);
/* All the flags an instrument's events carry now, TP_PUB_F_ORDERS_INCOMPLETE included. */
uint8_t tp_publisher_all_flags(const struct tp_publisher *pub, uint32_t instrument);

/* tpout ChannelEventType */
enum tp_pub_channel_event {
    TP_PUB_CHANNEL_RESET = 0,
    TP_PUB_CHANNEL_GAP = 1,
    TP_PUB_CHANNEL_RECOVERY_STARTED = 2,
    TP_PUB_CHANNEL_RECOVERED = 3,
};

/* Publishes a channel-wide event (gap [from, to] inclusive for GAP), flagged endOfEvent. */
void tp_publisher_channel_event(struct tp_publisher *pub, enum tp_pub_channel_event type,
                                uint64_t from, uint64_t to, uint64_t rx_tsc);

/* Writes every defined instrument's state entry (start-up, after recovery). */
void tp_publisher_refresh_all(struct tp_publisher *pub);

const struct tp_publisher_counters *tp_publisher_counters(const struct tp_publisher *pub);

#endif
