/*
 * libtickplane: attach, subscribe, poll, read state (see tickplane/tickplane.h).
 *
 * The poll path reads the ring into private memory, filters by (instrument x topic) with one
 * array lookup, decodes the tpout message once, keeps the reader's books, and runs the views of
 * the topics the record feeds. No syscalls, locks or allocation: everything is sized at attach
 * and subscribe time. Subscriptions through the daemon are in remote.c, by pattern in patterns.c.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_internal.h"
#include "views/decode.h"
#include "views/views.h"

#define DEFAULT_BATCH 65536u
#define AS_DECODED_TOPICS                                                                          \
    (TP_TOPIC_BIT(TP_TOPIC_TRADES) | TP_TOPIC_BIT(TP_TOPIC_ORDERS) |                               \
     TP_TOPIC_BIT(TP_TOPIC_STATUS) | TP_TOPIC_BIT(TP_TOPIC_DEFINITIONS))

static const char *const counter_names[RC_COUNT] = {
    "reader.records", "reader.delivered", "reader.filtered",  "reader.lapped",
    "reader.lost",    "reader.resyncs",   "reader.malformed", "reader.lag",
};

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
        uint32_t carried = tp_view_record_topics(src), mask = 0;
        for (uint32_t t = 0; t < TP_TOPIC_USER_FIRST; t++)
            if (tp_view_sources(t) & carried)
                mask |= TP_TOPIC_BIT(t);
        for (uint32_t u = 0; u < c->user_count; u++)
            if (c->user[u].sources & carried)
                mask |= TP_TOPIC_BIT(TP_TOPIC_USER_FIRST + u);
        c->feeds[src] = mask;
    }
}

void tp_cl_recompute_any(struct tp_client *c)
{
    uint32_t any = c->all_interest;
    for (uint32_t id = 0; id < c->instruments; id++)
        any |= c->interest[id];
    for (unsigned k = 0; k < MAX_PATTERNS; k++)
        any |= c->patterns[k].topics; /* their channel-wide events, before any symbol matched */
    c->any_interest = any;
}

void tp_cl_queue_initial(struct tp_client *c, uint32_t id, uint32_t gained)
{
    if ((gained & INITIAL_TOPICS) == 0)
        return;
    c->slots[id].initial |= gained & INITIAL_TOPICS;
    if (!c->initial_pending || id < c->initial_next)
        c->initial_next = id;
    c->initial_pending = 1;
}

void tp_cl_set_interest(struct tp_client *c, uint32_t id)
{
    c->interest[id] = c->slots[id].own | c->slots[id].from_patterns;
}

/* This reader's counters: in its own segment for side-cars, else in private memory. */
static int open_counters(struct tp_client *c, const struct tp_client_options *opt)
{
    size_t size = tp_counters_memsize(RC_COUNT);
    void *mem = NULL;
    if (!opt->no_reader_segment) {
        char part[32], path[256], err[128];
        snprintf(part, sizeof(part), "reader.%d", (int)getpid());
        /* Killed readers' segments go at the next attach (and at the daemon's sweep). */
        tp_bus_sweep_readers(c->dir, c->instance);
        struct tp_seg_create_params p = {
            .path = path,
            .instance = c->instance,
            .kind = TP_SEG_COUNTERS,
            .data_size = size,
            .mode = opt->reader_mode != 0 ? (mode_t)opt->reader_mode : 0640,
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

/* The heartbeat timeout the strategy chose: the option, else the environment's; 0: none. */
static uint64_t chosen_heartbeat_timeout_ns(const struct tp_client_options *opt)
{
    unsigned long ms = opt->heartbeat_timeout_ms;
    const char *env = getenv(TP_HEARTBEAT_TIMEOUT_ENV);
    if (ms == 0 && env != NULL)
        ms = strtoul(env, NULL, 10);
    return (uint64_t)ms * 1000000u;
}

/* The strategy's choice, else what the daemon's segments say (bus.heartbeat_timeout_ms), else
 * the default. */
static uint64_t heartbeat_timeout_ns(const struct tp_client *c)
{
    uint32_t writer_ms = c->bus.state_seg.hdr->heartbeat_timeout_ms;
    return c->heartbeat_chosen_ns ? c->heartbeat_chosen_ns
           : writer_ms != 0       ? (uint64_t)writer_ms * 1000000u
                                  : (uint64_t)TP_HEARTBEAT_TIMEOUT_MS * 1000000u;
}

/* The oldest heartbeat among the instance's segments (ns ago; 0: fresh or none kept). */
static uint64_t oldest_heartbeat(const struct tp_client *c, uint64_t now)
{
    uint64_t oldest = tp_seg_heartbeat_age(&c->bus.state_seg, now);
    uint64_t age = tp_seg_heartbeat_age(&c->bus.counters_seg, now);
    oldest = age > oldest ? age : oldest;
    for (unsigned k = 0; k < c->bus.n_rings; k++) {
        age = tp_seg_heartbeat_age(tp_bus_reader_ring_seg(&c->bus, k), now);
        oldest = age > oldest ? age : oldest;
    }
    return oldest;
}

/* Map the instance and size everything that depends on it. */
static int map_instance(struct tp_client *c, char *err, size_t err_len)
{
    int rc = tp_bus_reader_open(&c->bus, c->dir, c->instance, err, err_len);
    if (rc != 0)
        return rc;
    c->heartbeat_timeout_ns = heartbeat_timeout_ns(c);
    /* Still marked live, but its writer stopped beating: a killed daemon, not a quiet market. */
    uint64_t age = oldest_heartbeat(c, tp_seg_clock_ns());
    if (age > c->heartbeat_timeout_ns) {
        if (err != NULL && err_len > 0)
            snprintf(err, err_len,
                     "instance %s: the daemon (pid %u) last beat %llu ms ago, more than the %llu "
                     "ms allowed: it was killed or is hung; its segments stay until a new daemon "
                     "replaces them",
                     c->instance, c->bus.state_seg.hdr->writer_pid,
                     (unsigned long long)(age / 1000000u),
                     (unsigned long long)(c->heartbeat_timeout_ns / 1000000u));
        return -EOWNERDEAD;
    }
    uint32_t n = c->bus.state->instruments;
    for (uint32_t id = n; id < c->instruments; id++) {
        free(c->books[id]); /* a restarted writer with fewer instruments */
        c->books[id] = NULL;
    }
    if (n != c->instruments) {
        uint32_t *interest = realloc(c->interest, n * sizeof(*interest));
        struct tp_local_book **books = realloc(c->books, n * sizeof(*books));
        struct instrument_slot *slots = realloc(c->slots, n * sizeof(*slots));
        if (interest != NULL)
            c->interest = interest;
        if (books != NULL)
            c->books = books;
        if (slots != NULL)
            c->slots = slots;
        if (interest == NULL || books == NULL || slots == NULL)
            return fail(err, err_len, -ENOMEM, "out of memory");
        for (uint32_t id = c->instruments; id < n; id++) {
            c->interest[id] = 0;
            c->books[id] = NULL;
            memset(&c->slots[id], 0, sizeof(c->slots[id]));
        }
        c->instruments = n;
    }
    /* The rings share their geometry (one writer per data lcore, sized alike). */
    uint32_t max_record = 0;
    for (unsigned k = 0; k < c->bus.n_rings; k++) {
        const struct tp_ring_shared *ring = tp_bus_reader_ring(&c->bus, k);
        if (ring->max_record > max_record)
            max_record = ring->max_record;
    }
    uint32_t need = (max_record + 7u) & ~7u;
    if (need > c->batch_size) {
        for (unsigned k = 0; k < TP_BUS_MAX_RINGS; k++) {
            free(c->batches[k]);
            c->batches[k] = NULL;
        }
        c->batch_size = need;
    }
    free(c->changes);
    c->max_changes = max_record / 24u + 1u;
    c->changes = calloc(c->max_changes, sizeof(*c->changes));
    if (c->changes == NULL)
        return fail(err, err_len, -ENOMEM, "out of memory");
    /* A restarted writer may have fewer rings: losses of rings it no longer has are moot. */
    c->n_rings = c->bus.n_rings;
    c->current_ring = 0;
    c->loss_pending = 0;
    for (unsigned k = 0; k < TP_BUS_MAX_RINGS; k++) {
        if (k >= c->n_rings)
            c->loss_to_report[k] = 0;
        c->loss_pending |= c->loss_to_report[k] != 0;
    }
    for (unsigned k = 0; k < c->n_rings; k++) {
        if (c->batches[k] == NULL)
            c->batches[k] = aligned_alloc(64, (c->batch_size + 63u) & ~63u);
        if (c->batches[k] == NULL)
            return fail(err, err_len, -ENOMEM, "out of memory");
        int rc = tp_ring_reader_init(&c->rings[k], tp_bus_reader_ring(&c->bus, k), c->batches[k],
                                     c->batch_size);
        if (rc != 0)
            return fail(err, err_len, rc, "bad ring");
    }
    return 0;
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
    /* The config's defaults; a connection to the daemon learns the names it was given. */
    strcpy(c->venue_names[0], "CME");
    strcpy(c->venue_names[1], "NASDAQ");
    strcpy(c->venue_names[2], "EUREX");
    c->link.on_event = tp_cl_on_control_event;
    c->link.event_ctx = c;
    snprintf(c->instance, sizeof(c->instance), "%s", instance);
    const char *dir = opt->shm_dir != NULL ? opt->shm_dir : TP_BUS_DEFAULT_DIR;
    if (strlen(dir) >= sizeof(c->dir)) {
        free(c);
        return fail(err, err_len, -ENAMETOOLONG, "shm_dir too long");
    }
    snprintf(c->dir, sizeof(c->dir), "%s", dir);
    c->heartbeat_chosen_ns = chosen_heartbeat_timeout_ns(opt);
    uint32_t batch = opt->batch_bytes != 0 ? opt->batch_bytes : DEFAULT_BATCH;
    c->batch_size = (batch + 7u) & ~7u;
    int rc = map_instance(c, err, err_len);
    if (rc == 0)
        rc = open_counters(c, opt);
    if (rc == 0)
        rc = tp_cl_control_from_environment(c, err, err_len);
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
    free(c->slots);
    tp_cl_free_patterns(c);
    free(c->changes);
    for (unsigned k = 0; k < TP_BUS_MAX_RINGS; k++)
        free(c->batches[k]);
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
        rc = tp_cl_remote_resubscribe(c);
        if (rc != 0)
            return fail(err, err_len, rc, c->last_error);
    }
    tp_cl_rematch_patterns(c, 0); /* the new writer may have defined other symbols */
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

/* The venue names the data plane matches subscriptions with (tpout Venue numbering). */
const char *tp_cl_venue_name(const struct tp_client *c, uint8_t venue)
{
    return venue < VENUE_CODES ? c->venue_names[venue] : NULL;
}

int tp_cl_protocol_venue(const char *protocol)
{
    static const char *const protocols[VENUE_CODES] = {"mdp3", "itch", "eobi"};
    for (int v = 0; v < (int)VENUE_CODES; v++)
        if (strcmp(protocols[v], protocol) == 0)
            return v;
    return -1;
}

int tp_cl_venue_code(const struct tp_client *c, const char *name)
{
    for (uint8_t v = 0; v < VENUE_CODES; v++)
        if (strcmp(c->venue_names[v], name) == 0)
            return v;
    return -1;
}

int tp_instrument_info(const struct tp_client *c, uint32_t id, struct tp_instrument_info *out)
{
    if (id >= c->instruments)
        return -ERANGE;
    struct tp_instrument_state s;
    if (tp_state_read(c->bus.state, id, &s, STATE_TRIES) != 0)
        return -EAGAIN;
    const char *venue;
    int rc = tp_cl_symbol_text(c, s.book.symbol, s.book.venue, out->symbol, &venue);
    if (rc != 0)
        return rc;
    out->instrument_id = id;
    out->venue = s.book.venue;
    out->security_kind = s.book.security_kind;
    out->trading_status = s.book.trading_status;
    out->flags = s.book.flags;
    snprintf(out->venue_name, sizeof(out->venue_name), "%s", venue);
    out->tick_size = s.book.tick_size;
    return 0;
}

int tp_symbol(const struct tp_client *c, uint32_t id, char symbol[TP_SYMBOL_LEN + 1])
{
    struct tp_instrument_info info;
    int rc = tp_instrument_info(c, id, &info);
    if (rc == 0)
        memcpy(symbol, info.symbol, sizeof(info.symbol));
    return rc;
}

int tp_cl_symbol(struct tp_client *c, uint32_t id, char symbol[TP_SYMBOL_LEN + 1],
                 const char **venue)
{
    if (tp_state_read(c->bus.state, id, &c->scratch, STATE_TRIES) != 0)
        return -EAGAIN;
    return tp_cl_symbol_text(c, c->scratch.book.symbol, c->scratch.book.venue, symbol, venue);
}

int tp_cl_symbol_text(const struct tp_client *c, const char raw[TP_SYMBOL_LEN], uint8_t venue_code,
                      char symbol[TP_SYMBOL_LEN + 1], const char **venue)
{
    size_t len = 0;
    while (len < TP_SYMBOL_LEN && raw[len] != '\0')
        len++;
    while (len > 0 && raw[len - 1] == ' ')
        len--; /* ITCH pads with spaces */
    *venue = tp_cl_venue_name(c, venue_code);
    if (len == 0 || *venue == NULL)
        return -ENOENT;
    memcpy(symbol, raw, len);
    symbol[len] = '\0';
    return 0;
}

/* Allocate and load the book of an instrument newly watched at DEPTH or TOP. */
int tp_cl_ensure_book(struct tp_client *c, uint32_t id)
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

/* Books of instruments no longer watched at DEPTH or TOP are freed. */
void tp_cl_drop_unwatched_books(struct tp_client *c)
{
    for (uint32_t id = 0; id < c->instruments; id++) {
        if (c->books[id] != NULL && !(interest_of(c, id) & BOOK_TOPICS)) {
            free(c->books[id]);
            c->books[id] = NULL;
        }
    }
}

int tp_cl_valid_topics(const struct tp_client *c, uint32_t topics)
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
    if (!tp_cl_valid_topics(c, topics))
        return -EINVAL;
    for (size_t i = 0; ids != NULL && i < n_ids; i++)
        if (ids[i] >= c->instruments)
            return -ERANGE;
    return 0;
}

int tp_subscribe(struct tp_client *c, const uint32_t *ids, size_t n_ids, uint32_t topics)
{
    int rc = check_request(c, ids, n_ids, topics);
    if (rc != 0)
        return rc;
    if (c->control_path[0] != '\0') {
        rc = tp_cl_remote_update(c, ids, n_ids, topics, 1);
        if (rc != 0)
            return rc;
    }
    if (ids == NULL) {
        uint32_t gained = topics & ~c->all_interest;
        c->all_interest |= topics;
        for (uint32_t id = 0; id < c->instruments; id++)
            tp_cl_queue_initial(c, id, gained & ~c->interest[id]);
    }
    for (size_t i = 0; ids != NULL && i < n_ids; i++) {
        uint32_t before = interest_of(c, ids[i]);
        c->slots[ids[i]].own |= topics;
        tp_cl_set_interest(c, ids[i]);
        tp_cl_queue_initial(c, ids[i], interest_of(c, ids[i]) & ~before);
    }
    if (topics & BOOK_TOPICS) {
        for (uint32_t id = 0; id < c->instruments; id++)
            if ((interest_of(c, id) & BOOK_TOPICS) && tp_cl_ensure_book(c, id) != 0)
                return -ENOMEM;
    }
    tp_cl_recompute_any(c);
    return 0;
}

int tp_unsubscribe(struct tp_client *c, const uint32_t *ids, size_t n_ids, uint32_t topics)
{
    int rc = check_request(c, ids, n_ids, topics);
    if (rc != 0)
        return rc;
    if (c->control_path[0] != '\0') {
        rc = tp_cl_remote_update(c, ids, n_ids, topics, 0);
        if (rc != 0)
            return rc;
    }
    if (ids == NULL) {
        c->all_interest &= ~topics;
        for (uint32_t id = 0; id < c->instruments; id++) {
            c->slots[id].own &= ~topics;
            tp_cl_set_interest(c, id);
        }
    }
    for (size_t i = 0; ids != NULL && i < n_ids; i++) {
        c->slots[ids[i]].own &= ~topics;
        tp_cl_set_interest(c, ids[i]);
    }
    tp_cl_drop_unwatched_books(c);
    tp_cl_recompute_any(c);
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

/*
 * Deliver the current state of the next instrument with newly subscribed topics: the reader's
 * book (loaded from the state table when it was subscribed, and kept by the records since) for
 * DEPTH and TOP, the state table's last trade for TRADES.
 */
static int initial_step(struct tp_client *c, tp_event_fn fn, void *user)
{
    const struct tp_instrument_state *s = &c->scratch;
    while (c->initial_next < c->instruments && c->slots[c->initial_next].initial == 0)
        c->initial_next++;
    if (c->initial_next >= c->instruments) {
        c->initial_pending = 0;
        return 0;
    }
    uint32_t id = c->initial_next;
    if (tp_state_read(c->bus.state, id, &c->scratch, STATE_TRIES) != 0)
        return 0; /* the writer is inside this entry: try again on the next step */
    uint32_t want = c->slots[id].initial & interest_of(c, id);
    c->slots[id].initial = 0;
    struct tp_local_book *b = c->books[id];
    uint32_t flags =
        TP_EVENT_F_SNAPSHOT | TP_EVENT_F_RESYNC | TP_EVENT_F_END_OF_EVENT |
        (s->book.flags & (TP_EVENT_F_STALE | TP_EVENT_F_RECOVERING | TP_EVENT_F_ORDERS_INCOMPLETE));
    struct tp_event ev;
    int delivered = 0;
    for (uint32_t topic = TP_TOPIC_DEPTH; topic <= TP_TOPIC_TRADES; topic++) {
        if (!(want & TP_TOPIC_BIT(topic)) || (topic != TP_TOPIC_TRADES && b == NULL))
            continue;
        if (topic == TP_TOPIC_TRADES &&
            (s->book.last_trade.price == TP_PRICE_NULL || s->book.last_trade.qty == 0))
            continue; /* nothing traded yet */
        if (b != NULL)
            tp_view_resync_event(b, id, &ev);
        else
            memset(&ev, 0, sizeof(ev));
        ev.topic = topic;
        ev.instrument_id = id;
        ev.flags = flags;
        ev.venue_seq = s->book.venue_seq;
        ev.venue_time_ns = s->book.venue_time_ns;
        ev.recv_tsc = s->book.recv_tsc;
        if (topic == TP_TOPIC_TOP) {
            tp_local_book_top(b, &b->last_top);
            ev.u.top = b->last_top;
        } else if (topic == TP_TOPIC_TRADES) {
            const struct tp_last_trade *t = &s->book.last_trade;
            ev.venue_time_ns = t->venue_time_ns;
            ev.u.trade = (struct tp_trade_event){.price = t->price,
                                                 .qty = t->qty,
                                                 .trade_id = t->trade_id,
                                                 .orders = (int32_t)TP_COUNT_NULL,
                                                 .aggressor = t->aggressor};
        }
        fn(user, &ev);
        delivered++;
    }
    return delivered;
}

/*
 * Update the reader's book and run the views of the topics in `want` for a decoded record (or a
 * raw one: source < 0). Returns the events delivered.
 */
static int run_views(struct tp_client *c, const struct tp_ring_record *rec, struct tp_event *ev,
                     int source, uint32_t want, tp_event_fn fn, void *user, uint64_t *malformed)
{
    /* The reader's book is the outright book, as in the state table: an implied update (MDP3)
     * is delivered as a DEPTH event but leaves it alone. Only DEPTH and TOP look at it. */
    uint32_t id = rec->instrument;
    struct tp_local_book *book = NULL;
    if (id < c->instruments && (source == TP_TOPIC_DEPTH || (want & BOOK_TOPICS)))
        book = c->books[id];
    if (book != NULL && source == TP_TOPIC_DEPTH && !(rec->flags & TP_EVENT_F_IMPLIED)) {
        if (rec->sequence <= book->from_sequence) {
            want &= ~BOOK_TOPICS; /* already in the book loaded from the state table */
        } else {
            for (uint32_t i = 0; i < ev->u.depth.count; i++)
                if (tp_local_book_apply(book, &ev->u.depth.changes[i]) != 0)
                    (*malformed)++;
        }
    }

    int delivered = 0;
    struct tp_event out;
    struct tp_view_input in = {.decoded = ev, .source_topic = source, .book = book};
    while (want != 0) {
        uint32_t t = (uint32_t)__builtin_ctz(want);
        want &= want - 1;
        if ((TP_TOPIC_BIT(t) & AS_DECODED_TOPICS) && source == (int)t) {
            ev->topic = t; /* the view would copy the decoded event unchanged */
            fn(user, ev);
            delivered++;
            continue;
        }
        if (t < TP_TOPIC_USER_FIRST) {
            if (source < 0 || !tp_view_run(t, &in, &out))
                continue; /* built-in views read tpout messages only */
        } else {
            const struct user_transformer *u = &c->user[t - TP_TOPIC_USER_FIRST];
            struct tp_record_view rv = {
                .type = rec->type,
                .topic = rec->topic,
                .instrument_id = id,
                .flags = rec->flags,
                .length = rec->length - TP_RING_RECORD_HEADER,
                .bus_sequence = rec->sequence,
                .payload = tp_ring_payload(rec),
            };
            out = *ev;
            out.topic = t;
            if (!u->fn(u->ctx, &rv, &out))
                continue;
        }
        fn(user, &out);
        delivered++;
    }
    return delivered;
}

/*
 * An OrderEvent with the level changes it made: the ORDERS event first, then DEPTH, TOP and the
 * transformers from the level changes, as when the order and its levels came as two records.
 * The order part is not the venue event's last message (its levels follow), so it never carries
 * endOfEvent, as the separate OrderEvent never did.
 */
static int deliver_order_depth(struct tp_client *c, const struct tp_ring_record *rec,
                               struct tp_event *ev, uint32_t n_levels, uint32_t want,
                               tp_event_fn fn, void *user, uint64_t *malformed)
{
    int delivered = 0;
    uint32_t flags = ev->flags;
    if (want & TP_TOPIC_BIT(TP_TOPIC_ORDERS)) {
        ev->topic = TP_TOPIC_ORDERS;
        ev->flags = flags & ~TP_EVENT_F_END_OF_EVENT;
        fn(user, ev);
        delivered++;
        want &= ~TP_TOPIC_BIT(TP_TOPIC_ORDERS);
    }
    if (want == 0)
        return delivered;
    ev->flags = flags;
    ev->u.depth.changes = c->changes;
    ev->u.depth.count = n_levels;
    return delivered + run_views(c, rec, ev, TP_TOPIC_DEPTH, want, fn, user, malformed);
}

/* Filter, decode and deliver one record. */
static int dispatch(struct tp_client *c, const struct tp_ring_record *rec, tp_event_fn fn,
                    void *user, uint64_t *filtered, uint64_t *malformed)
{
    uint32_t id = rec->instrument;
    uint32_t want;
    if (id == TP_INSTRUMENT_NONE) {
        want = c->any_interest;
    } else if (id < c->instruments) {
        if (c->n_patterns != 0 && !c->slots[id].pattern_checked)
            tp_cl_match_new_instrument(c, rec); /* defined since: rare, no allocation */
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

    /*
     * Field by field, not memset: zeroing the whole event (a rep stos) was the largest single
     * cost of the poll path. The decoder fills the union member of its topic (and sbe, the venue
     * fields); a raw record gets a zeroed union for its transformers.
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
    if (rec->type != TP_REC_SBE) {
        memset(&ev.u, 0, sizeof(ev.u));
        return run_views(c, rec, &ev, -1, want, fn, user, malformed);
    }
    uint32_t n_levels = 0;
    int source = tp_decode_tpout(tp_ring_payload(rec), rec->length - TP_RING_RECORD_HEADER, &ev,
                                 c->changes, c->max_changes, &n_levels);
    if (source != (int)rec->topic) {
        (*malformed)++; /* undecodable, or tagged with another topic than it holds */
        return 0;
    }
    if (source == TP_RECORD_ORDER_DEPTH)
        return deliver_order_depth(c, rec, &ev, n_levels, want, fn, user, malformed);
    /* The common case, a record that feeds only its own topic and that topic takes the event as
     * decoded (a trade to TRADES): no book, no views. */
    if (want == TP_TOPIC_BIT(source) && (want & AS_DECODED_TOPICS)) {
        ev.topic = (uint32_t)source;
        fn(user, &ev);
        return 1;
    }
    return run_views(c, rec, &ev, source, want, fn, user, malformed);
}

/* One TP_TOPIC_LOSS event for the lowest ring with a loss not yet told. */
static void deliver_loss(struct tp_client *c, tp_event_fn fn, void *user)
{
    unsigned k = 0;
    while (k + 1 < c->n_rings && c->loss_to_report[k] == 0)
        k++;
    struct tp_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.topic = TP_TOPIC_LOSS;
    ev.instrument_id = TP_INSTRUMENT_NONE;
    ev.venue_seq = k;
    ev.u.lost = c->loss_to_report[k];
    c->loss_to_report[k] = 0;
    c->loss_pending = 0;
    for (unsigned r = 0; r < c->n_rings; r++)
        c->loss_pending |= c->loss_to_report[r] != 0;
    fn(user, &ev);
}

/*
 * Whether the writer closed or replaced one of the segments: the state word of each, loaded in
 * line (tp_bus_reader_stale does the same out of line, and this runs on every poll).
 */
static inline bool writer_gone(const struct tp_client *c)
{
    int gone = tp_seg_writer_gone(&c->bus.ring_seg) | tp_seg_writer_gone(&c->bus.state_seg);
    for (unsigned k = 1; k < c->bus.n_rings; k++)
        gone |= tp_seg_writer_gone(&c->bus.more_ring_segs[k - 1]);
    return gone != 0;
}

/* Ring k lapped this reader: count it, keep the loss for a LOSS event, reload the books. */
static void on_lap(struct tp_client *c, unsigned k, uint64_t lost)
{
    tp_counter_add(c->k[RC_LAPPED], 1);
    tp_counter_add(c->k[RC_LOST], lost);
    c->ring_stats[k].lapped++;
    c->ring_stats[k].lost += lost;
    c->loss_to_report[k] += lost;
    c->loss_pending = 1;
    start_resync(c);
}

int tp_poll(struct tp_client *c, tp_event_fn fn, void *user, unsigned max_events)
{
    /* A closed writer's last records are complete: they are delivered before -ESTALE. */
    bool stale = writer_gone(c), drained = false;
    int delivered = 0;
    uint64_t records = 0, filtered = 0, malformed = 0;
    unsigned k = c->current_ring; /* the ring read until it is empty, then the next */
    unsigned empty = 0;           /* rings found empty in a row */
    for (unsigned steps = 0; steps < max_events;) {
        if (__builtin_expect(c->loss_pending | c->resync_pending | c->initial_pending, 0)) {
            if (c->loss_pending) {
                deliver_loss(c, fn, user);
                delivered++;
            } else if (c->resync_pending) {
                delivered += resync_step(c, fn, user);
            } else {
                delivered += initial_step(c, fn, user);
            }
            steps++;
            continue;
        }
        /* An instrument lives on one ring, so reading each ring until it is empty keeps the
         * order of its events. With one ring, an empty read ends the poll at once. */
        const struct tp_ring_record *rec;
        uint64_t lost = 0;
        int rc = tp_ring_read(&c->rings[k], &rec, &lost);
        if (__builtin_expect(rc == TP_RING_RECORD, 1)) {
            empty = 0;
            steps++;
            records++;
            c->ring_stats[k].records++;
            delivered += dispatch(c, rec, fn, user, &filtered, &malformed);
        } else if (rc == TP_RING_EMPTY) {
            if (++empty >= c->n_rings) {
                drained = true;
                break;
            }
            k = k + 1 < c->n_rings ? k + 1 : 0;
        } else {
            empty = 0;
            steps++;
            on_lap(c, k, lost);
        }
    }
    c->current_ring = k;
    if (records | filtered | malformed | (uint64_t)delivered) {
        tp_counter_add(c->k[RC_RECORDS], records);
        tp_counter_add(c->k[RC_FILTERED], filtered);
        tp_counter_add(c->k[RC_MALFORMED], malformed);
        tp_counter_add(c->k[RC_DELIVERED], (uint64_t)delivered);
    }
    /* Side-cars (the daemon's metrics) see the lag as of this poll. */
    if (records != 0 || tp_counter_get(c->k[RC_LAG]) != 0) {
        uint64_t lag = 0;
        for (unsigned r = 0; r < c->n_rings; r++)
            lag += tp_ring_lag(&c->rings[r]);
        tp_counter_set(c->k[RC_LAG], lag);
    }
    if (stale && drained && records == 0 && delivered == 0)
        return -ESTALE;
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
    out->malformed = tp_counter_get(c->k[RC_MALFORMED]);
    out->lag = 0;
    for (unsigned k = 0; k < c->n_rings; k++) {
        out->malformed += c->rings[k].malformed;
        out->lag += tp_ring_lag(&c->rings[k]);
    }
}

unsigned tp_ring_count(const struct tp_client *c)
{
    return c->n_rings;
}

int tp_ring_stats(const struct tp_client *c, unsigned ring, struct tp_ring_stats *out)
{
    if (ring >= c->n_rings)
        return -ERANGE;
    *out = c->ring_stats[ring];
    out->lag = tp_ring_lag(&c->rings[ring]);
    return 0;
}

int tp_check_heartbeat(const struct tp_client *c)
{
    const struct tp_seg *state = &c->bus.state_seg;
    if (tp_seg_writer_gone(state))
        return -ESTALE;
    return tp_seg_heartbeat_stale(state, tp_seg_clock_ns(), c->heartbeat_timeout_ns) ? -EOWNERDEAD
                                                                                     : 0;
}

/* Why tp_seg_check_writer said rc of seg, in tp_last_error. */
static int writer_error(struct tp_client *c, const struct tp_seg *seg, int rc)
{
    unsigned pid = seg->hdr->writer_pid;
    if (rc == -EOWNERDEAD)
        return tp_cl_error(
            c, rc,
            "%s: the daemon (pid %u) last beat %llu ms ago, more than the %llu ms "
            "allowed: it was killed or is hung",
            seg->path, pid,
            (unsigned long long)(tp_seg_heartbeat_age(seg, tp_seg_clock_ns()) / 1000000u),
            (unsigned long long)(c->heartbeat_timeout_ns / 1000000u));
    if (rc == -ESRCH)
        return tp_cl_error(c, rc, "%s: the writer (pid %u) is gone", seg->path, pid);
    return tp_cl_error(c, rc, "%s: the writer closed or replaced it, or it was removed", seg->path);
}

int tp_check_writer(struct tp_client *c)
{
    for (unsigned k = 0; k <= c->bus.n_rings; k++) {
        const struct tp_seg *seg =
            k < c->bus.n_rings ? tp_bus_reader_ring_seg(&c->bus, k) : &c->bus.state_seg;
        int rc = tp_seg_check_writer(seg, c->heartbeat_timeout_ns);
        if (rc != 0)
            return writer_error(c, seg, rc);
    }
    return 0;
}
