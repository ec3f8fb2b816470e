/*
 * A SoupBinTCP 4.0 client on a non-blocking kernel socket, for the control plane's main loop.
 *
 * tp_soup_client_start connects (non-blocking) and queues the login request; each
 * tp_soup_client_poll then moves the session as far as it can without waiting: it finishes the
 * connect, sends what is queued, reads what the kernel holds, hands sequenced and unsequenced
 * data to the caller's callbacks in order, sends a client heartbeat when nothing was sent for
 * heartbeat_ms, and fails the session on a connect, login or idle timeout (the server sends a
 * heartbeat every second: silence for idle_timeout_ms means the link is gone).
 *
 * Promises:
 *  - Never blocks and never allocates after start: the receive buffer holds the largest packet
 *    (TP_SOUP_MAX_PACKET) and more; the send queue holds a login and heartbeats.
 *  - Hostile bytes end the session with a reason, never read beyond what was received: a packet
 *    of length 0, an unknown or client-only type, a wrong size for its type, sequenced data
 *    before login, a login accepted whose sequence is not a number (TP_SOUP_FAIL_MALFORMED).
 *  - Back-pressure: a sequenced callback that returns -EAGAIN leaves that packet and the rest
 *    in the buffer; the next poll offers it again. The socket is not read while the buffer is
 *    full, and such a pause does not count as the server's silence.
 *  - Every session ends in exactly one of DONE (end of session, or the caller's logout) or
 *    FAILED with a reason (tp_soup_fail_name); the socket is closed then.
 * No DPDK: unit-tested against a socketpair and a loopback server.
 */
#ifndef TP_SOUPBIN_CLIENT_H
#define TP_SOUPBIN_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "soupbintcp.h"

enum tp_soup_state {
    TP_SOUP_IDLE = 0,
    TP_SOUP_CONNECTING,
    TP_SOUP_LOGGING_IN, /* login sent, no answer yet */
    TP_SOUP_LOGGED_IN,
    TP_SOUP_DONE,
    TP_SOUP_FAILED,
};

enum tp_soup_fail {
    TP_SOUP_FAIL_NONE = 0,
    TP_SOUP_FAIL_CONNECT,          /* refused, unreachable, or the address is not valid */
    TP_SOUP_FAIL_CONNECT_TIMEOUT,  /* no connection within connect_timeout_ms */
    TP_SOUP_FAIL_LOGIN_TIMEOUT,    /* no answer to the login within login_timeout_ms */
    TP_SOUP_FAIL_REJECTED_AUTH,    /* login rejected: not authorized */
    TP_SOUP_FAIL_REJECTED_SESSION, /* login rejected: session not available */
    TP_SOUP_FAIL_REJECTED_OTHER,   /* login rejected with another code */
    TP_SOUP_FAIL_IDLE_TIMEOUT,     /* the server was silent for idle_timeout_ms */
    TP_SOUP_FAIL_CLOSED,           /* the server closed the connection before the end */
    TP_SOUP_FAIL_MALFORMED,        /* a packet the protocol does not allow */
    TP_SOUP_FAIL_IO,               /* read or write error */
    TP_SOUP_FAIL_CALLER,           /* a callback returned an error other than -EAGAIN */
};

/* A short name of a failure reason ("login_rejected_auth", ...) for logs and counters. */
const char *tp_soup_fail_name(enum tp_soup_fail why);

struct tp_soup_client_params {
    uint32_t addr; /* IPv4, host order */
    uint16_t port;
    char username[TP_SOUP_USERNAME_LEN + 1];
    char password[TP_SOUP_PASSWORD_LEN + 1];
    char session[TP_SOUP_SESSION_LEN + 1]; /* "" asks for the current session */
    uint64_t sequence;                     /* requested sequence number (GLIMPSE: 1) */
    uint32_t connect_timeout_ms;
    uint32_t login_timeout_ms;
    uint32_t heartbeat_ms;    /* client heartbeat after this much send silence (1000) */
    uint32_t idle_timeout_ms; /* server silence that fails the session (15000) */
};

struct tp_soup_client_ops {
    void *ctx;
    /* One sequenced message: 0, -EAGAIN to be offered it again at the next poll, or another
     * negative errno to end the session (TP_SOUP_FAIL_CALLER). */
    int (*sequenced)(void *ctx, const uint8_t *msg, uint16_t len);
    /* Optional: unsequenced data, debug text. */
    void (*unsequenced)(void *ctx, const uint8_t *msg, uint16_t len);
    void (*debug)(void *ctx, const uint8_t *text, uint16_t len);
};

struct tp_soup_client_counters {
    uint64_t packets;   /* framed and dispatched */
    uint64_t sequenced; /* sequenced data messages accepted by the callback */
    uint64_t server_heartbeats;
    uint64_t client_heartbeats; /* sent */
    uint64_t bytes_in;
};

#define TP_SOUP_RX_BUFFER (4 * TP_SOUP_MAX_PACKET)
#define TP_SOUP_TX_BUFFER 256

struct tp_soup_client {
    struct tp_soup_client_params params;
    struct tp_soup_client_ops ops;
    struct tp_soup_client_counters counters;
    enum tp_soup_state state;
    enum tp_soup_fail fail;
    int fd;
    int last_errno;    /* of the failing call, for TP_SOUP_FAIL_CONNECT / IO */
    uint64_t state_ms; /* when the current state began */
    uint64_t last_rx_ms, last_tx_ms;
    uint8_t session[TP_SOUP_SESSION_LEN]; /* from login accepted */
    uint64_t next_sequence;               /* of the next sequenced message */
    size_t rx_start, rx_len;              /* unread bytes: rx[rx_start, rx_start + rx_len) */
    size_t tx_len;
    uint8_t tx[TP_SOUP_TX_BUFFER];
    uint8_t rx[TP_SOUP_RX_BUFFER];
};

/* Connects and queues the login; state CONNECTING, or FAILED (bad params, socket error). */
void tp_soup_client_start(struct tp_soup_client *c, const struct tp_soup_client_params *params,
                          const struct tp_soup_client_ops *ops, uint64_t now_ms);

/*
 * Starts a session over a socket the caller connected already (tests: a socketpair). The
 * client takes the descriptor (made non-blocking) and closes it when the session ends.
 */
void tp_soup_client_adopt(struct tp_soup_client *c, int fd,
                          const struct tp_soup_client_params *params,
                          const struct tp_soup_client_ops *ops, uint64_t now_ms);

/* Does what can be done now (see above) and returns the state. */
enum tp_soup_state tp_soup_client_poll(struct tp_soup_client *c, uint64_t now_ms);

/* Sends a logout request (best effort) and ends the session: DONE. */
void tp_soup_client_logout(struct tp_soup_client *c);

/* Ends the session at once, FAILED with `why` (the caller's own reason), socket closed. */
void tp_soup_client_abort(struct tp_soup_client *c, enum tp_soup_fail why);

/* The socket to wait on (-1 when none) and the events it waits for (POLLIN, POLLOUT). */
int tp_soup_client_fd(const struct tp_soup_client *c, short *events);

#endif /* TP_SOUPBIN_CLIENT_H */
