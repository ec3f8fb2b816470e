/*
 * sim_eobi.c - tickplane-sim's Eurex EOBI venue: incremental packets per market segment and the
 * snapshot loop.
 */
#include <errno.h>
#include <stdio.h>

#include "eobi_feed.h"
#include "eobi_release.h"
#include "sim_outputs.h"
#include "sim_venue.h"

/* The EOBI session's parameters, the options' and the run's (sim_venue.h). */
static struct tp_sim_eobi_params eobi;

static int run_eobi(struct sim_options *o, struct tp_sim_model *m, json_t *report)
{
    if (o->pcap_path == NULL && !o->live) {
        fprintf(stderr, "tickplane-sim eobi: nothing to write (--pcap, --live)\n");
        return -EINVAL;
    }
    struct sim_outputs out;
    o->faults.heartbeat = tp_sim_eobi_heartbeat;
    int rc = sim_outputs_open(&out, o, TP_SIM_VENUE_EOBI, NULL);
    if (rc < 0)
        return rc;
    struct tp_sim_eobi_feed feed;
    struct tp_sim_packet_sink to_faults = sim_outputs_sink(&out);
    eobi.midnight_epoch_ns = o->endpoints.midnight_epoch_ns;
    int init_rc = tp_sim_eobi_init(&feed, m, &eobi, &to_faults);
    if (init_rc == -EINVAL)
        fprintf(stderr, "tickplane-sim eobi: --segments must be 1..64\n");
    rc = init_rc == 0 ? tp_sim_eobi_run(&feed, o->messages) : init_rc;
    int close_rc = sim_outputs_close(&out);
    rc = rc < 0 ? rc : close_rc;
    /* A session init refused has no counts (the report is not written then). */
    if (init_rc == 0)
        json_object_set_new(report, "eobi", tp_sim_eobi_report(&feed));
    sim_outputs_report(&out, o, report);
    return rc;
}

static void eobi_defaults(void)
{
    tp_sim_eobi_params_default(&eobi);
}

static int set_snapshot_every(const char *arg)
{
    return sim_parse_u32(arg, &eobi.snapshot_every);
}

static int set_segments(const char *arg)
{
    return sim_parse_u32(arg, &eobi.segments);
}

static int set_release(const char *arg)
{
    int release = tp_eobi_release_parse(arg);
    eobi.release = release < 0 ? 0 : (uint8_t)release;
    return release < 0 ? -EINVAL : 0;
}

static const struct sim_venue_option eobi_options[] = {
    {"snapshot-every", set_snapshot_every},
    {"segments", set_segments},
    {"eobi-release", set_release},
};

const struct sim_venue sim_venue_eobi = {
    .name = "eobi",
    .usage = "eobi:    --snapshot-every N (incremental packets between segment snapshots)\n"
             "         --segments N (market segments)  --eobi-release 6.0|7.0 (T7 layouts)\n",
    .options = eobi_options,
    .n_options = sizeof(eobi_options) / sizeof(eobi_options[0]),
    .min_packet_bytes = 1000,
    .implied_depth = 0,
    .defaults = eobi_defaults,
    .run = run_eobi,
};
