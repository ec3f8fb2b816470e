/*
 * sim_venues.c - the list of tickplane-sim's venues: the build's (tool_venues.h).
 */
#include <string.h>

#include "sim_venue.h"
#include "tool_venues.h"

#define SIM_VENUE(name) &sim_venue_##name,
const struct sim_venue *const sim_venues[] = {TP_VENUES(SIM_VENUE) NULL};

const struct sim_venue *sim_venue_find(const char *name)
{
    for (const struct sim_venue *const *v = sim_venues; *v != NULL; v++)
        if (strcmp((*v)->name, name) == 0)
            return *v;
    return NULL;
}
