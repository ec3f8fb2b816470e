/*
 * sim_options.c - tickplane-sim's number parsers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim_options.h"

int sim_parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || *s == '\0' || *end != '\0' || *s == '-')
        return -EINVAL;
    *out = v;
    return 0;
}

int sim_parse_prob(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !(v >= 0.0 && v <= 1.0))
        return -EINVAL;
    *out = v;
    return 0;
}

int sim_parse_u32(const char *s, uint32_t *out)
{
    uint64_t v;
    int rc = sim_parse_u64(s, &v);
    if (rc != 0 || v > UINT32_MAX)
        return -EINVAL;
    *out = (uint32_t)v;
    return 0;
}

int sim_parse_u32_pair(const char *s, uint32_t *a, uint32_t *b)
{
    char first[32];
    const char *colon = strchr(s, ':');
    if (colon == NULL || (size_t)(colon - s) >= sizeof(first))
        return -EINVAL;
    memcpy(first, s, (size_t)(colon - s));
    first[colon - s] = '\0';
    return sim_parse_u32(first, a) < 0 || sim_parse_u32(colon + 1, b) < 0 ? -EINVAL : 0;
}
