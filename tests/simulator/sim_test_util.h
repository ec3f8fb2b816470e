/*
 * Helpers shared by the simulator tests: an in-memory message sink, a temporary path, and a
 * reference order-level book rebuilt from decoded messages, compared with the truth JSON.
 */
#ifndef TP_SIM_TEST_UTIL_H
#define TP_SIM_TEST_UTIL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Messages kept back to back as BinaryFILE blocks (u16 length + message). */
struct mem_sink {
    uint8_t *buf;
    size_t len, cap;
    size_t messages;
};

int mem_sink_message(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns);
void mem_sink_free(struct mem_sink *s);

/* Packets kept in the order a sink receives them. */
struct tp_sim_packet;
struct captured {
    struct tp_sim_packet *p;
    size_t n, cap;
};

/* A tp_sim_packet_sink callback (ctx: struct captured); free c->p when done. */
int capture_packet(void *ctx, const struct tp_sim_packet *p);

/* A fresh path under /tmp (unique per process and call). */
void temp_path(char *out, size_t cap, const char *suffix);

/* Reference book: orders in a flat array indexed by order id; levels by full scans. */
struct ref_order {
    int64_t price9;
    int64_t qty;
    uint32_t instrument;
    uint8_t side;
    uint8_t live;
};

struct ref_book {
    struct ref_order *orders;
    uint64_t cap;
    uint32_t instruments;
    uint64_t errors; /* operations on unknown orders or impossible quantities */
};

void ref_init(struct ref_book *b, uint32_t instruments, uint64_t max_order_id);
void ref_free(struct ref_book *b);
void ref_add(struct ref_book *b, uint64_t id, uint32_t instrument, uint8_t side, int64_t price9,
             int64_t qty);
void ref_reduce(struct ref_book *b, uint64_t id, int64_t qty); /* cancel/execute */
void ref_delete(struct ref_book *b, uint64_t id);
/* Applies one ITCH message that passed tp_itch_check (order messages; the others change nothing).
 */
void ref_apply_itch(struct ref_book *b, const uint8_t *msg, uint16_t len);
/* Returns the number of mismatching instruments between the book and the truth file. */
int ref_compare_truth(const struct ref_book *b, const char *truth_path, uint32_t depth);

#endif
