/*
 * Broadcast ring: one writer, any number of readers, variable-length records.
 *
 * Promises:
 *   - The writer never waits: it overwrites the oldest records whatever the readers do.
 *   - A reader never hands a torn or mixed record to its caller. Readers copy records into
 *     private memory, then check the writer's tail-intent counter (the position the writer has
 *     announced it may be writing up to). If the writer may have overwritten the first copied
 *     byte, the whole copy is thrown away: the reader was lapped. Records also carry the writer's
 *     record sequence, which the reader checks for continuity.
 *   - A lapped reader jumps to the writer's latest record and learns exactly how many records it
 *     lost (the sequence difference); the caller resyncs from the state table.
 *   - Ordering: record sequence numbers are 1, 2, 3... per writer epoch, delivered in order.
 *
 * Layout of ring memory (tp_ring_memsize): a read-mostly line with the geometry; a line with the
 * tail intent, which the writer announces a chunk (capacity / 16, at most 4 KiB) ahead of what it
 * writes, so it changes once per chunk rather than once per record and stays in the readers'
 * caches; one line the writer updates per record or burst (tail, latest, next sequence), which
 * only readers that are behind read, once per batch; then the data area of `capacity` bytes (a
 * power of two). Announcing ahead only makes readers more careful: a reader less than a chunk from
 * being lapped counts as lapped. Records are 8-byte aligned and never wrap: at the end of the data
 * area the writer puts a padding record (or, when fewer than TP_RING_RECORD_HEADER bytes remain,
 * nothing: both sides skip such a tail implicitly).
 *
 * Two ways to find new records. A reader that follows closely polls the header at its cursor: the
 * writer stores a record's sequence last (release), so seeing the expected sequence there means
 * the record is complete, and the data arrives with the signal in one cache-line transfer. Stale
 * bytes never look like a record: before it completes a record the writer zeroes the sequence
 * word where the next one will start (and, before it pads, the lap's first), so a reader that
 * reached a position by a record's sequence finds zero there until the next record is complete.
 * (Zeroing each announced chunk did the same for 4 KiB of stores per chunk, and the data area is
 * larger than the caches.) A reader that is behind, or does not know what sequence to expect,
 * reads the tail and copies a whole run of records.
 *
 * A writer that publishes the tail once per burst (commit_deferred, then flush) is also writing
 * the lines after the cursor of a reader that has caught up: if that reader kept polling them,
 * every line the writer stores to would first be taken back from the reader's core, which cost
 * the daemon's data lcore 6-10% of its rate with one busy reader. So a reader polls at its cursor
 * only while it is level with the published tail: it takes the first records of a burst as soon
 * as they are complete, then, past the tail, waits on the tail line (which moves once per burst)
 * and copies the rest of the burst when the writer flushes. A writer that flushes every record
 * (tp_ring_commit) keeps its readers on the cursor.
 *
 * Memory ordering (x86 and ARM): the writer stores tail_intent, issues a release fence, writes
 * records and the next record's zero sequence word, stores each sequence with release, and
 * publishes tail with a release store.
 * The reader loads a sequence or the tail with acquire, copies, issues an acquire fence, then
 * loads tail_intent. The copy races with the writer by design (as in any sequence lock);
 * validation after the copy makes the race harmless.
 */
#ifndef TP_BROADCAST_RING_H
#define TP_BROADCAST_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TP_RING_ALIGN         8u
#define TP_RING_RECORD_HEADER 24u
#define TP_RING_MIN_CAPACITY  4096u

/* Record types (tp_ring_record.type). */
enum tp_ring_record_type {
    TP_REC_PADDING = 0, /* filler at the end of the data area; never delivered */
    TP_REC_SBE = 1,     /* payload: one tpout SBE message (header + body) */
    TP_REC_RAW = 2,     /* payload: opaque bytes (tests, benchmarks, private extensions) */
};

/* Record header as stored in the ring; the payload follows it. */
struct tp_ring_record {
    uint32_t length;     /* header + payload, before alignment */
    uint16_t type;       /* enum tp_ring_record_type */
    uint16_t topic;      /* enum tp_topic of the event (tickplane.h) */
    uint32_t instrument; /* dense instrument id, or UINT32_MAX for channel-wide events */
    uint32_t flags;      /* TP_EVENT_F_* (tickplane.h) */
    uint64_t sequence;   /* writer's record sequence, 1.. ; 0 for padding */
};
_Static_assert(sizeof(struct tp_ring_record) == TP_RING_RECORD_HEADER, "record header size");

struct tp_ring_params {
    uint64_t capacity;   /* data bytes, a power of two >= TP_RING_MIN_CAPACITY */
    uint32_t max_record; /* largest record (header + payload); <= capacity / 8 */
};

/* The shared part, at the start of ring memory. */
struct tp_ring_shared {
    uint64_t capacity;
    uint32_t max_record;
    uint32_t reserved;
    _Alignas(64) _Atomic uint64_t tail_intent; /* writer may be writing bytes below this */
    _Alignas(64) _Atomic uint64_t tail;        /* bytes below this are complete records */
    _Atomic uint64_t latest;                   /* start of the last complete record */
    _Atomic uint64_t next_sequence;            /* sequence of the next record to be written */
    _Alignas(64) uint8_t data[];
};

/* Writer state: private to the writing thread. */
struct tp_ring_writer {
    struct tp_ring_shared *shared;
    uint64_t capacity;
    uint64_t mask;
    uint64_t tail;          /* private copy of shared->tail */
    uint64_t next_sequence; /* private copy of shared->next_sequence */
    uint64_t intent;        /* private copy of shared->tail_intent */
    uint64_t intent_chunk;  /* how far ahead the intent is announced */
    uint64_t latest;        /* start of the last committed record (published by flush) */
    uint64_t padded;        /* bytes skipped at the end of the data area so far (padding) */
    uint64_t claim_pos;     /* position of the claimed record, valid between claim and commit */
    uint64_t claim_end;     /* claim_pos plus the record's aligned length */
    uint64_t limit;         /* claims ending at or below it need no announcement, do not wrap and
                             * leave room for the next record's header in this lap */
    uint32_t claim_length;
    uint32_t max_record;
};

/* Reader state: private to the reading thread (never in the shared mapping). */
struct tp_ring_reader {
    const struct tp_ring_shared *shared;
    uint64_t capacity;
    uint64_t mask;
    uint64_t cursor;        /* next byte position to read */
    uint64_t next_sequence; /* expected sequence of the next record copied; 0 = not yet known */
    uint64_t read_sequence; /* sequence of the last record handed out (0: none yet) */
    uint64_t lost_pending;  /* lost records not yet reported by tp_ring_read */
    int lap_pending;        /* lapped, not yet reported by tp_ring_read */
    int past_tail;          /* read at the cursor since the tail was last seen: may be past it */
    uint64_t records;       /* records delivered */
    uint64_t lapped;        /* times lapped */
    uint64_t lost;          /* records lost in total */
    uint64_t malformed;     /* impossible headers met (writer bug or foreign writer) */
    uint8_t *batch;         /* private copy of validated records */
    uint32_t batch_size;    /* capacity of batch */
    uint32_t batch_pos;     /* next record to hand out in batch */
    uint32_t batch_end;     /* end of validated bytes in batch */
    uint32_t max_record;
};

/* Result of tp_ring_read. */
enum tp_ring_result {
    TP_RING_EMPTY = 0,  /* nothing new */
    TP_RING_RECORD = 1, /* *rec points to a validated record in the reader's private memory */
    TP_RING_LAPPED = 2, /* the reader was overtaken; *lost says how many records it missed */
};

/* Bytes of ring memory for these parameters, or 0 if they are invalid. */
size_t tp_ring_memsize(const struct tp_ring_params *p);

/* Initialise ring memory (tp_ring_memsize bytes, 64-byte aligned). Returns 0 or -EINVAL. */
int tp_ring_init(void *mem, const struct tp_ring_params *p);

/* Check ring memory found in a mapping of mem_size bytes. Returns 0 or -EINVAL. */
int tp_ring_validate(const void *mem, size_t mem_size);

/* Writer: attach to initialised ring memory (continues after what is already there). */
void tp_ring_writer_init(struct tp_ring_writer *w, void *mem);

#define TP_RING_ALIGN_UP(x) (((x) + (TP_RING_ALIGN - 1)) & ~(uint64_t)(TP_RING_ALIGN - 1))

/* Zeroes the sequence word of the record header at rec (a position no reader has seen complete
 * in this lap). */
static inline void tp_ring_clear_sequence(uint8_t *rec)
{
    __atomic_store_n(&((struct tp_ring_record *)rec)->sequence, 0, __ATOMIC_RELAXED);
}

/*
 * How far ahead of a claim the writer asks for its line, for write. The lines it writes were last
 * written a lap ago and are in no cache: without the hint each new line's read-for-ownership
 * holds up the stores behind it, and the hardware's stream prefetcher restarts at every 4 KiB
 * page. 2 KiB is ~25 records, ~2 us ahead at full rate (the daemon alone on a preloaded port,
 * alternated pairs: MDP3 peak shape 1.037-1.128, ITCH peak 1.025-1.074 in three sets).
 * Readers are not slowed: the line is past every record they
 * can read, but for a reader about to be lapped.
 */
#define TP_RING_WRITE_AHEAD 2048u

/* The part of tp_ring_claim that announces the next chunk or wraps (once per chunk). */
void *tp_ring_claim_slow(struct tp_ring_writer *w, uint32_t payload_len);

/*
 * Writer: reserve room for a payload of payload_len bytes and return where to write it (8-byte
 * aligned), or NULL if the record would exceed max_record. Exactly one commit must follow before
 * the next claim. Never waits. Inline: most claims fall inside the chunk already announced.
 */
static inline void *tp_ring_claim(struct tp_ring_writer *w, uint32_t payload_len)
{
    uint32_t length = TP_RING_RECORD_HEADER + payload_len;
    uint64_t pos = w->tail, end = pos + TP_RING_ALIGN_UP((uint64_t)length);
    if (payload_len > w->max_record - TP_RING_RECORD_HEADER || end > w->limit)
        return tp_ring_claim_slow(w, payload_len);
    w->claim_pos = pos;
    w->claim_end = end;
    w->claim_length = length;
    uint8_t *rec = w->shared->data + (pos & w->mask);
    /* Where the next record starts (limit leaves room for its header): zero until it is complete,
     * for readers that get there by this record's sequence. */
    tp_ring_clear_sequence(rec + (end - pos));
    __builtin_prefetch(w->shared->data + ((pos + TP_RING_WRITE_AHEAD) & w->mask), 1);
    return rec + TP_RING_RECORD_HEADER;
}

/* The header of a claimed record: the caller may still change its flags before the commit. */
static inline struct tp_ring_record *tp_ring_claimed_header(void *payload)
{
    return (struct tp_ring_record *)((uint8_t *)payload - TP_RING_RECORD_HEADER);
}

/*
 * Writer: complete the record claimed at payload (what tp_ring_claim returned) whose header, all
 * but the sequence, is already written (tp_ring_claim_record, or tp_ring_commit_deferred): stores
 * the sequence, last. The shared tail moves at the next tp_ring_flush. Returns the sequence.
 */
static inline uint64_t tp_ring_commit_record(struct tp_ring_writer *w, void *payload)
{
    struct tp_ring_record *rec = tp_ring_claimed_header(payload);
    uint64_t sequence = w->next_sequence++;
    /* Last, with release: seeing the sequence means the record is complete. */
    __atomic_store_n(&rec->sequence, sequence, __ATOMIC_RELEASE);
    w->latest = w->claim_pos;
    w->tail = w->claim_end;
    return sequence;
}

/* The header's first 16 bytes as two words: (length, type, topic) and (instrument, flags). */
_Static_assert(offsetof(struct tp_ring_record, type) == 4 &&
                   offsetof(struct tp_ring_record, topic) == 6 &&
                   offsetof(struct tp_ring_record, instrument) == 8 &&
                   offsetof(struct tp_ring_record, flags) == 12,
               "record header layout");
static inline void tp_ring_write_header(void *payload, uint32_t length, uint16_t type,
                                        uint16_t topic, uint32_t instrument, uint32_t flags)
{
    uint64_t words[2] = {length | (uint64_t)type << 32 | (uint64_t)topic << 48,
                         instrument | (uint64_t)flags << 32};
    memcpy(tp_ring_claimed_header(payload), words, sizeof(words));
}

/*
 * Writer: tp_ring_claim that writes the record's header (all but the sequence) at once, so the
 * commit (tp_ring_commit_record) stores only the sequence: the caller keeps nothing of the
 * record but where its payload is. The flags may still change (tp_ring_claimed_header).
 */
static inline void *tp_ring_claim_record(struct tp_ring_writer *w, uint32_t payload_len,
                                         uint16_t type, uint16_t topic, uint32_t instrument,
                                         uint32_t flags)
{
    void *payload = tp_ring_claim(w, payload_len);
    if (payload != NULL)
        tp_ring_write_header(payload, TP_RING_RECORD_HEADER + payload_len, type, topic, instrument,
                             flags);
    return payload;
}

/*
 * Writer, for bursts: complete the claimed record (readers polling at their cursor see it at
 * once) but move the shared tail, which lagging readers and lag reports use, only at the next
 * tp_ring_flush (or tp_ring_commit): one shared store per burst instead of one per record, as a
 * data lcore does after each rx burst. Returns the record's sequence.
 */
static inline uint64_t tp_ring_commit_deferred(struct tp_ring_writer *w, uint16_t type,
                                               uint16_t topic, uint32_t instrument, uint32_t flags)
{
    void *payload = w->shared->data + (w->claim_pos & w->mask) + TP_RING_RECORD_HEADER;
    tp_ring_write_header(payload, w->claim_length, type, topic, instrument, flags);
    return tp_ring_commit_record(w, payload);
}

/* Writer: make the claimed record visible now. Returns its sequence. */
uint64_t tp_ring_commit(struct tp_ring_writer *w, uint16_t type, uint16_t topic,
                        uint32_t instrument, uint32_t flags);

/* Writer: make every record committed so far visible to readers. */
void tp_ring_flush(struct tp_ring_writer *w);

/* Writer: claim + copy + commit. Returns the sequence, or 0 if the payload is too large. */
uint64_t tp_ring_publish(struct tp_ring_writer *w, uint16_t type, uint16_t topic,
                         uint32_t instrument, uint32_t flags, const void *payload,
                         uint32_t payload_len);

/*
 * Reader: attach to ring memory mapped read-only and start at the writer's current tail (only
 * records published from now on). batch/batch_size: private buffer, at least max_record bytes
 * (larger buffers amortise the validation over more records). Returns 0 or -EINVAL.
 */
int tp_ring_reader_init(struct tp_ring_reader *r, const void *mem, uint8_t *batch,
                        uint32_t batch_size);

/*
 * Reader: next record. TP_RING_RECORD: *rec stays valid until the next call. TP_RING_LAPPED:
 * *lost = records missed; the following calls deliver records after the gap. No syscalls.
 */
int tp_ring_read(struct tp_ring_reader *r, const struct tp_ring_record **rec, uint64_t *lost);

/* Reader: payload of a record returned by tp_ring_read. */
static inline const void *tp_ring_payload(const struct tp_ring_record *rec)
{
    return (const uint8_t *)rec + TP_RING_RECORD_HEADER;
}

/* Reader: records published but not yet read (approximate while the writer runs). */
uint64_t tp_ring_lag(const struct tp_ring_reader *r);

#endif /* TP_BROADCAST_RING_H */
