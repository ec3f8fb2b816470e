/* One side of a book against the simulator's truth (see truth_levels.h). */
#include "truth_levels.h"

#include <stdio.h>

#define MAX_LEVELS 64

int tp_test_compare_side(const char *symbol, const char *what, json_t *truth_levels,
                         const struct tp_level *slots, unsigned n_slots, unsigned depth,
                         bool check_orders)
{
    struct tp_level levels[MAX_LEVELS];
    unsigned n = 0;
    for (unsigned k = 0; k < n_slots && k < MAX_LEVELS; k++)
        if (slots[k].qty != 0)
            levels[n++] = slots[k];
    int bad = 0;
    for (size_t i = 0; i < json_array_size(truth_levels) && i < depth; i++) {
        json_t *t = json_array_get(truth_levels, i);
        int64_t price = json_integer_value(json_object_get(t, "price9"));
        int64_t qty = json_integer_value(json_object_get(t, "qty"));
        int64_t orders = json_integer_value(json_object_get(t, "orders"));
        if (i >= n || levels[i].price != price || levels[i].qty != qty ||
            (check_orders && levels[i].orders != TP_COUNT_NULL && levels[i].orders != orders)) {
            if (bad++ == 0)
                fprintf(stderr, "%s %s level %zu: truth %ld x %ld (%ld), got %s%ld x %ld (%d)\n",
                        symbol, what, i + 1, price, qty, orders, i >= n ? "nothing " : "",
                        i < n ? levels[i].price : 0, i < n ? levels[i].qty : 0,
                        i < n ? levels[i].orders : 0);
        }
    }
    return bad;
}
