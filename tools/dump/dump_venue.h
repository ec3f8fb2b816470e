/*
 * dump_venue.h - what tickplane-dump knows of a venue, one table per venue (dump_<venue>.c), all
 * listed in dump_venues.c from the build's venues (tool_venues.h): adding a venue to the dump is
 * adding its file and its name to the top meson.build's `venues`.
 *
 * A venue has a --proto / --map name, prints one UDP payload of its flows, may take options of
 * its own (--eobi-release) and may read a file format of its own instead of a capture
 * (--binaryfile, ITCH).
 */
#ifndef TP_DUMP_VENUE_H
#define TP_DUMP_VENUE_H

#include <stddef.h>
#include <stdint.h>

#include "tool_venue_option.h"
#include "tool_venues.h"

struct dump_out;
struct dump_source;

/* A file of the venue's own format, read instead of a capture: --FLAG FILE. */
struct dump_venue_file {
    const char *flag;  /* "binaryfile" */
    int letter;        /* its short option */
    const char *usage; /* the file in the usage text: "ITCH-BINARYFILE" */
    /* Prints every message of the file; 0, or -errno when it cannot be read. */
    int (*read)(struct dump_out *d, const char *path);
};

struct dump_venue {
    const char *name; /* --proto, --map and each line's "proto": "itch" */
    void (*packet)(struct dump_out *d, const struct dump_source *s, const uint8_t *payload,
                   size_t len);
    const struct tool_venue_option *options; /* --NAME ARG of its own */
    unsigned n_options;
    const struct dump_venue_file *file; /* NULL: captures only */
};

/* Each venue's table, dump_venue_<name> (dump_<name>.c), one for each of the build's venues. */
#define DUMP_VENUE_DECLARE(name) extern const struct dump_venue dump_venue_##name;
TP_VENUES(DUMP_VENUE_DECLARE)

/* The venues in the build's order (tool_venues.h), as the usage lists them, NULL-terminated. */
extern const struct dump_venue *const dump_venues[];

/* The venue named name, or NULL. */
const struct dump_venue *dump_venue_find(const char *name);

/* The venues' names joined by '|' ("mdp3|itch|eobi"). */
const char *dump_venue_names(void);

#endif /* TP_DUMP_VENUE_H */
