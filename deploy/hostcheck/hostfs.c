/* Reading /proc and /sys under a root prefix (see hostfs.h). */
#include "hostfs.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int vpath(char *out, size_t size, const char *root, const char *fmt, va_list ap)
{
    size_t root_len = strlen(root);
    int n;

    /* "/" and "" mean the real root; drop a trailing slash so "/tmp/x/" + "/proc" joins cleanly. */
    while (root_len > 0 && root[root_len - 1] == '/')
        root_len--;
    if (root_len >= size)
        return -ENAMETOOLONG;
    memcpy(out, root, root_len);
    n = vsnprintf(out + root_len, size - root_len, fmt, ap);
    if (n < 0 || (size_t)n >= size - root_len)
        return -ENAMETOOLONG;
    return 0;
}

/* Formats the calling function's variadic path into the array `out`; sets rc. */
#define FORMAT_PATH(out, root, fmt, rc)                                                            \
    do {                                                                                           \
        va_list ap_;                                                                               \
        va_start(ap_, fmt);                                                                        \
        rc = vpath(out, sizeof(out), root, fmt, ap_);                                              \
        va_end(ap_);                                                                               \
    } while (0)

int tp_hostfs_path(char *out, size_t size, const char *root, const char *fmt, ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = vpath(out, size, root, fmt, ap);
    va_end(ap);
    return rc;
}

static int read_path(char *buf, size_t size, const char *path)
{
    size_t used = 0;
    int fd;

    if (size == 0)
        return -ENOSPC;
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    while (used + 1 < size) {
        ssize_t n = read(fd, buf + used, size - 1 - used);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            int err = -errno;
            close(fd);
            return err;
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    while (used > 0 && isspace((unsigned char)buf[used - 1]))
        used--;
    buf[used] = '\0';
    return (int)used;
}

int tp_hostfs_read(char *buf, size_t size, const char *root, const char *fmt, ...)
{
    char path[TP_HOSTFS_PATH_MAX];
    int rc;

    FORMAT_PATH(path, root, fmt, rc);
    return rc < 0 ? rc : read_path(buf, size, path);
}

int tp_hostfs_read_long(long *value, const char *root, const char *fmt, ...)
{
    char path[TP_HOSTFS_PATH_MAX], buf[64], *end;
    int rc;

    FORMAT_PATH(path, root, fmt, rc);
    if (rc < 0 || (rc = read_path(buf, sizeof(buf), path)) < 0)
        return rc;
    errno = 0;
    *value = strtol(buf, &end, 10);
    if (end == buf || *end != '\0' || errno != 0)
        return -EINVAL;
    return 0;
}

int tp_hostfs_link_name(char *buf, size_t size, const char *root, const char *fmt, ...)
{
    char path[TP_HOSTFS_PATH_MAX], target[TP_HOSTFS_PATH_MAX];
    const char *base;
    ssize_t n;
    int rc;

    FORMAT_PATH(path, root, fmt, rc);
    if (rc < 0)
        return rc;
    n = readlink(path, target, sizeof(target) - 1);
    if (n < 0)
        return -errno;
    target[n] = '\0';
    base = strrchr(target, '/');
    base = base ? base + 1 : target;
    if (strlen(base) >= size)
        return -ENOSPC;
    strcpy(buf, base);
    return (int)strlen(buf);
}

bool tp_hostfs_exists(const char *root, const char *fmt, ...)
{
    char path[TP_HOSTFS_PATH_MAX];
    int rc;

    FORMAT_PATH(path, root, fmt, rc);
    return rc == 0 && access(path, F_OK) == 0;
}

FILE *tp_hostfs_fopen(const char *root, const char *fmt, ...)
{
    char path[TP_HOSTFS_PATH_MAX];
    int rc;

    FORMAT_PATH(path, root, fmt, rc);
    errno = -rc;
    return rc < 0 ? NULL : fopen(path, "re");
}

DIR *tp_hostfs_opendir(const char *root, const char *fmt, ...)
{
    char path[TP_HOSTFS_PATH_MAX];
    int rc;

    FORMAT_PATH(path, root, fmt, rc);
    errno = -rc;
    return rc < 0 ? NULL : opendir(path);
}

int tp_hostfs_cmdline_param(char *value, size_t size, const char *root, const char *name)
{
    char cmdline[4096];
    size_t name_len = strlen(name);
    int found = 0;
    int rc = tp_hostfs_read(cmdline, sizeof(cmdline), root, "/proc/cmdline");

    if (rc < 0)
        return rc;
    for (char *word = cmdline; *word;) {
        size_t len = strcspn(word, " \t\n");

        if (len == 2 && memcmp(word, "--", 2) == 0)
            break; /* what follows "--" belongs to init, not the kernel */
        if (len > name_len && memcmp(word, name, name_len) == 0 && word[name_len] == '=') {
            size_t vlen = len - name_len - 1;

            if (vlen >= size)
                return -ENOSPC;
            memcpy(value, word + name_len + 1, vlen);
            value[vlen] = '\0';
            found = 1;
        }
        word += len;
        word += strspn(word, " \t\n");
    }
    return found;
}
