/*
 * Shell-style glob matching for instrument symbols and patterns: '*' matches any run of
 * characters (also none), '?' exactly one; everything else matches itself (case-sensitive).
 * Runs in O(len(pattern) * len(text)) worst case, no recursion, no allocation.
 */
#ifndef TP_GLOB_H
#define TP_GLOB_H

#include <stdbool.h>

bool tp_glob_match(const char *pattern, const char *text);

/*
 * True if every symbol `pattern` can match is also matched by `grant` (used to check a subscription
 * pattern against an entitlement). Sound but not complete: it may say false for an exotic pair
 * that is in fact covered, never true for one that is not. A '?' in grant covers one literal or
 * '?' of pattern, never a '*'.
 */
bool tp_glob_covers(const char *grant, const char *pattern);

/* True if the pattern has no wildcard (it names exactly one symbol). */
bool tp_glob_is_literal(const char *pattern);

#endif /* TP_GLOB_H */
