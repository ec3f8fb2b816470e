/*
 * tickplane-replay: rebuilds books from a capture with the data plane's own feed and book code,
 * without DPDK, and prints them as JSON.
 *
 *   tickplane-replay [options] FILE
 *     --format auto|binaryfile|pcap   input framing (auto: pcap by its magic, else BinaryFILE)
 *     --venue itch|mdp3|eobi          what a pcap carries (auto: MDP3 if the UDP payloads do not
 *                                     look like MoldUDP64; EOBI only when given: its incremental
 *                                     and snapshot packets, told apart by their templates)
 *     --eobi-release 6.0|7.0          EOBI: the T7 release of the capture's layouts (default: the
 *                                     build's -Deobi_release); packets of the other one are
 *                                     counted in eobi.release_mismatch and not read
 *     --depth N                       levels per side printed (default 5)
 *     --instruments N                 registry capacity (default 8192)
 *     --orders N                      live orders capacity (default 2097152)
 *     --recent-orders N               recent-order window slots (default 0: the books' rule,
 *                                     tp_books_params.recent_orders)
 *     --levels N                      order-level book levels per side (default 256)
 *     --filter RULE                   include:symbol:GLOB, exclude:group:GLOB, ... (repeatable)
 *     --repeat N                      replay N times (fresh books each time), report the median
 *     --quiet                         no books on stdout, only the throughput line
 *     --no-checksum                   take every UDP checksum as right (for a capture taken on
 *                                     the sending host, whose NIC was to finish the sums); by
 *                                     default a datagram with a wrong one is counted
 *                                     ("bad_checksum") and skipped, as the daemon does
 *     --no-changes                    the books build no change records (as for instruments
 *                                     nobody subscribes to); by default every change is
 *                                     delivered to a counting sink: an ITCH order message's
 *                                     unexpanded, as an order change (tp_order_change.h), the
 *                                     rest as records (the daemon's publisher, --digest and
 *                                     --events take every change as records)
 *     --digest                        also hash every change record (all 48 bytes), end of
 *                                     event and stale callback, in order (replay_digest.h), and
 *                                     print the FNV-1a digest and its counts in the summary;
 *                                     with --repeat each run is hashed and the digests must be
 *                                     equal (else exit 1). Off by default: the hashing is timed
 *                                     with the run, so compare throughput without it. With
 *                                     --no-changes no record is emitted: the digest covers the
 *                                     events and stale callbacks only ("digest_covers").
 *     --gap-wait-ms N, --gap-wait-us N
 *                                     MoldUDP64 and MDP3: how long (capture time) a gap waits
 *                                     for the other line's copy before it is given up
 *                                     (default MoldUDP64 1000 ms, MDP3 20 us: replay_arb.h)
 *     --lines ROLE=GROUP:PORT,...     MDP3 and EOBI: which flow is which line of the channel
 *                                     (roles incr-a incr-b snap-a snap-b snap-mbo-a snap-mbo-b
 *                                     def-a def-b; repeatable); other flows are skipped
 *                                     ("unmapped"). Default: each flow told by its first packet
 *                                     (replay_lines.h)
 *     --events FILE                   also write every record the data plane would publish (the
 *                                     daemon's publisher's tpout records) to the event file FILE
 *                                     (docs/EVENT_FILES.md); timed with the run
 *     --symbols GLOB                  the event file holds only instruments matching GLOB
 *     --topics LIST                   the event file holds only these topics (comma-separated:
 *                                     depth, trades, orders, status, definitions)
 *     --threads N                     workers (default: the machine's cores): each applies the
 *                                     messages of its window of the instruments, framed once
 *                                     (BinaryFILE) or by each (pcap; replay_threads.h); books,
 *                                     warnings and the event file are those of one thread (of
 *                                     the JSON's counters, recent_orders and orders_spilled are
 *                                     the workers' windows' sums). MDP3, EOBI, --snapshot and
 *                                     --digest run on one worker
 *     --snapshot FILE                 a recorded GLIMPSE 5.0 session (the SoupBinTCP bytes a
 *                                     client receives, as tickplane-sim --glimpse-file writes)
 *                                     to start the ITCH books from: its messages first, then the
 *                                     capture's from the sequence its 'G' names (the arbiter
 *                                     starts there: a capture that starts later has a gap)
 *
 * A pcap's packets take the daemon's channel path for their venue: ITCH and MDP3 incrementals
 * go through the data plane's line arbiter with the daemon's rules (replay_mold.h,
 * replay_mdp3_channel.h), EOBI's through the venue's feed ops, which follow each market segment's
 * ApplSeqNum. A gap no line fills, a capture that starts late, a sequence jump or a session
 * change the venue would not make is reported on stderr with the packet's number and offset
 * ("tickplane-replay: packet N (offset O): ..."), and books that may have missed messages are
 * flagged "stale" in the JSON. An MDP3 order view that no order-level snapshot (53) has filled
 * (orders from before the capture are not known) says "orders_incomplete": true, as the daemon's
 * ordersIncomplete flag does. The exit status stays 0: the books are printed as they are.
 *
 * Progress (bytes, messages/s, time left) goes to stderr while it is a terminal, not with --quiet.
 *
 * stdout: {"instruments":[{"id","symbol","locate","security_id","status","volume","trades",
 *          "last_price9","bids":[{"price9","qty","orders"}...],"asks":[...], ...}], ...}
 * stderr: one JSON line per run and a summary line {"messages","seconds","ns_per_msg",...};
 *         with --digest both add "change_digest" (16 hex digits), the summary its counts.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "replay_events.h"
#include "replay_input.h"
#include "replay_progress.h"
#include "tickplane/event_file.h"
#include "replay_snapshot.h"
#include "replay_threads.h"
#include "tp_books.h"
#include "tp_instruments.h"
#include "tp_version.h"

#define RUNS_MAX 64

struct options {
    const char *path;
    enum replay_format format;
    const struct replay_venue *venue; /* --venue; NULL: told by the capture */
    uint32_t depth;
    uint32_t instruments;
    uint32_t orders;
    uint32_t recent_orders;
    uint32_t levels;
    uint32_t repeat;
    uint64_t gap_wait_ns; /* --gap-wait-ms, --gap-wait-us; 0: the venue's default */
    int quiet;
    int no_checksum;
    int no_changes;
    int digest;
    const char *events;
    const char *symbols;
    uint32_t topics;
    const char *snapshot; /* --snapshot FILE */
    uint32_t threads;
    struct tp_instrument_filter filter;
    struct replay_lines lines; /* --lines */
};

/* getopt_long's number of a venue's option (replay_venue.options): this + its place in the
 * venues' list of them. */
#define OPT_VENUE_OPTION  256
#define VENUE_OPTIONS_MAX 16

/* The venues' options in one list, in the venues' order. */
static unsigned venue_options(const struct tool_venue_option **out)
{
    unsigned n = 0;
    for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++)
        for (unsigned i = 0; i < (*v)->n_options && n < VENUE_OPTIONS_MAX; i++)
            out[n++] = &(*v)->options[i];
    return n;
}

static void usage(FILE *out)
{
    const struct tool_venue_option *venue_option[VENUE_OPTIONS_MAX];
    unsigned n_venue_options = venue_options(venue_option);
    char venue_usage[512] = "";
    size_t used = 0;
    for (unsigned i = 0; i < n_venue_options && used < sizeof(venue_usage); i++)
        used += (size_t)snprintf(venue_usage + used, sizeof(venue_usage) - used, " [--%s %s]",
                                 venue_option[i]->name, venue_option[i]->arg);
    fprintf(out,
            "usage: tickplane-replay [--format auto|binaryfile|pcap] [--venue %s]\n"
            "         [--depth N] [--instruments N] [--orders N] [--recent-orders N]"
            " [--levels N]\n"
            "         [--filter include|exclude:symbol|group:GLOB]... [--repeat N] [--quiet]"
            " [--no-checksum] [--no-changes] [--digest] [--gap-wait-ms N | --gap-wait-us N]\n"
            "         [--lines incr-a|incr-b|snap-a|snap-b|snap-mbo-a|snap-mbo-b|def-a|def-b"
            "=GROUP:PORT,...]\n"
            "         [--events FILE [--symbols GLOB] [--topics depth,trades,orders,status,"
            "definitions]] [--snapshot GLIMPSE] [--threads N]%s FILE\n"
            "       tickplane-replay --version\n"
            "  --threads N  workers (default: the machine's cores), each applying its share\n"
            "               of the instruments (a BinaryFILE framed once); books,\n"
            "               warnings and event file are one thread's, byte for byte.\n"
            "               MDP3 and EOBI captures, --snapshot and --digest run on one.\n"
            "  --lines ROLE=GROUP:PORT,...  MDP3 and EOBI: which UDP flow is which line of the\n"
            "               channel (incr-a, incr-b, snap-a, snap-b, snap-mbo-a, snap-mbo-b,\n"
            "               def-a, def-b), as the daemon's config names them; flows not named\n"
            "               are skipped (\"unmapped\"). Default: a flow is told by its first\n"
            "               packet's template, the first incremental flow is line A, the next B.\n"
            "  --gap-wait-ms N, --gap-wait-us N  how long a gap waits for the other line\n"
            "               (capture time; default MoldUDP64 1000 ms, MDP3 20 us).\n"
            "  Packets take the daemon's arbitration: a sequence jump, a gap no line fills\n"
            "  or a session change is reported on stderr with the packet's number and\n"
            "  offset, and the books that may have missed messages are \"stale\" in the JSON.\n",
            replay_venue_names(), venue_usage);
}

static int parse_u32(const char *s, uint32_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || end == s || v > UINT32_MAX)
        return -EINVAL;
    *out = (uint32_t)v;
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option shared[] = {{"format", required_argument, NULL, 'f'},
                                           {"venue", required_argument, NULL, 'v'},
                                           {"depth", required_argument, NULL, 'd'},
                                           {"instruments", required_argument, NULL, 'i'},
                                           {"orders", required_argument, NULL, 'o'},
                                           {"levels", required_argument, NULL, 'l'},
                                           {"filter", required_argument, NULL, 'F'},
                                           {"repeat", required_argument, NULL, 'r'},
                                           {"quiet", no_argument, NULL, 'q'},
                                           {"no-changes", no_argument, NULL, 'n'},
                                           {"no-checksum", no_argument, NULL, 'c'},
                                           {"digest", no_argument, NULL, 'D'},
                                           {"help", no_argument, NULL, 'h'},
                                           {"version", no_argument, NULL, 'V'},
                                           {"recent-orders", required_argument, NULL, 'w'},
                                           {"gap-wait-ms", required_argument, NULL, 'g'},
                                           {"events", required_argument, NULL, 'E'},
                                           {"symbols", required_argument, NULL, 'S'},
                                           {"topics", required_argument, NULL, 'T'},
                                           {"snapshot", required_argument, NULL, 'G'},
                                           {"threads", required_argument, NULL, 't'},
                                           {"lines", required_argument, NULL, 'L'},
                                           {"gap-wait-us", required_argument, NULL, 'u'}};
    enum { N_SHARED = sizeof(shared) / sizeof(shared[0]) };
    const struct tool_venue_option *venue_option[VENUE_OPTIONS_MAX];
    unsigned n_venue_options = venue_options(venue_option);
    struct option longs[N_SHARED + VENUE_OPTIONS_MAX + 1];
    memcpy(longs, shared, sizeof(shared));
    for (unsigned i = 0; i < n_venue_options; i++)
        longs[N_SHARED + i] = (struct option){venue_option[i]->name, required_argument, NULL,
                                              OPT_VENUE_OPTION + (int)i};
    longs[N_SHARED + n_venue_options] = (struct option){NULL, 0, NULL, 0};
    int c, rc = 0, which = 0;
    char why[160];

    memset(o, 0, sizeof(*o));
    o->depth = 5;
    o->instruments = 8192;
    o->orders = 2u << 20;
    o->levels = 256;
    o->repeat = 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    o->threads = cores < 1 ? 1 : cores > REPLAY_THREADS_MAX ? REPLAY_THREADS_MAX : (uint32_t)cores;
    tp_instrument_filter_init(&o->filter);
    while ((c = getopt_long(argc, argv, "", longs, &which)) != -1) {
        switch (c) {
        case 'f':
            o->format = !strcmp(optarg, "auto")         ? REPLAY_FORMAT_AUTO
                        : !strcmp(optarg, "binaryfile") ? REPLAY_FORMAT_BINARYFILE
                        : !strcmp(optarg, "pcap")       ? REPLAY_FORMAT_PCAP
                                                        : (rc = -EINVAL, REPLAY_FORMAT_AUTO);
            break;
        case 'v':
            o->venue = replay_venue_find(optarg);
            rc = o->venue == NULL ? -EINVAL : 0;
            break;
        case 'd':
            rc = parse_u32(optarg, &o->depth);
            break;
        case 'i':
            rc = parse_u32(optarg, &o->instruments);
            break;
        case 'o':
            rc = parse_u32(optarg, &o->orders);
            break;
        case 'l':
            rc = parse_u32(optarg, &o->levels);
            break;
        case 'w':
            rc = parse_u32(optarg, &o->recent_orders);
            break;
        case 'g':
        case 'u': {
            uint32_t wait;
            rc = parse_u32(optarg, &wait);
            rc = rc ? rc : (wait == 0 ? -EINVAL : 0);
            o->gap_wait_ns = (uint64_t)wait * (c == 'g' ? 1000000 : 1000);
            break;
        }
        case 'r':
            rc = parse_u32(optarg, &o->repeat);
            rc = rc ? rc : (o->repeat == 0 || o->repeat > RUNS_MAX ? -EINVAL : 0);
            break;
        case 'F':
            rc = tp_instrument_filter_parse(&o->filter, optarg);
            break;
        case 'q':
            o->quiet = 1;
            break;
        case 'n':
            o->no_changes = 1;
            break;
        case 'c':
            o->no_checksum = 1;
            break;
        case 'D':
            o->digest = 1;
            break;
        case 'E':
            o->events = optarg;
            break;
        case 'S':
            o->symbols = optarg;
            break;
        case 'T':
            rc = replay_events_parse_topics(optarg, &o->topics);
            break;
        case 'G':
            o->snapshot = optarg;
            break;
        case 'L': {
            rc = replay_lines_parse(&o->lines, optarg, why, sizeof(why));
            if (rc != 0) {
                fprintf(stderr, "tickplane-replay: --lines: %s\n", why);
                return rc;
            }
            break;
        }
        case 't':
            rc = parse_u32(optarg, &o->threads);
            rc = rc ? rc : (o->threads == 0 || o->threads > REPLAY_THREADS_MAX ? -EINVAL : 0);
            break;
        case 'h':
            usage(stdout);
            exit(0);
        case 'V':
            tp_version_print(stdout, "tickplane-replay");
            exit(0);
        default:
            if (c < OPT_VENUE_OPTION || c >= OPT_VENUE_OPTION + (int)n_venue_options)
                return -EINVAL;
            rc = venue_option[c - OPT_VENUE_OPTION]->set(optarg, why, sizeof(why));
            if (rc != 0) {
                fprintf(stderr, "tickplane-replay: --%s: %s\n", longs[which].name, why);
                return rc;
            }
            break;
        }
        if (rc) {
            fprintf(stderr, "tickplane-replay: bad value for --%s: %s\n", longs[which].name,
                    optarg);
            return rc;
        }
    }
    if (optind != argc - 1 || ((o->symbols || o->topics) && !o->events))
        return -EINVAL;
    o->path = argv[optind];
    return 0;
}

static const char *status_name(uint8_t s)
{
    static const char *const names[] = {"unknown", "pre_open", "trading",        "halted",
                                        "paused",  "closed",   "quotation_only", "no_cancel"};
    return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

static void print_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(out, "\\%c", ch);
        else if (ch < 0x20 || ch >= 0x7f)
            fprintf(out, "\\u%04x", ch);
        else
            fputc(ch, out);
    }
    fputc('"', out);
}

static void print_side(FILE *out, const struct tp_books *b, uint32_t id, enum tp_book_kind book,
                       enum tp_side side, uint32_t depth)
{
    uint32_t n = tp_books_levels(b, id, book, side);
    struct tp_level lv;
    int first = 1;

    fputc('[', out);
    for (uint32_t i = 1; i <= n && i <= depth; i++) {
        if (tp_books_level(b, id, book, side, i, &lv) != 0 || lv.qty == 0)
            continue; /* an empty MBP slot */
        fprintf(out,
                "%s{\"level\":%" PRIu32 ",\"price9\":%" PRId64 ",\"qty\":%" PRId64
                ",\"orders\":%" PRIu32 "}",
                first ? "" : ",", i, lv.price, lv.qty, lv.count);
        first = 0;
    }
    fputc(']', out);
}

static void print_books(FILE *out, const struct replay_threads *t, uint32_t depth)
{
    const struct replay *lead = &t->replay[0];
    struct tp_instruments *reg = lead->registry;

    fprintf(out,
            "{\"format\":\"tickplane-replay\",\"version\":1,\"depth\":%" PRIu32
            ",\"instruments\":[",
            depth);
    for (uint32_t id = 0; id < tp_instruments_count(reg); id++) {
        const struct tp_instrument *in = tp_instruments_get(reg, id);
        const struct replay *r = replay_threads_owner(t, id);
        const struct tp_books *b = r->books;
        const struct tp_book *bk = tp_books_get(b, id);
        const struct tp_book_counters *c = &bk->counters;
        fprintf(out, "%s\n{\"id\":%" PRIu32 ",\"symbol\":", id ? "," : "", id);
        print_string(out, in->symbol);
        fprintf(out, ",\"locate\":%u,\"security_id\":%" PRId32 ",\"status\":\"%s\"",
                in->itch_locate, in->security_id, status_name(bk->status));
        const struct replay_venue *v = replay_venue_of_instrument(in->venue);
        bool stale = v != NULL && v->stale != NULL ? v->stale(r, id) : r->instrument_stale[id] != 0;
        fprintf(out, ",\"stale\":%s", stale ? "true" : "false");
        fprintf(out, ",\"volume\":%" PRId64 ",\"trades\":%" PRIu64 ",\"last_price9\":%" PRId64,
                bk->volume, bk->trades, bk->last_price);
        if (bk->type & TP_BOOK_TYPE_MBP) {
            fputs(",\"bids\":", out);
            print_side(out, b, id, TP_BOOK_DIRECT, TP_SIDE_BID, depth);
            fputs(",\"asks\":", out);
            print_side(out, b, id, TP_BOOK_DIRECT, TP_SIDE_ASK, depth);
            fputs(",\"implied_bids\":", out);
            print_side(out, b, id, TP_BOOK_IMPLIED, TP_SIDE_BID, depth);
            fputs(",\"implied_asks\":", out);
            print_side(out, b, id, TP_BOOK_IMPLIED, TP_SIDE_ASK, depth);
        }
        if (bk->type & TP_BOOK_TYPE_MBO) {
            const char *prefix = (bk->type & TP_BOOK_TYPE_MBP) ? "order_" : "";
            fprintf(out, ",\"%sbids\":", prefix);
            print_side(out, b, id, TP_BOOK_ORDERS, TP_SIDE_BID, depth);
            fprintf(out, ",\"%sasks\":", prefix);
            print_side(out, b, id, TP_BOOK_ORDERS, TP_SIDE_ASK, depth);
            fprintf(out, ",\"live_orders\":%" PRIu32, tp_books_orders(b, id));
            if (v != NULL && v->orders_incomplete != NULL)
                fprintf(out, ",\"orders_incomplete\":%s",
                        v->orders_incomplete(r, id) ? "true" : "false");
        }
        fprintf(
            out,
            ",\"anomalies\":{\"unknown_order\":%" PRIu64 ",\"duplicate_order\":%" PRIu64
            ",\"bad_quantity\":%" PRIu64 ",\"bad_price\":%" PRIu64 ",\"over_execution\":%" PRIu64
            ",\"order_capacity\":%" PRIu64 ",\"level_capacity\":%" PRIu64 ",\"bad_level\":%" PRIu64
            ",\"bad_input\":%" PRIu64 ",\"snapshot_mismatch\":%" PRIu64 "}}",
            c->unknown_order, c->duplicate_order, c->bad_quantity, c->bad_price, c->over_execution,
            c->order_capacity, c->level_capacity, c->bad_level, c->bad_input, c->snapshot_mismatch);
    }
    fprintf(out,
            "\n],\"snapshot\":{\"next_seq\":%" PRIu64 ",\"messages\":%" PRIu64 "},\"counters\":",
            lead->snapshot_next_seq, lead->snapshot_messages);
    replay_print_counters(out, t->replay, t->workers);
    fputs("}\n", out);
}

static double now_seconds(clockid_t clock)
{
    struct timespec ts;

    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Reads a recorded GLIMPSE session into the fresh books of a run: 0, or 1 after saying why. */
static int load_snapshot(struct replay *r, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "tickplane-replay: %s: %s\n", path, strerror(errno));
        return 1;
    }
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 20;
            uint8_t *more = realloc(buf, cap);
            if (more == NULL)
                break;
            buf = more;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        if (n == 0)
            break;
        len += n;
    }
    fclose(f);
    char err[160];
    int rc = buf != NULL ? replay_snapshot_load(r, buf, len, err, sizeof(err)) : -ENOMEM;
    free(buf);
    if (rc != 0) {
        fprintf(stderr, "tickplane-replay: --snapshot %s: %s\n", path,
                rc == -ENOMEM ? strerror(ENOMEM) : err);
        return 1;
    }
    return 0;
}

/* The totals over the workers' books. */
static struct tp_books_totals books_totals(const struct replay_threads *t, uint64_t *recent,
                                           size_t *table_bytes)
{
    struct tp_books_totals sum = {0};

    *recent = 0;
    *table_bytes = 0;
    for (uint32_t i = 0; i < t->workers; i++) {
        const struct tp_books_totals *b = tp_books_totals(t->replay[i].books);
        sum.live_orders += b->live_orders;
        sum.peak_live_orders += b->peak_live_orders;
        sum.orders_spilled += b->orders_spilled;
        *recent += tp_books_recent_orders(t->replay[i].books);
        *table_bytes += t->replay[i].table_bytes;
    }
    return sum;
}

int main(int argc, char **argv)
{
    struct options o;
    struct replay_threads t = {0};
    struct rusage ru;
    double ns_per_msg[RUNS_MAX], cpu_ns_per_msg[RUNS_MAX], seconds = 0, cpu_seconds = 0;
    uint64_t messages = 0;
    int fd, rc = 0;
    struct stat st;
    const uint8_t *data;
    struct replay_digest first_digest = {0};
    int digests_differ = 0;
    struct replay_events_counters events = {0};
    struct replay_progress progress;
    static struct replay_share share[REPLAY_THREADS_MAX];
    uint32_t workers = 1;
    double plan_seconds = 0; /* the pass that cuts the workers' windows, before the runs */

    if (parse_options(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    fd = open(o.path, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "tickplane-replay: %s: %s\n", o.path, strerror(errno));
        return 1;
    }
    /* The whole capture in memory (pages faulted in now), so the runs time the books only. */
    data = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0)
                      : NULL;
    if (st.st_size && data == MAP_FAILED) {
        fprintf(stderr, "tickplane-replay: mmap %s: %s\n", o.path, strerror(errno));
        return 1;
    }
    for (uint32_t run = 0; run < o.repeat; run++) {
        struct replay_threads_params tp = {.replay = {.format = o.format,
                                                      .venue = o.venue,
                                                      .instruments = o.instruments,
                                                      .orders = o.orders,
                                                      .recent_orders = o.recent_orders,
                                                      .levels = o.levels,
                                                      .no_checksum = o.no_checksum,
                                                      .no_changes = o.no_changes,
                                                      .digest = o.digest,
                                                      .filter = &o.filter,
                                                      .gap_wait_ns = o.gap_wait_ns,
                                                      .warnings = run == 0 ? stderr : NULL},
                                           .threads = o.threads};
        if (o.lines.given)
            tp.replay.lines = &o.lines;
        /* The digest hashes one stream in order, a snapshot loads one set of books. */
        if (run == 0 && !o.digest && o.snapshot == NULL) {
            double p0 = now_seconds(CLOCK_MONOTONIC);
            workers = replay_threads_plan(share, o.threads, &tp.replay, data, (size_t)st.st_size);
            plan_seconds = now_seconds(CLOCK_MONOTONIC) - p0;
        }
        if (run == 0 && workers == 1)
            share[0] = (struct replay_share){.end_id = o.instruments, .lead = true};
        if (run)
            replay_threads_close(&t);
        FILE *ev_file = NULL;
        char err[256] = "";
        struct replay_events_params ep = {
            .symbols = o.symbols, .topics = o.topics, .instruments = o.instruments};
        if (o.events) {
            /* Each run writes the file anew: the last run's stays. */
            ev_file = ep.file = fopen(o.events, "w");
            /* A BinaryFILE has no receive times. */
            ep.file_flags =
                (o.format == REPLAY_FORMAT_PCAP ||
                 (o.format == REPLAY_FORMAT_AUTO && replay_is_pcap(data, (size_t)st.st_size)))
                    ? TP_EVENT_FILE_F_RECV_NS
                    : 0;
            tp.events = &ep;
            if (ev_file == NULL) {
                fprintf(stderr, "tickplane-replay: %s: %s\n", o.events, strerror(errno));
                return 1;
            }
        }
        rc = replay_threads_open(&t, &tp, workers, share, data, (size_t)st.st_size, err,
                                 sizeof(err));
        if (rc != 0) {
            fprintf(stderr, "tickplane-replay: %s: %s\n", t.events_failed ? o.events : o.path, err);
            return 1;
        }
        struct replay *lead = &t.replay[0];
        /* After the event file's sink: the snapshot's records are the file's first. */
        if (o.snapshot != NULL && load_snapshot(lead, o.snapshot) != 0)
            return 1;
        replay_progress_start(&progress, lead, stderr, (size_t)st.st_size, o.quiet);
        /* Wall time, and the CPU time of the threads that work (the machine may be shared: both
         * matter). */
        clockid_t cpu = workers > 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID;
        double t0 = now_seconds(CLOCK_MONOTONIC), c0 = now_seconds(cpu);
        int events_rc;
        rc = replay_threads_run(&t, &events_rc, err, sizeof(err));
        if (events_rc != 0)
            fprintf(stderr, "tickplane-replay: %s: %s\n", o.events, err);
        if (ev_file != NULL && fclose(ev_file) != 0 && events_rc == 0) {
            fprintf(stderr, "tickplane-replay: %s: %s\n", o.events, strerror(errno));
            events_rc = -EIO;
        }
        events = t.events_out;
        seconds = now_seconds(CLOCK_MONOTONIC) - t0;
        cpu_seconds = now_seconds(cpu) - c0;
        replay_progress_end(&progress);
        if (rc != 0)
            fprintf(stderr, "tickplane-replay: %s: %s (books kept up to there)\n", o.path,
                    replay_error(lead, rc));
        rc = rc ? rc : events_rc;
        messages = lead->messages;
        ns_per_msg[run] = messages ? seconds * 1e9 / (double)messages : 0;
        cpu_ns_per_msg[run] = messages ? cpu_seconds * 1e9 / (double)messages : 0;
        fprintf(stderr,
                "{\"run\":%" PRIu32 ",\"messages\":%" PRIu64 ",\"seconds\":%.6f,"
                "\"cpu_seconds\":%.6f,\"ns_per_msg\":%.2f,\"cpu_ns_per_msg\":%.2f",
                run, messages, seconds, cpu_seconds, ns_per_msg[run], cpu_ns_per_msg[run]);
        if (o.digest) {
            /* Fresh books each run: the same input must give the same stream, run after run. */
            if (run == 0)
                first_digest = lead->digest;
            else if (memcmp(&lead->digest, &first_digest, sizeof(first_digest)) != 0)
                digests_differ = 1;
            fprintf(stderr, ",\"change_digest\":\"%016" PRIx64 "\"", lead->digest.hash);
        }
        fputs("}\n", stderr);
    }
    if (!o.quiet)
        print_books(stdout, &t, o.depth);
    qsort(ns_per_msg, o.repeat, sizeof(double), compare_double);
    qsort(cpu_ns_per_msg, o.repeat, sizeof(double), compare_double);
    getrusage(RUSAGE_SELF, &ru);
    uint64_t recent;
    size_t table_bytes;
    struct tp_books_totals totals = books_totals(&t, &recent, &table_bytes);
    fprintf(stderr,
            "{\"summary\":true,\"file\":\"%s\",\"bytes\":%lld,\"messages\":%" PRIu64
            ",\"runs\":%" PRIu32 ",\"threads\":%" PRIu32 ",\"plan_seconds\":%.6f,"
            "\"ns_per_msg_median\":%.2f,"
            "\"ns_per_msg_min\":%.2f,"
            "\"cpu_ns_per_msg_median\":%.2f,\"msgs_per_sec_median\":%.0f,\"instruments\":%" PRIu32
            ",\"live_orders\":%" PRIu64 ",\"peak_live_orders\":%" PRIu64
            ",\"order_capacity\":%" PRIu32 ",\"book_bytes\":%zu,\"peak_rss_kb\":%ld"
            ",\"change_records\":%s,\"recent_orders\":%" PRIu64 ",\"orders_spilled\":%" PRIu64,
            o.path, (long long)st.st_size, messages, o.repeat, workers, plan_seconds,
            ns_per_msg[o.repeat / 2], ns_per_msg[0], cpu_ns_per_msg[o.repeat / 2],
            ns_per_msg[o.repeat / 2] > 0 ? 1e9 / ns_per_msg[o.repeat / 2] : 0,
            tp_instruments_count(t.replay[0].registry), totals.live_orders, totals.peak_live_orders,
            o.orders, table_bytes, ru.ru_maxrss, o.no_changes ? "false" : "true", recent,
            totals.orders_spilled);
    /* The last run's CPU time of each worker thread, a message of the capture. */
    for (uint32_t i = 0; workers > 1 && i < workers; i++)
        fprintf(stderr, "%s%.2f%s", i ? "," : ",\"worker_cpu_ns_per_msg\":[",
                messages ? t.cpu_seconds[i] * 1e9 / (double)messages : 0,
                i + 1 == workers ? "]" : "");
    if (o.digest)
        fprintf(stderr,
                ",\"change_digest\":\"%016" PRIx64 "\",\"digest_change_records\":%" PRIu64
                ",\"digest_events\":%" PRIu64 ",\"digest_stale_callbacks\":%" PRIu64
                ",\"digest_covers\":\"%s\",\"digest_runs_equal\":%s",
                first_digest.hash, first_digest.change_records, first_digest.events,
                first_digest.stale_calls,
                o.no_changes ? "events,stale (--no-changes: no change records are emitted)"
                             : "change_records,events,stale",
                digests_differ ? "false" : "true");
    if (o.events)
        fprintf(stderr,
                ",\"events_file\":\"%s\",\"events_records\":%" PRIu64 ",\"events_bytes\":%" PRIu64
                ",\"events_skipped\":%" PRIu64,
                o.events, events.records, events.bytes, events.skipped);
    fputs("}\n", stderr);
    replay_threads_close(&t);
    if (digests_differ)
        fprintf(stderr, "tickplane-replay: the runs' digests differ: the replay is not "
                        "deterministic\n");
    return rc == 0 && !digests_differ ? 0 : 1;
}
