/* Capture flows -> a channel's lines: see replay_lines.h. */
#include "replay_lines.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const role_names[REPLAY_ROLES] = {
    [REPLAY_ROLE_UNMAPPED] = "unmapped",     [REPLAY_ROLE_INCR_A] = "incr-a",
    [REPLAY_ROLE_INCR_B] = "incr-b",         [REPLAY_ROLE_SNAP_A] = "snap-a",
    [REPLAY_ROLE_SNAP_B] = "snap-b",         [REPLAY_ROLE_SNAP_MBO_A] = "snap-mbo-a",
    [REPLAY_ROLE_SNAP_MBO_B] = "snap-mbo-b", [REPLAY_ROLE_DEF_A] = "def-a",
    [REPLAY_ROLE_DEF_B] = "def-b",
};

const char *replay_line_role_name(enum replay_line_role role)
{
    return role < REPLAY_ROLES ? role_names[role] : "unmapped";
}

static struct replay_flow *find(struct replay_lines *l, uint32_t group, uint16_t port)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (l->flow[i].group == group && l->flow[i].port == port)
            return &l->flow[i];
    return NULL;
}

static bool has_role(const struct replay_lines *l, enum replay_line_role role)
{
    for (uint32_t i = 0; i < l->n; i++)
        if (l->flow[i].role == role)
            return true;
    return false;
}

/* One "ROLE=GROUP:PORT" item. */
static int parse_item(struct replay_lines *l, const char *item, char *err, size_t err_size)
{
    const char *eq = strchr(item, '=');
    const char *colon = strrchr(item, ':');
    char host[INET_ADDRSTRLEN];
    enum replay_line_role role = REPLAY_ROLE_UNMAPPED;
    for (int i = REPLAY_ROLE_INCR_A; eq != NULL && i < REPLAY_ROLES; i++)
        if (strlen(role_names[i]) == (size_t)(eq - item) &&
            !strncmp(item, role_names[i], eq - item))
            role = (enum replay_line_role)i;
    if (role == REPLAY_ROLE_UNMAPPED) {
        snprintf(err, err_size,
                 "\"%s\": no line role (incr-a, incr-b, snap-a, snap-b, snap-mbo-a, "
                 "snap-mbo-b, def-a, def-b)",
                 item);
        return -EINVAL;
    }
    char *end;
    unsigned long port = colon != NULL && colon > eq ? strtoul(colon + 1, &end, 10) : 0;
    size_t host_len = colon != NULL && colon > eq ? (size_t)(colon - eq - 1) : 0;
    struct in_addr addr;
    if (host_len == 0 || host_len >= sizeof(host) || colon[1] == '\0' || *end != '\0' ||
        port == 0 || port > 65535) {
        snprintf(err, err_size, "\"%s\": the line's address is not GROUP:PORT", item);
        return -EINVAL;
    }
    memcpy(host, eq + 1, host_len);
    host[host_len] = '\0';
    if (inet_pton(AF_INET, host, &addr) != 1) {
        snprintf(err, err_size, "\"%s\": \"%s\" is not an IPv4 address", item, host);
        return -EINVAL;
    }
    uint32_t group = ntohl(addr.s_addr);
    if (find(l, group, (uint16_t)port) != NULL || has_role(l, role)) {
        snprintf(err, err_size, "\"%s\": the flow or the role is named twice", item);
        return -EINVAL;
    }
    if (l->n == REPLAY_FLOWS_MAX) {
        snprintf(err, err_size, "more than %d lines", REPLAY_FLOWS_MAX);
        return -EINVAL;
    }
    l->flow[l->n++] = (struct replay_flow){.group = group, .port = (uint16_t)port, .role = role};
    return 0;
}

int replay_lines_parse(struct replay_lines *l, const char *spec, char *err, size_t err_size)
{
    char item[128];
    l->given = true;
    for (const char *at = spec;;) {
        size_t n = strcspn(at, ",");
        if (n >= sizeof(item)) {
            snprintf(err, err_size, "\"%.*s\": too long", (int)n, at);
            return -EINVAL;
        }
        memcpy(item, at, n);
        item[n] = '\0';
        int rc = parse_item(l, item, err, err_size);
        if (rc != 0)
            return rc;
        if (at[n] == '\0')
            return 0;
        at += n + 1;
    }
}

/* Without a map: line A, then line B of the loop the packet's content names. */
static enum replay_line_role learn(const struct replay_lines *l, enum replay_line_kind kind)
{
    static const enum replay_line_role a_of[] = {
        [REPLAY_KIND_INCREMENTAL] = REPLAY_ROLE_INCR_A,
        [REPLAY_KIND_SNAPSHOT] = REPLAY_ROLE_SNAP_A,
        [REPLAY_KIND_SNAPSHOT_MBO] = REPLAY_ROLE_SNAP_MBO_A,
        [REPLAY_KIND_DEFINITION] = REPLAY_ROLE_DEF_A,
    };
    enum replay_line_role a = a_of[kind], b = (enum replay_line_role)(a + 1);
    return !has_role(l, a) ? a : !has_role(l, b) ? b : REPLAY_ROLE_UNMAPPED;
}

enum replay_line_role replay_lines_role(struct replay_lines *l, const struct tp_udp_view *u,
                                        enum replay_line_kind kind)
{
    uint32_t group = u->key.dst_ip;
    uint16_t port = u->key.dst_port;
    struct replay_flow *f = find(l, group, port);
    if (f == NULL && !l->given && l->n < REPLAY_FLOWS_MAX) {
        f = &l->flow[l->n++];
        *f = (struct replay_flow){.group = group, .port = port, .role = learn(l, kind)};
    }
    enum replay_line_role role = f != NULL ? (enum replay_line_role)f->role : REPLAY_ROLE_UNMAPPED;
    l->unmapped += role == REPLAY_ROLE_UNMAPPED;
    return role;
}
