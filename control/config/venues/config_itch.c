/*
 * Nasdaq TotalView-ITCH 5.0 channels in the config (config_venue.h): venue "NASDAQ", a 3 s
 * silence bound by default (MoldUDP64 sends heartbeats when idle), one locate map a channel;
 * recovery by MoldUDP64 re-request ("rerequest", "max_messages") and a GLIMPSE snapshot service
 * over SoupBinTCP ("snapshot", itch_snapshot_config.h): config_itch.h, not multicast lines.
 */
#include <stdlib.h>
#include <string.h>

#include "config_itch.h"
#include "config_loader.h"
#include "config_venue.h"

static void defaults(struct tp_cfg_channel *ch)
{
    ch->proto.itch.rerequest_max_messages = 100;
}

/* "rerequest": "<unicast IPv4>:<port>" of the MoldUDP64 re-request server. */
static void parse_rerequest(struct loader *ld, const char *path, const json_t *obj,
                            struct tp_cfg_channel *ch)
{
    char text[64], child[TP_JW_PATH_MAX];
    tp_jw_path_key(child, path, "rerequest");
    if (!tp_jw_string(ld->errs, path, obj, "rerequest", sizeof(text), false, text))
        return;
    char *colon = strrchr(text, ':');
    char *end = NULL;
    unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
    if (colon != NULL)
        *colon = '\0';
    uint32_t host;
    if (colon == NULL || end == colon + 1 || *end != '\0' || port == 0 || port > 65535 ||
        tp_parse_ipv4(text, &host) != 0 || host == 0 || (host >> 28) == 0xe) {
        tp_jw_error(ld->errs, child, "expected \"<unicast IPv4>:<port>\"");
        return;
    }
    ch->proto.itch.rerequest_host = host;
    ch->proto.itch.rerequest_port = (uint16_t)port;
}

static void parse_itch_recovery(struct loader *ld, const char *path, const json_t *obj,
                                struct tp_cfg_channel *ch, const int rx_ports[2])
{
    (void)rx_ports;
    json_t *snap = tp_jw_get(ld->errs, path, obj, "snapshot", JSON_OBJECT, false);
    char child[TP_JW_PATH_MAX];
    tp_jw_path_key(child, path, "snapshot");
    tp_cfg_parse_itch_snapshot(ld->errs, child, snap, &ch->proto.itch.glimpse);
    parse_rerequest(ld, path, obj, ch);
    uint64_t v;
    if (tp_jw_uint(ld->errs, path, obj, "max_messages", 1, 65535, false, &v))
        ch->proto.itch.rerequest_max_messages = (uint16_t)v;
}

/* The stage of 65,534 message pointers and lengths and, with a snapshot service
 * (recovery.snapshot), its buffer_messages of 64 bytes: the stream kept while a snapshot loads. */
static uint64_t channel_bytes(const struct tp_config *cfg, const struct tp_cfg_channel *ch)
{
    const uint64_t stage_bytes = 524288 + 131072, buffered_message_bytes = 64;
    const struct tp_cfg_itch_snapshot *glimpse = &ch->proto.itch.glimpse;
    (void)cfg;
    return stage_bytes + (glimpse->present ? buffered_message_bytes * glimpse->buffer_messages : 0);
}

static const char *const recovery_keys[] = {"snapshot", "rerequest", "max_messages", NULL};

const struct tp_cfg_venue tp_cfg_venue_itch = {
    .name = "itch",
    .protocol = TP_CFG_PROTO_ITCH,
    .bus_name = "NASDAQ",
    .silence_ms = 3000,
    .locate_map = true,
    .defaults = defaults,
    .recovery_keys = recovery_keys,
    .parse_recovery = parse_itch_recovery,
    .channel_bytes = channel_bytes,
    .check_files = NULL,
};
