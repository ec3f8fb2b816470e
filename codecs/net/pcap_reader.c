/*
 * pcap_reader.c - classic pcap files read record by record: see pcap_reader.h. Fields are
 * decoded byte by byte in the file's order, so the host's order never matters.
 */
#include "pcap_reader.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define FILE_HEADER_BYTES   24
#define RECORD_HEADER_BYTES 16

static uint32_t load32(const uint8_t *p, bool big_endian)
{
    return big_endian ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                      : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static uint16_t load16(const uint8_t *p, bool big_endian)
{
    return (uint16_t)(big_endian ? p[0] << 8 | p[1] : p[1] << 8 | p[0]);
}

/* Records a refusal (or TP_PCAP_END) for this and every later call. */
static int stop(struct tp_pcap_reader *r, int status)
{
    if (status == TP_PCAP_EIO)
        r->err_no = errno != 0 ? errno : EIO;
    r->status = status;
    return status;
}

/* Reads len bytes; the bytes found, and errno cleared so that a read error is told from the end. */
static size_t read_bytes(struct tp_pcap_reader *r, void *dst, size_t len)
{
    errno = 0;
    return fread(dst, 1, len, r->file);
}

int tp_pcap_reader_open(struct tp_pcap_reader *r, FILE *f, uint32_t max_frame, uint32_t max_frames)
{
    memset(r, 0, sizeof(*r));
    r->file = f;
    r->max_frame = max_frame;
    r->max_frames = max_frames;
    uint8_t hdr[FILE_HEADER_BYTES];
    r->got = read_bytes(r, hdr, sizeof(hdr));
    if (r->got < sizeof(hdr) && ferror(f))
        return stop(r, TP_PCAP_EIO);
    static const uint8_t pcapng[4] = {0x0a, 0x0d, 0x0d, 0x0a}; /* the section header block */
    if (r->got >= 4 && memcmp(hdr, pcapng, sizeof(pcapng)) == 0)
        return stop(r, TP_PCAP_EPCAPNG);
    uint32_t magic = r->got >= 4 ? load32(hdr, true) : 0;
    switch (magic) {
    case 0xa1b2c3d4u:
    case 0xd4c3b2a1u:
        break;
    case 0xa1b23c4du:
    case 0x4d3cb2a1u:
        r->nanoseconds = true;
        break;
    default:
        return stop(r, r->got < 4 ? TP_PCAP_EHEADER : TP_PCAP_EMAGIC);
    }
    r->big_endian = magic == 0xa1b2c3d4u || magic == 0xa1b23c4du;
    if (r->got < sizeof(hdr))
        return stop(r, TP_PCAP_EHEADER);
    r->version_major = load16(hdr + 4, r->big_endian);
    r->version_minor = load16(hdr + 6, r->big_endian);
    if (r->version_major != 2 || r->version_minor != 4)
        return stop(r, TP_PCAP_EVERSION);
    r->link_type = load32(hdr + 20, r->big_endian);
    r->frame = malloc(max_frame > 0 ? max_frame : 1);
    if (r->frame == NULL)
        return stop(r, TP_PCAP_ENOMEM);
    return TP_PCAP_OK;
}

int tp_pcap_reader_next(struct tp_pcap_reader *r, struct tp_pcap_record *rec)
{
    if (r->status != TP_PCAP_OK)
        return r->status;
    uint8_t hdr[RECORD_HEADER_BYTES];
    r->got = read_bytes(r, hdr, sizeof(hdr));
    if (r->got < sizeof(hdr) && ferror(r->file))
        return stop(r, TP_PCAP_EIO);
    if (r->got == 0)
        return stop(r, r->frames > 0 ? TP_PCAP_END : TP_PCAP_EEMPTY);
    if (r->got < sizeof(hdr))
        return stop(r, TP_PCAP_ERECORD);
    r->caplen = load32(hdr + 8, r->big_endian);
    if (r->caplen > r->max_frame)
        return stop(r, TP_PCAP_ETOO_LARGE);
    if (r->frames == r->max_frames)
        return stop(r, TP_PCAP_ETOO_MANY);
    r->got = read_bytes(r, r->frame, r->caplen);
    if (r->got < r->caplen)
        return stop(r, ferror(r->file) ? TP_PCAP_EIO : TP_PCAP_EFRAME);
    r->frames++;
    uint32_t fraction = load32(hdr + 4, r->big_endian);
    rec->ts_ns = (uint64_t)load32(hdr, r->big_endian) * 1000000000u +
                 (uint64_t)fraction * (r->nanoseconds ? 1u : 1000u);
    rec->caplen = r->caplen;
    rec->data = r->frame;
    return TP_PCAP_OK;
}

void tp_pcap_reader_close(struct tp_pcap_reader *r)
{
    free(r->frame);
    r->frame = NULL;
}

const char *tp_pcap_reader_why(const struct tp_pcap_reader *r, char *buf, size_t len)
{
    unsigned record = r->frames + 1; /* the refused one, counted from 1 */
    switch (r->status) {
    case TP_PCAP_OK:
        snprintf(buf, len, "ok");
        break;
    case TP_PCAP_END:
        snprintf(buf, len, "at the end");
        break;
    case TP_PCAP_EIO:
        snprintf(buf, len, "%s", strerror(r->err_no));
        break;
    case TP_PCAP_ENOMEM:
        snprintf(buf, len, "no memory for a frame of %u bytes", r->max_frame);
        break;
    case TP_PCAP_EHEADER:
        snprintf(buf, len, "shorter than a pcap file header (%zu of its %d bytes)", r->got,
                 FILE_HEADER_BYTES);
        break;
    case TP_PCAP_EPCAPNG:
        snprintf(buf, len, "a pcapng file (only classic pcap files are read)");
        break;
    case TP_PCAP_EMAGIC:
        snprintf(buf, len, "not a pcap file (no pcap magic number)");
        break;
    case TP_PCAP_EVERSION:
        snprintf(buf, len, "pcap version %u.%u (only 2.4 is read)", r->version_major,
                 r->version_minor);
        break;
    case TP_PCAP_ERECORD:
        snprintf(buf, len, "truncated: record %u's header has %zu of its %d bytes", record, r->got,
                 RECORD_HEADER_BYTES);
        break;
    case TP_PCAP_EFRAME:
        snprintf(buf, len, "truncated: frame %u has %zu of its %u bytes", record, r->got,
                 r->caplen);
        break;
    case TP_PCAP_ETOO_LARGE:
        snprintf(buf, len, "frame %u is %u bytes, more than %u", record, r->caplen, r->max_frame);
        break;
    case TP_PCAP_ETOO_MANY:
        snprintf(buf, len, "more than %u frames", r->max_frames);
        break;
    default: /* TP_PCAP_EEMPTY */
        snprintf(buf, len, "has no frames");
        break;
    }
    return buf;
}
