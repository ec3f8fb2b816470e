/* MoldUDP64 packetizer over the codec's writer (codecs/itch/moldudp64.h). */
#include "mold_out.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "rerequest.h"

void tp_sim_mold_params_default(struct tp_sim_mold_params *p)
{
    memset(p, 0, sizeof(*p));
    memcpy(p->session, "TPSIM00001", TP_MOLD_SESSION_LEN + 1);
    p->pack_window_ns = 1000;
    p->max_payload = 1400;
    p->max_messages = 64;
}

void tp_sim_mold_params_fill(struct tp_sim_mold_params *p, uint16_t bytes)
{
    p->pack_window_ns = TP_SIM_PACK_FILL;
    p->max_payload = bytes;
    p->max_messages = TP_MOLD_END_OF_SESSION - 1; /* the writer's own limit */
}

int tp_sim_mold_init(struct tp_sim_mold_out *o, const struct tp_sim_mold_params *p,
                     const struct tp_sim_packet_sink *sink, struct tp_sim_mold_store *store)
{
    memset(o, 0, sizeof(*o));
    o->params = *p;
    if (o->params.max_payload > TP_SIM_MAX_PAYLOAD || o->params.max_payload < 100)
        return -EINVAL;
    o->sink = *sink;
    o->store = store;
    o->next_seq = 1;
    o->sessions = 1;
    if (store != NULL)
        tp_sim_mold_store_reset(store, o->params.session, 1);
    return 0;
}

static int close_packet(struct tp_sim_mold_out *o)
{
    if (!o->open)
        return 0;
    o->open = 0;
    o->pkt.len = (uint16_t)o->writer.len;
    o->pkt.count = o->writer.count;
    o->pkt.time_ns = o->last_time_ns;
    o->pkt.index = o->packets++;
    o->pkt.stream = TP_SIM_STREAM_INCREMENTAL;
    return o->sink.packet(o->sink.ctx, &o->pkt);
}

/* The current session's end-of-session packet (count 0xFFFF, the next sequence). */
static int end_of_session(struct tp_sim_mold_out *o)
{
    o->pkt.len = (uint16_t)tp_mold_encode_control(
        o->pkt.data, sizeof(o->pkt.data), o->params.session, o->next_seq, TP_MOLD_END_OF_SESSION);
    o->pkt.seq = o->next_seq;
    o->pkt.count = 0;
    o->pkt.time_ns = o->last_time_ns + 1000;
    o->pkt.index = o->packets++;
    o->pkt.stream = TP_SIM_STREAM_INCREMENTAL;
    return o->sink.packet(o->sink.ctx, &o->pkt);
}

/*
 * Ends the current session as a venue does (its end-of-session packet): the next packet starts
 * a new one whose sequence restarts at 1.
 */
static int reset_sequence(struct tp_sim_mold_out *o)
{
    int rc = close_packet(o);
    if (rc == 0)
        rc = end_of_session(o);
    if (rc < 0)
        return rc;
    o->reset_at_seq = o->next_seq;
    o->sessions++;
    char digits[8];
    snprintf(digits, sizeof(digits), "%05u", o->sessions % 100000);
    memcpy(o->params.session + TP_MOLD_SESSION_LEN - 5, digits, 5);
    o->next_seq = 1;
    if (o->store != NULL)
        tp_sim_mold_store_reset(o->store, o->params.session, 1);
    return 0;
}

int tp_sim_mold_message(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns)
{
    struct tp_sim_mold_out *o = ctx;
    int rc = 0;
    if (o->params.reset_at_message != 0 && o->messages == o->params.reset_at_message)
        rc = reset_sequence(o);
    if (rc == 0 && o->open &&
        (tp_sim_past_pack_window(o->first_time_ns, time_ns, o->params.pack_window_ns) ||
         o->writer.count >= o->params.max_messages || o->writer.len + 2 + len > o->writer.cap))
        rc = close_packet(o);
    if (rc < 0)
        return rc;
    if (!o->open) {
        tp_mold_writer_init(&o->writer, o->pkt.data, o->params.max_payload, o->params.session,
                            o->next_seq);
        o->pkt.seq = o->next_seq;
        o->first_time_ns = time_ns;
        o->open = 1;
    }
    if (tp_mold_writer_add(&o->writer, msg, (uint16_t)len) < 0)
        return -EMSGSIZE; /* a message larger than a packet */
    if (o->store != NULL)
        tp_sim_mold_store_add(o->store, o->next_seq, msg, len);
    o->last_time_ns = time_ns;
    o->next_seq++;
    o->messages++;
    return 0;
}

int tp_sim_mold_finish(struct tp_sim_mold_out *o)
{
    int rc = close_packet(o);
    return rc < 0 ? rc : end_of_session(o);
}

uint16_t tp_sim_mold_heartbeat(const struct tp_sim_packet *src, uint8_t *out)
{
    return (uint16_t)tp_mold_encode_control(out, TP_MOLD_HEADER_LEN, (const char *)src->data,
                                            src->seq, 0);
}
