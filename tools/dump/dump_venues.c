/*
 * dump_venues.c - the list of tickplane-dump's venues: the build's (tool_venues.h).
 */
#include <string.h>

#include "dump_venue.h"
#include "tool_venues.h"

#define DUMP_VENUE(name) &dump_venue_##name,
const struct dump_venue *const dump_venues[] = {TP_VENUES(DUMP_VENUE) NULL};

const struct dump_venue *dump_venue_find(const char *name)
{
    for (const struct dump_venue *const *v = dump_venues; *v != NULL; v++)
        if (strcmp((*v)->name, name) == 0)
            return *v;
    return NULL;
}

const char *dump_venue_names(void)
{
    static char names[128];
    if (names[0] == '\0')
        for (const struct dump_venue *const *v = dump_venues; *v != NULL; v++) {
            if (v != dump_venues)
                strncat(names, "|", sizeof(names) - strlen(names) - 1);
            strncat(names, (*v)->name, sizeof(names) - strlen(names) - 1);
        }
    return names;
}
