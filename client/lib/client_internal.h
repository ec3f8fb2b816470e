/*
 * Inside libtickplane: the client object shared by the poll path and local filter (client.c),
 * the daemon's side of subscriptions (remote.c) and pattern subscriptions (patterns.c). Not a
 * public interface: strategies see only tickplane/tickplane.h.
 */
#ifndef TP_CLIENT_INTERNAL_H
#define TP_CLIENT_INTERNAL_H

#include <stdint.h>

#include "bus/bus.h"
#include "control.h"
#include "tickplane/tickplane.h"
#include "views/local_book.h"

#define USER_TOPICS      (TP_TOPIC_MAX - TP_TOPIC_USER_FIRST)
#define RECORD_TOPICS    8u /* record topics the writer may tag (DEPTH..DEFINITIONS, room to grow) */
#define STATE_TRIES      100000u
#define BOOK_TOPICS      (TP_TOPIC_BIT(TP_TOPIC_DEPTH) | TP_TOPIC_BIT(TP_TOPIC_TOP))
#define INITIAL_TOPICS   (BOOK_TOPICS | TP_TOPIC_BIT(TP_TOPIC_TRADES)) /* start with the state */
#define PUBLISHED_TOPICS 0x3fu /* DEPTH..DEFINITIONS can be tagged on records */
#define MAX_VENUE_SUBS   16u   /* daemon subscriptions of one request without a venue */
#define MAX_PATTERNS     32u   /* pattern subscriptions of one client */
#define VENUE_NAME_MAX   32u
#define PATTERN_MAX      64u /* the control socket's limit, with the terminator */

enum reader_counter {
    RC_RECORDS,
    RC_DELIVERED,
    RC_FILTERED,
    RC_LAPPED,
    RC_LOST,
    RC_RESYNCS,
    RC_MALFORMED,
    RC_LAG, /* a gauge: records published but not read, at the last poll that read some */
    RC_COUNT
};

struct user_transformer {
    char name[32];
    uint32_t sources;
    tp_transform_fn fn;
    void *ctx;
};

/* Subscription bookkeeping of one instrument (off the poll path: interest[] is what it reads). */
struct instrument_slot {
    uint32_t own;            /* topics subscribed by id (tp_subscribe) */
    uint32_t from_patterns;  /* topics of the pattern subscriptions its symbol matches */
    uint32_t sub_of;         /* the daemon's subscription for `own`, 0: none */
    uint8_t pattern_checked; /* its symbol was matched against the current patterns */
    uint32_t initial;        /* newly subscribed topics whose current state is still to deliver */
};

/* One tp_subscribe_pattern. Slot free when topics == 0. */
struct pattern_sub {
    char venue[VENUE_NAME_MAX]; /* "": every venue */
    char pattern[PATTERN_MAX];
    uint32_t topics;
    uint32_t venues; /* bit per venue code it covers: those asked, or those the daemon granted */
    uint32_t daemon_subs[MAX_VENUE_SUBS];
    uint8_t daemon_venue[MAX_VENUE_SUBS]; /* venue code of each daemon subscription */
    unsigned n_daemon_subs;
};

/* tpout Venue codes: 0 the MDP3 venue, 1 the ITCH venue, 2 the EOBI venue */
#define VENUE_CODES 3u
/* The venue code of a config "protocol" ("mdp3", "itch", "eobi"), or -1. */
int tp_cl_protocol_venue(const char *protocol);

struct tp_client {
    char instance[64];
    /* Each venue code's name, as the daemon's config names it (learnt on connect). */
    char venue_names[VENUE_CODES][VENUE_NAME_MAX];
    char dir[200];
    uint64_t heartbeat_timeout_ns; /* older heartbeats: the writer is dead or hung */
    uint64_t heartbeat_chosen_ns;  /* the option's or the environment's; 0: the writer's */
    struct tp_bus_reader bus;
    /* One reader per ring of the instance (one per data lcore), drained in turn. */
    unsigned n_rings;
    unsigned current_ring; /* the ring tp_poll reads until it is empty */
    struct tp_ring_reader rings[TP_BUS_MAX_RINGS];
    uint8_t *batches[TP_BUS_MAX_RINGS];
    uint32_t batch_size;
    struct tp_ring_stats ring_stats[TP_BUS_MAX_RINGS];
    uint32_t instruments;
    uint32_t *interest;    /* per instrument: own | from_patterns, the filter the poll reads */
    uint32_t all_interest; /* topics subscribed for every instrument */
    uint32_t any_interest; /* union of everything: for channel-wide events */
    unsigned n_patterns;   /* active pattern subscriptions: unmatched symbols are checked */
    struct tp_local_book **books;
    struct tp_level_change *changes;
    uint32_t max_changes;
    struct user_transformer user[USER_TOPICS];
    uint32_t user_count;
    uint32_t feeds[RECORD_TOPICS];             /* record topic -> subscription topics it feeds */
    uint64_t loss_to_report[TP_BUS_MAX_RINGS]; /* per ring: lost, not yet told (LOSS event) */
    int loss_pending;
    int resync_pending;
    uint32_t resync_next;
    int initial_pending;      /* some slot's `initial` is set */
    uint32_t initial_next;    /* no slot below it has `initial` set */
    struct tp_seg reader_seg; /* this reader's counters segment (if any) */
    struct tp_counters *counters;
    struct tp_counter *k[RC_COUNT];
    struct tp_instrument_state scratch; /* state copies, off the caller's stack */

    struct instrument_slot *slots;
    struct pattern_sub patterns[MAX_PATTERNS];
    struct tp_local_book **spare_books; /* books for pattern matches met while polling */
    uint32_t n_spare_books;

    /* Control socket: subscriptions are asked of the daemon before the filter changes. */
    char control_path[108]; /* "": local filter only */
    int reconnecting;       /* inside tp_cl_remote_resubscribe after the daemon closed the link */
    struct tp_ctl_link link;
    uint32_t all_subs[MAX_VENUE_SUBS]; /* ids == NULL: the daemon's "*" subscription per venue */
    unsigned n_all_subs;
    unsigned revoked; /* revocations seen since the last tp_control_check */
    char last_error[256];
};

/* client.c: the local filter. */
int tp_cl_valid_topics(const struct tp_client *c, uint32_t topics);
void tp_cl_set_interest(struct tp_client *c, uint32_t id); /* interest = own | from_patterns */
/* A new subscription's topics `gained` by `id`: the next tp_poll delivers their current state. */
void tp_cl_queue_initial(struct tp_client *c, uint32_t id, uint32_t gained);
int tp_cl_ensure_book(struct tp_client *c, uint32_t id);
void tp_cl_drop_unwatched_books(struct tp_client *c);
void tp_cl_recompute_any(struct tp_client *c);
/* Symbol of a defined instrument without its padding, and its venue's name: 0 or -ENOENT. */
int tp_cl_symbol(struct tp_client *c, uint32_t id, char symbol[TP_SYMBOL_LEN + 1],
                 const char **venue);
/* The same from a symbol field (NUL- or space-padded) and a venue code. */
int tp_cl_symbol_text(const struct tp_client *c, const char raw[TP_SYMBOL_LEN], uint8_t venue_code,
                      char symbol[TP_SYMBOL_LEN + 1], const char **venue);
int tp_cl_venue_code(const struct tp_client *c, const char *name); /* -1: not a venue here */
/* Name of a venue code (tpout Venue), NULL past the last one: the data plane's names. */
const char *tp_cl_venue_name(const struct tp_client *c, uint8_t venue);

/* remote.c: the daemon's side (every function needs c->control_path set). */
int tp_cl_error(struct tp_client *c, int rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int tp_cl_remote_update(struct tp_client *c, const uint32_t *ids, size_t n_ids, uint32_t topics,
                        int add);
int tp_cl_remote_pattern(struct tp_client *c, struct pattern_sub *p);
void tp_cl_remote_unsubscribe(struct tp_client *c, uint32_t sub);
int tp_cl_remote_resubscribe(struct tp_client *c);
int tp_cl_control_from_environment(struct tp_client *c, char *err, size_t err_len);
void tp_cl_on_control_event(void *ctx, json_t *event);

/* patterns.c */
void tp_cl_match_patterns(struct tp_client *c, uint32_t id, int may_allocate);
void tp_cl_match_new_instrument(struct tp_client *c, const struct tp_ring_record *rec);
/* Every instrument matched again; with `subscribed` (a new pattern) the topics an instrument
 * gains start with its current state. */
void tp_cl_rematch_patterns(struct tp_client *c, int subscribed);
int tp_cl_pattern_revoked(struct tp_client *c, uint32_t sub);
void tp_cl_free_patterns(struct tp_client *c);

#endif /* TP_CLIENT_INTERNAL_H */
