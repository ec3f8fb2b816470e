/* Ground truth JSON from the model's live orders. */
#include "truth.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static json_t *side_json(const struct tp_sim_model *m, uint32_t id, uint8_t side, uint32_t depth,
                         int implied, struct tp_sim_level *levels)
{
    json_t *arr = json_array();
    uint32_t n = implied ? tp_sim_model_implied_levels(m, id, side, levels, depth)
                         : tp_sim_model_levels(m, id, side, levels, depth);
    for (uint32_t i = 0; i < n; i++)
        json_array_append_new(
            arr, json_pack("{s:I,s:I,s:I}", "price9", (json_int_t)levels[i].price9, "qty",
                           (json_int_t)levels[i].qty, "orders", (json_int_t)levels[i].orders));
    return arr;
}

/* The instrument's live orders (id, side, price, quantity): the order-level truth. */
static json_t *orders_json(const struct tp_sim_model *m, const struct tp_sim_instrument *in)
{
    json_t *arr = json_array();
    for (uint32_t i = 0; i < in->n_orders; i++) {
        const struct tp_sim_order *o = &m->pool[in->orders[i]];
        json_array_append_new(arr, json_pack("{s:I,s:s,s:I,s:I}", "id", (json_int_t)o->id, "side",
                                             o->side == 'B' ? "bid" : "ask", "price9",
                                             (json_int_t)(o->ticks * in->tick9), "qty",
                                             (json_int_t)o->qty));
    }
    return arr;
}

int tp_sim_truth_write(const struct tp_sim_model *m, uint32_t depth, uint32_t implied_depth,
                       const char *path)
{
    uint32_t most = depth > implied_depth ? depth : implied_depth;
    struct tp_sim_level *levels = malloc(sizeof(*levels) * (most ? most : 1));
    if (levels == NULL)
        return -ENOMEM;
    json_t *instruments = json_array();
    for (uint32_t id = 0; id < m->params.instruments; id++) {
        const struct tp_sim_instrument *in = &m->instruments[id];
        char symbol[9];
        memcpy(symbol, in->symbol, sizeof(symbol));
        for (int i = 7; i >= 0 && symbol[i] == ' '; i--)
            symbol[i] = '\0';
        json_t *o = json_pack("{s:I,s:s,s:I,s:I,s:s,s:I,s:I,s:I}", "id", (json_int_t)id, "symbol",
                              symbol, "locate", (json_int_t)TP_SIM_LOCATE(id), "security_id",
                              (json_int_t)TP_SIM_SECURITY_ID(id), "status",
                              in->status == TP_SIM_STATUS_HALTED ? "halted" : "trading", "volume",
                              (json_int_t)in->volume, "trades", (json_int_t)in->trades,
                              "last_price9", (json_int_t)in->last_price9);
        json_object_set_new(o, "bids", side_json(m, id, 'B', depth, 0, levels));
        json_object_set_new(o, "asks", side_json(m, id, 'S', depth, 0, levels));
        json_object_set_new(o, "orders", orders_json(m, in));
        if (implied_depth > 0) {
            json_object_set_new(o, "implied_bids", side_json(m, id, 'B', implied_depth, 1, levels));
            json_object_set_new(o, "implied_asks", side_json(m, id, 'S', implied_depth, 1, levels));
        }
        json_array_append_new(instruments, o);
    }
    free(levels);
    json_t *root =
        json_pack("{s:s,s:i,s:I,s:I,s:I,s:o}", "format", "tickplane-sim-truth", "version", 1,
                  "seed", (json_int_t)m->params.seed, "depth", (json_int_t)depth, "events",
                  (json_int_t)m->events_total, "instruments", instruments);
    int rc = json_dump_file(root, path, JSON_COMPACT) == 0 ? 0 : -EIO;
    json_decref(root);
    return rc;
}
