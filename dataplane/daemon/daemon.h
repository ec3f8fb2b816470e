/*
 * The daemon's state, shared by main.c (start-up, the control plane's view, the summary) and
 * channels.c (the main lcore's side of the data lcores' channels: preparing them at start-up and
 * applying a live reload). Main lcore only: each data lcore sees its struct tp_dp_lcore.
 *
 * Several data lcores: each owns its channels (slots 0..TP_DP_MAX_CHANNELS-1 of its own), its
 * ports (a port is polled by one lcore: its IGMP/ARP side and tx queue are that lcore's), its
 * instrument registry (a window of the instance's ids), books, publisher, latency histogram and
 * bus writer (its own ring). Nothing is written by two lcores; the state table is shared, each
 * entry written by the lcore that owns the instrument.
 */
#ifndef TP_DAEMON_DAEMON_H
#define TP_DAEMON_DAEMON_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "dataplane.h"
#include "reconfig.h"
#include "reload.h"
#include "tp_instrument_filter.h"
#include "tp_venue.h"

struct tp_bus_writer;
struct tp_books;
struct tp_counters;
struct tp_instruments;

/* The config numbers a channel's protocol as the venues do (tp_venue.h). */
_Static_assert((int)TP_CFG_PROTO_MDP3 == (int)TP_CHANNEL_MDP3 &&
                   (int)TP_CFG_PROTO_ITCH == (int)TP_CHANNEL_ITCH &&
                   (int)TP_CFG_PROTO_EOBI == (int)TP_CHANNEL_EOBI,
               "config protocols are the venues' numbers");

/* The venue of config channel cc (its ops table). */
static inline const struct tp_venue_ops *tp_daemon_venue(const struct tp_cfg_channel *cc)
{
    return tp_venue_get((enum tp_channel_protocol)cc->protocol);
}

/* ITCH locate maps beyond the channels at start-up, for ITCH channels a reload adds. */
#define TP_DAEMON_SPARE_ITCH_SLOTS 4
/* A channel's name as a counter label: at most 24 characters ('.' becomes '_'). */
#define TP_DAEMON_LABEL_LEN 25

/* One data lcore as the main lcore sees it. */
struct tp_daemon_lcore {
    struct tp_dp_lcore lc;
    struct tp_instruments *registry; /* its window of ids */
    struct tp_books *books;
    struct tp_instrument_filter filter; /* its feeds read this one (the lcore swaps it) */
    int socket;                         /* NUMA socket of the lcore: its memory's */
    /* The main lcore's view of the slots (what it last handed the lcore; read by stats). */
    struct tp_channel *slot_channel[TP_DP_MAX_CHANNELS];
    struct tp_dp_slot slot_state[TP_DP_MAX_CHANNELS];
    char slot_label[TP_DP_MAX_CHANNELS][TP_DAEMON_LABEL_LEN];
    int itch_slot_of[TP_DP_MAX_CHANNELS]; /* locate map of the slot's ITCH channel, or -1 */
    uint16_t itch_slots;                  /* locate maps in the registry */
    /* A copy of the lcore's classifier: a reload's flows are tried on it first. */
    struct tp_classifier *shadow_cls, *scratch_cls;
};

/* Everything the daemon allocates, sized from the config. */
struct tp_daemon {
    struct tp_config *cfg;     /* running (replaced by a successful reload) */
    struct tp_bus_writer *bus; /* writer k is lcores[k]'s (tp_daemon_bus_writer) */
    struct tp_dp_port ports[TP_CFG_MAX_PORTS];
    unsigned n_ports_open;
    const char *venue_names[TP_TPOUT_VENUES]; /* each tpout venue as the config names it */
    unsigned n_lcores;                        /* cfg->lcores, in the same order */
    struct tp_daemon_lcore lcores[TP_CFG_MAX_DATA_LCORES];
    uint8_t slot_of[TP_CFG_MAX_CHANNELS];  /* config channel -> slot on its lcore */
    uint8_t lcore_of[TP_CFG_MAX_CHANNELS]; /* config channel -> index into lcores */
    size_t cls_size;
    uint32_t held_max;
    uint64_t generation;            /* of the last reload sent to the lcores */
    _Atomic uint64_t reload_ticket; /* the lcores' common reload ticket (reconfig.h) */
};

/* The channel config channel c runs as, or NULL. */
struct tp_channel *tp_daemon_channel(const struct tp_daemon *d, unsigned c);

/* main.c: DPDK memory on a NUMA socket (NULL, reported, on failure). */
void *tp_daemon_alloc(const char *what, size_t size, int socket);

/* main.c: the config line of a channel's role (TP_ROLE_*), or NULL. */
const struct tp_cfg_line *tp_daemon_channel_line(const struct tp_cfg_channel *ch, unsigned role);

/*
 * Adds the multicast groups that arrive on port pi under cfg to groups[0..n) (each once, at most
 * max in all) and returns the new count: the port's address filter.
 */
unsigned tp_daemon_port_groups(const struct tp_config *cfg, unsigned pi, uint32_t *groups,
                               unsigned n, unsigned max);

/* main.c: the instrument filter of the config's instruments section. */
void tp_daemon_build_filter(const struct tp_cfg_instruments *ci, struct tp_instrument_filter *f);

/* main.c: registers bus counter "<prefix>.<name>", copied from src by the lcore. 0 or -ENOSPC. */
int tp_daemon_export(struct tp_dp_export *exports, unsigned *n, unsigned max,
                     struct tp_counters *area, const char *prefix, const char *name,
                     const uint64_t *src);

/* main.c: tpout venue 0 (cme) and 1 (nasdaq) as the running config names them. */
void tp_daemon_name_venues(struct tp_daemon *d);

/* channels.c: start-up: the config's channels in the slots of their lcores (not running yet). */
int tp_daemon_start_channels(struct tp_daemon *d);

/*
 * channels.c: the control plane's apply hook (ctx: the daemon): prepares the reload, hands the
 * data lcores concerned their commands and waits for every acknowledgement. 0, or -errno with
 * why in err and nothing changed.
 */
int tp_daemon_apply(void *ctx, const struct tp_config *next, const struct tp_config_diff *diff,
                    char *err, size_t err_size);

#endif /* TP_DAEMON_DAEMON_H */
