/*
 * Deterministic random numbers for the simulator.
 *
 * Promise: the same seed gives the same sequence on every machine and compiler (xoshiro256**
 * seeded through splitmix64, integer arithmetic only; the few doubles are computed from integers
 * the same way everywhere). Nothing here reads the clock or the environment.
 */
#ifndef TP_SIM_RNG_H
#define TP_SIM_RNG_H

#include <stddef.h>
#include <stdint.h>

struct tp_sim_rng {
    uint64_t s[4];
};

void tp_sim_rng_seed(struct tp_sim_rng *rng, uint64_t seed);
uint64_t tp_sim_rng_next(struct tp_sim_rng *rng);
/* Uniform in [0, bound); bound 0 returns 0. */
uint64_t tp_sim_rng_below(struct tp_sim_rng *rng, uint64_t bound);
/* Uniform double in [0, 1). */
double tp_sim_rng_unit(struct tp_sim_rng *rng);
/* True with probability p (p <= 0: never, p >= 1: always). */
int tp_sim_rng_chance(struct tp_sim_rng *rng, double p);
/* Number of failures before a success with probability p (geometric, >= 0), capped at cap. */
uint32_t tp_sim_rng_geometric(struct tp_sim_rng *rng, double p, uint32_t cap);
/* Exponentially distributed with the given mean, rounded to an integer. */
uint64_t tp_sim_rng_exponential(struct tp_sim_rng *rng, double mean);

/*
 * Zipf-distributed ranks 0..n-1 with exponent s: rank k is drawn with weight 1/(k+1)^s, so a few
 * ranks carry most of the draws. The cumulative table is built once (n doubles).
 */
struct tp_sim_zipf {
    double *cdf;
    uint32_t n;
};

int tp_sim_zipf_init(struct tp_sim_zipf *z, uint32_t n, double s);
void tp_sim_zipf_free(struct tp_sim_zipf *z);
uint32_t tp_sim_zipf_draw(const struct tp_sim_zipf *z, struct tp_sim_rng *rng);

#endif
