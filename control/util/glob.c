/* Glob matching: see glob.h. */
#include "glob.h"

#include <string.h>

/*
 * Iterative glob with single-star backtracking. With `structural`, text is itself a pattern and
 * '?' must not stand for a '*' of it (see tp_glob_covers).
 */
static bool glob_walk(const char *pattern, const char *text, bool structural)
{
    const char *p = pattern, *t = text;
    /* Where to resume after the last '*': the star's position and the text it has eaten so far. */
    const char *star = NULL, *star_text = NULL;

    while (*t != '\0') {
        if (*p == '*') {
            star = p++;
            star_text = t;
        } else if ((*p == '?' && !(structural && *t == '*')) || (*p != '\0' && *p == *t)) {
            p++;
            t++;
        } else if (star != NULL) {
            /* Mismatch: let the last star swallow one more character and retry. */
            p = star + 1;
            t = ++star_text;
        } else {
            return false;
        }
    }
    while (*p == '*')
        p++;
    return *p == '\0';
}

bool tp_glob_match(const char *pattern, const char *text)
{
    return glob_walk(pattern, text, false);
}

bool tp_glob_covers(const char *grant, const char *pattern)
{
    return glob_walk(grant, pattern, true);
}

bool tp_glob_is_literal(const char *pattern)
{
    return strpbrk(pattern, "*?") == NULL;
}
