/*
 * Entitlements: may this peer (uid, gid and supplementary groups from SO_PEERCRED) subscribe to
 * this (venue, instrument pattern, topics)? Pure functions over the config's rules: no I/O except
 * tp_peer_from_socket, which reads the credentials and the peer user's groups once at accept.
 *
 * Rules add up: a request is allowed if, for every topic asked, some rule matching the peer grants
 * that venue, covers the pattern and grants the topic. uid 0 is always allowed; with no matching
 * rule the config's default decides.
 */
#ifndef TP_ENTITLEMENTS_H
#define TP_ENTITLEMENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#define TP_PEER_MAX_GROUPS 32

struct tp_peer {
    pid_t pid;
    uid_t uid;
    gid_t gid;
    unsigned n_groups; /* supplementary groups (the primary one included) */
    gid_t groups[TP_PEER_MAX_GROUPS];
};

/* Credentials of a connected UNIX socket peer; 0 or -errno. */
int tp_peer_from_socket(int fd, struct tp_peer *peer);

/*
 * 0 if allowed. If not, a reason for the client in `reason` and: -EPERM when the peer has no
 * rights on this venue at all ("uid 1001 is not entitled to venue NASDAQ", "... has no
 * entitlements"), -EACCES when it has some there but not these instruments or topics ("uid 1001
 * is not entitled to topic mbo of NASDAQ \"AAPL\""), the more useful reason to show.
 * topics is a TP_CFG_TOPIC_* mask (non-zero).
 */
int tp_entitle_check(const struct tp_cfg_entitlements *ent, const struct tp_peer *peer,
                     const char *venue, const char *pattern, uint32_t topics, char *reason,
                     size_t reason_size);

/* True if the peer may use administrative verbs (reload): root or the daemon's own user. */
bool tp_entitle_is_admin(const struct tp_peer *peer);

/* True if gid is the peer's primary or one of its supplementary groups ((gid_t)-1: never). */
bool tp_peer_in_group(const struct tp_peer *peer, gid_t gid);

#endif /* TP_ENTITLEMENTS_H */
