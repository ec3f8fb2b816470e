/* Minimal HTTP /metrics endpoint: see http_metrics.h. */
#include "http_metrics.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define REQUEST_MAX  4096
#define RESPONSE_MAX (4u << 20)
#define DEADLINE_MS  5000

struct http_client {
    int fd; /* -1: free */
    uint64_t deadline_ms;
    char req[REQUEST_MAX];
    size_t req_len;
    char *resp; /* once the request is complete */
    size_t resp_len, resp_sent;
};

struct tp_http_metrics {
    int listen_fd;
    uint16_t port;
    tp_http_render_fn render;
    void *ctx;
    struct http_client clients[TP_HTTP_MAX_CLIENTS];
};

int tp_http_metrics_open(struct tp_http_metrics **out, uint32_t address, uint16_t port,
                         tp_http_render_fn render, void *ctx)
{
    struct tp_http_metrics *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return -ENOMEM;
    for (unsigned i = 0; i < TP_HTTP_MAX_CLIENTS; i++)
        h->clients[i].fd = -1;
    h->render = render;
    h->ctx = ctx;
    h->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    struct sockaddr_in addr = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(address)};
    socklen_t len = sizeof(addr);
    if (h->listen_fd < 0 ||
        setsockopt(h->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        bind(h->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 ||
        listen(h->listen_fd, 16) != 0 ||
        getsockname(h->listen_fd, (struct sockaddr *)&addr, &len) != 0) {
        int e = errno;
        if (h->listen_fd >= 0)
            close(h->listen_fd);
        free(h);
        return -e;
    }
    h->port = ntohs(addr.sin_port);
    *out = h;
    return 0;
}

uint16_t tp_http_metrics_port(const struct tp_http_metrics *h)
{
    return h->port;
}

unsigned tp_http_metrics_pollfds(const struct tp_http_metrics *h, struct pollfd *fds)
{
    unsigned n = 0;
    fds[n++] = (struct pollfd){.fd = h->listen_fd, .events = POLLIN};
    for (unsigned i = 0; i < TP_HTTP_MAX_CLIENTS; i++) {
        const struct http_client *c = &h->clients[i];
        if (c->fd >= 0)
            fds[n++] = (struct pollfd){.fd = c->fd, .events = c->resp ? POLLOUT : POLLIN};
    }
    return n;
}

static void drop(struct http_client *c)
{
    close(c->fd);
    free(c->resp);
    c->fd = -1;
    c->resp = NULL;
    c->req_len = c->resp_len = c->resp_sent = 0;
}

/* The request line's method and whether its path is /metrics (a query string allowed). */
static bool is_metrics_path(const char *req, size_t *method_len)
{
    *method_len = strcspn(req, " \r\n");
    const char *path = req + *method_len + (req[*method_len] == ' ');
    size_t plen = strcspn(path, " ?\r\n");
    return plen == strlen("/metrics") && strncmp(path, "/metrics", plen) == 0;
}

/* Build the whole response once the request head is in. */
static void respond(struct tp_http_metrics *h, struct http_client *c)
{
    size_t mlen;
    bool metrics = is_metrics_path(c->req, &mlen);
    bool get = mlen == 3 && strncmp(c->req, "GET", 3) == 0;
    bool head_only = mlen == 4 && strncmp(c->req, "HEAD", 4) == 0;
    char *body = malloc(RESPONSE_MAX);
    long n = -ENOMEM;
    if (body != NULL && metrics && (get || head_only))
        n = h->render(h->ctx, body, RESPONSE_MAX - 256);
    const char *status = !metrics             ? "404 Not Found"
                         : !get && !head_only ? "405 Method Not Allowed"
                         : n < 0              ? "500 Internal Server Error"
                                              : "200 OK";
    if (!metrics || (!get && !head_only) || n < 0)
        n = body ? snprintf(body, 64, "%s\n", status) : 0;
    c->resp = malloc((size_t)n + 256);
    if (c->resp == NULL || body == NULL) {
        free(body);
        drop(c);
        return;
    }
    int head = snprintf(c->resp, 256,
                        "HTTP/1.1 %s\r\nContent-Type: text/plain; version=0.0.4\r\n"
                        "Content-Length: %ld\r\n%sConnection: close\r\n\r\n",
                        status, n, metrics && !get && !head_only ? "Allow: GET, HEAD\r\n" : "");
    /* HEAD: the headers GET would have, without the body. */
    if (!head_only)
        memcpy(c->resp + head, body, (size_t)n);
    c->resp_len = (size_t)head + (head_only ? 0 : (size_t)n);
    free(body);
}

static void serve_client(struct tp_http_metrics *h, struct http_client *c, uint64_t now_ms)
{
    if (now_ms > c->deadline_ms) {
        drop(c);
        return;
    }
    if (c->resp == NULL) {
        ssize_t n = recv(c->fd, c->req + c->req_len, sizeof(c->req) - 1 - c->req_len, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
            drop(c);
            return;
        }
        if (n < 0)
            return;
        c->req_len += (size_t)n;
        c->req[c->req_len] = '\0';
        if (strstr(c->req, "\r\n\r\n") == NULL && strstr(c->req, "\n\n") == NULL) {
            if (c->req_len == sizeof(c->req) - 1)
                drop(c); /* a request head this long is not a scrape */
            return;
        }
        respond(h, c);
        if (c->fd < 0)
            return;
    }
    ssize_t n = send(c->fd, c->resp + c->resp_sent, c->resp_len - c->resp_sent,
                     MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        drop(c);
        return;
    }
    c->resp_sent += (size_t)n;
    if (c->resp_sent == c->resp_len)
        drop(c);
}

void tp_http_metrics_serve(struct tp_http_metrics *h, uint64_t now_ms)
{
    for (;;) {
        int fd = accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            break;
        struct http_client *slot = NULL;
        for (unsigned i = 0; i < TP_HTTP_MAX_CLIENTS && slot == NULL; i++)
            if (h->clients[i].fd < 0)
                slot = &h->clients[i];
        if (slot == NULL) {
            close(fd); /* busy: the scraper retries */
            continue;
        }
        slot->fd = fd;
        slot->deadline_ms = now_ms + DEADLINE_MS;
    }
    for (unsigned i = 0; i < TP_HTTP_MAX_CLIENTS; i++)
        if (h->clients[i].fd >= 0)
            serve_client(h, &h->clients[i], now_ms);
}

void tp_http_metrics_close(struct tp_http_metrics *h)
{
    for (unsigned i = 0; i < TP_HTTP_MAX_CLIENTS; i++)
        if (h->clients[i].fd >= 0)
            drop(&h->clients[i]);
    close(h->listen_fd);
    free(h);
}
