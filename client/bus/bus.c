/* One bus instance: create (writer) or map (readers) its ring, state and counters segments. */
#include "bus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *dir_or_default(const char *dir)
{
    return dir != NULL ? dir : TP_BUS_DEFAULT_DIR;
}

/* Create one segment of data_size bytes, let init() fill it, and publish it. */
static int make_segment(struct tp_seg *seg, const struct tp_bus_params *p, uint32_t kind,
                        const char *part, size_t data_size, const uint64_t *params, char *err,
                        size_t err_len)
{
    char path[256];
    int rc = tp_seg_path(path, sizeof(path), dir_or_default(p->dir), p->instance, part);
    if (rc != 0) {
        snprintf(err, err_len, "bus: bad directory or instance name '%s'", p->instance);
        return rc;
    }
    struct tp_seg_create_params cp = {
        .path = path,
        .instance = p->instance,
        .kind = kind,
        .data_size = data_size,
        .mode = p->mode,
        .gid = p->gid,
        .params = params,
    };
    return tp_seg_create(seg, &cp, err, err_len);
}

int tp_bus_writer_open(struct tp_bus_writer *w, const struct tp_bus_params *p, char *err,
                       size_t err_len)
{
    memset(w, 0, sizeof(*w));
    struct tp_ring_params rp = {.capacity = p->ring_bytes, .max_record = p->max_record};
    struct tp_state_params sp = {.instruments = p->instruments, .depth = p->depth};
    size_t ring_size = tp_ring_memsize(&rp);
    size_t state_size = tp_state_memsize(&sp);
    size_t counters_size = tp_counters_memsize(p->counters);
    if (ring_size == 0 || state_size == 0 || p->counters < 8) {
        snprintf(err, err_len,
                 "bus: invalid sizes (ring %llu bytes must be a power of two >= %u, "
                 "max_record <= ring/8, depth 1..%u, counters >= 8)",
                 (unsigned long long)p->ring_bytes, TP_RING_MIN_CAPACITY, TP_MAX_DEPTH);
        return -EINVAL;
    }
    w->interest = malloc(p->instruments);
    if (w->interest == NULL)
        return -ENOMEM;
    memset(w->interest, 1, p->instruments);
    w->instruments = p->instruments;

    uint64_t ring_params[TP_SEG_PARAMS] = {p->ring_bytes, p->max_record};
    uint64_t state_params[TP_SEG_PARAMS] = {p->instruments, p->depth};
    uint64_t counter_params[TP_SEG_PARAMS] = {p->counters};
    int rc =
        make_segment(&w->ring_seg, p, TP_SEG_RING, "ring", ring_size, ring_params, err, err_len);
    if (rc == 0)
        rc = make_segment(&w->state_seg, p, TP_SEG_STATE, "state", state_size, state_params, err,
                          err_len);
    if (rc == 0)
        rc = make_segment(&w->counters_seg, p, TP_SEG_COUNTERS, "counters", counters_size,
                          counter_params, err, err_len);
    if (rc != 0) {
        tp_bus_writer_close(w, 1);
        return rc;
    }
    tp_ring_init(w->ring_seg.data, &rp);
    tp_ring_writer_init(&w->ring, w->ring_seg.data);
    tp_state_init(w->state_seg.data, &sp);
    w->state = w->state_seg.data;
    tp_counters_init(w->counters_seg.data, p->counters);
    w->counters = w->counters_seg.data;
    w->stats.published = tp_counters_register(w->counters, "bus.published");
    w->stats.published_bytes = tp_counters_register(w->counters, "bus.published_bytes");
    w->stats.no_interest = tp_counters_register(w->counters, "bus.skipped_no_interest");
    w->stats.too_large = tp_counters_register(w->counters, "bus.refused_too_large");

    /* Counters and state first: a reader that finds the ring finds the rest too. */
    rc = tp_seg_publish(&w->counters_seg, err, err_len);
    if (rc == 0)
        rc = tp_seg_publish(&w->state_seg, err, err_len);
    if (rc == 0)
        rc = tp_seg_publish(&w->ring_seg, err, err_len);
    if (rc != 0)
        tp_bus_writer_close(w, 1);
    return rc;
}

void tp_bus_writer_close(struct tp_bus_writer *w, int unlink_files)
{
    struct tp_seg *segs[] = {&w->ring_seg, &w->state_seg, &w->counters_seg};
    for (size_t i = 0; i < sizeof(segs) / sizeof(segs[0]); i++) {
        if (segs[i]->hdr == NULL)
            continue;
        if (unlink_files)
            tp_seg_unlink(segs[i]);
        tp_seg_close(segs[i]);
    }
    free(w->interest);
    w->interest = NULL;
    w->instruments = 0;
}

void tp_bus_set_interest(struct tp_bus_writer *w, uint32_t id, int interested)
{
    if (id < w->instruments)
        w->interest[id] = interested != 0;
}

void tp_bus_set_interest_all(struct tp_bus_writer *w, int interested)
{
    memset(w->interest, interested != 0, w->instruments);
}

void *tp_bus_claim_refused(struct tp_bus_writer *w, uint32_t id)
{
    tp_counter_add(tp_bus_wants(w, id) ? w->stats.too_large : w->stats.no_interest, 1);
    return NULL;
}

uint64_t tp_bus_publish(struct tp_bus_writer *w, uint16_t type, uint16_t topic, uint32_t id,
                        uint32_t flags, const void *payload, uint32_t payload_len)
{
    void *dst = tp_bus_claim(w, id, payload_len);
    if (dst == NULL)
        return 0;
    memcpy(dst, payload, payload_len);
    return tp_bus_commit(w, type, topic, id, flags);
}

int tp_bus_reader_open(struct tp_bus_reader *r, const char *dir, const char *instance, char *err,
                       size_t err_len)
{
    memset(r, 0, sizeof(*r));
    char path[256];
    const char *parts[] = {"ring", "state", "counters"};
    struct tp_seg *segs[] = {&r->ring_seg, &r->state_seg, &r->counters_seg};
    uint32_t kinds[] = {TP_SEG_RING, TP_SEG_STATE, TP_SEG_COUNTERS};
    for (size_t i = 0; i < 3; i++) {
        int rc = tp_seg_path(path, sizeof(path), dir_or_default(dir), instance, parts[i]);
        if (rc == 0)
            rc = tp_seg_attach(segs[i], path, kinds[i], err, err_len);
        else
            snprintf(err, err_len, "bus: bad directory or instance name '%s'", instance);
        if (rc != 0) {
            tp_bus_reader_close(r);
            return rc;
        }
    }
    int rc = 0;
    if (tp_ring_validate(r->ring_seg.data, r->ring_seg.hdr->data_size) != 0)
        rc = -EINVAL;
    else if (tp_state_validate(r->state_seg.data, r->state_seg.hdr->data_size) != 0)
        rc = -EINVAL;
    else if (tp_counters_validate(r->counters_seg.data, r->counters_seg.hdr->data_size) != 0)
        rc = -EINVAL;
    if (rc != 0) {
        snprintf(err, err_len, "bus: instance '%s' has inconsistent segment contents", instance);
        tp_bus_reader_close(r);
        return rc;
    }
    r->ring_mem = r->ring_seg.data;
    r->state = r->state_seg.data;
    r->counters = r->counters_seg.data;
    return 0;
}

void tp_bus_reader_close(struct tp_bus_reader *r)
{
    tp_seg_close(&r->ring_seg);
    tp_seg_close(&r->state_seg);
    tp_seg_close(&r->counters_seg);
    r->state = NULL;
    r->counters = NULL;
    r->ring_mem = NULL;
}

int tp_bus_reader_stale(const struct tp_bus_reader *r)
{
    return tp_seg_writer_gone(&r->ring_seg) || tp_seg_writer_gone(&r->state_seg);
}
