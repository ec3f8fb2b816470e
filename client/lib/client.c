/*
 * libtickplane: attach, subscribe, poll, read state (see tickplane/tickplane.h).
 *
 * The poll path reads the ring into private memory, filters by (instrument x topic) with one
 * array lookup, decodes the tpout message once, keeps the reader's books, and runs the views of
 * the topics the record feeds. No syscalls, locks or allocation: everything is sized at attach
 * and subscribe time.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bus/bus.h"
#include "control.h"
#include "tickplane/tickplane.h"
#include "views/decode.h"
#include "views/local_book.h"
#include "views/views.h"

#define USER_TOPICS      (TP_TOPIC_MAX - TP_TOPIC_USER_FIRST)
#define RECORD_TOPICS    8u /* record topics the writer may tag (DEPTH..DEFINITIONS, room to grow) */
#define STATE_TRIES      100000u
#define DEFAULT_BATCH    65536u
#define BOOK_TOPICS      (TP_TOPIC_BIT(TP_TOPIC_DEPTH) | TP_TOPIC_BIT(TP_TOPIC_TOP))
#define PUBLISHED_TOPICS 0x3fu /* DEPTH..DEFINITIONS can be tagged on records */
#define MAX_ALL_SUBS     16u   /* venues of one "every instrument" subscription */
/* Topics whose built-in view is the decoded event as is (views/views.h): delivered directly. */
#define AS_DECODED_TOPICS                                                                          \
    (TP_TOPIC_BIT(TP_TOPIC_TRADES) | TP_TOPIC_BIT(TP_TOPIC_ORDERS) |                               \
     TP_TOPIC_BIT(TP_TOPIC_STATUS) | TP_TOPIC_BIT(TP_TOPIC_DEFINITIONS))

enum reader_counter {
    RC_RECORDS,
    RC_DELIVERED,
    RC_FILTERED,
    RC_LAPPED,
    RC_LOST,
    RC_RESYNCS,
    RC_MALFORMED,
    RC_COUNT
};

static const char *const counter_names[RC_COUNT] = {
    "reader.records", "reader.delivered", "reader.filtered",  "reader.lapped",
    "reader.lost",    "reader.resyncs",   "reader.malformed",
};

struct user_transformer {
    char name[32];
    uint32_t sources;
    tp_transform_fn fn;
    void *ctx;
};

struct tp_client {
    char instance[64];
    char dir[200];
    struct tp_bus_reader bus;
    struct tp_ring_reader ring;
    uint8_t *batch;
    uint32_t batch_size;
    uint32_t instruments;
    uint32_t *interest;    /* per instrument: TP_TOPIC_BIT mask */
    uint32_t all_interest; /* topics subscribed for every instrument */
    uint32_t any_interest; /* union of everything: for channel-wide events */
    struct tp_local_book **books;
    struct tp_level_change *changes;
    uint32_t max_changes;
    struct user_transformer user[USER_TOPICS];
    uint32_t user_count;
    uint32_t feeds[RECORD_TOPICS]; /* record topic -> subscription topics it feeds */
    uint64_t loss_to_report;
    int loss_pending;
    int resync_pending;
    uint32_t resync_next;
    struct tp_seg reader_seg; /* this reader's counters segment (if any) */
    struct tp_counters *counters;
    struct tp_counter *k[RC_COUNT];
    struct tp_instrument_state scratch; /* state copies, off the caller's stack */

    /* Control socket: subscriptions are asked of the daemon before the filter changes. */
    char control_path[108]; /* "": local filter only */
    struct tp_ctl_link link;
    uint32_t *sub_of;                /* per instrument: the daemon's subscription id, 0: none */
    uint32_t all_subs[MAX_ALL_SUBS]; /* ids == NULL: the daemon's "*" subscription per venue */
    unsigned n_all_subs;
    unsigned revoked; /* revocations seen since the last tp_control_check */
    char last_error[256];
};

/* The control socket part (below): what attach, reattach and detach need of it. */
static void on_control_event(void *ctx, json_t *event);
static int control_from_environment(struct tp_client *c, char *err, size_t err_len);
static int control_resubscribe(struct tp_client *c);

static int fail(char *err, size_t err_len, int rc, const char *what)
{
    if (err != NULL && err_len > 0)
        snprintf(err, err_len, "%s", what);
    return rc;
}

static uint32_t interest_of(const struct tp_client *c, uint32_t id)
{
    return c->interest[id] | c->all_interest;
}

static void recompute_feeds(struct tp_client *c)
{
    for (uint32_t src = 0; src < RECORD_TOPICS; src++) {
        uint32_t mask = 0;
        for (uint32_t t = 0; t < TP_TOPIC_USER_FIRST; t++)
            if (tp_view_sources(t) & TP_TOPIC_BIT(src))
                mask |= TP_TOPIC_BIT(t);
        for (uint32_t u = 0; u < c->user_count; u++)
            if (c->user[u].sources & TP_TOPIC_BIT(src))
                mask |= TP_TOPIC_BIT(TP_TOPIC_USER_FIRST + u);
        c->feeds[src] = mask;
    }
}

static void recompute_any(struct tp_client *c)
{
    uint32_t any = c->all_interest;
    for (uint32_t id = 0; id < c->instruments; id++)
        any |= c->interest[id];
    c->any_interest = any;
}

/* This reader's counters: in its own segment for side-cars, else in private memory. */
static int open_counters(struct tp_client *c, const struct tp_client_options *opt)
{
    size_t size = tp_counters_memsize(RC_COUNT);
    void *mem = NULL;
    if (!opt->no_reader_segment) {
        char part[32], path[256], err[128];
        snprintf(part, sizeof(part), "reader.%d", (int)getpid());
        struct tp_seg_create_params p = {
            .path = path,
            .instance = c->instance,
            .kind = TP_SEG_COUNTERS,
            .data_size = size,
            .mode = opt->reader_mode != 0 ? (mode_t)opt->reader_mode : 0644,
            .gid = (gid_t)-1,
        };
        if (tp_seg_path(path, sizeof(path), c->dir, c->instance, part) == 0 &&
            tp_seg_create(&c->reader_seg, &p, err, sizeof(err)) == 0)
            mem = c->reader_seg.data;
    }
    if (mem == NULL) {
        /* No writable directory (or not wanted): the counters stay private. */
        mem = aligned_alloc(64, (size + 63) / 64 * 64);
        if (mem == NULL)
            return -ENOMEM;
    }
    tp_counters_init(mem, RC_COUNT);
    c->counters = mem;
    for (int i = 0; i < RC_COUNT; i++)
        c->k[i] = tp_counters_register(c->counters, counter_names[i]);
    if (c->reader_seg.hdr != NULL)
        tp_seg_publish(&c->reader_seg, NULL, 0);
    return 0;
}

/* Map the instance and size everything that depends on it. */
static int map_instance(struct tp_client *c, char *err, size_t err_len)
{
    int rc = tp_bus_reader_open(&c->bus, c->dir, c->instance, err, err_len);
    if (rc != 0)
        return rc;
    uint32_t n = c->bus.state->instruments;
    for (uint32_t id = n; id < c->instruments; id++) {
        free(c->books[id]); /* a restarted writer with fewer instruments */
        c->books[id] = NULL;
    }
    if (n != c->instruments) {
        uint32_t *interest = realloc(c->interest, n * sizeof(*interest));
        struct tp_local_book **books = realloc(c->books, n * sizeof(*books));
        uint32_t *sub_of = realloc(c->sub_of, n * sizeof(*sub_of));
        if (interest != NULL)
            c->interest = interest;
        if (books != NULL)
            c->books = books;
        if (sub_of != NULL)
            c->sub_of = sub_of;
        if (interest == NULL || books == NULL || sub_of == NULL)
            return fail(err, err_len, -ENOMEM, "out of memory");
        for (uint32_t id = c->instruments; id < n; id++) {
            c->interest[id] = 0;
            c->books[id] = NULL;
            c->sub_of[id] = 0;
        }
        c->instruments = n;
    }
    const struct tp_ring_shared *ring = c->bus.ring_mem;
    uint32_t max_record = ring->max_record;
    uint32_t need = (max_record + 7u) & ~7u;
    if (need > c->batch_size) {
        free(c->batch);
        c->batch = aligned_alloc(64, (need + 63u) & ~63u);
        c->batch_size = need;
    }
    free(c->changes);
    c->max_changes = max_record / 24u + 1u;
    c->changes = calloc(c->max_changes, sizeof(*c->changes));
    if (c->batch == NULL || c->changes == NULL)
        return fail(err, err_len, -ENOMEM, "out of memory");
    return tp_ring_reader_init(&c->ring, c->bus.ring_mem, c->batch, c->batch_size);
}

int tp_attach(struct tp_client **out, const char *instance, const struct tp_client_options *opt,
              char *err, size_t err_len)
{
    static const struct tp_client_options defaults;
    if (opt == NULL)
        opt = &defaults;
    if (instance == NULL || strlen(instance) >= sizeof((*out)->instance))
        return fail(err, err_len, -EINVAL, "bad instance name");
    struct tp_client *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return fail(err, err_len, -ENOMEM, "out of memory");
    c->link.fd = -1;
    c->link.on_event = on_control_event;
    c->link.event_ctx = c;
    snprintf(c->instance, sizeof(c->instance), "%s", instance);
    const char *dir = opt->shm_dir != NULL ? opt->shm_dir : TP_BUS_DEFAULT_DIR;
    if (strlen(dir) >= sizeof(c->dir)) {
        free(c);
        return fail(err, err_len, -ENAMETOOLONG, "shm_dir too long");
    }
    snprintf(c->dir, sizeof(c->dir), "%s", dir);
    uint32_t batch = opt->batch_bytes != 0 ? opt->batch_bytes : DEFAULT_BATCH;
    c->batch_size = (batch + 7u) & ~7u;
    c->batch = aligned_alloc(64, (c->batch_size + 63u) & ~63u);
    int rc = c->batch == NULL ? -ENOMEM : map_instance(c, err, err_len);
    if (rc == 0)
        rc = open_counters(c, opt);
    if (rc == 0)
        rc = control_from_environment(c, err, err_len);
    if (rc != 0) {
        tp_detach(c);
        return rc;
    }
    recompute_feeds(c);
    *out = c;
    return 0;
}

void tp_detach(struct tp_client *c)
{
    if (c == NULL)
        return;
    tp_ctl_link_close(&c->link); /* the daemon drops this client's subscriptions */
    tp_bus_reader_close(&c->bus);
    if (c->reader_seg.hdr != NULL) {
        tp_seg_unlink(&c->reader_seg);
        tp_seg_close(&c->reader_seg);
    } else {
        free(c->counters);
    }
    for (uint32_t id = 0; id < c->instruments; id++)
        free(c->books[id]);
    free(c->books);
    free(c->interest);
    free(c->sub_of);
    free(c->changes);
    free(c->batch);
    free(c);
}

/* Every watched book is reloaded from the state table on the next polls. */
static void start_resync(struct tp_client *c)
{
    c->resync_pending = 1;
    c->resync_next = 0;
}

int tp_reattach(struct tp_client *c, char *err, size_t err_len)
{
    tp_bus_reader_close(&c->bus);
    int rc = map_instance(c, err, err_len);
    if (rc != 0)
        return rc;
    if (c->control_path[0] != '\0') {
        rc = control_resubscribe(c);
        if (rc != 0)
            return fail(err, err_len, rc, c->last_error);
    }
    start_resync(c);
    return 0;
}

uint32_t tp_instrument_count(const struct tp_client *c)
{
    return c->instruments;
}

int64_t tp_find_instrument(const struct tp_client *c, const char *symbol)
{
    size_t len = strlen(symbol);
    if (len == 0 || len > TP_SYMBOL_LEN)
        return -ENOENT;
    struct tp_instrument_state *s = (struct tp_instrument_state *)&c->scratch;
    for (uint32_t id = 0; id < c->instruments; id++) {
        if (tp_state_read(c->bus.state, id, s, STATE_TRIES) != 0)
            continue;
        if (memcmp(s->book.symbol, symbol, len) == 0 &&
            (len == TP_SYMBOL_LEN || s->book.symbol[len] == '\0' || s->book.symbol[len] == ' '))
            return id;
    }
    return -ENOENT;
}

/* Allocate and load the book of an instrument newly watched at DEPTH or TOP. */
static int ensure_book(struct tp_client *c, uint32_t id)
{
    if (c->books[id] != NULL)
        return 0;
    struct tp_local_book *b = malloc(sizeof(*b));
    if (b == NULL)
        return -ENOMEM;
    tp_local_book_clear(b);
    if (tp_state_read(c->bus.state, id, &c->scratch, STATE_TRIES) == 0) {
        tp_local_book_load(b, &c->scratch);
        tp_local_book_top(b, &b->last_top);
    }
    c->books[id] = b;
    return 0;
}

static int valid_topics(const struct tp_client *c, uint32_t topics)
{
    uint32_t allowed = TP_TOPICS_BUILTIN;
    for (uint32_t u = 0; u < c->user_count; u++)
        allowed |= TP_TOPIC_BIT(TP_TOPIC_USER_FIRST + u);
    return topics != 0 && (topics & ~allowed) == 0;
}

/* 0, -EINVAL (no or unknown topics) or -ERANGE (an id out of range): checked before any change. */
static int check_request(const struct tp_client *c, const uint32_t *ids, size_t n_ids,
                         uint32_t topics)
{
    if (!valid_topics(c, topics))
        return -EINVAL;
    for (size_t i = 0; ids != NULL && i < n_ids; i++)
        if (ids[i] >= c->instruments)
            return -ERANGE;
    return 0;
}

/* ---------------------------------------------------------------- the daemon's control socket */

static int control_error(struct tp_client *c, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int control_error(struct tp_client *c, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->last_error, sizeof(c->last_error), fmt, ap);
    va_end(ap);
    return rc;
}

/* The daemon's topics (protocol names, same order as the record topics) for local topics. */
static const char *const daemon_topic_names[] = {"depth", "top",    "trades",
                                                 "mbo",   "status", "definitions"};

static uint32_t daemon_topics(const struct tp_client *c, uint32_t local)
{
    uint32_t topics = local & TP_TOPICS_BUILTIN;
    for (uint32_t u = 0; u < c->user_count; u++)
        if (local & TP_TOPIC_BIT(TP_TOPIC_USER_FIRST + u))
            topics |= c->user[u].sources; /* a strategy's topic needs what its transformer reads */
    return topics & TP_TOPICS_BUILTIN;
}

static json_t *daemon_topics_json(uint32_t topics)
{
    json_t *list = json_array();
    for (uint32_t t = 0; t < sizeof(daemon_topic_names) / sizeof(daemon_topic_names[0]); t++)
        if (topics & TP_TOPIC_BIT(t))
            json_array_append_new(list, json_string(daemon_topic_names[t]));
    return list;
}

/* The venue names the data plane matches subscriptions with (tpout Venue numbering). */
static const char *venue_name(uint8_t venue)
{
    return venue == 0 ? "CME" : venue == 1 ? "NASDAQ" : NULL;
}

/*
 * What the daemon needs to name one instrument: its venue and its symbol as a pattern that
 * matches exactly it (trailing padding cut; a character the protocol cannot carry in a pattern,
 * a space or a wildcard, becomes '?').
 */
static int instrument_name(struct tp_client *c, uint32_t id, const char **venue, char *symbol)
{
    if (tp_state_read(c->bus.state, id, &c->scratch, STATE_TRIES) != 0)
        return control_error(c, -EAGAIN, "instrument %u: state busy, try again", id);
    const struct tp_book_header *h = &c->scratch.book;
    size_t len = 0;
    while (len < TP_SYMBOL_LEN && h->symbol[len] != '\0')
        len++;
    while (len > 0 && h->symbol[len - 1] == ' ')
        len--;
    *venue = venue_name(h->venue);
    if (len == 0 || *venue == NULL)
        return control_error(c, -ENOENT, "instrument %u is not defined (yet)", id);
    for (size_t i = 0; i < len; i++) {
        char ch = h->symbol[i];
        symbol[i] = (ch <= ' ' || ch > '~' || ch == '*' || ch == '?') ? '?' : ch;
    }
    symbol[len] = '\0';
    return 0;
}

/* An error reply's errno: refusals, the daemon's transient states and limits apart. */
static int reply_error(struct tp_client *c, json_t *reply)
{
    const char *why = json_string_value(json_object_get(reply, "error"));
    if (why == NULL)
        why = "malformed reply";
    int rc = -EPROTO;
    if (strncmp(why, "refused:", 8) == 0)
        rc = -EACCES;
    else if (strncmp(why, "data plane busy", 15) == 0 || strncmp(why, "rate limited", 12) == 0)
        rc = -EAGAIN;
    else if (strncmp(why, "subscription limit", 18) == 0)
        rc = -ENOSPC;
    return control_error(c, rc, "%s", why);
}

/* Send one request; 0 with *reply when the daemon said ok, else -errno (reason kept). */
static int control_call(struct tp_client *c, json_t *request, json_t **reply)
{
    int rc = tp_ctl_link_call(&c->link, request, reply, c->last_error, sizeof(c->last_error));
    if (rc != 0)
        return rc;
    if (!json_is_true(json_object_get(*reply, "ok"))) {
        rc = reply_error(c, *reply);
        json_decref(*reply);
        *reply = NULL;
    }
    return rc;
}

/* Remove one daemon subscription (one that a revocation already removed is no error). */
static void control_unsubscribe(struct tp_client *c, uint32_t sub)
{
    json_t *reply;
    if (control_call(c,
                     json_pack("{s:s, s:i}", "cmd", "unsubscribe", "subscription", (json_int_t)sub),
                     &reply) == 0)
        json_decref(reply);
}

/* One instrument (or every instrument) whose daemon subscription changes to `topics`. */
struct plan_item {
    uint32_t id; /* TP_INSTRUMENT_NONE: every instrument */
    uint32_t topics;
    uint32_t new_sub; /* the daemon's answer (every instrument: in new_all) */
    int done;
    const char *venue;
    char symbol[TP_SYMBOL_LEN + 1];
};

struct plan {
    struct plan_item *items;
    size_t n;
    uint32_t new_all[MAX_ALL_SUBS];
    unsigned n_new_all;
};

/* Subscription ids of a reply, in request order, into the plan's items (or new_all). */
static int take_subscriptions(struct tp_client *c, struct plan *p, json_t *reply,
                              struct plan_item **asked, size_t n_asked)
{
    json_t *subs = json_object_get(reply, "subscriptions");
    size_t n = json_array_size(subs);
    if (asked[0]->id == TP_INSTRUMENT_NONE) {
        for (size_t k = 0; k < n && p->n_new_all < MAX_ALL_SUBS; k++)
            p->new_all[p->n_new_all++] = (uint32_t)json_integer_value(
                json_object_get(json_array_get(subs, k), "subscription"));
        return n > 0 ? 0 : control_error(c, -EPROTO, "daemon granted no subscription");
    }
    if (n != n_asked)
        return control_error(c, -EPROTO, "daemon answered %zu subscriptions for %zu symbols", n,
                             n_asked);
    for (size_t k = 0; k < n; k++)
        asked[k]->new_sub =
            (uint32_t)json_integer_value(json_object_get(json_array_get(subs, k), "subscription"));
    return 0;
}

#define PATTERNS_PER_REQUEST 32 /* the daemon's limit per subscribe request */

/*
 * Make the daemon's subscriptions match the plan, all or nothing: first every new subscription
 * (instruments of one venue with the same topics share a request), and only when all were
 * granted are the ones they replace removed; on a refusal the new ones are removed again.
 */
static int control_apply(struct tp_client *c, struct plan *p)
{
    int rc = 0;
    for (size_t i = 0; i < p->n && rc == 0; i++) {
        struct plan_item *first = &p->items[i];
        if (first->done || first->topics == 0)
            continue;
        struct plan_item *asked[PATTERNS_PER_REQUEST];
        size_t n_asked = 0;
        json_t *patterns = json_array();
        json_t *req = json_pack("{s:s, s:o}", "cmd", "subscribe", "topics",
                                daemon_topics_json(first->topics));
        if (first->id == TP_INSTRUMENT_NONE) {
            json_array_append_new(patterns, json_string("*"));
            asked[n_asked++] = first;
            first->done = 1;
        } else {
            json_object_set_new(req, "venue", json_string(first->venue));
            for (size_t j = i; j < p->n && n_asked < PATTERNS_PER_REQUEST; j++) {
                struct plan_item *it = &p->items[j];
                if (it->done || it->id == TP_INSTRUMENT_NONE || it->topics != first->topics ||
                    strcmp(it->venue, first->venue) != 0)
                    continue;
                json_array_append_new(patterns, json_string(it->symbol));
                asked[n_asked++] = it;
                it->done = 1;
            }
        }
        json_object_set_new(req, "instruments", patterns);
        json_t *reply;
        rc = control_call(c, req, &reply);
        if (rc == 0) {
            rc = take_subscriptions(c, p, reply, asked, n_asked);
            json_decref(reply);
        }
    }
    /* Undo (refused) or retire (granted) one side: the new subscriptions or the old ones. */
    for (size_t i = 0; i < p->n; i++) {
        const struct plan_item *it = &p->items[i];
        if (it->id == TP_INSTRUMENT_NONE) {
            const uint32_t *subs = rc != 0 ? p->new_all : c->all_subs;
            unsigned n = rc != 0 ? p->n_new_all : c->n_all_subs;
            for (unsigned k = 0; k < n; k++)
                control_unsubscribe(c, subs[k]);
            if (rc == 0) {
                memcpy(c->all_subs, p->new_all, sizeof(p->new_all));
                c->n_all_subs = p->n_new_all;
            }
            continue;
        }
        uint32_t retire = rc != 0 ? it->new_sub : c->sub_of[it->id];
        if (retire != 0)
            control_unsubscribe(c, retire);
        if (rc == 0)
            c->sub_of[it->id] = it->new_sub;
    }
    return rc;
}

static int plan_add(struct tp_client *c, struct plan *p, uint32_t id, uint32_t topics)
{
    struct plan_item *it = &p->items[p->n];
    memset(it, 0, sizeof(*it));
    it->id = id;
    it->topics = topics;
    if (id != TP_INSTRUMENT_NONE && topics != 0) {
        int rc = instrument_name(c, id, &it->venue, it->symbol);
        if (rc != 0)
            return rc;
    }
    p->n++;
    return 0;
}

/*
 * Ask the daemon for what tp_subscribe (add) or tp_unsubscribe of (ids, topics) will leave in the
 * local filter. ids == NULL is the "every instrument" subscription; removing topics from it also
 * removes them from every instrument. Instruments whose daemon topics stay the same and that
 * already have a daemon subscription need no request.
 */
static int control_update(struct tp_client *c, const uint32_t *ids, size_t n_ids, uint32_t topics,
                          int add)
{
    c->last_error[0] = '\0';
    if (c->link.fd < 0)
        return control_error(c, -ENOTCONN, "not connected to the daemon (%s)", c->control_path);
    size_t cap = (ids != NULL ? n_ids : c->instruments) + 1;
    struct plan p = {.items = calloc(cap, sizeof(struct plan_item))};
    uint8_t *seen = calloc(c->instruments + 1u, 1);
    int rc = p.items == NULL || seen == NULL ? control_error(c, -ENOMEM, "out of memory") : 0;
    size_t n = ids != NULL ? n_ids : (add ? 0 : c->instruments);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint32_t id = ids != NULL ? ids[i] : (uint32_t)i;
        if (seen[id])
            continue; /* an id given twice */
        seen[id] = 1;
        uint32_t now = c->interest[id];
        uint32_t next = add ? now | topics : now & ~topics;
        if (daemon_topics(c, next) != daemon_topics(c, now) || (next != 0 && c->sub_of[id] == 0))
            rc = plan_add(c, &p, id, daemon_topics(c, next));
    }
    if (rc == 0 && ids == NULL) {
        uint32_t now = c->all_interest;
        uint32_t next = add ? now | topics : now & ~topics;
        if (daemon_topics(c, next) != daemon_topics(c, now) || (next != 0 && c->n_all_subs == 0))
            rc = plan_add(c, &p, TP_INSTRUMENT_NONE, daemon_topics(c, next));
    }
    if (rc == 0)
        rc = control_apply(c, &p);
    free(seen);
    free(p.items);
    return rc;
}

/* After a reconnect: ask the new daemon for everything subscribed. */
static int control_resubscribe(struct tp_client *c)
{
    tp_ctl_link_close(&c->link);
    int rc = tp_ctl_link_open(&c->link, c->control_path, c->last_error, sizeof(c->last_error));
    if (rc != 0)
        return rc;
    for (uint32_t id = 0; id < c->instruments; id++)
        c->sub_of[id] = 0;
    c->n_all_subs = 0;
    return control_update(c, NULL, 0, 0, 0); /* removes nothing: asks for all that is missing */
}

/* A subscription the daemon revoked (a reload withdrew the entitlement): stop delivering it. */
static void on_control_event(void *ctx, json_t *event)
{
    struct tp_client *c = ctx;
    const char *what = json_string_value(json_object_get(event, "event"));
    if (what == NULL || strcmp(what, "revoked") != 0)
        return;
    uint32_t sub = (uint32_t)json_integer_value(json_object_get(event, "subscription"));
    const char *why = json_string_value(json_object_get(event, "reason"));
    int found = 0;
    for (unsigned k = 0; k < c->n_all_subs; k++) {
        if (c->all_subs[k] != sub)
            continue;
        c->all_subs[k] = c->all_subs[--c->n_all_subs];
        if (c->n_all_subs == 0)
            c->all_interest = 0;
        found = 1;
        break;
    }
    for (uint32_t id = 0; !found && sub != 0 && id < c->instruments; id++) {
        if (c->sub_of[id] != sub)
            continue;
        c->sub_of[id] = 0;
        c->interest[id] = 0;
        found = 1;
    }
    if (!found)
        return;
    for (uint32_t id = 0; id < c->instruments; id++) {
        if (c->books[id] != NULL && !(interest_of(c, id) & BOOK_TOPICS)) {
            free(c->books[id]);
            c->books[id] = NULL;
        }
    }
    recompute_any(c);
    c->revoked++;
    control_error(c, -EACCES, "revoked: %s", why != NULL ? why : "no reason given");
}

int tp_control_connect(struct tp_client *c, const char *path, unsigned flags)
{
    c->last_error[0] = '\0';
    if (c->link.fd >= 0)
        return control_error(c, -EISCONN, "already connected to %s", c->control_path);
    if (c->all_interest != 0 || c->any_interest != 0)
        return control_error(c, -EBUSY, "connect to the daemon before subscribing");
    if (path == NULL || path[0] == '\0' || strlen(path) >= sizeof(c->control_path))
        return control_error(c, -EINVAL, "bad control socket path");
    int rc = tp_ctl_link_open(&c->link, path, c->last_error, sizeof(c->last_error));
    if (rc != 0)
        return (flags & TP_CONTROL_FALLBACK) ? 1 : rc;
    snprintf(c->control_path, sizeof(c->control_path), "%s", path);
    return 0;
}

/* TICKPLANE_CONTROL_SOCKET at attach: connect, or fail the attach with the reason. */
static int control_from_environment(struct tp_client *c, char *err, size_t err_len)
{
    const char *path = getenv(TP_CONTROL_SOCKET_ENV);
    if (path == NULL || path[0] == '\0')
        return 0;
    const char *fallback = getenv(TP_CONTROL_FALLBACK_ENV);
    unsigned flags = fallback != NULL && strcmp(fallback, "1") == 0 ? TP_CONTROL_FALLBACK : 0;
    int rc = tp_control_connect(c, path, flags);
    if (rc < 0)
        return fail(err, err_len, rc, c->last_error);
    return 0;
}

int tp_control_connected(const struct tp_client *c)
{
    return c->link.fd >= 0;
}

int tp_control_check(struct tp_client *c)
{
    if (c->control_path[0] == '\0')
        return 0;
    int rc = tp_ctl_link_drain(&c->link);
    if (rc != 0)
        return control_error(c, rc, "connection to the daemon lost");
    int revoked = (int)c->revoked;
    c->revoked = 0;
    return revoked;
}

const char *tp_last_error(const struct tp_client *c)
{
    return c->last_error;
}

int tp_subscribe(struct tp_client *c, const uint32_t *ids, size_t n_ids, uint32_t topics)
{
    int rc = check_request(c, ids, n_ids, topics);
    if (rc != 0)
        return rc;
    if (c->control_path[0] != '\0') {
        rc = control_update(c, ids, n_ids, topics, 1);
        if (rc != 0)
            return rc;
    }
    if (ids == NULL)
        c->all_interest |= topics;
    for (size_t i = 0; ids != NULL && i < n_ids; i++)
        c->interest[ids[i]] |= topics;
    if (topics & BOOK_TOPICS) {
        for (uint32_t id = 0; id < c->instruments; id++)
            if ((interest_of(c, id) & BOOK_TOPICS) && ensure_book(c, id) != 0)
                return -ENOMEM;
    }
    recompute_any(c);
    return 0;
}

int tp_unsubscribe(struct tp_client *c, const uint32_t *ids, size_t n_ids, uint32_t topics)
{
    int rc = check_request(c, ids, n_ids, topics);
    if (rc != 0)
        return rc;
    if (c->control_path[0] != '\0') {
        rc = control_update(c, ids, n_ids, topics, 0);
        if (rc != 0)
            return rc;
    }
    if (ids == NULL) {
        c->all_interest &= ~topics;
        for (uint32_t id = 0; id < c->instruments; id++)
            c->interest[id] &= ~topics;
    }
    for (size_t i = 0; ids != NULL && i < n_ids; i++)
        c->interest[ids[i]] &= ~topics;
    for (uint32_t id = 0; id < c->instruments; id++) {
        if (c->books[id] != NULL && !(interest_of(c, id) & BOOK_TOPICS)) {
            free(c->books[id]);
            c->books[id] = NULL;
        }
    }
    recompute_any(c);
    return 0;
}

int tp_add_transformer(struct tp_client *c, const char *name, uint32_t source_topics,
                       tp_transform_fn fn, void *ctx)
{
    if (fn == NULL || source_topics == 0 || (source_topics & ~PUBLISHED_TOPICS) != 0)
        return -EINVAL;
    if (c->user_count >= USER_TOPICS)
        return -ENOSPC;
    struct user_transformer *u = &c->user[c->user_count];
    snprintf(u->name, sizeof(u->name), "%s", name != NULL ? name : "");
    u->sources = source_topics;
    u->fn = fn;
    u->ctx = ctx;
    int topic = (int)(TP_TOPIC_USER_FIRST + c->user_count++);
    recompute_feeds(c);
    return topic;
}

/* Reload the next watched book from the state table; deliver it to DEPTH/TOP subscribers. */
static int resync_step(struct tp_client *c, tp_event_fn fn, void *user)
{
    const struct tp_instrument_state *s = &c->scratch;
    while (c->resync_next < c->instruments && c->books[c->resync_next] == NULL)
        c->resync_next++;
    if (c->resync_next >= c->instruments) {
        c->resync_pending = 0;
        tp_counter_add(c->k[RC_RESYNCS], 1);
        return 0;
    }
    uint32_t id = c->resync_next;
    if (tp_state_read(c->bus.state, id, &c->scratch, STATE_TRIES) != 0)
        return 0; /* the writer is inside this entry: try again on the next step */
    c->resync_next++;
    struct tp_local_book *b = c->books[id];
    tp_local_book_load(b, s);
    int delivered = 0;
    struct tp_event ev;
    uint32_t want = interest_of(c, id);
    if (want & TP_TOPIC_BIT(TP_TOPIC_DEPTH)) {
        tp_view_resync_event(b, id, &ev);
        ev.topic = TP_TOPIC_DEPTH;
        ev.venue_seq = s->book.venue_seq;
        ev.venue_time_ns = s->book.venue_time_ns;
        ev.recv_tsc = s->book.recv_tsc;
        fn(user, &ev);
        delivered++;
    }
    struct tp_top_of_book top;
    tp_local_book_top(b, &top);
    if ((want & TP_TOPIC_BIT(TP_TOPIC_TOP)) && memcmp(&top, &b->last_top, sizeof(top)) != 0) {
        b->last_top = top;
        tp_view_resync_event(b, id, &ev);
        ev.topic = TP_TOPIC_TOP;
        ev.u.top = top;
        fn(user, &ev);
        delivered++;
    }
    return delivered;
}

/* Filter, decode, update the reader's book and run the views of one record. */
static int dispatch(struct tp_client *c, const struct tp_ring_record *rec, tp_event_fn fn,
                    void *user, uint64_t *filtered, uint64_t *malformed)
{
    uint32_t id = rec->instrument;
    uint32_t want;
    if (id == TP_INSTRUMENT_NONE) {
        want = c->any_interest;
    } else if (id < c->instruments) {
        want = interest_of(c, id);
    } else {
        (*malformed)++;
        return 0;
    }
    if (rec->topic >= RECORD_TOPICS) {
        (*malformed)++;
        return 0;
    }
    want &= c->feeds[rec->topic];
    if (want == 0) {
        (*filtered)++;
        return 0;
    }

    struct tp_record_view rv = {
        .type = rec->type,
        .topic = rec->topic,
        .instrument_id = id,
        .flags = rec->flags,
        .length = rec->length - TP_RING_RECORD_HEADER,
        .bus_sequence = rec->sequence,
        .payload = tp_ring_payload(rec),
    };
    /*
     * Field by field, not memset: zeroing the whole event (a rep stos) was the largest single
     * cost of the poll path. The decoder fills the union (and sbe, the venue fields); a raw
     * record gets a zeroed union for its transformers.
     */
    struct tp_event ev;
    ev.topic = 0;
    ev.instrument_id = id;
    ev.bus_sequence = rec->sequence;
    ev.flags = rec->flags;
    ev.sbe_length = 0;
    ev.sbe = NULL;
    ev.venue_seq = 0;
    ev.venue_time_ns = 0;
    ev.recv_tsc = 0;
    ev.book = (struct tp_book_view){0};
    int source = -1;
    if (rec->type != TP_REC_SBE)
        memset(&ev.u, 0, sizeof(ev.u));
    else {
        source = tp_decode_tpout(rv.payload, rv.length, &ev, c->changes, c->max_changes);
        if (source != (int)rec->topic) {
            (*malformed)++; /* undecodable, or tagged with another topic than it holds */
            return 0;
        }
    }

    struct tp_local_book *book = id < c->instruments ? c->books[id] : NULL;
    if (book != NULL && source == TP_TOPIC_DEPTH) {
        if (rec->sequence <= book->from_sequence) {
            want &= ~BOOK_TOPICS; /* already in the book loaded from the state table */
        } else {
            for (uint32_t i = 0; i < ev.u.depth.count; i++)
                if (tp_local_book_apply(book, &ev.u.depth.changes[i]) != 0)
                    (*malformed)++;
        }
    }

    int delivered = 0;
    struct tp_event out;
    struct tp_view_input in = {.decoded = &ev, .source_topic = source, .book = book};
    while (want != 0) {
        uint32_t t = (uint32_t)__builtin_ctz(want);
        want &= want - 1;
        if ((TP_TOPIC_BIT(t) & AS_DECODED_TOPICS) && source == (int)t) {
            ev.topic = t; /* the view would copy the decoded event unchanged */
            fn(user, &ev);
            delivered++;
            continue;
        }
        if (t < TP_TOPIC_USER_FIRST) {
            if (source < 0 || !tp_view_run(t, &in, &out))
                continue; /* built-in views read tpout messages only */
        } else {
            const struct user_transformer *u = &c->user[t - TP_TOPIC_USER_FIRST];
            out = ev;
            out.topic = t;
            if (!u->fn(u->ctx, &rv, &out))
                continue;
        }
        fn(user, &out);
        delivered++;
    }
    return delivered;
}

int tp_poll(struct tp_client *c, tp_event_fn fn, void *user, unsigned max_events)
{
    if (tp_bus_reader_stale(&c->bus))
        return -ESTALE;
    int delivered = 0;
    uint64_t records = 0, filtered = 0, malformed = 0;
    for (unsigned steps = 0; steps < max_events; steps++) {
        if (c->loss_pending) {
            struct tp_event ev;
            memset(&ev, 0, sizeof(ev));
            ev.topic = TP_TOPIC_LOSS;
            ev.instrument_id = TP_INSTRUMENT_NONE;
            ev.u.lost = c->loss_to_report;
            c->loss_pending = 0;
            fn(user, &ev);
            delivered++;
            continue;
        }
        if (c->resync_pending) {
            delivered += resync_step(c, fn, user);
            continue;
        }
        const struct tp_ring_record *rec;
        uint64_t lost = 0;
        int rc = tp_ring_read(&c->ring, &rec, &lost);
        if (rc == TP_RING_EMPTY)
            break;
        if (rc == TP_RING_LAPPED) {
            tp_counter_add(c->k[RC_LAPPED], 1);
            tp_counter_add(c->k[RC_LOST], lost);
            c->loss_to_report = lost;
            c->loss_pending = 1;
            start_resync(c);
            continue;
        }
        records++;
        delivered += dispatch(c, rec, fn, user, &filtered, &malformed);
    }
    if (records | filtered | malformed | (uint64_t)delivered) {
        tp_counter_add(c->k[RC_RECORDS], records);
        tp_counter_add(c->k[RC_FILTERED], filtered);
        tp_counter_add(c->k[RC_MALFORMED], malformed);
        tp_counter_add(c->k[RC_DELIVERED], (uint64_t)delivered);
    }
    return delivered;
}

int tp_read_state(const struct tp_client *c, uint32_t id, struct tp_instrument_state *out)
{
    return tp_state_read(c->bus.state, id, out, STATE_TRIES);
}

void tp_stats(const struct tp_client *c, struct tp_client_stats *out)
{
    out->records = tp_counter_get(c->k[RC_RECORDS]);
    out->delivered = tp_counter_get(c->k[RC_DELIVERED]);
    out->filtered = tp_counter_get(c->k[RC_FILTERED]);
    out->lapped = tp_counter_get(c->k[RC_LAPPED]);
    out->lost = tp_counter_get(c->k[RC_LOST]);
    out->resyncs = tp_counter_get(c->k[RC_RESYNCS]);
    out->malformed = tp_counter_get(c->k[RC_MALFORMED]) + c->ring.malformed;
    out->lag = tp_ring_lag(&c->ring);
}

int tp_check_writer(const struct tp_client *c)
{
    int rc = tp_seg_check_writer(&c->bus.ring_seg);
    return rc != 0 ? rc : tp_seg_check_writer(&c->bus.state_seg);
}
