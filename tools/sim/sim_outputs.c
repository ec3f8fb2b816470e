/*
 * sim_outputs.c - the packet chain every venue's session feeds: faults -> pcap and/or live.
 */
#include <stdio.h>
#include <string.h>

#include "sim_outputs.h"

static int outputs_packet(void *ctx, const struct tp_sim_packet *p)
{
    struct sim_outputs *out = ctx;
    int rc = 0;
    if (out->has_pcap)
        rc = tp_sim_pcap_packet(&out->pcap, p);
    if (rc == 0 && out->has_live)
        rc = tp_sim_live_packet(&out->live, p);
    return rc;
}

static int faults_packet(void *ctx, const struct tp_sim_packet *p)
{
    return tp_sim_faults_packet(ctx, p);
}

struct tp_sim_packet_sink sim_outputs_sink(struct sim_outputs *out)
{
    return (struct tp_sim_packet_sink){.packet = faults_packet, .ctx = &out->faults};
}

int sim_outputs_open(struct sim_outputs *out, struct sim_options *o, enum tp_sim_venue venue,
                     struct tp_sim_rerequest_server *server)
{
    memset(out, 0, sizeof(*out));
    tp_sim_endpoints_default(&o->endpoints, venue);
    o->endpoints.vlan = o->vlan;
    for (int s = 0; s < TP_SIM_STREAMS; s++)
        for (int l = 0; l < TP_SIM_LINES; l++)
            if (o->endpoints_set[s][l]) {
                o->endpoints.ep[s][l].group = o->endpoint_override[s][l].group;
                o->endpoints.ep[s][l].port = o->endpoint_override[s][l].port;
            }
    int rc = 0;
    if (o->pcap_path != NULL) {
        rc = tp_sim_pcap_open(&out->pcap, o->pcap_path, &o->endpoints);
        out->has_pcap = rc == 0;
        if (rc < 0)
            fprintf(stderr, "tickplane-sim: %s: %s\n", o->pcap_path, strerror(-rc));
    }
    if (rc == 0 && o->live) {
        rc = tp_sim_live_open(&out->live, &o->endpoints, o->live_iface, o->rate_pps, server);
        out->has_live = rc == 0;
        if (rc == 0 && o->realtime > 0.0)
            tp_sim_live_follow_venue_time(&out->live, o->realtime);
        if (rc < 0)
            fprintf(stderr, "tickplane-sim: live output: %s\n", strerror(-rc));
    }
    struct tp_sim_packet_sink sink = {.packet = outputs_packet, .ctx = out};
    if (rc == 0)
        rc = tp_sim_faults_init(&out->faults, &o->faults, &sink);
    return rc;
}

int sim_outputs_close(struct sim_outputs *out)
{
    int rc = tp_sim_faults_finish(&out->faults);
    if (out->has_pcap) {
        int close_rc = tp_sim_pcap_close(&out->pcap);
        rc = rc < 0 ? rc : close_rc;
    }
    if (out->has_live)
        tp_sim_live_close(&out->live);
    return rc;
}

void sim_outputs_report(struct sim_outputs *out, const struct sim_options *o, json_t *report)
{
    json_object_set_new(report, "lines", tp_sim_faults_report(&out->faults));
    if (out->has_pcap)
        fprintf(stderr, "tickplane-sim: %llu frames in %s\n", (unsigned long long)out->pcap.frames,
                o->pcap_path);
    tp_sim_faults_free(&out->faults);
}
