/*
 * A channel's own venue's part of its config (struct tp_cfg_channel's `proto`, tagged by its
 * `protocol`): one member a venue, each declared in the venue's config_<venue>.h. Only the member
 * of the channel's protocol is meaningful; a channel whose protocol was refused has all of it
 * zero. A new venue adds its member here.
 */
#ifndef TP_CONFIG_VENUE_CHANNEL_H
#define TP_CONFIG_VENUE_CHANNEL_H

#include "config_eobi.h"
#include "config_itch.h"
#include "config_mdp3.h"

union tp_cfg_venue_channel {
    struct tp_cfg_mdp3_channel mdp3; /* TP_CFG_PROTO_MDP3 */
    struct tp_cfg_itch_channel itch; /* TP_CFG_PROTO_ITCH */
    struct tp_cfg_eobi_channel eobi; /* TP_CFG_PROTO_EOBI */
};

#endif /* TP_CONFIG_VENUE_CHANNEL_H */
