/*
 * A SoupBinTCP 4.0 client: see soupbin_client.h.
 */
#include "soupbin_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

const char *tp_soup_fail_name(enum tp_soup_fail why)
{
    switch (why) {
    case TP_SOUP_FAIL_NONE:
        return "none";
    case TP_SOUP_FAIL_CONNECT:
        return "connect_failed";
    case TP_SOUP_FAIL_CONNECT_TIMEOUT:
        return "connect_timeout";
    case TP_SOUP_FAIL_LOGIN_TIMEOUT:
        return "login_timeout";
    case TP_SOUP_FAIL_REJECTED_AUTH:
        return "login_rejected_not_authorized";
    case TP_SOUP_FAIL_REJECTED_SESSION:
        return "login_rejected_session_unavailable";
    case TP_SOUP_FAIL_REJECTED_OTHER:
        return "login_rejected";
    case TP_SOUP_FAIL_IDLE_TIMEOUT:
        return "server_silent";
    case TP_SOUP_FAIL_CLOSED:
        return "connection_closed";
    case TP_SOUP_FAIL_MALFORMED:
        return "malformed_packet";
    case TP_SOUP_FAIL_IO:
        return "io_error";
    case TP_SOUP_FAIL_CALLER:
        return "consumer_error";
    }
    return "unknown";
}

static void set_state(struct tp_soup_client *c, enum tp_soup_state s, uint64_t now)
{
    c->state = s;
    c->state_ms = now;
}

static void close_fd(struct tp_soup_client *c)
{
    if (c->fd >= 0)
        close(c->fd);
    c->fd = -1;
}

static void fail(struct tp_soup_client *c, enum tp_soup_fail why, int err)
{
    close_fd(c);
    c->fail = why;
    c->last_errno = err;
    c->state = TP_SOUP_FAILED;
}

/* Queues a packet (the queue holds a login and a few control packets: sized for them). */
static void queue(struct tp_soup_client *c, const uint8_t *pkt, int len)
{
    if (len > 0 && c->tx_len + (size_t)len <= sizeof(c->tx)) {
        memcpy(c->tx + c->tx_len, pkt, (size_t)len);
        c->tx_len += (size_t)len;
    }
}

static void queue_control(struct tp_soup_client *c, uint8_t type)
{
    uint8_t pkt[TP_SOUP_LENGTH_LEN + 1];
    queue(c, pkt, tp_soup_encode_control(pkt, sizeof(pkt), type));
}

static void init(struct tp_soup_client *c, const struct tp_soup_client_params *params,
                 const struct tp_soup_client_ops *ops, uint64_t now)
{
    c->params = *params;
    c->ops = *ops;
    memset(&c->counters, 0, sizeof(c->counters));
    c->fail = TP_SOUP_FAIL_NONE;
    c->last_errno = 0;
    c->fd = -1;
    c->rx_start = c->rx_len = c->tx_len = 0;
    c->last_rx_ms = c->last_tx_ms = now;
    c->next_sequence = 0;
    memset(c->session, ' ', sizeof(c->session));
    if (c->params.heartbeat_ms == 0)
        c->params.heartbeat_ms = 1000;
    if (c->params.idle_timeout_ms == 0)
        c->params.idle_timeout_ms = 15000;
    set_state(c, TP_SOUP_CONNECTING, now);
    uint8_t login[TP_SOUP_LENGTH_LEN + 1 + TP_SOUP_LOGIN_REQUEST_LEN];
    int n = tp_soup_encode_login(login, sizeof(login), c->params.username, c->params.password,
                                 c->params.session, c->params.sequence);
    if (n < 0)
        fail(c, TP_SOUP_FAIL_CONNECT, EINVAL);
    else
        queue(c, login, n);
}

void tp_soup_client_start(struct tp_soup_client *c, const struct tp_soup_client_params *params,
                          const struct tp_soup_client_ops *ops, uint64_t now)
{
    init(c, params, ops, now);
    if (c->state == TP_SOUP_FAILED)
        return;
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (c->fd < 0) {
        fail(c, TP_SOUP_FAIL_CONNECT, errno);
        return;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons(params->port),
                             .sin_addr.s_addr = htonl(params->addr)};
    if (connect(c->fd, (const struct sockaddr *)&sa, sizeof(sa)) != 0 && errno != EINPROGRESS)
        fail(c, TP_SOUP_FAIL_CONNECT, errno);
}

void tp_soup_client_adopt(struct tp_soup_client *c, int fd,
                          const struct tp_soup_client_params *params,
                          const struct tp_soup_client_ops *ops, uint64_t now)
{
    init(c, params, ops, now);
    c->fd = fd;
    if (c->state == TP_SOUP_FAILED) {
        close_fd(c);
        return;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
        fail(c, TP_SOUP_FAIL_IO, errno);
}

/* Connect finished? Then the login goes out with the rest of the queue. */
static void finish_connect(struct tp_soup_client *c, uint64_t now)
{
    struct pollfd p = {.fd = c->fd, .events = POLLOUT};
    if (poll(&p, 1, 0) <= 0) {
        if (now - c->state_ms >= c->params.connect_timeout_ms)
            fail(c, TP_SOUP_FAIL_CONNECT_TIMEOUT, ETIMEDOUT);
        return;
    }
    int err = 0;
    socklen_t len = sizeof(err);
    if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    if (err != 0) {
        fail(c, TP_SOUP_FAIL_CONNECT, err);
        return;
    }
    set_state(c, TP_SOUP_LOGGING_IN, now);
}

static void flush_tx(struct tp_soup_client *c, uint64_t now)
{
    while (c->tx_len > 0) {
        ssize_t n = send(c->fd, c->tx, c->tx_len, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                return;
            fail(c, TP_SOUP_FAIL_IO, errno);
            return;
        }
        memmove(c->tx, c->tx + n, c->tx_len - (size_t)n);
        c->tx_len -= (size_t)n;
        c->last_tx_ms = now;
    }
}

/* One packet that tp_soup_check accepted. 1: go on, 0: stop for now (back-pressure or done). */
static int dispatch(struct tp_soup_client *c, const struct tp_soup_packet *p, uint64_t now)
{
    switch (p->type) {
    case TP_SOUP_DEBUG:
        if (c->ops.debug != NULL)
            c->ops.debug(c->ops.ctx, p->payload, p->payload_len);
        return 1;
    case TP_SOUP_LOGIN_ACCEPTED:
        if (c->state != TP_SOUP_LOGGING_IN ||
            tp_soup_accepted_sequence(p, &c->next_sequence) != 0) {
            fail(c, TP_SOUP_FAIL_MALFORMED, EBADMSG);
            return 0;
        }
        memcpy(c->session, tp_soup_accepted_session(p), TP_SOUP_SESSION_LEN);
        set_state(c, TP_SOUP_LOGGED_IN, now);
        return 1;
    case TP_SOUP_LOGIN_REJECTED: {
        uint8_t code = tp_soup_reject_code(p);
        fail(c,
             code == TP_SOUP_REJECT_NOT_AUTHORIZED ? TP_SOUP_FAIL_REJECTED_AUTH
             : code == TP_SOUP_REJECT_NO_SESSION   ? TP_SOUP_FAIL_REJECTED_SESSION
                                                   : TP_SOUP_FAIL_REJECTED_OTHER,
             EACCES);
        return 0;
    }
    case TP_SOUP_SERVER_HEARTBEAT:
        c->counters.server_heartbeats++;
        return 1;
    case TP_SOUP_END_OF_SESSION:
        if (c->state != TP_SOUP_LOGGED_IN) {
            fail(c, TP_SOUP_FAIL_MALFORMED, EBADMSG);
            return 0;
        }
        close_fd(c);
        c->state = TP_SOUP_DONE;
        return 0;
    default: /* sequenced data: tp_soup_check allowed nothing else from a server */
        break;
    }
    if (c->state != TP_SOUP_LOGGED_IN) {
        fail(c, TP_SOUP_FAIL_MALFORMED, EBADMSG);
        return 0;
    }
    int rc = c->ops.sequenced(c->ops.ctx, p->payload, p->payload_len);
    if (rc == -EAGAIN)
        return 0;
    if (rc < 0) {
        fail(c, TP_SOUP_FAIL_CALLER, -rc);
        return 0;
    }
    c->counters.sequenced++;
    c->next_sequence++;
    /* The callback may have ended the session (a GLIMPSE end of snapshot logs out). */
    return c->state == TP_SOUP_LOGGED_IN;
}

/* Frames and dispatches what the buffer holds; returns false when it stopped on back-pressure. */
static bool drain_rx(struct tp_soup_client *c, uint64_t now)
{
    while (c->state == TP_SOUP_LOGGING_IN || c->state == TP_SOUP_LOGGED_IN) {
        struct tp_soup_packet p;
        size_t need;
        int n = tp_soup_frame(c->rx + c->rx_start, c->rx_len, TP_SOUP_MAX_PACKET, &p, &need);
        if (n == 0)
            return true;
        if (n < 0 || tp_soup_check(&p, TP_SOUP_FROM_SERVER) != 0) {
            fail(c, TP_SOUP_FAIL_MALFORMED, EBADMSG);
            return true;
        }
        int go = dispatch(c, &p, now);
        if (go == 0 && (c->state == TP_SOUP_LOGGING_IN || c->state == TP_SOUP_LOGGED_IN))
            return false; /* back-pressure: this packet is offered again */
        c->counters.packets++;
        c->rx_start += (size_t)n;
        c->rx_len -= (size_t)n;
        if (go == 0)
            return true;
    }
    return true;
}

/* Reads what the kernel holds into the free end of the buffer; false when the session ended. */
static bool read_rx(struct tp_soup_client *c, uint64_t now)
{
    if (c->rx_start > 0 && c->rx_len > 0)
        memmove(c->rx, c->rx + c->rx_start, c->rx_len);
    c->rx_start = 0;
    size_t room = sizeof(c->rx) - c->rx_len;
    if (room == 0) {
        c->last_rx_ms = now; /* our own back-pressure, not the server's silence */
        return true;
    }
    ssize_t n = recv(c->fd, c->rx + c->rx_len, room, 0);
    if (n > 0) {
        c->rx_len += (size_t)n;
        c->counters.bytes_in += (uint64_t)n;
        c->last_rx_ms = now;
        return true;
    }
    if (n == 0) {
        fail(c, TP_SOUP_FAIL_CLOSED, 0);
        return false;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return true;
    fail(c, TP_SOUP_FAIL_IO, errno);
    return false;
}

static bool active(const struct tp_soup_client *c)
{
    return c->state == TP_SOUP_LOGGING_IN || c->state == TP_SOUP_LOGGED_IN;
}

/* Reads and dispatches in rounds; a bounded number so one poll never holds the loop long. */
#define READ_ROUNDS 64

enum tp_soup_state tp_soup_client_poll(struct tp_soup_client *c, uint64_t now)
{
    if (c->state == TP_SOUP_CONNECTING)
        finish_connect(c, now);
    if (!active(c))
        return c->state;
    flush_tx(c, now);
    for (int round = 0; round < READ_ROUNDS && active(c); round++) {
        if (!drain_rx(c, now))
            break; /* back-pressure: read nothing more */
        if (!active(c))
            break;
        size_t before = c->rx_len;
        if (!read_rx(c, now) || c->rx_len == before)
            break;
    }
    if (!active(c))
        return c->state;
    if (c->state == TP_SOUP_LOGGING_IN && now - c->state_ms >= c->params.login_timeout_ms) {
        fail(c, TP_SOUP_FAIL_LOGIN_TIMEOUT, ETIMEDOUT);
        return c->state;
    }
    if (c->state == TP_SOUP_LOGGED_IN) {
        if (now - c->last_rx_ms >= c->params.idle_timeout_ms) {
            fail(c, TP_SOUP_FAIL_IDLE_TIMEOUT, ETIMEDOUT);
            return c->state;
        }
        if (now - c->last_tx_ms >= c->params.heartbeat_ms && c->tx_len == 0) {
            queue_control(c, TP_SOUP_CLIENT_HEARTBEAT);
            c->counters.client_heartbeats++;
            flush_tx(c, now);
        }
    }
    return c->state;
}

void tp_soup_client_logout(struct tp_soup_client *c)
{
    if (c->fd >= 0 && active(c)) {
        uint8_t pkt[TP_SOUP_LENGTH_LEN + 1];
        int n = tp_soup_encode_control(pkt, sizeof(pkt), TP_SOUP_LOGOUT_REQUEST);
        if (send(c->fd, pkt, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
            c->last_errno = errno;
    }
    close_fd(c);
    c->state = TP_SOUP_DONE;
}

void tp_soup_client_abort(struct tp_soup_client *c, enum tp_soup_fail why)
{
    fail(c, why, 0);
}

int tp_soup_client_fd(const struct tp_soup_client *c, short *events)
{
    *events = 0;
    if (c->fd < 0)
        return -1;
    if (c->state == TP_SOUP_CONNECTING || c->tx_len > 0)
        *events |= POLLOUT;
    if (active(c))
        *events |= POLLIN;
    return c->fd;
}
