/*
 * replay_venue.h - what tickplane-replay knows of a venue, one table per venue (replay_<venue>.c),
 * all listed in replay_venues.c from the build's venues (tool_venues.h): adding a venue to the
 * replay is adding its file and its name to the top meson.build's `venues`.
 *
 * A venue has a --venue name, a test of a pcap's first UDP payload (auto detection), its feed
 * state (opened for every replay, since the summary gives every venue's counters), the path of
 * its UDP packets (the daemon's channel path for it) and what is left to do at the end of the
 * capture, its counters in the summary JSON, and what the printed books say of its instruments
 * (stale, an order view's "orders_incomplete"), and its own command-line options. A venue may read
 * a file format of its own instead
 * of a pcap (--format binaryfile: ITCH's BinaryFILE) and may split its captures over threads
 * (replay_threads.h).
 */
#ifndef TP_REPLAY_VENUE_H
#define TP_REPLAY_VENUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tool_venue_option.h"
#include "tool_venues.h"

struct replay;
struct replay_params;
struct tp_feed_sink;
struct tp_udp_view;

/* Each venue's place in the list: its feed state is replay.venue_state[REPLAY_SLOT_<name>]. */
#define REPLAY_VENUE_SLOT(name) REPLAY_SLOT_##name,
enum replay_venue_slot { TP_VENUES(REPLAY_VENUE_SLOT) REPLAY_VENUES };

struct replay_venue {
    const char *name; /* --venue: "itch" */
    /* Does a pcap's first UDP payload look like the venue's? Without --venue the venues are asked
     * in the list's order and the first that says yes is the capture's. NULL: only --venue names
     * it. */
    bool (*looks_like)(const struct tp_udp_view *u);
    uint8_t registry_venue; /* enum tp_venue of the instruments its feed defines */
    /* Its feed's part of the replay's table memory (beside the registry and books); NULL: none. */
    size_t (*table_bytes)(const struct replay_params *p);
    /* Prepares its state in r->venue_state[] over r's registry and books (replay_open), its
     * table_bytes at `tables`, its feed reporting to `sink`: 0 or a negative errno. */
    int (*open)(struct replay *r, const struct replay_params *p, void *tables,
                const struct tp_feed_sink *sink);
    void (*set_sink)(struct replay *r, const struct tp_feed_sink *sink); /* replay_set_output */
    void (*close)(struct replay *r); /* after any open, even a failed one */
    /* One UDP datagram of pcap record `record` (1-based) at byte `offset`, time `ts` (ns). */
    void (*packet)(struct replay *r, const struct tp_udp_view *u, uint64_t ts, uint64_t record,
                   size_t offset);
    void (*finish)(struct replay *r); /* the end of the capture; NULL: nothing to do */
    /* Its own file format, read whole instead of a pcap: 0 or a negative error. NULL: none. */
    int (*run_file)(struct replay *r);
    /* Threaded replay (replay_threads.h): calls count(ctx, msg, len) for each message of a UDP
     * payload while it returns true. NULL: its captures run on one worker. */
    void (*each_message)(const struct tp_udp_view *u,
                         bool (*count)(void *ctx, const uint8_t *msg, uint16_t len), void *ctx);
    /* Its feed's counters in the summary JSON (",\"itch\":{...}"): of `parts` replays of one
     * capture (replay_threads.h), summed where each counts its own instruments. */
    void (*print_counters)(FILE *out, const struct replay *part, uint32_t parts);
    /* Its feed says when a snapshot repaired a book (a stale callback of 0 clears the flag);
     * else a flagged book stays flagged. */
    bool snapshot_clears_stale;
    /* Is instrument id's book stale? NULL: as the sink's stale callbacks flagged it. */
    bool (*stale)(const struct replay *r, uint32_t id);
    /* Does its order view lack orders from before the capture? NULL: the venue does not say. */
    bool (*orders_incomplete)(const struct replay *r, uint32_t id);
    /* Options of its own (--NAME ARG), parsed into its file's settings before any replay opens,
     * which every replay of the process then takes. */
    const struct tool_venue_option *options;
    unsigned n_options;
};

/* Each venue's table, replay_venue_<name> (replay_<name>.c), one for each of the build's venues. */
#define REPLAY_VENUE_DECLARE(name) extern const struct replay_venue replay_venue_##name;
TP_VENUES(REPLAY_VENUE_DECLARE)

/* The venues in the build's order (tool_venues.h), as the usage text and the summary list them
 * and auto detection asks them, NULL-terminated. */
extern const struct replay_venue *const replay_venues[];

/* The venue named name, or NULL. */
const struct replay_venue *replay_venue_find(const char *name);

/* The first venue (in the list's order) that a UDP payload looks like, or NULL. */
const struct replay_venue *replay_venue_detect(const struct tp_udp_view *u);

/* The venue whose instruments have registry venue `registry_venue` (enum tp_venue), or NULL. */
const struct replay_venue *replay_venue_of_instrument(uint8_t registry_venue);

/* The venue that has a file format of its own (--format binaryfile), or NULL. */
const struct replay_venue *replay_venue_of_file(void);

/* The venues' names joined by '|' ("itch|mdp3|eobi"). */
const char *replay_venue_names(void);

#endif /* TP_REPLAY_VENUE_H */
