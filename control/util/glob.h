/*
 * Shell-style glob matching for instrument symbols and patterns: '*' matches any run of
 * characters (also none), '?' exactly one; everything else matches itself (case-sensitive).
 * Runs in O(len(pattern) * len(text)) worst case, no recursion, no allocation.
 */
#ifndef TP_GLOB_H
#define TP_GLOB_H

#include <stdbool.h>

bool tp_glob_match(const char *pattern, const char *text);

/* True if the pattern has no wildcard (it names exactly one symbol). */
bool tp_glob_is_literal(const char *pattern);

#endif /* TP_GLOB_H */
