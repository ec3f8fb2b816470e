/* tickplane event files (see tickplane/event_file.h). */
#include "tickplane/event_file.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tpout_sbe.h"

#define EVENT_FILE_PREFETCH 2048

static uint16_t load_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t load_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t load_u64(const uint8_t *p)
{
    return (uint64_t)load_u32(p) | (uint64_t)load_u32(p + 4) << 32;
}

static void store_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void store_u32(uint8_t *p, uint32_t v)
{
    store_u16(p, (uint16_t)v);
    store_u16(p + 2, (uint16_t)(v >> 16));
}

static void store_u64(uint8_t *p, uint64_t v)
{
    store_u32(p, (uint32_t)v);
    store_u32(p + 4, (uint32_t)(v >> 32));
}

int tp_event_file_open(struct tp_event_file_reader *r, const void *data, size_t len)
{
    const uint8_t *d = data;
    struct tp_event_file_header *h = &r->header;

    memset(r, 0, sizeof(*r));
    if (len < TP_EVENT_FILE_HEADER_LEN || memcmp(d, TP_EVENT_FILE_MAGIC, 8) != 0)
        return TP_EVENT_FILE_EMAGIC;
    h->version = load_u16(d + 8);
    h->header_length = load_u16(d + 10);
    h->schema_id = load_u16(d + 12);
    h->schema_version = load_u16(d + 14);
    h->flags = load_u32(d + 16);
    h->align = load_u32(d + 20);
    h->records = load_u64(d + 24);
    if (h->version != TP_EVENT_FILE_VERSION || h->schema_id != TP_EVENT_FILE_SCHEMA_ID ||
        h->align != TP_EVENT_FILE_ALIGN || h->header_length < TP_EVENT_FILE_HEADER_LEN ||
        h->header_length % TP_EVENT_FILE_ALIGN != 0)
        return TP_EVENT_FILE_EVERSION;
    if (h->header_length > len)
        return TP_EVENT_FILE_ECUT;
    r->data = d;
    r->len = len;
    r->offset = h->header_length;
    return 0;
}

int tp_event_file_next(struct tp_event_file_reader *r, struct tp_event_file_record *rec)
{
    size_t left;
    uint32_t length;

    if (r->offset == r->len)
        return 0;
    left = r->len - r->offset;
    if (left < TP_EVENT_FILE_RECORD_HDR)
        goto cut;
    length = load_u32(r->data + r->offset);
    /* A record holds at least an SBE message header, and never more than it can say. */
    if (length < TPOUT_MESSAGE_HEADER_ENCODED_LENGTH || length > TP_EVENT_FILE_MAX_MESSAGE ||
        length > left - TP_EVENT_FILE_RECORD_HDR)
        goto cut;
    rec->offset = r->offset;
    rec->topic = load_u16(r->data + r->offset + 4);
    rec->length = length;
    rec->message = r->data + r->offset + TP_EVENT_FILE_RECORD_HDR;
    /* The last record's padding may be missing (a file cut at a record's end is still read). */
    size_t next = r->offset + TP_EVENT_FILE_RECORD_HDR + length;
    next = (next + TP_EVENT_FILE_ALIGN - 1) & ~(size_t)(TP_EVENT_FILE_ALIGN - 1);
    r->offset = next < r->len ? next : r->len;
    r->records++;
    /* Records are read in order, a few nanoseconds each: ask for the bytes well ahead (the
     * hardware's prefetch stops at each page of a mapped file). */
    if (r->len - r->offset > EVENT_FILE_PREFETCH)
        __builtin_prefetch(r->data + r->offset + EVENT_FILE_PREFETCH);
    return 1;
cut:
    r->offset = r->len - left; /* stays: every later call says the same */
    return TP_EVENT_FILE_ECUT;
}

const char *tp_event_file_strerror(int err)
{
    switch (err) {
    case TP_EVENT_FILE_EMAGIC:
        return "not a tickplane event file (no TPEVENTS header)";
    case TP_EVENT_FILE_EVERSION:
        return "an event file of a format version or schema this reader does not know";
    case TP_EVENT_FILE_ECUT:
        return "an event file cut inside a record, or a record longer than the file";
    default:
        return strerror(-err);
    }
}

/* Writes the buffer out, all of it, or (keep_last) but the last record, which moves to the
 * front. */
static int flush_buffer(struct tp_event_file_writer *w, bool keep_last)
{
    size_t n = keep_last && w->records ? w->last : w->used;
    if (w->error == 0 && n && fwrite(w->buf, 1, n, w->file) != n)
        w->error = -(errno ? errno : EIO);
    memmove(w->buf, w->buf + n, w->used - n);
    w->used -= n;
    w->last -= n;
    return w->error;
}

uint8_t *tp_event_file_last_message(struct tp_event_file_writer *w)
{
    return w->records && w->buf ? w->buf + w->last + TP_EVENT_FILE_RECORD_HDR : NULL;
}

/* The largest record, and the buffer's size: a flush keeps the last record at its front, so
 * after one the buffer must still hold a largest record behind a largest record. Records that
 * small never pass TP_EVENT_FILE_WRITE_BUFFER, and the bytes past it are never touched. */
#define LARGEST_RECORD                                                                             \
    ((TP_EVENT_FILE_RECORD_HDR + TP_EVENT_FILE_MAX_MESSAGE + TP_EVENT_FILE_ALIGN - 1) &            \
     ~(TP_EVENT_FILE_ALIGN - 1))
#define WRITE_BUFFER_BYTES                                                                         \
    (TP_EVENT_FILE_WRITE_BUFFER > 2 * LARGEST_RECORD ? TP_EVENT_FILE_WRITE_BUFFER                  \
                                                     : 2 * LARGEST_RECORD)

int tp_event_file_writer_open(struct tp_event_file_writer *w, FILE *f, uint32_t flags)
{
    memset(w, 0, sizeof(*w));
    w->file = f;
    w->buf = malloc(WRITE_BUFFER_BYTES);
    if (w->buf == NULL)
        return w->error = -ENOMEM;
    uint8_t *h = w->buf;
    memset(h, 0, TP_EVENT_FILE_HEADER_LEN);
    memcpy(h, TP_EVENT_FILE_MAGIC, 8);
    store_u16(h + 8, TP_EVENT_FILE_VERSION);
    store_u16(h + 10, TP_EVENT_FILE_HEADER_LEN);
    store_u16(h + 12, TPOUT_SCHEMA_ID);
    store_u16(h + 14, TPOUT_SCHEMA_VERSION);
    store_u32(h + 16, flags);
    store_u32(h + 20, TP_EVENT_FILE_ALIGN);
    w->used = w->bytes = TP_EVENT_FILE_HEADER_LEN;
    return 0;
}

/* A record's bytes in the file: its prefix and message, padded to the alignment. */
static size_t record_size(uint32_t length)
{
    return (TP_EVENT_FILE_RECORD_HDR + (size_t)length + TP_EVENT_FILE_ALIGN - 1) &
           ~(size_t)(TP_EVENT_FILE_ALIGN - 1);
}

_Static_assert(TP_EVENT_FILE_RECORD_HDR == 8 && TP_EVENT_FILE_ALIGN == 8, "record prefix layout");

/* The record's prefix at r, for a record of `size` bytes: the last aligned word zeroed first (the
 * message covers what is not padding), then (length, topic, zero) as one word. */
static uint8_t *put_prefix(uint8_t *r, size_t size, uint16_t topic, uint32_t length)
{
    tpout_store_u64(r + size - TP_EVENT_FILE_ALIGN, 0);
    tpout_store_u64(r, length | (uint64_t)topic << 32);
    return r + TP_EVENT_FILE_RECORD_HDR;
}

/* A claim that needs room first: out of line, so that the others save no registers. */
__attribute__((noinline)) static uint8_t *claim_after_flush(struct tp_event_file_writer *w,
                                                            uint16_t topic, uint32_t length)
{
    if (flush_buffer(w, true) != 0)
        return NULL;
    return put_prefix(w->buf + w->used, record_size(length), topic, length);
}

uint8_t *tp_event_file_claim(struct tp_event_file_writer *w, uint16_t topic, uint32_t length)
{
    size_t size = record_size(length);

    if (length < TPOUT_MESSAGE_HEADER_ENCODED_LENGTH || length > TP_EVENT_FILE_MAX_MESSAGE ||
        w->error != 0)
        return NULL;
    if (w->used + size > TP_EVENT_FILE_WRITE_BUFFER)
        return claim_after_flush(w, topic, length);
    return put_prefix(w->buf + w->used, size, topic, length);
}

void tp_event_file_commit(struct tp_event_file_writer *w)
{
    size_t size = record_size(tpout_load_u32(w->buf + w->used));
    w->last = w->used;
    w->used += size;
    w->bytes += size;
    w->records++;
}

int tp_event_file_write(struct tp_event_file_writer *w, uint16_t topic, const void *message,
                        uint32_t length)
{
    if (length < TPOUT_MESSAGE_HEADER_ENCODED_LENGTH || length > TP_EVENT_FILE_MAX_MESSAGE)
        return -EINVAL;
    uint8_t *m = tp_event_file_claim(w, topic, length);
    if (m == NULL)
        return w->error;
    memcpy(m, message, length);
    tp_event_file_commit(w);
    return 0;
}

int tp_event_file_finish(struct tp_event_file_writer *w)
{
    uint8_t count[8];

    flush_buffer(w, false);
    free(w->buf);
    w->buf = NULL;
    if (w->error == 0 && fflush(w->file) != 0)
        w->error = -(errno ? errno : EIO);
    if (w->error != 0)
        return w->error;
    store_u64(count, w->records);
    /* A pipe cannot seek: its header keeps 0 (not known). */
    if (fseek(w->file, 24, SEEK_SET) == 0) {
        if (fwrite(count, 1, sizeof(count), w->file) != sizeof(count) || fflush(w->file) != 0 ||
            fseek(w->file, 0, SEEK_END) != 0)
            w->error = -(errno ? errno : EIO);
    }
    return w->error;
}
