/* tickplane-replay --events (see replay_events.h). */
#include "replay_events.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdalign.h>
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

/* The bus's record limit, as the daemon's: a DELETE_FROM of 255 levels is ~6 KiB. The records
 * go to the file, not to the ring: it is as small as the bus allows, and never written. */
#define EVENTS_MAX_RECORD  8192u
#define EVENTS_MAX_MESSAGE (EVENTS_MAX_RECORD - TP_RING_RECORD_HEADER)
#define EVENTS_RING_BYTES  (8u * EVENTS_MAX_RECORD)

struct replay_events {
    struct tp_bus_writer bus; /* its interest: the instruments published */
    struct tp_pub_output output;
    struct tp_publisher *pub;
    struct tp_feed_sink pub_sink;
    struct tp_event_file_writer file;
    const struct tp_instruments *registry;
    const char *symbols;
    uint32_t topics;
    struct replay_log *log;
    const uint64_t *key;
    /* A selection or a worker's log: each venue event's end is marked on what the file keeps. */
    bool mark_ends;
    bool discard; /* the record claimed is of a topic left out (in scratch) */
    struct replay_events_counters counters;
    alignas(8) uint8_t scratch[EVENTS_MAX_MESSAGE];
};

/*
 * The publisher's output (publisher.h): each record is encoded where it stays, in the event file
 * writer's buffer or in the worker's log, and committed there. Nothing is copied, and nothing can
 * be lost between the publisher and the file: what remains is what the bus refuses too (a
 * record over its size, counted) and write errors (the writer's).
 */
static bool fits_bus(struct replay_events *e, uint32_t length)
{
    if (length <= EVENTS_MAX_MESSAGE)
        return true;
    e->counters.too_large++;
    return false;
}

static uint8_t *claim_file(void *ctx, uint16_t topic, uint32_t length)
{
    struct replay_events *e = ctx;
    return fits_bus(e, length) ? tp_event_file_claim(&e->file, topic, length) : NULL;
}

static void commit_file(void *ctx)
{
    struct replay_events *e = ctx;
    tp_event_file_commit(&e->file);
}

/* Whether the selection keeps a record of this topic. */
static bool topic_selected(const struct replay_events *e, uint16_t topic)
{
    uint32_t topics = topic == TP_RECORD_ORDER_DEPTH
                          ? TP_TOPIC_BIT(TP_TOPIC_ORDERS) | TP_TOPIC_BIT(TP_TOPIC_DEPTH)
                          : TP_TOPIC_BIT(topic);
    return (topics & e->topics) != 0;
}

/*
 * With a selection or a worker's log. A record of a topic left out is encoded all the same, into
 * scratch, and dropped at its commit, so that the publisher goes the way it goes on the bus (a
 * claimed record holds its event open) whatever the file keeps.
 */
static uint8_t *claim_selected(void *ctx, uint16_t topic, uint32_t length)
{
    struct replay_events *e = ctx;
    if (!fits_bus(e, length))
        return NULL;
    if (!topic_selected(e, topic)) {
        e->counters.skipped++;
        e->discard = true;
        return e->scratch;
    }
    return e->log != NULL ? replay_log_claim(e->log, topic, length)
                          : tp_event_file_claim(&e->file, topic, length);
}

/* A worker's log keys each record by the message being replayed when it is complete. */
static void commit_selected(void *ctx)
{
    struct replay_events *e = ctx;
    if (e->discard)
        e->discard = false;
    else if (e->log != NULL)
        replay_log_commit(e->log, *e->key);
    else
        tp_event_file_commit(&e->file);
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

/*
 * A venue event ended. Its last record carries endOfEvent, unless the selection left it out
 * (another topic, or an instrument not selected: not even published): then the last record the
 * file kept gets the flag, so the events a reader sees stay delimited (a book is consistent at
 * each end). Without a selection the file's records are the bus's, byte for byte: the last
 * record has the flag already.
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
    if (!e->mark_ends)
        return;
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

static void on_order_changes(void *ctx, const struct tp_feed_info *info,
                             const struct tp_order_change *oc, uint32_t n)
{
    struct replay_events *e = ctx;
    e->pub_sink.order_changes(e->pub_sink.ctx, info, oc, n);
    end_event(e);
}

static void on_changes(void *ctx, const struct tp_feed_info *info, const struct tp_book_change *c,
                       uint32_t n)
{
    struct replay_events *e = ctx;
    e->pub_sink.changes(e->pub_sink.ctx, info, c, n);
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
}

static void on_stale(void *ctx, uint32_t id, int stale, uint32_t expected, uint32_t got)
{
    struct replay_events *e = ctx;
    e->pub_sink.stale(e->pub_sink.ctx, id, stale, expected, got);
}

struct tp_feed_sink replay_events_sink(struct replay_events *e)
{
    return (struct tp_feed_sink){.ctx = e,
                                 .changes = on_changes,
                                 .end_of_event = on_end_of_event,
                                 .instrument = on_instrument,
                                 .stale = on_stale,
                                 .event_changes = on_event_changes,
                                 .order_changes =
                                     e->pub_sink.order_changes ? on_order_changes : NULL};
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
    bool selection = p->symbols != NULL || (e->topics & TP_TOPICS_BUILTIN) != TP_TOPICS_BUILTIN;
    e->log = p->log;
    e->key = p->key;
    e->mark_ends = selection || p->log != NULL;
    e->output = (struct tp_pub_output){.claim = e->mark_ends ? claim_selected : claim_file,
                                       .commit = e->mark_ends ? commit_selected : commit_file,
                                       .ctx = e};
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
                                     .depth = 10,
                                     .output = &e->output};
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
    /* One long rx burst: the bus's tail and counters (unused: its ring stays empty) move at the
     * close, not at each venue event's end. */
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
    rc = e->log != NULL ? 0 : tp_event_file_finish(&e->file);
    e->counters.records = e->file.records;
    e->counters.bytes = e->file.bytes;
    if (rc != 0)
        snprintf(err, err_len, "writing the event file: %s", strerror(-rc));
    else if (e->counters.too_large != 0) {
        snprintf(err, err_len,
                 "%llu records were over the bus's size of %u bytes, left out as on "
                 "the bus",
                 (unsigned long long)e->counters.too_large, EVENTS_MAX_RECORD);
        rc = -EMSGSIZE;
    }
    if (out != NULL)
        *out = e->counters;
    tp_bus_writer_close(&e->bus, 0);
    free_events(e);
    return rc;
}
