/*
 * An ITCH channel's `recovery.snapshot`: the GLIMPSE 5.0 server (SoupBinTCP 4.0) a channel joins
 * late or recovers through, its credentials and timeouts, and the multicast buffered meanwhile.
 *
 *   "snapshot": {"host": "10.0.0.5", "port": 9100, "credentials": "/etc/tickplane/glimpse.cred",
 *                "connect_timeout_ms": 2000, "login_timeout_ms": 2000,
 *                "snapshot_timeout_ms": 120000, "attempts": 3, "retry_ms": 1000,
 *                "buffer_messages": 1048576}
 *
 * The credentials file holds one line "username:password" (SoupBinTCP: at most 6 and 10
 * characters). It must be a regular file owned by the user the daemon runs as and readable by
 * nobody else (mode 0400 or 0600): a file others can read is refused, naming the JSON path.
 * The password is kept in memory only (never printed).
 */
#ifndef TP_ITCH_SNAPSHOT_CONFIG_H
#define TP_ITCH_SNAPSHOT_CONFIG_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define TP_CFG_SNAPSHOT_USER_MAX     7  /* 6 characters + NUL */
#define TP_CFG_SNAPSHOT_PASSWORD_MAX 11 /* 10 characters + NUL */
#define TP_CFG_SNAPSHOT_PATH_MAX     256

struct tp_config_errors;

struct tp_cfg_itch_snapshot {
    bool present;
    uint32_t host; /* unicast IPv4, host order */
    uint16_t port;
    char credentials[TP_CFG_SNAPSHOT_PATH_MAX];
    char username[TP_CFG_SNAPSHOT_USER_MAX];
    char password[TP_CFG_SNAPSHOT_PASSWORD_MAX];
    uint32_t connect_timeout_ms;  /* default 2000 */
    uint32_t login_timeout_ms;    /* default 2000 */
    uint32_t snapshot_timeout_ms; /* one attempt, login to end of snapshot; default 120000 */
    uint32_t attempts;            /* default 3 */
    uint32_t retry_ms;            /* pause between attempts, default 1000 */
    uint32_t buffer_messages;     /* multicast messages kept while loading, default 1 Mi */
};

/* Parses obj (at JSON path `path`) into *out, errors into errs. */
void tp_cfg_parse_itch_snapshot(struct tp_config_errors *errs, const char *path, const json_t *obj,
                                struct tp_cfg_itch_snapshot *out);

/*
 * Reads a credentials file as above: 0, or a negative errno with why in err (EACCES: readable by
 * others or owned by another user; EINVAL: not "user:password" of the allowed lengths).
 */
int tp_cfg_read_credentials(const char *file, char *username, char *password, char *err,
                            size_t err_size);

#endif /* TP_ITCH_SNAPSHOT_CONFIG_H */
