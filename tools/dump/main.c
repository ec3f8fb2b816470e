/*
 * tickplane-dump - prints every market-data message of a capture as JSON lines.
 *
 *   tickplane-dump [--proto VENUE] [--map IP:PORT[@VLAN]=VENUE,...] [VENUE OPTIONS] CAPTURE.pcap
 *   tickplane-dump --FILE-FLAG FILE      (a venue's own file format: --binaryfile, ITCH)
 *
 * The capture is a pcap or pcapng file of Ethernet frames, read with codecs/net's pcap_reader. A
 * frame's UDP flow picks the venue (dump_venue.h) from the map first, then from --proto; frames on
 * other flows, and frames that are not UDP over IPv4, are skipped (TCP segments are counted on
 * stderr, so that a capture of a TCP feed does not look empty). Malformed input (a cut record
 * included) is reported on stderr with its frame and byte offset and the dump carries on. Exit
 * status: 0 when all input was well formed, 1 when anything was malformed, 2 for usage or I/O
 * errors and captures the reader refuses (not pcap or pcapng, not Ethernet).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "flow_map.h"
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

/* getopt_long's number of a venue's option: this + its index in struct venue_options. */
#define OPT_VENUE_OPTION  256
#define VENUE_OPTIONS_MAX 32

/* The venues' options in one list, as getopt_long numbers them. */
struct venue_options {
    const struct tool_venue_option *option[VENUE_OPTIONS_MAX];
    const struct dump_venue_file *file[VENUE_OPTIONS_MAX];
    unsigned n_options, n_files;
};

static void collect_venue_options(struct venue_options *v)
{
    for (const struct dump_venue *const *venue = dump_venues; *venue != NULL; venue++) {
        for (unsigned i = 0; i < (*venue)->n_options && v->n_options < VENUE_OPTIONS_MAX; i++)
            v->option[v->n_options++] = &(*venue)->options[i];
        if ((*venue)->file != NULL && v->n_files < VENUE_OPTIONS_MAX)
            v->file[v->n_files++] = (*venue)->file;
    }
}

/* The venue's file whose flag is letter into *file: 0, or -ENOENT when no venue's is. */
static int venue_file(const struct venue_options *v, int letter,
                      const struct dump_venue_file **file)
{
    for (unsigned i = 0; i < v->n_files; i++)
        if (v->file[i]->letter == letter) {
            *file = v->file[i];
            return 0;
        }
    return -ENOENT;
}

static void usage(FILE *f, const struct venue_options *v)
{
    fprintf(f, "usage: tickplane-dump [--proto %s] [--map IP:PORT[@VLAN]=PROTO,...]",
            dump_venue_names());
    for (unsigned i = 0; i < v->n_options; i++)
        fprintf(f, " [--%s %s]", v->option[i]->name, v->option[i]->arg);
    fprintf(f, " [--summary] CAPTURE.pcap\n");
    for (unsigned i = 0; i < v->n_files; i++)
        fprintf(f, "       tickplane-dump --%s %s [--summary]\n", v->file[i]->flag,
                v->file[i]->usage);
    fprintf(f, "       tickplane-dump --version\n");
}

static void dump_frame(struct dump_out *d, const struct flow_map *map,
                       const struct dump_venue *fallback, uint64_t number, uint64_t ts_ns,
                       const uint8_t *frame, size_t len)
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
    const struct dump_venue *venue = flow_map_lookup(map, &udp.key);
    if (venue == NULL)
        venue = fallback;
    s.udp = &udp;
    s.payload_offset = (size_t)(udp.payload - frame);
    if (venue != NULL)
        venue->packet(d, &s, udp.payload, udp.payload_len);
    else
        d->skipped++;
}

/* 0, or -errno when the capture cannot be opened or is refused (reported here). */
static int dump_pcap(struct dump_out *d, const char *path, const struct flow_map *map,
                     const struct dump_venue *fallback)
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
    /* The options every venue shares; the venues' own follow them. */
    static const struct option shared_options[] = {
        {"proto", required_argument, NULL, 'p'}, {"map", required_argument, NULL, 'm'},
        {"summary", no_argument, NULL, 's'},     {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
    };
    enum { N_SHARED = sizeof(shared_options) / sizeof(shared_options[0]) };
    struct venue_options venue = {0};
    collect_venue_options(&venue);
    struct option options[N_SHARED + 2 * VENUE_OPTIONS_MAX + 1];
    char letters[16 + VENUE_OPTIONS_MAX] = "p:m:sh";
    unsigned n = N_SHARED;
    memcpy(options, shared_options, sizeof(shared_options));
    for (unsigned i = 0; i < venue.n_options; i++)
        options[n++] = (struct option){venue.option[i]->name, required_argument, NULL,
                                       OPT_VENUE_OPTION + (int)i};
    for (unsigned i = 0; i < venue.n_files; i++) {
        options[n++] =
            (struct option){venue.file[i]->flag, no_argument, NULL, venue.file[i]->letter};
        letters[strlen(letters)] = (char)venue.file[i]->letter;
    }
    options[n] = (struct option){NULL, 0, NULL, 0};

    struct flow_map map = {0};
    const struct dump_venue *fallback = NULL;
    const struct dump_venue_file *file = NULL;
    int summary = 0, opt;
    char err[256];
    while ((opt = getopt_long(argc, argv, letters, options, NULL)) != -1) {
        switch (opt) {
        case 'p':
            fallback = dump_venue_find(optarg);
            if (fallback == NULL) {
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
        case 's':
            summary = 1;
            break;
        case 'h':
            usage(stdout, &venue);
            return 0;
        case 'V':
            tp_version_print(stdout, "tickplane-dump");
            return 0;
        default:
            if (opt >= OPT_VENUE_OPTION && opt < OPT_VENUE_OPTION + (int)venue.n_options) {
                if (venue.option[opt - OPT_VENUE_OPTION]->set(optarg, err, sizeof(err)) < 0) {
                    fprintf(stderr, "tickplane-dump: %s\n", err);
                    return EXIT_USAGE;
                }
                break;
            }
            if (venue_file(&venue, opt, &file) == 0)
                break;
            usage(stderr, &venue);
            return EXIT_USAGE;
        }
    }
    if (optind != argc - 1 || (file == NULL && fallback == NULL && map.count == 0)) {
        if (optind == argc - 1)
            fprintf(stderr, "tickplane-dump: say which protocol: --proto or --map\n");
        usage(stderr, &venue);
        return EXIT_USAGE;
    }

    struct dump_out d = {.out = stdout, .err = stderr};
    if (dump_json_reserve(&d, 64 * 1024) < 0)
        return EXIT_USAGE;
    const char *path = argv[optind];
    int rc = file != NULL ? file->read(&d, path) : dump_pcap(&d, path, &map, fallback);
    if (rc < 0 && file != NULL)
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
