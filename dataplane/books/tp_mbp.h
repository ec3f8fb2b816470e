/*
 * Price-level books (MBP) with CME MDP3 semantics.
 *
 * Each instrument has an outright book (TP_BOOK_DIRECT) of depth `depth` and an implied book
 * (TP_BOOK_IMPLIED) of depth `implied_depth`, both set by tp_books_configure() from the
 * instrument definition. Levels are addressed by index 1..depth, best first, and kept in small
 * arrays; an index with no level reads as qty 0. Actions (enum tp_level_action):
 *   NEW k          insert at k, shift k..depth-1 down, the level beyond the depth falls off;
 *   CHANGE k       new qty/count at k (and price, if the venue sent another one);
 *   DELETE k       remove k, shift the levels below up;
 *   DELETE_THRU    clear the side (level ignored);
 *   DELETE_FROM k  remove levels 1..k, shift the rest up (k >= depth clears the side);
 *   OVERLAY k      replace level k (price, qty, count).
 * A snapshot is applied as tp_books_clear() then OVERLAY at each index it carries (in any
 * order); a channel reset is tp_books_clear() of each instrument of the channel.
 */
#ifndef TP_MBP_H
#define TP_MBP_H

#include <stdint.h>

#include "tp_books.h"

/*
 * Applies one MDP3 book entry. `book` is TP_BOOK_DIRECT or TP_BOOK_IMPLIED; `count` is the
 * number of orders (0 if unknown). Returns the number of change records written (0 or 1), or a
 * negative errno (see tp_books.h): an index of 0 or beyond the depth is counted as bad_level.
 */
int tp_mbp_update(struct tp_books *b, uint32_t instr, enum tp_book_kind book, enum tp_side side,
                  enum tp_level_action action, uint32_t level, int64_t price, int64_t qty,
                  uint32_t count, struct tp_book_change *out);

#endif /* TP_MBP_H */
