/*
 * The venues the config knows: see config_venue.h. A new venue adds its table here.
 */
#include "config_venue.h"

const struct tp_cfg_venue *const tp_cfg_venues[] = {&tp_cfg_venue_mdp3, &tp_cfg_venue_itch,
                                                    &tp_cfg_venue_eobi, NULL};

const struct tp_cfg_venue *tp_cfg_venue_get(enum tp_cfg_protocol protocol)
{
    for (unsigned i = 0; tp_cfg_venues[i] != NULL; i++)
        if (tp_cfg_venues[i]->protocol == protocol)
            return tp_cfg_venues[i];
    return NULL;
}

int tp_cfg_venue_check_files(const struct tp_cfg_channel *ch, const char **key, char *why,
                             size_t why_size)
{
    const struct tp_cfg_venue *venue = tp_cfg_venue_get(ch->protocol);
    if (venue == NULL || venue->check_files == NULL)
        return 0;
    return venue->check_files(ch, key, why, why_size);
}
