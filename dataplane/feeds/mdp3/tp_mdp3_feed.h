/*
 * MDP3 feed handler: CME MDP 3.0 packets -> instrument registry and books.
 *
 * One tp_mdp3_feed per CME channel. The caller hands over whole packets in sequence (after A/B
 * arbitration in the daemon, from a pcap in tickplane-replay): incremental, instrument
 * definition and market recovery (snapshot) packets all go through tp_mdp3_feed_packet, which
 * decodes them with the generated SBE codec (codecs/mdp3) and applies (tp_mdp3_feed_burst takes
 * the packets of an rx burst at once: the same results as one call per packet, with the next
 * packets' state prefetched while one is applied):
 *   54 55 56  instrument definitions (future, option, spread): registry entry if the filter
 *             keeps it, book depth from the GBX / GBI feed types;
 *   46        price levels (outright, implied, book reset) and the attached order entries;
 *   47        order-level book;  48 trades;  49 50 51 37 statistics and volume;
 *   30        security status;  4 channel reset (every book of the channel is cleared);
 *   52 53     snapshots: replace the instrument's books and recover it.
 *
 * Matching events: end_of_event is called when a message carries the MatchEventIndicator
 * end-of-event bit, so a consumer publishes state only at event boundaries. Change records are
 * handed to the sink once per event rather than per message: the records of consecutive messages
 * wait while the sink's info stays the same (one packet, one TransactTime), and go before the
 * info changes, before end_of_event, at the end of the packet, and before any other sink call
 * (the earlier messages' records only), so the sink sees its callbacks in the same order as with
 * one call per message.
 *
 * Per-instrument sequence (RptSeq): each entry's RptSeq must be the instrument's previous one
 * plus one. After a jump (a lost packet touched this instrument) the instrument is marked stale
 * (sink->stale) and its book entries are skipped until a snapshot newer than its last RptSeq
 * recovers it; instruments whose RptSeq did not jump keep flowing. Entries at or below the last
 * RptSeq (the other line's copy, replays) are skipped.
 *
 * Refusals: an incremental change the book refuses (a price level outside the book, an order id
 * that is not live, a duplicate order id, no room in the order table, an unknown order action)
 * leaves the book different from the venue's, and nothing later on the line repairs it: the
 * instrument is counted (rejected, refusal_marks) and marked stale exactly as after an RptSeq
 * jump, so its entries are skipped and the next snapshot of it applied recovers it. Not marked:
 * a level within the venue's depth beyond the depth the books keep, a change or delete of an
 * order an order book that is not complete (orders_complete) does not hold (the venue's older
 * orders), and price-level snapshot entries the book refuses (levels beyond its depth): counted
 * only. An order an order-level snapshot cannot load marks the instrument.
 *
 * Book audit: a snapshot (52) of an instrument in sync whose RptSeq is the book's own is compared
 * with the book: every price level it carries within the book's depths (price, quantity, order
 * count; outright and implied, both sides) and no other level in the book. A book that differs
 * (it started from levels the feed never saw, or an entry was misapplied) is counted
 * (snapshot_mismatch, and the instrument's books counter), marked stale (sink->stale 1: consumers
 * see it recovering), replaced by the snapshot and trusted again (sink->stale 0); one that equals
 * it is left alone and nothing is published. A snapshot behind or ahead of the book is not
 * compared. The comparison reads the message's entries and the book's levels once, in place.
 *
 * The order-level snapshot (53) carries no RptSeq: it is aligned by its LastMsgSeqNumProcessed N.
 * An in-sync instrument whose order book is complete (orders_complete), changed last at or before
 * N, with the incrementals applied through N, is at the snapshot's state: its chunks are compared
 * with the book (every order's side, price, quantity and priority, and no other order live), and
 * counted in snapshots_audited. A difference found in the first chunk is counted
 * (snapshot_mismatch, order_snapshot_mismatch), marked stale and the snapshot adopted, trusted
 * again after its last chunk; one found in a later chunk (the earlier ones are gone) leaves the
 * instrument stale until its next snapshot is applied. An equal book publishes nothing
 * (snapshots_old). A stale instrument, or one whose order book is not complete, loads the snapshot
 * (its orders replace the book's); a snapshot behind or ahead of a complete in-sync order book is
 * not applied (snapshots_old). A chunk out of its order ends the snapshot's reading.
 *
 * Order view: an order-level book that is not complete (orders_complete 0: from its definition
 * until an order-level snapshot loads it or the venue resets it, and again after a price-level
 * snapshot empties it) lacks orders the venue holds while its price levels can be the venue's.
 * The sink hears it (sink->orders_incomplete 1, counted in orders_incomplete_marks) before such a
 * book publishes anything, and hears it cleared (0) once the snapshot's or reset's records went;
 * so does the orders watcher (tp_mdp3_feed_watch_orders). An order-level snapshot whose
 * LastMsgSeqNumProcessed is past the incrementals the feed applied is not loaded into an in-sync
 * incomplete book (the incrementals still to come would be applied twice: snapshots_old), nor
 * one below the caller's replay_floor (it could not replay all that came after); the next one
 * is.
 *
 * Memory: tp_mdp3_feed_memsize(instruments) bytes of per-instrument state placed by the caller.
 */
#ifndef TP_MDP3_FEED_H
#define TP_MDP3_FEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tp_books.h"
#include "tp_feed_sink.h"
#include "tp_instrument_filter.h"
#include "tp_instruments.h"

/* Change records buffered before the sink is called (a snapshot of 10+10 levels fits). */
#define TP_MDP3_FEED_CHANGES 64

struct tp_mdp3_feed_counters {
    uint64_t packets;
    uint64_t messages;
    uint64_t malformed;          /* packets or messages the framing or codec refused */
    uint64_t other_schema;       /* messages of another schema id */
    uint64_t unknown_template;   /* templates this handler does not apply */
    uint64_t unknown_instrument; /* entries for SecurityIDs not in the registry (or filtered) */
    uint64_t rejected;           /* entries the books refused (see per-instrument counters) */
    /* Instruments marked stale because their book refused an incremental change (a level outside
     * the book, an order id not live, no room): nothing later on the line repairs the book. */
    uint64_t refusal_marks;
    uint64_t definitions;
    uint64_t filtered;
    uint64_t registry_full;
    uint64_t rpt_seq_gaps;  /* instruments that went stale */
    uint64_t stale_skipped; /* book entries skipped because their instrument was stale */
    uint64_t duplicates;    /* entries at or below the instrument's last RptSeq */
    uint64_t snapshots;     /* snapshots applied */
    uint64_t snapshots_old; /* snapshots not newer than the book, not applied */
    /* Snapshots at the RptSeq of an in-sync book, compared with it (the book audit), and those
     * that differed from it: the book was wrong, the snapshot replaced it. */
    uint64_t snapshots_audited;
    uint64_t snapshot_mismatch;
    /* Of snapshot_mismatch, order-level snapshots (53): an order book that missed an order-only
     * change (47 carries no RptSeq: its loss shows nowhere else). */
    uint64_t order_snapshot_mismatch;
    uint64_t channel_resets;
    uint64_t events; /* end-of-event marks */
    /* Times an order-level book's order view was flagged incomplete (sink->orders_incomplete). */
    uint64_t orders_incomplete_marks;
};

/* Per instrument sequence state. */
struct tp_mdp3_instrument_state {
    uint32_t rpt_seq; /* last RptSeq applied (0: none yet) */
    uint8_t stale;    /* waiting for a snapshot */
    /* The order-level book holds every order the venue's does: loaded by an order-level snapshot
     * (53) or emptied by a reset since; 0 at start (orders from before the feed's first message
     * are not known) and after a price-level snapshot (52), which empties it without the orders. */
    uint8_t orders_complete;
    /* The sink was told the order view is incomplete (an order-level book, orders_complete 0). */
    uint8_t orders_flagged;
    uint8_t reserved;
    /* The incremental packet (MsgSeqNum) the order-level book is as of: the latest that changed
     * it, or the snapshot's LastMsgSeqNumProcessed. */
    uint32_t orders_seq;
};

/* An order-level snapshot (53) being read, chunk by chunk (see "Book audit" above). */
struct tp_mdp3_mbo_snapshot {
    uint8_t mode; /* TP_MDP3_MBO_* */
    bool adopt;   /* loaded after a mismatch: the instrument is trusted at its last chunk */
    bool refused; /* an order of it was refused: the instrument stays stale */
    uint32_t instrument;
    uint32_t last_seq;   /* its LastMsgSeqNumProcessed */
    uint32_t next_chunk; /* the chunk expected next */
    uint32_t matched;    /* audit: orders found equal so far */
};

enum { TP_MDP3_MBO_IDLE, TP_MDP3_MBO_LOAD, TP_MDP3_MBO_AUDIT };

/* Where order entries of message 46 find their price level entry (ReferenceID). */
struct tp_mdp3_entry_ref {
    uint32_t instrument;
    uint8_t side;
    int64_t price;
};

/* Told when an instrument goes stale (stale != 0) or is trusted again: see tp_mdp3_feed_watch. */
typedef void (*tp_mdp3_feed_stale_fn)(void *ctx, int stale);

/* Instruments one snapshot packet may recover whose replayed order entries are applied. */
#define TP_MDP3_FEED_RECOVERED_MAX 16

/* Order-table lines a burst keeps to prefetch (a power of two). */
#define TP_MDP3_FEED_HINTS 64

struct tp_mdp3_feed {
    struct tp_instruments *registry;
    struct tp_books *books;
    const struct tp_instrument_filter *filter; /* NULL: keep every instrument */
    struct tp_feed_sink sink;
    tp_mdp3_feed_stale_fn watch; /* NULL: nobody watches stale marks besides the sink */
    void *watch_ctx;
    tp_mdp3_feed_stale_fn watch_orders; /* NULL: nobody watches order views besides the sink */
    void *watch_orders_ctx;
    uint16_t channel;  /* CME channel id, recorded in the instruments it defines */
    uint8_t book_type; /* enum tp_book_type given to new instruments */
    uint32_t capacity; /* instruments in `state` */
    /*
     * The last SecurityID found in the registry and its id: the entries of a message mostly
     * name one instrument, and a binding never changes once the registry made it (ids are not
     * reused), so it is remembered until tp_mdp3_feed_init. last_id TP_INSTRUMENT_NONE: none yet.
     */
    int32_t last_security_id;
    uint32_t last_id;
    struct tp_secid_table secids; /* the registry's, looked up inline */
    struct tp_mdp3_instrument_state *state;
    struct tp_mdp3_feed_counters counters;
    struct tp_feed_info info; /* of the records waiting in `changes` */
    uint32_t n_changes;
    uint32_t message_first; /* the first of the current message's records in `changes` */
    struct tp_book_change changes[TP_MDP3_FEED_CHANGES];
    struct tp_mdp3_entry_ref refs[256];
    /*
     * Order-table lines the prefetch pass found for the next packet's order entries, prefetched
     * a few at a time while the current packet is applied (tp_mdp3_feed_burst): issued together,
     * most of them never arrived. A ring of TP_MDP3_FEED_HINTS; when full the oldest go.
     */
    uint32_t hint_head, hint_tail;
    const void *hints[TP_MDP3_FEED_HINTS];
    /* tp_mdp3_feed_replay: the instruments the latest packet not replayed set from a snapshot. */
    bool replaying;
    uint32_t n_recovered;
    uint32_t recovered[TP_MDP3_FEED_RECOVERED_MAX];
    uint32_t incr_seq; /* MsgSeqNum of the latest incremental packet applied (not replayed) */
    /*
     * Set by the caller: the lowest LastMsgSeqNumProcessed of an order-level snapshot loaded into
     * an in-sync order book that is not complete (the caller can replay the incrementals after
     * it: tp_mdp3_feed_replay); lower ones are not loaded (snapshots_old). 0: no floor.
     */
    uint32_t replay_floor;
    struct tp_mdp3_mbo_snapshot mbo;
};

/* Bytes of per-instrument state for a registry of `instruments`. */
size_t tp_mdp3_feed_memsize(uint32_t instruments);

/*
 * Prepares a feed. state_mem: tp_mdp3_feed_memsize(tp_instruments_capacity(registry)) bytes.
 * book_type: TP_BOOK_TYPE_MBP, or TP_BOOK_TYPE_MBP_MBO to also build order-level books (the
 * books need an order table). The sink is copied; filter may be NULL. 0 or -EINVAL.
 */
int tp_mdp3_feed_init(struct tp_mdp3_feed *f, void *state_mem, struct tp_instruments *registry,
                      struct tp_books *books, const struct tp_instrument_filter *filter,
                      uint16_t channel, uint8_t book_type, const struct tp_feed_sink *sink);

/*
 * Also tells watch(ctx, stale) of every stale mark the sink gets (sink->stale), so the daemon's
 * snapshot recovery counts stale instruments while the sink is the publisher's own, called
 * directly for every change (no forwarder in between). fn NULL: no watcher.
 */
void tp_mdp3_feed_watch(struct tp_mdp3_feed *f, tp_mdp3_feed_stale_fn fn, void *ctx);

/*
 * Also tells fn(ctx, incomplete) of every change of an order view the sink hears
 * (sink->orders_incomplete), so the daemon stays on the snapshot lines until the order-level
 * snapshots refilled every order book. fn NULL: no watcher.
 */
void tp_mdp3_feed_watch_orders(struct tp_mdp3_feed *f, tp_mdp3_feed_stale_fn fn, void *ctx);

/*
 * Applies one MDP3 packet (binary packet header + messages). Messages before a malformed one are
 * applied; the rest of the packet is skipped. Returns 0, or -EBADMSG if anything was malformed.
 */
int tp_mdp3_feed_packet(struct tp_mdp3_feed *f, const uint8_t *pkt, size_t len, uint64_t rx_tsc);

/*
 * An incremental packet applied before, applied again after a snapshot packet (the daemon's
 * snapshot recovery replays those after its LastMsgSeqNumProcessed). Price-level entries are
 * skipped by RptSeq as always; order entries carry no RptSeq, so they are applied only to the
 * instruments the latest packet not replayed set from a snapshot (an in-sync book has them
 * already: applied twice they would be refused). Those beyond TP_MDP3_FEED_RECOVERED_MAX per
 * snapshot packet are marked stale again (the next cycle recovers them). Returns as
 * tp_mdp3_feed_packet.
 */
int tp_mdp3_feed_replay(struct tp_mdp3_feed *f, const uint8_t *pkt, size_t len, uint64_t rx_tsc);

/* One packet of a burst and its receive time. */
struct tp_mdp3_feed_pkt {
    const uint8_t *data;
    size_t len;
    uint64_t rx_tsc;
    /*
     * true: the caller checked the bytes with tp_mdp3_packet_frames and they have not changed
     * since (the feed does not frame them again). false: the feed frames them first.
     */
    bool framed;
};

/* Told after each packet of a burst is applied: rc is what tp_mdp3_feed_packet would return. */
typedef void (*tp_mdp3_feed_applied_fn)(void *ctx, const struct tp_mdp3_feed_pkt *pkt, int rc);

/*
 * Applies n packets in order, exactly as n tp_mdp3_feed_packet calls would (tp_mdp3_feed_packet
 * is the burst of one), calling applied(ctx, ...) (if not NULL) after each, before the next is
 * applied. Meanwhile it prefetches the state the next packet's entries will touch (instrument
 * RptSeq state, books, order-table slots), so a burst hides cache misses one packet cannot.
 * Returns the number of packets with something malformed.
 */
uint32_t tp_mdp3_feed_burst(struct tp_mdp3_feed *f, const struct tp_mdp3_feed_pkt *pkts, uint32_t n,
                            tp_mdp3_feed_applied_fn applied, void *ctx);

/* The sequence state of an instrument (NULL beyond the capacity). */
const struct tp_mdp3_instrument_state *tp_mdp3_feed_state(const struct tp_mdp3_feed *f,
                                                          uint32_t instrument);

#endif /* TP_MDP3_FEED_H */
