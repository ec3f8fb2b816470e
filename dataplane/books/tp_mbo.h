/*
 * Order-level books (MBO): ITCH order messages and MDP3 order book entries.
 *
 * Orders live in two tables per tp_books: a recent-order window indexed by the order id modulo
 * its (prime) size, where the venues' increasing ids keep the orders added together in
 * neighbouring slots, and an overflow table (Fibonacci hashing, linear probing with Robin Hood
 * ordering, backward-shift deletion, no tombstones, at most half full) that takes an order when a
 * newer id claims its window slot. Young orders are found with one load; an old one with a slot
 * or two of the overflow table, whatever the id pattern. Both are sized from max_orders, so memory
 * follows the live orders, not the largest id. An order is known by its (instrument, order id):
 * venues number their orders independently, and every order message names its instrument. Each
 * order: instrument, side, price, remaining qty, priority.
 *
 * Each side's price levels (price, total qty, order count) are kept in a sorted array with the
 * best level at the END, so the frequent changes near the top of book move only a few entries.
 * Levels are found by scanning from the best level, with binary search for deep prices.
 *
 * Every call returns the number of change records written to `out` (room for
 * TP_BOOK_CHANGES_MAX), or a negative errno with nothing changed (see tp_books.h). Records: ORDER
 * first, then the LEVEL(s) of TP_BOOK_ORDERS, then TRADE for executions.
 */
#ifndef TP_MBO_H
#define TP_MBO_H

#include <stdint.h>

#include "tp_books.h"

/* ITCH A/F, MDP3 New. qty > 0. */
int tp_mbo_add(struct tp_books *b, uint32_t instr, uint64_t order_id, enum tp_side side,
               int64_t price, int64_t qty, uint64_t priority, struct tp_book_change *out);

/*
 * ITCH E (price = TP_MBO_ORDER_PRICE: at the order's price) and C (printable != 0: the trade
 * counts in last trade and volume). Executing more than remains removes the order and counts
 * over_execution. `match` is the venue's match number.
 */
#define TP_MBO_ORDER_PRICE INT64_MIN
int tp_mbo_execute(struct tp_books *b, uint32_t instr, uint64_t order_id, int64_t qty,
                   int64_t price, int printable, uint64_t match, struct tp_book_change *out);

/* ITCH X: removes qty shares from the order (more than remains: the order is removed). */
int tp_mbo_cancel(struct tp_books *b, uint32_t instr, uint64_t order_id, int64_t qty,
                  struct tp_book_change *out);

/* ITCH D, MDP3 Delete. */
int tp_mbo_delete(struct tp_books *b, uint32_t instr, uint64_t order_id,
                  struct tp_book_change *out);

/* ITCH U: the old order leaves the book, the new one enters with the same side, new priority. */
int tp_mbo_replace(struct tp_books *b, uint32_t instr, uint64_t old_id, uint64_t new_id,
                   int64_t price, int64_t qty, uint64_t priority, struct tp_book_change *out);

/* MDP3 Change: same order id, new price and/or qty and the priority the venue gives. */
int tp_mbo_modify(struct tp_books *b, uint32_t instr, uint64_t order_id, int64_t price, int64_t qty,
                  uint64_t priority, struct tp_book_change *out);

/*
 * Empties the order-level book of one instrument (an order book snapshot follows), leaving its
 * price-level books alone, at a cost that follows the orders it held (tp_books_clear). Its old
 * order ids are unknown afterwards and can be added again. Writes one CLEAR record with book
 * TP_BOOK_ORDERS.
 */
int tp_mbo_clear(struct tp_books *b, uint32_t instr, struct tp_book_change *out);

/* Reads a live order of an instrument. Returns 0 and fills the outputs, or -ENOENT. Outputs may be
 * NULL. */
int tp_mbo_order(const struct tp_books *b, uint32_t instr, uint64_t order_id, enum tp_side *side,
                 int64_t *price, int64_t *qty, uint64_t *priority);

/*
 * Prefetch hint for a caller that knows its next messages: the slots of an order id (its window
 * slot, and its overflow slot if it may be there) and the instrument's order-level state. The
 * ITCH feed uses the inline hints of tp_books_prefetch.h instead, which also cover the best
 * levels; this call is the same hint for callers that do not include the books' layout.
 */
void tp_mbo_prefetch(const struct tp_books *b, uint32_t instr, uint64_t order_id);

#endif /* TP_MBO_H */
