/*
 * Nasdaq TotalView-ITCH 5.0 over MoldUDP64 as a venue (tp_venue.h): order-level books
 * (tp_itch_feed.h), messages numbered per session, gaps re-requested (mold_recovery.h) and
 * books reloaded from a GLIMPSE snapshot (itch_snapshot.h).
 */
#include <stddef.h>

#include "tp_itch_feed.h"
#include "tp_venue.h"

#define COUNTER(field)                                                                             \
    {                                                                                              \
#field, offsetof(struct tp_itch_feed, counters.field)                                      \
    }

static const struct tp_venue_counter decode_counters[] = {
    COUNTER(malformed),
    COUNTER(unknown_instrument),
    COUNTER(rejected),
    COUNTER(registry_full),
};

const struct tp_venue_ops tp_venue_itch = {
    .name = "itch",
    .bus_name = "NASDAQ",
    .protocol = TP_CHANNEL_ITCH,
    .registry_venue = TP_VENUE_NASDAQ_ITCH,
    .tpout_venue = 1,
    .sequence = TP_SEQ_MOLDUDP64,
    .framing = TP_FRAMING_MESSAGES,
    .recovery = TP_RECOVER_REREQUEST,
    .locate_map = true,
    .decode_counters = decode_counters,
    .n_decode_counters = sizeof(decode_counters) / sizeof(decode_counters[0]),
};
