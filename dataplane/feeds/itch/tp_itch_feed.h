/*
 * ITCH feed handler: Nasdaq TotalView-ITCH 5.0 messages -> instrument registry and books.
 *
 * One tp_itch_feed per ITCH source (one MoldUDP64 session, or one BinaryFILE); it owns locate map
 * `channel` of the registry and the order-level books of its instruments. The caller frames the
 * messages (MoldUDP64 after line arbitration in the daemon, BinaryFILE or pcap in
 * tickplane-replay) and hands them over one by one, in sequence; this module is the one place
 * where ITCH meets the books.
 *
 *   R stock directory   defines the instrument (if the filter keeps it): MBO book, locate bound
 *   H trading action    trading status
 *   A F E C X D U       order-level book (each message is one event: end_of_event after it)
 *   P Q                 trades (Q opening/closing cross also sets the open/close statistic)
 *   I                   imbalance statistic
 *   other types         counted and ignored (B broken trades are counted, books are not undone)
 *
 * Malformed messages (unknown type, wrong length) and messages for unknown locates are counted
 * and skipped; book rejections (unknown order ids, bad quantities, capacity) are counted here
 * and per instrument in the books, and flag the instrument stale (the sink's stale call): its
 * book can no longer be the venue's.
 */
#ifndef TP_ITCH_FEED_H
#define TP_ITCH_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "tp_books.h"
#include "tp_feed_sink.h"
#include "tp_instrument_filter.h"
#include "tp_instruments.h"

struct tp_itch_feed_counters {
    uint64_t messages;           /* handed to tp_itch_feed_message */
    uint64_t malformed;          /* unknown type or wrong length */
    uint64_t unknown_instrument; /* locate not bound (unknown or filtered out) */
    uint64_t rejected;           /* the book refused the update (see per-instrument counters) */
    uint64_t definitions;        /* stock directory messages kept */
    uint64_t filtered;           /* stock directory messages the filter dropped */
    uint64_t registry_full;      /* stock directory messages refused: no instrument id left */
    uint64_t broken_trades;      /* B messages */
    uint64_t ignored;            /* valid messages with nothing to apply */
};

struct tp_itch_feed {
    struct tp_instruments *registry;
    struct tp_books *books;
    const struct tp_instrument_filter *filter; /* NULL: keep every instrument */
    struct tp_feed_sink sink;
    uint16_t channel;        /* the registry's locate map for this source */
    const uint32_t *locates; /* that map: dense id + 1 by stock locate (0: unknown) */
    uint64_t next_priority;  /* time priority given to each new order */
    struct tp_itch_feed_counters counters;
    struct tp_book_change changes[TP_BOOK_CHANGES_MAX];
    struct tp_order_change order_changes[2]; /* for tp_feed_sink.order_changes: a replace's two */
};

/*
 * Prepares a feed over a registry (with at least channel + 1 locate maps) and books. The sink is
 * copied (each message that changed something is one event: order_changes for an order message
 * when the sink sets it, else event_changes when set, else changes then end_of_event); filter may
 * be NULL. Returns 0 or -EINVAL.
 */
int tp_itch_feed_init(struct tp_itch_feed *f, struct tp_instruments *registry,
                      struct tp_books *books, const struct tp_instrument_filter *filter,
                      uint16_t channel, const struct tp_feed_sink *sink);

/*
 * Applies one ITCH message (len bytes, the type byte first). `info` carries the receive time and
 * sequence (venue_time is filled in from the message). Returns 0 when applied, or a negative
 * errno when the message was skipped (-EBADMSG malformed, -ENOENT unknown instrument, or the
 * book's error), after counting it.
 */
int tp_itch_feed_message(struct tp_itch_feed *f, const uint8_t *msg, size_t len,
                         struct tp_feed_info *info);

/*
 * Applies a burst of n messages in order, exactly as n calls of tp_itch_feed_message would (the
 * sink sees the same calls), and returns how many were skipped. While message i is applied, the
 * order slots and instrument state of message i + TP_ITCH_FEED_AHEAD are prefetched, and the best
 * levels of message i + TP_ITCH_FEED_AHEAD / 2 (their place is read from that state), which
 * hides the misses of scattered order ids: the faster way for a caller that has many messages at
 * hand (a MoldUDP64 packet, an rx burst, a file).
 */
#define TP_ITCH_FEED_AHEAD 16
uint32_t tp_itch_feed_burst(struct tp_itch_feed *f, const uint8_t *const *msgs,
                            const uint16_t *lens, uint32_t n, struct tp_feed_info *info);

/*
 * tp_itch_feed_burst for messages numbered one after the other (a MoldUDP64 packet): message i
 * is applied with info->packet_seq + i, and info->packet_seq is left n past its value.
 */
uint32_t tp_itch_feed_sequenced(struct tp_itch_feed *f, const uint8_t *const *msgs,
                                const uint16_t *lens, uint32_t n, struct tp_feed_info *info);

#endif /* TP_ITCH_FEED_H */
