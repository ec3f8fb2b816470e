/*
 * eobi_build.h - builds EOBI packets with the writers of eobi.h: a PacketHeader, then messages
 * appended one by one with consecutive MsgSeqNums. For the simulator, the tests and the
 * benchmarks; header only.
 */
#ifndef TP_EOBI_BUILD_H
#define TP_EOBI_BUILD_H

#include "eobi.h"

struct tp_eobi_builder {
    uint8_t *buf;
    size_t cap;
    size_t len;           /* bytes written: the packet so far */
    size_t last;          /* offset of the last message appended */
    uint32_t msg_seq_num; /* MsgSeqNum of the next message */
    int error;            /* -ENOSPC once a message did not fit (it was not written) */
};

/* Starts a packet in buf (cap bytes) with header h; messages get MsgSeqNum msg_seq_num on. */
static inline void tp_eobi_build_begin(struct tp_eobi_builder *b, uint8_t *buf, size_t cap,
                                       const struct tp_eobi_packet_header *h, uint32_t msg_seq_num)
{
    int n = tp_eobi_packet_header_encode(buf, cap, h, TP_EOBI_NO_MSG_SEQ_NUM);

    b->buf = buf;
    b->cap = cap;
    b->len = b->last = n < 0 ? 0 : (size_t)n;
    b->msg_seq_num = msg_seq_num;
    b->error = n < 0 ? n : 0;
}

/* Bytes left for messages. */
static inline size_t tp_eobi_build_room(const struct tp_eobi_builder *b)
{
    return b->cap - b->len;
}

/* Records the result n of a writer that wrote at the end of the packet. */
static inline int tp_eobi_build_took(struct tp_eobi_builder *b, int n, int sequenced)
{
    if (n < 0) {
        b->error = n;
        return n;
    }
    b->last = b->len;
    b->len += (size_t)n;
    b->msg_seq_num += sequenced != 0;
    return n;
}

/*
 * Appends message M (v: a struct tp_eobi_M *) with the next MsgSeqNum. Evaluates to the bytes
 * written or -ENOSPC (nothing written, b->error set).
 */
#define TP_EOBI_BUILD(b, M, v)                                                                     \
    tp_eobi_build_took(                                                                            \
        (b),                                                                                       \
        tp_eobi_##M##_encode((b)->buf + (b)->len, (b)->cap - (b)->len, (v), (b)->msg_seq_num), 1)

/* Appends a Heartbeat (not sequenced: MsgSeqNum TP_EOBI_NO_MSG_SEQ_NUM). */
static inline int tp_eobi_build_heartbeat(struct tp_eobi_builder *b, uint32_t last_processed)
{
    struct tp_eobi_heartbeat v = {.last_msg_seq_num_processed = last_processed};

    return tp_eobi_build_took(
        b, tp_eobi_heartbeat_encode(b->buf + b->len, b->cap - b->len, &v, TP_EOBI_NO_MSG_SEQ_NUM),
        0);
}

/* Appends an entry to the InstrumentSummary appended last. 0 or -ENOSPC. */
static inline int tp_eobi_build_md_entry(struct tp_eobi_builder *b,
                                         const struct tp_eobi_md_entry *v)
{
    size_t msg_len = b->len - b->last;
    int rc = tp_eobi_md_entry_encode(b->buf + b->last, b->cap - b->last, &msg_len, v);

    if (rc < 0) {
        b->error = rc;
        return rc;
    }
    b->len = b->last + msg_len;
    return 0;
}

#endif /* TP_EOBI_BUILD_H */
