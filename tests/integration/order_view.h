/*
 * The order-level view an integration consumer builds from the bus, and its comparison with the
 * simulator's truth file (each instrument's "orders": [{"id", "side", "price9", "qty"}]).
 *
 * Built from the ring as any order-level consumer would: an OrderEvent puts its order at its
 * price with its remainingQuantity (an add of an id already held replaces it: an order-level
 * snapshot loaded after a price-level one resends the orders the view has), a remove or nothing
 * remaining takes it out, the remove of order id 0 takes out all of the instrument's (its order
 * book emptied before an order-level snapshot loads it); a BookUpdate that clears both sides (a
 * snapshot, a reset) empties the instrument's orders. Ids are the venue's, unique within an
 * instrument.
 */
#ifndef TP_TEST_ORDER_VIEW_H
#define TP_TEST_ORDER_VIEW_H

#include <jansson.h>
#include <stdint.h>

#include "bus/bus.h"

/* Applies one ring record (anything but an OrderEvent or a clearing BookUpdate is ignored). */
void tp_test_orders_apply(const struct tp_ring_record *rec);

/*
 * Compares instrument `id`'s orders with its truth orders: every one held with the same side,
 * price and quantity, and no other. Prints the first difference on stderr; 0 if equal, else 1.
 */
int tp_test_orders_compare(const char *symbol, uint32_t id, json_t *truth_orders);

#endif
