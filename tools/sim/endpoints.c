/* Default venue endpoints and "group:port" parsing. */
#include "endpoints.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define IP4(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((c) << 8) | (d))

static void set(struct tp_sim_endpoint *ep, uint32_t group, uint16_t port, uint32_t source)
{
    ep->group = group;
    ep->port = port;
    ep->source = source;
    ep->source_port = port;
}

void tp_sim_endpoints_default(struct tp_sim_endpoints *e, enum tp_sim_venue venue)
{
    memset(e, 0, sizeof(*e));
    e->midnight_epoch_ns = 1764460800ULL * 1000000000ULL; /* 2025-11-30 00:00 UTC */
    struct tp_sim_endpoint(*ep)[TP_SIM_LINES] = e->ep;
    if (venue == TP_SIM_VENUE_ITCH) {
        set(&ep[TP_SIM_STREAM_INCREMENTAL][TP_SIM_LINE_A], IP4(233, 54, 12, 111), 26477,
            IP4(10, 1, 0, 1));
        set(&ep[TP_SIM_STREAM_INCREMENTAL][TP_SIM_LINE_B], IP4(233, 49, 196, 111), 26477,
            IP4(10, 1, 0, 2));
        return;
    }
    if (venue == TP_SIM_VENUE_EOBI) {
        set(&ep[TP_SIM_STREAM_INCREMENTAL][TP_SIM_LINE_A], IP4(224, 0, 114, 43), 59001,
            IP4(10, 2, 0, 1));
        set(&ep[TP_SIM_STREAM_INCREMENTAL][TP_SIM_LINE_B], IP4(224, 0, 115, 43), 59001,
            IP4(10, 2, 0, 2));
        set(&ep[TP_SIM_STREAM_SNAPSHOT][TP_SIM_LINE_A], IP4(224, 0, 114, 42), 59000,
            IP4(10, 2, 0, 1));
        set(&ep[TP_SIM_STREAM_SNAPSHOT][TP_SIM_LINE_B], IP4(224, 0, 115, 42), 59000,
            IP4(10, 2, 0, 2));
        return;
    }
    set(&ep[TP_SIM_STREAM_INCREMENTAL][TP_SIM_LINE_A], IP4(224, 0, 25, 1), 17901,
        IP4(69, 50, 112, 46));
    set(&ep[TP_SIM_STREAM_INCREMENTAL][TP_SIM_LINE_B], IP4(224, 0, 25, 9), 18901,
        IP4(69, 50, 112, 46));
    set(&ep[TP_SIM_STREAM_DEFINITION][TP_SIM_LINE_A], IP4(224, 0, 25, 126), 16901,
        IP4(69, 50, 112, 70));
    set(&ep[TP_SIM_STREAM_SNAPSHOT][TP_SIM_LINE_A], IP4(224, 0, 25, 126), 19901,
        IP4(69, 50, 112, 70));
    set(&ep[TP_SIM_STREAM_SNAPSHOT_MBO][TP_SIM_LINE_A], IP4(224, 0, 25, 227), 21901,
        IP4(69, 50, 112, 70));
}

int tp_sim_endpoint_parse(const char *text, struct tp_sim_endpoint *ep)
{
    char host[64];
    const char *colon = strrchr(text, ':');
    if (colon == NULL || (size_t)(colon - text) >= sizeof(host))
        return -EINVAL;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    struct in_addr addr;
    char *end;
    unsigned long port = strtoul(colon + 1, &end, 10);
    if (inet_pton(AF_INET, host, &addr) != 1 || *end != '\0' || port > 65535 || colon[1] == '\0')
        return -EINVAL;
    ep->group = ntohl(addr.s_addr);
    ep->port = (uint16_t)port;
    return 0;
}
