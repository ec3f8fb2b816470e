/*
 * flow_map.c - parsing "IP:PORT[@VLAN]=PROTO,..." and matching flows against it.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "flow_map.h"

/* Parses an unsigned decimal in [0, max] spanning all of s. */
static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    if (*s < '0' || *s > '9')
        return -EINVAL;
    errno = 0;
    *out = strtoul(s, &end, 10);
    return (errno || *end != '\0' || *out > max) ? -EINVAL : 0;
}

/* One "IP:PORT[@VLAN]=PROTO" rule, edited in place. */
static int parse_rule(char *text, struct flow_rule *rule)
{
    char *eq = strchr(text, '=');
    char *colon = strchr(text, ':');
    if (eq == NULL || colon == NULL || colon > eq)
        return -EINVAL;
    *eq = '\0';
    *colon = '\0';
    rule->venue = dump_venue_find(eq + 1);
    if (rule->venue == NULL)
        return -EINVAL;
    struct in_addr addr;
    if (inet_pton(AF_INET, text, &addr) != 1)
        return -EINVAL;
    rule->dst_ip = ntohl(addr.s_addr);
    char *at = strchr(colon + 1, '@');
    unsigned long v;
    rule->vlan = FLOW_MAP_ANY_VLAN;
    if (at != NULL) {
        *at = '\0';
        if (parse_uint(at + 1, 4095, &v) < 0)
            return -EINVAL;
        rule->vlan = (uint32_t)v;
    }
    if (parse_uint(colon + 1, 65535, &v) < 0)
        return -EINVAL;
    rule->dst_port = (uint16_t)v;
    return 0;
}

int flow_map_parse(struct flow_map *map, const char *spec, char *err, size_t errlen)
{
    char *copy = strdup(spec);
    if (copy == NULL)
        return -ENOMEM;
    int rc = 0;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char shown[128];
        snprintf(shown, sizeof(shown), "%s", item);
        if (map->count == FLOW_MAP_MAX) {
            snprintf(err, errlen, "more than %d flow rules", FLOW_MAP_MAX);
            rc = -EINVAL;
            break;
        }
        if (parse_rule(item, &map->rules[map->count]) < 0) {
            snprintf(err, errlen, "bad flow rule '%s' (want IP:PORT[@VLAN]=%s)", shown,
                     dump_venue_names());
            rc = -EINVAL;
            break;
        }
        map->count++;
    }
    free(copy);
    return rc;
}

const struct dump_venue *flow_map_lookup(const struct flow_map *map, const struct tp_flow_key *key)
{
    for (unsigned i = 0; i < map->count; i++) {
        const struct flow_rule *r = &map->rules[i];
        if (r->dst_ip == key->dst_ip && r->dst_port == key->dst_port &&
            (r->vlan == FLOW_MAP_ANY_VLAN || r->vlan == key->vlan))
            return r->venue;
    }
    return NULL;
}
