/*
 * libFuzzer target: hostile bytes through the ITCH and MDP3 feed handlers into small books.
 *
 * Input: the first byte picks the venue (bit 0 clear: ITCH, set: MDP3), whether the messages or
 * packets go one by one or through the venue's burst call (bit 1), and whether the books build
 * change records (bit 2 set: none); the rest is a sequence of `length u16 (big-endian)` + payload
 * blocks, each an ITCH message or an MDP3 packet. The tables
 * are tiny (8 instruments, 64 orders, 4 levels a side) so capacity exhaustion happens often.
 * Sanitizers catch any out-of-bounds read or undefined behaviour; the invariants checked after
 * each input: live orders within capacity, every instrument's level counts within their limits.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tp_books.h"
#include "tp_instruments.h"
#include "tp_itch_feed.h"
#include "tp_mdp3_feed.h"

#define INSTRUMENTS 8
#define ORDERS      64
#define LEVELS      4
#define BURST       32 /* ITCH messages or MDP3 packets per burst call */

static void *zalloc(size_t size)
{
    void *p = aligned_alloc(64, (size + 63) & ~(size_t)63);

    if (!p)
        abort();
    memset(p, 0, size);
    return p;
}

/* The queued blocks as one MDP3 burst. */
static void mdp3_burst(struct tp_mdp3_feed *f, const uint8_t *const *blocks, const uint16_t *lens,
                       uint32_t n)
{
    struct tp_mdp3_feed_pkt pkts[BURST];

    for (uint32_t i = 0; i < n; i++)
        pkts[i] = (struct tp_mdp3_feed_pkt){.data = blocks[i], .len = lens[i], .rx_tsc = i};
    tp_mdp3_feed_burst(f, pkts, n, NULL, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tp_instruments_params ip = {.capacity = INSTRUMENTS, .itch_venues = 1};
    struct tp_books_params bp = {.instruments = INSTRUMENTS,
                                 .max_orders = ORDERS,
                                 .levels_per_side = LEVELS,
                                 .mbp_depth = 10,
                                 .implied_depth = 2};
    struct tp_instruments *reg = zalloc(tp_instruments_memsize(&ip));
    struct tp_books *books = zalloc(tp_books_memsize(&bp));
    void *state = zalloc(tp_mdp3_feed_memsize(INSTRUMENTS));
    static struct tp_itch_feed itch;
    static struct tp_mdp3_feed mdp3;
    struct tp_feed_info info = {0};
    size_t off = 1;

    if (tp_instruments_init(reg, &ip) || tp_books_init(books, &bp) ||
        tp_itch_feed_init(&itch, reg, books, NULL, 0, NULL) ||
        tp_mdp3_feed_init(&mdp3, state, reg, books, NULL, 1, TP_BOOK_TYPE_MBP_MBO, NULL))
        abort();
    /* Bit 1 of the first byte: blocks go through the burst call; bit 2: no change records. */
    const uint8_t *burst[BURST];
    uint16_t burst_len[BURST];
    uint32_t queued = 0;

    for (uint32_t i = 0; size > 0 && (data[0] & 4) && i < INSTRUMENTS; i++)
        tp_books_set_emit(books, i, 0);
    while (size > 0 && off + 2 <= size) {
        size_t n = (size_t)data[off] << 8 | data[off + 1];
        off += 2;
        if (n > size - off)
            n = size - off;
        /* A copy of exactly n bytes, so that any read beyond the block is caught. */
        uint8_t *block = malloc(n ? n : 1);
        memcpy(block, data + off, n);
        off += n;
        if (data[0] & 2) {
            burst[queued] = block;
            burst_len[queued++] = (uint16_t)n;
            if (queued == BURST || off + 2 > size) {
                if (data[0] & 1)
                    mdp3_burst(&mdp3, burst, burst_len, queued);
                else
                    tp_itch_feed_burst(&itch, burst, burst_len, queued, &info);
                while (queued)
                    free((void *)burst[--queued]);
            }
            continue;
        }
        if (data[0] & 1)
            tp_mdp3_feed_packet(&mdp3, block, n, 0);
        else
            tp_itch_feed_message(&itch, block, n, &info);
        free(block);
    }
    if (tp_books_totals(books)->live_orders > ORDERS)
        abort();
    for (uint32_t i = 0; i < INSTRUMENTS; i++)
        for (int side = 0; side < 2; side++)
            if (tp_books_levels(books, i, TP_BOOK_ORDERS, side) > LEVELS ||
                tp_books_levels(books, i, TP_BOOK_DIRECT, side) > 10 ||
                tp_books_levels(books, i, TP_BOOK_IMPLIED, side) > 2)
                abort();
    free(reg);
    free(books);
    free(state);
    return 0;
}
