/* The instance lock: see instance_lock.h. */
#include "instance_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bus.h"
#include "segment.h"

/* The pid written in the lock file, or 0. */
static pid_t read_pid(int fd)
{
    char text[24] = {0};
    ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
    return n > 0 ? (pid_t)strtol(text, NULL, 10) : 0;
}

/* One attempt: 0 and l->fd, -EAGAIN when the file locked was removed meanwhile, or an error. */
static int lock_once(struct tp_instance_lock *l, const char *instance, char *err, size_t err_len)
{
    int rc;
    /* O_NOFOLLOW: a symbolic link planted under the name would lock (and write) its target. */
    int fd = open(l->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        rc = -errno;
        struct stat st;
        if (lstat(l->path, &st) == 0 && st.st_uid != geteuid()) {
            snprintf(err, err_len,
                     "instance lock %s belongs to uid %u, not this daemon's uid %u (%s): remove "
                     "it if no daemon of that user runs this instance",
                     l->path, (unsigned)st.st_uid, (unsigned)geteuid(), strerror(-rc));
            return -EPERM;
        }
        snprintf(err, err_len, "instance lock %s: %s", l->path, strerror(-rc));
        return rc;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
        snprintf(err, err_len,
                 "instance lock %s is not a regular file of this daemon's uid %u (owner uid %u): "
                 "remove it if no daemon of that user runs this instance",
                 l->path, (unsigned)geteuid(), (unsigned)st.st_uid);
        close(fd);
        return -EPERM;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        rc = -errno;
        if (rc == -EWOULDBLOCK)
            snprintf(err, err_len,
                     "instance \"%s\" is already running (pid %d holds %s): stop it first, or give "
                     "this one another name",
                     instance, (int)read_pid(fd), l->path);
        else
            snprintf(err, err_len, "instance lock %s: flock: %s", l->path, strerror(-rc));
        close(fd);
        return rc == -EWOULDBLOCK ? -EBUSY : rc;
    }
    /* A holder that stopped for good removed the name before unlocking: this inode may be that
     * one, unlinked, while a third daemon locks a new file under the name. */
    struct stat now;
    if (stat(l->path, &now) != 0 || now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
        close(fd);
        return -EAGAIN;
    }
    l->previous = read_pid(fd);
    char text[24];
    int n = snprintf(text, sizeof(text), "%d\n", (int)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, text, (size_t)n, 0) != n) {
        rc = -errno;
        snprintf(err, err_len, "instance lock %s: write: %s", l->path, strerror(-rc));
        close(fd);
        return rc;
    }
    l->fd = fd;
    return 0;
}

int tp_instance_lock(struct tp_instance_lock *l, const char *dir, const char *instance, char *err,
                     size_t err_len)
{
    memset(l, 0, sizeof(*l));
    l->fd = -1;
    int rc = tp_seg_path(l->path, sizeof(l->path), dir != NULL ? dir : TP_BUS_DEFAULT_DIR, instance,
                         "lock");
    if (rc != 0) {
        snprintf(err, err_len, "instance lock: bad directory or instance name \"%s\"", instance);
        return rc;
    }
    for (int attempt = 0; attempt < 100; attempt++) {
        rc = lock_once(l, instance, err, err_len);
        if (rc != -EAGAIN)
            return rc;
    }
    snprintf(err, err_len, "instance lock %s: removed under this daemon 100 times", l->path);
    return -EAGAIN;
}

void tp_instance_unlock(struct tp_instance_lock *l, bool remove)
{
    if (l->fd < 0)
        return;
    if (remove)
        unlink(l->path); /* while holding it: see lock_once */
    /* Emptied: the next holder learns that this one stopped cleanly (should it fail, the next
     * holder only calls this one killed). */
    int ignored = ftruncate(l->fd, 0);
    (void)ignored;
    close(l->fd);
    l->fd = -1;
}
