/*
 * The main lcore's side of the data lcores' channels (daemon.h): each channel prepared here, with
 * everything that allocates or makes system calls (DPDK memory, counter names, flows tried on a
 * copy of its lcore's classifier), then attached directly at start-up or through reconfig.h's
 * commands by a live reload. A channel runs on the lcore the config gives it (lcores[].channels),
 * in a slot of that lcore, for as long as it runs.
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
#include "log.h"
#include "config_venue.h"

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
    EXPORT(&ch->counters, recovering_marks);
    EXPORT(&ch->counters, silences);
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
    if (ch->snap.state != TP_SNAP_OFF) {
        snprintf(p, sizeof(p), "channel=%s.snapshot", label);
        EXPORT(&ch->snap.counters, requests);
        EXPORT(&ch->snap.counters, begins);
        EXPORT(&ch->snap.counters, loaded);
        EXPORT(&ch->snap.counters, completed);
        EXPORT(&ch->snap.counters, failed);
        EXPORT(&ch->snap.counters, gave_up);
        EXPORT(&ch->snap.counters, holes);
        EXPORT(&ch->snap.counters, messages);
        EXPORT(&ch->snap.counters, kept);
        EXPORT(&ch->snap.counters, kept_dropped);
        EXPORT(&ch->snap.counters, replayed);
        EXPORT(&ch->snap.counters, skipped);
        EXPORT(&ch->snap.counters, kept_max);
        EXPORT(&ch->snap.counters, longest_step_tsc);
        EXPORT(&ch->snap.counters, longest_step_cpu_ns);
    }
    /* What the venue's messages did to the books: refusals, unknown or surplus instruments. */
    snprintf(p, sizeof(p), "channel=%s.decode", label);
    for (unsigned i = 0; i < ch->venue->n_decode_counters; i++) {
        const struct tp_venue_counter *vc = &ch->venue->decode_counters[i];
        rc |= tp_daemon_export(slot->exports, &slot->n_exports, TP_DP_SLOT_EXPORTS, area, p,
                               vc->name, (const uint64_t *)((const char *)ch->feed + vc->offset));
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

/* The MoldUDP64 re-request server of an ITCH channel (config_itch.h), or NULL: none. */
static const struct tp_cfg_itch_channel *rerequest_of(const struct tp_cfg_channel *cc)
{
    const struct tp_cfg_itch_channel *itch = &cc->proto.itch;
    return cc->protocol == TP_CFG_PROTO_ITCH && itch->rerequest_host != 0 ? itch : NULL;
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
    const struct tp_cfg_itch_channel *rerequest = rerequest_of(cc);
    if (rerequest != NULL) {
        uint16_t port = cc->lines[0].rx_port;
        s->rerequest = (struct tp_dp_rerequest_target){.server_ip = rerequest->rerequest_host,
                                                       .server_port = rerequest->rerequest_port,
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
 * What a channel's own venue adds to its params, from its part of the config (config_<venue>.h):
 * on the channels of other venues these fields keep prepare_channel's values, start_seq 1 and
 * the others zero, which their paths do not read.
 */
typedef void venue_params_fn(const struct tp_cfg_channel *cc, struct tp_channel_params *p);

static void mdp3_params(const struct tp_cfg_channel *cc, struct tp_channel_params *p)
{
    const struct tp_cfg_mdp3_channel *mdp3 = &cc->proto.mdp3;
    p->mdp3_book_type = TP_BOOK_TYPE_MBP_MBO;
    p->has_definitions = mdp3->definitions[0].present || mdp3->definitions[1].present;
    p->has_snapshot_mbo = mdp3->snapshot_mbo[0].present || mdp3->snapshot_mbo[1].present;
    p->audit_always = mdp3->audit_always;
    p->replay_bytes = 4u << 20;
}

static void itch_params(const struct tp_cfg_channel *cc, struct tp_channel_params *p)
{
    const struct tp_cfg_itch_channel *itch = &cc->proto.itch;
    /* With a snapshot service a late joiner adopts the stream and loads a snapshot; without, it
     * re-requests from sequence 1. */
    p->start_seq = itch->glimpse.present ? 0 : 1;
    p->mold.max_messages = itch->rerequest_max_messages;
    p->snapshot_messages = itch->glimpse.present ? itch->glimpse.buffer_messages : 0;
    p->io.send_rerequest = rerequest_of(cc) != NULL ? tp_dp_send_rerequest : NULL;
}

static void eobi_params(const struct tp_cfg_channel *cc, struct tp_channel_params *p)
{
    p->layout = cc->proto.eobi.release;
}

static venue_params_fn *const venue_params[] = {
    [TP_CFG_PROTO_MDP3] = mdp3_params,
    [TP_CFG_PROTO_ITCH] = itch_params,
    [TP_CFG_PROTO_EOBI] = eobi_params,
};

/*
 * Main lcore: everything an attach needs, allocated and registered here (never on the data
 * lcore): the channel in DPDK memory, its lines, re-request target and counters. 0 or -errno
 * with why in err; on error nothing stays allocated.
 */
static int prepare_channel(struct tp_daemon *d, unsigned l, const struct tp_cfg_channel *cc,
                           unsigned slot, int itch_slot, struct tp_dp_attach *a, char *err,
                           size_t err_size)
{
    struct tp_daemon_lcore *dl = &d->lcores[l];
    struct tp_dp_lcore *lc = &dl->lc;
    char why[512];
    const char *file_key = NULL;
    int rc = tp_cfg_venue_check_files(cc, &file_key, why, sizeof(why));
    if (rc != 0) {
        snprintf(err, err_size, "channel \"%s\": %s", cc->name, why);
        return rc;
    }
    struct tp_channel_params chp = {
        .protocol = (enum tp_channel_protocol)cc->protocol,
        .index = slot,
        .channel_id = cc->venue_channel_id,
        .held_max = d->held_max,
        .gap_wait_tsc = lc->tsc_hz * cc->gap_wait_us / 1000000,
        .silence_tsc = lc->tsc_hz * cc->silence_ms / 1000,
        .start_seq = 1,
        .mold = {.retry_tsc = lc->tsc_hz / 20, .give_up_tsc = lc->tsc_hz * cc->give_up_ms / 1000},
        .registry = dl->registry,
        .books = dl->books,
        .filter = &dl->filter,
        .itch_slot = itch_slot < 0 ? 0 : (uint16_t)itch_slot,
        .has_snapshot = cc->snapshot[0].present || cc->snapshot[1].present,
        .publisher = lc->publisher,
        .io = {.ctx = lc,
               .view = tp_dp_mbuf_view,
               .release = tp_dp_mbuf_release,
               .membership = tp_dp_membership},
    };
    venue_params[cc->protocol](cc, &chp);
    memset(a, 0, sizeof(*a));
    a->channel = tp_daemon_alloc("channel", tp_channel_memsize(&chp), dl->socket);
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
    if (rerequest_of(cc) != NULL && d->ports[a->slot.rerequest.port].ip == 0)
        tp_log(TP_LOG_GAP, TP_LOG_WARNING,
               "channel %s: port has no IPv4 address, re-requests cannot be answered", cc->name);
    return 0;
}

/* The main lcore's view after an attach (start-up or a reload the lcore acknowledged). */
static void note_attached(struct tp_daemon_lcore *dl, unsigned slot, const struct tp_dp_attach *a,
                          const char *name, int itch_slot)
{
    dl->slot_channel[slot] = a->channel;
    dl->slot_state[slot] = a->slot;
    counter_label(name, dl->slot_label[slot]);
    dl->itch_slot_of[slot] = itch_slot;
}

static void note_detached(struct tp_daemon_lcore *dl, unsigned slot)
{
    rte_free(dl->slot_channel[slot]);
    dl->slot_channel[slot] = NULL;
    memset(&dl->slot_state[slot], 0, sizeof(dl->slot_state[slot]));
    dl->slot_label[slot][0] = '\0';
    dl->itch_slot_of[slot] = -1;
}

/* A locate map of the lcore's registry no slot marked taken holds (itch_slot_of: each slot's). */
static int free_itch_slot_of(const struct tp_daemon_lcore *dl, const int *itch_slot_of,
                             const bool *taken)
{
    for (int m = 0; m < dl->itch_slots; m++) {
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

/* Start-up attaches the config's channels to the slots of their lcores directly (the lcores are
 * not running yet), through the same steps as a reload. */
int tp_daemon_start_channels(struct tp_daemon *d)
{
    const struct tp_config *cfg = d->cfg;
    for (unsigned l = 0; l < d->n_lcores; l++)
        for (unsigned s = 0; s < TP_DP_MAX_CHANNELS; s++)
            d->lcores[l].itch_slot_of[s] = -1;
    char why[256];
    if (check_channel_capacity(cfg, why, sizeof(why)) != 0) {
        tp_log(TP_LOG_MAIN, TP_LOG_ERR, "%s", why);
        return -EINVAL;
    }
    uint64_t now = rte_rdtsc();
    unsigned next_slot[TP_CFG_MAX_DATA_LCORES] = {0};
    int itch_next[TP_CFG_MAX_DATA_LCORES] = {0};
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        const struct tp_cfg_channel *cc = &cfg->channels[c];
        unsigned l = (unsigned)tp_config_channel_lcore(cfg, c); /* validated: one lcore each */
        struct tp_daemon_lcore *dl = &d->lcores[l];
        unsigned slot = next_slot[l]++;
        int itch_slot = tp_daemon_venue(cc)->locate_map ? itch_next[l]++ : -1;
        struct tp_dp_attach a;
        char err[640]; /* a channel name and a schema file's error */
        int rc = prepare_channel(d, l, cc, slot, itch_slot, &a, err, sizeof(err));
        if (rc == 0 && (rc = slot_flows(dl->shadow_cls, &a.slot, slot, true)) != 0)
            snprintf(err, sizeof(err), "channel \"%s\": a line's flow is used twice", cc->name);
        if (rc == 0)
            rc = tp_dp_set_attach(&dl->lc.set, slot, &a, now);
        if (rc != 0) {
            tp_log(TP_LOG_MAIN, TP_LOG_ERR, "%s", err);
            return rc;
        }
        d->slot_of[c] = (uint8_t)slot;
        d->lcore_of[c] = (uint8_t)l;
        note_attached(dl, slot, &a, cc->name, itch_slot);
    }
    return 0;
}

/* ---- live reload (see reconfig.h for the data lcore's side) --------------------------------- */

/* How long a reload waits for the data lcores to acknowledge it. They take commands every
 * 100 us while they run, but on a loaded host an lcore can be off its core for seconds, and a
 * reload refused for that only makes the operator try again. The main lcore keeps beating. */
#define RELOAD_ACK_MS 10000

/* What one reload prepares: the new lcore and slot of each channel, the attaches, the filter,
 * and each lcore's commands. */
struct reload_plan {
    uint8_t slot_of[TP_CFG_MAX_CHANNELS];
    uint8_t lcore_of[TP_CFG_MAX_CHANNELS];
    bool busy[TP_CFG_MAX_DATA_LCORES][TP_DP_MAX_CHANNELS]; /* used after the reload */
    int itch_slot_of[TP_CFG_MAX_DATA_LCORES][TP_DP_MAX_CHANNELS];
    unsigned n_attach;
    uint16_t attach_channel[TP_CFG_MAX_CHANNELS]; /* new config index of each attach */
    struct tp_dp_attach attach[TP_CFG_MAX_CHANNELS];
    struct tp_instrument_filter filter;
    unsigned n_cmds[TP_CFG_MAX_DATA_LCORES];
    struct tp_dp_cmd cmds[TP_CFG_MAX_DATA_LCORES][TP_DP_RECONFIG_RING];
};

static void plan_free(struct reload_plan *p)
{
    for (unsigned i = 0; i < p->n_attach; i++)
        rte_free(p->attach[i].channel);
    free(p);
}

static void plan_cmd(struct reload_plan *p, unsigned l, uint64_t generation, enum tp_dp_op op,
                     unsigned slot, const void *object)
{
    p->cmds[l][p->n_cmds[l]++] = (struct tp_dp_cmd){
        .generation = generation, .op = (uint16_t)op, .slot = (uint16_t)slot, .object = object};
}

/* Lcores, slots and ITCH locate maps of the next config; capacities checked. 0 or -errno. */
static int plan_slots(struct tp_daemon *d, const struct tp_config *next,
                      const struct tp_config_diff *diff, struct reload_plan *p, char *err,
                      size_t err_size)
{
    bool kept[TP_CFG_MAX_DATA_LCORES][TP_DP_MAX_CHANNELS] = {{false}};
    for (unsigned l = 0; l < d->n_lcores; l++)
        for (unsigned s = 0; s < TP_DP_MAX_CHANNELS; s++)
            p->itch_slot_of[l][s] = -1;
    for (unsigned i = 0; i < diff->n_unchanged; i++) {
        unsigned o = diff->unchanged[i].old_index, l = d->lcore_of[o], s = d->slot_of[o];
        p->slot_of[diff->unchanged[i].new_index] = (uint8_t)s;
        p->lcore_of[diff->unchanged[i].new_index] = (uint8_t)l;
        kept[l][s] = p->busy[l][s] = true;
        p->itch_slot_of[l][s] = d->lcores[l].itch_slot_of[s];
    }
    /* A changed channel restarts in its own slot (a move to another lcore needs a restart). */
    for (unsigned i = 0; i < diff->n_changed; i++) {
        unsigned o = diff->changed[i].old_index, c = diff->changed[i].new_index;
        unsigned l = d->lcore_of[o], s = d->slot_of[o];
        if (tp_config_channel_lcore(next, c) != (int)l) {
            snprintf(err, err_size,
                     "channels[%u] \"%s\": moving a channel to another lcore "
                     "needs a restart",
                     c, next->channels[c].name);
            return -EINVAL;
        }
        p->slot_of[c] = (uint8_t)s;
        p->lcore_of[c] = (uint8_t)l;
        p->busy[l][s] = true;
        p->attach_channel[p->n_attach++] = (uint16_t)c;
    }
    for (unsigned i = 0; i < diff->n_added; i++) {
        unsigned c = diff->added[i];
        int lc = tp_config_channel_lcore(next, c);
        if (lc < 0 || (unsigned)lc >= d->n_lcores) {
            snprintf(err, err_size, "channels[%u] \"%s\": runs on no running lcore", c,
                     next->channels[c].name);
            return -EINVAL;
        }
        unsigned l = (unsigned)lc, s = 0;
        while (s < TP_DP_MAX_CHANNELS && p->busy[l][s])
            s++;
        if (s == TP_DP_MAX_CHANNELS) {
            snprintf(err, err_size,
                     "channels[%u] \"%s\": all %d channel slots of lcore %u are "
                     "in use",
                     c, next->channels[c].name, TP_DP_MAX_CHANNELS, d->lcores[l].lc.lcore_id);
            return -ENOSPC;
        }
        p->slot_of[c] = (uint8_t)s;
        p->lcore_of[c] = (uint8_t)l;
        p->busy[l][s] = true;
        p->attach_channel[p->n_attach++] = (uint16_t)c;
    }
    /* ITCH locate maps of each lcore's registry: a changed channel keeps its own, others take a
     * free one. */
    bool taken[TP_CFG_MAX_DATA_LCORES][TP_DP_MAX_CHANNELS];
    memcpy(taken, kept, sizeof(taken));
    for (unsigned k = 0; k < p->n_attach; k++) {
        unsigned c = p->attach_channel[k], l = p->lcore_of[c], s = p->slot_of[c];
        const struct tp_daemon_lcore *dl = &d->lcores[l];
        if (!tp_daemon_venue(&next->channels[c])->locate_map)
            continue;
        int own = dl->slot_channel[s] != NULL ? dl->itch_slot_of[s] : -1;
        p->itch_slot_of[l][s] = -1;
        for (unsigned o = 0; o < TP_DP_MAX_CHANNELS && own >= 0; o++)
            if (taken[l][o] && p->itch_slot_of[l][o] == own)
                own = -1;
        p->itch_slot_of[l][s] =
            own >= 0 ? own : free_itch_slot_of(dl, p->itch_slot_of[l], taken[l]);
        if (p->itch_slot_of[l][s] < 0) {
            snprintf(err, err_size,
                     "channels[%u] \"%s\": no ITCH locate map left on lcore %u (%u: its ITCH "
                     "channels at start-up + %d); restart to add more",
                     c, next->channels[c].name, dl->lc.lcore_id, dl->itch_slots,
                     TP_DAEMON_SPARE_ITCH_SLOTS);
            return -ENOSPC;
        }
        taken[l][s] = true;
    }
    return check_channel_capacity(next, err, err_size);
}

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

/* Removes the flows of the config channel old_index (running) from its lcore's scratch copy. */
static void remove_old_flows(struct tp_daemon *d, unsigned old_index)
{
    struct tp_daemon_lcore *dl = &d->lcores[d->lcore_of[old_index]];
    unsigned s = d->slot_of[old_index];
    slot_flows(dl->scratch_cls, &dl->slot_state[s], s, false);
}

/* The command that detaches the running channel old_index, for its lcore. */
static void plan_detach(struct tp_daemon *d, struct reload_plan *p, uint64_t gen,
                        unsigned old_index)
{
    plan_cmd(p, d->lcore_of[old_index], gen, TP_DP_OP_DETACH, d->slot_of[old_index], NULL);
}

static bool all_applied(struct tp_daemon *d, const struct reload_plan *p, uint64_t gen)
{
    for (unsigned l = 0; l < d->n_lcores; l++)
        if (p->n_cmds[l] != 0 && !tp_dp_set_applied(&d->lcores[l].lc.set, gen))
            return false;
    return true;
}

/* Waits (at most ms) until every lcore with commands applied gen. */
static bool wait_applied(struct tp_daemon *d, const struct reload_plan *p, uint64_t gen,
                         unsigned ms)
{
    uint64_t deadline = rte_rdtsc() + ms * (rte_get_tsc_hz() / 1000);
    while (!all_applied(d, p, gen) && rte_rdtsc() < deadline) {
        /* The wait may last as long as the strategies' heartbeat timeout: keep beating. */
        tp_daemon_bus_heartbeat(d->bus);
        usleep(200);
    }
    return all_applied(d, p, gen);
}

int tp_daemon_apply(void *ctx, const struct tp_config *next, const struct tp_config_diff *diff,
                    char *err, size_t err_size)
{
    struct tp_daemon *d = ctx;
    struct reload_plan *p = calloc(1, sizeof(*p));
    if (p == NULL) {
        snprintf(err, err_size, "out of memory");
        return -ENOMEM;
    }
    int rc = plan_slots(d, next, diff, p, err, err_size);
    /* The flows: the leaving channels' removed, the arriving ones' added, on scratch copies. */
    for (unsigned l = 0; rc == 0 && l < d->n_lcores; l++)
        memcpy(d->lcores[l].scratch_cls, d->lcores[l].shadow_cls, d->cls_size);
    for (unsigned i = 0; rc == 0 && i < diff->n_removed; i++)
        remove_old_flows(d, diff->removed[i]);
    for (unsigned i = 0; rc == 0 && i < diff->n_changed; i++)
        remove_old_flows(d, diff->changed[i].old_index);
    unsigned prepared = 0;
    for (; rc == 0 && prepared < p->n_attach; prepared++) {
        unsigned c = p->attach_channel[prepared], l = p->lcore_of[c], s = p->slot_of[c];
        rc = prepare_channel(d, l, &next->channels[c], s, p->itch_slot_of[l][s],
                             &p->attach[prepared], err, err_size);
        if (rc == 0 &&
            slot_flows(d->lcores[l].scratch_cls, &p->attach[prepared].slot, s, true) != 0) {
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
        plan_detach(d, p, gen, diff->removed[i]);
    for (unsigned i = 0; i < diff->n_changed; i++)
        plan_detach(d, p, gen, diff->changed[i].old_index);
    /* The filter before the attaches (a starting channel judges its instruments by it), on
     * every lcore: each has its own copy. */
    if (diff->filters_changed) {
        tp_daemon_build_filter(&next->instruments, &p->filter);
        for (unsigned l = 0; l < d->n_lcores; l++)
            plan_cmd(p, l, gen, TP_DP_OP_FILTER, 0, &p->filter);
    }
    for (unsigned k = 0; k < p->n_attach; k++) {
        unsigned c = p->attach_channel[k];
        plan_cmd(p, p->lcore_of[c], gen, TP_DP_OP_ATTACH, p->slot_of[c], &p->attach[k]);
    }
    for (unsigned l = 0; l < d->n_lcores; l++)
        if (p->n_cmds[l] != 0)
            plan_cmd(p, l, gen, TP_DP_OP_COMMIT, 0, NULL);

    /* One ticket for all the lcores (reconfig.h); every ring has room before any is written
     * (this lcore is their only producer). */
    d->generation = gen;
    tp_dp_set_open(&d->lcores[0].lc.set, gen);
    for (unsigned l = 0; l < d->n_lcores; l++) {
        if (rte_ring_free_count(d->lcores[l].lc.reconfig) < p->n_cmds[l]) {
            tp_dp_set_cancel(&d->lcores[0].lc.set, gen);
            snprintf(err, err_size, "the command ring of lcore %u is full; try again",
                     d->lcores[l].lc.lcore_id);
            char ignored[128];
            filter_groups(d, d->cfg, NULL, ignored, sizeof(ignored));
            plan_free(p);
            return -EBUSY;
        }
    }
    for (unsigned l = 0; l < d->n_lcores; l++)
        if (p->n_cmds[l] != 0)
            rte_ring_enqueue_bulk_elem(d->lcores[l].lc.reconfig, p->cmds[l], sizeof(p->cmds[l][0]),
                                       p->n_cmds[l], NULL);
    /* Bounded wait: the lcores apply commands every 100 us while they run. */
    bool applied = wait_applied(d, p, gen, RELOAD_ACK_MS);
    int cancelled = applied ? 1 : tp_dp_set_cancel(&d->lcores[0].lc.set, gen);
    if (cancelled == 0) {
        snprintf(err, err_size,
                 "the data lcores did not take the change within %d ms (are they running?); "
                 "nothing changed",
                 RELOAD_ACK_MS);
        char ignored[128];
        filter_groups(d, d->cfg, NULL, ignored, sizeof(ignored));
        plan_free(p);
        return -ETIMEDOUT;
    }
    /* Begun by one lcore: the others follow within their next timer tick. */
    if (!applied && !wait_applied(d, p, gen, RELOAD_ACK_MS)) {
        /* An lcore stopped polling mid-reload: nothing safe can be freed or reported. */
        snprintf(err, err_size,
                 "a data lcore stopped before finishing the reload; restart the daemon");
        return -ETIMEDOUT;
    }
    /* Applied: the detached channels and the prepared objects are ours again. */
    for (unsigned i = 0; i < diff->n_removed; i++) {
        unsigned o = diff->removed[i];
        note_detached(&d->lcores[d->lcore_of[o]], d->slot_of[o]);
    }
    for (unsigned i = 0; i < diff->n_changed; i++) {
        unsigned o = diff->changed[i].old_index;
        note_detached(&d->lcores[d->lcore_of[o]], d->slot_of[o]);
    }
    for (unsigned k = 0; k < p->n_attach; k++) {
        unsigned c = p->attach_channel[k], l = p->lcore_of[c], s = p->slot_of[c];
        note_attached(&d->lcores[l], s, &p->attach[k], next->channels[c].name,
                      p->itch_slot_of[l][s]);
    }
    uint64_t apply_errors = 0;
    for (unsigned l = 0; l < d->n_lcores; l++) {
        memcpy(d->lcores[l].shadow_cls, d->lcores[l].scratch_cls, d->cls_size);
        apply_errors += d->lcores[l].lc.set.apply_errors;
    }
    /* The leaving groups go from the filters: a failure only leaves extra frames to drop. */
    char why[256];
    if (filter_groups(d, next, NULL, why, sizeof(why)) != 0)
        tp_log(TP_LOG_RELOAD, TP_LOG_WARNING, "%s", why);
    *d->cfg = *next;
    memcpy(d->slot_of, p->slot_of, sizeof(d->slot_of));
    memcpy(d->lcore_of, p->lcore_of, sizeof(d->lcore_of));
    tp_daemon_name_venues(d);
    if (apply_errors != 0)
        tp_log(TP_LOG_RELOAD, TP_LOG_ERR, "%lu flows or joins failed on the data lcores",
               apply_errors);
    p->n_attach = 0; /* the channels are running now */
    plan_free(p);
    return 0;
}
