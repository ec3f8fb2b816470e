/*
 * moldudp64.h - Nasdaq MoldUDP64 downstream packets and re-request packets.
 *
 * Downstream packet: Session[10] (ASCII), SequenceNumber u64 (of the first message),
 * MessageCount u16, then MessageCount blocks of `length u16` + message. All big-endian.
 * MessageCount 0 is a heartbeat and 0xFFFF marks the end of the session; both carry no blocks
 * (their SequenceNumber is the next message the server will send).
 *
 * Promise: the iterator never reads outside [buf, buf + len). Every block length is checked
 * against the bytes left; a count that claims more blocks than the packet holds, a block that
 * runs past the end, or bytes left over after the last counted block make it return -EBADMSG
 * (messages already returned stay valid: they were fully inside the packet).
 * The writer builds packets in a caller buffer and refuses (NULL / -ENOSPC) what does not fit.
 * Header only, no allocation.
 */
#ifndef TP_MOLDUDP64_H
#define TP_MOLDUDP64_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "net_bytes.h"

#define TP_MOLD_SESSION_LEN    10
#define TP_MOLD_HEADER_LEN     20 /* session + sequence + count */
#define TP_MOLD_REQUEST_LEN    20 /* session + sequence + requested count */
#define TP_MOLD_END_OF_SESSION 0xFFFF

enum tp_mold_kind {
    TP_MOLD_MESSAGES = 0,  /* count >= 1: message blocks follow */
    TP_MOLD_HEARTBEAT = 1, /* count 0 */
    TP_MOLD_END = 2,       /* count 0xFFFF: end of session */
};

/* A parsed downstream packet and the iteration state over its message blocks. */
struct tp_mold_packet {
    const uint8_t *session; /* TP_MOLD_SESSION_LEN bytes in place, space padded */
    uint64_t sequence;      /* sequence number of the first message in the packet */
    uint16_t count;         /* MessageCount as sent */
    uint16_t index;         /* blocks returned so far by tp_mold_next */
    const uint8_t *start;   /* packet start, for offsets in error reports */
    const uint8_t *next;    /* next block */
    const uint8_t *end;     /* one past the packet */
};

/*
 * Parses the header of a packet of len bytes. Returns enum tp_mold_kind, or -EBADMSG when the
 * packet is shorter than a header, or a heartbeat / end-of-session carries payload bytes.
 */
static inline int tp_mold_parse(struct tp_mold_packet *p, const uint8_t *buf, size_t len)
{
    /* Every member is set even on failure: a packet that failed to parse iterates as empty. */
    p->session = buf;
    p->sequence = 0;
    p->count = 0;
    p->index = 0;
    p->start = buf;
    p->next = buf + len;
    p->end = buf + len;
    if (len < TP_MOLD_HEADER_LEN)
        return -EBADMSG;
    p->sequence = tp_load_be64(buf + 10);
    p->count = tp_load_be16(buf + 18);
    p->next = buf + TP_MOLD_HEADER_LEN;
    if (p->count == 0 || p->count == TP_MOLD_END_OF_SESSION) {
        if (len != TP_MOLD_HEADER_LEN)
            return -EBADMSG;
        return p->count == 0 ? TP_MOLD_HEARTBEAT : TP_MOLD_END;
    }
    return TP_MOLD_MESSAGES;
}

/*
 * Returns the next message block: 1 with *msg / *len set (the message's sequence number is
 * p->sequence + p->index - 1 after the call), 0 when all counted blocks were read and the
 * packet ends exactly there, -EBADMSG when the packet lies (see the promise above).
 * Control packets (heartbeat, end of session) have no blocks: the first call returns 0.
 */
static inline int tp_mold_next(struct tp_mold_packet *p, const uint8_t **msg, uint16_t *len)
{
    size_t left = (size_t)(p->end - p->next);
    if (p->count == TP_MOLD_END_OF_SESSION || p->index == p->count)
        return left == 0 ? 0 : -EBADMSG;
    if (left < 2)
        return -EBADMSG;
    uint16_t n = tp_load_be16(p->next);
    if (n > left - 2)
        return -EBADMSG;
    *msg = p->next + 2;
    *len = n;
    p->next += 2 + (size_t)n;
    p->index++;
    return 1;
}

/* The walk of tp_mold_frame and tp_mold_check; `store` is a constant in each (forced inline). */
static inline __attribute__((always_inline)) int
tp_mold_walk(const struct tp_mold_packet *p, const uint8_t **msgs, uint16_t *lens, const int store)
{
    size_t left = (size_t)(p->end - p->next);
    const uint8_t *at = p->next;
    uint32_t blocks = p->count == TP_MOLD_END_OF_SESSION ? 0 : (uint32_t)(p->count - p->index);
    for (uint32_t i = 0; i < blocks; i++) {
        if (left < 2)
            return -EBADMSG;
        uint16_t n = tp_load_be16(at);
        size_t block = 2 + (size_t)n;
        if (block > left)
            return -EBADMSG;
        if (store) {
            msgs[i] = at + 2;
            lens[i] = n;
        }
        at += block;
        left -= block;
    }
    return left == 0 ? (int)blocks : -EBADMSG;
}

/*
 * Checks the blocks tp_mold_next has yet to return in one pass and returns them: the number of
 * blocks when tp_mold_next would return them all and then 0, -EBADMSG when it would fail on the
 * way. Block i's message and length go to msgs[i] and lens[i] once the block is checked (a
 * failure leaves the entries written before it meaningless): room for min(blocks left, bytes
 * left / 2) entries, as a block takes at least 2 bytes. A packet that passed may be walked again
 * with tp_mold_next_framed while its bytes stay unchanged.
 */
static inline int tp_mold_frame(const struct tp_mold_packet *p, const uint8_t **msgs,
                                uint16_t *lens)
{
    return tp_mold_walk(p, msgs, lens, 1);
}

/*
 * tp_mold_frame without the blocks: 0 when tp_mold_next would return them all and then 0,
 * -EBADMSG when it would fail on the way.
 */
static inline int tp_mold_check(const struct tp_mold_packet *p)
{
    return tp_mold_walk(p, NULL, NULL, 0) < 0 ? -EBADMSG : 0;
}

/*
 * The next block of a packet tp_mold_check (or tp_mold_frame) accepted: the message, its length in
 * *len. No bounds checks (the check made them once); the caller stops after p->count blocks (a
 * control packet has none). Only for bytes that have not changed since the check.
 */
static inline const uint8_t *tp_mold_next_framed(struct tp_mold_packet *p, uint16_t *len)
{
    const uint8_t *msg = p->next + 2;
    *len = tp_load_be16(p->next);
    p->next = msg + *len;
    p->index++;
    return msg;
}

/* Byte offset of the next (or offending) block from the packet start: for error reports. */
static inline size_t tp_mold_offset(const struct tp_mold_packet *p)
{
    return (size_t)(p->next - p->start);
}

/* ---- writer ---------------------------------------------------------------------------- */

struct tp_mold_writer {
    uint8_t *buf;
    size_t cap;
    size_t len;
    uint16_t count;
};

/* Starts a packet: session (TP_MOLD_SESSION_LEN bytes, copied as is) and first sequence. */
static inline int tp_mold_writer_init(struct tp_mold_writer *w, uint8_t *buf, size_t cap,
                                      const char *session, uint64_t sequence)
{
    if (cap < TP_MOLD_HEADER_LEN)
        return -ENOSPC;
    w->buf = buf;
    w->cap = cap;
    w->len = TP_MOLD_HEADER_LEN;
    w->count = 0;
    memcpy(buf, session, TP_MOLD_SESSION_LEN);
    tp_store_be64(buf + 10, sequence);
    tp_store_be16(buf + 18, 0);
    return 0;
}

/*
 * Reserves a block of len bytes and returns where to write the message (encode ITCH straight
 * into the packet), or NULL when it does not fit or the count would reach the end-of-session
 * marker.
 */
static inline uint8_t *tp_mold_writer_reserve(struct tp_mold_writer *w, uint16_t len)
{
    if (w->count == TP_MOLD_END_OF_SESSION - 1 || w->cap - w->len < 2 + (size_t)len)
        return NULL;
    uint8_t *block = w->buf + w->len;
    tp_store_be16(block, len);
    w->len += 2 + (size_t)len;
    w->count++;
    tp_store_be16(w->buf + 18, w->count);
    return block + 2;
}

/* Appends a copy of a message; 0 or -ENOSPC. */
static inline int tp_mold_writer_add(struct tp_mold_writer *w, const uint8_t *msg, uint16_t len)
{
    uint8_t *dst = tp_mold_writer_reserve(w, len);
    if (dst == NULL)
        return -ENOSPC;
    memcpy(dst, msg, len);
    return 0;
}

/*
 * Writes a control packet (count 0 = heartbeat, TP_MOLD_END_OF_SESSION = end of session) and
 * returns its length, or -ENOSPC.
 */
static inline int tp_mold_encode_control(uint8_t *buf, size_t cap, const char *session,
                                         uint64_t next_sequence, uint16_t count)
{
    if (cap < TP_MOLD_HEADER_LEN)
        return -ENOSPC;
    memcpy(buf, session, TP_MOLD_SESSION_LEN);
    tp_store_be64(buf + 10, next_sequence);
    tp_store_be16(buf + 18, count);
    return TP_MOLD_HEADER_LEN;
}

/* ---- re-request (client -> retransmission server) --------------------------------------- */

struct tp_mold_request {
    char session[TP_MOLD_SESSION_LEN];
    uint64_t sequence; /* first message wanted */
    uint16_t count;    /* how many */
};

static inline int tp_mold_request_encode(uint8_t *buf, size_t cap, const struct tp_mold_request *r)
{
    return tp_mold_encode_control(buf, cap, r->session, r->sequence, r->count);
}

/* 0, or -EBADMSG when len is not exactly a request's length. */
static inline int tp_mold_request_decode(const uint8_t *buf, size_t len, struct tp_mold_request *r)
{
    if (len != TP_MOLD_REQUEST_LEN)
        return -EBADMSG;
    memcpy(r->session, buf, TP_MOLD_SESSION_LEN);
    r->sequence = tp_load_be64(buf + 10);
    r->count = tp_load_be16(buf + 18);
    return 0;
}

#endif /* TP_MOLDUDP64_H */
