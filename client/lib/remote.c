/*
 * libtickplane's subscriptions through the daemon's control socket (see tickplane.h and
 * client/README.md): every change of the local filter is first asked of the daemon, which checks
 * the entitlements and tells the data plane. All or nothing: new daemon subscriptions are made
 * first, the ones they replace removed only once all were granted.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"

int tp_cl_error(struct tp_client *c, int rc, const char *fmt, ...)
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

/*
 * What the daemon needs to name one instrument: its venue and its symbol as a pattern that
 * matches exactly it (trailing padding cut; a character the protocol cannot carry in a pattern,
 * a space or a wildcard, becomes '?').
 */
static int instrument_name(struct tp_client *c, uint32_t id, const char **venue, char *symbol)
{
    int rc = tp_cl_symbol(c, id, symbol, venue);
    if (rc == -EAGAIN)
        return tp_cl_error(c, rc, "instrument %u: state busy, try again", id);
    if (rc != 0)
        return tp_cl_error(c, rc, "instrument %u is not defined (yet)", id);
    for (char *ch = symbol; *ch != '\0'; ch++)
        if (*ch <= ' ' || *ch > '~' || *ch == '*' || *ch == '?')
            *ch = '?';
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
    return tp_cl_error(c, rc, "%s", why);
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
void tp_cl_remote_unsubscribe(struct tp_client *c, uint32_t sub)
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
    uint32_t new_all[MAX_VENUE_SUBS];
    unsigned n_new_all;
};

/* Subscription ids of a reply, in request order, into the plan's items. */
static int take_subscriptions(struct tp_client *c, json_t *reply, struct plan_item **asked,
                              size_t n_asked)
{
    json_t *subs = json_object_get(reply, "subscriptions");
    size_t n = json_array_size(subs);
    if (n != n_asked)
        return tp_cl_error(c, -EPROTO, "daemon answered %zu subscriptions for %zu symbols", n,
                           n_asked);
    for (size_t k = 0; k < n; k++)
        asked[k]->new_sub =
            (uint32_t)json_integer_value(json_object_get(json_array_get(subs, k), "subscription"));
    return 0;
}

#define PATTERNS_PER_REQUEST 32 /* the daemon's limit per subscribe request */

/*
 * Every instrument: "*" on each venue, all of them granted or the call refused (a venue the
 * instance does not have is skipped: it has no instruments to deliver).
 */
static int subscribe_every_venue(struct tp_client *c, struct plan *p, uint32_t topics)
{
    for (uint8_t v = 0; tp_cl_venue_name(c, v) != NULL && p->n_new_all < MAX_VENUE_SUBS; v++) {
        json_t *reply;
        int rc = control_call(c,
                              json_pack("{s:s, s:s, s:s, s:o}", "cmd", "subscribe", "venue",
                                        tp_cl_venue_name(c, v), "instruments", "*", "topics",
                                        daemon_topics_json(topics)),
                              &reply);
        if (rc == -EPROTO && strncmp(c->last_error, "unknown venue", 13) == 0)
            continue;
        if (rc != 0)
            return rc;
        uint32_t sub = (uint32_t)json_integer_value(json_object_get(
            json_array_get(json_object_get(reply, "subscriptions"), 0), "subscription"));
        json_decref(reply);
        if (sub == 0)
            return tp_cl_error(c, -EPROTO, "daemon granted no subscription");
        p->new_all[p->n_new_all++] = sub;
    }
    c->last_error[0] = '\0';
    return p->n_new_all > 0 ? 0 : tp_cl_error(c, -EPROTO, "the daemon knows none of the venues");
}

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
        if (first->id == TP_INSTRUMENT_NONE) {
            first->done = 1;
            rc = subscribe_every_venue(c, p, first->topics);
            continue;
        }
        struct plan_item *asked[PATTERNS_PER_REQUEST];
        size_t n_asked = 0;
        json_t *patterns = json_array();
        for (size_t j = i; j < p->n && n_asked < PATTERNS_PER_REQUEST; j++) {
            struct plan_item *it = &p->items[j];
            if (it->done || it->id == TP_INSTRUMENT_NONE || it->topics != first->topics ||
                strcmp(it->venue, first->venue) != 0)
                continue;
            json_array_append_new(patterns, json_string(it->symbol));
            asked[n_asked++] = it;
            it->done = 1;
        }
        json_t *reply;
        rc = control_call(c,
                          json_pack("{s:s, s:s, s:o, s:o}", "cmd", "subscribe", "venue",
                                    first->venue, "instruments", patterns, "topics",
                                    daemon_topics_json(first->topics)),
                          &reply);
        if (rc == 0) {
            rc = take_subscriptions(c, reply, asked, n_asked);
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
                tp_cl_remote_unsubscribe(c, subs[k]);
            if (rc == 0) {
                memcpy(c->all_subs, p->new_all, sizeof(p->new_all));
                c->n_all_subs = p->n_new_all;
            }
            continue;
        }
        uint32_t retire = rc != 0 ? it->new_sub : c->slots[it->id].sub_of;
        if (retire != 0)
            tp_cl_remote_unsubscribe(c, retire);
        if (rc == 0)
            c->slots[it->id].sub_of = it->new_sub;
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
int tp_cl_remote_update(struct tp_client *c, const uint32_t *ids, size_t n_ids, uint32_t topics,
                        int add)
{
    c->last_error[0] = '\0';
    /* The daemon closes a connection that held no subscription and stayed silent (its
     * control.idle_timeout_ms): connect again, asking for whatever was subscribed, then go on. */
    if (c->link.fd >= 0 && !c->reconnecting && tp_ctl_link_drain(&c->link) == -ENOTCONN) {
        c->reconnecting = 1;
        int rc = tp_cl_remote_resubscribe(c);
        c->reconnecting = 0;
        if (rc != 0)
            return rc;
    }
    if (c->link.fd < 0)
        return tp_cl_error(c, -ENOTCONN, "not connected to the daemon (%s)", c->control_path);
    size_t cap = (ids != NULL ? n_ids : c->instruments) + 1;
    struct plan p = {.items = calloc(cap, sizeof(struct plan_item))};
    uint8_t *seen = calloc(c->instruments + 1u, 1);
    int rc = p.items == NULL || seen == NULL ? tp_cl_error(c, -ENOMEM, "out of memory") : 0;
    size_t n = ids != NULL ? n_ids : (add ? 0 : c->instruments);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        uint32_t id = ids != NULL ? ids[i] : (uint32_t)i;
        if (seen[id])
            continue; /* an id given twice */
        seen[id] = 1;
        uint32_t now = c->slots[id].own;
        uint32_t next = add ? now | topics : now & ~topics;
        if (daemon_topics(c, next) != daemon_topics(c, now) ||
            (next != 0 && c->slots[id].sub_of == 0))
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

/* One pattern subscription: a single request, the daemon's subscription ids kept in p. */
int tp_cl_remote_pattern(struct tp_client *c, struct pattern_sub *p)
{
    json_t *req = json_pack("{s:s, s:s, s:o}", "cmd", "subscribe", "instruments", p->pattern,
                            "topics", daemon_topics_json(daemon_topics(c, p->topics)));
    if (p->venue[0] != '\0')
        json_object_set_new(req, "venue", json_string(p->venue));
    json_t *reply;
    int rc = control_call(c, req, &reply);
    if (rc != 0)
        return rc;
    /* Without a venue the daemon grants the venues the caller is entitled to: match only those. */
    json_t *subs = json_object_get(reply, "subscriptions");
    p->n_daemon_subs = 0;
    p->venues = 0;
    for (size_t k = 0; k < json_array_size(subs) && p->n_daemon_subs < MAX_VENUE_SUBS; k++) {
        json_t *sub = json_array_get(subs, k);
        const char *name = json_string_value(json_object_get(sub, "venue"));
        int venue = name != NULL ? tp_cl_venue_code(c, name) : -1;
        if (venue < 0)
            continue; /* a venue this library cannot tell apart on the bus */
        p->daemon_subs[p->n_daemon_subs] =
            (uint32_t)json_integer_value(json_object_get(sub, "subscription"));
        p->daemon_venue[p->n_daemon_subs++] = (uint8_t)venue;
        p->venues |= 1u << venue;
    }
    json_decref(reply);
    return p->n_daemon_subs > 0 ? 0 : tp_cl_error(c, -EPROTO, "daemon granted no subscription");
}

/* After a reconnect: ask the new daemon for everything subscribed. */
int tp_cl_remote_resubscribe(struct tp_client *c)
{
    tp_ctl_link_close(&c->link);
    int rc = tp_ctl_link_open(&c->link, c->control_path, c->last_error, sizeof(c->last_error));
    if (rc != 0)
        return rc;
    for (uint32_t id = 0; id < c->instruments; id++)
        c->slots[id].sub_of = 0;
    c->n_all_subs = 0;
    rc = tp_cl_remote_update(c, NULL, 0, 0, 0); /* removes nothing: asks for all that is missing */
    for (unsigned k = 0; rc == 0 && k < MAX_PATTERNS; k++)
        if (c->patterns[k].topics != 0)
            rc = tp_cl_remote_pattern(c, &c->patterns[k]);
    return rc;
}

/* A subscription the daemon revoked (a reload withdrew the entitlement): stop delivering it. */
void tp_cl_on_control_event(void *ctx, json_t *event)
{
    struct tp_client *c = ctx;
    const char *what = json_string_value(json_object_get(event, "event"));
    if (what == NULL || strcmp(what, "revoked") != 0)
        return;
    uint32_t sub = (uint32_t)json_integer_value(json_object_get(event, "subscription"));
    const char *why = json_string_value(json_object_get(event, "reason"));
    int found = sub != 0 && tp_cl_pattern_revoked(c, sub);
    for (unsigned k = 0; !found && k < c->n_all_subs; k++) {
        if (c->all_subs[k] != sub)
            continue;
        c->all_subs[k] = c->all_subs[--c->n_all_subs];
        if (c->n_all_subs == 0)
            c->all_interest = 0;
        found = 1;
    }
    for (uint32_t id = 0; !found && sub != 0 && id < c->instruments; id++) {
        if (c->slots[id].sub_of != sub)
            continue;
        c->slots[id].sub_of = 0;
        c->slots[id].own = 0;
        tp_cl_set_interest(c, id);
        found = 1;
    }
    if (!found)
        return;
    tp_cl_drop_unwatched_books(c);
    tp_cl_recompute_any(c);
    c->revoked++;
    tp_cl_error(c, -EACCES, "revoked: %s", why != NULL ? why : "no reason given");
}

/*
 * The names the daemon's config gives the venues (a channel's "venue"), by protocol: the bus
 * numbers venues by protocol (tpout Venue), subscriptions name them. Kept as they are when the
 * daemon does not say.
 */
static void learn_venue_names(struct tp_client *c)
{
    json_t *reply;
    if (control_call(c, json_pack("{s:s}", "cmd", "status"), &reply) != 0) {
        c->last_error[0] = '\0';
        return;
    }
    json_t *channels = json_object_get(reply, "channels"), *ch;
    size_t k;
    json_array_foreach(channels, k, ch)
    {
        const char *protocol = json_string_value(json_object_get(ch, "protocol"));
        const char *venue = json_string_value(json_object_get(ch, "venue"));
        int code = protocol != NULL ? tp_cl_protocol_venue(protocol) : -1;
        if (code < 0 || venue == NULL || strlen(venue) >= VENUE_NAME_MAX)
            continue;
        snprintf(c->venue_names[code], VENUE_NAME_MAX, "%s", venue);
    }
    json_decref(reply);
}

int tp_control_connect(struct tp_client *c, const char *path, unsigned flags)
{
    c->last_error[0] = '\0';
    if (c->link.fd >= 0)
        return tp_cl_error(c, -EISCONN, "already connected to %s", c->control_path);
    if (c->any_interest != 0)
        return tp_cl_error(c, -EBUSY, "connect to the daemon before subscribing");
    if (path == NULL || path[0] == '\0' || strlen(path) >= sizeof(c->control_path))
        return tp_cl_error(c, -EINVAL, "bad control socket path");
    int rc = tp_ctl_link_open(&c->link, path, c->last_error, sizeof(c->last_error));
    if (rc != 0)
        return (flags & TP_CONTROL_FALLBACK) ? 1 : rc;
    snprintf(c->control_path, sizeof(c->control_path), "%s", path);
    learn_venue_names(c);
    return 0;
}

/* TICKPLANE_CONTROL_SOCKET at attach: connect, or fail the attach with the reason. */
int tp_cl_control_from_environment(struct tp_client *c, char *err, size_t err_len)
{
    const char *path = getenv(TP_CONTROL_SOCKET_ENV);
    if (path == NULL || path[0] == '\0')
        return 0;
    const char *fallback = getenv(TP_CONTROL_FALLBACK_ENV);
    unsigned flags = fallback != NULL && strcmp(fallback, "1") == 0 ? TP_CONTROL_FALLBACK : 0;
    int rc = tp_control_connect(c, path, flags);
    if (rc < 0 && err != NULL && err_len > 0)
        snprintf(err, err_len, "%s", c->last_error);
    return rc < 0 ? rc : 0;
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
        return tp_cl_error(c, rc, "connection to the daemon lost");
    int revoked = (int)c->revoked;
    c->revoked = 0;
    return revoked;
}

const char *tp_last_error(const struct tp_client *c)
{
    return c->last_error;
}
