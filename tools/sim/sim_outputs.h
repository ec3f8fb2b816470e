/*
 * sim_outputs.h - the packet chain of every venue's session in tickplane-sim: the fault injector,
 * then the pcap file and/or the live sockets the options name.
 */
#ifndef TP_SIM_OUTPUTS_H
#define TP_SIM_OUTPUTS_H

#include <jansson.h>

#include "endpoints.h"
#include "faults.h"
#include "live_out.h"
#include "packet.h"
#include "pcap_out.h"
#include "rerequest.h"
#include "sim_options.h"

struct sim_outputs {
    struct tp_sim_pcap_out pcap;
    struct tp_sim_live_out live;
    int has_pcap, has_live;
    struct tp_sim_faults faults;
};

/* Sets o's endpoints (venue's defaults, then the options'), opens the outputs and the fault
 * injector before them; server (or NULL) answers re-requests on the live sockets. 0 or a negative
 * errno (said on stderr). */
int sim_outputs_open(struct sim_outputs *out, struct sim_options *o, enum tp_sim_venue venue,
                     struct tp_sim_rerequest_server *server);
/* Where the session sends its packets: the fault injector. */
struct tp_sim_packet_sink sim_outputs_sink(struct sim_outputs *out);
/* Flushes the fault injector and closes the outputs: 0 or a negative errno. */
int sim_outputs_close(struct sim_outputs *out);
/* Adds the lines' counts to report, says the frames written, frees the injector. */
void sim_outputs_report(struct sim_outputs *out, const struct sim_options *o, json_t *report);

#endif /* TP_SIM_OUTPUTS_H */
