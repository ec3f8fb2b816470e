/*
 * The "instruments" and "books" sections: the instrument capacity and the include, exclude
 * and security group filters (glob patterns, tp_config_instrument_wanted), and the order and
 * level limits of the books. Validates ranges and that patterns are printable.
 */
#include <string.h>

#include "config_loader.h"
#include "../util/glob.h"

void check_patterns(struct loader *ld, const char *path, char (*patterns)[TP_CFG_PATTERN_MAX],
                    unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        for (const char *c = patterns[i]; *c != '\0'; c++) {
            if (*c <= ' ' || *c > '~') {
                char item[TP_JW_PATH_MAX];
                tp_jw_path_index(item, path, i);
                tp_jw_error(ld->errs, item, "pattern \"%s\" has a space or non-printable character",
                            patterns[i]);
                break;
            }
        }
    }
}

void parse_instruments(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"capacity", "include", "exclude", "security_groups", NULL};
    struct tp_cfg_instruments *in = &ld->cfg->instruments;
    in->capacity = 4096;
    json_t *obj = tp_jw_get(ld->errs, "", root, "instruments", JSON_OBJECT, false);
    if (obj == NULL)
        return;
    tp_jw_check_keys(ld->errs, "instruments", obj, keys);
    uint64_t v;
    if (tp_jw_uint(ld->errs, "instruments", obj, "capacity", 1, 1u << 24, false, &v))
        in->capacity = (uint32_t)v;
    else if (json_object_get(obj, "capacity") != NULL)
        ld->instruments_bad = true;
    string_list(ld, "instruments", obj, "include", &in->include[0][0], TP_CFG_PATTERN_MAX,
                TP_CFG_MAX_PATTERNS, &in->n_include);
    check_patterns(ld, "instruments.include", in->include, in->n_include);
    string_list(ld, "instruments", obj, "exclude", &in->exclude[0][0], TP_CFG_PATTERN_MAX,
                TP_CFG_MAX_PATTERNS, &in->n_exclude);
    check_patterns(ld, "instruments.exclude", in->exclude, in->n_exclude);
    string_list(ld, "instruments", obj, "security_groups", &in->security_groups[0][0],
                TP_CFG_NAME_MAX, TP_CFG_MAX_GROUPS, &in->n_security_groups);
}

void parse_books(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"max_orders", "recent_orders", "levels_per_side", NULL};
    struct tp_cfg_books *b = &ld->cfg->books;
    b->max_orders = 1u << 20;
    b->levels_per_side = 10;
    json_t *obj = tp_jw_get(ld->errs, "", root, "books", JSON_OBJECT, false);
    uint64_t v;
    if (obj != NULL) {
        tp_jw_check_keys(ld->errs, "books", obj, keys);
        if (tp_jw_uint(ld->errs, "books", obj, "max_orders", 0, 1u << 28, false, &v))
            b->max_orders = (uint32_t)v;
        /* tp_books' TP_RECENT_ORDERS_LIMIT; 0 takes its default */
        if (tp_jw_uint(ld->errs, "books", obj, "recent_orders", 0, 1u << 28, false, &v))
            b->recent_orders = (uint32_t)v;
        if (tp_jw_uint(ld->errs, "books", obj, "levels_per_side", 1, 1000, false, &v))
            b->levels_per_side = (uint16_t)v;
    }
}

bool tp_config_instrument_wanted(const struct tp_cfg_instruments *filter, const char *symbol,
                                 const char *security_group)
{
    for (unsigned i = 0; i < filter->n_exclude; i++)
        if (tp_glob_match(filter->exclude[i], symbol))
            return false;
    if (filter->n_security_groups > 0) {
        bool in_group = false;
        for (unsigned i = 0; security_group != NULL && i < filter->n_security_groups; i++)
            in_group |= strcmp(filter->security_groups[i], security_group) == 0;
        if (!in_group)
            return false;
    }
    if (filter->n_include == 0)
        return true;
    for (unsigned i = 0; i < filter->n_include; i++)
        if (tp_glob_match(filter->include[i], symbol))
            return true;
    return false;
}
