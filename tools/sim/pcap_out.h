/*
 * pcap output: each packet becomes an Ethernet (optionally 802.1Q) / IPv4 / UDP frame to its
 * stream's and line's endpoint, timestamped at the session date plus the venue time, written with
 * the codec's pcap writer (nanosecond pcap, readable by DPDK net_pcap, tshark, libpcap).
 * Packets for a (stream, line) without an endpoint are not written.
 */
#ifndef TP_SIM_PCAP_OUT_H
#define TP_SIM_PCAP_OUT_H

#include "endpoints.h"
#include "packet.h"
#include "pcap_writer.h"

struct tp_sim_pcap_out {
    struct tp_pcap_writer writer;
    struct tp_sim_endpoints endpoints;
    uint64_t frames;
    uint16_t ip_id;
};

int tp_sim_pcap_open(struct tp_sim_pcap_out *o, const char *path,
                     const struct tp_sim_endpoints *endpoints);
/* A tp_sim_packet_sink callback (ctx: struct tp_sim_pcap_out). */
int tp_sim_pcap_packet(void *ctx, const struct tp_sim_packet *p);
int tp_sim_pcap_close(struct tp_sim_pcap_out *o);

#endif
