/*
 * pcap_reader.c - pcap and pcapng files read record by record: see pcap_reader.h. Fields are
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
    if (r->mem == NULL)
        return fread(dst, 1, len, r->file);
    size_t n = len < r->mem_len - r->mem_pos ? len : r->mem_len - r->mem_pos;
    memcpy(dst, r->mem + r->mem_pos, n);
    r->mem_pos += n;
    return n;
}

static bool read_error(const struct tp_pcap_reader *r)
{
    return r->mem == NULL && ferror(r->file);
}

/* The current record's frame of r->caplen bytes: read into r->frame, or where it is in memory.
 * The bytes found in r->got. */
static const uint8_t *read_frame(struct tp_pcap_reader *r)
{
    if (r->mem == NULL) {
        r->got = read_bytes(r, r->frame, r->caplen);
        return r->frame;
    }
    const uint8_t *at = r->mem + r->mem_pos;
    r->got = r->caplen < r->mem_len - r->mem_pos ? r->caplen : r->mem_len - r->mem_pos;
    r->mem_pos += r->got;
    return at;
}

size_t tp_pcap_reader_offset(const struct tp_pcap_reader *r)
{
    return r->mem != NULL ? r->mem_pos : (size_t)ftell(r->file);
}

/* ---- pcapng ---------------------------------------------------------------------------- */

#define NG_SHB           0x0a0d0d0au
#define NG_IDB           1u
#define NG_PB            2u /* obsolete packet block */
#define NG_SPB           3u
#define NG_EPB           6u
#define NG_BOM           0x1a2b3c4du
#define NG_BLOCK_MAX     (1u << 20) /* a block that is not a packet: options, names, statistics */
#define NG_OPT_TSRESOL   9u
#define NG_DEFAULT_UNITS 1000000u

/* Reads len bytes of the current block: 0, or the refusal (truncated: ERECORD / EIO). */
static int ng_read(struct tp_pcap_reader *r, void *dst, size_t len)
{
    r->got = read_bytes(r, dst, len);
    if (r->got == len)
        return 0;
    return stop(r, read_error(r) ? TP_PCAP_EIO : TP_PCAP_ERECORD);
}

static int ng_skip(struct tp_pcap_reader *r, size_t len)
{
    uint8_t scratch[512];
    while (len > 0) {
        size_t n = len < sizeof(scratch) ? len : sizeof(scratch);
        if (ng_read(r, scratch, n) != 0)
            return r->status;
        len -= n;
    }
    return 0;
}

/* Skips len bytes of the current block, then checks its trailing length. */
static int ng_finish_block(struct tp_pcap_reader *r, size_t len)
{
    uint8_t trailer[4];
    if (ng_skip(r, len) != 0)
        return r->status;
    if (ng_read(r, trailer, sizeof(trailer)) != 0)
        return r->status;
    return load32(trailer, r->big_endian) == r->block_len ? 0 : stop(r, TP_PCAP_EBLOCK);
}

/* The section header's body after its type (read): length, byte-order magic, version. */
static int ng_section(struct tp_pcap_reader *r)
{
    uint8_t b[20];
    r->block_type = NG_SHB;
    r->block_len = 0;
    if (ng_read(r, b, sizeof(b)) != 0)
        return r->status;
    uint32_t bom = load32(b + 4, true);
    if (bom != NG_BOM && bom != 0x4d3c2b1au)
        return stop(r, TP_PCAP_EBLOCK);
    r->big_endian = bom == NG_BOM;
    r->block_len = load32(b, r->big_endian);
    r->version_major = load16(b + 8, r->big_endian);
    r->version_minor = load16(b + 10, r->big_endian);
    if (r->version_major != 1 || r->block_len < 28 || r->block_len % 4 != 0 ||
        r->block_len > NG_BLOCK_MAX)
        return stop(r, TP_PCAP_EBLOCK);
    r->n_interfaces = 0;
    return ng_finish_block(r, r->block_len - 28);
}

/* 10^v, or 2^v with the high bit (if_tsresol); 0 for a resolution no 64-bit count can hold. */
static uint64_t ng_units(uint8_t v)
{
    uint64_t u = 1;
    if (v & 0x80)
        return (v & 0x7f) < 64 ? (uint64_t)1 << (v & 0x7f) : 0;
    if (v > 19)
        return 0;
    while (v--)
        u *= 10;
    return u;
}

static int ng_interface(struct tp_pcap_reader *r)
{
    uint8_t b[8];
    if (r->block_len < 20 || r->block_len > NG_BLOCK_MAX)
        return stop(r, TP_PCAP_EBLOCK);
    if (ng_read(r, b, sizeof(b)) != 0)
        return r->status;
    if (r->n_interfaces == TP_PCAP_INTERFACES_MAX)
        return stop(r, TP_PCAP_EINTERFACE);
    struct tp_pcapng_interface *in = &r->interfaces[r->n_interfaces];
    *in = (struct tp_pcapng_interface){.link_type = load16(b, r->big_endian),
                                       .snaplen = load32(b + 4, r->big_endian),
                                       .units_per_s = NG_DEFAULT_UNITS};
    /* Options: (code u16, length u16, value padded to 4) until code 0 or the block's end. */
    size_t left = r->block_len - 20;
    while (left >= 4) {
        uint8_t opt[4], value[256];
        if (ng_read(r, opt, sizeof(opt)) != 0)
            return r->status;
        left -= 4;
        uint16_t code = load16(opt, r->big_endian), vlen = load16(opt + 2, r->big_endian);
        size_t padded = ((size_t)vlen + 3) & ~(size_t)3;
        if (code == 0 || padded > left)
            break;
        size_t take = padded < sizeof(value) ? padded : sizeof(value);
        if (ng_read(r, value, take) != 0 || ng_skip(r, padded - take) != 0)
            return r->status;
        left -= padded;
        if (code == NG_OPT_TSRESOL && vlen >= 1) {
            in->units_per_s = ng_units(value[0]);
            if (in->units_per_s == 0)
                return stop(r, TP_PCAP_EBLOCK);
        }
    }
    if (r->link_known && in->link_type != r->link_type)
        return stop(r, TP_PCAP_ELINK);
    r->link_type = in->link_type;
    r->link_known = true;
    r->n_interfaces++;
    return ng_finish_block(r, left);
}

/* ns since the epoch of a count of an interface's units. */
static uint64_t ng_ns(uint64_t t, uint64_t units)
{
    return (uint64_t)((unsigned __int128)t * 1000000000u / units);
}

/*
 * A packet block (type known, length checked to hold its fixed part): its frame into r->frame.
 * fixed: bytes of the block before the frame (after type and length).
 */
static int ng_packet(struct tp_pcap_reader *r, struct tp_pcap_record *rec)
{
    uint8_t b[20];
    uint32_t ifid, fixed;
    uint64_t ts = 0;

    if (r->block_type == NG_SPB) {
        fixed = 4;
        if (ng_read(r, b, 4) != 0)
            return r->status;
        ifid = 0;
        r->caplen = load32(b, r->big_endian);
        if (r->caplen > r->block_len - 16)
            r->caplen = r->block_len - 16; /* the snapshot length cut it */
    } else {
        fixed = 20;
        if (ng_read(r, b, sizeof(b)) != 0)
            return r->status;
        ifid = r->block_type == NG_PB ? load16(b, r->big_endian) : load32(b, r->big_endian);
        ts = (uint64_t)load32(b + 4, r->big_endian) << 32 | load32(b + 8, r->big_endian);
        r->caplen = load32(b + 12, r->big_endian);
    }
    if (ifid >= r->n_interfaces)
        return stop(r, TP_PCAP_EINTERFACE);
    if (r->block_type == NG_SPB && r->interfaces[0].snaplen != 0 &&
        r->caplen > r->interfaces[0].snaplen)
        r->caplen = r->interfaces[0].snaplen;
    if (r->caplen > r->max_frame)
        return stop(r, TP_PCAP_ETOO_LARGE);
    if ((uint64_t)r->caplen + fixed + 12 > r->block_len)
        return stop(r, TP_PCAP_EBLOCK);
    if (r->frames == r->max_frames)
        return stop(r, TP_PCAP_ETOO_MANY);
    const uint8_t *frame = read_frame(r);
    if (r->got < r->caplen)
        return stop(r, read_error(r) ? TP_PCAP_EIO : TP_PCAP_EFRAME);
    if (ng_finish_block(r, r->block_len - 12 - fixed - r->caplen) != 0)
        return r->status;
    r->frames++;
    rec->ts_ns = ng_ns(ts, r->interfaces[ifid].units_per_s);
    rec->caplen = r->caplen;
    rec->data = frame;
    return TP_PCAP_OK;
}

/*
 * The next pcapng block that matters: a packet into rec (TP_PCAP_OK), or with until_interface
 * the first interface block (TP_PCAP_OK, rec untouched); sections and other blocks are taken in
 * passing. The end, or a refusal.
 */
static int ng_next(struct tp_pcap_reader *r, struct tp_pcap_record *rec, bool until_interface)
{
    for (;;) {
        uint8_t b[4];
        r->got = read_bytes(r, b, sizeof(b));
        if (r->got < sizeof(b) && read_error(r))
            return stop(r, TP_PCAP_EIO);
        if (r->got == 0)
            return stop(r, r->frames > 0 ? TP_PCAP_END : TP_PCAP_EEMPTY);
        if (r->got < sizeof(b))
            return stop(r, TP_PCAP_ERECORD);
        r->block_type = load32(b, r->big_endian);
        if (r->block_type == NG_SHB) { /* the same bytes in either order */
            if (ng_section(r) != 0)
                return r->status;
            continue;
        }
        if (ng_read(r, b, sizeof(b)) != 0)
            return r->status;
        r->block_len = load32(b, r->big_endian);
        if (r->block_len < 12 || r->block_len % 4 != 0)
            return stop(r, TP_PCAP_EBLOCK);
        switch (r->block_type) {
        case NG_IDB:
            if (ng_interface(r) != 0)
                return r->status;
            if (until_interface)
                return TP_PCAP_OK;
            break;
        case NG_EPB:
        case NG_PB:
        case NG_SPB:
            if (until_interface)
                return stop(r, TP_PCAP_EINTERFACE); /* a packet before any interface */
            if (r->block_len < (r->block_type == NG_SPB ? 16u : 32u))
                return stop(r, TP_PCAP_EBLOCK);
            return ng_packet(r, rec);
        default:
            if (r->block_len > NG_BLOCK_MAX)
                return stop(r, TP_PCAP_EBLOCK);
            if (ng_finish_block(r, r->block_len - 12) != 0)
                return r->status;
            break;
        }
    }
}

/* ---- both ------------------------------------------------------------------------------- */

/* The file header (and for pcapng the first interface), from r->file or r->mem. */
static int open_capture(struct tp_pcap_reader *r, uint32_t max_frame, uint32_t max_frames)
{
    r->max_frame = max_frame;
    r->max_frames = max_frames;
    uint8_t hdr[FILE_HEADER_BYTES];
    r->got = read_bytes(r, hdr, 4);
    if (r->got < 4 && read_error(r))
        return stop(r, TP_PCAP_EIO);
    if (r->got == 4 && load32(hdr, true) == NG_SHB) {
        r->pcapng = true;
        r->frame = r->mem ? NULL : malloc(max_frame > 0 ? max_frame : 1);
        if (r->mem == NULL && r->frame == NULL)
            return stop(r, TP_PCAP_ENOMEM);
        if (ng_section(r) != 0)
            return r->status;
        return ng_next(r, NULL, true) == TP_PCAP_OK ? TP_PCAP_OK : r->status;
    }
    if (r->got == 4)
        r->got += read_bytes(r, hdr + 4, sizeof(hdr) - 4);
    if (r->got < sizeof(hdr) && read_error(r))
        return stop(r, TP_PCAP_EIO);
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
    r->frame = r->mem ? NULL : malloc(max_frame > 0 ? max_frame : 1);
    if (r->mem == NULL && r->frame == NULL)
        return stop(r, TP_PCAP_ENOMEM);
    return TP_PCAP_OK;
}

int tp_pcap_reader_open(struct tp_pcap_reader *r, FILE *f, uint32_t max_frame, uint32_t max_frames)
{
    memset(r, 0, sizeof(*r));
    r->file = f;
    return open_capture(r, max_frame, max_frames);
}

int tp_pcap_reader_open_memory(struct tp_pcap_reader *r, const void *data, size_t len,
                               uint32_t max_frame, uint32_t max_frames)
{
    static const uint8_t no_bytes[1];
    memset(r, 0, sizeof(*r));
    /* r->mem tells memory from file reading: an empty file's mapping has no address */
    r->mem = data != NULL ? data : no_bytes;
    r->mem_len = data != NULL ? len : 0;
    return open_capture(r, max_frame, max_frames);
}

int tp_pcap_reader_next(struct tp_pcap_reader *r, struct tp_pcap_record *rec)
{
    if (r->status != TP_PCAP_OK)
        return r->status;
    if (r->pcapng)
        return ng_next(r, rec, false);
    uint8_t hdr[RECORD_HEADER_BYTES];
    r->got = read_bytes(r, hdr, sizeof(hdr));
    if (r->got < sizeof(hdr) && read_error(r))
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
    const uint8_t *frame = read_frame(r);
    if (r->got < r->caplen)
        return stop(r, read_error(r) ? TP_PCAP_EIO : TP_PCAP_EFRAME);
    r->frames++;
    uint32_t fraction = load32(hdr + 4, r->big_endian);
    rec->ts_ns = (uint64_t)load32(hdr, r->big_endian) * 1000000000u +
                 (uint64_t)fraction * (r->nanoseconds ? 1u : 1000u);
    rec->caplen = r->caplen;
    rec->data = frame;
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
    case TP_PCAP_EBLOCK:
        snprintf(buf, len,
                 "pcapng block of type 0x%x and length %u is malformed (or of a version "
                 "other than 1.x)",
                 r->block_type, r->block_len);
        break;
    case TP_PCAP_EINTERFACE:
        snprintf(buf, len, "pcapng packet %u is of an interface not described (or over %u)", record,
                 TP_PCAP_INTERFACES_MAX);
        break;
    case TP_PCAP_ELINK:
        snprintf(buf, len, "pcapng interfaces of different link types (%u, then another)",
                 r->link_type);
        break;
    case TP_PCAP_EMAGIC:
        snprintf(buf, len, "not a pcap file (no pcap magic number)");
        break;
    case TP_PCAP_EVERSION:
        snprintf(buf, len, "pcap version %u.%u (only 2.4 is read)", r->version_major,
                 r->version_minor);
        break;
    case TP_PCAP_ERECORD:
        if (r->pcapng) {
            snprintf(buf, len, "truncated: a pcapng block after frame %u is cut short", r->frames);
            break;
        }
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
