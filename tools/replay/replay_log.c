/* A worker's log of published records (see replay_log.h). */
#include "replay_log.h"

#include <errno.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ENTRY_ALIGN sizeof(struct replay_log_entry)

struct replay_log {
    /* The writer's side and the reader's on lines of their own: each is written by one thread. */
    alignas(64) _Atomic uint64_t tail; /* published: entries up to here are complete */
    _Atomic uint64_t done;
    uint64_t written; /* the writer's own position (published at replay_log_publish) */
    uint64_t visible; /* the tail last published: entries before it may be read already */
    uint64_t last;    /* where the last entry written starts */
    uint64_t head_seen;
    alignas(64) _Atomic uint64_t head; /* the reader's position: space before it is free */
    uint64_t reading;                  /* the reader's own position */
    uint64_t tail_seen;
    uint64_t entry_size; /* of the entry replay_log_peek gave */
    alignas(64) size_t mask;
    uint8_t *ring;
};

int replay_log_open(struct replay_log **out, size_t bytes)
{
    struct replay_log *l = aligned_alloc(64, sizeof(*l));

    *out = NULL;
    if (l == NULL)
        return -ENOMEM;
    memset(l, 0, sizeof(*l));
    l->mask = bytes - 1;
    l->ring = aligned_alloc(64, bytes);
    if (l->ring == NULL) {
        free(l);
        return -ENOMEM;
    }
    *out = l;
    return 0;
}

void replay_log_close(struct replay_log *l)
{
    if (l == NULL)
        return;
    free(l->ring);
    free(l);
}

/* The other thread runs on a core of its own, or needs this one: a short sleep serves both. */
static void pause_briefly(void)
{
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

/* Room for `size` contiguous bytes at the writer's position, wrapping first if need be. */
static uint8_t *reserve(struct replay_log *l, uint64_t size)
{
    uint64_t capacity = l->mask + 1;

    for (;;) {
        uint64_t at = l->written & l->mask, to_end = capacity - at;
        uint64_t need = to_end < size ? to_end + size : size;
        if (l->written + need - l->head_seen > capacity) {
            l->head_seen = atomic_load_explicit(&l->head, memory_order_acquire);
            if (l->written + need - l->head_seen > capacity) {
                /* Full: what is written must be visible for the reader to make room. */
                l->visible = l->written;
                atomic_store_explicit(&l->tail, l->written, memory_order_release);
                pause_briefly();
            }
            continue;
        }
        if (to_end < size) {
            struct replay_log_entry *wrap = (struct replay_log_entry *)(l->ring + at);
            wrap->kind = REPLAY_LOG_WRAP;
            l->written += to_end;
            continue;
        }
        return l->ring + at;
    }
}

/* An entry of `length` message bytes, reserved: its key is written when it is committed. */
static uint8_t *claim(struct replay_log *l, enum replay_log_kind kind, uint16_t topic,
                      uint32_t length)
{
    uint64_t size =
        (sizeof(struct replay_log_entry) + length + ENTRY_ALIGN - 1) & ~(uint64_t)(ENTRY_ALIGN - 1);
    uint8_t *at = reserve(l, size);
    struct replay_log_entry e = {.length = length, .topic = topic, .kind = kind};

    memcpy(at, &e, sizeof(e));
    return at + sizeof(e);
}

uint8_t *replay_log_claim(struct replay_log *l, uint16_t topic, uint32_t length)
{
    return claim(l, REPLAY_LOG_RECORD, topic, length);
}

void replay_log_commit(struct replay_log *l, uint64_t key)
{
    struct replay_log_entry *e = (struct replay_log_entry *)(l->ring + (l->written & l->mask));
    e->key = key;
    l->last = l->written;
    l->written += (sizeof(*e) + e->length + ENTRY_ALIGN - 1) & ~(uint64_t)(ENTRY_ALIGN - 1);
}

uint8_t *replay_log_last_message(struct replay_log *l, uint64_t key)
{
    if (l->written == l->last || l->last < l->visible)
        return NULL;
    struct replay_log_entry *e = (struct replay_log_entry *)(l->ring + (l->last & l->mask));
    return e->kind == REPLAY_LOG_RECORD && e->key == key ? (uint8_t *)(e + 1) : NULL;
}

void replay_log_end_of_event(struct replay_log *l, uint64_t key)
{
    claim(l, REPLAY_LOG_END_OF_EVENT, 0, 0);
    replay_log_commit(l, key);
}

void replay_log_publish(struct replay_log *l, uint64_t done)
{
    l->visible = l->written;
    atomic_store_explicit(&l->tail, l->written, memory_order_release);
    atomic_store_explicit(&l->done, done, memory_order_release);
}

void replay_log_end(struct replay_log *l)
{
    replay_log_publish(l, REPLAY_LOG_DONE_ALL);
}

const struct replay_log_entry *replay_log_peek(struct replay_log *l, uint64_t *done)
{
    *done = atomic_load_explicit(&l->done, memory_order_acquire);
    for (;;) {
        if (l->reading == l->tail_seen) {
            l->tail_seen = atomic_load_explicit(&l->tail, memory_order_acquire);
            if (l->reading == l->tail_seen)
                return NULL;
        }
        uint64_t at = l->reading & l->mask;
        const struct replay_log_entry *e = (const struct replay_log_entry *)(l->ring + at);
        if (e->kind == REPLAY_LOG_WRAP) {
            l->reading += l->mask + 1 - at;
            continue;
        }
        l->entry_size = (sizeof(*e) + e->length + ENTRY_ALIGN - 1) & ~(uint64_t)(ENTRY_ALIGN - 1);
        return e;
    }
}

void replay_log_pop(struct replay_log *l)
{
    l->reading += l->entry_size;
    atomic_store_explicit(&l->head, l->reading, memory_order_release);
}
