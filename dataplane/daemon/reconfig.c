/*
 * The channels of a data lcore and live reload: see reconfig.h.
 */
#include "reconfig.h"

#include <errno.h>
#include <string.h>

#include "classifier.h"
#include "host.h"
#include "tp_instrument_filter.h"

/* Ticket states (the low two bits). */
#define TICKET_OPEN      0u /* the main lcore waits; the lcore may claim it */
#define TICKET_APPLYING  1u /* claimed by the lcore: it will be applied */
#define TICKET_CANCELLED 2u /* withdrawn by the main lcore: skipped */

static uint64_t ticket(uint64_t generation, unsigned state)
{
    return generation * 4 + state;
}

/* The ticket word the set claims reloads through. */
static _Atomic uint64_t *ticket_word(struct tp_dp_set *set)
{
    return set->shared_ticket != NULL ? set->shared_ticket : &set->ticket;
}

void tp_dp_set_share_ticket(struct tp_dp_set *set, _Atomic uint64_t *ticket)
{
    set->shared_ticket = ticket;
}

static uint16_t igmp_vlan(const struct tp_dp_line *l)
{
    return l->vlan == TP_CLASSIFY_ANY_VLAN ? TP_HOST_NO_VLAN : l->vlan;
}

void tp_dp_set_membership(struct tp_dp_set *set, unsigned slot, enum tp_line_role role, bool join,
                          uint64_t now)
{
    struct tp_dp_line *l = &set->slots[slot].lines[role];
    struct tp_host *host = l->port < TP_DP_MAX_PORTS ? set->hosts[l->port] : NULL;
    if (!l->present || host == NULL || l->joined == join)
        return;
    int rc = join ? tp_host_join(host, l->group, l->source, igmp_vlan(l), now)
                  : tp_host_leave(host, l->group, now);
    if (rc != 0)
        set->apply_errors++;
    l->joined = join;
}

int tp_dp_set_attach(struct tp_dp_set *set, unsigned slot, const struct tp_dp_attach *a,
                     uint64_t now)
{
    if (slot >= TP_DP_MAX_CHANNELS || set->channels[slot] != NULL || a->channel == NULL)
        return -EINVAL;
    struct tp_dp_slot *s = &set->slots[slot];
    *s = a->slot;
    int rc = 0;
    for (unsigned role = 0; role < TP_ROLES; role++) {
        struct tp_dp_line *l = &s->lines[role];
        l->joined = false;
        if (!l->present)
            continue;
        int r =
            tp_classifier_add(set->classifier, l->group, l->udp, l->vlan, slot * TP_ROLES + role);
        if (r != 0 && rc == 0)
            rc = r;
    }
    if (s->rerequest.server_ip != 0) {
        int r = tp_classifier_add(set->classifier, s->rerequest.local_ip,
                                  (uint16_t)(TP_DP_RETRANS_PORT_BASE + slot), TP_CLASSIFY_ANY_VLAN,
                                  slot * TP_ROLES + TP_ROLE_RETRANS);
        if (r != 0 && rc == 0)
            rc = r;
    }
    /* Every line is joined: snapshots rebuild the books first (MDP3), and the channel leaves the
     * snapshot and definition lines itself when it has them. */
    for (unsigned role = 0; role < TP_ROLES; role++)
        tp_dp_set_membership(set, slot, (enum tp_line_role)role, true, now);
    set->channels[slot] = a->channel;
    tp_channel_start(a->channel);
    return rc;
}

struct tp_channel *tp_dp_set_detach(struct tp_dp_set *set, unsigned slot, uint64_t now)
{
    if (slot >= TP_DP_MAX_CHANNELS || set->channels[slot] == NULL)
        return NULL;
    struct tp_channel *ch = set->channels[slot];
    struct tp_dp_slot *s = &set->slots[slot];
    set->channels[slot] = NULL;
    for (unsigned role = 0; role < TP_ROLES; role++) {
        struct tp_dp_line *l = &s->lines[role];
        if (!l->present)
            continue;
        tp_dp_set_membership(set, slot, (enum tp_line_role)role, false, now);
        tp_classifier_remove(set->classifier, l->group, l->udp, l->vlan);
    }
    if (s->rerequest.server_ip != 0)
        tp_classifier_remove(set->classifier, s->rerequest.local_ip,
                             (uint16_t)(TP_DP_RETRANS_PORT_BASE + slot), TP_CLASSIFY_ANY_VLAN);
    set->detached_instruments += tp_channel_stop(ch, now);
    memset(s, 0, sizeof(*s));
    return ch;
}

/* Whether the lcore may apply a command of `generation` (claims an open ticket once). */
static bool claim(struct tp_dp_set *set, uint64_t generation)
{
    _Atomic uint64_t *word = ticket_word(set);
    uint64_t t = atomic_load_explicit(word, memory_order_acquire);
    if (t == ticket(generation, TICKET_APPLYING))
        return true;
    uint64_t open = ticket(generation, TICKET_OPEN);
    return t == open &&
           atomic_compare_exchange_strong_explicit(word, &open, ticket(generation, TICKET_APPLYING),
                                                   memory_order_acq_rel, memory_order_acquire);
}

void tp_dp_set_apply(struct tp_dp_set *set, const struct tp_dp_cmd *cmds, unsigned n, uint64_t now)
{
    for (unsigned i = 0; i < n; i++) {
        const struct tp_dp_cmd *c = &cmds[i];
        if (!claim(set, c->generation))
            continue;
        switch (c->op) {
        case TP_DP_OP_DETACH:
            tp_dp_set_detach(set, c->slot, now);
            break;
        case TP_DP_OP_ATTACH:
            if (tp_dp_set_attach(set, c->slot, c->object, now) != 0)
                set->apply_errors++;
            break;
        case TP_DP_OP_FILTER:
            /* The feeds keep a pointer to this filter: between bursts, a copy is atomic for them.
             */
            memcpy(set->filter, c->object, sizeof(*set->filter));
            break;
        case TP_DP_OP_COMMIT:
            atomic_store_explicit(&set->applied, c->generation, memory_order_release);
            break;
        default:
            set->apply_errors++;
            break;
        }
    }
}

void tp_dp_set_open(struct tp_dp_set *set, uint64_t generation)
{
    atomic_store_explicit(ticket_word(set), ticket(generation, TICKET_OPEN), memory_order_release);
}

int tp_dp_set_applied(const struct tp_dp_set *set, uint64_t generation)
{
    return atomic_load_explicit(&set->applied, memory_order_acquire) == generation;
}

int tp_dp_set_cancel(struct tp_dp_set *set, uint64_t generation)
{
    uint64_t open = ticket(generation, TICKET_OPEN);
    if (atomic_compare_exchange_strong_explicit(ticket_word(set), &open,
                                                ticket(generation, TICKET_CANCELLED),
                                                memory_order_acq_rel, memory_order_acquire))
        return 0;
    return tp_dp_set_applied(set, generation) ? 1 : -EBUSY;
}
