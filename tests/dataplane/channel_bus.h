/*
 * Test helper for test_channel.c and test_publisher.c: a bus (segments in /dev/shm) and a reader
 * of the records the channel publishes, kept in a file of its own because the client's bus headers
 * and the data plane's book headers share names (see dataplane/publish/book_reader.h).
 */
#ifndef TP_TEST_CHANNEL_BUS_H
#define TP_TEST_CHANNEL_BUS_H

#include <stdint.h>

struct tp_bus_writer;

/* What the tests look at in a published tpout record. */
enum test_record_kind { TEST_REC_OTHER, TEST_REC_ORDER, TEST_REC_CHANNEL_EVENT };
struct test_record {
    enum test_record_kind kind;
    uint32_t instrument;
    uint64_t venue_seq;  /* every tpout event header has it at the same place */
    uint32_t channel_id; /* of a channel event: the channel that published it */
    uint8_t flags;       /* of an order event: EventFlags (TP_PUB_F_*) */
};

/* Opens w as the writer of the tests' small bus (16 instruments, depth 4, a 1 MiB ring) with
 * every instrument of interest: 0, or -1. */
int test_bus_writer_open(struct tp_bus_writer *w, const char *instance);

/* Opens a writer (test_bus_writer_open) and a reader at its tail. The segments' names are removed
 * at once (nothing attaches by name), so a test or fuzz run that crashes leaves no file behind. */
struct tp_bus_writer *test_bus_open(const char *instance);
void test_bus_close(struct tp_bus_writer *bus);

/* The next record the reader has not seen: 1 and *out, or 0 when there is none. */
int test_bus_next(struct test_record *out);

/* A level of the state table, best first. */
struct test_level {
    int64_t price;
    int64_t qty;
    int32_t orders;
};

/* Instrument id's bid levels in the state table (at most max): how many, or -1. */
int test_bus_state_bids(uint32_t id, struct test_level *levels, unsigned max);

#endif
