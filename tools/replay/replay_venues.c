/*
 * replay_venues.c - the list of tickplane-replay's venues: the build's (tool_venues.h).
 */
#include <string.h>

#include "replay_venue.h"

#define REPLAY_VENUE(name) &replay_venue_##name,
const struct replay_venue *const replay_venues[] = {TP_VENUES(REPLAY_VENUE) NULL};

const struct replay_venue *replay_venue_find(const char *name)
{
    for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++)
        if (strcmp((*v)->name, name) == 0)
            return *v;
    return NULL;
}

const struct replay_venue *replay_venue_detect(const struct tp_udp_view *u)
{
    for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++)
        if ((*v)->looks_like != NULL && (*v)->looks_like(u))
            return *v;
    return NULL;
}

const struct replay_venue *replay_venue_of_instrument(uint8_t registry_venue)
{
    for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++)
        if ((*v)->registry_venue == registry_venue)
            return *v;
    return NULL;
}

const struct replay_venue *replay_venue_of_file(void)
{
    for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++)
        if ((*v)->run_file != NULL)
            return *v;
    return NULL;
}

const char *replay_venue_names(void)
{
    static char names[128];
    if (names[0] == '\0')
        for (const struct replay_venue *const *v = replay_venues; *v != NULL; v++) {
            if (v != replay_venues)
                strncat(names, "|", sizeof(names) - strlen(names) - 1);
            strncat(names, (*v)->name, sizeof(names) - strlen(names) - 1);
        }
    return names;
}
