/*
 * tickplane-top: the smallest useful strategy. Attaches to a tickplane instance, subscribes to
 * the top of book (and trades) of the instruments named on the command line (symbols or ids),
 * prints every change of the best bid/offer, and a summary at the end.
 *
 *   tickplane-top [--dir DIR] [--seconds N] [--wait N] [--quiet] [--control SOCKET] [--by-name]
 *                 INSTANCE INSTRUMENT...
 *
 * Each instrument starts with its current state (the library's first event of a subscription,
 * marked "(snapshot)"); prices are printed with the instrument's tick (tp_format_price). With
 * --wait it waits up to N seconds for the instance to appear (a daemon still starting).
 *
 * It busy-polls (as a strategy on an isolated core would) and stops after N seconds, on
 * SIGINT/SIGTERM, when the writer closes the instance, or when the daemon's heartbeat stops (it
 * was killed: its segments stay marked live, and a quiet bus is not a quiet market). A symbol that
 * the instance does not know yet (its definition has not arrived) is looked up again while polling
 * and subscribed as soon as it appears; with --by-name each symbol is subscribed at once by name (a
 * pattern subscription), so that the daemon publishes it from its first message, and a name with
 * '*' or '?' is a glob: every instrument it matches is shown (up to 64 rows).
 *
 * With --control (or TICKPLANE_CONTROL_SOCKET set) subscriptions go through the daemon's control
 * socket: a refused one is printed with the daemon's reason and not watched. Exit status: 0, 1 when
 * a symbol was never defined (or a glob matched nothing) or the instance does not exist, 3 when a
 * subscription was refused (or the daemon went away), 4 when the daemon died (its heartbeat
 * stopped).
 */
#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tickplane/tickplane.h"

#define MAX_WATCH  64
#define UNRESOLVED UINT32_MAX       /* a watched symbol whose definition has not arrived yet */
#define REFUSED    (UINT32_MAX - 1) /* the daemon refused the subscription */
#define PATTERN    (UINT32_MAX - 2) /* a --by-name glob: the instruments it matches get rows */

struct watch {
    uint32_t ids[MAX_WATCH];
    char names[MAX_WATCH][TP_SYMBOL_LEN + 1];
    int64_t ticks[MAX_WATCH];    /* price9 tick of the instrument (TP_PRICE_NULL: unknown) */
    uint64_t matched[MAX_WATCH]; /* PATTERN: instruments it matched */
    uint64_t top_changes[MAX_WATCH];
    uint64_t trades[MAX_WATCH];
    size_t n;
    size_t unresolved;
    size_t refused;
    size_t patterns;
    int quiet;
    int by_name; /* subscribed by name at start: resolving only maps ids for display */
    uint64_t losses;
    struct tp_client *client;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static int slot_of(const struct watch *w, uint32_t id)
{
    for (size_t i = 0; i < w->n; i++)
        if (w->ids[i] == id)
            return (int)i;
    return -1;
}

/* A symbol, or a decimal id below the instance's instrument count; -ENOENT if neither. */
static int64_t lookup(const struct tp_client *c, const char *name)
{
    int64_t id = tp_find_instrument(c, name);
    char *end;
    unsigned long num = strtoul(name, &end, 10);
    if (id < 0 && *end == '\0' && num < tp_instrument_count(c))
        id = (int64_t)num;
    return id;
}

static const uint32_t watched_topics = TP_TOPIC_BIT(TP_TOPIC_TOP) | TP_TOPIC_BIT(TP_TOPIC_TRADES);

/*
 * Subscribes the watched symbols whose definitions have arrived since the last look. A refusal
 * (or any error from the daemon but "try again") is final for that symbol.
 */
static void resolve_pending(struct tp_client *c, struct watch *w)
{
    for (size_t k = 0; k < w->n; k++) {
        if (w->ids[k] != UNRESOLVED)
            continue;
        int64_t id = lookup(c, w->names[k]);
        if (id < 0)
            continue;
        int rc = w->by_name ? 0 : tp_subscribe(c, &(uint32_t){(uint32_t)id}, 1, watched_topics);
        if (rc == -EAGAIN || rc == -ENOENT)
            continue;
        w->unresolved--;
        if (rc != 0) {
            fprintf(stderr, "tickplane-top: %s: %s\n", w->names[k],
                    tp_last_error(c)[0] ? tp_last_error(c) : strerror(-rc));
            w->ids[k] = REFUSED;
            w->refused++;
            continue;
        }
        w->ids[k] = (uint32_t)id;
        struct tp_instrument_info info;
        w->ticks[k] =
            tp_instrument_info(c, (uint32_t)id, &info) == 0 ? info.tick_size : TP_PRICE_NULL;
    }
}

/* A row for an instrument a glob matched (its first event), or -1 when there is no room. */
static int add_matched(struct watch *w, uint32_t id)
{
    struct tp_instrument_info info;
    if (w->n >= MAX_WATCH || tp_instrument_info(w->client, id, &info) != 0)
        return -1;
    for (size_t k = 0; k < w->n; k++) {
        if (w->ids[k] != PATTERN || fnmatch(w->names[k], info.symbol, 0) != 0)
            continue;
        w->matched[k]++;
        snprintf(w->names[w->n], sizeof(w->names[w->n]), "%s", info.symbol);
        w->ids[w->n] = id;
        w->ticks[w->n] = info.tick_size;
        return (int)w->n++;
    }
    return -1;
}

static const char *price(char *buf, size_t len, int64_t p, int64_t tick)
{
    tp_format_price(p, tick, buf, len);
    return buf;
}

static const char *origin(uint32_t flags)
{
    if (flags & TP_EVENT_F_SNAPSHOT)
        return " (snapshot)";
    return (flags & TP_EVENT_F_RESYNC) ? " (resync)" : "";
}

static void on_event(void *user, const struct tp_event *ev)
{
    struct watch *w = user;
    if (ev->topic == TP_TOPIC_LOSS) {
        w->losses += ev->u.lost;
        printf("lapped on ring %" PRIu64 ": %" PRIu64
               " events lost, books reloaded from the state table\n",
               ev->venue_seq, ev->u.lost);
        return;
    }
    int i = slot_of(w, ev->instrument_id);
    if (i < 0 && w->by_name && w->unresolved) {
        /* A pattern matched a symbol defined since the last look: name its id now, so that
         * its first events are shown too. */
        resolve_pending(w->client, w);
        i = slot_of(w, ev->instrument_id);
    }
    if (i < 0 && w->patterns)
        i = add_matched(w, ev->instrument_id);
    if (i < 0)
        return;
    /* The current state a subscription starts with is not a change. */
    int change = !(ev->flags & TP_EVENT_F_SNAPSHOT);
    char b[32], a[32];
    int64_t tick = w->ticks[i];
    if (ev->topic == TP_TOPIC_TOP) {
        w->top_changes[i] += (uint64_t)change;
        if (!w->quiet)
            printf("%-12s bid %10" PRId64 " @ %-12s ask %10" PRId64 " @ %s%s%s\n", w->names[i],
                   ev->u.top.bid_qty, price(b, sizeof(b), ev->u.top.bid_price, tick),
                   ev->u.top.ask_qty, price(a, sizeof(a), ev->u.top.ask_price, tick),
                   (ev->flags & TP_EVENT_F_STALE) ? " STALE" : "", origin(ev->flags));
    } else if (ev->topic == TP_TOPIC_TRADES) {
        w->trades[i] += (uint64_t)change;
        if (!w->quiet)
            printf("%-12s trade %" PRId64 " @ %s%s\n", w->names[i], ev->u.trade.qty,
                   price(b, sizeof(b), ev->u.trade.price, tick), origin(ev->flags));
    }
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int usage(FILE *out)
{
    fprintf(
        out,
        "usage: tickplane-top [--dir DIR] [--seconds N] [--wait N] [--quiet] [--control SOCKET] "
        "[--by-name] INSTANCE INSTRUMENT...\n"
        "  --seconds N       stop after N seconds (default 10)\n"
        "  --wait N          wait up to N seconds for the instance (a daemon starting)\n"
        "  --quiet           print the summary only\n"
        "  --control SOCKET  subscribe through the daemon's control socket\n"
        "  --by-name         subscribe by name at once; '*' and '?' make a name a glob\n"
        "  --version         print the version and exit\n");
    return out == stdout ? 0 : 2;
}

/*
 * tp_attach, retried for at most wait_s seconds while the instance does not exist yet or its
 * segments are a stopped daemon's (closed, or a dead writer's) or its control socket does not
 * answer yet: a daemon starting replaces them and listens.
 */
static int attach(struct tp_client **c, const char *instance, const struct tp_client_options *opt,
                  double wait_s, char *err, size_t err_len)
{
    double until = now_s() + wait_s;
    for (;;) {
        int rc = tp_attach(c, instance, opt, err, err_len);
        if ((rc != -ENOENT && rc != -ESTALE && rc != -EOWNERDEAD && rc != -ECONNREFUSED) ||
            now_s() >= until)
            return rc;
        nanosleep(&(struct timespec){.tv_nsec = 50000000}, NULL);
    }
}

int main(int argc, char **argv)
{
    struct tp_client_options opt = {0};
    double seconds = 10.0, wait_s = 0;
    const char *control = NULL;
    static struct watch w;
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            opt.shm_dir = argv[++i];
        else if (strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--wait") == 0 && i + 1 < argc)
            wait_s = atof(argv[++i]);
        else if (strcmp(argv[i], "--help") == 0)
            return usage(stdout);
        else if (strcmp(argv[i], "--quiet") == 0)
            w.quiet = 1;
        else if (strcmp(argv[i], "--control") == 0 && i + 1 < argc)
            control = argv[++i];
        else if (strcmp(argv[i], "--by-name") == 0)
            w.by_name = 1;
        else if (strcmp(argv[i], "--version") == 0) {
            printf("tickplane-top %s\n", tp_version());
            return 0;
        } else
            return usage(stderr);
    }
    if (argc - i < 2)
        return usage(stderr);
    const char *instance = argv[i++];

    char err[256];
    struct tp_client *c;
    int rc = attach(&c, instance, &opt, wait_s, err, sizeof(err));
    if (rc != 0) {
        fprintf(stderr, "tickplane-top: %s\n", err);
        return 1;
    }
    w.client = c;
    if (control != NULL && tp_control_connect(c, control, 0) != 0) {
        fprintf(stderr, "tickplane-top: %s\n", tp_last_error(c));
        tp_detach(c);
        return 3;
    }
    for (; i < argc && w.n < MAX_WATCH; i++) {
        snprintf(w.names[w.n], sizeof(w.names[w.n]), "%s", argv[i]);
        int glob = w.by_name && strpbrk(argv[i], "*?") != NULL;
        w.ids[w.n] = glob ? PATTERN : UNRESOLVED;
        w.ticks[w.n] = TP_PRICE_NULL;
        w.patterns += (size_t)glob;
        w.unresolved += (size_t)!glob;
        if (w.by_name && tp_subscribe_pattern(c, NULL, w.names[w.n], watched_topics) < 0) {
            fprintf(stderr, "tickplane-top: %s: %s\n", w.names[w.n], tp_last_error(c));
            w.ids[w.n] = REFUSED;
            w.patterns -= (size_t)glob;
            w.unresolved -= (size_t)!glob;
            w.refused++;
        }
        w.n++;
    }
    resolve_pending(c, &w);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);

    /* The current picture comes first: the library delivers it as each subscription's first
     * events. */
    for (size_t k = 0; k < w.n; k++)
        if (w.ids[k] == UNRESOLVED)
            printf("%-12s not defined yet: subscribed when its definition arrives\n", w.names[k]);

    const char *why = "time";
    double end = now_s() + seconds;
    unsigned idle = 0;
    int control_alive = 1, writer_dead = 0;
    size_t asked = w.n; /* rows a glob adds later are not subscriptions of their own */
    while (!stop && w.refused < asked) {
        rc = tp_poll(c, on_event, &w, 64);
        if (rc == -ESTALE) {
            why = "writer closed";
            break;
        }
        /* Look at the clock and for new definitions only now and then: polling itself makes no
         * syscalls. */
        if (rc == 0 && ++idle % 4096 == 0) {
            /* Nothing to read: a quiet market, or a daemon that died (no syscall to ask). */
            if (tp_check_heartbeat(c) == -EOWNERDEAD) {
                writer_dead = 1;
                why = "dead writer (heartbeat stopped)";
                break;
            }
            if (w.unresolved)
                resolve_pending(c, &w);
            int revoked = control_alive ? tp_control_check(c) : 0;
            if (revoked == -ENOTCONN) {
                /* The daemon is stopping: what it published is still read until it closes. */
                control_alive = 0;
                continue;
            }
            if (revoked > 0) {
                fprintf(stderr, "tickplane-top: %s\n", tp_last_error(c));
                w.refused += (size_t)revoked;
            }
            if (now_s() > end)
                break;
        }
    }
    if (stop)
        why = "signal";
    else if (w.refused >= asked)
        why = "refusal";

    struct tp_client_stats st;
    tp_stats(c, &st);
    printf("summary: stopped by %s; records %" PRIu64 ", delivered %" PRIu64 ", filtered %" PRIu64
           ", lapped %" PRIu64 ", lost %" PRIu64 ", resyncs %" PRIu64 ", malformed %" PRIu64 "\n",
           why, st.records, st.delivered, st.filtered, st.lapped, st.lost, st.resyncs,
           st.malformed);
    /* An instance with several data lcores publishes on one ring each. */
    for (unsigned r = 0; tp_ring_count(c) > 1 && r < tp_ring_count(c); r++) {
        struct tp_ring_stats rs;
        if (tp_ring_stats(c, r, &rs) == 0)
            printf("  ring %u: records %" PRIu64 ", lapped %" PRIu64 ", lost %" PRIu64 "\n", r,
                   rs.records, rs.lapped, rs.lost);
    }
    static struct tp_instrument_state s;
    char b[32], a[32];
    size_t unmatched = 0;
    for (size_t k = 0; k < w.n; k++) {
        if (w.ids[k] == UNRESOLVED) {
            printf("  %-12s never defined by the instance\n", w.names[k]);
            continue;
        }
        if (w.ids[k] == PATTERN) {
            printf("  %-12s matched %" PRIu64 " instruments\n", w.names[k], w.matched[k]);
            unmatched += w.matched[k] == 0;
            continue;
        }
        if (w.ids[k] == REFUSED) {
            printf("  %-12s refused\n", w.names[k]);
            continue;
        }
        if (tp_read_state(c, w.ids[k], &s) != 0)
            continue;
        printf(
            "  %-12s top changes %" PRIu64 ", trades %" PRIu64 ", last bid %s ask %s\n", w.names[k],
            w.top_changes[k], w.trades[k],
            price(b, sizeof(b), s.book.bid_levels ? s.bids[0].price : TP_PRICE_NULL, w.ticks[k]),
            price(a, sizeof(a), s.book.ask_levels ? s.asks[0].price : TP_PRICE_NULL, w.ticks[k]));
    }
    tp_detach(c);
    return writer_dead ? 4 : w.refused ? 3 : (w.unresolved || unmatched) ? 1 : 0;
}
