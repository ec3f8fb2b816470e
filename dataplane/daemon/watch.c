/* The operator's view: see watch.h. */
#include "watch.h"

#include <dirent.h>
#include <pthread.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ethdev.h>

#include "bus/counters.h"
#include "bus/segment.h"
#include "bus_setup.h"
#include "log.h"
#include "nic_drops.h"

#define COUNTER_PERIOD_MS 100
#define SCAN_PERIOD_MS    1000
#define MAX_CONSUMERS     64

/* What is watched on every channel: its counter (after "channel=X.") and what a rise means. */
enum chan_metric {
    M_GAP_FILLED,
    M_GAPS,
    M_REQUESTS,
    M_RECOVERED,
    M_GIVEN_UP,
    M_SKIPPED,
    M_RESETS,
    M_STALE_MARKS,
    M_RPT_SEQ_GAPS,
    M_REGISTRY_FULL,
    M_SNAPSHOT_MISMATCH,
    M_RELEASE_MISMATCH,
    N_METRICS
};

static const char *const metric_counter[N_METRICS] = {
    [M_GAP_FILLED] = "arb.gap_filled",
    [M_GAPS] = "arb.gaps",
    [M_REQUESTS] = "mold.requests",
    [M_RECOVERED] = "mold.recovered",
    [M_GIVEN_UP] = "mold.given_up",
    [M_SKIPPED] = "arb.skipped_msgs",
    [M_RESETS] = "arb.resets",
    [M_STALE_MARKS] = "feed.stale_marks",
    [M_RPT_SEQ_GAPS] = "decode.rpt_seq_gaps",
    [M_REGISTRY_FULL] = "decode.registry_full",
    [M_SNAPSHOT_MISMATCH] = "decode.snapshot_mismatch",
    [M_RELEASE_MISMATCH] = "decode.release_mismatch",
};

/* The event a rise logs (its line starts with this), and its component. */
static const char *const metric_event[N_METRICS] = {
    [M_GAP_FILLED] = "gap filled",
    [M_GAPS] = "gap detected",
    [M_REQUESTS] = "gap re-requested",
    [M_RECOVERED] = "gap recovered",
    [M_GIVEN_UP] = "gap given up",
    [M_SKIPPED] = "messages skipped",
    [M_RESETS] = "session change",
    [M_STALE_MARKS] = "books marked stale",
    [M_RPT_SEQ_GAPS] = "gap detected",
    [M_REGISTRY_FULL] = "capacity exhausted",
    [M_SNAPSHOT_MISMATCH] = "snapshot mismatch",
    [M_RELEASE_MISMATCH] = "release mismatch",
};
static const enum tp_log_component metric_component[N_METRICS] = {
    [M_GAP_FILLED] = TP_LOG_GAP,
    [M_GAPS] = TP_LOG_GAP,
    [M_REQUESTS] = TP_LOG_GAP,
    [M_RECOVERED] = TP_LOG_GAP,
    [M_GIVEN_UP] = TP_LOG_GAP,
    [M_SKIPPED] = TP_LOG_GAP,
    [M_RESETS] = TP_LOG_SESSION,
    [M_STALE_MARKS] = TP_LOG_BOOKS,
    [M_RPT_SEQ_GAPS] = TP_LOG_GAP,
    [M_REGISTRY_FULL] = TP_LOG_BOOKS,
    [M_SNAPSHOT_MISMATCH] = TP_LOG_BOOKS,
    [M_RELEASE_MISMATCH] = TP_LOG_BOOKS,
};

struct chan_watch {
    char name[TP_CFG_NAME_MAX]; /* "" = free */
    bool live;                  /* in the running config at the last pass */
    uint64_t prev[N_METRICS];
    struct tp_log_limit limit[N_METRICS];
};

enum book_state { BOOK_OK, BOOK_HALTED, BOOK_RECOVERING, BOOK_STALE };

struct book_watch {
    uint8_t state;
    int64_t since_ns; /* CLOCK_REALTIME when the state was first seen */
};

struct port_watch {
    struct tp_counter *ipackets, *imissed, *ierrors, *rx_nombuf;
    struct tp_nic_drops drops;
};

struct consumer {
    struct tp_telemetry_consumer c; /* what DPDK telemetry, the metrics and stats show */
    struct tp_log_limit limit;
};

struct tp_watch {
    struct tp_daemon *d;
    uint64_t next_counters_ms, next_scan_ms;
    struct chan_watch chans[TP_CFG_MAX_CHANNELS];
    uint64_t prev_capacity;
    struct tp_log_limit capacity_limit;
    struct port_watch ports[TP_CFG_MAX_PORTS];
    uint32_t n_books;
    struct book_watch *books;
    uint32_t stale[TP_TPOUT_VENUES], recovering[TP_TPOUT_VENUES],
        defined[TP_TPOUT_VENUES]; /* per tpout venue at the last scan */
    bool scanned;
    struct tp_log_limit books_limit[TP_TPOUT_VENUES];
    pthread_mutex_t consumers_lock; /* DPDK telemetry's thread copies them too */
    unsigned n_consumers;
    struct consumer consumers[MAX_CONSUMERS];
};

static int64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static const struct tp_counter *find(const struct tp_daemon *d, const char *name)
{
    return tp_counters_find(tp_daemon_bus_counters(d->bus), name);
}

int tp_watch_open(struct tp_watch **out, struct tp_daemon *d)
{
    struct tp_watch *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return -ENOMEM;
    w->d = d;
    pthread_mutex_init(&w->consumers_lock, NULL);
    w->n_books = d->cfg->instruments.capacity;
    w->books = calloc(w->n_books ? w->n_books : 1, sizeof(w->books[0]));
    if (w->books == NULL) {
        free(w);
        return -ENOMEM;
    }
    struct tp_counters *area = tp_daemon_bus_counters(d->bus);
    for (unsigned i = 0; i < d->cfg->n_ports; i++) {
        char name[TP_COUNTER_NAME_LEN + 16];
        struct port_watch *p = &w->ports[i];
#define NIC_COUNTER(field)                                                                         \
    (snprintf(name, sizeof(name), "port=%s.nic." #field, d->cfg->ports[i].name),                   \
     strlen(name) < TP_COUNTER_NAME_LEN ? tp_counters_register(area, name) : NULL)
        p->ipackets = NIC_COUNTER(ipackets);
        p->imissed = NIC_COUNTER(imissed);
        p->ierrors = NIC_COUNTER(ierrors);
        p->rx_nombuf = NIC_COUNTER(rx_nombuf);
#undef NIC_COUNTER
    }
    *out = w;
    return 0;
}

/* The channel's entry (by name: a reload may move channels in the config), or NULL. */
static struct chan_watch *chan_entry(struct tp_watch *w, const char *name)
{
    for (unsigned i = 0; i < TP_CFG_MAX_CHANNELS; i++)
        if (w->chans[i].name[0] != '\0' && strcmp(w->chans[i].name, name) == 0)
            return &w->chans[i];
    return NULL;
}

/*
 * Which entries the running config's channels have: kept by name, new names take entries of
 * channels no longer configured (a channel added again starts from scratch, as its counters do).
 */
static void mark_channels(struct tp_watch *w)
{
    const struct tp_config *cfg = w->d->cfg;
    for (unsigned i = 0; i < TP_CFG_MAX_CHANNELS; i++)
        w->chans[i].live = false;
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        struct chan_watch *cw = chan_entry(w, cfg->channels[c].name);
        if (cw != NULL)
            cw->live = true;
    }
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        if (chan_entry(w, cfg->channels[c].name) != NULL)
            continue;
        for (unsigned i = 0; i < TP_CFG_MAX_CHANNELS; i++)
            if (!w->chans[i].live) {
                memset(&w->chans[i], 0, sizeof(w->chans[i]));
                snprintf(w->chans[i].name, sizeof(w->chans[i].name), "%s", cfg->channels[c].name);
                w->chans[i].live = true;
                break;
            }
    }
}

/* One line for a rise of counter m on channel name (delta since the last pass, value now). */
static void channel_event(struct chan_watch *cw, enum chan_metric m, uint64_t delta, uint64_t total,
                          uint64_t skipped)
{
    const char *n = cw->name;
    struct tp_log_limit *l = &cw->limit[m];
    unsigned long long dv = delta, tv = total;
    switch (m) {
    case M_GAP_FILLED:
        tp_log_limited(l, TP_LOG_GAP, TP_LOG_INFO,
                       "gap filled: channel %s: %llu gaps closed by the other line (%llu in all)",
                       n, dv, tv);
        break;
    case M_GAPS:
        tp_log_limited(l, TP_LOG_GAP, TP_LOG_WARNING,
                       "gap detected: channel %s: %llu gaps left after the line window, recovery "
                       "started (%llu in all)",
                       n, dv, tv);
        break;
    case M_REQUESTS:
        tp_log_limited(l, TP_LOG_GAP, TP_LOG_NOTICE,
                       "gap re-requested: channel %s: %llu re-requests sent (%llu in all)", n, dv,
                       tv);
        break;
    case M_RECOVERED:
        tp_log_limited(l, TP_LOG_GAP, TP_LOG_NOTICE,
                       "gap recovered: channel %s: %llu messages recovered (%llu in all)", n, dv,
                       tv);
        break;
    case M_GIVEN_UP:
        tp_log_limited(l, TP_LOG_GAP, TP_LOG_WARNING,
                       "gap given up: channel %s: %llu give-ups, %llu messages skipped (%llu "
                       "give-ups in all)",
                       n, dv, (unsigned long long)skipped, tv);
        break;
    case M_RESETS:
        tp_log_limited(l, TP_LOG_SESSION, TP_LOG_NOTICE,
                       "session change: channel %s: %llu sequence resets or new sessions (%llu in "
                       "all)",
                       n, dv, tv);
        break;
    case M_STALE_MARKS:
        tp_log_limited(l, TP_LOG_BOOKS, TP_LOG_WARNING,
                       "books marked stale: channel %s: %llu times (%llu in all)", n, dv, tv);
        break;
    case M_RPT_SEQ_GAPS:
        tp_log_limited(l, TP_LOG_GAP, TP_LOG_NOTICE,
                       "gap detected: channel %s: %llu instruments missed an update (RptSeq), "
                       "waiting for a snapshot",
                       n, dv);
        break;
    case M_REGISTRY_FULL:
        tp_log_limited(l, TP_LOG_BOOKS, TP_LOG_ERR,
                       "capacity exhausted: channel %s: %llu instrument definitions refused, "
                       "instruments.capacity is full",
                       n, dv);
        break;
    case M_SNAPSHOT_MISMATCH:
        tp_log_limited(l, TP_LOG_BOOKS, TP_LOG_WARNING,
                       "snapshot mismatch: channel %s: %llu books differed from the venue's "
                       "snapshot at their sequence, replaced by it (%llu in all)",
                       n, dv, tv);
        break;
    case M_RELEASE_MISMATCH:
        tp_log_limited(l, TP_LOG_BOOKS, TP_LOG_ERR,
                       "release mismatch: channel %s: %llu packets in another T7 release's "
                       "layouts dropped, not read (the channel's \"release\" differs from the "
                       "feed's; %llu in all)",
                       n, dv, tv);
        break;
    default:
        break;
    }
}

static void watch_channels(struct tp_watch *w)
{
    const struct tp_config *cfg = w->d->cfg;
    mark_channels(w);
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        struct chan_watch *cw = chan_entry(w, cfg->channels[c].name);
        if (cw == NULL)
            continue;
        const struct tp_daemon_lcore *dl = &w->d->lcores[w->d->lcore_of[c]];
        const char *label = dl->slot_label[w->d->slot_of[c]];
        uint64_t now[N_METRICS] = {0};
        for (unsigned m = 0; m < N_METRICS; m++) {
            char name[2 * TP_COUNTER_NAME_LEN];
            snprintf(name, sizeof(name), "channel=%s.%s", label, metric_counter[m]);
            const struct tp_counter *k = find(w->d, name);
            now[m] = k != NULL ? tp_counter_get(k) : 0;
        }
        for (unsigned m = 0; m < N_METRICS; m++) {
            /* A channel added again starts its counters from 0: a new baseline, not an event. */
            if (now[m] > cw->prev[m] && m != M_SKIPPED)
                channel_event(cw, m, now[m] - cw->prev[m], now[m],
                              now[M_SKIPPED] - (now[M_SKIPPED] >= cw->prev[M_SKIPPED]
                                                    ? cw->prev[M_SKIPPED]
                                                    : now[M_SKIPPED]));
        }
        for (unsigned m = 0; m < N_METRICS; m++) {
            cw->prev[m] = now[m];
            char what[TP_CFG_NAME_MAX + 48];
            snprintf(what, sizeof(what), "%s: channel %s", metric_event[m], cw->name);
            tp_log_limit_flush(&cw->limit[m], metric_component[m], TP_LOG_NOTICE, what);
        }
    }
}

/* Order and level tables of every lcore ("dp[.lcore=N].books.*_capacity"). */
static void watch_capacity(struct tp_watch *w)
{
    const struct tp_counters *area = tp_daemon_bus_counters(w->d->bus);
    uint32_t n = atomic_load_explicit(&area->count, memory_order_acquire);
    uint64_t refused = 0;
    for (uint32_t i = 0; i < n && i < area->capacity; i++) {
        const char *name = area->slots[i].name;
        size_t len = strnlen(name, TP_COUNTER_NAME_LEN);
        static const char suffix[] = "_capacity";
        if (strncmp(name, "dp", 2) == 0 && len > sizeof(suffix) &&
            memcmp(name + len - (sizeof(suffix) - 1), suffix, sizeof(suffix) - 1) == 0)
            refused += tp_counter_get(&area->slots[i]);
    }
    if (refused > w->prev_capacity)
        tp_log_limited(&w->capacity_limit, TP_LOG_BOOKS, TP_LOG_ERR,
                       "capacity exhausted: %llu order adds refused (order table or level array "
                       "full: raise books.max_orders / books.levels_per_side), %llu in all",
                       (unsigned long long)(refused - w->prev_capacity),
                       (unsigned long long)refused);
    w->prev_capacity = refused;
}

static enum book_state state_of(const struct tp_daemon_book_brief *b)
{
    if (b->stale)
        return BOOK_STALE;
    if (b->recovering)
        return BOOK_RECOVERING;
    if (b->halted)
        return BOOK_HALTED;
    return BOOK_OK;
}

static void scan_books(struct tp_watch *w, int64_t now_ns)
{
    uint32_t stale[TP_TPOUT_VENUES] = {0}, recovering[TP_TPOUT_VENUES] = {0},
             defined[TP_TPOUT_VENUES] = {0};
    uint32_t n = tp_daemon_bus_instrument_slots(w->d->bus);
    n = n < w->n_books ? n : w->n_books;
    for (uint32_t id = 0; id < n; id++) {
        struct tp_daemon_book_brief b;
        if (tp_daemon_bus_book_brief(w->d->bus, id, &b) != 0 || !b.defined)
            continue;
        unsigned v = b.venue < TP_TPOUT_VENUES ? b.venue : 0;
        enum book_state s = state_of(&b);
        defined[v]++;
        stale[v] += s == BOOK_STALE;
        recovering[v] += s == BOOK_RECOVERING;
        if (w->books[id].since_ns == 0 || w->books[id].state != s)
            w->books[id] = (struct book_watch){.state = (uint8_t)s, .since_ns = now_ns};
    }
    for (unsigned v = 0; v < TP_TPOUT_VENUES; v++) {
        const char *venue = w->d->venue_names[v];
        /* The first scan reports only books that are not healthy; later ones every change. */
        bool changed = w->scanned ? stale[v] != w->stale[v] || recovering[v] != w->recovering[v]
                                  : stale[v] + recovering[v] > 0;
        if (!changed)
            continue;
        if (stale[v] + recovering[v] == 0)
            tp_log_limited(&w->books_limit[v], TP_LOG_BOOKS, TP_LOG_NOTICE,
                           "books healthy: %s: all %u instruments healthy again (were %u stale, "
                           "%u recovering)",
                           venue, defined[v], w->stale[v], w->recovering[v]);
        else
            tp_log_limited(&w->books_limit[v], TP_LOG_BOOKS,
                           stale[v] > w->stale[v] ? TP_LOG_WARNING : TP_LOG_NOTICE,
                           "books stale: %s: %u of %u instruments stale, %u recovering (were %u "
                           "and %u)",
                           venue, stale[v], defined[v], recovering[v], w->stale[v],
                           w->recovering[v]);
    }
    memcpy(w->stale, stale, sizeof(stale));
    memcpy(w->recovering, recovering, sizeof(recovering));
    memcpy(w->defined, defined, sizeof(defined));
    w->scanned = true;
}

static void scan_ports(struct tp_watch *w)
{
    for (unsigned i = 0; i < w->d->n_ports_open && i < TP_CFG_MAX_PORTS; i++) {
        struct port_watch *p = &w->ports[i];
        struct rte_eth_stats st;
        if (p->imissed == NULL || rte_eth_stats_get(w->d->ports[i].port.port_id, &st) != 0)
            continue;
        tp_counter_set(p->ipackets, st.ipackets);
        tp_counter_set(p->imissed, st.imissed);
        tp_counter_set(p->ierrors, st.ierrors);
        tp_counter_set(p->rx_nombuf, st.rx_nombuf);
        tp_nic_drops_scan(&p->drops, w->d->cfg->ports[i].name, st.imissed, st.ierrors,
                          st.rx_nombuf);
    }
}

static uint64_t reader_counter(const struct tp_counters *c, const char *name)
{
    const struct tp_counter *k = tp_counters_find(c, name);
    return k != NULL ? tp_counter_get(k) : 0;
}

/* The consumer of pid as the last scan saw it, or NULL. */
static struct consumer *previous(struct tp_watch *w, int pid)
{
    for (unsigned i = 0; i < w->n_consumers; i++)
        if (w->consumers[i].c.pid == pid)
            return &w->consumers[i];
    return NULL;
}

/* Every live consumer's counters segment: <bus.path>/tickplane.<instance>.reader.<pid>. */
static void scan_consumers(struct tp_watch *w)
{
    const struct tp_config *cfg = w->d->cfg;
    const char *dir = cfg->bus.path[0] ? cfg->bus.path : "/dev/shm";
    char prefix[TP_CFG_NAME_MAX + 32];
    snprintf(prefix, sizeof(prefix), "tickplane.%s.reader.", cfg->name);
    static struct consumer found[MAX_CONSUMERS];
    unsigned n = 0;
    DIR *dh = opendir(dir);
    for (struct dirent *e; dh != NULL && n < MAX_CONSUMERS && (e = readdir(dh)) != NULL;) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        int pid = atoi(e->d_name + strlen(prefix));
        /* A consumer killed without closing leaves its segment: count only the living. */
        if (pid <= 0 || (kill(pid, 0) != 0 && errno != EPERM))
            continue;
        char path[512], err[128];
        struct tp_seg seg;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (tp_seg_attach(&seg, path, TP_SEG_COUNTERS, err, sizeof(err)) != 0)
            continue;
        const struct tp_counters *c = seg.data;
        struct consumer *k = &found[n++];
        struct consumer *was = previous(w, pid);
        *k = (struct consumer){.c = {.pid = pid,
                                     .records = reader_counter(c, "reader.records"),
                                     .lag = reader_counter(c, "reader.lag"),
                                     .lapped = reader_counter(c, "reader.lapped"),
                                     .lost = reader_counter(c, "reader.lost"),
                                     .resyncs = reader_counter(c, "reader.resyncs")}};
        tp_seg_close(&seg);
        if (was != NULL) {
            k->limit = was->limit;
            if (k->c.lapped > was->c.lapped)
                tp_log_limited(&k->limit, TP_LOG_CONSUMER, TP_LOG_WARNING,
                               "consumer lapped: pid %d: overtaken %llu times, %llu records lost "
                               "in the last second (%llu, %llu in all)",
                               pid, (unsigned long long)(k->c.lapped - was->c.lapped),
                               (unsigned long long)(k->c.lost - was->c.lost),
                               (unsigned long long)k->c.lapped, (unsigned long long)k->c.lost);
        }
    }
    if (dh != NULL)
        closedir(dh);
    pthread_mutex_lock(&w->consumers_lock);
    memcpy(w->consumers, found, n * sizeof(found[0]));
    w->n_consumers = n;
    pthread_mutex_unlock(&w->consumers_lock);
}

void tp_watch_tick(struct tp_watch *w, uint64_t now_ms)
{
    if (now_ms >= w->next_counters_ms) {
        w->next_counters_ms = now_ms + COUNTER_PERIOD_MS;
        watch_channels(w);
        watch_capacity(w);
    }
    if (now_ms >= w->next_scan_ms) {
        w->next_scan_ms = now_ms + SCAN_PERIOD_MS;
        scan_books(w, realtime_ns());
        scan_ports(w);
        scan_consumers(w);
    }
}

void tp_watch_describe(const struct tp_watch *w, uint32_t id, json_t *obj)
{
    static const char *const names[] = {"ok", "HALTED", "RECOVERING", "STALE"};
    static const char *const reasons[] = {
        "", "the venue halted or paused trading",
        "recovering after a gap (waiting for a snapshot or retransmission)",
        "the handler cannot vouch for this book (a gap given up, or its channel stopped)"};
    if (id >= w->n_books || w->books[id].since_ns == 0)
        return;
    const struct book_watch *b = &w->books[id];
    time_t secs = (time_t)(b->since_ns / 1000000000);
    struct tm tm;
    gmtime_r(&secs, &tm);
    char since[40];
    strftime(since, sizeof(since), "%Y-%m-%dT%H:%M:%SZ", &tm);
    json_object_set_new(obj, "state", json_string(names[b->state]));
    if (b->state != BOOK_OK)
        json_object_set_new(obj, "reason", json_string(reasons[b->state]));
    json_object_set_new(obj, "since", json_string(since));
}

json_t *tp_watch_books(const struct tp_watch *w)
{
    json_t *o = json_object();
    for (unsigned v = 0; v < TP_TPOUT_VENUES; v++)
        if (w->defined[v] > 0)
            json_object_set_new(o, w->d->venue_names[v],
                                json_pack("{s:i, s:i, s:i}", "instruments", (int)w->defined[v],
                                          "stale", (int)w->stale[v], "recovering",
                                          (int)w->recovering[v]));
    return o;
}

json_t *tp_watch_consumers(const struct tp_watch *w)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < w->n_consumers; i++) {
        const struct consumer *k = &w->consumers[i];
        json_array_append_new(a, json_pack("{s:i, s:I, s:I, s:I, s:I, s:I}", "pid", k->c.pid,
                                           "records", (json_int_t)k->c.records, "lag",
                                           (json_int_t)k->c.lag, "lapped", (json_int_t)k->c.lapped,
                                           "lost", (json_int_t)k->c.lost, "resyncs",
                                           (json_int_t)k->c.resyncs));
    }
    return a;
}

unsigned tp_watch_consumers_copy(struct tp_watch *w, struct tp_telemetry_consumer *out,
                                 unsigned max)
{
    pthread_mutex_lock(&w->consumers_lock);
    unsigned n = w->n_consumers < max ? w->n_consumers : max;
    for (unsigned i = 0; i < n; i++) {
        const struct consumer *k = &w->consumers[i];
        out[i] = k->c;
    }
    pthread_mutex_unlock(&w->consumers_lock);
    return n;
}

void tp_watch_consumer_metrics(const struct tp_watch *w, struct tp_prom_buf *b)
{
    static const struct {
        const char *family, *type, *help;
        size_t offset;
    } rows[] = {
        {"tickplane_consumer_records_total", "counter", "Records the consumer read",
         offsetof(struct consumer, c.records)},
        {"tickplane_consumer_lag", "gauge",
         "Records published but not read by the consumer at its last poll",
         offsetof(struct consumer, c.lag)},
        {"tickplane_consumer_lapped_total", "counter", "Times the writer overtook the consumer",
         offsetof(struct consumer, c.lapped)},
        {"tickplane_consumer_lost_total", "counter", "Records the consumer lost to laps",
         offsetof(struct consumer, c.lost)},
        {"tickplane_consumer_resyncs_total", "counter",
         "Books the consumer rebuilt from the state table", offsetof(struct consumer, c.resyncs)},
    };
    for (size_t r = 0; r < sizeof(rows) / sizeof(rows[0]); r++) {
        tp_prom_family(b, rows[r].family, rows[r].type, rows[r].help);
        for (unsigned i = 0; i < w->n_consumers; i++) {
            const struct consumer *k = &w->consumers[i];
            uint64_t v;
            memcpy(&v, (const char *)k + rows[r].offset, sizeof(v));
            char labels[64];
            snprintf(labels, sizeof(labels), "pid=\"%d\"", k->c.pid);
            tp_prom_sample(b, rows[r].family, labels, w->d->cfg->name, v);
        }
    }
}

void tp_watch_close(struct tp_watch *w)
{
    if (w == NULL)
        return;
    pthread_mutex_destroy(&w->consumers_lock);
    free(w->books);
    free(w);
}
