/*
 * A minimal HTTP/1.1 endpoint for Prometheus scrapes: GET (or HEAD) /metrics answered with the
 * text the caller renders, another method on it 405 (with Allow), any other path 404, one request
 * per connection (Connection: close). Non-blocking and bounded (few clients,
 * small requests, a deadline per connection), served from the control plane's poll loop: it never
 * blocks the main lcore and a slow or hostile scraper only loses its own connection.
 */
#ifndef TP_HTTP_METRICS_H
#define TP_HTTP_METRICS_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#define TP_HTTP_MAX_CLIENTS 8

struct tp_http_metrics;

/* Render the metrics text into buf; returns its length or a negative errno. */
typedef long (*tp_http_render_fn)(void *ctx, char *buf, size_t size);

/* Listen on IPv4 address (host order; 0 = all interfaces) and TCP port (0 picks a free port, see
 * tp_http_metrics_port). */
int tp_http_metrics_open(struct tp_http_metrics **out, uint32_t address, uint16_t port,
                         tp_http_render_fn render, void *ctx);

uint16_t tp_http_metrics_port(const struct tp_http_metrics *h);

/* Fill pollfds to wait on (at most 1 + TP_HTTP_MAX_CLIENTS); returns how many. */
unsigned tp_http_metrics_pollfds(const struct tp_http_metrics *h, struct pollfd *fds);

/* Serve whatever is ready (never blocks). now_ms: a monotonic clock for the deadlines. */
void tp_http_metrics_serve(struct tp_http_metrics *h, uint64_t now_ms);

void tp_http_metrics_close(struct tp_http_metrics *h);

#endif /* TP_HTTP_METRICS_H */
