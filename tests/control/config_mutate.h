/*
 * Test helper: load a JSON config after changing it at JSON paths, so each test states only its
 * mistake. Paths look like the validator's ("channels[0].lines.b.group"); a NULL value deletes the
 * key (or array element); an index one past the end appends.
 */
#ifndef TP_TEST_CONFIG_MUTATE_H
#define TP_TEST_CONFIG_MUTATE_H

#include <stdarg.h>

#include "config.h"

/* pairs of (const char *path, const char *json_value_or_NULL) follow; returns the loader's rc. */
int tp_test_load_mutated(const char *base_json, const char *base_dir, struct tp_config *cfg,
                         struct tp_config_errors *errs, int pairs, ...);
int tp_test_load_mutated_v(const char *base_json, const char *base_dir, struct tp_config *cfg,
                           struct tp_config_errors *errs, int pairs, va_list ap);

#endif
