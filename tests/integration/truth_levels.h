/*
 * What the integration consumers share: one side of a book compared with the simulator's truth
 * file (its "bids" or "asks": [{"price9", "qty", "orders"}], best first).
 */
#ifndef TP_TEST_TRUTH_LEVELS_H
#define TP_TEST_TRUTH_LEVELS_H

#include <jansson.h>
#include <stdbool.h>

#include "tickplane/tickplane.h"

/*
 * Compares the first `depth` truth levels with a book side (slots[0..n_slots), empty slots of
 * quantity 0 skipped); with check_orders, a known order count must match too. Prints the first
 * difference on stderr (symbol and what name the side); returns the number of levels that differ.
 */
int tp_test_compare_side(const char *symbol, const char *what, json_t *truth_levels,
                         const struct tp_level *slots, unsigned n_slots, unsigned depth,
                         bool check_orders);

#endif
