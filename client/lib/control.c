/* JSON-lines client of the daemon's control socket: see control.h. */
#include "control.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* "<what>: <strerror(rc)><hint>" into err; returns rc. */
static int fail(char *err, size_t err_len, int rc, const char *what, const char *hint)
{
    if (err != NULL && err_len > 0)
        snprintf(err, err_len, "%s: %s%s", what, strerror(-rc), hint);
    return rc;
}

int tp_ctl_link_open(struct tp_ctl_link *l, const char *path, char *err, size_t err_len)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    char what[160];
    snprintf(what, sizeof(what), "control socket %s", path);
    l->fd = -1;
    l->in_len = 0;
    if (strlen(path) >= sizeof(addr.sun_path))
        return fail(err, err_len, -ENAMETOOLONG, what, "");
    memcpy(addr.sun_path, path, strlen(path) + 1);
    l->in = malloc(TP_CONTROL_LINE_MAX);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (l->in == NULL || fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        int rc = l->in == NULL ? -ENOMEM : -errno;
        if (fd >= 0)
            close(fd);
        free(l->in);
        l->in = NULL;
        return fail(err, err_len, rc, what, " (is the daemon running?)");
    }
    l->fd = fd;
    return 0;
}

void tp_ctl_link_close(struct tp_ctl_link *l)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
    free(l->in);
    l->in = NULL;
    l->in_len = 0;
}

static int lost(struct tp_ctl_link *l, char *err, size_t err_len)
{
    tp_ctl_link_close(l);
    return fail(err, err_len, -ENOTCONN, "connection to the daemon lost", "");
}

/*
 * Take the next complete line out of the buffer: an event goes to the event function, a reply is
 * returned (NULL when no complete reply line is buffered). Lines that are not JSON are skipped.
 */
static json_t *next_reply(struct tp_ctl_link *l)
{
    for (;;) {
        char *nl = memchr(l->in, '\n', l->in_len);
        if (nl == NULL)
            return NULL;
        size_t len = (size_t)(nl - l->in);
        json_t *v = json_loadb(l->in, len, 0, NULL);
        memmove(l->in, nl + 1, l->in_len - len - 1);
        l->in_len -= len + 1;
        if (json_is_object(v) && json_object_get(v, "event") != NULL) {
            if (l->on_event != NULL)
                l->on_event(l->event_ctx, v);
            json_decref(v);
            continue;
        }
        if (json_is_object(v))
            return v;
        json_decref(v);
    }
}

/* One read of what is available (waiting at most timeout_ms). 0, -EAGAIN (nothing) or -ENOTCONN. */
static int read_some(struct tp_ctl_link *l, int timeout_ms)
{
    struct pollfd p = {.fd = l->fd, .events = POLLIN};
    int n = poll(&p, 1, timeout_ms);
    if (n < 0 && errno == EINTR)
        return -EAGAIN;
    if (n == 0)
        return -EAGAIN;
    if (l->in_len == TP_CONTROL_LINE_MAX)
        return -ENOTCONN; /* a reply line longer than anything the protocol sends */
    ssize_t got = recv(l->fd, l->in + l->in_len, TP_CONTROL_LINE_MAX - l->in_len, MSG_DONTWAIT);
    if (got > 0) {
        l->in_len += (size_t)got;
        return 0;
    }
    if (got < 0 && (errno == EAGAIN || errno == EINTR))
        return -EAGAIN;
    return -ENOTCONN;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tp_ctl_link_call(struct tp_ctl_link *l, json_t *request, json_t **reply, char *err,
                     size_t err_len)
{
    *reply = NULL;
    if (l->fd < 0) {
        json_decref(request);
        return fail(err, err_len, -ENOTCONN, "not connected to the daemon", "");
    }
    long long id = ++l->next_id;
    json_object_set_new(request, "id", json_integer(id));
    char *text = json_dumps(request, JSON_COMPACT);
    json_decref(request);
    if (text == NULL)
        return fail(err, err_len, -ENOMEM, "request", "");
    size_t len = strlen(text);
    text[len] = '\n'; /* replaces the terminator: the line is sent with its newline */
    size_t sent = 0;
    while (sent < len + 1) {
        ssize_t n = send(l->fd, text + sent, len + 1 - sent, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        sent += (size_t)n;
    }
    free(text);
    if (sent < len + 1)
        return lost(l, err, err_len);

    long long deadline = now_ms() + TP_CONTROL_TIMEOUT_MS;
    for (;;) {
        json_t *v;
        while ((v = next_reply(l)) != NULL) {
            json_t *rid = json_object_get(v, "id");
            if (json_is_integer(rid) && json_integer_value(rid) == id) {
                *reply = v;
                return 0;
            }
            json_decref(v); /* a reply to an earlier request that timed out */
        }
        long long left = deadline - now_ms();
        if (left <= 0)
            return fail(err, err_len, -ETIMEDOUT, "no reply from the daemon", "");
        int rc = read_some(l, (int)left);
        if (rc == -ENOTCONN)
            return lost(l, err, err_len);
    }
}

int tp_ctl_link_drain(struct tp_ctl_link *l)
{
    if (l->fd < 0)
        return -ENOTCONN;
    for (;;) {
        int rc = read_some(l, 0);
        json_t *v;
        while ((v = next_reply(l)) != NULL)
            json_decref(v); /* late replies to requests that timed out */
        if (rc == -EAGAIN)
            return 0;
        if (rc == -ENOTCONN) {
            tp_ctl_link_close(l);
            return -ENOTCONN;
        }
    }
}
