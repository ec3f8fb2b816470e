/*
 * Conflated state table: per instrument the latest top of book, N levels of depth, last trade,
 * trading status and definition, written by one writer under a per-instrument sequence lock.
 *
 * Promises:
 *   - Single writer: tp_state_write_begin/end (or tp_state_write) bracket every change of one
 *     instrument. The entry's sequence is odd while the writer is inside the bracket.
 *   - Readers (read-only mapping) get a consistent copy or retry: tp_state_read copies the entry,
 *     then re-reads the sequence; a change or an odd value means the copy may be torn and it is
 *     retried. A writer that died inside the bracket leaves the entry odd: readers give up after
 *     a bounded number of tries with -EAGAIN instead of spinning for ever.
 *   - Late joiners and lapped readers rebuild their view from here.
 *
 * Layout: a read-mostly line with the geometry, then `instruments` entries of
 * tp_state_entry_size() bytes each (a multiple of 64): the lock word and the fixed part
 * (struct tp_book_header, tickplane.h), then `depth` bid levels, then `depth` ask levels.
 */
#ifndef TP_STATE_TABLE_H
#define TP_STATE_TABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tickplane/tickplane.h"

struct tp_state_params {
    uint32_t instruments; /* entries (dense ids 0..instruments-1) */
    uint32_t depth;       /* levels per side, 1..TP_MAX_DEPTH */
};

struct tp_state_table {
    uint32_t instruments;
    uint32_t depth;
    uint64_t entry_size;
    _Alignas(64) uint8_t entries[];
};

/* One instrument's entry, in the shared mapping. Levels follow the header. */
struct tp_state_entry {
    _Atomic uint64_t seq; /* even: stable; odd: the writer is changing this entry */
    uint64_t reserved;
    struct tp_book_header book;
    struct tp_level levels[]; /* depth bids, then depth asks */
};

size_t tp_state_entry_size(uint32_t depth);

/* Bytes of table memory for these parameters, or 0 if they are invalid. */
size_t tp_state_memsize(const struct tp_state_params *p);

/* Initialise table memory: every entry empty (instrument_id set, status unknown). 0 or -EINVAL. */
int tp_state_init(void *mem, const struct tp_state_params *p);

/* Check table memory found in a mapping of mem_size bytes. Returns 0 or -EINVAL. */
int tp_state_validate(const void *mem, size_t mem_size);

static inline struct tp_state_entry *tp_state_entry_at(struct tp_state_table *t, uint32_t id)
{
    return (struct tp_state_entry *)(t->entries + (uint64_t)id * t->entry_size);
}

static inline const struct tp_state_entry *tp_state_entry_const(const struct tp_state_table *t,
                                                                uint32_t id)
{
    return (const struct tp_state_entry *)(t->entries + (uint64_t)id * t->entry_size);
}

/*
 * Writer: open instrument id for change (entry sequence becomes odd) and return the entry; the
 * writer updates e->book and the levels in place (tp_state_bids / tp_state_asks), then calls
 * tp_state_write_end. Returns NULL for an id out of range. Inline: once per event on the data path.
 */
static inline struct tp_state_entry *tp_state_write_begin(struct tp_state_table *t, uint32_t id)
{
    if (id >= t->instruments)
        return NULL;
    struct tp_state_entry *e = tp_state_entry_at(t, id);
    uint64_t seq = atomic_load_explicit(&e->seq, memory_order_relaxed);
    atomic_store_explicit(&e->seq, seq + 1, memory_order_relaxed);
    /* Readers must see the odd sequence before any of the changes that follow. */
    atomic_thread_fence(memory_order_release);
    return e;
}

/* Writer: close the change opened by tp_state_write_begin (sequence even again). */
static inline void tp_state_write_end(struct tp_state_entry *e)
{
    uint64_t seq = atomic_load_explicit(&e->seq, memory_order_relaxed);
    atomic_store_explicit(&e->seq, seq + 1, memory_order_release);
}

/* Writer: replace an entry with a whole state (levels beyond the table depth are ignored). */
int tp_state_write(struct tp_state_table *t, const struct tp_instrument_state *s);

static inline struct tp_level *tp_state_bids(struct tp_state_entry *e)
{
    return e->levels;
}

static inline struct tp_level *tp_state_asks(const struct tp_state_table *t,
                                             struct tp_state_entry *e)
{
    return e->levels + t->depth;
}

/*
 * Reader: consistent copy of instrument id into *out (levels beyond the table depth zeroed).
 * Returns 0, -ERANGE (id out of range) or -EAGAIN (still changing after max_tries tries).
 */
int tp_state_read(const struct tp_state_table *t, uint32_t id, struct tp_instrument_state *out,
                  unsigned max_tries);

#endif /* TP_STATE_TABLE_H */
