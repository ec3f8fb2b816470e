/* CPU sets: kernel cpu-list and hex-mask parsing and formatting (see cpuset.h). */
#include "cpuset.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

void tp_cpuset_clear(struct tp_cpuset *set)
{
    memset(set, 0, sizeof(*set));
}

void tp_cpuset_add(struct tp_cpuset *set, unsigned cpu)
{
    if (cpu < TP_CPUSET_MAX)
        set->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}

bool tp_cpuset_has(const struct tp_cpuset *set, unsigned cpu)
{
    return cpu < TP_CPUSET_MAX && (set->bits[cpu / 64] >> (cpu % 64)) & 1;
}

unsigned tp_cpuset_count(const struct tp_cpuset *set)
{
    unsigned n = 0;
    for (unsigned w = 0; w < TP_CPUSET_WORDS; w++)
        n += (unsigned)__builtin_popcountll(set->bits[w]);
    return n;
}

bool tp_cpuset_empty(const struct tp_cpuset *set)
{
    return tp_cpuset_count(set) == 0;
}

void tp_cpuset_minus(struct tp_cpuset *out, const struct tp_cpuset *a, const struct tp_cpuset *b)
{
    for (unsigned w = 0; w < TP_CPUSET_WORDS; w++)
        out->bits[w] = a->bits[w] & ~b->bits[w];
}

void tp_cpuset_or(struct tp_cpuset *out, const struct tp_cpuset *a, const struct tp_cpuset *b)
{
    for (unsigned w = 0; w < TP_CPUSET_WORDS; w++)
        out->bits[w] = a->bits[w] | b->bits[w];
}

void tp_cpuset_and(struct tp_cpuset *out, const struct tp_cpuset *a, const struct tp_cpuset *b)
{
    for (unsigned w = 0; w < TP_CPUSET_WORDS; w++)
        out->bits[w] = a->bits[w] & b->bits[w];
}

bool tp_cpuset_contains(const struct tp_cpuset *super, const struct tp_cpuset *sub)
{
    for (unsigned w = 0; w < TP_CPUSET_WORDS; w++)
        if (sub->bits[w] & ~super->bits[w])
            return false;
    return true;
}

/* Reads a decimal number below TP_CPUSET_MAX at *p (bounded by end); advances *p. */
static int parse_cpu_number(const char **p, const char *end, unsigned *value)
{
    const char *s = *p;
    unsigned v = 0;

    if (s == end || !isdigit((unsigned char)*s))
        return -EINVAL;
    while (s < end && isdigit((unsigned char)*s)) {
        v = v * 10 + (unsigned)(*s - '0');
        if (v >= TP_CPUSET_MAX)
            return -EINVAL;
        s++;
    }
    *p = s;
    *value = v;
    return 0;
}

/* One element: "N", "N-M" or "N-M:used/group" (the kernel's stride syntax). */
static int parse_list_element(struct tp_cpuset *set, const char *s, const char *end)
{
    unsigned first, last, used, group;

    if (parse_cpu_number(&s, end, &first) < 0)
        return -EINVAL;
    last = first;
    used = group = 1;
    if (s < end && *s == '-') {
        s++;
        if (parse_cpu_number(&s, end, &last) < 0 || last < first)
            return -EINVAL;
        if (s < end && *s == ':') {
            s++;
            if (parse_cpu_number(&s, end, &used) < 0 || s == end || *s != '/')
                return -EINVAL;
            s++;
            if (parse_cpu_number(&s, end, &group) < 0 || used == 0 || used > group)
                return -EINVAL;
        }
    }
    if (s != end)
        return -EINVAL;
    for (unsigned cpu = first; cpu <= last; cpu++)
        if ((cpu - first) % group < used)
            tp_cpuset_add(set, cpu);
    return 0;
}

int tp_cpuset_parse_list(struct tp_cpuset *set, const char *text, size_t len, bool skip_flags)
{
    const char *end = text + len;

    tp_cpuset_clear(set);
    while (text < end && isspace((unsigned char)*text))
        text++;
    while (end > text && isspace((unsigned char)end[-1]))
        end--;
    if (end - text == 6 && memcmp(text, "(null)", 6) == 0)
        return 0;

    while (text < end) {
        const char *comma = memchr(text, ',', (size_t)(end - text));
        const char *item_end = comma ? comma : end;

        if (skip_flags && item_end > text && isalpha((unsigned char)*text)) {
            /* isolcpus flags such as "nohz" or "managed_irq": not cpus */
        } else if (parse_list_element(set, text, item_end) < 0) {
            tp_cpuset_clear(set);
            return -EINVAL;
        }
        text = comma ? comma + 1 : end;
    }
    return 0;
}

int tp_cpuset_parse_mask(struct tp_cpuset *set, const char *text)
{
    size_t len = strlen(text);
    unsigned bit = 0;

    tp_cpuset_clear(set);
    while (len > 0 && isspace((unsigned char)text[len - 1]))
        len--;
    if (len == 0)
        return -EINVAL;
    /* Least significant digit last: walk backwards, four cpus per hex digit. */
    for (size_t i = len; i-- > 0;) {
        int c = (unsigned char)text[i];
        unsigned nibble;

        if (c == ',')
            continue;
        if (!isxdigit(c)) {
            tp_cpuset_clear(set);
            return -EINVAL;
        }
        nibble = (unsigned)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
        for (unsigned b = 0; b < 4; b++, bit++) {
            if (!(nibble >> b & 1))
                continue;
            if (bit >= TP_CPUSET_MAX) {
                tp_cpuset_clear(set);
                return -EINVAL;
            }
            tp_cpuset_add(set, bit);
        }
    }
    return 0;
}

int tp_cpuset_format_list(const struct tp_cpuset *set, char *out, size_t size)
{
    size_t used = 0;

    if (size == 0)
        return -ENOSPC;
    out[0] = '\0';
    for (unsigned cpu = 0; cpu < TP_CPUSET_MAX; cpu++) {
        unsigned last = cpu;
        int n;

        if (!tp_cpuset_has(set, cpu))
            continue;
        while (last + 1 < TP_CPUSET_MAX && tp_cpuset_has(set, last + 1))
            last++;
        if (last == cpu)
            n = snprintf(out + used, size - used, "%s%u", used ? "," : "", cpu);
        else
            n = snprintf(out + used, size - used, "%s%u-%u", used ? "," : "", cpu, last);
        if (n < 0 || (size_t)n >= size - used)
            return -ENOSPC;
        used += (size_t)n;
        cpu = last;
    }
    return (int)used;
}

int tp_cpuset_format_mask(const struct tp_cpuset *set, char *out, size_t size)
{
    int top = -1; /* highest non-zero 32-bit group */
    size_t used = 0;

    for (int g = TP_CPUSET_MAX / 32 - 1; g >= 0 && top < 0; g--)
        if ((uint32_t)(set->bits[g / 2] >> (g % 2 * 32)))
            top = g;
    if (top < 0)
        top = 0;
    for (int g = top; g >= 0; g--) {
        uint32_t word = (uint32_t)(set->bits[g / 2] >> (g % 2 * 32));
        int n = g == top ? snprintf(out + used, size - used, "%x", word)
                         : snprintf(out + used, size - used, ",%08x", word);
        if (n < 0 || (size_t)n >= size - used)
            return -ENOSPC;
        used += (size_t)n;
    }
    return (int)used;
}
