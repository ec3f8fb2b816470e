/*
 * CPU sets as the kernel writes them: lists ("0-3,8,10-15:2/4") and hex masks ("ff,0000000f").
 *
 * Promises: fixed-size bitmap of TP_CPUSET_MAX cpus, no allocation; parsing rejects anything
 * malformed or beyond TP_CPUSET_MAX and leaves the set empty in that case.
 */
#ifndef TP_CPUSET_H
#define TP_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TP_CPUSET_MAX   1024
#define TP_CPUSET_WORDS (TP_CPUSET_MAX / 64)

struct tp_cpuset {
    uint64_t bits[TP_CPUSET_WORDS];
};

void tp_cpuset_clear(struct tp_cpuset *set);
void tp_cpuset_add(struct tp_cpuset *set, unsigned cpu);
bool tp_cpuset_has(const struct tp_cpuset *set, unsigned cpu);
unsigned tp_cpuset_count(const struct tp_cpuset *set);
bool tp_cpuset_empty(const struct tp_cpuset *set);

/* out = a & ~b (cpus of a that are not in b). */
void tp_cpuset_minus(struct tp_cpuset *out, const struct tp_cpuset *a, const struct tp_cpuset *b);
/* out = a | b. */
void tp_cpuset_or(struct tp_cpuset *out, const struct tp_cpuset *a, const struct tp_cpuset *b);
/* out = a & b. */
void tp_cpuset_and(struct tp_cpuset *out, const struct tp_cpuset *a, const struct tp_cpuset *b);
/* true if every cpu of sub is in super. */
bool tp_cpuset_contains(const struct tp_cpuset *super, const struct tp_cpuset *sub);

/*
 * Parses a kernel cpu list of `len` bytes: "N", "N-M", "N-M:used/group", comma separated,
 * surrounding whitespace allowed. An empty list (or "(null)", as sysfs writes it) is the empty
 * set. Kernel flags mixed into isolcpus= ("nohz", "domain", "managed_irq") are skipped when
 * skip_flags is true. Returns 0 or -EINVAL.
 */
int tp_cpuset_parse_list(struct tp_cpuset *set, const char *text, size_t len, bool skip_flags);

/* Parses a hex mask as in /proc/irq/default_smp_affinity ("f" or "00000000,0000000f"). */
int tp_cpuset_parse_mask(struct tp_cpuset *set, const char *text);

/* Writes the set as a compact list ("0-1,4"); "" when empty. Returns the length, or -ENOSPC. */
int tp_cpuset_format_list(const struct tp_cpuset *set, char *out, size_t size);

/* Writes the set as a hex mask in the kernel's 32-bit groups ("3", "1,00000000"). */
int tp_cpuset_format_mask(const struct tp_cpuset *set, char *out, size_t size);

#endif
