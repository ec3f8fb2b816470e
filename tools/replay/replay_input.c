/*
 * Replay session (see replay_input.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "net_build.h"
#include "net_parse.h"
#include "pcap_reader.h"
#include "replay_input.h"
#include "replay_arb.h"
#include "table_memory.h"

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
 * counted as the records they stand for, which nothing here reads whole (--digest takes the
 * records: its sinks leave order_changes NULL).
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
    /* A flagged book stays flagged unless the venue's feed says when a snapshot repaired it
     * (stale 0); a venue may keep its own state instead (replay_venue.stale). */
    if (r->instrument_stale != NULL && instrument < r->instruments &&
        (stale || (r->venue != NULL && r->venue->snapshot_clears_stale)))
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

static void tee_order_changes(void *ctx, const struct tp_feed_info *info,
                              const struct tp_order_change *oc, uint32_t n)
{
    struct replay *r = ctx;
    count_order_changes(ctx, info, oc, n);
    r->output->order_changes(r->output->ctx, info, oc, n);
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
    /* An output that takes the order changes unexpanded (--events' publisher) gets them so, but
     * under --digest, which hashes the records. */
    if (output != NULL && output->order_changes != NULL && !r->digest_on)
        tee.order_changes = tee_order_changes;
    r->output = output;
    for (const struct replay_venue *const *v = replay_venues; output != NULL && *v != NULL; v++)
        (*v)->set_sink(r, &tee);
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
    /* A file of its own format is the venue's that has one, whatever --venue says. */
    r->venue = r->format == REPLAY_FORMAT_BINARYFILE ? replay_venue_of_file() : p->venue;
    if (reg_size == 0 || books_size == 0)
        return -EINVAL;
    r->table_bytes = reg_rounded + books_rounded;
    for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++)
        r->table_bytes += (*v)->table_bytes ? (*v)->table_bytes(p) : 0;
    r->mem = tp_table_memory(r->table_bytes, true);
    if (!r->mem)
        return -ENOMEM;
    r->instrument_stale = calloc(p->instruments, 1);
    if (r->instrument_stale == NULL)
        return -ENOMEM;
    r->registry = r->mem;
    r->books = (struct tp_books *)((char *)r->mem + reg_rounded);
    if (tp_instruments_init(r->registry, &ip) != 0 || tp_books_init(r->books, &bp) != 0)
        return -EINVAL;
    for (uint32_t i = bp.first_id; p->no_changes && i < bp.first_id + bp.instruments; i++)
        tp_books_set_emit(r->books, i, 0);
    /* Every venue's feed, whatever the capture: the summary gives each one's counters. */
    char *tables = (char *)r->mem + reg_rounded + books_rounded;
    for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++) {
        int rc = (*v)->open(r, p, tables, p->digest ? &digest_sink : &sink);
        if (rc != 0)
            return rc;
        tables += (*v)->table_bytes ? (*v)->table_bytes(p) : 0;
    }
    return 0;
}

void replay_close(struct replay *r)
{
    for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++)
        (*v)->close(r);
    if (r->mem)
        munmap(r->mem, r->table_bytes);
    r->mem = NULL;
    free(r->instrument_stale);
    r->instrument_stale = NULL;
    replay_arb_close(r);
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
                if (r->venue == NULL)
                    r->venue = replay_venue_detect(&u);
                if (r->venue != NULL)
                    r->venue->packet(r, &u, rec.ts_ns, r->packets, at);
            }
            at = r->offset = tp_pcap_reader_offset(&rd);
            if (r->progress && (r->packets & (REPLAY_PROGRESS_EVERY - 1)) == 0)
                r->progress(r->progress_ctx, r);
        }
        if (st != TP_PCAP_END)
            tp_pcap_reader_why(&rd, r->pcap_why, sizeof(r->pcap_why));
    }
    tp_pcap_reader_close(&rd);
    if (r->venue != NULL && r->venue->finish != NULL)
        r->venue->finish(r);
    if (r->share != NULL)
        replay_share_flush(r);
    return st == TP_PCAP_END ? 0 : REPLAY_EPCAP;
}

int replay_run(struct replay *r)
{
    if (r->format == REPLAY_FORMAT_PCAP)
        return run_pcap(r);
    return r->venue != NULL ? r->venue->run_file(r) : -ENOTSUP;
}

/* The sums over the workers of a threaded replay of what each counts of its own instruments;
 * the framing's counters are every worker's alike. */
static void sum_counters(struct replay *sum, uint64_t *recent, uint64_t *spilled,
                         const struct replay *part, uint32_t parts)
{
    *recent = *spilled = 0;
    for (uint32_t i = 0; i < parts; i++) {
        const struct replay *p = &part[i];
        for (uint32_t k = 0; k < REPLAY_CHANGE_KINDS; k++)
            sum->changes[k] += p->changes[k];
        sum->events += p->events;
        sum->stale += p->stale;
        *recent += tp_books_recent_orders(p->books);
        *spilled += tp_books_totals(p->books)->orders_spilled;
    }
}

void replay_print_counters(FILE *out, const struct replay *part, uint32_t parts)
{
    static struct replay sum;
    uint64_t recent, spilled;
    const struct replay *r = &part[0];

    memset(sum.changes, 0, sizeof(sum.changes));
    sum.events = sum.stale = 0;
    sum_counters(&sum, &recent, &spilled, part, parts);
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
    for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++)
        (*v)->print_counters(out, part, parts);
    fputc('}', out);
}
