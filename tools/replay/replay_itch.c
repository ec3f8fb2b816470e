/*
 * tickplane-replay's ITCH venue (replay_venue.h): Nasdaq ITCH 5.0, as a BinaryFILE (its own file
 * format: the fastest path, threaded by replay_share.h) or as MoldUDP64 packets through the line
 * arbiter (replay_mold.h). Auto detection asks it first.
 */
#include "replay_itch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "binaryfile.h"
#include "itch50.h"
#include "moldudp64.h"
#include "replay_mold.h"

/*
 * Does a UDP payload look like MoldUDP64: blocks that fill the packet exactly, each a valid ITCH
 * message? (The session name is not checked: captures may zero it.)
 */
static bool looks_like(const struct tp_udp_view *u)
{
    struct tp_mold_packet pkt;
    const uint8_t *msg;
    uint16_t len;
    int rc;

    if (tp_mold_parse(&pkt, u->payload, u->payload_len) < 0)
        return false;
    while ((rc = tp_mold_next(&pkt, &msg, &len)) == 1)
        if (tp_itch_check(msg, len) < 0)
            return false;
    return rc == 0;
}

static int open_venue(struct replay *r, const struct replay_params *p, void *tables,
                      const struct tp_feed_sink *sink)
{
    struct replay_itch *it = aligned_alloc(64, (sizeof(*it) + 63) & ~(size_t)63);
    (void)tables;
    r->venue_state[REPLAY_SLOT_itch] = it;
    if (it == NULL || replay_mold_open(r) != 0)
        return -ENOMEM;
    memset(it, 0, sizeof(*it));
    int rc = tp_itch_feed_init(&it->feed, r->registry, r->books, p->filter, 0, sink);
    if (r->share != NULL)
        r->share->priority = it->feed.next_priority; /* the feed's first */
    return rc;
}

static void set_sink(struct replay *r, const struct tp_feed_sink *sink)
{
    replay_itch_feed(r)->sink = *sink;
}

static void close_venue(struct replay *r)
{
    free(r->venue_state[REPLAY_SLOT_itch]);
    r->venue_state[REPLAY_SLOT_itch] = NULL;
}

/*
 * BinaryFILE: the fastest path, and the one the benchmark measures. Messages are framed a burst
 * at a time and handed to the feed's burst call, which prefetches each message's order slot and
 * best levels some messages before applying it.
 */
#define BURST 256

static int run_binaryfile(struct replay *r)
{
    struct tp_itch_feed *feed = replay_itch_feed(r);
    struct tp_binfile_reader rd;
    struct tp_feed_info info = {0};
    const uint8_t *msg[BURST];
    uint16_t len[BURST];
    int rc = 1;

    if (r->share != NULL && r->share->handoff != NULL && !r->share->lead) {
        replay_share_follow(r);
        return 0;
    }
    if (r->share != NULL && r->share->handoff != NULL) {
        size_t at;
        if (replay_share_frame(r, &at) == 0)
            return 0;
        r->error_offset = at;
        return REPLAY_EFRAME;
    }
    tp_binfile_reader_init(&rd, r->data, r->len);
    while (r->share != NULL && rc == 1) {
        uint32_t n = 0;
        while (n < BURST && (rc = tp_binfile_next(&rd, &msg[n], &len[n])) == 1)
            n++;
        replay_share_burst(r, msg, len, n, &info);
        r->messages += n;
        r->offset = rd.offset;
        if (r->progress && (r->messages / BURST) % REPLAY_PROGRESS_EVERY == 0)
            r->progress(r->progress_ctx, r);
    }
    if (r->share != NULL)
        replay_share_flush(r);
    while (rc == 1) {
        uint32_t n = 0;
        while (n < BURST && (rc = tp_binfile_next(&rd, &msg[n], &len[n])) == 1)
            n++;
        tp_itch_feed_burst(feed, msg, len, n, &info);
        r->messages += n;
        r->offset = rd.offset;
        if (r->progress && (r->messages / BURST) % REPLAY_PROGRESS_EVERY == 0)
            r->progress(r->progress_ctx, r);
    }
    if (rc < 0) {
        r->error_offset = rd.offset;
        return REPLAY_EFRAME;
    }
    return 0;
}

/* The ITCH messages of a MoldUDP64 payload, for the threaded replay's plan. */
static void each_message(const struct tp_udp_view *u,
                         bool (*count)(void *ctx, const uint8_t *msg, uint16_t len), void *ctx)
{
    struct tp_mold_packet pkt;
    const uint8_t *msg;
    uint16_t n;
    if (tp_mold_parse(&pkt, u->payload, u->payload_len) != TP_MOLD_MESSAGES)
        return;
    while (tp_mold_next(&pkt, &msg, &n) == 1 && count(ctx, msg, n))
        ;
}

/* Each worker of a threaded replay counts what its own instruments' messages did: the sums. */
static void print_counters(FILE *out, const struct replay *part, uint32_t parts)
{
    struct tp_itch_feed_counters c = {0};
    for (uint32_t i = 0; i < parts; i++) {
        const struct tp_itch_feed_counters *f = &replay_itch_feed(&part[i])->counters;
        c.malformed += f->malformed;
        c.unknown_instrument += f->unknown_instrument;
        c.rejected += f->rejected;
        c.definitions += f->definitions;
        c.filtered += f->filtered;
        c.registry_full += f->registry_full;
        c.broken_trades += f->broken_trades;
        c.ignored += f->ignored;
    }
    fprintf(out,
            ",\"itch\":{\"malformed\":%" PRIu64 ",\"unknown_instrument\":%" PRIu64
            ",\"rejected\":%" PRIu64 ",\"definitions\":%" PRIu64 ",\"filtered\":%" PRIu64
            ",\"registry_full\":%" PRIu64 ",\"broken_trades\":%" PRIu64 ",\"ignored\":%" PRIu64 "}",
            c.malformed, c.unknown_instrument, c.rejected, c.definitions, c.filtered,
            c.registry_full, c.broken_trades, c.ignored);
}

const struct replay_venue replay_venue_itch = {
    .name = "itch",
    .looks_like = looks_like,
    .registry_venue = TP_VENUE_NASDAQ_ITCH,
    .open = open_venue,
    .set_sink = set_sink,
    .close = close_venue,
    .packet = replay_mold_packet,
    .finish = replay_mold_finish,
    .run_file = run_binaryfile,
    .each_message = each_message,
    .print_counters = print_counters,
};
