/*
 * Reading the host's /proc and /sys under a root prefix.
 *
 * Every path is printf-formatted and absolute ("/proc/irq/%s/smp_affinity_list"), then placed
 * under `root` ("/" on a real host, a temp dir in tests). Reads are bounded by the caller's
 * buffer and always NUL-terminate. Errors are negative errno values.
 */
#ifndef TP_HOSTFS_H
#define TP_HOSTFS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define TP_HOSTFS_PATH_MAX 512

#define TP_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))

/* Builds root + formatted path into out. Returns 0 or -ENAMETOOLONG. */
int tp_hostfs_path(char *out, size_t size, const char *root, const char *fmt, ...) TP_PRINTF(4, 5);

/* Reads a small file into buf (at most size-1 bytes), strips trailing whitespace.
 * Returns the length or -errno. */
int tp_hostfs_read(char *buf, size_t size, const char *root, const char *fmt, ...) TP_PRINTF(4, 5);

/* Reads a file holding one integer. Returns 0, -errno, or -EINVAL if it is not a number. */
int tp_hostfs_read_long(long *value, const char *root, const char *fmt, ...) TP_PRINTF(3, 4);

/* Basename of a symlink's target (e.g. the driver of a PCI device). Returns length or -errno. */
int tp_hostfs_link_name(char *buf, size_t size, const char *root, const char *fmt, ...)
    TP_PRINTF(4, 5);

bool tp_hostfs_exists(const char *root, const char *fmt, ...) TP_PRINTF(2, 3);

/* Opens a file for line-by-line reading; NULL with errno set on failure. */
FILE *tp_hostfs_fopen(const char *root, const char *fmt, ...) TP_PRINTF(2, 3);

/* Opens a directory; NULL with errno set on failure. */
DIR *tp_hostfs_opendir(const char *root, const char *fmt, ...) TP_PRINTF(2, 3);

/*
 * Finds `name=` on the kernel command line (/proc/cmdline) and copies its value. The last
 * occurrence wins, as for the kernel. Returns 1 if found, 0 if absent, -errno if unreadable.
 */
int tp_hostfs_cmdline_param(char *value, size_t size, const char *root, const char *name);

#endif
