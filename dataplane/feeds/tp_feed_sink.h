/*
 * Feed sink: where the venue handlers (tp_itch_feed.h, tp_mdp3_feed.h, eobi/tp_eobi_feed.h) send
 * what they changed.
 *
 * The daemon's publisher and tickplane-replay implement the same sink, so both run the very
 * same decode and book code. Callbacks run on the data core, inline with the feed: they must not
 * block. Any callback may be NULL.
 */
#ifndef TP_FEED_SINK_H
#define TP_FEED_SINK_H

#include <stdint.h>

#include "tp_book_change.h"
#include "tp_order_change.h"

/* Where the changes came from: filled by the feed for each venue message. */
struct tp_feed_info {
    uint64_t rx_tsc;     /* receive time (TSC) of the packet, as given by the caller */
    uint64_t packet_seq; /* MDP3 MsgSeqNum / MoldUDP64 sequence of the message (0: BinaryFILE) */
    uint64_t venue_time; /* ns: MDP3 TransactTime (since epoch), ITCH timestamp (since midnight) */
    uint64_t sending_time; /* MDP3 packet SendingTime, 0 for ITCH */
};

struct tp_feed_sink {
    void *ctx;
    /*
     * Change records (n >= 1), all with this info: those of one venue message or part of one
     * (ITCH), or of consecutive messages of one event in one packet with the same TransactTime
     * (MDP3: one call per event, tp_mdp3_feed.h).
     */
    void (*changes)(void *ctx, const struct tp_feed_info *info, const struct tp_book_change *c,
                    uint32_t n);
    /*
     * End of a venue event: every book is consistent (MDP3 MatchEventIndicator end-of-event;
     * ITCH: after each message, which is its own event).
     */
    void (*end_of_event)(void *ctx, const struct tp_feed_info *info);
    /* An instrument was defined or its definition changed (dense id). */
    void (*instrument)(void *ctx, uint32_t instrument);
    /*
     * An instrument's book cannot be trusted until it is recovered (MDP3 RptSeq jumped from
     * `expected` to `got`), or is trusted again (`stale` == 0, after a snapshot).
     */
    void (*stale)(void *ctx, uint32_t instrument, int stale, uint32_t expected, uint32_t got);
    /*
     * An instrument's order-level book lacks orders the venue holds (`incomplete` != 0: its price
     * levels may be right, its order view is not; MDP3 after a price-level snapshot) or holds them
     * all again (an order-level snapshot loaded it, the venue reset it).
     */
    void (*orders_incomplete)(void *ctx, uint32_t instrument, int incomplete);
    /*
     * Optional: the change records of a whole venue event (n >= 1) and its end in one call, the
     * same as changes(c, n) then end_of_event. A feed whose messages are each an event (ITCH)
     * calls it when it is set, and changes + end_of_event when it is NULL; the other feeds
     * (MDP3) never call it, so a sink that sets it must set those two as well.
     */
    void (*event_changes)(void *ctx, const struct tp_feed_info *info,
                          const struct tp_book_change *c, uint32_t n);
    /*
     * Optional: an ITCH order message's changes unexpanded (tp_order_change.h: n = 1, or 2 for a
     * replace, its old order's removal then its new one's add) and the end of its event, in one
     * call. tp_order_change_expand() of each, in order, gives the records event_changes would
     * have been given. The ITCH feed calls it for the order messages (A, F, E, C, X, D, U) when it
     * is set, and event_changes (or changes + end_of_event) for the others; the other feeds never
     * call it. For a sink that reads few of the records' fields, or encodes its own form of them
     * (the publisher with an output: tickplane-replay --events): a consumer of whole records
     * leaves it NULL and the feed writes the records itself, as fast as before it existed.
     */
    void (*order_changes)(void *ctx, const struct tp_feed_info *info,
                          const struct tp_order_change *oc, uint32_t n);
};

#endif /* TP_FEED_SINK_H */
