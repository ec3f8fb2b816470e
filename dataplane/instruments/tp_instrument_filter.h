/*
 * Instrument filter: which instruments tickplane keeps books for.
 *
 * An ordered list of rules; each rule includes or excludes instruments whose symbol or security
 * group matches a shell glob (fnmatch: '*', '?', '[...]'). An instrument is kept when it matches
 * at least one include rule (or there are no include rules) and matches no exclude rule, so
 * "include ES*, exclude ES*-*" keeps the ES outrights and drops the ES spreads.
 * Evaluated only when a definition arrives, never per message.
 */
#ifndef TP_INSTRUMENT_FILTER_H
#define TP_INSTRUMENT_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "tp_instruments.h"

#define TP_FILTER_RULES_MAX   32
#define TP_FILTER_PATTERN_MAX 32

enum tp_filter_verdict { TP_FILTER_INCLUDE = 0, TP_FILTER_EXCLUDE = 1 };
enum tp_filter_field { TP_FILTER_SYMBOL = 0, TP_FILTER_GROUP = 1 };

struct tp_filter_rule {
    uint8_t verdict; /* enum tp_filter_verdict */
    uint8_t field;   /* enum tp_filter_field */
    char pattern[TP_FILTER_PATTERN_MAX];
};

struct tp_instrument_filter {
    uint32_t n_rules;
    uint32_t n_includes;
    struct tp_filter_rule rules[TP_FILTER_RULES_MAX];
};

/* An empty filter keeps every instrument. */
void tp_instrument_filter_init(struct tp_instrument_filter *f);

/* Appends a rule. Returns 0, -ENOSPC when full, -EINVAL for an empty or too long pattern. */
int tp_instrument_filter_add(struct tp_instrument_filter *f, enum tp_filter_verdict verdict,
                             enum tp_filter_field field, const char *pattern);

/*
 * Appends a rule written as text, "include:symbol:ES*", "exclude:group:GE" (the form used on
 * command lines). Returns 0 or a negative errno as tp_instrument_filter_add, -EINVAL when
 * malformed.
 */
int tp_instrument_filter_parse(struct tp_instrument_filter *f, const char *rule);

/* True if an instrument with this symbol and security group gets a book. */
bool tp_instrument_filter_match(const struct tp_instrument_filter *f, const char *symbol,
                                const char *security_group);

#endif /* TP_INSTRUMENT_FILTER_H */
