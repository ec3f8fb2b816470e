/*
 * tickplane: the market-data daemon.
 *
 *   tickplane --config FILE [--idle-exit-ms N] [--unlink-bus] [--start-after FILE]
 *
 * Start-up (main lcore, ordinary code: allocation and syscalls allowed): load and validate the
 * config, start EAL with the arguments it gives, open the ports (pool on the port's socket,
 * queues, multicast filter), create the bus, size every table from the config in DPDK memory,
 * join the feeds' groups (IGMP from the data plane itself, see dataplane/ports/README.md) and
 * launch the data lcores. Then the main lcore is the control plane: it watches for SIGINT/SIGTERM
 * and the idle timeout (end of a replayed capture), while the data lcores busy-poll.
 * On exit it prints a JSON summary (counters, receive-to-publish latency) on stdout.
 *
 * Every data lcore has its own channels, instrument ids, books, publisher and bus ring (daemon.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
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
#include "bus/instance_lock.h"
#include "bus_setup.h"
#include "control_plane.h"
#include "interest.h"
#include "log.h"
#include "config.h"
#include "preload.h"
#include "resources.h"
#include "daemon.h"
#include "dataplane.h"
#include "hostcheck_config.h"
#include "publisher.h"
#include "snapshots.h"
#include "tp_instrument_filter.h"
#include "tp_version.h"
#include "watch.h"

/* What tickplanectl check sizes the bus by is what the daemon creates. */
_Static_assert(TP_DP_COUNTERS(1) == TP_CFG_BUS_COUNTERS(1) &&
                   TP_DP_COUNTERS(TP_CFG_MAX_DATA_LCORES) ==
                       TP_CFG_BUS_COUNTERS(TP_CFG_MAX_DATA_LCORES),
               "the counters segment's size rule is resources.h's");

static atomic_bool quit;
static struct tp_control_plane *control;
static struct tp_watch *watch; /* events, book states, NIC drops, consumers (watch.h) */

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
                 "[--start-after FILE] [--version]\n"
                 "  --config FILE      the instance's JSON config (docs/CONFIG.md)\n"
                 "  --idle-exit-ms N   exit once every data lcore has polled N ms without a\n"
                 "                     feed packet (the end of a replayed capture)\n"
                 "  --unlink-bus       remove the bus segments on exit\n"
                 "  --start-after FILE start receiving once FILE exists (at most 30 s), so\n"
                 "                     consumers can attach to the bus before the first event\n");
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option opts[] = {{"config", required_argument, NULL, 'c'},
                                         {"idle-exit-ms", required_argument, NULL, 'i'},
                                         {"unlink-bus", no_argument, NULL, 'u'},
                                         {"start-after", required_argument, NULL, 's'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"version", no_argument, NULL, 'V'},
                                         {NULL, 0, NULL, 0}};
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
        case 'V':
            tp_version_print(stdout, "tickplane");
            exit(0);
        default:
            return -EINVAL;
        }
    }
    return o->config != NULL ? 0 : -EINVAL;
}

void *tp_daemon_alloc(const char *what, size_t size, int socket)
{
    void *p = size ? rte_zmalloc_socket(what, size, 64, socket) : NULL;
    if (p == NULL)
        tp_log(TP_LOG_MAIN, TP_LOG_ERR, "cannot allocate %zu bytes for %s", size, what);
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

const struct tp_cfg_line *tp_daemon_channel_line(const struct tp_cfg_channel *ch, unsigned role)
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
        return ch->protocol == TP_CFG_PROTO_MDP3 ? &ch->proto.mdp3.definitions[role - TP_ROLE_DEF_A]
                                                 : NULL;
    case TP_ROLE_SMBO_A:
    case TP_ROLE_SMBO_B:
        return ch->protocol == TP_CFG_PROTO_MDP3
                   ? &ch->proto.mdp3.snapshot_mbo[role - TP_ROLE_SMBO_A]
                   : NULL;
    default:
        return NULL;
    }
}

unsigned tp_daemon_port_groups(const struct tp_config *cfg, unsigned pi, uint32_t *groups,
                               unsigned n, unsigned max)
{
    for (unsigned c = 0; c < cfg->n_channels; c++)
        for (unsigned role = 0; role < TP_ROLE_RETRANS; role++) {
            const struct tp_cfg_line *l = tp_daemon_channel_line(&cfg->channels[c], role);
            if (l == NULL || !l->present || l->rx_port != pi)
                continue;
            unsigned k = 0;
            while (k < n && groups[k] != l->group)
                k++;
            if (k == n && n < max)
                groups[n++] = l->group;
        }
    return n;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Preloaded ports' captures (ports/preload.h), by port index; freed after the ports close. */
static struct tp_preload preloads[TP_CFG_MAX_PORTS];

static int open_ports(const struct tp_config *cfg, struct tp_dp_port *ports, uint64_t tsc_hz)
{
    for (unsigned i = 0; i < cfg->n_ports; i++) {
        const struct tp_cfg_port *cp = &cfg->ports[i];
        char err[256];
        if (cp->preload) {
            double t0 = mono_s();
            int rc = tp_preload_open(&preloads[i], cp->dev_name, cp->pcap, (int)rte_socket_id(),
                                     err, sizeof(err));
            if (rc != 0) {
                tp_log(TP_LOG_PORT, TP_LOG_ERR, "%s", err);
                return rc;
            }
            tp_log(TP_LOG_PORT, TP_LOG_INFO,
                   "port %s: %u frames of up to %u bytes preloaded in %.2f s", cp->name,
                   preloads[i].plan.frames, preloads[i].plan.max_frame, mono_s() - t0);
        }
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
            .nic_timestamps = cp->nic_timestamps,
        };
        setup.n_groups = tp_daemon_port_groups(cfg, i, setup.groups, 0, TP_PORT_MAX_GROUPS);
        int rc = tp_port_open(&ports[i].port, &setup, err, sizeof(err));
        if (rc != 0) {
            tp_log(TP_LOG_PORT, TP_LOG_ERR, "%s", err);
            return rc;
        }
        ports[i].can_send = ports[i].port.tx_queues > 0;
        ports[i].tx_queue = 0;
        /* The configured address wins; an af_packet vdev falls back to its interface's. */
        ports[i].ip = cp->ipv4 != 0                  ? cp->ipv4
                      : cp->kind == TP_CFG_PORT_VDEV ? iface_ipv4(cp->device)
                                                     : 0;
        ports[i].host = tp_daemon_alloc("host", tp_host_memsize(), ports[i].port.socket);
        if (ports[i].host == NULL)
            return -ENOMEM;
        struct tp_host_params hp = {
            .ip = ports[i].ip, .vlan = TP_HOST_NO_VLAN, .tsc_hz = tsc_hz, .seed = rte_rdtsc()};
        memcpy(hp.mac, ports[i].port.mac, 6);
        tp_host_init(ports[i].host, &hp);
        /* Slopes over one second; a clock read taking over 10 us was interrupted. */
        tp_nic_clock_init(&ports[i].nic_clock, tsc_hz, tsc_hz / 100000);
        static const char *const mode[] = {"filter", "all-multicast", "promiscuous"};
        tp_log(TP_LOG_PORT, TP_LOG_INFO,
               "port %s (%s): %u rx / %u tx queues, socket %d, multicast %s, UDP "
               "checksums verified by %s, receive times from %s",
               cp->name, cp->dev_name, ports[i].port.rx_queues, ports[i].port.tx_queues,
               ports[i].port.socket, mode[ports[i].port.mc_mode],
               ports[i].port.rx_udp_checksum ? "the NIC" : "software",
               ports[i].port.rx_timestamp ? "the NIC's clock (mapped to the TSC)"
                                          : "the TSC at rx_burst");
    }
    return 0;
}

void tp_daemon_build_filter(const struct tp_cfg_instruments *ci, struct tp_instrument_filter *f)
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

/* Registers a bus counter named "<prefix>.<name>" that the lcore copies from src into exports. */
int tp_daemon_export(struct tp_dp_export *exports, unsigned *n, unsigned max,
                     struct tp_counters *area, const char *prefix, const char *name,
                     const uint64_t *src)
{
    char full[2 * TP_COUNTER_NAME_LEN];
    snprintf(full, sizeof(full), "%s.%s", prefix, name);
    struct tp_counter *dst =
        strlen(full) < TP_COUNTER_NAME_LEN && *n < max ? tp_counters_register(area, full) : NULL;
    if (dst == NULL)
        return -ENOSPC;
    exports[(*n)++] = (struct tp_dp_export){.src = src, .dst = dst};
    return 0;
}

/*
 * The lcore's counters, named "dp.*" when it is the only data lcore and "dp.lcore=<id>.*" when
 * there are several (the lcore becomes a Prometheus label).
 */
static int export_lcore(struct tp_dp_lcore *lc, const struct tp_books *books,
                        struct tp_counters *area, bool labelled)
{
    int rc = 0;
    char dp[24], prefix[64];
    if (labelled)
        snprintf(dp, sizeof(dp), "dp.lcore=%u", lc->lcore_id);
    else
        snprintf(dp, sizeof(dp), "dp");
#define EXPORT(part, obj, field)                                                                   \
    do {                                                                                           \
        snprintf(prefix, sizeof(prefix), "%s%s", dp, part);                                        \
        rc |= tp_daemon_export(lc->exports, &lc->n_exports, TP_DP_LCORE_EXPORTS, area, prefix,     \
                               #field, &(obj)->field);                                             \
    } while (0)
    EXPORT("", &lc->stats, rx_packets);
    EXPORT("", &lc->stats, tx_frames);
    EXPORT("", &lc->stats, tx_dropped);
    EXPORT("", &lc->stats, host_frames);
    EXPORT("", &lc->stats, rx_nic_time);
    EXPORT("", &lc->stats, ticks);
    const struct tp_classifier_counters *cc = tp_classifier_counters(lc->set.classifier);
    EXPORT(".classify", cc, matched);
    EXPORT(".classify", cc, no_flow);
    EXPORT(".classify", cc, not_udp);
    EXPORT(".classify", cc, malformed);
    EXPORT(".classify", cc, bad_checksum);
    EXPORT(".classify", cc, nic_checksum);
    const struct tp_publisher_counters *pc = tp_publisher_counters(lc->publisher);
    EXPORT(".publish", pc, records);
    EXPORT(".publish", pc, events);
    /* What sizes books.max_orders, recent_orders and levels_per_side (tp_books.h). Counters
     * only go up: the live orders now (a gauge) are in the exit summary, their peak here. */
    const struct tp_books_totals *bt = tp_books_totals(books);
    EXPORT(".books", bt, peak_live_orders);
    EXPORT(".books", bt, orders_spilled);
    EXPORT(".books", bt, order_capacity);
    EXPORT(".books", bt, level_capacity);
    EXPORT(".reload", &lc->set, detached_instruments);
    EXPORT(".reload", &lc->set, apply_errors);
    /* The host side's frames the port did not take at once (ports/host.h), per port. */
    for (unsigned i = 0; i < lc->n_ports; i++) {
        if (lc->ports[i] == NULL || lc->ports[i]->host == NULL)
            continue;
        char part[24];
        snprintf(part, sizeof(part), ".port=%u.host", i);
        const struct tp_host_counters *hc = tp_host_counters(lc->ports[i]->host);
        EXPORT(part, hc, tx_retries);
        EXPORT(part, hc, tx_given_up);
    }
    /* The NIC clock model of each port whose NIC stamps packets (ports/nic_clock.h). */
    for (unsigned i = 0; i < lc->n_ports; i++) {
        if (lc->ports[i] == NULL || !lc->ports[i]->port.rx_timestamp)
            continue;
        char part[32];
        snprintf(part, sizeof(part), ".port=%u.nic_clock", i);
        EXPORT(part, &lc->ports[i]->nic_clock, readings);
        EXPORT(part, &lc->ports[i]->nic_clock, dropped);
        EXPORT(part, &lc->ports[i]->nic_clock, steps);
    }
#undef EXPORT
    return rc;
}

struct tp_channel *tp_daemon_channel(const struct tp_daemon *d, unsigned c)
{
    return c < d->cfg->n_channels ? d->lcores[d->lcore_of[c]].lc.set.channels[d->slot_of[c]] : NULL;
}

/* Sums of the lcores' counters for the summary. */
struct lcore_totals {
    uint64_t rx_packets, tx_frames, records, events, skipped, first_rx, last_rx, busy_cpu_ns;
    struct tp_classifier_counters classify;
    struct tp_histogram latency, gap_wait;
};

static void sum_lcores(const struct tp_daemon *d, struct lcore_totals *t)
{
    memset(t, 0, sizeof(*t));
    tp_hist_reset(&t->latency);
    tp_hist_reset(&t->gap_wait);
    for (unsigned l = 0; l < d->n_lcores; l++) {
        const struct tp_dp_lcore *lc = &d->lcores[l].lc;
        t->rx_packets += lc->stats.rx_packets;
        t->tx_frames += lc->stats.tx_frames;
        const struct tp_publisher_counters *pc = tp_publisher_counters(lc->publisher);
        t->records += pc->records;
        t->events += pc->events;
        t->skipped += pc->skipped;
        const struct tp_classifier_counters *cc = tp_classifier_counters(lc->set.classifier);
        t->classify.matched += cc->matched;
        t->classify.no_flow += cc->no_flow;
        t->classify.not_udp += cc->not_udp;
        t->classify.malformed += cc->malformed;
        t->classify.bad_checksum += cc->bad_checksum;
        uint64_t last = atomic_load_explicit(&lc->last_rx_tsc, memory_order_relaxed);
        if (lc->first_rx_tsc != 0 && (t->first_rx == 0 || lc->first_rx_tsc < t->first_rx))
            t->first_rx = lc->first_rx_tsc;
        if (last > t->last_rx)
            t->last_rx = last;
        t->busy_cpu_ns += atomic_load_explicit(&lc->busy_cpu_ns, memory_order_relaxed);
        tp_hist_merge(&t->latency, &lc->latency);
        tp_hist_merge(&t->gap_wait, &lc->gap_wait);
    }
}

static void print_summary(const struct tp_daemon *d, double elapsed_s)
{
    const struct tp_config *cfg = d->cfg;
    static struct lcore_totals t;
    sum_lcores(d, &t);
    uint64_t tsc_hz = d->lcores[0].lc.tsc_hz;
    /* Throughput over the span from the first to the last feed frame (a replay's busy time). */
    double busy_s = t.last_rx > t.first_rx && t.first_rx
                        ? (double)(t.last_rx - t.first_rx) / (double)tsc_hz
                        : 0.0;
    uint64_t messages = 0;
    for (unsigned c = 0; c < cfg->n_channels; c++)
        if (tp_daemon_channel(d, c) != NULL)
            messages += tp_daemon_channel(d, c)->counters.messages;
    /* The data lcores' CPU time over their busy spans: what the work cost on a shared host. */
    double busy_cpu_s = (double)t.busy_cpu_ns / 1e9;
    printf("{\"summary\":{\"version\":\"%s\",\"commit\":\"%s\",\"elapsed_s\":%.3f,\"busy_s\":%.6f,"
           "\"messages\":%lu,"
           "\"messages_per_s\":%.0f,\"busy_cpu_s\":%.6f,\"messages_per_cpu_s\":%.0f,"
           "\"rx_packets\":%lu,\"tx_frames\":%lu",
           TP_VERSION, TP_COMMIT, elapsed_s, busy_s, messages,
           busy_s > 0 ? (double)messages / busy_s : 0.0, busy_cpu_s,
           busy_cpu_s > 0 ? (double)messages / busy_cpu_s : 0.0, t.rx_packets, t.tx_frames);
    const struct tp_classifier_counters *cc = &t.classify;
    printf(",\"classify\":{\"matched\":%lu,\"no_flow\":%lu,\"not_udp\":%lu,\"malformed\":%lu,"
           "\"bad_checksum\":%lu}",
           cc->matched, cc->no_flow, cc->not_udp, cc->malformed, cc->bad_checksum);
    printf(",\"publish\":{\"records\":%lu,\"events\":%lu,\"skipped\":%lu}", t.records, t.events,
           t.skipped);
    /* Each data lcore: what it received and published (its ring). */
    printf(",\"lcores\":[");
    for (unsigned l = 0; l < d->n_lcores; l++) {
        const struct tp_dp_lcore *lc = &d->lcores[l].lc;
        const struct tp_publisher_counters *pc = tp_publisher_counters(lc->publisher);
        struct tp_cfg_window window = tp_config_lcore_window(cfg, l);
        const struct tp_books_totals *bt = tp_books_totals(d->lcores[l].books);
        printf("%s{\"lcore\":%u,\"ring\":%u,\"rx_packets\":%lu,\"records\":%lu,"
               "\"events\":%lu,\"first_instrument\":%u,\"window_ids\":%u,\"instruments\":%u,"
               "\"books\":{\"live_orders\":%lu,\"peak_live_orders\":%lu,\"orders_spilled\":%lu,"
               "\"order_capacity\":%lu,\"level_capacity\":%lu}}",
               l ? "," : "", lc->lcore_id, l, lc->stats.rx_packets, pc->records, pc->events,
               window.first_id, window.ids,
               tp_instruments_count(d->lcores[l].registry) - window.first_id, bt->live_orders,
               bt->peak_live_orders, bt->orders_spilled, bt->order_capacity, bt->level_capacity);
    }
    printf("],\"channels\":[");
    for (unsigned c = 0, first = 1; c < cfg->n_channels; c++) {
        const struct tp_channel *ch = tp_daemon_channel(d, c);
        if (ch == NULL)
            continue;
        const struct tp_arb_counters *ac = tp_arb_counters(ch->arb);
        printf("%s{\"name\":\"%s\",\"packets\":%lu,\"malformed\":%lu,\"messages\":%lu,"
               "\"feed_errors\":%lu,\"gaps\":%lu,\"gap_filled\":%lu,"
               "\"skipped_msgs\":%lu,\"resets\":%lu,\"stale_marks\":%lu,"
               "\"recovering_marks\":%lu,\"silences\":%lu,\"rerequests\":%lu,"
               "\"recovered\":%lu,\"given_up\":%lu,\"detail\":[",
               first ? "" : ",", cfg->channels[c].name, ch->counters.packets,
               ch->counters.malformed, ch->counters.messages, ch->counters.feed_errors, ac->gaps,
               ac->gap_filled, ac->skipped_msgs, ac->resets, ch->counters.stale_marks,
               ch->counters.recovering_marks, ch->counters.silences, ch->mold.counters.requests,
               ch->mold.counters.recovered, ch->mold.counters.given_up);
        /* The packet path runs its feed and snapshot loop in the channel: their counters. */
        if (ch->venue->framing == TP_FRAMING_PACKETS) {
            const struct tp_mdp3_recovery_counters *r = &ch->recovery.counters;
            const struct tp_mdp3_feed_counters *f = &ch->mdp3.counters;
            printf("{\"stale_events\":%lu,\"instruments_recovered\":%lu,"
                   "\"snapshot_packets\":%lu,\"snapshot_cycles\":%lu,\"buffered\":%lu,"
                   "\"replayed\":%lu,\"buffer_full\":%lu,\"snapshot_joins\":%lu,"
                   "\"feed_malformed\":%lu,\"unknown_instrument\":%lu,\"definitions\":%lu,"
                   "\"rpt_seq_gaps\":%lu,\"snapshots\":%lu,\"snapshots_audited\":%lu,"
                   "\"snapshot_mismatch\":%lu,\"refusal_marks\":%lu,\"channel_resets\":%lu,"
                   "\"orders_incomplete_marks\":%lu,\"orders_incomplete\":%u},",
                   r->stale_events, r->recovered, r->snapshot_packets, r->cycles, r->buffered,
                   r->replayed, r->buffer_full, r->joins, f->malformed, f->unknown_instrument,
                   f->definitions, f->rpt_seq_gaps, f->snapshots, f->snapshots_audited,
                   f->snapshot_mismatch, f->refusal_marks, f->channel_resets,
                   f->orders_incomplete_marks, ch->recovery.orders_incomplete);
        }
        /* A venue whose feed orders its packets: its decode counters tell its gaps and
         * recoveries (the arbiter's lines below stay unused). */
        const struct tp_venue_ops *v = ch->venue;
        if (v->feed != NULL) {
            printf("{\"decode\":{");
            for (unsigned k = 0; k < v->n_decode_counters; k++)
                printf("%s\"%s\":%lu", k ? "," : "", v->decode_counters[k].name,
                       *(const uint64_t *)((const char *)ch->feed + v->decode_counters[k].offset));
            printf("},\"recovering\":%u},", v->feed->recovering(ch->feed));
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
    tp_hist_print_json(stdout, &t.latency, 1e9 / (double)tsc_hz);
    printf(",\"gap_wait_ns\":");
    tp_hist_print_json(stdout, &t.gap_wait, 1e9 / (double)tsc_hz);
    json_t *snapshots = tp_daemon_snapshots_json(d, true);
    if (json_object_size(snapshots) > 0) {
        char *text = json_dumps(snapshots, JSON_COMPACT);
        printf(",\"snapshots\":%s", text != NULL ? text : "{}");
        free(text);
    }
    json_decref(snapshots);
    printf("}}\n");
    fflush(stdout);
}

static int build_bus(struct tp_daemon *d)
{
    char err[256];
    d->bus = tp_daemon_bus_open(d->cfg, TP_DP_COUNTERS(d->n_lcores), err, sizeof(err));
    if (d->bus == NULL) {
        tp_log(TP_LOG_MAIN, TP_LOG_ERR, "bus: %s", err);
        return -EIO;
    }
    return 0;
}

/*
 * The registry and books of data lcore l. Its registry hands out the ids of its window of
 * instruments.capacity (tp_config_lcore_window: its lcores[].instruments, or an even share of
 * what the others leave); its books hold that window only, while its publisher is indexed by the
 * instance's ids.
 */
static int build_tables(struct tp_daemon *d, unsigned l)
{
    const struct tp_config *cfg = d->cfg;
    struct tp_daemon_lcore *dl = &d->lcores[l];
    uint16_t itch_channels = 0;
    for (unsigned c = 0; c < cfg->n_channels; c++)
        itch_channels += tp_daemon_venue(&cfg->channels[c])->locate_map &&
                         tp_config_channel_lcore(cfg, c) == (int)l;
    dl->itch_slots = itch_channels + TP_DAEMON_SPARE_ITCH_SLOTS;
    /* Validation gave every lcore at least one id. */
    struct tp_cfg_window window = tp_config_lcore_window(cfg, l);
    struct tp_instruments_params ip = {.capacity = cfg->instruments.capacity,
                                       .itch_venues = dl->itch_slots,
                                       .first_id = window.first_id,
                                       .ids = window.ids};
    dl->registry = tp_daemon_alloc("instruments", tp_instruments_memsize(&ip), dl->socket);
    if (dl->registry == NULL || tp_instruments_init(dl->registry, &ip) != 0)
        return -ENOMEM;
    /* Order books aggregate every live price: the level arrays hold more than the depth the
     * config publishes (a full side refuses adds and would corrupt the book). */
    uint32_t levels = cfg->books.levels_per_side < TP_CFG_ORDER_LEVELS_MIN
                          ? TP_CFG_ORDER_LEVELS_MIN
                          : cfg->books.levels_per_side;
    struct tp_books_params bp = {
        .first_id = window.first_id,
        .instruments = window.ids,
        .max_orders = cfg->books.max_orders,
        .recent_orders = cfg->books.recent_orders,
        .levels_per_side = levels,
        .mbp_depth = cfg->books.levels_per_side < 255 ? cfg->books.levels_per_side : 255,
        .implied_depth = 2,
    };
    dl->books = tp_daemon_alloc("books", tp_books_memsize(&bp), dl->socket);
    if (dl->books == NULL || tp_books_init(dl->books, &bp) != 0)
        return -ENOMEM;
    tp_daemon_build_filter(&cfg->instruments, &dl->filter);
    return 0;
}

/* Each tpout venue as the running config names it (the venue's own name when it names none). */
void tp_daemon_name_venues(struct tp_daemon *d)
{
    const struct tp_config *cfg = d->cfg;
    for (unsigned v = 0; v < TP_TPOUT_VENUES; v++)
        d->venue_names[v] = tp_venue_of_tpout((uint8_t)v)->bus_name;
    for (unsigned c = cfg->n_channels; c-- > 0;)
        d->venue_names[tp_daemon_venue(&cfg->channels[c])->tpout_venue] = cfg->channels[c].venue;
}

/* Data lcore l: its ports, classifier, publisher (its bus writer) and counters. */
static int build_lcore(struct tp_daemon *d, unsigned l)
{
    const struct tp_config *cfg = d->cfg;
    struct tp_daemon_lcore *dl = &d->lcores[l];
    struct tp_dp_lcore *lc = &dl->lc;
    const struct tp_cfg_lcore *cl = &cfg->lcores[l];
    lc->tsc_hz = rte_get_tsc_hz();
    lc->quit = &quit;
    tp_hist_reset(&lc->latency);
    tp_hist_reset(&lc->gap_wait);
    /* The ports it polls are its own: their IGMP/ARP side and tx queue run on this lcore. */
    lc->n_ports = cfg->n_ports;
    lc->n_rxq = cl->n_rxq;
    for (unsigned q = 0; q < cl->n_rxq; q++) {
        lc->rxq[q].port = cl->rxq[q].port;
        lc->rxq[q].queue = cl->rxq[q].queue;
        lc->ports[cl->rxq[q].port] = &d->ports[cl->rxq[q].port];
        lc->set.hosts[cl->rxq[q].port] = d->ports[cl->rxq[q].port].host;
    }
    lc->set.filter = &dl->filter;
    tp_dp_set_share_ticket(&lc->set, &d->reload_ticket);

    /* Room for the flows of every slot, so that reloads never resize it. UDP checksums are
     * verified unless a port is an af_packet vdev: Linux hands frames sent over veth to packet
     * sockets with the checksum still to be finished by offload. */
    struct tp_classifier_params cp = {.max_flows = TP_DP_MAX_CHANNELS * TP_ROLES,
                                      .verify_udp_checksum = true};
    for (unsigned i = 0; i < cfg->n_ports; i++)
        if (strncmp(cfg->ports[i].dev_name, "net_af_packet", 13) == 0)
            cp.verify_udp_checksum = false;
    d->cls_size = tp_classifier_memsize(&cp);
    lc->set.classifier = tp_daemon_alloc("classifier", d->cls_size, dl->socket);
    dl->shadow_cls = aligned_alloc(64, d->cls_size);
    dl->scratch_cls = aligned_alloc(64, d->cls_size);
    if (lc->set.classifier == NULL || dl->shadow_cls == NULL || dl->scratch_cls == NULL ||
        tp_classifier_init(lc->set.classifier, &cp) != 0 ||
        tp_classifier_init(dl->shadow_cls, &cp) != 0)
        return -ENOMEM;

    struct tp_publisher_params pp = {
        .bus = tp_daemon_bus_writer(d->bus, l),
        .books = dl->books,
        .registry = dl->registry,
        .instruments = cfg->instruments.capacity,
        .depth = cfg->bus.state_depth,
        .latency = &lc->latency,
        .gap_wait = &lc->gap_wait,
        .clock = tsc_now,
    };
    lc->publisher = tp_daemon_alloc("publisher", tp_publisher_memsize(&pp), dl->socket);
    if (lc->publisher == NULL || tp_publisher_init(lc->publisher, &pp) != 0)
        return -ENOMEM;
    if (export_lcore(lc, dl->books, tp_daemon_bus_counters(d->bus), d->n_lcores > 1) != 0)
        return -ENOSPC;
    char name[RTE_RING_NAMESIZE];
    snprintf(name, sizeof(name), "tp_reconfig_%u", lc->lcore_id);
    lc->reconfig = rte_ring_create_elem(name, sizeof(struct tp_dp_cmd), TP_DP_RECONFIG_RING,
                                        dl->socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
    return lc->reconfig != NULL ? 0 : -ENOMEM;
}

/*
 * The data lcores, their tables and channels. This build gives each port to one lcore (its
 * IGMP/ARP side, tx queue and multicast filter): several lcores may not poll one port.
 */
static int build_lcores(struct tp_daemon *d)
{
    const struct tp_config *cfg = d->cfg;
    for (unsigned p = 0; p < cfg->n_ports; p++) {
        int owner = -1;
        for (unsigned l = 0; l < cfg->n_lcores; l++)
            for (unsigned q = 0; q < cfg->lcores[l].n_rxq; q++) {
                if (cfg->lcores[l].rxq[q].port != p || owner == (int)l)
                    continue;
                if (owner >= 0) {
                    tp_log(TP_LOG_MAIN, TP_LOG_ERR,
                           "lcores[%u].poll[%u]: port \"%s\" is polled by lcores[%d] "
                           "already (this build runs each port on one data lcore)",
                           l, q, cfg->ports[p].name, owner);
                    return -EINVAL;
                }
                owner = (int)l;
            }
    }
    /* Held packets keep their mbufs: at most a quarter of the smallest pool, so a long gap
     * cannot starve the receive queues. */
    d->held_max = TP_ARB_HELD_LIMIT;
    for (unsigned i = 0; i < cfg->n_ports; i++)
        if (cfg->ports[i].mbuf_pool_size / 4 < d->held_max)
            d->held_max = cfg->ports[i].mbuf_pool_size / 4;
    for (unsigned l = 0; l < d->n_lcores; l++) {
        d->lcores[l].lc.lcore_id = cfg->lcores[l].lcore_id;
        int socket = (int)rte_lcore_to_socket_id(cfg->lcores[l].lcore_id);
        d->lcores[l].socket = socket >= 0 ? socket : (int)rte_socket_id();
        int rc = build_tables(d, l);
        if (rc == 0)
            rc = build_lcore(d, l);
        if (rc != 0)
            return rc;
    }
    return tp_daemon_start_channels(d);
}

/* The control socket's counters as the main lcore last copied them, for DPDK telemetry's thread. */
static pthread_mutex_t control_stats_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tp_ctl_server_stats control_stats;

static void op_control_stats(void *ctx, struct tp_ctl_server_stats *out)
{
    (void)ctx;
    pthread_mutex_lock(&control_stats_lock);
    *out = control_stats;
    pthread_mutex_unlock(&control_stats_lock);
}

static void copy_control_stats(void)
{
    struct tp_ctl_server_stats s;
    tp_control_plane_server_stats(control, &s);
    pthread_mutex_lock(&control_stats_lock);
    control_stats = s;
    pthread_mutex_unlock(&control_stats_lock);
}

/*
 * The main lcore's tick: serve the control socket (or sleep) for up to 10 ms, then beat the
 * bus's heartbeat, by which strategies tell a live daemon from a killed one, and now and then
 * remove the segments of readers that are gone.
 */
static void wait_a_tick(struct tp_daemon *d)
{
    /* A snapshot being fetched is read every millisecond (its socket is not in the poll set). */
    int ms = tp_daemon_snapshots_busy(d) ? 1 : 10;
    if (control != NULL)
        tp_control_plane_poll(control, ms);
    else
        usleep((useconds_t)ms * 1000);
    tp_daemon_snapshots_poll(d, (uint64_t)(mono_s() * 1000));
    tp_daemon_bus_heartbeat(d->bus);
    if (watch != NULL)
        tp_watch_tick(watch, (uint64_t)(mono_s() * 1000));
    if (control != NULL)
        copy_control_stats();
    /* Every 5 s or so: killed consumers leave their reader segments behind. */
    static unsigned ticks;
    if (++ticks % 500 == 0)
        tp_daemon_bus_sweep_readers(d->cfg);
}

/* The control plane: signals and the idle timeout, until told to stop. */
static void control_loop(struct tp_daemon *d, const struct options *o)
{
    uint64_t hz = rte_get_tsc_hz();
    uint64_t start = rte_rdtsc();
    while (!atomic_load(&quit)) {
        wait_a_tick(d);
        if (o->idle_exit_ms == 0)
            continue;
        /* Idle: every data lcore has polled for idle_exit_ms since its last feed frame. Its own
         * poll time, not the clock: a loaded host that preempts the lcore for seconds in the
         * middle of a capture must not end the run. */
        uint64_t idle_ticks = o->idle_exit_ms * hz / 1000;
        bool idle = true;
        for (unsigned l = 0; idle && l < d->n_lcores; l++) {
            const struct tp_dp_lcore *lc = &d->lcores[l].lc;
            uint64_t rx = atomic_load_explicit(&lc->last_rx_tsc, memory_order_relaxed);
            uint64_t poll = atomic_load_explicit(&lc->last_poll_tsc, memory_order_relaxed);
            uint64_t since = rx > start ? rx : start;
            idle = poll > since && poll - since >= idle_ticks;
        }
        if (idle)
            atomic_store(&quit, true);
    }
}

/* ---- the control plane's view of the daemon (main lcore) ---------------------------------- */

/*
 * Every data lcore keeps its own copy of the subscriptions (for its instruments and its ring):
 * a command goes to all of them, or (a ring full) to none. This lcore is the rings' only
 * producer, so room seen here stays.
 */
static int op_send_command(void *ctx, const struct tp_ctl_cmd *cmd)
{
    struct tp_daemon *d = ctx;
    struct tp_ctl_cmd copy = *cmd; /* rte_ring takes a non-const source */
    for (unsigned l = 0; l < d->n_lcores; l++)
        if (rte_ring_free_count(d->lcores[l].lc.commands) == 0)
            return -ENOBUFS;
    for (unsigned l = 0; l < d->n_lcores; l++)
        rte_ring_enqueue_elem(d->lcores[l].lc.commands, &copy, sizeof(copy));
    return 0;
}

/* Every exported counter by name: the data lcore writes them, readers see whole values. */
/*
 * Every lcore's rx -> publish (gap_wait false) or gap-wait histogram, merged. The main lcore and
 * DPDK telemetry's thread both call it: no shared scratch.
 */
static void merge_histograms(struct tp_daemon *d, bool gap_wait, struct tp_histogram *out,
                             double *ns_per_unit)
{
    struct tp_histogram *one = malloc(2 * sizeof(*one));
    tp_hist_reset(out);
    for (unsigned l = 0; one != NULL && l < d->n_lcores; l++) {
        /* An lcore off its core mid-copy: its previous figures are left out of this one. */
        if (tp_dp_latency_copy(&d->lcores[l].lc, &one[0], &one[1]))
            tp_hist_merge(out, &one[gap_wait]);
    }
    free(one);
    *ns_per_unit = 1e9 / (double)d->lcores[0].lc.tsc_hz;
}

static void op_latency(void *ctx, struct tp_histogram *out, double *ns_per_unit)
{
    merge_histograms(ctx, false, out, ns_per_unit);
}

static void op_gap_wait(void *ctx, struct tp_histogram *out, double *ns_per_unit)
{
    merge_histograms(ctx, true, out, ns_per_unit);
}

/* A histogram's summary in ns as the exit summary prints it (count, min, quantiles, max). */
static json_t *histogram_json(struct tp_daemon *d, bool gap_wait)
{
    struct tp_histogram *h = malloc(sizeof(*h));
    char *text = NULL;
    size_t size = 0;
    FILE *mem = h != NULL ? open_memstream(&text, &size) : NULL;
    if (mem != NULL) {
        double scale;
        merge_histograms(d, gap_wait, h, &scale);
        tp_hist_print_json(mem, h, scale);
        fclose(mem);
    }
    json_t *v = text != NULL ? json_loads(text, 0, NULL) : NULL;
    free(text);
    free(h);
    return v != NULL ? v : json_null();
}

static json_t *op_stats(void *ctx)
{
    struct tp_daemon *d = ctx;
    json_t *o = json_object();
    for (unsigned l = 0; l < d->n_lcores; l++) {
        const struct tp_daemon_lcore *dl = &d->lcores[l];
        for (unsigned i = 0; i < dl->lc.n_exports; i++)
            json_object_set_new(o, dl->lc.exports[i].dst->name,
                                json_integer((json_int_t)tp_counter_get(dl->lc.exports[i].dst)));
        for (unsigned s = 0; s < TP_DP_MAX_CHANNELS; s++)
            for (unsigned i = 0; dl->slot_channel[s] != NULL && i < dl->slot_state[s].n_exports;
                 i++) {
                const struct tp_counter *k = dl->slot_state[s].exports[i].dst;
                json_object_set_new(o, k->name, json_integer((json_int_t)tp_counter_get(k)));
            }
    }
    json_object_set_new(o, "rx_to_publish_ns", histogram_json(d, false));
    json_object_set_new(o, "gap_wait_ns", histogram_json(d, true));
    if (watch != NULL) {
        json_object_set_new(o, "consumers", tp_watch_consumers(watch));
        json_object_set_new(o, "books", tp_watch_books(watch));
    }
    /* The bus writers' own counters (published, skipped, too large), registered by the bus, and
     * the NICs' (port=NAME.nic.*, the watch's). */
    const struct tp_counters *area = tp_daemon_bus_counters(d->bus);
    uint32_t n = atomic_load_explicit(&area->count, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < area->capacity; i++)
        if (strncmp(area->slots[i].name, "bus.", 4) == 0 ||
            strncmp(area->slots[i].name, "port=", 5) == 0)
            json_object_set_new(o, area->slots[i].name,
                                json_integer((json_int_t)tp_counter_get(&area->slots[i])));
    return o;
}

static json_t *op_status(void *ctx)
{
    struct tp_daemon *d = ctx;
    json_t *channels = json_array();
    for (unsigned c = 0; c < d->cfg->n_channels; c++) {
        const struct tp_cfg_channel *cc = &d->cfg->channels[c];
        json_array_append_new(channels,
                              json_pack("{s:s, s:s, s:s, s:i, s:i}", "name", cc->name, "protocol",
                                        tp_daemon_venue(cc)->name, "venue", cc->venue, "lcore",
                                        (int)d->lcores[d->lcore_of[c]].lc.lcore_id, "ring",
                                        (int)d->lcore_of[c]));
    }
    /* Each data lcore: its ring, its window of instrument ids (first, size, how many it has
     * handed out), its packets so far. */
    json_t *ids = json_array(), *lcores = json_array();
    for (unsigned l = 0; l < d->n_lcores; l++) {
        const struct tp_daemon_lcore *dl = &d->lcores[l];
        struct tp_cfg_window window = tp_config_lcore_window(d->cfg, l);
        json_array_append_new(ids, json_integer(dl->lc.lcore_id));
        json_array_append_new(
            lcores,
            json_pack("{s:i, s:i, s:I, s:I, s:I, s:I}", "lcore", (int)dl->lc.lcore_id, "ring",
                      (int)l, "first_instrument", (json_int_t)window.first_id, "window_ids",
                      (json_int_t)window.ids, "instruments",
                      (json_int_t)(tp_instruments_count(dl->registry) - window.first_id),
                      "rx_packets",
                      (json_int_t)atomic_load_explicit(&dl->lc.rx_packets, memory_order_relaxed)));
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o}", "instance", d->cfg->name, "version",
                     TP_VERSION, "commit", TP_COMMIT, "channels", channels, "data_lcores", ids,
                     "lcores", lcores);
}

static json_t *op_instruments(void *ctx, const char *pattern, unsigned limit)
{
    struct tp_daemon *d = ctx;
    json_t *list = tp_daemon_bus_instruments(d->bus, d->venue_names, pattern, limit);
    size_t i;
    json_t *row;
    json_array_foreach(list, i, row)
    {
        if (watch != NULL)
            tp_watch_describe(watch, (uint32_t)json_integer_value(json_object_get(row, "id")), row);
    }
    return list;
}

static json_t *op_book(void *ctx, const char *venue, const char *symbol, unsigned depth, char *err,
                       size_t err_size)
{
    struct tp_daemon *d = ctx;
    json_t *book = tp_daemon_bus_book(d->bus, d->venue_names, venue, symbol, depth, err, err_size);
    if (book != NULL && watch != NULL)
        tp_watch_describe(watch, (uint32_t)json_integer_value(json_object_get(book, "id")), book);
    return book;
}

static json_t *op_recover(void *ctx, const char *channel, char *err, size_t err_size)
{
    struct tp_daemon *d = ctx;
    if (tp_daemon_snapshot_request(d, channel, err, err_size) != 0)
        return NULL;
    tp_log(TP_LOG_GAP, TP_LOG_NOTICE, "channel %s: snapshot requested by the operator", channel);
    return json_pack("{s:s, s:s}", "channel", channel, "state", "requested");
}

static void op_metrics(void *ctx, struct tp_prom_buf *b)
{
    (void)ctx;
    if (watch != NULL)
        tp_watch_consumer_metrics(watch, b);
}

static unsigned op_consumers(void *ctx, struct tp_telemetry_consumer *out, unsigned max)
{
    (void)ctx;
    return watch != NULL ? tp_watch_consumers_copy(watch, out, max) : 0;
}

/*
 * The command ring and subscription table of each data lcore, then the control plane: socket,
 * reload (verb or SIGHUP; changes that need a restart are refused), metrics.
 */
static int build_control(struct tp_daemon *d)
{
    const struct tp_config *cfg = d->cfg;
    tp_daemon_name_venues(d);
    struct tp_interest_params ip = {.max_subscriptions =
                                        cfg->control.max_clients * cfg->control.max_subscriptions};
    for (unsigned l = 0; l < d->n_lcores; l++) {
        struct tp_dp_lcore *lc = &d->lcores[l].lc;
        char name[RTE_RING_NAMESIZE];
        snprintf(name, sizeof(name), "tp_ctl_commands_%u", lc->lcore_id);
        lc->commands = rte_ring_create_elem(name, sizeof(struct tp_ctl_cmd), 1024,
                                            d->lcores[l].socket, RING_F_SP_ENQ | RING_F_SC_DEQ);
        lc->interest = tp_daemon_alloc("interest", tp_interest_memsize(&ip), d->lcores[l].socket);
        if (lc->commands == NULL || lc->interest == NULL || tp_interest_init(lc->interest, &ip))
            return -ENOMEM;
        lc->bus = tp_daemon_bus_writer(d->bus, l);
        lc->beats = d->bus;
        lc->registry = d->lcores[l].registry;
    }
    struct tp_control_plane_hooks hooks = {
        .ops = {.ctx = d,
                .send_command = op_send_command,
                .status = op_status,
                .stats = op_stats,
                .instruments = op_instruments,
                .book = op_book,
                .recover = op_recover},
        .counters = tp_daemon_bus_counters(d->bus),
        .latency = op_latency,
        .gap_wait = op_gap_wait,
        .metrics = op_metrics,
        .apply = tp_daemon_apply,
        .ctx = d,
    };
    if (tp_watch_open(&watch, d) != 0)
        return -ENOMEM;
    int rc = tp_control_plane_open(&control, cfg, &hooks);
    if (rc != 0) {
        /* Never started degraded: without it there are no subscriptions and no reload. */
        tp_log(TP_LOG_CONTROL, TP_LOG_ERR, "control.socket: cannot create %s: %s",
               cfg->control.socket_path, strerror(-rc));
        control = NULL;
        return rc;
    }
    if (cfg->telemetry.dpdk_telemetry) {
        struct tp_telemetry_sources src = {.counters = tp_daemon_bus_counters(d->bus),
                                           .latency = op_latency,
                                           .gap_wait = op_gap_wait,
                                           .control = op_control_stats,
                                           .consumers = op_consumers,
                                           .ctx = d};
        rc = tp_dpdk_telemetry_register(&src);
        if (rc != 0)
            tp_log(TP_LOG_TELEMETRY, TP_LOG_ERR, "DPDK telemetry commands: %s", strerror(-rc));
    }
    return 0;
}

static void teardown(struct tp_daemon *d, bool unlink_bus)
{
    for (unsigned i = 0; i < d->n_ports_open; i++) {
        tp_port_close(&d->ports[i].port);
        tp_preload_close(&preloads[i]);
    }
    tp_daemon_bus_close(d->bus, unlink_bus);
    tp_daemon_bus_sweep_readers(d->cfg);
}

int main(int argc, char **argv)
{
    struct options o = {0};
    if (parse_options(argc, argv, &o) != 0) {
        usage(stderr);
        return 2;
    }
    static struct tp_daemon d;
    static struct tp_config_errors errs;
    d.cfg = calloc(1, sizeof(*d.cfg));
    if (d.cfg == NULL)
        return 1;
    if (tp_config_load_file(o.config, d.cfg, &errs) != 0 ||
        tp_config_check_resources(d.cfg, NULL, &errs) != 0) {
        char buf[8192];
        tp_config_errors_format(&errs, buf, sizeof(buf));
        fprintf(stderr, "tickplane: %s:\n%s", o.config, buf);
        return 2;
    }
    /* Before EAL: a second daemon of this instance stops here, having touched nothing. */
    static struct tp_instance_lock lock;
    char lock_err[512];
    if (tp_instance_lock(&lock, d.cfg->bus.path, d.cfg->name, lock_err, sizeof(lock_err)) != 0) {
        tp_log(TP_LOG_MAIN, TP_LOG_ERR, "%s", lock_err);
        return 1;
    }
    if (lock.previous != 0)
        tp_log(TP_LOG_MAIN, TP_LOG_WARNING,
               "instance \"%s\": took over the lock %s left by pid %d, which died holding it",
               d.cfg->name, lock.path, (int)lock.previous);
    d.n_lcores = d.cfg->n_lcores;
    /* The host checks only advise (tickplane-doctor explains each one): start regardless. */
    tp_hostcheck_startup(d.cfg, "/", stderr);
    char *eal_argv[TP_CFG_MAX_EAL_ARGS + 2 * TP_CFG_MAX_PORTS + 2 * TP_CFG_MAX_VDEVS + 16];
    int eal_argc =
        tp_config_eal_argv(d.cfg, argv[0], eal_argv, (int)(sizeof(eal_argv) / sizeof(eal_argv[0])));
    if (eal_argc < 0 || rte_eal_init(eal_argc, eal_argv) < 0) {
        tp_log(TP_LOG_MAIN, TP_LOG_ERR, "EAL initialisation failed");
        tp_instance_unlock(&lock, false);
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
        rc = build_lcores(&d);
    if (rc >= 0)
        rc = tp_daemon_snapshots_init(&d);
    if (rc >= 0) {
        tp_daemon_bus_heartbeat(d.bus); /* building the lcores' tables may take a while */
        rc = build_control(&d);
    }
    if (rc < 0) {
        tp_log(TP_LOG_MAIN, TP_LOG_ERR, "start-up failed: %s", strerror(-rc));
        teardown(&d, true);
        rte_eal_cleanup();
        tp_instance_unlock(&lock, true);
        return 1;
    }
    /* --start-after: at most 30 s, serving the control socket meanwhile. */
    for (double until = mono_s() + 30; o.start_after != NULL && mono_s() < until &&
                                       access(o.start_after, F_OK) != 0 && !atomic_load(&quit);)
        wait_a_tick(&d);
    double t0 = mono_s();
    for (unsigned l = 0; l < d.n_lcores; l++) {
        struct tp_dp_lcore *lc = &d.lcores[l].lc;
        rc = rte_eal_remote_launch(tp_dp_lcore_main, lc, lc->lcore_id);
        if (rc != 0) {
            tp_log(TP_LOG_MAIN, TP_LOG_ERR, "cannot launch lcore %u: %s", lc->lcore_id,
                   strerror(-rc));
            atomic_store(&quit, true);
            break;
        }
        tp_log(TP_LOG_MAIN, TP_LOG_INFO, "data lcore %u running (ring %u, %u channels)",
               lc->lcore_id, l, d.cfg->lcores[l].n_channels);
    }
    tp_log(TP_LOG_MAIN, TP_LOG_NOTICE,
           "tickplane %s (commit %s) running (%u data lcores); SIGINT/SIGTERM to stop", TP_VERSION,
           TP_COMMIT, d.n_lcores);
    control_loop(&d, &o);
    rte_eal_mp_wait_lcore();
    print_summary(&d, mono_s() - t0);
    if (control != NULL)
        tp_control_plane_close(control);
    tp_watch_close(watch);
    teardown(&d, o.unlink_bus);
    rte_eal_cleanup();
    tp_instance_unlock(&lock, o.unlink_bus);
    free(d.cfg);
    return 0;
}
