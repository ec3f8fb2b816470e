/*
 * A GLIMPSE 5.0 snapshot fetch: SoupBinTCP login (blank session, sequence 1), the ITCH messages
 * of the snapshot handed on in order, the snapshot message 'G' ends it (logout), and a bounded
 * number of attempts with a pause between them when a connection fails, is refused or drops.
 *
 * The sink sees, per attempt: begin, the messages, then either end (with the sequence to continue
 * from) or failed (the reason; `final` when no attempt is left). A new begin means the previous
 * attempt's messages are void: the snapshot starts over. Messages are checked for the least the
 * receiver relies on (a type byte, at most TP_GLIMPSE_MAX_MESSAGE bytes); a snapshot message of
 * the wrong form fails the attempt as malformed.
 *
 * Promises: never blocks (the caller polls it from its loop, with the time in ms); counters say
 * how many attempts, completions, refusals and drops there were, and last_fail why the latest
 * attempt failed. No DPDK.
 */
#ifndef TP_GLIMPSE_SESSION_H
#define TP_GLIMPSE_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "soupbin_client.h"

/* The longest message a snapshot may carry (ITCH 5.0's longest is 50 bytes). */
#define TP_GLIMPSE_MAX_MESSAGE 64

struct tp_glimpse_sink {
    void *ctx;
    void (*begin)(void *ctx, uint32_t attempt);
    /* 0, or -EAGAIN when the receiver is full (offered again at the next poll). */
    int (*message)(void *ctx, const uint8_t *msg, uint16_t len);
    void (*end)(void *ctx, uint64_t next_seq);
    void (*failed)(void *ctx, enum tp_soup_fail why, bool final);
};

struct tp_glimpse_params {
    struct tp_soup_client_params soup; /* session and sequence are set by the fetch */
    uint32_t attempts;                 /* at least 1 */
    uint32_t retry_ms;                 /* pause after a failed attempt */
    uint32_t snapshot_timeout_ms;      /* one attempt, login to 'G' (0: no limit) */
};

struct tp_glimpse_counters {
    uint64_t attempts;
    uint64_t completed;
    uint64_t failed;   /* attempts that failed, whatever the reason */
    uint64_t rejected; /* of which: login rejected */
    uint64_t dropped;  /* of which: connection closed, silent, or timed out mid-snapshot */
    uint64_t gave_up;  /* fetches that ended with no attempt left */
    uint64_t messages; /* ITCH messages handed to the sink */
};

enum tp_glimpse_state {
    TP_GLIMPSE_IDLE = 0,
    TP_GLIMPSE_RUNNING,
    TP_GLIMPSE_WAITING, /* between attempts */
};

struct tp_glimpse_session {
    struct tp_glimpse_params params;
    struct tp_glimpse_sink sink;
    struct tp_glimpse_counters counters;
    enum tp_glimpse_state state;
    enum tp_soup_fail last_fail;
    uint32_t attempt; /* of the current fetch, from 1 */
    uint64_t attempt_ms;
    uint64_t retry_at_ms;
    bool snapshot_done; /* 'G' seen in this attempt */
    uint64_t next_seq;
    struct tp_soup_client soup;
};

void tp_glimpse_init(struct tp_glimpse_session *g, const struct tp_glimpse_params *params,
                     const struct tp_glimpse_sink *sink);

/* Starts a fetch (ignored, returning -EBUSY, while one runs). */
int tp_glimpse_start(struct tp_glimpse_session *g, uint64_t now_ms);

/* tp_glimpse_start whose first attempt runs over a socket the caller connected (the fuzz target:
 * a socketpair); the fetch takes the descriptor. Later attempts connect to the server. */
int tp_glimpse_start_on(struct tp_glimpse_session *g, int fd, uint64_t now_ms);

/* Moves the fetch on; returns the state. */
enum tp_glimpse_state tp_glimpse_poll(struct tp_glimpse_session *g, uint64_t now_ms);

/* Stops a running fetch at once (no sink call). */
void tp_glimpse_cancel(struct tp_glimpse_session *g);

#endif /* TP_GLIMPSE_SESSION_H */
