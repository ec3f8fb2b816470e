/*
 * Typed, path-aware reading of a jansson document for the config validator.
 *
 * Every getter takes the path of the parent object (e.g. "channels[2].lines.b") and the key, checks
 * presence, type and range, and on any problem appends one error "<path>.<key>: <what is wrong>" to
 * the error list and returns false, leaving *out untouched (so the caller's default stays). Nothing
 * stops at the first error: the validator walks the whole document and reports everything.
 */
#ifndef TP_JSON_WALK_H
#define TP_JSON_WALK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#define TP_JW_PATH_MAX 128

/* Append an error (printf-style message). Paths longer than the field are truncated. */
void tp_jw_error(struct tp_config_errors *errs, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "parent.key" (or "key" at the root) and "parent[i]". */
void tp_jw_path_key(char *out, const char *parent, const char *key);
void tp_jw_path_index(char *out, const char *parent, size_t index);

/* "object", "array", "string", "integer", "number", "boolean" or "null". */
const char *tp_jw_type_name(const json_t *value);

/* Levenshtein distance, capped: strings longer than 63 bytes compare as "far" (UINT32_MAX). */
unsigned tp_jw_edit_distance(const char *a, const char *b);

/* The candidate closest to word if it is close enough to be a likely typo, else NULL. */
const char *tp_jw_closest(const char *word, const char *const *candidates);

/* Report every key of obj that is not in allowed (NULL-terminated); "_comment" is always allowed.
 */
void tp_jw_check_keys(struct tp_config_errors *errs, const char *path, const json_t *obj,
                      const char *const *allowed);

/*
 * Fetch obj[key] and check it is of the JSON type wanted (JSON_OBJECT, JSON_ARRAY, ...). Returns
 * NULL (with an error if it was required or had the wrong type) when it cannot be used.
 */
json_t *tp_jw_get(struct tp_config_errors *errs, const char *path, const json_t *obj,
                  const char *key, json_type wanted, bool required);

bool tp_jw_uint(struct tp_config_errors *errs, const char *path, const json_t *obj, const char *key,
                uint64_t min, uint64_t max, bool required, uint64_t *out);
bool tp_jw_bool(struct tp_config_errors *errs, const char *path, const json_t *obj, const char *key,
                bool required, bool *out);
/* A non-empty string shorter than cap. */
bool tp_jw_string(struct tp_config_errors *errs, const char *path, const json_t *obj,
                  const char *key, size_t cap, bool required, char *out);

/* Same checks on an already-fetched value whose full path is given. */
bool tp_jw_uint_value(struct tp_config_errors *errs, const char *path, const json_t *value,
                      uint64_t min, uint64_t max, uint64_t *out);
bool tp_jw_string_value(struct tp_config_errors *errs, const char *path, const json_t *value,
                        size_t cap, char *out);

/* One of names (NULL-terminated); *out = its index. Unknown values get a "did you mean". */
bool tp_jw_enum(struct tp_config_errors *errs, const char *path, const json_t *obj, const char *key,
                const char *const *names, bool required, int *out);

enum tp_jw_addr_kind { TP_JW_ADDR_MULTICAST, TP_JW_ADDR_UNICAST };
/* Dotted-quad IPv4 address (host byte order out) of the wanted kind. */
bool tp_jw_ipv4_value(struct tp_config_errors *errs, const char *path, const json_t *value,
                      enum tp_jw_addr_kind kind, uint32_t *out);
bool tp_jw_ipv4(struct tp_config_errors *errs, const char *path, const json_t *obj, const char *key,
                enum tp_jw_addr_kind kind, bool required, uint32_t *out);

/* File mode as an octal string ("0640"); world-writable modes are refused. */
bool tp_jw_mode(struct tp_config_errors *errs, const char *path, const json_t *obj, const char *key,
                bool required, mode_t *out);

/* Parse "a.b.c.d" strictly (no leading zeros trickery, exactly four parts); 0 on success. */
int tp_parse_ipv4(const char *text, uint32_t *out);

#endif /* TP_JSON_WALK_H */
