/*
 * A channel's "recovery" object: the gap and silence timers and give-up every channel has, and
 * what its venue's table reads (config_venue.h: snapshot, definition and MBO snapshot lines,
 * retransmission servers, snapshot services). A key of another venue's recovery is refused.
 */
#include <stdio.h>
#include <string.h>

#include "config_loader.h"
#include "config_venue.h"

#define RECOVERY_KEYS_MAX 32

static bool listed(const char *const *keys, const char *key)
{
    for (unsigned i = 0; keys != NULL && keys[i] != NULL; i++)
        if (strcmp(keys[i], key) == 0)
            return true;
    return false;
}

/* Every venue's recovery keys, then the timers: what a "recovery" object may hold. */
static void recovery_keys(const char *keys[RECOVERY_KEYS_MAX + 1])
{
    static const char *const timers[] = {"gap_wait_us", "give_up_ms", "silence_ms", NULL};
    unsigned n = 0;
    for (unsigned v = 0; tp_cfg_venues[v] != NULL; v++)
        for (const char *const *k = tp_cfg_venues[v]->recovery_keys; k != NULL && *k != NULL; k++)
            if (n < RECOVERY_KEYS_MAX && !listed(keys, *k)) {
                keys[n++] = *k;
                keys[n] = NULL;
            }
    for (unsigned i = 0; timers[i] != NULL && n < RECOVERY_KEYS_MAX; i++)
        keys[n++] = timers[i];
    keys[n] = NULL;
}

/* The keys of other venues' recovery that mine does not take, each named by its first venue. */
static void refuse_foreign_keys(struct loader *ld, const char *path, const json_t *obj,
                                const struct tp_cfg_venue *mine)
{
    const char *refused[RECOVERY_KEYS_MAX + 1] = {NULL};
    unsigned n = 0;
    for (unsigned v = 0; tp_cfg_venues[v] != NULL; v++) {
        const struct tp_cfg_venue *other = tp_cfg_venues[v];
        for (const char *const *k = other->recovery_keys; k != NULL && *k != NULL; k++) {
            if (other == mine || listed(mine->recovery_keys, *k) || listed(refused, *k) ||
                n == RECOVERY_KEYS_MAX)
                continue;
            refused[n++] = *k;
            char child[TP_JW_PATH_MAX];
            tp_jw_path_key(child, path, *k);
            if (json_object_get(obj, *k) != NULL)
                tp_jw_error(ld->errs, child, "only for protocol %s", other->name);
        }
    }
}

void parse_recovery(struct loader *ld, const char *path, const json_t *obj,
                    struct tp_cfg_channel *ch, const int rx_ports[2])
{
    const struct tp_cfg_venue *venue = tp_cfg_venue_get(ch->protocol);
    if (venue != NULL && venue->require_recovery != NULL)
        venue->require_recovery(ld, path, obj);
    if (obj == NULL) {
        /* No recovery section: imported snapshot/definition lines still need their ports. */
        char child[TP_JW_PATH_MAX];
        tp_jw_path_key(child, path, "snapshot");
        parse_line_pair(ld, child, NULL, ch->snapshot, rx_ports, false);
        for (const struct tp_cfg_venue_lines *vl = venue ? venue->recovery_lines : NULL;
             vl != NULL && vl->key != NULL; vl++) {
            tp_jw_path_key(child, path, vl->key);
            parse_line_pair(ld, child, NULL, (struct tp_cfg_line *)((char *)ch + vl->offset),
                            rx_ports, false);
        }
        return;
    }
    const char *keys[RECOVERY_KEYS_MAX + 1] = {NULL};
    recovery_keys(keys);
    tp_jw_check_keys(ld->errs, path, obj, keys);
    if (venue != NULL) {
        refuse_foreign_keys(ld, path, obj, venue);
        venue->parse_recovery(ld, path, obj, ch, rx_ports);
    }
    uint64_t v;
    if (tp_jw_uint(ld->errs, path, obj, "silence_ms", 0, 600000, false, &v))
        ch->silence_ms = (uint32_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "gap_wait_us", 0, 1000000, false, &v))
        ch->gap_wait_us = (uint32_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "give_up_ms", 1, 600000, false, &v))
        ch->give_up_ms = (uint32_t)v;
}
