/* A worker's share of a threaded replay (see replay_share.h). */
#include "replay_share.h"

#include "itch50.h"
#include "net_bytes.h"
#include "tp_books_prefetch.h"
#include "replay_input.h"
#include "replay_log.h"

#define SHARE_PUBLISH_EVERY 256u /* messages, a power of two */
#define SHARE_RUN           256u /* messages a burst is sorted out by */

static void apply_first(struct replay *r)
{
    struct replay_share *s = r->share;
    struct replay_share_pending *p = &s->pending[s->first];

    r->itch.next_priority = p->priority;
    s->key = p->seq;
    tp_itch_feed_message(&r->itch, p->msg, p->len, &p->info);
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
    struct tp_itch_feed *f = &r->itch;
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
    struct tp_itch_feed *f = &r->itch;
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
    static const uint8_t no_locate[3];
    const uint32_t *locates = f->locates;
    const uint32_t first = s->first_id, span = s->end_id - s->first_id, lead = s->lead;
    uint64_t priority = s->priority;
    uint32_t k = 0, i;

    for (i = 0; i < n; i++) {
        uint32_t l = len[i];
        const uint8_t *m = l >= 3 ? msg[i] : no_locate; /* a shorter one is no type's */
        uint32_t type = m[0];
        uint32_t cls = type_class[type];
        if (__builtin_expect(cls & DIRECTORY, 0))
            break;
        uint32_t id = locates[tp_itch_stock_locate(m)] - 1;
        id = cls & BY_LOCATE ? id : TP_INSTRUMENT_NONE;
        uint32_t known = id != TP_INSTRUMENT_NONE;
        o->at[k] = (uint16_t)i;
        o->id[k] = id;
        o->order[k] = known & ((cls & ORDER) != 0) & (l >= 19);
        o->priority[k] = priority;
        priority += known & ((cls & NEW_PRIORITY) != 0) & (l == length_of[type]);
        k += known ? id - first < span : lead;
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
        uint32_t sorted = sort_out(s, &r->itch, msg, len, run, &o);
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
