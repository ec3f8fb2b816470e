/*
 * Control socket verbs: parse one request line, check arguments and entitlements, answer with one
 * reply line. The protocol is described in protocol.md.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glob.h"
#include "server_internal.h"

#define MAX_PATTERNS_PER_REQUEST 32
#define MAX_INSTRUMENT_LIST      10000
#define METRICS_BUFFER           (1u << 20)

/* A request being answered: the client, its "id" (echoed) and the request object. */
struct request {
    struct tp_ctl_server *srv;
    struct ctl_client *c;
    json_t *id;
    json_t *body;
};

static void reply_ok(struct request *r, json_t *reply)
{
    if (r->id != NULL)
        json_object_set(reply, "id", r->id);
    json_object_set_new(reply, "ok", json_true());
    ctl_send_json(r->srv, r->c, reply);
}

static bool pattern_ok(const char *p)
{
    size_t len = strlen(p);
    if (len == 0 || len >= TP_CTL_PATTERN_MAX)
        return false;
    for (; *p != '\0'; p++)
        if (*p <= ' ' || *p > '~')
            return false;
    return true;
}

static bool venue_known(const struct tp_ctl_server *srv, const char *venue)
{
    for (unsigned v = 0; v < srv->n_venues; v++)
        if (strcmp(srv->venues[v], venue) == 0)
            return true;
    return false;
}

/* "key": "x" or ["x", "y"] into out[]; false (and an error reply) if malformed. */
static bool string_or_list(struct request *r, const char *key, const char **out, unsigned max,
                           unsigned *n)
{
    json_t *v = json_object_get(r->body, key);
    *n = 0;
    if (json_is_string(v)) {
        out[(*n)++] = json_string_value(v);
        return true;
    }
    if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > max) {
        r->srv->stats.bad_requests++;
        ctl_reply_error(r->srv, r->c, r->id, "\"%s\" must be a string or a list of 1 to %u strings",
                        key, max);
        return false;
    }
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item)
    {
        if (!json_is_string(item)) {
            r->srv->stats.bad_requests++;
            ctl_reply_error(r->srv, r->c, r->id, "\"%s\"[%zu] is not a string", key, i);
            return false;
        }
        out[(*n)++] = json_string_value(item);
    }
    return true;
}

static bool parse_topics(struct request *r, uint32_t *topics)
{
    const char *names[8];
    unsigned n;
    if (!string_or_list(r, "topics", names, 8, &n))
        return false;
    *topics = 0;
    for (unsigned i = 0; i < n; i++) {
        uint32_t bit = tp_cfg_topic_from_name(names[i]);
        if (bit == 0) {
            r->srv->stats.bad_requests++;
            ctl_reply_error(r->srv, r->c, r->id,
                            "unknown topic \"%s\" (depth, top, trades, mbo, status, definitions)",
                            names[i]);
            return false;
        }
        *topics |= bit;
    }
    return true;
}

static json_t *topics_json(uint32_t topics)
{
    json_t *arr = json_array();
    for (uint32_t bit = 1; bit & TP_CFG_TOPIC_ALL; bit <<= 1)
        if (topics & bit)
            json_array_append_new(arr, json_string(tp_cfg_topic_name(bit)));
    return arr;
}

static json_t *sub_json(const struct ctl_sub *s)
{
    return json_pack("{s:i, s:s, s:s, s:o}", "subscription", (json_int_t)s->id, "venue", s->venue,
                     "instrument", s->pattern, "topics", topics_json(s->topics));
}

/* The optional "venue": NULL if absent; "" (and an error reply) if invalid. */
static const char *request_venue(struct request *r)
{
    json_t *v = json_object_get(r->body, "venue");
    if (v == NULL)
        return NULL;
    if (!json_is_string(v) || !venue_known(r->srv, json_string_value(v))) {
        r->srv->stats.bad_requests++;
        ctl_reply_error(r->srv, r->c, r->id, "unknown venue %s%s%s", json_is_string(v) ? "\"" : "",
                        json_is_string(v) ? json_string_value(v) : "(not a string)",
                        json_is_string(v) ? "\"" : "");
        return "";
    }
    return json_string_value(v);
}

/*
 * subscribe: every (pattern, venue) must be allowed, else nothing is subscribed and the reason is
 * returned. Without "venue", a pattern is subscribed on each venue the client is entitled to.
 */
static void do_subscribe(struct request *r)
{
    struct tp_ctl_server *srv = r->srv;
    struct ctl_client *c = r->c;
    const char *patterns[MAX_PATTERNS_PER_REQUEST];
    unsigned n_patterns;
    uint32_t topics;
    if (!string_or_list(r, "instruments", patterns, MAX_PATTERNS_PER_REQUEST, &n_patterns) ||
        !parse_topics(r, &topics))
        return;
    const char *venue = request_venue(r);
    if (venue != NULL && venue[0] == '\0')
        return;
    for (unsigned i = 0; i < n_patterns; i++) {
        if (!pattern_ok(patterns[i])) {
            srv->stats.bad_requests++;
            ctl_reply_error(srv, c, r->id,
                            "bad instrument pattern \"%.80s\" (1-%d printable characters)",
                            patterns[i], TP_CTL_PATTERN_MAX - 1);
            return;
        }
    }

    /* Decide everything before changing anything. */
    struct ctl_sub planned[MAX_PATTERNS_PER_REQUEST * 4];
    unsigned n_planned = 0;
    for (unsigned i = 0; i < n_patterns; i++) {
        char reason[200] = "";
        int reason_rc = 0;
        unsigned before = n_planned;
        for (unsigned v = 0; v < srv->n_venues; v++) {
            if (venue != NULL && strcmp(venue, srv->venues[v]) != 0)
                continue;
            char why[200];
            int rc = tp_entitle_check(&srv->ent, &c->peer, srv->venues[v], patterns[i], topics, why,
                                      sizeof(why));
            if (rc != 0) {
                /* Keep the most telling reason: one from a venue the client has rights on. */
                if (reason[0] == '\0' || (rc == -EACCES && reason_rc != -EACCES)) {
                    strcpy(reason, why);
                    reason_rc = rc;
                }
                continue;
            }
            if (n_planned == sizeof(planned) / sizeof(planned[0]))
                break;
            struct ctl_sub *s = &planned[n_planned++];
            s->topics = topics;
            _Static_assert(TP_CFG_VENUE_MAX <= TP_CTL_VENUE_MAX, "a venue name fits a command");
            snprintf(s->venue, sizeof(s->venue), "%s", srv->venues[v]);
            snprintf(s->pattern, sizeof(s->pattern), "%s", patterns[i]);
        }
        if (n_planned == before) {
            srv->stats.refused++;
            ctl_reply_error(srv, c, r->id, "refused: %s", reason[0] ? reason : "no venue");
            return;
        }
    }
    if (c->n_subs + n_planned > srv->cfg.max_subscriptions) {
        ctl_reply_error(srv, c, r->id, "subscription limit reached (%u per client)",
                        srv->cfg.max_subscriptions);
        return;
    }
    for (unsigned i = 0; i < n_planned; i++) {
        struct tp_ctl_cmd cmd = {.op = TP_CTL_SUBSCRIBE,
                                 .client_id = c->id,
                                 .sub_id = c->next_sub_id,
                                 .topics = planned[i].topics};
        memcpy(cmd.venue, planned[i].venue, sizeof(cmd.venue));
        memcpy(cmd.pattern, planned[i].pattern, sizeof(cmd.pattern));
        if (ctl_send_command(srv, &cmd, false) != 0) {
            /* Ring full: undo this request's earlier subscriptions, report busy. */
            while (i-- > 0)
                ctl_drop_subscription(srv, c, c->n_subs - 1);
            ctl_reply_error(srv, c, r->id, "data plane busy, try again");
            return;
        }
        planned[i].id = c->next_sub_id++;
        c->subs[c->n_subs++] = planned[i];
        srv->stats.subscriptions++;
    }
    json_t *list = json_array();
    for (unsigned i = c->n_subs - n_planned; i < c->n_subs; i++)
        json_array_append_new(list, sub_json(&c->subs[i]));
    reply_ok(r, json_pack("{s:o}", "subscriptions", list));
}

void ctl_drop_subscription(struct tp_ctl_server *srv, struct ctl_client *c, unsigned i)
{
    struct tp_ctl_cmd cmd = {.op = TP_CTL_UNSUBSCRIBE,
                             .client_id = c->id,
                             .sub_id = c->subs[i].id,
                             .topics = c->subs[i].topics};
    memcpy(cmd.venue, c->subs[i].venue, sizeof(cmd.venue));
    memcpy(cmd.pattern, c->subs[i].pattern, sizeof(cmd.pattern));
    ctl_send_command(srv, &cmd, true);
    c->subs[i] = c->subs[--c->n_subs];
    srv->stats.subscriptions--;
}

/* unsubscribe: {"subscription": n} | {"instrument": pattern} | {"all": true}. */
static void do_unsubscribe(struct request *r)
{
    struct ctl_client *c = r->c;
    json_t *sub = json_object_get(r->body, "subscription");
    json_t *inst = json_object_get(r->body, "instrument");
    bool all = json_is_true(json_object_get(r->body, "all"));
    if ((sub != NULL) + (inst != NULL) + all != 1 || (sub && !json_is_integer(sub)) ||
        (inst && !json_is_string(inst))) {
        r->srv->stats.bad_requests++;
        ctl_reply_error(r->srv, c, r->id,
                        "give one of \"subscription\" (number), \"instrument\" (pattern) or "
                        "\"all\": true");
        return;
    }
    json_t *removed = json_array();
    for (unsigned i = 0; i < c->n_subs;) {
        bool match = all || (sub && c->subs[i].id == json_integer_value(sub)) ||
                     (inst && strcmp(c->subs[i].pattern, json_string_value(inst)) == 0);
        if (!match) {
            i++;
            continue;
        }
        json_array_append_new(removed, json_integer(c->subs[i].id));
        ctl_drop_subscription(r->srv, c, i);
    }
    if (json_array_size(removed) == 0 && !all) {
        json_decref(removed);
        ctl_reply_error(r->srv, c, r->id, "no such subscription");
        return;
    }
    reply_ok(r, json_pack("{s:o}", "removed", removed));
}

static json_t *client_subs_json(const struct ctl_client *c)
{
    json_t *list = json_array();
    for (unsigned i = 0; i < c->n_subs; i++)
        json_array_append_new(list, sub_json(&c->subs[i]));
    return list;
}

/*
 * The caller's subscriptions; with "all": true every client's, for root, the daemon's user and
 * members of control.admin_group (by the peer's SO_PEERCRED credentials and its groups).
 */
static void do_subscriptions(struct request *r)
{
    if (!json_is_true(json_object_get(r->body, "all"))) {
        reply_ok(r, json_pack("{s:o}", "subscriptions", client_subs_json(r->c)));
        return;
    }
    if (!tp_entitle_is_admin(&r->c->peer) && !tp_peer_in_group(&r->c->peer, r->srv->admin_gid)) {
        r->srv->stats.refused++;
        ctl_reply_error(r->srv, r->c, r->id,
                        "refused: every client's subscriptions need root, the daemon's user or "
                        "control.admin_group");
        return;
    }
    json_t *clients = json_array();
    for (unsigned k = 0; k < r->srv->n_slots; k++) {
        const struct ctl_client *c = &r->srv->clients[k];
        if (c->fd < 0)
            continue;
        json_array_append_new(
            clients, json_pack("{s:i, s:i, s:i, s:i, s:o}", "client", (json_int_t)c->id, "pid",
                               (json_int_t)c->peer.pid, "uid", (json_int_t)c->peer.uid, "gid",
                               (json_int_t)c->peer.gid, "subscriptions", client_subs_json(c)));
    }
    reply_ok(r, json_pack("{s:o}", "clients", clients));
}

/* Entitled to see an instrument at all: any single topic allowed. */
static bool may_see(struct tp_ctl_server *srv, struct ctl_client *c, const char *venue,
                    const char *symbol)
{
    char why[200];
    for (uint32_t bit = 1; bit & TP_CFG_TOPIC_ALL; bit <<= 1)
        if (tp_entitle_check(&srv->ent, &c->peer, venue, symbol, bit, why, sizeof(why)) == 0)
            return true;
    return false;
}

static void do_instruments(struct request *r)
{
    json_t *pat = json_object_get(r->body, "pattern");
    json_t *lim = json_object_get(r->body, "limit");
    const char *pattern = pat ? json_string_value(pat) : "*";
    json_int_t limit = lim ? (json_is_integer(lim) ? json_integer_value(lim) : -1) : 1000;
    if (pattern == NULL || !pattern_ok(pattern) || limit < 1 || limit > MAX_INSTRUMENT_LIST) {
        r->srv->stats.bad_requests++;
        ctl_reply_error(r->srv, r->c, r->id, "\"pattern\" must be a glob and \"limit\" 1 to %d",
                        MAX_INSTRUMENT_LIST);
        return;
    }
    json_t *all = r->srv->ops.instruments
                      ? r->srv->ops.instruments(r->srv->ops.ctx, pattern, (unsigned)limit)
                      : NULL;
    if (all == NULL) {
        ctl_reply_error(r->srv, r->c, r->id, "instruments not available");
        return;
    }
    json_t *visible = json_array();
    size_t i;
    json_t *item;
    json_array_foreach(all, i, item)
    {
        const char *venue = json_string_value(json_object_get(item, "venue"));
        const char *symbol = json_string_value(json_object_get(item, "symbol"));
        if (venue && symbol && tp_glob_match(pattern, symbol) &&
            may_see(r->srv, r->c, venue, symbol))
            json_array_append(visible, item);
    }
    json_decref(all);
    reply_ok(r, json_pack("{s:o}", "instruments", visible));
}

static void do_book(struct request *r)
{
    struct tp_ctl_server *srv = r->srv;
    const char *symbol = json_string_value(json_object_get(r->body, "instrument"));
    json_t *d = json_object_get(r->body, "depth");
    json_int_t depth = d ? (json_is_integer(d) ? json_integer_value(d) : -1) : 10;
    if (symbol == NULL || !pattern_ok(symbol) || !tp_glob_is_literal(symbol) || depth < 1 ||
        depth > 1000) {
        srv->stats.bad_requests++;
        ctl_reply_error(srv, r->c, r->id,
                        "book needs \"instrument\" (a symbol, no wildcards) and \"depth\" 1-1000");
        return;
    }
    /* Any venue name: the instruments of a channel a reload removed stay in the state table,
     * flagged stale, and are shown so (the daemon answers "no instrument" for a name unknown). */
    json_t *v = json_object_get(r->body, "venue");
    if (v != NULL && !json_is_string(v)) {
        srv->stats.bad_requests++;
        ctl_reply_error(srv, r->c, r->id, "\"venue\" must be a string");
        return;
    }
    const char *venue = json_string_value(v);
    if (venue == NULL && srv->n_venues == 1)
        venue = srv->venues[0];
    if (venue == NULL) {
        srv->stats.bad_requests++;
        ctl_reply_error(srv, r->c, r->id, "several venues: say which with \"venue\"");
        return;
    }
    char why[200];
    uint32_t topic = depth == 1 ? TP_CFG_TOPIC_TOP : TP_CFG_TOPIC_DEPTH;
    if (tp_entitle_check(&srv->ent, &r->c->peer, venue, symbol, topic, why, sizeof(why)) != 0) {
        srv->stats.refused++;
        ctl_reply_error(srv, r->c, r->id, "refused: %s", why);
        return;
    }
    char err[200] = "not available";
    json_t *book = srv->ops.book ? srv->ops.book(srv->ops.ctx, venue, symbol, (unsigned)depth, err,
                                                 sizeof(err))
                                 : NULL;
    if (book == NULL) {
        ctl_reply_error(srv, r->c, r->id, "%s", err);
        return;
    }
    reply_ok(r, json_pack("{s:o}", "book", book));
}

static json_t *server_stats_json(const struct tp_ctl_server_stats *s)
{
    return json_pack(
        "{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
        "s:I}",
        "clients", (json_int_t)s->clients, "accepted", (json_int_t)s->accepted, "rejected_full",
        (json_int_t)s->rejected_full, "rejected_uid", (json_int_t)s->rejected_uid, "idle_closed",
        (json_int_t)s->idle_closed, "requests", (json_int_t)s->requests, "errors",
        (json_int_t)s->errors, "bad_requests", (json_int_t)s->bad_requests, "lines_too_long",
        (json_int_t)s->lines_too_long, "rate_limited", (json_int_t)s->rate_limited, "refused",
        (json_int_t)s->refused, "slow_disconnects", (json_int_t)s->slow_disconnects,
        "subscriptions", (json_int_t)s->subscriptions, "commands_sent",
        (json_int_t)s->commands_sent, "commands_deferred", (json_int_t)s->commands_deferred,
        "commands_lost", (json_int_t)s->commands_lost);
}

/* status and stats: the daemon's object with the socket's own counters added. */
static void do_report(struct request *r, json_t *(*fn)(void *ctx))
{
    json_t *reply = fn ? fn(r->srv->ops.ctx) : NULL;
    if (reply == NULL || !json_is_object(reply)) {
        json_decref(reply);
        reply = json_object();
    }
    json_object_set_new(reply, "control", server_stats_json(&r->srv->stats));
    reply_ok(r, reply);
}

static void do_metrics(struct request *r)
{
    if (r->srv->ops.metrics == NULL) {
        ctl_reply_error(r->srv, r->c, r->id, "metrics not available");
        return;
    }
    char *buf = malloc(METRICS_BUFFER);
    long n = buf ? r->srv->ops.metrics(r->srv->ops.ctx, buf, METRICS_BUFFER) : -ENOMEM;
    if (n < 0) {
        free(buf);
        ctl_reply_error(r->srv, r->c, r->id, "metrics failed (%ld)", n);
        return;
    }
    reply_ok(r, json_pack("{s:s%}", "metrics", buf, (size_t)n));
    free(buf);
}

static void do_reload(struct request *r)
{
    if (!tp_entitle_is_admin(&r->c->peer)) {
        r->srv->stats.refused++;
        ctl_reply_error(r->srv, r->c, r->id, "refused: reload needs root or the daemon's user");
        return;
    }
    json_t *result = r->srv->ops.reload ? r->srv->ops.reload(r->srv->ops.ctx) : NULL;
    if (result == NULL) {
        ctl_reply_error(r->srv, r->c, r->id, "reload not available");
        return;
    }
    json_t *reply = json_object();
    json_object_set_new(reply, "reload", result);
    reply_ok(r, reply);
}

/* An operator's request: the channel's books are rebuilt from a snapshot (admin only). */
static void do_recover(struct request *r)
{
    if (!tp_entitle_is_admin(&r->c->peer)) {
        r->srv->stats.refused++;
        ctl_reply_error(r->srv, r->c, r->id, "refused: recover needs root or the daemon's user");
        return;
    }
    const char *channel = json_string_value(json_object_get(r->body, "channel"));
    if (channel == NULL || channel[0] == '\0' || strlen(channel) > 64) {
        r->srv->stats.bad_requests++;
        ctl_reply_error(r->srv, r->c, r->id, "\"channel\" must name a channel");
        return;
    }
    if (r->srv->ops.recover == NULL) {
        ctl_reply_error(r->srv, r->c, r->id, "recover not available");
        return;
    }
    char err[256] = "";
    json_t *result = r->srv->ops.recover(r->srv->ops.ctx, channel, err, sizeof(err));
    if (result == NULL) {
        ctl_reply_error(r->srv, r->c, r->id, "%s", err);
        return;
    }
    reply_ok(r, json_pack("{s:o}", "recover", result));
}

void ctl_handle_line(struct tp_ctl_server *srv, struct ctl_client *c, const char *line, size_t len)
{
    json_error_t jerr;
    json_t *body = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
    if (body == NULL || !json_is_object(body)) {
        srv->stats.bad_requests++;
        ctl_reply_error(srv, c, NULL, body ? "request must be a JSON object" : "bad JSON: %s",
                        jerr.text);
        json_decref(body);
        return;
    }
    struct request r = {.srv = srv, .c = c, .id = json_object_get(body, "id"), .body = body};
    const char *verb = json_string_value(json_object_get(body, "cmd"));
    static const struct {
        const char *name;
        void (*fn)(struct request *);
    } verbs[] = {{"subscribe", do_subscribe},
                 {"unsubscribe", do_unsubscribe},
                 {"subscriptions", do_subscriptions},
                 {"instruments", do_instruments},
                 {"book", do_book},
                 {"metrics", do_metrics},
                 {"reload", do_reload},
                 {"recover", do_recover}};
    bool done = false;
    if (verb != NULL && strcmp(verb, "status") == 0) {
        do_report(&r, srv->ops.status);
        done = true;
    } else if (verb != NULL && strcmp(verb, "stats") == 0) {
        do_report(&r, srv->ops.stats);
        done = true;
    }
    for (size_t i = 0; !done && verb != NULL && i < sizeof(verbs) / sizeof(verbs[0]); i++) {
        if (strcmp(verb, verbs[i].name) == 0) {
            verbs[i].fn(&r);
            done = true;
        }
    }
    if (!done) {
        srv->stats.bad_requests++;
        if (verb == NULL)
            ctl_reply_error(srv, c, r.id, "missing \"cmd\"");
        else
            ctl_reply_error(srv, c, r.id,
                            "unknown cmd \"%.40s\" (subscribe, unsubscribe, subscriptions, "
                            "instruments, book, status, stats, metrics, reload, recover)",
                            verb);
    }
    json_decref(body);
}
