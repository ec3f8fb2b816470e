/*
 * mdp3_packet.h - CME MDP 3.0 packet framing over the generated SBE codec (mdp3_sbe.h).
 *
 * Packet: binary packet header (MsgSeqNum u32, SendingTime u64, little-endian), then messages,
 * each `MsgSize u16` (the whole message, MsgSize included) + SBE message header (blockLength,
 * templateId, schemaId, version) + root block + groups.
 *
 * Promise: the iterator never reads outside [data, data + len). Every MsgSize is checked to
 * hold at least the MsgSize and the SBE header and to fit in what is left of the packet; the
 * first bad message ends the iteration with -EBADMSG and its offset in error_offset (messages
 * returned before stay valid). A message body (tp_mdp3_msg.body, body_len bytes) is then decoded
 * with the generated mktdata_<msg>_wrap_for_decode(), which checks the block length once.
 * Schema id and version are reported, not judged: the caller skips messages of other schemas.
 * Header only for the hot path (the iterator inlines); the writer and JSON helper are in
 * mdp3_packet.c. No allocation.
 */
#ifndef TP_MDP3_PACKET_H
#define TP_MDP3_PACKET_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mdp3_sbe.h"

#define TP_MDP3_PACKET_HEADER_LEN 12 /* MsgSeqNum u32 + SendingTime u64 */
#define TP_MDP3_MSG_SIZE_LEN      2
/* Smallest message: MsgSize + SBE message header. */
#define TP_MDP3_MSG_MIN_LEN (TP_MDP3_MSG_SIZE_LEN + MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH)

/* A packet being iterated. */
struct tp_mdp3_packet {
    uint32_t seq;          /* MsgSeqNum */
    uint64_t sending_time; /* SendingTime, ns since the Unix epoch */
    const uint8_t *data;   /* packet start */
    size_t len;            /* packet length */
    size_t pos;            /* offset of the next message */
    size_t error_offset;   /* offset of the malformed message after -EBADMSG */
};

/* One message of a packet, its SBE header decoded. */
struct tp_mdp3_msg {
    size_t offset; /* of its MsgSize in the packet */
    uint16_t size; /* MsgSize */
    uint16_t block_length;
    uint16_t template_id;
    uint16_t schema_id;
    uint16_t version;
    const uint8_t *body; /* root block (after the SBE header) */
    size_t body_len;     /* MsgSize - 2 - SBE header */
};

static inline uint16_t tp_mdp3_le16(const uint8_t *p)
{
    return mktdata_load_u16(p);
}

/* Reads the packet header. 0, or -EBADMSG when len is shorter than the header. */
static inline int tp_mdp3_packet_init(struct tp_mdp3_packet *p, const void *data, size_t len)
{
    const uint8_t *d = data;
    p->data = d;
    p->error_offset = 0;
    if (len < TP_MDP3_PACKET_HEADER_LEN) {
        p->len = p->pos = 0; /* no messages */
        p->seq = 0;
        p->sending_time = 0;
        return -EBADMSG;
    }
    p->len = len;
    p->seq = mktdata_load_u32(d);
    p->sending_time = mktdata_load_u64(d + 4);
    p->pos = TP_MDP3_PACKET_HEADER_LEN;
    return 0;
}

/* Fills *m with the message of `size` bytes (checked by the caller) at p->pos and moves past it. */
static inline void tp_mdp3_packet_take(struct tp_mdp3_packet *p, struct tp_mdp3_msg *m,
                                       uint16_t size)
{
    const uint8_t *h = p->data + p->pos + TP_MDP3_MSG_SIZE_LEN;
    m->offset = p->pos;
    m->size = size;
    m->block_length = mktdata_message_header_block_length(h);
    m->template_id = mktdata_message_header_template_id(h);
    m->schema_id = mktdata_message_header_schema_id(h);
    m->version = mktdata_message_header_version(h);
    m->body = h + MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH;
    m->body_len = (size_t)size - TP_MDP3_MSG_MIN_LEN;
    p->pos += size;
}

/*
 * Next message of the packet: 1 with *m filled, 0 at the end of the packet, -EBADMSG when the
 * message at p->error_offset is malformed (the rest of the packet cannot be framed).
 */
static inline int tp_mdp3_packet_next(struct tp_mdp3_packet *p, struct tp_mdp3_msg *m)
{
    size_t left = p->len - p->pos;
    if (left == 0)
        return 0;
    const uint8_t *d = p->data + p->pos;
    if (left < TP_MDP3_MSG_MIN_LEN)
        goto bad;
    uint16_t size = tp_mdp3_le16(d);
    if (size < TP_MDP3_MSG_MIN_LEN || size > left)
        goto bad;
    tp_mdp3_packet_take(p, m, size);
    return 1;
bad:
    p->error_offset = p->pos;
    p->pos = p->len;
    return -EBADMSG;
}

/*
 * Bytes of a packet's leading whole messages, header included: len when every message frames,
 * else the offset of the first malformed one (where tp_mdp3_packet_next would stop with
 * -EBADMSG); 0 when len is shorter than the header. Reads only the MsgSizes: a receiver checks
 * once and walks those bytes (unchanged) later with tp_mdp3_packet_next_framed.
 */
static inline size_t tp_mdp3_packet_framed_len(const uint8_t *data, size_t len)
{
    if (len < TP_MDP3_PACKET_HEADER_LEN)
        return 0;
    size_t pos = TP_MDP3_PACKET_HEADER_LEN;
    /* pos <= len throughout; fewer bytes left than a message holds must be none at all. */
    while (len - pos >= TP_MDP3_MSG_MIN_LEN) {
        uint16_t size = tp_mdp3_le16(data + pos);
        if (size < TP_MDP3_MSG_MIN_LEN || size > len - pos)
            break;
        pos += size;
    }
    return pos;
}

/* Whether a packet frames exactly: tp_mdp3_packet_next returns 1 for every message, then 0. */
static inline bool tp_mdp3_packet_frames(const uint8_t *data, size_t len)
{
    return len >= TP_MDP3_PACKET_HEADER_LEN && tp_mdp3_packet_framed_len(data, len) == len;
}

/*
 * tp_mdp3_packet_next without the checks, for a packet initialised with the length
 * tp_mdp3_packet_framed_len gave for the same unchanged bytes: the same messages (those before a
 * malformed one). 1 with *m filled, 0 at the end.
 */
static inline int tp_mdp3_packet_next_framed(struct tp_mdp3_packet *p, struct tp_mdp3_msg *m)
{
    if (p->pos == p->len)
        return 0;
    tp_mdp3_packet_take(p, m, tp_mdp3_le16(p->data + p->pos));
    return 1;
}

/*
 * Writes message m as one JSON object into out (snprintf contract: returns the length needed).
 * -ENOENT for a template the schema does not know, -EPROTO for another schema id, -EBADMSG when
 * the body is truncated or inconsistent.
 */
int tp_mdp3_msg_print_json(const struct tp_mdp3_msg *m, char *out, size_t cap);

/* Builds packets in a caller buffer (the simulator, tests, fuzz seeds). */
struct tp_mdp3_writer {
    uint8_t *buf;
    size_t cap;
    size_t len; /* bytes written so far, packet header included */
};

/* Starts a packet with its header. 0 or -ENOSPC. */
int tp_mdp3_writer_init(struct tp_mdp3_writer *w, void *buf, size_t cap, uint32_t seq,
                        uint64_t sending_time);

/*
 * Room for the next message: returns where its SBE header goes (hand it to
 * mktdata_<msg>_wrap_and_apply_header with *room) or NULL when the packet is full.
 */
uint8_t *tp_mdp3_writer_reserve(struct tp_mdp3_writer *w, size_t *room);

/*
 * Ends the reserved message: sbe_len is the SBE header plus body
 * (MKTDATA_MESSAGE_HEADER_ENCODED_LENGTH + mktdata_<msg>_encoded_length()). Writes MsgSize.
 * 0, or -ENOSPC / -EMSGSIZE when it does not fit or exceeds MsgSize's range.
 */
int tp_mdp3_writer_commit(struct tp_mdp3_writer *w, size_t sbe_len);

#endif /* TP_MDP3_PACKET_H */
