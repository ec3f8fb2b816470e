/*
 * What one worker of a threaded replay publishes, on its way to the one event file
 * (replay_threads.h): a single-producer single-consumer ring of entries, each an event-file
 * record or the mark that ends a venue event, keyed by the position in the capture that made it
 * (replay_share.seq). The merger takes the smallest key over the workers' logs, and of equal
 * keys the lower worker's first, which is the order of a replay on one thread: a message is one
 * worker's, and a pass over every instrument goes through the windows in id order.
 *
 * The writer waits while the ring is full, so memory stays bounded whatever the capture.
 */
#ifndef TP_REPLAY_LOG_H
#define TP_REPLAY_LOG_H

#include <stddef.h>
#include <stdint.h>

#define REPLAY_LOG_DONE_ALL UINT64_MAX /* replay_log_end: nothing more will come */

enum replay_log_kind { REPLAY_LOG_RECORD = 1, REPLAY_LOG_END_OF_EVENT, REPLAY_LOG_WRAP };

struct replay_log_entry {
    uint64_t key;
    uint32_t length; /* of the record's message (REPLAY_LOG_RECORD) */
    uint16_t topic;
    uint16_t kind; /* enum replay_log_kind */
};

struct replay_log;

/* A ring of `bytes` (a power of two, at least 64 KiB). 0 or -ENOMEM. */
int replay_log_open(struct replay_log **out, size_t bytes);
void replay_log_close(struct replay_log *l);

/* Writer: the end of a venue event, made at `key`. */
void replay_log_end_of_event(struct replay_log *l, uint64_t key);
/* Writer: a record, written in place (the publisher encodes straight into the log): room for a
 * message of `length` bytes, then replay_log_commit makes it an entry made at `key` (the key when
 * the record is complete). A claim not committed is not written. */
uint8_t *replay_log_claim(struct replay_log *l, uint16_t topic, uint32_t length);
void replay_log_commit(struct replay_log *l, uint64_t key);
/* Writer: the message of the last entry if it is a record made at `key` that the reader cannot
 * see yet (so it may still change in place: the end of its event marked in it, which is where
 * the merge would mark it), else NULL. */
uint8_t *replay_log_last_message(struct replay_log *l, uint64_t key);
/* Writer: what is written becomes visible, and no later entry will have a key <= done. */
void replay_log_publish(struct replay_log *l, uint64_t done);
/* Writer: the last entry is written. */
void replay_log_end(struct replay_log *l);

/* Reader: the next entry (its message follows it), or NULL if none is visible yet; *done is the
 * writer's last promise (REPLAY_LOG_DONE_ALL after replay_log_end), read before the entries. */
const struct replay_log_entry *replay_log_peek(struct replay_log *l, uint64_t *done);
/* Reader: done with the entry replay_log_peek gave. */
void replay_log_pop(struct replay_log *l);

#endif /* TP_REPLAY_LOG_H */
