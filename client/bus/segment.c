/* Shared-memory segment files: create, publish, attach, detect a writer restart. */
#include "segment.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

static int fail(char *err, size_t err_len, int rc, const char *fmt, ...)
{
    if (err != NULL && err_len > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_len, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static int valid_name(const char *s)
{
    if (s == NULL || *s == '\0')
        return 0;
    for (; *s; s++) {
        char ch = *s;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
                 ch == '_' || ch == '-' || ch == '.';
        if (!ok)
            return 0;
    }
    return 1;
}

int tp_seg_path(char *out, size_t out_len, const char *dir, const char *instance, const char *part)
{
    if (dir == NULL || !valid_name(instance) || !valid_name(part) || strstr(instance, "..") != NULL)
        return -EINVAL;
    int n = snprintf(out, out_len, "%s/tickplane.%s.%s", dir, instance, part);
    if (n < 0 || (size_t)n >= out_len)
        return -ENAMETOOLONG;
    return 0;
}

uint64_t tp_seg_pid_namespace(void)
{
    struct stat st;
    return stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Mark an existing live segment file at path as REPLACED so its readers re-attach. */
static void retire_previous(const char *path)
{
    int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        (size_t)st.st_size >= sizeof(struct tp_seg_header)) {
        struct tp_seg_header *h = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (h != MAP_FAILED) {
            if (h->magic == TP_SEG_MAGIC)
                atomic_store_explicit(&h->state, TP_SEG_STATE_REPLACED, memory_order_release);
            munmap(h, sizeof(*h));
        }
    }
    close(fd);
}

uint64_t tp_seg_file_size(uint64_t data_size, uint64_t block)
{
    uint64_t size = TP_SEG_HEADER_SIZE + data_size;
    return (size + block - 1) / block * block;
}

/*
 * A file under the segment's name that is not a regular file of this process's user was put there
 * by someone else (a squatter, or a daemon of another user): never written to, removed where the
 * directory lets this process, else refused with its owner named. 0 when the name is free or ours.
 */
static int remove_foreign(const char *path, char *err, size_t err_len)
{
    struct stat st;
    if (lstat(path, &st) != 0 || (S_ISREG(st.st_mode) && st.st_uid == geteuid()))
        return 0;
    if (unlink(path) == 0)
        return 0;
    return fail(err, err_len, -EPERM,
                "segment %s belongs to uid %u, not this daemon's uid %u, and cannot be removed "
                "(%s): another user created it; remove it as root",
                path, (unsigned)st.st_uid, (unsigned)geteuid(), strerror(errno));
}

int tp_seg_create(struct tp_seg *seg, const struct tp_seg_create_params *p, char *err,
                  size_t err_len)
{
    memset(seg, 0, sizeof(*seg));
    if (p->path == NULL || strlen(p->path) + 32 >= sizeof(seg->path) || p->data_size == 0)
        return fail(err, err_len, -EINVAL, "segment: bad path or size");

    int rc = remove_foreign(p->path, err, err_len);
    if (rc != 0)
        return rc;
    char tmp[sizeof(seg->path) + 32];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", p->path, (int)getpid());
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return fail(err, err_len, -errno, "segment %s: create: %s", tmp, strerror(errno));

    /* hugetlbfs needs whole huge pages: round the file to the file system's block size. */
    struct statfs fs = {0};
    uint64_t block = (fstatfs(fd, &fs) == 0 && fs.f_bsize > 0) ? (uint64_t)fs.f_bsize : 4096;
    uint64_t size = tp_seg_file_size(p->data_size, block);

    if (ftruncate(fd, (off_t)size) != 0) {
        rc = fail(err, err_len, -errno, "segment %s: size %llu: %s", tmp, (unsigned long long)size,
                  strerror(errno));
        goto out_unlink;
    }
    /* tmpfs and hugetlbfs allocate pages lazily: reserve them all now. */
    int falloc = posix_fallocate(fd, 0, (off_t)size);
    if (falloc != 0 && falloc != EOPNOTSUPP && falloc != EINVAL) {
        rc = fail(err, err_len, -falloc,
                  "segment %s: %llu bytes do not fit the file system (%llu bytes free): %s", tmp,
                  (unsigned long long)size,
                  (unsigned long long)((uint64_t)fs.f_bavail * (uint64_t)fs.f_bsize),
                  strerror(falloc));
        goto out_unlink;
    }
    if (fchmod(fd, p->mode) != 0 || (p->gid != (gid_t)-1 && fchown(fd, (uid_t)-1, p->gid) != 0)) {
        rc = fail(err, err_len, -errno, "segment %s: mode/group: %s", tmp, strerror(errno));
        goto out_unlink;
    }
    /* Every page faulted in now (MAP_POPULATE): the data plane writes a fresh ring without
     * taking a page fault per 4 KiB on its hot path. */
    void *map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    if (map == MAP_FAILED) {
        rc = fail(err, err_len, -errno, "segment %s: mmap: %s", tmp, strerror(errno));
        goto out_unlink;
    }
    struct stat st;
    fstat(fd, &st);
    close(fd);

    struct tp_seg_header *h = map;
    h->magic = TP_SEG_MAGIC;
    h->layout_version = TP_SEG_LAYOUT_VERSION;
    h->kind = p->kind;
    h->header_size = TP_SEG_HEADER_SIZE;
    h->data_size = size - TP_SEG_HEADER_SIZE;
    h->file_size = size;
    h->created_ns = now_ns();
    h->writer_pid = (uint32_t)getpid();
    h->writer_epoch = h->created_ns ^ ((uint64_t)h->writer_pid << 40);
    h->writer_pid_ns = tp_seg_pid_namespace();
    h->heartbeat_timeout_ms = p->heartbeat_timeout_ms;
    if (p->params != NULL)
        memcpy(h->params, p->params, sizeof(h->params));
    snprintf(h->name, sizeof(h->name), "%s", p->instance != NULL ? p->instance : "");
    atomic_store_explicit(&h->state, TP_SEG_STATE_INIT, memory_order_relaxed);

    seg->hdr = h;
    seg->data = (uint8_t *)map + TP_SEG_HEADER_SIZE;
    seg->map_size = size;
    seg->writable = 1;
    seg->dev = st.st_dev;
    seg->ino = st.st_ino;
    snprintf(seg->path, sizeof(seg->path), "%s", p->path);
    return 0;

out_unlink:
    close(fd);
    unlink(tmp);
    return rc;
}

int tp_seg_publish(struct tp_seg *seg, char *err, size_t err_len)
{
    char tmp[sizeof(seg->path) + 32];
    snprintf(tmp, sizeof(tmp), "%s.tmp.%d", seg->path, (int)getpid());
    retire_previous(seg->path);
    /* Readers may attach as soon as the name exists: the data is complete before this store. */
    atomic_store_explicit(&seg->hdr->state, TP_SEG_STATE_LIVE, memory_order_release);
    if (rename(tmp, seg->path) != 0) {
        int rc = fail(err, err_len, -errno, "segment %s: rename: %s", seg->path, strerror(errno));
        unlink(tmp);
        atomic_store_explicit(&seg->hdr->state, TP_SEG_STATE_CLOSED, memory_order_release);
        return rc;
    }
    return 0;
}

/* The uid of a user name or number, or (uid_t)-1. */
static uid_t user_uid(const char *name)
{
    char *end;
    unsigned long n = strtoul(name, &end, 10);
    if (*name != '\0' && *end == '\0')
        return (uid_t)n;
    struct passwd pw, *found = NULL;
    char buf[1024];
    return getpwnam_r(name, &pw, buf, sizeof(buf), &found) == 0 && found != NULL ? pw.pw_uid
                                                                                 : (uid_t)-1;
}

int tp_seg_writer_trusted(uid_t uid)
{
    if (uid == 0 || uid == geteuid() || uid == user_uid(TP_SEG_SERVICE_USER))
        return 1;
    const char *owner = getenv(TP_SEG_OWNER_ENV);
    return owner != NULL && *owner != '\0' && uid == user_uid(owner);
}

int tp_seg_attach(struct tp_seg *seg, const char *path, uint32_t kind, char *err, size_t err_len)
{
    memset(seg, 0, sizeof(*seg));
    if (strlen(path) >= sizeof(seg->path))
        return fail(err, err_len, -ENAMETOOLONG, "segment path too long");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return fail(err, err_len, -errno, "segment %s: %s", path, strerror(errno));
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < TP_SEG_HEADER_SIZE) {
        rc = fail(err, err_len, -EINVAL, "segment %s: too small to be a tickplane segment", path);
        goto out;
    }
    /* A daemon's segments are its user's and writable by nobody else: anything else may be a
     * forgery planted under the instance's name. */
    if (!S_ISREG(st.st_mode) || !tp_seg_writer_trusted(st.st_uid)) {
        rc = fail(err, err_len, -EPERM,
                  "segment %s belongs to uid %u, which is not root, this user, the \"%s\" user "
                  "or %s: refusing a segment another user may have planted",
                  path, (unsigned)st.st_uid, TP_SEG_SERVICE_USER, TP_SEG_OWNER_ENV);
        goto out;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        rc = fail(err, err_len, -EPERM,
                  "segment %s has mode %04o: writable by other users, anyone could forge its data",
                  path, (unsigned)(st.st_mode & 07777));
        goto out;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        rc = fail(err, err_len, -errno, "segment %s: mmap: %s", path, strerror(errno));
        goto out;
    }
    const struct tp_seg_header *h = map;
    if (h->magic != TP_SEG_MAGIC) {
        rc = fail(err, err_len, -EBADF, "segment %s: not a tickplane segment (bad magic)", path);
    } else if (h->layout_version != TP_SEG_LAYOUT_VERSION) {
        rc = fail(err, err_len, -EPROTONOSUPPORT,
                  "segment %s: layout version %u, this library reads version %u: "
                  "rebuild the reader against the writer's libtickplane",
                  path, h->layout_version, TP_SEG_LAYOUT_VERSION);
    } else if (h->kind != kind) {
        rc = fail(err, err_len, -EINVAL, "segment %s: kind %u, expected %u", path, h->kind, kind);
    } else if (h->header_size != TP_SEG_HEADER_SIZE || h->file_size != (uint64_t)st.st_size ||
               h->data_size != h->file_size - TP_SEG_HEADER_SIZE) {
        rc = fail(err, err_len, -EINVAL, "segment %s: sizes in the header do not match the file",
                  path);
    } else if (atomic_load_explicit(&h->state, memory_order_acquire) != TP_SEG_STATE_LIVE) {
        rc = fail(err, err_len, -ESTALE, "segment %s: the writer closed it", path);
    }
    if (rc != 0) {
        munmap(map, (size_t)st.st_size);
        goto out;
    }
    seg->hdr = map;
    seg->data = (uint8_t *)map + TP_SEG_HEADER_SIZE;
    seg->map_size = (size_t)st.st_size;
    seg->dev = st.st_dev;
    seg->ino = st.st_ino;
    snprintf(seg->path, sizeof(seg->path), "%s", path);
out:
    close(fd);
    return rc;
}

void tp_seg_close(struct tp_seg *seg)
{
    if (seg->hdr == NULL)
        return;
    if (seg->writable && seg->hdr->writer_pid == (uint32_t)getpid()) {
        uint32_t live = TP_SEG_STATE_LIVE;
        if (atomic_load(&seg->hdr->state) == TP_SEG_STATE_INIT) {
            /* Never published: remove the temporary file. */
            char tmp[sizeof(seg->path) + 32];
            snprintf(tmp, sizeof(tmp), "%s.tmp.%d", seg->path, (int)getpid());
            unlink(tmp);
        }
        atomic_compare_exchange_strong(&seg->hdr->state, &live, TP_SEG_STATE_CLOSED);
    }
    munmap(seg->hdr, seg->map_size);
    seg->hdr = NULL;
    seg->data = NULL;
}

int tp_seg_unlink(const struct tp_seg *seg)
{
    struct stat st;
    /* Only remove the name if it still is our file (a newer writer may own it now). */
    if (stat(seg->path, &st) != 0)
        return -errno;
    if (st.st_dev != seg->dev || st.st_ino != seg->ino)
        return -ESTALE;
    return unlink(seg->path) == 0 ? 0 : -errno;
}

int tp_seg_check_writer(const struct tp_seg *seg, uint64_t max_age_ns)
{
    if (tp_seg_writer_gone(seg))
        return -ESTALE;
    struct stat st;
    if (stat(seg->path, &st) != 0 || st.st_dev != seg->dev || st.st_ino != seg->ino)
        return -ESTALE;
    /* A writer that beats says for itself whether it lives, in any PID namespace. */
    if (atomic_load_explicit(&seg->hdr->heartbeat_ns, memory_order_acquire) != 0)
        return tp_seg_heartbeat_stale(seg, tp_seg_clock_ns(), max_age_ns) ? -EOWNERDEAD : 0;
    uint64_t ns = tp_seg_pid_namespace();
    if (seg->hdr->writer_pid_ns != 0 && ns != 0 && seg->hdr->writer_pid_ns != ns)
        return 0; /* its pid means nothing here: cannot tell */
    if (kill((pid_t)seg->hdr->writer_pid, 0) != 0 && errno == ESRCH)
        return -ESRCH;
    return 0;
}
