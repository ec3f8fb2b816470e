/*
 * preload_plan.h - a preloaded port's capture in memory: the one sizing rule behind both
 * control/config's memory estimate (before EAL starts, held against eal.memory_mb) and the pools
 * dataplane/ports/preload.c creates. No DPDK and no libpcap here: control/ is built into fuzz
 * targets.
 *
 * Promises:
 *  - tp_preload_plan_scan reads a capture with codecs/net's pcap_reader and counts its frames by
 *    size class (tp_preload_class). preload.c creates one pool per class that has frames, of
 *    class_frames[c] mbufs of data room tp_preload_room(c), from the same plan: the estimate
 *    counts the pools and mbufs that are created, by construction.
 *  - tp_preload_plan_bytes is what those pools, their mbufs and the port's ring take: per frame a
 *    mempool object (tp_preload_object_bytes) and a slot in its pool's ring and in the port's
 *    ring, each ring at most twice its count (a power of two); per pool TP_PRELOAD_POOL_BYTES.
 *  - The DPDK figures the rule stands on are constants here. preload.c fails to compile when they
 *    are not DPDK's, and tests/dataplane/test_preload_plan.c holds tp_preload_object_bytes to
 *    rte_mempool_calc_obj_size, so a DPDK that lays mbufs out differently fails the build or the
 *    tests instead of being misestimated.
 */
#ifndef TP_PRELOAD_PLAN_H
#define TP_PRELOAD_PLAN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* DPDK's, as preload.c checks: RTE_PKTMBUF_HEADROOM, sizeof(struct rte_mbuf), RTE_MEMPOOL_ALIGN
 * (a cache line), struct rte_mempool_objhdr rounded up to it, a ring slot (a pointer). */
#define TP_PRELOAD_HEADROOM    128
#define TP_PRELOAD_MBUF_HEADER 128
#define TP_PRELOAD_LINE        64
#define TP_PRELOAD_OBJ_HEADER  64
#define TP_PRELOAD_RING_SLOT   8
/* A pool's own memory beside its objects: the mempool header with its per-lcore caches (about
 * 1 MiB with RTE_MAX_LCORE 128, checked in preload.c) and the memzone's rounding. */
#define TP_PRELOAD_POOL_BYTES (2u << 20)

/* Data rooms (headroom + frame) are multiples of this. */
#define TP_PRELOAD_ROOM_STEP 128
/* The largest frame and the most frames a capture may have. */
#define TP_PRELOAD_FRAME_MAX  65000
#define TP_PRELOAD_FRAMES_MAX 16777216

/* The size class of a frame of `bytes`: the smallest data room that holds the headroom and it. */
static inline unsigned tp_preload_class(uint32_t bytes)
{
    return (TP_PRELOAD_HEADROOM + bytes - 1) / TP_PRELOAD_ROOM_STEP;
}

/* Size classes up to the largest frame's. */
#define TP_PRELOAD_CLASSES                                                                         \
    ((TP_PRELOAD_HEADROOM + TP_PRELOAD_FRAME_MAX - 1) / TP_PRELOAD_ROOM_STEP + 1)

/* The data room of class c's mbufs, headroom included (rte_pktmbuf_pool_create's data_room). */
static inline uint32_t tp_preload_room(unsigned c)
{
    return (c + 1) * TP_PRELOAD_ROOM_STEP;
}

/*
 * The bytes of one of class c's mempool objects: its header, the mbuf header and the data room,
 * which the mempool makes an odd number of cache lines (it spreads objects over the default 4
 * memory channels).
 */
uint64_t tp_preload_object_bytes(unsigned c);

struct tp_preload_plan {
    uint32_t frames;
    uint32_t max_frame; /* bytes of the largest */
    uint32_t class_frames[TP_PRELOAD_CLASSES];
};

/*
 * Counts the frames of the classic pcap file f (from its start) by class, at most
 * TP_PRELOAD_FRAMES_MAX of at most TP_PRELOAD_FRAME_MAX bytes. 0, or a refusal of pcap_reader.h
 * (enum tp_pcap_status) with why the capture cannot be preloaded in why.
 */
int tp_preload_plan_scan(struct tp_preload_plan *plan, FILE *f, char *why, size_t why_len);

/* The memory the plan's pools, mbufs and ring take (see the promises above). */
uint64_t tp_preload_plan_bytes(const struct tp_preload_plan *plan);

#endif /* TP_PRELOAD_PLAN_H */
