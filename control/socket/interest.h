/*
 * The data plane's side of subscriptions: a fixed table of active (client, subscription) ->
 * (venue, instrument pattern, topics) entries, changed only by applying the tp_ctl_cmd messages
 * the control socket sends over the command ring, and asked which topics anyone wants for an
 * instrument. Sized up front (memsize/init), no allocation, no locks: one thread (the one that
 * drains the ring) owns it.
 *
 * tp_interest_topics is a scan with glob matching: call it when an instrument is defined or when
 * the generation number changed (not per packet), and cache the answer per instrument (for example
 * in the bus writer's interest flags).
 */
#ifndef TP_INTEREST_H
#define TP_INTEREST_H

#include <stddef.h>
#include <stdint.h>

#include "ctl_ops.h"

struct tp_interest_params {
    uint32_t max_subscriptions; /* all clients together, e.g. max_clients x max_subscriptions */
};

struct tp_interest_entry {
    uint32_t client_id; /* 0: free */
    uint32_t sub_id;
    uint32_t topics;
    char venue[TP_CTL_VENUE_MAX];
    char pattern[TP_CTL_PATTERN_MAX];
};

struct tp_interest {
    uint32_t capacity;
    uint32_t used;
    uint64_t generation; /* bumped by every change */
    struct tp_interest_entry entries[];
};

size_t tp_interest_memsize(const struct tp_interest_params *p);
int tp_interest_init(void *mem, const struct tp_interest_params *p);

/*
 * Apply one command. 0; -ENOSPC if the table is full (subscribe dropped); -ENOENT for an
 * unsubscribe of an unknown subscription; -EINVAL for a malformed command (unknown op, strings
 * without terminator, client 0). Nothing changes on error.
 */
int tp_interest_apply(struct tp_interest *t, const struct tp_ctl_cmd *cmd);

/* Union of the topics of every subscription matching (venue, symbol); 0 = nobody. */
uint32_t tp_interest_topics(const struct tp_interest *t, const char *venue, const char *symbol);

#endif /* TP_INTEREST_H */
