/*
 * flow_map.h - which venue a UDP flow carries, for tickplane-dump.
 *
 * A map is parsed from "IP:PORT[@VLAN]=PROTO,..." (PROTO: a venue's name). A rule without @VLAN
 * matches the flow on any VLAN. A small fixed array searched linearly: the tool is not a hot
 * path and maps hold a handful of feeds.
 */
#ifndef TP_DUMP_FLOW_MAP_H
#define TP_DUMP_FLOW_MAP_H

#include <stdint.h>

#include "dump_venue.h"
#include "net_parse.h"

#define FLOW_MAP_MAX      64
#define FLOW_MAP_ANY_VLAN 0xffffu

struct flow_rule {
    uint32_t dst_ip;
    uint16_t dst_port;
    uint32_t vlan; /* FLOW_MAP_ANY_VLAN or a VLAN id */
    const struct dump_venue *venue;
};

struct flow_map {
    unsigned count;
    struct flow_rule rules[FLOW_MAP_MAX];
};

/* Adds the rules of spec to map; 0, or -EINVAL with a message in err (errlen bytes). */
int flow_map_parse(struct flow_map *map, const char *spec, char *err, size_t errlen);

/* The venue of the first matching rule, or NULL. */
const struct dump_venue *flow_map_lookup(const struct flow_map *map, const struct tp_flow_key *key);

#endif /* TP_DUMP_FLOW_MAP_H */
