/* Named single-writer counters, one per cache line (see counters.h). */
#include "counters.h"

#include <errno.h>
#include <string.h>

size_t tp_counters_memsize(uint32_t capacity)
{
    if (capacity == 0)
        return 0;
    return sizeof(struct tp_counters) + (size_t)capacity * sizeof(struct tp_counter);
}

int tp_counters_init(void *mem, uint32_t capacity)
{
    if (mem == NULL || capacity == 0)
        return -EINVAL;
    memset(mem, 0, tp_counters_memsize(capacity));
    struct tp_counters *c = mem;
    c->capacity = capacity;
    atomic_store_explicit(&c->count, 0, memory_order_release);
    return 0;
}

int tp_counters_validate(const void *mem, size_t mem_size)
{
    const struct tp_counters *c = mem;
    if (mem == NULL || mem_size < sizeof(*c) || c->capacity == 0 ||
        tp_counters_memsize(c->capacity) > mem_size ||
        atomic_load_explicit(&c->count, memory_order_acquire) > c->capacity)
        return -EINVAL;
    return 0;
}

/* Index of the counter named `name`, or -1. */
static int64_t find_index(const struct tp_counters *c, const char *name)
{
    uint32_t n = atomic_load_explicit(&c->count, memory_order_acquire);
    if (n > c->capacity)
        n = c->capacity;
    for (uint32_t i = 0; i < n; i++)
        if (strncmp(c->slots[i].name, name, TP_COUNTER_NAME_LEN) == 0)
            return i;
    return -1;
}

const struct tp_counter *tp_counters_find(const struct tp_counters *c, const char *name)
{
    int64_t i = find_index(c, name);
    return i < 0 ? NULL : &c->slots[i];
}

struct tp_counter *tp_counters_register(struct tp_counters *c, const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len >= TP_COUNTER_NAME_LEN)
        return NULL;
    int64_t found = find_index(c, name);
    if (found >= 0)
        return &c->slots[found];
    uint32_t n = atomic_load_explicit(&c->count, memory_order_relaxed);
    if (n >= c->capacity)
        return NULL;
    struct tp_counter *k = &c->slots[n];
    memcpy(k->name, name, len + 1);
    atomic_store_explicit(&k->value, 0, memory_order_relaxed);
    /* A side-car that sees the new count also sees the name. */
    atomic_store_explicit(&c->count, n + 1, memory_order_release);
    return k;
}
