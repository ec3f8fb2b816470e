/*
 * A venue's channels as the config sees them, one table per venue (config_<venue>.c here),
 * beside its data-plane ops table (dataplane/feeds/<venue>/tp_<venue>_venue.c) but free of the
 * data plane's internals, so that the control plane stays without DPDK: its "protocol" name and
 * number, its defaults, the memory its channels take and the files they name. The loader, the
 * memory estimate, the resource check and the daemon ask these tables, not the protocols.
 */
#ifndef TP_CONFIG_VENUE_H
#define TP_CONFIG_VENUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct tp_cfg_venue {
    const char *name; /* its channels' "protocol": "itch" (the data plane's tp_venue_ops name) */
    enum tp_cfg_protocol protocol;
    const char *bus_name; /* a channel's "venue" when it names none: "NASDAQ" */
    uint32_t silence_ms;  /* recovery.silence_ms when the channel gives none */
    /* Its channels each take one of the registry's locate maps (the data plane's locate_map). */
    bool locate_map;
    /* What a channel of this venue adds to the channel record and its arbiter (bytes, as
     * dataplane/daemon/channel.c lays the channel out). */
    uint64_t (*channel_bytes)(const struct tp_config *cfg, const struct tp_cfg_channel *ch);
    /* The files a channel names, checked on the host it starts on (NULL: none): 0, or a negative
     * errno with the channel key at fault in *key and why in why. */
    int (*check_files)(const struct tp_cfg_channel *ch, const char **key, char *why,
                       size_t why_size);
};

/* Each venue's table (config_<venue>.c). */
extern const struct tp_cfg_venue tp_cfg_venue_mdp3;
extern const struct tp_cfg_venue tp_cfg_venue_itch;
extern const struct tp_cfg_venue tp_cfg_venue_eobi;

/* The venues in the order the config lists their "protocol" names, NULL-terminated. */
extern const struct tp_cfg_venue *const tp_cfg_venues[];

/* The venue of a protocol, or NULL (a channel whose "protocol" was refused has 0). */
const struct tp_cfg_venue *tp_cfg_venue_get(enum tp_cfg_protocol protocol);

/*
 * The files channel ch names, as its venue checks them: 0, or a negative errno with the
 * channel key at fault in *key and why in why.
 */
int tp_cfg_venue_check_files(const struct tp_cfg_channel *ch, const char **key, char *why,
                             size_t why_size);

#endif /* TP_CONFIG_VENUE_H */
