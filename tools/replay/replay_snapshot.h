/*
 * The GLIMPSE snapshot that completes a capture started mid-session.
 *
 * replay_snapshot_load reads a recorded GLIMPSE 5.0 session: the bytes a SoupBinTCP client
 * receives (login accepted, sequenced data packets of ITCH messages, the snapshot message 'G'),
 * as tickplane-sim --glimpse-file writes them. Its messages go to the replay's ITCH feed, and the
 * MoldUDP64 arbiter (replay_mold.h) starts at the sequence 'G' names: the capture's older
 * messages are the other line's copies of what the snapshot holds (dropped as duplicates), and a
 * capture that starts after it has a gap (given up, the books flagged stale), as in the daemon.
 */
#ifndef TP_REPLAY_SNAPSHOT_H
#define TP_REPLAY_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replay_input.h"

/* 0, or -EBADMSG with why in err (not a GLIMPSE session, cut, rejected, no 'G'). Call it
 * after replay_open, before replay_run. */
int replay_snapshot_load(struct replay *r, const uint8_t *data, size_t len, char *err,
                         size_t err_size);

#endif /* TP_REPLAY_SNAPSHOT_H */
