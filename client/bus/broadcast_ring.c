/* Single-writer broadcast ring with lap detection (see broadcast_ring.h for the protocol). */
#include "broadcast_ring.h"

#include <errno.h>
#include <string.h>

#define ALIGN_UP(x) TP_RING_ALIGN_UP(x)

/* A refill that keeps being lapped gives up after this many tries (the caller polls again). */
#define LAP_RETRIES 4

/* The tail intent is announced this far ahead (at most capacity / 16). */
#define INTENT_CHUNK_MAX 4096u

/* The sequence word is written last by the writer (release) and polled by readers (acquire):
 * it says that the record at a position is complete. Plain uint64_t in the struct, so the GNU
 * atomic builtins (gcc, clang) access it. */
static inline void store_sequence(struct tp_ring_record *rec, uint64_t sequence)
{
    __atomic_store_n(&rec->sequence, sequence, __ATOMIC_RELEASE);
}

static inline uint64_t load_sequence(const struct tp_ring_record *rec)
{
    return __atomic_load_n(&rec->sequence, __ATOMIC_ACQUIRE);
}

static int params_ok(uint64_t capacity, uint32_t max_record)
{
    return capacity >= TP_RING_MIN_CAPACITY && (capacity & (capacity - 1)) == 0 &&
           max_record >= TP_RING_RECORD_HEADER + TP_RING_ALIGN && max_record <= capacity / 8;
}

size_t tp_ring_memsize(const struct tp_ring_params *p)
{
    if (!params_ok(p->capacity, p->max_record))
        return 0;
    return sizeof(struct tp_ring_shared) + p->capacity;
}

int tp_ring_init(void *mem, const struct tp_ring_params *p)
{
    if (mem == NULL || !params_ok(p->capacity, p->max_record))
        return -EINVAL;
    struct tp_ring_shared *s = mem;
    memset(s, 0, sizeof(*s));
    s->capacity = p->capacity;
    s->max_record = p->max_record;
    atomic_store_explicit(&s->next_sequence, 1, memory_order_relaxed);
    atomic_store_explicit(&s->tail_intent, 0, memory_order_relaxed);
    atomic_store_explicit(&s->latest, 0, memory_order_relaxed);
    atomic_store_explicit(&s->tail, 0, memory_order_release);
    return 0;
}

int tp_ring_validate(const void *mem, size_t mem_size)
{
    const struct tp_ring_shared *s = mem;
    if (mem == NULL || mem_size < sizeof(*s) || !params_ok(s->capacity, s->max_record) ||
        s->capacity > mem_size - sizeof(*s))
        return -EINVAL;
    return 0;
}

void tp_ring_writer_init(struct tp_ring_writer *w, void *mem)
{
    struct tp_ring_shared *s = mem;
    memset(w, 0, sizeof(*w));
    w->shared = s;
    w->capacity = s->capacity;
    w->mask = s->capacity - 1;
    w->max_record = s->max_record;
    w->tail = atomic_load_explicit(&s->tail, memory_order_relaxed);
    w->next_sequence = atomic_load_explicit(&s->next_sequence, memory_order_relaxed);
    w->intent = atomic_load_explicit(&s->tail_intent, memory_order_relaxed);
    w->latest = atomic_load_explicit(&s->latest, memory_order_relaxed);
    w->intent_chunk = s->capacity / 16 < INTENT_CHUNK_MAX ? s->capacity / 16 : INTENT_CHUNK_MAX;
    /* limit stays 0: the first claim takes tp_ring_claim_slow, which sets it. */
}

/*
 * Announce that bytes below `end` may change, before changing them: a chunk ahead, so this
 * happens once per chunk.
 */
static inline void announce(struct tp_ring_writer *w, uint64_t end)
{
    if (end <= w->intent)
        return;
    w->intent = end + w->intent_chunk;
    atomic_store_explicit(&w->shared->tail_intent, w->intent, memory_order_relaxed);
    /* Orders the intent store before the stores that follow (a compiler barrier on x86). */
    atomic_thread_fence(memory_order_release);
}

/* Where the record after one ending at position end starts: there, or at the start of the next
 * lap when fewer than TP_RING_RECORD_HEADER bytes remain (the implicit padding). */
static uint64_t next_record_at(const struct tp_ring_writer *w, uint64_t end)
{
    uint64_t to_end = w->capacity - (end & w->mask);
    return to_end < TP_RING_RECORD_HEADER ? end + to_end : end;
}

void *tp_ring_claim_slow(struct tp_ring_writer *w, uint32_t payload_len)
{
    if (payload_len > w->max_record - TP_RING_RECORD_HEADER)
        return NULL;
    uint32_t length = TP_RING_RECORD_HEADER + payload_len;
    uint64_t aligned = ALIGN_UP(length);
    uint64_t pos = w->tail;
    uint64_t to_end = w->capacity - (pos & w->mask);
    /* A record that does not fit before the end of the data area starts the next lap. */
    uint64_t start = aligned > to_end ? pos + to_end : pos;
    uint64_t next = next_record_at(w, start + aligned);
    announce(w, next + TP_RING_RECORD_HEADER);
    if (start != pos) {
        /* Readers go from the padding to the lap's start: its sequence word must not be last
         * lap's when they see the padding's. */
        tp_ring_clear_sequence(w->shared->data + (start & w->mask));
        if (to_end >= TP_RING_RECORD_HEADER) {
            struct tp_ring_record *pad =
                (struct tp_ring_record *)(w->shared->data + (pos & w->mask));
            pad->length = (uint32_t)to_end;
            pad->type = TP_REC_PADDING;
            pad->topic = 0;
            pad->instrument = UINT32_MAX;
            pad->flags = 0;
            /* Padding carries the sequence of the record after it (it consumes none). */
            store_sequence(pad, w->next_sequence);
        }
        w->padded += to_end;
    }
    tp_ring_clear_sequence(w->shared->data + (next & w->mask));
    w->claim_pos = start;
    w->claim_end = start + aligned;
    w->claim_length = length;
    /* Claims that end, with the next record's header, below the announced chunk and the end of
     * this lap of the data area take the inline path. */
    uint64_t lap_end = (start & ~w->mask) + w->capacity;
    w->limit = (w->intent < lap_end ? w->intent : lap_end) - TP_RING_RECORD_HEADER;
    return w->shared->data + (start & w->mask) + TP_RING_RECORD_HEADER;
}

void tp_ring_flush(struct tp_ring_writer *w)
{
    atomic_store_explicit(&w->shared->latest, w->latest, memory_order_relaxed);
    atomic_store_explicit(&w->shared->next_sequence, w->next_sequence, memory_order_relaxed);
    /* Every record below the new tail is complete before readers can see the tail move. */
    atomic_store_explicit(&w->shared->tail, w->tail, memory_order_release);
}

uint64_t tp_ring_commit(struct tp_ring_writer *w, uint16_t type, uint16_t topic,
                        uint32_t instrument, uint32_t flags)
{
    uint64_t sequence = tp_ring_commit_deferred(w, type, topic, instrument, flags);
    tp_ring_flush(w);
    return sequence;
}

uint64_t tp_ring_publish(struct tp_ring_writer *w, uint16_t type, uint16_t topic,
                         uint32_t instrument, uint32_t flags, const void *payload,
                         uint32_t payload_len)
{
    void *dst = tp_ring_claim(w, payload_len);
    if (dst == NULL)
        return 0;
    memcpy(dst, payload, payload_len);
    return tp_ring_commit(w, type, topic, instrument, flags);
}

int tp_ring_reader_init(struct tp_ring_reader *r, const void *mem, uint8_t *batch,
                        uint32_t batch_size)
{
    const struct tp_ring_shared *s = mem;
    if (batch == NULL || ((uintptr_t)batch & (TP_RING_ALIGN - 1)) != 0 ||
        batch_size < ALIGN_UP((uint64_t)s->max_record))
        return -EINVAL;
    memset(r, 0, sizeof(*r));
    r->shared = s;
    r->capacity = s->capacity;
    r->mask = s->capacity - 1;
    r->max_record = s->max_record;
    r->batch = batch;
    r->batch_size = batch_size;
    r->cursor = atomic_load_explicit(&s->tail, memory_order_acquire);
    /* At position 0 nothing was ever written, so the first record will be sequence 1. */
    r->next_sequence = r->cursor == 0 ? 1 : 0;
    return 0;
}

/* The writer overtook us: continue at its latest record; the sequence there tells the loss. */
static void relocate_after_lap(struct tp_ring_reader *r)
{
    const struct tp_ring_shared *s = r->shared;
    uint64_t tail = atomic_load_explicit(&s->tail, memory_order_acquire);
    uint64_t latest = atomic_load_explicit(&s->latest, memory_order_relaxed);
    r->lapped++;
    r->lap_pending = 1;
    r->cursor = (latest >= r->cursor && latest < tail) ? latest : tail;
}

/* A validated batch holds an impossible header: the writer is broken. Skip to its tail. */
static void skip_malformed(struct tp_ring_reader *r)
{
    r->malformed++;
    r->cursor = atomic_load_explicit(&r->shared->tail, memory_order_acquire);
    r->next_sequence = 0;
}

/*
 * Copy the next run of complete records into the private batch and validate it.
 * Returns 1 if the batch holds records, 0 if there is nothing to read.
 */
static int refill(struct tp_ring_reader *r)
{
    const struct tp_ring_shared *s = r->shared;
    for (int tries = 0; tries < LAP_RETRIES;) {
        uint64_t tail = atomic_load_explicit(&s->tail, memory_order_acquire);
        if (tail <= r->cursor)
            return 0; /* nothing flushed beyond what we have (deferred commits are ahead) */
        if (tail - r->cursor > r->capacity) {
            relocate_after_lap(r);
            tries++;
            continue;
        }
        uint64_t off = r->cursor & r->mask;
        uint64_t to_end = r->capacity - off;
        if (to_end < TP_RING_RECORD_HEADER) {
            r->cursor += to_end; /* implicit padding: too little room for a header */
            continue;
        }
        uint64_t n = tail - r->cursor;
        if (n > to_end)
            n = to_end;
        if (n > r->batch_size)
            n = r->batch_size;
        memcpy(r->batch, s->data + off, n);
        /* The copy above must complete before we look at how far the writer has gone. */
        atomic_thread_fence(memory_order_acquire);
        uint64_t intent = atomic_load_explicit(&s->tail_intent, memory_order_relaxed);
        if (intent > r->cursor + r->capacity) {
            relocate_after_lap(r);
            tries++;
            continue;
        }

        /* The copy is stable: walk its records. */
        uint64_t pos = 0, end = 0;
        int bad = 0;
        while (pos + TP_RING_RECORD_HEADER <= n) {
            const struct tp_ring_record *h = (const struct tp_ring_record *)(r->batch + pos);
            uint64_t aligned = ALIGN_UP((uint64_t)h->length);
            if (h->length < TP_RING_RECORD_HEADER || aligned > to_end - pos) {
                bad = 1;
                break;
            }
            if (h->type == TP_REC_PADDING) {
                pos += aligned; /* runs to the end of the data area */
                break;
            }
            if (h->length > r->max_record ||
                (r->next_sequence != 0 && h->sequence < r->next_sequence)) {
                bad = 1;
                break;
            }
            if (pos + aligned > n)
                break; /* cut by the batch size: read it next time */
            if (r->next_sequence != 0)
                r->lost_pending += h->sequence - r->next_sequence;
            r->next_sequence = h->sequence + 1;
            pos += aligned;
            end = pos;
        }
        if (bad && end == 0) {
            skip_malformed(r);
            return 0;
        }
        if (bad)
            pos = end; /* hand out the good records first; the bad one is met again next time */
        if (pos == 0) {
            skip_malformed(r); /* cannot happen with a sane writer: avoid spinning on it */
            return 0;
        }
        r->cursor += pos;
        r->batch_pos = 0;
        r->batch_end = (uint32_t)end;
        if (end > 0 || r->lost_pending > 0)
            return 1;
    }
    return 0;
}

/* Whether the writer may have overwritten the byte at position pos. */
static inline int overwritten(const struct tp_ring_reader *r, uint64_t pos)
{
    return atomic_load_explicit(&r->shared->tail_intent, memory_order_relaxed) > pos + r->capacity;
}

/*
 * Fast path for a reader that follows closely: look at the record headers at the cursor itself,
 * so new records cost the cache-line transfers of their own bytes (no trip through the tail
 * line). Every complete record found in a row (up to the batch size, the end of the data area or
 * a padding record) is copied; then one fence and one look at the tail intent validate the whole
 * run. Returns 1 with records in the batch, 0 when nothing new is there, -1 when the tail-based
 * path must decide (unknown sequence, a lap, anything unexpected). The writer pads only the end
 * of the data area, so one call skips padding once: a second time means the bytes are not a
 * ring the writer made, and the tail decides (a corrupt area must not spin the reader).
 */
static int read_at_cursor(struct tp_ring_reader *r)
{
    for (int wraps = 0;; wraps++) {
        if (wraps > 1)
            return -1;
        uint64_t off = r->cursor & r->mask;
        uint64_t to_end = r->capacity - off;
        if (to_end < TP_RING_RECORD_HEADER) {
            r->cursor += to_end; /* implicit padding */
            continue;
        }
        const struct tp_ring_record *first = (const struct tp_ring_record *)(r->shared->data + off);
        uint64_t copied = 0, sequence = r->next_sequence;
        for (const struct tp_ring_record *h = first;
             to_end - copied >= TP_RING_RECORD_HEADER && load_sequence(h) == sequence;
             h = (const struct tp_ring_record *)((const uint8_t *)first + copied)) {
            uint32_t length = h->length;
            uint64_t aligned = ALIGN_UP((uint64_t)length);
            if (length < TP_RING_RECORD_HEADER || aligned > to_end - copied ||
                length > r->max_record || h->type == TP_REC_PADDING ||
                copied + aligned > r->batch_size)
                break;
            memcpy(r->batch + copied, h, length);
            copied += aligned;
            sequence++;
        }
        if (copied > 0) {
            /* The copies must complete before we look at how far the writer has gone. */
            atomic_thread_fence(memory_order_acquire);
            if (overwritten(r, r->cursor))
                return -1;
            r->next_sequence = sequence;
            r->cursor += copied;
            r->batch_pos = 0;
            r->batch_end = (uint32_t)copied;
            return 1;
        }
        uint64_t seq = load_sequence(first);
        if (seq != r->next_sequence) {
            /* Zero: not written yet in this lap, unless the writer is a lap ahead of us. */
            return seq == 0 && !overwritten(r, r->cursor) ? 0 : -1;
        }
        uint64_t aligned = ALIGN_UP((uint64_t)first->length);
        if (first->type != TP_REC_PADDING || first->length < TP_RING_RECORD_HEADER ||
            aligned > to_end || overwritten(r, r->cursor))
            return -1;
        r->cursor += aligned; /* padding to the end of the data area */
    }
}

/*
 * A reader waiting at its cursor asks for the two lines after the next record's header as well:
 * a record longer than a line (a 104-byte trade spans two or three) then arrives in one round of
 * transfers between the cores, not two (p50 publish -> callback 503 -> 393 ns in the slow vCPU
 * placement of the bench host). Only a hint: a prefetch never faults, and whatever is copied is
 * validated.
 */
static inline void prefetch_at_cursor(const struct tp_ring_reader *r)
{
    const uint8_t *next = r->shared->data + (r->cursor & r->mask);
    __builtin_prefetch(next + 64);
    __builtin_prefetch(next + 128);
}

/* Fills the batch: 1 if it holds records (or a loss to report), 0 if there is nothing new. */
static int next_batch(struct tp_ring_reader *r)
{
    if (r->next_sequence == 0)
        return refill(r);
    if (r->past_tail) {
        /* Past the published tail: the writer is still writing this burst, so the lines at the
         * cursor stay with it until the tail moves (see the header). */
        uint64_t tail = atomic_load_explicit(&r->shared->tail, memory_order_acquire);
        if (tail < r->cursor)
            return 0;
        r->past_tail = 0;
        if (tail > r->cursor)
            return refill(r);
    }
    int got = read_at_cursor(r);
    if (got > 0) {
        r->past_tail = 1;
        return 1;
    }
    if (got == 0) {
        prefetch_at_cursor(r);
        return 0;
    }
    return refill(r);
}

int tp_ring_read(struct tp_ring_reader *r, const struct tp_ring_record **rec, uint64_t *lost)
{
    if (r->batch_pos >= r->batch_end && !next_batch(r))
        return TP_RING_EMPTY;
    /* Report a lap once the record after it is in hand: only then is the loss known. */
    if (r->lap_pending || r->lost_pending > 0) {
        *lost = r->lost_pending;
        r->lost += r->lost_pending;
        r->lost_pending = 0;
        r->lap_pending = 0;
        return TP_RING_LAPPED;
    }
    if (r->batch_pos >= r->batch_end)
        return TP_RING_EMPTY;
    const struct tp_ring_record *h = (const struct tp_ring_record *)(r->batch + r->batch_pos);
    r->batch_pos += (uint32_t)ALIGN_UP((uint64_t)h->length);
    r->read_sequence = h->sequence;
    r->records++;
    *rec = h;
    return TP_RING_RECORD;
}

uint64_t tp_ring_lag(const struct tp_ring_reader *r)
{
    uint64_t next = atomic_load_explicit(&r->shared->next_sequence, memory_order_relaxed);
    if (r->read_sequence == 0)
        return atomic_load_explicit(&r->shared->tail, memory_order_relaxed) != r->cursor;
    return next > r->read_sequence ? next - r->read_sequence - 1 : 0;
}
