/* A stand-in for the daemon behind the control socket in tests: see fake_daemon.h. */
#include "fake_daemon.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct fake_daemon daemon_state;

static int fake_send(void *ctx, const struct tp_ctl_cmd *cmd)
{
    struct fake_daemon *d = ctx;
    if (d->ring_full || d->n_cmds == MAX_CMDS)
        return -ENOBUFS;
    d->cmds[d->n_cmds++] = *cmd;
    return 0;
}

static json_t *fake_status(void *ctx)
{
    (void)ctx;
    return json_pack("{s:s}", "daemon", "fake");
}

static json_t *fake_instruments(void *ctx, const char *pattern, unsigned limit)
{
    (void)ctx;
    (void)pattern;
    (void)limit;
    /* Deliberately unfiltered: the socket must filter by pattern and entitlement itself. */
    return json_pack("[{s:s,s:s},{s:s,s:s},{s:s,s:s}]", "symbol", "ESZ6", "venue", "CME", "symbol",
                     "NQZ6", "venue", "CME", "symbol", "AAPL", "venue", "NASDAQ");
}

static json_t *fake_book(void *ctx, const char *venue, const char *symbol, unsigned depth,
                         char *err, size_t err_size)
{
    (void)ctx;
    if (strcmp(symbol, "ESZ6") != 0) {
        snprintf(err, err_size, "unknown instrument %s", symbol);
        return NULL;
    }
    return json_pack("{s:s, s:s, s:i, s:[{s:I,s:i}], s:[{s:I,s:i}]}", "venue", venue, "symbol",
                     symbol, "depth", (int)depth, "bids", "price9", (json_int_t)4500250000000,
                     "qty", 10, "asks", "price9", (json_int_t)4500500000000, "qty", 7);
}

static json_t *fake_reload(void *ctx)
{
    ((struct fake_daemon *)ctx)->reloads++;
    return json_pack("{s:b}", "ok", 1);
}

static long fake_metrics(void *ctx, char *buf, size_t size)
{
    struct fake_daemon *d = ctx;
    size_t n = d->metrics_bytes ? d->metrics_bytes : 12;
    if (n + 1 > size)
        return -ENOSPC;
    memset(buf, '#', n);
    memcpy(buf, "tp_up 1\n", 8);
    buf[n] = '\0';
    return (long)n;
}

const struct tp_ctl_ops fake_ops = {
    .ctx = &daemon_state,
    .send_command = fake_send,
    .status = fake_status,
    .instruments = fake_instruments,
    .book = fake_book,
    .reload = fake_reload,
    .metrics = fake_metrics,
};
