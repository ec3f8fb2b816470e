/*
 * Instrument filter (see tp_instrument_filter.h).
 */
#include <errno.h>
#include <fnmatch.h>
#include <string.h>

#include "tp_instrument_filter.h"

void tp_instrument_filter_init(struct tp_instrument_filter *f)
{
    memset(f, 0, sizeof(*f));
}

int tp_instrument_filter_add(struct tp_instrument_filter *f, enum tp_filter_verdict verdict,
                             enum tp_filter_field field, const char *pattern)
{
    size_t n = pattern ? strlen(pattern) : 0;
    struct tp_filter_rule *rule;

    if (n == 0 || n >= TP_FILTER_PATTERN_MAX || verdict > TP_FILTER_EXCLUDE ||
        field > TP_FILTER_GROUP)
        return -EINVAL;
    if (f->n_rules == TP_FILTER_RULES_MAX)
        return -ENOSPC;
    rule = &f->rules[f->n_rules++];
    rule->verdict = (uint8_t)verdict;
    rule->field = (uint8_t)field;
    memcpy(rule->pattern, pattern, n + 1);
    if (verdict == TP_FILTER_INCLUDE)
        f->n_includes++;
    return 0;
}

/* Splits "word:" off the front of *s; returns 1 if the word equals `want`, advancing *s. */
static int take_word(const char **s, const char *want)
{
    size_t n = strlen(want);

    if (strncmp(*s, want, n) != 0 || (*s)[n] != ':')
        return 0;
    *s += n + 1;
    return 1;
}

int tp_instrument_filter_parse(struct tp_instrument_filter *f, const char *rule)
{
    enum tp_filter_verdict verdict;
    enum tp_filter_field field;

    if (!rule)
        return -EINVAL;
    if (take_word(&rule, "include"))
        verdict = TP_FILTER_INCLUDE;
    else if (take_word(&rule, "exclude"))
        verdict = TP_FILTER_EXCLUDE;
    else
        return -EINVAL;
    if (take_word(&rule, "symbol"))
        field = TP_FILTER_SYMBOL;
    else if (take_word(&rule, "group"))
        field = TP_FILTER_GROUP;
    else
        return -EINVAL;
    return tp_instrument_filter_add(f, verdict, field, rule);
}

bool tp_instrument_filter_match(const struct tp_instrument_filter *f, const char *symbol,
                                const char *security_group)
{
    bool included = f->n_includes == 0;

    for (uint32_t i = 0; i < f->n_rules; i++) {
        const struct tp_filter_rule *rule = &f->rules[i];
        const char *value = rule->field == TP_FILTER_SYMBOL ? symbol : security_group;
        if (!value || fnmatch(rule->pattern, value, 0) != 0)
            continue;
        if (rule->verdict == TP_FILTER_EXCLUDE)
            return false;
        included = true;
    }
    return included;
}
