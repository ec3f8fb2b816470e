/*
 * The "eal" section: either explicit EAL arguments ("args", from which the lcore list, the main
 * lcore and the memory are read back) or the keys they are built from (lcores, main_lcore,
 * memory_mb, no_huge, no_pci, no_shconf, file_prefix, log_level, vdevs, pci_allow), not both.
 * Validates the lcore list grammar (tp_config_parse_lcores) and the ranges.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_loader.h"
#include "log.h"

/*
 * The EAL lcore list grammar ("--lcores"; "-l" lists are its subset):
 *   list  = item ("," item)*          item = set ["@" set]
 *   set   = range | "(" range ("," range)* ")"          range = n ["-" n]
 * The set before '@' names lcores, the one after the CPUs each of them may run on. Without '@',
 * a group's lcores share the group's CPUs and every other lcore runs on the CPU of its number.
 */
#define LCORE_SYNTAX "expected a list like \"0-3,5\" or \"0@0,1@1,2@1\""

/* One set at *p into mask (bits 0..127); *group says it was parenthesized. NULL or why not. */
static const char *parse_id_set(const char **p, uint64_t mask[2], bool *group, const char *what)
{
    const char *s = *p;
    mask[0] = mask[1] = 0;
    *group = *s == '(';
    if (*group)
        s++;
    for (;;) {
        char *end;
        if (*s < '0' || *s > '9')
            return LCORE_SYNTAX;
        unsigned long lo = strtoul(s, &end, 10), hi = lo;
        s = end;
        if (*s == '-') {
            s++;
            if (*s < '0' || *s > '9')
                return LCORE_SYNTAX;
            hi = strtoul(s, &end, 10);
            s = end;
        }
        if (hi < lo)
            return "a range runs backwards";
        if (hi > TP_CFG_MAX_LCORE_ID)
            return what;
        for (unsigned long id = lo; id <= hi; id++)
            mask[id / 64] |= 1ull << (id % 64);
        if (!*group || *s != ',')
            break;
        s++;
    }
    if (*group) {
        if (*s != ')')
            return LCORE_SYNTAX;
        s++;
    }
    *p = s;
    return NULL;
}

const char *tp_config_parse_lcores(const char *text, struct tp_cfg_eal *eal)
{
    static const char *const lcore_range = "lcore ids must be at most 127";
    static const char *const cpu_range = "CPU ids must be at most 127";
    uint64_t cpus[TP_CFG_MAX_LCORE_ID + 1][2];
    bool seen[TP_CFG_MAX_LCORE_ID + 1] = {false};
    bool mapped = false;
    if (strlen(text) >= sizeof(eal->lcore_map))
        return "the list is too long";
    const char *p = text;
    while (*p != '\0') {
        uint64_t lcores[2], cpu_set[2];
        bool group, cpu_group;
        const char *why = parse_id_set(&p, lcores, &group, lcore_range);
        if (why != NULL)
            return why;
        bool at = *p == '@';
        if (at) {
            p++;
            why = parse_id_set(&p, cpu_set, &cpu_group, cpu_range);
            if (why != NULL)
                return why;
        }
        mapped |= at || group;
        if (*p == ',')
            p++;
        else if (*p != '\0')
            return LCORE_SYNTAX;
        for (unsigned id = 0; id <= TP_CFG_MAX_LCORE_ID; id++) {
            if (!(lcores[id / 64] >> (id % 64) & 1))
                continue;
            if (seen[id])
                return "an lcore is listed twice";
            seen[id] = true;
            cpus[id][0] = at ? cpu_set[0] : group ? lcores[0] : id < 64 ? 1ull << id : 0;
            cpus[id][1] = at ? cpu_set[1] : group ? lcores[1] : id >= 64 ? 1ull << (id - 64) : 0;
        }
    }
    eal->n_lcores = 0;
    for (unsigned id = 0; id <= TP_CFG_MAX_LCORE_ID; id++) {
        if (!seen[id])
            continue;
        if (eal->n_lcores == TP_CFG_MAX_LCORES)
            return "more than 32 lcores";
        memcpy(eal->lcore_cpus[eal->n_lcores], cpus[id], sizeof(cpus[id]));
        eal->lcores[eal->n_lcores++] = (uint16_t)id;
    }
    if (eal->n_lcores == 0)
        return "the list is empty";
    eal->cpu_map = mapped;
    snprintf(eal->lcore_map, sizeof(eal->lcore_map), "%s", text);
    return NULL;
}

int tp_config_lcore_cpus(const struct tp_cfg_eal *eal, unsigned lcore, uint64_t out[2])
{
    for (unsigned i = 0; i < eal->n_lcores; i++) {
        if (eal->lcores[i] == lcore) {
            out[0] = eal->lcore_cpus[i][0];
            out[1] = eal->lcore_cpus[i][1];
            return 0;
        }
    }
    return -ENOENT;
}

static void set_lcores(struct loader *ld, const char *path, const char *text)
{
    const char *why = tp_config_parse_lcores(text, &ld->cfg->eal);
    if (why != NULL) {
        tp_jw_error(ld->errs, path, "\"%s\": %s", text, why);
        ld->eal_ok = false;
    }
}

/* The value of an option in args: "-l 0-1", "-l0-1", "--lcores=0-1" (either form may be NULL); NULL
 * if absent. */
static const char *find_eal_option(const struct tp_cfg_eal *eal, const char *short_opt,
                                   const char *long_opt)
{
    for (unsigned i = 0; i < eal->n_args; i++) {
        const char *a = eal->args[i];
        size_t sl = short_opt ? strlen(short_opt) : 0, ll = long_opt ? strlen(long_opt) : 0;
        bool has_next = i + 1 < eal->n_args;
        if ((short_opt && strcmp(a, short_opt) == 0) || (long_opt && strcmp(a, long_opt) == 0))
            return has_next ? eal->args[i + 1] : "";
        if (short_opt && strncmp(a, short_opt, sl) == 0 && a[sl] != '\0')
            return a + sl;
        if (long_opt && strncmp(a, long_opt, ll) == 0 && a[ll] == '=')
            return a + ll + 1;
    }
    return NULL;
}

static void parse_explicit_eal(struct loader *ld, const json_t *eal_obj)
{
    struct tp_cfg_eal *eal = &ld->cfg->eal;
    static const char *const structured[] = {"lcores", "main_lcore", "memory_mb",   "no_huge",
                                             "no_pci", "no_shconf",  "file_prefix", "log_level",
                                             "vdevs",  "pci_allow",  NULL};
    for (unsigned i = 0; structured[i] != NULL; i++) {
        if (json_object_get(eal_obj, structured[i]) != NULL) {
            char child[TP_JW_PATH_MAX];
            tp_jw_path_key(child, "eal", structured[i]);
            tp_jw_error(ld->errs, child, "not allowed together with eal.args");
        }
    }
    eal->explicit_args = true;
    unsigned before = ld->errs->count;
    string_list(ld, "eal", eal_obj, "args", &eal->args[0][0], TP_CFG_ARG_MAX, TP_CFG_MAX_EAL_ARGS,
                &eal->n_args);
    if (ld->errs->count != before) {
        ld->eal_ok = false;
        return;
    }
    if (find_eal_option(eal, "-c", "--coremask") != NULL) {
        tp_jw_error(ld->errs, "eal.args", "-c (core mask) is not supported, use -l");
        ld->eal_ok = false;
    }
    const char *list = find_eal_option(eal, "-l", NULL);
    const char *lcores = find_eal_option(eal, NULL, "--lcores");
    if (list == NULL && lcores == NULL) {
        tp_jw_error(ld->errs, "eal.args", "must contain -l <lcore list> or --lcores <mappings>");
        ld->eal_ok = false;
    } else if (list != NULL && lcores != NULL) {
        tp_jw_error(ld->errs, "eal.args", "-l and --lcores are exclusive");
        ld->eal_ok = false;
    } else if (list != NULL && strpbrk(list, "@()") != NULL) {
        tp_jw_error(ld->errs, "eal.args", "\"%s\": -l takes no '@' mappings (use --lcores)", list);
        ld->eal_ok = false;
    } else {
        set_lcores(ld, "eal.args", list != NULL ? list : lcores);
    }
    const char *main_lcore = find_eal_option(eal, NULL, "--main-lcore");
    if (ld->eal_ok)
        eal->main_lcore = eal->lcores[0];
    if (main_lcore != NULL)
        eal->main_lcore = (uint16_t)strtoul(main_lcore, NULL, 10);
    const char *memory = find_eal_option(eal, "-m", NULL);
    if (memory != NULL)
        eal->memory_mb = (uint32_t)strtoul(memory, NULL, 10);
    eal->no_huge = find_eal_option(eal, NULL, "--no-huge") != NULL;
    eal->no_pci = find_eal_option(eal, NULL, "--no-pci") != NULL;
    eal->no_shconf = find_eal_option(eal, NULL, "--no-shconf") != NULL;
}

void parse_eal(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"args",      "lcores", "main_lcore", "memory_mb",
                                       "no_huge",   "no_pci", "no_shconf",  "file_prefix",
                                       "log_level", "vdevs",  "pci_allow",  NULL};
    struct tp_cfg_eal *eal = &ld->cfg->eal;
    ld->eal_ok = true;
    json_t *obj = tp_jw_get(ld->errs, "", root, "eal", JSON_OBJECT, true);
    if (obj == NULL) {
        ld->eal_ok = false;
        return;
    }
    tp_jw_check_keys(ld->errs, "eal", obj, keys);
    json_t *args = json_object_get(obj, "args");
    if (args != NULL) {
        parse_explicit_eal(ld, obj);
        return;
    }

    json_t *lcores = json_object_get(obj, "lcores");
    if (lcores == NULL) {
        tp_jw_error(ld->errs, "eal.lcores", "required key is missing");
        ld->eal_ok = false;
    } else if (json_is_string(lcores)) {
        set_lcores(ld, "eal.lcores", json_string_value(lcores));
    } else if (json_is_array(lcores)) {
        /* [0, 1, 3] is the same as "0,1,3". */
        char text[512] = "";
        size_t used = 0, i;
        json_t *v;
        bool ok = true;
        json_array_foreach(lcores, i, v)
        {
            char item[TP_JW_PATH_MAX];
            uint64_t id;
            tp_jw_path_index(item, "eal.lcores", i);
            if (!tp_jw_uint_value(ld->errs, item, v, 0, TP_CFG_MAX_LCORE_ID, &id)) {
                ok = false;
                continue;
            }
            if (used < sizeof(text) - 8)
                used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%u", used ? "," : "",
                                         (unsigned)id);
        }
        if (ok)
            set_lcores(ld, "eal.lcores", text);
        else
            ld->eal_ok = false;
    } else {
        tp_jw_error(ld->errs, "eal.lcores", "expected a string or an array, got %s",
                    tp_jw_type_name(lcores));
        ld->eal_ok = false;
    }
    if (ld->eal_ok)
        eal->main_lcore = eal->lcores[0];
    uint64_t v;
    if (tp_jw_uint(ld->errs, "eal", obj, "main_lcore", 0, TP_CFG_MAX_LCORE_ID, false, &v))
        eal->main_lcore = (uint16_t)v;
    if (tp_jw_uint(ld->errs, "eal", obj, "memory_mb", 64, 1u << 20, false, &v))
        eal->memory_mb = (uint32_t)v;
    tp_jw_bool(ld->errs, "eal", obj, "no_huge", false, &eal->no_huge);
    tp_jw_bool(ld->errs, "eal", obj, "no_pci", false, &eal->no_pci);
    tp_jw_bool(ld->errs, "eal", obj, "no_shconf", false, &eal->no_shconf);
    tp_jw_string(ld->errs, "eal", obj, "file_prefix", sizeof(eal->file_prefix), false,
                 eal->file_prefix);
    tp_jw_string(ld->errs, "eal", obj, "log_level", sizeof(eal->log_level), false, eal->log_level);
    string_list(ld, "eal", obj, "vdevs", &eal->vdevs[0][0], TP_CFG_ARG_MAX, TP_CFG_MAX_VDEVS,
                &eal->n_vdevs);
    string_list(ld, "eal", obj, "pci_allow", &eal->pci_allow[0][0], TP_CFG_NAME_MAX, TP_CFG_MAX_PCI,
                &eal->n_pci_allow);
    if (eal->no_huge && eal->memory_mb == 0) {
        tp_jw_error(ld->errs, "eal.memory_mb", "required with no_huge (e.g. 256)");
    }
}
