/*
 * The "logging" section: the default log level, per-component levels and the rate limit
 * (burst). Validates that levels and components are known (log.h).
 */
#include <string.h>

#include "config_loader.h"
#include "log.h"

static bool log_level_value(struct loader *ld, const char *path, const json_t *v, uint8_t *out)
{
    static const char *const names[] = {"error", "warning", "notice", "info", "debug", NULL};
    char text[16];
    if (!tp_jw_string_value(ld->errs, path, v, sizeof(text), text))
        return false;
    int level = tp_log_level_parse(text);
    if (level < 0) {
        tp_jw_error(ld->errs, path, "\"%s\" is not a level (%s, %s, %s, %s or %s)", text, names[0],
                    names[1], names[2], names[3], names[4]);
        return false;
    }
    *out = (uint8_t)level;
    return true;
}

void parse_logging(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"level", "components", "burst", NULL};
    struct tp_cfg_logging *l = &ld->cfg->logging;
    l->level = TP_LOG_INFO;
    l->burst = 10;
    json_t *obj = tp_jw_get(ld->errs, "", root, "logging", JSON_OBJECT, false);
    if (obj == NULL)
        return;
    tp_jw_check_keys(ld->errs, "logging", obj, keys);
    const json_t *level = json_object_get(obj, "level");
    if (level != NULL)
        log_level_value(ld, "logging.level", level, &l->level);
    uint64_t v;
    if (tp_jw_uint(ld->errs, "logging", obj, "burst", 1, 100000, false, &v))
        l->burst = (uint32_t)v;
    json_t *comps = tp_jw_get(ld->errs, "logging", obj, "components", JSON_OBJECT, false);
    const char *name;
    json_t *value;
    json_object_foreach(comps, name, value)
    {
        char path[96];
        snprintf(path, sizeof(path), "logging.components.%s", name);
        int c = tp_log_component_parse(name);
        if (c < 0 || c >= TP_CFG_LOG_COMPONENTS)
            tp_jw_error(ld->errs, path,
                        "unknown component (main, port, gap, books, session, "
                        "consumer, control, reload, telemetry)");
        else
            log_level_value(ld, path, value, &l->components[c]);
    }
}
