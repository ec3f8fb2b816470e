/*
 * A capture preloaded into mbufs behind a net_ring port: see preload.h. Two passes over the
 * capture with codecs/net's pcap_reader: the first plans the pools (preload_plan.h, the rule the
 * config's memory estimate counts by), the second fills them.
 */
#include "preload.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "pcap_reader.h"

/* preload_plan.h's figures are this DPDK's: one that differs fails here, not in the estimate. */
_Static_assert(TP_PRELOAD_HEADROOM == RTE_PKTMBUF_HEADROOM, "preload_plan.h: mbuf headroom");
_Static_assert(TP_PRELOAD_MBUF_HEADER == sizeof(struct rte_mbuf), "preload_plan.h: mbuf header");
_Static_assert(TP_PRELOAD_LINE == RTE_MEMPOOL_ALIGN, "preload_plan.h: mempool alignment");
_Static_assert(TP_PRELOAD_OBJ_HEADER ==
                   RTE_ALIGN_CEIL(sizeof(struct rte_mempool_objhdr), RTE_MEMPOOL_ALIGN),
               "preload_plan.h: mempool object header");
_Static_assert(TP_PRELOAD_RING_SLOT == sizeof(void *), "preload_plan.h: ring slot");
_Static_assert(sizeof(struct rte_mempool) + RTE_MAX_LCORE * sizeof(struct rte_mempool_cache) <
                   TP_PRELOAD_POOL_BYTES,
               "preload_plan.h: a pool's header with its per-lcore caches");
_Static_assert(TP_PRELOAD_CLASSES <= UINT16_MAX / TP_PRELOAD_ROOM_STEP,
               "an mbuf's data room is a uint16_t");

/* rte_eth_from_rings names the device it creates "net_ring_<name>". */
static const char ring_prefix[] = "net_ring_";

/* Per-lcore mempool cache: the data lcore frees every frame it received into one. */
#define POOL_CACHE 256

static int fail(char *err, size_t err_len, int rc, const char *dev_name, const char *what)
{
    snprintf(err, err_len, "port %s: preload: %s", dev_name, what);
    return rc;
}

/* One pool per size class that has frames, each exactly as large as its frames. */
static int create_pools(struct tp_preload *pl, const char *dev_name, int socket, char *err,
                        size_t err_len)
{
    for (unsigned c = 0; c < TP_PRELOAD_CLASSES; c++) {
        uint32_t n = pl->plan.class_frames[c];
        if (n == 0)
            continue;
        char name[RTE_MEMPOOL_NAMESIZE];
        snprintf(name, sizeof(name), "tpl%u_%s", c, dev_name);
        unsigned cache = n * 2 / 3 < POOL_CACHE ? n * 2 / 3 : POOL_CACHE;
        uint16_t room = (uint16_t)tp_preload_room(c);
        pl->pools[c] = rte_pktmbuf_pool_create(name, n, cache, 0, room, socket);
        if (pl->pools[c] == NULL) {
            char what[160];
            snprintf(what, sizeof(what), "mbuf pool of %u mbufs of %u bytes: %s", n, room,
                     rte_strerror(rte_errno));
            return fail(err, err_len, -ENOMEM, dev_name, what);
        }
    }
    return 0;
}

/* Copies every frame of f into an mbuf of its class's pool and onto pl->rx, in capture order. */
static int fill(struct tp_preload *pl, const char *dev_name, FILE *f, char *err, size_t err_len)
{
    struct tp_pcap_reader r;
    struct tp_pcap_record rec;
    uint32_t n = 0;
    int st = tp_pcap_reader_open(&r, f, TP_PRELOAD_FRAME_MAX, TP_PRELOAD_FRAMES_MAX);
    while (st == TP_PCAP_OK && n < pl->plan.frames &&
           (st = tp_pcap_reader_next(&r, &rec)) == TP_PCAP_OK) {
        struct rte_mempool *pool = pl->pools[tp_preload_class(rec.caplen)];
        struct rte_mbuf *m = pool != NULL ? rte_pktmbuf_alloc(pool) : NULL;
        char *dst = m != NULL ? rte_pktmbuf_append(m, (uint16_t)rec.caplen) : NULL;
        if (dst == NULL) {
            rte_pktmbuf_free(m);
            break;
        }
        memcpy(dst, rec.data, rec.caplen);
        /* The ring holds exactly the plan's frames: it cannot be full here. */
        rte_ring_enqueue(pl->rx, m);
        n++;
    }
    /* The file changed between the passes: a shorter capture would be replayed silently. */
    int rc = 0;
    if (n != pl->plan.frames) {
        char why[160], what[200];
        snprintf(what, sizeof(what), "the capture changed while being read%s%s", st < 0 ? ": " : "",
                 st < 0 ? tp_pcap_reader_why(&r, why, sizeof(why)) : "");
        rc = fail(err, err_len, -EIO, dev_name, what);
    }
    tp_pcap_reader_close(&r);
    return rc;
}

/* Everything tp_preload_open does once the capture is open; on failure pl holds what was made. */
static int load(struct tp_preload *pl, const char *dev_name, FILE *f, int socket, char *err,
                size_t err_len)
{
    char why[160];
    int rc = tp_preload_plan_scan(&pl->plan, f, why, sizeof(why));
    if (rc != 0)
        return fail(err, err_len, rc == TP_PCAP_EIO ? -EIO : -EINVAL, dev_name, why);
    rc = create_pools(pl, dev_name, socket, err, err_len);
    if (rc != 0)
        return rc;
    char name[RTE_RING_NAMESIZE];
    snprintf(name, sizeof(name), "tpl_r_%s", dev_name);
    pl->rx = rte_ring_create(name, pl->plan.frames, socket,
                             RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
    snprintf(name, sizeof(name), "tpl_t_%s", dev_name);
    pl->tx = rte_ring_create(name, TP_PRELOAD_TX_RING, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (pl->rx == NULL || pl->tx == NULL)
        return fail(err, err_len, -ENOMEM, dev_name, "rings");
    rewind(f);
    rc = fill(pl, dev_name, f, err, err_len);
    if (rc != 0)
        return rc;
    if (rte_eth_from_rings(dev_name + sizeof(ring_prefix) - 1, &pl->rx, 1, &pl->tx, 1,
                           (unsigned)socket) < 0) {
        char what[128];
        snprintf(what, sizeof(what), "net_ring device: %s", rte_strerror(rte_errno));
        return fail(err, err_len, -ENODEV, dev_name, what);
    }
    return 0;
}

int tp_preload_open(struct tp_preload *pl, const char *dev_name, const char *pcap_path, int socket,
                    char *err, size_t err_len)
{
    memset(pl, 0, sizeof(*pl));
    if (strncmp(dev_name, ring_prefix, sizeof(ring_prefix) - 1) != 0)
        return fail(err, err_len, -EINVAL, dev_name, "the device name must start with net_ring_");
    FILE *f = fopen(pcap_path, "rb");
    if (f == NULL) {
        int rc = -errno;
        char what[320];
        snprintf(what, sizeof(what), "%s: %s", pcap_path, strerror(-rc));
        return fail(err, err_len, rc, dev_name, what);
    }
    int rc = load(pl, dev_name, f, socket, err, err_len);
    fclose(f);
    if (rc != 0)
        tp_preload_close(pl);
    return rc;
}

static void drain(struct rte_ring *r)
{
    void *m;
    while (r != NULL && rte_ring_dequeue(r, &m) == 0)
        rte_pktmbuf_free(m);
    rte_ring_free(r); /* NULL-safe */
}

void tp_preload_close(struct tp_preload *pl)
{
    drain(pl->rx);
    drain(pl->tx);
    for (unsigned c = 0; c < TP_PRELOAD_CLASSES; c++)
        rte_mempool_free(pl->pools[c]); /* NULL-safe */
    memset(pl, 0, sizeof(*pl));
}
