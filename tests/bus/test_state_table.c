/* Conflated state table: writes, reads, bounds, a stuck writer, and a torn-read hunt across
 * processes. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "bus/counters.h"
#include "bus/state_table.h"

#define DEPTH 10

static struct tp_state_table *make_table(uint32_t instruments, int shared)
{
    struct tp_state_params p = {.instruments = instruments, .depth = DEPTH};
    size_t size = tp_state_memsize(&p);
    assert_true(size > 0);
    void *mem = shared ? mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                       : aligned_alloc(64, (size + 63) / 64 * 64);
    assert_true(mem != NULL && mem != MAP_FAILED);
    assert_int_equal(tp_state_init(mem, &p), 0);
    assert_int_equal(tp_state_validate(mem, size), 0);
    return mem;
}

/* Every field of the entry derived from one counter k: a torn copy cannot satisfy check_state. */
static void write_state(struct tp_state_table *t, uint32_t id, uint64_t k)
{
    struct tp_state_entry *e = tp_state_write_begin(t, id);
    e->book.bus_sequence = k;
    e->book.venue_seq = k * 3;
    e->book.venue_time_ns = k * 5;
    e->book.recv_tsc = k * 7;
    e->book.updates = k;
    e->book.bid_levels = (uint16_t)(1 + k % DEPTH);
    e->book.ask_levels = (uint16_t)(1 + (k / 3) % DEPTH);
    e->book.last_trade.price = (int64_t)k * 11;
    e->book.volume = (int64_t)k * 13;
    struct tp_level *bids = tp_state_bids(e), *asks = tp_state_asks(t, e);
    for (int i = 0; i < DEPTH; i++) {
        bids[i] =
            (struct tp_level){.price = (int64_t)k - i, .qty = (int64_t)k * 2 + i, .orders = i};
        asks[i] =
            (struct tp_level){.price = (int64_t)k + i, .qty = (int64_t)k * 4 + i, .orders = i};
    }
    tp_state_write_end(e);
}

/* 1 when the copy is consistent with its own bus_sequence. */
static int state_consistent(const struct tp_instrument_state *s)
{
    uint64_t k = s->book.bus_sequence;
    if (s->book.venue_seq != k * 3 || s->book.venue_time_ns != k * 5 || s->book.recv_tsc != k * 7 ||
        s->book.updates != k || s->book.bid_levels != 1 + k % DEPTH ||
        s->book.ask_levels != 1 + (k / 3) % DEPTH || s->book.last_trade.price != (int64_t)k * 11 ||
        s->book.volume != (int64_t)k * 13)
        return 0;
    for (int i = 0; i < DEPTH; i++) {
        if (s->bids[i].price != (int64_t)k - i || s->bids[i].qty != (int64_t)k * 2 + i ||
            s->asks[i].price != (int64_t)k + i || s->asks[i].qty != (int64_t)k * 4 + i)
            return 0;
    }
    return 1;
}

static void test_write_and_read(void **state)
{
    (void)state;
    struct tp_state_table *t = make_table(8, 0);
    struct tp_instrument_state s;
    assert_int_equal(tp_state_read(t, 3, &s, 10), 0);
    assert_int_equal(s.book.instrument_id, 3);
    assert_int_equal(s.book.bid_levels, 0);
    assert_true(s.book.last_trade.price == TP_PRICE_NULL);

    write_state(t, 3, 42);
    memset(&s, 0x55, sizeof(s));
    assert_int_equal(tp_state_read(t, 3, &s, 10), 0);
    assert_true(state_consistent(&s));
    assert_int_equal(s.book.bus_sequence, 42);
    /* Levels beyond the table depth come back zeroed, not as stale bytes. */
    assert_int_equal(s.bids[DEPTH].price, 0);
    assert_int_equal(s.asks[TP_MAX_DEPTH - 1].qty, 0);

    /* Whole-state write clamps level counts to the table depth. */
    struct tp_instrument_state in;
    memset(&in, 0, sizeof(in));
    in.book.instrument_id = 7;
    in.book.bid_levels = TP_MAX_DEPTH;
    in.bids[0].price = 99;
    in.asks[DEPTH - 1].price = 101;
    in.asks[DEPTH].price = 555; /* beyond the table depth: dropped */
    assert_int_equal(tp_state_write(t, &in), 0);
    assert_int_equal(tp_state_read(t, 7, &s, 10), 0);
    assert_int_equal(s.book.bid_levels, DEPTH);
    assert_int_equal(s.bids[0].price, 99);
    assert_int_equal(s.asks[DEPTH - 1].price, 101);
    assert_int_equal(s.asks[DEPTH].price, 0);

    assert_int_equal(tp_state_read(t, 8, &s, 10), -ERANGE);
    in.book.instrument_id = 8;
    assert_int_equal(tp_state_write(t, &in), -ERANGE);
    assert_null(tp_state_write_begin(t, 8));
    free(t);
}

static void test_stuck_writer_gives_eagain(void **state)
{
    (void)state;
    struct tp_state_table *t = make_table(2, 0);
    struct tp_instrument_state s;
    /* A writer that died inside the bracket leaves the entry odd for ever. */
    tp_state_write_begin(t, 1);
    assert_int_equal(tp_state_read(t, 1, &s, 1000), -EAGAIN);
    assert_int_equal(tp_state_read(t, 0, &s, 1000), 0);
    free(t);
}

static void test_bad_params(void **state)
{
    (void)state;
    struct tp_state_params p = {.instruments = 0, .depth = 5};
    assert_int_equal(tp_state_memsize(&p), 0);
    p = (struct tp_state_params){.instruments = 5, .depth = 0};
    assert_int_equal(tp_state_memsize(&p), 0);
    p = (struct tp_state_params){.instruments = 5, .depth = TP_MAX_DEPTH + 1};
    assert_int_equal(tp_state_memsize(&p), 0);
    assert_int_equal(tp_state_entry_size(DEPTH) % 64, 0);
    struct tp_state_table *t = make_table(2, 0);
    assert_int_equal(tp_state_validate(t, 64), -EINVAL);
    free(t);
}

/*
 * A child hammers 4 entries as fast as it can for ~1 s while the parent reads them: every
 * successful copy must be consistent, and reads must succeed often (retries are bounded).
 */
static void test_seqlock_under_hammering_writer(void **state)
{
    (void)state;
    struct tp_state_table *t = make_table(4, 1);
    volatile int *stop =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    *stop = 0;
    pid_t pid = fork();
    if (pid == 0) {
        uint64_t k = 1;
        while (!__atomic_load_n(stop, __ATOMIC_RELAXED)) {
            write_state(t, (uint32_t)(k % 4), k);
            k++;
        }
        _exit(0);
    }
    struct tp_instrument_state s;
    uint64_t reads = 0, torn = 0, busy = 0, changes = 0, last = 0;
    struct timespec t0, now;
    long elapsed;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (uint32_t id = 0; id < 4; id++) {
            int rc = tp_state_read(t, id, &s, 1000);
            if (rc == -EAGAIN) {
                busy++;
                continue;
            }
            assert_int_equal(rc, 0);
            reads++;
            if (s.book.bus_sequence != 0 && !state_consistent(&s))
                torn++;
            if (s.book.bus_sequence != last)
                changes++;
            last = s.book.bus_sequence;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        elapsed = (now.tv_sec - t0.tv_sec) * 1000000000L + (now.tv_nsec - t0.tv_nsec);
        /* At least a second of reads; longer while a starved core kept the writer from running
         * beside the reader, up to 20 s (within the test's timeout). */
    } while (elapsed < 1000000000L ||
             ((reads <= 10000 || changes <= 1000) && elapsed < 20 * 1000000000L));
    __atomic_store_n(stop, 1, __ATOMIC_RELAXED);
    int status;
    waitpid(pid, &status, 0);
    print_message("seqlock: %llu reads, %llu distinct, %llu gave up\n", (unsigned long long)reads,
                  (unsigned long long)changes, (unsigned long long)busy);
    assert_int_equal(torn, 0);
    assert_true(reads > 10000);
    assert_true(changes > 1000); /* the writer really was changing what we read */
}

/* The copy is a plain memcpy, so the check above must be able to fail: show that it does. */
static void test_consistency_check_catches_a_torn_copy(void **state)
{
    (void)state;
    struct tp_state_table *t = make_table(2, 0);
    write_state(t, 0, 100);
    struct tp_instrument_state s;
    assert_int_equal(tp_state_read(t, 0, &s, 10), 0);
    assert_true(state_consistent(&s));
    s.asks[DEPTH - 1].qty++; /* as if the tail of the copy came from the next write */
    assert_false(state_consistent(&s));
    free(t);
}

static void test_counters(void **state)
{
    (void)state;
    size_t size = tp_counters_memsize(4);
    struct tp_counters *c = aligned_alloc(64, size);
    assert_int_equal(tp_counters_init(c, 4), 0);
    assert_int_equal(tp_counters_validate(c, size), 0);
    assert_int_equal(tp_counters_validate(c, 64), -EINVAL);
    struct tp_counter *a = tp_counters_register(c, "a.published");
    struct tp_counter *b = tp_counters_register(c, "b.lost");
    assert_non_null(a);
    assert_non_null(b);
    assert_ptr_equal(tp_counters_register(c, "a.published"), a); /* same name, same slot */
    assert_int_equal(((uintptr_t)a) % 64, 0);
    assert_int_equal((uintptr_t)b - (uintptr_t)a, 64); /* each on its own line */
    tp_counter_add(a, 5);
    tp_counter_add(a, 2);
    tp_counter_set(b, 9);
    assert_int_equal(tp_counter_get(tp_counters_find(c, "a.published")), 7);
    assert_int_equal(tp_counter_get(tp_counters_find(c, "b.lost")), 9);
    assert_null(tp_counters_find(c, "c"));
    char longname[TP_COUNTER_NAME_LEN + 1];
    memset(longname, 'x', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    assert_null(tp_counters_register(c, longname));
    assert_null(tp_counters_register(c, ""));
    assert_non_null(tp_counters_register(c, "c"));
    assert_non_null(tp_counters_register(c, "d"));
    assert_null(tp_counters_register(c, "e")); /* full */
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_and_read),
        cmocka_unit_test(test_stuck_writer_gives_eagain),
        cmocka_unit_test(test_bad_params),
        cmocka_unit_test(test_seqlock_under_hammering_writer),
        cmocka_unit_test(test_consistency_check_catches_a_torn_copy),
        cmocka_unit_test(test_counters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
