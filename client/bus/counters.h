/*
 * Counters area: named 64-bit counters, each alone on its cache line with its name, so a
 * side-car (tickplanectl, telemetry) reads them from a read-only mapping without disturbing the
 * hot path, and two writers never share a line.
 *
 * Promises: one writer per counter (the thread that registered it); updates are a relaxed load
 * and a relaxed store (no locked instruction); readers see each value atomically (no torn 64-bit
 * reads). Registration happens at start-up, not on the data path.
 *
 * Layout: a header line (capacity, number registered), then `capacity` slots of 64 bytes.
 */
#ifndef TP_COUNTERS_H
#define TP_COUNTERS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define TP_COUNTER_NAME_LEN 56u

struct tp_counter {
    _Alignas(64) _Atomic uint64_t value;
    char name[TP_COUNTER_NAME_LEN]; /* NUL-terminated, e.g. "bus.ring.published" */
};
_Static_assert(sizeof(struct tp_counter) == 64, "one counter per cache line");

struct tp_counters {
    uint32_t capacity;
    _Atomic uint32_t count; /* registered slots; slots below it have their name set */
    _Alignas(64) struct tp_counter slots[];
};

/* Bytes for an area of `capacity` counters (0 if capacity is 0). */
size_t tp_counters_memsize(uint32_t capacity);

/* Initialise an area (64-byte aligned memory of tp_counters_memsize bytes). 0 or -EINVAL. */
int tp_counters_init(void *mem, uint32_t capacity);

/* Check an area found in a mapping of mem_size bytes. Returns 0 or -EINVAL. */
int tp_counters_validate(const void *mem, size_t mem_size);

/*
 * Start-up only, one registering thread per area: add a counter named `name` (value 0), or
 * return the existing one of that name. NULL when the area is full or the name too long.
 */
struct tp_counter *tp_counters_register(struct tp_counters *c, const char *name);

/* Find a counter by name (side-car). NULL if absent. */
const struct tp_counter *tp_counters_find(const struct tp_counters *c, const char *name);

/* Writer of this counter only. */
static inline void tp_counter_add(struct tp_counter *k, uint64_t n)
{
    uint64_t v = atomic_load_explicit(&k->value, memory_order_relaxed);
    atomic_store_explicit(&k->value, v + n, memory_order_relaxed);
}

static inline void tp_counter_set(struct tp_counter *k, uint64_t v)
{
    atomic_store_explicit(&k->value, v, memory_order_relaxed);
}

static inline uint64_t tp_counter_get(const struct tp_counter *k)
{
    return atomic_load_explicit(&k->value, memory_order_relaxed);
}

#endif /* TP_COUNTERS_H */
