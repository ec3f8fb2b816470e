/* One bus instance: create (writer) or map (readers) its ring, state and counters segments. */
#include "bus.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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
        .heartbeat_timeout_ms = p->heartbeat_timeout_ms,
    };
    return tp_seg_create(seg, &cp, err, err_len);
}

/* The segment part of ring k: "ring", then "ring.1", "ring.2", ... */
static void ring_part(char *out, size_t size, unsigned k)
{
    if (k == 0)
        snprintf(out, size, "ring");
    else
        snprintf(out, size, "ring.%u", k);
}

/* Writer k's counters: "bus.x" for writer 0 (the one-writer names), "bus.ring=<k>.x" after. */
static int register_writer_counters(struct tp_bus_writer *w, unsigned k)
{
    static const char *const names[] = {"published", "published_bytes", "skipped_no_interest",
                                        "refused_too_large"};
    struct tp_counter **slots[] = {&w->stats.published, &w->stats.published_bytes,
                                   &w->stats.no_interest, &w->stats.too_large};
    for (unsigned i = 0; i < 4; i++) {
        char name[TP_COUNTER_NAME_LEN];
        if (k == 0)
            snprintf(name, sizeof(name), "bus.%s", names[i]);
        else
            snprintf(name, sizeof(name), "bus.ring=%u.%s", k, names[i]);
        *slots[i] = tp_counters_register(w->counters, name);
        if (*slots[i] == NULL)
            return -ENOSPC;
    }
    return 0;
}

static void close_writers(struct tp_bus_writer *ws, unsigned n)
{
    while (n-- > 0)
        tp_bus_writer_close(&ws[n], 1);
}

int tp_bus_writers_open(struct tp_bus_writer *ws, unsigned n, const struct tp_bus_params *p,
                        char *err, size_t err_len)
{
    if (n == 0 || n > TP_BUS_MAX_RINGS) {
        snprintf(err, err_len, "bus: %u writers (1..%u)", n, TP_BUS_MAX_RINGS);
        return -EINVAL;
    }
    memset(ws, 0, n * sizeof(*ws));
    struct tp_ring_params rp = {.capacity = p->ring_bytes, .max_record = p->max_record};
    struct tp_state_params sp = {.instruments = p->instruments, .depth = p->depth};
    size_t ring_size = tp_ring_memsize(&rp);
    size_t state_size = tp_state_memsize(&sp);
    size_t counters_size = tp_counters_memsize(p->counters);
    if (ring_size == 0 || state_size == 0 || p->counters < 4 * n + 4) {
        snprintf(err, err_len,
                 "bus: invalid sizes (ring %llu bytes must be a power of two >= %u, "
                 "max_record <= ring/8, depth 1..%u, counters >= 4 per writer + 4)",
                 (unsigned long long)p->ring_bytes, TP_RING_MIN_CAPACITY, TP_MAX_DEPTH);
        return -EINVAL;
    }
    struct tp_bus_writer *w0 = &ws[0];
    uint64_t state_params[TP_SEG_PARAMS] = {p->instruments, p->depth};
    uint64_t counter_params[TP_SEG_PARAMS] = {p->counters};
    int rc = make_segment(&w0->state_seg, p, TP_SEG_STATE, "state", state_size, state_params, err,
                          err_len);
    if (rc == 0)
        rc = make_segment(&w0->counters_seg, p, TP_SEG_COUNTERS, "counters", counters_size,
                          counter_params, err, err_len);
    if (rc == 0) {
        tp_state_init(w0->state_seg.data, &sp);
        tp_counters_init(w0->counters_seg.data, p->counters);
    }
    for (unsigned k = 0; rc == 0 && k < n; k++) {
        struct tp_bus_writer *w = &ws[k];
        w->interest = malloc(p->instruments);
        if (w->interest == NULL) {
            rc = -ENOMEM;
            break;
        }
        memset(w->interest, 1, p->instruments);
        w->instruments = p->instruments;
        uint64_t ring_params[TP_SEG_PARAMS] = {p->ring_bytes, p->max_record, n, k,
                                               w0->state_seg.hdr->writer_epoch};
        char part[16];
        ring_part(part, sizeof(part), k);
        rc = make_segment(&w->ring_seg, p, TP_SEG_RING, part, ring_size, ring_params, err, err_len);
        if (rc != 0)
            break;
        tp_ring_init(w->ring_seg.data, &rp);
        tp_ring_writer_init(&w->ring, w->ring_seg.data);
        w->flushed_sequence = w->ring.next_sequence;
        w->flushed_bytes = w->ring.tail - w->ring.padded;
        w->state = w0->state_seg.data;
        w->counters = w0->counters_seg.data;
        rc = register_writer_counters(w, k);
        if (rc != 0)
            snprintf(err, err_len, "bus: the counters segment is too small");
    }
    /* Counters and state first, ring 0 last: a reader that finds ring 0 finds the rest too. */
    if (rc == 0)
        rc = tp_seg_publish(&w0->counters_seg, err, err_len);
    if (rc == 0)
        rc = tp_seg_publish(&w0->state_seg, err, err_len);
    for (unsigned k = n; rc == 0 && k-- > 0;)
        rc = tp_seg_publish(&ws[k].ring_seg, err, err_len);
    if (rc != 0)
        close_writers(ws, n);
    return rc;
}

uint64_t tp_bus_footprint(const struct tp_bus_params *p, unsigned n, uint64_t block)
{
    struct tp_ring_params rp = {.capacity = p->ring_bytes, .max_record = p->max_record};
    struct tp_state_params sp = {.instruments = p->instruments, .depth = p->depth};
    size_t ring = tp_ring_memsize(&rp), state = tp_state_memsize(&sp);
    size_t counters = tp_counters_memsize(p->counters);
    if (ring == 0 || state == 0 || counters == 0 || n == 0 || block == 0)
        return 0;
    return n * tp_seg_file_size(ring, block) + tp_seg_file_size(state, block) +
           tp_seg_file_size(counters, block);
}

int tp_bus_writer_open(struct tp_bus_writer *w, const struct tp_bus_params *p, char *err,
                       size_t err_len)
{
    return tp_bus_writers_open(w, 1, p, err, err_len);
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
    w->state = NULL;
    w->counters = NULL;
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

/* Whether the reader segment at path belongs to a reader that is gone (see tp_bus_sweep_readers);
 * its identity in *st. */
static int reader_gone(const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct tp_seg_header h;
    int gone = 0;
    if (fstat(fd, st) == 0 && S_ISREG(st->st_mode) && pread(fd, &h, sizeof(h), 0) == sizeof(h) &&
        h.magic == TP_SEG_MAGIC && h.kind == TP_SEG_COUNTERS) {
        uint64_t own_ns = tp_seg_pid_namespace();
        if (atomic_load(&h.state) == TP_SEG_STATE_CLOSED)
            gone = 1;
        else if (h.writer_pid_ns == own_ns && own_ns != 0)
            gone = kill((pid_t)h.writer_pid, 0) != 0 && errno == ESRCH;
    }
    close(fd);
    return gone;
}

unsigned tp_bus_sweep_readers(const char *dir, const char *instance)
{
    char prefix[128];
    int n = snprintf(prefix, sizeof(prefix), "tickplane.%s.reader.", instance);
    DIR *d = opendir(dir_or_default(dir));
    if (d == NULL || n < 0 || (size_t)n >= sizeof(prefix)) {
        if (d != NULL)
            closedir(d);
        return 0;
    }
    unsigned removed = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        const char *pid = e->d_name + n;
        if (strncmp(e->d_name, prefix, (size_t)n) != 0 || *pid == '\0' ||
            strspn(pid, "0123456789") != strlen(pid))
            continue; /* another file, or a reader's temporary one */
        char path[512];
        struct stat st, now;
        snprintf(path, sizeof(path), "%s/%s", dir_or_default(dir), e->d_name);
        /* Removed only if the name still is the file found gone (a new reader may reuse it). */
        if (reader_gone(path, &st) && lstat(path, &now) == 0 && now.st_ino == st.st_ino &&
            now.st_dev == st.st_dev && unlink(path) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

/* Attaches one segment of the instance. 0 or -errno with err. */
static int attach_part(struct tp_seg *seg, const char *dir, const char *instance, const char *part,
                       uint32_t kind, char *err, size_t err_len)
{
    char path[256];
    int rc = tp_seg_path(path, sizeof(path), dir_or_default(dir), instance, part);
    if (rc != 0) {
        snprintf(err, err_len, "bus: bad directory or instance name '%s'", instance);
        return rc;
    }
    return tp_seg_attach(seg, path, kind, err, err_len);
}

/* Whether ring k's header says it is ring k of n_rings of the run whose state segment r maps. */
static int ring_of_this_run(const struct tp_bus_reader *r, unsigned k)
{
    const struct tp_seg_header *h = tp_bus_reader_ring_seg(r, k)->hdr;
    uint64_t rings = h->params[TP_BUS_RING_PARAM_RINGS];
    return (rings == 0 ? 1 : rings) == r->n_rings && h->params[TP_BUS_RING_PARAM_INDEX] == k &&
           h->params[TP_BUS_RING_PARAM_STATE_EPOCH] == r->state_seg.hdr->writer_epoch;
}

int tp_bus_reader_open(struct tp_bus_reader *r, const char *dir, const char *instance, char *err,
                       size_t err_len)
{
    memset(r, 0, sizeof(*r));
    r->n_rings = 1;
    int rc = attach_part(&r->ring_seg, dir, instance, "ring", TP_SEG_RING, err, err_len);
    if (rc == 0)
        rc = attach_part(&r->state_seg, dir, instance, "state", TP_SEG_STATE, err, err_len);
    if (rc == 0)
        rc =
            attach_part(&r->counters_seg, dir, instance, "counters", TP_SEG_COUNTERS, err, err_len);
    if (rc != 0) {
        tp_bus_reader_close(r);
        return rc;
    }
    uint64_t rings = r->ring_seg.hdr->params[TP_BUS_RING_PARAM_RINGS];
    if (rings > TP_BUS_MAX_RINGS) {
        snprintf(err, err_len, "bus: instance '%s' has %llu rings, this library reads %u", instance,
                 (unsigned long long)rings, TP_BUS_MAX_RINGS);
        tp_bus_reader_close(r);
        return -EPROTONOSUPPORT;
    }
    r->n_rings = rings > 1 ? (unsigned)rings : 1;
    for (unsigned k = 1; rc == 0 && k < r->n_rings; k++) {
        char part[16];
        ring_part(part, sizeof(part), k);
        rc = attach_part(&r->more_ring_segs[k - 1], dir, instance, part, TP_SEG_RING, err, err_len);
    }
    for (unsigned k = 0; rc == 0 && k < r->n_rings; k++) {
        if (tp_ring_validate(tp_bus_reader_ring_seg(r, k)->data,
                             tp_bus_reader_ring_seg(r, k)->hdr->data_size) != 0) {
            snprintf(err, err_len, "bus: instance '%s' has inconsistent segment contents",
                     instance);
            rc = -EINVAL;
        } else if (!ring_of_this_run(r, k)) {
            /* Found between a restarting writer's segments: attach again. */
            snprintf(err, err_len, "bus: instance '%s': ring %u is not of the running writer",
                     instance, k);
            rc = -ESTALE;
        }
    }
    if (rc == 0 &&
        (tp_state_validate(r->state_seg.data, r->state_seg.hdr->data_size) != 0 ||
         tp_counters_validate(r->counters_seg.data, r->counters_seg.hdr->data_size) != 0)) {
        snprintf(err, err_len, "bus: instance '%s' has inconsistent segment contents", instance);
        rc = -EINVAL;
    }
    if (rc != 0) {
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
    for (unsigned k = 1; k < TP_BUS_MAX_RINGS; k++)
        tp_seg_close(&r->more_ring_segs[k - 1]);
    tp_seg_close(&r->state_seg);
    tp_seg_close(&r->counters_seg);
    r->state = NULL;
    r->counters = NULL;
    r->ring_mem = NULL;
}

const struct tp_seg *tp_bus_reader_ring_seg(const struct tp_bus_reader *r, unsigned k)
{
    return k == 0 ? &r->ring_seg : &r->more_ring_segs[k - 1];
}

const void *tp_bus_reader_ring(const struct tp_bus_reader *r, unsigned k)
{
    return k < r->n_rings ? tp_bus_reader_ring_seg(r, k)->data : NULL;
}

int tp_bus_reader_stale(const struct tp_bus_reader *r)
{
    for (unsigned k = 0; k < r->n_rings; k++)
        if (tp_seg_writer_gone(tp_bus_reader_ring_seg(r, k)))
            return 1;
    return tp_seg_writer_gone(&r->state_seg);
}
