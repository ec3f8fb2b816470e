/* Conflated per-instrument state under a sequence lock (see state_table.h). */
#include "state_table.h"

#include <errno.h>
#include <string.h>

#define LINE 64u

size_t tp_state_entry_size(uint32_t depth)
{
    size_t raw = sizeof(struct tp_state_entry) + 2u * depth * sizeof(struct tp_level);
    return (raw + LINE - 1) / LINE * LINE;
}

static int params_ok(uint32_t instruments, uint32_t depth)
{
    return instruments > 0 && instruments < UINT32_MAX && depth >= 1 && depth <= TP_MAX_DEPTH;
}

size_t tp_state_memsize(const struct tp_state_params *p)
{
    if (!params_ok(p->instruments, p->depth))
        return 0;
    return sizeof(struct tp_state_table) + (size_t)p->instruments * tp_state_entry_size(p->depth);
}

static void empty_book(struct tp_book_header *b, uint32_t id)
{
    memset(b, 0, sizeof(*b));
    b->instrument_id = id;
    b->tick_size = TP_PRICE_NULL;
    b->last_trade.price = TP_PRICE_NULL;
    b->open = b->high = b->low = b->settle = TP_PRICE_NULL;
}

int tp_state_init(void *mem, const struct tp_state_params *p)
{
    if (mem == NULL || !params_ok(p->instruments, p->depth))
        return -EINVAL;
    struct tp_state_table *t = mem;
    memset(t, 0, tp_state_memsize(p));
    t->instruments = p->instruments;
    t->depth = p->depth;
    t->entry_size = tp_state_entry_size(p->depth);
    for (uint32_t id = 0; id < p->instruments; id++)
        empty_book(&tp_state_entry_at(t, id)->book, id);
    return 0;
}

int tp_state_validate(const void *mem, size_t mem_size)
{
    const struct tp_state_table *t = mem;
    if (mem == NULL || mem_size < sizeof(*t) || !params_ok(t->instruments, t->depth) ||
        t->entry_size != tp_state_entry_size(t->depth))
        return -EINVAL;
    struct tp_state_params p = {.instruments = t->instruments, .depth = t->depth};
    return tp_state_memsize(&p) <= mem_size ? 0 : -EINVAL;
}

int tp_state_write(struct tp_state_table *t, const struct tp_instrument_state *s)
{
    struct tp_state_entry *e = tp_state_write_begin(t, s->book.instrument_id);
    if (e == NULL)
        return -ERANGE;
    e->book = s->book;
    if (e->book.bid_levels > t->depth)
        e->book.bid_levels = (uint16_t)t->depth;
    if (e->book.ask_levels > t->depth)
        e->book.ask_levels = (uint16_t)t->depth;
    memcpy(tp_state_bids(e), s->bids, t->depth * sizeof(struct tp_level));
    memcpy(tp_state_asks(t, e), s->asks, t->depth * sizeof(struct tp_level));
    tp_state_write_end(e);
    return 0;
}

int tp_state_read(const struct tp_state_table *t, uint32_t id, struct tp_instrument_state *out,
                  unsigned max_tries)
{
    if (id >= t->instruments)
        return -ERANGE;
    const struct tp_state_entry *e = tp_state_entry_const(t, id);
    size_t side = t->depth * sizeof(struct tp_level);
    for (unsigned i = 0; i < max_tries; i++) {
        uint64_t before = atomic_load_explicit(&e->seq, memory_order_acquire);
        if (before & 1u)
            continue; /* the writer is inside the entry */
        memcpy(&out->book, &e->book, sizeof(out->book));
        memcpy(out->bids, e->levels, side);
        memcpy(out->asks, e->levels + t->depth, side);
        /* The copies must complete before the sequence is read again. */
        atomic_thread_fence(memory_order_acquire);
        uint64_t after = atomic_load_explicit(&e->seq, memory_order_relaxed);
        if (after != before)
            continue;
        /* Trust nothing from shared memory: clamp the counts to the table depth. */
        if (out->book.bid_levels > t->depth)
            out->book.bid_levels = (uint16_t)t->depth;
        if (out->book.ask_levels > t->depth)
            out->book.ask_levels = (uint16_t)t->depth;
        memset(out->bids + t->depth, 0, (TP_MAX_DEPTH - t->depth) * sizeof(struct tp_level));
        memset(out->asks + t->depth, 0, (TP_MAX_DEPTH - t->depth) * sizeof(struct tp_level));
        return 0;
    }
    return -EAGAIN;
}
