/* MoldUDP64 retransmission store and UDP re-request server. */
#include "rerequest.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int tp_sim_mold_store_init(struct tp_sim_mold_store *s, uint64_t window, uint16_t max_payload)
{
    memset(s, 0, sizeof(*s));
    if (window == 0 || max_payload < TP_MOLD_HEADER_LEN + 2 + TP_ITCH_MAX_MESSAGE_LEN)
        return -EINVAL;
    s->slots = calloc(window, sizeof(*s->slots));
    if (s->slots == NULL)
        return -ENOMEM;
    s->window = window;
    s->max_payload = max_payload;
    s->first_seq = s->next_seq = 1;
    memset(s->session, ' ', sizeof(s->session));
    return 0;
}

void tp_sim_mold_store_free(struct tp_sim_mold_store *s)
{
    free(s->slots);
    s->slots = NULL;
}

void tp_sim_mold_store_reset(struct tp_sim_mold_store *s, const char *session, uint64_t first_seq)
{
    memcpy(s->session, session, TP_MOLD_SESSION_LEN);
    s->first_seq = s->next_seq = first_seq;
}

void tp_sim_mold_store_add(struct tp_sim_mold_store *s, uint64_t seq, const uint8_t *msg,
                           size_t len)
{
    if (seq != s->next_seq || len > TP_ITCH_MAX_MESSAGE_LEN)
        return;
    struct tp_sim_mold_slot *slot = &s->slots[seq % s->window];
    slot->len = (uint16_t)len;
    memcpy(slot->msg, msg, len);
    s->next_seq++;
    if (s->next_seq - s->first_seq > s->window)
        s->first_seq = s->next_seq - s->window;
}

size_t tp_sim_mold_store_answer(struct tp_sim_mold_store *s, const uint8_t *req, size_t req_len,
                                uint8_t *out, size_t cap)
{
    struct tp_mold_request r;
    if (tp_mold_request_decode(req, req_len, &r) < 0 ||
        memcmp(r.session, s->session, TP_MOLD_SESSION_LEN) != 0 || r.count == 0 ||
        r.count == TP_MOLD_END_OF_SESSION || r.sequence < s->first_seq ||
        r.sequence >= s->next_seq) {
        s->refused++;
        return 0;
    }
    struct tp_mold_writer w;
    if (tp_mold_writer_init(&w, out, cap < s->max_payload ? cap : s->max_payload, s->session,
                            r.sequence) < 0) {
        s->refused++;
        return 0;
    }
    uint64_t end = r.sequence + r.count;
    if (end > s->next_seq)
        end = s->next_seq;
    for (uint64_t seq = r.sequence; seq < end; seq++) {
        const struct tp_sim_mold_slot *slot = &s->slots[seq % s->window];
        if (tp_mold_writer_add(&w, slot->msg, slot->len) < 0)
            break;
    }
    s->answered++;
    return w.len;
}

int tp_sim_rerequest_open(struct tp_sim_rerequest_server *srv, struct tp_sim_mold_store *store,
                          uint32_t addr_host, uint16_t port)
{
    struct sockaddr_in addr = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(addr_host)};
    srv->store = store;
    srv->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (srv->fd < 0)
        return -errno;
    if (bind(srv->fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        int rc = -errno;
        close(srv->fd);
        srv->fd = -1;
        return rc;
    }
    return 0;
}

uint16_t tp_sim_rerequest_port(const struct tp_sim_rerequest_server *srv)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof(addr);
    if (getsockname(srv->fd, (struct sockaddr *)&addr, &len) < 0)
        return 0;
    return ntohs(addr.sin_port);
}

int tp_sim_rerequest_serve(struct tp_sim_rerequest_server *srv, int timeout_ms)
{
    int handled = 0;
    struct pollfd pfd = {.fd = srv->fd, .events = POLLIN};
    while (poll(&pfd, 1, handled == 0 ? timeout_ms : 0) > 0) {
        uint8_t req[256], out[TP_SIM_REREQUEST_MAX_REPLY];
        struct sockaddr_in from;
        socklen_t from_len = sizeof(from);
        ssize_t n = recvfrom(srv->fd, req, sizeof(req), 0, (struct sockaddr *)&from, &from_len);
        if (n < 0)
            return handled > 0 ? handled : -errno;
        handled++;
        size_t len = tp_sim_mold_store_answer(srv->store, req, (size_t)n, out, sizeof(out));
        if (len > 0)
            sendto(srv->fd, out, len, 0, (struct sockaddr *)&from, from_len);
    }
    return handled;
}

static int64_t monotonic_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tp_sim_rerequest_linger(struct tp_sim_rerequest_server *srv, int ms)
{
    /* serve() returns once the queue is empty: call it again until the time is up. */
    int64_t deadline = monotonic_ms() + ms;
    int handled = 0;
    for (int64_t left = ms; left > 0; left = deadline - monotonic_ms()) {
        int n = tp_sim_rerequest_serve(srv, (int)left);
        if (n < 0)
            return handled > 0 ? handled : n;
        handled += n;
    }
    return handled;
}

void tp_sim_rerequest_close(struct tp_sim_rerequest_server *srv)
{
    if (srv->fd >= 0)
        close(srv->fd);
    srv->fd = -1;
}
