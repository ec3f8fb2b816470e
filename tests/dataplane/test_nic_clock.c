/*
 * NIC clock -> TSC model (dataplane/ports/nic_clock.h): a simulated NIC clock of a given rate
 * and drift read against a simulated TSC, and the stamps it maps compared with the TSC of the
 * same instants.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "nic_clock.h"

#define TSC_HZ       2450000000.0
#define WITHIN_100NS 245 /* TSC ticks */

/* Two clocks of one host: the TSC and a NIC clock of nic_hz ticks per second, off by ppm. */
struct clocks {
    double nic_hz;
    double ppm;
    uint64_t tsc0, nic0;
};

static uint64_t tsc_at(const struct clocks *k, double t)
{
    return k->tsc0 + (uint64_t)(t * TSC_HZ);
}

static uint64_t nic_at(const struct clocks *k, double t)
{
    return k->nic0 + (uint64_t)(t * k->nic_hz * (1.0 + k->ppm * 1e-6));
}

/*
 * A reading around time t whose TSC bracket is `width` ticks; the NIC clock is read anywhere
 * inside the bracket, as a real read is.
 */
static bool read_at(struct tp_nic_clock *c, const struct clocks *k, double t, uint64_t width)
{
    uint64_t start = tsc_at(k, t) - width / 2;
    double read = t + ((double)(rand() % 1001) / 1000.0 - 0.5) * (double)width / TSC_HZ;
    return tp_nic_clock_reading(c, nic_at(k, read), start, start + width);
}

/* Readings every 10 ms from `from` for `seconds`, brackets of 200-1000 ticks (0: exact reads). */
static void read_every_10ms_width(struct tp_nic_clock *c, const struct clocks *k, double from,
                                  double seconds, bool exact)
{
    for (double t = from; t < from + seconds; t += 0.01)
        assert_true(read_at(c, k, t, exact ? 0 : 200 + (uint64_t)(rand() % 800)));
}

static void read_every_10ms(struct tp_nic_clock *c, const struct clocks *k, double from,
                            double seconds)
{
    read_every_10ms_width(c, k, from, seconds, false);
}

static void assert_maps(const struct tp_nic_clock *c, const struct clocks *k, double t,
                        uint64_t tolerance)
{
    uint64_t got = tp_nic_clock_tsc(c, nic_at(k, t)), want = tsc_at(k, t);
    uint64_t err = got > want ? got - want : want - got;
    if (err > tolerance)
        fail_msg("t=%.6f: mapped %lu, TSC %lu (off by %lu ticks)", t, (unsigned long)got,
                 (unsigned long)want, (unsigned long)err);
}

static struct tp_nic_clock model(void)
{
    struct tp_nic_clock c;
    tp_nic_clock_init(&c, (uint64_t)TSC_HZ, 25000); /* one-second slopes, 10 us brackets */
    return c;
}

static void test_not_ready_before_a_span(void **state)
{
    (void)state;
    struct clocks k = {.nic_hz = 1e9, .tsc0 = 1000000, .nic0 = 5000};
    struct tp_nic_clock c = model();
    assert_false(tp_nic_clock_ready(&c));
    read_every_10ms(&c, &k, 0, 0.995);
    assert_false(tp_nic_clock_ready(&c));
    read_every_10ms(&c, &k, 1.0, 0.02);
    assert_true(tp_nic_clock_ready(&c));
}

/* Exact reads: the line through them maps a stamp to within rounding (2 ticks). */
static void test_exact_reads(void **state)
{
    (void)state;
    struct clocks k = {.nic_hz = 1e9, .ppm = 50, .tsc0 = 77777777, .nic0 = 1700000000000000000ull};
    struct tp_nic_clock c = model();
    read_every_10ms_width(&c, &k, 0, 2.0, true);
    for (double t = 1.995; t < 2.0; t += 0.0001)
        assert_maps(&c, &k, t, 2);
}

/*
 * A nanosecond NIC clock 50 ppm fast, read in brackets of up to 1000 ticks (a single reading off
 * by up to 500): stamps between readings map within 100 ns.
 */
static void test_follows_a_drifting_ns_clock(void **state)
{
    (void)state;
    struct clocks k = {.nic_hz = 1e9, .ppm = 50, .tsc0 = 77777777, .nic0 = 1700000000000000000ull};
    struct tp_nic_clock c = model();
    read_every_10ms(&c, &k, 0, 2.0);
    for (double t = 1.995; t < 2.0; t += 0.0001)
        assert_maps(&c, &k, t, WITHIN_100NS);
    /* A stamp taken before the latest reading (a packet waiting in the rx ring) maps too. */
    assert_maps(&c, &k, 1.985, WITHIN_100NS);
}

/* A device clock of 156.25 MHz ticks (not nanoseconds), 20 ppm slow. */
static void test_device_ticks(void **state)
{
    (void)state;
    struct clocks k = {.nic_hz = 156.25e6, .ppm = -20, .tsc0 = 5000000, .nic0 = 123456789};
    struct tp_nic_clock c = model();
    read_every_10ms(&c, &k, 0, 3.0);
    for (double t = 2.991; t < 3.0; t += 0.0003)
        assert_maps(&c, &k, t, WITHIN_100NS);
}

/* An interrupted read (a bracket of 1 ms) is dropped and changes nothing. */
static void test_wide_bracket_dropped(void **state)
{
    (void)state;
    struct clocks k = {.nic_hz = 1e9, .tsc0 = 1000000, .nic0 = 1};
    struct tp_nic_clock c = model();
    read_every_10ms(&c, &k, 0, 1.5);
    struct tp_nic_clock before = c;
    struct clocks skewed = k;
    skewed.nic0 += 1000000; /* what a reading taken at the wrong moment would say */
    assert_false(read_at(&c, &skewed, 1.505, (uint64_t)(TSC_HZ / 1000)));
    assert_int_equal(c.dropped, 1);
    assert_memory_equal(&c.nic, &before.nic, offsetof(struct tp_nic_clock, dropped));
    assert_maps(&c, &k, 1.506, WITHIN_100NS);
}

/*
 * The NIC clock stepped back (reset, PTP): the step is counted, the slope stays in use from the
 * new reading, and a slope is measured again from it.
 */
static void test_step_back(void **state)
{
    (void)state;
    struct clocks k = {.nic_hz = 1e9, .ppm = 10, .tsc0 = 1000, .nic0 = 1000000000000ull};
    struct tp_nic_clock c = model();
    read_every_10ms(&c, &k, 0, 1.5);
    uint64_t slope = c.tsc_per_nic;
    struct clocks stepped = k;
    stepped.tsc0 = tsc_at(&k, 1.5) - (uint64_t)(1.5 * TSC_HZ);
    stepped.nic0 = k.nic0 - 500000000; /* half a second back */
    read_every_10ms(&c, &stepped, 1.5, 0.5);
    assert_int_equal(c.steps, 1);
    assert_int_equal(c.tsc_per_nic, slope);
    assert_maps(&c, &stepped, 1.995, WITHIN_100NS);
    read_every_10ms(&c, &stepped, 2.0, 1.1);
    assert_true(c.tsc_per_nic != slope);
    assert_maps(&c, &stepped, 3.095, WITHIN_100NS);
}

/* Readings 3 s apart (a stalled lcore): the span's TSC ticks exceed 32 bits, the slope holds. */
static void test_long_gap_between_readings(void **state)
{
    (void)state;
    struct clocks k = {.nic_hz = 1e9, .ppm = -30, .tsc0 = 4200000, .nic0 = 42};
    struct tp_nic_clock c = model();
    assert_true(read_at(&c, &k, 0, 500));
    assert_true(read_at(&c, &k, 3.0, 500));
    assert_true(tp_nic_clock_ready(&c));
    assert_maps(&c, &k, 3.001, WITHIN_100NS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_not_ready_before_a_span),     cmocka_unit_test(test_exact_reads),
        cmocka_unit_test(test_follows_a_drifting_ns_clock), cmocka_unit_test(test_device_ticks),
        cmocka_unit_test(test_wide_bracket_dropped),        cmocka_unit_test(test_step_back),
        cmocka_unit_test(test_long_gap_between_readings),
    };
    srand(1); /* the same read jitter every run */
    return cmocka_run_group_tests(tests, NULL, NULL);
}
