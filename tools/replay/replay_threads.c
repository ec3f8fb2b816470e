/* tickplane-replay --threads (see replay_threads.h). */
#include "replay_threads.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "binaryfile.h"
#include "itch50.h"
#include "net_build.h"
#include "pcap_reader.h"
#include "tickplane/event_file.h"

#define LOCATES       65536
#define LOG_BYTES     (8u << 20) /* a worker's log: far more than a burst of messages makes */
#define FRAME_MAX     262144
#define LINK_ETHERNET 1
/* Messages the planning pass counts: enough to weigh 2000 instruments by their traffic (on the
 * simulator's 5 M-message day the cut from the first 100,000 is within 0.1% of the whole day's),
 * and it keeps the pass a fixed cost on a day of hundreds of millions. */
#define PLAN_SAMPLE (1u << 20)

/*
 * The planning pass: ids in the order stock directories first bind their locates (as the registry
 * gives them, filters and redefinitions aside: only the balance depends on it), and each id's
 * messages.
 */
struct census {
    uint32_t id_of[LOCATES]; /* id + 1 by locate; 0: not bound yet */
    uint32_t ids;
    uint32_t capacity;
    uint32_t seen;      /* messages counted, up to PLAN_SAMPLE */
    uint64_t *messages; /* by id */
};

/* One message more, while the sample is not full. */
static bool census_message(void *ctx, const uint8_t *msg, uint16_t len)
{
    struct census *c = ctx;
    c->seen++;
    if (len < 3)
        return c->seen < PLAN_SAMPLE;
    uint16_t locate = tp_itch_stock_locate(msg);
    if (msg[0] == TP_ITCH_STOCK_DIRECTORY) {
        if (c->id_of[locate] == 0 && c->ids < c->capacity)
            c->id_of[locate] = ++c->ids;
    } else if (c->id_of[locate] != 0) {
        c->messages[c->id_of[locate] - 1]++;
    }
    return c->seen < PLAN_SAMPLE;
}

/* The messages of a pcap, both lines' copies alike; 0, or -1 if its venue does not split its
 * captures over workers (replay_venue.each_message). */
static int census_pcap(struct census *c, const struct replay_venue *venue, bool verify_checksum,
                       const uint8_t *data, size_t len)
{
    struct tp_pcap_reader rd;
    struct tp_pcap_record rec;
    int st = tp_pcap_reader_open_memory(&rd, data, len, FRAME_MAX, UINT32_MAX);

    if (st == TP_PCAP_OK && rd.link_type != LINK_ETHERNET)
        st = TP_PCAP_EMAGIC;
    while (st == TP_PCAP_OK && (st = tp_pcap_reader_next(&rd, &rec)) == TP_PCAP_OK) {
        struct tp_udp_view u;
        /* The venue is told from the first datagram the replay takes, as replay_run does. */
        if (tp_net_parse_udp(rec.data, rec.caplen, 0, &u) != 0 ||
            (verify_checksum && !tp_udp_checksum_ok(&u)))
            continue;
        if (venue == NULL)
            venue = replay_venue_detect(&u);
        if (venue == NULL || venue->each_message == NULL)
            break;
        venue->each_message(&u, census_message, c);
        if (c->seen == PLAN_SAMPLE)
            break;
    }
    tp_pcap_reader_close(&rd);
    return venue != NULL && venue->each_message != NULL ? 0 : -1;
}

/*
 * The lead's part of the messages when it frames for n workers (BinaryFILE): framing plus its
 * part of the books takes as long as another worker's part, lead = (1 - (n - 1) f) / n with f
 * the framing's cost over the books' (FRAMING_PER_APPLY: the value that ran fastest on two idle
 * cores, below the 0.3 the workers' CPU times give: a worker's books cost more beside the lead's
 * framing than alone; docs/BENCHMARKS.md).
 */
#define FRAMING_PER_APPLY 0.20

static double lead_share(uint32_t n)
{
    double lead = (1 - (n - 1) * FRAMING_PER_APPLY) / n;
    return lead > 0 ? lead : 0;
}

uint32_t replay_threads_plan(struct replay_share *share, uint32_t threads,
                             const struct replay_params *p, const uint8_t *data, size_t len)
{
    struct census *c = calloc(1, sizeof(*c));
    uint32_t n = 1;

    share[0] = (struct replay_share){.first_id = 0, .end_id = p->instruments, .lead = true};
    if (c == NULL || (c->messages = calloc(p->instruments ? p->instruments : 1, 8)) == NULL ||
        threads < 2) {
        free(c ? c->messages : NULL);
        free(c);
        return 1;
    }
    c->capacity = p->instruments;
    int pcap = p->format == REPLAY_FORMAT_PCAP ||
               (p->format == REPLAY_FORMAT_AUTO && replay_is_pcap(data, len));
    int split = 1;
    if (pcap) {
        split = census_pcap(c, p->venue, !p->no_checksum, data, len) == 0;
    } else {
        struct tp_binfile_reader rd;
        const uint8_t *msg;
        uint16_t l;
        tp_binfile_reader_init(&rd, data, len);
        while (c->seen < PLAN_SAMPLE && tp_binfile_next(&rd, &msg, &l) == 1)
            census_message(c, msg, l);
    }
    if (split && c->ids >= 2) {
        /* Every id weighs one more than its messages: windows of idle instruments stay apart. */
        uint64_t total = 0, acc = 0;
        n = threads < c->ids ? threads : c->ids;
        for (uint32_t id = 0; id < c->ids; id++)
            total += c->messages[id] + 1;
        double lead = pcap ? 1.0 / n : lead_share(n);
        uint32_t w = 1;
        for (uint32_t id = 0; id < c->ids; id++) {
            acc += c->messages[id] + 1;
            double cut = (double)total * (lead + (w - 1) * (1 - lead) / (n - 1));
            /* Cut after this id once the share is reached, leaving an id for each window left. */
            if (w < n && ((double)acc >= cut || c->ids - id - 1 == n - w)) {
                share[w - 1].end_id = id + 1;
                share[w] = (struct replay_share){.first_id = id + 1, .end_id = p->instruments};
                w++;
            }
        }
    }
    free(c->messages);
    free(c);
    return n;
}

/* The books' recent-order window for max_orders when none is asked for (tp_books.h). */
static uint32_t default_window(uint32_t max_orders)
{
    uint64_t w = (uint64_t)max_orders * TP_RECENT_ORDERS_PER_ORDER;
    return w > TP_RECENT_ORDERS_DEFAULT_MAX ? TP_RECENT_ORDERS_DEFAULT_MAX : (uint32_t)w;
}

/* BinaryFILE: the lead frames for every worker (replay_share.h). */
static int open_handoff(struct replay_threads *t, uint32_t instruments)
{
    uint8_t *owner_of = malloc(instruments ? instruments : 1);
    int rc;

    if (owner_of == NULL)
        return -ENOMEM;
    for (uint32_t w = 0; w < t->workers; w++)
        for (uint32_t id = t->share[w].first_id; id < t->share[w].end_id; id++)
            owner_of[id] = (uint8_t)w;
    rc = replay_handoff_open(&t->handoff, t->workers, owner_of, instruments);
    free(owner_of);
    for (uint32_t w = 0; rc == 0 && w < t->workers; w++) {
        t->share[w].handoff = t->handoff;
        t->share[w].worker = w;
    }
    return rc;
}

int replay_threads_open(struct replay_threads *t, const struct replay_threads_params *p,
                        uint32_t workers, const struct replay_share *share, const uint8_t *data,
                        size_t len, char *err, size_t err_len)
{
    int rc;

    memset(t, 0, sizeof(*t));
    /* Each worker's replay and share on lines of their own (REPLAY_WORKER_ALIGN). */
    t->replay = aligned_alloc(REPLAY_WORKER_ALIGN, workers * sizeof(*t->replay));
    t->share = aligned_alloc(REPLAY_WORKER_ALIGN, workers * sizeof(*t->share));
    if (t->replay)
        memset(t->replay, 0, workers * sizeof(*t->replay));
    if (t->share)
        memset(t->share, 0, workers * sizeof(*t->share));
    t->events = calloc(workers, sizeof(*t->events));
    t->log = calloc(workers, sizeof(*t->log));
    t->sink = calloc(workers, sizeof(*t->sink));
    t->cpu_seconds = calloc(workers, sizeof(*t->cpu_seconds));
    if (!t->replay || !t->share || !t->events || !t->log || !t->sink || !t->cpu_seconds) {
        snprintf(err, err_len, "%s", strerror(ENOMEM));
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < workers; i++) {
        struct replay_params rp = p->replay;
        t->share[i] = share[i];
        /* One worker is the replay of one thread, its fast path included. */
        rp.share = workers > 1 ? &t->share[i] : NULL;
        /* An equal part of the live orders and of the recent-order window: the windows are cut
         * to equal shares of the messages, and the books round a table to a power of two, which
         * an equal part of one keeps (a part by weight a little over half doubled the memory). */
        if (workers > 1) {
            uint32_t window = p->replay.recent_orders ? p->replay.recent_orders
                                                      : default_window(p->replay.orders);
            rp.orders = p->replay.orders / workers;
            rp.recent_orders = window / workers < 2 ? 2 : window / workers;
        }
        rp.warnings = share[i].lead ? p->replay.warnings : NULL;
        t->workers = i + 1;
        rc = replay_open(&t->replay[i], &rp, data, len);
        if (rc != 0) {
            snprintf(err, err_len, "%s", replay_error(&t->replay[i], rc));
            return rc;
        }
        if (p->events == NULL)
            continue;
        struct replay_events_params ep = *p->events;
        ep.books = t->replay[i].books;
        ep.registry = t->replay[i].registry;
        ep.key = &t->share[i].key;
        if (workers > 1 && (rc = replay_log_open(&t->log[i], LOG_BYTES)) != 0) {
            snprintf(err, err_len, "%s", strerror(ENOMEM));
            return rc;
        }
        ep.log = t->log[i];
        if ((rc = replay_events_open(&t->events[i], &ep, err, err_len)) != 0) {
            t->events_failed = 1;
            return rc;
        }
        t->share[i].log = t->log[i];
        t->sink[i] = replay_events_sink(t->events[i]);
        replay_set_output(&t->replay[i], &t->sink[i]);
    }
    if (workers > 1 && t->replay[0].format == REPLAY_FORMAT_BINARYFILE &&
        (rc = open_handoff(t, p->replay.instruments)) != 0) {
        snprintf(err, err_len, "%s", strerror(-rc));
        return rc;
    }
    if (p->events != NULL && workers > 1) {
        t->file = calloc(1, sizeof(*t->file));
        rc = t->file ? tp_event_file_writer_open(t->file, p->events->file, p->events->file_flags)
                     : -ENOMEM;
        if (rc != 0) {
            snprintf(err, err_len, "writing the event file: %s", strerror(-rc));
            t->events_failed = 1;
            return rc;
        }
    }
    return 0;
}

struct worker {
    struct replay_threads *t;
    uint32_t index;
    pthread_t thread;
    int rc;        /* replay_run's */
    int events_rc; /* the event file's, with err */
    struct replay_events_counters events;
    char err[256];
};

static void *work(void *arg)
{
    struct worker *w = arg;
    struct replay *r = &w->t->replay[w->index];

    w->rc = replay_run(r);
    struct timespec cpu;
    if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu) == 0)
        w->t->cpu_seconds[w->index] = (double)cpu.tv_sec + cpu.tv_nsec * 1e-9;
    if (w->t->events[w->index] != NULL) {
        /* What the close publishes comes after every message. */
        w->t->share[w->index].key = ++w->t->share[w->index].seq;
        w->events_rc =
            replay_events_close(w->t->events[w->index], &w->events, w->err, sizeof(w->err));
        w->t->events[w->index] = NULL;
    }
    if (w->t->log[w->index] != NULL)
        replay_log_end(w->t->log[w->index]);
    return NULL;
}

static void pause_briefly(void)
{
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}

/*
 * The logs into the file: the smallest key first, of equal keys the lower worker's; an entry
 * goes only once no worker can still make one before it (a worker with nothing visible will make
 * none below its promise + 1). The entries of one worker go in runs: up to the first (key, worker)
 * another worker's head or promise puts before them, with no look at the others in between.
 */
static void merge(struct replay_threads *t)
{
    const struct replay_log_entry *head[REPLAY_THREADS_MAX];
    uint64_t done[REPLAY_THREADS_MAX];

    for (;;) {
        uint32_t best = UINT32_MAX, ended = 0;
        for (uint32_t i = 0; i < t->workers; i++) {
            head[i] = replay_log_peek(t->log[i], &done[i]);
            if (head[i] == NULL)
                ended += done[i] == REPLAY_LOG_DONE_ALL;
            else if (best == UINT32_MAX || head[i]->key < head[best]->key)
                best = i;
        }
        if (best == UINT32_MAX) {
            if (ended == t->workers)
                return;
            pause_briefly();
            continue;
        }
        /* The first (key, worker) of the others: an entry of best goes if it is before it. */
        uint64_t bound = UINT64_MAX;
        uint32_t bound_worker = UINT32_MAX;
        for (uint32_t i = 0; i < t->workers; i++) {
            uint64_t k = head[i] != NULL                  ? head[i]->key
                         : done[i] == REPLAY_LOG_DONE_ALL ? UINT64_MAX
                                                          : done[i] + 1;
            if (i != best && (k < bound || (k == bound && i < bound_worker))) {
                bound = k;
                bound_worker = i;
            }
        }
        const struct replay_log_entry *e = head[best];
        uint64_t best_done;
        if (!(e->key < bound || (e->key == bound && best < bound_worker))) {
            pause_briefly();
            continue;
        }
        do {
            if (e->kind == REPLAY_LOG_RECORD)
                tp_event_file_write(t->file, e->topic, e + 1, e->length);
            else
                replay_events_end_of_event(t->file);
            replay_log_pop(t->log[best]);
        } while ((e = replay_log_peek(t->log[best], &best_done)) != NULL &&
                 (e->key < bound || (e->key == bound && best < bound_worker)));
    }
}

int replay_threads_run(struct replay_threads *t, int *events_rc, char *err, size_t err_len)
{
    struct worker w[REPLAY_THREADS_MAX];
    int rc = 0;
    uint32_t started = 0;

    *events_rc = 0;

    for (uint32_t i = 0; i < t->workers; i++)
        w[i] = (struct worker){.t = t, .index = i};
    if (t->workers == 1) {
        work(&w[0]); /* on this thread, as ever */
        t->events_out = w[0].events;
    }
    for (uint32_t i = 0; t->workers > 1 && i < t->workers; i++) {
        if (pthread_create(&w[i].thread, NULL, work, &w[i]) != 0) {
            /* The workers not started end their logs, so the merge still ends. */
            for (uint32_t j = i; j < t->workers; j++) {
                w[j].rc = -EAGAIN;
                if (t->log[j] != NULL)
                    replay_log_end(t->log[j]);
            }
            break;
        }
        started++;
    }
    if (t->file != NULL)
        merge(t);
    for (uint32_t i = 0; i < started; i++)
        pthread_join(w[i].thread, NULL);
    for (uint32_t i = 0; i < t->workers; i++) {
        if (t->workers > 1) {
            t->events_out.skipped += w[i].events.skipped;
            t->events_out.too_large += w[i].events.too_large;
        }
        rc = rc ? rc : w[i].rc;
        if (*events_rc == 0 && w[i].events_rc != 0) {
            *events_rc = w[i].events_rc;
            snprintf(err, err_len, "%s", w[i].err);
        }
    }
    if (t->file != NULL) {
        int frc = tp_event_file_finish(t->file);
        t->events_out.records = t->file->records;
        t->events_out.bytes = t->file->bytes;
        if (frc != 0 && *events_rc == 0) {
            *events_rc = frc;
            snprintf(err, err_len, "writing the event file: %s", strerror(-frc));
        }
    }
    return rc;
}

const struct replay *replay_threads_owner(const struct replay_threads *t, uint32_t id)
{
    for (uint32_t i = 1; i < t->workers; i++)
        if (id < t->share[i].first_id)
            return &t->replay[i - 1];
    return &t->replay[t->workers - 1];
}

void replay_threads_close(struct replay_threads *t)
{
    for (uint32_t i = 0; i < t->workers; i++) {
        if (t->events && t->events[i] != NULL)
            replay_events_close(t->events[i], NULL, (char[8]){0}, 8);
        if (t->log)
            replay_log_close(t->log[i]);
        if (t->replay)
            replay_close(&t->replay[i]);
    }
    replay_handoff_close(t->handoff);
    free(t->cpu_seconds);
    free(t->file);
    free(t->sink);
    free(t->log);
    free(t->events);
    free(t->share);
    free(t->replay);
    memset(t, 0, sizeof(*t));
}
