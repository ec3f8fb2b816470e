/*
 * The main lcore's side of ITCH snapshots: see snapshots.h.
 */
#include "snapshots.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "channel.h"
#include "daemon.h"
#include "glimpse_session.h"
#include "itch_snapshot.h"

/* Chunks in flight in all: 16 KiB each, 4 MiB; a few kept back for BEGIN / END / FAILED. */
#define POOL_CHUNKS  256
#define POOL_RESERVE 8
#define RING_SIZE    512
#define QUEUE_MAX    16

struct snap_channel {
    char name[TP_CFG_NAME_MAX];
    struct rte_ring *ring; /* of the channel's lcore */
    struct tp_channel *ch; /* as last seen (a reload may replace it) */
    uint64_t wanted_seen;
    uint64_t idle_since_ms;
    uint32_t retry_ms;
    const char *why;       /* what started the current fetch */
    bool operator_request; /* tickplanectl recover: start at the next poll */
    char server[32];       /* host:port, for the log */
    struct tp_snap_chunk *cur;
    struct tp_snap_chunk *queue[QUEUE_MAX]; /* waiting for ring room, in order */
    unsigned n_queued;
    uint64_t chunks_sent;
    struct tp_glimpse_session g; /* last: its receive buffer is large */
};

static struct {
    struct rte_mempool *pool;
    unsigned n;
    struct snap_channel *ch[TP_CFG_MAX_CHANNELS];
} snaps;

static void flush_queue(struct snap_channel *sc)
{
    unsigned sent = 0;
    while (sent < sc->n_queued && rte_ring_enqueue(sc->ring, sc->queue[sent]) == 0)
        sent++;
    memmove(sc->queue, sc->queue + sent, (sc->n_queued - sent) * sizeof(sc->queue[0]));
    sc->n_queued -= sent;
    sc->chunks_sent += sent;
}

/* A chunk from the pool; the last POOL_RESERVE only for control chunks. NULL when none. */
static struct tp_snap_chunk *take(struct snap_channel *sc, bool control)
{
    if (!control && rte_mempool_avail_count(snaps.pool) <= POOL_RESERVE)
        return NULL;
    void *obj;
    if (rte_mempool_get(snaps.pool, &obj) != 0)
        return NULL;
    struct tp_snap_chunk *c = obj;
    memset(c, 0, offsetof(struct tp_snap_chunk, data));
    c->channel = sc->ch;
    return c;
}

static void push(struct snap_channel *sc, struct tp_snap_chunk *c)
{
    if (sc->n_queued == QUEUE_MAX) {
        /* Cannot happen while message() keeps the queue short; never block, never leak. */
        rte_mempool_put(snaps.pool, c);
        return;
    }
    sc->queue[sc->n_queued++] = c;
    flush_queue(sc);
}

static void push_data(struct snap_channel *sc)
{
    if (sc->cur != NULL && sc->cur->n_msgs > 0)
        push(sc, sc->cur);
    else if (sc->cur != NULL)
        rte_mempool_put(snaps.pool, sc->cur);
    sc->cur = NULL;
}

static void push_control(struct snap_channel *sc, uint32_t kind, uint64_t next_seq, bool final)
{
    struct tp_snap_chunk *c = take(sc, true);
    if (c == NULL) {
        fprintf(stderr, "tickplane: channel %s: snapshot: no chunk left for a control message\n",
                sc->name);
        return;
    }
    c->kind = kind;
    c->next_seq = next_seq;
    c->final = final;
    push(sc, c);
}

static void on_begin(void *ctx, uint32_t attempt)
{
    struct snap_channel *sc = ctx;
    push_data(sc);
    push_control(sc, TP_SNAP_CHUNK_BEGIN, 0, false);
    fprintf(stderr, "tickplane: channel %s: snapshot attempt %u from %s (%s)\n", sc->name, attempt,
            sc->server, sc->why);
}

static int on_message(void *ctx, const uint8_t *msg, uint16_t len)
{
    struct snap_channel *sc = ctx;
    flush_queue(sc);
    if (sc->n_queued > 0)
        return -EAGAIN; /* the lcore's ring is full: TCP waits */
    if (sc->cur != NULL && TP_SNAP_CHUNK_BYTES - sc->cur->bytes < sizeof(len) + (size_t)len) {
        push(sc, sc->cur);
        sc->cur = NULL;
    }
    if (sc->cur == NULL) {
        sc->cur = take(sc, false);
        if (sc->cur == NULL)
            return -EAGAIN; /* the lcore still applies earlier chunks */
        sc->cur->kind = TP_SNAP_CHUNK_DATA;
    }
    struct tp_snap_chunk *c = sc->cur;
    memcpy(c->data + c->bytes, &len, sizeof(len));
    memcpy(c->data + c->bytes + sizeof(len), msg, len);
    c->bytes += (uint32_t)(sizeof(len) + len);
    c->n_msgs++;
    return 0;
}

static void on_end(void *ctx, uint64_t next_seq)
{
    struct snap_channel *sc = ctx;
    push_data(sc);
    push_control(sc, TP_SNAP_CHUNK_END, next_seq, false);
    fprintf(stderr,
            "tickplane: channel %s: snapshot received: %llu messages, the feed continues from "
            "sequence %llu\n",
            sc->name, (unsigned long long)(sc->g.soup.counters.sequenced - 1),
            (unsigned long long)next_seq);
}

static void on_failed(void *ctx, enum tp_soup_fail why, bool final)
{
    struct snap_channel *sc = ctx;
    push_data(sc);
    push_control(sc, TP_SNAP_CHUNK_FAILED, 0, final);
    fprintf(stderr, "tickplane: channel %s: snapshot attempt %u from %s failed: %s%s\n", sc->name,
            sc->g.attempt, sc->server, tp_soup_fail_name(why),
            final ? "; no attempt left, the channel's books stay stale" : "; retrying");
}

/* The snapshot service of a channel: ITCH's GLIMPSE (config_itch.h), or NULL. */
static const struct tp_cfg_itch_snapshot *glimpse_of(const struct tp_cfg_channel *cc)
{
    const struct tp_cfg_itch_snapshot *g = &cc->proto.itch.glimpse;
    return cc->protocol == TP_CFG_PROTO_ITCH && g->present ? g : NULL;
}

/*
 * The running channel of that name (a reload may have moved, replaced or removed it), if it
 * still has a snapshot service.
 */
static struct tp_channel *channel_of(const struct tp_daemon *d, const struct snap_channel *sc)
{
    for (unsigned c = 0; c < d->cfg->n_channels; c++) {
        const struct tp_cfg_channel *cc = &d->cfg->channels[c];
        if (strcmp(cc->name, sc->name) == 0)
            return glimpse_of(cc) != NULL ? tp_daemon_channel(d, c) : NULL;
    }
    return NULL;
}

int tp_daemon_snapshots_init(struct tp_daemon *d)
{
    const struct tp_config *cfg = d->cfg;
    memset(&snaps, 0, sizeof(snaps));
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        const struct tp_cfg_itch_snapshot *glimpse = glimpse_of(&cfg->channels[c]);
        if (glimpse == NULL)
            continue;
        if (snaps.pool == NULL) {
            snaps.pool =
                rte_mempool_create("tp_snapshot_chunks", POOL_CHUNKS, sizeof(struct tp_snap_chunk),
                                   0, 0, NULL, NULL, NULL, NULL, (int)rte_socket_id(), 0);
            if (snaps.pool == NULL)
                return -ENOMEM;
        }
        struct tp_daemon_lcore *dl = &d->lcores[d->lcore_of[c]];
        if (dl->lc.snapshots == NULL) {
            char name[RTE_RING_NAMESIZE];
            snprintf(name, sizeof(name), "tp_snapshots_%u", dl->lc.lcore_id);
            dl->lc.snapshots =
                rte_ring_create(name, RING_SIZE, dl->socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
            dl->lc.snapshot_pool = snaps.pool;
            if (dl->lc.snapshots == NULL)
                return -ENOMEM;
        }
        struct snap_channel *sc = calloc(1, sizeof(*sc));
        if (sc == NULL)
            return -ENOMEM;
        snprintf(sc->name, sizeof(sc->name), "%s", cfg->channels[c].name);
        snprintf(sc->server, sizeof(sc->server), "%u.%u.%u.%u:%u", glimpse->host >> 24,
                 (glimpse->host >> 16) & 255, (glimpse->host >> 8) & 255, glimpse->host & 255,
                 glimpse->port);
        sc->ring = dl->lc.snapshots;
        sc->ch = channel_of(d, sc);
        sc->retry_ms = glimpse->retry_ms;
        struct tp_glimpse_params gp = {
            .soup = {.addr = glimpse->host,
                     .port = glimpse->port,
                     .connect_timeout_ms = glimpse->connect_timeout_ms,
                     .login_timeout_ms = glimpse->login_timeout_ms},
            .attempts = glimpse->attempts,
            .retry_ms = glimpse->retry_ms,
            .snapshot_timeout_ms = glimpse->snapshot_timeout_ms,
        };
        memcpy(gp.soup.username, glimpse->username, sizeof(gp.soup.username));
        memcpy(gp.soup.password, glimpse->password, sizeof(gp.soup.password));
        struct tp_glimpse_sink sink = {.ctx = sc,
                                       .begin = on_begin,
                                       .message = on_message,
                                       .end = on_end,
                                       .failed = on_failed};
        tp_glimpse_init(&sc->g, &gp, &sink);
        snaps.ch[snaps.n++] = sc;
    }
    return 0;
}

static void start_fetch(struct snap_channel *sc, const char *why, uint64_t now)
{
    sc->why = why;
    tp_glimpse_start(&sc->g, now);
}

void tp_daemon_snapshots_poll(struct tp_daemon *d, uint64_t now)
{
    for (unsigned i = 0; i < snaps.n; i++) {
        struct snap_channel *sc = snaps.ch[i];
        struct tp_channel *ch = channel_of(d, sc);
        if (ch != sc->ch) {
            /* A reload replaced the channel: what ran was for the old one. */
            tp_glimpse_cancel(&sc->g);
            if (sc->cur != NULL)
                rte_mempool_put(snaps.pool, sc->cur);
            for (unsigned k = 0; k < sc->n_queued; k++)
                rte_mempool_put(snaps.pool, sc->queue[k]);
            sc->cur = NULL;
            sc->n_queued = 0;
            sc->ch = ch;
            sc->wanted_seen = 0;
        }
        if (ch == NULL)
            continue;
        flush_queue(sc);
        uint64_t wanted = atomic_load_explicit(&ch->snap.wanted, memory_order_relaxed);
        if (sc->g.state == TP_GLIMPSE_IDLE && sc->operator_request) {
            sc->operator_request = false;
            start_fetch(sc, "operator request", now);
        } else if (sc->g.state == TP_GLIMPSE_IDLE && wanted != sc->wanted_seen &&
                   now - sc->idle_since_ms >= sc->retry_ms) {
            sc->wanted_seen = wanted;
            start_fetch(sc, "the channel needs one", now);
        }
        enum tp_glimpse_state before = sc->g.state;
        if (tp_glimpse_poll(&sc->g, now) == TP_GLIMPSE_IDLE && before != TP_GLIMPSE_IDLE)
            sc->idle_since_ms = now;
    }
}

bool tp_daemon_snapshots_busy(const struct tp_daemon *d)
{
    (void)d;
    for (unsigned i = 0; i < snaps.n; i++)
        if (snaps.ch[i]->g.state != TP_GLIMPSE_IDLE || snaps.ch[i]->n_queued > 0)
            return true;
    return false;
}

int tp_daemon_snapshot_request(struct tp_daemon *d, const char *name, char *err, size_t err_size)
{
    for (unsigned i = 0; i < snaps.n; i++) {
        struct snap_channel *sc = snaps.ch[i];
        if (strcmp(sc->name, name) != 0)
            continue;
        if (channel_of(d, sc) == NULL) {
            snprintf(err, err_size, "channel \"%s\" is not running", name);
            return -ENOENT;
        }
        if (sc->g.state != TP_GLIMPSE_IDLE || sc->operator_request) {
            snprintf(err, err_size, "channel \"%s\": a snapshot is being fetched already", name);
            return -EBUSY;
        }
        sc->operator_request = true;
        return 0;
    }
    snprintf(err, err_size, "no ITCH channel \"%s\" with recovery.snapshot", name);
    return -ENOENT;
}

json_t *tp_daemon_snapshots_json(const struct tp_daemon *d, bool lcores_stopped)
{
    json_t *out = json_object();
    for (unsigned i = 0; i < snaps.n; i++) {
        const struct snap_channel *sc = snaps.ch[i];
        const struct tp_glimpse_counters *gc = &sc->g.counters;
        const struct tp_channel *ch = lcores_stopped ? channel_of(d, sc) : NULL;
        json_t *o = json_pack(
            "{s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s}", "server", sc->server, "fetch",
            sc->g.state == TP_GLIMPSE_IDLE      ? "idle"
            : sc->g.state == TP_GLIMPSE_RUNNING ? "running"
                                                : "waiting to retry",
            "attempts", (json_int_t)gc->attempts, "completed", (json_int_t)gc->completed, "failed",
            (json_int_t)gc->failed, "rejected", (json_int_t)gc->rejected, "dropped",
            (json_int_t)gc->dropped, "gave_up", (json_int_t)gc->gave_up, "messages",
            (json_int_t)gc->messages, "last_failure", tp_soup_fail_name(sc->g.last_fail));
        if (ch != NULL) {
            /* The lcore's own counters: read here only once it stopped (else the bus's). */
            const struct tp_snap_counters *k = &ch->snap.counters;
            double tsc_per_us = (double)d->lcores[0].lc.tsc_hz / 1e6;
            json_object_set_new(
                o, "loads",
                json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f}", "completed",
                          (json_int_t)k->completed, "holes", (json_int_t)k->holes, "kept",
                          (json_int_t)k->kept, "kept_dropped", (json_int_t)k->kept_dropped,
                          "kept_max", (json_int_t)k->kept_max, "replayed", (json_int_t)k->replayed,
                          "skipped", (json_int_t)k->skipped, "messages", (json_int_t)k->messages,
                          "longest_step_tsc", (json_int_t)k->longest_step_tsc, "longest_step_us",
                          (double)k->longest_step_tsc / tsc_per_us, "longest_step_cpu_us",
                          (double)k->longest_step_cpu_ns / 1e3));
        }
        json_object_set_new(out, sc->name, o);
    }
    return out;
}
