/*
 * Replay digest (see replay_digest.h).
 */
#include "replay_digest.h"

_Static_assert(sizeof(struct tp_book_change) == 48, "the digest hashes 48-byte change records");

#define FNV1A_PRIME 0x100000001b3ull

uint64_t replay_fnv1a(uint64_t h, const void *bytes, size_t n)
{
    const uint8_t *p = bytes;

    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= FNV1A_PRIME;
    }
    return h;
}

void replay_digest_init(struct replay_digest *d)
{
    *d = (struct replay_digest){.hash = REPLAY_FNV1A_BASIS};
}

void replay_digest_changes(struct replay_digest *d, const struct tp_book_change *c, uint32_t n)
{
    static const uint8_t tag = 'C';

    for (uint32_t i = 0; i < n; i++) {
        d->hash = replay_fnv1a(d->hash, &tag, 1);
        d->hash = replay_fnv1a(d->hash, &c[i], sizeof(c[i]));
    }
    d->change_records += n;
}

void replay_digest_event(struct replay_digest *d)
{
    static const uint8_t tag = 'E';

    d->hash = replay_fnv1a(d->hash, &tag, 1);
    d->events++;
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

void replay_digest_stale(struct replay_digest *d, uint32_t instrument, int stale, uint32_t expected,
                         uint32_t got)
{
    uint8_t item[17] = {'S'};

    put_le32(item + 1, instrument);
    put_le32(item + 5, (uint32_t)stale);
    put_le32(item + 9, expected);
    put_le32(item + 13, got);
    d->hash = replay_fnv1a(d->hash, item, sizeof(item));
    d->stale_calls++;
}
