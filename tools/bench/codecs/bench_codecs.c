/*
 * bench_codecs.c - decoding throughput of the codecs, one core, data hot in cache.
 *
 *   bench_codecs [--runs N] [--cpu C] [--min-ms M]
 *
 * Four cases, each over a buffer built up front with the project's own encoders:
 *   mdp3_book46_decode  MDP3 packets of MDIncrementalRefreshBook46 messages with 5 NoMDEntries;
 *                       frames every message, wraps it, reads every root and entry field.
 *   itch_add_order_decode  MoldUDP64 packets of ITCH Add Order messages; frames, length-checks
 *                       and reads every field (price converted to price9).
 *   eobi_order_add_decode  EOBI 6.0 packets of OrderAdd messages; checks the PacketHeader,
 *                       frames and checks every message, reads every field (price to price9).
 *   packet_parse        802.1Q-tagged Ethernet/IPv4/UDP frames through tp_net_parse_udp.
 * Every value read feeds a checksum that is printed, so the compiler cannot drop the work.
 * Each run walks the buffer enough times to last at least --min-ms of CPU time; the median of
 * --runs runs is reported as one JSON object per line (messages/s per core and ns/message,
 * from the thread's CPU time; the wall-clock rate too).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eobi.h"
#include "itch50.h"
#include "mdp3_packet.h"
#include "moldudp64.h"
#include "net_build.h"
#include "net_parse.h"

#define MAX_RUNS        31
#define BUF_BYTES       (256 * 1024) /* fits L2: this measures decoding, not memory */
#define MTU_PAYLOAD     1472         /* UDP payload of a 1500-byte MTU */
#define MDP3_PER_PACKET 6
#define ITCH_PER_PACKET 38
#define EOBI_PER_PACKET 30 /* (1472 - PacketHeader) / OrderAdd */
#define BOOK_ENTRIES    5

/* A buffer of packets: [u16 length][packet] repeated. */
struct packets {
    uint8_t *buf;
    size_t len;
    size_t packets;
    size_t messages;
};

/*
 * The thread's CPU time, not the wall clock: the machine is shared, and time spent descheduled
 * is not decoding time. Both are reported; the CPU-time rate is the per-core figure.
 */
static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Appends a packet slot and returns where the packet goes. */
static uint8_t *packet_slot(struct packets *p, size_t room)
{
    if (BUF_BYTES - p->len < room + 2)
        return NULL;
    return p->buf + p->len + 2;
}

static void packet_commit(struct packets *p, size_t len)
{
    tp_store_be16(p->buf + p->len, (uint16_t)len);
    p->len += 2 + len;
    p->packets++;
}

/* ---- MDP3 --------------------------------------------------------------------------- */

static void build_mdp3(struct packets *p)
{
    uint32_t seq = 1;
    uint8_t *pkt;
    while ((pkt = packet_slot(p, MTU_PAYLOAD)) != NULL) {
        struct tp_mdp3_writer w;
        tp_mdp3_writer_init(&w, pkt, MTU_PAYLOAD, seq, 1536760535685381248ull + seq);
        seq++;
        for (int i = 0; i < MDP3_PER_PACKET; i++) {
            size_t room;
            uint8_t *sbe = tp_mdp3_writer_reserve(&w, &room);
            struct mktdata_md_incremental_refresh_book46 m = {0};
            struct mktdata_md_incremental_refresh_book46_no_md_entries g = {0};
            struct mktdata_md_incremental_refresh_book46_no_order_id_entries o = {0};
            if (sbe == NULL ||
                mktdata_md_incremental_refresh_book46_wrap_and_apply_header(&m, sbe, room) < 0)
                abort();
            mktdata_md_incremental_refresh_book46_set_transact_time(&m, 1536760535644820404ull + i);
            mktdata_md_incremental_refresh_book46_set_match_event_indicator(&m, 0x84);
            if (mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_encode(
                    &m, &g, BOOK_ENTRIES) < 0)
                abort();
            for (int e = 0; e < BOOK_ENTRIES; e++) {
                mktdata_md_incremental_refresh_book46_no_md_entries_next(&g);
                mktdata_md_incremental_refresh_book46_no_md_entries_set_md_entry_px_mantissa(
                    &g, 13003000000000ll + 250000000ll * e);
                mktdata_md_incremental_refresh_book46_no_md_entries_set_md_entry_size(&g, 3 + e);
                mktdata_md_incremental_refresh_book46_no_md_entries_set_security_id(&g, 5893);
                mktdata_md_incremental_refresh_book46_no_md_entries_set_rpt_seq(&g, seq * 8 + e);
                mktdata_md_incremental_refresh_book46_no_md_entries_set_number_of_orders(&g, e);
                mktdata_md_incremental_refresh_book46_no_md_entries_set_md_price_level(&g, e + 1);
                mktdata_md_incremental_refresh_book46_no_md_entries_set_md_update_action(&g, 1);
                mktdata_md_incremental_refresh_book46_no_md_entries_set_md_entry_type(&g, '0');
            }
            if (mktdata_md_incremental_refresh_book46_no_order_id_entries_wrap_for_encode(&m, &o,
                                                                                          0) < 0 ||
                tp_mdp3_writer_commit(
                    &w, MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH +
                            mktdata_md_incremental_refresh_book46_encoded_length(&m)) < 0)
                abort();
            p->messages++;
        }
        packet_commit(p, w.len);
    }
}

/*
 * Decodes one packet: every message, every field; returns the checksum. Each field has its own
 * accumulator: one running sum would chain every add after the previous one and measure adder
 * latency instead of decoding.
 */
static uint64_t decode_mdp3_packet(const uint8_t *pkt, size_t len, size_t *messages)
{
    struct tp_mdp3_packet p;
    struct tp_mdp3_msg msg;
    uint64_t root = 0, px = 0, size = 0, security = 0, rpt_seq = 0, orders = 0, level = 0,
             action = 0, type = 0;
    size_t count = 0;
    if (tp_mdp3_packet_init(&p, pkt, len) < 0)
        abort();
    while (tp_mdp3_packet_next(&p, &msg) == 1) {
        struct mktdata_md_incremental_refresh_book46 m = {0};
        struct mktdata_md_incremental_refresh_book46_no_md_entries g = {0};
        struct mktdata_md_incremental_refresh_book46_no_order_id_entries o = {0};
        if (msg.template_id != MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_TEMPLATE_ID ||
            mktdata_md_incremental_refresh_book46_wrap_for_decode(
                &m, msg.body, msg.body_len, msg.block_length, msg.version) < 0 ||
            mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_decode(&m, &g) < 0)
            abort();
        root += mktdata_md_incremental_refresh_book46_transact_time(&m) +
                mktdata_md_incremental_refresh_book46_match_event_indicator(&m);
        while (g.index < g.count) {
            if (mktdata_md_incremental_refresh_book46_no_md_entries_next(&g) < 0)
                abort();
            px +=
                (uint64_t)mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_px_mantissa(
                    &g);
            size += (uint64_t)mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_size(&g);
            security +=
                (uint64_t)mktdata_md_incremental_refresh_book46_no_md_entries_security_id(&g);
            rpt_seq += mktdata_md_incremental_refresh_book46_no_md_entries_rpt_seq(&g);
            orders +=
                (uint64_t)mktdata_md_incremental_refresh_book46_no_md_entries_number_of_orders(&g);
            level += mktdata_md_incremental_refresh_book46_no_md_entries_md_price_level(&g);
            action += mktdata_md_incremental_refresh_book46_no_md_entries_md_update_action(&g);
            type += (uint64_t)mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_type(&g);
        }
        if (mktdata_md_incremental_refresh_book46_no_order_id_entries_wrap_for_decode(&m, &o) < 0)
            abort();
        root += o.count;
        count++;
    }
    *messages += count;
    return p.seq + p.sending_time + root + px + size + security + rpt_seq + orders + level +
           action + type;
}

/* ---- ITCH -------------------------------------------------------------------------- */

static void build_itch(struct packets *p)
{
    uint64_t seq = 1, ref = 1000;
    uint8_t *pkt;
    while ((pkt = packet_slot(p, MTU_PAYLOAD)) != NULL) {
        struct tp_mold_writer w;
        tp_mold_writer_init(&w, pkt, MTU_PAYLOAD, "BENCH00001", seq);
        for (int i = 0; i < ITCH_PER_PACKET; i++) {
            struct tp_itch_add_order a = {.stock_locate = (uint16_t)(ref % 8000),
                                          .timestamp = 34200000000000ull + ref,
                                          .order_ref = ref,
                                          .side = (ref & 1) ? 'B' : 'S',
                                          .shares = 100,
                                          .price = 1000000 + (uint32_t)(ref % 500) * 100};
            tp_itch_alpha_set(a.stock, sizeof(a.stock), "META");
            uint8_t *dst = tp_mold_writer_reserve(&w, 36);
            if (dst == NULL || tp_itch_add_order_encode(dst, 36, &a) != 36)
                abort();
            ref++;
            p->messages++;
        }
        seq += ITCH_PER_PACKET;
        packet_commit(p, w.len);
    }
}

static uint64_t decode_itch_packet(const uint8_t *pkt, size_t len, size_t *messages)
{
    struct tp_mold_packet p;
    const uint8_t *m;
    uint16_t mlen;
    uint64_t header = 0, ref = 0, side = 0, shares = 0, stock = 0, price = 0;
    size_t count = 0;
    if (tp_mold_parse(&p, pkt, len) != TP_MOLD_MESSAGES)
        abort();
    while (tp_mold_next(&p, &m, &mlen) == 1) {
        if (tp_itch_check(m, mlen) != TP_ITCH_ADD_ORDER)
            abort();
        uint64_t symbol;
        memcpy(&symbol, tp_itch_add_order_stock(m), sizeof(symbol));
        header += tp_itch_add_order_stock_locate(m) + tp_itch_add_order_tracking_number(m) +
                  tp_itch_add_order_timestamp(m);
        ref += tp_itch_add_order_order_ref(m);
        side += (uint64_t)tp_itch_add_order_side(m);
        shares += tp_itch_add_order_shares(m);
        stock += symbol;
        price += (uint64_t)tp_itch_add_order_price_p9(m);
        count++;
    }
    *messages += count;
    return p.sequence + header + ref + side + shares + stock + price;
}

/* ---- EOBI -------------------------------------------------------------------------- */

static void build_eobi(struct packets *p)
{
    uint64_t seq = 1;
    uint8_t *pkt;
    while ((pkt = packet_slot(p, MTU_PAYLOAD)) != NULL) {
        struct tp_eobi_packet_header h = {.appl_seq_num = seq,
                                          .market_segment_id = 589,
                                          .completion_indicator = 1,
                                          .transact_time = 1700000000000000000ull + seq};
        size_t len =
            (size_t)tp_eobi_packet_header_encode(pkt, MTU_PAYLOAD, &h, TP_EOBI_NO_MSG_SEQ_NUM);
        for (int i = 0; i < EOBI_PER_PACKET; i++) {
            struct tp_eobi_order_add a = {.trd_reg_ts_time_in = 1700000000000000000ull + seq,
                                          .security_id = 2049587 + (int64_t)(seq % 64),
                                          .trd_reg_ts_time_priority = 1700000000000000001ull + seq,
                                          .display_qty = 10,
                                          .side = (seq & 1) ? 1 : 2,
                                          .ord_type = 2,
                                          .price = 996100000000 + (int64_t)(seq % 500) * 5000000};
            int n = tp_eobi_order_add_encode(pkt + len, MTU_PAYLOAD - len, &a, (uint32_t)seq);
            if (n != 48)
                abort();
            len += (size_t)n;
            seq++;
            p->messages++;
        }
        packet_commit(p, len);
    }
}

static uint64_t decode_eobi_packet(const uint8_t *pkt, size_t len, size_t *messages)
{
    struct tp_eobi_packet p;
    struct tp_eobi_msg m;
    uint64_t header = 0, times = 0, security = 0, qty = 0, side = 0, price = 0;
    size_t count = 0;
    if (tp_eobi_packet_init(&p, pkt, len) != 0)
        abort();
    header = tp_eobi_packet_header_appl_seq_num(pkt) +
             (uint64_t)tp_eobi_packet_header_market_segment_id(pkt) +
             tp_eobi_packet_header_completion_indicator(pkt);
    while (tp_eobi_packet_next(&p, &m) == 1) {
        if (tp_eobi_check(m.data, m.len) != TP_EOBI_ORDER_ADD)
            abort();
        times += tp_eobi_order_add_trd_reg_ts_time_in(m.data) +
                 tp_eobi_order_add_trd_reg_ts_time_priority(m.data) + m.msg_seq_num;
        security += (uint64_t)tp_eobi_order_add_security_id(m.data);
        qty += (uint64_t)tp_eobi_order_add_display_qty(m.data);
        side += tp_eobi_order_add_side(m.data) + tp_eobi_order_add_ord_type(m.data);
        price += (uint64_t)tp_eobi_price_to_p9(tp_eobi_order_add_price(m.data));
        count++;
    }
    *messages += count;
    return header + times + security + qty + side + price;
}

/* ---- Ethernet / IPv4 / UDP ------------------------------------------------------------ */

static void build_frames(struct packets *p)
{
    struct tp_udp_frame_spec spec = {
        .vlan_count = 1, .vlan = {141}, .src_ip = 0xcec87f8a, .src_port = 49653, .dst_port = 26477};
    static const uint8_t payload[64];
    uint8_t *frame;
    uint32_t group = 0xe9360c00;
    while ((frame = packet_slot(p, 128)) != NULL) {
        spec.dst_ip = group + (uint32_t)(p->packets % 16);
        int n = tp_net_build_udp(frame, 128, &spec, payload, sizeof(payload));
        if (n < 0)
            abort();
        p->messages++;
        packet_commit(p, (size_t)n);
    }
}

static uint64_t parse_frame(const uint8_t *frame, size_t len, size_t *messages)
{
    struct tp_udp_view v;
    if (tp_net_parse_udp(frame, len, 0, &v) != 0)
        abort();
    (*messages)++;
    return v.key.dst_ip + v.key.dst_port + v.key.vlan + v.payload_len;
}

/* ---- timing ----------------------------------------------------------------------------- */

typedef uint64_t (*decode_fn)(const uint8_t *pkt, size_t len, size_t *messages);

/* One pass over every packet of the buffer. */
static uint64_t pass(const struct packets *p, decode_fn fn, size_t *messages)
{
    uint64_t sum = 0;
    for (size_t off = 0; off < p->len;) {
        size_t len = tp_load_be16(p->buf + off);
        sum += fn(p->buf + off + 2, len, messages);
        off += 2 + len;
    }
    return sum;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench(const char *name, const struct packets *p, decode_fn fn, int runs,
                  unsigned min_ms, unsigned per_message_items)
{
    /* calibrate: passes needed for one run to last min_ms of CPU time */
    size_t messages = 0;
    uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), sum = pass(p, fn, &messages);
    uint64_t one = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
    uint64_t passes = one ? ((uint64_t)min_ms * 1000000u) / one + 1 : 1000;
    double cpu_rate[MAX_RUNS], wall_rate[MAX_RUNS];
    for (int r = 0; r < runs; r++) {
        messages = 0;
        uint64_t w0 = clock_ns(CLOCK_MONOTONIC);
        t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        for (uint64_t i = 0; i < passes; i++)
            sum += pass(p, fn, &messages);
        uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
        uint64_t wall = clock_ns(CLOCK_MONOTONIC) - w0;
        cpu_rate[r] = (double)messages * 1e9 / (double)cpu;
        wall_rate[r] = (double)messages * 1e9 / (double)wall;
    }
    qsort(cpu_rate, (size_t)runs, sizeof(cpu_rate[0]), cmp_double);
    qsort(wall_rate, (size_t)runs, sizeof(wall_rate[0]), cmp_double);
    double median = cpu_rate[runs / 2];
    printf("{\"bench\":\"%s\",\"runs\":%d,\"messages_per_run\":%zu,\"buffer_bytes\":%zu,"
           "\"items_per_message\":%u,\"median_msgs_per_s\":%.0f,\"min_msgs_per_s\":%.0f,"
           "\"max_msgs_per_s\":%.0f,\"median_ns_per_msg\":%.3f,\"median_wall_msgs_per_s\":%.0f,"
           "\"checksum\":%" PRIu64 "}\n",
           name, runs, messages, p->len, per_message_items, median, cpu_rate[0], cpu_rate[runs - 1],
           1e9 / median, wall_rate[runs / 2], sum);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    static const struct option options[] = {{"runs", required_argument, NULL, 'r'},
                                            {"cpu", required_argument, NULL, 'c'},
                                            {"min-ms", required_argument, NULL, 'm'},
                                            {NULL, 0, NULL, 0}};
    int runs = 7, cpu = -1, opt;
    unsigned min_ms = 200;
    while ((opt = getopt_long(argc, argv, "r:c:m:", options, NULL)) != -1) {
        switch (opt) {
        case 'r':
            runs = atoi(optarg);
            break;
        case 'c':
            cpu = atoi(optarg);
            break;
        case 'm':
            min_ms = (unsigned)atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: bench_codecs [--runs N] [--cpu C] [--min-ms M]\n");
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "bench_codecs: --runs must be 1..%d\n", MAX_RUNS);
        return 2;
    }
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) != 0)
            perror("bench_codecs: sched_setaffinity");
    }

    struct packets mdp3 = {.buf = malloc(BUF_BYTES)}, itch = {.buf = malloc(BUF_BYTES)},
                   eobi = {.buf = malloc(BUF_BYTES)}, frames = {.buf = malloc(BUF_BYTES)};
    if (mdp3.buf == NULL || itch.buf == NULL || eobi.buf == NULL || frames.buf == NULL)
        return 1;
    build_mdp3(&mdp3);
    build_itch(&itch);
    build_eobi(&eobi);
    build_frames(&frames);
    bench("mdp3_book46_5entries_decode", &mdp3, decode_mdp3_packet, runs, min_ms, BOOK_ENTRIES);
    bench("itch_add_order_decode", &itch, decode_itch_packet, runs, min_ms, 1);
    bench("eobi_order_add_decode", &eobi, decode_eobi_packet, runs, min_ms, 1);
    bench("packet_parse_vlan_ipv4_udp", &frames, parse_frame, runs, min_ms, 1);
    free(mdp3.buf);
    free(itch.buf);
    free(eobi.buf);
    free(frames.buf);
    return 0;
}
