/*
 * tickplane configuration: one JSON document -> one plain C struct.
 *
 * The control plane parses and validates the whole document before anything starts. The result,
 * struct tp_config, is a flat value: fixed-size arrays, no pointers, no allocation behind it, so it
 * can be copied, compared (for reload) and handed to the data plane as is. References between
 * sections (a line's ethernet port, the channels an lcore runs) are resolved to array indexes.
 *
 * Every key, its default and unit is documented in docs/CONFIG.md.
 *
 * Conventions in this struct:
 *   - IPv4 addresses are uint32_t in HOST byte order (0 = unset / any source).
 *   - UDP ports are uint16_t host order.
 *   - Paths are absolute or resolved against the directory of the config file.
 *   - Counts named n_x give the used prefix of the array x.
 */
#ifndef TP_CONFIG_H
#define TP_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config_line.h"
#include "config_venue_channel.h"

/* Capacities of the fixed arrays (a config needing more is rejected with a clear error). */
#define TP_CFG_NAME_MAX        64  /* names: ports, channels, groups (incl. NUL) */
#define TP_CFG_VENUE_MAX       32  /* venue names (incl. NUL): they travel in fixed-size commands */
#define TP_CFG_PATH_MAX        256 /* file and socket paths (incl. NUL) */
#define TP_CFG_ARG_MAX         512 /* one EAL argument or device spec (incl. NUL) */
#define TP_CFG_PATTERN_MAX     64  /* one instrument glob (incl. NUL) */
#define TP_CFG_MAX_EAL_ARGS    64
#define TP_CFG_MAX_VDEVS       16
#define TP_CFG_MAX_PCI         16
#define TP_CFG_MAX_PORTS       8
#define TP_CFG_MAX_LCORE_ID    127 /* RTE_MAX_LCORE - 1 in a default DPDK build */
#define TP_CFG_MAX_LCORES      32  /* lcores in the EAL list */
#define TP_CFG_MAX_DATA_LCORES 16
#define TP_CFG_MAX_RXQ         16 /* (port, queue) pairs polled by one lcore */
#define TP_CFG_MAX_CHANNELS    64
#define TP_CFG_MAX_PATTERNS    32 /* globs in one filter or entitlement list */
#define TP_CFG_MAX_GROUPS      32 /* security groups in the filter */
#define TP_CFG_MAX_STATE_DEPTH 32 /* the state table's levels per side (TP_MAX_DEPTH) */
/* Order-level books hold every live price: at least this many levels a side, whatever the depth. */
#define TP_CFG_ORDER_LEVELS_MIN 256
#define TP_CFG_MAX_VENUES       8
#define TP_CFG_MAX_RULES        32 /* entitlement rules */

/*
 * Wire protocol of a channel: each venue's number (the tag of a channel's `proto`), the one line a
 * venue adds to this file. The numbers are the data plane's (enum tp_channel_protocol, asserted
 * where the daemon maps one to the other) and name venues on the bus, so they live in one list.
 */
enum tp_cfg_protocol {
    TP_CFG_PROTO_MDP3 = 1, /* CME MDP 3.0, SBE */
    TP_CFG_PROTO_ITCH = 2, /* Nasdaq TotalView-ITCH 5.0 over MoldUDP64 */
    TP_CFG_PROTO_EOBI = 3, /* Eurex T7 EOBI (6.0, 7.0), incremental and snapshot feeds */
};

/*
 * Topics (views) a consumer can subscribe to; a bitmask in subscriptions and entitlements.
 * Bit i is libtickplane's enum tp_topic value i (TP_TOPIC_DEPTH = 0 ... TP_TOPIC_DEFINITIONS = 5),
 * so 1u << topic converts one to the other.
 */
enum tp_cfg_topic {
    TP_CFG_TOPIC_DEPTH = 1u << 0,       /* full depth price levels */
    TP_CFG_TOPIC_TOP = 1u << 1,         /* top of book */
    TP_CFG_TOPIC_TRADES = 1u << 2,      /* trades */
    TP_CFG_TOPIC_MBO = 1u << 3,         /* order level */
    TP_CFG_TOPIC_STATUS = 1u << 4,      /* security status and statistics */
    TP_CFG_TOPIC_DEFINITIONS = 1u << 5, /* instrument definitions */
};
#define TP_CFG_TOPIC_ALL 0x3fu

/*
 * Parse a topic name ("depth", "top", "trades", "mbo", "status", "definitions"; "orders" is
 * libtickplane's name for mbo and is accepted too); 0 if unknown.
 */
uint32_t tp_cfg_topic_from_name(const char *name);
/* Name of a single topic bit, or NULL. */
const char *tp_cfg_topic_name(uint32_t topic_bit);

/* EAL: either an explicit argument list or structured keys (from which the args are built). */
struct tp_cfg_eal {
    bool explicit_args; /* "args" was given: args[] is used verbatim */
    unsigned n_args;
    char args[TP_CFG_MAX_EAL_ARGS][TP_CFG_ARG_MAX];

    /* The EAL lcore list, sorted ascending (from "lcores", or "-l" / "--lcores" in args). */
    unsigned n_lcores;
    uint16_t lcores[TP_CFG_MAX_LCORES];
    uint16_t main_lcore; /* default: the lowest lcore */
    /*
     * CPU mappings ("--lcores" syntax, "0@0,1@1,2@1"): when cpu_map is set, lcore_cpus[i] holds
     * the CPUs lcores[i] runs on (bit c of word c / 64) and the EAL gets lcore_map verbatim
     * (--lcores). Without '@' each lcore runs on the CPU of its number.
     */
    bool cpu_map;
    uint64_t lcore_cpus[TP_CFG_MAX_LCORES][2];
    char lcore_map[TP_CFG_ARG_MAX];

    uint32_t memory_mb; /* -m; 0 = EAL default (no budget check) */
    bool no_huge;
    bool no_pci;
    bool no_shconf;
    char file_prefix[TP_CFG_NAME_MAX]; /* "" = none */
    char log_level[TP_CFG_NAME_MAX];   /* "" = EAL default */
    unsigned n_vdevs;                  /* extra vdevs not tied to a port */
    char vdevs[TP_CFG_MAX_VDEVS][TP_CFG_ARG_MAX];
    unsigned n_pci_allow; /* extra PCI allow-list entries (ports add theirs) */
    char pci_allow[TP_CFG_MAX_PCI][TP_CFG_NAME_MAX];
};

enum tp_cfg_port_kind {
    TP_CFG_PORT_PCI = 1,  /* pci: "0000:3b:00.0" */
    TP_CFG_PORT_VDEV = 2, /* vdev: a full DPDK device spec, e.g. "net_af_packet0,iface=veth1" */
    TP_CFG_PORT_PCAP = 3, /* pcap: a capture file, replayed via net_pcap (device spec built), or
                             preloaded into mbufs behind a net_ring device (preload) */
};

struct tp_cfg_port {
    char name[TP_CFG_NAME_MAX]; /* referenced by lines and lcores */
    enum tp_cfg_port_kind kind;
    char pci[TP_CFG_NAME_MAX];      /* kind PCI */
    char device[TP_CFG_ARG_MAX];    /* kind VDEV/PCAP: the --vdev spec to give EAL */
    char dev_name[TP_CFG_NAME_MAX]; /* the DPDK device name: PCI address or vdev name before ',' */
    uint16_t rx_queues;             /* default 1 */
    uint16_t rx_descriptors;        /* default 1024, power of two */
    uint16_t tx_descriptors;        /* default 512 (IGMP, re-requests), power of two */
    uint32_t mbuf_pool_size;        /* mbufs, default 8191 */
    uint16_t mbuf_cache_size;       /* default 256 */
    uint16_t mtu;                   /* default 1500 */
    bool promiscuous;               /* default false */
    bool nic_timestamps; /* default true: the NIC's receive times where the device stamps */
    uint32_t ipv4; /* source of re-requests, ARP/IGMP replies; 0 = none (af_packet: the iface's) */
    /*
     * Kind PCAP with "preload": the daemon reads the capture (pcap, the resolved path) into mbufs
     * at start and serves it from a net_ring device named dev_name, created by the daemon (no
     * --vdev, device ""). Frames and the largest frame's bytes are read when the config is
     * loaded, for the memory estimate (preload_plan.h: at most TP_PRELOAD_FRAMES_MAX frames of
     * at most TP_PRELOAD_FRAME_MAX bytes).
     */
    bool preload;
    uint32_t preload_frames;
    uint32_t preload_max_frame;
    uint64_t preload_bytes; /* the memory estimate of its mbufs, pools and ring */
    char pcap[TP_CFG_PATH_MAX];
};

/* One (port, queue) pair polled by a data lcore. */
struct tp_cfg_rxq {
    uint16_t port; /* index into tp_config.ports */
    uint16_t queue;
};

struct tp_cfg_lcore {
    uint16_t lcore_id; /* an EAL lcore, not the main lcore */
    unsigned n_rxq;
    struct tp_cfg_rxq rxq[TP_CFG_MAX_RXQ];
    unsigned n_channels;
    uint16_t channels[TP_CFG_MAX_CHANNELS]; /* indexes into tp_config.channels */
    /* Instrument ids in its window ("instruments"); 0 = an even share of what the others leave. */
    uint32_t instruments;
};

/* Lines a channel may have, A and B: incremental, snapshot and its venue's (MDP3: definition
 * and MBO snapshot). */
#define TP_CFG_CHANNEL_LINES 8

struct tp_cfg_channel {
    char name[TP_CFG_NAME_MAX];
    enum tp_cfg_protocol protocol; /* its venue, the tag of `proto` (0: refused) */
    char venue[TP_CFG_VENUE_MAX];  /* default "CME" (mdp3), "NASDAQ" (itch), "EUREX" (eobi);
                                      entitlements use it */
    uint32_t venue_channel_id;     /* "id", or the imported channel's (CME: e.g. 310); 0 = none */
    struct tp_cfg_line lines[2];   /* incremental / live feed, A and B (B optional) */

    /* Recovery. MDP3 and EOBI: the snapshot lines (EOBI: required); the rest is the venue's. */
    struct tp_cfg_line snapshot[2];
    uint32_t gap_wait_us; /* wait for the other line before recovering, default 500 */
    uint32_t give_up_ms;  /* mark stale after this long in recovery, default 5000 */
    uint32_t
        silence_ms; /* both lines quiet this long flags the books (ITCH default 3000, MDP3 0) */

    /* What only its venue's channels have (venues/config_<venue>.h): proto.mdp3, proto.itch or
     * proto.eobi, by protocol. */
    union tp_cfg_venue_channel proto;
};

struct tp_cfg_instruments {
    uint32_t capacity; /* instruments tracked, default 4096 */
    unsigned n_include;
    char include[TP_CFG_MAX_PATTERNS][TP_CFG_PATTERN_MAX]; /* symbol globs; none = all */
    unsigned n_exclude;
    char exclude[TP_CFG_MAX_PATTERNS][TP_CFG_PATTERN_MAX];
    unsigned n_security_groups; /* MDP3 SecurityGroup values; none = all */
    char security_groups[TP_CFG_MAX_GROUPS][TP_CFG_NAME_MAX];
};

struct tp_cfg_books {
    uint32_t max_orders;      /* order-level (MBO/ITCH) orders, default 1048576 */
    uint32_t recent_orders;   /* recent-order window slots; 0 (default): 16 per order, <= 2^20 */
    uint16_t levels_per_side; /* price levels kept per side, default 10 */
};

/*
 * The bus segments (tickplane.<instance>.*). Who may map them is the OS's decision: mode and
 * group. Separating venues at the OS level means one instance per venue, each with its group.
 */
struct tp_cfg_bus {
    char path[TP_CFG_PATH_MAX];  /* directory: /dev/shm (default) or a hugetlbfs mount */
    uint64_t ring_bytes;         /* broadcast ring size, power of two, default 64 MiB */
    uint16_t state_depth;        /* levels per side in the conflated state table, default 10,
                                    at most TP_CFG_MAX_STATE_DEPTH */
    mode_t mode;                 /* segment file mode, default 0640 */
    char group[TP_CFG_NAME_MAX]; /* owning group, "" = the daemon's */
    /* Readers take a daemon whose heartbeat is older for dead (ms), default 5000. */
    uint32_t heartbeat_timeout_ms;
};

struct tp_cfg_control {
    char socket_path[TP_CFG_PATH_MAX];  /* default /run/tickplane/control.sock */
    mode_t socket_mode;                 /* default 0660 */
    char socket_group[TP_CFG_NAME_MAX]; /* owning group, "" = the daemon's */
    uint32_t max_clients;               /* default 64 */
    uint32_t max_line_bytes;            /* longest request line, default 4096 */
    uint32_t max_subscriptions;         /* per client, default 256 */
    uint32_t max_requests_per_sec;      /* per client, default 1000 */
    /* Connections of one uid (root: no limit), default 16. */
    uint32_t max_clients_per_uid;
    /* Of max_clients, for root and operator_group: default max_clients / 16, at least 1 (none of
     * a single slot). */
    uint32_t reserved_clients;
    /* May use the reserved slots ("" = root only). */
    char operator_group[TP_CFG_NAME_MAX];
    /* Also lists every client's subscriptions, besides root and the daemon's user ("" = none). */
    char admin_group[TP_CFG_NAME_MAX];
    /* A client without subscriptions silent this long is closed, default 60000, 0 = never. */
    uint32_t idle_timeout_ms;
};

/* Who may subscribe to what. A rule matches a peer by uid or gid (-1 = any). */
struct tp_cfg_entitlement {
    int64_t uid;       /* -1 = not by uid */
    int64_t gid;       /* -1 = not by gid (matches primary group of the peer) */
    unsigned n_venues; /* none = all venues */
    char venues[TP_CFG_MAX_VENUES][TP_CFG_NAME_MAX];
    unsigned n_instruments; /* globs; none = all instruments */
    char instruments[TP_CFG_MAX_PATTERNS][TP_CFG_PATTERN_MAX];
    uint32_t topics; /* TP_CFG_TOPIC_* mask; default all */
};

struct tp_cfg_entitlements {
    bool default_allow; /* when no rule matches; default false (deny). root is always allowed. */
    unsigned n_rules;
    struct tp_cfg_entitlement rules[TP_CFG_MAX_RULES];
};

struct tp_cfg_telemetry {
    char prometheus_file[TP_CFG_PATH_MAX]; /* textfile-collector output, "" = off */
    uint16_t prometheus_port;              /* HTTP /metrics port, 0 = off */
    uint32_t prometheus_address;           /* its IPv4 address (host order), default 127.0.0.1 */
    uint32_t interval_ms;                  /* export period, default 1000 */
    bool dpdk_telemetry;                   /* register /tickplane/ commands, default true */
};

/* logging: levels per component (log.h's enum tp_log_level values). */
#define TP_CFG_LOG_COMPONENTS 16
struct tp_cfg_logging {
    uint8_t level;                             /* every component's, default info (6) */
    uint8_t components[TP_CFG_LOG_COMPONENTS]; /* 0: as `level` */
    uint32_t burst;                            /* lines per second per event kind, default 10 */
};

struct tp_config {
    char name[TP_CFG_NAME_MAX];   /* instance name, default "tickplane" */
    char source[TP_CFG_PATH_MAX]; /* the file it was loaded from ("" if from a string) */
    struct tp_cfg_eal eal;
    unsigned n_ports;
    struct tp_cfg_port ports[TP_CFG_MAX_PORTS];
    unsigned n_lcores;
    struct tp_cfg_lcore lcores[TP_CFG_MAX_DATA_LCORES];
    unsigned n_channels;
    struct tp_cfg_channel channels[TP_CFG_MAX_CHANNELS];
    struct tp_cfg_instruments instruments;
    struct tp_cfg_books books;
    struct tp_cfg_bus bus;
    struct tp_cfg_control control;
    struct tp_cfg_entitlements entitlements;
    struct tp_cfg_telemetry telemetry;
    struct tp_cfg_logging logging;
};

/* ---- errors: every problem found, each with its JSON path ---- */

#define TP_CFG_MAX_ERRORS 64

struct tp_config_error {
    char path[128];    /* e.g. "channels[2].lines.b.group"; "" = the document */
    char message[256]; /* what is wrong */
};

struct tp_config_errors {
    unsigned count;   /* errors stored (<= TP_CFG_MAX_ERRORS) */
    unsigned dropped; /* errors found beyond the array */
    struct tp_config_error items[TP_CFG_MAX_ERRORS];
};

/*
 * Load and validate a config file. On success returns 0 and fills *cfg. On failure returns
 * -EINVAL (invalid document; errs lists every problem), -ENAMETOOLONG (the file's directory or
 * name does not fit TP_CFG_PATH_MAX: relative paths or a reload would go wrong), or another
 * negative errno (file unreadable, also reported in errs); *cfg is then unspecified. cfg and errs
 * are caller-allocated (the config is large: allocate it on the heap or statically).
 */
int tp_config_load_file(const char *file, struct tp_config *cfg, struct tp_config_errors *errs);

/* Same from a string; relative paths resolve against base_dir (NULL = current directory; longer
 * than TP_CFG_PATH_MAX - 1: -ENAMETOOLONG). */
int tp_config_load_string(const char *json, const char *base_dir, struct tp_config *cfg,
                          struct tp_config_errors *errs);

/*
 * What a valid config needs from the host it starts on, checked by the daemon at start rather
 * than by validation (a config is validated on other machines too): the groups named by
 * bus.group, control.group, control.operator_group and control.admin_group exist (resources.h
 * checks the rest). 0, or -EINVAL with each problem in errs.
 */
int tp_config_check_host(const struct tp_config *cfg, struct tp_config_errors *errs);

/* Resolves a group name as the config gives it: 0 and *gid, or -ENOENT. "" = (gid_t)-1. */
int tp_config_group_gid(const char *group, gid_t *gid);

/* The directory part of a file's path ("." for a bare name, "/" at the root), cut to size. */
void tp_config_dirname(const char *path, char *out, size_t size);

/* Write all errors, one "path: message" per line, to buf (always NUL-terminated). Returns length.
 */
size_t tp_config_errors_format(const struct tp_config_errors *errs, char *buf, size_t size);

/*
 * Build the EAL argv: argv[0] = prog, then either the explicit args or the structured keys plus a
 * --vdev for every vdev/pcap port and -a for every PCI port. Pointers point into cfg (and prog);
 * returns argc, or -ENOSPC if max is too small.
 */
int tp_config_eal_argv(const struct tp_config *cfg, const char *prog, char **argv, int max);

/* Lookups by name: index or -1. */
int tp_config_port_index(const struct tp_config *cfg, const char *name);
int tp_config_channel_index(const struct tp_config *cfg, const char *name);

/* The data lcore that runs channel ci (index into cfg->lcores), or -1. */
int tp_config_channel_lcore(const struct tp_config *cfg, unsigned ci);

/*
 * The window of instrument ids data lcore l (index into cfg->lcores) serves: [first_id, first_id +
 * ids) of 0..instruments.capacity-1. Windows are contiguous, in lcore order: an lcore with
 * "instruments" takes that many ids, the lcores without share what is left evenly (the k-th of m
 * gets [k * left / m, (k + 1) * left / m) of it). Without any "instruments" this is lcore l of n:
 * [l * capacity / n, (l + 1) * capacity / n). A valid config gives every lcore at least one id.
 * With no data lcores (n_lcores 0), "lcore 0" is the whole capacity.
 */
struct tp_cfg_window {
    uint32_t first_id;
    uint32_t ids;
};
struct tp_cfg_window tp_config_lcore_window(const struct tp_config *cfg, unsigned l);

/*
 * The CPUs EAL lcore `lcore` runs on: bit c of out[c / 64] (its own number without an '@'
 * mapping). 0, or -ENOENT if it is not in the EAL lcore list.
 */
int tp_config_lcore_cpus(const struct tp_cfg_eal *eal, unsigned lcore, uint64_t out[2]);

/*
 * Parse an EAL lcore list: "-l" syntax ("0-3,5") or "--lcores" syntax with CPU mappings
 * ("0@0,1@1,2@1", "(1-3)@2", "4@(2,3)"; an lcore without '@' runs on the CPU of its number).
 * Fills the eal's n_lcores, lcores (sorted), cpu_map, lcore_cpus and lcore_map. NULL on success,
 * else why not (the eal is left partly filled).
 */
const char *tp_config_parse_lcores(const char *text, struct tp_cfg_eal *eal);

/*
 * Estimate of the DPDK memory (bytes) the daemon needs for this config: mbuf pools, books,
 * instrument tables, channels and a fixed EAL overhead. Validation rejects a config whose
 * estimate exceeds eal.memory_mb. The bus lives in its own files and is not counted.
 */
uint64_t tp_config_memory_estimate(const struct tp_config *cfg);

/* The part of the estimate a preloaded port's capture takes (its mbufs and rings); 0 for others. */
uint64_t tp_config_preload_estimate(const struct tp_cfg_port *port);

/* The part of the estimate channel c adds: its arbiter, ITCH staging or MDP3 recovery state. */
uint64_t tp_config_channel_estimate(const struct tp_config *cfg, unsigned c);

/*
 * The part of the estimate data lcore l adds: the books and registry of its window of instrument
 * ids (tp_config_lcore_window) and its order table. With no data lcores, l = 0 is the whole
 * capacity.
 */
uint64_t tp_config_lcore_tables_estimate(const struct tp_config *cfg, unsigned l);

/*
 * Instrument filter: true if an instrument with this symbol (and MDP3 security group, NULL or ""
 * if none) passes instruments.include / exclude / security_groups. Exclude wins over include.
 */
bool tp_config_instrument_wanted(const struct tp_cfg_instruments *filter, const char *symbol,
                                 const char *security_group);

#endif /* TP_CONFIG_H */
