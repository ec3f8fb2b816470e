/*
 * sim_options.h - what tickplane-sim's command line sets for every venue, and the number parsers
 * the venues' own options (sim_venue.h) share.
 */
#ifndef TP_SIM_OPTIONS_H
#define TP_SIM_OPTIONS_H

#include <stdint.h>

#include "endpoints.h"
#include "faults.h"
#include "model.h"

struct sim_venue;

struct sim_options {
    const struct sim_venue *venue; /* argv[1] */
    struct tp_sim_params model;
    uint64_t messages;
    uint32_t depth;
    const char *truth_path, *report_path, *pcap_path;
    const char *live_iface;
    int live;
    uint64_t rate_pps;
    double realtime; /* > 0: live packets follow venue time at this speed */
    uint64_t seq_reset_at;
    uint16_t packet_bytes; /* > 0: every packet filled up to this payload (a venue at peak) */
    struct tp_sim_fault_params faults;
    struct tp_sim_endpoints endpoints;
    int endpoints_set[TP_SIM_STREAMS][TP_SIM_LINES];
    struct tp_sim_endpoint endpoint_override[TP_SIM_STREAMS][TP_SIM_LINES];
    uint16_t vlan;
};

/* Each parses all of s into *out: 0, or -EINVAL. */
int sim_parse_u64(const char *s, uint64_t *out);
int sim_parse_u32(const char *s, uint32_t *out);
int sim_parse_prob(const char *s, double *out);                  /* a probability, 0..1 */
int sim_parse_u32_pair(const char *s, uint32_t *a, uint32_t *b); /* "A:B" */

#endif /* TP_SIM_OPTIONS_H */
