/* Broadcast ring in one process: order, payloads, wrap-around, laps with exact loss, bad input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bus/broadcast_ring.h"

struct fixture {
    void *mem;
    struct tp_ring_writer w;
    struct tp_ring_reader r;
    _Alignas(8) uint8_t batch[8192];
};

static struct fixture *make(uint64_t capacity, uint32_t max_record, uint32_t batch_size)
{
    struct fixture *f = calloc(1, sizeof(*f));
    struct tp_ring_params p = {.capacity = capacity, .max_record = max_record};
    size_t size = tp_ring_memsize(&p);
    assert_true(size > 0);
    f->mem = aligned_alloc(64, (size + 63) / 64 * 64);
    /* Zeroed, as a new shared-memory segment is: tests compare whole data areas. */
    memset(f->mem, 0, size);
    assert_int_equal(tp_ring_init(f->mem, &p), 0);
    assert_int_equal(tp_ring_validate(f->mem, size), 0);
    tp_ring_writer_init(&f->w, f->mem);
    assert_int_equal(tp_ring_reader_init(&f->r, f->mem, f->batch, batch_size), 0);
    return f;
}

static void destroy(struct fixture *f)
{
    free(f->mem);
    free(f);
}

/* Payload of record `seq`: its length varies with seq, every byte derived from seq. */
static uint32_t payload_len(uint64_t seq)
{
    return (uint32_t)(8 + (seq * 7) % 90);
}

static void fill(uint8_t *dst, uint64_t seq, uint32_t len)
{
    memcpy(dst, &seq, sizeof(seq));
    for (uint32_t i = 8; i < len; i++)
        dst[i] = (uint8_t)(seq + i);
}

static void check(const struct tp_ring_record *rec, uint64_t seq)
{
    uint32_t len = payload_len(seq);
    assert_int_equal(rec->sequence, seq);
    assert_int_equal(rec->length, TP_RING_RECORD_HEADER + len);
    assert_int_equal(rec->type, TP_REC_RAW);
    assert_int_equal(rec->topic, seq % 6);
    assert_int_equal(rec->instrument, (uint32_t)(seq % 1000));
    const uint8_t *p = tp_ring_payload(rec);
    uint64_t got;
    memcpy(&got, p, sizeof(got));
    assert_int_equal(got, seq);
    for (uint32_t i = 8; i < len; i++)
        assert_int_equal(p[i], (uint8_t)(seq + i));
}

static void claim_and_fill(struct fixture *f, uint64_t seq)
{
    uint32_t len = payload_len(seq);
    uint8_t *dst = tp_ring_claim(&f->w, len);
    assert_non_null(dst);
    assert_int_equal((uintptr_t)dst % 8, 0);
    fill(dst, seq, len);
}

/* Record seq, committed and flushed. */
static uint64_t publish(struct fixture *f, uint64_t seq)
{
    claim_and_fill(f, seq);
    return tp_ring_commit(&f->w, TP_REC_RAW, (uint16_t)(seq % 6), (uint32_t)(seq % 1000), 0);
}

/* Record seq, committed without moving the shared tail (as within a burst). */
static void deferred(struct fixture *f, uint64_t seq)
{
    claim_and_fill(f, seq);
    assert_int_equal(
        tp_ring_commit_deferred(&f->w, TP_REC_RAW, (uint16_t)(seq % 6), (uint32_t)(seq % 1000), 0),
        seq);
}

static void test_in_order_across_wraps(void **state)
{
    (void)state;
    struct fixture *f = make(4096, 256, 256);
    const struct tp_ring_record *rec;
    uint64_t lost = 0;
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
    uint64_t next = 1;
    /* Publish in bursts smaller than the ring, read everything: many wraps, no loss. */
    for (int burst = 0; burst < 500; burst++) {
        int n = 1 + burst % 30;
        for (int i = 0; i < n; i++)
            assert_int_equal(publish(f, next + (uint64_t)i), next + (uint64_t)i);
        for (int i = 0; i < n; i++) {
            assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
            check(rec, next++);
        }
        assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
        assert_int_equal(tp_ring_lag(&f->r), 0);
        /* Where the next record will start, the sequence word is zero: no stale record there. */
        const struct tp_ring_shared *sh = f->mem;
        uint64_t at = f->w.tail & (4096 - 1);
        if (4096 - at < TP_RING_RECORD_HEADER)
            at = 0; /* implicit padding: the next record starts the lap */
        uint64_t word;
        memcpy(&word, sh->data + at + offsetof(struct tp_ring_record, sequence), sizeof(word));
        assert_int_equal(word, 0);
        assert_true(f->w.tail + TP_RING_RECORD_HEADER <= f->w.intent); /* announced */
    }
    assert_true(f->w.tail > 10 * 4096); /* really wrapped */
    assert_int_equal(f->r.lost, 0);
    assert_int_equal(f->r.lapped, 0);
    assert_int_equal(f->r.malformed, 0);
    destroy(f);
}

/*
 * Whatever the bytes beyond the last record (last lap's), a reader following at its cursor never
 * takes them for a record. Before each record the whole data area is filled with the sequence the
 * reader will expect next (a word that also reads as a padding record of that length): the reader
 * gets each record, then nothing, across many wraps. Without the writer zeroing the next record's
 * sequence word, the reader skips the fake padding past the next real record.
 */
static void test_stale_bytes_never_look_like_a_record(void **state)
{
    (void)state;
    struct fixture *f = make(4096, 256, 256);
    struct tp_ring_shared *sh = f->mem;
    const struct tp_ring_record *rec;
    uint64_t lost = 0;
    for (uint64_t seq = 1; seq <= 2000; seq++) {
        uint64_t stale = seq + 1;
        for (size_t at = 0; at < 4096; at += sizeof(stale))
            memcpy(sh->data + at, &stale, sizeof(stale));
        assert_int_equal(publish(f, seq), seq);
        assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
        check(rec, seq);
        assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
    }
    assert_true(f->w.tail > 10 * 4096); /* really wrapped */
    assert_true(f->w.padded > 0);
    assert_int_equal(f->r.lost, 0);
    assert_int_equal(f->r.lapped, 0);
    assert_int_equal(f->r.malformed, 0);
    destroy(f);
}

static void test_lapped_reader_learns_exact_loss(void **state)
{
    (void)state;
    struct fixture *f = make(4096, 256, 8192);
    const struct tp_ring_record *rec;
    uint64_t lost = 0;
    publish(f, 1);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
    check(rec, 1);
    for (uint64_t s = 2; s <= 400; s++)
        publish(f, s);
    assert_int_equal(tp_ring_lag(&f->r), 399);
    /* Records 2..399 were overwritten: the reader jumps to the latest (400) and says so. */
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_LAPPED);
    assert_int_equal(lost, 398);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
    check(rec, 400);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
    publish(f, 401);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
    check(rec, 401);
    assert_int_equal(f->r.lapped, 1);
    assert_int_equal(f->r.lost, 398);
    destroy(f);
}

/*
 * A reader that copied a run of records keeps them whatever the writer does afterwards: through
 * the tail (a reader that attached mid-stream) or at its cursor (a reader following closely,
 * which copies every complete record there at once).
 */
static void copied_batch_survives_a_lap(int tail_path)
{
    struct fixture *f = make(4096, 256, 8192);
    const struct tp_ring_record *rec;
    uint64_t lost = 0;
    if (tail_path)
        f->r.next_sequence = 0; /* the sequence to expect is unknown: takes the tail path */
    for (uint64_t s = 1; s <= 3; s++)
        publish(f, s);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
    check(rec, 1);
    assert_int_equal(f->r.batch_end, f->w.tail); /* records 1..3, the whole run */
    for (uint64_t s = 4; s <= 400; s++)
        publish(f, s);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
    check(rec, 2);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
    check(rec, 3);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_LAPPED);
    assert_int_equal(lost, 396);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
    check(rec, 400);
    destroy(f);
}

static void test_copied_batch_survives_a_lap(void **state)
{
    (void)state;
    copied_batch_survives_a_lap(1);
    copied_batch_survives_a_lap(0);
}

/* At its cursor a reader takes as many complete records as its batch holds, several per read. */
static void test_cursor_run_bounded_by_batch(void **state)
{
    (void)state;
    struct fixture *f = make(4096, 256, 256);
    const struct tp_ring_record *rec;
    uint64_t lost = 0, reads = 0;
    for (uint64_t s = 1; s <= 20; s++)
        publish(f, s);
    for (uint64_t s = 1; s <= 20; s++) {
        if (f->r.batch_pos >= f->r.batch_end)
            reads++;
        assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
        check(rec, s);
        assert_true(f->r.batch_end <= 256);
    }
    assert_true(reads < 20);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
    destroy(f);
}

static void test_deferred_commits_move_tail_at_flush(void **state)
{
    (void)state;
    struct fixture *f = make(4096, 256, 8192);
    const struct tp_ring_record *rec;
    uint64_t lost;
    for (uint64_t s = 1; s <= 5; s++)
        deferred(f, s);
    struct tp_ring_shared *sh = f->mem;
    assert_int_equal(atomic_load(&sh->tail), 0);
    /* A reader that follows at its cursor sees complete records before the flush. */
    for (uint64_t s = 1; s <= 5; s++) {
        assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
        check(rec, s);
    }
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
    tp_ring_flush(&f->w);
    assert_int_equal(atomic_load(&sh->tail), f->w.tail);
    assert_int_equal(atomic_load(&sh->next_sequence), 6);
    assert_int_equal(tp_ring_lag(&f->r), 0);
    destroy(f);
}

/*
 * A reader level with the tail takes the first records of a burst at its cursor; past the tail it
 * leaves the lines the writer is still writing alone and takes the rest of the burst at the flush.
 * Readers that kept polling the cursor made the writer fetch back every line it wrote.
 */
static void test_reader_past_the_tail_waits_for_the_flush(void **state)
{
    (void)state;
    struct fixture *f = make(1 << 16, 256, 8192);
    const struct tp_ring_record *rec;
    uint64_t lost, s = 0;
    for (int burst = 0; burst < 3; burst++) {
        uint64_t first = s + 1;
        deferred(f, ++s);
        assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
        check(rec, first);
        for (int k = 0; k < 4; k++)
            deferred(f, ++s);
        assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
        tp_ring_flush(&f->w);
        for (uint64_t want = first + 1; want <= s; want++) {
            assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
            check(rec, want);
        }
        assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
    }
    /* A writer that flushes every record keeps its reader at the cursor. */
    for (uint64_t k = 0; k < 5; k++) {
        publish(f, ++s);
        assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
        check(rec, s);
    }
    assert_int_equal(f->r.lost, 0);
    destroy(f);
}

/*
 * A record claimed with its header (tp_ring_claim_record), its flags changed before the commit
 * (as the publisher adds endOfEvent), and committed by sequence alone reads back exactly as one
 * written by claim + tp_ring_commit_deferred: across many wraps, both rings hold the same bytes.
 */
static void test_header_at_claim_matches_commit_deferred(void **state)
{
    (void)state;
    struct fixture *a = make(4096, 256, 8192), *b = make(4096, 256, 8192);
    const struct tp_ring_record *rec;
    uint64_t lost;
    for (uint64_t s = 1; s <= 2000; s++) {
        uint32_t len = payload_len(s), flags = (uint32_t)(s % 5 == 0);
        uint16_t topic = (uint16_t)(s % 6);
        uint32_t id = (uint32_t)(s % 1000);
        uint8_t *pa = tp_ring_claim_record(&a->w, len, TP_REC_RAW, topic, id, 0);
        assert_non_null(pa);
        fill(pa, s, len);
        if (flags != 0)
            tp_ring_claimed_header(pa)->flags = flags;
        assert_int_equal(tp_ring_commit_record(&a->w, pa), s);
        fill(tp_ring_claim(&b->w, len), s, len);
        assert_int_equal(tp_ring_commit_deferred(&b->w, TP_REC_RAW, topic, id, flags), s);
        if (s % 7 == 0) {
            tp_ring_flush(&a->w);
            tp_ring_flush(&b->w);
        }
        /* Both readers see the same records: at the cursor, or all of a burst at its flush. */
        while (tp_ring_read(&a->r, &rec, &lost) == TP_RING_RECORD) {
            check(rec, a->r.read_sequence);
            assert_int_equal(rec->flags, (uint32_t)(rec->sequence % 5 == 0));
            assert_int_equal(tp_ring_read(&b->r, &rec, &lost), TP_RING_RECORD);
            check(rec, a->r.read_sequence);
            assert_int_equal(rec->flags, (uint32_t)(rec->sequence % 5 == 0));
        }
        assert_int_equal(tp_ring_read(&b->r, &rec, &lost), TP_RING_EMPTY);
        assert_memory_equal(((struct tp_ring_shared *)a->mem)->data,
                            ((struct tp_ring_shared *)b->mem)->data, 4096);
    }
    assert_true(a->w.tail > 10 * 4096); /* really wrapped */
    assert_int_equal(a->w.tail, b->w.tail);
    assert_int_equal(a->w.latest, b->w.latest);
    /* Everything up to the last flush, and the first record after it (at the cursor). */
    assert_int_equal(a->r.read_sequence, 2000 - 2000 % 7 + 1);
    assert_int_equal(a->r.malformed + a->r.lost, 0);
    destroy(a);
    destroy(b);
}

static void test_claim_too_large_is_refused(void **state)
{
    (void)state;
    struct fixture *f = make(4096, 128, 128);
    assert_null(tp_ring_claim(&f->w, 128 - TP_RING_RECORD_HEADER + 1));
    assert_non_null(tp_ring_claim(&f->w, 128 - TP_RING_RECORD_HEADER));
    tp_ring_commit(&f->w, TP_REC_RAW, 0, 0, 0);
    uint8_t big[200] = {0};
    assert_int_equal(tp_ring_publish(&f->w, TP_REC_RAW, 0, 0, 0, big, sizeof(big)), 0);
    destroy(f);
}

static void test_bad_parameters(void **state)
{
    (void)state;
    struct tp_ring_params bad[] = {
        {.capacity = 3000, .max_record = 64},   /* not a power of two */
        {.capacity = 2048, .max_record = 64},   /* too small */
        {.capacity = 4096, .max_record = 1024}, /* record > capacity / 8 */
        {.capacity = 4096, .max_record = 16},   /* smaller than a header */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(tp_ring_memsize(&bad[i]), 0);
    struct fixture *f = make(4096, 256, 256);
    struct tp_ring_reader r;
    _Alignas(8) uint8_t small[128];
    assert_int_equal(tp_ring_reader_init(&r, f->mem, small, sizeof(small)), -EINVAL);
    assert_int_equal(tp_ring_validate(f->mem, 100), -EINVAL);
    destroy(f);
}

/* A foreign or broken writer wrote nonsense headers: counted, skipped, never trusted. */
static void test_malformed_headers_are_skipped(void **state)
{
    (void)state;
    struct fixture *f = make(4096, 256, 256);
    publish(f, 1);
    struct tp_ring_shared *s = f->mem;
    struct tp_ring_record *h = (struct tp_ring_record *)s->data;
    h->length = 100000; /* runs past the end of the ring */
    const struct tp_ring_record *rec;
    uint64_t lost;
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
    assert_int_equal(f->r.malformed, 1);
    publish(f, 2);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
    check(rec, 2);
    /* Length below a header. */
    h = (struct tp_ring_record *)(s->data + (f->w.tail & (4096 - 1)));
    publish(f, 3);
    h->length = 4;
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
    assert_int_equal(f->r.malformed, 2);
    /* A sequence going backwards: the good record before it is still delivered. */
    publish(f, 4);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
    check(rec, 4);
    publish(f, 5);
    h = (struct tp_ring_record *)(s->data + (f->w.tail & (4096 - 1)));
    publish(f, 6);
    h->sequence = 2;
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
    check(rec, 5);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
    assert_int_equal(f->r.malformed, 3);
    publish(f, 7);
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_RECORD);
    check(rec, 7);
    destroy(f);
}

/*
 * Bytes that no writer made: padding records everywhere, carrying the sequence the reader waits
 * for. The reader gives up on them instead of walking round the ring forever (found by fuzz_bus).
 */
static void test_padding_everywhere_does_not_spin(void **state)
{
    (void)state;
    struct fixture *f = make(4096, 256, 256);
    struct tp_ring_shared *s = f->mem;
    for (uint32_t off = 0; off < 4096; off += 64)
        *(struct tp_ring_record *)(s->data + off) =
            (struct tp_ring_record){.length = 64, .type = TP_REC_PADDING, .sequence = 1};
    const struct tp_ring_record *rec;
    uint64_t lost;
    assert_int_equal(tp_ring_read(&f->r, &rec, &lost), TP_RING_EMPTY);
    destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_order_across_wraps),
        cmocka_unit_test(test_stale_bytes_never_look_like_a_record),
        cmocka_unit_test(test_lapped_reader_learns_exact_loss),
        cmocka_unit_test(test_copied_batch_survives_a_lap),
        cmocka_unit_test(test_cursor_run_bounded_by_batch),
        cmocka_unit_test(test_deferred_commits_move_tail_at_flush),
        cmocka_unit_test(test_reader_past_the_tail_waits_for_the_flush),
        cmocka_unit_test(test_header_at_claim_matches_commit_deferred),
        cmocka_unit_test(test_claim_too_large_is_refused),
        cmocka_unit_test(test_bad_parameters),
        cmocka_unit_test(test_malformed_headers_are_skipped),
        cmocka_unit_test(test_padding_everywhere_does_not_spin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
