/*
 * libFuzzer target: whatever bytes a broken or foreign writer leaves in shared memory, the reader
 * side never reads out of bounds, never loops for ever and never hands out a record longer than
 * its header allows.
 *   byte 0 even: the rest is one tpout message: decoded, and its level changes applied to a
 *                reader-side book;
 *   byte 0 odd:  the rest is the data area of a 4 KiB ring (tail and sequence from the first
 *                bytes), read by a fresh reader until it reports nothing new.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bus/broadcast_ring.h"
#include "views/decode.h"
#include "views/local_book.h"

#define CAPACITY 4096u

static void fuzz_decode(const uint8_t *data, size_t size)
{
    static struct tp_level_change changes[64];
    static struct tp_local_book book;
    struct tp_event ev;
    memset(&ev, 0, sizeof(ev));
    uint32_t n = 0;
    int topic = tp_decode_tpout(data, (uint32_t)size, &ev, changes, 64, &n);
    if (topic == TP_TOPIC_DEPTH)
        n = ev.u.depth.count;
    else if (topic != (int)TP_RECORD_ORDER_DEPTH) /* an OrderEvent with its levels: n of them */
        return;
    if (n > 64)
        abort();
    tp_local_book_clear(&book);
    for (uint32_t i = 0; i < n; i++)
        tp_local_book_apply(&book, &changes[i]);
    if (book.counts[0] > TP_MAX_DEPTH || book.counts[1] > TP_MAX_DEPTH)
        abort();
}

static void fuzz_ring(const uint8_t *data, size_t size)
{
    static _Alignas(64) uint8_t mem[sizeof(struct tp_ring_shared) + CAPACITY];
    static _Alignas(8) uint8_t batch[512];
    struct tp_ring_params p = {.capacity = CAPACITY, .max_record = 512};
    if (size < 16 || tp_ring_init(mem, &p) != 0)
        return;
    struct tp_ring_shared *s = (struct tp_ring_shared *)mem;
    uint64_t tail, seq;
    memcpy(&tail, data, 8);
    memcpy(&seq, data + 8, 8);
    data += 16;
    size -= 16;
    memcpy(s->data, data, size < CAPACITY ? size : CAPACITY);
    struct tp_ring_reader r;
    if (tp_ring_reader_init(&r, mem, batch, sizeof(batch)) != 0)
        abort();
    r.next_sequence = seq & 0xff; /* small: sometimes matches what the bytes say */
    atomic_store(&s->tail, tail % (4 * CAPACITY));
    atomic_store(&s->tail_intent, tail % (4 * CAPACITY));
    for (int i = 0; i < 10000; i++) {
        const struct tp_ring_record *rec;
        uint64_t lost;
        int rc = tp_ring_read(&r, &rec, &lost);
        if (rc == TP_RING_EMPTY)
            return;
        if (rc == TP_RING_RECORD && (rec->length < TP_RING_RECORD_HEADER || rec->length > 512 ||
                                     (const uint8_t *)rec + rec->length > batch + sizeof(batch)))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        fuzz_ring(data + 1, size - 1);
    else
        fuzz_decode(data + 1, size - 1);
    return 0;
}
