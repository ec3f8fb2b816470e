/*
 * A channel's "recovery" object: snapshot, MBO snapshot and definition lines, retransmission
 * (rerequest) servers, gap and silence timers, give-up and audit settings. Validates which of them
 * the channel's protocol allows (EOBI: the snapshot lines, required, and gap_wait_us) and that the
 * lines they name have ports to arrive on.
 */
#include <stdio.h>
#include <string.h>

#include "config_loader.h"

void parse_recovery(struct loader *ld, const char *path, const json_t *obj,
                    struct tp_cfg_channel *ch, const int rx_ports[2])
{
    static const char *const keys[] = {
        "snapshot",    "snapshot_mbo", "definitions", "rerequest",    "max_messages",
        "gap_wait_us", "give_up_ms",   "silence_ms",  "audit_always", NULL};
    bool mdp3 = ch->protocol == TP_CFG_PROTO_MDP3, itch = ch->protocol == TP_CFG_PROTO_ITCH;
    bool eobi = ch->protocol == TP_CFG_PROTO_EOBI;
    /* EOBI resends nothing: a segment's gap (and a late start) is filled only from its
     * snapshot feed, so a channel without snapshot lines could never vouch for a book. */
    if (eobi && (obj == NULL || json_object_get(obj, "snapshot") == NULL)) {
        char child[TP_JW_PATH_MAX];
        tp_jw_path_key(child, path, "snapshot");
        tp_jw_error(ld->errs, child, "required for protocol eobi (its only recovery)");
    }
    if (obj == NULL) {
        /* No recovery section: imported snapshot/definition lines still need their ports. */
        char child[TP_JW_PATH_MAX];
        tp_jw_path_key(child, path, "snapshot");
        parse_line_pair(ld, child, NULL, ch->snapshot, rx_ports, false);
        tp_jw_path_key(child, path, "definitions");
        parse_line_pair(ld, child, NULL, ch->definitions, rx_ports, false);
        tp_jw_path_key(child, path, "snapshot_mbo");
        parse_line_pair(ld, child, NULL, ch->snapshot_mbo, rx_ports, false);
        return;
    }
    tp_jw_check_keys(ld->errs, path, obj, keys);
    char child[TP_JW_PATH_MAX];
    static const char *const mdp3_only[] = {"definitions", "snapshot_mbo", "audit_always", NULL};
    static const char *const itch_only[] = {"rerequest", "max_messages", NULL};
    for (unsigned i = 0; mdp3_only[i] != NULL; i++) {
        tp_jw_path_key(child, path, mdp3_only[i]);
        if ((itch || eobi) && json_object_get(obj, mdp3_only[i]) != NULL)
            tp_jw_error(ld->errs, child, "only for protocol mdp3");
    }
    for (unsigned i = 0; itch_only[i] != NULL; i++) {
        tp_jw_path_key(child, path, itch_only[i]);
        if ((mdp3 || eobi) && json_object_get(obj, itch_only[i]) != NULL)
            tp_jw_error(ld->errs, child, "only for protocol itch");
    }
    if (mdp3 || eobi) {
        json_t *snap = tp_jw_get(ld->errs, path, obj, "snapshot", JSON_OBJECT, false);
        tp_jw_path_key(child, path, "snapshot");
        parse_line_pair(ld, child, snap, ch->snapshot, rx_ports, true);
    }
    if (mdp3) {
        json_t *defs = tp_jw_get(ld->errs, path, obj, "definitions", JSON_OBJECT, false);
        tp_jw_path_key(child, path, "definitions");
        parse_line_pair(ld, child, defs, ch->definitions, rx_ports, true);
        json_t *mbo = tp_jw_get(ld->errs, path, obj, "snapshot_mbo", JSON_OBJECT, false);
        tp_jw_path_key(child, path, "snapshot_mbo");
        parse_line_pair(ld, child, mbo, ch->snapshot_mbo, rx_ports, true);
        /* Its orders are applied on top of what the price-level snapshot recovered. */
        if (mbo != NULL && !ch->snapshot[0].present && !ch->snapshot[1].present)
            tp_jw_error(ld->errs, child,
                        "needs recovery.snapshot (the price-level snapshot lines)");
        tp_jw_bool(ld->errs, path, obj, "audit_always", false, &ch->audit_always);
    }
    if (itch) {
        /* ITCH's snapshot is a TCP service (GLIMPSE), not multicast lines. */
        json_t *snap = tp_jw_get(ld->errs, path, obj, "snapshot", JSON_OBJECT, false);
        tp_jw_path_key(child, path, "snapshot");
        tp_cfg_parse_itch_snapshot(ld->errs, child, snap, &ch->glimpse);
        char text[64];
        tp_jw_path_key(child, path, "rerequest");
        if (tp_jw_string(ld->errs, path, obj, "rerequest", sizeof(text), false, text)) {
            char *colon = strrchr(text, ':');
            char *end = NULL;
            unsigned long port = colon ? strtoul(colon + 1, &end, 10) : 0;
            if (colon != NULL)
                *colon = '\0';
            uint32_t host;
            if (colon == NULL || end == colon + 1 || *end != '\0' || port == 0 || port > 65535 ||
                tp_parse_ipv4(text, &host) != 0 || host == 0 || (host >> 28) == 0xe)
                tp_jw_error(ld->errs, child, "expected \"<unicast IPv4>:<port>\"");
            else {
                ch->rerequest_host = host;
                ch->rerequest_port = (uint16_t)port;
            }
        }
        uint64_t v;
        if (tp_jw_uint(ld->errs, path, obj, "max_messages", 1, 65535, false, &v))
            ch->rerequest_max_messages = (uint16_t)v;
    }
    /* The EOBI feed tells its gaps by each segment's sequence (a hole waits gap_wait_us for the
     * other line) and waits for the snapshot as long as it takes, its books flagged all along:
     * the channel's other timers do not run for it. */
    static const char *const timers[] = {"give_up_ms", "silence_ms", NULL};
    for (unsigned i = 0; eobi && timers[i] != NULL; i++) {
        tp_jw_path_key(child, path, timers[i]);
        if (json_object_get(obj, timers[i]) != NULL)
            tp_jw_error(ld->errs, child,
                        "not for protocol eobi (its segments recover from the "
                        "snapshot feed, flagged until then)");
    }
    uint64_t v;
    if (tp_jw_uint(ld->errs, path, obj, "silence_ms", 0, 600000, false, &v))
        ch->silence_ms = (uint32_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "gap_wait_us", 0, 1000000, false, &v))
        ch->gap_wait_us = (uint32_t)v;
    if (tp_jw_uint(ld->errs, path, obj, "give_up_ms", 1, 600000, false, &v))
        ch->give_up_ms = (uint32_t)v;
}
