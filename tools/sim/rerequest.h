/*
 * MoldUDP64 retransmission: a store of the most recent messages and the UDP unicast server that
 * answers re-requests from it.
 *
 * Promises:
 * - The store keeps the last `window` messages of the current session (older ones are gone, as at
 *   the venue). A request (session, sequence, count) for messages still held is answered with ONE
 *   MoldUDP64 packet starting at that sequence, carrying as many of the requested messages as fit
 *   in max_payload bytes (the requester asks again for the rest). Requests for another session,
 *   for messages no longer held, or beyond the last sequence, or malformed ones, are not answered
 *   and are counted.
 * - The server binds UDP on the address given (loopback or a test namespace) and answers each
 *   request datagram to its sender.
 */
#ifndef TP_SIM_REREQUEST_H
#define TP_SIM_REREQUEST_H

#include <stddef.h>
#include <stdint.h>

#include "itch50.h"
#include "moldudp64.h"

/* Largest answer datagram (one MTU). */
#define TP_SIM_REREQUEST_MAX_REPLY 1472

struct tp_sim_mold_slot {
    uint16_t len;
    uint8_t msg[TP_ITCH_MAX_MESSAGE_LEN];
};

struct tp_sim_mold_store {
    char session[TP_MOLD_SESSION_LEN];
    struct tp_sim_mold_slot *slots; /* ring: message seq lives in slots[seq % window] */
    uint64_t window;
    uint64_t first_seq; /* oldest held */
    uint64_t next_seq;  /* one past the newest */
    uint16_t max_payload;
    uint64_t answered, refused;
};

int tp_sim_mold_store_init(struct tp_sim_mold_store *s, uint64_t window, uint16_t max_payload);
void tp_sim_mold_store_free(struct tp_sim_mold_store *s);
/* Starts a (new) session whose first message will have sequence first_seq. */
void tp_sim_mold_store_reset(struct tp_sim_mold_store *s, const char *session, uint64_t first_seq);
/* Appends the message with sequence seq (must be next_seq; others are ignored). */
void tp_sim_mold_store_add(struct tp_sim_mold_store *s, uint64_t seq, const uint8_t *msg,
                           size_t len);
/*
 * Builds the answer to one request datagram into out (cap bytes); returns its length, 0 when
 * the request is not answered.
 */
size_t tp_sim_mold_store_answer(struct tp_sim_mold_store *s, const uint8_t *req, size_t req_len,
                                uint8_t *out, size_t cap);

/* The UDP server around a store. */
struct tp_sim_rerequest_server {
    int fd;
    struct tp_sim_mold_store *store;
};

/*
 * Binds the IPv4 address addr (host order) and port (0: any; see tp_sim_rerequest_port).
 * Returns 0 or a negative errno.
 */
int tp_sim_rerequest_open(struct tp_sim_rerequest_server *srv, struct tp_sim_mold_store *store,
                          uint32_t addr, uint16_t port);
uint16_t tp_sim_rerequest_port(const struct tp_sim_rerequest_server *srv);
/*
 * Answers the requests that arrive within timeout_ms (0: only those already queued).
 * Returns the number of datagrams handled or a negative errno.
 */
int tp_sim_rerequest_serve(struct tp_sim_rerequest_server *srv, int timeout_ms);
/*
 * Answers every request that arrives during the next ms milliseconds (the simulator's linger
 * after its last packet: late gaps are still recovered). Returns the number of datagrams
 * handled or a negative errno.
 */
int tp_sim_rerequest_linger(struct tp_sim_rerequest_server *srv, int ms);
void tp_sim_rerequest_close(struct tp_sim_rerequest_server *srv);

#endif
