/*
 * Test helper for test_channel_eobi.c: the tests' bus (channel_bus.h), the tables a channel feeds
 * (a registry and books of 16 instruments, 1024 orders, 64 levels a side) and a publisher on the
 * bus with a gap-wait histogram, in 64-byte aligned memory the test frees.
 */
#ifndef TP_TEST_CHANNEL_TABLES_H
#define TP_TEST_CHANNEL_TABLES_H

#include <stddef.h>
#include <stdint.h>

struct tp_books;
struct tp_bus_writer;
struct tp_histogram;
struct tp_instruments;
struct tp_publisher;

struct test_channel_tables {
    struct tp_bus_writer *bus;
    struct tp_instruments *registry;
    struct tp_books *books;
    struct tp_publisher *pub;
    struct tp_histogram *gap_wait; /* the publisher's gap-wait histogram (emptied by open) */
};

/* Zeroed, 64-byte aligned memory of n bytes (rounded up), or NULL. */
void *test_zalloc(size_t n);

/* Opens the bus of instance "<prefix><pid>" and prepares the tables over it (the registry with
 * itch_venues locate maps); fails the test when they cannot be. */
void test_channel_tables_open(struct test_channel_tables *t, const char *prefix,
                              uint16_t itch_venues);

#endif
