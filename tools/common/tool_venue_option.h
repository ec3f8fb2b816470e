/*
 * tool_venue_option.h - an option a venue adds to a tool's command line (tickplane-dump's and
 * tickplane-replay's venue tables): --NAME ARG, parsed by the venue's own file into its own
 * setting, so the tool's option parser names no venue.
 */
#ifndef TP_TOOL_VENUE_OPTION_H
#define TP_TOOL_VENUE_OPTION_H

#include <stddef.h>

struct tool_venue_option {
    const char *name; /* "eobi-release" */
    const char *arg;  /* the argument in the usage text: "6.0|7.0" */
    /* Takes the option's value; 0, or -EINVAL with a message in err (errlen bytes). */
    int (*set)(const char *value, char *err, size_t errlen);
};

#endif /* TP_TOOL_VENUE_OPTION_H */
