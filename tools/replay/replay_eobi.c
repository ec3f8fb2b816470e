/*
 * tickplane-replay's EOBI venue (replay_venue.h): Eurex T7 EOBI packets, taken only when --venue
 * names it, down the daemon's path for the venue: its channel's segments path, through
 * tp_venue_eobi's feed ops (tp_venue.h). Its state is the feed,
 * replay.venue_state[REPLAY_SLOT_eobi].
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "eobi.h"
#include "eobi_release.h"
#include "replay_arb.h"
#include "replay_input.h"
#include "table_memory.h"
#include "tp_eobi_feed.h"
#include "tp_venue.h"

/* The T7 release of the capture's layouts (--eobi-release); packets of another are refused. */
static enum tp_eobi_release eobi_release = TP_EOBI_RELEASE_DEFAULT;

static struct tp_eobi_feed *replay_eobi_feed(const struct replay *r)
{
    return r->venue_state[REPLAY_SLOT_eobi];
}

static int open_venue(struct replay *r, const struct replay_params *p, void *tables,
                      const struct tp_feed_sink *sink)
{
    struct tp_eobi_feed *f = tp_table_memory(sizeof(*f), false);
    (void)tables;
    r->venue_state[REPLAY_SLOT_eobi] = f;
    if (f == NULL)
        return -ENOMEM;
    int rc = tp_eobi_feed_init(f, r->registry, r->books, p->filter, 0, sink);
    return rc != 0 ? rc : tp_eobi_feed_set_release(f, eobi_release);
}

static void set_sink(struct replay *r, const struct tp_feed_sink *sink)
{
    replay_eobi_feed(r)->sink = *sink;
}

static void close_venue(struct replay *r)
{
    if (r->venue_state[REPLAY_SLOT_eobi] != NULL)
        munmap(r->venue_state[REPLAY_SLOT_eobi], sizeof(struct tp_eobi_feed));
    r->venue_state[REPLAY_SLOT_eobi] = NULL;
}

/* What an EOBI flow's first packet says it is: a snapshot when its first message is a snapshot
 * template. */
static enum replay_line_kind kind_of(const struct tp_udp_view *u)
{
    const uint8_t *d = u->payload;
    size_t first = u->payload_len >= TP_EOBI_PACKET_HEADER_LEN ? tp_eobi_body_len(d) : 0;
    uint16_t t = first + TP_EOBI_MESSAGE_HEADER_LEN <= u->payload_len && first >= 4
                     ? tp_eobi_template_id(d + first)
                     : 0;
    return t >= TP_EOBI_PRODUCT_SUMMARY && t <= TP_EOBI_SNAPSHOT_ORDER ? REPLAY_KIND_SNAPSHOT
                                                                       : REPLAY_KIND_INCREMENTAL;
}

/* A market segment that just went RECOVERING: why, on the warnings stream. */
static void warn_gap(struct replay *r, const struct tp_udp_view *u, uint64_t expected,
                     uint64_t record, size_t offset)
{
    int32_t segment = tp_eobi_packet_header_market_segment_id(u->payload);
    uint64_t seq = tp_eobi_packet_header_appl_seq_num(u->payload);
    if (expected == 0)
        replay_warn(r,
                    "packet %" PRIu64 " (offset %zu): market segment %" PRId32
                    " starts at ApplSeqNum %" PRIu64 ": its books are incomplete (flagged "
                    "stale until its snapshot)",
                    record, offset, segment, seq);
    else if (seq > expected)
        replay_warn(r,
                    "packet %" PRIu64 " (offset %zu): market segment %" PRId32
                    " ApplSeqNum %" PRIu64 ", expected %" PRIu64
                    ": packets lost on every line (books flagged stale "
                    "until its snapshot)",
                    record, offset, segment, seq, expected);
    else
        replay_warn(r,
                    "packet %" PRIu64 " (offset %zu): market segment %" PRId32
                    " ApplSeqNum %" PRIu64
                    " reset its sequence or could not be applied (books flagged stale until its "
                    "snapshot)",
                    record, offset, segment, seq);
}

/*
 * An EOBI packet down the daemon's path for its venue (its channel's segments path, through
 * tp_venue_eobi's feed ops): an incremental line's packet to the feed, which follows each market
 * segment's ApplSeqNum and skips the other line's copy; a snapshot line's while a segment waits
 * for its snapshot. A segment that goes stale is reported with the packet's number.
 */
static void packet(struct replay *r, const struct tp_udp_view *u, uint64_t ts, uint64_t record,
                   size_t offset)
{
    const struct tp_venue_feed_ops *feed = tp_venue_eobi.feed;
    struct tp_eobi_feed *f = replay_eobi_feed(r);
    enum replay_line_role role = replay_lines_role(&r->lines, u, kind_of(u));
    uint64_t before = feed->messages(f), gaps = f->counters.gaps,
             implausible = f->counters.implausible;
    const struct tp_eobi_segment *seg =
        u->payload_len >= TP_EOBI_PACKET_HEADER_LEN
            ? tp_eobi_feed_segment(f, tp_eobi_packet_header_market_segment_id(u->payload))
            : NULL;
    uint64_t expected = seg != NULL && seg->state == TP_EOBI_SEGMENT_HEALTHY ? seg->next_seq : 0;
    int rc = 0;
    if (role == REPLAY_ROLE_INCR_A || role == REPLAY_ROLE_INCR_B)
        rc = feed->packet(f, u->payload, u->payload_len, ts);
    else if ((role == REPLAY_ROLE_SNAP_A || role == REPLAY_ROLE_SNAP_B) && feed->recovering(f) > 0)
        rc = feed->snapshot(f, u->payload, u->payload_len, ts);
    r->bad_packets += rc == -EBADMSG;
    r->messages += feed->messages(f) - before;
    if (f->counters.gaps != gaps)
        warn_gap(r, u, expected, record, offset);
    if (f->counters.implausible != implausible)
        replay_warn(r,
                    "packet %" PRIu64 " (offset %zu): market segment %" PRId32
                    " ApplSeqNum %" PRIu64 " dropped as implausible (%" PRIu64
                    " beyond the segment's highest, unconfirmed)",
                    record, offset, tp_eobi_packet_header_market_segment_id(u->payload),
                    tp_eobi_packet_header_appl_seq_num(u->payload),
                    tp_eobi_packet_header_appl_seq_num(u->payload) - seg->highest_seq);
}

static void print_counters(FILE *out, const struct replay *part, uint32_t parts)
{
    const struct tp_eobi_feed *f = replay_eobi_feed(&part[0]);
    const struct tp_eobi_feed_counters *e = &f->counters;
    (void)parts; /* one worker (replay_threads.h) */
    fprintf(out,
            ",\"eobi\":{\"packets\":%" PRIu64 ",\"snapshot_packets\":%" PRIu64
            ",\"messages\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"rejected\":%" PRIu64
            ",\"definitions\":%" PRIu64 ",\"duplicates\":%" PRIu64 ",\"gaps\":%" PRIu64
            ",\"buffered\":%" PRIu64 ",\"buffer_filled\":%" PRIu64 ",\"snapshots\":%" PRIu64
            ",\"snapshots_old\":%" PRIu64 ",\"snapshots_broken\":%" PRIu64
            ",\"recovering\":%" PRIu32 ",\"release_mismatch\":%" PRIu64 ",\"implausible\":%" PRIu64
            "}",
            e->packets, e->snapshot_packets, e->messages, e->malformed, e->rejected, e->definitions,
            e->duplicates, e->gaps, e->buffered, e->buffer_filled, e->snapshots, e->snapshots_old,
            e->snapshots_broken, tp_eobi_feed_recovering(f), e->release_mismatch, e->implausible);
}

static int set_release(const char *value, char *err, size_t errlen)
{
    return tp_eobi_release_option(value, &eobi_release, err, errlen);
}

static const struct tool_venue_option eobi_options[] = {
    {.name = "eobi-release", .arg = "6.0|7.0", .set = set_release},
};

const struct replay_venue replay_venue_eobi = {
    .name = "eobi",
    .registry_venue = TP_VENUE_EUREX_EOBI,
    .open = open_venue,
    .set_sink = set_sink,
    .close = close_venue,
    .packet = packet,
    .print_counters = print_counters,
    .snapshot_clears_stale = true,
    .options = eobi_options,
    .n_options = sizeof(eobi_options) / sizeof(eobi_options[0]),
};
