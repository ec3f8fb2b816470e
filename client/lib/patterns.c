/*
 * Pattern subscriptions (tp_subscribe_pattern): topics for every instrument whose symbol matches
 * a glob on a venue, including instruments defined after the call. Symbols are matched when a
 * pattern is added or removed and, for an instrument not defined then, on its first record (its
 * definition, or one state read) with a few glob matches, once per instrument. The books such late
 * instruments may need are allocated beforehand (spare_books), so polling still never allocates.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_internal.h"
#include "glob.h"
#include "views/decode.h"

/* What the control socket accepts as a pattern. */
static int pattern_ok(const char *p)
{
    size_t len = strlen(p);
    if (len == 0 || len >= PATTERN_MAX)
        return 0;
    for (; *p != '\0'; p++)
        if (*p <= ' ' || *p > '~')
            return 0;
    return 1;
}

static uint32_t matching_topics(const struct tp_client *c, const char *symbol, const char *venue)
{
    uint32_t topics = 0;
    for (unsigned k = 0; k < MAX_PATTERNS; k++) {
        const struct pattern_sub *p = &c->patterns[k];
        if (p->topics == 0 || !(p->venues & (1u << tp_cl_venue_code(c, venue))))
            continue;
        if (tp_glob_match(p->pattern, symbol))
            topics |= p->topics;
    }
    return topics;
}

/*
 * Topics of the patterns that match instrument id's symbol on its venue. `state` is the entry
 * the symbol came from (a spare book starts from its levels), or NULL when it came from the
 * instrument's definition record (the book of a new instrument starts empty).
 */
static void match_symbol(struct tp_client *c, uint32_t id, const char *symbol, const char *venue,
                         int may_allocate, const struct tp_instrument_state *state)
{
    struct instrument_slot *s = &c->slots[id];
    s->pattern_checked = 1;
    s->from_patterns = matching_topics(c, symbol, venue);
    tp_cl_set_interest(c, id);
    c->any_interest |= c->interest[id];
    if (!(c->interest[id] & BOOK_TOPICS) || c->books[id] != NULL)
        return;
    if (may_allocate) {
        if (tp_cl_ensure_book(c, id) == 0)
            return;
    } else if (c->n_spare_books > 0) {
        struct tp_local_book *b = c->spare_books[--c->n_spare_books];
        tp_local_book_clear(b);
        if (state != NULL)
            tp_local_book_load(b, state);
        tp_local_book_top(b, &b->last_top);
        c->books[id] = b;
        return;
    }
    /* No book to keep: this instrument's pattern topics are those that need none. */
    s->from_patterns &= ~BOOK_TOPICS;
    tp_cl_set_interest(c, id);
}

void tp_cl_match_patterns(struct tp_client *c, uint32_t id, int may_allocate)
{
    char symbol[TP_SYMBOL_LEN + 1];
    const char *venue;
    if (tp_cl_symbol(c, id, symbol, &venue) != 0)
        return; /* not defined yet: looked at again on its next record */
    match_symbol(c, id, symbol, venue, may_allocate, &c->scratch);
}

/*
 * The first record of an instrument defined since the patterns were matched. Its definition
 * record names it: matching from the record does not depend on the state table, whose entry
 * the writer may be inside (or, for an older daemon, not have written yet) when a reader at
 * the writer's heels gets here. Any other record: from the state table.
 */
void tp_cl_match_new_instrument(struct tp_client *c, const struct tp_ring_record *rec)
{
    struct tp_event ev;
    char symbol[TP_SYMBOL_LEN + 1];
    const char *venue;
    if (rec->topic == TP_TOPIC_DEFINITIONS && rec->type == TP_REC_SBE &&
        tp_decode_tpout(tp_ring_payload(rec), rec->length - TP_RING_RECORD_HEADER, &ev, NULL, 0,
                        NULL) == TP_TOPIC_DEFINITIONS &&
        tp_cl_symbol_text(c, ev.u.definition.symbol, ev.u.definition.venue, symbol, &venue) == 0) {
        match_symbol(c, rec->instrument, symbol, venue, 0, NULL);
        return;
    }
    tp_cl_match_patterns(c, rec->instrument, 0);
}

/* Spare books for every instrument still undefined, when some pattern needs books. */
static void size_spare_books(struct tp_client *c, uint32_t undefined)
{
    uint32_t book_topics = 0;
    for (unsigned k = 0; k < MAX_PATTERNS; k++)
        book_topics |= c->patterns[k].topics & BOOK_TOPICS;
    uint32_t want = book_topics != 0 ? undefined : 0;
    while (c->n_spare_books > want)
        free(c->spare_books[--c->n_spare_books]);
    if (want == 0) {
        free(c->spare_books);
        c->spare_books = NULL;
        return;
    }
    struct tp_local_book **grown = realloc(c->spare_books, want * sizeof(*grown));
    if (grown == NULL)
        return; /* late instruments then get the topics that need no book */
    c->spare_books = grown;
    while (c->n_spare_books < want) {
        struct tp_local_book *b = malloc(sizeof(*b));
        if (b == NULL)
            return;
        c->spare_books[c->n_spare_books++] = b;
    }
}

void tp_cl_rematch_patterns(struct tp_client *c, int subscribed)
{
    uint32_t undefined = 0;
    for (uint32_t id = 0; id < c->instruments; id++) {
        uint32_t before = c->interest[id] | c->all_interest;
        c->slots[id].pattern_checked = 0;
        c->slots[id].from_patterns = 0;
        tp_cl_set_interest(c, id);
        if (c->n_patterns == 0)
            continue;
        tp_cl_match_patterns(c, id, 1);
        undefined += !c->slots[id].pattern_checked;
        if (subscribed)
            tp_cl_queue_initial(c, id, (c->interest[id] | c->all_interest) & ~before);
    }
    size_spare_books(c, undefined);
    tp_cl_drop_unwatched_books(c);
    tp_cl_recompute_any(c);
}

static void remove_pattern(struct tp_client *c, struct pattern_sub *p)
{
    memset(p, 0, sizeof(*p));
    c->n_patterns--;
    tp_cl_rematch_patterns(c, 0);
}

int tp_subscribe_pattern(struct tp_client *c, const char *venue, const char *pattern,
                         uint32_t topics)
{
    c->last_error[0] = '\0';
    if (!tp_cl_valid_topics(c, topics))
        return -EINVAL;
    if (pattern == NULL || !pattern_ok(pattern))
        return tp_cl_error(c, -EINVAL, "bad pattern (1-%u printable characters, no space)",
                           PATTERN_MAX - 1);
    if (venue != NULL && tp_cl_venue_code(c, venue) < 0)
        return tp_cl_error(c, -EINVAL, "unknown venue \"%.32s\" (%s, %s, %s)", venue,
                           c->venue_names[0], c->venue_names[1], c->venue_names[2]);
    struct pattern_sub *p = NULL;
    for (unsigned k = 0; k < MAX_PATTERNS && p == NULL; k++)
        if (c->patterns[k].topics == 0)
            p = &c->patterns[k];
    if (p == NULL)
        return tp_cl_error(c, -ENOSPC, "pattern subscription limit reached (%u)", MAX_PATTERNS);
    struct pattern_sub next = {.topics = topics};
    snprintf(next.venue, sizeof(next.venue), "%s", venue != NULL ? venue : "");
    for (uint8_t v = 0; tp_cl_venue_name(c, v) != NULL; v++)
        if (venue == NULL || v == tp_cl_venue_code(c, venue))
            next.venues |= 1u << v;
    snprintf(next.pattern, sizeof(next.pattern), "%s", pattern);
    if (c->control_path[0] != '\0') {
        int rc = tp_cl_remote_pattern(c, &next);
        if (rc != 0)
            return rc;
    }
    *p = next;
    c->n_patterns++;
    tp_cl_rematch_patterns(c, 1);
    return (int)(p - c->patterns) + 1;
}

int tp_unsubscribe_pattern(struct tp_client *c, int handle)
{
    c->last_error[0] = '\0';
    if (handle < 1 || handle > (int)MAX_PATTERNS || c->patterns[handle - 1].topics == 0)
        return tp_cl_error(c, -ENOENT, "no pattern subscription %d", handle);
    struct pattern_sub *p = &c->patterns[handle - 1];
    for (unsigned k = 0; c->control_path[0] != '\0' && k < p->n_daemon_subs; k++)
        tp_cl_remote_unsubscribe(c, p->daemon_subs[k]);
    remove_pattern(c, p);
    return 0;
}

int tp_cl_pattern_revoked(struct tp_client *c, uint32_t sub)
{
    for (unsigned k = 0; k < MAX_PATTERNS; k++) {
        struct pattern_sub *p = &c->patterns[k];
        for (unsigned i = 0; p->topics != 0 && i < p->n_daemon_subs; i++) {
            if (p->daemon_subs[i] != sub)
                continue;
            p->venues &= ~(1u << p->daemon_venue[i]);
            p->n_daemon_subs--;
            p->daemon_subs[i] = p->daemon_subs[p->n_daemon_subs];
            p->daemon_venue[i] = p->daemon_venue[p->n_daemon_subs];
            if (p->n_daemon_subs == 0)
                remove_pattern(c, p); /* granted on no venue any more */
            else
                tp_cl_rematch_patterns(c, 0);
            return 1;
        }
    }
    return 0;
}

void tp_cl_free_patterns(struct tp_client *c)
{
    while (c->n_spare_books > 0)
        free(c->spare_books[--c->n_spare_books]);
    free(c->spare_books);
    c->spare_books = NULL;
}
