/* An ITCH channel's recovery.snapshot section: see itch_snapshot_config.h. */
#include "itch_snapshot_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "json_walk.h"

int tp_cfg_read_credentials(const char *file, char *username, char *password, char *err,
                            size_t err_size)
{
    int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        snprintf(err, err_size, "cannot open %s: %s", file, strerror(errno));
        return -errno;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, err_size, "%s is not a regular file", file);
        return -EINVAL;
    }
    if ((st.st_mode & (S_IRWXG | S_IRWXO)) != 0 || st.st_uid != geteuid()) {
        close(fd);
        snprintf(err, err_size,
                 "%s must be owned by the service user and readable by nobody else (mode %04o, "
                 "owner %u)",
                 file, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
        return -EACCES;
    }
    char text[64];
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n < 0) {
        snprintf(err, err_size, "cannot read %s: %s", file, strerror(errno));
        return -EIO;
    }
    text[n] = '\0';
    text[strcspn(text, "\r\n")] = '\0';
    char *colon = strchr(text, ':');
    size_t ulen = colon ? (size_t)(colon - text) : 0;
    size_t plen = colon ? strlen(colon + 1) : 0;
    if (colon == NULL || ulen == 0 || ulen >= TP_CFG_SNAPSHOT_USER_MAX ||
        plen >= TP_CFG_SNAPSHOT_PASSWORD_MAX) {
        snprintf(err, err_size,
                 "%s: expected one line \"username:password\" (at most 6 and 10 characters)", file);
        return -EINVAL;
    }
    memcpy(username, text, ulen);
    username[ulen] = '\0';
    memcpy(password, colon + 1, plen + 1);
    return 0;
}

void tp_cfg_parse_itch_snapshot(struct tp_config_errors *errs, const char *path, const json_t *obj,
                                struct tp_cfg_itch_snapshot *out)
{
    static const char *const keys[] = {"host",
                                       "port",
                                       "credentials",
                                       "connect_timeout_ms",
                                       "login_timeout_ms",
                                       "snapshot_timeout_ms",
                                       "attempts",
                                       "retry_ms",
                                       "buffer_messages",
                                       NULL};
    memset(out, 0, sizeof(*out));
    out->connect_timeout_ms = 2000;
    out->login_timeout_ms = 2000;
    out->snapshot_timeout_ms = 120000;
    out->attempts = 3;
    out->retry_ms = 1000;
    out->buffer_messages = 1u << 20;
    if (obj == NULL)
        return;
    out->present = true;
    tp_jw_check_keys(errs, path, obj, keys);
    tp_jw_ipv4(errs, path, obj, "host", TP_JW_ADDR_UNICAST, true, &out->host);
    uint64_t v;
    if (tp_jw_uint(errs, path, obj, "port", 1, 65535, true, &v))
        out->port = (uint16_t)v;
    if (tp_jw_uint(errs, path, obj, "connect_timeout_ms", 1, 600000, false, &v))
        out->connect_timeout_ms = (uint32_t)v;
    if (tp_jw_uint(errs, path, obj, "login_timeout_ms", 1, 600000, false, &v))
        out->login_timeout_ms = (uint32_t)v;
    if (tp_jw_uint(errs, path, obj, "snapshot_timeout_ms", 1, 3600000, false, &v))
        out->snapshot_timeout_ms = (uint32_t)v;
    if (tp_jw_uint(errs, path, obj, "attempts", 1, 1000, false, &v))
        out->attempts = (uint32_t)v;
    if (tp_jw_uint(errs, path, obj, "retry_ms", 0, 600000, false, &v))
        out->retry_ms = (uint32_t)v;
    if (tp_jw_uint(errs, path, obj, "buffer_messages", 1024, 1u << 26, false, &v))
        out->buffer_messages = (uint32_t)v;
    char child[TP_JW_PATH_MAX];
    tp_jw_path_key(child, path, "credentials");
    if (tp_jw_string(errs, path, obj, "credentials", sizeof(out->credentials), true,
                     out->credentials)) {
        char why[512];
        if (tp_cfg_read_credentials(out->credentials, out->username, out->password, why,
                                    sizeof(why)) != 0)
            tp_jw_error(errs, child, "%s", why);
    }
}
