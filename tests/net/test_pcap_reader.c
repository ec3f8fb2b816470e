/*
 * test_pcap_reader.c - the pcap and pcapng reader: both byte orders, both stamp resolutions
 * (pcapng: if_tsresol), skipped blocks and sections, the same frames, timestamps and link type
 * as libpcap for both formats, and every refusal with its reason (not pcap, version, pcapng
 * blocks, interfaces and link types, a short file header, a record header or frame cut short, a
 * frame above the limit, too many frames, no frames, a read error).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <pcap/pcap.h>

#include "pcap_reader.h"
#include "pcap_writer.h"

#define MAGIC_US 0xa1b2c3d4u
#define MAGIC_NS 0xa1b23c4du

/* A capture built in memory, field by field in the byte order a writer host would use. */
struct capture {
    uint8_t bytes[8192];
    size_t len;
    bool big_endian;
};

static void put(struct capture *c, uint32_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++) {
        unsigned shift = c->big_endian ? 8 * (size - 1 - i) : 8 * i;
        c->bytes[c->len++] = (uint8_t)(v >> shift);
    }
}

static void file_header(struct capture *c, bool big_endian, uint32_t magic, uint16_t minor)
{
    c->len = 0;
    c->big_endian = big_endian;
    put(c, magic, 4);
    put(c, 2, 2);
    put(c, minor, 2);
    put(c, 0, 4);     /* thiszone */
    put(c, 0, 4);     /* sigfigs */
    put(c, 65535, 4); /* snaplen */
    put(c, 1, 4);     /* Ethernet */
}

/* A record of caplen bytes (i + seed each), the original length `len`. */
static void record(struct capture *c, uint32_t caplen, uint32_t len, uint8_t seed)
{
    put(c, 1700000000, 4);
    put(c, 123456, 4);
    put(c, caplen, 4);
    put(c, len, 4);
    for (uint32_t i = 0; i < caplen; i++)
        c->bytes[c->len++] = (uint8_t)(i + seed);
}

static FILE *open_capture(const struct capture *c, size_t len)
{
    static uint8_t copy[sizeof(((struct capture *)0)->bytes)];
    memcpy(copy, c->bytes, len);
    FILE *f = fmemopen(copy, len, "rb");
    assert_non_null(f);
    return f;
}

/* Expects the next record to be record()'s of caplen and seed; returns its timestamp. */
static uint64_t expect_frame(struct tp_pcap_reader *r, uint32_t caplen, uint8_t seed)
{
    struct tp_pcap_record rec;
    assert_int_equal(tp_pcap_reader_next(r, &rec), TP_PCAP_OK);
    assert_int_equal(rec.caplen, caplen);
    for (uint32_t i = 0; i < caplen; i++)
        assert_int_equal(rec.data[i], (uint8_t)(i + seed));
    return rec.ts_ns;
}

static void expect_why(const struct tp_pcap_reader *r, const char *want)
{
    char why[160];
    assert_string_equal(tp_pcap_reader_why(r, why, sizeof(why)), want);
}

/* Each byte order, each resolution: the same frames, in order, and their times in nanoseconds;
 * the end is the end, and stays. */
static void test_byte_orders_and_resolutions(void **state)
{
    (void)state;
    for (int big = 0; big < 2; big++)
        for (int ns = 0; ns < 2; ns++) {
            struct capture c;
            file_header(&c, big, ns ? MAGIC_NS : MAGIC_US, 4);
            record(&c, 60, 60, 1);
            record(&c, 0, 0, 2);
            record(&c, 1400, 1514, 3); /* cut at capture: the original length is not read */
            FILE *f = open_capture(&c, c.len);
            struct tp_pcap_reader r;
            assert_int_equal(tp_pcap_reader_open(&r, f, 1500, 10), TP_PCAP_OK);
            assert_int_equal(r.big_endian, big);
            assert_int_equal(r.nanoseconds, ns);
            assert_int_equal(r.link_type, 1);
            uint64_t ts = 1700000000ull * 1000000000u + (ns ? 123456u : 123456000u);
            assert_int_equal(expect_frame(&r, 60, 1), ts);
            expect_frame(&r, 0, 2);
            expect_frame(&r, 1400, 3);
            struct tp_pcap_record rec;
            assert_int_equal(tp_pcap_reader_next(&r, &rec), TP_PCAP_END);
            assert_int_equal(tp_pcap_reader_next(&r, &rec), TP_PCAP_END);
            assert_int_equal(r.frames, 3);
            tp_pcap_reader_close(&r);
            fclose(f);
        }
}

/* The frames, nanosecond times and link type libpcap gives for the same file: pcap_writer's (ns,
 * host order) and a big-endian µs. */
/* The reader gives the frames, nanosecond times and link type libpcap gives for the file. */
static void expect_libpcap_frames(const char *path, unsigned frames)
{
    char err[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline_with_tstamp_precision(path, PCAP_TSTAMP_PRECISION_NANO, err);
    assert_non_null(p);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    struct tp_pcap_reader r;
    assert_int_equal(tp_pcap_reader_open(&r, f, 1500, 100), TP_PCAP_OK);
    assert_int_equal(r.link_type, pcap_datalink(p)); /* DLT_EN10MB is LINKTYPE_ETHERNET */
    struct pcap_pkthdr *h;
    const u_char *data;
    struct tp_pcap_record rec;
    unsigned n = 0;
    while (pcap_next_ex(p, &h, &data) == 1) {
        assert_int_equal(tp_pcap_reader_next(&r, &rec), TP_PCAP_OK);
        assert_int_equal(rec.ts_ns, (uint64_t)h->ts.tv_sec * 1000000000u + h->ts.tv_usec);
        assert_int_equal(rec.caplen, h->caplen);
        assert_memory_equal(rec.data, data, h->caplen);
        n++;
    }
    assert_int_equal(n, frames);
    assert_int_equal(tp_pcap_reader_next(&r, &rec), TP_PCAP_END);
    tp_pcap_reader_close(&r);
    fclose(f);
    pcap_close(p);
}

static void test_same_frames_as_libpcap(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof(path), "/tmp/tp-test-pcap-reader-%d.pcap", (int)getpid());
    for (int file = 0; file < 2; file++) {
        if (file == 0) {
            struct tp_pcap_writer w;
            assert_int_equal(tp_pcap_writer_open(&w, path), 0);
            uint8_t frame[1500];
            for (unsigned i = 0; i < 50; i++) {
                size_t len = (i * 97) % sizeof(frame);
                for (size_t k = 0; k < len; k++)
                    frame[k] = (uint8_t)(k * 7 + i);
                assert_int_equal(tp_pcap_writer_write(&w, 1000000000ull * i + i, frame, len), 0);
            }
            assert_int_equal(tp_pcap_writer_close(&w), 0);
        } else {
            static struct capture c;
            file_header(&c, true, MAGIC_US, 4);
            for (unsigned i = 0; i < 20; i++)
                record(&c, (i * 131) % 300, 300, (uint8_t)i);
            FILE *out = fopen(path, "wb");
            assert_non_null(out);
            assert_int_equal(fwrite(c.bytes, 1, c.len, out), c.len);
            assert_int_equal(fclose(out), 0);
        }
        expect_libpcap_frames(path, file == 0 ? 50 : 20);
    }
    unlink(path);
}

/* Opens the first len bytes of c and expects the open to refuse them with status and why. */
static void expect_open_refused(const struct capture *c, size_t len, int status, const char *why)
{
    FILE *f = open_capture(c, len);
    struct tp_pcap_reader r;
    assert_int_equal(tp_pcap_reader_open(&r, f, 1500, 10), status);
    expect_why(&r, why);
    struct tp_pcap_record rec;
    assert_int_equal(tp_pcap_reader_next(&r, &rec), status);
    tp_pcap_reader_close(&r);
    fclose(f);
}

/* ---- pcapng, block by block ----------------------------------------------------------- */

static void ng_section(struct capture *c)
{
    put(c, 0x0a0d0d0au, 4);
    put(c, 28, 4);
    put(c, 0x1a2b3c4du, 4);
    put(c, 1, 2);
    put(c, 0, 2);
    put(c, 0xffffffffu, 4); /* section length: not given */
    put(c, 0xffffffffu, 4);
    put(c, 28, 4);
}

/* An interface of `link` type; tsresol < 0: the default resolution (µs). */
static void ng_interface(struct capture *c, uint16_t link, int tsresol)
{
    uint32_t len = 20 + (tsresol >= 0 ? 12 : 0);
    put(c, 1, 4);
    put(c, len, 4);
    put(c, link, 2);
    put(c, 0, 2);
    put(c, 65535, 4);
    if (tsresol >= 0) {
        put(c, 9, 2); /* if_tsresol */
        put(c, 1, 2);
        put(c, (uint32_t)tsresol, 1);
        put(c, 0, 3);
        put(c, 0, 4); /* opt_endofopt */
    }
    put(c, len, 4);
}

static void ng_frame(struct capture *c, uint32_t caplen, uint8_t seed)
{
    for (uint32_t i = 0; i < caplen; i++)
        c->bytes[c->len++] = (uint8_t)(i + seed);
    put(c, 0, (4 - caplen % 4) % 4);
}

static void ng_enhanced(struct capture *c, uint32_t ifid, uint64_t ts, uint32_t caplen,
                        uint8_t seed)
{
    uint32_t len = 32 + ((caplen + 3) & ~3u);
    put(c, 6, 4);
    put(c, len, 4);
    put(c, ifid, 4);
    put(c, (uint32_t)(ts >> 32), 4);
    put(c, (uint32_t)ts, 4);
    put(c, caplen, 4);
    put(c, caplen + 10, 4); /* the original length: not read */
    ng_frame(c, caplen, seed);
    put(c, len, 4);
}

static void ng_simple(struct capture *c, uint32_t caplen, uint8_t seed)
{
    uint32_t len = 16 + ((caplen + 3) & ~3u);
    put(c, 3, 4);
    put(c, len, 4);
    put(c, caplen, 4);
    ng_frame(c, caplen, seed);
    put(c, len, 4);
}

/* A block the reader has no use for (name resolution, statistics, custom): skipped. */
static void ng_other(struct capture *c)
{
    put(c, 4, 4);
    put(c, 20, 4);
    put(c, 0xdeadbeefu, 4);
    put(c, 0, 4);
    put(c, 20, 4);
}

/* Both byte orders, the default and a nanosecond resolution, simple packets, skipped blocks and a
 * second section. */
static void test_pcapng_read(void **state)
{
    (void)state;
    for (int big = 0; big < 2; big++) {
        static struct capture c;
        c.len = 0;
        c.big_endian = big;
        ng_section(&c);
        ng_other(&c);
        ng_interface(&c, 1, -1);
        ng_interface(&c, 1, 9);
        ng_enhanced(&c, 0, 1700000000123456ull, 60, 1); /* µs */
        ng_other(&c);
        ng_enhanced(&c, 1, 1700000000123456789ull, 61, 2); /* ns */
        ng_simple(&c, 63, 3);
        ng_section(&c);                 /* interfaces numbered anew */
        ng_interface(&c, 1, 0x80 | 10); /* 2^-10 s */
        ng_enhanced(&c, 0, 3ull << 10, 0, 4);
        FILE *f = open_capture(&c, c.len);
        struct tp_pcap_reader r;
        assert_int_equal(tp_pcap_reader_open(&r, f, 1500, 10), TP_PCAP_OK);
        assert_true(r.pcapng);
        assert_int_equal(r.big_endian, big);
        assert_int_equal(r.link_type, 1);
        assert_int_equal(expect_frame(&r, 60, 1), 1700000000123456000ull);
        assert_int_equal(expect_frame(&r, 61, 2), 1700000000123456789ull);
        assert_int_equal(expect_frame(&r, 63, 3), 0); /* a simple packet has no time */
        assert_int_equal(expect_frame(&r, 0, 4), 3000000000ull);
        struct tp_pcap_record rec;
        assert_int_equal(tp_pcap_reader_next(&r, &rec), TP_PCAP_END);
        assert_int_equal(r.frames, 4);
        tp_pcap_reader_close(&r);
        fclose(f);
        /* In memory: the same records, pointing into the capture. */
        assert_int_equal(tp_pcap_reader_open_memory(&r, c.bytes, c.len, 1500, 10), TP_PCAP_OK);
        assert_int_equal(expect_frame(&r, 60, 1), 1700000000123456000ull);
        assert_int_equal(tp_pcap_reader_next(&r, &rec), TP_PCAP_OK);
        assert_true(rec.data > c.bytes && rec.data + rec.caplen <= c.bytes + c.len);
        assert_int_equal(rec.caplen, 61);
        expect_frame(&r, 63, 3);
        expect_frame(&r, 0, 4);
        assert_int_equal(tp_pcap_reader_next(&r, &rec), TP_PCAP_END);
        assert_int_equal(tp_pcap_reader_offset(&r), c.len);
        tp_pcap_reader_close(&r);
    }
}

/* libpcap reads pcapng too: the same frames and times from the same file. */
static void test_pcapng_same_frames_as_libpcap(void **state)
{
    (void)state;
    static struct capture c;
    char path[64];
    c.len = 0;
    c.big_endian = false;
    ng_section(&c);
    ng_interface(&c, 1, 9);
    for (unsigned i = 0; i < 20; i++)
        ng_enhanced(&c, 0, 1700000000000000000ull + i * 1000003ull, (i * 131) % 300, (uint8_t)i);
    snprintf(path, sizeof(path), "/tmp/tp-test-pcapng-reader-%d.pcapng", (int)getpid());
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    assert_int_equal(fwrite(c.bytes, 1, c.len, out), c.len);
    assert_int_equal(fclose(out), 0);
    expect_libpcap_frames(path, 20);
    unlink(path);
}

/* Opens c (a section and an interface first) and expects the first record refused. */
static void expect_pcapng_refused(struct capture *c, size_t len, int status, const char *why)
{
    FILE *f = open_capture(c, len);
    struct tp_pcap_reader r;
    struct tp_pcap_record rec;
    assert_int_equal(tp_pcap_reader_open(&r, f, 100, 10), TP_PCAP_OK);
    assert_int_equal(tp_pcap_reader_next(&r, &rec), status);
    expect_why(&r, why);
    assert_int_equal(tp_pcap_reader_next(&r, &rec), status);
    tp_pcap_reader_close(&r);
    fclose(f);
}

static void test_pcapng_refusals(void **state)
{
    (void)state;
    static struct capture c;
    size_t start;
    c.big_endian = false;
    c.len = 0;
    ng_section(&c);
    ng_interface(&c, 1, -1);
    start = c.len;

    ng_enhanced(&c, 1, 0, 10, 0);
    expect_pcapng_refused(&c, c.len, TP_PCAP_EINTERFACE,
                          "pcapng packet 1 is of an interface not described (or over 64)");
    c.len = start;
    ng_interface(&c, 113, -1);
    expect_pcapng_refused(&c, c.len, TP_PCAP_ELINK,
                          "pcapng interfaces of different link types (1, then another)");
    c.len = start;
    ng_enhanced(&c, 0, 0, 10, 0);
    c.bytes[c.len - 4] ^= 1; /* the trailing length */
    expect_pcapng_refused(&c, c.len, TP_PCAP_EBLOCK,
                          "pcapng block of type 0x6 and length 44 is malformed (or of a version "
                          "other than 1.x)");
    c.len = start;
    ng_enhanced(&c, 0, 0, 101, 0);
    expect_pcapng_refused(&c, c.len, TP_PCAP_ETOO_LARGE, "frame 1 is 101 bytes, more than 100");
    c.len = start;
    ng_enhanced(&c, 0, 0, 40, 0);
    expect_pcapng_refused(&c, start + 40, TP_PCAP_EFRAME,
                          "truncated: frame 1 has 12 of its 40 bytes");
    expect_pcapng_refused(&c, start + 6, TP_PCAP_ERECORD,
                          "truncated: a pcapng block after frame 0 is cut short");

    /* A section of another major version, at the start. */
    c.len = 0;
    ng_section(&c);
    c.bytes[12] = 2;
    expect_open_refused(&c, c.len, TP_PCAP_EBLOCK,
                        "pcapng block of type 0xa0d0d0a and length 28 is malformed (or of a "
                        "version other than 1.x)");
    /* A packet before any interface. */
    c.len = 0;
    ng_section(&c);
    ng_simple(&c, 4, 0);
    expect_open_refused(&c, c.len, TP_PCAP_EINTERFACE,
                        "pcapng packet 1 is of an interface not described (or over 64)");
}

static void test_not_pcap_refused(void **state)
{
    (void)state;
    struct capture c;
    static const char text[] = "{\"name\": \"this is a config, not a capture\"}";
    memcpy(c.bytes, text, sizeof(text));
    expect_open_refused(&c, sizeof(text), TP_PCAP_EMAGIC, "not a pcap file (no pcap magic number)");
    /* The modified (Kuznetzov) format has its own magic and longer record headers. */
    file_header(&c, false, 0xa1b2cd34u, 4);
    expect_open_refused(&c, c.len, TP_PCAP_EMAGIC, "not a pcap file (no pcap magic number)");
}

/* Versions before 2.4 keep caplen and len the other way round: refused, not misread. */
static void test_old_version_refused(void **state)
{
    (void)state;
    struct capture c;
    file_header(&c, true, MAGIC_US, 3);
    record(&c, 60, 60, 0);
    expect_open_refused(&c, c.len, TP_PCAP_EVERSION, "pcap version 2.3 (only 2.4 is read)");
}

static void test_short_file_header(void **state)
{
    (void)state;
    struct capture c;
    file_header(&c, false, MAGIC_NS, 4);
    expect_open_refused(&c, 20, TP_PCAP_EHEADER,
                        "shorter than a pcap file header (20 of its 24 bytes)");
    expect_open_refused(&c, 3, TP_PCAP_EHEADER,
                        "shorter than a pcap file header (3 of its 24 bytes)");
    expect_open_refused(&c, 0, TP_PCAP_EHEADER,
                        "shorter than a pcap file header (0 of its 24 bytes)");
}

/* Opens c whole and reads `good` frames of its records (caplen i * 10, seed i) first. */
static FILE *open_after(const struct capture *c, size_t len, struct tp_pcap_reader *r,
                        uint32_t max_frame, uint32_t max_frames, unsigned good)
{
    FILE *f = open_capture(c, len);
    assert_int_equal(tp_pcap_reader_open(r, f, max_frame, max_frames), TP_PCAP_OK);
    for (unsigned i = 0; i < good; i++)
        expect_frame(r, 10 * (i + 1), (uint8_t)i);
    return f;
}

static void expect_next_refused(struct tp_pcap_reader *r, FILE *f, int status, const char *why)
{
    struct tp_pcap_record rec;
    assert_int_equal(tp_pcap_reader_next(r, &rec), status);
    expect_why(r, why);
    assert_int_equal(tp_pcap_reader_next(r, &rec), status);
    tp_pcap_reader_close(r);
    fclose(f);
}

static void test_truncated_record_header(void **state)
{
    (void)state;
    for (int big = 0; big < 2; big++) {
        struct capture c;
        file_header(&c, big, MAGIC_US, 4);
        record(&c, 10, 10, 0);
        record(&c, 20, 20, 1);
        struct tp_pcap_reader r;
        FILE *f = open_after(&c, 24 + 16 + 10 + 8, &r, 1500, 10, 1);
        expect_next_refused(&r, f, TP_PCAP_ERECORD,
                            "truncated: record 2's header has 8 of its 16 bytes");
    }
}

static void test_truncated_frame(void **state)
{
    (void)state;
    for (int big = 0; big < 2; big++) {
        struct capture c;
        file_header(&c, big, MAGIC_NS, 4);
        record(&c, 10, 10, 0);
        record(&c, 20, 20, 1);
        struct tp_pcap_reader r;
        FILE *f = open_after(&c, c.len - 1, &r, 1500, 10, 1);
        expect_next_refused(&r, f, TP_PCAP_EFRAME, "truncated: frame 2 has 19 of its 20 bytes");
        /* A record header with nothing after it: the frame is missing, not the header. */
        f = open_after(&c, 24 + 16 + 10 + 16, &r, 1500, 10, 1);
        expect_next_refused(&r, f, TP_PCAP_EFRAME, "truncated: frame 2 has 0 of its 20 bytes");
    }
}

static void test_oversized_frame(void **state)
{
    (void)state;
    struct capture c;
    file_header(&c, true, MAGIC_US, 4);
    record(&c, 10, 10, 0);
    record(&c, 20, 20, 1);
    record(&c, 21, 21, 2);
    struct tp_pcap_reader r;
    FILE *f = open_after(&c, c.len, &r, 20, 10, 2); /* the limit itself is allowed */
    expect_next_refused(&r, f, TP_PCAP_ETOO_LARGE, "frame 3 is 21 bytes, more than 20");
    /* A length no file of this size could hold is refused before anything is read or allocated. */
    file_header(&c, false, MAGIC_US, 4);
    record(&c, 10, 10, 0);
    put(&c, 0, 4);
    put(&c, 0, 4);
    put(&c, 0xfffffff0u, 4);
    put(&c, 0xfffffff0u, 4);
    f = open_after(&c, c.len, &r, 65000, 10, 1);
    expect_next_refused(&r, f, TP_PCAP_ETOO_LARGE, "frame 2 is 4294967280 bytes, more than 65000");
}

static void test_too_many_frames(void **state)
{
    (void)state;
    struct capture c;
    file_header(&c, false, MAGIC_US, 4);
    record(&c, 10, 10, 0);
    record(&c, 20, 20, 1);
    struct tp_pcap_reader r;
    FILE *f = open_after(&c, c.len, &r, 1500, 2, 2); /* exactly the limit: the end */
    struct tp_pcap_record rec;
    assert_int_equal(tp_pcap_reader_next(&r, &rec), TP_PCAP_END);
    tp_pcap_reader_close(&r);
    fclose(f);
    record(&c, 30, 30, 2);
    f = open_after(&c, c.len, &r, 1500, 2, 2);
    expect_next_refused(&r, f, TP_PCAP_ETOO_MANY, "more than 2 frames");
}

static void test_no_frames(void **state)
{
    (void)state;
    for (int big = 0; big < 2; big++) {
        struct capture c;
        file_header(&c, big, MAGIC_NS, 4);
        struct tp_pcap_reader r;
        FILE *f = open_after(&c, c.len, &r, 1500, 10, 0);
        expect_next_refused(&r, f, TP_PCAP_EEMPTY, "has no frames");
    }
}

/* An empty file maps to no address: in memory it is a short header, like an empty stream. */
static void test_empty_memory(void **state)
{
    (void)state;
    struct tp_pcap_reader r;
    assert_int_equal(tp_pcap_reader_open_memory(&r, NULL, 0, 1500, 10), TP_PCAP_EHEADER);
    struct tp_pcap_record rec;
    assert_int_equal(tp_pcap_reader_next(&r, &rec), TP_PCAP_EHEADER);
    assert_int_equal(tp_pcap_reader_offset(&r), 0);
    tp_pcap_reader_close(&r);
}

/* A stream that cannot be read (a directory) is an I/O error with the system's reason. */
static void test_read_error(void **state)
{
    (void)state;
    FILE *f = fopen("/tmp", "rb");
    assert_non_null(f);
    struct tp_pcap_reader r;
    assert_int_equal(tp_pcap_reader_open(&r, f, 1500, 10), TP_PCAP_EIO);
    expect_why(&r, "Is a directory");
    tp_pcap_reader_close(&r);
    fclose(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_byte_orders_and_resolutions),
        cmocka_unit_test(test_same_frames_as_libpcap),
        cmocka_unit_test(test_pcapng_read),
        cmocka_unit_test(test_pcapng_same_frames_as_libpcap),
        cmocka_unit_test(test_pcapng_refusals),
        cmocka_unit_test(test_not_pcap_refused),
        cmocka_unit_test(test_old_version_refused),
        cmocka_unit_test(test_short_file_header),
        cmocka_unit_test(test_truncated_record_header),
        cmocka_unit_test(test_truncated_frame),
        cmocka_unit_test(test_oversized_frame),
        cmocka_unit_test(test_too_many_frames),
        cmocka_unit_test(test_no_frames),
        cmocka_unit_test(test_empty_memory),
        cmocka_unit_test(test_read_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
