/*
 * Progress of a long replay on a terminal: bytes framed of the capture, messages per second and
 * the time left, on one line of stderr rewritten at most twice a second. Nothing when stderr is
 * not a terminal (logs, pipes, tests) or with --quiet.
 */
#ifndef TP_REPLAY_PROGRESS_H
#define TP_REPLAY_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "replay_input.h"

struct replay_progress {
    FILE *out;
    size_t total; /* capture bytes */
    double start, last;
    bool shown; /* a line was written: end it */
};

/* Prepares progress for a capture of `total` bytes on `out`; installs it on r when out is a
 * terminal and quiet is 0. */
void replay_progress_start(struct replay_progress *p, struct replay *r, FILE *out, size_t total,
                           int quiet);

/* Ends the progress line, if one was written. */
void replay_progress_end(struct replay_progress *p);

#endif /* TP_REPLAY_PROGRESS_H */
