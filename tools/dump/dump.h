/*
 * dump.h - tickplane-dump internals: the output context shared by the venues' printers
 * (dump_venue.h).
 *
 * Every decoded message becomes one JSON line on stdout carrying where it came from (pcap frame
 * number, capture time, flow; or the BinaryFILE offset) and the protocol's sequence fields.
 * Malformed input becomes one line on stderr with the frame and the byte offset inside it, is
 * counted, and the dump carries on with the next packet.
 */
#ifndef TP_DUMP_H
#define TP_DUMP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dump_venue.h"
#include "net_parse.h"

struct dump_out {
    FILE *out;
    FILE *err;
    char *json; /* message JSON buffer, grown when a message needs more */
    size_t json_cap;
    uint64_t frames;    /* pcap frames read */
    uint64_t messages;  /* message lines printed */
    uint64_t malformed; /* malformed frames, packets or messages reported */
    uint64_t skipped;   /* frames that are not UDP over IPv4, or on no mapped flow */
    uint64_t tcp;       /* of those, TCP segments (a TCP-based feed is not decoded) */
};

/* Where a payload came from. */
struct dump_source {
    uint64_t frame;                /* 1-based pcap frame number; 0 for a BinaryFILE */
    uint64_t ts_ns;                /* capture time, ns since the epoch */
    const struct tp_udp_view *udp; /* NULL for a BinaryFILE */
    size_t payload_offset;         /* offset of the payload in the frame (or file) */
};

/* Starts a message line: `{"frame":..,"ts_ns":..,"src":..,"dst":..,"vlan":..,"proto":..`. */
void dump_line_start(struct dump_out *d, const struct dump_source *s,
                     const struct dump_venue *venue);

/* Reports malformed input at byte offset (in the frame, or the file) and counts it. */
void dump_malformed(struct dump_out *d, const struct dump_source *s, size_t offset, const char *fmt,
                    ...) __attribute__((format(printf, 4, 5)));

/* Makes sure the JSON buffer holds need + 1 bytes; 0 or -ENOMEM. */
int dump_json_reserve(struct dump_out *d, size_t need);

/* Writes len bytes as a JSON string, without trailing spaces and NULs. */
void dump_json_string(FILE *f, const uint8_t *p, size_t len);

#endif /* TP_DUMP_H */
