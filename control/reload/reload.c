/* Reload: validate and diff a new config against the running one. See reload.h. */
#include "reload.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/*
 * Sections are compared with memcmp: the loader zeroes the whole config before filling it and
 * sets fields one by one, so unused array tails and padding are zero in both.
 */
#define SAME(a, b) (memcmp(&(a), &(b), sizeof(a)) == 0)

static void needs_restart(struct tp_config_diff *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void needs_restart(struct tp_config_diff *d, const char *fmt, ...)
{
    if (d->n_restart == TP_RELOAD_MAX_RESTART)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->restart[d->n_restart++], sizeof(d->restart[0]), fmt, ap);
    va_end(ap);
}

/* The lcore id running channel ci of cfg, or -1. */
static int lcore_of(const struct tp_config *cfg, unsigned ci)
{
    int l = tp_config_channel_lcore(cfg, ci);
    return l < 0 ? -1 : cfg->lcores[l].lcore_id;
}

static void diff_lcores(const struct tp_config *a, const struct tp_config *b,
                        struct tp_config_diff *d)
{
    /* Which lcores exist and what they poll is fixed once the ports are started. */
    if (a->n_lcores != b->n_lcores) {
        needs_restart(d, "lcores: %u data lcores instead of %u", b->n_lcores, a->n_lcores);
        return;
    }
    for (unsigned l = 0; l < a->n_lcores; l++) {
        const struct tp_cfg_lcore *x = &a->lcores[l], *y = &b->lcores[l];
        if (x->lcore_id != y->lcore_id || x->n_rxq != y->n_rxq ||
            memcmp(x->rxq, y->rxq, sizeof(x->rxq[0]) * x->n_rxq) != 0)
            needs_restart(d, "lcores[%u]: lcore id or polled queues changed", l);
        /* Its registry and books are sized for its window of ids at start, like the capacity
         * (a new capacity is named on its own). */
        if (a->instruments.capacity != b->instruments.capacity)
            continue;
        struct tp_cfg_window wa = tp_config_lcore_window(a, l), wb = tp_config_lcore_window(b, l);
        if (wa.first_id != wb.first_id || wa.ids != wb.ids)
            needs_restart(d,
                          "lcores[%u]: instrument ids %u-%u instead of %u-%u (windows are "
                          "sized at start)",
                          l, wb.first_id, wb.first_id + wb.ids - 1, wa.first_id,
                          wa.first_id + wa.ids - 1);
    }
}

static void diff_channels(const struct tp_config *a, const struct tp_config *b,
                          struct tp_config_diff *d)
{
    for (unsigned i = 0; i < a->n_channels; i++)
        if (tp_config_channel_index(b, a->channels[i].name) < 0)
            d->removed[d->n_removed++] = (uint16_t)i;
    for (unsigned j = 0; j < b->n_channels; j++) {
        int i = tp_config_channel_index(a, b->channels[j].name);
        if (i < 0) {
            d->added[d->n_added++] = (uint16_t)j;
            continue;
        }
        struct tp_channel_pair pair = {.old_index = (uint16_t)i, .new_index = (uint16_t)j};
        if (lcore_of(a, (unsigned)i) != lcore_of(b, j))
            needs_restart(d, "channels[%u] \"%s\": moves from lcore %d to lcore %d", j,
                          b->channels[j].name, lcore_of(a, (unsigned)i), lcore_of(b, j));
        if (SAME(a->channels[i], b->channels[j]))
            d->unchanged[d->n_unchanged++] = pair;
        else
            d->changed[d->n_changed++] = pair;
    }
}

bool tp_config_diff_empty(const struct tp_config_diff *d)
{
    return d->n_added == 0 && d->n_removed == 0 && d->n_changed == 0 && !d->filters_changed &&
           !d->entitlements_changed && !d->telemetry_changed && !d->logging_changed &&
           !d->rate_limit_changed && d->n_restart == 0;
}

int tp_config_diff(const struct tp_config *a, const struct tp_config *b, struct tp_config_diff *d)
{
    memset(d, 0, sizeof(*d));
    if (strcmp(a->name, b->name) != 0)
        needs_restart(d, "name");
    if (!SAME(a->eal, b->eal))
        needs_restart(d, "eal");
    if (a->n_ports != b->n_ports ||
        memcmp(a->ports, b->ports, sizeof(a->ports[0]) * a->n_ports) != 0)
        needs_restart(d, "ports");
    diff_lcores(a, b, d);
    diff_channels(a, b, d);
    if (a->instruments.capacity != b->instruments.capacity)
        needs_restart(d, "instruments.capacity");
    struct tp_cfg_instruments fa = a->instruments, fb = b->instruments;
    fa.capacity = fb.capacity = 0;
    d->filters_changed = !SAME(fa, fb);
    if (!SAME(a->books, b->books))
        needs_restart(d, "books");
    if (!SAME(a->bus, b->bus))
        needs_restart(d, "bus");
    struct tp_cfg_control ca = a->control, cb = b->control;
    d->rate_limit_changed = ca.max_requests_per_sec != cb.max_requests_per_sec;
    ca.max_requests_per_sec = cb.max_requests_per_sec = 0;
    if (!SAME(ca, cb))
        needs_restart(d, "control (socket, mode or sizes)");
    d->entitlements_changed = !SAME(a->entitlements, b->entitlements);
    d->telemetry_changed = !SAME(a->telemetry, b->telemetry);
    d->logging_changed = !SAME(a->logging, b->logging);
    return d->n_restart == 0 ? 0 : -EPERM;
}

int tp_reload_prepare(const struct tp_config *running, const char *file, struct tp_config *next,
                      struct tp_config_diff *diff, struct tp_config_errors *errs)
{
    memset(diff, 0, sizeof(*diff));
    int rc = tp_config_load_file(file, next, errs);
    if (rc != 0)
        return rc;
    return tp_config_diff(running, next, diff);
}

static json_t *channel_names(const struct tp_config *cfg, const uint16_t *idx, unsigned n)
{
    json_t *arr = json_array();
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(arr, json_string(cfg->channels[idx[i]].name));
    return arr;
}

json_t *tp_reload_result_json(int rc, const struct tp_config_errors *errs,
                              const struct tp_config_diff *diff, const struct tp_config *running,
                              const struct tp_config *next)
{
    json_t *errors = json_array();
    for (unsigned i = 0; errs != NULL && i < errs->count; i++) {
        char line[400];
        if (errs->items[i].path[0])
            snprintf(line, sizeof(line), "%s: %s", errs->items[i].path, errs->items[i].message);
        else
            snprintf(line, sizeof(line), "%s", errs->items[i].message);
        json_array_append_new(errors, json_string(line));
    }
    json_t *result = json_pack("{s:b, s:o}", "ok", rc == 0, "errors", errors);
    if (rc != 0 && rc != -EPERM)
        return result;
    json_t *changed = json_array();
    for (unsigned i = 0; i < diff->n_changed; i++)
        json_array_append_new(changed,
                              json_string(next->channels[diff->changed[i].new_index].name));
    json_t *restart = json_array();
    for (unsigned i = 0; i < diff->n_restart; i++)
        json_array_append_new(restart, json_string(diff->restart[i]));
    json_object_set_new(
        result, "changes",
        json_pack("{s:o, s:o, s:o, s:b, s:b, s:b, s:b, s:o}", "channels_added",
                  channel_names(next, diff->added, diff->n_added), "channels_removed",
                  channel_names(running, diff->removed, diff->n_removed), "channels_changed",
                  changed, "filters", diff->filters_changed, "entitlements",
                  diff->entitlements_changed, "telemetry", diff->telemetry_changed, "logging",
                  diff->logging_changed, "restart_needed", restart));
    return result;
}
