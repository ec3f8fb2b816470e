/*
 * The "control" section: the control socket's path, mode and groups, and the limits on its
 * clients (count, line length, subscriptions, ...). Also checks that the groups the config
 * names (bus and control) exist on this host (tp_config_check_host).
 */
#include <errno.h>
#include <grp.h>
#include <stddef.h>
#include <string.h>
#include <sys/stat.h>

#include "config_loader.h"

void parse_control(struct loader *ld, const json_t *root)
{
    static const char *const keys[] = {"socket",
                                       "mode",
                                       "group",
                                       "max_clients",
                                       "max_line_bytes",
                                       "max_subscriptions",
                                       "max_requests_per_sec",
                                       "max_clients_per_uid",
                                       "reserved_clients",
                                       "operator_group",
                                       "admin_group",
                                       "idle_timeout_ms",
                                       NULL};
    struct tp_cfg_control *c = &ld->cfg->control;
    strcpy(c->socket_path, "/run/tickplane/control.sock");
    c->socket_mode = 0660;
    c->max_clients = 64;
    c->max_line_bytes = 4096;
    c->max_subscriptions = 256;
    c->max_requests_per_sec = 1000;
    c->max_clients_per_uid = 16;
    c->reserved_clients = 4; /* of the default 64 */
    c->idle_timeout_ms = 60000;
    json_t *obj = tp_jw_get(ld->errs, "", root, "control", JSON_OBJECT, false);
    if (obj == NULL)
        return;
    tp_jw_check_keys(ld->errs, "control", obj, keys);
    char raw[TP_CFG_PATH_MAX];
    /* sun_path holds 108 bytes including the NUL, and the daemon binds PATH.new first. */
    if (get_path(ld, "control", obj, "socket", false, false, raw, sizeof(raw))) {
        if (strlen(raw) > 103)
            tp_jw_error(ld->errs, "control.socket",
                        "path is %zu bytes, the control socket's path must be at most 103 "
                        "(a UNIX socket path holds 107 and the daemon binds PATH.new first)",
                        strlen(raw));
        else
            strcpy(c->socket_path, raw);
    }
    tp_jw_mode(ld->errs, "control", obj, "mode", false, &c->socket_mode);
    tp_jw_string(ld->errs, "control", obj, "group", sizeof(c->socket_group), false,
                 c->socket_group);
    uint64_t v;
    if (tp_jw_uint(ld->errs, "control", obj, "max_clients", 1, 4096, false, &v))
        c->max_clients = (uint32_t)v;
    if (tp_jw_uint(ld->errs, "control", obj, "max_line_bytes", 256, 1u << 20, false, &v))
        c->max_line_bytes = (uint32_t)v;
    if (tp_jw_uint(ld->errs, "control", obj, "max_subscriptions", 1, 65536, false, &v))
        c->max_subscriptions = (uint32_t)v;
    if (tp_jw_uint(ld->errs, "control", obj, "max_requests_per_sec", 1, 1000000, false, &v))
        c->max_requests_per_sec = (uint32_t)v;
    if (tp_jw_uint(ld->errs, "control", obj, "max_clients_per_uid", 1, 4096, false, &v))
        c->max_clients_per_uid = (uint32_t)v;
    if (tp_jw_uint(ld->errs, "control", obj, "reserved_clients", 0, 4095, false, &v))
        c->reserved_clients = (uint32_t)v;
    else
        c->reserved_clients = c->max_clients < 2    ? 0
                              : c->max_clients < 32 ? 1
                                                    : c->max_clients / 16;
    tp_jw_string(ld->errs, "control", obj, "operator_group", sizeof(c->operator_group), false,
                 c->operator_group);
    tp_jw_string(ld->errs, "control", obj, "admin_group", sizeof(c->admin_group), false,
                 c->admin_group);
    if (tp_jw_uint(ld->errs, "control", obj, "idle_timeout_ms", 0, 86400000, false, &v))
        c->idle_timeout_ms = (uint32_t)v;
    if (c->reserved_clients >= c->max_clients)
        tp_jw_error(ld->errs, "control.reserved_clients",
                    "%u reserved of max_clients %u leaves no slot for other clients",
                    c->reserved_clients, c->max_clients);
}

int tp_config_group_gid(const char *group, gid_t *gid)
{
    if (group[0] == '\0') {
        *gid = (gid_t)-1;
        return 0;
    }
    const struct group *gr = getgrnam(group);
    if (gr == NULL)
        return -ENOENT;
    *gid = gr->gr_gid;
    return 0;
}

int tp_config_check_host(const struct tp_config *cfg, struct tp_config_errors *errs)
{
    static const struct {
        const char *path;
        size_t offset;
    } groups[] = {{"bus.group", offsetof(struct tp_config, bus.group)},
                  {"control.group", offsetof(struct tp_config, control.socket_group)},
                  {"control.operator_group", offsetof(struct tp_config, control.operator_group)},
                  {"control.admin_group", offsetof(struct tp_config, control.admin_group)}};
    memset(errs, 0, sizeof(*errs));
    for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++) {
        const char *name = (const char *)cfg + groups[i].offset;
        gid_t gid;
        if (tp_config_group_gid(name, &gid) != 0)
            tp_jw_error(errs, groups[i].path, "no such group \"%s\" on this host", name);
    }
    return errs->count == 0 ? 0 : -EINVAL;
}
