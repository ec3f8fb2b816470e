/*
 * tickplane-replay --threads N: one ITCH capture over N workers, each a replay of its own
 * (replay_input.h) on a thread of its own, with the same output as a replay on one thread.
 *
 * Each worker applies only the messages of its window of instrument ids (replay_share.h); no
 * message is copied between threads. BinaryFILE: the first worker (the lead) frames the capture
 * once and hands each chunk's messages to their workers as index lists; a pcap: every worker
 * frames the whole capture and runs the line arbiter itself. The windows are cut before the run
 * from a pass over the capture's first 2^20 messages that counts each instrument's, so each
 * worker gets an equal share of the work, the framing counted in the lead's (an instrument
 * first defined later falls in the last window); a worker's books are sized for its window, an
 * equal part of --orders and of the recent-order window (memory stays what one thread uses; a
 * worker whose instruments hold more live orders than its part refuses adds, counted as
 * order_capacity, as one thread does beyond --orders).
 *
 * With an event file each worker publishes into a log (replay_log.h) and the calling thread
 * merges the logs into the file in the order a single thread publishes.
 *
 * Not split: the pcaps of a venue without replay_venue.each_message, such as MDP3 (a channel's
 * recovery, its snapshot loop and resets, is channel-wide, and its packets mix instruments), and
 * captures with fewer than two instruments: one worker.
 */
#ifndef TP_REPLAY_THREADS_H
#define TP_REPLAY_THREADS_H

#include <stdint.h>
#include <stdio.h>

#include "replay_events.h"
#include "replay_input.h"
#include "replay_log.h"

#define REPLAY_THREADS_MAX 256

struct replay_threads_params {
    struct replay_params replay; /* as for one thread: orders, instruments, warnings, ... */
    uint32_t threads;
    /* The event file (file, symbols, topics, file_flags), or NULL: none. */
    const struct replay_events_params *events;
};

struct replay_threads {
    uint32_t workers;
    struct replay *replay;          /* one per worker; the first is the lead (replay_share.h) */
    struct replay_share *share;     /* their windows */
    struct replay_handoff *handoff; /* BinaryFILE: the lead's chunks for the others */
    struct replay_events **events;  /* with an event file */
    struct replay_log **log;
    struct tp_feed_sink *sink; /* the workers' event sinks */
    struct tp_event_file_writer *file;
    struct replay_events_counters events_out; /* of the merged file */
    double *cpu_seconds; /* by worker: its thread's CPU time when it ended (more than one) */
    int events_failed;   /* replay_threads_open failed on the event file */
};

/*
 * How many workers a capture can use with up to `threads`, and their windows: share[i] for the
 * first *workers (share[0].lead). 1 for MDP3 or for a capture of fewer than two instruments.
 */
uint32_t replay_threads_plan(struct replay_share *share, uint32_t threads,
                             const struct replay_params *p, const uint8_t *data, size_t len);

/* Prepares the workers of a plan (plan: replay_threads_plan's). 0 or a negative error, with the
 * reason in err. */
int replay_threads_open(struct replay_threads *t, const struct replay_threads_params *p,
                        uint32_t workers, const struct replay_share *share, const uint8_t *data,
                        size_t len, char *err, size_t err_len);

/* Runs every worker to the end of the capture (one worker: on this thread), and writes the event
 * file. 0, or the first worker's error (replay_run's: its books hold what came before); the event
 * file's error (replay_events_close's) goes to *events_rc with the reason in err. */
int replay_threads_run(struct replay_threads *t, int *events_rc, char *err, size_t err_len);

/* The worker whose books hold instrument id. */
const struct replay *replay_threads_owner(const struct replay_threads *t, uint32_t id);

void replay_threads_close(struct replay_threads *t);

#endif /* TP_REPLAY_THREADS_H */
