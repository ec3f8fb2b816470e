/*
 * Tests for the event file writer's records written in place (tp_event_file_claim / commit), as
 * tickplane-replay --events encodes them: read back with the reader, the same file as
 * tp_event_file_write makes; a claim not committed leaves nothing; the buffer's flush keeps the
 * last record where tp_event_file_last_message finds it; lengths the writer refuses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tickplane/event_file.h"

/* A fake SBE message of `length` bytes (at least the 8-byte header), its bytes from `seed`. */
static void fill_message(uint8_t *m, uint32_t length, unsigned seed)
{
    for (uint32_t i = 0; i < length; i++)
        m[i] = (uint8_t)(seed * 31u + i);
}

/* The stream's bytes after the finish, in a buffer the caller frees. */
static uint8_t *file_bytes(FILE *f, size_t *len)
{
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    uint8_t *data = malloc((size_t)n);
    assert_non_null(data);
    rewind(f);
    assert_int_equal(fread(data, 1, (size_t)n, f), (size_t)n);
    *len = (size_t)n;
    return data;
}

/* Writes `count` records of lengths 8 + (i * 13) % 200, in place or copied, and returns the
 * file. */
static uint8_t *write_records(int in_place, unsigned count, size_t *len)
{
    FILE *f = tmpfile();
    struct tp_event_file_writer w;
    uint8_t m[256];
    assert_non_null(f);
    assert_int_equal(tp_event_file_writer_open(&w, f, 0), 0);
    for (unsigned i = 0; i < count; i++) {
        uint32_t length = 8 + (i * 13u) % 200u;
        fill_message(m, length, i);
        if (in_place) {
            uint8_t *at = tp_event_file_claim(&w, (uint16_t)(i % 8), length);
            assert_non_null(at);
            memcpy(at, m, length);
            tp_event_file_commit(&w);
        } else {
            assert_int_equal(tp_event_file_write(&w, (uint16_t)(i % 8), m, length), 0);
        }
    }
    assert_int_equal(w.records, count);
    assert_int_equal(tp_event_file_finish(&w), 0);
    uint8_t *data = file_bytes(f, len);
    fclose(f);
    return data;
}

/* Many buffers' worth of records: both ways give the same bytes, which read back as written. */
static void test_claimed_records_read_back(void **state)
{
    (void)state;
    const unsigned count = 3 * TP_EVENT_FILE_WRITE_BUFFER / 64;
    size_t len, copied_len;
    uint8_t *data = write_records(1, count, &len);
    uint8_t *copied = write_records(0, count, &copied_len);
    assert_int_equal(len, copied_len);
    assert_memory_equal(data, copied, len);

    struct tp_event_file_reader r;
    struct tp_event_file_record rec;
    uint8_t m[256];
    assert_int_equal(tp_event_file_open(&r, data, len), 0);
    assert_int_equal(r.header.records, count);
    for (unsigned i = 0; i < count; i++) {
        assert_int_equal(tp_event_file_next(&r, &rec), 1);
        uint32_t length = 8 + (i * 13u) % 200u;
        fill_message(m, length, i);
        assert_int_equal(rec.topic, i % 8);
        assert_int_equal(rec.length, length);
        assert_memory_equal(rec.message, m, length);
        /* the padding after the message is zero */
        for (uint32_t p = length; p % TP_EVENT_FILE_ALIGN; p++)
            assert_int_equal(rec.message[p], 0);
    }
    assert_int_equal(tp_event_file_next(&r, &rec), 0);
    free(data);
    free(copied);
}

/* A claim the caller does not commit is not in the file; the next claim takes its place. The last
 * record committed stays where tp_event_file_last_message finds it across the buffer's flushes. */
static void test_uncommitted_claim_and_last_message(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    struct tp_event_file_writer w;
    assert_non_null(f);
    assert_int_equal(tp_event_file_writer_open(&w, f, 0), 0);
    assert_null(tp_event_file_last_message(&w));
    uint8_t *at = tp_event_file_claim(&w, 2, 16);
    assert_non_null(at);
    memset(at, 0xee, 16);
    assert_null(tp_event_file_last_message(&w));
    unsigned committed = 0;
    while (w.bytes < 2 * TP_EVENT_FILE_WRITE_BUFFER) {
        at = tp_event_file_claim(&w, 3, 1000);
        assert_non_null(at);
        /* the claim may have flushed: the record before it is still the last */
        uint8_t *last = tp_event_file_last_message(&w);
        if (committed > 0) {
            assert_ptr_equal(last + 8 + 1000, at);
            assert_int_equal(last[1], (uint8_t)((committed - 1) * 31u + 1));
        }
        fill_message(at, 1000, committed);
        tp_event_file_commit(&w);
        committed++;
        assert_ptr_equal(tp_event_file_last_message(&w), at);
    }
    at = tp_event_file_claim(&w, 2, 16); /* left uncommitted at the finish */
    assert_non_null(at);
    assert_int_equal(tp_event_file_finish(&w), 0);
    size_t len;
    uint8_t *data = file_bytes(f, &len);
    fclose(f);
    assert_int_equal(len, TP_EVENT_FILE_HEADER_LEN + committed * (8 + 1000));
    struct tp_event_file_reader r;
    struct tp_event_file_record rec;
    assert_int_equal(tp_event_file_open(&r, data, len), 0);
    unsigned n = 0;
    while (tp_event_file_next(&r, &rec) == 1) {
        assert_int_equal(rec.topic, 3);
        n++;
    }
    assert_int_equal(n, committed);
    free(data);
}

/* The largest records, back to back: each flush keeps the one before it in the buffer, and all
 * of them read back whole (ASan sees a claim past the buffer). */
static void test_largest_records(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    struct tp_event_file_writer w;
    static uint8_t m[TP_EVENT_FILE_MAX_MESSAGE];
    assert_non_null(f);
    assert_int_equal(tp_event_file_writer_open(&w, f, 0), 0);
    for (unsigned i = 0; i < 5; i++) {
        uint32_t length = i == 2 ? 8 : TP_EVENT_FILE_MAX_MESSAGE;
        uint8_t *at = tp_event_file_claim(&w, (uint16_t)i, length);
        assert_non_null(at);
        fill_message(at, length, i);
        tp_event_file_commit(&w);
    }
    assert_int_equal(tp_event_file_finish(&w), 0);
    size_t len;
    uint8_t *data = file_bytes(f, &len);
    fclose(f);
    struct tp_event_file_reader r;
    struct tp_event_file_record rec;
    assert_int_equal(tp_event_file_open(&r, data, len), 0);
    for (unsigned i = 0; i < 5; i++) {
        uint32_t length = i == 2 ? 8 : TP_EVENT_FILE_MAX_MESSAGE;
        assert_int_equal(tp_event_file_next(&r, &rec), 1);
        assert_int_equal(rec.topic, i);
        assert_int_equal(rec.length, length);
        fill_message(m, length, i);
        assert_memory_equal(rec.message, m, length);
    }
    assert_int_equal(tp_event_file_next(&r, &rec), 0);
    free(data);
}

/* Lengths tp_event_file_write refuses are refused in place too; a write error ends the claims. */
static void test_claim_refusals(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    struct tp_event_file_writer w;
    assert_non_null(f);
    assert_int_equal(tp_event_file_writer_open(&w, f, 0), 0);
    assert_null(tp_event_file_claim(&w, 0, 7));
    assert_null(tp_event_file_claim(&w, 0, TP_EVENT_FILE_MAX_MESSAGE + 1));
    assert_int_equal(w.records, 0);
    w.error = -EIO;
    assert_null(tp_event_file_claim(&w, 0, 64));
    assert_int_equal(tp_event_file_finish(&w), -EIO);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claimed_records_read_back),
        cmocka_unit_test(test_uncommitted_claim_and_last_message),
        cmocka_unit_test(test_largest_records),
        cmocka_unit_test(test_claim_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
