/*
 * What the config loader's pieces share (private to control/config): the loader state every
 * section reads and writes, the field readers of config_fields.c, and each section's entry point,
 * called by config.c in the order of the document (each section only needs the ones before it).
 * Every function records its problems in ld->errs with their JSON paths and goes on.
 */
#ifndef TP_CONFIG_LOADER_H
#define TP_CONFIG_LOADER_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "json_walk.h"

struct loader {
    struct tp_config *cfg;
    struct tp_config_errors *errs;
    char base_dir[TP_CFG_PATH_MAX];
    /* Cross checks are skipped for sections that failed, so one mistake gives one message. */
    bool eal_ok, ports_ok, channels_ok, lcores_ok;
    bool instruments_bad; /* instruments.capacity or an lcores[].instruments was refused */
};

/* ---------------------------------------------------- config_fields.c */

bool is_power_of_two(uint64_t v);

/* A name-valued key (letters, digits, '-', '_', '.'); false if absent or not a valid name. */
bool get_name(struct loader *ld, const char *path, const json_t *obj, const char *key,
              bool required, char *out, size_t cap);

/* A path-valued key, resolved against the config file's directory; optionally the file must be
 * readable now. */
bool get_path(struct loader *ld, const char *path, const json_t *obj, const char *key,
              bool required, bool must_exist, char *out, size_t cap);

/* A list of non-empty strings into out[max][stride]. */
void string_list(struct loader *ld, const char *path, const json_t *obj, const char *key, char *out,
                 size_t stride, unsigned max, unsigned *n);

/* Fill names[] with pointers to each element's name field, NULL-terminated (for did-you-mean). */
#define NAME_LIST(names, array, count)                                                             \
    do {                                                                                           \
        for (unsigned i_ = 0; i_ < (count); i_++)                                                  \
            (names)[i_] = (array)[i_].name;                                                        \
        (names)[(count)] = NULL;                                                                   \
    } while (0)

/* "unknown <what> \"<name>\"", with the closest of known (NULL-terminated) if it is a likely typo.
 */
void unknown_name(struct loader *ld, const char *path, const char *what, const char *name,
                  const char *const *known);

/* An array element that must be an object. */
bool object_item(struct loader *ld, const char *path, const json_t *item);

/*
 * A top-level array section (ports, channels, lcores) of 1..max objects: the count is checked,
 * each element must be an object, and parse_item gets each one with its path ("ports[2]").
 * *ok starts true and is cleared when the section cannot be used by the cross-checks; parse_item
 * clears it too for problems that make the parsed item unusable.
 */
struct section {
    const char *key;
    unsigned max;
    const char *what; /* the elements' name in the count error */
    bool *ok;
    void (*parse_item)(struct loader *ld, const char *path, const json_t *obj);
};

void parse_section(struct loader *ld, const json_t *root, const struct section *s);

/* ------------------------------------------------------- the sections */

void parse_eal(struct loader *ld, const json_t *root); /* config_eal.c */

/* config_ports.c: one ports[] element; port_ref resolves a port name at path to its index, -1
 * (with an error) if unknown. */
void parse_ports_item(struct loader *ld, const char *path, const json_t *obj);
int port_ref(struct loader *ld, const char *path, const char *name);

/* config_channels.c: one channels[] element; then no two lines of any channels may share a
 * classification key; the lines of a pair and of a channel, for recovery and placement. */
void parse_channels_item(struct loader *ld, const char *path, const json_t *obj);
void check_duplicate_lines(struct loader *ld);

/* A/B pair object {"a": line, "b": line}; obj may be NULL when the pair was only imported from
 * an exchange's file. Side a is required unless imported. */
void parse_line_pair(struct loader *ld, const char *path, const json_t *obj,
                     struct tp_cfg_line pair[2], const int rx_ports[2], bool a_required);

/* The line pair under obj[key] (must be an object; side a required), returned, or NULL. */
const json_t *parse_line_pair_key(struct loader *ld, const char *path, const json_t *obj,
                                  const char *key, struct tp_cfg_line pair[2],
                                  const int rx_ports[2]);

/* All lines of a channel with their path suffixes (channel_lines returns their count). */
struct line_ref {
    const struct tp_cfg_line *line;
    char path[TP_JW_PATH_MAX];
};

unsigned channel_lines(const struct tp_cfg_channel *ch, const char *path,
                       struct line_ref refs[TP_CFG_CHANNEL_LINES]);

/* config_recovery.c: a channel's "recovery" object (obj may be NULL), rx_ports of its lines. */
void parse_recovery(struct loader *ld, const char *path, const json_t *obj,
                    struct tp_cfg_channel *ch, const int rx_ports[2]);

/* config_lcores.c: one lcores[] element, then the cross-section placement and window checks;
 * the EAL lcore list queries the main lcore's check uses. */
void parse_lcores_item(struct loader *ld, const char *path, const json_t *obj);
void check_placement(struct loader *ld);
void check_windows(struct loader *ld);
bool eal_has_lcore(const struct tp_cfg_eal *eal, unsigned id);
void format_lcore_list(const struct tp_cfg_eal *eal, char *buf, size_t size);

/* config_instruments.c; check_patterns refuses patterns with spaces or non-printables. */
void parse_instruments(struct loader *ld, const json_t *root);
void parse_books(struct loader *ld, const json_t *root);
void check_patterns(struct loader *ld, const char *path, char (*patterns)[TP_CFG_PATTERN_MAX],
                    unsigned n);

void parse_bus(struct loader *ld, const json_t *root);          /* config_bus.c */
void parse_control(struct loader *ld, const json_t *root);      /* config_control.c */
void parse_entitlements(struct loader *ld, const json_t *root); /* config_entitlements.c */
void parse_telemetry(struct loader *ld, const json_t *root);    /* config_telemetry.c */
void parse_logging(struct loader *ld, const json_t *root);      /* config_logging.c */
void check_memory(struct loader *ld);                           /* config_memory.c */

#endif /* TP_CONFIG_LOADER_H */
