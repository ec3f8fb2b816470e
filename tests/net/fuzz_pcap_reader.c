/*
 * fuzz_pcap_reader.c - libFuzzer target: any bytes as a classic pcap file through pcap_reader
 * (fmemopen over an exact-size copy, so ASan sees a read past the end). The sanitizers catch
 * overruns; the checks below catch a record that is not the file's (its length and bytes are
 * the ones at the place the records so far lead to), a file header taken that is not a classic
 * 2.4 one in the order and resolution reported, a frame above the limit, more frames than the
 * limit, an end that is not the file's end, a truncation reported where the file is whole, and a
 * status that changes after the reader stopped.
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
    case TP_PCAP_EPCAPNG:
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
    while (st == TP_PCAP_OK && (st = tp_pcap_reader_next(&r, &rec)) == TP_PCAP_OK) {
        if (rec.caplen > MAX_FRAME || offset + 16 + rec.caplen > size ||
            load32(data + offset + 8, r.big_endian) != rec.caplen ||
            memcmp(rec.data, data + offset + 16, rec.caplen) != 0)
            abort();
        offset += 16 + rec.caplen;
        frames++;
    }
    if (frames > MAX_FRAMES || frames != r.frames ||
        !stop_is_the_files(st, offset, size, frames, &r))
        abort();
    /* A file header it took is a classic one, version 2.4, in the order and resolution said. */
    bool taken = st != TP_PCAP_EHEADER && st != TP_PCAP_EPCAPNG && st != TP_PCAP_EMAGIC &&
                 st != TP_PCAP_EVERSION;
    if (taken && (load32(data, r.big_endian) != (r.nanoseconds ? 0xa1b23c4du : 0xa1b2c3d4u) ||
                  load32(data + 4, r.big_endian) != (r.big_endian ? 0x00020004u : 0x00040002u)))
        abort();
    if (tp_pcap_reader_next(&r, &rec) != st)
        abort();
    char why[160];
    if (tp_pcap_reader_why(&r, why, sizeof(why))[0] == '\0')
        abort();
    tp_pcap_reader_close(&r);
    fclose(f);
    free(copy);
    return 0;
}
