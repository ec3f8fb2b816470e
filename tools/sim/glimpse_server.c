/* GLIMPSE 5.0 snapshots of the model and their SoupBinTCP server: see glimpse_server.h. */
#include "glimpse_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "glimpse.h"
#include "itch_feed.h"
#include "soupbintcp.h"

static int append(struct tp_sim_glimpse *g, uint8_t type, const uint8_t *msg, size_t len)
{
    size_t need = TP_SOUP_LENGTH_LEN + 1 + len;
    if (g->len + need > g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 1 << 16;
        while (cap < g->len + need)
            cap *= 2;
        uint8_t *p = realloc(g->packets, cap);
        if (p == NULL)
            return -ENOMEM;
        g->packets = p;
        g->cap = cap;
    }
    int n = tp_soup_encode(g->packets + g->len, g->cap - g->len, type, msg, len);
    if (n < 0)
        return n;
    g->len += (size_t)n;
    return 0;
}

static int snapshot_message(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns)
{
    (void)time_ns;
    struct tp_sim_glimpse *g = ctx;
    g->messages++;
    g->live_orders += msg[0] == 'A' || msg[0] == 'F';
    return append(g, TP_SOUP_SEQUENCED, msg, len);
}

int tp_sim_glimpse_build(struct tp_sim_glimpse *g, const struct tp_sim_model *m, uint64_t next_seq)
{
    memset(g, 0, sizeof(*g));
    g->next_seq = next_seq;
    struct tp_sim_msg_sink sink = {.message = snapshot_message, .ctx = g};
    int rc = tp_sim_itch_snapshot(m, &sink);
    uint8_t end[TP_GLIMPSE_SNAPSHOT_LEN];
    if (rc == 0)
        rc = tp_glimpse_snapshot_encode(end, sizeof(end), next_seq) < 0 ? -EINVAL : 0;
    if (rc == 0)
        rc = append(g, TP_SOUP_SEQUENCED, end, sizeof(end));
    if (rc < 0)
        tp_sim_glimpse_free(g);
    return rc;
}

void tp_sim_glimpse_free(struct tp_sim_glimpse *g)
{
    free(g->packets);
    g->packets = NULL;
    g->len = g->cap = 0;
}

int tp_sim_glimpse_write(const struct tp_sim_glimpse *g, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return -errno;
    uint8_t head[64], tail[8];
    int hn = tp_soup_encode_accepted(head, sizeof(head), TP_SIM_GLIMPSE_SESSION, 1);
    int tn = tp_soup_encode_control(tail, sizeof(tail), TP_SOUP_END_OF_SESSION);
    int ok = fwrite(head, 1, (size_t)hn, f) == (size_t)hn &&
             fwrite(g->packets, 1, g->len, f) == g->len &&
             fwrite(tail, 1, (size_t)tn, f) == (size_t)tn;
    if (fclose(f) != 0)
        ok = 0;
    return ok ? 0 : -EIO;
}

/* ---- the server ------------------------------------------------------------------------- */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int tp_sim_glimpse_open(struct tp_sim_glimpse_server *srv, const struct tp_sim_glimpse *snap,
                        uint32_t addr, uint16_t port, const char *username, const char *password,
                        const struct tp_sim_glimpse_faults *faults)
{
    memset(srv, 0, sizeof(*srv));
    srv->snap = snap;
    srv->faults = *faults;
    if (srv->faults.piece == 0)
        srv->faults.piece = 1 << 16;
    if ((username != NULL && strlen(username) > 6) || (password != NULL && strlen(password) > 10))
        return -EINVAL;
    if (username != NULL)
        snprintf(srv->username, sizeof(srv->username), "%s", username);
    if (password != NULL)
        snprintf(srv->password, sizeof(srv->password), "%s", password);
    srv->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (srv->fd < 0)
        return -errno;
    int one = 1;
    setsockopt(srv->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(addr)};
    if (bind(srv->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(srv->fd, 8) != 0) {
        int err = -errno;
        close(srv->fd);
        srv->fd = -1;
        return err;
    }
    return 0;
}

uint16_t tp_sim_glimpse_port(const struct tp_sim_glimpse_server *srv)
{
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    if (getsockname(srv->fd, (struct sockaddr *)&sa, &len) != 0)
        return 0;
    return ntohs(sa.sin_port);
}

/* Reads exactly n bytes within 2 s; 0 or -1. */
static int read_all(int fd, uint8_t *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, 2000) != 1)
            return -1;
        ssize_t r = read(fd, buf + got, n - got);
        if (r <= 0)
            return -1;
        got += (size_t)r;
    }
    return 0;
}

static int write_all(int fd, const uint8_t *buf, size_t n)
{
    while (n > 0) {
        ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

/* An alpha field equal to s (space padded)? An empty s matches anything. */
static int alpha_is(const uint8_t *field, size_t width, const char *s)
{
    uint8_t want[16];
    if (s[0] == '\0')
        return 1;
    tp_soup_alpha_set(want, width, s);
    return memcmp(field, want, width) == 0;
}

/* Bytes of the snapshot's packet at offset at (the snapshot's own packets: well formed). */
static size_t packet_bytes(const struct tp_sim_glimpse *g, size_t at)
{
    return TP_SOUP_LENGTH_LEN + ((size_t)g->packets[at] << 8 | g->packets[at + 1]);
}

/* Byte length of the first `messages` packets of the snapshot. */
static size_t prefix_bytes(const struct tp_sim_glimpse *g, uint64_t messages)
{
    size_t at = 0;
    for (uint64_t i = 0; i < messages && at < g->len; i++)
        at += packet_bytes(g, at);
    return at;
}

static void pause_us(uint32_t us)
{
    struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* One client session. */
static void session(struct tp_sim_glimpse_server *srv, int fd)
{
    uint8_t login[TP_SOUP_LENGTH_LEN + 1 + TP_SOUP_LOGIN_REQUEST_LEN];
    struct tp_soup_packet p;
    size_t need;
    if (read_all(fd, login, sizeof(login)) != 0 ||
        tp_soup_frame(login, sizeof(login), sizeof(login), &p, &need) <= 0 ||
        tp_soup_check(&p, TP_SOUP_FROM_CLIENT) != 0 || p.type != TP_SOUP_LOGIN_REQUEST)
        return;
    srv->logins++;
    uint8_t out[64];
    int n;
    if (srv->refused < srv->faults.refuse ||
        !alpha_is(tp_soup_login_username(&p), TP_SOUP_USERNAME_LEN, srv->username) ||
        !alpha_is(tp_soup_login_password(&p), TP_SOUP_PASSWORD_LEN, srv->password)) {
        srv->refused++;
        uint8_t code = TP_SOUP_REJECT_NOT_AUTHORIZED;
        n = tp_soup_encode(out, sizeof(out), TP_SOUP_LOGIN_REJECTED, &code, 1);
        write_all(fd, out, (size_t)n);
        return;
    }
    n = tp_soup_encode_accepted(out, sizeof(out), TP_SIM_GLIMPSE_SESSION, 1);
    if (write_all(fd, out, (size_t)n) != 0)
        return;
    size_t total = srv->snap->len;
    int drop = srv->dropped < srv->faults.drops;
    if (drop)
        total = prefix_bytes(srv->snap, srv->faults.drop_after);
    uint64_t paused_us = 0;
    uint8_t hb[4];
    int hn = tp_soup_encode_control(hb, sizeof(hb), TP_SOUP_SERVER_HEARTBEAT);
    /* Pieces end where packets do, so a heartbeat never lands inside one. */
    for (size_t at = 0, cut = 0; at < total; at = cut) {
        while (cut < total && cut - at < srv->faults.piece)
            cut += packet_bytes(srv->snap, cut);
        if (write_all(fd, srv->snap->packets + at, cut - at) != 0)
            return;
        if (srv->faults.pause_us > 0 && cut < total) {
            pause_us(srv->faults.pause_us);
            paused_us += srv->faults.pause_us;
            if (paused_us >= 1000000) {
                paused_us = 0;
                write_all(fd, hb, (size_t)hn);
            }
        }
    }
    if (drop) {
        srv->dropped++;
        return;
    }
    srv->served++;
    /* Until the client logs out or closes (2 s at most). */
    uint8_t buf[256];
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, 2000) != 1 || read(fd, buf, sizeof(buf)) <= 0)
            break;
    }
}

int tp_sim_glimpse_serve(struct tp_sim_glimpse_server *srv, uint64_t ms)
{
    uint64_t end = now_ms() + ms;
    int handled = 0;
    for (uint64_t t = now_ms(); t < end; t = now_ms()) {
        struct pollfd p = {.fd = srv->fd, .events = POLLIN};
        int rc = poll(&p, 1, (int)(end - t));
        if (rc < 0 && errno != EINTR)
            return -errno;
        if (rc <= 0)
            continue;
        int fd = accept(srv->fd, NULL, NULL);
        if (fd < 0)
            continue;
        session(srv, fd);
        close(fd);
        handled++;
    }
    return handled;
}

void tp_sim_glimpse_close(struct tp_sim_glimpse_server *srv)
{
    if (srv->fd >= 0)
        close(srv->fd);
    srv->fd = -1;
}
