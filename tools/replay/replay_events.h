/*
 * tickplane-replay --events: the records the data plane would publish for a capture, written to
 * an event file (tickplane/event_file.h).
 *
 * The records are made by the daemon's own publisher (dataplane/publish), which encodes each one
 * straight into the event file writer's buffer (or a worker's log) through its output
 * (tp_pub_output) instead of the bus's ring, so a file holds the very records, byte for byte, a
 * strategy reads from the bus of a live session. The publisher still takes a bus of this process
 * (segments created in a private directory and unlinked at once) for its interest: which
 * instruments are published. The bus has no conflated state table (a file has no use for one).
 *
 * Promises:
 *  - Selection by symbol glob (control/util/glob.h): instruments that do not match are not
 *    published at all (the bus's interest, as the daemon does for instruments nobody wants), so
 *    not even their definitions are in the file. Channel-wide events are kept.
 *  - Selection by record topic (TP_TOPIC_BIT mask of DEPTH, TRADES, ORDERS, STATUS, DEFINITIONS):
 *    an OrderEvent carrying level changes (TP_RECORD_ORDER_DEPTH) is kept when ORDERS or DEPTH is.
 *  - With a selection, the last record kept of each venue event carries endOfEvent (the one
 *    that had it may be left out); without one, every record is the bus's, byte for byte.
 *  - No record can be lost on its way to the file: it is encoded where it stays. A write error,
 *    or a record over the bus's record size (8 KiB, which the bus would refuse as well; no
 *    capture makes one), is reported by replay_events_close, never silently.
 */
#ifndef TP_REPLAY_EVENTS_H
#define TP_REPLAY_EVENTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tp_feed_sink.h"

struct replay_log;
struct tp_books;
struct tp_event_file_writer;
struct tp_instruments;

struct replay_events_params {
    FILE *file;          /* where the event file goes (the caller closes it) */
    const char *symbols; /* glob, or NULL: every instrument */
    uint32_t topics;     /* TP_TOPIC_BIT mask of record topics; 0: every topic */
    uint32_t instruments;
    const struct tp_books *books;
    const struct tp_instruments *registry;
    uint32_t file_flags; /* TP_EVENT_FILE_F_* */
    /* A worker of a threaded replay: its records and event ends go to this log (replay_log.h),
     * keyed by *key at the time, and the merger writes the file; `file` is not used. */
    struct replay_log *log;
    const uint64_t *key;
};

struct replay_events_counters {
    uint64_t records;   /* written to the file */
    uint64_t bytes;     /* of the file */
    uint64_t skipped;   /* published, not of a selected topic */
    uint64_t too_large; /* published, over the bus's record size: left out (must stay 0) */
};

struct replay_events;

/* A comma-separated list of topics (depth, trades, orders, status, definitions) as a
 * TP_TOPIC_BIT mask: 0, or -EINVAL for a name that is none of them. */
int replay_events_parse_topics(const char *list, uint32_t *topics);

/* 0, or a negative errno with a reason in err. */
int replay_events_open(struct replay_events **out, const struct replay_events_params *p, char *err,
                       size_t err_len);

/* The sink to hand to the replay: the publisher's, writing into the file. */
struct tp_feed_sink replay_events_sink(struct replay_events *e);

/* Sets endOfEvent on the last record of the file so far (if it has one). */
void replay_events_end_of_event(struct tp_event_file_writer *file);

/* Writes what is left and the file's record count; frees everything. 0, or a negative errno
 * (write error, -EMSGSIZE for records too large) with a reason in err. */
int replay_events_close(struct replay_events *e, struct replay_events_counters *out, char *err,
                        size_t err_len);

#endif /* TP_REPLAY_EVENTS_H */
