/*
 * Log-linear latency histogram (HDR-like): fixed memory, no allocation, O(1) record.
 *
 * Values (ns, TSC ticks, anything uint64) below 2^TP_HIST_SUB_BITS are counted exactly; above,
 * each power of two is split into 2^TP_HIST_SUB_BITS equal buckets, so a reported percentile is
 * at most 1/2^TP_HIST_SUB_BITS (about 3%) above the true value. min, max and the count are exact.
 *
 * One writer per histogram (e.g. a data lcore or a benchmark thread); merge copies for reports.
 * Used by the bus benchmark and by the data plane's receive-to-publish latency.
 */
#ifndef TP_HISTOGRAM_H
#define TP_HISTOGRAM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TP_HIST_SUB_BITS 5u
#define TP_HIST_SUB      (1u << TP_HIST_SUB_BITS)
#define TP_HIST_BUCKETS  ((64u - TP_HIST_SUB_BITS + 1u) * TP_HIST_SUB)

struct tp_histogram {
    uint64_t count;
    uint64_t min;
    uint64_t max;
    uint64_t sum;
    uint64_t buckets[TP_HIST_BUCKETS];
};

void tp_hist_reset(struct tp_histogram *h);

/* Bucket index of a value (exposed for tests). */
static inline uint32_t tp_hist_index(uint64_t v)
{
    if (v < TP_HIST_SUB)
        return (uint32_t)v;
    uint32_t msb = 63u - (uint32_t)__builtin_clzll(v);
    uint32_t shift = msb - TP_HIST_SUB_BITS;
    return ((shift + 1u) << TP_HIST_SUB_BITS) + (uint32_t)((v >> shift) & (TP_HIST_SUB - 1u));
}

static inline void tp_hist_record(struct tp_histogram *h, uint64_t v)
{
    h->buckets[tp_hist_index(v)]++;
    h->count++;
    h->sum += v;
    if (v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

/* Largest value that falls in bucket index i. */
uint64_t tp_hist_bucket_high(uint32_t i);

/*
 * Value at percentile p (0..100): the highest value of the bucket holding the p-th percentile
 * sample, never more than max. 0 for an empty histogram.
 */
uint64_t tp_hist_percentile(const struct tp_histogram *h, double p);

/* dst += src. */
void tp_hist_merge(struct tp_histogram *dst, const struct tp_histogram *src);

/*
 * Print {"count":..,"min":..,"p50":..,"p90":..,"p99":..,"p99.9":..,"p99.99":..,"max":..,
 * "mean":..} with every value multiplied by scale (e.g. ns per TSC tick); no newline.
 */
void tp_hist_print_json(FILE *out, const struct tp_histogram *h, double scale);

#endif /* TP_HISTOGRAM_H */
