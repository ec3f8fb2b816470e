/*
 * soupbintcp.h - Nasdaq SoupBinTCP 4.0 logical packets (the TCP session GLIMPSE runs over).
 *
 * A packet is `length u16` (big-endian, the bytes that follow it: the type byte and the payload),
 * a type byte, then the payload. Server to client: '+' debug, 'A' login accepted, 'J' login
 * rejected, 'S' sequenced data, 'H' server heartbeat, 'Z' end of session. Client to server: '+'
 * debug, 'L' login request, 'U' unsequenced data, 'R' client heartbeat, 'O' logout request.
 * Alpha fields are ASCII, left-justified and space padded; numeric fields (sequence numbers) are
 * ASCII digits, right-justified and space padded on the left.
 *
 * Promise: the framer never reads outside [buf, buf + len). It returns a packet only when all of
 * it is in the buffer, says how many more bytes a cut packet needs, and refuses a length of 0 (no
 * type byte) or one beyond the caller's limit; tp_soup_check then refuses a known type whose
 * payload has the wrong size and any type the given direction does not send. Field readers are
 * only for packets tp_soup_check accepted. Writers build packets in a caller buffer and refuse
 * (-ENOSPC / -EINVAL) what does not fit. Header only, no allocation.
 */
#ifndef TP_SOUPBINTCP_H
#define TP_SOUPBINTCP_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "net_bytes.h"

#define TP_SOUP_LENGTH_LEN   2 /* the length field */
#define TP_SOUP_USERNAME_LEN 6
#define TP_SOUP_PASSWORD_LEN 10
#define TP_SOUP_SESSION_LEN  10
#define TP_SOUP_SEQUENCE_LEN 20
/* Payload sizes of the fixed-size packets (after the type byte). */
#define TP_SOUP_LOGIN_ACCEPTED_LEN (TP_SOUP_SESSION_LEN + TP_SOUP_SEQUENCE_LEN)
#define TP_SOUP_LOGIN_REJECTED_LEN 1
#define TP_SOUP_LOGIN_REQUEST_LEN                                                                  \
    (TP_SOUP_USERNAME_LEN + TP_SOUP_PASSWORD_LEN + TP_SOUP_SESSION_LEN + TP_SOUP_SEQUENCE_LEN)
/* The largest packet the length field can describe, length field included. */
#define TP_SOUP_MAX_PACKET (TP_SOUP_LENGTH_LEN + UINT16_MAX)

enum tp_soup_type {
    TP_SOUP_DEBUG = '+',
    TP_SOUP_LOGIN_ACCEPTED = 'A',
    TP_SOUP_LOGIN_REJECTED = 'J',
    TP_SOUP_SEQUENCED = 'S',
    TP_SOUP_SERVER_HEARTBEAT = 'H',
    TP_SOUP_END_OF_SESSION = 'Z',
    TP_SOUP_LOGIN_REQUEST = 'L',
    TP_SOUP_UNSEQUENCED = 'U',
    TP_SOUP_CLIENT_HEARTBEAT = 'R',
    TP_SOUP_LOGOUT_REQUEST = 'O',
};

/* Login rejected reject codes. */
#define TP_SOUP_REJECT_NOT_AUTHORIZED 'A'
#define TP_SOUP_REJECT_NO_SESSION     'S'

/* Who sent the packet being checked. */
enum tp_soup_direction {
    TP_SOUP_FROM_SERVER = 0,
    TP_SOUP_FROM_CLIENT = 1,
};

/* A framed packet, read in place. */
struct tp_soup_packet {
    uint8_t type;
    uint16_t payload_len;
    const uint8_t *payload; /* payload_len bytes after the type byte */
};

/*
 * Frames the packet at the start of buf[0..len). Returns the bytes it takes (> 0) with *p set;
 * 0 when the buffer holds only part of it (*need: the bytes the whole packet takes, so the caller
 * knows how much more to read); -EBADMSG when its length is 0 or the packet would take more
 * than max_packet bytes (the caller's buffer).
 */
static inline int tp_soup_frame(const uint8_t *buf, size_t len, size_t max_packet,
                                struct tp_soup_packet *p, size_t *need)
{
    *need = TP_SOUP_LENGTH_LEN + 1;
    p->type = 0;
    p->payload_len = 0;
    p->payload = buf;
    if (len < TP_SOUP_LENGTH_LEN)
        return 0;
    uint16_t n = tp_load_be16(buf);
    size_t total = TP_SOUP_LENGTH_LEN + (size_t)n;
    if (n == 0 || total > max_packet)
        return -EBADMSG;
    *need = total;
    if (len < total)
        return 0;
    p->type = buf[TP_SOUP_LENGTH_LEN];
    p->payload_len = (uint16_t)(n - 1);
    p->payload = buf + TP_SOUP_LENGTH_LEN + 1;
    return (int)total;
}

/*
 * Checks a framed packet against the type's size and the direction it came from. Returns 0, or
 * -EBADMSG (wrong size for its type) or -EPROTO (a type this direction never sends).
 */
static inline int tp_soup_check(const struct tp_soup_packet *p, enum tp_soup_direction from)
{
    size_t want;
    switch (p->type) {
    case TP_SOUP_DEBUG:
        return 0;
    case TP_SOUP_SEQUENCED:
        if (from != TP_SOUP_FROM_SERVER)
            return -EPROTO;
        return 0;
    case TP_SOUP_UNSEQUENCED:
        if (from != TP_SOUP_FROM_CLIENT)
            return -EPROTO;
        return 0;
    case TP_SOUP_LOGIN_ACCEPTED:
        want = TP_SOUP_LOGIN_ACCEPTED_LEN;
        break;
    case TP_SOUP_LOGIN_REJECTED:
        want = TP_SOUP_LOGIN_REJECTED_LEN;
        break;
    case TP_SOUP_SERVER_HEARTBEAT:
    case TP_SOUP_END_OF_SESSION:
        want = 0;
        break;
    case TP_SOUP_LOGIN_REQUEST:
        if (from != TP_SOUP_FROM_CLIENT)
            return -EPROTO;
        return p->payload_len == TP_SOUP_LOGIN_REQUEST_LEN ? 0 : -EBADMSG;
    case TP_SOUP_CLIENT_HEARTBEAT:
    case TP_SOUP_LOGOUT_REQUEST:
        if (from != TP_SOUP_FROM_CLIENT)
            return -EPROTO;
        return p->payload_len == 0 ? 0 : -EBADMSG;
    default:
        return -EPROTO;
    }
    if (from != TP_SOUP_FROM_SERVER)
        return -EPROTO;
    return p->payload_len == want ? 0 : -EBADMSG;
}

/*
 * Reads a numeric field of width bytes: optional leading spaces, then digits (at least one
 * unless the field is all spaces, which reads as 0). Returns 0 or -EBADMSG (another byte, or a
 * value beyond 64 bits).
 */
static inline int tp_soup_numeric(const uint8_t *field, size_t width, uint64_t *value)
{
    size_t i = 0;
    uint64_t v = 0;
    while (i < width && field[i] == ' ')
        i++;
    for (; i < width; i++) {
        if (field[i] < '0' || field[i] > '9')
            return -EBADMSG;
        uint64_t d = (uint64_t)(field[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -EBADMSG;
        v = v * 10 + d;
    }
    *value = v;
    return 0;
}

/* Writes value as a numeric field of width bytes (space padded on the left); -EINVAL if too wide.
 */
static inline int tp_soup_numeric_set(uint8_t *field, size_t width, uint64_t value)
{
    size_t i = width;
    do {
        if (i == 0)
            return -EINVAL;
        field[--i] = (uint8_t)('0' + value % 10);
        value /= 10;
    } while (value != 0);
    memset(field, ' ', i);
    return 0;
}

/* Writes a C string as an alpha field (left-justified, space padded); -EINVAL if too long. */
static inline int tp_soup_alpha_set(uint8_t *field, size_t width, const char *s)
{
    size_t n = strlen(s);
    if (n > width)
        return -EINVAL;
    memcpy(field, s, n);
    memset(field + n, ' ', width - n);
    return 0;
}

/* ---- fields of checked packets ---------------------------------------------------------- */

/* Login accepted: the session (TP_SOUP_SESSION_LEN bytes in place) and the next sequence. */
static inline const uint8_t *tp_soup_accepted_session(const struct tp_soup_packet *p)
{
    return p->payload;
}

static inline int tp_soup_accepted_sequence(const struct tp_soup_packet *p, uint64_t *seq)
{
    return tp_soup_numeric(p->payload + TP_SOUP_SESSION_LEN, TP_SOUP_SEQUENCE_LEN, seq);
}

/* Login rejected: the reject code (TP_SOUP_REJECT_*; other codes are passed through). */
static inline uint8_t tp_soup_reject_code(const struct tp_soup_packet *p)
{
    return p->payload[0];
}

/* Login request fields, in place. */
static inline const uint8_t *tp_soup_login_username(const struct tp_soup_packet *p)
{
    return p->payload;
}

static inline const uint8_t *tp_soup_login_password(const struct tp_soup_packet *p)
{
    return p->payload + TP_SOUP_USERNAME_LEN;
}

static inline const uint8_t *tp_soup_login_session(const struct tp_soup_packet *p)
{
    return p->payload + TP_SOUP_USERNAME_LEN + TP_SOUP_PASSWORD_LEN;
}

static inline int tp_soup_login_sequence(const struct tp_soup_packet *p, uint64_t *seq)
{
    return tp_soup_numeric(p->payload + TP_SOUP_USERNAME_LEN + TP_SOUP_PASSWORD_LEN +
                               TP_SOUP_SESSION_LEN,
                           TP_SOUP_SEQUENCE_LEN, seq);
}

/* ---- writers ------------------------------------------------------------------------------ */

/*
 * Starts a packet of `type` with a payload of payload_len bytes in buf and returns where the
 * payload goes, or NULL when it does not fit in cap bytes. The packet takes
 * TP_SOUP_LENGTH_LEN + 1 + payload_len bytes.
 */
static inline uint8_t *tp_soup_begin(uint8_t *buf, size_t cap, uint8_t type, size_t payload_len)
{
    if (payload_len > UINT16_MAX - 1 || cap < TP_SOUP_LENGTH_LEN + 1 + payload_len)
        return NULL;
    tp_store_be16(buf, (uint16_t)(payload_len + 1));
    buf[TP_SOUP_LENGTH_LEN] = type;
    return buf + TP_SOUP_LENGTH_LEN + 1;
}

/* A packet with a payload copied in; returns its length or -ENOSPC. */
static inline int tp_soup_encode(uint8_t *buf, size_t cap, uint8_t type, const uint8_t *payload,
                                 size_t payload_len)
{
    uint8_t *at = tp_soup_begin(buf, cap, type, payload_len);
    if (at == NULL)
        return -ENOSPC;
    if (payload_len > 0)
        memcpy(at, payload, payload_len);
    return (int)(TP_SOUP_LENGTH_LEN + 1 + payload_len);
}

/*
 * A login request: username, password and requested session as C strings (an empty session
 * asks for the current one), and the requested sequence number. Returns its length, -ENOSPC,
 * or -EINVAL when a field is too long for its width.
 */
static inline int tp_soup_encode_login(uint8_t *buf, size_t cap, const char *username,
                                       const char *password, const char *session, uint64_t seq)
{
    uint8_t *at = tp_soup_begin(buf, cap, TP_SOUP_LOGIN_REQUEST, TP_SOUP_LOGIN_REQUEST_LEN);
    if (at == NULL)
        return -ENOSPC;
    if (tp_soup_alpha_set(at, TP_SOUP_USERNAME_LEN, username) != 0 ||
        tp_soup_alpha_set(at + TP_SOUP_USERNAME_LEN, TP_SOUP_PASSWORD_LEN, password) != 0 ||
        tp_soup_alpha_set(at + TP_SOUP_USERNAME_LEN + TP_SOUP_PASSWORD_LEN, TP_SOUP_SESSION_LEN,
                          session) != 0 ||
        tp_soup_numeric_set(at + TP_SOUP_LOGIN_REQUEST_LEN - TP_SOUP_SEQUENCE_LEN,
                            TP_SOUP_SEQUENCE_LEN, seq) != 0)
        return -EINVAL;
    return TP_SOUP_LENGTH_LEN + 1 + TP_SOUP_LOGIN_REQUEST_LEN;
}

/* A login accepted: session (TP_SOUP_SESSION_LEN bytes, as is) and the next sequence number. */
static inline int tp_soup_encode_accepted(uint8_t *buf, size_t cap, const char *session,
                                          uint64_t seq)
{
    uint8_t *at = tp_soup_begin(buf, cap, TP_SOUP_LOGIN_ACCEPTED, TP_SOUP_LOGIN_ACCEPTED_LEN);
    if (at == NULL)
        return -ENOSPC;
    memcpy(at, session, TP_SOUP_SESSION_LEN);
    tp_soup_numeric_set(at + TP_SOUP_SESSION_LEN, TP_SOUP_SEQUENCE_LEN, seq);
    return TP_SOUP_LENGTH_LEN + 1 + TP_SOUP_LOGIN_ACCEPTED_LEN;
}

/* A packet of one byte, the type (heartbeats, end of session, logout). */
static inline int tp_soup_encode_control(uint8_t *buf, size_t cap, uint8_t type)
{
    return tp_soup_encode(buf, cap, type, NULL, 0);
}

#endif /* TP_SOUPBINTCP_H */
