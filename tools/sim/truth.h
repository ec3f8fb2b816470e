/*
 * Ground truth: the final books of the simulator's model as JSON.
 *
 * Promise: the file lists every instrument with its top `depth` price levels per side (price in
 * 1e-9, total quantity, number of orders), best first, aggregated from the model's live orders
 * (tp_sim_model_levels), never from tickplane's book code. The ids a feed uses for an instrument
 * (ITCH stock locate, MDP3 SecurityID) are listed with it.
 *
 * {"format":"tickplane-sim-truth","version":1,"seed":S,"depth":D,"events":N,"instruments":[
 *   {"id":0,"symbol":"AAAA","locate":1,"security_id":100000,"status":"trading",
 *    "volume":V,"trades":T,"last_price9":P,
 *    "bids":[{"price9":..,"qty":..,"orders":..},..],"asks":[..]}, ..]}
 */
#ifndef TP_SIM_TRUTH_H
#define TP_SIM_TRUTH_H

#include <stdint.h>

#include "model.h"

/* ITCH stock locate and MDP3 SecurityID of an instrument (locate 0 is reserved by Nasdaq). */
#define TP_SIM_LOCATE(id)      ((uint16_t)((id) + 1))
#define TP_SIM_SECURITY_ID(id) ((int32_t)(100000 + (id)))

/*
 * Writes the truth file; with implied_depth > 0 (MDP3) each instrument also has "implied_bids" and
 * "implied_asks" (tp_sim_model_implied_levels, "orders" 0: unknown). Returns 0 or a negative errno.
 */
int tp_sim_truth_write(const struct tp_sim_model *m, uint32_t depth, uint32_t implied_depth,
                       const char *path);

#endif
