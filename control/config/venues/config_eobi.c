/*
 * Eurex T7 EOBI channels in the config (config_venue.h): venue "EUREX"; the channel's timers
 * other than gap_wait_us do not run for it (its segments recover from the snapshot feed).
 */
#include "config_venue.h"

/* Its feed (struct tp_eobi_feed, about 3.9 MiB: its segment and SecurityID tables and the 2 MiB
 * buffer of incrementals kept while a segment waits for its snapshot). */
static uint64_t channel_bytes(const struct tp_config *cfg, const struct tp_cfg_channel *ch)
{
    const uint64_t feed_bytes = 4u << 20;
    (void)cfg;
    (void)ch;
    return feed_bytes;
}

const struct tp_cfg_venue tp_cfg_venue_eobi = {
    .name = "eobi",
    .protocol = TP_CFG_PROTO_EOBI,
    .bus_name = "EUREX",
    .silence_ms = 0,
    .locate_map = false,
    .channel_bytes = channel_bytes,
    .check_files = NULL,
};
