/*
 * Simulator: the fault injector does what its report says, packet for packet.
 * Source: 10000 MoldUDP64 packets (one message each, sequence = index + 1) through the injector;
 * the outputs of lines A and B are collected and compared with the report's lists.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "faults.h"
#include "mold_out.h"
#include "moldudp64.h"
#include "sim_test_util.h"

#define N_SOURCE 10000

/* Output packets are handed on in time order. */
static int in_time_order(const struct captured *c)
{
    for (size_t i = 1; i < c->n; i++)
        if (c->p[i].time_ns < c->p[i - 1].time_ns)
            return 0;
    return 1;
}

static void make_source(struct tp_sim_packet *p, uint32_t index)
{
    struct tp_mold_writer w;
    memset(p, 0, sizeof(*p));
    p->index = index;
    p->seq = (uint64_t)index + 1;
    p->count = 1;
    p->time_ns = 1000000 + (uint64_t)index * 1000;
    p->stream = TP_SIM_STREAM_INCREMENTAL;
    tp_mold_writer_init(&w, p->data, sizeof(p->data), "TPSIM00001", p->seq);
    uint8_t msg[40];
    for (size_t i = 0; i < sizeof(msg); i++)
        msg[i] = (uint8_t)(index * 7 + i);
    tp_mold_writer_add(&w, msg, sizeof(msg));
    p->len = (uint16_t)w.len;
}

/* Runs the injector over the source; returns its report (caller decrefs). */
static json_t *run(const struct tp_sim_fault_params *params, struct captured *out)
{
    struct tp_sim_faults f;
    struct tp_sim_packet_sink sink = {.packet = capture_packet, .ctx = out};
    memset(out, 0, sizeof(*out));
    assert_int_equal(tp_sim_faults_init(&f, params, &sink), 0);
    struct tp_sim_packet src;
    for (uint32_t i = 0; i < N_SOURCE; i++) {
        make_source(&src, i);
        assert_int_equal(tp_sim_faults_packet(&f, &src), 0);
    }
    assert_int_equal(tp_sim_faults_finish(&f), 0);
    json_t *report = tp_sim_faults_report(&f);
    tp_sim_faults_free(&f);
    return report;
}

static void base_params(struct tp_sim_fault_params *p)
{
    memset(p, 0, sizeof(*p));
    p->seed = 99;
    p->line[0].enabled = p->line[1].enabled = 1;
    p->heartbeat = tp_sim_mold_heartbeat;
}

/* How many times each source index appears on a line. */
static void count_line(const struct captured *c, int line, uint8_t *seen)
{
    memset(seen, 0, N_SOURCE);
    for (size_t i = 0; i < c->n; i++)
        if (c->p[i].line == line)
            seen[c->p[i].index]++;
}

/* Marks the indices listed under report[line][kind]; returns how many. */
static size_t listed(json_t *report, const char *line, const char *kind, uint8_t *mark)
{
    memset(mark, 0, N_SOURCE);
    json_t *arr = json_object_get(json_object_get(report, line), kind);
    size_t i;
    json_t *e;
    json_array_foreach(arr, i, e)
    {
        json_int_t index = json_integer_value(json_object_get(e, "index"));
        assert_true(index >= 0 && index < N_SOURCE);
        assert_int_equal(json_integer_value(json_object_get(e, "seq")), index + 1);
        mark[index] = 1;
    }
    return json_array_size(arr);
}

static void test_no_faults_is_identity(void **state)
{
    (void)state;
    struct tp_sim_fault_params p;
    base_params(&p);
    struct captured c;
    json_t *r = run(&p, &c);
    assert_int_equal(c.n, 2 * N_SOURCE);
    assert_true(in_time_order(&c));
    struct tp_sim_packet src;
    for (size_t i = 0; i < c.n; i++) {
        make_source(&src, c.p[i].index);
        assert_int_equal(c.p[i].len, src.len);
        assert_memory_equal(c.p[i].data, src.data, src.len);
        assert_int_equal(c.p[i].time_ns, src.time_ns);
    }
    json_decref(r);
    free(c.p);
}

static void test_random_loss_on_a(void **state)
{
    (void)state;
    struct tp_sim_fault_params p;
    base_params(&p);
    p.line[0].loss = 0.01;
    struct captured c;
    json_t *r = run(&p, &c);
    uint8_t seen[N_SOURCE], lost[N_SOURCE];
    size_t n_lost = listed(r, "A", "lost", lost);
    /* About 1%: 100 expected, binomial sd ~10. */
    assert_true(n_lost > 60 && n_lost < 140);
    count_line(&c, 0, seen);
    for (int i = 0; i < N_SOURCE; i++)
        assert_int_equal(seen[i], lost[i] ? 0 : 1); /* exactly the listed packets are gone */
    count_line(&c, 1, seen);
    for (int i = 0; i < N_SOURCE; i++)
        assert_int_equal(seen[i], 1); /* line B untouched */
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "A"), "sent")),
                     N_SOURCE - (json_int_t)n_lost);
    json_decref(r);
    free(c.p);
}

static void test_burst_loss(void **state)
{
    (void)state;
    struct tp_sim_fault_params p;
    base_params(&p);
    p.line[1].burst = 0.001;
    p.line[1].burst_len = 8;
    struct captured c;
    json_t *r = run(&p, &c);
    uint8_t seen[N_SOURCE], lost[N_SOURCE];
    size_t n_lost = listed(r, "B", "lost", lost);
    assert_true(n_lost >= 8 * 5);
    count_line(&c, 1, seen);
    /* Losses come in runs of 8 (a run may merge with the next one). */
    int run_len = 0;
    for (int i = 0; i < N_SOURCE; i++) {
        assert_int_equal(seen[i], lost[i] ? 0 : 1);
        if (lost[i]) {
            run_len++;
        } else {
            assert_true(run_len == 0 || run_len >= 8);
            run_len = 0;
        }
    }
    json_decref(r);
    free(c.p);
}

static void test_both_lines_lose_the_same(void **state)
{
    (void)state;
    struct tp_sim_fault_params p;
    base_params(&p);
    p.both_loss = 0.005;
    struct captured c;
    json_t *r = run(&p, &c);
    uint8_t seen_a[N_SOURCE], seen_b[N_SOURCE], lost_a[N_SOURCE], lost_b[N_SOURCE];
    size_t na = listed(r, "A", "both_lost", lost_a);
    size_t nb = listed(r, "B", "both_lost", lost_b);
    assert_int_equal(na, nb);
    assert_true(na > 20 && na < 90);
    assert_memory_equal(lost_a, lost_b, N_SOURCE);
    count_line(&c, 0, seen_a);
    count_line(&c, 1, seen_b);
    for (int i = 0; i < N_SOURCE; i++) {
        assert_int_equal(seen_a[i], lost_a[i] ? 0 : 1);
        assert_int_equal(seen_b[i], lost_a[i] ? 0 : 1);
    }
    json_decref(r);
    free(c.p);
}

static void test_duplicates(void **state)
{
    (void)state;
    struct tp_sim_fault_params p;
    base_params(&p);
    p.line[1].duplicate = 0.02;
    struct captured c;
    json_t *r = run(&p, &c);
    uint8_t seen[N_SOURCE], dup[N_SOURCE];
    size_t n = listed(r, "B", "duplicated", dup);
    assert_true(n > 130 && n < 270);
    count_line(&c, 1, seen);
    for (int i = 0; i < N_SOURCE; i++)
        assert_int_equal(seen[i], dup[i] ? 2 : 1);
    assert_true(in_time_order(&c));
    json_decref(r);
    free(c.p);
}

static void test_reordering(void **state)
{
    (void)state;
    struct tp_sim_fault_params p;
    base_params(&p);
    p.line[0].reorder = 0.01;
    struct captured c;
    json_t *r = run(&p, &c);
    uint8_t seen[N_SOURCE], moved[N_SOURCE];
    size_t n = listed(r, "A", "reordered", moved);
    assert_true(n > 50);
    count_line(&c, 0, seen);
    for (int i = 0; i < N_SOURCE; i++)
        assert_int_equal(seen[i], 1); /* nothing lost, nothing added */
    /* On line A, a reordered packet comes right after its successor; others are in order. */
    uint32_t prev = 0;
    size_t inversions = 0;
    int first = 1;
    for (size_t i = 0; i < c.n; i++) {
        if (c.p[i].line != 0)
            continue;
        if (!first && c.p[i].index < prev) {
            inversions++;
            assert_true(moved[c.p[i].index]);
            assert_int_equal(c.p[i].index + 1, prev);
        }
        prev = c.p[i].index;
        first = 0;
    }
    assert_int_equal(inversions, n);
    assert_true(in_time_order(&c));
    json_decref(r);
    free(c.p);
}

static void test_truncation_and_corruption(void **state)
{
    (void)state;
    struct tp_sim_fault_params p;
    base_params(&p);
    p.line[0].truncate = 0.01;
    p.line[1].corrupt = 0.01;
    struct captured c;
    json_t *r = run(&p, &c);
    uint8_t cut[N_SOURCE], bad[N_SOURCE];
    size_t n_cut = listed(r, "A", "truncated", cut);
    size_t n_bad = listed(r, "B", "corrupted", bad);
    assert_true(n_cut > 50 && n_bad > 50);
    json_t *cut_list = json_object_get(json_object_get(r, "A"), "truncated");
    json_t *bad_list = json_object_get(json_object_get(r, "B"), "corrupted");
    size_t k_cut = 0, k_bad = 0;
    struct tp_sim_packet src;
    for (size_t i = 0; i < c.n; i++) {
        const struct tp_sim_packet *o = &c.p[i];
        make_source(&src, o->index);
        if (o->line == 0 && cut[o->index]) {
            json_t *e = json_array_get(cut_list, k_cut++);
            assert_int_equal(json_integer_value(json_object_get(e, "index")), o->index);
            assert_int_equal(json_integer_value(json_object_get(e, "len")), o->len);
            assert_true(o->len < src.len && o->len >= 1);
            assert_memory_equal(o->data, src.data, o->len); /* a prefix, not altered */
        } else if (o->line == 1 && bad[o->index]) {
            json_t *e = json_array_get(bad_list, k_bad++);
            json_int_t offset = json_integer_value(json_object_get(e, "offset"));
            assert_int_equal(o->len, src.len);
            for (uint16_t b = 0; b < src.len; b++)
                assert_true((o->data[b] != src.data[b]) == (b == offset));
        } else {
            assert_int_equal(o->len, src.len);
            assert_memory_equal(o->data, src.data, src.len);
        }
    }
    assert_int_equal(k_cut, n_cut);
    assert_int_equal(k_bad, n_bad);
    json_decref(r);
    free(c.p);
}

static void test_delay_heartbeats_late_join(void **state)
{
    (void)state;
    struct tp_sim_fault_params p;
    base_params(&p);
    p.line[1].delay_ns = 25000; /* 25 source packets later */
    p.line[1].heartbeat_from = 1000;
    p.line[1].heartbeat_to = 1100;
    p.line[0].late_join = 5000;
    struct captured c;
    json_t *r = run(&p, &c);
    assert_true(in_time_order(&c)); /* merged in time order across lines */
    uint8_t seen[N_SOURCE], hb[N_SOURCE];
    assert_int_equal(listed(r, "B", "heartbeat", hb), 100);
    count_line(&c, 0, seen);
    for (int i = 0; i < N_SOURCE; i++)
        assert_int_equal(seen[i], i >= 5000 ? 1 : 0);
    assert_int_equal(json_integer_value(json_object_get(json_object_get(r, "A"), "joined_at_seq")),
                     5001);
    struct tp_sim_packet src;
    for (size_t i = 0; i < c.n; i++) {
        const struct tp_sim_packet *o = &c.p[i];
        make_source(&src, o->index);
        if (o->line != 1)
            continue;
        assert_int_equal(o->time_ns, src.time_ns + 25000);
        struct tp_mold_packet mp;
        int kind = tp_mold_parse(&mp, o->data, o->len);
        if (hb[o->index]) {
            assert_int_equal(kind, TP_MOLD_HEARTBEAT);
            assert_int_equal(mp.sequence, src.seq); /* the next expected sequence */
            assert_memory_equal(mp.session, "TPSIM00001", 10);
        } else {
            assert_int_equal(kind, TP_MOLD_MESSAGES);
        }
    }
    json_decref(r);
    free(c.p);
}

static void test_same_seed_same_faults(void **state)
{
    (void)state;
    struct tp_sim_fault_params p;
    base_params(&p);
    p.line[0].loss = 0.02;
    p.line[1].reorder = 0.02;
    p.line[1].duplicate = 0.02;
    struct captured c1, c2, c3;
    json_t *r1 = run(&p, &c1), *r2 = run(&p, &c2);
    p.seed = 100;
    json_t *r3 = run(&p, &c3);
    assert_true(json_equal(r1, r2));
    assert_false(json_equal(r1, r3));
    assert_int_equal(c1.n, c2.n);
    for (size_t i = 0; i < c1.n; i++)
        assert_int_equal(c1.p[i].index, c2.p[i].index);
    json_decref(r1);
    json_decref(r2);
    json_decref(r3);
    free(c1.p);
    free(c2.p);
    free(c3.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_faults_is_identity),
        cmocka_unit_test(test_random_loss_on_a),
        cmocka_unit_test(test_burst_loss),
        cmocka_unit_test(test_both_lines_lose_the_same),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_reordering),
        cmocka_unit_test(test_truncation_and_corruption),
        cmocka_unit_test(test_delay_heartbeats_late_join),
        cmocka_unit_test(test_same_seed_same_faults),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
