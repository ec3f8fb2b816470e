/*
 * Which capture flow (UDP destination group:port) is which line of an MDP3 or EOBI channel, as
 * the daemon's config names them (incremental A/B, snapshot A/B, MBO snapshot A/B, instrument
 * definitions A/B), so that the replay runs each packet down the path the daemon's channel runs
 * it: incrementals through the line arbiter (MDP3) or the venue feed's segment sequences (EOBI),
 * the other loops through the snapshot and definition paths.
 *
 * The map comes from --lines ROLE=GROUP:PORT,... (roles: incr-a incr-b snap-a snap-b snap-mbo-a
 * snap-mbo-b def-a def-b); a flow it does not name is counted (unmapped) and skipped, as the
 * daemon never receives a group it did not join. Without --lines each flow is told by its first
 * packet: MDP3 a snapshot (52), MBO snapshot (53) or definition (54, 55, 56) template first, EOBI
 * a snapshot template (ProductSummary .. SnapshotOrder), else an incremental line; the first
 * incremental flow seen is line A, the next line B, and further ones are unmapped.
 */
#ifndef TP_REPLAY_LINES_H
#define TP_REPLAY_LINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net_parse.h"

enum replay_line_role {
    REPLAY_ROLE_UNMAPPED = 0,
    REPLAY_ROLE_INCR_A,
    REPLAY_ROLE_INCR_B,
    REPLAY_ROLE_SNAP_A,
    REPLAY_ROLE_SNAP_B,
    REPLAY_ROLE_SNAP_MBO_A,
    REPLAY_ROLE_SNAP_MBO_B,
    REPLAY_ROLE_DEF_A,
    REPLAY_ROLE_DEF_B,
    REPLAY_ROLES,
};

/* What a flow's first packet says it carries, without a map (the venue's own test). */
enum replay_line_kind {
    REPLAY_KIND_INCREMENTAL,
    REPLAY_KIND_SNAPSHOT,
    REPLAY_KIND_SNAPSHOT_MBO,
    REPLAY_KIND_DEFINITION
};

#define REPLAY_FLOWS_MAX 32

struct replay_flow {
    uint32_t group; /* host order */
    uint16_t port;
    uint8_t role; /* enum replay_line_role */
};

struct replay_lines {
    struct replay_flow flow[REPLAY_FLOWS_MAX];
    uint32_t n;
    bool given;        /* from --lines: flows it does not name are unmapped */
    uint64_t unmapped; /* packets of flows that are no line of the channel: skipped */
};

/* Adds the flows of one --lines value ("incr-a=224.0.25.1:17901,snap-a=..."). 0, or -EINVAL
 * with err saying what is wrong. */
int replay_lines_parse(struct replay_lines *l, const char *spec, char *err, size_t err_size);

/* The line of a packet's flow; a flow not seen before is learnt as `kind` says (no --lines). */
enum replay_line_role replay_lines_role(struct replay_lines *l, const struct tp_udp_view *u,
                                        enum replay_line_kind kind);

/* The --lines name of a role ("incr-a"). */
const char *replay_line_role_name(enum replay_line_role role);

/* Is the role line B of its loop? */
static inline bool replay_line_is_b(enum replay_line_role role)
{
    return role == REPLAY_ROLE_INCR_B || role == REPLAY_ROLE_SNAP_B ||
           role == REPLAY_ROLE_SNAP_MBO_B || role == REPLAY_ROLE_DEF_B;
}

#endif /* TP_REPLAY_LINES_H */
