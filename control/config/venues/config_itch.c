/*
 * Nasdaq TotalView-ITCH 5.0 channels in the config (config_venue.h): venue "NASDAQ", a 3 s
 * silence bound by default (MoldUDP64 sends heartbeats when idle), one locate map a channel.
 */
#include "config_venue.h"

/* The stage of 65,534 message pointers and lengths and, with a snapshot service
 * (recovery.snapshot), its buffer_messages of 64 bytes: the stream kept while a snapshot loads. */
static uint64_t channel_bytes(const struct tp_config *cfg, const struct tp_cfg_channel *ch)
{
    const uint64_t stage_bytes = 524288 + 131072, buffered_message_bytes = 64;
    (void)cfg;
    return stage_bytes +
           (ch->glimpse.present ? buffered_message_bytes * ch->glimpse.buffer_messages : 0);
}

const struct tp_cfg_venue tp_cfg_venue_itch = {
    .name = "itch",
    .protocol = TP_CFG_PROTO_ITCH,
    .bus_name = "NASDAQ",
    .silence_ms = 3000,
    .locate_map = true,
    .channel_bytes = channel_bytes,
    .check_files = NULL,
};
