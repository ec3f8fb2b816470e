/*
 * The instance lock: a running holder is named and refused, a killed one's lock is taken over and
 * told from a clean stop's, another user's lock file is refused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bus/instance_lock.h"
#include "tmpdir.h"

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return tmpdir_make(dir, sizeof(dir), "lock");
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(dir);
}

static void test_running_holder_refused_killed_one_taken_over(void **state)
{
    (void)state;
    struct tp_instance_lock a, b;
    char err[512], expect[256];
    assert_int_equal(tp_instance_lock(&a, dir, "inst", err, sizeof(err)), 0);
    assert_int_equal(a.previous, 0);
    /* Another holder, even in this process (flock is per open file): refused, pid named. */
    assert_int_equal(tp_instance_lock(&b, dir, "inst", err, sizeof(err)), -EBUSY);
    snprintf(expect, sizeof(expect), "instance \"inst\" is already running (pid %d holds",
             (int)getpid());
    assert_non_null(strstr(err, expect));
    assert_int_equal(tp_instance_lock(&b, dir, "other", err, sizeof(err)), 0); /* another name */
    tp_instance_unlock(&b, false);
    tp_instance_unlock(&a, false);
    /* A clean stop leaves no pid: the next holder takes nothing over. */
    assert_int_equal(tp_instance_lock(&a, dir, "inst", err, sizeof(err)), 0);
    assert_int_equal(a.previous, 0);
    tp_instance_unlock(&a, false);

    /* A holder killed holding it (it exits without unlocking): taken over, its pid told. */
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0) {
        struct tp_instance_lock l;
        _exit(tp_instance_lock(&l, dir, "inst", err, sizeof(err)) == 0 ? 0 : 1);
    }
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(tp_instance_lock(&a, dir, "inst", err, sizeof(err)), 0);
    assert_int_equal(a.previous, child);
    /* A holder that removes its bus removes the lock too; the next one makes a new file. */
    char path[256];
    snprintf(path, sizeof(path), "%s", a.path);
    tp_instance_unlock(&a, true);
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(tp_instance_lock(&a, dir, "inst", err, sizeof(err)), 0);
    assert_int_equal(a.previous, 0);
    tp_instance_unlock(&a, true);
}

static void test_foreign_or_linked_lock_file_refused(void **state)
{
    (void)state;
    struct tp_instance_lock l;
    char err[512], path[256];
    snprintf(path, sizeof(path), "%s/tickplane.sq.lock", dir);
    if (geteuid() == 0) {
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fclose(f);
        assert_int_equal(chown(path, 65534, 65534), 0);
        assert_int_equal(tp_instance_lock(&l, dir, "sq", err, sizeof(err)), -EPERM);
        assert_non_null(strstr(err, "uid 65534"));
        assert_int_equal(unlink(path), 0);
    }
    /* A symbolic link planted under the name would lock and write its target. */
    char target[256];
    snprintf(target, sizeof(target), "%s/target", dir);
    assert_int_equal(symlink(target, path), 0);
    assert_true(tp_instance_lock(&l, dir, "sq", err, sizeof(err)) < 0);
    assert_int_equal(access(target, F_OK), -1);
    assert_int_equal(unlink(path), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_running_holder_refused_killed_one_taken_over),
        cmocka_unit_test(test_foreign_or_linked_lock_file_refused),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
