/* A worker's share of a threaded replay (see replay_share.h). */
#include "replay_share.h"

#include <errno.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "binaryfile.h"
#include "itch50.h"
#include "net_bytes.h"
#include "tp_books_prefetch.h"
#include "replay_input.h"
#include "replay_itch.h"
#include "replay_log.h"

#define SHARE_PUBLISH_EVERY 256u /* messages, a power of two */
#define SHARE_RUN           256u /* messages a burst is sorted out by */

static void apply_first(struct replay *r)
{
    struct replay_share *s = r->share;
    struct replay_share_pending *p = &s->pending[s->first];
    struct tp_itch_feed *f = replay_itch_feed(r);

    f->next_priority = p->priority;
    s->key = p->seq;
    tp_itch_feed_message(f, p->msg, p->len, &p->info);
    s->first = (s->first + 1) & (REPLAY_SHARE_AHEAD - 1);
    s->waiting--;
}

void replay_share_flush(struct replay *r)
{
    while (r->share->waiting)
        apply_first(r);
    r->share->key = r->share->seq;
}

/* What the sharing needs of each ITCH type, one table lookup (as the feed's own dispatch). */
enum {
    BY_LOCATE = 1,    /* applied to the instrument of its locate */
    ORDER = 2,        /* carries an order reference at offset 11 (and is >= 19 bytes) */
    NEW_PRIORITY = 4, /* the feed gives it the next priority (when valid, of a known locate) */
    DIRECTORY = 8,    /* a stock directory: every worker's */
};

static const uint8_t type_class[256] = {
    ['A'] = BY_LOCATE | ORDER | NEW_PRIORITY,
    ['F'] = BY_LOCATE | ORDER | NEW_PRIORITY,
    ['U'] = BY_LOCATE | ORDER | NEW_PRIORITY,
    ['E'] = BY_LOCATE | ORDER,
    ['C'] = BY_LOCATE | ORDER,
    ['X'] = BY_LOCATE | ORDER,
    ['D'] = BY_LOCATE | ORDER,
    ['P'] = BY_LOCATE,
    ['Q'] = BY_LOCATE,
    ['I'] = BY_LOCATE,
    ['H'] = BY_LOCATE,
    ['Y'] = BY_LOCATE,
    ['L'] = BY_LOCATE,
    ['J'] = BY_LOCATE,
    ['h'] = BY_LOCATE,
    ['K'] = BY_LOCATE,
    ['N'] = BY_LOCATE,
    ['O'] = BY_LOCATE,
    [TP_ITCH_STOCK_DIRECTORY] = DIRECTORY,
    /* S, B, V, W: applied without their locate, the lead's (as are unknown types). */
};

/* Queues one of this worker's messages: its order slot and state now, the levels of the one
 * half the queue ahead, as the feed's burst does. */
static inline __attribute__((always_inline)) void enqueue(struct replay *r, const uint8_t *msg,
                                                          uint16_t len, uint32_t id, bool order,
                                                          uint64_t priority, uint64_t seq,
                                                          const struct tp_feed_info *info)
{
    struct replay_share *s = r->share;
    const struct tp_books *b = r->books;

    if (s->waiting == REPLAY_SHARE_AHEAD)
        apply_first(r);
    uint32_t at = (s->first + s->waiting) & (REPLAY_SHARE_AHEAD - 1);
    struct replay_share_pending *p = &s->pending[at];
    p->msg = msg;
    p->len = len;
    p->id = order ? id : TP_INSTRUMENT_NONE;
    p->priority = priority;
    p->seq = seq;
    p->info = *info;
    s->waiting++;
    if (order) {
        tp_books_hint_hot(b, id);
        tp_books_hint_order(b, id, tp_load_be64(msg + 11));
        tp_books_hint_book(b, id);
    }
    if (s->waiting > REPLAY_SHARE_AHEAD / 2) {
        uint32_t near = s->pending[(at - REPLAY_SHARE_AHEAD / 2) & (REPLAY_SHARE_AHEAD - 1)].id;
        if (near != TP_INSTRUMENT_NONE)
            tp_books_hint_levels(b, near);
    }
}

/* A stock directory: every registry defines it, the books holding its id configure it. */
static void directory(struct replay *r, const uint8_t *msg, uint16_t len, struct tp_feed_info *info)
{
    struct tp_itch_feed *f = replay_itch_feed(r);
    struct tp_itch_feed_counters before = f->counters;

    replay_share_flush(r); /* the messages before it see the locates as they were */
    tp_itch_feed_message(f, msg, len, info);
    if (f->counters.definitions != before.definitions)
        return; /* this worker's instrument */
    /* Books that do not hold the id refuse it (counted as registry_full): not a refusal of the
     * whole feed. Filtered, malformed or a full registry: every worker saw it, the lead counts. */
    uint32_t id = f->locates[tp_itch_stock_locate(msg)] - 1;
    bool elsewhere = f->counters.registry_full != before.registry_full &&
                     id != TP_INSTRUMENT_NONE && !replay_share_holds(r->share, id);
    if (elsewhere || !r->share->lead)
        f->counters = before;
}

static inline __attribute__((always_inline)) void
share_message(struct replay *r, const uint8_t *msg, uint16_t len, struct tp_feed_info *info)
{
    struct replay_share *s = r->share;
    struct tp_itch_feed *f = replay_itch_feed(r);
    uint32_t id = TP_INSTRUMENT_NONE;
    unsigned cls = len >= 3 ? type_class[msg[0]] : 0;

    /* The messages before the first waiting one are done: the merger may write their records. */
    if ((++s->seq & (SHARE_PUBLISH_EVERY - 1)) == 0 && s->log != NULL)
        replay_log_publish(s->log, (s->waiting ? s->pending[s->first].seq : s->seq) - 1);
    if (cls & DIRECTORY) {
        directory(r, msg, len, info);
        return;
    }
    if (cls & BY_LOCATE)
        id = f->locates[tp_itch_stock_locate(msg)] - 1;
    uint64_t priority = s->priority;
    if (id != TP_INSTRUMENT_NONE && (cls & NEW_PRIORITY) && tp_itch_check(msg, len) >= 0)
        s->priority++;
    if (id == TP_INSTRUMENT_NONE ? s->lead : replay_share_holds(s, id))
        enqueue(r, msg, len, id, id != TP_INSTRUMENT_NONE && (cls & ORDER) && len >= 19, priority,
                s->seq, info);
}

void replay_share_message(struct replay *r, const uint8_t *msg, uint16_t len,
                          struct tp_feed_info *info)
{
    share_message(r, msg, len, info);
}

/* A run of a burst's messages sorted out: this worker's, by their place in the run. */
struct sorted {
    uint32_t mine;
    uint16_t at[SHARE_RUN];
    uint32_t order[SHARE_RUN]; /* 1: an order message (enqueue's order) */
    uint32_t id[SHARE_RUN];
    uint64_t priority[SHARE_RUN];
};

/* The length tp_itch_check wants of each type (0: unknown), as a table. */
static const uint8_t length_of[256] = {
#define SHARE_LENGTH(T, M, LEN) [T] = LEN,
    TP_ITCH_MESSAGES(SHARE_LENGTH)
#undef SHARE_LENGTH
};

/* What sorting out reads of one message, with no branch on its type. */
struct classified {
    uint32_t directory;    /* a stock directory */
    uint32_t id;           /* the instrument of its locate, or TP_INSTRUMENT_NONE */
    uint32_t known;        /* id is an instrument's */
    uint32_t order;        /* enqueue's order */
    uint32_t new_priority; /* 1: the feed gives it the next priority */
};

static inline __attribute__((always_inline)) struct classified
classify(const uint32_t *locates, const uint8_t *msg, uint32_t len)
{
    static const uint8_t no_locate[3];
    const uint8_t *m = len >= 3 ? msg : no_locate; /* a shorter one is no type's */
    uint32_t type = m[0];
    uint32_t cls = type_class[type];
    uint32_t id = locates[tp_itch_stock_locate(m)] - 1;
    struct classified c = {.directory = cls & DIRECTORY,
                           .id = cls & BY_LOCATE ? id : TP_INSTRUMENT_NONE};

    c.known = c.id != TP_INSTRUMENT_NONE;
    c.order = c.known & ((cls & ORDER) != 0) & (len >= 19);
    c.new_priority = c.known & ((cls & NEW_PRIORITY) != 0) & (len == length_of[type]);
    return c;
}

/*
 * Sorts out the messages of a run up to its first stock directory (which changes the locates of
 * those after it), and returns how many. No branch depends on a message's type or owner: random
 * messages mispredicted such branches about one in two, which cost a worker more than the
 * messages it skips. What the loop reads is in locals: a store to the arrays could alias it.
 */
static inline __attribute__((always_inline)) uint32_t
sort_out(struct replay_share *s, const struct tp_itch_feed *f, const uint8_t *const *msg,
         const uint16_t *len, uint32_t n, struct sorted *o)
{
    const uint32_t *locates = f->locates;
    const uint32_t first = s->first_id, span = s->end_id - s->first_id, lead = s->lead;
    uint64_t priority = s->priority;
    uint32_t k = 0, i;

    for (i = 0; i < n; i++) {
        struct classified c = classify(locates, msg[i], len[i]);
        if (__builtin_expect(c.directory, 0))
            break;
        o->at[k] = (uint16_t)i;
        o->id[k] = c.id;
        o->order[k] = c.order;
        o->priority[k] = priority;
        priority += c.new_priority;
        k += c.known ? c.id - first < span : lead;
    }
    s->priority = priority;
    o->mine = k;
    return i;
}

void replay_share_burst(struct replay *r, const uint8_t *const *msg, const uint16_t *len,
                        uint32_t n, struct tp_feed_info *info)
{
    struct replay_share *s = r->share;
    struct sorted o;

    while (n > 0) {
        uint32_t run = n < SHARE_RUN ? n : SHARE_RUN;
        uint32_t sorted = sort_out(s, replay_itch_feed(r), msg, len, run, &o);
        for (uint32_t j = 0; j < o.mine; j++)
            enqueue(r, msg[o.at[j]], len[o.at[j]], o.id[j], o.order[j], o.priority[j],
                    s->seq + o.at[j] + 1, info);
        s->seq += sorted;
        if (sorted < run) {
            s->seq++;
            directory(r, msg[sorted], len[sorted], info);
            sorted++;
        }
        /* The messages before the first waiting one are done: the merger may write theirs. */
        if (s->log != NULL)
            replay_log_publish(s->log, s->waiting ? s->pending[s->first].seq - 1 : s->seq);
        msg += sorted;
        len += sorted;
        n -= sorted;
    }
}

/* One message of a chunk, as the lead sorted it out. */
struct handoff_entry {
    const uint8_t *msg;
    uint64_t priority;
    uint32_t id;
    uint16_t len;
    uint8_t order;     /* enqueue's order */
    uint8_t directory; /* a stock directory: in every worker's list */
};

struct handoff_slot {
    struct handoff_entry entry[REPLAY_HANDOFF_CHUNK];
    uint64_t first_seq; /* the share's seq before the chunk's first message */
    uint32_t messages;
    bool last;       /* the capture's framing ended with this chunk */
    uint32_t *count; /* by worker: how many of the chunk's messages are its */
    uint16_t *list;  /* by worker, REPLAY_HANDOFF_CHUNK each: its messages' places, in order */
};

/* The lead's and each worker's counter on lines of their own. */
struct handoff_counter {
    _Alignas(REPLAY_WORKER_ALIGN) _Atomic uint64_t chunks;
};

struct replay_handoff {
    uint32_t workers;
    uint8_t *owner_of; /* by instrument id */
    struct handoff_slot slot[REPLAY_HANDOFF_SLOTS];
    struct handoff_counter published;   /* chunks the lead handed over */
    struct handoff_counter *given_back; /* by worker: chunks it is done with */
    uint64_t all_given_back;            /* the lead's cache of the smallest of them */
};

int replay_handoff_open(struct replay_handoff **out, uint32_t workers, const uint8_t *owner_of,
                        uint32_t instruments)
{
    struct replay_handoff *h = aligned_alloc(REPLAY_WORKER_ALIGN, sizeof(*h));

    *out = h;
    if (h == NULL)
        return -ENOMEM;
    memset(h, 0, sizeof(*h));
    h->workers = workers;
    h->owner_of = malloc(instruments ? instruments : 1);
    h->given_back = aligned_alloc(REPLAY_WORKER_ALIGN, workers * sizeof(*h->given_back));
    if (h->owner_of == NULL || h->given_back == NULL)
        return -ENOMEM;
    memcpy(h->owner_of, owner_of, instruments);
    for (uint32_t i = 0; i < workers; i++)
        atomic_init(&h->given_back[i].chunks, 0);
    atomic_init(&h->published.chunks, 0);
    for (uint32_t i = 0; i < REPLAY_HANDOFF_SLOTS; i++) {
        h->slot[i].count = calloc(workers, sizeof(*h->slot[i].count));
        h->slot[i].list = calloc((size_t)workers * REPLAY_HANDOFF_CHUNK, sizeof(uint16_t));
        if (h->slot[i].count == NULL || h->slot[i].list == NULL)
            return -ENOMEM;
    }
    return 0;
}

void replay_handoff_close(struct replay_handoff *h)
{
    if (h == NULL)
        return;
    for (uint32_t i = 0; i < REPLAY_HANDOFF_SLOTS; i++) {
        free(h->slot[i].count);
        free(h->slot[i].list);
    }
    free(h->given_back);
    free(h->owner_of);
    free(h);
}

/* Spins a while, then lets the other threads of a shared core run (the machine may have fewer
 * cores than threads). */
static void wait_a_little(uint32_t *spins)
{
    if (++*spins < 256) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        return;
    }
    *spins = 0;
    sched_yield();
}

/* The lead: a free slot for chunk c, once every worker gave back chunk c - SLOTS. */
static struct handoff_slot *claim(struct replay_handoff *h, uint64_t c)
{
    uint32_t spins = 0;

    while (c >= h->all_given_back + REPLAY_HANDOFF_SLOTS) {
        uint64_t least = UINT64_MAX;
        for (uint32_t i = 1; i < h->workers; i++) {
            uint64_t g = atomic_load_explicit(&h->given_back[i].chunks, memory_order_acquire);
            least = g < least ? g : least;
        }
        h->all_given_back = least;
        if (c >= least + REPLAY_HANDOFF_SLOTS)
            wait_a_little(&spins);
    }
    struct handoff_slot *slot = &h->slot[c & (REPLAY_HANDOFF_SLOTS - 1)];
    memset(slot->count, 0, h->workers * sizeof(*slot->count));
    return slot;
}

/* The lead's messages of a chunk, from its place `from` in its list. */
static uint32_t enqueue_own(struct replay *r, const struct handoff_slot *slot, uint32_t from,
                            struct tp_feed_info *info)
{
    for (; from < slot->count[0]; from++) {
        const struct handoff_entry *e = &slot->entry[slot->list[from]];
        enqueue(r, e->msg, e->len, e->id, e->order, e->priority,
                slot->first_seq + slot->list[from] + 1, info);
    }
    return from;
}

/*
 * Sorts out a chunk's messages from `at` up to its first stock directory, each to its owner's
 * list, and returns where it stopped. Branch-free on a message's type and owner, as sort_out.
 */
static inline __attribute__((always_inline)) uint32_t
hand_out(struct replay_share *s, const struct tp_itch_feed *f, const uint8_t *owner_of,
         struct handoff_slot *slot, uint32_t at)
{
    const uint32_t *locates = f->locates;
    uint32_t *count = slot->count;
    uint16_t *list = slot->list;
    uint64_t priority = s->priority;
    uint32_t i;

    for (i = at; i < slot->messages; i++) {
        struct handoff_entry *e = &slot->entry[i];
        struct classified c = classify(locates, e->msg, e->len);
        if (__builtin_expect(c.directory, 0))
            break;
        uint32_t owner = owner_of[c.known ? c.id : 0] & -c.known;
        e->id = c.id;
        e->order = (uint8_t)c.order;
        e->directory = 0;
        e->priority = priority;
        priority += c.new_priority;
        list[(size_t)owner * REPLAY_HANDOFF_CHUNK + count[owner]++] = (uint16_t)i;
    }
    s->priority = priority;
    return i;
}

int replay_share_frame(struct replay *r, size_t *error_offset)
{
    struct replay_share *s = r->share;
    struct replay_handoff *h = s->handoff;
    struct tp_binfile_reader rd;
    struct tp_feed_info info = {0};
    int rc = 1;

    tp_binfile_reader_init(&rd, r->data, r->len);
    for (uint64_t c = 0; rc == 1; c++) {
        struct handoff_slot *slot = claim(h, c);
        uint32_t n = 0, at = 0, own = 0;
        while (n < REPLAY_HANDOFF_CHUNK &&
               (rc = tp_binfile_next(&rd, &slot->entry[n].msg, &slot->entry[n].len)) == 1)
            n++;
        slot->messages = n;
        slot->first_seq = s->seq;
        slot->last = rc != 1;
        while ((at = hand_out(s, replay_itch_feed(r), h->owner_of, slot, at)) < n) {
            /* A stock directory: the lead's messages before it first, then every worker's. */
            struct handoff_entry *e = &slot->entry[at];
            own = enqueue_own(r, slot, own, &info);
            e->directory = 1;
            for (uint32_t w = 1; w < h->workers; w++)
                slot->list[(size_t)w * REPLAY_HANDOFF_CHUNK + slot->count[w]++] = (uint16_t)at;
            s->seq = slot->first_seq + at + 1;
            directory(r, e->msg, e->len, &info);
            at++;
        }
        atomic_store_explicit(&h->published.chunks, c + 1, memory_order_release);
        enqueue_own(r, slot, own, &info);
        s->seq = slot->first_seq + n;
        if (s->log != NULL)
            replay_log_publish(s->log, s->waiting ? s->pending[s->first].seq - 1 : s->seq);
        r->messages += n;
        r->offset = rd.offset;
        if (r->progress && (c & (REPLAY_PROGRESS_EVERY - 1)) == 0)
            r->progress(r->progress_ctx, r);
    }
    replay_share_flush(r);
    *error_offset = rd.offset;
    return rc;
}

void replay_share_follow(struct replay *r)
{
    struct replay_share *s = r->share;
    struct replay_handoff *h = s->handoff;
    struct tp_feed_info info = {0};
    bool last = false;

    for (uint64_t c = 0; !last; c++) {
        uint32_t spins = 0;
        while (atomic_load_explicit(&h->published.chunks, memory_order_acquire) <= c)
            wait_a_little(&spins);
        const struct handoff_slot *slot = &h->slot[c & (REPLAY_HANDOFF_SLOTS - 1)];
        const uint16_t *list = slot->list + (size_t)s->worker * REPLAY_HANDOFF_CHUNK;
        for (uint32_t j = 0, n = slot->count[s->worker]; j < n; j++) {
            const struct handoff_entry *e = &slot->entry[list[j]];
            uint64_t seq = slot->first_seq + list[j] + 1;
            if (__builtin_expect(e->directory, 0)) {
                s->seq = seq;
                directory(r, e->msg, e->len, &info);
            } else {
                enqueue(r, e->msg, e->len, e->id, e->order, e->priority, seq, &info);
            }
        }
        s->seq = slot->first_seq + slot->messages;
        r->messages += slot->messages;
        last = slot->last;
        /* What is queued was copied out of the slot: the lead may reuse it. */
        atomic_store_explicit(&h->given_back[s->worker].chunks, c + 1, memory_order_release);
        if (s->log != NULL)
            replay_log_publish(s->log, s->waiting ? s->pending[s->first].seq - 1 : s->seq);
    }
    replay_share_flush(r);
}
