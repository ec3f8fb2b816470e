/*
 * A preloaded capture's frames by size class and the memory they take: see preload_plan.h.
 */
#include "preload_plan.h"

#include <string.h>

#include "pcap_reader.h"

uint64_t tp_preload_object_bytes(unsigned c)
{
    uint64_t bytes = TP_PRELOAD_OBJ_HEADER + TP_PRELOAD_MBUF_HEADER + tp_preload_room(c);
    uint64_t lines = (bytes + TP_PRELOAD_LINE - 1) / TP_PRELOAD_LINE;
    return (lines | 1) * TP_PRELOAD_LINE;
}

int tp_preload_plan_scan(struct tp_preload_plan *plan, FILE *f, char *why, size_t why_len)
{
    memset(plan, 0, sizeof(*plan));
    struct tp_pcap_reader r;
    struct tp_pcap_record rec;
    int rc = tp_pcap_reader_open(&r, f, TP_PRELOAD_FRAME_MAX, TP_PRELOAD_FRAMES_MAX);
    while (rc == TP_PCAP_OK && (rc = tp_pcap_reader_next(&r, &rec)) == TP_PCAP_OK) {
        plan->frames++;
        plan->class_frames[tp_preload_class(rec.caplen)]++;
        if (rec.caplen > plan->max_frame)
            plan->max_frame = rec.caplen;
    }
    if (rc != TP_PCAP_END)
        tp_pcap_reader_why(&r, why, why_len);
    tp_pcap_reader_close(&r);
    return rc == TP_PCAP_END ? 0 : rc;
}

uint64_t tp_preload_plan_bytes(const struct tp_preload_plan *plan)
{
    /* A slot in the pool's ring and one in the port's, each ring rounded up to a power of two. */
    const uint64_t ring_bytes = 2 * 2 * TP_PRELOAD_RING_SLOT;
    uint64_t bytes = 0;
    for (unsigned c = 0; c < TP_PRELOAD_CLASSES; c++)
        if (plan->class_frames[c] > 0)
            bytes += TP_PRELOAD_POOL_BYTES +
                     plan->class_frames[c] * (tp_preload_object_bytes(c) + ring_bytes);
    return bytes;
}
