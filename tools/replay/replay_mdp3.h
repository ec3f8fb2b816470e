/*
 * tickplane-replay's MDP3 venue (replay_venue_mdp3, replay_mdp3.c): its feed and the state of its
 * packets' path (replay_mdp3_channel.h), replay.venue_state[REPLAY_SLOT_mdp3].
 */
#ifndef TP_REPLAY_MDP3_H
#define TP_REPLAY_MDP3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay_input.h"
#include "tp_mdp3_feed.h"

/* A side loop's packet that waits for the incrementals held behind a gap. */
struct replay_mdp3_waiting {
    const uint8_t *payload; /* in the mapped capture */
    uint64_t ts;
    uint64_t record;
    size_t offset;
    uint16_t len;
    uint8_t role; /* enum replay_line_role */
};

struct replay_mdp3 {
    struct tp_mdp3_feed feed;
    /* The latest packet of the snapshot loop and of the MBO snapshot loop, and of the definition
     * loop (done once it came round). */
    uint32_t snap_last_seq[2];
    uint32_t def_last_seq;
    bool definitions_done;
    bool started;                        /* the arbiter follows MDP3's sequencing */
    struct replay_mdp3_waiting *waiting; /* REPLAY_HELD_MAX of them */
    uint32_t n_waiting;
};

static inline struct replay_mdp3 *replay_mdp3_of(const struct replay *r)
{
    return r->venue_state[REPLAY_SLOT_mdp3];
}

#endif /* TP_REPLAY_MDP3_H */
