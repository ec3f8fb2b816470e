/*
 * GLIMPSE 5.0 over SoupBinTCP 4.0: the simulator's snapshot of its model, and the TCP server that
 * serves it (loopback or a test namespace), with faults for the tests.
 *
 * Promises:
 * - tp_sim_glimpse_build turns the model's state at one point of the session into the server's
 *   side of a GLIMPSE session: one sequenced data packet per ITCH message of
 *   tp_sim_itch_snapshot, then one carrying the snapshot message 'G' with the MoldUDP64
 *   sequence of the first feed message the snapshot does not reflect. Built at a model step's
 *   end, the snapshot plus the feed from that sequence on give exactly the model's books.
 * - tp_sim_glimpse_write records a whole session as a client receives it (login accepted, the
 *   packets, end of session): the byte stream tickplane-replay --snapshot reads.
 * - The server answers each login in turn: a wrong username or password, or one of the first
 *   `refuse` logins, gets login rejected 'A'; the others get login accepted and the snapshot,
 *   written in pieces of `piece` bytes with `pause_us` between them (a slow server; a server
 *   heartbeat goes out whenever a pause reaches 1 s in total), and the first `drops` accepted
 *   connections are closed after `drop_after` messages (a connection dropped mid-snapshot). It
 *   then waits for the client's logout or close. Counters say what it did.
 */
#ifndef TP_SIM_GLIMPSE_SERVER_H
#define TP_SIM_GLIMPSE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define TP_SIM_GLIMPSE_SESSION "TPGLIMPSE1"

struct tp_sim_glimpse {
    uint8_t *packets; /* sequenced data packets, the last one carrying 'G' */
    size_t len, cap;
    uint64_t messages; /* ITCH messages before 'G' */
    uint64_t next_seq;
    uint64_t live_orders;
};

int tp_sim_glimpse_build(struct tp_sim_glimpse *g, const struct tp_sim_model *m, uint64_t next_seq);
int tp_sim_glimpse_write(const struct tp_sim_glimpse *g, const char *path);
void tp_sim_glimpse_free(struct tp_sim_glimpse *g);

struct tp_sim_glimpse_faults {
    uint32_t refuse;     /* the first N logins are rejected */
    uint32_t drops;      /* the first N accepted connections are dropped ... */
    uint64_t drop_after; /* ... after this many messages */
    uint32_t pause_us;   /* between pieces */
    uint32_t piece;      /* bytes a piece (0: 64 KiB) */
};

struct tp_sim_glimpse_server {
    int fd;
    const struct tp_sim_glimpse *snap;
    char username[7];
    char password[11];
    struct tp_sim_glimpse_faults faults;
    uint64_t logins, refused, served, dropped;
};

/*
 * Listens on IPv4 addr:port (host order; port 0: any). username/password: what a login must
 * carry (NULL: anything). Returns 0 or a negative errno.
 */
int tp_sim_glimpse_open(struct tp_sim_glimpse_server *srv, const struct tp_sim_glimpse *snap,
                        uint32_t addr, uint16_t port, const char *username, const char *password,
                        const struct tp_sim_glimpse_faults *faults);
uint16_t tp_sim_glimpse_port(const struct tp_sim_glimpse_server *srv);
/* Serves the connections that arrive during the next ms milliseconds. Returns the number of
 * sessions handled or a negative errno. */
int tp_sim_glimpse_serve(struct tp_sim_glimpse_server *srv, uint64_t ms);
void tp_sim_glimpse_close(struct tp_sim_glimpse_server *srv);

#endif
