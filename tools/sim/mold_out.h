/*
 * MoldUDP64 packetizer: ITCH messages in, MoldUDP64 packets out (as the venue sends them).
 *
 * Promises:
 * - Messages are packed in order; a packet closes when the next message is more than
 *   pack_window_ns later than the packet's first one, when it would exceed max_payload bytes,
 *   or at max_messages. tp_sim_mold_params_fill packs as a venue at peak: every packet full.
 *   Sequence numbers count messages from 1, as MoldUDP64 does.
 * - A sequence reset (reset_at_message > 0) starts a new session (the last digits of the session
 *   name count sessions) whose sequence numbers start again at 1; the reset is recorded.
 * - finish() ends the session with an end-of-session packet (MessageCount 0xFFFF).
 * - Every message also goes to the retransmission store when one is attached.
 */
#ifndef TP_SIM_MOLD_OUT_H
#define TP_SIM_MOLD_OUT_H

#include <stddef.h>
#include <stdint.h>

#include "moldudp64.h"
#include "packet.h"

struct tp_sim_mold_store;

struct tp_sim_mold_params {
    char session[TP_MOLD_SESSION_LEN + 1]; /* 10 characters */
    uint64_t pack_window_ns;               /* default 1000 */
    uint16_t max_payload;                  /* default 1400 */
    uint16_t max_messages;                 /* default 64 */
    uint64_t reset_at_message;             /* 0: no sequence reset */
};

void tp_sim_mold_params_default(struct tp_sim_mold_params *p);
/* No time window, no message limit: packets close only when the next message passes bytes. */
void tp_sim_mold_params_fill(struct tp_sim_mold_params *p, uint16_t bytes);

struct tp_sim_mold_out {
    struct tp_sim_mold_params params;
    struct tp_sim_packet_sink sink;
    struct tp_sim_mold_store *store; /* may be NULL */
    struct tp_mold_writer writer;
    struct tp_sim_packet pkt;
    uint64_t first_time_ns, last_time_ns;
    uint64_t next_seq;
    uint64_t messages; /* messages seen, over all sessions */
    uint32_t packets;
    uint32_t sessions;
    uint64_t reset_at_seq; /* sequence number the old session had reached (0: no reset) */
    int open;
};

int tp_sim_mold_init(struct tp_sim_mold_out *o, const struct tp_sim_mold_params *p,
                     const struct tp_sim_packet_sink *sink, struct tp_sim_mold_store *store);
/* A tp_sim_msg_sink callback (ctx: struct tp_sim_mold_out). */
int tp_sim_mold_message(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns);
/* Sends the open packet, then the end-of-session packet. */
int tp_sim_mold_finish(struct tp_sim_mold_out *o);
/* Heartbeat replacing src on a heartbeats-only line: same session, MessageCount 0. */
uint16_t tp_sim_mold_heartbeat(const struct tp_sim_packet *src, uint8_t *out);

#endif
