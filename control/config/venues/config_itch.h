/*
 * What a Nasdaq TotalView-ITCH 5.0 channel's config holds besides every channel's fields
 * (config.h): its MoldUDP64 re-request server and its GLIMPSE snapshot service
 * (itch_snapshot_config.h). Read by config_itch.c.
 */
#ifndef TP_CONFIG_ITCH_H
#define TP_CONFIG_ITCH_H

#include <stdint.h>

#include "itch_snapshot_config.h"

struct tp_cfg_itch_channel {
    uint32_t rerequest_host; /* recovery.rerequest: the MoldUDP64 re-request server, 0 = none */
    uint16_t rerequest_port;
    uint16_t rerequest_max_messages;     /* recovery.max_messages: per request, default 100 */
    struct tp_cfg_itch_snapshot glimpse; /* recovery.snapshot (GLIMPSE over SoupBinTCP) */
};

#endif /* TP_CONFIG_ITCH_H */
