/* Log-linear histogram (see histogram.h). */
#include "histogram.h"

#include <string.h>

void tp_hist_reset(struct tp_histogram *h)
{
    memset(h, 0, sizeof(*h));
    h->min = UINT64_MAX;
}

uint64_t tp_hist_bucket_high(uint32_t i)
{
    if (i < TP_HIST_SUB)
        return i;
    uint32_t shift = (i >> TP_HIST_SUB_BITS) - 1u;
    uint64_t sub = (uint64_t)(i & (TP_HIST_SUB - 1u)) | TP_HIST_SUB;
    uint64_t low = sub << shift;
    return low + ((1ull << shift) - 1u);
}

uint64_t tp_hist_percentile(const struct tp_histogram *h, double p)
{
    if (h->count == 0)
        return 0;
    if (p < 0.0)
        p = 0.0;
    if (p > 100.0)
        p = 100.0;
    /* Rank of the sample wanted, 1-based: ceil(p% of count), at least 1. */
    double exact = p / 100.0 * (double)h->count;
    uint64_t rank = (uint64_t)exact;
    if ((double)rank < exact)
        rank++;
    if (rank == 0)
        rank = 1;
    uint64_t seen = 0;
    for (uint32_t i = 0; i < TP_HIST_BUCKETS; i++) {
        seen += h->buckets[i];
        if (seen >= rank) {
            uint64_t v = tp_hist_bucket_high(i);
            if (v > h->max)
                v = h->max;
            if (v < h->min)
                v = h->min;
            return v;
        }
    }
    return h->max;
}

void tp_hist_merge(struct tp_histogram *dst, const struct tp_histogram *src)
{
    for (uint32_t i = 0; i < TP_HIST_BUCKETS; i++)
        dst->buckets[i] += src->buckets[i];
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

void tp_hist_print_json(FILE *out, const struct tp_histogram *h, double scale)
{
    static const struct {
        const char *name;
        double p;
    } points[] = {{"p50", 50.0}, {"p90", 90.0}, {"p99", 99.0}, {"p99.9", 99.9}, {"p99.99", 99.99}};
    fprintf(out, "{\"count\":%llu,\"min\":%.1f", (unsigned long long)h->count,
            h->count ? (double)h->min * scale : 0.0);
    for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
        fprintf(out, ",\"%s\":%.1f", points[i].name,
                (double)tp_hist_percentile(h, points[i].p) * scale);
    fprintf(out, ",\"max\":%.1f,\"mean\":%.1f}", (double)h->max * scale,
            h->count ? (double)h->sum / (double)h->count * scale : 0.0);
}
