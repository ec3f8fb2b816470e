/*
 * Live reload: load the config file again, validate it, and compute what differs from the running
 * config as a plain diff the daemon applies (start added channels on their lcore, stop removed
 * ones, restart changed ones, swap filters, entitlements and telemetry). Channels that did not
 * change keep their books. Changes that cannot be applied to a running data plane (EAL, ports,
 * lcore polling and instrument id windows, books and bus sizing, the control socket itself, a kept
 * channel moving lcore) make the reload refuse, naming each one: a refused or invalid reload
 * changes nothing.
 */
#ifndef TP_RELOAD_H
#define TP_RELOAD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define TP_RELOAD_MAX_RESTART 16

struct tp_channel_pair {
    uint16_t old_index; /* in the running config */
    uint16_t new_index; /* in the new config */
};

struct tp_config_diff {
    unsigned n_added; /* indexes into the new config's channels */
    uint16_t added[TP_CFG_MAX_CHANNELS];
    unsigned n_removed; /* indexes into the running config's channels */
    uint16_t removed[TP_CFG_MAX_CHANNELS];
    unsigned n_changed; /* same name, different settings: restart that channel */
    struct tp_channel_pair changed[TP_CFG_MAX_CHANNELS];
    unsigned n_unchanged; /* kept as they are (books untouched) */
    struct tp_channel_pair unchanged[TP_CFG_MAX_CHANNELS];
    bool filters_changed;      /* instruments include/exclude/security_groups */
    bool entitlements_changed; /* re-check subscriptions (tp_ctl_server_update) */
    bool telemetry_changed;
    bool logging_changed;    /* levels and burst: applied at once */
    bool rate_limit_changed; /* control.max_requests_per_sec */
    unsigned n_restart;      /* what would need a restart; non-zero = reload refused */
    char restart[TP_RELOAD_MAX_RESTART][128];
};

/* True if the diff changes nothing at all. */
bool tp_config_diff_empty(const struct tp_config_diff *diff);

/* Compare two valid configs. Returns 0 if the diff can be applied live, -EPERM if not. */
int tp_config_diff(const struct tp_config *running, const struct tp_config *next,
                   struct tp_config_diff *diff);

/*
 * Load `file`, validate, diff against running. 0: *next and *diff are ready to apply. -EINVAL:
 * invalid (errs says why). -EPERM: valid but needs a restart (diff->restart says why). Other
 * negative errno: the file could not be read (in errs).
 */
int tp_reload_prepare(const struct tp_config *running, const char *file, struct tp_config *next,
                      struct tp_config_diff *diff, struct tp_config_errors *errs);

/*
 * The reply for the control socket and the log: {"ok": rc == 0, "errors": ["path: message"],
 * "changes": {"channels_added": [names], "channels_removed": [...], "channels_changed": [...],
 * "filters": b, "entitlements": b, "telemetry": b, "restart_needed": [...]}}.
 */
json_t *tp_reload_result_json(int rc, const struct tp_config_errors *errs,
                              const struct tp_config_diff *diff, const struct tp_config *running,
                              const struct tp_config *next);

#endif /* TP_RELOAD_H */
