/*
 * sim_venue.h - what tickplane-sim knows of a venue, one table per venue (sim_<venue>.c), all
 * listed in sim_venues.c from the build's venues (tool_venues.h): adding a venue to the simulator
 * is adding its session (<venue>_feed.*), its sim_<venue>.c and its name to the top meson.build's
 * `venues`.
 *
 * A venue has the name the command line starts with, options of its own (parsed into its file's
 * settings), the smallest --packet-bytes its packets take, the implied levels its truth holds,
 * and the run that writes its outputs.
 */
#ifndef TP_SIM_VENUE_H
#define TP_SIM_VENUE_H

#include <jansson.h>
#include <stdint.h>

#include "model.h"
#include "sim_options.h"
#include "tool_venues.h"

/* An option of the venue's, with an argument: --NAME ARG. Another venue may take the same name
 * (--snapshot-every): each of them is given the value. */
struct sim_venue_option {
    const char *name;
    int (*set)(const char *arg); /* 0, or -EINVAL when arg is not a value of the option */
};

struct sim_venue {
    const char *name;  /* "itch", the report's "protocol" */
    const char *usage; /* its lines of the usage text */
    const struct sim_venue_option *options;
    unsigned n_options;
    uint16_t min_packet_bytes;
    uint32_t implied_depth; /* implied levels per side in the truth file (0: none) */
    void (*defaults)(void); /* NULL, or sets its options' defaults before they are parsed */
    /* Writes the outputs o asks for from the model's events, adding its counts to report: 0 or a
     * negative errno (said on stderr). */
    int (*run)(struct sim_options *o, struct tp_sim_model *m, json_t *report);
    /* NULL, or called last, with the run's result (ITCH: serves the GLIMPSE snapshot taken). */
    void (*finish)(int rc);
};

/* Each venue's table, sim_venue_<name> (sim_<name>.c), one for each of the build's venues. */
#define SIM_VENUE_DECLARE(name) extern const struct sim_venue sim_venue_##name;
TP_VENUES(SIM_VENUE_DECLARE)

/* The venues in the build's order (tool_venues.h), as the usage lists them, NULL-terminated. */
extern const struct sim_venue *const sim_venues[];

/* The venue named name, or NULL. */
const struct sim_venue *sim_venue_find(const char *name);

#endif /* TP_SIM_VENUE_H */
