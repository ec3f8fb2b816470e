/*
 * A venue: what the data plane needs to know of a market-data protocol to run its channels, one
 * ops table per venue (struct tp_venue_ops), as DPDK's drivers/net/<pmd>/ sit behind one ops
 * table each. A venue is a combination of parts the daemon already has:
 *
 *   framing     how a packet becomes what the feed applies: messages framed by the channel and
 *               applied one after the other (MoldUDP64 blocks), whole packets the feed walks,
 *               or whole packets of many sequences that the feed orders itself (EOBI)
 *   sequence    how its packets are numbered on a line (the arbiter's rules, arbiter.h): one
 *               number per message with a session (MoldUDP64), one per packet (MDP3)
 *   recovery    what fills a gap the other line did not: a re-request server (then a snapshot
 *               service for what it cannot give), or a snapshot loop the channel joins while an
 *               instrument's own sequence says its book is behind (MDP3 RptSeq)
 *   books       its feed (tp_<venue>_feed.h): messages -> registry and books, through the sink
 *               (tp_feed_sink.h) that the publisher and tickplane-replay implement
 *   identity    its config "protocol" name, its instruments' registry venue, its tpout venue
 *
 * Where a venue lives (a newcomer who knows one venue's folder knows the next one's):
 *
 *   codecs/<venue>/                 wire formats: parse, encode, print as JSON (tickplane-dump)
 *   dataplane/feeds/<venue>/        tp_<venue>_feed.*: decode -> books; its recovery state;
 *                                   tp_<venue>_venue.c: its struct tp_venue_ops
 *   dataplane/feeds/tp_venues.c     the one list of the venues (tp_venue_get, tp_venue_find)
 *   control/config/venues/          config_<venue>.c: its struct tp_cfg_venue (config_venue.h):
 *                                   its "protocol", defaults, channel and recovery keys, memory
 *                                   and files; control/config/venues/config_venues.c lists them
 *   tools/sim/<venue>_feed.*        its simulator session; tools/sim/sim_<venue>.c: its
 *                                   tickplane-sim options and run (struct sim_venue)
 *   tools/dump/dump_<venue>.c       its tickplane-dump printer and options (struct dump_venue)
 *   tools/replay/replay_<venue>.c   its tickplane-replay table (struct replay_venue): --venue
 *                                   name, auto detection, its feed state, the path of its
 *                                   packets, its summary counters, what its books say (stale)
 *   meson.build `venues`            the tools' one list of the venues: the build adds each
 *                                   one's tools files above, and the tools list their tables
 *                                   from it (dump_venues.c, sim_venues.c, replay_venues.c,
 *                                   through TP_VENUES in tools/common/tool_venues.h.in)
 *
 * The channel (dataplane/daemon/channel.h) runs a venue's channels from this table: it asks it
 * for the arbiter's rules, picks its packet path by framing and its gap handling by recovery,
 * finds the instruments a channel feeds by registry venue, and drives a TP_FRAMING_SEGMENTS
 * venue's feed through its feed ops alone. The daemon names protocols,
 * exports decode counters and numbers tpout venues from it.
 */
#ifndef TP_VENUE_H
#define TP_VENUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arbiter.h"

struct tp_books;
struct tp_feed_sink;
struct tp_instrument_filter;
struct tp_instruments;

/* What a channel carries: a venue's protocol (the config's numbers: enum tp_cfg_protocol). */
enum tp_channel_protocol {
    TP_CHANNEL_MDP3 = 1, /* CME MDP 3.0 */
    TP_CHANNEL_ITCH = 2, /* Nasdaq ITCH 5.0 over MoldUDP64 */
    TP_CHANNEL_EOBI = 3, /* Eurex T7 EOBI */
};

enum tp_venue_framing {
    TP_FRAMING_MESSAGES, /* the channel frames each packet's messages, the feed applies them */
    TP_FRAMING_PACKETS,  /* the feed takes whole packets (framing checked before arbitration) */
    /* The feed takes whole packets of both lines as they come and orders them itself: a group
     * carries many sequences (one per market segment), so there is no channel-wide one to
     * arbitrate; the feed skips the second copy of each packet (struct tp_venue_feed_ops). */
    TP_FRAMING_SEGMENTS,
};

enum tp_venue_recovery {
    /* Gaps are re-requested from the venue's server (a channel without one gives them up at
     * once): a gap given up flags the channel's books stale, and a snapshot service, when the
     * config has one, reloads them (and starts a late joiner). */
    TP_RECOVER_REREQUEST,
    /* Nothing re-sends: each instrument tells its own losses by its sequence, and the channel
     * joins the snapshot lines until every instrument it lost is rebuilt from a snapshot. */
    TP_RECOVER_SNAPSHOT_LOOP,
};

/*
 * A TP_FRAMING_SEGMENTS venue's feed, as the channel drives it: the feed is feed_size bytes of
 * the channel's memory (64-byte aligned), prepared by init (over the channel's registry, books,
 * filter, channel id, the layout release its config chose (EOBI: enum tp_eobi_release) and the
 * publisher's sink); each incremental packet of line A or B goes to
 * packet and each snapshot packet to snapshot; the channel joins the snapshot lines while
 * recovering says a part of the feed waits for a snapshot, and leaves them when none does.
 * packet and snapshot return 0 or a negative errno (counted as feed errors).
 */
struct tp_venue_feed_ops {
    size_t feed_size;
    int (*init)(void *feed, struct tp_instruments *registry, struct tp_books *books,
                const struct tp_instrument_filter *filter, uint16_t channel, uint8_t layout,
                const struct tp_feed_sink *sink);
    int (*packet)(void *feed, const uint8_t *payload, size_t len, uint64_t rx_tsc);
    int (*snapshot)(void *feed, const uint8_t *payload, size_t len, uint64_t rx_tsc);
    uint32_t (*recovering)(const void *feed);
    uint64_t (*messages)(const void *feed); /* venue messages applied so far */
    /* A/B arbitration: a hole waits up to gap_wait_tsc for the other line before it is a gap;
     * released(ctx, rx_tsc, now) ends each held packet's wait; poll declares the waits over. */
    void (*arbitrate)(void *feed, uint64_t gap_wait_tsc,
                      void (*released)(void *ctx, uint64_t rx_tsc, uint64_t released_tsc),
                      void *ctx);
    void (*poll)(void *feed, uint64_t now);
};

/* A counter of the venue's feed, exported as "channel=X.decode.<name>". */
struct tp_venue_counter {
    const char *name;
    size_t offset; /* of its uint64_t in the feed (struct tp_<venue>_feed) */
};

struct tp_venue_ops {
    const char *name;     /* config "protocol", status and counters: "itch" */
    const char *bus_name; /* the venue's name on the bus when the config names none: "NASDAQ" */
    enum tp_channel_protocol protocol;
    uint8_t registry_venue;     /* enum tp_venue of the instruments its channels define */
    uint8_t tpout_venue;        /* the venue field of its tpout records (0..TP_TPOUT_VENUES-1) */
    enum tp_seq_rules sequence; /* TP_FRAMING_SEGMENTS: unused (the feed orders its packets) */
    enum tp_venue_framing framing;
    enum tp_venue_recovery recovery;
    /* Its channels each own one of the registry's locate maps (ITCH stock locates, bound by its
     * messages): the daemon gives one to each of them, and a channel stopped resets its map. */
    bool locate_map;
    const struct tp_venue_counter *decode_counters;
    unsigned n_decode_counters;
    const struct tp_venue_feed_ops *feed; /* TP_FRAMING_SEGMENTS only; NULL otherwise */
};

/* tpout venues the bus numbers (one name each per running config). */
#define TP_TPOUT_VENUES 3

/* Each venue's ops table (dataplane/feeds/<venue>/tp_<venue>_venue.c). */
extern const struct tp_venue_ops tp_venue_itch;
extern const struct tp_venue_ops tp_venue_mdp3;
extern const struct tp_venue_ops tp_venue_eobi;

/* The venue of a protocol, or NULL when there is none. */
const struct tp_venue_ops *tp_venue_get(enum tp_channel_protocol protocol);
/* The venue a config's "protocol" names, or NULL. */
const struct tp_venue_ops *tp_venue_find(const char *name);
/* The venue of tpout venue `tpout`, or NULL. */
const struct tp_venue_ops *tp_venue_of_tpout(uint8_t tpout);
/* The venues in order, NULL-terminated (for lists such as a config's protocol names). */
extern const struct tp_venue_ops *const tp_venues[];

#endif /* TP_VENUE_H */
