/*
 * Control socket connection layer: listening, accepting, reading bounded lines, queueing replies,
 * closing. Verbs are in requests.c. See server.h.
 */
#include "server.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "server_internal.h"

#define LISTEN_TAG UINT64_MAX
#define MAX_EVENTS 64

static void copy_config(struct tp_ctl_server *srv, const struct tp_config *cfg)
{
    srv->ent = cfg->entitlements;
    srv->n_venues = 0;
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        bool seen = false;
        for (unsigned v = 0; v < srv->n_venues; v++)
            seen |= strcmp(srv->venues[v], cfg->channels[c].venue) == 0;
        if (!seen)
            strcpy(srv->venues[srv->n_venues++], cfg->channels[c].venue);
    }
}

/*
 * Bind, refusing to steal the socket of a live daemon but replacing a stale file. The group (if
 * not (gid_t)-1) is set before listen: no client connects under the wrong ownership. The socket
 * is bound under a temporary name and renamed into place once it listens, so a client that
 * waits for the path to appear never finds a socket that refuses it.
 */
static int bind_socket(struct tp_ctl_server *srv, mode_t mode, gid_t gid)
{
    static const char pending_suffix[] = ".new";
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(srv->path) + sizeof(pending_suffix) > sizeof(addr.sun_path))
        return -ENAMETOOLONG;
    strcpy(addr.sun_path, srv->path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (lstat(srv->path, &st) == 0) {
        if (!S_ISSOCK(st.st_mode)) {
            close(fd);
            return -EEXIST;
        }
        int probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int live = probe >= 0 && connect(probe, (struct sockaddr *)&addr, sizeof(addr)) == 0;
        if (probe >= 0)
            close(probe);
        if (live) {
            close(fd);
            return -EADDRINUSE;
        }
    }
    strcat(addr.sun_path, pending_suffix);
    unlink(addr.sun_path);
    /* The mode applies from the first instant: no window with a wider default. */
    mode_t old = umask(0777 & ~mode);
    int rc = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
    umask(old);
    if (rc != 0 || chmod(addr.sun_path, mode) != 0 ||
        (gid != (gid_t)-1 && chown(addr.sun_path, (uid_t)-1, gid) != 0) || listen(fd, 1024) != 0 ||
        rename(addr.sun_path, srv->path) != 0) {
        rc = -errno;
        close(fd);
        unlink(addr.sun_path);
        return rc;
    }
    return fd;
}

int tp_ctl_server_open(struct tp_ctl_server **out, const struct tp_config *cfg,
                       const struct tp_ctl_ops *ops)
{
    struct tp_ctl_server *srv = calloc(1, sizeof(*srv));
    if (srv == NULL)
        return -ENOMEM;
    srv->cfg = cfg->control;
    srv->ops = *ops;
    srv->n_slots = cfg->control.max_clients;
    srv->next_client_id = 1;
    srv->listen_fd = srv->epoll_fd = -1;
    if (strlen(cfg->control.socket_path) >= sizeof(srv->path)) {
        free(srv);
        return -ENAMETOOLONG;
    }
    memcpy(srv->path, cfg->control.socket_path, strlen(cfg->control.socket_path) + 1);
    copy_config(srv, cfg);
    srv->clients = calloc(srv->n_slots, sizeof(*srv->clients));
    int rc = srv->clients ? 0 : -ENOMEM;
    for (unsigned i = 0; rc == 0 && i < srv->n_slots; i++)
        srv->clients[i].fd = -1;
    gid_t gid = (gid_t)-1;
    if (rc == 0)
        rc = tp_config_group_gid(cfg->control.socket_group, &gid);
    if (rc == 0)
        rc = tp_config_group_gid(cfg->control.operator_group, &srv->operator_gid);
    if (rc == 0)
        rc = tp_config_group_gid(cfg->control.admin_group, &srv->admin_gid);
    if (rc == 0) {
        srv->listen_fd = bind_socket(srv, cfg->control.socket_mode, gid);
        rc = srv->listen_fd < 0 ? srv->listen_fd : 0;
    }
    if (rc == 0) {
        srv->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = LISTEN_TAG};
        if (srv->epoll_fd < 0 || epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, srv->listen_fd, &ev) != 0)
            rc = -errno;
    }
    if (rc != 0) {
        if (srv->listen_fd >= 0) {
            close(srv->listen_fd);
            unlink(srv->path);
        }
        if (srv->epoll_fd >= 0)
            close(srv->epoll_fd);
        free(srv->clients);
        free(srv);
        return rc;
    }
    *out = srv;
    return 0;
}

int tp_ctl_server_fd(const struct tp_ctl_server *srv)
{
    return srv->epoll_fd;
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void set_write_interest(struct tp_ctl_server *srv, struct ctl_client *c, bool want)
{
    if (c->want_write == want)
        return;
    struct epoll_event ev = {.events = EPOLLIN | (want ? EPOLLOUT : 0u),
                             .data.u64 = (uint64_t)(c - srv->clients)};
    epoll_ctl(srv->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
    c->want_write = want;
}

static void close_client(struct tp_ctl_server *srv, struct ctl_client *c)
{
    if (c->n_subs > 0) {
        struct tp_ctl_cmd cmd = {.op = TP_CTL_UNSUBSCRIBE_CLIENT, .client_id = c->id};
        ctl_send_command(srv, &cmd, true);
        srv->stats.subscriptions -= c->n_subs;
    }
    epoll_ctl(srv->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c->subs);
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    srv->stats.clients--;
}

/* Send what is queued; returns false if the client is gone (error) and was closed. */
static bool flush_client(struct tp_ctl_server *srv, struct ctl_client *c)
{
    size_t sent = 0;
    while (sent < c->out_len) {
        ssize_t n = send(c->fd, c->out + sent, c->out_len - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            sent += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        close_client(srv, c);
        return false;
    }
    if (sent > 0) {
        memmove(c->out, c->out + sent, c->out_len - sent);
        c->out_len -= sent;
    }
    if (c->out_len == 0 && c->closing) {
        close_client(srv, c);
        return false;
    }
    set_write_interest(srv, c, c->out_len > 0);
    return true;
}

void ctl_send_json(struct tp_ctl_server *srv, struct ctl_client *c, json_t *msg)
{
    char *text = json_dumps(msg, JSON_COMPACT);
    json_decref(msg);
    if (text == NULL || c->fd < 0) {
        free(text);
        return;
    }
    size_t len = strlen(text);
    if (c->out_len + len + 1 > TP_CTL_MAX_OUTPUT) {
        /* The client is not reading its replies: it cannot be allowed to grow without bound. */
        free(text);
        srv->stats.slow_disconnects++;
        c->closing = true;
        c->out_len = 0;
        return;
    }
    if (c->out_len + len + 1 > c->out_cap) {
        size_t cap = c->out_cap ? c->out_cap : 4096;
        while (cap < c->out_len + len + 1)
            cap *= 2;
        char *grown = realloc(c->out, cap);
        if (grown == NULL) {
            free(text);
            c->closing = true;
            return;
        }
        c->out = grown;
        c->out_cap = cap;
    }
    memcpy(c->out + c->out_len, text, len);
    c->out[c->out_len + len] = '\n';
    c->out_len += len + 1;
    free(text);
}

void ctl_reply_error(struct tp_ctl_server *srv, struct ctl_client *c, json_t *id, const char *fmt,
                     ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    json_t *reply = json_object();
    if (id != NULL)
        json_object_set(reply, "id", id);
    json_object_set_new(reply, "ok", json_false());
    json_object_set_new(reply, "error", json_string(message));
    srv->stats.errors++;
    ctl_send_json(srv, c, reply);
}

int ctl_send_command(struct tp_ctl_server *srv, const struct tp_ctl_cmd *cmd, bool may_defer)
{
    int rc = srv->ops.send_command ? srv->ops.send_command(srv->ops.ctx, cmd) : 0;
    if (rc == 0) {
        srv->stats.commands_sent++;
        return 0;
    }
    if (!may_defer)
        return rc;
    if (srv->n_deferred == CTL_DEFERRED_MAX) {
        srv->stats.commands_lost++;
        return rc;
    }
    srv->deferred[srv->n_deferred++] = *cmd;
    srv->stats.commands_deferred++;
    return 0;
}

/* Retry deferred commands in order, stopping at the first that still does not fit. */
static void retry_deferred(struct tp_ctl_server *srv)
{
    unsigned done = 0;
    while (done < srv->n_deferred && srv->ops.send_command != NULL &&
           srv->ops.send_command(srv->ops.ctx, &srv->deferred[done]) == 0) {
        srv->stats.commands_sent++;
        done++;
    }
    memmove(srv->deferred, srv->deferred + done,
            sizeof(srv->deferred[0]) * (srv->n_deferred - done));
    srv->n_deferred -= done;
}

/* At most this many accepts per poll: a connection storm cannot starve connected clients. A
 * refusal is cheap (no group lookup, nothing kept): more of them per poll drain a flood from the
 * backlog, so that other users' connections get in. */
#define ACCEPTS_PER_POLL  16
#define REFUSALS_PER_POLL 512

/* Best effort notice to a refused connection; the socket is new, so a small write does not block.
 */
static void refuse(int fd, const char *why)
{
    char msg[256];
    int n = snprintf(msg, sizeof(msg), "{\"ok\":false,\"error\":\"%s\"}\n", why);
    ssize_t ignored = send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)ignored;
    close(fd);
}

static bool is_operator(const struct tp_ctl_server *srv, const struct tp_peer *peer)
{
    return peer->uid == 0 || tp_peer_in_group(peer, srv->operator_gid);
}

/*
 * Whether a new connection of this peer may take a slot: under its uid's limit, and (for others
 * than operators) outside the reserved slots. Refused with the reason (counted) otherwise. The
 * uid is checked from SO_PEERCRED before the group lookup: a flood costs no database reads.
 */
static struct ctl_client *admit(struct tp_ctl_server *srv, int fd, struct tp_peer *peer)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        close(fd);
        return NULL;
    }
    unsigned of_uid = 0;
    struct ctl_client *free_slot = NULL;
    for (unsigned i = 0; i < srv->n_slots; i++) {
        if (srv->clients[i].fd < 0)
            free_slot = free_slot != NULL ? free_slot : &srv->clients[i];
        else
            of_uid += srv->clients[i].peer.uid == cred.uid;
    }
    char why[160];
    if (cred.uid != 0 && of_uid >= srv->cfg.max_clients_per_uid) {
        snprintf(why, sizeof(why), "too many connections of uid %u (limit %u per uid)",
                 (unsigned)cred.uid, srv->cfg.max_clients_per_uid);
        srv->stats.rejected_uid++;
        refuse(fd, why);
        return NULL;
    }
    if (free_slot == NULL) {
        snprintf(why, sizeof(why), "too many clients (limit %u)", srv->n_slots);
        srv->stats.rejected_full++;
        refuse(fd, why);
        return NULL;
    }
    if (tp_peer_from_socket(fd, peer) != 0) {
        close(fd);
        return NULL;
    }
    uint64_t free_slots = srv->n_slots - srv->stats.clients;
    if (free_slots <= srv->cfg.reserved_clients && !is_operator(srv, peer)) {
        snprintf(why, sizeof(why),
                 "too many clients (limit %u, of which the last %u are kept for operators)",
                 srv->n_slots, srv->cfg.reserved_clients);
        srv->stats.rejected_full++;
        refuse(fd, why);
        return NULL;
    }
    return free_slot;
}

static void accept_clients(struct tp_ctl_server *srv)
{
    for (unsigned admitted = 0, refused = 0;
         admitted < ACCEPTS_PER_POLL && refused < REFUSALS_PER_POLL;) {
        int fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or a transient error: try again at the next event */
        struct tp_peer peer;
        struct ctl_client *c = admit(srv, fd, &peer);
        if (c == NULL) {
            refused++;
            continue;
        }
        admitted++;
        c->peer = peer;
        c->in = malloc(srv->cfg.max_line_bytes + 1);
        c->subs = calloc(srv->cfg.max_subscriptions, sizeof(*c->subs));
        struct epoll_event ev = {.events = EPOLLIN, .data.u64 = (uint64_t)(c - srv->clients)};
        if (c->in == NULL || c->subs == NULL ||
            epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
            free(c->in);
            free(c->subs);
            memset(c, 0, sizeof(*c));
            c->fd = -1;
            close(fd);
            continue;
        }
        c->fd = fd;
        c->id = srv->next_client_id++;
        c->next_sub_id = 1;
        c->last_input_ms = now_ms();
        srv->stats.accepted++;
        srv->stats.clients++;
    }
}

/*
 * Connections that hold no subscription and have sent nothing for idle_timeout_ms are closed, so
 * idle connections cannot pile up; a subscriber's connection is its subscriptions' lifetime and
 * stays. Swept a few times a second.
 */
static void close_idle(struct tp_ctl_server *srv)
{
    uint64_t now = now_ms();
    if (srv->cfg.idle_timeout_ms == 0 || now < srv->next_sweep_ms)
        return;
    srv->next_sweep_ms = now + 100;
    for (unsigned i = 0; i < srv->n_slots; i++) {
        struct ctl_client *c = &srv->clients[i];
        if (c->fd < 0 || c->n_subs > 0 || c->closing ||
            now - c->last_input_ms < srv->cfg.idle_timeout_ms)
            continue;
        ctl_reply_error(srv, c, NULL, "idle for %u ms without a subscription: closed",
                        srv->cfg.idle_timeout_ms);
        srv->stats.idle_closed++;
        c->closing = true;
        flush_client(srv, c);
    }
}

/* Per-client request budget: max_requests_per_sec in each one-second window. */
static bool within_rate(struct tp_ctl_server *srv, struct ctl_client *c)
{
    uint64_t now = now_ms();
    if (now - c->window_start_ms >= 1000) {
        c->window_start_ms = now;
        c->window_count = 0;
    }
    return ++c->window_count <= srv->cfg.max_requests_per_sec;
}

/* Split the input buffer into lines and handle each complete one. */
static void process_input(struct tp_ctl_server *srv, struct ctl_client *c)
{
    size_t start = 0;
    for (;;) {
        char *nl = memchr(c->in + start, '\n', c->in_len - start);
        if (nl == NULL)
            break;
        size_t len = (size_t)(nl - (c->in + start));
        if (len > 0) {
            srv->stats.requests++;
            if (!within_rate(srv, c)) {
                srv->stats.rate_limited++;
                ctl_reply_error(srv, c, NULL, "rate limited (limit %u requests/s)",
                                srv->cfg.max_requests_per_sec);
            } else {
                ctl_handle_line(srv, c, c->in + start, len);
            }
        }
        start += len + 1;
        if (c->closing)
            break;
    }
    memmove(c->in, c->in + start, c->in_len - start);
    c->in_len -= start;
    /* A full buffer without a newline: the line is too long. Say so once, skip to its end. */
    if (c->in_len > srv->cfg.max_line_bytes) {
        srv->stats.lines_too_long++;
        srv->stats.requests++;
        ctl_reply_error(srv, c, NULL, "line too long (limit %u bytes)", srv->cfg.max_line_bytes);
        c->discarding = true;
        c->in_len = 0;
    }
}

static void read_client(struct tp_ctl_server *srv, struct ctl_client *c)
{
    /* One bounded read per event keeps every client's share of the main lcore small. */
    size_t room = srv->cfg.max_line_bytes + 1 - c->in_len;
    ssize_t n = recv(c->fd, c->in + c->in_len, room, MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        close_client(srv, c);
        return;
    }
    if (n < 0)
        return;
    c->last_input_ms = now_ms();
    if (c->discarding) {
        /* Drop everything up to the newline that ends the overlong line. */
        char *nl = memchr(c->in + c->in_len, '\n', (size_t)n);
        if (nl == NULL)
            return;
        size_t keep = (size_t)n - (size_t)(nl + 1 - (c->in + c->in_len));
        memmove(c->in, nl + 1, keep);
        c->in_len = keep;
        c->discarding = false;
    } else {
        c->in_len += (size_t)n;
    }
    process_input(srv, c);
}

int tp_ctl_server_poll(struct tp_ctl_server *srv, int timeout_ms)
{
    if (srv->n_deferred > 0) {
        retry_deferred(srv);
        if (srv->n_deferred > 0 && (timeout_ms < 0 || timeout_ms > 1))
            timeout_ms = 1; /* come back soon to retry */
    }
    close_idle(srv);
    struct epoll_event events[MAX_EVENTS];
    int n = epoll_wait(srv->epoll_fd, events, MAX_EVENTS, timeout_ms);
    for (int i = 0; i < n; i++) {
        if (events[i].data.u64 == LISTEN_TAG) {
            accept_clients(srv);
            continue;
        }
        struct ctl_client *c = &srv->clients[events[i].data.u64];
        if (c->fd < 0)
            continue;
        if (events[i].events & (EPOLLERR | EPOLLHUP) && !(events[i].events & EPOLLIN)) {
            close_client(srv, c);
            continue;
        }
        if (events[i].events & EPOLLIN && !c->closing)
            read_client(srv, c);
        if (c->fd >= 0)
            flush_client(srv, c);
    }
    return n < 0 ? 0 : n;
}

void tp_ctl_server_update(struct tp_ctl_server *srv, const struct tp_config *cfg)
{
    copy_config(srv, cfg);
    /* Line and subscription buffers are sized at accept: those limits change at restart. */
    srv->cfg.max_requests_per_sec = cfg->control.max_requests_per_sec;
    for (unsigned i = 0; i < srv->n_slots; i++) {
        struct ctl_client *c = &srv->clients[i];
        if (c->fd < 0)
            continue;
        for (unsigned s = 0; s < c->n_subs;) {
            char reason[200];
            struct ctl_sub *sub = &c->subs[s];
            if (tp_entitle_check(&srv->ent, &c->peer, sub->venue, sub->pattern, sub->topics, reason,
                                 sizeof(reason)) == 0) {
                s++;
                continue;
            }
            json_t *ev = json_pack("{s:s, s:i, s:s}", "event", "revoked", "subscription",
                                   (json_int_t)sub->id, "reason", reason);
            ctl_drop_subscription(srv, c, s);
            ctl_send_json(srv, c, ev);
        }
        /*
         * Sent by the event loop (EPOLLOUT), not here: this may run inside a request of one of
         * these clients (the reload verb), which must not be closed under its own handler.
         */
        if (c->out_len > 0)
            set_write_interest(srv, c, true);
    }
}

void tp_ctl_server_stats(const struct tp_ctl_server *srv, struct tp_ctl_server_stats *out)
{
    *out = srv->stats;
}

void tp_ctl_server_close(struct tp_ctl_server *srv)
{
    for (unsigned i = 0; i < srv->n_slots; i++)
        if (srv->clients[i].fd >= 0)
            close_client(srv, &srv->clients[i]);
    retry_deferred(srv);
    close(srv->epoll_fd);
    close(srv->listen_fd);
    unlink(srv->path);
    free(srv->clients);
    free(srv);
}
