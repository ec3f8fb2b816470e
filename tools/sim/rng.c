/* Deterministic random numbers: xoshiro256** seeded by splitmix64, plus a Zipf sampler. */
#include "rng.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void tp_sim_rng_seed(struct tp_sim_rng *rng, uint64_t seed)
{
    uint64_t state = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&state);
}

uint64_t tp_sim_rng_next(struct tp_sim_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t tp_sim_rng_below(struct tp_sim_rng *rng, uint64_t bound)
{
    if (bound == 0)
        return 0;
    /* Rejection sampling removes the modulo bias. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do {
        x = tp_sim_rng_next(rng);
    } while (x >= limit);
    return x % bound;
}

double tp_sim_rng_unit(struct tp_sim_rng *rng)
{
    return (double)(tp_sim_rng_next(rng) >> 11) * 0x1.0p-53;
}

int tp_sim_rng_chance(struct tp_sim_rng *rng, double p)
{
    if (p <= 0.0)
        return 0;
    return tp_sim_rng_unit(rng) < p;
}

uint32_t tp_sim_rng_geometric(struct tp_sim_rng *rng, double p, uint32_t cap)
{
    uint32_t k = 0;
    while (k < cap && !tp_sim_rng_chance(rng, p))
        k++;
    return k;
}

uint64_t tp_sim_rng_exponential(struct tp_sim_rng *rng, double mean)
{
    double u = tp_sim_rng_unit(rng);
    return (uint64_t)(-mean * log1p(-u) + 0.5);
}

int tp_sim_zipf_init(struct tp_sim_zipf *z, uint32_t n, double s)
{
    if (n == 0)
        return -EINVAL;
    z->cdf = malloc(sizeof(double) * n);
    if (z->cdf == NULL)
        return -ENOMEM;
    z->n = n;
    double total = 0.0;
    for (uint32_t k = 0; k < n; k++) {
        total += 1.0 / pow((double)k + 1.0, s);
        z->cdf[k] = total;
    }
    for (uint32_t k = 0; k < n; k++)
        z->cdf[k] /= total;
    return 0;
}

void tp_sim_zipf_free(struct tp_sim_zipf *z)
{
    free(z->cdf);
    z->cdf = NULL;
    z->n = 0;
}

uint32_t tp_sim_zipf_draw(const struct tp_sim_zipf *z, struct tp_sim_rng *rng)
{
    double u = tp_sim_rng_unit(rng);
    uint32_t lo = 0, hi = z->n - 1;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (z->cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}
