/*
 * Simulator: order-flow model and ITCH output.
 * - same seed -> identical bytes, different seed -> different bytes;
 * - the truth file equals a replay of the ITCH output (decoded with codecs/itch) through the
 *   reference book in sim_test_util.c;
 * - the message mix and the Zipf skew are what the tool promises; books never cross.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "binaryfile.h"
#include "itch50.h"
#include "itch_feed.h"
#include "model.h"
#include "sim_test_util.h"
#include "truth.h"

static void generate(uint64_t seed, uint32_t instruments, uint64_t events, struct mem_sink *out,
                     struct tp_sim_model *m)
{
    struct tp_sim_params p;
    tp_sim_params_default(&p);
    p.seed = seed;
    p.instruments = instruments;
    assert_int_equal(tp_sim_model_init(m, &p), 0);
    struct tp_sim_msg_sink sink = {.message = mem_sink_message, .ctx = out};
    assert_int_equal(tp_sim_itch_run(m, events, &sink), 0);
    assert_true(m->events_total >= events);
}

static void test_same_seed_same_bytes(void **state)
{
    (void)state;
    struct mem_sink a = {0}, b = {0}, c = {0};
    struct tp_sim_model ma, mb, mc;
    generate(42, 100, 20000, &a, &ma);
    generate(42, 100, 20000, &b, &mb);
    generate(43, 100, 20000, &c, &mc);
    assert_int_equal(a.len, b.len);
    assert_memory_equal(a.buf, b.buf, a.len);
    assert_true(a.len != c.len || memcmp(a.buf, c.buf, a.len) != 0);

    char pa[256], pb[256];
    temp_path(pa, sizeof(pa), ".json");
    temp_path(pb, sizeof(pb), ".json");
    assert_int_equal(tp_sim_truth_write(&ma, 10, 0, pa), 0);
    assert_int_equal(tp_sim_truth_write(&mb, 10, 0, pb), 0);
    FILE *fa = fopen(pa, "rb"), *fb = fopen(pb, "rb");
    int ca, cb;
    do {
        ca = fgetc(fa);
        cb = fgetc(fb);
        assert_int_equal(ca, cb);
    } while (ca != EOF);
    fclose(fa);
    fclose(fb);
    unlink(pa);
    unlink(pb);
    tp_sim_model_free(&ma);
    tp_sim_model_free(&mb);
    tp_sim_model_free(&mc);
    mem_sink_free(&a);
    mem_sink_free(&b);
    mem_sink_free(&c);
}

/* Rebuilds the order-level books from ITCH messages; returns messages per type. */
static void replay_itch(const struct mem_sink *s, struct ref_book *book, size_t counts[256])
{
    struct tp_binfile_reader r;
    const uint8_t *msg;
    uint16_t len;
    tp_binfile_reader_init(&r, s->buf, s->len);
    int rc;
    while ((rc = tp_binfile_next(&r, &msg, &len)) == 1) {
        int type = tp_itch_check(msg, len);
        assert_true(type > 0);
        counts[type]++;
        ref_apply_itch(book, msg, len);
    }
    assert_int_equal(rc, 0);
}

static void test_truth_equals_replay(void **state)
{
    (void)state;
    struct mem_sink s = {0};
    struct tp_sim_model m;
    generate(7, 60, 40000, &s, &m);
    char path[256];
    temp_path(path, sizeof(path), ".json");
    assert_int_equal(tp_sim_truth_write(&m, 10, 0, path), 0);

    struct ref_book book;
    ref_init(&book, 60, m.next_order_id);
    size_t counts[256] = {0};
    replay_itch(&s, &book, counts);
    assert_int_equal(book.errors, 0);
    assert_int_equal(ref_compare_truth(&book, path, 10), 0);

    /* The comparison is not vacuous: a changed order breaks it. */
    for (uint64_t id = 0; id < book.cap; id++)
        if (book.orders[id].live) {
            book.orders[id].qty += 1;
            break;
        }
    assert_int_equal(ref_compare_truth(&book, path, 10), 1);

    unlink(path);
    ref_free(&book);
    tp_sim_model_free(&m);
    mem_sink_free(&s);
}

static void test_mix_skew_and_uncrossed_books(void **state)
{
    (void)state;
    struct mem_sink s = {0};
    struct tp_sim_model m;
    generate(11, 500, 200000, &s, &m);
    struct ref_book book;
    ref_init(&book, 500, m.next_order_id);
    size_t counts[256] = {0};
    replay_itch(&s, &book, counts);
    double flow = (double)m.events_total;
    double adds = (double)(counts['A'] + counts['F']) / flow;
    double dels = (double)counts['D'] / flow;
    double reps = (double)counts['U'] / flow;
    double exec_cancel = (double)(counts['E'] + counts['C'] + counts['X']) / flow;
    assert_true(adds > 0.37 && adds < 0.45);
    assert_true(dels > 0.32 && dels < 0.40);
    assert_true(reps > 0.08 && reps < 0.12);
    assert_true(exec_cancel > 0.08 && exec_cancel < 0.14);
    assert_true(counts['F'] > 0 && counts['C'] > 0 && counts['P'] > 0 && counts['H'] > 500);
    assert_int_equal(counts['R'], 500);
    assert_int_equal(counts['Y'], 500);
    assert_int_equal(counts['L'], 500);
    assert_int_equal(counts['I'], 500);
    assert_int_equal(counts['V'], 1);
    assert_int_equal(counts['S'], 6);

    /* Zipf: the busiest instrument carries far more than the median one. */
    size_t per[500] = {0};
    for (uint64_t id = 1; id < book.cap; id++)
        per[book.orders[id].instrument]++;
    size_t max = 0, above_100 = 0;
    for (int i = 0; i < 500; i++) {
        max = per[i] > max ? per[i] : max;
        above_100 += per[i] > 100;
    }
    assert_true(max > 10000);
    assert_true(above_100 < 250);

    /* Never crossed: best bid below best ask everywhere. */
    for (uint32_t i = 0; i < 500; i++) {
        struct tp_sim_level bid, ask;
        if (tp_sim_model_levels(&m, i, 'B', &bid, 1) && tp_sim_model_levels(&m, i, 'S', &ask, 1))
            assert_true(bid.price9 < ask.price9);
    }
    ref_free(&book);
    tp_sim_model_free(&m);
    mem_sink_free(&s);
}

/* Microbursts: a burst of burst_events events, burst_gap_ns apart, starts at every period. */
static void test_microbursts_at_fixed_periods(void **state)
{
    (void)state;
    struct tp_sim_params p;
    tp_sim_params_default(&p);
    p.instruments = 50;
    struct tp_sim_model m;
    assert_int_equal(tp_sim_model_init(&m, &p), 0);
    uint64_t first = 0, prev = 0, last_start = 0, starts = 0, in_burst = 0;
    while (m.events_total < 100000) {
        const struct tp_sim_event *ev;
        int n = tp_sim_model_step(&m, &ev);
        assert_true(n > 0);
        uint64_t t = ev[0].time_ns;
        if (first == 0)
            first = t;
        assert_true(t > prev || prev == 0);
        if (t % p.burst_period_ns == 0) {
            /* Every period has its burst, none is skipped. */
            assert_true(last_start == 0 || t == last_start + p.burst_period_ns);
            last_start = t;
            starts++;
            in_burst = p.burst_events - 1;
        } else if (in_burst > 0) {
            assert_int_equal(t - prev, p.burst_gap_ns);
            in_burst--;
        }
        prev = t;
    }
    assert_true(starts > 5);
    assert_int_equal(starts, prev / p.burst_period_ns - first / p.burst_period_ns);
    tp_sim_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_seed_same_bytes),
        cmocka_unit_test(test_truth_equals_replay),
        cmocka_unit_test(test_mix_skew_and_uncrossed_books),
        cmocka_unit_test(test_microbursts_at_fixed_periods),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
