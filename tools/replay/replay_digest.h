/*
 * Replay digest: one 64-bit FNV-1a hash over everything the feeds tell their sink, in order, so
 * two builds of the books can be shown to emit byte-identical change records.
 *
 * The hashed stream is a sequence of tagged items (a tag byte, then a fixed size body), so no
 * two different callback sequences give the same bytes:
 *   'C' + the 48 bytes of a struct tp_book_change, as in memory (every byte is written, see
 *       tp_book_change.h; host byte order, so digests compare between builds of one machine);
 *   'E'                                 one end_of_event callback;
 *   'S' + instrument, stale, expected, got as 4 little-endian bytes each: one stale callback.
 * FNV-1a (Fowler, Noll, Vo): offset basis 0xcbf29ce484222325, prime 0x100000001b3; not
 * cryptographic, only a fingerprint for runs of the same code over the same input.
 */
#ifndef TP_REPLAY_DIGEST_H
#define TP_REPLAY_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#include "tp_book_change.h"

#define REPLAY_FNV1A_BASIS 0xcbf29ce484222325ull

struct replay_digest {
    uint64_t hash;           /* FNV-1a of the stream so far */
    uint64_t change_records; /* 'C' items */
    uint64_t events;         /* 'E' items */
    uint64_t stale_calls;    /* 'S' items */
};

/* FNV-1a 64 of n bytes, continuing from hash `h` (REPLAY_FNV1A_BASIS for a fresh hash). */
uint64_t replay_fnv1a(uint64_t h, const void *bytes, size_t n);

void replay_digest_init(struct replay_digest *d);

/* The items of one sink callback, in the order the feed calls it. */
void replay_digest_changes(struct replay_digest *d, const struct tp_book_change *c, uint32_t n);
void replay_digest_event(struct replay_digest *d);
void replay_digest_stale(struct replay_digest *d, uint32_t instrument, int stale, uint32_t expected,
                         uint32_t got);

#endif /* TP_REPLAY_DIGEST_H */
