/* tickplane-replay --events (see replay_events.h). */
#include "replay_events.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "book_reader.h"
#include "bus/bus.h"
#include "glob.h"
#include "publisher.h"
#include "replay_log.h"
#include "tickplane/event_file.h"
#include "tickplane/tickplane.h"
#include "tpout_sbe.h"

/*
 * Small enough to stay in the caches between the publisher's stores and the copy into the file
 * (with 64 MiB every record was written to memory and read back: 2.8x the replay's CPU time, 2.0x
 * with this), far larger than what one sink call publishes (drained at a quarter).
 */
#define EVENTS_RING_BYTES (256u << 10)
#define EVENTS_MAX_RECORD 8192u /* as the daemon's bus: a DELETE_FROM of 255 levels is ~6 KiB */

struct replay_events {
    struct tp_bus_writer bus;
    uint64_t drained; /* ring position up to which records are in the file */
    struct tp_publisher *pub;
    struct tp_feed_sink pub_sink;
    struct tp_event_file_writer file;
    const struct tp_instruments *registry;
    const char *symbols;
    uint32_t topics;
    struct replay_log *log;
    const uint64_t *key;
    /* Records wait in the ring for a drain: no selection (the last record of each event has its
     * flag already) and no worker's log (whose records are keyed by the message at the drain). */
    bool batched;
    struct replay_events_counters counters;
};

/*
 * Copies every record committed past the last drain into the file. This process is the ring's
 * only writer and reader, on one thread: the records are read in place, from the position the
 * last drain stopped at up to the writer's tail (what a bus reader would copy and validate first).
 * A wrap's padding, or a tail too short for a header, goes to the lap's end.
 */
static void drain(struct replay_events *e)
{
    const struct tp_ring_writer *w = &e->bus.ring;
    const uint8_t *data = w->shared->data;

    if (w->tail - e->drained > w->capacity) { /* cannot happen: one sink call is far smaller */
        e->counters.lost++;
        e->drained = w->tail;
        return;
    }
    while (e->drained < w->tail) {
        uint64_t at = e->drained & w->mask, to_end = w->capacity - at;
        const struct tp_ring_record *rec = (const struct tp_ring_record *)(data + at);
        if (to_end < TP_RING_RECORD_HEADER || rec->type == TP_REC_PADDING) {
            e->drained += to_end;
            continue;
        }
        e->drained += TP_RING_ALIGN_UP(rec->length);
        if (e->batched && rec->type == TP_REC_SBE) { /* every topic, straight to the file */
            tp_event_file_write(&e->file, rec->topic, tp_ring_payload(rec),
                                rec->length - TP_RING_RECORD_HEADER);
            continue;
        }
        uint32_t topics = rec->topic == TP_RECORD_ORDER_DEPTH
                              ? TP_TOPIC_BIT(TP_TOPIC_ORDERS) | TP_TOPIC_BIT(TP_TOPIC_DEPTH)
                              : TP_TOPIC_BIT(rec->topic);
        if (rec->type != TP_REC_SBE || !(topics & e->topics)) {
            e->counters.skipped++;
            continue;
        }
        if (e->log != NULL)
            replay_log_record(e->log, *e->key, rec->topic, tp_ring_payload(rec),
                              rec->length - TP_RING_RECORD_HEADER);
        else
            tp_event_file_write(&e->file, rec->topic, tp_ring_payload(rec),
                                rec->length - TP_RING_RECORD_HEADER);
    }
}

/*
 * The publisher works in one long rx burst (tp_publisher_begin_burst): its shared tail, counters
 * and state bookkeeping move when the records are drained, not at each venue event's end (the
 * records are the same either way). Drained when a quarter of the ring is used.
 */
static void drain_burst(struct replay_events *e)
{
    tp_publisher_end_burst(e->pub);
    drain(e);
    tp_publisher_begin_burst(e->pub);
}

static void drain_when_due(struct replay_events *e)
{
    if (e->bus.ring.tail - e->drained > EVENTS_RING_BYTES / 4)
        drain_burst(e);
}

/* After a definition or a stale mark: a worker's log keys the records by the message now. */
static void drain_record(struct replay_events *e)
{
    if (e->batched)
        drain_when_due(e);
    else
        drain(e);
}

int replay_events_parse_topics(const char *s, uint32_t *out)
{
    static const char *const names[] = {[TP_TOPIC_DEPTH] = "depth",
                                        [TP_TOPIC_TRADES] = "trades",
                                        [TP_TOPIC_ORDERS] = "orders",
                                        [TP_TOPIC_STATUS] = "status",
                                        [TP_TOPIC_DEFINITIONS] = "definitions"};
    *out = 0;
    while (*s) {
        size_t n = strcspn(s, ",");
        uint32_t bit = 0;
        for (uint32_t t = 0; t < sizeof(names) / sizeof(names[0]); t++)
            if (names[t] && strlen(names[t]) == n && !strncmp(s, names[t], n))
                bit = TP_TOPIC_BIT(t);
        if (bit == 0)
            return -EINVAL;
        *out |= bit;
        s += n + (s[n] == ',');
    }
    return *out ? 0 : -EINVAL;
}

static void on_changes(void *ctx, const struct tp_feed_info *info, const struct tp_book_change *c,
                       uint32_t n)
{
    struct replay_events *e = ctx;
    e->pub_sink.changes(e->pub_sink.ctx, info, c, n);
    /* An event may span many calls (MDP3): what is committed of it so far goes now and then. */
    drain_when_due(e);
}

/*
 * A venue event ended. Its last record carries endOfEvent, unless the selection left it out
 * (another topic, or an instrument not selected: not even published): then the last record the
 * file kept gets the flag, so the events a reader sees stay delimited (a book is consistent at
 * each end). Without a selection the file's records are the bus's, byte for byte: the last
 * record has the flag already, and the records wait in the ring for a drain.
 */
static void mark_end_of_event(uint8_t *message)
{
    message[TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + TPOUT_BOOK_UPDATE_FLAGS_OFFSET] |=
        TP_PUB_F_END_OF_EVENT;
}

void replay_events_end_of_event(struct tp_event_file_writer *file)
{
    uint8_t *last = tp_event_file_last_message(file);
    if (last != NULL)
        mark_end_of_event(last);
}

static void end_event(struct replay_events *e)
{
    if (e->batched) {
        drain_when_due(e);
        return;
    }
    drain(e);
    /* A worker's event that kept a record of its own ends in it: the merge puts nothing between
     * a worker's entries of one key. Else the merge marks the file's last record. */
    uint8_t *own = e->log != NULL ? replay_log_last_message(e->log, *e->key) : NULL;
    if (own != NULL)
        mark_end_of_event(own);
    else if (e->log != NULL)
        replay_log_end_of_event(e->log, *e->key);
    else
        replay_events_end_of_event(&e->file);
}

static void on_end_of_event(void *ctx, const struct tp_feed_info *info)
{
    struct replay_events *e = ctx;
    e->pub_sink.end_of_event(e->pub_sink.ctx, info);
    end_event(e);
}

static void on_event_changes(void *ctx, const struct tp_feed_info *info,
                             const struct tp_book_change *c, uint32_t n)
{
    struct replay_events *e = ctx;
    e->pub_sink.event_changes(e->pub_sink.ctx, info, c, n);
    end_event(e);
}

static void on_instrument(void *ctx, uint32_t id)
{
    struct replay_events *e = ctx;
    struct tp_pub_definition def;
    char symbol[sizeof(def.symbol) + 1];

    if (tp_pub_read_definition(e->registry, id, &def) != 0)
        return;
    memcpy(symbol, def.symbol, sizeof(def.symbol));
    symbol[sizeof(def.symbol)] = 0;
    if (e->symbols != NULL)
        tp_bus_set_interest(&e->bus, id, tp_glob_match(e->symbols, symbol));
    /* One venue per capture: the events carry it. */
    tp_publisher_select(e->pub, def.venue, 0);
    e->pub_sink.instrument(e->pub_sink.ctx, id);
    drain_record(e);
}

static void on_stale(void *ctx, uint32_t id, int stale, uint32_t expected, uint32_t got)
{
    struct replay_events *e = ctx;
    e->pub_sink.stale(e->pub_sink.ctx, id, stale, expected, got);
    drain_record(e);
}

struct tp_feed_sink replay_events_sink(struct replay_events *e)
{
    return (struct tp_feed_sink){.ctx = e,
                                 .changes = on_changes,
                                 .end_of_event = on_end_of_event,
                                 .instrument = on_instrument,
                                 .stale = on_stale,
                                 .event_changes = on_event_changes};
}

/* The bus is private to this process: its names go as soon as it is mapped. */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char path[PATH_MAX];

    while (d != NULL && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
        unlink(path);
    }
    if (d != NULL)
        closedir(d);
    rmdir(dir);
}

static void free_events(struct replay_events *e)
{
    free(e->pub);
    free(e);
}

int replay_events_open(struct replay_events **out, const struct replay_events_params *p, char *err,
                       size_t err_len)
{
    struct replay_events *e = calloc(1, sizeof(*e));
    char dir[] = "/dev/shm/tickplane-replay.XXXXXX";
    char instance[32];
    int rc;

    *out = NULL;
    if (e == NULL)
        return -ENOMEM;
    e->registry = p->registry;
    e->symbols = p->symbols;
    e->topics = p->topics ? p->topics : TP_TOPICS_BUILTIN;
    e->batched = p->symbols == NULL && (e->topics & TP_TOPICS_BUILTIN) == TP_TOPICS_BUILTIN;
    if (mkdtemp(dir) == NULL) {
        rc = -errno;
        snprintf(err, err_len, "a private bus in /dev/shm: %s", strerror(-rc));
        free_events(e);
        return rc;
    }
    snprintf(instance, sizeof(instance), "replay-%ld", (long)getpid());
    struct tp_bus_params bp = {.instance = instance,
                               .dir = dir,
                               .ring_bytes = EVENTS_RING_BYTES,
                               .max_record = EVENTS_MAX_RECORD,
                               .instruments = p->instruments,
                               .depth = 10,
                               .counters = 8,
                               .mode = 0600,
                               .gid = (gid_t)-1};
    rc = tp_bus_writer_open(&e->bus, &bp, err, err_len);
    remove_dir(dir);
    if (rc != 0) {
        free_events(e);
        return rc;
    }
    if (p->symbols != NULL)
        tp_bus_set_interest_all(&e->bus, 0);
    /* No conflated state: a file has none, and its writes were a fifth of the publisher's cost.
     * The publisher takes a bus without a state table (publisher.h); the segment stays mapped
     * until the close. */
    e->bus.state = NULL;
    struct tp_publisher_params pp = {.bus = &e->bus,
                                     .books = p->books,
                                     .registry = p->registry,
                                     .instruments = p->instruments,
                                     .depth = 10};
    size_t size = (tp_publisher_memsize(&pp) + 63) & ~(size_t)63;
    e->pub = size ? aligned_alloc(64, size) : NULL;
    if (e->pub == NULL || tp_publisher_init(e->pub, &pp) != 0) {
        snprintf(err, err_len, "the publisher of %u instruments could not be set up",
                 p->instruments);
        tp_bus_writer_close(&e->bus, 0);
        free_events(e);
        return -ENOMEM;
    }
    e->pub_sink = tp_publisher_sink(e->pub);
    e->log = p->log;
    e->key = p->key;
    e->batched = e->batched && p->log == NULL;
    tp_publisher_begin_burst(e->pub);
    rc = p->log != NULL ? 0 : tp_event_file_writer_open(&e->file, p->file, p->file_flags);
    if (rc != 0) {
        snprintf(err, err_len, "writing the event file: %s", strerror(-rc));
        tp_bus_writer_close(&e->bus, 0);
        free_events(e);
        return rc;
    }
    *out = e;
    return 0;
}

int replay_events_close(struct replay_events *e, struct replay_events_counters *out, char *err,
                        size_t err_len)
{
    int rc;

    tp_publisher_end_burst(e->pub);
    drain(e);
    rc = e->log != NULL ? 0 : tp_event_file_finish(&e->file);
    e->counters.records = e->file.records;
    e->counters.bytes = e->file.bytes;
    if (rc != 0)
        snprintf(err, err_len, "writing the event file: %s", strerror(-rc));
    else if (e->counters.lost != 0) {
        snprintf(err, err_len, "%llu records were overwritten on the bus before they were written",
                 (unsigned long long)e->counters.lost);
        rc = -EPIPE;
    }
    if (out != NULL)
        *out = e->counters;
    tp_bus_writer_close(&e->bus, 0);
    free_events(e);
    return rc;
}
