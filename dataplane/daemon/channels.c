/*
 * The main lcore's side of the data lcore's channels (daemon.h): each channel prepared here, with
 * everything that allocates or makes system calls (DPDK memory, counter names, flows tried on a
 * copy of the classifier), then attached directly at start-up or through reconfig.h's commands
 * by a live reload.
 */
#include "daemon.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "bus/counters.h"
#include "bus_setup.h"
#include "host.h"
#include "mdp3_schema_file.h"

/*
 * A channel name as a label value inside a counter name: '.' separates the name's segments, so
 * it becomes '_', and the name is cut so the longest counter name fits the registry's limit.
 */
static void counter_label(const char *name, char out[TP_DAEMON_LABEL_LEN])
{
    size_t i = 0;
    for (; name[i] != '\0' && i < TP_DAEMON_LABEL_LEN - 1; i++)
        out[i] = name[i] == '.' ? '_' : name[i];
    out[i] = '\0';
}

/*
 * A channel's counters carry its name (and line) as Prometheus label segments:
 * "channel=X.feed.packets" is tickplane_feed_packets_total{channel="X"} (docs/OPERATIONS.md).
 * A channel added again under the same name gets the same counters back.
 */
static int export_channel(struct tp_dp_slot *slot, struct tp_counters *area, const char *name,
                          const struct tp_channel *ch)
{
    int rc = 0;
    char p[TP_COUNTER_NAME_LEN], label[TP_DAEMON_LABEL_LEN];
    counter_label(name, label);
    slot->n_exports = 0;
#define EXPORT(obj, field)                                                                         \
    rc |= tp_daemon_export(slot->exports, &slot->n_exports, TP_DP_SLOT_EXPORTS, area, p, #field,   \
                           &(obj)->field)
    snprintf(p, sizeof(p), "channel=%s.feed", label);
    EXPORT(&ch->counters, packets);
    EXPORT(&ch->counters, malformed);
    EXPORT(&ch->counters, messages);
    EXPORT(&ch->counters, stale_marks);
    const struct tp_arb_counters *ac = tp_arb_counters(ch->arb);
    snprintf(p, sizeof(p), "channel=%s.arb", label);
    EXPORT(ac, gaps);
    EXPORT(ac, gap_filled);
    EXPORT(ac, skipped_msgs);
    EXPORT(ac, resets);
    snprintf(p, sizeof(p), "channel=%s.mold", label);
    EXPORT(&ch->mold.counters, requests);
    EXPORT(&ch->mold.counters, recovered);
    EXPORT(&ch->mold.counters, given_up);
    /* What the venue's messages did to the books: refusals, unknown or surplus instruments. */
    snprintf(p, sizeof(p), "channel=%s.decode", label);
    if (ch->params.protocol == TP_CHANNEL_ITCH) {
        EXPORT(&ch->itch.counters, malformed);
        EXPORT(&ch->itch.counters, unknown_instrument);
        EXPORT(&ch->itch.counters, rejected);
        EXPORT(&ch->itch.counters, registry_full);
    } else {
        EXPORT(&ch->mdp3.counters, malformed);
        EXPORT(&ch->mdp3.counters, unknown_instrument);
        EXPORT(&ch->mdp3.counters, rejected);
        EXPORT(&ch->mdp3.counters, registry_full);
        EXPORT(&ch->mdp3.counters, rpt_seq_gaps);
    }
    static const char *const line_names[] = {"a", "b", "r"};
    for (unsigned l = 0; l < TP_LINE_COUNT; l++) {
        snprintf(p, sizeof(p), "channel=%s.line=%s.line", label, line_names[l]);
        EXPORT(&ac->line[l], packets);
        EXPORT(&ac->line[l], delivered);
        EXPORT(&ac->line[l], duplicates);
        EXPORT(&ac->line[l], held);
        EXPORT(&ac->line[l], stale);
        EXPORT(&ac->line[l], overflow);
        EXPORT(&ac->line[l], corrupt);
    }
#undef EXPORT
    return rc;
}

/* slot_of: the slot of each config channel. */
/* The lines of config channel cc as the slot holds them. */
static void slot_lines(const struct tp_daemon *d, const struct tp_cfg_channel *cc,
                       struct tp_dp_slot *s)
{
    memset(s, 0, sizeof(*s));
    for (unsigned role = 0; role < TP_ROLE_RETRANS; role++) {
        const struct tp_cfg_line *l = tp_daemon_channel_line(cc, role);
        if (l == NULL || !l->present)
            continue;
        s->lines[role] = (struct tp_dp_line){
            .present = true,
            .group = l->group,
            .source = l->source,
            .udp = l->port,
            .vlan = l->vlan < 0 ? TP_CLASSIFY_ANY_VLAN : (uint16_t)l->vlan,
            .port = l->rx_port,
        };
    }
    if (cc->rerequest_host != 0) {
        uint16_t port = cc->lines[0].rx_port;
        s->rerequest = (struct tp_dp_rerequest_target){.server_ip = cc->rerequest_host,
                                                       .server_port = cc->rerequest_port,
                                                       .port = port,
                                                       .local_ip = d->ports[port].ip};
    }
}

/* Applies a slot's flows to a classifier (add or remove): the first error, or 0. */
static int slot_flows(struct tp_classifier *cls, const struct tp_dp_slot *s, unsigned slot,
                      bool add)
{
    int rc = 0;
    for (unsigned role = 0; role < TP_ROLES; role++) {
        const struct tp_dp_line *l = &s->lines[role];
        if (!l->present)
            continue;
        int r = add ? tp_classifier_add(cls, l->group, l->udp, l->vlan, slot * TP_ROLES + role)
                    : tp_classifier_remove(cls, l->group, l->udp, l->vlan);
        rc = rc ? rc : r;
    }
    if (s->rerequest.server_ip != 0) {
        uint16_t udp = (uint16_t)(TP_DP_RETRANS_PORT_BASE + slot);
        int r = add ? tp_classifier_add(cls, s->rerequest.local_ip, udp, TP_CLASSIFY_ANY_VLAN,
                                        slot * TP_ROLES + TP_ROLE_RETRANS)
                    : tp_classifier_remove(cls, s->rerequest.local_ip, udp, TP_CLASSIFY_ANY_VLAN);
        rc = rc ? rc : r;
    }
    return rc;
}

/*
 * Main lcore: everything an attach needs, allocated and registered here (never on the data
 * lcore): the channel in DPDK memory, its lines, re-request target and counters. 0 or -errno
 * with why in err; on error nothing stays allocated.
 */
static int prepare_channel(struct tp_daemon *d, const struct tp_cfg_channel *cc, unsigned slot,
                           int itch_slot, struct tp_dp_attach *a, char *err, size_t err_size)
{
    struct tp_dp_lcore *lc = &d->lc;
    if (cc->protocol == TP_CFG_PROTO_MDP3 && cc->schema[0] != '\0') {
        char why[512];
        int rc = tp_mdp3_schema_file_check(cc->schema, why, sizeof(why));
        if (rc != 0) {
            snprintf(err, err_size, "channel \"%s\": %s", cc->name, why);
            return rc;
        }
    }
    struct tp_channel_params chp = {
        .protocol = cc->protocol == TP_CFG_PROTO_ITCH ? TP_CHANNEL_ITCH : TP_CHANNEL_MDP3,
        .index = slot,
        .channel_id = cc->venue_channel_id,
        .held_max = d->held_max,
        .gap_wait_tsc = lc->tsc_hz * cc->gap_wait_us / 1000000,
        .start_seq = 1,
        .mold = {.retry_tsc = lc->tsc_hz / 20,
                 .give_up_tsc = lc->tsc_hz * cc->give_up_ms / 1000,
                 .max_messages = cc->rerequest_max_messages},
        .registry = d->registry,
        .books = d->books,
        .filter = &d->filter,
        .itch_slot = itch_slot < 0 ? 0 : (uint16_t)itch_slot,
        .mdp3_book_type = TP_BOOK_TYPE_MBP_MBO,
        .has_snapshot = cc->snapshot[0].present || cc->snapshot[1].present,
        .has_definitions = cc->definitions[0].present || cc->definitions[1].present,
        .replay_bytes = 4u << 20,
        .publisher = lc->publisher,
        .io = {.ctx = lc,
               .view = tp_dp_mbuf_view,
               .release = tp_dp_mbuf_release,
               .send_rerequest = cc->rerequest_host ? tp_dp_send_rerequest : NULL,
               .membership = tp_dp_membership},
    };
    memset(a, 0, sizeof(*a));
    a->channel = tp_daemon_alloc("channel", tp_channel_memsize(&chp));
    if (a->channel == NULL || tp_channel_init(a->channel, &chp) != 0) {
        rte_free(a->channel);
        a->channel = NULL;
        snprintf(err, err_size, "channel \"%s\": cannot allocate its memory", cc->name);
        return -ENOMEM;
    }
    slot_lines(d, cc, &a->slot);
    if (export_channel(&a->slot, tp_daemon_bus_counters(d->bus), cc->name, a->channel) != 0) {
        rte_free(a->channel);
        a->channel = NULL;
        snprintf(err, err_size,
                 "channel \"%s\": the counters area is full (removed channels keep their "
                 "names until a restart)",
                 cc->name);
        return -ENOSPC;
    }
    if (cc->rerequest_host != 0 && d->ports[a->slot.rerequest.port].ip == 0)
        fprintf(stderr,
                "tickplane: channel %s: port has no IPv4 address, re-requests cannot be answered\n",
                cc->name);
    return 0;
}

/* The main lcore's view after an attach (start-up or a reload the lcore acknowledged). */
static void note_attached(struct tp_daemon *d, unsigned slot, const struct tp_dp_attach *a,
                          const char *name, int itch_slot)
{
    d->slot_channel[slot] = a->channel;
    d->slot_state[slot] = a->slot;
    counter_label(name, d->slot_label[slot]);
    d->itch_slot_of[slot] = itch_slot;
}

static void note_detached(struct tp_daemon *d, unsigned slot)
{
    rte_free(d->slot_channel[slot]);
    d->slot_channel[slot] = NULL;
    memset(&d->slot_state[slot], 0, sizeof(d->slot_state[slot]));
    d->slot_label[slot][0] = '\0';
    d->itch_slot_of[slot] = -1;
}

/* A locate map no slot marked taken holds (itch_slot_of: each slot's), or -1. */
static int free_itch_slot_of(const struct tp_daemon *d, const int *itch_slot_of, const bool *taken)
{
    for (int m = 0; m < d->itch_slots; m++) {
        bool used = false;
        for (unsigned s = 0; s < TP_DP_MAX_CHANNELS && !used; s++)
            used = taken[s] && itch_slot_of[s] == m;
        if (!used)
            return m;
    }
    return -1;
}

/* Capacities a config's channels must fit besides the slots: counter labels, groups per port. */
static int check_channel_capacity(const struct tp_config *cfg, char *err, size_t err_size)
{
    for (unsigned i = 0; i < cfg->n_channels; i++)
        for (unsigned j = 0; j < i; j++) {
            char a[TP_DAEMON_LABEL_LEN], b[TP_DAEMON_LABEL_LEN];
            counter_label(cfg->channels[i].name, a);
            counter_label(cfg->channels[j].name, b);
            if (strcmp(a, b) == 0) {
                snprintf(err, err_size,
                         "channels[%u] \"%s\": its counters would be those of \"%s\" (counter "
                         "names use the first %d characters, '.' as '_')",
                         i, cfg->channels[i].name, cfg->channels[j].name, TP_DAEMON_LABEL_LEN - 1);
                return -EINVAL;
            }
        }
    for (unsigned p = 0; p < cfg->n_ports; p++) {
        uint32_t groups[TP_HOST_MAX_GROUPS + 1];
        unsigned n = 0;
        for (unsigned c = 0; c < cfg->n_channels; c++)
            for (unsigned role = 0; role < TP_ROLE_RETRANS; role++) {
                const struct tp_cfg_line *l = tp_daemon_channel_line(&cfg->channels[c], role);
                if (l == NULL || !l->present || l->rx_port != p)
                    continue;
                unsigned k = 0;
                while (k < n && groups[k] != l->group)
                    k++;
                if (k == n && n++ == TP_HOST_MAX_GROUPS) {
                    snprintf(err, err_size, "ports[%u]: more than %d multicast groups", p,
                             TP_HOST_MAX_GROUPS);
                    return -ENOSPC;
                }
                groups[k] = l->group;
            }
    }
    return 0;
}

/* Start-up attaches the config's channels to slots 0..n-1 directly (the lcore is not running
 * yet), through the same steps as a reload. */
int tp_daemon_start_channels(struct tp_daemon *d)
{
    const struct tp_config *cfg = d->cfg;
    struct tp_dp_lcore *lc = &d->lc;
    for (unsigned s = 0; s < TP_DP_MAX_CHANNELS; s++)
        d->itch_slot_of[s] = -1;
    char why[256];
    if (check_channel_capacity(cfg, why, sizeof(why)) != 0) {
        fprintf(stderr, "tickplane: %s\n", why);
        return -EINVAL;
    }
    uint64_t now = rte_rdtsc();
    int itch_next = 0;
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        const struct tp_cfg_channel *cc = &cfg->channels[c];
        int itch_slot = cc->protocol == TP_CFG_PROTO_ITCH ? itch_next++ : -1;
        struct tp_dp_attach a;
        char err[640]; /* a channel name and a schema file's error */
        int rc = prepare_channel(d, cc, c, itch_slot, &a, err, sizeof(err));
        if (rc == 0 && (rc = slot_flows(d->shadow_cls, &a.slot, c, true)) != 0)
            snprintf(err, sizeof(err), "channel \"%s\": a line's flow is used twice", cc->name);
        if (rc == 0)
            rc = tp_dp_set_attach(&lc->set, c, &a, now);
        if (rc != 0) {
            fprintf(stderr, "tickplane: %s\n", err);
            return rc;
        }
        d->slot_of[c] = (uint8_t)c;
        note_attached(d, c, &a, cc->name, itch_slot);
    }
    return 0;
}

/* ---- live reload (see reconfig.h for the data lcore's side) --------------------------------- */

/* How long a reload waits for the data lcore to acknowledge it. */
#define RELOAD_ACK_MS 2000

/* What one reload prepares: the new slot of each channel, the attaches, the filter. */
struct reload_plan {
    uint8_t slot_of[TP_CFG_MAX_CHANNELS];
    bool busy[TP_DP_MAX_CHANNELS]; /* used after the reload */
    int itch_slot_of[TP_DP_MAX_CHANNELS];
    unsigned n_attach;
    uint16_t attach_channel[TP_CFG_MAX_CHANNELS]; /* new config index of each attach */
    struct tp_dp_attach attach[TP_CFG_MAX_CHANNELS];
    struct tp_instrument_filter filter;
    unsigned n_cmds;
    struct tp_dp_cmd cmds[TP_DP_RECONFIG_RING];
};

static void plan_free(struct reload_plan *p)
{
    for (unsigned i = 0; i < p->n_attach; i++)
        rte_free(p->attach[i].channel);
    free(p);
}

static void plan_cmd(struct reload_plan *p, uint64_t generation, enum tp_dp_op op, unsigned slot,
                     const void *object)
{
    p->cmds[p->n_cmds++] = (struct tp_dp_cmd){
        .generation = generation, .op = (uint16_t)op, .slot = (uint16_t)slot, .object = object};
}

/* Slots and ITCH locate maps of the next config; capacities checked. 0 or -errno with err. */
static int plan_slots(struct tp_daemon *d, const struct tp_config *next,
                      const struct tp_config_diff *diff, struct reload_plan *p, char *err,
                      size_t err_size)
{
    bool kept[TP_DP_MAX_CHANNELS] = {false};
    for (unsigned s = 0; s < TP_DP_MAX_CHANNELS; s++)
        p->itch_slot_of[s] = -1;
    for (unsigned i = 0; i < diff->n_unchanged; i++) {
        unsigned s = d->slot_of[diff->unchanged[i].old_index];
        p->slot_of[diff->unchanged[i].new_index] = (uint8_t)s;
        kept[s] = p->busy[s] = true;
        p->itch_slot_of[s] = d->itch_slot_of[s];
    }
    /* A changed channel restarts in its own slot. */
    for (unsigned i = 0; i < diff->n_changed; i++) {
        unsigned s = d->slot_of[diff->changed[i].old_index];
        p->slot_of[diff->changed[i].new_index] = (uint8_t)s;
        p->busy[s] = true;
        p->attach_channel[p->n_attach++] = diff->changed[i].new_index;
    }
    for (unsigned i = 0; i < diff->n_added; i++) {
        unsigned s = 0;
        while (s < TP_DP_MAX_CHANNELS && p->busy[s])
            s++;
        if (s == TP_DP_MAX_CHANNELS) {
            snprintf(err, err_size, "channels[%u] \"%s\": all %d channel slots are in use",
                     diff->added[i], next->channels[diff->added[i]].name, TP_DP_MAX_CHANNELS);
            return -ENOSPC;
        }
        p->slot_of[diff->added[i]] = (uint8_t)s;
        p->busy[s] = true;
        p->attach_channel[p->n_attach++] = diff->added[i];
    }
    /* ITCH locate maps: a changed channel keeps its own, others take a free one. */
    bool taken[TP_DP_MAX_CHANNELS] = {false};
    for (unsigned s = 0; s < TP_DP_MAX_CHANNELS; s++)
        taken[s] = kept[s];
    for (unsigned k = 0; k < p->n_attach; k++) {
        unsigned c = p->attach_channel[k], s = p->slot_of[c];
        if (next->channels[c].protocol != TP_CFG_PROTO_ITCH)
            continue;
        int own = d->slot_channel[s] != NULL ? d->itch_slot_of[s] : -1;
        p->itch_slot_of[s] = -1;
        for (unsigned o = 0; o < TP_DP_MAX_CHANNELS && own >= 0; o++)
            if (taken[o] && p->itch_slot_of[o] == own)
                own = -1;
        p->itch_slot_of[s] = own >= 0 ? own : free_itch_slot_of(d, p->itch_slot_of, taken);
        if (p->itch_slot_of[s] < 0) {
            snprintf(err, err_size,
                     "channels[%u] \"%s\": no ITCH locate map left (%u: the ITCH channels at "
                     "start-up + %d); restart to add more",
                     c, next->channels[c].name, d->itch_slots, TP_DAEMON_SPARE_ITCH_SLOTS);
            return -ENOSPC;
        }
        taken[s] = true;
    }
    return check_channel_capacity(next, err, err_size);
}

/*
 * The apply hook: prepares the reload (memory, counters, flows tried on a copy of the
 * classifier), sends the data lcore its commands and waits for the acknowledgement. On any
 * failure nothing changed.
 */
/*
 * Programs each open port's multicast filter with the groups of `a` and, if not NULL, of `b`
 * (during a reload: both configs' groups, so no channel misses frames either way). 0, or the
 * first failure with why in err.
 */
static int filter_groups(struct tp_daemon *d, const struct tp_config *a, const struct tp_config *b,
                         char *err, size_t err_size)
{
    int first = 0;
    for (unsigned i = 0; i < d->n_ports_open; i++) {
        uint32_t groups[TP_PORT_MAX_GROUPS];
        unsigned n = tp_daemon_port_groups(a, i, groups, 0, TP_PORT_MAX_GROUPS);
        if (b != NULL)
            n = tp_daemon_port_groups(b, i, groups, n, TP_PORT_MAX_GROUPS);
        int rc = tp_port_set_groups(&d->ports[i].port, groups, n);
        if (rc != 0 && first == 0) {
            snprintf(err, err_size, "ports[%u]: multicast filter: %s", i, rte_strerror(-rc));
            first = rc;
        }
    }
    return first;
}

int tp_daemon_apply(void *ctx, const struct tp_config *next, const struct tp_config_diff *diff,
                    char *err, size_t err_size)
{
    struct tp_daemon *d = ctx;
    struct tp_dp_lcore *lc = &d->lc;
    struct reload_plan *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    int rc = plan_slots(d, next, diff, p, err, err_size);
    /* The flows: the leaving channels' removed, the arriving ones' added, on a scratch copy. */
    memcpy(d->scratch_cls, d->shadow_cls, d->cls_size);
    for (unsigned i = 0; rc == 0 && i < diff->n_removed; i++) {
        unsigned s = d->slot_of[diff->removed[i]];
        slot_flows(d->scratch_cls, &d->slot_state[s], s, false);
    }
    for (unsigned i = 0; rc == 0 && i < diff->n_changed; i++) {
        unsigned s = d->slot_of[diff->changed[i].old_index];
        slot_flows(d->scratch_cls, &d->slot_state[s], s, false);
    }
    unsigned prepared = 0;
    for (; rc == 0 && prepared < p->n_attach; prepared++) {
        unsigned c = p->attach_channel[prepared], s = p->slot_of[c];
        rc = prepare_channel(d, &next->channels[c], s, p->itch_slot_of[s], &p->attach[prepared],
                             err, err_size);
        if (rc == 0 && slot_flows(d->scratch_cls, &p->attach[prepared].slot, s, true) != 0) {
            snprintf(err, err_size,
                     "channels[%u] \"%s\": a line's group and port are already "
                     "another line's",
                     c, next->channels[c].name);
            rc = -EEXIST;
        }
    }
    p->n_attach = prepared; /* what plan_free releases */
    if (rc != 0) {
        plan_free(p);
        return rc;
    }
    /* The ports' filters take the arriving groups before any channel waits for them. */
    rc = filter_groups(d, d->cfg, next, err, err_size);
    if (rc != 0) {
        filter_groups(d, d->cfg, NULL, err, err_size);
        plan_free(p);
        return rc;
    }
    uint64_t gen = d->generation + 1;
    for (unsigned i = 0; i < diff->n_removed; i++)
        plan_cmd(p, gen, TP_DP_OP_DETACH, d->slot_of[diff->removed[i]], NULL);
    for (unsigned i = 0; i < diff->n_changed; i++)
        plan_cmd(p, gen, TP_DP_OP_DETACH, d->slot_of[diff->changed[i].old_index], NULL);
    /* The filter before the attaches: a starting channel judges its instruments by it. */
    if (diff->filters_changed) {
        tp_daemon_build_filter(&next->instruments, &p->filter);
        plan_cmd(p, gen, TP_DP_OP_FILTER, 0, &p->filter);
    }
    for (unsigned k = 0; k < p->n_attach; k++)
        plan_cmd(p, gen, TP_DP_OP_ATTACH, p->slot_of[p->attach_channel[k]], &p->attach[k]);
    plan_cmd(p, gen, TP_DP_OP_COMMIT, 0, NULL);

    d->generation = gen;
    tp_dp_set_open(&lc->set, gen);
    if (rte_ring_enqueue_bulk_elem(lc->reconfig, p->cmds, sizeof(p->cmds[0]), p->n_cmds, NULL) !=
        p->n_cmds) {
        snprintf(err, err_size, "the data lcore's command ring is full; try again");
        plan_free(p);
        return -EBUSY;
    }
    /* Bounded wait: the lcore applies commands every 100 us while it runs. */
    uint64_t uptick = rte_get_tsc_hz() / 1000;
    uint64_t deadline = rte_rdtsc() + RELOAD_ACK_MS * uptick;
    while (!tp_dp_set_applied(&lc->set, gen) && rte_rdtsc() < deadline)
        usleep(1000);
    int cancelled = tp_dp_set_applied(&lc->set, gen) ? 1 : tp_dp_set_cancel(&lc->set, gen);
    /* -EBUSY: the lcore claimed it an instant ago and finishes within microseconds. */
    while (cancelled == -EBUSY && !tp_dp_set_applied(&lc->set, gen))
        usleep(100);
    if (cancelled == 0) {
        snprintf(err, err_size,
                 "the data lcore did not take the change within %d ms (is it running?); "
                 "nothing changed",
                 RELOAD_ACK_MS);
        char ignored[128];
        filter_groups(d, d->cfg, NULL, ignored, sizeof(ignored));
        plan_free(p);
        return -ETIMEDOUT;
    }
    /* Applied: the detached channels and the prepared objects are ours again. */
    for (unsigned i = 0; i < diff->n_removed; i++)
        note_detached(d, d->slot_of[diff->removed[i]]);
    for (unsigned i = 0; i < diff->n_changed; i++)
        note_detached(d, d->slot_of[diff->changed[i].old_index]);
    for (unsigned k = 0; k < p->n_attach; k++) {
        unsigned c = p->attach_channel[k], s = p->slot_of[c];
        note_attached(d, s, &p->attach[k], next->channels[c].name, p->itch_slot_of[s]);
    }
    memcpy(d->shadow_cls, d->scratch_cls, d->cls_size);
    /* The leaving groups go from the filters: a failure only leaves extra frames to drop. */
    char why[256];
    if (filter_groups(d, next, NULL, why, sizeof(why)) != 0)
        fprintf(stderr, "tickplane: reload: %s\n", why);
    *d->cfg = *next;
    memcpy(d->slot_of, p->slot_of, sizeof(d->slot_of));
    tp_daemon_name_venues(d);
    if (lc->set.apply_errors != 0)
        fprintf(stderr, "tickplane: reload: %lu flows or joins failed on the data lcore\n",
                lc->set.apply_errors);
    p->n_attach = 0; /* the channels are running now */
    plan_free(p);
    return 0;
}
