/*
 * The "bus" section: the directory of the shared-memory bus (path), its ring and book state
 * sizes, the file mode and group of its segments and the readers' heartbeat timeout. Validates
 * the ranges (ring bytes a power of two, state depth within books.levels_per_side) and that the
 * mode lets no one but the daemon write.
 */
#include <string.h>
#include <sys/stat.h>

#include "config_loader.h"

void parse_bus(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"path",  "ring_bytes",           "state_depth", "mode",
                                       "group", "heartbeat_timeout_ms", NULL};
    struct tp_cfg_bus *bus = &ld->cfg->bus;
    strcpy(bus->path, "/dev/shm");
    bus->ring_bytes = 64u << 20;
    bus->state_depth = ld->cfg->books.levels_per_side < 10 ? ld->cfg->books.levels_per_side : 10;
    bus->mode = 0640;
    bus->heartbeat_timeout_ms = 5000;
    json_t *obj = tp_jw_get(ld->errs, "", root, "bus", JSON_OBJECT, false);
    if (obj == NULL)
        return;
    tp_jw_check_keys(ld->errs, "bus", obj, keys);
    if (tp_jw_string(ld->errs, "bus", obj, "path", sizeof(bus->path), false, bus->path) &&
        bus->path[0] != '/')
        tp_jw_error(ld->errs, "bus.path", "\"%s\" must be an absolute directory", bus->path);
    uint64_t v;
    if (tp_jw_uint(ld->errs, "bus", obj, "ring_bytes", 1u << 16, 1ull << 34, false, &v)) {
        if (is_power_of_two(v))
            bus->ring_bytes = v;
        else
            tp_jw_error(ld->errs, "bus.ring_bytes", "must be a power of two, got %llu",
                        (unsigned long long)v);
    }
    if (tp_jw_uint(ld->errs, "bus", obj, "state_depth", 1, TP_CFG_MAX_STATE_DEPTH, false, &v)) {
        bus->state_depth = (uint16_t)v;
        if (v > ld->cfg->books.levels_per_side)
            tp_jw_error(ld->errs, "bus.state_depth", "%llu is more than books.levels_per_side (%u)",
                        (unsigned long long)v, ld->cfg->books.levels_per_side);
    }
    if (tp_jw_mode(ld->errs, "bus", obj, "mode", false, &bus->mode) &&
        (bus->mode & (S_IWGRP | S_IWOTH)))
        tp_jw_error(ld->errs, "bus.mode",
                    "%04o lets other users write the bus (readers refuse such segments): "
                    "readers need read access only, e.g. 0640",
                    (unsigned)bus->mode);
    tp_jw_string(ld->errs, "bus", obj, "group", sizeof(bus->group), false, bus->group);
    /* The daemon beats every 10 ms: below 100 ms a busy machine's scheduling alone is a death. */
    if (tp_jw_uint(ld->errs, "bus", obj, "heartbeat_timeout_ms", 100, 3600000, false, &v))
        bus->heartbeat_timeout_ms = (uint32_t)v;
}
