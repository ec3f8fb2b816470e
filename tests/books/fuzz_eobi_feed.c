/*
 * libFuzzer target: hostile EOBI packets through the EOBI feed handler into small books.
 *
 * Input: a sequence of blocks `kind u8, length u16 (little-endian), payload`: the payload is an
 * EOBI packet, incremental when bit 0 of kind is clear, snapshot when it is set; bit 1 set ends the
 * snapshot being applied after the packet (tp_eobi_feed_snapshot_end); bit 2 set polls the feed
 * after it (tp_eobi_feed_poll); bit 3 of the first block's kind makes the feed's T7 release 7.0
 * (its packets converted, the other release's refused). An input of odd length runs with A/B
 * arbitration (a hole waits 256 ticks; a packet's receive time is its offset in the input), an
 * even one without. A truncated last block is handed over as it is. The books are tiny (8
 * instruments, 64 orders, 4 levels a side) so capacity refusals happen often. Sanitizers catch any
 * read outside a packet; after each input the feed's bookkeeping is checked: its RECOVERING and
 * holding counts are the segments' in that state, only a HEALTHY or RECOVERING segment holds,
 * the buffer's bytes are its packets', each segment's buffered packets are in ApplSeqNum order
 * and belong to a RECOVERING segment or are held (above next_seq) by a HEALTHY one, live orders
 * within capacity, levels within their limit.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "books_test_util.h"
#include "tp_books.h"
#include "tp_eobi_feed.h"
#include "tp_instruments.h"

#define INSTRUMENTS 8
#define ORDERS      64
#define LEVELS      4

/* Zeroed 64-byte aligned memory, or the run stops. */
static void *zalloc(size_t size)
{
    void *p = test_zalloc(size);

    if (!p)
        abort();
    return p;
}

static void check(const struct tp_eobi_feed *f, const struct tp_books *books)
{
    uint32_t recovering = 0, holding = 0, bytes = 0;
    static uint64_t last_held[TP_EOBI_FEED_SEGMENTS];

    for (uint32_t i = 0; i < TP_EOBI_FEED_SEGMENTS; i++) {
        const struct tp_eobi_segment *seg = &f->segments[i];
        recovering += seg->used && seg->state == TP_EOBI_SEGMENT_RECOVERING;
        holding += seg->holding;
        /* A RECOVERING segment holds a hole in its buffer as a HEALTHY one holds a gap. */
        if (seg->holding && (!seg->used || (seg->state != TP_EOBI_SEGMENT_HEALTHY &&
                                            seg->state != TP_EOBI_SEGMENT_RECOVERING)))
            abort();
        last_held[i] = 0;
    }
    if (recovering != tp_eobi_feed_recovering(f) || holding != f->holding)
        abort();
    for (uint32_t i = 0; i < f->n_buffered; i++) {
        const struct tp_eobi_buffered *r = &f->buffered[i];
        const struct tp_eobi_segment *seg = &f->segments[r->segment];
        if (r->offset != bytes)
            abort();
        if (r->appl_seq_num <= last_held[r->segment] ||
            (seg->state != TP_EOBI_SEGMENT_RECOVERING &&
             (!seg->holding || r->appl_seq_num <= seg->next_seq)))
            abort();
        last_held[r->segment] = r->appl_seq_num;
        bytes += r->len;
    }
    if (bytes != f->buffer_used || tp_books_totals(books)->live_orders > ORDERS)
        abort();
    for (uint32_t id = 0; id < INSTRUMENTS; id++)
        for (int side = 0; side < 2; side++)
            if (tp_books_levels(books, id, TP_BOOK_ORDERS, (enum tp_side)side) > LEVELS)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tp_eobi_feed *feed;
    struct tp_instruments_params ip = {.capacity = INSTRUMENTS};
    struct tp_books_params bp = {
        .instruments = INSTRUMENTS, .max_orders = ORDERS, .levels_per_side = LEVELS};
    struct tp_instruments *reg = zalloc(tp_instruments_memsize(&ip));
    struct tp_books *books = zalloc(tp_books_memsize(&bp));
    size_t pos = 0;

    /* The feed is large: one for the whole run, prepared again for each input. */
    if (!feed)
        feed = zalloc(sizeof(*feed));
    if (tp_instruments_init(reg, &ip) != 0 || tp_books_init(books, &bp) != 0 ||
        tp_eobi_feed_init(feed, reg, books, NULL, 0, NULL) != 0 ||
        tp_eobi_feed_set_release(feed, size > 0 && (data[0] & 8) ? TP_EOBI_RELEASE_7_0
                                                                 : TP_EOBI_RELEASE_6_0) != 0)
        abort();
    tp_eobi_feed_arbitrate(feed, size & 1 ? 256 : 0, NULL, NULL);
    while (pos + 3 <= size) {
        uint8_t kind = data[pos];
        size_t len = (size_t)data[pos + 1] | (size_t)data[pos + 2] << 8;
        pos += 3;
        if (len > size - pos)
            len = size - pos;
        /* A copy of exactly the packet's bytes: a read past it is an ASan report. */
        uint8_t *pkt = malloc(len ? len : 1);
        if (!pkt)
            abort();
        memcpy(pkt, data + pos, len);
        if (kind & 1)
            tp_eobi_feed_snapshot_packet(feed, pkt, len, pos);
        else
            tp_eobi_feed_packet(feed, pkt, len, pos);
        if (kind & 2)
            tp_eobi_feed_snapshot_end(feed);
        if (kind & 4)
            tp_eobi_feed_poll(feed, pos);
        free(pkt);
        pos += len;
    }
    check(feed, books);
    free(books);
    free(reg);
    return 0;
}
