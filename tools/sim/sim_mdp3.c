/*
 * sim_mdp3.c - tickplane-sim's CME MDP 3.0 venue: incremental, snapshot and definition packets.
 */
#include <errno.h>
#include <stdio.h>

#include "mdp3_feed.h"
#include "sim_outputs.h"
#include "sim_venue.h"

/* The MDP3 session's parameters, the options' and the run's (sim_venue.h). */
static struct tp_sim_mdp3_params mdp3;

static int run_mdp3(struct sim_options *o, struct tp_sim_model *m, json_t *report)
{
    if (o->pcap_path == NULL && !o->live) {
        fprintf(stderr, "tickplane-sim mdp3: nothing to write (--pcap, --live)\n");
        return -EINVAL;
    }
    if (mdp3.unseen_events > 0 && mdp3.unseen_id >= m->params.instruments) {
        fprintf(stderr, "tickplane-sim mdp3: --unseen-levels: no instrument %u (--symbols %u)\n",
                mdp3.unseen_id, m->params.instruments);
        return -EINVAL;
    }
    struct sim_outputs out;
    o->faults.heartbeat = tp_sim_mdp3_heartbeat;
    int rc = sim_outputs_open(&out, o, TP_SIM_VENUE_MDP3, NULL);
    if (rc < 0)
        return rc;
    struct tp_sim_mdp3_feed feed;
    struct tp_sim_packet_sink to_faults = sim_outputs_sink(&out);
    mdp3.depth = o->depth;
    mdp3.reset_at_message = o->seq_reset_at;
    if (o->packet_bytes > 0) {
        mdp3.max_payload = o->packet_bytes;
        mdp3.pack_window_ns = TP_SIM_PACK_FILL;
    }
    int init_rc = tp_sim_mdp3_init(&feed, m, &mdp3, &to_faults);
    if (init_rc == -EINVAL)
        fprintf(stderr, "tickplane-sim mdp3: --depth must be %d..%d\n", TP_SIM_IMPLIED_DEPTH,
                TP_SIM_MDP3_MAX_DEPTH);
    rc = init_rc == 0 ? tp_sim_mdp3_run(&feed, o->messages) : init_rc;
    int close_rc = sim_outputs_close(&out);
    rc = rc < 0 ? rc : close_rc;
    /* A session init refused has no counts (the report is not written then). */
    if (init_rc == 0)
        json_object_set_new(report, "mdp3", tp_sim_mdp3_report(&feed));
    sim_outputs_report(&out, o, report);
    tp_sim_mdp3_free(&feed);
    return rc;
}

static void mdp3_defaults(void)
{
    tp_sim_mdp3_params_default(&mdp3);
}

static int set_snapshot_every(const char *arg)
{
    return sim_parse_u32(arg, &mdp3.snapshot_every);
}

static int set_definition_every(const char *arg)
{
    return sim_parse_u32(arg, &mdp3.definition_every);
}

static int set_unseen_levels(const char *arg)
{
    int rc = sim_parse_u32_pair(arg, &mdp3.unseen_id, &mdp3.unseen_events);
    return rc == 0 && mdp3.unseen_events == 0 ? -EINVAL : rc;
}

static const struct sim_venue_option mdp3_options[] = {
    {"snapshot-every", set_snapshot_every},
    {"definition-every", set_definition_every},
    {"unseen-levels", set_unseen_levels},
};

/* A snapshot of both books fits one packet of 1000 bytes. */
const struct sim_venue sim_venue_mdp3 = {
    .name = "mdp3",
    .usage = "mdp3:    --snapshot-every N --definition-every N (incremental packets)\n"
             "         --unseen-levels ID:N (instrument ID's book existed before the capture)\n",
    .options = mdp3_options,
    .n_options = sizeof(mdp3_options) / sizeof(mdp3_options[0]),
    .min_packet_bytes = 1000,
    .implied_depth = TP_SIM_IMPLIED_DEPTH,
    .defaults = mdp3_defaults,
    .run = run_mdp3,
};
