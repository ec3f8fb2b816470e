/* A private directory under /dev/shm for one test program's segments, removed at the end. */
#ifndef TESTS_BUS_TMPDIR_H
#define TESTS_BUS_TMPDIR_H

#include <stdio.h>
#include <stdlib.h>

/* Fill dir (at least 64 bytes) with a new directory named after `what`. 0 or -1. */
static inline int tmpdir_make(char *dir, size_t len, const char *what)
{
    snprintf(dir, len, "/dev/shm/tp-test-%s-XXXXXX", what);
    return mkdtemp(dir) == NULL ? -1 : 0;
}

static inline int tmpdir_remove(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    return system(cmd) == 0 ? 0 : -1;
}

#endif /* TESTS_BUS_TMPDIR_H */
