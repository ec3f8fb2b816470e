/*
 * The boundary between the control socket and the rest of the daemon.
 *
 * Interest changes travel to the data plane as small fixed-size commands (struct tp_ctl_cmd) that
 * the daemon puts on a lock-free ring (an rte_ring of elements, or any single-producer queue): the
 * control plane never takes a lock the data plane could hold and never waits for it. Everything
 * else the socket needs from the daemon (status, stats, instrument list, one book, reload,
 * metrics) is asked through the ops table, on the main lcore, by the same thread that runs the
 * socket. The daemon fills these with jansson values; control/ stays free of DPDK.
 */
#ifndef TP_CTL_OPS_H
#define TP_CTL_OPS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define TP_CTL_VENUE_MAX   32
#define TP_CTL_PATTERN_MAX 64

enum tp_ctl_op {
    TP_CTL_SUBSCRIBE = 1,          /* add interest: (client, sub) -> (venue, pattern, topics) */
    TP_CTL_UNSUBSCRIBE = 2,        /* remove (client, sub) */
    TP_CTL_UNSUBSCRIBE_CLIENT = 3, /* remove every subscription of client (it disconnected) */
};

/* One interest change, 112 bytes, a multiple of 4 as rte_ring_enqueue_elem wants. */
struct tp_ctl_cmd {
    uint32_t op;                      /* enum tp_ctl_op */
    uint32_t client_id;               /* unique per connection for the daemon's lifetime */
    uint32_t sub_id;                  /* unique within the client */
    uint32_t topics;                  /* TP_CFG_TOPIC_* mask */
    char venue[TP_CTL_VENUE_MAX];     /* NUL-terminated */
    char pattern[TP_CTL_PATTERN_MAX]; /* instrument glob, NUL-terminated */
};

_Static_assert(sizeof(struct tp_ctl_cmd) % 4 == 0, "rte_ring element size must be a multiple of 4");

/*
 * Callbacks into the daemon. Any may be NULL (the verb then answers "not available"). Returned
 * json_t values become the caller's (it decrefs them). None may block.
 */
struct tp_ctl_ops {
    void *ctx;
    /* Enqueue a command for the data plane: 0, or -ENOBUFS when the ring is full (retry later). */
    int (*send_command)(void *ctx, const struct tp_ctl_cmd *cmd);
    /* {"channels": [...], "lcores": [...], ...}: merged into the status reply. */
    json_t *(*status)(void *ctx);
    /* Counters object: merged into the stats reply. */
    json_t *(*stats)(void *ctx);
    /*
     * Instruments whose symbol matches pattern, at most limit, as an array of objects that carry
     * at least "symbol" and "venue" (the socket filters them by the client's entitlements).
     */
    json_t *(*instruments)(void *ctx, const char *pattern, unsigned limit);
    /*
     * Book of one instrument, NULL + reason if unknown. Shape (tickplanectl renders it):
     * {"venue": s, "symbol": s, "status": s (optional), "bids": [{"price9": i, "qty": i,
     * "orders": i (optional)}, ...best first], "asks": [...]}; prices are int64 with exponent -9.
     */
    json_t *(*book)(void *ctx, const char *venue, const char *symbol, unsigned depth, char *err,
                    size_t err_size);
    /* Re-read and apply the config; returns {"ok": bool, "errors": [...], "changes": {...}}. */
    json_t *(*reload)(void *ctx);
    /*
     * Fetch a snapshot for channel `channel` now (ITCH: GLIMPSE; the books are flagged until it
     * is applied): the reply object, or NULL with why in err.
     */
    json_t *(*recover)(void *ctx, const char *channel, char *err, size_t err_size);
    /* Prometheus text of all counters into buf; returns its length or -ENOSPC. */
    long (*metrics)(void *ctx, char *buf, size_t size);
};

#endif /* TP_CTL_OPS_H */
