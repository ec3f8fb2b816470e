/*
 * Eurex T7 EOBI channels in the config (config_venue.h): venue "EUREX"; the T7 release of its
 * layouts ("release", two run at once in a migration); recovery by its snapshot lines only,
 * required, and the channel's timers other than gap_wait_us do not run for it.
 */
#include <stdio.h>

#include "config_eobi.h"
#include "config_loader.h"
#include "config_venue.h"
#include "eobi_release.h"

static void defaults(struct tp_cfg_channel *ch)
{
    ch->proto.eobi.release = TP_EOBI_RELEASE_DEFAULT;
}

static int release(const char *name, struct tp_cfg_channel *ch, char *why, size_t why_size)
{
    int r = tp_eobi_release_parse(name);
    if (r < 0) {
        snprintf(why, why_size, "unknown T7 release \"%s\" (known: %s)", name,
                 TP_EOBI_RELEASE_NAMES);
        return r;
    }
    ch->proto.eobi.release = (uint8_t)r;
    return 0;
}

/* EOBI resends nothing: a segment's gap (and a late start) is filled only from its snapshot
 * feed, so a channel without snapshot lines could never vouch for a book. */
static void require_recovery(struct loader *ld, const char *path, const json_t *obj)
{
    if (obj != NULL && json_object_get(obj, "snapshot") != NULL)
        return;
    char child[TP_JW_PATH_MAX];
    tp_jw_path_key(child, path, "snapshot");
    tp_jw_error(ld->errs, child, "required for protocol eobi (its only recovery)");
}

/* The feed tells its gaps by each segment's sequence (a hole waits gap_wait_us for the other
 * line) and waits for the snapshot as long as it takes, its books flagged all along: the
 * channel's other timers do not run for it. */
static void parse_eobi_recovery(struct loader *ld, const char *path, const json_t *obj,
                                struct tp_cfg_channel *ch, const int rx_ports[2])
{
    static const char *const timers[] = {"give_up_ms", "silence_ms", NULL};
    parse_line_pair_key(ld, path, obj, "snapshot", ch->snapshot, rx_ports);
    for (unsigned i = 0; timers[i] != NULL; i++) {
        char child[TP_JW_PATH_MAX];
        tp_jw_path_key(child, path, timers[i]);
        if (json_object_get(obj, timers[i]) != NULL)
            tp_jw_error(ld->errs, child,
                        "not for protocol eobi (its segments recover from the "
                        "snapshot feed, flagged until then)");
    }
}

/* Its feed (struct tp_eobi_feed, about 4.2 MiB: its segment and SecurityID tables, the 2 MiB
 * buffer of incrementals kept while a segment waits for its snapshot and the 256 KiB of snapshot
 * packets held for the other snapshot line). */
static uint64_t channel_bytes(const struct tp_config *cfg, const struct tp_cfg_channel *ch)
{
    const uint64_t feed_bytes = 9u << 19;
    (void)cfg;
    (void)ch;
    return feed_bytes;
}

static const char *const recovery_keys[] = {"snapshot", NULL};

const struct tp_cfg_venue tp_cfg_venue_eobi = {
    .name = "eobi",
    .protocol = TP_CFG_PROTO_EOBI,
    .bus_name = "EUREX",
    .silence_ms = 0,
    .locate_map = false,
    .defaults = defaults,
    .release = release,
    .recovery_keys = recovery_keys,
    .require_recovery = require_recovery,
    .parse_recovery = parse_eobi_recovery,
    .channel_bytes = channel_bytes,
    .check_files = NULL,
};
