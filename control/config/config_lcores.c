/*
 * The "lcores" section: each data lcore's EAL lcore id, the rx queues it polls, the channels it
 * runs and its share of instrument ids. Validates the lcores against the EAL list and, across
 * sections, that every rx queue is polled and every channel run exactly once, by an lcore that
 * polls its ports, and that the lcores' instrument windows fit the capacity.
 */
#include <stdio.h>
#include <string.h>

#include "config_loader.h"

bool eal_has_lcore(const struct tp_cfg_eal *eal, unsigned id)
{
    for (unsigned i = 0; i < eal->n_lcores; i++)
        if (eal->lcores[i] == id)
            return true;
    return false;
}

/* "0-1,3" back from the sorted EAL list, for messages. */
void format_lcore_list(const struct tp_cfg_eal *eal, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = '\0';
    for (unsigned i = 0; i < eal->n_lcores && used < size; i++) {
        unsigned lo = eal->lcores[i];
        while (i + 1 < eal->n_lcores && eal->lcores[i + 1] == eal->lcores[i] + 1)
            i++;
        int w =
            lo == eal->lcores[i]
                ? snprintf(buf + used, size - used, "%s%u", used ? "," : "", lo)
                : snprintf(buf + used, size - used, "%s%u-%u", used ? "," : "", lo, eal->lcores[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

static void parse_poll(struct loader *ld, const char *path, const json_t *arr,
                       struct tp_cfg_lcore *lc)
{
    if (json_array_size(arr) > TP_CFG_MAX_RXQ) {
        tp_jw_error(ld->errs, path, "has %zu entries, the limit is %d", json_array_size(arr),
                    TP_CFG_MAX_RXQ);
        return;
    }
    size_t i;
    json_t *obj;
    json_array_foreach(arr, i, obj)
    {
        static const char *const keys[] = {"port", "queue", NULL};
        char item[TP_JW_PATH_MAX], child[TP_JW_PATH_MAX], name[TP_CFG_NAME_MAX];
        tp_jw_path_index(item, path, i);
        if (!object_item(ld, item, obj)) {
            continue;
        }
        tp_jw_check_keys(ld->errs, item, obj, keys);
        uint64_t queue = 0;
        bool have_queue = tp_jw_uint(ld->errs, item, obj, "queue", 0, 63, false, &queue) ||
                          json_object_get(obj, "queue") == NULL;
        tp_jw_path_key(child, item, "port");
        if (!tp_jw_string(ld->errs, item, obj, "port", sizeof(name), true, name) || !have_queue)
            continue;
        int port = port_ref(ld, child, name);
        if (port < 0) {
            ld->lcores_ok = false;
            continue;
        }
        if (queue >= ld->cfg->ports[port].rx_queues) {
            ld->lcores_ok = false;
            tp_jw_path_key(child, item, "queue");
            tp_jw_error(ld->errs, child, "port \"%s\" has %u rx queues, queue %llu does not exist",
                        name, ld->cfg->ports[port].rx_queues, (unsigned long long)queue);
            continue;
        }
        lc->rxq[lc->n_rxq++] =
            (struct tp_cfg_rxq){.port = (uint16_t)port, .queue = (uint16_t)queue};
    }
}

static void parse_lcore_channels(struct loader *ld, const char *path, const json_t *arr,
                                 struct tp_cfg_lcore *lc)
{
    const char *names[TP_CFG_MAX_CHANNELS + 1];
    NAME_LIST(names, ld->cfg->channels, ld->cfg->n_channels);
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v)
    {
        char item[TP_JW_PATH_MAX], name[TP_CFG_NAME_MAX];
        tp_jw_path_index(item, path, i);
        if (!tp_jw_string_value(ld->errs, item, v, sizeof(name), name))
            continue;
        int idx = tp_config_channel_index(ld->cfg, name);
        if (idx < 0) {
            if (ld->channels_ok)
                unknown_name(ld, item, "channel", name, names);
            continue;
        }
        if (lc->n_channels < TP_CFG_MAX_CHANNELS)
            lc->channels[lc->n_channels++] = (uint16_t)idx;
    }
}

/* One lcores[] element: an EAL lcore other than the main one, what it polls and runs. */
void parse_lcores_item(struct loader *ld, const char *path, const json_t *obj)
{
    static const char *const keys[] = {"lcore", "poll", "channels", "instruments", NULL};
    struct tp_config *cfg = ld->cfg;
    char child[TP_JW_PATH_MAX];
    tp_jw_check_keys(ld->errs, path, obj, keys);
    struct tp_cfg_lcore *lc = &cfg->lcores[cfg->n_lcores];
    memset(lc, 0, sizeof(*lc));
    uint64_t id = 0;
    tp_jw_path_key(child, path, "lcore");
    bool id_read = tp_jw_uint(ld->errs, path, obj, "lcore", 0, TP_CFG_MAX_LCORE_ID, true, &id);
    if (!id_read) {
        ld->lcores_ok = false;
    } else if (ld->eal_ok && !eal_has_lcore(&cfg->eal, (unsigned)id)) {
        char eal_list[128];
        format_lcore_list(&cfg->eal, eal_list, sizeof(eal_list));
        tp_jw_error(ld->errs, child, "lcore %llu is not in the EAL lcore list (%s)",
                    (unsigned long long)id, eal_list);
    } else if (ld->eal_ok && id == cfg->eal.main_lcore) {
        tp_jw_error(ld->errs, child,
                    "lcore %llu is the main lcore (control plane); data lcores must differ",
                    (unsigned long long)id);
    }
    lc->lcore_id = (uint16_t)id;
    /* A refused id is reported once, not again as a duplicate of whatever it would have been. */
    for (unsigned j = 0; id_read && j < cfg->n_lcores; j++) {
        if (cfg->lcores[j].lcore_id == lc->lcore_id) {
            tp_jw_error(ld->errs, child, "lcore %u is already lcores[%u]", lc->lcore_id, j);
            ld->lcores_ok = false;
        }
    }
    json_t *poll = tp_jw_get(ld->errs, path, obj, "poll", JSON_ARRAY, true);
    tp_jw_path_key(child, path, "poll");
    if (poll != NULL)
        parse_poll(ld, child, poll, lc);
    json_t *chans = tp_jw_get(ld->errs, path, obj, "channels", JSON_ARRAY, true);
    tp_jw_path_key(child, path, "channels");
    if (chans != NULL)
        parse_lcore_channels(ld, child, chans, lc);
    /* The size of its window of instrument ids (check_windows checks they fit together). */
    json_t *ids = json_object_get(obj, "instruments");
    uint64_t v = 0;
    tp_jw_path_key(child, path, "instruments");
    if (json_is_integer(ids) && json_integer_value(ids) == 0) {
        tp_jw_error(ld->errs, child,
                    "0 instrument ids: give at least 1, or leave \"instruments\" out to share "
                    "what the other lcores leave");
        ld->instruments_bad = true;
    } else if (ids != NULL && !tp_jw_uint_value(ld->errs, child, ids, 1, 1u << 24, &v)) {
        ld->instruments_bad = true;
    }
    lc->instruments = (uint32_t)v;
    cfg->n_lcores++;
}

/* Every rx queue polled exactly once, every channel run exactly once, by an lcore that polls its
 * lines' ports. */
void check_placement(struct loader *ld)
{
    struct tp_config *cfg = ld->cfg;
    if (!ld->ports_ok || !ld->lcores_ok)
        return;
    for (unsigned p = 0; p < cfg->n_ports; p++) {
        for (unsigned q = 0; q < cfg->ports[p].rx_queues; q++) {
            int owner = -1;
            for (unsigned l = 0; l < cfg->n_lcores; l++) {
                for (unsigned r = 0; r < cfg->lcores[l].n_rxq; r++) {
                    const struct tp_cfg_rxq *rxq = &cfg->lcores[l].rxq[r];
                    if (rxq->port != p || rxq->queue != q)
                        continue;
                    if (owner >= 0) {
                        char path[TP_JW_PATH_MAX];
                        snprintf(path, sizeof(path), "lcores[%u].poll[%u]", l, r);
                        tp_jw_error(ld->errs, path,
                                    "port \"%s\" queue %u is already polled by "
                                    "lcores[%d]",
                                    cfg->ports[p].name, q, owner);
                    } else {
                        owner = (int)l;
                    }
                }
            }
            if (owner < 0) {
                char path[TP_JW_PATH_MAX];
                tp_jw_path_index(path, "ports", p);
                tp_jw_error(ld->errs, path, "rx queue %u is polled by no lcore", q);
            }
        }
    }
    if (!ld->channels_ok)
        return;
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        int owner = -1;
        for (unsigned l = 0; l < cfg->n_lcores; l++) {
            for (unsigned k = 0; k < cfg->lcores[l].n_channels; k++) {
                if (cfg->lcores[l].channels[k] != c)
                    continue;
                if (owner >= 0) {
                    char path[TP_JW_PATH_MAX];
                    snprintf(path, sizeof(path), "lcores[%u].channels[%u]", l, k);
                    tp_jw_error(ld->errs, path, "channel \"%s\" already runs on lcores[%d]",
                                cfg->channels[c].name, owner);
                } else {
                    owner = (int)l;
                }
            }
        }
        char path[TP_JW_PATH_MAX];
        tp_jw_path_index(path, "channels", c);
        if (owner < 0) {
            tp_jw_error(ld->errs, path, "runs on no lcore (add it to an lcores[].channels list)");
            continue;
        }
        struct line_ref refs[TP_CFG_CHANNEL_LINES];
        unsigned n = channel_lines(&cfg->channels[c], path, refs);
        const struct tp_cfg_lcore *lc = &cfg->lcores[owner];
        for (unsigned i = 0; i < n; i++) {
            bool polled = false;
            for (unsigned r = 0; r < lc->n_rxq; r++)
                polled |= lc->rxq[r].port == refs[i].line->rx_port;
            if (!polled) {
                char child[TP_JW_PATH_MAX];
                tp_jw_path_key(child, refs[i].path, "rx_port");
                tp_jw_error(ld->errs, child,
                            "port \"%s\" is not polled by lcore %u, which runs this channel",
                            cfg->ports[refs[i].line->rx_port].name, lc->lcore_id);
            }
        }
    }
}

/*
 * Every data lcore's window of instrument ids (tp_config_lcore_window) fits instruments.capacity
 * and holds at least one id. Windows that do not are marked bad (the memory estimate needs them).
 */
void check_windows(struct loader *ld)
{
    const struct tp_config *cfg = ld->cfg;
    if (!ld->lcores_ok || ld->instruments_bad)
        return;
    char path[TP_JW_PATH_MAX], sum[256] = "";
    size_t used = 0;
    unsigned terms = 0;
    uint64_t taken = 0, sharing = 0;
    for (unsigned l = 0; l < cfg->n_lcores; l++) {
        uint32_t ids = cfg->lcores[l].instruments;
        sharing += ids == 0;
        if (ids == 0)
            continue;
        taken += ids;
        if (used < sizeof(sum)) {
            int w = snprintf(sum + used, sizeof(sum) - used, "%s%u", terms ? " + " : "", ids);
            used += w > 0 ? (size_t)w : 0;
        }
        terms++;
        if (taken > cfg->instruments.capacity) {
            snprintf(path, sizeof(path), "lcores[%u].instruments", l);
            tp_jw_error(ld->errs, path, "%s %s instruments.capacity %u", sum,
                        terms > 1 ? "exceed" : "exceeds", cfg->instruments.capacity);
            ld->instruments_bad = true;
            return;
        }
    }
    for (unsigned l = 0; l < cfg->n_lcores; l++) {
        if (tp_config_lcore_window(cfg, l).ids != 0)
            continue;
        tp_jw_path_index(path, "lcores", l);
        tp_jw_error(ld->errs, path,
                    "no instrument id left for this lcore: instruments.capacity %u minus the %llu "
                    "given to lcores with \"instruments\" leaves %llu for %llu lcore(s) without it",
                    cfg->instruments.capacity, (unsigned long long)taken,
                    (unsigned long long)(cfg->instruments.capacity - taken),
                    (unsigned long long)sharing);
        ld->instruments_bad = true;
    }
}
