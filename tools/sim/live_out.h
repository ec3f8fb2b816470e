/*
 * Live output: each packet is sent as a UDP datagram to its stream's and line's multicast group
 * through a given interface (loopback or a veth in a test namespace), paced at a given rate or
 * following the venue timestamps (microbursts and quiet gaps as generated, optionally slowed).
 * While pacing, it answers MoldUDP64 re-requests if a server is attached, so a handler can
 * recover while the feed runs. Sockets are opened once; nothing is allocated per packet.
 */
#ifndef TP_SIM_LIVE_OUT_H
#define TP_SIM_LIVE_OUT_H

#include <stdint.h>

#include "endpoints.h"
#include "packet.h"
#include "rerequest.h"

struct tp_sim_live_out {
    struct tp_sim_endpoints endpoints;
    int fd;
    uint64_t rate_pps; /* packets per second, 0: as fast as possible */
    double speed;      /* > 0: follow venue time, speed times faster (overrides rate) */
    uint64_t venue_start, clock_start; /* first packet's venue time and CLOCK_MONOTONIC */
    uint64_t next_send_ns;             /* CLOCK_MONOTONIC time of the next send */
    uint64_t sent, errors;
    struct tp_sim_rerequest_server *server; /* may be NULL */
};

/* iface: interface name (multicast leaves through it); NULL: the routing table decides. */
int tp_sim_live_open(struct tp_sim_live_out *o, const struct tp_sim_endpoints *endpoints,
                     const char *iface, uint64_t rate_pps, struct tp_sim_rerequest_server *server);
/*
 * Paces by the packets' venue times instead of the rate: a packet leaves when speed * (monotonic
 * time since the first packet) reaches its venue time since the first one (speed 1: real time).
 */
void tp_sim_live_follow_venue_time(struct tp_sim_live_out *o, double speed);
/* A tp_sim_packet_sink callback (ctx: struct tp_sim_live_out). */
int tp_sim_live_packet(void *ctx, const struct tp_sim_packet *p);
void tp_sim_live_close(struct tp_sim_live_out *o);

#endif
