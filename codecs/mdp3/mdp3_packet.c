/*
 * mdp3_packet.c - MDP 3.0 packet writer and the per-message JSON helper (the iterator is inline
 * in mdp3_packet.h).
 */
#include "mdp3_packet.h"

int tp_mdp3_msg_print_json(const struct tp_mdp3_msg *m, char *out, size_t cap)
{
    if (m->schema_id != MKTDATA_SCHEMA_ID)
        return -EPROTO;
    return mktdata_message_print_json(m->template_id, m->body, m->body_len, m->block_length,
                                      m->version, out, cap);
}

int tp_mdp3_writer_init(struct tp_mdp3_writer *w, void *buf, size_t cap, uint32_t seq,
                        uint64_t sending_time)
{
    if (cap < TP_MDP3_PACKET_HEADER_LEN)
        return -ENOSPC;
    w->buf = buf;
    w->cap = cap;
    mktdata_store_u32(w->buf, seq);
    mktdata_store_u64(w->buf + 4, sending_time);
    w->len = TP_MDP3_PACKET_HEADER_LEN;
    return 0;
}

uint8_t *tp_mdp3_writer_reserve(struct tp_mdp3_writer *w, size_t *room)
{
    if (w->cap - w->len < TP_MDP3_MSG_MIN_LEN)
        return NULL;
    *room = w->cap - w->len - TP_MDP3_MSG_SIZE_LEN;
    return w->buf + w->len + TP_MDP3_MSG_SIZE_LEN;
}

int tp_mdp3_writer_commit(struct tp_mdp3_writer *w, size_t sbe_len)
{
    size_t size = TP_MDP3_MSG_SIZE_LEN + sbe_len;
    if (size > UINT16_MAX)
        return -EMSGSIZE;
    if (size > w->cap - w->len)
        return -ENOSPC;
    mktdata_store_u16(w->buf + w->len, (uint16_t)size);
    w->len += size;
    return 0;
}
