/*
 * A venue's channels as the config sees them, one table per venue (config_<venue>.c here, its
 * fields in config_<venue>.h, a member of config_venue_channel.h's union), beside its data-plane
 * ops table (dataplane/feeds/<venue>/tp_<venue>_venue.c) but free of the data plane's internals,
 * so that the control plane stays without DPDK: its "protocol" name and number, its defaults,
 * the keys of its channel and recovery sections and their readers, the memory its channels take
 * and the files they name. The loader, the memory estimate, the resource check and the daemon
 * ask these tables, not the protocols.
 *
 * How the loader reads a channel with them: the channel is zeroed whole, then gets the defaults
 * every channel has and its own venue's (so that two channels of equal configs are equal
 * structs, which reload compares whole); a key of a venue's channel or recovery section on a
 * channel of another venue is refused ("only for protocol <venue>"); a channel whose "protocol"
 * was refused has its channel keys read as each venue reads them (their mistakes are reported
 * too, what they hold is dropped: its `proto` stays zero) but not its recovery's.
 */
#ifndef TP_CONFIG_VENUE_H
#define TP_CONFIG_VENUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct json_t;
struct loader; /* config_loader.h */

/* A line pair of a venue's recovery section: its key and where the channel holds it. */
struct tp_cfg_venue_lines {
    const char *key; /* "definitions": the pair of recovery.definitions */
    size_t offset;   /* of the pair in struct tp_cfg_channel (offsetof, into its proto) */
};

struct tp_cfg_venue {
    const char *name; /* its channels' "protocol": "itch" (the data plane's tp_venue_ops name) */
    enum tp_cfg_protocol protocol;
    const char *bus_name; /* a channel's "venue" when it names none: "NASDAQ" */
    uint32_t silence_ms;  /* recovery.silence_ms when the channel gives none */
    /* Its channels each take one of the registry's locate maps (the data plane's locate_map). */
    bool locate_map;
    /* Sets the defaults of its part of a channel, ch->proto (NULL: none). */
    void (*defaults)(struct tp_cfg_channel *ch);
    /* A channel key naming an exchange's own file of lines, read before "lines" (NULL: none);
     * import fills the channel's lines from obj[import_key], false (with an error) when the
     * channel cannot be read further. */
    const char *import_key;
    bool (*import)(struct loader *ld, const char *path, const struct json_t *value,
                   struct tp_cfg_channel *ch);
    /* Its layout releases (the channel's "release"; NULL: it has one): 0 with the release set
     * in ch, or a negative errno and why. */
    int (*release)(const char *name, struct tp_cfg_channel *ch, char *why, size_t why_size);
    /* Its own channel keys (NULL-terminated, or NULL), read by parse_channel after "recovery". */
    const char *const *channel_keys;
    void (*parse_channel)(struct loader *ld, const char *path, const struct json_t *obj,
                          struct tp_cfg_channel *ch);
    /* The keys of "recovery" it takes besides the timers (NULL-terminated), read by
     * parse_recovery; require_recovery (NULL: none) says what it needs before anything is read
     * (obj NULL: the channel has no "recovery"). */
    const char *const *recovery_keys;
    void (*require_recovery)(struct loader *ld, const char *path, const struct json_t *obj);
    void (*parse_recovery)(struct loader *ld, const char *path, const struct json_t *obj,
                           struct tp_cfg_channel *ch, const int rx_ports[2]);
    /* The line pairs of its recovery besides the common "snapshot" (key NULL ends the list;
     * NULL: none), for the checks of every line of a channel. */
    const struct tp_cfg_venue_lines *recovery_lines;
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
