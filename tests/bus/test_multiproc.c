/*
 * The bus across processes (fork): a writer and several readers mapping the same segments.
 *   - readers that keep up see every record, in order, intact;
 *   - a reader that stalls is lapped, learns exactly how much it lost, resyncs from the state
 *     table, and the reader that kept up is unaffected;
 *   - a reader killed with SIGKILL in the middle of reading disturbs nobody;
 *   - a restarted writer is noticed and the new instance read from sequence 1.
 */
#include <errno.h>
#include <setjmp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bus/bus.h"
#include "tmpdir.h"

#define MAX_READERS 4
#define INSTRUMENTS 8

/* Test bookkeeping shared by all processes (not part of the bus). */
struct control {
    _Atomic uint64_t progress[MAX_READERS]; /* last sequence each reader consumed */
    _Atomic int ready[MAX_READERS];
    _Atomic int writer_done;
    _Atomic uint64_t last_sequence;
    _Atomic uint64_t lost[MAX_READERS];
    _Atomic uint64_t lapped[MAX_READERS];
};

static char dir[64];
static struct control *ctl;

static int setup(void **state)
{
    (void)state;
    ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return ctl == MAP_FAILED ? -1 : tmpdir_make(dir, sizeof(dir), "mp");
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(dir);
}

static int reset(void **state)
{
    (void)state;
    memset(ctl, 0, sizeof(*ctl));
    return 0;
}

static void open_writer(struct tp_bus_writer *w, const char *instance, uint64_t ring_bytes)
{
    char err[256];
    struct tp_bus_params p = {.instance = instance,
                              .dir = dir,
                              .ring_bytes = ring_bytes,
                              .max_record = 512,
                              .instruments = INSTRUMENTS,
                              .depth = 4,
                              .counters = 16,
                              .mode = 0640,
                              .gid = (gid_t)-1};
    int rc = tp_bus_writer_open(w, &p, err, sizeof(err));
    if (rc != 0)
        print_error("writer: %s\n", err);
    assert_int_equal(rc, 0);
}

static uint32_t payload_len(uint64_t seq)
{
    return (uint32_t)(8 + (seq * 13) % 120);
}

/* Update the conflated state of the record's instrument, then publish the record. */
static void publish(struct tp_bus_writer *w, uint64_t seq)
{
    uint32_t id = (uint32_t)(seq % INSTRUMENTS);
    struct tp_state_entry *e = tp_state_write_begin(w->state, id);
    e->book.bus_sequence = seq;
    e->book.venue_seq = seq * 2;
    tp_state_write_end(e);
    uint32_t len = payload_len(seq);
    uint8_t *p = tp_bus_claim(w, id, len);
    assert_non_null(p);
    memcpy(p, &seq, 8);
    for (uint32_t i = 8; i < len; i++)
        p[i] = (uint8_t)(seq * 31 + i);
    assert_int_equal(tp_bus_commit(w, TP_REC_RAW, 0, id, 0), seq);
}

/* 1 when a record is exactly what publish() wrote for its sequence. */
static int record_ok(const struct tp_ring_record *rec)
{
    uint64_t seq = rec->sequence, got;
    uint32_t len = payload_len(seq);
    const uint8_t *p = tp_ring_payload(rec);
    if (rec->length != TP_RING_RECORD_HEADER + len || rec->instrument != seq % INSTRUMENTS)
        return 0;
    memcpy(&got, p, 8);
    if (got != seq)
        return 0;
    for (uint32_t i = 8; i < len; i++)
        if (p[i] != (uint8_t)(seq * 31 + i))
            return 0;
    return 1;
}

/* Writer waits for paced readers (test pacing only: the bus writer itself never waits). */
static void pace(uint64_t seq, const int *paced, int n, uint64_t window)
{
    for (int i = 0; i < n; i++)
        while (seq > window && atomic_load(&ctl->progress[paced[i]]) < seq - window)
            sched_yield();
}

static void wait_ready(int n)
{
    for (int i = 0; i < n; i++)
        while (!atomic_load(&ctl->ready[i]))
            sched_yield();
}

/*
 * Reader process body. Reads until it has seen `last` (or the writer finished and the ring is
 * drained), checking every record. stall_after > 0: stop after that many records until the
 * writer is done. Exit code 0 = all checks passed.
 */
static void reader_main(int idx, const char *instance, uint64_t stall_after)
{
    char err[256];
    struct tp_bus_reader b;
    if (tp_bus_reader_open(&b, dir, instance, err, sizeof(err)) != 0)
        _exit(10);
    static _Alignas(8) uint8_t batch[16384];
    struct tp_ring_reader r;
    if (tp_ring_reader_init(&r, b.ring_mem, batch, sizeof(batch)) != 0)
        _exit(11);
    atomic_store(&ctl->ready[idx], 1);
    uint64_t expect = 1, count = 0;
    for (;;) {
        const struct tp_ring_record *rec;
        uint64_t lost = 0;
        int rc = tp_ring_read(&r, &rec, &lost);
        if (rc == TP_RING_EMPTY) {
            if (atomic_load(&ctl->writer_done) && expect > atomic_load(&ctl->last_sequence))
                break;
            continue;
        }
        if (rc == TP_RING_LAPPED) {
            atomic_fetch_add(&ctl->lapped[idx], 1);
            atomic_fetch_add(&ctl->lost[idx], lost);
            expect += lost;
            /* Resync: the state table must hold, for each instrument, its latest update. */
            struct tp_instrument_state s;
            for (uint32_t id = 0; id < INSTRUMENTS; id++) {
                if (tp_state_read(b.state, id, &s, 100000) != 0)
                    _exit(12);
                if (s.book.bus_sequence % INSTRUMENTS != id ||
                    s.book.venue_seq != s.book.bus_sequence * 2)
                    _exit(13);
                if (s.book.bus_sequence + INSTRUMENTS < expect)
                    _exit(14); /* older than what the ring already moved past */
            }
            continue;
        }
        if (rec->sequence != expect || !record_ok(rec))
            _exit(15);
        expect++;
        count++;
        atomic_store(&ctl->progress[idx], rec->sequence);
        if (stall_after != 0 && count == stall_after)
            while (!atomic_load(&ctl->writer_done))
                usleep(1000);
    }
    if (r.malformed != 0)
        _exit(16);
    tp_bus_reader_close(&b);
    _exit(0);
}

static pid_t spawn_reader(int idx, const char *instance, uint64_t stall_after)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        reader_main(idx, instance, stall_after);
    return pid;
}

static int exit_code(pid_t pid)
{
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

static void test_readers_that_keep_up_lose_nothing(void **state)
{
    (void)state;
    struct tp_bus_writer w;
    open_writer(&w, "keepup", 1 << 20);
    const uint64_t n = 200000;
    pid_t pids[3];
    for (int i = 0; i < 3; i++)
        pids[i] = spawn_reader(i, "keepup", 0);
    wait_ready(3);
    int paced[] = {0, 1, 2};
    for (uint64_t s = 1; s <= n; s++) {
        if (s % 256 == 0)
            pace(s, paced, 3, 2000);
        publish(&w, s);
    }
    atomic_store(&ctl->last_sequence, n);
    atomic_store(&ctl->writer_done, 1);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(exit_code(pids[i]), 0);
        assert_int_equal(atomic_load(&ctl->progress[i]), n);
        assert_int_equal(atomic_load(&ctl->lost[i]), 0);
    }
    assert_int_equal(tp_counter_get(w.stats.published), n);
    assert_true(w.ring.tail > 10 * (1 << 20)); /* the ring wrapped many times */
    tp_bus_writer_close(&w, 1);
}

static void test_slow_reader_is_lapped_others_unaffected(void **state)
{
    (void)state;
    struct tp_bus_writer w;
    open_writer(&w, "lapped", 1 << 16);
    const uint64_t n = 50000;
    pid_t fast = spawn_reader(0, "lapped", 0);
    pid_t slow = spawn_reader(1, "lapped", 10);
    wait_ready(2);
    int paced[] = {0};
    for (uint64_t s = 1; s <= n; s++) {
        if (s % 64 == 0)
            pace(s, paced, 1, 300);
        if (s == 100)
            while (atomic_load(&ctl->progress[1]) < 10)
                sched_yield(); /* the slow reader has read its 10 and stalls */
        publish(&w, s);
    }
    atomic_store(&ctl->last_sequence, n);
    atomic_store(&ctl->writer_done, 1);
    assert_int_equal(exit_code(fast), 0);
    assert_int_equal(exit_code(slow), 0);
    assert_int_equal(atomic_load(&ctl->progress[0]), n);
    assert_int_equal(atomic_load(&ctl->lost[0]), 0);
    assert_int_equal(atomic_load(&ctl->lapped[0]), 0);
    /* The slow one was lapped, lost a lot, and still ended on the last record. */
    assert_true(atomic_load(&ctl->lapped[1]) >= 1);
    assert_true(atomic_load(&ctl->lost[1]) > n / 2);
    assert_int_equal(atomic_load(&ctl->progress[1]), n);
    tp_bus_writer_close(&w, 1);
}

static void test_reader_killed_mid_read(void **state)
{
    (void)state;
    struct tp_bus_writer w;
    open_writer(&w, "killed", 1 << 18);
    const uint64_t n = 150000;
    pid_t victim = spawn_reader(0, "killed", 0);
    pid_t survivor = spawn_reader(1, "killed", 0);
    wait_ready(2);
    int paced_both[] = {0, 1}, paced_survivor[] = {1};
    int killed = 0;
    for (uint64_t s = 1; s <= n; s++) {
        if (s % 128 == 0)
            pace(s, killed ? paced_survivor : paced_both, killed ? 1 : 2, 1000);
        if (!killed && s == n / 3) {
            kill(victim, SIGKILL); /* it is inside its read loop */
            killed = 1;
        }
        publish(&w, s);
    }
    atomic_store(&ctl->last_sequence, n);
    atomic_store(&ctl->writer_done, 1);
    assert_int_equal(exit_code(victim), 100 + SIGKILL);
    assert_true(atomic_load(&ctl->progress[0]) > 0); /* it had been reading */
    assert_int_equal(exit_code(survivor), 0);
    assert_int_equal(atomic_load(&ctl->progress[1]), n);
    assert_int_equal(atomic_load(&ctl->lost[1]), 0);
    assert_int_equal(tp_counter_get(w.stats.published), n);
    tp_bus_writer_close(&w, 1);
}

static void test_writer_restart_noticed(void **state)
{
    (void)state;
    char err[256];
    struct tp_bus_writer w1;
    open_writer(&w1, "restart", 1 << 16);
    for (uint64_t s = 1; s <= 100; s++)
        publish(&w1, s);
    struct tp_bus_reader b;
    assert_int_equal(tp_bus_reader_open(&b, dir, "restart", err, sizeof(err)), 0);
    uint64_t epoch = b.ring_seg.hdr->writer_epoch;
    assert_false(tp_bus_reader_stale(&b));

    /* The restarted writer comes up while the old one's segments are still mapped. */
    pid_t pid = fork();
    if (pid == 0) {
        struct tp_bus_writer w;
        struct tp_bus_params p = {.instance = "restart",
                                  .dir = dir,
                                  .ring_bytes = 1 << 16,
                                  .max_record = 512,
                                  .instruments = INSTRUMENTS,
                                  .depth = 4,
                                  .counters = 16,
                                  .mode = 0640,
                                  .gid = (gid_t)-1};
        if (tp_bus_writer_open(&w, &p, err, sizeof(err)) != 0)
            _exit(1);
        uint8_t x[8] = {0};
        tp_bus_publish(&w, TP_REC_RAW, 0, 1, 0, x, sizeof(x));
        _exit(0); /* leaves the segments live */
    }
    assert_int_equal(exit_code(pid), 0);
    assert_true(tp_bus_reader_stale(&b));
    tp_bus_reader_close(&b);
    assert_int_equal(tp_bus_reader_open(&b, dir, "restart", err, sizeof(err)), 0);
    assert_true(b.ring_seg.hdr->writer_epoch != epoch);
    assert_int_equal(b.ring_seg.hdr->writer_pid, (uint32_t)pid);
    /* The new ring starts again at sequence 1. */
    const struct tp_ring_shared *rs = b.ring_mem;
    assert_int_equal(atomic_load(&rs->next_sequence), 2);
    tp_bus_reader_close(&b);
    tp_bus_writer_close(&w1, 0); /* must not unlink or close the new instance's files */
    assert_int_equal(tp_bus_reader_open(&b, dir, "restart", err, sizeof(err)), 0);
    tp_bus_reader_close(&b);
}

/* The writer skips instruments nobody is interested in (counted); channel-wide events always go. */
static void test_writer_interest(void **state)
{
    (void)state;
    char err[256];
    struct tp_bus_writer w;
    open_writer(&w, "interest", 1 << 16);
    uint8_t x[16] = {0};
    tp_bus_set_interest_all(&w, 0);
    tp_bus_set_interest(&w, 3, 1);
    tp_bus_set_interest(&w, INSTRUMENTS, 1); /* out of range: ignored */
    assert_int_equal(tp_bus_publish(&w, TP_REC_RAW, 0, 2, 0, x, sizeof(x)), 0);
    assert_null(tp_bus_claim(&w, 5, sizeof(x)));
    assert_int_equal(tp_bus_publish(&w, TP_REC_RAW, 0, 3, 0, x, sizeof(x)), 1);
    assert_int_equal(tp_bus_publish(&w, TP_REC_RAW, 0, UINT32_MAX, 0, x, sizeof(x)), 2);
    assert_int_equal(tp_bus_publish(&w, TP_REC_RAW, 0, INSTRUMENTS, 0, x, sizeof(x)), 0);
    assert_int_equal(tp_bus_publish(&w, TP_REC_RAW, 0, 3, 0, x, 1000), 0); /* over max_record */
    /* A side-car reads the writer's counters from the read-only counters segment. */
    struct tp_bus_reader b;
    assert_int_equal(tp_bus_reader_open(&b, dir, "interest", err, sizeof(err)), 0);
    assert_int_equal(tp_counter_get(tp_counters_find(b.counters, "bus.published")), 2);
    assert_int_equal(tp_counter_get(tp_counters_find(b.counters, "bus.skipped_no_interest")), 3);
    assert_int_equal(tp_counter_get(tp_counters_find(b.counters, "bus.refused_too_large")), 1);
    assert_int_equal(tp_counter_get(tp_counters_find(b.counters, "bus.published_bytes")), 2 * 40);
    tp_bus_reader_close(&b);
    tp_bus_writer_close(&w, 1);
}

/*
 * The published counters, computed at each flush from the ring's positions: records and their
 * aligned bytes, deferred commits included, the padding at each wrap of the data area not.
 */
static void test_writer_published_counters(void **state)
{
    (void)state;
    struct tp_bus_writer w;
    open_writer(&w, "published", 1 << 12);
    uint8_t x[200] = {0};
    uint64_t records = 0, bytes = 0;
    for (uint64_t i = 0; i < 300; i++) {
        uint32_t len = payload_len(i); /* 8..127 bytes: records of 32..152 aligned bytes */
        void *dst = tp_bus_claim(&w, 3, len);
        assert_non_null(dst);
        memcpy(dst, x, len);
        tp_bus_commit_deferred(&w, TP_REC_RAW, 0, 3, 0);
        records++;
        bytes += TP_RING_ALIGN_UP(TP_RING_RECORD_HEADER + len);
        if (i % 7 == 6) {
            tp_bus_flush(&w);
            assert_int_equal(tp_counter_get(w.stats.published), records);
            assert_int_equal(tp_counter_get(w.stats.published_bytes), bytes);
        }
    }
    assert_true(w.ring.padded > 0); /* 300 records wrapped the 4 KiB ring several times */
    assert_int_equal(tp_bus_publish(&w, TP_REC_RAW, 0, 3, 0, x, 16), records + 1);
    assert_int_equal(tp_counter_get(w.stats.published), records + 1);
    assert_int_equal(tp_counter_get(w.stats.published_bytes), bytes + 40);
    tp_bus_writer_close(&w, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_readers_that_keep_up_lose_nothing, reset),
        cmocka_unit_test_setup(test_slow_reader_is_lapped_others_unaffected, reset),
        cmocka_unit_test_setup(test_reader_killed_mid_read, reset),
        cmocka_unit_test_setup(test_writer_restart_noticed, reset),
        cmocka_unit_test_setup(test_writer_interest, reset),
        cmocka_unit_test_setup(test_writer_published_counters, reset),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
