/*
 * fuzz_pcap_reader.c - libFuzzer target: any bytes as a pcap or pcapng file through pcap_reader
 * (fmemopen over an exact-size copy, so ASan sees a read past the end). The sanitizers catch
 * overruns; the checks below catch a record that is not the file's (classic: its length and
 * bytes are the ones at the place the records so far lead to; pcapng: its bytes are in the file,
 * after the previous record's), a file header taken that is not a classic 2.4 one in the order
 * and resolution reported, a frame above the limit, more frames than the limit, an end that is
 * not the file's end, a truncation reported where the file is whole, and a status that changes
 * after the reader stopped.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_reader.h"

/* Small enough that the fuzzer reaches both limits. */
#define MAX_FRAME  1600
#define MAX_FRAMES 32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t load32(const uint8_t *p, bool big_endian)
{
    return big_endian ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
                      : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* Where the reader stopped (st) against the file: the checks of the end and of truncation. */
/* Where a pcapng reader stopped, against how far it read (pos). */
static bool ng_stop_is_the_files(int st, size_t pos, size_t size, uint32_t frames,
                                 const struct tp_pcap_reader *r)
{
    switch (st) {
    case TP_PCAP_END:
        return pos == size && frames > 0;
    case TP_PCAP_EEMPTY:
        return pos == size && frames == 0;
    case TP_PCAP_ERECORD:
    case TP_PCAP_EFRAME:
        return pos == size;
    case TP_PCAP_ETOO_LARGE:
        return r->caplen > MAX_FRAME;
    case TP_PCAP_ETOO_MANY:
        return frames == MAX_FRAMES;
    case TP_PCAP_EBLOCK:
    case TP_PCAP_EINTERFACE:
    case TP_PCAP_ELINK:
        return pos <= size;
    default:
        return false;
    }
}

/* A pcapng file: each frame's bytes are the file's, after the previous frame's. */
static void check_pcapng(FILE *f, struct tp_pcap_reader *r, int st, const uint8_t *data,
                         size_t size)
{
    struct tp_pcap_record rec;
    size_t after = 0; /* the end of the previous frame in the file */
    uint32_t frames = 0;
    while (st == TP_PCAP_OK && (st = tp_pcap_reader_next(r, &rec)) == TP_PCAP_OK) {
        size_t pos = (size_t)ftell(f), found = SIZE_MAX;
        if (rec.caplen > MAX_FRAME || pos > size)
            abort();
        for (size_t at = after; at + rec.caplen <= pos && found == SIZE_MAX; at++)
            if (memcmp(data + at, rec.data, rec.caplen) == 0)
                found = at;
        if (found == SIZE_MAX)
            abort();
        after = found + rec.caplen;
        frames++;
    }
    if (frames > MAX_FRAMES || frames != r->frames ||
        !ng_stop_is_the_files(st, (size_t)ftell(f), size, frames, r))
        abort();
    if (tp_pcap_reader_next(r, &rec) != st)
        abort();
}

static bool stop_is_the_files(int st, size_t offset, size_t size, uint32_t frames,
                              const struct tp_pcap_reader *r)
{
    switch (st) {
    case TP_PCAP_END:
        return offset == size && frames > 0;
    case TP_PCAP_EEMPTY:
        return offset == size && frames == 0;
    case TP_PCAP_ERECORD:
        return offset < size && size < offset + 16;
    case TP_PCAP_EFRAME:
        return size >= offset + 16 && size < offset + 16 + r->caplen;
    case TP_PCAP_ETOO_LARGE:
        return size >= offset + 16 && r->caplen > MAX_FRAME;
    case TP_PCAP_ETOO_MANY:
        return size >= offset + 16 && frames == MAX_FRAMES;
    case TP_PCAP_EHEADER:
        return size < 24;
    case TP_PCAP_EMAGIC:
    case TP_PCAP_EVERSION:
        return frames == 0;
    default: /* a memory stream cannot fail to read, and the buffer is small */
        return false;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size > 0 ? size : 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, data, size);
    FILE *f = fmemopen(copy, size, "rb");
    if (f == NULL) {
        free(copy);
        return 0;
    }
    struct tp_pcap_reader r;
    struct tp_pcap_record rec;
    size_t offset = 24; /* of the next record header */
    uint32_t frames = 0;
    int st = tp_pcap_reader_open(&r, f, MAX_FRAME, MAX_FRAMES);
    if (r.pcapng) {
        check_pcapng(f, &r, st, data, size);
        st = r.status;
    }
    while (!r.pcapng && st == TP_PCAP_OK && (st = tp_pcap_reader_next(&r, &rec)) == TP_PCAP_OK) {
        if (rec.caplen > MAX_FRAME || offset + 16 + rec.caplen > size ||
            load32(data + offset + 8, r.big_endian) != rec.caplen ||
            memcmp(rec.data, data + offset + 16, rec.caplen) != 0)
            abort();
        offset += 16 + rec.caplen;
        frames++;
    }
    if (!r.pcapng && (frames > MAX_FRAMES || frames != r.frames ||
                      !stop_is_the_files(st, offset, size, frames, &r)))
        abort();
    /* A classic file header it took is version 2.4, in the order and resolution said. */
    bool taken =
        !r.pcapng && st != TP_PCAP_EHEADER && st != TP_PCAP_EMAGIC && st != TP_PCAP_EVERSION;
    if (taken && (load32(data, r.big_endian) != (r.nanoseconds ? 0xa1b23c4du : 0xa1b2c3d4u) ||
                  load32(data + 4, r.big_endian) != (r.big_endian ? 0x00020004u : 0x00040002u)))
        abort();
    if (tp_pcap_reader_next(&r, &rec) != st)
        abort();
    /* In memory: the same records and the same stop, the records pointing into the bytes. */
    struct tp_pcap_reader m;
    struct tp_pcap_record mrec;
    int mst = tp_pcap_reader_open_memory(&m, data, size, MAX_FRAME, MAX_FRAMES);
    for (uint32_t i = 0; mst == TP_PCAP_OK && (mst = tp_pcap_reader_next(&m, &mrec)) == TP_PCAP_OK;
         i++)
        if (i >= r.frames || mrec.data < data || mrec.data + mrec.caplen > data + size)
            abort();
    if (mst != st || m.frames != r.frames)
        abort();
    tp_pcap_reader_close(&m);
    char why[160];
    if (tp_pcap_reader_why(&r, why, sizeof(why))[0] == '\0')
        abort();
    tp_pcap_reader_close(&r);
    fclose(f);
    free(copy);
    return 0;
}
