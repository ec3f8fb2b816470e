/* Entitlement checks: see entitlements.h. */
#include "entitlements.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "glob.h"

int tp_peer_from_socket(int fd, struct tp_peer *peer)
{
    struct ucred cred;
    socklen_t len = sizeof(cred);
    memset(peer, 0, sizeof(*peer));
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return -errno;
    peer->pid = cred.pid;
    peer->uid = cred.uid;
    peer->gid = cred.gid;
    peer->groups[0] = cred.gid;
    peer->n_groups = 1;
    /*
     * SO_PEERCRED carries only the primary group; supplementary ones come from the group
     * database for the peer's user (a lookup at accept, on the control plane only).
     */
    struct passwd pw, *found = NULL;
    char buf[4096];
    if (getpwuid_r(cred.uid, &pw, buf, sizeof(buf), &found) == 0 && found != NULL) {
        int n = TP_PEER_MAX_GROUPS;
        gid_t groups[TP_PEER_MAX_GROUPS];
        if (getgrouplist(pw.pw_name, cred.gid, groups, &n) >= 0 || n > 0) {
            if (n > TP_PEER_MAX_GROUPS)
                n = TP_PEER_MAX_GROUPS;
            memcpy(peer->groups, groups, sizeof(gid_t) * (size_t)n);
            peer->n_groups = (unsigned)n;
        }
    }
    return 0;
}

static bool rule_matches_peer(const struct tp_cfg_entitlement *rule, const struct tp_peer *peer)
{
    if (rule->uid >= 0 && (uid_t)rule->uid == peer->uid)
        return true;
    if (rule->gid < 0)
        return false;
    if ((gid_t)rule->gid == peer->gid)
        return true;
    for (unsigned i = 0; i < peer->n_groups; i++)
        if ((gid_t)rule->gid == peer->groups[i])
            return true;
    return false;
}

static bool rule_grants(const struct tp_cfg_entitlement *rule, const char *venue,
                        const char *pattern)
{
    bool venue_ok = rule->n_venues == 0;
    for (unsigned i = 0; !venue_ok && i < rule->n_venues; i++)
        venue_ok = strcmp(rule->venues[i], venue) == 0;
    if (!venue_ok)
        return false;
    if (rule->n_instruments == 0)
        return true;
    for (unsigned i = 0; i < rule->n_instruments; i++)
        if (tp_glob_covers(rule->instruments[i], pattern))
            return true;
    return false;
}

int tp_entitle_check(const struct tp_cfg_entitlements *ent, const struct tp_peer *peer,
                     const char *venue, const char *pattern, uint32_t topics, char *reason,
                     size_t reason_size)
{
    if (peer->uid == 0)
        return 0;
    uint32_t granted = 0;
    bool any_rule = false, venue_seen = false;
    for (unsigned r = 0; r < ent->n_rules; r++) {
        const struct tp_cfg_entitlement *rule = &ent->rules[r];
        if (!rule_matches_peer(rule, peer))
            continue;
        any_rule = true;
        if (rule_grants(rule, venue, pattern))
            granted |= rule->topics;
        for (unsigned i = 0; i < rule->n_venues; i++)
            venue_seen |= strcmp(rule->venues[i], venue) == 0;
        venue_seen |= rule->n_venues == 0;
    }
    if (!any_rule) {
        if (ent->default_allow)
            return 0;
        snprintf(reason, reason_size, "uid %u has no entitlements", (unsigned)peer->uid);
        return -EPERM;
    }
    uint32_t missing = topics & ~granted;
    if (missing == 0)
        return 0;
    if (!venue_seen) {
        snprintf(reason, reason_size, "uid %u is not entitled to venue %s", (unsigned)peer->uid,
                 venue);
        return -EPERM;
    }
    if (granted == 0) {
        snprintf(reason, reason_size, "uid %u is not entitled to instruments \"%s\" of %s",
                 (unsigned)peer->uid, pattern, venue);
    } else {
        const char *name = tp_cfg_topic_name(missing & -missing);
        snprintf(reason, reason_size, "uid %u is not entitled to topic %s of %s \"%s\"",
                 (unsigned)peer->uid, name ? name : "?", venue, pattern);
    }
    return -EACCES;
}

bool tp_entitle_is_admin(const struct tp_peer *peer)
{
    return peer->uid == 0 || peer->uid == geteuid();
}

bool tp_peer_in_group(const struct tp_peer *peer, gid_t gid)
{
    if (gid == (gid_t)-1)
        return false;
    for (unsigned g = 0; g < peer->n_groups; g++)
        if (peer->groups[g] == gid)
            return true;
    return peer->gid == gid;
}
