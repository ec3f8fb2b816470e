/*
 * tickplane: the market-data daemon.
 *
 *   tickplane --config FILE [--idle-exit-ms N] [--unlink-bus]
 *
 * Start-up (main lcore, ordinary code: allocation and syscalls allowed): load and validate the
 * config, start EAL with the arguments it gives, open the ports (pool on the port's socket,
 * queues, multicast filter), create the bus, size every table from the config in DPDK memory,
 * join the feeds' groups (IGMP from the data plane itself, see dataplane/ports/README.md) and
 * launch the data lcore. Then the main lcore is the control plane: it watches for SIGINT/SIGTERM
 * and the idle timeout (end of a replayed capture), while the data lcore busy-polls.
 * On exit it prints a JSON summary (counters, receive-to-publish latency) on stdout.
 *
 * This build runs one data lcore per instance: the bus has a single writer.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_ring.h>

#include "bus/counters.h"
#include "bus_setup.h"
#include "control_plane.h"
#include "interest.h"
#include "config.h"
#include "dataplane.h"
#include "hostcheck_config.h"
#include "publisher.h"
#include "tp_instrument_filter.h"

static atomic_bool quit;
static struct tp_control_plane *control;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&quit, true);
}

static void on_sighup(int sig)
{
    (void)sig;
    if (control != NULL)
        tp_control_plane_request_reload(control);
}

static uint64_t tsc_now(void)
{
    return rte_rdtsc();
}

struct options {
    const char *config;
    uint64_t idle_exit_ms;
    bool unlink_bus;
    const char *start_after; /* wait for this file before receiving (consumers attach first) */
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tickplane --config FILE [--idle-exit-ms N] [--unlink-bus] "
                 "[--start-after FILE]\n"
                 "  --config FILE      the instance's JSON config (docs/CONFIG.md)\n"
                 "  --idle-exit-ms N   exit N ms after the last packet (replayed captures)\n"
                 "  --unlink-bus       remove the bus segments on exit\n"
                 "  --start-after FILE start receiving once FILE exists (at most 30 s), so\n"
                 "                     consumers can attach to the bus before the first event\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'}, {"idle-exit-ms", required_argument, NULL, 'i'},
        {"unlink-bus", no_argument, NULL, 'u'},   {"start-after", required_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            o->config = optarg;
            break;
        case 'i':
            o->idle_exit_ms = strtoull(optarg, NULL, 10);
            break;
        case 'u':
            o->unlink_bus = true;
            break;
        case 's':
            o->start_after = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return -EINVAL;
        }
    }
    return o->config != NULL ? 0 : -EINVAL;
}

static void *dp_alloc(const char *what, size_t size)
{
    void *p = size ? rte_zmalloc_socket(what, size, 64, (int)rte_socket_id()) : NULL;
    if (p == NULL)
        fprintf(stderr, "tickplane: cannot allocate %zu bytes for %s\n", size, what);
    return p;
}

/* The IPv4 address of the kernel interface behind an af_packet vdev ("...,iface=NAME"), or 0. */
static uint32_t iface_ipv4(const char *device)
{
    const char *at = strstr(device, "iface=");
    if (at == NULL)
        return 0;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    at += strlen("iface=");
    size_t n = strcspn(at, ",");
    if (n == 0 || n >= sizeof(ifr.ifr_name))
        return 0;
    memcpy(ifr.ifr_name, at, n);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0)
        return 0;
    uint32_t ip = 0;
    ifr.ifr_addr.sa_family = AF_INET;
    if (ioctl(fd, SIOCGIFADDR, &ifr) == 0)
        ip = ntohl(((struct sockaddr_in *)&ifr.ifr_addr)->sin_addr.s_addr);
    close(fd);
    return ip;
}

static const struct tp_cfg_line *channel_line(const struct tp_cfg_channel *ch, unsigned role)
{
    switch (role) {
    case TP_ROLE_INCR_A:
    case TP_ROLE_INCR_B:
        return &ch->lines[role - TP_ROLE_INCR_A];
    case TP_ROLE_SNAP_A:
    case TP_ROLE_SNAP_B:
        return &ch->snapshot[role - TP_ROLE_SNAP_A];
    case TP_ROLE_DEF_A:
    case TP_ROLE_DEF_B:
        return &ch->definitions[role - TP_ROLE_DEF_A];
    default:
        return NULL;
    }
}

/* Multicast groups that arrive on port pi (for its address filter). */
static unsigned port_groups(const struct tp_config *cfg, unsigned pi, uint32_t *groups,
                            unsigned max)
{
    unsigned n = 0;
    for (unsigned c = 0; c < cfg->n_channels; c++)
        for (unsigned role = 0; role < TP_ROLE_RETRANS; role++) {
            const struct tp_cfg_line *l = channel_line(&cfg->channels[c], role);
            if (l == NULL || !l->present || l->rx_port != pi || n == max)
                continue;
            groups[n++] = l->group;
        }
    return n;
}

static int open_ports(const struct tp_config *cfg, struct tp_dp_port *ports, uint64_t tsc_hz)
{
    for (unsigned i = 0; i < cfg->n_ports; i++) {
        const struct tp_cfg_port *cp = &cfg->ports[i];
        struct tp_port_setup setup = {
            .dev_name = cp->dev_name,
            .rx_queues = cp->rx_queues,
            .tx_queues = 1,
            .rx_descriptors = cp->rx_descriptors,
            .tx_descriptors = cp->tx_descriptors,
            .mbufs = cp->mbuf_pool_size,
            .mbuf_cache = cp->mbuf_cache_size,
            .mtu = cp->mtu,
            .promiscuous = cp->promiscuous,
        };
        setup.n_groups = port_groups(cfg, i, setup.groups, TP_PORT_MAX_GROUPS);
        char err[256];
        int rc = tp_port_open(&ports[i].port, &setup, err, sizeof(err));
        if (rc != 0) {
            fprintf(stderr, "tickplane: %s\n", err);
            return rc;
        }
        ports[i].can_send = ports[i].port.tx_queues > 0;
        ports[i].tx_queue = 0;
        /* The configured address wins; an af_packet vdev falls back to its interface's. */
        ports[i].ip = cp->ipv4 != 0                  ? cp->ipv4
                      : cp->kind == TP_CFG_PORT_VDEV ? iface_ipv4(cp->device)
                                                     : 0;
        ports[i].host = dp_alloc("host", tp_host_memsize());
        if (ports[i].host == NULL)
            return -ENOMEM;
        struct tp_host_params hp = {
            .ip = ports[i].ip, .vlan = TP_HOST_NO_VLAN, .tsc_hz = tsc_hz, .seed = rte_rdtsc()};
        memcpy(hp.mac, ports[i].port.mac, 6);
        tp_host_init(ports[i].host, &hp);
        static const char *const mode[] = {"filter", "all-multicast", "promiscuous"};
        fprintf(stderr, "tickplane: port %s (%s): %u rx / %u tx queues, socket %d, multicast %s\n",
                cp->name, cp->dev_name, ports[i].port.rx_queues, ports[i].port.tx_queues,
                ports[i].port.socket, mode[ports[i].port.mc_mode]);
    }
    return 0;
}

static void build_filter(const struct tp_cfg_instruments *ci, struct tp_instrument_filter *f)
{
    tp_instrument_filter_init(f);
    char rule[128];
    for (unsigned i = 0; i < ci->n_include; i++) {
        snprintf(rule, sizeof(rule), "include:symbol:%s", ci->include[i]);
        tp_instrument_filter_parse(f, rule);
    }
    for (unsigned i = 0; i < ci->n_exclude; i++) {
        snprintf(rule, sizeof(rule), "exclude:symbol:%s", ci->exclude[i]);
        tp_instrument_filter_parse(f, rule);
    }
    for (unsigned i = 0; i < ci->n_security_groups; i++) {
        snprintf(rule, sizeof(rule), "include:group:%s", ci->security_groups[i]);
        tp_instrument_filter_parse(f, rule);
    }
}

/* Registers a bus counter named "<prefix>.<name>" that the lcore copies from src. */
static void export(struct tp_dp_lcore *lc, struct tp_counters *area, const char *prefix,
                   const char *name, const uint64_t *src)
{
    char full[2 * TP_COUNTER_NAME_LEN];
    /* Longer names are cut by the registry's limit; prefixes are short by construction. */
    snprintf(full, sizeof(full), "%s.%s", prefix, name);
    full[TP_COUNTER_NAME_LEN - 1] = '\0';
    struct tp_counter *dst = tp_counters_register(area, full);
    if (dst != NULL && lc->n_exports < TP_DP_MAX_EXPORTS)
        lc->exports[lc->n_exports++] = (struct tp_dp_export){.src = src, .dst = dst};
}

/*
 * A channel name as a label value inside a counter name: '.' separates the name's segments, so
 * it becomes '_', and the name is cut so the longest counter name fits the registry's limit.
 */
#define TP_DP_LABEL_LEN 25
static void counter_label(const char *name, char out[TP_DP_LABEL_LEN])
{
    size_t i = 0;
    for (; name[i] != '\0' && i < TP_DP_LABEL_LEN - 1; i++)
        out[i] = name[i] == '.' ? '_' : name[i];
    out[i] = '\0';
}

static void export_all(struct tp_dp_lcore *lc, const struct tp_config *cfg,
                       struct tp_counters *area)
{
#define EXPORT(prefix, obj, field) export(lc, area, prefix, #field, &(obj)->field)
    EXPORT("dp", &lc->stats, rx_packets);
    EXPORT("dp", &lc->stats, tx_frames);
    EXPORT("dp", &lc->stats, tx_dropped);
    EXPORT("dp", &lc->stats, host_frames);
    const struct tp_classifier_counters *cc = tp_classifier_counters(lc->classifier);
    EXPORT("dp.classify", cc, matched);
    EXPORT("dp.classify", cc, no_flow);
    EXPORT("dp.classify", cc, not_udp);
    EXPORT("dp.classify", cc, malformed);
    EXPORT("dp.classify", cc, bad_checksum);
    const struct tp_publisher_counters *pc = tp_publisher_counters(lc->publisher);
    EXPORT("dp.publish", pc, records);
    EXPORT("dp.publish", pc, events);
    /* Channel counters carry their channel (and line) as Prometheus label segments:
     * "channel=X.feed.packets" is tickplane_feed_packets_total{channel="X"} (docs/OPERATIONS.md).
     */
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        struct tp_channel *ch = lc->channels[c];
        if (ch == NULL)
            continue;
        char p[TP_COUNTER_NAME_LEN], name[TP_DP_LABEL_LEN];
        counter_label(cfg->channels[c].name, name);
        snprintf(p, sizeof(p), "channel=%s.feed", name);
        EXPORT(p, &ch->counters, packets);
        EXPORT(p, &ch->counters, malformed);
        EXPORT(p, &ch->counters, messages);
        EXPORT(p, &ch->counters, stale_marks);
        const struct tp_arb_counters *ac = tp_arb_counters(ch->arb);
        snprintf(p, sizeof(p), "channel=%s.arb", name);
        EXPORT(p, ac, gaps);
        EXPORT(p, ac, gap_filled);
        EXPORT(p, ac, skipped_msgs);
        EXPORT(p, ac, resets);
        snprintf(p, sizeof(p), "channel=%s.mold", name);
        EXPORT(p, &ch->mold.counters, requests);
        EXPORT(p, &ch->mold.counters, recovered);
        EXPORT(p, &ch->mold.counters, given_up);
        static const char *const line_names[] = {"a", "b", "r"};
        for (unsigned l = 0; l < TP_LINE_COUNT; l++) {
            char lp[TP_COUNTER_NAME_LEN];
            snprintf(lp, sizeof(lp), "channel=%s.line=%s.line", name, line_names[l]);
            EXPORT(lp, &ac->line[l], packets);
            EXPORT(lp, &ac->line[l], delivered);
            EXPORT(lp, &ac->line[l], duplicates);
            EXPORT(lp, &ac->line[l], held);
            EXPORT(lp, &ac->line[l], stale);
            EXPORT(lp, &ac->line[l], overflow);
            EXPORT(lp, &ac->line[l], corrupt);
        }
    }
#undef EXPORT
}

static void print_summary(const struct tp_dp_lcore *lc, const struct tp_config *cfg,
                          double elapsed_s)
{
    /* Throughput over the span from the first to the last feed frame (a replay's busy time). */
    uint64_t last = atomic_load_explicit(&lc->last_rx_tsc, memory_order_relaxed);
    double busy_s = last > lc->first_rx_tsc && lc->first_rx_tsc
                        ? (double)(last - lc->first_rx_tsc) / (double)lc->tsc_hz
                        : 0.0;
    uint64_t messages = 0;
    for (unsigned c = 0; c < cfg->n_channels; c++)
        if (lc->channels[c] != NULL)
            messages += lc->channels[c]->counters.messages;
    printf("{\"summary\":{\"elapsed_s\":%.3f,\"busy_s\":%.6f,\"messages\":%lu,"
           "\"messages_per_s\":%.0f,\"rx_packets\":%lu,\"tx_frames\":%lu",
           elapsed_s, busy_s, messages, busy_s > 0 ? (double)messages / busy_s : 0.0,
           lc->stats.rx_packets, lc->stats.tx_frames);
    const struct tp_classifier_counters *cc = tp_classifier_counters(lc->classifier);
    printf(",\"classify\":{\"matched\":%lu,\"no_flow\":%lu,\"not_udp\":%lu,\"malformed\":%lu,"
           "\"bad_checksum\":%lu}",
           cc->matched, cc->no_flow, cc->not_udp, cc->malformed, cc->bad_checksum);
    const struct tp_publisher_counters *pc = tp_publisher_counters(lc->publisher);
    printf(",\"publish\":{\"records\":%lu,\"events\":%lu,\"skipped\":%lu}", pc->records, pc->events,
           pc->skipped);
    printf(",\"channels\":[");
    for (unsigned c = 0, first = 1; c < cfg->n_channels; c++) {
        const struct tp_channel *ch = lc->channels[c];
        if (ch == NULL)
            continue;
        const struct tp_arb_counters *ac = tp_arb_counters(ch->arb);
        printf("%s{\"name\":\"%s\",\"packets\":%lu,\"malformed\":%lu,\"messages\":%lu,"
               "\"feed_errors\":%lu,\"gaps\":%lu,\"gap_filled\":%lu,"
               "\"skipped_msgs\":%lu,\"resets\":%lu,\"stale_marks\":%lu,\"rerequests\":%lu,"
               "\"recovered\":%lu,\"given_up\":%lu,\"detail\":[",
               first ? "" : ",", cfg->channels[c].name, ch->counters.packets,
               ch->counters.malformed, ch->counters.messages, ch->counters.feed_errors, ac->gaps,
               ac->gap_filled, ac->skipped_msgs, ac->resets, ch->counters.stale_marks,
               ch->mold.counters.requests, ch->mold.counters.recovered, ch->mold.counters.given_up);
        if (ch->params.protocol == TP_CHANNEL_MDP3) {
            const struct tp_mdp3_recovery_counters *r = &ch->recovery.counters;
            const struct tp_mdp3_feed_counters *f = &ch->mdp3.counters;
            printf("{\"stale_events\":%lu,\"instruments_recovered\":%lu,"
                   "\"snapshot_packets\":%lu,\"snapshot_cycles\":%lu,\"buffered\":%lu,"
                   "\"replayed\":%lu,\"buffer_full\":%lu,\"snapshot_joins\":%lu,"
                   "\"feed_malformed\":%lu,\"unknown_instrument\":%lu,\"definitions\":%lu,"
                   "\"rpt_seq_gaps\":%lu,\"snapshots\":%lu,\"channel_resets\":%lu},",
                   r->stale_events, r->recovered, r->snapshot_packets, r->cycles, r->buffered,
                   r->replayed, r->buffer_full, r->joins, f->malformed, f->unknown_instrument,
                   f->definitions, f->rpt_seq_gaps, f->snapshots, f->channel_resets);
        }
        for (unsigned l = 0; l < TP_LINE_COUNT; l++) {
            const struct tp_arb_line_counters *x = &ac->line[l];
            printf("%s{\"line\":\"%c\",\"packets\":%lu,\"delivered\":%lu,\"duplicates\":%lu,"
                   "\"held\":%lu,"
                   "\"stale\":%lu,\"overflow\":%lu,\"corrupt\":%lu}",
                   l ? "," : "", "abr"[l], x -> packets, x -> delivered, x -> duplicates, x -> held,
                   x -> stale, x -> overflow, x -> corrupt);
        }
        printf("]}");
        first = 0;
    }
    printf("],\"rx_to_publish_ns\":");
    tp_hist_print_json(stdout, &lc->latency, 1e9 / (double)lc->tsc_hz);
    printf("}}\n");
    fflush(stdout);
}

/* Everything the daemon allocates, sized from the config. */
struct daemon {
    struct tp_config *cfg;
    struct tp_bus_writer *bus;
    struct tp_dp_port ports[TP_CFG_MAX_PORTS];
    unsigned n_ports_open;
    struct tp_instruments *registry;
    struct tp_books *books;
    struct tp_instrument_filter filter;
    const char *venue_names[2]; /* tpout venue 0 (cme) and 1 (nasdaq) as the config names them */
    struct tp_dp_lcore lc;
};

static int build_bus(struct daemon *d)
{
    char err[256];
    d->bus = tp_daemon_bus_open(d->cfg, TP_DP_MAX_EXPORTS + 64, err, sizeof(err));
    if (d->bus == NULL) {
        fprintf(stderr, "tickplane: bus: %s\n", err);
        return -EIO;
    }
    return 0;
}

static int build_tables(struct daemon *d)
{
    const struct tp_config *cfg = d->cfg;
    uint16_t itch_channels = 0;
    for (unsigned c = 0; c < cfg->n_channels; c++)
        itch_channels += cfg->channels[c].protocol == TP_CFG_PROTO_ITCH;
    struct tp_instruments_params ip = {.capacity = cfg->instruments.capacity,
                                       .itch_venues = itch_channels};
    d->registry = dp_alloc("instruments", tp_instruments_memsize(&ip));
    if (d->registry == NULL || tp_instruments_init(d->registry, &ip) != 0)
        return -ENOMEM;
    /* Order books aggregate every live price: the level arrays hold more than the depth the
     * config publishes (a full side refuses adds and would corrupt the book). */
    uint32_t levels = cfg->books.levels_per_side < 256 ? 256 : cfg->books.levels_per_side;
    struct tp_books_params bp = {
        .instruments = cfg->instruments.capacity,
        .max_orders = cfg->books.max_orders,
        .levels_per_side = levels,
        .mbp_depth = cfg->books.levels_per_side < 255 ? cfg->books.levels_per_side : 255,
        .implied_depth = 2,
    };
    d->books = dp_alloc("books", tp_books_memsize(&bp));
    if (d->books == NULL || tp_books_init(d->books, &bp) != 0)
        return -ENOMEM;
    build_filter(&cfg->instruments, &d->filter);
    return 0;
}

static int build_lcore(struct daemon *d)
{
    const struct tp_config *cfg = d->cfg;
    struct tp_dp_lcore *lc = &d->lc;
    const struct tp_cfg_lcore *cl = &cfg->lcores[0];
    lc->lcore_id = cl->lcore_id;
    lc->tsc_hz = rte_get_tsc_hz();
    lc->quit = &quit;
    tp_hist_reset(&lc->latency);
    lc->n_ports = cfg->n_ports;
    for (unsigned i = 0; i < cfg->n_ports; i++)
        lc->ports[i] = &d->ports[i];
    lc->n_rxq = cl->n_rxq;
    for (unsigned q = 0; q < cl->n_rxq; q++) {
        lc->rxq[q].port = cl->rxq[q].port;
        lc->rxq[q].queue = cl->rxq[q].queue;
    }

    /* UDP checksums are verified unless a port is an af_packet vdev: Linux hands frames sent
     * over veth to packet sockets with the checksum still to be finished by offload. */
    struct tp_classifier_params cp = {.max_flows = cfg->n_channels * TP_ROLES,
                                      .verify_udp_checksum = true};
    for (unsigned i = 0; i < cfg->n_ports; i++)
        if (strncmp(cfg->ports[i].dev_name, "net_af_packet", 13) == 0)
            cp.verify_udp_checksum = false;
    lc->classifier = dp_alloc("classifier", tp_classifier_memsize(&cp));
    if (lc->classifier == NULL || tp_classifier_init(lc->classifier, &cp) != 0)
        return -ENOMEM;

    struct tp_publisher_params pp = {
        .bus = d->bus,
        .books = d->books,
        .registry = d->registry,
        .instruments = cfg->instruments.capacity,
        .depth = cfg->bus.state_depth < 32 ? cfg->bus.state_depth : 32,
        .latency = &lc->latency,
        .clock = tsc_now,
    };
    lc->publisher = dp_alloc("publisher", tp_publisher_memsize(&pp));
    if (lc->publisher == NULL || tp_publisher_init(lc->publisher, &pp) != 0)
        return -ENOMEM;

    uint64_t now = rte_rdtsc();
    uint16_t itch_slot = 0;
    /* Held packets keep their mbufs: at most a quarter of the smallest pool, so a long gap
     * cannot starve the receive queues. */
    uint32_t held_max = TP_ARB_HELD_LIMIT;
    for (unsigned i = 0; i < cfg->n_ports; i++)
        if (cfg->ports[i].mbuf_pool_size / 4 < held_max)
            held_max = cfg->ports[i].mbuf_pool_size / 4;
    lc->n_channels = cfg->n_channels;
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        const struct tp_cfg_channel *cc = &cfg->channels[c];
        struct tp_channel_params chp = {
            .protocol = cc->protocol == TP_CFG_PROTO_ITCH ? TP_CHANNEL_ITCH : TP_CHANNEL_MDP3,
            .index = c,
            .channel_id = cc->venue_channel_id,
            .held_max = held_max,
            .gap_wait_tsc = lc->tsc_hz * cc->gap_wait_us / 1000000,
            .start_seq = 1,
            .mold = {.retry_tsc = lc->tsc_hz / 20,
                     .give_up_tsc = lc->tsc_hz * cc->give_up_ms / 1000,
                     .max_messages = cc->rerequest_max_messages},
            .registry = d->registry,
            .books = d->books,
            .filter = &d->filter,
            .itch_slot = cc->protocol == TP_CFG_PROTO_ITCH ? itch_slot++ : 0,
            .mdp3_book_type = TP_BOOK_TYPE_MBP_MBO,
            .has_snapshot = cc->snapshot[0].present || cc->snapshot[1].present,
            .has_definitions = cc->definitions[0].present || cc->definitions[1].present,
            .replay_bytes = 4u << 20,
            .publisher = lc->publisher,
            .io = {.ctx = lc,
                   .view = tp_dp_mbuf_view,
                   .release = tp_dp_mbuf_release,
                   .send_rerequest = cc->rerequest_host ? tp_dp_send_rerequest : NULL,
                   .membership = tp_dp_membership},
        };
        lc->channels[c] = dp_alloc("channel", tp_channel_memsize(&chp));
        if (lc->channels[c] == NULL || tp_channel_init(lc->channels[c], &chp) != 0)
            return -ENOMEM;
        for (unsigned role = 0; role < TP_ROLE_RETRANS; role++) {
            const struct tp_cfg_line *l = channel_line(cc, role);
            if (l == NULL || !l->present)
                continue;
            uint16_t vlan = l->vlan < 0 ? TP_CLASSIFY_ANY_VLAN : (uint16_t)l->vlan;
            lc->lines[c][role] =
                (struct tp_dp_line){.present = true,
                                    .group = l->group,
                                    .source = l->source,
                                    .vlan = l->vlan < 0 ? TP_HOST_NO_VLAN : (uint16_t)l->vlan,
                                    .port = l->rx_port};
            int rc =
                tp_classifier_add(lc->classifier, l->group, l->port, vlan, c * TP_ROLES + role);
            if (rc != 0)
                return rc;
            /* Every line is joined at start: snapshots rebuild the books first (MDP3), and
             * the channel leaves the snapshot and definition lines when it has them. */
            tp_host_join(d->ports[l->rx_port].host, l->group, l->source,
                         l->vlan < 0 ? TP_HOST_NO_VLAN : (uint16_t)l->vlan, now);
        }
        if (cc->rerequest_host != 0) {
            uint16_t port = cc->lines[0].rx_port;
            tp_dp_rerequest_targets[c] = (struct tp_dp_rerequest_target){
                .server_ip = cc->rerequest_host, .server_port = cc->rerequest_port, .port = port};
            if (d->ports[port].ip == 0)
                fprintf(stderr,
                        "tickplane: channel %s: port has no IPv4 address, "
                        "re-requests cannot be answered\n",
                        cc->name);
            tp_classifier_add(lc->classifier, d->ports[port].ip,
                              (uint16_t)(TP_DP_RETRANS_PORT_BASE + c), TP_CLASSIFY_ANY_VLAN,
                              c * TP_ROLES + TP_ROLE_RETRANS);
        }
    }
    export_all(lc, cfg, tp_daemon_bus_counters(d->bus));
    return 0;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The control plane: signals and the idle timeout, until told to stop. */
static void control_loop(struct daemon *d, const struct options *o)
{
    uint64_t hz = rte_get_tsc_hz();
    uint64_t start = rte_rdtsc();
    while (!atomic_load(&quit)) {
        if (control != NULL)
            tp_control_plane_poll(control, 10);
        else
            usleep(10000);
        if (o->idle_exit_ms == 0)
            continue;
        uint64_t now = rte_rdtsc();
        uint64_t last = atomic_load_explicit(&d->lc.last_rx_tsc, memory_order_relaxed);
        if (last == 0)
            last = start;
        if (now > last && (now - last) * 1000 / hz >= o->idle_exit_ms)
            atomic_store(&quit, true);
    }
}

/* ---- the control plane's view of the daemon (main lcore) ---------------------------------- */

static int op_send_command(void *ctx, const struct tp_ctl_cmd *cmd)
{
    struct daemon *d = ctx;
    struct tp_ctl_cmd copy = *cmd; /* rte_ring takes a non-const source */
    return rte_ring_enqueue_elem(d->lc.commands, &copy, sizeof(copy)) == 0 ? 0 : -ENOBUFS;
}

/* Every exported counter by name: the data lcore writes them, readers see whole values. */
static json_t *op_stats(void *ctx)
{
    struct daemon *d = ctx;
    json_t *o = json_object();
    for (unsigned i = 0; i < d->lc.n_exports; i++)
        json_object_set_new(o, d->lc.exports[i].dst->name,
                            json_integer((json_int_t)tp_counter_get(d->lc.exports[i].dst)));
    return o;
}

static json_t *op_status(void *ctx)
{
    struct daemon *d = ctx;
    json_t *channels = json_array();
    for (unsigned c = 0; c < d->cfg->n_channels; c++) {
        const struct tp_cfg_channel *cc = &d->cfg->channels[c];
        json_array_append_new(channels,
                              json_pack("{s:s, s:s, s:s, s:i}", "name", cc->name, "protocol",
                                        cc->protocol == TP_CFG_PROTO_ITCH ? "itch" : "mdp3",
                                        "venue", cc->venue, "lcore", (int)d->lc.lcore_id));
    }
    return json_pack("{s:s, s:o, s:[i]}", "instance", d->cfg->name, "channels", channels,
                     "data_lcores", (int)d->lc.lcore_id);
}

static json_t *op_instruments(void *ctx, const char *pattern, unsigned limit)
{
    struct daemon *d = ctx;
    return tp_daemon_bus_instruments(d->bus, d->venue_names, pattern, limit);
}

static json_t *op_book(void *ctx, const char *venue, const char *symbol, unsigned depth, char *err,
                       size_t err_size)
{
    struct daemon *d = ctx;
    return tp_daemon_bus_book(d->bus, d->venue_names, venue, symbol, depth, err, err_size);
}

static void op_latency(void *ctx, struct tp_histogram *out, double *ns_per_unit)
{
    struct daemon *d = ctx;
    tp_dp_latency_copy(&d->lc, out);
    *ns_per_unit = 1e9 / (double)d->lc.tsc_hz;
}

/*
 * The command ring and subscription table of the data lcore, then the control plane: socket,
 * reload (verb or SIGHUP; changes that need a restart are refused), metrics.
 */
static int build_control(struct daemon *d)
{
    const struct tp_config *cfg = d->cfg;
    d->venue_names[0] = "CME";
    d->venue_names[1] = "NASDAQ";
    for (unsigned c = cfg->n_channels; c-- > 0;)
        d->venue_names[cfg->channels[c].protocol == TP_CFG_PROTO_ITCH] = cfg->channels[c].venue;
    d->lc.commands = rte_ring_create_elem("tp_ctl_commands", sizeof(struct tp_ctl_cmd), 1024,
                                          (int)rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
    struct tp_interest_params ip = {.max_subscriptions =
                                        cfg->control.max_clients * cfg->control.max_subscriptions};
    d->lc.interest = dp_alloc("interest", tp_interest_memsize(&ip));
    if (d->lc.commands == NULL || d->lc.interest == NULL || tp_interest_init(d->lc.interest, &ip))
        return -ENOMEM;
    d->lc.bus = d->bus;
    d->lc.registry = d->registry;
    struct tp_control_plane_hooks hooks = {
        .ops = {.ctx = d,
                .send_command = op_send_command,
                .status = op_status,
                .stats = op_stats,
                .instruments = op_instruments,
                .book = op_book},
        .counters = tp_daemon_bus_counters(d->bus),
        .latency = op_latency,
        .ctx = d,
    };
    int rc = tp_control_plane_open(&control, cfg, &hooks);
    if (rc != 0) {
        /* The data plane runs without it: feeds matter more than the socket. */
        fprintf(stderr, "tickplane: control socket %s: %s (running without control plane)\n",
                cfg->control.socket_path, strerror(-rc));
        control = NULL;
    }
    return 0;
}

static void teardown(struct daemon *d, bool unlink_bus)
{
    for (unsigned i = 0; i < d->n_ports_open; i++)
        tp_port_close(&d->ports[i].port);
    tp_daemon_bus_close(d->bus, unlink_bus);
}

int main(int argc, char **argv)
{
    struct options o = {0};
    if (parse_options(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    static struct daemon d;
    static struct tp_config_errors errs;
    d.cfg = calloc(1, sizeof(*d.cfg));
    if (d.cfg == NULL)
        return 1;
    if (tp_config_load_file(o.config, d.cfg, &errs) != 0) {
        char buf[8192];
        tp_config_errors_format(&errs, buf, sizeof(buf));
        fprintf(stderr, "tickplane: %s:\n%s", o.config, buf);
        return 2;
    }
    if (d.cfg->n_lcores != 1) {
        fprintf(stderr,
                "tickplane: this build runs exactly one data lcore per instance "
                "(the bus has one writer); the config has %u\n",
                d.cfg->n_lcores);
        return 2;
    }
    /* The host checks only advise (tickplane-doctor explains each one): start regardless. */
    tp_hostcheck_startup(d.cfg, "/", stderr);
    char *eal_argv[TP_CFG_MAX_EAL_ARGS + 2 * TP_CFG_MAX_PORTS + 2 * TP_CFG_MAX_VDEVS + 16];
    int eal_argc =
        tp_config_eal_argv(d.cfg, argv[0], eal_argv, (int)(sizeof(eal_argv) / sizeof(eal_argv[0])));
    if (eal_argc < 0 || rte_eal_init(eal_argc, eal_argv) < 0) {
        fprintf(stderr, "tickplane: EAL initialisation failed\n");
        return 1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_sighup);

    int rc = tp_dp_register_timestamp();
    if (rc >= 0)
        rc = open_ports(d.cfg, d.ports, rte_get_tsc_hz());
    d.n_ports_open = d.cfg->n_ports;
    if (rc >= 0)
        rc = build_bus(&d);
    if (rc >= 0)
        rc = build_tables(&d);
    if (rc >= 0)
        rc = build_lcore(&d);
    if (rc >= 0)
        rc = build_control(&d);
    if (rc < 0) {
        fprintf(stderr, "tickplane: start-up failed: %s\n", strerror(-rc));
        teardown(&d, true);
        rte_eal_cleanup();
        return 1;
    }
    for (int i = 0; o.start_after != NULL && i < 3000 && access(o.start_after, F_OK) != 0 &&
                    !atomic_load(&quit);
         i++)
        usleep(10000);
    double t0 = mono_s();
    rc = rte_eal_remote_launch(tp_dp_lcore_main, &d.lc, d.lc.lcore_id);
    if (rc != 0) {
        fprintf(stderr, "tickplane: cannot launch lcore %u: %s\n", d.lc.lcore_id, strerror(-rc));
        atomic_store(&quit, true);
    }
    fprintf(stderr, "tickplane: running (data lcore %u); SIGINT/SIGTERM to stop\n", d.lc.lcore_id);
    control_loop(&d, &o);
    rte_eal_mp_wait_lcore();
    print_summary(&d.lc, d.cfg, mono_s() - t0);
    if (control != NULL)
        tp_control_plane_close(control);
    teardown(&d, o.unlink_bus);
    rte_eal_cleanup();
    free(d.cfg);
    return 0;
}
