/*
 * tickplane-sim: the exchange simulator. See tools/sim/README.md for the command line.
 *
 *   tickplane-sim itch --binaryfile F --messages N --symbols S --seed X --truth T.json
 *   tickplane-sim itch --pcap F.pcap --loss-a 0.01 --report R.json ...
 *   tickplane-sim mdp3 --pcap F.pcap --truth T.json ...
 *   tickplane-sim eobi --pcap F.pcap --truth T.json --both-loss P ...
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binaryfile_out.h"
#include "eobi_feed.h"
#include "eobi_release.h"
#include "faults.h"
#include "glimpse_server.h"
#include "itch_feed.h"
#include "live_out.h"
#include "mdp3_feed.h"
#include "model.h"
#include "mold_out.h"
#include "pcap_out.h"
#include "rerequest.h"
#include "truth.h"
#include "tp_version.h"

struct options {
    const char *protocol;
    struct tp_sim_params model;
    uint64_t messages;
    uint32_t depth;
    const char *truth_path, *report_path, *binaryfile_path, *pcap_path;
    const char *live_iface;
    int live;
    uint64_t rate_pps;
    double realtime;            /* > 0: live packets follow venue time at this speed */
    const char *rerequest_addr; /* host:port */
    uint64_t rerequest_window;
    uint64_t linger_ms;
    uint64_t seq_reset_at;
    uint16_t packet_bytes; /* > 0: every packet filled up to this payload (a venue at peak) */
    struct tp_sim_fault_params faults;
    struct tp_sim_endpoints endpoints;
    int endpoints_set[TP_SIM_STREAMS][TP_SIM_LINES];
    struct tp_sim_endpoint endpoint_override[TP_SIM_STREAMS][TP_SIM_LINES];
    uint16_t vlan;
    struct tp_sim_mdp3_params mdp3;
    struct tp_sim_eobi_params eobi;
    /* GLIMPSE: the snapshot at feed sequence glimpse_at, served and/or recorded */
    const char *glimpse_addr, *glimpse_file, *glimpse_user, *glimpse_password;
    uint64_t glimpse_at, glimpse_serve_ms;
    struct tp_sim_glimpse_faults glimpse_faults;
};

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
    OPT_BINFILE,
    OPT_PCAP,
    OPT_LIVE,
    OPT_IFACE,
    OPT_RATE,
    OPT_REALTIME,
    OPT_REREQUEST,
    OPT_REREQUEST_WINDOW,
    OPT_LINGER,
    OPT_SEQ_RESET,
    OPT_BOTH_LOSS,
    OPT_NO_LINE_B,
    OPT_VLAN,
    OPT_LINE_A,
    OPT_LINE_B,
    OPT_SNAPSHOT_ADDR,
    OPT_DEFINITION_ADDR,
    OPT_SNAPSHOT_MBO_ADDR,
    OPT_SNAPSHOT_EVERY,
    OPT_SEGMENTS,
    OPT_EOBI_RELEASE,
    OPT_DEFINITION_EVERY,
    OPT_PACKET_BYTES,
    OPT_UNSEEN_LEVELS,
    OPT_START_ORDERS,
    OPT_GLIMPSE,
    OPT_GLIMPSE_AT,
    OPT_GLIMPSE_FILE,
    OPT_GLIMPSE_USER,
    OPT_GLIMPSE_PASSWORD,
    OPT_GLIMPSE_SERVE_MS,
    OPT_GLIMPSE_REFUSE,
    OPT_GLIMPSE_DROPS,
    OPT_GLIMPSE_DROP_AFTER,
    OPT_GLIMPSE_PAUSE_US,
    OPT_FAULT_BASE = 1000, /* + 2 * flag index + line */
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tickplane-sim itch|mdp3|eobi [options]   (see tools/sim/README.md)\n"
            "       tickplane-sim --version\n"
            "model:   --seed X --symbols N --messages N --zipf S --start-orders N\n"
            "truth:   --truth F.json --depth D\n"
            "outputs: --binaryfile F (itch)  --pcap F.pcap  --live [--iface IF] [--rate "
            "PPS|--realtime X]\n"
            "         --report F.json  --vlan ID  --line-a G:P --line-b G:P --no-line-b\n"
            "         --packet-bytes N (fill packets to N payload bytes, as at peak)\n"
            "         --snapshot-addr G:P --snapshot-mbo-addr G:P --definition-addr G:P (mdp3)\n"
            "itch:    --rerequest HOST:PORT --rerequest-window N --linger-ms MS\n"
            "         --glimpse HOST:PORT --glimpse-at SEQ --glimpse-file F --glimpse-serve-ms MS\n"
            "         --glimpse-user U --glimpse-password P --glimpse-refuse N\n"
            "         --glimpse-drops N --glimpse-drop-after MSGS --glimpse-pause-us US\n"
            "mdp3:    --snapshot-every N --definition-every N (incremental packets)\n"
            "eobi:    --snapshot-every N (incremental packets between segment snapshots)\n"
            "         --segments N (market segments)  --eobi-release 6.0|7.0 (T7 layouts)\n"
            "faults:  --both-loss P  --seq-reset-at N (messages)\n"
            "         --unseen-levels ID:N (mdp3: instrument ID's book existed before the "
            "capture)\n");
    for (size_t i = 0; i < N_FAULT_FLAGS; i++)
        fprintf(out, "         --%s-a / --%s-b %s\n", fault_flags[i].name, fault_flags[i].name,
                fault_flags[i].help);
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    if (errno != 0 || *s == '\0' || *end != '\0' || *s == '-')
        return -EINVAL;
    *out = v;
    return 0;
}

static int parse_prob(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || !(v >= 0.0 && v <= 1.0))
        return -EINVAL;
    *out = v;
    return 0;
}

static int parse_u32(const char *s, uint32_t *out)
{
    uint64_t v;
    int rc = parse_u64(s, &v);
    if (rc != 0 || v > UINT32_MAX)
        return -EINVAL;
    *out = (uint32_t)v;
    return 0;
}

/* "A:B", two unsigned 32-bit numbers. */
static int parse_u32_pair(const char *arg, uint32_t *a, uint32_t *b)
{
    char first[32];
    const char *colon = strchr(arg, ':');
    if (colon == NULL || (size_t)(colon - arg) >= sizeof(first))
        return -EINVAL;
    memcpy(first, arg, (size_t)(colon - arg));
    first[colon - arg] = '\0';
    return parse_u32(first, a) < 0 || parse_u32(colon + 1, b) < 0 ? -EINVAL : 0;
}

static int parse_fault(const struct fault_flag *flag, const char *arg,
                       struct tp_sim_line_faults *lf)
{
    char *field = (char *)lf + flag->offset;
    switch (flag->kind) {
    case FV_PROB:
        return parse_prob(arg, (double *)field);
    case FV_U32:
        return parse_u32(arg, (uint32_t *)field);
    case FV_U64:
        return parse_u64(arg, (uint64_t *)field);
    default:
        if (parse_u32_pair(arg, &lf->heartbeat_from, &lf->heartbeat_to) < 0)
            return -EINVAL;
        return lf->heartbeat_from <= lf->heartbeat_to ? 0 : -EINVAL;
    }
}

static int set_endpoint(struct options *o, int stream, int line, const char *arg)
{
    o->endpoints_set[stream][line] = 1;
    int rc = tp_sim_endpoint_parse(arg, &o->endpoint_override[stream][line]);
    return rc == 0 && o->endpoint_override[stream][line].port == 0 ? -EINVAL : rc;
}

static int parse_options(int argc, char **argv, struct options *o)
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
        {"binaryfile", required_argument, NULL, OPT_BINFILE},
        {"pcap", required_argument, NULL, OPT_PCAP},
        {"live", no_argument, NULL, OPT_LIVE},
        {"iface", required_argument, NULL, OPT_IFACE},
        {"rate", required_argument, NULL, OPT_RATE},
        {"realtime", required_argument, NULL, OPT_REALTIME},
        {"rerequest", required_argument, NULL, OPT_REREQUEST},
        {"rerequest-window", required_argument, NULL, OPT_REREQUEST_WINDOW},
        {"linger-ms", required_argument, NULL, OPT_LINGER},
        {"seq-reset-at", required_argument, NULL, OPT_SEQ_RESET},
        {"both-loss", required_argument, NULL, OPT_BOTH_LOSS},
        {"no-line-b", no_argument, NULL, OPT_NO_LINE_B},
        {"vlan", required_argument, NULL, OPT_VLAN},
        {"line-a", required_argument, NULL, OPT_LINE_A},
        {"line-b", required_argument, NULL, OPT_LINE_B},
        {"snapshot-addr", required_argument, NULL, OPT_SNAPSHOT_ADDR},
        {"definition-addr", required_argument, NULL, OPT_DEFINITION_ADDR},
        {"snapshot-mbo-addr", required_argument, NULL, OPT_SNAPSHOT_MBO_ADDR},
        {"snapshot-every", required_argument, NULL, OPT_SNAPSHOT_EVERY},
        {"segments", required_argument, NULL, OPT_SEGMENTS},
        {"eobi-release", required_argument, NULL, OPT_EOBI_RELEASE},
        {"definition-every", required_argument, NULL, OPT_DEFINITION_EVERY},
        {"packet-bytes", required_argument, NULL, OPT_PACKET_BYTES},
        {"unseen-levels", required_argument, NULL, OPT_UNSEEN_LEVELS},
        {"start-orders", required_argument, NULL, OPT_START_ORDERS},
        {"glimpse", required_argument, NULL, OPT_GLIMPSE},
        {"glimpse-at", required_argument, NULL, OPT_GLIMPSE_AT},
        {"glimpse-file", required_argument, NULL, OPT_GLIMPSE_FILE},
        {"glimpse-user", required_argument, NULL, OPT_GLIMPSE_USER},
        {"glimpse-password", required_argument, NULL, OPT_GLIMPSE_PASSWORD},
        {"glimpse-serve-ms", required_argument, NULL, OPT_GLIMPSE_SERVE_MS},
        {"glimpse-refuse", required_argument, NULL, OPT_GLIMPSE_REFUSE},
        {"glimpse-drops", required_argument, NULL, OPT_GLIMPSE_DROPS},
        {"glimpse-drop-after", required_argument, NULL, OPT_GLIMPSE_DROP_AFTER},
        {"glimpse-pause-us", required_argument, NULL, OPT_GLIMPSE_PAUSE_US},
        {"help", no_argument, NULL, 'h'},
    };
    enum { N_BASE = sizeof(base_opts) / sizeof(base_opts[0]) };
    static char fault_names[N_FAULT_FLAGS * 2][40];
    static struct option long_opts[N_BASE + 2 * N_FAULT_FLAGS + 1];
    memcpy(long_opts, base_opts, sizeof(base_opts));
    for (size_t i = 0; i < 2 * N_FAULT_FLAGS; i++) {
        snprintf(fault_names[i], sizeof(fault_names[i]), "%s-%c", fault_flags[i / 2].name,
                 i % 2 ? 'b' : 'a');
        long_opts[N_BASE + i] =
            (struct option){fault_names[i], required_argument, NULL, OPT_FAULT_BASE + (int)i};
    }

    if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        exit(0);
    }
    if (argc < 2 || (strcmp(argv[1], "itch") != 0 && strcmp(argv[1], "mdp3") != 0 &&
                     strcmp(argv[1], "eobi") != 0))
        return -EINVAL;
    o->protocol = argv[1];
    tp_sim_params_default(&o->model);
    o->messages = 10000;
    o->depth = 10;
    o->rerequest_window = 100000;
    o->linger_ms = 0;
    for (int l = 0; l < TP_SIM_LINES; l++) {
        o->faults.line[l].enabled = 1;
        o->faults.line[l].burst_len = 10;
    }
    tp_sim_mdp3_params_default(&o->mdp3);
    tp_sim_eobi_params_default(&o->eobi);
    optind = 2;
    int c, idx;
    while ((c = getopt_long(argc, argv, "h", long_opts, &idx)) != -1) {
        uint64_t v = 0;
        int rc = 0;
        switch (c) {
        case OPT_SEED:
            rc = parse_u64(optarg, &o->model.seed);
            if (rc == 0 && o->model.seed > INT64_MAX)
                rc = -EINVAL; /* the reports hold it as a JSON integer */
            break;
        case OPT_SYMBOLS:
            rc = parse_u32(optarg, &o->model.instruments);
            if (rc == 0 && (o->model.instruments == 0 || o->model.instruments > 65000))
                rc = -EINVAL; /* ITCH stock locate is 16 bits */
            break;
        case OPT_MESSAGES:
            rc = parse_u64(optarg, &o->messages);
            break;
        case OPT_ZIPF: {
            char *end;
            o->model.zipf_s = strtod(optarg, &end);
            rc = *end == '\0' && o->model.zipf_s >= 0.0 ? 0 : -EINVAL;
            break;
        }
        case OPT_DEPTH:
            rc = parse_u32(optarg, &o->depth);
            if (rc == 0 && (o->depth == 0 || o->depth > 1000))
                rc = -EINVAL;
            break;
        case OPT_TRUTH:
            o->truth_path = optarg;
            break;
        case OPT_REPORT:
            o->report_path = optarg;
            break;
        case OPT_BINFILE:
            o->binaryfile_path = optarg;
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
            rc = parse_u64(optarg, &o->rate_pps);
            break;
        case OPT_REALTIME: {
            char *end;
            o->realtime = strtod(optarg, &end);
            rc = *end == '\0' && o->realtime > 0.0 ? 0 : -EINVAL;
            break;
        }
        case OPT_REREQUEST:
            o->rerequest_addr = optarg;
            break;
        case OPT_REREQUEST_WINDOW:
            rc = parse_u64(optarg, &o->rerequest_window);
            if (rc == 0 && o->rerequest_window == 0)
                rc = -EINVAL;
            break;
        case OPT_LINGER:
            rc = parse_u64(optarg, &o->linger_ms);
            break;
        case OPT_SEQ_RESET:
            rc = parse_u64(optarg, &o->seq_reset_at);
            break;
        case OPT_BOTH_LOSS:
            rc = parse_prob(optarg, &o->faults.both_loss);
            break;
        case OPT_NO_LINE_B:
            o->faults.line[TP_SIM_LINE_B].enabled = 0;
            break;
        case OPT_VLAN:
            rc = parse_u64(optarg, &v);
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
        case OPT_SNAPSHOT_EVERY:
            rc = parse_u32(optarg, &o->mdp3.snapshot_every);
            o->eobi.snapshot_every = o->mdp3.snapshot_every;
            break;
        case OPT_SEGMENTS:
            rc = parse_u32(optarg, &o->eobi.segments);
            break;
        case OPT_EOBI_RELEASE:
            rc = tp_eobi_release_parse(optarg);
            o->eobi.release = rc < 0 ? 0 : (uint8_t)rc;
            rc = rc < 0 ? -EINVAL : 0;
            break;
        case OPT_DEFINITION_EVERY:
            rc = parse_u32(optarg, &o->mdp3.definition_every);
            break;
        case OPT_UNSEEN_LEVELS:
            rc = parse_u32_pair(optarg, &o->mdp3.unseen_id, &o->mdp3.unseen_events);
            rc = rc == 0 && o->mdp3.unseen_events == 0 ? -EINVAL : rc;
            break;
        case OPT_PACKET_BYTES:
            /* ITCH takes 100.. and MDP3 1000.. (a snapshot of both books fits a packet) */
            rc = parse_u64(optarg, &v);
            if (rc == 0 &&
                (v < (strcmp(o->protocol, "itch") == 0 ? 100 : 1000) || v > TP_SIM_MAX_PAYLOAD))
                rc = -EINVAL;
            o->packet_bytes = (uint16_t)v;
            break;
        case OPT_START_ORDERS:
            /* Deep books (a snapshot of a million live orders): the cap follows. */
            rc = parse_u32(optarg, &o->model.start_orders);
            if (rc == 0 && (o->model.start_orders == 0 || o->model.start_orders > 100000))
                rc = -EINVAL;
            if (rc == 0 && o->model.max_orders < 4 * o->model.start_orders)
                o->model.max_orders = 4 * o->model.start_orders;
            break;
        case OPT_GLIMPSE:
            o->glimpse_addr = optarg;
            break;
        case OPT_GLIMPSE_AT:
            rc = parse_u64(optarg, &o->glimpse_at);
            break;
        case OPT_GLIMPSE_FILE:
            o->glimpse_file = optarg;
            break;
        case OPT_GLIMPSE_USER:
            o->glimpse_user = optarg;
            rc = strlen(optarg) <= 6 ? 0 : -EINVAL;
            break;
        case OPT_GLIMPSE_PASSWORD:
            o->glimpse_password = optarg;
            rc = strlen(optarg) <= 10 ? 0 : -EINVAL;
            break;
        case OPT_GLIMPSE_SERVE_MS:
            rc = parse_u64(optarg, &o->glimpse_serve_ms);
            break;
        case OPT_GLIMPSE_REFUSE:
            rc = parse_u32(optarg, &o->glimpse_faults.refuse);
            break;
        case OPT_GLIMPSE_DROPS:
            rc = parse_u32(optarg, &o->glimpse_faults.drops);
            break;
        case OPT_GLIMPSE_DROP_AFTER:
            rc = parse_u64(optarg, &o->glimpse_faults.drop_after);
            break;
        case OPT_GLIMPSE_PAUSE_US:
            rc = parse_u32(optarg, &o->glimpse_faults.pause_us);
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
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

/* Output chain shared by both venues: faults -> pcap and/or live sockets. */
struct outputs {
    struct tp_sim_pcap_out pcap;
    struct tp_sim_live_out live;
    int has_pcap, has_live;
    struct tp_sim_faults faults;
};

static int outputs_packet(void *ctx, const struct tp_sim_packet *p)
{
    struct outputs *out = ctx;
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

static int outputs_open(struct outputs *out, struct options *o, enum tp_sim_venue venue,
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

static int outputs_close(struct outputs *out)
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

/* Sends each ITCH message to the BinaryFILE and the MoldUDP64 packetizer, whichever exist. */
struct itch_tee {
    struct tp_sim_binaryfile *binaryfile;
    struct tp_sim_mold_out *mold;
    /* GLIMPSE: the snapshot is taken at the first step end where the feed reached glimpse_at */
    const struct tp_sim_model *model;
    uint64_t glimpse_at; /* 0: no snapshot */
    struct tp_sim_glimpse *glimpse;
    int glimpse_taken;
};

/* The sequence number the feed's next message gets (BinaryFILE alone: its message count + 1). */
static uint64_t itch_tee_next_seq(const struct itch_tee *t)
{
    return t->mold != NULL ? t->mold->next_seq : t->binaryfile->messages + 1;
}

static int itch_tee_step_done(void *ctx)
{
    struct itch_tee *t = ctx;
    if (t->glimpse_at == 0 || t->glimpse_taken || itch_tee_next_seq(t) < t->glimpse_at)
        return 0;
    t->glimpse_taken = 1;
    return tp_sim_glimpse_build(t->glimpse, t->model, itch_tee_next_seq(t));
}

static int itch_tee_message(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns)
{
    struct itch_tee *t = ctx;
    int rc = 0;
    if (t->binaryfile != NULL)
        rc = tp_sim_binaryfile_message(t->binaryfile, msg, len, time_ns);
    if (rc == 0 && t->mold != NULL)
        rc = tp_sim_mold_message(t->mold, msg, len, time_ns);
    return rc;
}

static int open_rerequest(const struct options *o, struct tp_sim_rerequest_server *srv,
                          struct tp_sim_mold_store *store)
{
    struct tp_sim_endpoint where;
    int rc = tp_sim_endpoint_parse(o->rerequest_addr, &where);
    if (rc == 0)
        rc = tp_sim_mold_store_init(store, o->rerequest_window,
                                    o->packet_bytes ? o->packet_bytes : 1400);
    if (rc == 0)
        rc = tp_sim_rerequest_open(srv, store, where.group, where.port);
    if (rc == 0)
        fprintf(stderr, "tickplane-sim: re-request server on %s port %u\n", o->rerequest_addr,
                tp_sim_rerequest_port(srv));
    return rc;
}

/* The GLIMPSE snapshot and its server (served from main once the other files are written). */
static struct tp_sim_glimpse glimpse_snapshot;
static struct tp_sim_glimpse_server glimpse_server = {.fd = -1};

/* Records and/or opens the server for the snapshot taken; reports both. */
static int glimpse_report(const struct options *o, json_t *report)
{
    int rc = 0;
    if (o->glimpse_file != NULL) {
        rc = tp_sim_glimpse_write(&glimpse_snapshot, o->glimpse_file);
        if (rc < 0)
            fprintf(stderr, "tickplane-sim: %s: %s\n", o->glimpse_file, strerror(-rc));
    }
    if (rc == 0 && o->glimpse_addr != NULL) {
        struct tp_sim_endpoint where;
        rc = tp_sim_endpoint_parse(o->glimpse_addr, &where);
        if (rc == 0)
            rc = tp_sim_glimpse_open(&glimpse_server, &glimpse_snapshot, where.group, where.port,
                                     o->glimpse_user, o->glimpse_password, &o->glimpse_faults);
        if (rc < 0)
            fprintf(stderr, "tickplane-sim: GLIMPSE server %s: %s\n", o->glimpse_addr,
                    strerror(-rc));
    }
    json_object_set_new(report, "glimpse",
                        json_pack("{s:I,s:I,s:I}", "next_seq",
                                  (json_int_t)glimpse_snapshot.next_seq, "messages",
                                  (json_int_t)glimpse_snapshot.messages, "live_orders",
                                  (json_int_t)glimpse_snapshot.live_orders));
    return rc;
}

/* Serves the snapshot for --glimpse-serve-ms and prints what the server did. */
static void glimpse_serve(const struct options *o)
{
    if (glimpse_server.fd < 0)
        return;
    fprintf(stderr, "tickplane-sim: GLIMPSE server on %s port %u serving (next_seq %llu)\n",
            o->glimpse_addr, tp_sim_glimpse_port(&glimpse_server),
            (unsigned long long)glimpse_snapshot.next_seq);
    tp_sim_glimpse_serve(&glimpse_server, o->glimpse_serve_ms);
    fprintf(stderr, "tickplane-sim: GLIMPSE logins %llu refused %llu dropped %llu served %llu\n",
            (unsigned long long)glimpse_server.logins, (unsigned long long)glimpse_server.refused,
            (unsigned long long)glimpse_server.dropped, (unsigned long long)glimpse_server.served);
    tp_sim_glimpse_close(&glimpse_server);
}

static int run_itch(struct options *o, struct tp_sim_model *m, json_t *report)
{
    struct tp_sim_binaryfile bf;
    struct tp_sim_mold_store store;
    struct tp_sim_rerequest_server srv = {.fd = -1};
    struct tp_sim_mold_out mold;
    struct outputs out;
    struct itch_tee tee = {0};
    int packets = o->pcap_path != NULL || o->live;
    int rc = 0;

    if (o->binaryfile_path == NULL && !packets) {
        fprintf(stderr, "tickplane-sim itch: nothing to write (--binaryfile, --pcap, --live)\n");
        return -EINVAL;
    }
    if (o->rerequest_addr != NULL) {
        rc = open_rerequest(o, &srv, &store);
        if (rc < 0) {
            fprintf(stderr, "tickplane-sim: re-request server %s: %s\n", o->rerequest_addr,
                    strerror(-rc));
            return rc;
        }
    }
    if (o->binaryfile_path != NULL) {
        rc = tp_sim_binaryfile_open(&bf, o->binaryfile_path);
        if (rc < 0) {
            fprintf(stderr, "tickplane-sim: %s: %s\n", o->binaryfile_path, strerror(-rc));
            return rc;
        }
        tee.binaryfile = &bf;
    }
    if (packets) {
        o->faults.heartbeat = tp_sim_mold_heartbeat;
        rc = outputs_open(&out, o, TP_SIM_VENUE_ITCH, srv.fd >= 0 ? &srv : NULL);
        struct tp_sim_mold_params mp;
        tp_sim_mold_params_default(&mp);
        mp.reset_at_message = o->seq_reset_at;
        if (o->packet_bytes > 0)
            tp_sim_mold_params_fill(&mp, o->packet_bytes);
        struct tp_sim_packet_sink to_faults = {.packet = faults_packet, .ctx = &out.faults};
        if (rc == 0)
            rc = tp_sim_mold_init(&mold, &mp, &to_faults, srv.fd >= 0 ? &store : NULL);
        if (rc < 0)
            return rc;
        tee.mold = &mold;
    }

    struct tp_sim_msg_sink sink = {
        .message = itch_tee_message, .step_done = itch_tee_step_done, .ctx = &tee};
    tee.model = m;
    tee.glimpse = &glimpse_snapshot;
    tee.glimpse_at = o->glimpse_addr != NULL || o->glimpse_file != NULL
                         ? (o->glimpse_at > 0 ? o->glimpse_at : 1)
                         : 0;
    rc = tp_sim_itch_run(m, o->messages, &sink);
    /* A sequence past the end of the feed: the snapshot of the end of the day. */
    if (rc == 0 && tee.glimpse_at > 0 && !tee.glimpse_taken) {
        tee.glimpse_taken = 1;
        rc = tp_sim_glimpse_build(&glimpse_snapshot, m, itch_tee_next_seq(&tee));
    }
    if (rc == 0 && tee.glimpse_taken)
        rc = glimpse_report(o, report);
    if (tee.binaryfile != NULL) {
        int close_rc = tp_sim_binaryfile_close(&bf);
        rc = rc < 0 ? rc : close_rc;
        fprintf(stderr, "tickplane-sim: %llu ITCH messages in %s\n", bf.messages,
                o->binaryfile_path);
        json_object_set_new(report, "binaryfile_messages", json_integer((json_int_t)bf.messages));
    }
    if (packets) {
        if (rc == 0)
            rc = tp_sim_mold_finish(&mold);
        int close_rc = outputs_close(&out);
        rc = rc < 0 ? rc : close_rc;
        json_object_set_new(report, "mold",
                            json_pack("{s:I,s:I,s:I,s:I}", "messages", (json_int_t)mold.messages,
                                      "packets", (json_int_t)mold.packets, "sessions",
                                      (json_int_t)mold.sessions, "reset_at_seq",
                                      (json_int_t)mold.reset_at_seq));
        json_object_set_new(report, "lines", tp_sim_faults_report(&out.faults));
        if (out.has_pcap)
            fprintf(stderr, "tickplane-sim: %llu frames in %s\n",
                    (unsigned long long)out.pcap.frames, o->pcap_path);
        tp_sim_faults_free(&out.faults);
    }
    if (srv.fd >= 0) {
        if (o->linger_ms > 0)
            tp_sim_rerequest_linger(&srv, (int)o->linger_ms);
        json_object_set_new(report, "rerequest",
                            json_pack("{s:I,s:I,s:I}", "window", (json_int_t)store.window,
                                      "answered", (json_int_t)store.answered, "refused",
                                      (json_int_t)store.refused));
        tp_sim_rerequest_close(&srv);
        tp_sim_mold_store_free(&store);
    }
    return rc;
}

static int run_mdp3(struct options *o, struct tp_sim_model *m, json_t *report)
{
    if (o->pcap_path == NULL && !o->live) {
        fprintf(stderr, "tickplane-sim mdp3: nothing to write (--pcap, --live)\n");
        return -EINVAL;
    }
    if (o->mdp3.unseen_events > 0 && o->mdp3.unseen_id >= m->params.instruments) {
        fprintf(stderr, "tickplane-sim mdp3: --unseen-levels: no instrument %u (--symbols %u)\n",
                o->mdp3.unseen_id, m->params.instruments);
        return -EINVAL;
    }
    struct outputs out;
    o->faults.heartbeat = tp_sim_mdp3_heartbeat;
    int rc = outputs_open(&out, o, TP_SIM_VENUE_MDP3, NULL);
    if (rc < 0)
        return rc;
    struct tp_sim_mdp3_feed feed;
    struct tp_sim_packet_sink to_faults = {.packet = faults_packet, .ctx = &out.faults};
    o->mdp3.depth = o->depth;
    o->mdp3.reset_at_message = o->seq_reset_at;
    if (o->packet_bytes > 0) {
        o->mdp3.max_payload = o->packet_bytes;
        o->mdp3.pack_window_ns = TP_SIM_PACK_FILL;
    }
    rc = tp_sim_mdp3_init(&feed, m, &o->mdp3, &to_faults);
    if (rc == -EINVAL)
        fprintf(stderr, "tickplane-sim mdp3: --depth must be %d..%d\n", TP_SIM_IMPLIED_DEPTH,
                TP_SIM_MDP3_MAX_DEPTH);
    if (rc == 0)
        rc = tp_sim_mdp3_run(&feed, o->messages);
    int close_rc = outputs_close(&out);
    rc = rc < 0 ? rc : close_rc;
    json_object_set_new(report, "mdp3", tp_sim_mdp3_report(&feed));
    json_object_set_new(report, "lines", tp_sim_faults_report(&out.faults));
    if (out.has_pcap)
        fprintf(stderr, "tickplane-sim: %llu frames in %s\n", (unsigned long long)out.pcap.frames,
                o->pcap_path);
    tp_sim_faults_free(&out.faults);
    tp_sim_mdp3_free(&feed);
    return rc;
}

static int run_eobi(struct options *o, struct tp_sim_model *m, json_t *report)
{
    if (o->pcap_path == NULL && !o->live) {
        fprintf(stderr, "tickplane-sim eobi: nothing to write (--pcap, --live)\n");
        return -EINVAL;
    }
    struct outputs out;
    o->faults.heartbeat = tp_sim_eobi_heartbeat;
    int rc = outputs_open(&out, o, TP_SIM_VENUE_EOBI, NULL);
    if (rc < 0)
        return rc;
    struct tp_sim_eobi_feed feed;
    struct tp_sim_packet_sink to_faults = {.packet = faults_packet, .ctx = &out.faults};
    o->eobi.midnight_epoch_ns = o->endpoints.midnight_epoch_ns;
    rc = tp_sim_eobi_init(&feed, m, &o->eobi, &to_faults);
    if (rc == -EINVAL)
        fprintf(stderr, "tickplane-sim eobi: --segments must be 1..64\n");
    if (rc == 0)
        rc = tp_sim_eobi_run(&feed, o->messages);
    int close_rc = outputs_close(&out);
    rc = rc < 0 ? rc : close_rc;
    json_object_set_new(report, "eobi", tp_sim_eobi_report(&feed));
    json_object_set_new(report, "lines", tp_sim_faults_report(&out.faults));
    if (out.has_pcap)
        fprintf(stderr, "tickplane-sim: %llu frames in %s\n", (unsigned long long)out.pcap.frames,
                o->pcap_path);
    tp_sim_faults_free(&out.faults);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o;
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
                  "protocol", o.protocol, "seed", (json_int_t)o.model.seed, "instruments",
                  (json_int_t)o.model.instruments, "messages_requested", (json_int_t)o.messages);
    rc = strcmp(o.protocol, "itch") == 0   ? run_itch(&o, &m, report)
         : strcmp(o.protocol, "eobi") == 0 ? run_eobi(&o, &m, report)
                                           : run_mdp3(&o, &m, report);
    json_object_set_new(report, "events", json_integer((json_int_t)m.events_total));
    /* What a book builder holds at the end: the daemon's dp.books.live_orders after the run. */
    uint64_t live_orders = 0;
    for (uint32_t id = 0; id < m.params.instruments; id++)
        live_orders += m.instruments[id].n_orders;
    json_object_set_new(report, "live_orders", json_integer((json_int_t)live_orders));
    if (o.packet_bytes > 0) /* absent by default: the default report stays as it was */
        json_object_set_new(report, "packet_bytes", json_integer(o.packet_bytes));
    if (rc == 0 && o.truth_path != NULL) {
        uint32_t implied = strcmp(o.protocol, "mdp3") == 0 ? TP_SIM_IMPLIED_DEPTH : 0;
        rc = tp_sim_truth_write(&m, o.depth, implied, o.truth_path);
        if (rc < 0)
            fprintf(stderr, "tickplane-sim: %s: %s\n", o.truth_path, strerror(-rc));
    }
    if (rc == 0 && o.report_path != NULL && json_dump_file(report, o.report_path, JSON_INDENT(1)))
        rc = -EIO;
    json_decref(report);
    if (rc == 0)
        glimpse_serve(&o);
    tp_sim_glimpse_free(&glimpse_snapshot);
    tp_sim_model_free(&m);
    return rc == 0 ? 0 : 1;
}
