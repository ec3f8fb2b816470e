/*
 * binaryfile.h - Nasdaq BinaryFILE framing: a sequence of `length u16` (big-endian) + message,
 * with no packet header. Nasdaq publishes whole ITCH days this way.
 *
 * Promise: the reader walks a buffer (typically a read-only mmap of the whole file) and never
 * reads outside it. A length prefix or a message cut by the end of the buffer is reported as
 * -EBADMSG with the reader left at the offending block, so a tool can print the byte offset;
 * there is no way to resynchronise after a bad length, so reading stops there.
 * The writer appends blocks to a caller buffer. Header only, no allocation.
 */
#ifndef TP_BINARYFILE_H
#define TP_BINARYFILE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "net_bytes.h"

struct tp_binfile_reader {
    const uint8_t *buf;
    size_t len;
    size_t offset; /* of the next block */
};

static inline void tp_binfile_reader_init(struct tp_binfile_reader *r, const uint8_t *buf,
                                          size_t len)
{
    r->buf = buf;
    r->len = len;
    r->offset = 0;
}

/* 1 with *msg / *len set; 0 at a clean end of the buffer; -EBADMSG for a cut block. */
static inline int tp_binfile_next(struct tp_binfile_reader *r, const uint8_t **msg, uint16_t *len)
{
    size_t left = r->len - r->offset;
    if (left == 0)
        return 0;
    if (left < 2)
        return -EBADMSG;
    uint16_t n = tp_load_be16(r->buf + r->offset);
    if (n > left - 2)
        return -EBADMSG;
    *msg = r->buf + r->offset + 2;
    *len = n;
    r->offset += 2 + (size_t)n;
    return 1;
}

/* Appends one block at *offset in buf (cap bytes) and advances *offset; 0 or -ENOSPC. */
static inline int tp_binfile_append(uint8_t *buf, size_t cap, size_t *offset, const uint8_t *msg,
                                    uint16_t len)
{
    if (cap < *offset || cap - *offset < 2 + (size_t)len)
        return -ENOSPC;
    tp_store_be16(buf + *offset, len);
    memcpy(buf + *offset + 2, msg, len);
    *offset += 2 + (size_t)len;
    return 0;
}

#endif /* TP_BINARYFILE_H */
