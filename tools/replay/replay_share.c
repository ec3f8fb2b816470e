/* A worker's share of a threaded replay (see replay_share.h). */
#include "replay_share.h"

#include "itch50.h"
#include "net_bytes.h"
#include "tp_books_prefetch.h"
#include "replay_input.h"
#include "replay_log.h"

#define SHARE_PUBLISH_EVERY 256u /* messages, a power of two */

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

/* The order messages: each carries an order reference at offset 11 (and is >= 19 bytes). */
static inline bool order_message(int type)
{
    return type == 'A' || type == 'F' || type == 'E' || type == 'C' || type == 'X' ||
           type == 'D' || type == 'U';
}

/* Queues one of this worker's messages: its order slot and state now, the levels of the one
 * half the queue ahead, as the feed's burst does. */
static void enqueue(struct replay *r, const uint8_t *msg, uint16_t len, uint32_t id,
                    uint64_t priority, const struct tp_feed_info *info)
{
    struct replay_share *s = r->share;
    const struct tp_books *b = r->books;

    if (s->waiting == REPLAY_SHARE_AHEAD)
        apply_first(r);
    uint32_t at = (s->first + s->waiting) & (REPLAY_SHARE_AHEAD - 1);
    s->pending[at] = (struct replay_share_pending){
        .msg = msg, .len = len, .priority = priority, .seq = s->seq, .info = *info};
    s->waiting++;
    if (id != TP_INSTRUMENT_NONE && len >= 19 && order_message(msg[0])) {
        tp_books_hint_hot(b, id);
        tp_books_hint_order(b, id, tp_load_be64(msg + 11));
        tp_books_hint_book(b, id);
    }
    if (s->waiting > REPLAY_SHARE_AHEAD / 2) {
        const struct replay_share_pending *near =
            &s->pending[(at - REPLAY_SHARE_AHEAD / 2) & (REPLAY_SHARE_AHEAD - 1)];
        uint32_t near_id = r->itch.locates[tp_itch_stock_locate(near->msg)] - 1;
        if (replay_share_holds(s, near_id) && near->len >= 19 && order_message(near->msg[0]))
            tp_books_hint_levels(b, near_id);
    }
}

/* A stock directory: every registry defines it, the books holding its id configure it. */
static void directory(struct replay *r, const uint8_t *msg, uint16_t len,
                      struct tp_feed_info *info)
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

/* Does the feed give this valid message of a known instrument a new priority? */
static inline bool takes_priority(int type)
{
    return type == TP_ITCH_ADD_ORDER || type == TP_ITCH_ADD_ORDER_MPID ||
           type == TP_ITCH_ORDER_REPLACE;
}

void replay_share_message(struct replay *r, const uint8_t *msg, uint16_t len,
                          struct tp_feed_info *info)
{
    struct replay_share *s = r->share;
    struct tp_itch_feed *f = &r->itch;
    uint32_t id = TP_INSTRUMENT_NONE;
    int type = len ? msg[0] : 0;

    /* The messages before the first waiting one are done: the merger may write their records. */
    if ((++s->seq & (SHARE_PUBLISH_EVERY - 1)) == 0 && s->log != NULL)
        replay_log_publish(s->log, (s->waiting ? s->pending[s->first].seq : s->seq) - 1);
    if (len >= 3 && type == TP_ITCH_STOCK_DIRECTORY) {
        directory(r, msg, len, info);
        return;
    }
    /* The types the feed applies without their locate stay with the lead. */
    if (len >= 3 && type != TP_ITCH_SYSTEM_EVENT && type != TP_ITCH_BROKEN_TRADE &&
        type != TP_ITCH_MWCB_DECLINE_LEVEL && type != TP_ITCH_MWCB_STATUS)
        id = f->locates[tp_itch_stock_locate(msg)] - 1;
    uint64_t priority = s->priority;
    if (id != TP_INSTRUMENT_NONE && takes_priority(type) && tp_itch_check(msg, len) == type)
        s->priority++;
    if (id == TP_INSTRUMENT_NONE ? s->lead : replay_share_holds(s, id))
        enqueue(r, msg, len, id, priority, info);
}
