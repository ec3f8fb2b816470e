/*
 * tickplane-replay's ITCH venue (replay_venue_itch, replay_itch.c): its feed and the state of its
 * MoldUDP64 path (replay_mold.h), replay.venue_state[REPLAY_SLOT_itch]. Its other files reach the
 * feed here: the threaded BinaryFILE (replay_share.h) and the GLIMPSE snapshot
 * (replay_snapshot.h).
 */
#ifndef TP_REPLAY_ITCH_H
#define TP_REPLAY_ITCH_H

#include <stdint.h>

#include "replay_input.h"
#include "tp_itch_feed.h"

struct replay_itch {
    struct tp_itch_feed feed;
    uint32_t line_a_group; /* destination of line A (replay_mold.h) */
};

static inline struct replay_itch *replay_itch_of(const struct replay *r)
{
    return r->venue_state[REPLAY_SLOT_itch];
}

static inline struct tp_itch_feed *replay_itch_feed(const struct replay *r)
{
    return &replay_itch_of(r)->feed;
}

#endif /* TP_REPLAY_ITCH_H */
