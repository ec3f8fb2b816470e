/*
 * tickplane-sim: the exchange simulator. See tools/sim/README.md for the command line.
 *
 *   tickplane-sim VENUE --pcap F.pcap --truth T.json --loss-a 0.01 --report R.json ...
 *
 * The options every venue shares are here; a venue's own and its run are in its sim_<venue>.c
 * (sim_venue.h), listed in sim_venues.c.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faults.h"
#include "model.h"
#include "sim_options.h"
#include "sim_venue.h"
#include "truth.h"
#include "tp_version.h"

/* Per-line fault flags: --NAME-a / --NAME-b, stored in struct tp_sim_line_faults. */
enum fault_value { FV_PROB, FV_U32, FV_U64, FV_RANGE };
struct fault_flag {
    const char *name;
    enum fault_value kind;
    size_t offset;
    const char *help;
};
#define LF(field) offsetof(struct tp_sim_line_faults, field)
static const struct fault_flag fault_flags[] = {
    {"loss", FV_PROB, LF(loss), "P: each packet lost with probability P"},
    {"burst", FV_PROB, LF(burst), "P: a loss burst starts at a packet with probability P"},
    {"burst-len", FV_U32, LF(burst_len), "N: packets lost per burst (default 10)"},
    {"reorder", FV_PROB, LF(reorder), "P: packet sent after its successor"},
    {"duplicate", FV_PROB, LF(duplicate), "P: packet sent twice"},
    {"delay", FV_U64, LF(delay_ns), "NS: every packet of the line sent NS later"},
    {"truncate", FV_PROB, LF(truncate), "P: packet cut short"},
    {"corrupt", FV_PROB, LF(corrupt), "P: one byte of the packet flipped"},
    {"heartbeats", FV_RANGE, LF(heartbeat_from),
     "FROM:TO: source packets [FROM,TO) heartbeats only"},
    {"late-join", FV_U32, LF(late_join), "K: the line is joined at source packet K"},
    {"snapshot-loss", FV_PROB, LF(snapshot_loss),
     "P: each snapshot packet lost with probability P"},
};
#define N_FAULT_FLAGS (sizeof(fault_flags) / sizeof(fault_flags[0]))

enum {
    OPT_SEED = 256,
    OPT_SYMBOLS,
    OPT_MESSAGES,
    OPT_ZIPF,
    OPT_DEPTH,
    OPT_TRUTH,
    OPT_REPORT,
    OPT_PCAP,
    OPT_LIVE,
    OPT_IFACE,
    OPT_RATE,
    OPT_REALTIME,
    OPT_SEQ_RESET,
    OPT_BOTH_LOSS,
    OPT_NO_LINE_B,
    OPT_VLAN,
    OPT_LINE_A,
    OPT_LINE_B,
    OPT_SNAPSHOT_ADDR,
    OPT_DEFINITION_ADDR,
    OPT_SNAPSHOT_MBO_ADDR,
    OPT_PACKET_BYTES,
    OPT_START_ORDERS,
    OPT_VENUE_BASE = 500,  /* + index in venue_option_names */
    OPT_FAULT_BASE = 1000, /* + 2 * flag index + line */
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tickplane-sim ");
    for (const struct sim_venue *const *v = sim_venues; *v != NULL; v++)
        fprintf(out, "%s%s", v == sim_venues ? "" : "|", (*v)->name);
    fprintf(out, " [options]   (see tools/sim/README.md)\n"
                 "       tickplane-sim --version\n"
                 "model:   --seed X --symbols N --messages N --zipf S --start-orders N\n"
                 "truth:   --truth F.json --depth D\n"
                 "outputs: --pcap F.pcap  --live [--iface IF] [--rate PPS|--realtime X]\n"
                 "         --report F.json  --vlan ID  --line-a G:P --line-b G:P --no-line-b\n"
                 "         --packet-bytes N (fill packets to N payload bytes, as at peak)\n"
                 "         --snapshot-addr G:P --snapshot-mbo-addr G:P --definition-addr G:P "
                 "(snapshot, definition streams)\n");
    for (const struct sim_venue *const *v = sim_venues; *v != NULL; v++)
        fputs((*v)->usage, out);
    fprintf(out, "faults:  --both-loss P  --seq-reset-at N (messages)\n");
    for (size_t i = 0; i < N_FAULT_FLAGS; i++)
        fprintf(out, "         --%s-a / --%s-b %s\n", fault_flags[i].name, fault_flags[i].name,
                fault_flags[i].help);
}

/* The venues' option names, each once (two venues may share one). */
#define VENUE_OPTIONS_MAX 64
struct venue_option_names {
    const char *name[VENUE_OPTIONS_MAX];
    unsigned count;
};

static void collect_venue_options(struct venue_option_names *names)
{
    for (const struct sim_venue *const *v = sim_venues; *v != NULL; v++)
        for (unsigned i = 0; i < (*v)->n_options; i++) {
            unsigned k = 0;
            while (k < names->count && strcmp(names->name[k], (*v)->options[i].name) != 0)
                k++;
            if (k == names->count && names->count < VENUE_OPTIONS_MAX)
                names->name[names->count++] = (*v)->options[i].name;
        }
}

/* Gives arg to every venue's option called name: 0, or the first one's -EINVAL. */
static int set_venue_option(const char *name, const char *arg)
{
    for (const struct sim_venue *const *v = sim_venues; *v != NULL; v++)
        for (unsigned i = 0; i < (*v)->n_options; i++)
            if (strcmp((*v)->options[i].name, name) == 0 && (*v)->options[i].set(arg) < 0)
                return -EINVAL;
    return 0;
}

static int parse_fault(const struct fault_flag *flag, const char *arg,
                       struct tp_sim_line_faults *lf)
{
    char *field = (char *)lf + flag->offset;
    switch (flag->kind) {
    case FV_PROB:
        return sim_parse_prob(arg, (double *)field);
    case FV_U32:
        return sim_parse_u32(arg, (uint32_t *)field);
    case FV_U64:
        return sim_parse_u64(arg, (uint64_t *)field);
    default:
        if (sim_parse_u32_pair(arg, &lf->heartbeat_from, &lf->heartbeat_to) < 0)
            return -EINVAL;
        return lf->heartbeat_from <= lf->heartbeat_to ? 0 : -EINVAL;
    }
}

static int set_endpoint(struct sim_options *o, int stream, int line, const char *arg)
{
    o->endpoints_set[stream][line] = 1;
    int rc = tp_sim_endpoint_parse(arg, &o->endpoint_override[stream][line]);
    return rc == 0 && o->endpoint_override[stream][line].port == 0 ? -EINVAL : rc;
}

static int parse_options(int argc, char **argv, struct sim_options *o)
{
    static const struct option base_opts[] = {
        {"seed", required_argument, NULL, OPT_SEED},
        {"symbols", required_argument, NULL, OPT_SYMBOLS},
        {"instruments", required_argument, NULL, OPT_SYMBOLS},
        {"messages", required_argument, NULL, OPT_MESSAGES},
        {"zipf", required_argument, NULL, OPT_ZIPF},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {"truth", required_argument, NULL, OPT_TRUTH},
        {"report", required_argument, NULL, OPT_REPORT},
        {"pcap", required_argument, NULL, OPT_PCAP},
        {"live", no_argument, NULL, OPT_LIVE},
        {"iface", required_argument, NULL, OPT_IFACE},
        {"rate", required_argument, NULL, OPT_RATE},
        {"realtime", required_argument, NULL, OPT_REALTIME},
        {"seq-reset-at", required_argument, NULL, OPT_SEQ_RESET},
        {"both-loss", required_argument, NULL, OPT_BOTH_LOSS},
        {"no-line-b", no_argument, NULL, OPT_NO_LINE_B},
        {"vlan", required_argument, NULL, OPT_VLAN},
        {"line-a", required_argument, NULL, OPT_LINE_A},
        {"line-b", required_argument, NULL, OPT_LINE_B},
        {"snapshot-addr", required_argument, NULL, OPT_SNAPSHOT_ADDR},
        {"definition-addr", required_argument, NULL, OPT_DEFINITION_ADDR},
        {"snapshot-mbo-addr", required_argument, NULL, OPT_SNAPSHOT_MBO_ADDR},
        {"packet-bytes", required_argument, NULL, OPT_PACKET_BYTES},
        {"start-orders", required_argument, NULL, OPT_START_ORDERS},
        {"help", no_argument, NULL, 'h'},
    };
    enum { N_BASE = sizeof(base_opts) / sizeof(base_opts[0]) };
    static char fault_names[N_FAULT_FLAGS * 2][40];
    static struct option long_opts[N_BASE + VENUE_OPTIONS_MAX + 2 * N_FAULT_FLAGS + 1];
    static struct venue_option_names venue_options;
    collect_venue_options(&venue_options);
    memcpy(long_opts, base_opts, sizeof(base_opts));
    unsigned n = N_BASE;
    for (unsigned i = 0; i < venue_options.count; i++)
        long_opts[n++] = (struct option){venue_options.name[i], required_argument, NULL,
                                         OPT_VENUE_BASE + (int)i};
    for (size_t i = 0; i < 2 * N_FAULT_FLAGS; i++) {
        snprintf(fault_names[i], sizeof(fault_names[i]), "%s-%c", fault_flags[i / 2].name,
                 i % 2 ? 'b' : 'a');
        long_opts[n++] =
            (struct option){fault_names[i], required_argument, NULL, OPT_FAULT_BASE + (int)i};
    }

    if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        exit(0);
    }
    if (argc < 2 || (o->venue = sim_venue_find(argv[1])) == NULL)
        return -EINVAL;
    tp_sim_params_default(&o->model);
    o->messages = 10000;
    o->depth = 10;
    for (int l = 0; l < TP_SIM_LINES; l++) {
        o->faults.line[l].enabled = 1;
        o->faults.line[l].burst_len = 10;
    }
    for (const struct sim_venue *const *v = sim_venues; *v != NULL; v++)
        if ((*v)->defaults != NULL)
            (*v)->defaults();
    optind = 2;
    int c, idx;
    while ((c = getopt_long(argc, argv, "h", long_opts, &idx)) != -1) {
        uint64_t v = 0;
        int rc = 0;
        switch (c) {
        case OPT_SEED:
            rc = sim_parse_u64(optarg, &o->model.seed);
            if (rc == 0 && o->model.seed > INT64_MAX)
                rc = -EINVAL; /* the reports hold it as a JSON integer */
            break;
        case OPT_SYMBOLS:
            rc = sim_parse_u32(optarg, &o->model.instruments);
            if (rc == 0 && (o->model.instruments == 0 || o->model.instruments > 65000))
                rc = -EINVAL; /* ITCH stock locate is 16 bits */
            break;
        case OPT_MESSAGES:
            rc = sim_parse_u64(optarg, &o->messages);
            break;
        case OPT_ZIPF: {
            char *end;
            o->model.zipf_s = strtod(optarg, &end);
            rc = *end == '\0' && o->model.zipf_s >= 0.0 ? 0 : -EINVAL;
            break;
        }
        case OPT_DEPTH:
            rc = sim_parse_u32(optarg, &o->depth);
            if (rc == 0 && (o->depth == 0 || o->depth > 1000))
                rc = -EINVAL;
            break;
        case OPT_TRUTH:
            o->truth_path = optarg;
            break;
        case OPT_REPORT:
            o->report_path = optarg;
            break;
        case OPT_PCAP:
            o->pcap_path = optarg;
            break;
        case OPT_LIVE:
            o->live = 1;
            break;
        case OPT_IFACE:
            o->live_iface = optarg;
            break;
        case OPT_RATE:
            rc = sim_parse_u64(optarg, &o->rate_pps);
            break;
        case OPT_REALTIME: {
            char *end;
            o->realtime = strtod(optarg, &end);
            rc = *end == '\0' && o->realtime > 0.0 ? 0 : -EINVAL;
            break;
        }
        case OPT_SEQ_RESET:
            rc = sim_parse_u64(optarg, &o->seq_reset_at);
            break;
        case OPT_BOTH_LOSS:
            rc = sim_parse_prob(optarg, &o->faults.both_loss);
            break;
        case OPT_NO_LINE_B:
            o->faults.line[TP_SIM_LINE_B].enabled = 0;
            break;
        case OPT_VLAN:
            rc = sim_parse_u64(optarg, &v);
            if (rc == 0 && v > 4095)
                rc = -EINVAL;
            o->vlan = (uint16_t)v;
            break;
        case OPT_LINE_A:
        case OPT_LINE_B:
            rc = set_endpoint(o, TP_SIM_STREAM_INCREMENTAL, c - OPT_LINE_A, optarg);
            break;
        case OPT_SNAPSHOT_ADDR:
            rc = set_endpoint(o, TP_SIM_STREAM_SNAPSHOT, TP_SIM_LINE_A, optarg);
            break;
        case OPT_DEFINITION_ADDR:
            rc = set_endpoint(o, TP_SIM_STREAM_DEFINITION, TP_SIM_LINE_A, optarg);
            break;
        case OPT_SNAPSHOT_MBO_ADDR:
            rc = set_endpoint(o, TP_SIM_STREAM_SNAPSHOT_MBO, TP_SIM_LINE_A, optarg);
            break;
        case OPT_PACKET_BYTES:
            rc = sim_parse_u64(optarg, &v);
            if (rc == 0 && (v < o->venue->min_packet_bytes || v > TP_SIM_MAX_PAYLOAD))
                rc = -EINVAL;
            o->packet_bytes = (uint16_t)v;
            break;
        case OPT_START_ORDERS:
            /* Deep books (a snapshot of a million live orders): the cap follows. */
            rc = sim_parse_u32(optarg, &o->model.start_orders);
            if (rc == 0 && (o->model.start_orders == 0 || o->model.start_orders > 100000))
                rc = -EINVAL;
            if (rc == 0 && o->model.max_orders < 4 * o->model.start_orders)
                o->model.max_orders = 4 * o->model.start_orders;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            if (c >= OPT_VENUE_BASE && c < OPT_VENUE_BASE + (int)venue_options.count) {
                rc = set_venue_option(venue_options.name[c - OPT_VENUE_BASE], optarg);
                break;
            }
            if (c >= OPT_FAULT_BASE && c < OPT_FAULT_BASE + 2 * (int)N_FAULT_FLAGS) {
                int i = c - OPT_FAULT_BASE;
                rc = parse_fault(&fault_flags[i / 2], optarg, &o->faults.line[i % 2]);
                break;
            }
            return -EINVAL;
        }
        if (rc < 0) {
            fprintf(stderr, "tickplane-sim: bad value for --%s: %s\n", long_opts[idx].name, optarg);
            return rc;
        }
    }
    o->faults.seed = o->model.seed;
    return optind == argc ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
    struct sim_options o;
    memset(&o, 0, sizeof(o));
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        tp_version_print(stdout, "tickplane-sim");
        return 0;
    }
    if (parse_options(argc, argv, &o) < 0) {
        usage(stderr);
        return 2;
    }
    struct tp_sim_model m;
    int rc = tp_sim_model_init(&m, &o.model);
    if (rc < 0) {
        fprintf(stderr, "tickplane-sim: model: %s\n", strerror(-rc));
        return 1;
    }
    json_t *report =
        json_pack("{s:s,s:i,s:s,s:I,s:I,s:I}", "format", "tickplane-sim-report", "version", 1,
                  "protocol", o.venue->name, "seed", (json_int_t)o.model.seed, "instruments",
                  (json_int_t)o.model.instruments, "messages_requested", (json_int_t)o.messages);
    rc = o.venue->run(&o, &m, report);
    json_object_set_new(report, "events", json_integer((json_int_t)m.events_total));
    /* What a book builder holds at the end: the daemon's dp.books.live_orders after the run. */
    uint64_t live_orders = 0;
    for (uint32_t id = 0; id < m.params.instruments; id++)
        live_orders += m.instruments[id].n_orders;
    json_object_set_new(report, "live_orders", json_integer((json_int_t)live_orders));
    if (o.packet_bytes > 0) /* absent by default: the default report stays as it was */
        json_object_set_new(report, "packet_bytes", json_integer(o.packet_bytes));
    if (rc == 0 && o.truth_path != NULL) {
        rc = tp_sim_truth_write(&m, o.depth, o.venue->implied_depth, o.truth_path);
        if (rc < 0)
            fprintf(stderr, "tickplane-sim: %s: %s\n", o.truth_path, strerror(-rc));
    }
    if (rc == 0 && o.report_path != NULL && json_dump_file(report, o.report_path, JSON_INDENT(1)))
        rc = -EIO;
    json_decref(report);
    if (o.venue->finish != NULL)
        o.venue->finish(rc);
    tp_sim_model_free(&m);
    return rc == 0 ? 0 : 1;
}
