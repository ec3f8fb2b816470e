/*
 * What a CME MDP 3.0 channel's config holds besides every channel's fields (config.h): its
 * definition and order-level (MBO) snapshot lines, the snapshot audit, its SBE schema file and
 * where its lines came from when imported from CME's config.xml. Read by config_mdp3.c.
 */
#ifndef TP_CONFIG_MDP3_H
#define TP_CONFIG_MDP3_H

#include <stdbool.h>
#include <stdint.h>

#include "config_line.h"

#define TP_CFG_MDP3_PATH_MAX 256 /* config.h's TP_CFG_PATH_MAX (asserted in config_mdp3.c) */

struct tp_cfg_mdp3_channel {
    struct tp_cfg_line definitions[2]; /* recovery.definitions: instrument definitions, A/B */
    /* The order-level (MBO) snapshot lines, CME's SMBO feed (SnapshotFullRefreshOrderBook53):
     * joined with the snapshot lines, they refill the order books a price-level snapshot empties.
     */
    struct tp_cfg_line snapshot_mbo[2];
    bool audit_always; /* stay on the snapshot lines, every book audited each cycle */
    char schema[TP_CFG_MDP3_PATH_MAX]; /* SBE schema file ("" = built-in) */
    /* Where lines/recovery came from when imported from CME's config.xml (file "" = not used). */
    char cme_config_file[TP_CFG_MDP3_PATH_MAX];
    uint32_t cme_config_channel;
};

#endif /* TP_CONFIG_MDP3_H */
