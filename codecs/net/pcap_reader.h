/*
 * pcap_reader.h - reading pcap and pcapng files without libpcap.
 *
 * For code that must not link libpcap or DPDK: control/config's check of a preloaded capture
 * (built into fuzz targets) and dataplane/ports/preload.c, which both scan the same file and must
 * see the same frames; and for tickplane-dump and bench_pipeline, so that no tool links libpcap
 * either. Uses stdio on a stream the caller opened (fopen, or fmemopen for bytes in memory) and
 * closes. Start-up and tools only.
 *
 * Promises:
 *  - The file header is one of the four classic ones: microsecond (0xa1b2c3d4) or nanosecond
 *    (0xa1b23c4d) stamps, written in either byte order, version 2.4; or a pcapng section header
 *    (version 1.x, either byte order: what tshark and dumpcap write by default). Anything else is
 *    refused with its reason; versions 2.0-2.3 (which keep the two lengths in the other order)
 *    are refused rather than misread.
 *  - pcapng: the packets of enhanced, simple and (obsolete) packet blocks, in file order; every
 *    other block is skipped. Each interface's timestamp resolution (if_tsresol) is applied; a
 *    simple packet block has no timestamp (0). Open reads up to the first interface block, whose
 *    link type is the file's: an interface of another link type (TP_PCAP_ELINK), a packet of an
 *    interface not described (TP_PCAP_EINTERFACE), a block whose lengths do not hold together or
 *    a section of another major version (TP_PCAP_EBLOCK) are refused. Several sections follow
 *    one another (their interfaces numbered anew).
 *  - tp_pcap_reader_next gives every record in file order with its captured length and its
 *    bytes, having read the whole record: a file that ends inside a record header or inside a
 *    frame is refused as truncated, never given short. The clean end is TP_PCAP_END, or
 *    TP_PCAP_EEMPTY when the file had no record at all.
 *  - A record whose captured length is above max_frame, and the record after max_frames, are
 *    refused before anything of them is read: the reader never holds more than max_frame bytes,
 *    whatever the file says.
 *  - After a refusal every further call gives the same status.
 *  - Each record's timestamp is given in nanoseconds since the epoch: a microsecond file's
 *    fraction times 1000, as libpcap gives it at nanosecond precision. The file header's link
 *    type is kept as written; original lengths and the snapshot length are not interpreted.
 */
#ifndef TP_PCAP_READER_H
#define TP_PCAP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What tp_pcap_reader_open and tp_pcap_reader_next return. */
enum tp_pcap_status {
    TP_PCAP_OK = 0,           /* a record (next), a classic pcap file header (open) */
    TP_PCAP_END = 1,          /* no more records, after at least one */
    TP_PCAP_EIO = -1,         /* the stream could not be read (the errno is kept) */
    TP_PCAP_ENOMEM = -2,      /* no memory for a frame of max_frame bytes */
    TP_PCAP_EHEADER = -3,     /* shorter than a file header */
    TP_PCAP_EBLOCK = -4,      /* a pcapng block that is not one (lengths, version) */
    TP_PCAP_EMAGIC = -5,      /* not a pcap file */
    TP_PCAP_EVERSION = -6,    /* a classic pcap file of a version other than 2.4 */
    TP_PCAP_ERECORD = -7,     /* ends inside a record header */
    TP_PCAP_EFRAME = -8,      /* ends inside a frame */
    TP_PCAP_ETOO_LARGE = -9,  /* a frame above max_frame */
    TP_PCAP_ETOO_MANY = -10,  /* more than max_frames records */
    TP_PCAP_EEMPTY = -11,     /* no record */
    TP_PCAP_EINTERFACE = -12, /* pcapng: a packet of an interface not described, or too many */
    TP_PCAP_ELINK = -13,      /* pcapng: interfaces of different link types */
};

#define TP_PCAP_INTERFACES_MAX 64

/* pcapng: what an interface description block says. */
struct tp_pcapng_interface {
    uint32_t link_type;
    uint32_t snaplen;
    uint64_t units_per_s; /* timestamp resolution (if_tsresol; 10^6 by default) */
};

struct tp_pcap_reader {
    FILE *file;
    const uint8_t *mem; /* tp_pcap_reader_open_memory: the capture, records point into it */
    size_t mem_len, mem_pos;
    uint8_t *frame; /* max_frame bytes: the current record's */
    uint32_t max_frame;
    uint32_t max_frames;
    uint32_t frames; /* records given so far */
    bool big_endian; /* the file's byte order (the writer host's) */
    bool nanoseconds;
    uint32_t link_type; /* the file header's, as written (LINKTYPE_ETHERNET is 1) */
    int status;         /* TP_PCAP_OK, or the refusal every later call repeats */
    uint32_t caplen;    /* the last record's (the refused one's after EFRAME or ETOO_LARGE) */
    size_t got;         /* bytes of a header or frame found before EHEADER, ERECORD or EFRAME */
    uint16_t version_major, version_minor; /* after EVERSION */
    int err_no;                            /* after EIO */
    bool pcapng;
    bool link_known;                /* pcapng: an interface block was read */
    uint32_t block_type, block_len; /* pcapng: the last block's (the refused one's) */
    uint32_t n_interfaces;          /* of the current section */
    struct tp_pcapng_interface interfaces[TP_PCAP_INTERFACES_MAX];
};

/* One record: valid until the next call to tp_pcap_reader_next or tp_pcap_reader_close (read
 * from memory: as long as the memory). */
struct tp_pcap_record {
    uint64_t ts_ns; /* the capture time, ns since the epoch */
    uint32_t caplen;
    const uint8_t *data;
};

/*
 * Reads and checks the file header of f (at its start), frames of at most max_frame bytes and at
 * most max_frames of them. TP_PCAP_OK or a refusal; either way tp_pcap_reader_close after.
 */
int tp_pcap_reader_open(struct tp_pcap_reader *r, FILE *f, uint32_t max_frame, uint32_t max_frames);

/*
 * The same over a capture in memory (a mapped file): nothing is copied, each record's data
 * points into it and stays valid as long as the memory does (what a caller that holds frames,
 * such as an arbiter holding packets behind a gap, needs). max_frame still bounds a frame.
 */
int tp_pcap_reader_open_memory(struct tp_pcap_reader *r, const void *data, size_t len,
                               uint32_t max_frame, uint32_t max_frames);

/* Bytes of the capture read so far (where the next record starts). */
size_t tp_pcap_reader_offset(const struct tp_pcap_reader *r);

/* The next record: TP_PCAP_OK with *rec filled, TP_PCAP_END, or a refusal. */
int tp_pcap_reader_next(struct tp_pcap_reader *r, struct tp_pcap_record *rec);

/* Frees the frame buffer; the stream stays open (it is the caller's). */
void tp_pcap_reader_close(struct tp_pcap_reader *r);

/*
 * Why the reader stopped, as a sentence without a subject ("truncated: ..."), with the numbers
 * involved (the record, its length, the limit); "ok" or "at the end" otherwise. Returns buf.
 */
const char *tp_pcap_reader_why(const struct tp_pcap_reader *r, char *buf, size_t len);

#endif /* TP_PCAP_READER_H */
