/*
 * tickplane-replay's MDP3 venue (replay_venue.h): CME MDP 3.0 packets, every one that is not
 * MoldUDP64 when no --venue is given, down the daemon's MDP3 channel path (replay_mdp3_channel.h).
 */
#include "replay_mdp3.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "replay_mdp3_channel.h"
#include "tp_instruments.h"

/* The last venue auto detection asks before it: a payload ITCH's test refused is taken as MDP3's
 * (its packets have no magic to tell them by). */
static bool looks_like(const struct tp_udp_view *u)
{
    (void)u;
    return true;
}

/* A worker of a threaded replay takes ITCH only (replay_threads.h): no MDP3 state. */
static size_t table_bytes(const struct replay_params *p)
{
    return p->share ? 0 : tp_mdp3_feed_memsize(p->instruments);
}

static int open_venue(struct replay *r, const struct replay_params *p, void *tables,
                      const struct tp_feed_sink *sink)
{
    struct replay_mdp3 *m = aligned_alloc(64, (sizeof(*m) + 63) & ~(size_t)63);
    r->venue_state[REPLAY_SLOT_mdp3] = m;
    if (m == NULL)
        return -ENOMEM;
    memset(m, 0, sizeof(*m));
    if (p->share != NULL)
        return 0;
    if (replay_mdp3_channel_open(m) != 0)
        return -ENOMEM;
    return tp_mdp3_feed_init(&m->feed, tables, r->registry, r->books, p->filter, 0,
                             p->orders ? TP_BOOK_TYPE_MBP_MBO : TP_BOOK_TYPE_MBP, sink);
}

static void set_sink(struct replay *r, const struct tp_feed_sink *sink)
{
    replay_mdp3_of(r)->feed.sink = *sink;
}

static void close_venue(struct replay *r)
{
    struct replay_mdp3 *m = replay_mdp3_of(r);
    if (m != NULL)
        replay_mdp3_channel_close(m);
    free(m);
    r->venue_state[REPLAY_SLOT_mdp3] = NULL;
}

static void print_counters(FILE *out, const struct replay *part, uint32_t parts)
{
    const struct tp_mdp3_feed_counters *m = &replay_mdp3_of(&part[0])->feed.counters;
    (void)parts; /* one worker (replay_threads.h) */
    fprintf(out,
            ",\"mdp3\":{\"packets\":%" PRIu64 ",\"messages\":%" PRIu64 ",\"malformed\":%" PRIu64
            ",\"other_schema\":%" PRIu64 ",\"unknown_template\":%" PRIu64
            ",\"unknown_instrument\":%" PRIu64 ",\"rejected\":%" PRIu64 ",\"definitions\":%" PRIu64
            ",\"filtered\":%" PRIu64 ",\"registry_full\":%" PRIu64 ",\"rpt_seq_gaps\":%" PRIu64
            ",\"stale_skipped\":%" PRIu64 ",\"duplicates\":%" PRIu64 ",\"snapshots\":%" PRIu64
            ",\"snapshots_old\":%" PRIu64 ",\"snapshots_audited\":%" PRIu64
            ",\"snapshot_mismatch\":%" PRIu64 ",\"channel_resets\":%" PRIu64 ",\"events\":%" PRIu64
            ",\"refusal_marks\":%" PRIu64 ",\"order_snapshot_mismatch\":%" PRIu64 "}",
            m->packets, m->messages, m->malformed, m->other_schema, m->unknown_template,
            m->unknown_instrument, m->rejected, m->definitions, m->filtered, m->registry_full,
            m->rpt_seq_gaps, m->stale_skipped, m->duplicates, m->snapshots, m->snapshots_old,
            m->snapshots_audited, m->snapshot_mismatch, m->channel_resets, m->events,
            m->refusal_marks, m->order_snapshot_mismatch);
}

/* An instrument's RptSeq state says whether its book is behind (until a snapshot rebuilt it). */
static bool stale(const struct replay *r, uint32_t id)
{
    return tp_mdp3_feed_state(&replay_mdp3_of(r)->feed, id)->stale;
}

/* An order view holds the venue's orders only once a 53 (or a reset) filled it. */
static bool orders_incomplete(const struct replay *r, uint32_t id)
{
    return !tp_mdp3_feed_state(&replay_mdp3_of(r)->feed, id)->orders_complete;
}

const struct replay_venue replay_venue_mdp3 = {
    .name = "mdp3",
    .looks_like = looks_like,
    .registry_venue = TP_VENUE_CME_MDP3,
    .table_bytes = table_bytes,
    .open = open_venue,
    .set_sink = set_sink,
    .close = close_venue,
    .packet = replay_mdp3_packet,
    .finish = replay_mdp3_finish,
    .print_counters = print_counters,
    .stale = stale,
    .orders_incomplete = orders_incomplete,
};
