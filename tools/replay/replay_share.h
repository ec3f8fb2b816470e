/*
 * A worker's share of a replay split over threads (replay_threads.h). Every worker frames the
 * whole capture and arbitrates its lines itself (the same packets, the same verdicts); it applies
 * only the messages of the instruments its books hold, a window of the instance's ids, so the
 * books, their change records and time priorities are those of a replay on one thread.
 *
 * Promises:
 *  - A stock directory (R) goes to every worker: the registries stay equal, locates bind the
 *    same ids everywhere; only the worker whose books take the id counts and publishes it.
 *  - Messages that name no instrument of a window (system events, broken trades, unknown
 *    locates, malformed ones) go to the lead worker alone, so each counter counts once.
 *  - A new order gets the priority the whole feed would give it: a worker counts the new
 *    orders of the others as it passes them.
 *  - BinaryFILE: only the lead frames the capture. It sorts each chunk of messages out into one
 *    index list per worker (a stock directory in every list) and hands the chunk over
 *    (struct replay_handoff); the other workers apply their lists and frame nothing.
 *  - A worker's messages wait REPLAY_SHARE_AHEAD of its own behind the framing, their order
 *    slots and best levels prefetched (the feed's burst does the same for one thread), and are
 *    applied in order; replay_share_flush applies those still waiting.
 */
#ifndef TP_REPLAY_SHARE_H
#define TP_REPLAY_SHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "tp_feed_sink.h"

struct replay;
struct replay_log;
struct replay_handoff;

#define REPLAY_SHARE_AHEAD 16 /* a power of two */

struct replay_share_pending {
    const uint8_t *msg;
    uint16_t len;
    uint32_t id; /* an order message's instrument (its levels are prefetched), else NONE */
    uint64_t priority;
    uint64_t seq;
    struct tp_feed_info info;
};

/* Each worker's on cache lines of its own (a worker writes its share every message; the
 * adjacent-line prefetcher fetches lines in pairs). */
#define REPLAY_WORKER_ALIGN 128

struct replay_share {
    _Alignas(REPLAY_WORKER_ALIGN)
        uint32_t first_id; /* the instrument ids this worker's books hold: [first_id, end_id) */
    uint32_t end_id;
    bool lead;         /* also applies what names no instrument of a window */
    uint64_t priority; /* the priority the feed gives the next new order, over every worker's */
    uint64_t seq; /* messages and stale-marking passes so far: the order of what is published */
    uint64_t key; /* seq of the message being applied (or pass): what its records are keyed by */
    struct replay_log *log; /* with an event file: where the worker's records go (replay_log.h) */
    struct replay_handoff *handoff; /* BinaryFILE over threads: the lead's chunks; else NULL */
    uint32_t worker;                /* this worker's index in the handoff's lists */
    uint32_t first, waiting;        /* of pending[] */
    struct replay_share_pending pending[REPLAY_SHARE_AHEAD];
};

static inline bool replay_share_holds(const struct replay_share *s, uint32_t id)
{
    return id - s->first_id < s->end_id - s->first_id;
}

/* One ITCH message of the capture, in order: applied if it is this worker's, else passed. */
void replay_share_message(struct replay *r, const uint8_t *msg, uint16_t len,
                          struct tp_feed_info *info);

/* The same for n messages in a row. */
void replay_share_burst(struct replay *r, const uint8_t *const *msg, const uint16_t *len,
                        uint32_t n, struct tp_feed_info *info);

/*
 * The chunks the lead frames for the others (BinaryFILE): REPLAY_HANDOFF_SLOTS of them in a
 * ring, each published with a release store and given back by every other worker with one.
 */
#define REPLAY_HANDOFF_CHUNK 1024 /* messages a chunk */
#define REPLAY_HANDOFF_SLOTS 64   /* a power of two */

/* 0, or -ENOMEM. owner_of: by instrument id, the worker whose window holds it. */
int replay_handoff_open(struct replay_handoff **h, uint32_t workers, const uint8_t *owner_of,
                        uint32_t instruments);
void replay_handoff_close(struct replay_handoff *h);

/*
 * The lead: frames the BinaryFILE, sorts out and hands over every chunk, and applies its own
 * messages. 0 at the end of the capture, or the BinaryFILE reader's negative error at
 * *error_offset (the others get every chunk framed before it).
 */
int replay_share_frame(struct replay *r, size_t *error_offset);

/* Any other worker: applies its messages of the lead's chunks to the last one. */
void replay_share_follow(struct replay *r);

/* Applies the messages still waiting (before a stale-marking pass, at the end). */
void replay_share_flush(struct replay *r);

#endif /* TP_REPLAY_SHARE_H */
