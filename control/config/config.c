/*
 * Config loading and validation: see config.h. The loader reads every section in order (each
 * section only needs the ones before it), records every problem with its JSON path, then runs the
 * cross-section checks (lcores vs the EAL list, channel placement, memory budget).
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_loader.h"

static void load_root(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"name",        "eal",     "ports", "lcores",  "channels",
                                       "instruments", "books",   "bus",   "control", "entitlements",
                                       "telemetry",   "logging", NULL};
    struct tp_config *cfg = ld->cfg;
    tp_jw_check_keys(ld->errs, "", root, keys);
    strcpy(cfg->name, "tickplane");
    get_name(ld, "", root, "name", false, cfg->name, sizeof(cfg->name));
    parse_eal(ld, root);
    parse_section(
        ld, root,
        &(struct section){"ports", TP_CFG_MAX_PORTS, "ports", &ld->ports_ok, parse_ports_item});
    parse_section(ld, root,
                  &(struct section){"channels", TP_CFG_MAX_CHANNELS, "channels", &ld->channels_ok,
                                    parse_channels_item});
    check_duplicate_lines(ld); /* across channels (none parsed: nothing to check) */
    parse_section(ld, root,
                  &(struct section){"lcores", TP_CFG_MAX_DATA_LCORES, "data lcores", &ld->lcores_ok,
                                    parse_lcores_item});
    parse_instruments(ld, root);
    parse_books(ld, root);
    parse_bus(ld, root);
    parse_control(ld, root);
    parse_entitlements(ld, root);
    parse_telemetry(ld, root);
    parse_logging(ld, root);
    if (ld->eal_ok && !eal_has_lcore(&cfg->eal, cfg->eal.main_lcore)) {
        char list[128];
        format_lcore_list(&cfg->eal, list, sizeof(list));
        tp_jw_error(ld->errs, cfg->eal.explicit_args ? "eal.args" : "eal.main_lcore",
                    "main lcore %u is not in the EAL lcore list (%s)", cfg->eal.main_lcore, list);
    }
    check_placement(ld);
    check_windows(ld);
    check_memory(ld);
}

int tp_config_load_string(const char *json, const char *base_dir, struct tp_config *cfg,
                          struct tp_config_errors *errs)
{
    memset(cfg, 0, sizeof(*cfg));
    memset(errs, 0, sizeof(*errs));
    struct loader ld = {.cfg = cfg, .errs = errs};
    if (base_dir != NULL) {
        /* Relative paths would silently resolve against the wrong directory if it were cut. */
        int w = snprintf(ld.base_dir, sizeof(ld.base_dir), "%s", base_dir);
        if (w < 0 || (size_t)w >= sizeof(ld.base_dir)) {
            tp_jw_error(errs, "", "config directory is longer than %zu bytes: %s",
                        sizeof(ld.base_dir) - 1, base_dir);
            return -ENAMETOOLONG;
        }
    }
    json_error_t jerr;
    json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &jerr);
    if (root == NULL) {
        tp_jw_error(errs, "", "invalid JSON at line %d, column %d: %s", jerr.line, jerr.column,
                    jerr.text);
        return -EINVAL;
    }
    if (!json_is_object(root))
        tp_jw_error(errs, "", "the document must be an object, got %s", tp_jw_type_name(root));
    else
        load_root(&ld, root);
    json_decref(root);
    return errs->count == 0 && errs->dropped == 0 ? 0 : -EINVAL;
}

int tp_config_load_file(const char *file, struct tp_config *cfg, struct tp_config_errors *errs)
{
    memset(errs, 0, sizeof(*errs));
    FILE *f = fopen(file, "rb");
    if (f == NULL) {
        int e = errno;
        tp_jw_error(errs, "", "cannot open %s: %s", file, strerror(e));
        return -e;
    }
    /* Configs are small; refuse anything that is clearly not one. */
    enum { MAX_CONFIG_BYTES = 4 << 20 };
    char *text = malloc(MAX_CONFIG_BYTES + 1);
    if (text == NULL) {
        fclose(f);
        tp_jw_error(errs, "", "out of memory");
        return -ENOMEM;
    }
    size_t n = fread(text, 1, MAX_CONFIG_BYTES + 1, f);
    fclose(f);
    if (n > MAX_CONFIG_BYTES) {
        free(text);
        tp_jw_error(errs, "", "%s is larger than %d bytes", file, MAX_CONFIG_BYTES);
        return -EFBIG;
    }
    text[n] = '\0';
    /* The file opened, so its name (and directory) fits PATH_MAX; load_string checks its own cap.
     */
    char dir[PATH_MAX];
    tp_config_dirname(file, dir, sizeof(dir));
    int rc = tp_config_load_string(text, dir, cfg, errs);
    free(text);
    if (rc == -ENAMETOOLONG)
        return rc;
    /* Absolute, so a reload finds the same file whatever the working directory is by then. */
    char resolved[PATH_MAX];
    const char *source = realpath(file, resolved) != NULL ? resolved : file;
    int w = snprintf(cfg->source, sizeof(cfg->source), "%s", source);
    if (w < 0 || (size_t)w >= sizeof(cfg->source)) {
        tp_jw_error(errs, "", "config file name is longer than %zu bytes (reload needs it): %s",
                    sizeof(cfg->source) - 1, source);
        return -ENAMETOOLONG;
    }
    return rc;
}

void tp_config_dirname(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL)
        snprintf(out, size, ".");
    else if (slash == path)
        snprintf(out, size, "/");
    else
        snprintf(out, size, "%.*s", (int)(slash - path), path);
}

size_t tp_config_errors_format(const struct tp_config_errors *errs, char *buf, size_t size)
{
    size_t used = 0;
    if (size == 0)
        return 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < errs->count && used < size; i++) {
        const struct tp_config_error *e = &errs->items[i];
        int w = e->path[0] ? snprintf(buf + used, size - used, "%s: %s\n", e->path, e->message)
                           : snprintf(buf + used, size - used, "%s\n", e->message);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (errs->dropped > 0 && used < size) {
        int w = snprintf(buf + used, size - used, "(and %u more errors)\n", errs->dropped);
        if (w > 0)
            used += (size_t)w;
    }
    return used < size ? used : size - 1;
}

int tp_config_port_index(const struct tp_config *cfg, const char *name)
{
    for (unsigned i = 0; i < cfg->n_ports; i++)
        if (strcmp(cfg->ports[i].name, name) == 0)
            return (int)i;
    return -1;
}

int tp_config_channel_index(const struct tp_config *cfg, const char *name)
{
    for (unsigned i = 0; i < cfg->n_channels; i++)
        if (strcmp(cfg->channels[i].name, name) == 0)
            return (int)i;
    return -1;
}

int tp_config_channel_lcore(const struct tp_config *cfg, unsigned ci)
{
    for (unsigned l = 0; l < cfg->n_lcores; l++)
        for (unsigned k = 0; k < cfg->lcores[l].n_channels; k++)
            if (cfg->lcores[l].channels[k] == ci)
                return (int)l;
    return -1;
}

struct tp_cfg_window tp_config_lcore_window(const struct tp_config *cfg, unsigned l)
{
    uint64_t capacity = cfg->instruments.capacity;
    if (cfg->n_lcores == 0)
        return (struct tp_cfg_window){.first_id = 0, .ids = (uint32_t)capacity};
    /* The ids the lcores with "instruments" take, and how many lcores share the rest. */
    uint64_t taken = 0, sharing = 0;
    for (unsigned k = 0; k < cfg->n_lcores; k++) {
        taken += cfg->lcores[k].instruments;
        sharing += cfg->lcores[k].instruments == 0;
    }
    uint64_t left = taken < capacity ? capacity - taken : 0;
    /* The windows before l: the sizes given, and the first `shared` shares of what is left. */
    uint64_t first = 0, shared = 0;
    for (unsigned k = 0; k < l; k++) {
        first += cfg->lcores[k].instruments;
        shared += cfg->lcores[k].instruments == 0;
    }
    first += left * shared / (sharing ? sharing : 1);
    uint64_t ids = cfg->lcores[l].instruments != 0
                       ? cfg->lcores[l].instruments
                       : left * (shared + 1) / sharing - left * shared / sharing;
    return (struct tp_cfg_window){.first_id = (uint32_t)first, .ids = (uint32_t)ids};
}
