/*
 * Replay session (see replay_input.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "binaryfile.h"
#include "eobi.h"
#include "itch50.h"
#include "mdp3_packet.h"
#include "moldudp64.h"
#include "net_build.h"
#include "net_bytes.h"
#include "net_parse.h"
#include "pcap_reader.h"
#include "replay_input.h"
#include "replay_arb.h"
#include "replay_mdp3.h"
#include "replay_mold.h"
#include "table_memory.h"
#include "tp_venue.h"

#define PCAP_LINKTYPE_ETHERNET 1
#define REPLAY_FRAME_MAX       262144 /* libpcap's largest frame */

int replay_is_pcap(const uint8_t *d, size_t len)
{
    uint32_t magic;

    if (len < 4)
        return 0;
    memcpy(&magic, d, 4);
    return magic == 0xa1b2c3d4u || magic == 0xd4c3b2a1u || magic == 0xa1b23c4du ||
           magic == 0x4d3cb2a1u || magic == 0x0a0d0d0au; /* pcapng's section header */
}

/*
 * The replay's feed sink: it counts what the daemon's publisher would publish, so a replay runs
 * the feeds exactly as the data plane does, change delivery included.
 */
static void count_changes(void *ctx, const struct tp_feed_info *info,
                          const struct tp_book_change *c, uint32_t n)
{
    struct replay *r = ctx;

    (void)info;
    /* Kinds are below 8 (tp_book_change.h): a mask, not a test, keeps any byte in the array. */
    for (uint32_t i = 0; i < n; i++)
        r->changes[c[i].kind & (REPLAY_CHANGE_KINDS - 1)]++;
}

static void count_event(void *ctx, const struct tp_feed_info *info)
{
    (void)info;
    ((struct replay *)ctx)->events++;
}

/* An ITCH message's records and its event's end in one call, as the daemon's publisher takes
 * them (tp_feed_sink.event_changes). */
static void count_event_changes(void *ctx, const struct tp_feed_info *info,
                                const struct tp_book_change *c, uint32_t n)
{
    count_changes(ctx, info, c, n);
    count_event(ctx, info);
}

/*
 * An ITCH order message's changes unexpanded, and its event's end (tp_feed_sink.order_changes):
 * counted as the records they stand for, which nothing here reads whole (--digest and --events
 * take the records: their sinks leave order_changes NULL).
 */
static void count_order_changes(void *ctx, const struct tp_feed_info *info,
                                const struct tp_order_change *oc, uint32_t n)
{
    struct replay *r = ctx;

    /* n is 1 or 2 (a replace): the first and the last are all there are; no loop to predict. */
    const struct tp_order_change *last = &oc[n - 1];

    (void)info;
    r->changes[TP_CHANGE_ORDER] += n;
    r->changes[TP_CHANGE_LEVEL] += (oc->level != 0) + ((n > 1) & (last->level != 0));
    r->changes[TP_CHANGE_TRADE] += (oc->flags | last->flags) & TP_ORDER_CHANGE_F_TRADE;
    r->events++;
}

static void count_stale(void *ctx, uint32_t instrument, int stale, uint32_t expected, uint32_t got)
{
    struct replay *r = ctx;
    (void)expected;
    (void)got;
    r->stale += stale != 0;
    /* ITCH books the feed flags stay flagged (MDP3's state says when a snapshot repaired one);
     * EOBI's feed says when its snapshot did (stale 0). */
    if (r->instrument_stale != NULL && instrument < r->instruments &&
        (stale || r->venue == REPLAY_VENUE_EOBI))
        r->instrument_stale[instrument] = stale != 0;
}

/* The same sink with the digest (--digest): counts, then hashes each callback with its arguments.
 */
static void digest_changes(void *ctx, const struct tp_feed_info *info,
                           const struct tp_book_change *c, uint32_t n)
{
    count_changes(ctx, info, c, n);
    replay_digest_changes(&((struct replay *)ctx)->digest, c, n);
}

static void digest_event(void *ctx, const struct tp_feed_info *info)
{
    count_event(ctx, info);
    replay_digest_event(&((struct replay *)ctx)->digest);
}

static void digest_stale(void *ctx, uint32_t instrument, int stale, uint32_t expected, uint32_t got)
{
    count_stale(ctx, instrument, stale, expected, got);
    replay_digest_stale(&((struct replay *)ctx)->digest, instrument, stale, expected, got);
}

/* The output sink of replay_set_output, after the counting (or digest) sink. */
static void tee_changes(void *ctx, const struct tp_feed_info *info, const struct tp_book_change *c,
                        uint32_t n)
{
    struct replay *r = ctx;
    r->digest_on ? digest_changes(ctx, info, c, n) : count_changes(ctx, info, c, n);
    r->output->changes(r->output->ctx, info, c, n);
}

static void tee_event(void *ctx, const struct tp_feed_info *info)
{
    struct replay *r = ctx;
    r->digest_on ? digest_event(ctx, info) : count_event(ctx, info);
    r->output->end_of_event(r->output->ctx, info);
}

static void tee_event_changes(void *ctx, const struct tp_feed_info *info,
                              const struct tp_book_change *c, uint32_t n)
{
    struct replay *r = ctx;
    if (r->digest_on) {
        digest_changes(ctx, info, c, n);
        digest_event(ctx, info);
    } else {
        count_event_changes(ctx, info, c, n);
    }
    r->output->event_changes(r->output->ctx, info, c, n);
}

static void tee_instrument(void *ctx, uint32_t instrument)
{
    struct replay *r = ctx;
    r->output->instrument(r->output->ctx, instrument);
}

static void tee_stale(void *ctx, uint32_t instrument, int stale, uint32_t expected, uint32_t got)
{
    struct replay *r = ctx;
    r->digest_on ? digest_stale(ctx, instrument, stale, expected, got)
                 : count_stale(ctx, instrument, stale, expected, got);
    r->output->stale(r->output->ctx, instrument, stale, expected, got);
}

void replay_set_output(struct replay *r, const struct tp_feed_sink *output)
{
    struct tp_feed_sink tee = {.ctx = r,
                               .changes = tee_changes,
                               .end_of_event = tee_event,
                               .instrument = tee_instrument,
                               .stale = tee_stale,
                               .event_changes = tee_event_changes};
    r->output = output;
    if (output != NULL) {
        r->itch.sink = tee;
        r->mdp3.sink = tee;
        r->eobi->sink = tee;
    }
}

int replay_open(struct replay *r, const struct replay_params *p, const uint8_t *data, size_t len)
{
    struct tp_feed_sink sink = {.ctx = r,
                                .changes = count_changes,
                                .end_of_event = count_event,
                                .stale = count_stale,
                                .event_changes = count_event_changes,
                                .order_changes = count_order_changes};
    /* Without event_changes: the digest hashes the two callbacks as it always has. */
    struct tp_feed_sink digest_sink = {
        .ctx = r, .changes = digest_changes, .end_of_event = digest_event, .stale = digest_stale};
    struct tp_instruments_params ip = {.capacity = p->instruments, .itch_venues = 1};
    struct tp_books_params bp = {.first_id = p->share ? p->share->first_id : 0,
                                 .instruments = p->share ? p->share->end_id - p->share->first_id
                                                         : p->instruments,
                                 .max_orders = p->orders,
                                 .recent_orders = p->recent_orders,
                                 .levels_per_side = p->levels,
                                 .mbp_depth = 10,
                                 .implied_depth = 2};
    size_t reg_size = tp_instruments_memsize(&ip);
    size_t books_size = tp_books_memsize(&bp);
    size_t reg_rounded = (reg_size + 63) & ~(size_t)63;
    size_t books_rounded = (books_size + 63) & ~(size_t)63;
    int rc;

    memset(r, 0, sizeof(*r));
    r->data = data;
    r->len = len;
    r->warn = p->warnings;
    r->gap_wait_ns = p->gap_wait_ns; /* 0: the venue's default (replay_arb.h) */
    r->instruments = p->instruments;
    if (p->lines != NULL)
        r->lines = *p->lines;
    replay_digest_init(&r->digest);
    r->digest_on = p->digest != 0;
    r->share = p->share;
    r->format = p->format;
    r->verify_checksum = !p->no_checksum;
    if (r->format == REPLAY_FORMAT_AUTO)
        r->format = replay_is_pcap(data, len) ? REPLAY_FORMAT_PCAP : REPLAY_FORMAT_BINARYFILE;
    r->venue = r->format == REPLAY_FORMAT_BINARYFILE ? REPLAY_VENUE_ITCH : p->venue;
    if (reg_size == 0 || books_size == 0)
        return -EINVAL;
    /* A worker of a threaded replay takes ITCH only (replay_threads.h): no MDP3 state. */
    r->table_bytes =
        reg_rounded + books_rounded + (p->share ? 0 : tp_mdp3_feed_memsize(p->instruments));
    r->mem = tp_table_memory(r->table_bytes, true);
    if (!r->mem)
        return -ENOMEM;
    r->instrument_stale = calloc(p->instruments, 1);
    if (r->instrument_stale == NULL || replay_mold_open(r) != 0 ||
        (p->share == NULL && replay_mdp3_open(r) != 0))
        return -ENOMEM;
    r->registry = r->mem;
    r->books = (struct tp_books *)((char *)r->mem + reg_rounded);
    if (tp_instruments_init(r->registry, &ip) != 0 || tp_books_init(r->books, &bp) != 0)
        return -EINVAL;
    for (uint32_t i = bp.first_id; p->no_changes && i < bp.first_id + bp.instruments; i++)
        tp_books_set_emit(r->books, i, 0);
    rc = tp_itch_feed_init(&r->itch, r->registry, r->books, p->filter, 0,
                           p->digest ? &digest_sink : &sink);
    if (rc == 0 && p->share == NULL)
        rc = tp_mdp3_feed_init(&r->mdp3, (char *)r->mem + reg_rounded + books_rounded, r->registry,
                               r->books, p->filter, 0,
                               p->orders ? TP_BOOK_TYPE_MBP_MBO : TP_BOOK_TYPE_MBP,
                               p->digest ? &digest_sink : &sink);
    r->eobi = tp_table_memory(sizeof(*r->eobi), false);
    if (rc == 0 && r->eobi == NULL)
        rc = -ENOMEM;
    if (rc == 0)
        rc = tp_eobi_feed_init(r->eobi, r->registry, r->books, p->filter, 0,
                               p->digest ? &digest_sink : &sink);
    if (rc == 0)
        rc = tp_eobi_feed_set_release(r->eobi, (enum tp_eobi_release)p->eobi_release);
    if (r->share != NULL)
        r->share->priority = r->itch.next_priority; /* the feed's first */
    return rc;
}

void replay_close(struct replay *r)
{
    if (r->mem)
        munmap(r->mem, r->table_bytes);
    r->mem = NULL;
    if (r->eobi)
        munmap(r->eobi, sizeof(*r->eobi));
    r->eobi = NULL;
    free(r->instrument_stale);
    r->instrument_stale = NULL;
    replay_arb_close(r);
    replay_mdp3_close(r);
}

const char *replay_error(const struct replay *r, int err)
{
    static char buf[96];

    switch (err) {
    case REPLAY_EPCAP:
        return r->pcap_why;
    case REPLAY_EFRAME:
        snprintf(buf, sizeof(buf), "BinaryFILE block cut at byte offset %zu", r->error_offset);
        return buf;
    default:
        return strerror(-err);
    }
}

/*
 * BinaryFILE: the fastest path, and the one the benchmark measures. Messages are framed a burst
 * at a time and handed to the feed's burst call, which prefetches each message's order slot and
 * best levels some messages before applying it.
 */
#define BURST 256

static int run_binaryfile(struct replay *r)
{
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
        tp_itch_feed_burst(&r->itch, msg, len, n, &info);
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

/*
 * Does a UDP payload look like MoldUDP64: blocks that fill the packet exactly, each a valid ITCH
 * message? (The session name is not checked: captures may zero it.)
 */
int replay_looks_like_mold(const struct tp_udp_view *u)
{
    struct tp_mold_packet pkt;
    const uint8_t *msg;
    uint16_t len;
    int rc;

    if (tp_mold_parse(&pkt, u->payload, u->payload_len) < 0)
        return 0;
    while ((rc = tp_mold_next(&pkt, &msg, &len)) == 1)
        if (tp_itch_check(msg, len) < 0)
            return 0;
    return rc == 0;
}

/* What an EOBI flow's first packet says it is: a snapshot when its first message is a snapshot
 * template. */
static enum replay_line_kind eobi_kind(const struct tp_udp_view *u)
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
static void eobi_gap(struct replay *r, const struct tp_udp_view *u, uint64_t expected,
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
static void eobi_packet(struct replay *r, const struct tp_udp_view *u, uint64_t ts, uint64_t record,
                        size_t offset)
{
    const struct tp_venue_feed_ops *feed = tp_venue_eobi.feed;
    enum replay_line_role role = replay_lines_role(&r->lines, u, eobi_kind(u));
    uint64_t before = feed->messages(r->eobi), gaps = r->eobi->counters.gaps,
             implausible = r->eobi->counters.implausible;
    const struct tp_eobi_segment *seg =
        u->payload_len >= TP_EOBI_PACKET_HEADER_LEN
            ? tp_eobi_feed_segment(r->eobi, tp_eobi_packet_header_market_segment_id(u->payload))
            : NULL;
    uint64_t expected = seg != NULL && seg->state == TP_EOBI_SEGMENT_HEALTHY ? seg->next_seq : 0;
    int rc = 0;
    if (role == REPLAY_ROLE_INCR_A || role == REPLAY_ROLE_INCR_B)
        rc = feed->packet(r->eobi, u->payload, u->payload_len, ts);
    else if ((role == REPLAY_ROLE_SNAP_A || role == REPLAY_ROLE_SNAP_B) &&
             feed->recovering(r->eobi) > 0)
        rc = feed->snapshot(r->eobi, u->payload, u->payload_len, ts);
    r->bad_packets += rc == -EBADMSG;
    r->messages += feed->messages(r->eobi) - before;
    if (r->eobi->counters.gaps != gaps)
        eobi_gap(r, u, expected, record, offset);
    if (r->eobi->counters.implausible != implausible)
        replay_warn(r,
                    "packet %" PRIu64 " (offset %zu): market segment %" PRId32
                    " ApplSeqNum %" PRIu64 " dropped as implausible (%" PRIu64
                    " beyond the segment's highest, unconfirmed)",
                    record, offset, tp_eobi_packet_header_market_segment_id(u->payload),
                    tp_eobi_packet_header_appl_seq_num(u->payload),
                    tp_eobi_packet_header_appl_seq_num(u->payload) - seg->highest_seq);
}

/*
 * The capture through codecs/net's reader (classic pcap and pcapng), in place: the payloads the
 * arbiter holds behind a gap point into the mapped capture (replay_mold.h).
 */
static int run_pcap(struct replay *r)
{
    struct tp_pcap_reader rd;
    struct tp_pcap_record rec;
    int st = tp_pcap_reader_open_memory(&rd, r->data, r->len, REPLAY_FRAME_MAX, UINT32_MAX);
    size_t at = tp_pcap_reader_offset(&rd); /* where the next record starts */

    if (st == TP_PCAP_OK && rd.link_type != PCAP_LINKTYPE_ETHERNET) {
        snprintf(r->pcap_why, sizeof(r->pcap_why), "link type %u, not Ethernet (1)", rd.link_type);
        st = TP_PCAP_EMAGIC;
    } else {
        while (st == TP_PCAP_OK && (st = tp_pcap_reader_next(&rd, &rec)) == TP_PCAP_OK) {
            struct tp_udp_view u;
            r->packets++;
            if (tp_net_parse_udp(rec.data, rec.caplen, 0, &u) != 0) {
                r->not_udp++;
            } else if (r->verify_checksum && !tp_udp_checksum_ok(&u)) {
                r->bad_checksum++;
            } else {
                if (r->venue == REPLAY_VENUE_AUTO)
                    r->venue = replay_looks_like_mold(&u) ? REPLAY_VENUE_ITCH : REPLAY_VENUE_MDP3;
                /* The channel's arbiter follows the venue's sequencing (tp_venue.h). */
                if (r->venue == REPLAY_VENUE_MDP3 && !r->mdp3_started)
                    replay_mdp3_start(r);
                if (r->venue == REPLAY_VENUE_ITCH)
                    replay_mold_packet(r, &u, rec.ts_ns, r->packets, at);
                else if (r->venue == REPLAY_VENUE_EOBI)
                    eobi_packet(r, &u, rec.ts_ns, r->packets, at);
                else
                    replay_mdp3_packet(r, &u, rec.ts_ns, r->packets, at);
            }
            at = r->offset = tp_pcap_reader_offset(&rd);
            if (r->progress && (r->packets & (REPLAY_PROGRESS_EVERY - 1)) == 0)
                r->progress(r->progress_ctx, r);
        }
        if (st != TP_PCAP_END)
            tp_pcap_reader_why(&rd, r->pcap_why, sizeof(r->pcap_why));
    }
    tp_pcap_reader_close(&rd);
    if (r->venue == REPLAY_VENUE_ITCH)
        replay_mold_finish(r);
    else if (r->venue == REPLAY_VENUE_MDP3)
        replay_mdp3_finish(r);
    if (r->share != NULL)
        replay_share_flush(r);
    return st == TP_PCAP_END ? 0 : REPLAY_EPCAP;
}

int replay_run(struct replay *r)
{
    return r->format == REPLAY_FORMAT_PCAP ? run_pcap(r) : run_binaryfile(r);
}

/* The sums over the workers of a threaded replay of what each counts of its own instruments;
 * the framing's counters are every worker's alike. */
static void sum_counters(struct replay *sum, struct tp_itch_feed_counters *c, uint64_t *recent,
                         uint64_t *spilled, const struct replay *part, uint32_t parts)
{
    memset(c, 0, sizeof(*c));
    *recent = *spilled = 0;
    for (uint32_t i = 0; i < parts; i++) {
        const struct replay *p = &part[i];
        const struct tp_itch_feed_counters *f = &p->itch.counters;
        for (uint32_t k = 0; k < REPLAY_CHANGE_KINDS; k++)
            sum->changes[k] += p->changes[k];
        sum->events += p->events;
        sum->stale += p->stale;
        c->malformed += f->malformed;
        c->unknown_instrument += f->unknown_instrument;
        c->rejected += f->rejected;
        c->definitions += f->definitions;
        c->filtered += f->filtered;
        c->registry_full += f->registry_full;
        c->broken_trades += f->broken_trades;
        c->ignored += f->ignored;
        *recent += tp_books_recent_orders(p->books);
        *spilled += tp_books_totals(p->books)->orders_spilled;
    }
}

void replay_print_counters(FILE *out, const struct replay *part, uint32_t parts)
{
    static struct replay sum;
    struct tp_itch_feed_counters itch;
    const struct tp_itch_feed_counters *c = &itch;
    uint64_t recent, spilled;
    const struct replay *r = &part[0];
    const struct tp_mdp3_feed_counters *m = &r->mdp3.counters;

    memset(sum.changes, 0, sizeof(sum.changes));
    sum.events = sum.stale = 0;
    sum_counters(&sum, &itch, &recent, &spilled, part, parts);
    fprintf(out,
            "{\"messages\":%" PRIu64 ",\"packets\":%" PRIu64 ",\"not_udp\":%" PRIu64
            ",\"bad_checksum\":%" PRIu64 ",\"bad_packets\":%" PRIu64 ",\"duplicates\":%" PRIu64
            ",\"gaps\":%" PRIu64 ",\"gaps_given_up\":%" PRIu64 ",\"corrupt\":%" PRIu64
            ",\"sessions\":%" PRIu64 ",\"stale_marks\":%" PRIu64 ",\"warnings\":%" PRIu64
            ",\"recent_orders\":%" PRIu64 ",\"orders_spilled\":%" PRIu64 ",\"unmapped\":%" PRIu64,
            r->messages, r->packets, r->not_udp, r->bad_checksum, r->bad_packets, r->duplicates,
            r->arb ? tp_arb_counters(r->arb)->gaps : 0, r->gaps_given_up, r->corrupt, r->sessions,
            r->stale_marks, r->warnings, recent, spilled, r->lines.unmapped);
    fprintf(out,
            ",\"published\":{\"level\":%" PRIu64 ",\"order\":%" PRIu64 ",\"trade\":%" PRIu64
            ",\"clear\":%" PRIu64 ",\"status\":%" PRIu64 ",\"stat\":%" PRIu64 ",\"events\":%" PRIu64
            ",\"stale\":%" PRIu64 "}",
            sum.changes[TP_CHANGE_LEVEL], sum.changes[TP_CHANGE_ORDER],
            sum.changes[TP_CHANGE_TRADE], sum.changes[TP_CHANGE_CLEAR],
            sum.changes[TP_CHANGE_STATUS], sum.changes[TP_CHANGE_STAT], sum.events, sum.stale);
    fprintf(out,
            ",\"itch\":{\"malformed\":%" PRIu64 ",\"unknown_instrument\":%" PRIu64
            ",\"rejected\":%" PRIu64 ",\"definitions\":%" PRIu64 ",\"filtered\":%" PRIu64
            ",\"registry_full\":%" PRIu64 ",\"broken_trades\":%" PRIu64 ",\"ignored\":%" PRIu64 "}",
            c->malformed, c->unknown_instrument, c->rejected, c->definitions, c->filtered,
            c->registry_full, c->broken_trades, c->ignored);
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
    const struct tp_eobi_feed_counters *e = &r->eobi->counters;
    fprintf(out,
            ",\"eobi\":{\"packets\":%" PRIu64 ",\"snapshot_packets\":%" PRIu64
            ",\"messages\":%" PRIu64 ",\"malformed\":%" PRIu64 ",\"rejected\":%" PRIu64
            ",\"definitions\":%" PRIu64 ",\"duplicates\":%" PRIu64 ",\"gaps\":%" PRIu64
            ",\"buffered\":%" PRIu64 ",\"snapshots\":%" PRIu64 ",\"snapshots_old\":%" PRIu64
            ",\"snapshots_broken\":%" PRIu64 ",\"recovering\":%" PRIu32
            ",\"release_mismatch\":%" PRIu64 ",\"implausible\":%" PRIu64 "}}",
            e->packets, e->snapshot_packets, e->messages, e->malformed, e->rejected, e->definitions,
            e->duplicates, e->gaps, e->buffered, e->snapshots, e->snapshots_old,
            e->snapshots_broken, tp_eobi_feed_recovering(r->eobi), e->release_mismatch,
            e->implausible);
}
