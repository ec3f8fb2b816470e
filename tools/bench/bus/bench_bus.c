/*
 * Shared-memory bus benchmark. One JSON object per line:
 *   pingpong        a bare cache line bounced between the two cores: the one-way floor;
 *   rte_ring        DPDK's rte_ring, single producer / single consumer: throughput and one-way;
 *   bus_throughput  events/s a writer publishes with 0, 1, 2, 4 readers reading (and what they
 *                   lost), records visible one by one (burst 0) or 32 at a time;
 *   bus_throughput_zero_loss  the same, the writer held back so that no reader loses anything;
 *   bus_latency     one-way publish -> reader latency with 1, 2, 4 readers (paced writer);
 *   client          the same through libtickplane: tpout Trade messages, tp_poll, the trades view
 *                   and the strategy's callback (throughput and one-way latency, one reader).
 * The writer runs on CPU 0, every reader on CPU 1 (this is a 2-core machine).
 *
 * Usage: bench_bus [--quick] [--rt] [--zero-loss-only] [--ring BYTES] [--dir DIR] [--payload BYTES]
 *   --rt  run the measuring threads SCHED_FIFO (root): on a shared, busy machine this keeps
 *         other processes off the two cores for the few seconds of the run.
 *   --zero-loss-only  only the two 1-reader zero-loss throughput runs.
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
    tp_hist_reset(&h);
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
        tp_hist_record(&h, (__rdtsc() - t0) / 2); /* one way = half the round trip */
    }
    uint64_t total = __rdtsc() - start;
    pthread_join(t, NULL);
    printf("{\"bench\":\"pingpong\",\"rounds\":%llu,\"one_way_mean_ns\":%.1f,\"one_way_ns\":",
           (unsigned long long)pp.rounds, (double)total * ns_per_tick / 2.0 / (double)pp.rounds);
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
                tp_hist_record(&c->hist, __rdtsc() - sent);
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
        memset(&ctx[i], 0, offsetof(struct reader_ctx, batch));
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
               "\"lost\":%llu,\"one_way_ns\":",
               readers, (TP_RING_RECORD_HEADER + payload_bytes + 7) & ~7u,
               (unsigned long long)lost);
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
};

static void on_trade(void *user, const struct tp_event *ev)
{
    struct client_ctx *c = user;
    if (ev->topic == TP_TOPIC_LOSS) {
        c->lost += ev->u.lost;
        return;
    }
    if (c->paced)
        tp_hist_record(&c->hist, __rdtsc() - ev->recv_tsc);
    c->events++;
}

static void *client_reader(void *arg)
{
    struct client_ctx *c = arg;
    pin(READER_CPU);
    char err[256];
    struct tp_client *tp;
    struct tp_client_options opt = {.shm_dir = shm_dir, .no_reader_segment = 1};
    if (tp_attach(&tp, "bench", &opt, err, sizeof(err)) != 0 ||
        tp_subscribe(tp, NULL, 0, TP_TOPIC_BIT(TP_TOPIC_TRADES)) != 0) {
        fprintf(stderr, "client: %s\n", err);
        exit(1);
    }
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
    atomic_store(&writer_done, 0);
    pthread_t t;
    pthread_create(&t, NULL, client_reader, &ctx);
    while (!atomic_load(&ctx.ready))
        sched_yield();
    pin(WRITER_CPU);
    uint64_t n = paced ? latency_samples : throughput_events;
    uint64_t gap = (uint64_t)(2000.0 / ns_per_tick);
    uint32_t len = TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + TPOUT_TRADE_BLOCK_LENGTH;
    uint64_t t0 = now_ns();
    for (uint64_t i = 1; i <= n; i++) {
        if (paced)
            spin_ticks(gap);
        uint32_t id = (uint32_t)(i & 1023);
        struct tpout_trade m;
        tpout_trade_wrap_and_apply_header(&m, tp_bus_claim(&w, id, len), len);
        tpout_trade_set_instrument_id(&m, id);
        tpout_trade_set_price_mantissa(&m, (int64_t)i);
        tpout_trade_set_quantity(&m, 1);
        tpout_trade_set_recv_tsc(&m, paced ? __rdtsc() : i);
        tp_bus_commit(&w, TP_REC_SBE, TP_TOPIC_TRADES, id, 0);
    }
    double wsecs = (double)(now_ns() - t0) / 1e9;
    atomic_store_explicit(&writer_done, 1, memory_order_release);
    pthread_join(t, NULL);
    if (!paced) {
        printf("{\"bench\":\"client_throughput\",\"readers\":1,\"record_bytes\":%u,\"events\":%llu,"
               "\"writer_mevents_per_s\":%.1f,\"delivered\":%llu,\"lost\":%llu,"
               "\"reader_mevents_per_s\":%.1f}\n",
               (TP_RING_RECORD_HEADER + len + 7) & ~7u, (unsigned long long)n,
               (double)n / wsecs / 1e6, (unsigned long long)ctx.events,
               (unsigned long long)ctx.lost, (double)ctx.events / ctx.seconds / 1e6);
    } else {
        printf("{\"bench\":\"client_latency\",\"readers\":1,\"record_bytes\":%u,\"gap_ns\":2000,"
               "\"lost\":%llu,\"one_way_ns\":",
               (TP_RING_RECORD_HEADER + len + 7) & ~7u, (unsigned long long)ctx.lost);
        tp_hist_print_json(stdout, &ctx.hist, ns_per_tick);
        printf("}\n");
    }
    fflush(stdout);
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
                    "usage: %s [--quick] [--rt] [--zero-loss-only] [--ring BYTES] [--dir DIR] "
                    "[--payload BYTES]\n",
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
    return 0;
}
