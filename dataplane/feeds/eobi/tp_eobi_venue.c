/*
 * Eurex T7 EOBI as a venue (tp_venue.h): order-level books (tp_eobi_feed.h), many products per
 * multicast group, each market segment numbered by its own ApplSeqNum, which the feed follows
 * itself (so both lines' packets go to it, and it holds a hole for the other line); a segment
 * that lost packets on both lines is rebuilt from the snapshot loop. Its tpout venue is 2 (eurex);
 * its config protocol "eobi".
 */
#include <stddef.h>

#include "tp_eobi_feed.h"
#include "tp_venue.h"

#define COUNTER(field)                                                                             \
    {                                                                                              \
#field, offsetof(struct tp_eobi_feed, counters.field)                                      \
    }

static const struct tp_venue_counter decode_counters[] = {
    COUNTER(malformed),
    COUNTER(unknown_template),
    COUNTER(rejected),
    COUNTER(registry_full),
    COUNTER(duplicates),
    COUNTER(gaps),
    COUNTER(buffer_overflow),
    COUNTER(buffer_filled), /* holes of a recovering segment the other line filled */
    COUNTER(snapshots),
    COUNTER(snapshots_broken),
    COUNTER(execution_mismatch),
    COUNTER(held),
    COUNTER(gaps_filled),
    COUNTER(snapshot_duplicates),
    COUNTER(snapshot_held),
    COUNTER(snapshot_filled),
    COUNTER(snapshot_given_up),
    COUNTER(volume_adopted),
    COUNTER(release_mismatch),
    COUNTER(implausible),
};

static int feed_init(void *feed, struct tp_instruments *registry, struct tp_books *books,
                     const struct tp_instrument_filter *filter, uint16_t channel, uint8_t layout,
                     const struct tp_feed_sink *sink)
{
    int rc = tp_eobi_feed_init(feed, registry, books, filter, channel, sink);
    return rc != 0 ? rc : tp_eobi_feed_set_release(feed, (enum tp_eobi_release)layout);
}

static int feed_packet(void *feed, const uint8_t *payload, size_t len, uint64_t rx_tsc)
{
    return tp_eobi_feed_packet(feed, payload, len, rx_tsc);
}

static int feed_snapshot(void *feed, const uint8_t *payload, size_t len, uint64_t rx_tsc)
{
    return tp_eobi_feed_snapshot_packet(feed, payload, len, rx_tsc);
}

static uint32_t feed_recovering(const void *feed)
{
    return tp_eobi_feed_recovering(feed);
}

static uint64_t feed_messages(const void *feed)
{
    return ((const struct tp_eobi_feed *)feed)->counters.messages;
}

static void feed_arbitrate(void *feed, uint64_t gap_wait_tsc,
                           void (*released)(void *ctx, uint64_t rx_tsc, uint64_t released_tsc),
                           void *ctx)
{
    tp_eobi_feed_arbitrate(feed, gap_wait_tsc, released, ctx);
}

static void feed_poll(void *feed, uint64_t now)
{
    tp_eobi_feed_poll(feed, now);
}

static const struct tp_venue_feed_ops feed_ops = {
    .feed_size = sizeof(struct tp_eobi_feed),
    .init = feed_init,
    .packet = feed_packet,
    .snapshot = feed_snapshot,
    .recovering = feed_recovering,
    .messages = feed_messages,
    .arbitrate = feed_arbitrate,
    .poll = feed_poll,
};

const struct tp_venue_ops tp_venue_eobi = {
    .name = "eobi",
    .bus_name = "EUREX",
    .protocol = TP_CHANNEL_EOBI,
    .registry_venue = TP_VENUE_EUREX_EOBI,
    .tpout_venue = 2,
    .sequence = TP_SEQ_MDP3,
    .framing = TP_FRAMING_SEGMENTS,
    .recovery = TP_RECOVER_SNAPSHOT_LOOP,
    .locate_map = false,
    .decode_counters = decode_counters,
    .n_decode_counters = sizeof(decode_counters) / sizeof(decode_counters[0]),
    .feed = &feed_ops,
};
