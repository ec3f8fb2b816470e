/*
 * One writer per instance name: a lock file beside the segments, <dir>/tickplane.<instance>.lock,
 * held with flock(2) for the writer's life.
 *
 * The kernel drops the lock when its holder exits however it exits (SIGKILL, OOM killer), so a
 * lock left by a killed daemon is taken over at once, and a running daemon's cannot be: a second
 * daemon with the same name and bus directory refuses to start, naming the pid that holds it,
 * whatever its EAL file prefix or shared-config mode. The file holds the holder's pid as text
 * (for the messages), emptied by a clean unlock, so a pid found there by the next holder is one
 * that died holding it. A holder may remove the file as it unlocks: whoever locked the removed
 * inode meanwhile sees that the name no longer is its file and tries again, so two daemons never
 * hold two inodes of one name.
 * A lock file owned by another user is refused: whoever owns it could hold the lock and keep the
 * instance from starting.
 */
#ifndef TP_INSTANCE_LOCK_H
#define TP_INSTANCE_LOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tp_instance_lock {
    int fd; /* -1: not held */
    char path[256];
    pid_t previous; /* pid a killed holder left in the file (0: none): the lock was taken over */
};

/*
 * Take the instance's lock (dir NULL: the bus's default directory). 0, or:
 *   -EBUSY    a live process holds it (err names its pid and the file),
 *   -EPERM    the file belongs to another user (err names it),
 *   another negative errno (err says which step failed).
 */
int tp_instance_lock(struct tp_instance_lock *l, const char *dir, const char *instance, char *err,
                     size_t err_len);

/* Release, emptying the file; remove: and removing it (a daemon that removes its bus). */
void tp_instance_unlock(struct tp_instance_lock *l, bool remove);

#endif /* TP_INSTANCE_LOCK_H */
