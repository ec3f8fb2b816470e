/*
 * tickplane-dump - prints every market-data message of a capture as JSON lines.
 *
 *   tickplane-dump [--proto mdp3|itch|eobi] [--map IP:PORT[@VLAN]=PROTO,...]
 *                  [--eobi-release 6.0|7.0] CAPTURE.pcap
 *   tickplane-dump --binaryfile ITCH-FILE
 *
 * The capture is a pcap or pcapng file of Ethernet frames, read with codecs/net's pcap_reader. A
 * frame's UDP flow picks the protocol from the map first, then from --proto; frames on other
 * flows, and frames that are not UDP over IPv4, are skipped (TCP segments are counted on stderr,
 * so that a capture of a TCP feed does not look empty). Malformed input (a cut record
 * included) is reported on stderr with its frame and byte offset and the dump carries on. Exit
 * status: 0 when all input was well formed, 1 when anything was malformed, 2 for usage or I/O
 * errors and captures the reader refuses (not pcap or pcapng, not Ethernet). EOBI payloads are
 * read in the layouts of the T7 release --eobi-release names (default: the build's
 * -Deobi_release); a packet that fits only the other release's layouts is reported malformed.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "eobi_release.h"
#include "pcap_reader.h"
#include "tp_version.h"

#define EXIT_MALFORMED 1
#define EXIT_USAGE     2

/* libpcap's largest snapshot length (MAXIMUM_SNAPLEN): every capture it read is read whole. The
 * reader holds one frame at a time, and counts them in 32 bits. */
#define PCAP_FRAME_MAX  262144
#define PCAP_FRAMES_MAX UINT32_MAX
/* The link-layer type is the header field's low 16 bits (libpcap's LT_LINKTYPE: the upper ones
 * may give an FCS length). */
#define LINKTYPE_ETHERNET 1

static void usage(FILE *f)
{
    fprintf(f, "usage: tickplane-dump [--proto mdp3|itch|eobi] [--map IP:PORT[@VLAN]=PROTO,...]"
               " [--eobi-release 6.0|7.0] [--summary] CAPTURE.pcap\n"
               "       tickplane-dump --binaryfile ITCH-BINARYFILE [--summary]\n"
               "       tickplane-dump --version\n");
}

static void dump_frame(struct dump_out *d, const struct flow_map *map, enum dump_proto fallback,
                       uint64_t number, uint64_t ts_ns, const uint8_t *frame, size_t len)
{
    struct tp_udp_view udp;
    struct dump_source s = {.frame = number, .ts_ns = ts_ns, .udp = NULL};
    int rc = tp_net_parse_udp(frame, len, 0, &udp);
    if (rc == TP_NET_ENOTIPV4 || rc == TP_NET_ENOTUDP) {
        d->skipped++;
        d->tcp += rc == TP_NET_ENOTUDP && frame[udp.ip_offset + 9] == IPPROTO_TCP;
        return;
    }
    if (rc < 0) {
        dump_malformed(d, &s, 0, "%s (%zu bytes)", tp_net_strerror(rc), len);
        return;
    }
    enum dump_proto proto = flow_map_lookup(map, &udp.key);
    if (proto == DUMP_PROTO_NONE)
        proto = fallback;
    s.udp = &udp;
    s.payload_offset = (size_t)(udp.payload - frame);
    if (proto == DUMP_PROTO_ITCH)
        dump_itch_packet(d, &s, udp.payload, udp.payload_len);
    else if (proto == DUMP_PROTO_MDP3)
        dump_mdp3_packet(d, &s, udp.payload, udp.payload_len);
    else if (proto == DUMP_PROTO_EOBI)
        dump_eobi_packet(d, &s, udp.payload, udp.payload_len);
    else
        d->skipped++;
}

/* 0, or -errno when the capture cannot be opened or is refused (reported here). */
static int dump_pcap(struct dump_out *d, const char *path, const struct flow_map *map,
                     enum dump_proto fallback)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        int rc = -errno;
        fprintf(stderr, "tickplane-dump: %s: %s\n", path, strerror(-rc));
        return rc;
    }
    struct tp_pcap_reader r;
    struct tp_pcap_record rec;
    char why[160];
    int rc = -EINVAL, st = tp_pcap_reader_open(&r, f, PCAP_FRAME_MAX, PCAP_FRAMES_MAX);
    if (st != TP_PCAP_OK) {
        fprintf(stderr, "tickplane-dump: %s: %s\n", path, tp_pcap_reader_why(&r, why, sizeof(why)));
    } else if ((r.link_type & 0xffff) != LINKTYPE_ETHERNET) {
        fprintf(stderr, "tickplane-dump: %s: not an Ethernet capture\n", path);
    } else {
        while ((st = tp_pcap_reader_next(&r, &rec)) == TP_PCAP_OK) {
            d->frames++;
            dump_frame(d, map, fallback, d->frames, rec.ts_ns, rec.data, rec.caplen);
        }
        /* A capture without frames dumps nothing; a cut or oversized record is malformed. */
        if (st != TP_PCAP_END && st != TP_PCAP_EEMPTY)
            dump_malformed(d, &(struct dump_source){.frame = d->frames + 1}, 0, "%s: %s", path,
                           tp_pcap_reader_why(&r, why, sizeof(why)));
        rc = 0;
    }
    tp_pcap_reader_close(&r);
    fclose(f);
    return rc;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"proto", required_argument, NULL, 'p'},
        {"map", required_argument, NULL, 'm'},
        {"binaryfile", no_argument, NULL, 'b'},
        {"summary", no_argument, NULL, 's'},
        {"eobi-release", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    struct flow_map map = {0};
    enum dump_proto fallback = DUMP_PROTO_NONE;
    int binaryfile = 0, summary = 0, eobi_release = TP_EOBI_RELEASE_DEFAULT, opt;
    char err[256];
    while ((opt = getopt_long(argc, argv, "p:m:bsh", options, NULL)) != -1) {
        switch (opt) {
        case 'p':
            fallback = dump_proto_parse(optarg);
            if (fallback == DUMP_PROTO_NONE) {
                fprintf(stderr, "tickplane-dump: unknown protocol '%s'\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'm':
            if (flow_map_parse(&map, optarg, err, sizeof(err)) < 0) {
                fprintf(stderr, "tickplane-dump: %s\n", err);
                return EXIT_USAGE;
            }
            break;
        case 'b':
            binaryfile = 1;
            break;
        case 'r':
            eobi_release = tp_eobi_release_parse(optarg);
            if (eobi_release < 0) {
                fprintf(stderr, "tickplane-dump: unknown T7 release '%s' (known: %s)\n", optarg,
                        TP_EOBI_RELEASE_NAMES);
                return EXIT_USAGE;
            }
            break;
        case 's':
            summary = 1;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            tp_version_print(stdout, "tickplane-dump");
            return 0;
        default:
            usage(stderr);
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || (!binaryfile && fallback == DUMP_PROTO_NONE && map.count == 0)) {
        if (optind == argc - 1)
            fprintf(stderr, "tickplane-dump: say which protocol: --proto or --map\n");
        usage(stderr);
        return EXIT_USAGE;
    }

    struct dump_out d = {.out = stdout, .err = stderr, .eobi_release = (uint8_t)eobi_release};
    if (dump_json_reserve(&d, 64 * 1024) < 0)
        return EXIT_USAGE;
    const char *path = argv[optind];
    int rc = binaryfile ? dump_binaryfile(&d, path) : dump_pcap(&d, path, &map, fallback);
    if (rc < 0 && binaryfile)
        fprintf(stderr, "tickplane-dump: %s: %s\n", path, strerror(-rc));
    /* Never silent: a capture of a TCP feed (SoupBinTCP, a TCP snapshot) would print nothing. */
    if (d.tcp)
        fprintf(stderr, "tickplane-dump: %" PRIu64 " TCP segments skipped (UDP feeds only)\n",
                d.tcp);
    if (summary)
        fprintf(stderr,
                "tickplane-dump: %" PRIu64 " frames, %" PRIu64 " messages, %" PRIu64
                " malformed, %" PRIu64 " skipped\n",
                d.frames, d.messages, d.malformed, d.skipped);
    free(d.json);
    if (fflush(stdout) != 0 || rc < 0)
        return EXIT_USAGE;
    return d.malformed ? EXIT_MALFORMED : 0;
}
