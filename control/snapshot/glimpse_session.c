/*
 * A GLIMPSE 5.0 snapshot fetch: see glimpse_session.h.
 */
#include "glimpse_session.h"

#include <errno.h>
#include <string.h>

#include "glimpse.h"

void tp_glimpse_init(struct tp_glimpse_session *g, const struct tp_glimpse_params *params,
                     const struct tp_glimpse_sink *sink)
{
    memset(&g->counters, 0, sizeof(g->counters));
    g->params = *params;
    if (g->params.attempts == 0)
        g->params.attempts = 1;
    /* GLIMPSE serves the snapshot from the start of its own session. */
    g->params.soup.session[0] = '\0';
    g->params.soup.sequence = 1;
    g->sink = *sink;
    g->state = TP_GLIMPSE_IDLE;
    g->last_fail = TP_SOUP_FAIL_NONE;
    g->attempt = 0;
    g->soup.fd = -1;
    g->soup.state = TP_SOUP_IDLE;
}

static int on_sequenced(void *ctx, const uint8_t *msg, uint16_t len)
{
    struct tp_glimpse_session *g = ctx;
    uint64_t seq;
    int rc = tp_glimpse_snapshot_seq(msg, len, &seq);
    if (rc == 0) {
        g->snapshot_done = true;
        g->next_seq = seq;
        tp_soup_client_logout(&g->soup);
        return 0;
    }
    if (rc != -ENOMSG || len == 0 || len > TP_GLIMPSE_MAX_MESSAGE)
        return -EBADMSG;
    rc = g->sink.message(g->sink.ctx, msg, len);
    if (rc == 0)
        g->counters.messages++;
    return rc;
}

/* fd: a connected socket to use, or -1 to connect to the configured server. */
static void begin_attempt(struct tp_glimpse_session *g, int fd, uint64_t now)
{
    g->attempt++;
    g->counters.attempts++;
    g->attempt_ms = now;
    g->snapshot_done = false;
    g->state = TP_GLIMPSE_RUNNING;
    g->sink.begin(g->sink.ctx, g->attempt);
    struct tp_soup_client_ops ops = {.ctx = g, .sequenced = on_sequenced};
    if (fd >= 0)
        tp_soup_client_adopt(&g->soup, fd, &g->params.soup, &ops, now);
    else
        tp_soup_client_start(&g->soup, &g->params.soup, &ops, now);
}

int tp_glimpse_start(struct tp_glimpse_session *g, uint64_t now)
{
    return tp_glimpse_start_on(g, -1, now);
}

int tp_glimpse_start_on(struct tp_glimpse_session *g, int fd, uint64_t now)
{
    if (g->state != TP_GLIMPSE_IDLE)
        return -EBUSY;
    g->attempt = 0;
    begin_attempt(g, fd, now);
    return 0;
}

static bool is_rejection(enum tp_soup_fail why)
{
    return why == TP_SOUP_FAIL_REJECTED_AUTH || why == TP_SOUP_FAIL_REJECTED_SESSION ||
           why == TP_SOUP_FAIL_REJECTED_OTHER;
}

static void attempt_failed(struct tp_glimpse_session *g, enum tp_soup_fail why, uint64_t now)
{
    g->last_fail = why;
    g->counters.failed++;
    if (is_rejection(why))
        g->counters.rejected++;
    else if (g->soup.counters.sequenced > 0 || why == TP_SOUP_FAIL_CLOSED ||
             why == TP_SOUP_FAIL_IDLE_TIMEOUT || why == TP_SOUP_FAIL_LOGIN_TIMEOUT)
        g->counters.dropped++;
    bool final = g->attempt >= g->params.attempts;
    g->sink.failed(g->sink.ctx, why, final);
    if (final) {
        g->counters.gave_up++;
        g->state = TP_GLIMPSE_IDLE;
    } else {
        g->state = TP_GLIMPSE_WAITING;
        g->retry_at_ms = now + g->params.retry_ms;
    }
}

enum tp_glimpse_state tp_glimpse_poll(struct tp_glimpse_session *g, uint64_t now)
{
    if (g->state == TP_GLIMPSE_WAITING && now >= g->retry_at_ms)
        begin_attempt(g, -1, now);
    if (g->state != TP_GLIMPSE_RUNNING)
        return g->state;
    enum tp_soup_state s = tp_soup_client_poll(&g->soup, now);
    if (s == TP_SOUP_DONE) {
        if (g->snapshot_done) {
            g->counters.completed++;
            g->last_fail = TP_SOUP_FAIL_NONE;
            g->state = TP_GLIMPSE_IDLE;
            g->sink.end(g->sink.ctx, g->next_seq);
        } else {
            /* End of session before the snapshot message: the snapshot is not whole. */
            attempt_failed(g, TP_SOUP_FAIL_CLOSED, now);
        }
    } else if (s == TP_SOUP_FAILED) {
        attempt_failed(g, g->soup.fail, now);
    } else if (g->params.snapshot_timeout_ms != 0 &&
               now - g->attempt_ms >= g->params.snapshot_timeout_ms) {
        tp_soup_client_abort(&g->soup, TP_SOUP_FAIL_IDLE_TIMEOUT);
        attempt_failed(g, TP_SOUP_FAIL_IDLE_TIMEOUT, now);
    }
    return g->state;
}

void tp_glimpse_cancel(struct tp_glimpse_session *g)
{
    if (g->soup.fd >= 0)
        tp_soup_client_abort(&g->soup, TP_SOUP_FAIL_CALLER);
    g->state = TP_GLIMPSE_IDLE;
}
