/*
 * sim_venues.c - the list of tickplane-sim's venues.
 */
#include <string.h>

#include "sim_venue.h"

const struct sim_venue *const sim_venues[] = {&sim_venue_itch, &sim_venue_mdp3, &sim_venue_eobi,
                                              NULL};

const struct sim_venue *sim_venue_find(const char *name)
{
    for (const struct sim_venue *const *v = sim_venues; *v != NULL; v++)
        if (strcmp((*v)->name, name) == 0)
            return *v;
    return NULL;
}
