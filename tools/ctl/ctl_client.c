/* Control socket client: see ctl_client.h. */
#include "ctl_client.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* Replies can be large (metrics, instrument lists); refuse absurd ones. */
#define MAX_REPLY_BYTES (64u << 20)

int tp_ctl_connect(struct tp_ctl_conn *c, const char *socket_path, char *err, size_t err_size)
{
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(socket_path) >= sizeof(addr.sun_path)) {
        snprintf(err, err_size, "socket path too long: %s", socket_path);
        return -ENAMETOOLONG;
    }
    strcpy(addr.sun_path, socket_path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)) != 0) {
        int e = errno;
        snprintf(err, err_size, "cannot connect to %s: %s", socket_path, strerror(e));
        if (fd >= 0)
            close(fd);
        return -e;
    }
    c->fd = fd;
    return 0;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

json_t *tp_ctl_read_line(struct tp_ctl_conn *c, int timeout_ms, char *err, size_t err_size)
{
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
        if (nl != NULL) {
            json_error_t jerr;
            json_t *v = json_loadb(c->buf, (size_t)(nl - c->buf), 0, &jerr);
            size_t used = (size_t)(nl + 1 - c->buf);
            memmove(c->buf, nl + 1, c->len - used);
            c->len -= used;
            if (v == NULL)
                snprintf(err, err_size, "bad reply from the daemon: %s", jerr.text);
            return v;
        }
        long long left = deadline - now_ms();
        if (left <= 0) {
            snprintf(err, err_size, "no reply within %d ms", timeout_ms);
            return NULL;
        }
        struct pollfd p = {.fd = c->fd, .events = POLLIN};
        if (poll(&p, 1, (int)left) <= 0)
            continue;
        if (c->cap - c->len < 65536) {
            size_t cap = c->cap ? c->cap * 2 : 65536;
            char *grown = cap <= MAX_REPLY_BYTES ? realloc(c->buf, cap) : NULL;
            if (grown == NULL) {
                snprintf(err, err_size, "reply larger than %u bytes", MAX_REPLY_BYTES);
                return NULL;
            }
            c->buf = grown;
            c->cap = cap;
        }
        ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
        if (n <= 0) {
            snprintf(err, err_size, "the daemon closed the connection");
            return NULL;
        }
        c->len += (size_t)n;
    }
}

json_t *tp_ctl_call(struct tp_ctl_conn *c, const json_t *request, int timeout_ms, char *err,
                    size_t err_size)
{
    char *text = json_dumps(request, JSON_COMPACT);
    if (text == NULL) {
        snprintf(err, err_size, "cannot encode the request");
        return NULL;
    }
    /* One line: the compact JSON and its newline. */
    size_t len = strlen(text);
    char *line = realloc(text, len + 2);
    if (line == NULL) {
        free(text);
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    line[len] = '\n';
    line[len + 1] = '\0';
    int failed = 0;
    for (size_t sent = 0; sent < len + 1 && !failed;) {
        ssize_t w = send(c->fd, line + sent, len + 1 - sent, MSG_NOSIGNAL);
        if (w <= 0)
            failed = errno ? errno : EIO;
        else
            sent += (size_t)w;
    }
    free(line);
    if (failed) {
        snprintf(err, err_size, "cannot send: %s", strerror(failed));
        return NULL;
    }
    for (;;) {
        json_t *line = tp_ctl_read_line(c, timeout_ms, err, err_size);
        if (line == NULL || json_object_get(line, "event") == NULL)
            return line;
        if (c->on_event != NULL)
            c->on_event(line, c->event_arg);
        json_decref(line);
    }
}

void tp_ctl_disconnect(struct tp_ctl_conn *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->buf);
    memset(c, 0, sizeof(*c));
    c->fd = -1;
}
