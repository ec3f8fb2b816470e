/*
 * Segment files: header checks with clear refusals, mode/group, read-only readers, restarts, and
 * the writer's heartbeat (a killed writer's segment is told from a live one without its pid).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bus/bus.h"
#include "bus/segment.h"
#include "tmpdir.h"

#define TIMEOUT_NS 2000000000ull /* libtickplane's default heartbeat timeout */
#define MS         1000000ull

static char dir[64];

static int setup(void **state)
{
    (void)state;
    return tmpdir_make(dir, sizeof(dir), "seg");
}

static int teardown(void **state)
{
    (void)state;
    return tmpdir_remove(dir);
}

static void create_live(struct tp_seg *seg, const char *part, uint32_t kind, mode_t mode)
{
    char path[256], err[256];
    assert_int_equal(tp_seg_path(path, sizeof(path), dir, "test", part), 0);
    struct tp_seg_create_params p = {.path = path,
                                     .instance = "test",
                                     .kind = kind,
                                     .data_size = 10000,
                                     .mode = mode,
                                     .gid = (gid_t)-1};
    assert_int_equal(tp_seg_create(seg, &p, err, sizeof(err)), 0);
    /* Not visible under its name until published. */
    struct stat st;
    assert_true(stat(path, &st) != 0 || st.st_ino != seg->ino);
    assert_int_equal(tp_seg_publish(seg, err, sizeof(err)), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_true(st.st_ino == seg->ino);
}

static void test_path_rules(void **state)
{
    (void)state;
    char path[64];
    assert_int_equal(tp_seg_path(path, sizeof(path), "/dev/shm", "md1", "ring"), 0);
    assert_string_equal(path, "/dev/shm/tickplane.md1.ring");
    assert_int_equal(tp_seg_path(path, sizeof(path), "/dev/shm", "../etc", "ring"), -EINVAL);
    assert_int_equal(tp_seg_path(path, sizeof(path), "/dev/shm", "a/b", "ring"), -EINVAL);
    assert_int_equal(tp_seg_path(path, sizeof(path), "/dev/shm", "", "ring"), -EINVAL);
    assert_int_equal(tp_seg_path(path, 16, "/dev/shm", "md1", "ring"), -ENAMETOOLONG);
}

static void test_attach_checks_header(void **state)
{
    (void)state;
    struct tp_seg w, r;
    char err[256];
    create_live(&w, "ring", TP_SEG_RING, 0640);
    assert_int_equal(w.hdr->data_size % 4096, 0);
    assert_true(w.hdr->data_size >= 10000);
    assert_int_equal(w.hdr->writer_pid, (uint32_t)getpid());

    assert_int_equal(tp_seg_attach(&r, w.path, TP_SEG_RING, err, sizeof(err)), 0);
    assert_int_equal(r.hdr->writer_epoch, w.hdr->writer_epoch);
    assert_false(tp_seg_writer_gone(&r));
    assert_int_equal(tp_seg_check_writer(&r, TIMEOUT_NS), 0);
    tp_seg_close(&r);

    /* Wrong kind. */
    assert_int_equal(tp_seg_attach(&r, w.path, TP_SEG_STATE, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "kind"));

    /* A newer and an older layout version are both refused, saying which versions. */
    w.hdr->layout_version = TP_SEG_LAYOUT_VERSION + 1;
    assert_int_equal(tp_seg_attach(&r, w.path, TP_SEG_RING, err, sizeof(err)), -EPROTONOSUPPORT);
    char want[64];
    snprintf(want, sizeof(want), "layout version %u, this library reads version %u",
             TP_SEG_LAYOUT_VERSION + 1, TP_SEG_LAYOUT_VERSION);
    assert_non_null(strstr(err, want));
    w.hdr->layout_version = TP_SEG_LAYOUT_VERSION - 1;
    assert_int_equal(tp_seg_attach(&r, w.path, TP_SEG_RING, err, sizeof(err)), -EPROTONOSUPPORT);
    w.hdr->layout_version = TP_SEG_LAYOUT_VERSION;

    /* Bad magic, lying sizes. */
    w.hdr->magic ^= 1;
    assert_int_equal(tp_seg_attach(&r, w.path, TP_SEG_RING, err, sizeof(err)), -EBADF);
    w.hdr->magic ^= 1;
    w.hdr->data_size += 4096;
    assert_int_equal(tp_seg_attach(&r, w.path, TP_SEG_RING, err, sizeof(err)), -EINVAL);
    w.hdr->data_size -= 4096;

    /* Missing file, file too small. */
    char missing[256];
    snprintf(missing, sizeof(missing), "%s/nothing", dir);
    assert_int_equal(tp_seg_attach(&r, missing, TP_SEG_RING, err, sizeof(err)), -ENOENT);
    char small[256];
    snprintf(small, sizeof(small), "%s/small", dir);
    FILE *fp = fopen(small, "w");
    fputs("hello", fp);
    fclose(fp);
    assert_int_equal(tp_seg_attach(&r, small, TP_SEG_RING, err, sizeof(err)), -EINVAL);

    /* Closed by the writer: refused, and a mapped reader notices. */
    assert_int_equal(tp_seg_attach(&r, w.path, TP_SEG_RING, err, sizeof(err)), 0);
    tp_seg_unlink(&w);
    tp_seg_close(&w);
    assert_true(tp_seg_writer_gone(&r));
    assert_int_equal(tp_seg_check_writer(&r, TIMEOUT_NS), -ESTALE);
    tp_seg_close(&r);
}

static void test_mode_and_group_applied(void **state)
{
    (void)state;
    struct tp_seg w;
    char path[256], err[256];
    assert_int_equal(tp_seg_path(path, sizeof(path), dir, "grp", "state"), 0);
    gid_t gid = getgid() == 0 ? 1 : getgid(); /* as root, give it to group 1 ("daemon") */
    struct tp_seg_create_params p = {.path = path,
                                     .instance = "grp",
                                     .kind = TP_SEG_STATE,
                                     .data_size = 100,
                                     .mode = 0640,
                                     .gid = gid};
    assert_int_equal(tp_seg_create(&w, &p, err, sizeof(err)), 0);
    assert_int_equal(tp_seg_publish(&w, err, sizeof(err)), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);
    assert_int_equal(st.st_gid, gid);
    tp_seg_unlink(&w);
    tp_seg_close(&w);
}

static void test_reader_mapping_is_read_only(void **state)
{
    (void)state;
    struct tp_seg w, r;
    char err[256];
    create_live(&w, "ro", TP_SEG_COUNTERS, 0644);
    assert_int_equal(tp_seg_attach(&r, w.path, TP_SEG_COUNTERS, err, sizeof(err)), 0);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGSEGV, SIG_DFL);            /* cmocka catches it otherwise */
        ((volatile uint8_t *)r.data)[0] = 1; /* must fault */
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGSEGV);
    assert_int_equal(((uint8_t *)w.data)[0], 0);
    tp_seg_close(&r);
    tp_seg_unlink(&w);
    tp_seg_close(&w);
}

static void test_writer_restart_detected(void **state)
{
    (void)state;
    struct tp_seg w1, w2, r1, r2;
    char err[256];
    create_live(&w1, "restart", TP_SEG_RING, 0644);
    assert_int_equal(tp_seg_attach(&r1, w1.path, TP_SEG_RING, err, sizeof(err)), 0);
    /* A second writer (a restarted daemon) replaces the file while the first is still mapped. */
    create_live(&w2, "restart", TP_SEG_RING, 0644);
    assert_true(tp_seg_writer_gone(&r1));
    assert_int_equal(tp_seg_check_writer(&r1, TIMEOUT_NS), -ESTALE);
    assert_int_equal(tp_seg_attach(&r2, w2.path, TP_SEG_RING, err, sizeof(err)), 0);
    assert_false(tp_seg_writer_gone(&r2));
    assert_true(r2.ino != r1.ino);
    /* The old writer closing late must not disturb the new file. */
    assert_int_equal(tp_seg_unlink(&w1), -ESTALE);
    tp_seg_close(&w1);
    assert_false(tp_seg_writer_gone(&r2));
    tp_seg_close(&r1);
    tp_seg_close(&r2);
    tp_seg_unlink(&w2);
    tp_seg_close(&w2);
}

/* In a forked writer: create and publish a small segment at path, or exit 1. */
static void child_publishes(struct tp_seg *w, const char *path, uint32_t kind)
{
    char err[256];
    struct tp_seg_create_params p = {.path = path,
                                     .instance = "child",
                                     .kind = kind,
                                     .data_size = 100,
                                     .mode = 0644,
                                     .gid = (gid_t)-1};
    if (tp_seg_create(w, &p, err, sizeof(err)) != 0 || tp_seg_publish(w, err, sizeof(err)) != 0)
        _exit(1);
}

static void test_dead_writer_found_by_check(void **state)
{
    (void)state;
    char path[256], err[256];
    assert_int_equal(tp_seg_path(path, sizeof(path), dir, "dead", "ring"), 0);
    pid_t pid = fork();
    if (pid == 0) {
        struct tp_seg w;
        child_publishes(&w, path, TP_SEG_RING);
        _exit(0); /* dies without closing: the segment stays LIVE */
    }
    int status;
    waitpid(pid, &status, 0);
    assert_int_equal(WEXITSTATUS(status), 0);
    struct tp_seg r;
    assert_int_equal(tp_seg_attach(&r, path, TP_SEG_RING, err, sizeof(err)), 0);
    assert_false(tp_seg_writer_gone(&r));
    assert_int_equal(tp_seg_check_writer(&r, TIMEOUT_NS), -ESRCH);
    tp_seg_close(&r);
    unlink(path);
}

/*
 * A writer that keeps a heartbeat: fresh, it is alive (also when its pid is dead, as a writer in
 * another PID namespace looks); stale, it is dead (-EOWNERDEAD) whatever its pid says.
 */
static void test_heartbeat_tells_alive_from_dead(void **state)
{
    (void)state;
    struct tp_seg w, r;
    char err[256];
    create_live(&w, "beat", TP_SEG_RING, 0644);
    assert_int_equal(w.hdr->heartbeat_ns, 0); /* keeps none until the writer beats */
    assert_true(w.hdr->writer_pid_ns != 0);   /* /proc is mounted here */
    assert_int_equal(tp_seg_attach(&r, w.path, TP_SEG_RING, err, sizeof(err)), 0);
    uint64_t now = tp_seg_clock_ns();
    assert_int_equal(tp_seg_heartbeat_age(&r, now), 0);
    assert_false(tp_seg_heartbeat_stale(&r, now, 0));

    tp_seg_heartbeat(&w, now - 500 * MS);
    assert_int_equal(tp_seg_heartbeat_age(&r, now), 500 * MS);
    assert_false(tp_seg_heartbeat_stale(&r, now, 500 * MS));
    assert_true(tp_seg_heartbeat_stale(&r, now, 499 * MS));
    assert_int_equal(tp_seg_check_writer(&r, 1000 * MS), 0);
    assert_int_equal(tp_seg_check_writer(&r, 100 * MS), -EOWNERDEAD);

    /* A beat after the reader read its clock is not an age. */
    tp_seg_heartbeat(&w, now + 5 * MS);
    assert_int_equal(tp_seg_heartbeat_age(&r, now), 0);

    /* The pid is not consulted while the writer beats: a dead pid with a fresh heartbeat. */
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    waitpid(child, NULL, 0);
    w.hdr->writer_pid = (uint32_t)child;
    tp_seg_heartbeat(&w, tp_seg_clock_ns());
    assert_int_equal(tp_seg_check_writer(&r, TIMEOUT_NS), 0);
    /* Stale with a live pid (ours): dead or hung all the same. */
    w.hdr->writer_pid = (uint32_t)getpid();
    atomic_store(&w.hdr->heartbeat_ns, tp_seg_clock_ns() - 3 * TIMEOUT_NS); /* its last beat */
    assert_int_equal(tp_seg_check_writer(&r, TIMEOUT_NS), -EOWNERDEAD);

    /* Several threads beat: a beat older than the last one (its thread read the clock, then was
     * preempted) never sets the heartbeat back. */
    uint64_t fresh = tp_seg_clock_ns();
    tp_seg_heartbeat(&w, fresh);
    tp_seg_heartbeat(&w, fresh - 3 * TIMEOUT_NS);
    assert_int_equal(atomic_load(&w.hdr->heartbeat_ns), fresh);

    /* No heartbeat and a dead pid: the pid check decides, in the writer's PID namespace only. */
    atomic_store(&w.hdr->heartbeat_ns, 0);
    w.hdr->writer_pid = (uint32_t)child;
    assert_int_equal(tp_seg_check_writer(&r, TIMEOUT_NS), -ESRCH);
    w.hdr->writer_pid_ns ^= 1; /* another namespace: the pid there may be anyone's */
    assert_int_equal(tp_seg_check_writer(&r, TIMEOUT_NS), 0);
    w.hdr->writer_pid = (uint32_t)getpid();
    tp_seg_close(&r);
    tp_seg_unlink(&w);
    tp_seg_close(&w);
}

/* A beating writer killed outright: its segment stays LIVE, its heartbeat ages past the timeout. */
static void test_killed_beating_writer(void **state)
{
    (void)state;
    char path[256], err[256];
    assert_int_equal(tp_seg_path(path, sizeof(path), dir, "killed", "state"), 0);
    int ready[2];
    assert_int_equal(pipe(ready), 0);
    pid_t pid = fork();
    if (pid == 0) {
        struct tp_seg w;
        child_publishes(&w, path, TP_SEG_STATE);
        tp_seg_heartbeat(&w, tp_seg_clock_ns());
        if (write(ready[1], "x", 1) != 1)
            _exit(1);
        for (;;) { /* the daemon's control loop */
            tp_seg_heartbeat(&w, tp_seg_clock_ns());
            usleep(5000);
        }
    }
    char x;
    assert_int_equal(read(ready[0], &x, 1), 1);
    struct tp_seg r;
    assert_int_equal(tp_seg_attach(&r, path, TP_SEG_STATE, err, sizeof(err)), 0);
    usleep(100000);
    assert_int_equal(tp_seg_check_writer(&r, 200 * MS), 0); /* beating every 5 ms */
    assert_int_equal(kill(pid, SIGKILL), 0);
    waitpid(pid, NULL, 0);
    uint64_t last_beat = atomic_load(&r.hdr->heartbeat_ns);
    assert_false(tp_seg_writer_gone(&r)); /* nobody marked it */
    while (tp_seg_check_writer(&r, 200 * MS) == 0)
        usleep(1000);
    uint64_t noticed = tp_seg_clock_ns() - last_beat;
    assert_int_equal(tp_seg_check_writer(&r, 200 * MS), -EOWNERDEAD);
    /* Past the timeout of the last beat, with a poll's slack (generous: a loaded machine may
     * hold this process up between two polls). */
    assert_true(noticed > 200 * MS && noticed <= 1200 * MS);
    tp_seg_close(&r);
    unlink(path);
    close(ready[0]);
    close(ready[1]);
}

static void test_bus_instance_refuses_bad_sizes(void **state)
{
    (void)state;
    struct tp_bus_writer w;
    char err[256];
    struct tp_bus_params p = {.instance = "sizes",
                              .dir = dir,
                              .ring_bytes = 5000,
                              .max_record = 256,
                              .instruments = 4,
                              .depth = 5,
                              .counters = 16,
                              .mode = 0644,
                              .gid = (gid_t)-1};
    assert_int_equal(tp_bus_writer_open(&w, &p, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "power of two"));
    p.ring_bytes = 1 << 16;
    p.depth = TP_MAX_DEPTH + 1;
    assert_int_equal(tp_bus_writer_open(&w, &p, err, sizeof(err)), -EINVAL);
    struct tp_bus_reader r;
    assert_int_equal(tp_bus_reader_open(&r, dir, "sizes", err, sizeof(err)), -ENOENT);
    p.depth = 5;
    assert_int_equal(tp_bus_writer_open(&w, &p, err, sizeof(err)), 0);
    assert_int_equal(tp_bus_reader_open(&r, dir, "sizes", err, sizeof(err)), 0);
    assert_int_equal(r.state->depth, 5);
    assert_int_equal(r.state->instruments, 4);
    tp_bus_reader_close(&r);
    tp_bus_writer_close(&w, 1);
    assert_int_equal(tp_bus_reader_open(&r, dir, "sizes", err, sizeof(err)), -ENOENT);
}

/* Runs fn as uid (a child process); its exit status. */
static int as_uid(uid_t uid, int (*fn)(const char *), const char *arg)
{
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(setgid(uid) == 0 && setuid(uid) == 0 ? fn(arg) : 99);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 98;
}

static int plant(const char *path)
{
    FILE *f = fopen(path, "w");
    return f != NULL && fputs("planted", f) >= 0 && fclose(f) == 0 ? 0 : 1;
}

/* A writer of another user than the squatter: refused with the owner named, no temporary left. */
static int create_over(const char *path)
{
    struct tp_seg seg;
    char err[512];
    struct tp_seg_create_params p = {.path = path,
                                     .instance = "sq",
                                     .kind = TP_SEG_RING,
                                     .data_size = 1 << 24,
                                     .mode = 0640,
                                     .gid = (gid_t)-1};
    if (tp_seg_create(&seg, &p, err, sizeof(err)) != -EPERM ||
        strstr(err, "belongs to uid 65534") == NULL)
        return 1;
    char tmp[300];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    return access(tmp, F_OK) == 0 ? 2 : 0;
}

/*
 * Squatting: a file another user planted under a segment's name (in a world-writable sticky
 * directory, as /dev/shm is) is removed by a writer that may (root), refused with its owner by
 * one that may not, and never written to; nothing temporary is left either way. Readers refuse a
 * segment of a foreign owner and one that others may write.
 */
static void test_squatted_and_foreign_segments(void **state)
{
    (void)state;
    if (geteuid() != 0)
        skip(); /* needs other users */
    char sticky[128], path[256], err[512];
    snprintf(sticky, sizeof(sticky), "%s/sticky", dir);
    assert_int_equal(chmod(dir, 0755), 0); /* the other users reach the sticky directory */
    assert_int_equal(mkdir(sticky, 0777), 0);
    assert_int_equal(chmod(sticky, 01777), 0);
    assert_int_equal(tp_seg_path(path, sizeof(path), sticky, "sq", "ring"), 0);
    assert_int_equal(as_uid(65534, plant, path), 0);
    assert_int_equal(as_uid(65533, create_over, path), 0);
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 65534); /* untouched */
    assert_int_equal(st.st_size, 7);

    /* Root may remove it: the writer does, and creates its own. */
    struct tp_seg w, r;
    struct tp_seg_create_params p = {.path = path,
                                     .instance = "sq",
                                     .kind = TP_SEG_RING,
                                     .data_size = 10000,
                                     .mode = 0640,
                                     .gid = (gid_t)-1};
    assert_int_equal(tp_seg_create(&w, &p, err, sizeof(err)), 0);
    assert_int_equal(tp_seg_publish(&w, err, sizeof(err)), 0);
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_uid, 0);
    assert_int_equal(tp_seg_attach(&r, path, TP_SEG_RING, err, sizeof(err)), 0);
    tp_seg_close(&r);

    /* Readers: another user's segment, then one others may write. */
    assert_int_equal(chown(path, 65534, 65534), 0);
    assert_int_equal(tp_seg_attach(&r, path, TP_SEG_RING, err, sizeof(err)), -EPERM);
    assert_non_null(strstr(err, "belongs to uid 65534"));
    setenv(TP_SEG_OWNER_ENV, "65534", 1); /* unless the operator names that user */
    assert_int_equal(tp_seg_attach(&r, path, TP_SEG_RING, err, sizeof(err)), 0);
    tp_seg_close(&r);
    unsetenv(TP_SEG_OWNER_ENV);
    assert_int_equal(chown(path, 0, 0), 0);
    assert_int_equal(chmod(path, 0660), 0);
    assert_int_equal(tp_seg_attach(&r, path, TP_SEG_RING, err, sizeof(err)), -EPERM);
    assert_non_null(strstr(err, "mode 0660: writable by other users"));
    tp_seg_unlink(&w);
    tp_seg_close(&w);
}

/* A failed publish (the name cannot be replaced) leaves no temporary file behind. */
static void test_failed_publish_removes_temporary(void **state)
{
    (void)state;
    struct tp_seg w;
    char path[256], err[512], tmp[300];
    assert_int_equal(tp_seg_path(path, sizeof(path), dir, "pub", "ring"), 0);
    struct tp_seg_create_params p = {.path = path,
                                     .instance = "pub",
                                     .kind = TP_SEG_RING,
                                     .data_size = 10000,
                                     .mode = 0640,
                                     .gid = (gid_t)-1};
    assert_int_equal(tp_seg_create(&w, &p, err, sizeof(err)), 0);
    assert_int_equal(mkdir(path, 0755), 0); /* a directory under the name: rename fails */
    char inside[300];
    snprintf(inside, sizeof(inside), "%s/x", path);
    assert_int_equal(plant(inside), 0); /* not empty: not even root replaces it */
    assert_true(tp_seg_publish(&w, err, sizeof(err)) < 0);
    assert_non_null(strstr(err, "rename"));
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());
    assert_int_equal(access(tmp, F_OK), -1);
    tp_seg_close(&w);
    assert_int_equal(unlink(inside), 0);
    assert_int_equal(rmdir(path), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_rules),
        cmocka_unit_test(test_attach_checks_header),
        cmocka_unit_test(test_mode_and_group_applied),
        cmocka_unit_test(test_reader_mapping_is_read_only),
        cmocka_unit_test(test_writer_restart_detected),
        cmocka_unit_test(test_dead_writer_found_by_check),
        cmocka_unit_test(test_heartbeat_tells_alive_from_dead),
        cmocka_unit_test(test_killed_beating_writer),
        cmocka_unit_test(test_bus_instance_refuses_bad_sizes),
        cmocka_unit_test(test_squatted_and_foreign_segments),
        cmocka_unit_test(test_failed_publish_removes_temporary),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
