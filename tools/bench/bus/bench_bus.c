/*
 * Shared-memory bus benchmark. One JSON object per line:
 *   pingpong        a bare cache line bounced between the two cores: the one-way floor;
 *   rte_ring        DPDK's rte_ring, single producer / single consumer: throughput and one-way;
 *   bus_throughput  events/s a writer publishes with 0, 1, 2, 4 readers reading (and what they
 *                   lost), records visible one by one (burst 0) or 32 at a time;
 *   bus_throughput_zero_loss  the same, the writer held back so that no reader loses anything;
 *   bus_latency     one-way publish -> reader latency with 1, 2, 4 readers (paced writer);
 *   client          the same through libtickplane: tpout Trade messages, tp_poll, the trades view
 *                   and the strategy's callback (throughput and one-way latency, one reader);
 *   client_inthread writer and reader on one thread: 4000 Trades published, then tp_poll one
 *                   event at a time until empty (best of 200 rounds), and the cost of a tp_poll
 *                   that finds nothing: the library's own CPU cost, without cache transfers.
 * The writer runs on CPU 0, every reader on CPU 1 (this is a 2-core machine). Latency series
 * also give body_mean_ns, the mean of the samples up to their p90: the TSC of this VM moves in
 * steps of about 10 ns, so a p50 is one of few values while this mean separates close builds.
 *
 * Usage: bench_bus [--quick] [--rt] [--zero-loss-only | --latency-only] [--ring BYTES] [--dir DIR]
 *                  [--payload BYTES]
 *   --rt  run the measuring threads SCHED_FIFO (root): on a shared, busy machine this keeps
 *         other processes off the two cores for the few seconds of the run.
 *   --zero-loss-only  only the two 1-reader zero-loss throughput runs.
 *   --latency-only    only the floor, the 1-reader bus and client latencies and client_inthread
 *                     (a short run, so that the vCPU placement rarely changes inside it).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <rte_ring.h>

#include "bus/bus.h"
#include "tpout_sbe.h"
#include "tickplane/tickplane.h"
#include "util/histogram.h"

#define MAX_READERS 4
#define WRITER_CPU  0
#define READER_CPU  1

static double ns_per_tick;
static const char *shm_dir = "/dev/shm";
static uint32_t payload_bytes = 40; /* 24-byte header + 40 = a 64-byte record */
static uint64_t throughput_events = 20000000;
static int zero_loss_only;
static uint64_t latency_samples = 200000;
static int latency_only;
static uint64_t ring_bytes_opt = 1 << 18; /* fits the 1 MiB L2 of each core */
static int realtime;

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    if (realtime) {
        struct sched_param sp = {.sched_priority = 1};
        pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
    }
}

/* The main thread measures on WRITER_CPU; between runs it returns to normal scheduling. */
static void unpin(void)
{
    struct sched_param sp = {.sched_priority = 0};
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void calibrate_tsc(void)
{
    uint64_t t0 = now_ns(), c0 = __rdtsc();
    while (now_ns() - t0 < 200000000ull)
        ;
    uint64_t t1 = now_ns(), c1 = __rdtsc();
    ns_per_tick = (double)(t1 - t0) / (double)(c1 - c0);
}

static void spin_ticks(uint64_t ticks)
{
    uint64_t end = __rdtsc() + ticks;
    while (__rdtsc() < end)
        _mm_pause();
}

/* Raw latency samples (ticks) of one series, for body_mean_ns. */
struct samples {
    uint64_t *v;
    uint64_t n;
};

static void samples_reset(struct samples *s)
{
    if (s->v == NULL)
        s->v = malloc(latency_samples * sizeof(*s->v));
    if (s->v == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    s->n = 0;
}

static inline void samples_add(struct samples *s, uint64_t ticks)
{
    if (s->n < latency_samples)
        s->v[s->n++] = ticks;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Mean of the samples up to the 90th percentile, in ns (sorts the samples). */
static double samples_body_mean_ns(struct samples *s)
{
    if (s->n == 0)
        return 0;
    qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
    uint64_t body = (s->n * 9 + 9) / 10, sum = 0;
    for (uint64_t i = 0; i < body; i++)
        sum += s->v[i];
    return (double)sum / (double)body * ns_per_tick;
}

/* ---- ping-pong: the physical floor ------------------------------------------------------- */

static struct {
    _Alignas(64) _Atomic uint64_t ping;
    _Alignas(64) _Atomic uint64_t pong;
    uint64_t rounds;
} pp;

static void *pong_thread(void *arg)
{
    (void)arg;
    pin(READER_CPU);
    for (uint64_t k = 1; k <= pp.rounds; k++) {
        while (atomic_load_explicit(&pp.ping, memory_order_acquire) != k)
            ;
        atomic_store_explicit(&pp.pong, k, memory_order_release);
    }
    return NULL;
}

static void bench_pingpong(void)
{
    static struct tp_histogram h;
    static struct samples raw;
    tp_hist_reset(&h);
    samples_reset(&raw);
    pp.rounds = latency_samples;
    atomic_store(&pp.ping, 0);
    atomic_store(&pp.pong, 0);
    pthread_t t;
    pthread_create(&t, NULL, pong_thread, NULL);
    pin(WRITER_CPU);
    uint64_t start = __rdtsc();
    for (uint64_t k = 1; k <= pp.rounds; k++) {
        uint64_t t0 = __rdtsc();
        atomic_store_explicit(&pp.ping, k, memory_order_release);
        while (atomic_load_explicit(&pp.pong, memory_order_acquire) != k)
            ;
        uint64_t one_way = (__rdtsc() - t0) / 2; /* half the round trip */
        tp_hist_record(&h, one_way);
        samples_add(&raw, one_way);
    }
    uint64_t total = __rdtsc() - start;
    pthread_join(t, NULL);
    printf("{\"bench\":\"pingpong\",\"rounds\":%llu,\"one_way_mean_ns\":%.1f,"
           "\"body_mean_ns\":%.1f,\"one_way_ns\":",
           (unsigned long long)pp.rounds, (double)total * ns_per_tick / 2.0 / (double)pp.rounds,
           samples_body_mean_ns(&raw));
    tp_hist_print_json(stdout, &h, ns_per_tick);
    printf("}\n");
    fflush(stdout);
    unpin();
}

/* ---- DPDK rte_ring SP/SC (no EAL: the ring lives in ordinary memory) ---------------------- */

static struct {
    struct rte_ring *ring;
    uint64_t count;
    int paced;
    _Atomic int ready;
    struct tp_histogram hist;
} rr;

static void *rte_consumer(void *arg)
{
    (void)arg;
    pin(READER_CPU);
    atomic_store(&rr.ready, 1);
    void *objs[32];
    uint64_t got = 0;
    while (got < rr.count) {
        unsigned n = rte_ring_sc_dequeue_burst(rr.ring, objs, 32, NULL);
        if (rr.paced && n > 0) {
            uint64_t now = __rdtsc();
            for (unsigned i = 0; i < n; i++)
                tp_hist_record(&rr.hist, now - (uint64_t)(uintptr_t)objs[i]);
        }
        got += n;
    }
    return NULL;
}

static void bench_rte_ring(void)
{
    size_t size = (size_t)rte_ring_get_memsize(1 << 16);
    rr.ring = aligned_alloc(64, (size + 63) / 64 * 64);
    if (rte_ring_init(rr.ring, "bench", 1 << 16, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0) {
        printf("{\"bench\":\"rte_ring\",\"error\":\"rte_ring_init failed\"}\n");
        free(rr.ring);
        return;
    }
    /* Throughput: single-object enqueues, burst dequeues. */
    rr.count = throughput_events;
    rr.paced = 0;
    atomic_store(&rr.ready, 0);
    pthread_t t;
    pthread_create(&t, NULL, rte_consumer, NULL);
    while (!atomic_load(&rr.ready))
        sched_yield();
    pin(WRITER_CPU);
    uint64_t t0 = now_ns();
    for (uint64_t i = 1; i <= rr.count; i++)
        while (rte_ring_sp_enqueue(rr.ring, (void *)(uintptr_t)i) != 0)
            ;
    pthread_join(t, NULL);
    double secs = (double)(now_ns() - t0) / 1e9;
    /* One-way latency: paced single enqueues carrying the TSC. */
    tp_hist_reset(&rr.hist);
    rr.count = latency_samples;
    rr.paced = 1;
    atomic_store(&rr.ready, 0);
    unpin(); /* a new thread inherits this one's core and policy until it pins itself */
    pthread_create(&t, NULL, rte_consumer, NULL);
    while (!atomic_load(&rr.ready))
        sched_yield();
    pin(WRITER_CPU);
    uint64_t gap = (uint64_t)(2000.0 / ns_per_tick);
    for (uint64_t i = 0; i < rr.count; i++) {
        spin_ticks(gap);
        rte_ring_sp_enqueue(rr.ring, (void *)(uintptr_t)__rdtsc());
    }
    pthread_join(t, NULL);
    printf("{\"bench\":\"rte_ring_spsc\",\"events\":%llu,\"mevents_per_s\":%.1f,\"one_way_ns\":",
           (unsigned long long)throughput_events, (double)throughput_events / secs / 1e6);
    tp_hist_print_json(stdout, &rr.hist, ns_per_tick);
    printf("}\n");
    fflush(stdout);
    free(rr.ring);
    unpin();
}

/* ---- the bus ------------------------------------------------------------------------------ */

struct reader_ctx {
    pthread_t thread;
    const char *instance;
    _Atomic int ready;
    int paced;
    int share_core;      /* other readers run on the same core: yield when idle */
    uint64_t idle_ticks; /* pause this long when nothing is new (0: poll continuously) */
    _Alignas(64) _Atomic uint64_t progress; /* last sequence read (for --zero-loss pacing) */
    uint64_t records;
    uint64_t lost;
    uint64_t lapped;
    uint64_t out_of_order;
    double seconds;
    struct tp_histogram hist;
    struct samples raw;
    _Alignas(64) uint8_t batch[65536];
};

static _Atomic int writer_done;
static _Atomic uint64_t writer_last;

static void *bus_reader(void *arg)
{
    struct reader_ctx *c = arg;
    pin(READER_CPU);
    char err[256];
    struct tp_bus_reader b;
    struct tp_ring_reader r;
    if (tp_bus_reader_open(&b, shm_dir, c->instance, err, sizeof(err)) != 0 ||
        tp_ring_reader_init(&r, b.ring_mem, c->batch, sizeof(c->batch)) != 0) {
        fprintf(stderr, "reader: %s\n", err);
        exit(1);
    }
    atomic_store(&c->ready, 1);
    uint64_t expect = 1, t0 = 0;
    for (;;) {
        const struct tp_ring_record *rec;
        uint64_t lost;
        int rc = tp_ring_read(&r, &rec, &lost);
        if (rc == TP_RING_RECORD) {
            if (c->paced) {
                uint64_t sent;
                memcpy(&sent, tp_ring_payload(rec), sizeof(sent));
                uint64_t ticks = __rdtsc() - sent;
                tp_hist_record(&c->hist, ticks);
                samples_add(&c->raw, ticks);
            }
            if (t0 == 0)
                t0 = now_ns();
            c->out_of_order += rec->sequence != expect;
            expect = rec->sequence + 1;
            c->records++;
            if ((c->records & 255) == 0)
                atomic_store_explicit(&c->progress, rec->sequence, memory_order_relaxed);
        } else if (rc == TP_RING_LAPPED) {
            c->lapped++;
            c->lost += lost;
            expect += lost;
        } else if (atomic_load_explicit(&writer_done, memory_order_acquire) &&
                   expect > atomic_load(&writer_last)) {
            break;
        } else if (c->share_core) {
            sched_yield(); /* several readers share one core: let the others run when idle */
        } else if (c->idle_ticks) {
            spin_ticks(c->idle_ticks); /* let the writer get ahead: then whole lines arrive */
        }
    }
    c->seconds = (double)(now_ns() - t0) / 1e9;
    tp_bus_reader_close(&b);
    return NULL;
}

/* The bench instance: 1024 instruments, records up to 1 KiB. Exits on failure. */
static void open_writer(struct tp_bus_writer *w, uint64_t ring_bytes)
{
    char err[256];
    struct tp_bus_params p = {.instance = "bench",
                              .dir = shm_dir,
                              .ring_bytes = ring_bytes,
                              .max_record = 1024,
                              .instruments = 1024,
                              .depth = 10,
                              .counters = 16,
                              .mode = 0600,
                              .gid = (gid_t)-1};
    if (tp_bus_writer_open(w, &p, err, sizeof(err)) != 0) {
        fprintf(stderr, "writer: %s\n", err);
        exit(1);
    }
}

/*
 * readers: reader threads; paced: latency run (one event every 2 us carrying its TSC), else
 * throughput run; burst: 0 = every record visible at once (tp_bus_commit), N = records made
 * visible N at a time (tp_bus_commit_deferred + tp_bus_flush), as a data lcore does per rx burst.
 * zero_loss: the benchmark (not the bus: its writer never waits) holds the writer back whenever
 * a reader is more than half a ring behind, which measures the rate at which readers keep up.
 */
static void run_bus(int readers, int paced, uint64_t ring_bytes, unsigned burst, int zero_loss,
                    unsigned idle_ns)
{
    static struct reader_ctx ctx[MAX_READERS];
    struct tp_bus_writer w;
    open_writer(&w, ring_bytes);
    atomic_store(&writer_done, 0);
    atomic_store(&writer_last, 0);
    for (int i = 0; i < readers; i++) {
        memset(&ctx[i], 0, offsetof(struct reader_ctx, raw));
        samples_reset(&ctx[i].raw);
        ctx[i].instance = "bench";
        ctx[i].paced = paced;
        ctx[i].share_core = readers > 1;
        ctx[i].idle_ticks = (uint64_t)(idle_ns / ns_per_tick);
        tp_hist_reset(&ctx[i].hist);
        pthread_create(&ctx[i].thread, NULL, bus_reader, &ctx[i]);
    }
    for (int i = 0; i < readers; i++)
        while (!atomic_load(&ctx[i].ready))
            sched_yield();
    pin(WRITER_CPU);
    uint64_t n = paced ? latency_samples : throughput_events;
    uint64_t gap = (uint64_t)(2000.0 / ns_per_tick);
    uint64_t t0 = now_ns();
    uint64_t window = ring_bytes / 2 / ((TP_RING_RECORD_HEADER + payload_bytes + 7) & ~7u);
    for (uint64_t i = 1; i <= n; i++) {
        if (paced)
            spin_ticks(gap);
        if (zero_loss && (i & 255) == 0)
            for (int k = 0; k < readers; k++)
                while (i - atomic_load_explicit(&ctx[k].progress, memory_order_relaxed) > window)
                    _mm_pause();
        uint8_t *dst = tp_bus_claim(&w, (uint32_t)(i & 1023), payload_bytes);
        uint64_t stamp = paced ? __rdtsc() : i;
        memcpy(dst, &stamp, sizeof(stamp));
        memcpy(dst + 8, &i, sizeof(i));
        if (burst == 0) {
            tp_bus_commit(&w, TP_REC_RAW, TP_TOPIC_DEPTH, (uint32_t)(i & 1023), 0);
        } else {
            tp_bus_commit_deferred(&w, TP_REC_RAW, TP_TOPIC_DEPTH, (uint32_t)(i & 1023), 0);
            if (i % burst == 0)
                tp_bus_flush(&w);
        }
    }
    tp_bus_flush(&w);
    double wsecs = (double)(now_ns() - t0) / 1e9;
    atomic_store(&writer_last, n);
    atomic_store_explicit(&writer_done, 1, memory_order_release);
    for (int i = 0; i < readers; i++)
        pthread_join(ctx[i].thread, NULL);

    if (!paced) {
        printf("{\"bench\":\"%s\",\"readers\":%d,\"burst\":%u,\"reader_idle_pause_ns\":%u,"
               "\"record_bytes\":%u,"
               "\"ring_bytes\":%llu,\"events\":%llu,\"writer_mevents_per_s\":%.1f,\"per_reader\":[",
               zero_loss ? "bus_throughput_zero_loss" : "bus_throughput", readers, burst, idle_ns,
               (TP_RING_RECORD_HEADER + payload_bytes + 7) & ~7u, (unsigned long long)ring_bytes,
               (unsigned long long)n, (double)n / wsecs / 1e6);
        for (int i = 0; i < readers; i++)
            printf("%s{\"received\":%llu,\"lost\":%llu,\"lapped\":%llu,\"out_of_order\":%llu,"
                   "\"mevents_per_s\":%.1f}",
                   i ? "," : "", (unsigned long long)ctx[i].records,
                   (unsigned long long)ctx[i].lost, (unsigned long long)ctx[i].lapped,
                   (unsigned long long)ctx[i].out_of_order,
                   (double)ctx[i].records / ctx[i].seconds / 1e6);
        printf("]}\n");
    } else {
        static struct tp_histogram all;
        tp_hist_reset(&all);
        uint64_t lost = 0;
        for (int i = 0; i < readers; i++) {
            tp_hist_merge(&all, &ctx[i].hist);
            lost += ctx[i].lost;
        }
        printf("{\"bench\":\"bus_latency\",\"readers\":%d,\"record_bytes\":%u,\"gap_ns\":2000,"
               "\"lost\":%llu,\"body_mean_ns\":%.1f,\"one_way_ns\":",
               readers, (TP_RING_RECORD_HEADER + payload_bytes + 7) & ~7u, (unsigned long long)lost,
               readers == 1 ? samples_body_mean_ns(&ctx[0].raw) : 0.0);
        tp_hist_print_json(stdout, &all, ns_per_tick);
        printf("}\n");
    }
    fflush(stdout);
    tp_bus_writer_close(&w, 1);
    unpin();
}

/* ---- the same through libtickplane: publish tpout Trade -> tp_poll -> callback ------------ */

struct client_ctx {
    _Atomic int ready;
    int paced;
    uint64_t events;
    uint64_t lost;
    double seconds;
    struct tp_histogram hist;
    struct samples raw;
};

static void on_trade(void *user, const struct tp_event *ev)
{
    struct client_ctx *c = user;
    if (ev->topic == TP_TOPIC_LOSS) {
        c->lost += ev->u.lost;
        return;
    }
    if (c->paced) {
        uint64_t ticks = __rdtsc() - ev->recv_tsc;
        tp_hist_record(&c->hist, ticks);
        samples_add(&c->raw, ticks);
    }
    c->events++;
}

#define TRADE_LEN          (TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + TPOUT_TRADE_BLOCK_LENGTH)
#define TRADE_RECORD_BYTES ((TP_RING_RECORD_HEADER + TRADE_LEN + 7) & ~7u)

/*
 * Publish the i-th tpout Trade (instrument i mod 1024). recv_tsc: the TSC now (stamp != 0), taken
 * just before the commit as bus_latency does, so both measure publish-to-read; else i.
 */
static void publish_trade(struct tp_bus_writer *w, uint64_t i, int stamp)
{
    uint32_t id = (uint32_t)(i & 1023);
    struct tpout_trade m;
    tpout_trade_wrap_and_apply_header(&m, tp_bus_claim(w, id, TRADE_LEN), TRADE_LEN);
    tpout_trade_set_instrument_id(&m, id);
    tpout_trade_set_price_mantissa(&m, (int64_t)i);
    tpout_trade_set_quantity(&m, 1);
    tpout_trade_set_recv_tsc(&m, stamp ? __rdtsc() : i);
    tp_bus_commit(w, TP_REC_SBE, TP_TOPIC_TRADES, id, 0);
}

/* A libtickplane reader of the bench instance subscribed to every instrument's trades. */
static struct tp_client *attach_trades_reader(void)
{
    char err[256] = "subscribe failed";
    struct tp_client *tp;
    struct tp_client_options opt = {.shm_dir = shm_dir, .no_reader_segment = 1};
    if (tp_attach(&tp, "bench", &opt, err, sizeof(err)) != 0 ||
        tp_subscribe(tp, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_TRADES)) != 0) {
        fprintf(stderr, "client: %s\n", err);
        exit(1);
    }
    return tp;
}

static void *client_reader(void *arg)
{
    struct client_ctx *c = arg;
    pin(READER_CPU);
    struct tp_client *tp = attach_trades_reader();
    atomic_store(&c->ready, 1);
    uint64_t t0 = 0;
    struct tp_client_stats st;
    for (;;) {
        int n = tp_poll(tp, on_trade, c, 64);
        if (n > 0 && t0 == 0)
            t0 = now_ns();
        if (n == 0 && atomic_load_explicit(&writer_done, memory_order_acquire)) {
            tp_stats(tp, &st);
            if (st.lag == 0 && tp_poll(tp, on_trade, c, 64) == 0)
                break;
        }
    }
    c->seconds = (double)(now_ns() - t0) / 1e9;
    tp_detach(tp);
    return NULL;
}

static void run_client(int paced)
{
    static struct client_ctx ctx;
    struct tp_bus_writer w;
    open_writer(&w, ring_bytes_opt);
    memset(&ctx, 0, offsetof(struct client_ctx, hist));
    ctx.paced = paced;
    tp_hist_reset(&ctx.hist);
    samples_reset(&ctx.raw);
    atomic_store(&writer_done, 0);
    pthread_t t;
    pthread_create(&t, NULL, client_reader, &ctx);
    while (!atomic_load(&ctx.ready))
        sched_yield();
    pin(WRITER_CPU);
    uint64_t n = paced ? latency_samples : throughput_events;
    uint64_t gap = (uint64_t)(2000.0 / ns_per_tick);
    uint64_t t0 = now_ns();
    for (uint64_t i = 1; i <= n; i++) {
        if (paced)
            spin_ticks(gap);
        publish_trade(&w, i, paced);
    }
    double wsecs = (double)(now_ns() - t0) / 1e9;
    atomic_store_explicit(&writer_done, 1, memory_order_release);
    pthread_join(t, NULL);
    if (!paced) {
        printf("{\"bench\":\"client_throughput\",\"readers\":1,\"record_bytes\":%u,\"events\":%llu,"
               "\"writer_mevents_per_s\":%.1f,\"delivered\":%llu,\"lost\":%llu,"
               "\"reader_mevents_per_s\":%.1f}\n",
               TRADE_RECORD_BYTES, (unsigned long long)n, (double)n / wsecs / 1e6,
               (unsigned long long)ctx.events, (unsigned long long)ctx.lost,
               (double)ctx.events / ctx.seconds / 1e6);
    } else {
        printf("{\"bench\":\"client_latency\",\"readers\":1,\"record_bytes\":%u,\"gap_ns\":2000,"
               "\"lost\":%llu,\"body_mean_ns\":%.1f,\"one_way_ns\":",
               TRADE_RECORD_BYTES, (unsigned long long)ctx.lost, samples_body_mean_ns(&ctx.raw));
        tp_hist_print_json(stdout, &ctx.hist, ns_per_tick);
        printf("}\n");
    }
    fflush(stdout);
    tp_bus_writer_close(&w, 1);
    unpin();
}

static void count_event(void *user, const struct tp_event *ev)
{
    (void)ev;
    ++*(uint64_t *)user;
}

/* Ticks per event to drain `records` published Trades with tp_poll(max_events) calls. */
static uint64_t drain_ticks(struct tp_bus_writer *w, struct tp_client *tp, uint64_t *next,
                            unsigned records, unsigned max_events)
{
    for (unsigned k = 0; k < records; k++, (*next)++)
        publish_trade(w, *next, 0);
    uint64_t got = 0, t0 = __rdtsc();
    while (tp_poll(tp, count_event, &got, max_events) > 0)
        ;
    uint64_t ticks = __rdtsc() - t0;
    if (got != records) {
        fprintf(stderr, "client_inthread: %llu of %u events\n", (unsigned long long)got, records);
        exit(1);
    }
    return ticks;
}

/*
 * Writer and reader on one thread: the library's CPU cost per event (poll, copy, decode, filter,
 * view, callback) with the records in this core's cache, and the cost of an empty tp_poll (what a
 * busy-polling strategy spends between events, half of which adds to the latency on average).
 */
static void bench_client_inthread(void)
{
    enum { RECORDS = 4000, ROUNDS = 200, EMPTY_POLLS = 100000 };
    struct tp_bus_writer w;
    open_writer(&w, 1 << 20); /* 4000 records of 104 bytes stay inside one lap */
    struct tp_client *tp = attach_trades_reader();
    pin(WRITER_CPU);
    uint64_t next = 1, best1 = UINT64_MAX, best64 = UINT64_MAX;
    for (int round = 0; round < ROUNDS; round++) {
        uint64_t t1 = drain_ticks(&w, tp, &next, RECORDS, 1);
        uint64_t t64 = drain_ticks(&w, tp, &next, RECORDS, 64);
        best1 = t1 < best1 ? t1 : best1;
        best64 = t64 < best64 ? t64 : best64;
    }
    uint64_t got = 0, t0 = __rdtsc();
    for (int k = 0; k < EMPTY_POLLS; k++)
        got += (uint64_t)tp_poll(tp, count_event, &got, 64);
    uint64_t empty = __rdtsc() - t0;
    printf("{\"bench\":\"client_inthread\",\"records\":%d,\"record_bytes\":%u,\"rounds\":%d,"
           "\"best_ns_per_event_poll1\":%.1f,\"best_ns_per_event_poll64\":%.1f,"
           "\"empty_poll_ns\":%.1f}\n",
           RECORDS, TRADE_RECORD_BYTES, ROUNDS, (double)best1 * ns_per_tick / RECORDS,
           (double)best64 * ns_per_tick / RECORDS, (double)empty * ns_per_tick / EMPTY_POLLS);
    fflush(stdout);
    tp_detach(tp);
    tp_bus_writer_close(&w, 1);
    unpin();
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            throughput_events = 2000000;
            latency_samples = 20000;
        } else if (strcmp(argv[i], "--ring") == 0 && i + 1 < argc) {
            ring_bytes_opt = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--rt") == 0) {
            realtime = 1;
        } else if (strcmp(argv[i], "--zero-loss-only") == 0) {
            zero_loss_only = 1;
        } else if (strcmp(argv[i], "--latency-only") == 0) {
            latency_only = 1;
        } else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
            shm_dir = argv[++i];
        } else if (strcmp(argv[i], "--payload") == 0 && i + 1 < argc) {
            payload_bytes = (uint32_t)atoi(argv[++i]);
            if (payload_bytes < 16 || payload_bytes > 1000) {
                fprintf(stderr, "--payload: 16..1000\n");
                return 2;
            }
        } else {
            fprintf(stderr,
                    "usage: %s [--quick] [--rt] [--zero-loss-only | --latency-only] [--ring BYTES] "
                    "[--dir DIR] [--payload BYTES]\n",
                    argv[0]);
            return 2;
        }
    }
    calibrate_tsc();
    printf("{\"bench\":\"setup\",\"ns_per_tick\":%.4f,\"payload_bytes\":%u,\"cpus\":%ld}\n",
           ns_per_tick, payload_bytes, sysconf(_SC_NPROCESSORS_ONLN));
    if (zero_loss_only) {
        /* The 1-reader zero-loss runs alone (before/after comparisons of the reader path). */
        run_bus(1, 0, ring_bytes_opt, 32, 1, 0);
        run_bus(1, 0, ring_bytes_opt, 32, 1, 30);
        return 0;
    }
    if (latency_only) {
        bench_pingpong();
        run_bus(1, 1, ring_bytes_opt, 0, 0, 0);
        run_client(1);
        bench_client_inthread();
        return 0;
    }
    bench_pingpong();
    bench_rte_ring();
    int counts[] = {0, 1, 2, 4};
    for (int i = 0; i < 4; i++)
        run_bus(counts[i], 0, ring_bytes_opt, 0, 0, 0);
    for (int i = 0; i < 4; i++)
        run_bus(counts[i], 0, ring_bytes_opt, 32, 0, 0);
    for (int i = 1; i < 4; i++)
        run_bus(counts[i], 1, ring_bytes_opt, 0, 0, 0);
    for (int i = 1; i < 4; i++)
        run_bus(counts[i], 0, ring_bytes_opt, 32, 1, 0);
    run_bus(1, 0, ring_bytes_opt, 32, 1, 500);
    run_bus(1, 0, ring_bytes_opt, 32, 1, 30);
    run_client(0);
    run_client(1);
    bench_client_inthread();
    return 0;
}
