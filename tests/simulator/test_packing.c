/*
 * Simulator: packets filled as a venue fills them at peak (--packet-bytes, TP_SIM_PACK_FILL).
 * MoldUDP64 and MDP3 packets never pass the byte limit and are full (the next message would not
 * fit); every message is present once, in order, with the bytes of the default packing; sequence
 * numbers stay valid; the re-request store answers from the same messages; and the same seed
 * gives the same truth whatever the packing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "itch_feed.h"
#include "mdp3_feed.h"
#include "mdp3_packet.h"
#include "mdp3_replay.h"
#include "model.h"
#include "mold_out.h"
#include "moldudp64.h"
#include "rerequest.h"
#include "sim_test_util.h"
#include "truth.h"

#define INSTRUMENTS 40
#define EVENTS      20000

/* Reads a whole file (the truth JSON) into a malloc'd buffer; *len its size. */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc(*len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, *len, f), *len);
    fclose(f);
    return buf;
}

/* Writes the model's truth to a fresh temporary file; returns its bytes. */
static char *truth_bytes(const struct tp_sim_model *m, uint32_t implied, size_t *len)
{
    char path[256];
    temp_path(path, sizeof(path), ".json");
    assert_int_equal(tp_sim_truth_write(m, DEPTH, implied, path), 0);
    char *bytes = slurp(path, len);
    unlink(path);
    return bytes;
}

static void model_init(struct tp_sim_model *m, uint64_t seed)
{
    struct tp_sim_params p;
    tp_sim_params_default(&p);
    p.seed = seed;
    p.instruments = INSTRUMENTS;
    assert_int_equal(tp_sim_model_init(m, &p), 0);
}

/* ---- ITCH over MoldUDP64 --------------------------------------------------------------------- */

/* The ITCH stream as BinaryFILE blocks (the MoldUDP64 block format) and as MoldUDP64 packets. */
struct itch_run {
    struct mem_sink messages;
    struct captured packets;
    struct tp_sim_mold_out mold;
    struct tp_sim_mold_store store;
    char *truth;
    size_t truth_len;
};

static int tee(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns)
{
    struct itch_run *r = ctx;
    int rc = mem_sink_message(&r->messages, msg, len, time_ns);
    return rc == 0 ? tp_sim_mold_message(&r->mold, msg, len, time_ns) : rc;
}

/* fill_bytes 0: the default packing (by time, at most 64 messages). */
static void itch_generate(struct itch_run *r, uint16_t fill_bytes)
{
    memset(r, 0, sizeof(*r));
    struct tp_sim_model m;
    model_init(&m, 11);
    struct tp_sim_mold_params mp;
    tp_sim_mold_params_default(&mp);
    if (fill_bytes > 0)
        tp_sim_mold_params_fill(&mp, fill_bytes);
    assert_int_equal(tp_sim_mold_store_init(&r->store, 1000000, mp.max_payload), 0);
    struct tp_sim_packet_sink sink = {.packet = capture_packet, .ctx = &r->packets};
    assert_int_equal(tp_sim_mold_init(&r->mold, &mp, &sink, &r->store), 0);
    struct tp_sim_msg_sink to_tee = {.message = tee, .ctx = r};
    assert_int_equal(tp_sim_itch_run(&m, EVENTS, &to_tee), 0);
    assert_int_equal(tp_sim_mold_finish(&r->mold), 0);
    r->truth = truth_bytes(&m, 0, &r->truth_len);
    tp_sim_model_free(&m);
}

static void itch_free(struct itch_run *r)
{
    mem_sink_free(&r->messages);
    free(r->packets.p);
    tp_sim_mold_store_free(&r->store);
    free(r->truth);
}

/*
 * Packets of at most `bytes`, each full, sequence numbers back to back, and their blocks one
 * after the other are exactly the message stream. Returns the data packets.
 */
static size_t check_filled_mold(const struct itch_run *r, uint16_t bytes)
{
    uint8_t *joined = malloc(r->messages.len);
    assert_non_null(joined);
    size_t joined_len = 0, data_packets = 0;
    uint64_t next_seq = 1;
    for (size_t i = 0; i < r->packets.n; i++) {
        const struct tp_sim_packet *pk = &r->packets.p[i];
        assert_true(pk->len <= bytes);
        struct tp_mold_packet p;
        int kind = tp_mold_parse(&p, pk->data, pk->len);
        assert_int_equal(p.sequence, next_seq);
        if (i == r->packets.n - 1) {
            assert_int_equal(kind, TP_MOLD_END);
            break;
        }
        assert_int_equal(kind, TP_MOLD_MESSAGES);
        assert_int_equal(tp_mold_check(&p), 0);
        next_seq += p.count;
        data_packets++;
        /* Full: the next packet's first message would not have fitted in this one. */
        if (i + 2 < r->packets.n) {
            uint16_t next_len = tp_load_be16(r->packets.p[i + 1].data + TP_MOLD_HEADER_LEN);
            assert_true(pk->len + 2u + next_len > bytes);
        }
        size_t blocks = pk->len - TP_MOLD_HEADER_LEN;
        assert_true(joined_len + blocks <= r->messages.len);
        memcpy(joined + joined_len, pk->data + TP_MOLD_HEADER_LEN, blocks);
        joined_len += blocks;
    }
    assert_int_equal(next_seq, r->messages.messages + 1);
    assert_int_equal(joined_len, r->messages.len);
    assert_memory_equal(joined, r->messages.buf, joined_len);
    free(joined);
    return data_packets;
}

static void test_itch_filled(void **state)
{
    (void)state;
    struct itch_run time_packed, full, small;
    itch_generate(&time_packed, 0);
    itch_generate(&full, 1400);
    itch_generate(&small, 256);

    size_t full_packets = check_filled_mold(&full, 1400);
    size_t small_packets = check_filled_mold(&small, 256);
    /* Peak-shaped: tens of messages a packet, where the default packing gives a few. */
    double per_full = (double)full.messages.messages / (double)full_packets;
    double per_default =
        (double)time_packed.messages.messages / (double)(time_packed.packets.n - 1);
    assert_true(per_full > 30.0);
    assert_true(per_default < 5.0);
    assert_true(small_packets > 4 * full_packets);

    /* The same messages whatever the packing, and the same truth from the same seed. */
    assert_int_equal(full.messages.len, time_packed.messages.len);
    assert_memory_equal(full.messages.buf, time_packed.messages.buf, full.messages.len);
    assert_int_equal(full.truth_len, time_packed.truth_len);
    assert_memory_equal(full.truth, time_packed.truth, full.truth_len);
    assert_int_equal(small.truth_len, time_packed.truth_len);
    assert_memory_equal(small.truth, time_packed.truth, small.truth_len);

    itch_free(&time_packed);
    itch_free(&small);
    itch_free(&full);
}

/* The message with sequence seq (from 1) in BinaryFILE blocks: its bytes and length. */
static const uint8_t *nth_message(const struct mem_sink *s, uint64_t seq, uint16_t *len)
{
    size_t at = 0;
    for (uint64_t i = 1; i < seq; i++)
        at += 2 + tp_load_be16(s->buf + at);
    *len = tp_load_be16(s->buf + at);
    return s->buf + at + 2;
}

/* Re-requests answered from the filled stream's store give the messages the packets carried. */
static void test_itch_filled_rerequest(void **state)
{
    (void)state;
    struct itch_run r;
    itch_generate(&r, 1400);
    static const uint64_t firsts[] = {1, 777, 15000};
    for (size_t k = 0; k < sizeof(firsts) / sizeof(firsts[0]); k++) {
        struct tp_mold_request q = {.sequence = firsts[k], .count = 500};
        memcpy(q.session, "TPSIM00001", TP_MOLD_SESSION_LEN);
        uint8_t req[TP_MOLD_REQUEST_LEN], out[TP_SIM_REREQUEST_MAX_REPLY];
        assert_int_equal(tp_mold_request_encode(req, sizeof(req), &q), TP_MOLD_REQUEST_LEN);
        size_t len = tp_sim_mold_store_answer(&r.store, req, sizeof(req), out, sizeof(out));
        assert_true(len > TP_MOLD_HEADER_LEN && len <= 1400);
        struct tp_mold_packet p;
        assert_int_equal(tp_mold_parse(&p, out, len), TP_MOLD_MESSAGES);
        assert_int_equal(p.sequence, firsts[k]);
        assert_true(p.count > 20);
        const uint8_t *msg;
        uint16_t mlen;
        uint64_t seq = firsts[k];
        while (tp_mold_next(&p, &msg, &mlen) == 1) {
            uint16_t want_len;
            const uint8_t *want = nth_message(&r.messages, seq++, &want_len);
            assert_int_equal(mlen, want_len);
            assert_memory_equal(msg, want, mlen);
        }
    }
    itch_free(&r);
}

/* ---- MDP3 ---------------------------------------------------------------------------------- */

struct mdp3_run {
    struct captured packets;
    struct tp_sim_model model;
    struct tp_sim_mdp3_feed feed;
    uint8_t *messages; /* the incremental messages back to back, as sent */
    size_t messages_len, message_count, incremental_packets;
};

static void mdp3_generate(struct mdp3_run *r, uint16_t fill_bytes)
{
    memset(r, 0, sizeof(*r));
    model_init(&r->model, 12);
    struct tp_sim_mdp3_params mp;
    tp_sim_mdp3_params_default(&mp);
    mp.depth = DEPTH;
    mp.snapshot_every = 20;
    mp.snapshot_batch = 5;
    if (fill_bytes > 0) {
        mp.max_payload = fill_bytes;
        mp.pack_window_ns = TP_SIM_PACK_FILL;
    }
    struct tp_sim_packet_sink sink = {.packet = capture_packet, .ctx = &r->packets};
    assert_int_equal(tp_sim_mdp3_init(&r->feed, &r->model, &mp, &sink), 0);
    assert_int_equal(tp_sim_mdp3_run(&r->feed, EVENTS), 0);
    size_t cap = 0;
    for (size_t i = 0; i < r->packets.n; i++)
        cap += r->packets.p[i].len;
    r->messages = malloc(cap);
    assert_non_null(r->messages);
    for (size_t i = 0; i < r->packets.n; i++) {
        const struct tp_sim_packet *pk = &r->packets.p[i];
        if (pk->stream != TP_SIM_STREAM_INCREMENTAL)
            continue;
        r->incremental_packets++;
        size_t body = pk->len - TP_MDP3_PACKET_HEADER_LEN;
        memcpy(r->messages + r->messages_len, pk->data + TP_MDP3_PACKET_HEADER_LEN, body);
        r->messages_len += body;
        r->message_count += pk->count;
    }
}

static void mdp3_free(struct mdp3_run *r)
{
    free(r->packets.p);
    free(r->messages);
    tp_sim_mdp3_free(&r->feed);
    tp_sim_model_free(&r->model);
}

/* The first message's size (SBE header + body) in an MDP3 packet. */
static size_t first_message_len(const struct tp_sim_packet *pk)
{
    struct tp_mdp3_packet p;
    struct tp_mdp3_msg m;
    assert_int_equal(tp_mdp3_packet_init(&p, pk->data, pk->len), 0);
    size_t before = p.pos;
    assert_int_equal(tp_mdp3_packet_next(&p, &m), 1);
    return p.pos - before;
}

static void test_mdp3_filled(void **state)
{
    (void)state;
    struct mdp3_run time_packed, full;
    mdp3_generate(&time_packed, 0);
    mdp3_generate(&full, 1400);

    /* Every packet within the limit; incrementals full unless a snapshot batch closed them
     * early (the snapshot carries the last incremental sent); SendingTime is the packet's time
     * (its last message's) and never goes back; MsgSeqNum counts packets. */
    size_t last_incr = SIZE_MAX, early = 0;
    uint32_t next_seq = 1;
    uint64_t last_time = 0;
    int snapshot_since = 0;
    for (size_t i = 0; i < full.packets.n; i++) {
        const struct tp_sim_packet *pk = &full.packets.p[i];
        assert_true(pk->len <= 1400);
        if (pk->stream == TP_SIM_STREAM_SNAPSHOT)
            snapshot_since = 1;
        if (pk->stream != TP_SIM_STREAM_INCREMENTAL)
            continue;
        struct tp_mdp3_packet p;
        assert_int_equal(tp_mdp3_packet_init(&p, pk->data, pk->len), 0);
        assert_int_equal(p.seq, next_seq++);
        assert_true(p.sending_time == full.feed.params.midnight_epoch_ns + pk->time_ns);
        assert_true(pk->time_ns >= last_time);
        last_time = pk->time_ns;
        if (last_incr != SIZE_MAX) {
            if (snapshot_since)
                early++;
            else
                assert_true(full.packets.p[last_incr].len + first_message_len(pk) > 1400);
        }
        last_incr = i;
        snapshot_since = 0;
    }
    assert_true(early < full.incremental_packets / 10);

    /* The same incremental messages, byte for byte (EndOfEvent and Last*Msg bits included). */
    assert_int_equal(full.message_count, time_packed.message_count);
    assert_int_equal(full.messages_len, time_packed.messages_len);
    assert_memory_equal(full.messages, time_packed.messages, full.messages_len);
    double per_full = (double)full.message_count / (double)full.incremental_packets;
    double per_default =
        (double)time_packed.message_count / (double)time_packed.incremental_packets;
    assert_true(per_full > 10.0);
    assert_true(per_full > 3 * per_default);

    /* The same truth, and the filled channel (snapshots, RptSeqs, events, order books) replays
     * to it with no inconsistency. */
    size_t len_full, len_default;
    char *truth_full = truth_bytes(&full.model, TP_SIM_IMPLIED_DEPTH, &len_full);
    char *truth_default = truth_bytes(&time_packed.model, TP_SIM_IMPLIED_DEPTH, &len_default);
    assert_int_equal(len_full, len_default);
    assert_memory_equal(truth_full, truth_default, len_full);
    char path[256];
    temp_path(path, sizeof(path), ".json");
    assert_int_equal(tp_sim_truth_write(&full.model, DEPTH, TP_SIM_IMPLIED_DEPTH, path), 0);
    struct replay *r = calloc(1, sizeof(*r));
    assert_non_null(r);
    replay_all(full.packets.p, full.packets.n, r, INSTRUMENTS, full.model.next_order_id);
    assert_int_equal(r->errors, 0);
    assert_int_equal(r->mbo.errors, 0);
    assert_true(r->snapshots_checked > 50);
    check_mbp_truth(r, path);
    assert_int_equal(ref_compare_truth(&r->mbo, path, DEPTH), 0);
    unlink(path);
    replay_free(r);
    free(r);
    free(truth_full);
    free(truth_default);
    mdp3_free(&time_packed);
    mdp3_free(&full);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_itch_filled),
        cmocka_unit_test(test_itch_filled_rerequest),
        cmocka_unit_test(test_mdp3_filled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
