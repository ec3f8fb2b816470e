/* Fault injector: per-line faults on the incremental stream, recorded; time-ordered output. */
#include "faults.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[TP_SIM_F_KINDS] = {"lost",       "both_lost",    "reordered",
                                                       "duplicated", "truncated",    "corrupted",
                                                       "heartbeat",  "snapshot_lost"};

int tp_sim_faults_init(struct tp_sim_faults *f, const struct tp_sim_fault_params *p,
                       const struct tp_sim_packet_sink *sink)
{
    memset(f, 0, sizeof(*f));
    f->params = *p;
    f->sink = *sink;
    /* Independent streams per line, derived from the seed but distinct from the model's. */
    tp_sim_rng_seed(&f->both_rng, p->seed ^ 0xb0b0b0b0b0b0b0b0ULL);
    for (int l = 0; l < TP_SIM_LINES; l++) {
        tp_sim_rng_seed(&f->line[l].rng, p->seed ^ (0xa11ce5a11ce50000ULL + (uint64_t)l));
        tp_sim_rng_seed(&f->line[l].snapshot_rng, p->seed ^ (0x5a95a95a95a90000ULL + (uint64_t)l));
        f->line[l].joined = p->line[l].late_join == 0;
    }
    return 0;
}

static void record(struct tp_sim_line_state *st, int kind, const struct tp_sim_packet *p,
                   uint32_t detail)
{
    struct tp_sim_fault_list *list = &st->faults[kind];
    if (list->n == list->cap) {
        size_t cap = list->cap ? list->cap * 2 : 64;
        struct tp_sim_fault_record *items = realloc(list->items, cap * sizeof(*items));
        if (items == NULL)
            return; /* the report would be incomplete; counted via sent/source anyway */
        list->items = items;
        list->cap = cap;
    }
    list->items[list->n++] = (struct tp_sim_fault_record){
        .index = p->index, .seq = p->seq, .count = p->count, .detail = detail};
}

/* Heap of pending output packets ordered by (time, serial): serial keeps ties in send order. */
static int heap_less(const struct tp_sim_faults *f, size_t a, size_t b)
{
    const struct tp_sim_packet *x = f->heap[a], *y = f->heap[b];
    if (x->time_ns != y->time_ns)
        return x->time_ns < y->time_ns;
    return f->heap_serial[a] < f->heap_serial[b];
}

static void heap_swap(struct tp_sim_faults *f, size_t a, size_t b)
{
    struct tp_sim_packet *p = f->heap[a];
    uint64_t s = f->heap_serial[a];
    f->heap[a] = f->heap[b];
    f->heap_serial[a] = f->heap_serial[b];
    f->heap[b] = p;
    f->heap_serial[b] = s;
}

static int emit(struct tp_sim_faults *f, const struct tp_sim_packet *p)
{
    if (f->heap_n == f->heap_cap) {
        size_t cap = f->heap_cap ? f->heap_cap * 2 : 64;
        struct tp_sim_packet **heap = realloc(f->heap, cap * sizeof(*heap));
        if (heap != NULL)
            f->heap = heap;
        uint64_t *serial = realloc(f->heap_serial, cap * sizeof(*serial));
        if (serial != NULL)
            f->heap_serial = serial;
        if (heap == NULL || serial == NULL)
            return -ENOMEM;
        f->heap_cap = cap;
    }
    struct tp_sim_packet *copy = malloc(sizeof(*copy));
    if (copy == NULL)
        return -ENOMEM;
    memcpy(copy, p, offsetof(struct tp_sim_packet, data) + p->len);
    size_t i = f->heap_n++;
    f->heap[i] = copy;
    f->heap_serial[i] = f->serial++;
    while (i > 0 && heap_less(f, i, (i - 1) / 2)) {
        heap_swap(f, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    if (p->stream == TP_SIM_STREAM_INCREMENTAL)
        f->line[p->line].sent++;
    return 0;
}

/* Sends every pending packet at or before t (no later input can precede them). */
static int flush_until(struct tp_sim_faults *f, uint64_t t)
{
    while (f->heap_n > 0 && f->heap[0]->time_ns <= t) {
        struct tp_sim_packet *p = f->heap[0];
        f->heap_n--;
        if (f->heap_n > 0) {
            f->heap[0] = f->heap[f->heap_n];
            f->heap_serial[0] = f->heap_serial[f->heap_n];
            size_t i = 0;
            for (;;) {
                size_t l = 2 * i + 1, r = l + 1, m = i;
                if (l < f->heap_n && heap_less(f, l, m))
                    m = l;
                if (r < f->heap_n && heap_less(f, r, m))
                    m = r;
                if (m == i)
                    break;
                heap_swap(f, i, m);
                i = m;
            }
        }
        int rc = f->sink.packet(f->sink.ctx, p);
        free(p);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static int line_packet(struct tp_sim_faults *f, int l, const struct tp_sim_packet *src,
                       int both_lost, struct tp_sim_packet *copy)
{
    const struct tp_sim_line_faults *lf = &f->params.line[l];
    struct tp_sim_line_state *st = &f->line[l];
    struct tp_sim_rng *rng = &st->rng;
    if (!lf->enabled)
        return 0;
    memcpy(copy, src, offsetof(struct tp_sim_packet, data) + src->len);
    copy->line = (uint8_t)l;
    copy->corrupt_xor = 0;
    copy->time_ns += lf->delay_ns;
    if (src->stream == TP_SIM_STREAM_SNAPSHOT && st->joined && lf->snapshot_loss > 0 &&
        tp_sim_rng_chance(&st->snapshot_rng, lf->snapshot_loss)) {
        record(st, TP_SIM_F_SNAPSHOT_LOST, src, 0);
        return 0;
    }
    if (src->stream != TP_SIM_STREAM_INCREMENTAL)
        return st->joined ? emit(f, copy) : 0;

    st->source++;
    if (!st->joined) {
        if (src->index < lf->late_join)
            return 0;
        st->joined = 1;
    }
    if (st->joined_at_seq == 0)
        st->joined_at_seq = src->seq; /* sequence numbers start at 1 */
    if (both_lost) {
        record(st, TP_SIM_F_BOTH_LOST, src, 0);
        return 0;
    }
    if (st->burst_left > 0) {
        st->burst_left--;
        record(st, TP_SIM_F_LOST, src, 0);
        return 0;
    }
    if (tp_sim_rng_chance(rng, lf->burst)) {
        st->burst_left = lf->burst_len > 0 ? lf->burst_len - 1 : 0;
        record(st, TP_SIM_F_LOST, src, 0);
        return 0;
    }
    if (tp_sim_rng_chance(rng, lf->loss)) {
        record(st, TP_SIM_F_LOST, src, 0);
        return 0;
    }
    if (src->count > 0 && src->index >= lf->heartbeat_from && src->index < lf->heartbeat_to &&
        f->params.heartbeat != NULL) {
        copy->len = f->params.heartbeat(src, copy->data);
        copy->count = 0;
        record(st, TP_SIM_F_HEARTBEAT, src, 0);
    } else {
        if (copy->len > 1 && tp_sim_rng_chance(rng, lf->truncate)) {
            copy->len = (uint16_t)(1 + tp_sim_rng_below(rng, copy->len - 1u));
            record(st, TP_SIM_F_TRUNCATED, src, copy->len);
        }
        if (copy->len > 0 && tp_sim_rng_chance(rng, lf->corrupt)) {
            uint32_t offset = (uint32_t)tp_sim_rng_below(rng, copy->len);
            copy->corrupt_at = (uint16_t)offset;
            copy->corrupt_xor = (uint8_t)(1 + tp_sim_rng_below(rng, 255));
            copy->data[offset] ^= copy->corrupt_xor;
            record(st, TP_SIM_F_CORRUPTED, src, offset);
        }
    }
    if (st->held == NULL && tp_sim_rng_chance(rng, lf->reorder)) {
        st->held = malloc(sizeof(*st->held));
        if (st->held == NULL)
            return -ENOMEM;
        memcpy(st->held, copy, sizeof(*copy));
        record(st, TP_SIM_F_REORDERED, src, 0);
        return 0;
    }
    int rc = emit(f, copy);
    if (rc == 0 && st->held != NULL) {
        /* The held packet goes right after its successor. */
        if (st->held->time_ns <= copy->time_ns)
            st->held->time_ns = copy->time_ns + 1;
        rc = emit(f, st->held);
        free(st->held);
        st->held = NULL;
    }
    if (rc == 0 && tp_sim_rng_chance(rng, lf->duplicate)) {
        copy->time_ns += 100;
        record(st, TP_SIM_F_DUPLICATED, src, 0);
        rc = emit(f, copy);
    }
    return rc;
}

int tp_sim_faults_packet(struct tp_sim_faults *f, const struct tp_sim_packet *src)
{
    int both_lost = src->stream == TP_SIM_STREAM_INCREMENTAL &&
                    tp_sim_rng_chance(&f->both_rng, f->params.both_loss);
    for (int l = 0; l < TP_SIM_LINES; l++) {
        int rc = line_packet(f, l, src, both_lost, &f->scratch);
        if (rc < 0)
            return rc;
    }
    return flush_until(f, src->time_ns);
}

int tp_sim_faults_finish(struct tp_sim_faults *f)
{
    for (int l = 0; l < TP_SIM_LINES; l++) {
        struct tp_sim_line_state *st = &f->line[l];
        if (st->held != NULL) {
            int rc = emit(f, st->held);
            free(st->held);
            st->held = NULL;
            if (rc < 0)
                return rc;
        }
    }
    return flush_until(f, UINT64_MAX);
}

static json_t *line_report(const struct tp_sim_line_faults *lf, const struct tp_sim_line_state *st)
{
    json_t *cfg = json_pack(
        "{s:f,s:f,s:I,s:f,s:f,s:I,s:f,s:f,s:I,s:I,s:I}", "loss", lf->loss, "burst", lf->burst,
        "burst_len", (json_int_t)lf->burst_len, "reorder", lf->reorder, "duplicate", lf->duplicate,
        "delay_ns", (json_int_t)lf->delay_ns, "truncate", lf->truncate, "corrupt", lf->corrupt,
        "heartbeat_from", (json_int_t)lf->heartbeat_from, "heartbeat_to",
        (json_int_t)lf->heartbeat_to, "late_join", (json_int_t)lf->late_join);
    json_t *o =
        json_pack("{s:o,s:I,s:I,s:I}", "faults", cfg, "source_packets", (json_int_t)st->source,
                  "sent", (json_int_t)st->sent, "joined_at_seq", (json_int_t)st->joined_at_seq);
    for (int k = 0; k < TP_SIM_F_KINDS; k++) {
        json_t *arr = json_array();
        const struct tp_sim_fault_list *list = &st->faults[k];
        for (size_t i = 0; i < list->n; i++) {
            const struct tp_sim_fault_record *r = &list->items[i];
            json_t *e = json_pack("{s:I,s:I,s:I}", "index", (json_int_t)r->index, "seq",
                                  (json_int_t)r->seq, "count", (json_int_t)r->count);
            if (k == TP_SIM_F_TRUNCATED)
                json_object_set_new(e, "len", json_integer(r->detail));
            if (k == TP_SIM_F_CORRUPTED)
                json_object_set_new(e, "offset", json_integer(r->detail));
            json_array_append_new(arr, e);
        }
        json_object_set_new(o, kind_names[k], arr);
    }
    return o;
}

json_t *tp_sim_faults_report(const struct tp_sim_faults *f)
{
    json_t *o = json_pack("{s:f}", "both_loss", f->params.both_loss);
    static const char *const names[TP_SIM_LINES] = {"A", "B"};
    for (int l = 0; l < TP_SIM_LINES; l++)
        if (f->params.line[l].enabled)
            json_object_set_new(o, names[l], line_report(&f->params.line[l], &f->line[l]));
    return o;
}

void tp_sim_faults_free(struct tp_sim_faults *f)
{
    for (size_t i = 0; i < f->heap_n; i++)
        free(f->heap[i]);
    free(f->heap);
    free(f->heap_serial);
    for (int l = 0; l < TP_SIM_LINES; l++) {
        free(f->line[l].held);
        for (int k = 0; k < TP_SIM_F_KINDS; k++)
            free(f->line[l].faults[k].items);
    }
    memset(f, 0, sizeof(*f));
}
