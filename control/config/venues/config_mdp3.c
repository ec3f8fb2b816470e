/*
 * CME MDP 3.0 channels in the config (config_venue.h): venue "CME", no silence bound by default
 * (a quiet spell is the operator's to bound, docs/CONFIG.md), and the SBE schema file a channel
 * may name, which must be the decoder's.
 */
#include "config_venue.h"
#include "mdp3_schema_file.h"

/* Per instrument id of the capacity, 12 bytes of RptSeq and order-book state, and the 4 MiB
 * buffer of incrementals kept for replay after a snapshot. */
static uint64_t channel_bytes(const struct tp_config *cfg, const struct tp_cfg_channel *ch)
{
    const uint64_t state_bytes = 12, replay_bytes = 4u << 20;
    (void)ch;
    return state_bytes * cfg->instruments.capacity + replay_bytes;
}

static int check_files(const struct tp_cfg_channel *ch, const char **key, char *why,
                       size_t why_size)
{
    *key = "schema";
    return ch->schema[0] == '\0' ? 0 : tp_mdp3_schema_file_check(ch->schema, why, why_size);
}

const struct tp_cfg_venue tp_cfg_venue_mdp3 = {
    .name = "mdp3",
    .protocol = TP_CFG_PROTO_MDP3,
    .bus_name = "CME",
    .silence_ms = 0,
    .locate_map = false,
    .channel_bytes = channel_bytes,
    .check_files = check_files,
};
