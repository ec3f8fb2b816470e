/*
 * bench_pipeline: the data lcore's work per packet, with the traffic preloaded in memory and no
 * PMD in the way: classify -> A/B arbitration -> decode -> books -> publish (tpout events into a
 * real shared-memory bus ring + state table at event boundaries).
 *
 *   bench_pipeline --pcap FILE --protocol itch|mdp3 [--runs N] [--burst B] [--ring-mib M]
 *                  [--pages 2m|4k] [--nic-checksum] [--mdp3-books mbp|mbo]
 *
 * The capture is read once into memory (codecs/net's pcap_reader); each run re-initialises every
 * table and feeds every frame through the same code the daemon runs (dataplane/daemon/channel.c), B
 * frames per "burst" sharing one receive timestamp, as rx_burst does. Prints one JSON line per run
 * (messages, seconds, messages/s, ns/message, gaps, rx-to-publish latency histogram) and a final
 * line with the median run. Zero loss is checked: every run must apply as many messages as the
 * first and give none up.
 *
 * --nic-checksum takes every frame's UDP checksum as verified by the NIC, as the data lcore does
 * on a port with the receive offload (production NICs have it; the virtual devices do not), so
 * the classifier does not sum the payload.
 *
 * --mdp3-books: the MDP3 channel's books, price levels and orders (mbo, as the daemon builds
 * them: the default) or price levels only (mbp, as tickplane-replay without --orders).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "bus_setup.h"
#include "channel.h"
#include "classifier.h"
#include "config.h"
#include "pcap_reader.h"
#include "preload_plan.h"
#include "publisher.h"
#include "table_memory.h"
#include "tp_books.h"
#include "tp_instruments.h"
#include "util/histogram.h"

struct frame {
    const uint8_t *data;
    uint32_t len;
};

static struct frame *frames;
static size_t n_frames;

static uint64_t tsc(void)
{
    return __rdtsc();
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
    return clock_s(CLOCK_MONOTONIC);
}

/* Channel io over frames in memory: a handle is the frame index + 1 (held frames stay put). */
static void view(void *ctx, void *handle, const uint8_t **payload, uint16_t *len, uint64_t *rx_tsc)
{
    (void)ctx;
    const struct frame *f = &frames[(uintptr_t)handle - 1];
    struct tp_udp_view v;
    if (tp_net_parse_udp(f->data, f->len, 0, &v) == 0) {
        *payload = v.payload;
        *len = v.payload_len;
    } else {
        *payload = NULL;
        *len = 0;
    }
    *rx_tsc = tsc();
}

static void release(void *ctx, void *handle)
{
    (void)ctx;
    (void)handle;
}

/* MDP3 snapshot and definition lines joined or left: the capture holds their packets all along,
 * and the channel ignores them while it has left, as the daemon no longer receives them. */
static void membership(void *ctx, uint32_t channel, enum tp_line_role role, bool join)
{
    (void)ctx;
    (void)channel;
    (void)role;
    (void)join;
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
            double t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    return v[n / 2];
}

/* Page size of the tables and the preloaded frames: 2 MiB transparent huge pages (what the
 * daemon's DPDK hugepage memory gives it in production) unless --pages 4k (as with --no-huge). */
static bool huge_pages = true;

static void *zalloc(size_t n)
{
    return tp_table_memory(n, huge_pages);
}

/*
 * Reads every frame of the capture into one arena (frames never move, as held mbufs do not), with
 * a preloaded port's limits (preload_plan.h): the daemon it is compared with takes the same
 * captures. 0, or -1 with why on stderr.
 */
static int load(const char *path)
{
    FILE *f = fopen(path, "rb");
    struct stat st;
    if (f == NULL || fstat(fileno(f), &st) != 0) {
        fprintf(stderr, "bench_pipeline: %s: %s\n", path, strerror(errno));
        return -1;
    }
    struct tp_pcap_reader r;
    struct tp_pcap_record rec;
    const char *what = NULL; /* why the capture cannot be loaded */
    char why[160];
    int rc = tp_pcap_reader_open(&r, f, TP_PRELOAD_FRAME_MAX, TP_PRELOAD_FRAMES_MAX);
    if (rc == TP_PCAP_OK) {
        /* The frames take less than the file (which adds 16 bytes of header to each). */
        size_t arena_size = (size_t)st.st_size, used = 0, cap = arena_size / 16 + 1;
        uint8_t *arena = zalloc(arena_size);
        frames = zalloc(cap * sizeof(*frames));
        if (arena == NULL || frames == NULL)
            what = "no memory for its frames";
        while (what == NULL && (rc = tp_pcap_reader_next(&r, &rec)) == TP_PCAP_OK) {
            if (n_frames == cap || rec.caplen > arena_size - used) {
                what = "the capture changed while being read";
            } else {
                memcpy(arena + used, rec.data, rec.caplen);
                frames[n_frames++] = (struct frame){.data = arena + used, .len = rec.caplen};
                used += rec.caplen;
            }
        }
    }
    if (what == NULL && rc != TP_PCAP_END)
        what = tp_pcap_reader_why(&r, why, sizeof(why));
    if (what != NULL)
        fprintf(stderr, "bench_pipeline: %s: %s\n", path, what);
    tp_pcap_reader_close(&r);
    fclose(f);
    return what == NULL ? 0 : -1;
}

int main(int argc, char **argv)
{
    const char *pcap_path = NULL, *protocol = "itch";
    int runs = 5, burst = 32, ring_mib = 64;
    bool nic_checksum = false;
    uint8_t mdp3_books = TP_BOOK_TYPE_MBP_MBO;
    static const struct option opts[] = {{"pcap", required_argument, NULL, 'p'},
                                         {"protocol", required_argument, NULL, 'P'},
                                         {"runs", required_argument, NULL, 'r'},
                                         {"burst", required_argument, NULL, 'b'},
                                         {"ring-mib", required_argument, NULL, 'm'},
                                         {"pages", required_argument, NULL, 'g'},
                                         {"nic-checksum", no_argument, NULL, 'n'},
                                         {"mdp3-books", required_argument, NULL, 'k'},
                                         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        if (c == 'p')
            pcap_path = optarg;
        else if (c == 'P')
            protocol = optarg;
        else if (c == 'r')
            runs = atoi(optarg);
        else if (c == 'b')
            burst = atoi(optarg);
        else if (c == 'm')
            ring_mib = atoi(optarg);
        else if (c == 'g' && (strcmp(optarg, "2m") == 0 || strcmp(optarg, "4k") == 0))
            huge_pages = optarg[0] == '2';
        else if (c == 'n')
            nic_checksum = true;
        else if (c == 'k' && (strcmp(optarg, "mbp") == 0 || strcmp(optarg, "mbo") == 0))
            mdp3_books = optarg[2] == 'p' ? TP_BOOK_TYPE_MBP : TP_BOOK_TYPE_MBP_MBO;
        else
            return 2;
    }
    bool itch = strcmp(protocol, "itch") == 0;
    if (pcap_path == NULL || runs < 1 || runs > 50 || burst < 1 || ring_mib < 1 ||
        (ring_mib & (ring_mib - 1)) != 0 || load(pcap_path) != 0) {
        fprintf(stderr, "usage: bench_pipeline --pcap FILE --protocol itch|mdp3 [--runs N] "
                        "[--burst B] [--ring-mib M (a power of two)] [--pages 2m|4k] "
                        "[--nic-checksum] [--mdp3-books mbp|mbo]\n");
        return 2;
    }

    static struct tp_config cfg;
    snprintf(cfg.name, sizeof(cfg.name), "tpbench%d", (int)getpid());
    cfg.bus.ring_bytes = (uint64_t)ring_mib << 20;
    cfg.bus.state_depth = 10;
    cfg.instruments.capacity = 4096;
    char err[256];
    struct tp_bus_writer *bus = tp_daemon_bus_open(&cfg, 64, err, sizeof(err));
    if (bus == NULL) {
        fprintf(stderr, "bench_pipeline: bus: %s\n", err);
        return 1;
    }
    struct tp_instruments_params ip = {.capacity = 4096, .itch_venues = 1};
    struct tp_books_params bp = {.instruments = 4096,
                                 .max_orders = 1 << 21,
                                 .levels_per_side = 256,
                                 .mbp_depth = 10,
                                 .implied_depth = 2};
    struct tp_classifier_params cp = {.max_flows = 8, .verify_udp_checksum = true};
    void *registry = zalloc(tp_instruments_memsize(&ip));
    void *books = zalloc(tp_books_memsize(&bp));
    void *cls = zalloc(tp_classifier_memsize(&cp));
    static struct tp_histogram latency;
    struct tp_publisher_params pp = {.bus = bus,
                                     .books = books,
                                     .registry = registry,
                                     .instruments = 4096,
                                     .depth = 10,
                                     .latency = &latency,
                                     .clock = tsc};
    void *pub = zalloc(tp_publisher_memsize(&pp));
    /* A channel's size depends on its registry's capacity: the registry is prepared first (a
     * zeroed one sized the channel without the MDP3 feed's per-instrument state, and a full
     * replay buffer then ran past its end). */
    if (registry == NULL || tp_instruments_init(registry, &ip) != 0)
        return 1;
    struct tp_channel_params chp = {
        .protocol = itch ? TP_CHANNEL_ITCH : TP_CHANNEL_MDP3,
        .held_max = 4096,
        .gap_wait_tsc = UINT64_MAX / 4, /* nothing is lost in memory: a gap would be a bug */
        .start_seq = 1,
        .registry = registry,
        .books = books,
        .publisher = pub,
        .mdp3_book_type = mdp3_books,
        .has_snapshot = !itch, /* the capture has every MDP3 feed: definitions, snapshots */
        .has_definitions = !itch,
        .replay_bytes = 1 << 20,
        .io = {.view = view, .release = release, .membership = membership},
    };
    void *chmem = zalloc(tp_channel_memsize(&chp));
    if (!registry || !books || !cls || !pub || !chmem)
        return 1;

    /* TSC rate for the histogram. */
    double t0 = now_s();
    uint64_t c0 = tsc();
    while (now_s() - t0 < 0.05)
        ;
    double hz = (double)(tsc() - c0) / (now_s() - t0);

    double rates[50], cpu_rates[50];
    uint64_t first_messages = 0;
    for (int r = 0; r < runs; r++) {
        tp_instruments_init(registry, &ip);
        tp_books_init(books, &bp);
        tp_classifier_init(cls, &cp);
        tp_hist_reset(&latency);
        tp_publisher_init(pub, &pp);
        tp_channel_init(chmem, &chp);
        struct tp_channel *ch = chmem;
        /* Every multicast flow of the capture is one of the channel's lines. */
        if (itch) {
            tp_classifier_add(cls, 0xe9360c6f, 26477, TP_CLASSIFY_ANY_VLAN, TP_ROLE_INCR_A);
            tp_classifier_add(cls, 0xe931c46f, 26477, TP_CLASSIFY_ANY_VLAN, TP_ROLE_INCR_B);
        } else {
            tp_classifier_add(cls, 0xe0001901, 17901, TP_CLASSIFY_ANY_VLAN, TP_ROLE_INCR_A);
            tp_classifier_add(cls, 0xe0001909, 18901, TP_CLASSIFY_ANY_VLAN, TP_ROLE_INCR_B);
            tp_classifier_add(cls, 0xe000197e, 16901, TP_CLASSIFY_ANY_VLAN, TP_ROLE_DEF_A);
            tp_classifier_add(cls, 0xe000197e, 19901, TP_CLASSIFY_ANY_VLAN, TP_ROLE_SNAP_A);
        }
        double start = now_s(), cpu_start = clock_s(CLOCK_THREAD_CPUTIME_ID);
        uint64_t rx = 0;
        for (size_t i = 0; i < n_frames; i++) {
            if (i % (size_t)burst == 0) {
                /* As the data lcore: the ring's shared tail moves once per burst. */
                if (i > 0)
                    tp_publisher_end_burst(pub);
                tp_publisher_begin_burst(pub);
                rx = tsc();
            }
            struct tp_udp_view v;
            uint32_t line =
                tp_classify_frame_offload(cls, frames[i].data, frames[i].len, nic_checksum, &v);
            if (line != TP_CLASSIFY_NONE)
                tp_channel_packet(ch, (enum tp_line_role)line, v.payload, v.payload_len,
                                  (void *)(uintptr_t)(i + 1), rx);
        }
        tp_publisher_end_burst(pub);
        double secs = now_s() - start;
        /* CPU time of this thread: what the pipeline costs when the machine is shared. */
        double cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
        const struct tp_arb_counters *ac = tp_arb_counters(ch->arb);
        uint64_t msgs = itch ? ch->counters.messages : ch->mdp3.counters.messages;
        if (r == 0)
            first_messages = msgs;
        if (msgs != first_messages || ac->skipped_msgs != 0 || ch->counters.malformed != 0) {
            fprintf(stderr, "bench_pipeline: loss: %lu messages (first run %lu), %lu skipped\n",
                    msgs, first_messages, ac->skipped_msgs);
            return 1;
        }
        rates[r] = (double)msgs / secs;
        cpu_rates[r] = (double)msgs / cpu;
        printf("{\"run\":%d,\"protocol\":\"%s\",\"nic_checksum\":%s,\"frames\":%zu,"
               "\"messages\":%lu,\"seconds\":%.4f,\"messages_per_s\":%.0f,\"ns_per_message\":%.1f,"
               "\"cpu_ns_per_message\":%.1f,\"published\":%lu,\"gaps\":%lu,\"rx_to_publish_ns\":",
               r, protocol, nic_checksum ? "true" : "false", n_frames, msgs, secs, rates[r],
               secs * 1e9 / (double)msgs, cpu * 1e9 / (double)msgs,
               tp_publisher_counters(pub)->records, ac->gaps);
        tp_hist_print_json(stdout, &latency, 1e9 / hz);
        printf("}\n");
        fflush(stdout);
    }
    printf("{\"median_messages_per_s\":%.0f,\"median_cpu_messages_per_s\":%.0f,\"runs\":%d,"
           "\"messages\":%lu}\n",
           median(rates, runs), median(cpu_rates, runs), runs, first_messages);
    tp_daemon_bus_close(bus, true);
    return 0;
}
