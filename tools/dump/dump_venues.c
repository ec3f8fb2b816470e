/*
 * dump_venues.c - the list of tickplane-dump's venues.
 */
#include <string.h>

#include "dump_venue.h"

const struct dump_venue *const dump_venues[] = {&dump_venue_mdp3, &dump_venue_itch,
                                                &dump_venue_eobi, NULL};

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
