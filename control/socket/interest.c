/* Subscription interest table on the data-plane side: see interest.h. */
#include "interest.h"

#include <errno.h>
#include <string.h>

#include "glob.h"

size_t tp_interest_memsize(const struct tp_interest_params *p)
{
    return sizeof(struct tp_interest) +
           (size_t)p->max_subscriptions * sizeof(struct tp_interest_entry);
}

int tp_interest_init(void *mem, const struct tp_interest_params *p)
{
    if (mem == NULL || p->max_subscriptions == 0)
        return -EINVAL;
    memset(mem, 0, tp_interest_memsize(p));
    ((struct tp_interest *)mem)->capacity = p->max_subscriptions;
    return 0;
}

/* Commands come from another thread's memory: never trust their strings to be terminated. */
static int check_strings(const struct tp_ctl_cmd *cmd)
{
    if (memchr(cmd->venue, '\0', sizeof(cmd->venue)) == NULL ||
        memchr(cmd->pattern, '\0', sizeof(cmd->pattern)) == NULL)
        return -EINVAL;
    return 0;
}

int tp_interest_apply(struct tp_interest *t, const struct tp_ctl_cmd *cmd)
{
    if (cmd->client_id == 0)
        return -EINVAL;
    switch (cmd->op) {
    case TP_CTL_SUBSCRIBE: {
        if (check_strings(cmd) != 0 || cmd->topics == 0)
            return -EINVAL;
        if (t->used == t->capacity)
            return -ENOSPC;
        for (uint32_t i = 0; i < t->capacity; i++) {
            struct tp_interest_entry *e = &t->entries[i];
            if (e->client_id != 0)
                continue;
            e->client_id = cmd->client_id;
            e->sub_id = cmd->sub_id;
            e->topics = cmd->topics;
            memcpy(e->venue, cmd->venue, sizeof(e->venue));
            memcpy(e->pattern, cmd->pattern, sizeof(e->pattern));
            t->used++;
            t->generation++;
            return 0;
        }
        return -ENOSPC;
    }
    case TP_CTL_UNSUBSCRIBE:
    case TP_CTL_UNSUBSCRIBE_CLIENT: {
        uint32_t removed = 0;
        for (uint32_t i = 0; i < t->capacity; i++) {
            struct tp_interest_entry *e = &t->entries[i];
            if (e->client_id != cmd->client_id ||
                (cmd->op == TP_CTL_UNSUBSCRIBE && e->sub_id != cmd->sub_id))
                continue;
            memset(e, 0, sizeof(*e));
            removed++;
        }
        t->used -= removed;
        if (removed > 0)
            t->generation++;
        return removed > 0 || cmd->op == TP_CTL_UNSUBSCRIBE_CLIENT ? 0 : -ENOENT;
    }
    default:
        return -EINVAL;
    }
}

uint32_t tp_interest_topics(const struct tp_interest *t, const char *venue, const char *symbol)
{
    uint32_t topics = 0;
    for (uint32_t i = 0, seen = 0; i < t->capacity && seen < t->used; i++) {
        const struct tp_interest_entry *e = &t->entries[i];
        if (e->client_id == 0)
            continue;
        seen++;
        if (strcmp(e->venue, venue) == 0 && tp_glob_match(e->pattern, symbol))
            topics |= e->topics;
    }
    return topics;
}
