/*
 * Simulator, end to end through the command line: the pcap files tickplane-sim writes parse as
 * Ethernet (802.1Q) / IPv4 / UDP frames to the documented groups, in time order, and replaying
 * them gives the truth file's books.
 *   argv[1..3]: the build's MDP3 demo (pcap, truth)              -> replay of line A
 *   argv[3..5]: an ITCH run with faults (pcap, truth, report)     -> faults seen = faults reported
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "binaryfile.h"
#include "endpoints.h"
#include "mdp3_replay.h"
#include "moldudp64.h"
#include "itch50.h"
#include "net_parse.h"
#include "sim_test_util.h"

static char **paths;

/* Instruments and events of a truth file (order ids never exceed events + 1). */
static void truth_sizes(const char *path, uint32_t *instruments, uint64_t *events)
{
    json_error_t err;
    json_t *truth = json_load_file(path, 0, &err);
    assert_non_null(truth);
    *instruments = (uint32_t)json_array_size(json_object_get(truth, "instruments"));
    *events = (uint64_t)json_integer_value(json_object_get(truth, "events"));
    assert_true(*instruments > 0 && *events > 0);
    json_decref(truth);
}

struct frame_cb {
    void (*udp)(void *ctx, const struct tp_udp_view *v, uint64_t ts_ns);
    void *ctx;
};

/* Parses every frame; checks time order; hands UDP payloads on. Returns the frame count. */
static size_t read_pcap(const char *path, uint16_t want_vlan, const struct frame_cb *cb)
{
    char err[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
    assert_non_null(p);
    struct pcap_pkthdr *h;
    const u_char *data;
    uint64_t last = 0;
    size_t frames = 0;
    while (pcap_next_ex(p, &h, &data) == 1) {
        struct tp_udp_view v;
        assert_int_equal(tp_net_parse_udp(data, h->caplen, TP_NET_CHECK_IP_CSUM, &v), 0);
        assert_int_equal(v.key.vlan, want_vlan);
        assert_int_equal(v.vlan_count, want_vlan != 0);
        uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000000ULL + (uint64_t)h->ts.tv_usec;
        assert_true(ts >= last);
        last = ts;
        cb->udp(cb->ctx, &v, ts);
        frames++;
    }
    pcap_close(p);
    return frames;
}

/* ---- MDP3 demo ---------------------------------------------------------------------- */

struct mdp3_ctx {
    struct tp_sim_endpoints ep;
    struct replay *r;
    uint8_t *a_payloads, *b_payloads; /* incremental payloads per line, concatenated */
    size_t a_len, a_cap, b_len, b_cap;
};

static void append(uint8_t **buf, size_t *len, size_t *cap, const uint8_t *d, size_t n)
{
    if (*len + n > *cap) {
        *cap = (*len + n) * 2;
        *buf = realloc(*buf, *cap);
        assert_non_null(*buf);
    }
    memcpy(*buf + *len, d, n);
    *len += n;
}

static void mdp3_udp(void *ctx, const struct tp_udp_view *v, uint64_t ts_ns)
{
    struct mdp3_ctx *c = ctx;
    (void)ts_ns;
    for (int s = 0; s < TP_SIM_STREAMS; s++)
        for (int l = 0; l < TP_SIM_LINES; l++) {
            const struct tp_sim_endpoint *e = &c->ep.ep[s][l];
            if (e->group != v->key.dst_ip || e->port != v->key.dst_port)
                continue;
            if (l == TP_SIM_LINE_A)
                replay_packet(c->r, s, v->payload, v->payload_len);
            if (s == TP_SIM_STREAM_INCREMENTAL && l == TP_SIM_LINE_A)
                append(&c->a_payloads, &c->a_len, &c->a_cap, v->payload, v->payload_len);
            if (s == TP_SIM_STREAM_INCREMENTAL && l == TP_SIM_LINE_B)
                append(&c->b_payloads, &c->b_len, &c->b_cap, v->payload, v->payload_len);
            return;
        }
    fail_msg("frame to an unknown group %08x:%u", v->key.dst_ip, v->key.dst_port);
}

static void test_mdp3_demo_pcap(void **state)
{
    (void)state;
    uint32_t instruments;
    uint64_t events;
    truth_sizes(paths[2], &instruments, &events);
    struct mdp3_ctx c = {0};
    tp_sim_endpoints_default(&c.ep, TP_SIM_VENUE_MDP3);
    c.r = calloc(1, sizeof(*c.r));
    replay_init(c.r, instruments, events + 1);
    struct frame_cb cb = {mdp3_udp, &c};
    size_t frames = read_pcap(paths[1], 0, &cb);
    assert_true(frames > 1000);
    assert_int_equal(c.r->errors, 0);
    assert_int_equal(c.r->mbo.errors, 0);
    assert_true(c.r->snapshots_checked > 0);
    assert_int_equal(c.r->mbo_snapshots_checked, c.r->snapshots_checked);
    check_mbp_truth(c.r, paths[2]);
    assert_int_equal(ref_compare_truth(&c.r->mbo, paths[2], DEPTH), 0);
    /* No faults: line B carries exactly line A's packets. */
    assert_int_equal(c.a_len, c.b_len);
    assert_memory_equal(c.a_payloads, c.b_payloads, c.a_len);
    replay_free(c.r);
    free(c.r);
    free(c.a_payloads);
    free(c.b_payloads);
}

/* ---- ITCH with faults ------------------------------------------------------------------- */

#define MAX_PACKETS 65536

struct itch_ctx {
    struct tp_sim_endpoints ep;
    uint32_t seen[2][MAX_PACKETS]; /* packets seen per line, by first sequence number */
    uint64_t reordered_b;          /* packets on B with a lower sequence than the one before */
    uint64_t last_seq_b;
    struct mem_sink messages[MAX_PACKETS]; /* line B's messages per packet, by sequence */
};

static void itch_udp(void *ctx, const struct tp_udp_view *v, uint64_t ts_ns)
{
    struct itch_ctx *c = ctx;
    (void)ts_ns;
    int line = -1;
    for (int l = 0; l < TP_SIM_LINES; l++)
        if (c->ep.ep[TP_SIM_STREAM_INCREMENTAL][l].group == v->key.dst_ip &&
            c->ep.ep[TP_SIM_STREAM_INCREMENTAL][l].port == v->key.dst_port)
            line = l;
    assert_true(line >= 0);
    struct tp_mold_packet p;
    int kind = tp_mold_parse(&p, v->payload, v->payload_len);
    if (kind == TP_MOLD_END)
        return;
    assert_int_equal(kind, TP_MOLD_MESSAGES);
    assert_true(p.sequence < MAX_PACKETS);
    c->seen[line][p.sequence]++;
    if (line == TP_SIM_LINE_B) {
        c->reordered_b += p.sequence < c->last_seq_b;
        c->last_seq_b = p.sequence;
        if (c->seen[line][p.sequence] == 1) {
            const uint8_t *msg;
            uint16_t len;
            while (tp_mold_next(&p, &msg, &len) == 1)
                mem_sink_message(&c->messages[p.sequence], msg, len, 0);
        }
    }
}

/* Sequence numbers of the packets a report list names. */
static void listed_seqs(json_t *line, const char *kind, uint8_t *mark, size_t *n)
{
    json_t *arr = json_object_get(line, kind);
    size_t i;
    json_t *e;
    *n = json_array_size(arr);
    json_array_foreach(arr, i, e)
    {
        json_int_t seq = json_integer_value(json_object_get(e, "seq"));
        assert_true(seq > 0 && seq < MAX_PACKETS);
        mark[seq] = 1;
    }
}

static void test_itch_faults_pcap(void **state)
{
    (void)state;
    struct itch_ctx *c = calloc(1, sizeof(*c));
    tp_sim_endpoints_default(&c->ep, TP_SIM_VENUE_ITCH);
    struct frame_cb cb = {itch_udp, c};
    read_pcap(paths[3], 7, &cb);
    json_error_t err;
    json_t *report = json_load_file(paths[5], 0, &err);
    assert_non_null(report);
    json_t *lines = json_object_get(report, "lines");
    static uint8_t lost_a[MAX_PACKETS], dup_b[MAX_PACKETS], reo_b[MAX_PACKETS];
    size_t n_lost, n_dup, n_reo;
    listed_seqs(json_object_get(lines, "A"), "lost", lost_a, &n_lost);
    listed_seqs(json_object_get(lines, "B"), "duplicated", dup_b, &n_dup);
    listed_seqs(json_object_get(lines, "B"), "reordered", reo_b, &n_reo);
    assert_true(n_lost > 0 && n_dup > 0 && n_reo > 0);
    /* Line A lacks exactly the packets reported lost; line B has each once, or twice when
     * reported duplicated, and is out of order exactly as often as reported. */
    size_t packets = 0;
    for (size_t seq = 1; seq < MAX_PACKETS; seq++) {
        if (c->seen[1][seq] == 0)
            continue; /* not a packet's first sequence */
        packets++;
        assert_int_equal(c->seen[0][seq], lost_a[seq] ? 0 : 1);
        assert_int_equal(c->seen[1][seq], dup_b[seq] ? 2 : 1);
    }
    assert_int_equal(c->reordered_b, n_reo);
    json_t *mold = json_object_get(report, "mold");
    assert_int_equal(packets + 1, json_integer_value(json_object_get(mold, "packets")));

    /* Line B, put back in sequence order, rebuilds the truth. */
    struct mem_sink all = {0};
    for (size_t seq = 1; seq < MAX_PACKETS; seq++)
        if (c->messages[seq].len > 0)
            append(&all.buf, &all.len, &all.cap, c->messages[seq].buf, c->messages[seq].len);
    uint32_t instruments;
    uint64_t events;
    truth_sizes(paths[4], &instruments, &events);
    struct ref_book book;
    ref_init(&book, instruments, events + 1);
    struct tp_binfile_reader r;
    const uint8_t *msg;
    uint16_t len;
    tp_binfile_reader_init(&r, all.buf, all.len);
    while (tp_binfile_next(&r, &msg, &len) == 1) {
        int type = tp_itch_check(msg, len);
        assert_true(type > 0);
        uint32_t id = (uint32_t)tp_itch_stock_locate(msg) - 1;
        if (type == 'A' || type == 'F')
            ref_add(&book, tp_itch_add_order_order_ref(msg), id,
                    (uint8_t)tp_itch_add_order_side(msg), tp_itch_add_order_price_p9(msg),
                    tp_itch_add_order_shares(msg));
        else if (type == 'E' || type == 'C')
            ref_reduce(&book, tp_itch_order_executed_order_ref(msg),
                       tp_itch_order_executed_executed_shares(msg));
        else if (type == 'X')
            ref_reduce(&book, tp_itch_order_cancel_order_ref(msg),
                       tp_itch_order_cancel_cancelled_shares(msg));
        else if (type == 'D')
            ref_delete(&book, tp_itch_order_delete_order_ref(msg));
        else if (type == 'U') {
            uint64_t old = tp_itch_order_replace_original_order_ref(msg);
            uint8_t side = old < book.cap ? book.orders[old].side : 0;
            ref_delete(&book, old);
            ref_add(&book, tp_itch_order_replace_new_order_ref(msg), id, side,
                    tp_itch_order_replace_price_p9(msg), tp_itch_order_replace_shares(msg));
        }
    }
    assert_int_equal(book.errors, 0);
    assert_int_equal(ref_compare_truth(&book, paths[4], 10), 0);

    ref_free(&book);
    mem_sink_free(&all);
    for (size_t seq = 0; seq < MAX_PACKETS; seq++)
        mem_sink_free(&c->messages[seq]);
    json_decref(report);
    free(c);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s mdp3.pcap mdp3.truth itch.pcap itch.truth itch.report\n",
                argv[0]);
        return 2;
    }
    paths = argv;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mdp3_demo_pcap),
        cmocka_unit_test(test_itch_faults_pcap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
