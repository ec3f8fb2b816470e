/*
 * Where each simulated stream goes: one UDP endpoint per (stream, line), the sender address, an
 * optional VLAN tag, and the date the venue times (ns since midnight) belong to.
 * Defaults follow the venues: Nasdaq TotalView-ITCH's A/B groups, and CME channel 901 of the
 * autocert channel configuration (incremental A/B; snapshot, MBO snapshot and instrument definition
 * on A), and a Eurex EOBI channel (incremental A/B, snapshot on A).
 */
#ifndef TP_SIM_ENDPOINTS_H
#define TP_SIM_ENDPOINTS_H

#include <stdint.h>

#include "packet.h"

struct tp_sim_endpoint {
    uint32_t group;  /* destination IPv4, host order; 0: the stream is not sent on this line */
    uint16_t port;   /* destination UDP port */
    uint32_t source; /* sender IPv4, host order */
    uint16_t source_port;
};

struct tp_sim_endpoints {
    struct tp_sim_endpoint ep[TP_SIM_STREAMS][TP_SIM_LINES];
    uint16_t vlan;              /* 802.1Q VLAN id on every frame, 0: untagged */
    uint64_t midnight_epoch_ns; /* ns since the epoch of the session's midnight (UTC) */
};

enum tp_sim_venue {
    TP_SIM_VENUE_ITCH,
    TP_SIM_VENUE_MDP3,
    TP_SIM_VENUE_EOBI,
};

void tp_sim_endpoints_default(struct tp_sim_endpoints *e, enum tp_sim_venue venue);
/* Parses "A.B.C.D:PORT" into *ep (group and port, port 0 allowed); returns 0 or -EINVAL. */
int tp_sim_endpoint_parse(const char *text, struct tp_sim_endpoint *ep);

#endif
