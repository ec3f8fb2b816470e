/*
 * A capture preloaded into mbufs behind a net_ring port: see preload.h. Two passes over the
 * capture: the first sizes the pools (frames per size class), the second fills them.
 */
#include "preload.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

/* Per-lcore mempool cache: the data lcore frees every frame it received into one. */
#define POOL_CACHE 256

static int fail(char *err, size_t err_len, int rc, const char *dev_name, const char *what)
{
    snprintf(err, err_len, "port %s: preload: %s", dev_name, what);
    return rc;
}

/* The size class of a frame of `bytes`: its data room is (class + 1) * TP_PRELOAD_ROOM_STEP. */
static unsigned room_class(uint32_t bytes)
{
    return (RTE_PKTMBUF_HEADROOM + bytes - 1) / TP_PRELOAD_ROOM_STEP;
}

/* Frames of the capture, per size class and the largest; 0 or -errno with err filled. */
static int scan(struct tp_preload *pl, const char *dev_name, const char *pcap_path, char *err,
                size_t err_len)
{
    char perr[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline(pcap_path, perr);
    if (p == NULL)
        return fail(err, err_len, -EINVAL, dev_name, perr);
    struct pcap_pkthdr *h;
    const u_char *data;
    int rc;
    while ((rc = pcap_next_ex(p, &h, &data)) == 1) {
        if (room_class(h->caplen) >= TP_PRELOAD_CLASSES) {
            pcap_close(p);
            return fail(err, err_len, -EINVAL, dev_name, "a frame is larger than an mbuf holds");
        }
        pl->frames++;
        pl->class_frames[room_class(h->caplen)]++;
        if (h->caplen > pl->max_frame)
            pl->max_frame = h->caplen;
    }
    pcap_close(p);
    if (rc == PCAP_ERROR)
        return fail(err, err_len, -EIO, dev_name, "the capture is truncated or unreadable");
    if (pl->frames == 0)
        return fail(err, err_len, -EINVAL, dev_name, "the capture has no frames");
    return 0;
}

/* One pool per size class that has frames, each exactly as large as its frames. */
static int create_pools(struct tp_preload *pl, const char *dev_name, int socket, char *err,
                        size_t err_len)
{
    for (unsigned c = 0; c < TP_PRELOAD_CLASSES; c++) {
        uint32_t n = pl->class_frames[c];
        if (n == 0)
            continue;
        char name[RTE_MEMPOOL_NAMESIZE];
        snprintf(name, sizeof(name), "tpl%u_%s", c, dev_name);
        unsigned cache = n * 2 / 3 < POOL_CACHE ? n * 2 / 3 : POOL_CACHE;
        uint16_t room = (uint16_t)((c + 1) * TP_PRELOAD_ROOM_STEP);
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

/* Copies every frame into an mbuf of its class's pool and onto pl->rx, in capture order. */
static int fill(struct tp_preload *pl, const char *dev_name, const char *pcap_path, char *err,
                size_t err_len)
{
    char perr[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline(pcap_path, perr);
    if (p == NULL)
        return fail(err, err_len, -EIO, dev_name, perr);
    struct pcap_pkthdr *h;
    const u_char *data;
    uint32_t n = 0;
    int rc = 0;
    while (n < pl->frames && pcap_next_ex(p, &h, &data) == 1) {
        unsigned c = room_class(h->caplen);
        struct rte_mbuf *m =
            c < TP_PRELOAD_CLASSES && pl->pools[c] != NULL ? rte_pktmbuf_alloc(pl->pools[c]) : NULL;
        char *dst = m != NULL ? rte_pktmbuf_append(m, (uint16_t)h->caplen) : NULL;
        if (dst == NULL) {
            rte_pktmbuf_free(m);
            rc = fail(err, err_len, -EIO, dev_name, "the capture changed while being read");
            break;
        }
        memcpy(dst, data, h->caplen);
        /* The ring holds exactly pl->frames: it cannot be full here. */
        rte_ring_enqueue(pl->rx, m);
        n++;
    }
    pcap_close(p);
    /* The file changed between the passes: a shorter capture would be replayed silently. */
    if (rc == 0 && n != pl->frames)
        rc = fail(err, err_len, -EIO, dev_name, "the capture changed while being read");
    return rc;
}

int tp_preload_open(struct tp_preload *pl, const char *dev_name, const char *pcap_path, int socket,
                    char *err, size_t err_len)
{
    memset(pl, 0, sizeof(*pl));
    /* rte_eth_from_rings names the device it creates "net_ring_<name>". */
    static const char prefix[] = "net_ring_";
    if (strncmp(dev_name, prefix, sizeof(prefix) - 1) != 0)
        return fail(err, err_len, -EINVAL, dev_name, "the device name must start with net_ring_");
    int rc = scan(pl, dev_name, pcap_path, err, err_len);
    if (rc == 0)
        rc = create_pools(pl, dev_name, socket, err, err_len);
    if (rc != 0)
        goto failed;
    char name[RTE_RING_NAMESIZE];
    snprintf(name, sizeof(name), "tpl_r_%s", dev_name);
    pl->rx =
        rte_ring_create(name, pl->frames, socket, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
    snprintf(name, sizeof(name), "tpl_t_%s", dev_name);
    pl->tx = rte_ring_create(name, TP_PRELOAD_TX_RING, socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (pl->rx == NULL || pl->tx == NULL) {
        rc = fail(err, err_len, -ENOMEM, dev_name, "rings");
        goto failed;
    }
    rc = fill(pl, dev_name, pcap_path, err, err_len);
    if (rc != 0)
        goto failed;
    if (rte_eth_from_rings(dev_name + sizeof(prefix) - 1, &pl->rx, 1, &pl->tx, 1,
                           (unsigned)socket) < 0) {
        char what[128];
        snprintf(what, sizeof(what), "net_ring device: %s", rte_strerror(rte_errno));
        rc = fail(err, err_len, -ENODEV, dev_name, what);
        goto failed;
    }
    return 0;

failed:
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
