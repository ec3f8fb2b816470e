/*
 * tickplane-sim: the exchange simulator. See tools/sim/README.md for the command line.
 *
 *   tickplane-sim itch --binaryfile F --messages N --symbols S --seed X --truth T.json
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binaryfile_out.h"
#include "itch_feed.h"
#include "model.h"
#include "truth.h"

struct options {
    const char *protocol;
    struct tp_sim_params model;
    uint64_t messages;
    uint32_t depth;
    const char *truth_path;
    const char *binaryfile_path;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tickplane-sim itch|mdp3 [options]\n"
                 "  --seed X            random seed (default 1)\n"
                 "  --symbols N         number of instruments (default 200)\n"
                 "  --messages N        order-flow messages to generate (default 10000)\n"
                 "  --zipf S            activity skew exponent (default 1.0)\n"
                 "  --depth D           price levels per side in the truth file (default 10)\n"
                 "  --truth F.json      write the final books (ground truth)\n"
                 "  --binaryfile F      itch: write Nasdaq BinaryFILE\n");
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

static int parse_options(int argc, char **argv, struct options *o)
{
    enum { OPT_SEED = 256, OPT_SYMBOLS, OPT_MESSAGES, OPT_ZIPF, OPT_DEPTH, OPT_TRUTH, OPT_BINFILE };
    static const struct option long_opts[] = {
        {"seed", required_argument, NULL, OPT_SEED},
        {"symbols", required_argument, NULL, OPT_SYMBOLS},
        {"instruments", required_argument, NULL, OPT_SYMBOLS},
        {"messages", required_argument, NULL, OPT_MESSAGES},
        {"zipf", required_argument, NULL, OPT_ZIPF},
        {"depth", required_argument, NULL, OPT_DEPTH},
        {"truth", required_argument, NULL, OPT_TRUTH},
        {"binaryfile", required_argument, NULL, OPT_BINFILE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    if (argc < 2 || (strcmp(argv[1], "itch") != 0 && strcmp(argv[1], "mdp3") != 0))
        return -EINVAL;
    o->protocol = argv[1];
    tp_sim_params_default(&o->model);
    o->messages = 10000;
    o->depth = 10;
    optind = 2;
    int c;
    while ((c = getopt_long(argc, argv, "h", long_opts, NULL)) != -1) {
        uint64_t v = 0;
        int rc = 0;
        switch (c) {
        case OPT_SEED:
            rc = parse_u64(optarg, &o->model.seed);
            break;
        case OPT_SYMBOLS:
            rc = parse_u64(optarg, &v);
            if (rc == 0 && (v == 0 || v > 100000))
                rc = -EINVAL;
            o->model.instruments = (uint32_t)v;
            break;
        case OPT_MESSAGES:
            rc = parse_u64(optarg, &o->messages);
            break;
        case OPT_ZIPF:
            o->model.zipf_s = strtod(optarg, NULL);
            break;
        case OPT_DEPTH:
            rc = parse_u64(optarg, &v);
            if (rc == 0 && (v == 0 || v > 1000))
                rc = -EINVAL;
            o->depth = (uint32_t)v;
            break;
        case OPT_TRUTH:
            o->truth_path = optarg;
            break;
        case OPT_BINFILE:
            o->binaryfile_path = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return -EINVAL;
        }
        if (rc < 0) {
            fprintf(stderr, "tickplane-sim: bad value for --%s: %s\n", long_opts[c - OPT_SEED].name,
                    optarg);
            return rc;
        }
    }
    return optind == argc ? 0 : -EINVAL;
}

static int run_itch(const struct options *o, struct tp_sim_model *m)
{
    struct tp_sim_binaryfile bf;
    if (o->binaryfile_path == NULL) {
        fprintf(stderr, "tickplane-sim itch: nothing to write (give --binaryfile)\n");
        return -EINVAL;
    }
    int rc = tp_sim_binaryfile_open(&bf, o->binaryfile_path);
    if (rc < 0) {
        fprintf(stderr, "tickplane-sim: %s: %s\n", o->binaryfile_path, strerror(-rc));
        return rc;
    }
    struct tp_sim_msg_sink sink = {.message = tp_sim_binaryfile_message, .ctx = &bf};
    rc = tp_sim_itch_run(m, o->messages, &sink);
    int close_rc = tp_sim_binaryfile_close(&bf);
    if (rc == 0)
        rc = close_rc;
    if (rc == 0)
        fprintf(stderr, "tickplane-sim: %llu ITCH messages (%llu order-flow events) in %s\n",
                bf.messages, (unsigned long long)m->events_total, o->binaryfile_path);
    return rc;
}

int main(int argc, char **argv)
{
    struct options o;
    memset(&o, 0, sizeof(o));
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
    rc = run_itch(&o, &m);
    if (rc == 0 && o.truth_path != NULL) {
        rc = tp_sim_truth_write(&m, o.depth, o.truth_path);
        if (rc < 0)
            fprintf(stderr, "tickplane-sim: %s: %s\n", o.truth_path, strerror(-rc));
    }
    tp_sim_model_free(&m);
    return rc == 0 ? 0 : 1;
}
