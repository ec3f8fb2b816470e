/*
 * The venues the data plane runs: see tp_venue.h. A new venue adds its ops table here.
 */
#include <string.h>

#include "tp_venue.h"

const struct tp_venue_ops *const tp_venues[] = {&tp_venue_itch, &tp_venue_mdp3, &tp_venue_eobi,
                                                NULL};

const struct tp_venue_ops *tp_venue_get(enum tp_channel_protocol protocol)
{
    for (unsigned i = 0; tp_venues[i] != NULL; i++)
        if (tp_venues[i]->protocol == protocol)
            return tp_venues[i];
    return NULL;
}

const struct tp_venue_ops *tp_venue_find(const char *name)
{
    for (unsigned i = 0; tp_venues[i] != NULL; i++)
        if (strcmp(tp_venues[i]->name, name) == 0)
            return tp_venues[i];
    return NULL;
}

const struct tp_venue_ops *tp_venue_of_tpout(uint8_t tpout)
{
    for (unsigned i = 0; tp_venues[i] != NULL; i++)
        if (tp_venues[i]->tpout_venue == tpout)
            return tp_venues[i];
    return NULL;
}
