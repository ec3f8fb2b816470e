/*
 * The channels of a data lcore and how a live reload changes them without a lock.
 *
 * A channel lives in a slot (0..TP_DP_MAX_CHANNELS-1) for as long as it runs: its classifier
 * lines are slot * TP_ROLES + role, its re-requests leave from UDP port
 * TP_DP_RETRANS_PORT_BASE + slot. A reload moves no running channel: unchanged channels keep
 * their slot, their books and every packet.
 *
 * Who does what:
 *  - The main lcore prepares everything that allocates or makes syscalls (channel memory,
 *    counter registration, the new filter) and checks capacities, then sends the data lcore small
 *    commands (struct tp_dp_cmd) through a single-producer / single-consumer ring, all commands of
 *    one reload enqueued at once and ending with a COMMIT of the reload's generation.
 *  - The data lcore applies them between bursts (tp_dp_set_apply): detach (flows removed, groups
 *    left, held packets released, its instruments cleared and flagged stale), attach (slot
 *    filled, flows added, groups joined), swap the instrument filter (copied into the one the feeds
 *    read). At COMMIT it release-stores the generation: from then on the detached channels and
 *    the prepared objects belong to the main lcore again, which frees them.
 *  - A reload's commands are applied only if the lcore claims its ticket before the main lcore
 *    gives up waiting (tp_dp_set_cancel): one compare-and-swap decides, so a reload is either
 *    applied whole or not at all, never after the main lcore reported it failed.
 *  - With several data lcores, their sets share one ticket (tp_dp_set_share_ticket): the first
 *    lcore to see a reload's commands claims it for all of them, so the main lcore withdraws a
 *    reload only while no lcore has begun it, and otherwise waits for every lcore it concerns.
 *
 * No DPDK here (the ring is the caller's): unit tests drive the commands directly.
 */
#ifndef TP_DAEMON_RECONFIG_H
#define TP_DAEMON_RECONFIG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "channel.h"

#define TP_DP_MAX_CHANNELS      64
#define TP_DP_MAX_PORTS         8
#define TP_DP_SLOT_EXPORTS      64    /* one channel's: 20, 3 lines x 7, ITCH snapshot 15, room */
#define TP_DP_RETRANS_PORT_BASE 40000 /* our UDP port for slot s's re-requests: base + s */

struct tp_counter;
struct tp_classifier;
struct tp_host;
struct tp_instrument_filter;

/* A private counter of the lcore and the bus counter it is copied to. */
struct tp_dp_export {
    const uint64_t *src;
    struct tp_counter *dst;
};

/* A line's flow and groups. */
struct tp_dp_line {
    bool present;
    bool joined;     /* the lcore holds a membership (it joins and leaves; the channel asks) */
    uint32_t group;  /* host order */
    uint32_t source; /* source-specific multicast, 0: any */
    uint16_t udp;    /* destination UDP port */
    uint16_t vlan;   /* TP_CLASSIFY_ANY_VLAN: any; the IGMP side uses TP_HOST_NO_VLAN then */
    uint16_t port;   /* index of the rx port */
};

/* Where re-requests of a channel go; server_ip 0: none. */
struct tp_dp_rerequest_target {
    uint32_t server_ip;
    uint16_t server_port;
    uint16_t port;     /* index of the port to send on (and where replies arrive) */
    uint32_t local_ip; /* our address on that port: the replies' flow (0: no flow) */
};

/* The cold state of a slot: what the lcore needs besides the channel itself. */
struct tp_dp_slot {
    struct tp_dp_line lines[TP_ROLES];
    struct tp_dp_rerequest_target rerequest;
    unsigned n_exports;
    struct tp_dp_export exports[TP_DP_SLOT_EXPORTS];
};

/* Prepared by the main lcore for an attach. */
struct tp_dp_attach {
    struct tp_channel *channel;
    struct tp_dp_slot slot;
};

enum tp_dp_op {
    TP_DP_OP_DETACH = 1, /* slot */
    TP_DP_OP_ATTACH = 2, /* slot, object: struct tp_dp_attach */
    TP_DP_OP_FILTER = 3, /* object: struct tp_instrument_filter, copied */
    TP_DP_OP_COMMIT = 4, /* end of the generation's commands */
};

/* One command (a ring element: a multiple of 4 bytes). */
struct tp_dp_cmd {
    uint64_t generation;
    const void *object;
    uint16_t op;
    uint16_t slot;
    uint32_t reserved;
};

struct tp_dp_set {
    /* Hot: the classifier's line / TP_ROLES indexes this (NULL: nothing runs in the slot). */
    struct tp_channel *channels[TP_DP_MAX_CHANNELS];
    struct tp_classifier *classifier;
    struct tp_dp_slot slots[TP_DP_MAX_CHANNELS];
    struct tp_host *hosts[TP_DP_MAX_PORTS]; /* IGMP side of each port (NULL: not this lcore's) */
    struct tp_instrument_filter *filter;    /* the one every feed of the lcore reads */
    /* Reload hand-shake (see above): ticket = generation * 4 + state; applied = generation. */
    _Atomic uint64_t ticket;
    _Atomic uint64_t *shared_ticket; /* the lcores' common ticket, NULL: `ticket` */
    _Atomic uint64_t applied;
    uint64_t detached_instruments; /* marked stale by detaches (counter) */
    uint64_t apply_errors;         /* flows or joins the lcore could not apply (should stay 0) */
};

/* Attaches a prepared channel to a free slot (start-up, or an ATTACH command). 0 or -errno. */
int tp_dp_set_attach(struct tp_dp_set *set, unsigned slot, const struct tp_dp_attach *a,
                     uint64_t now_tsc);

/* Detaches the slot's channel (see above); returns the channel (now the caller's), or NULL. */
struct tp_channel *tp_dp_set_detach(struct tp_dp_set *set, unsigned slot, uint64_t now_tsc);

/* Joins or leaves a line role's group (the channel's io.membership); idempotent. */
void tp_dp_set_membership(struct tp_dp_set *set, unsigned slot, enum tp_line_role role, bool join,
                          uint64_t now_tsc);

/* Data lcore: applies dequeued commands (those of a cancelled or older reload are skipped). */
void tp_dp_set_apply(struct tp_dp_set *set, const struct tp_dp_cmd *cmds, unsigned n,
                     uint64_t now_tsc);

/*
 * Start-up, before the lcores run: every set given the same word claims and withdraws reloads
 * through it (one decision for all the lcores of a reload).
 */
void tp_dp_set_share_ticket(struct tp_dp_set *set, _Atomic uint64_t *ticket);

/* Main lcore, before enqueueing generation's commands: opens its ticket. */
void tp_dp_set_open(struct tp_dp_set *set, uint64_t generation);

/* Main lcore: 1 once the generation was applied, 0 while it may still be. */
int tp_dp_set_applied(const struct tp_dp_set *set, uint64_t generation);

/*
 * Main lcore, after the wait timed out: withdraws the generation. 0: withdrawn, the lcore will
 * skip its commands (the prepared objects are the caller's again). 1: it was applied after all.
 * -EBUSY: the lcore is applying it right now; wait for tp_dp_set_applied.
 */
int tp_dp_set_cancel(struct tp_dp_set *set, uint64_t generation);

#endif /* TP_DAEMON_RECONFIG_H */
