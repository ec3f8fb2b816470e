/*
 * The data lcore loop: see dataplane.h.
 */
#include "dataplane.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "bus/counters.h"
#include "bus_setup.h"
#include "interest.h"
#include "net_build.h"
#include "net_parse.h"
#include "publisher.h"
#include "tp_instruments.h"

#define BURST       32
#define FRAME_AHEAD 2     /* frames prefetched ahead of the one handled */
#define TIMER_US    100   /* gap windows, re-requests, IGMP: checked every 100 us */
#define COUNTER_US  10000 /* counters copied to shared memory every 10 ms */
/* A copy takes microseconds; a reader that keeps finding the lcore inside one has found an lcore
 * that is off its core mid-copy, and must not spin until it is back. */
#define LATENCY_COPY_TRIES 1000
#define HOST_FRAME_CAP     TP_HOST_FRAME_MAX

static int timestamp_offset = -1;
static uint64_t timestamp_flag; /* in ol_flags: a NIC wrote its receive time in the field */

int tp_dp_register_timestamp(void)
{
    return rte_mbuf_dyn_rx_timestamp_register(&timestamp_offset, &timestamp_flag);
}

static inline uint64_t *mbuf_rx_tsc(struct rte_mbuf *m)
{
    return RTE_MBUF_DYNFIELD(m, timestamp_offset, uint64_t *);
}

void tp_dp_mbuf_view(void *ctx, void *handle, const uint8_t **payload, uint16_t *len,
                     uint64_t *rx_tsc)
{
    (void)ctx;
    struct rte_mbuf *m = handle;
    struct tp_udp_view view;
    /* The frame was parsed when it arrived; parsing again is cheaper than storing the view. */
    if (tp_net_parse_udp(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, 0, &view) == 0) {
        *payload = view.payload;
        *len = view.payload_len;
    } else {
        *payload = NULL;
        *len = 0;
    }
    *rx_tsc = *mbuf_rx_tsc(m);
}

void tp_dp_mbuf_release(void *ctx, void *handle)
{
    (void)ctx;
    rte_pktmbuf_free(handle);
}

/*
 * Sends one frame on a port's tx queue (a copy into a fresh mbuf). Returns whether the port took
 * it; a frame it did not take is counted in tx_dropped (the host side keeps its frames due and
 * sends them again at the next tick, see ports/host.h).
 */
static bool send_frame(struct tp_dp_lcore *lc, struct tp_dp_port *p, const uint8_t *frame,
                       size_t len)
{
    struct rte_mbuf *m = p->can_send ? rte_pktmbuf_alloc(p->port.pool) : NULL;
    uint8_t *dst = m != NULL ? (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len) : NULL;
    if (dst != NULL) {
        memcpy(dst, frame, len);
        if (rte_eth_tx_burst(p->port.port_id, p->tx_queue, &m, 1) == 1) {
            lc->stats.tx_frames++;
            return true;
        }
    }
    rte_pktmbuf_free(m); /* NULL-safe */
    lc->stats.tx_dropped++;
    return false;
}

int tp_dp_send_rerequest(void *ctx, uint32_t channel, const uint8_t *payload, size_t len)
{
    struct tp_dp_lcore *lc = ctx;
    if (channel >= TP_DP_MAX_CHANNELS)
        return -EINVAL;
    const struct tp_dp_rerequest_target *t = &lc->set.slots[channel].rerequest;
    struct tp_dp_port *p = t->port < lc->n_ports ? lc->ports[t->port] : NULL;
    if (p == NULL || p->host == NULL || t->server_ip == 0)
        return -ENODEV;
    struct tp_udp_frame_spec spec = {
        .src_ip = p->ip,
        .dst_ip = t->server_ip,
        .src_port = (uint16_t)(TP_DP_RETRANS_PORT_BASE + channel),
        .dst_port = t->server_port,
    };
    memcpy(spec.src_mac, p->port.mac, 6);
    if (tp_host_resolve(p->host, t->server_ip, rte_rdtsc(), spec.dst_mac) != 0) {
        lc->stats.rerequests_unresolved++;
        return -EAGAIN; /* the ARP request is on its way; recovery asks again */
    }
    uint8_t frame[128];
    int flen = tp_net_build_udp(frame, sizeof(frame), &spec, payload, len);
    if (flen < 0)
        return flen;
    send_frame(lc, p, frame, (size_t)flen);
    return 0;
}

void tp_dp_membership(void *ctx, uint32_t channel, enum tp_line_role role, bool join)
{
    struct tp_dp_lcore *lc = ctx;
    if (channel < TP_DP_MAX_CHANNELS)
        tp_dp_set_membership(&lc->set, channel, role, join, rte_rdtsc());
}

static void export_counters(struct tp_dp_lcore *lc)
{
    for (unsigned i = 0; i < lc->n_exports; i++)
        tp_counter_set(lc->exports[i].dst, *lc->exports[i].src);
    for (unsigned c = 0; c < TP_DP_MAX_CHANNELS; c++) {
        const struct tp_dp_slot *s = &lc->set.slots[c];
        for (unsigned i = 0; lc->set.channels[c] != NULL && i < s->n_exports; i++)
            tp_counter_set(s->exports[i].dst, *s->exports[i].src);
    }
    uint64_t seq = atomic_load_explicit(&lc->latency_seq, memory_order_relaxed);
    atomic_store_explicit(&lc->latency_seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    memcpy(&lc->latency_export, &lc->latency, sizeof(lc->latency));
    memcpy(&lc->gap_wait_export, &lc->gap_wait, sizeof(lc->gap_wait));
    atomic_store_explicit(&lc->latency_seq, seq + 2, memory_order_release);
}

bool tp_dp_latency_copy(struct tp_dp_lcore *lc, struct tp_histogram *latency,
                        struct tp_histogram *gap_wait)
{
    for (unsigned tries = 0; tries < LATENCY_COPY_TRIES; tries++) {
        uint64_t before = atomic_load_explicit(&lc->latency_seq, memory_order_acquire);
        if (before & 1)
            continue; /* the lcore is inside its copy */
        memcpy(latency, &lc->latency_export, sizeof(*latency));
        memcpy(gap_wait, &lc->gap_wait_export, sizeof(*gap_wait));
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&lc->latency_seq, memory_order_relaxed) == before)
            return true;
    }
    return false;
}

static const char *venue_name(uint8_t venue)
{
    return venue == TP_VENUE_NASDAQ_ITCH ? "NASDAQ" : "CME";
}

/*
 * Applies subscription commands, then brings the bus's per-instrument interest up to date when
 * the subscriptions or the instruments changed. Without any subscription everything is
 * published (consumers may read the bus without using the control socket).
 */
static void apply_subscriptions(struct tp_dp_lcore *lc)
{
    struct tp_ctl_cmd cmds[8];
    unsigned n = rte_ring_dequeue_burst_elem(lc->commands, cmds, sizeof(cmds[0]), 8, NULL);
    for (unsigned i = 0; i < n; i++)
        tp_interest_apply(lc->interest, &cmds[i]);
    uint32_t count = tp_instruments_count(lc->registry);
    if (lc->interest->generation == lc->interest_generation && count == lc->interest_instruments)
        return;
    if (lc->interest->used == 0) {
        tp_daemon_bus_set_interest(lc->bus, UINT32_MAX, true);
    } else {
        /* This lcore's instruments: the others' are published by their own writers. */
        for (uint32_t id = tp_instruments_first_id(lc->registry); id < count; id++) {
            const struct tp_instrument *in = tp_instruments_get(lc->registry, id);
            tp_daemon_bus_set_interest(
                lc->bus, id,
                tp_interest_topics(lc->interest, venue_name(in->venue), in->symbol) != 0);
        }
    }
    lc->interest_generation = lc->interest->generation;
    lc->interest_instruments = count;
}

/* Reload commands (reconfig.h): everything one reload enqueued is dequeued in one go. */
static void apply_reconfig(struct tp_dp_lcore *lc, uint64_t now)
{
    struct tp_dp_cmd cmds[TP_DP_RECONFIG_RING];
    unsigned n =
        rte_ring_dequeue_burst_elem(lc->reconfig, cmds, sizeof(cmds[0]), TP_DP_RECONFIG_RING, NULL);
    if (n > 0)
        tp_dp_set_apply(&lc->set, cmds, n, now);
}

/*
 * One reading of the clock of each port whose NIC stamps packets (nic_clock.h), bracketed by
 * serialised TSC reads. A device read: every COUNTER_US, not per burst.
 */
static void read_nic_clocks(struct tp_dp_lcore *lc)
{
    for (unsigned i = 0; i < lc->n_ports; i++) {
        struct tp_dp_port *p = lc->ports[i];
        if (p == NULL || !p->port.rx_timestamp)
            continue;
        uint64_t nic_time, before = rte_rdtsc_precise();
        int rc = rte_eth_read_clock(p->port.port_id, &nic_time);
        uint64_t after = rte_rdtsc_precise();
        if (rc == 0)
            tp_nic_clock_reading(&p->nic_clock, nic_time, before, after);
    }
}

/* Chunks applied per timer tick: a chunk takes tens of microseconds, the tick is 100. */
#define SNAPSHOT_CHUNKS_PER_TICK 4

static uint64_t thread_cpu_ns(void);

/* When a snapshot step began: TSC, and this thread's CPU time. */
struct step_start {
    uint64_t tsc, cpu_ns;
};

static struct step_start step_start(void)
{
    return (struct step_start){.tsc = rte_rdtsc(), .cpu_ns = thread_cpu_ns()};
}

/*
 * The time a snapshot step took, kept when it is the longest: by the TSC (what a packet waiting
 * behind it saw, preemption by the host included) and in this thread's CPU time (what the step
 * itself costs; one clock_gettime a step, on the recovery path only).
 */
static void note_snapshot_step(struct tp_channel *ch, struct step_start started)
{
    uint64_t took = rte_rdtsc() - started.tsc, cpu = thread_cpu_ns() - started.cpu_ns;
    if (took > ch->snap.counters.longest_step_tsc)
        ch->snap.counters.longest_step_tsc = took;
    if (cpu > ch->snap.counters.longest_step_cpu_ns)
        ch->snap.counters.longest_step_cpu_ns = cpu;
}

/* Snapshot chunks from the control plane, for this lcore's channels only (a chunk for a channel
 * a reload detached meanwhile is dropped). */
static void apply_snapshots(struct tp_dp_lcore *lc, uint64_t now)
{
    void *chunks[SNAPSHOT_CHUNKS_PER_TICK];
    unsigned n = rte_ring_dequeue_burst(lc->snapshots, chunks, SNAPSHOT_CHUNKS_PER_TICK, NULL);
    for (unsigned i = 0; i < n; i++) {
        struct tp_snap_chunk *chunk = chunks[i];
        for (unsigned c = 0; c < TP_DP_MAX_CHANNELS; c++)
            if (lc->set.channels[c] != NULL && lc->set.channels[c] == chunk->channel) {
                struct step_start started = step_start();
                tp_channel_snapshot_chunk(lc->set.channels[c], chunk, now);
                note_snapshot_step(lc->set.channels[c], started);
                break;
            }
        rte_mempool_put(lc->snapshot_pool, chunk);
    }
}

static void run_timers(struct tp_dp_lcore *lc, uint64_t now)
{
    if (lc->commands != NULL)
        apply_subscriptions(lc);
    if (lc->reconfig != NULL)
        apply_reconfig(lc, now);
    if (lc->snapshots != NULL)
        apply_snapshots(lc, now);
    for (unsigned c = 0; c < TP_DP_MAX_CHANNELS; c++) {
        struct tp_channel *ch = lc->set.channels[c];
        if (ch == NULL)
            continue;
        bool replaying = ch->snap.state == TP_SNAP_REPLAYING;
        struct step_start started = {0};
        if (replaying)
            started = step_start();
        tp_channel_poll(ch, now);
        if (replaying)
            note_snapshot_step(ch, started);
    }
    uint8_t frame[HOST_FRAME_CAP];
    for (unsigned i = 0; i < lc->n_ports; i++) {
        struct tp_dp_port *p = lc->ports[i];
        if (p == NULL || p->host == NULL)
            continue;
        size_t len;
        while ((len = tp_host_next_frame(p->host, now, frame, sizeof(frame))) > 0) {
            bool sent = send_frame(lc, p, frame, len);
            tp_host_frame_sent(p->host, now, sent);
            if (!sent)
                break; /* the port is full: the frame stays due until the next tick */
        }
    }
}

/*
 * A frame's receive time in TSC ticks: the NIC's stamp where the port gives one and its clock
 * model is ready, else `now` (the TSC at rx_burst). A stamp the model puts after `now` (the
 * model's error, at most some tens of ns) is taken as `now`: a receive time is never later than
 * the burst that delivered the frame.
 */
static inline uint64_t receive_time(struct tp_dp_lcore *lc, const struct tp_dp_port *p,
                                    struct rte_mbuf *m, uint64_t now)
{
    if (!p->port.rx_timestamp || !(m->ol_flags & timestamp_flag) ||
        !tp_nic_clock_ready(&p->nic_clock))
        return now;
    lc->stats.rx_nic_time++;
    uint64_t rx = tp_nic_clock_tsc(&p->nic_clock, *mbuf_rx_tsc(m));
    return rx < now ? rx : now;
}

/*
 * Every line of a frame, FRAME_AHEAD frames before the loop reaches it: the software checksum
 * and the framing check read all of it. With frames written long before (a preloaded port)
 * one line a frame ahead left the checksum's loads of the others to miss.
 */
static inline void prefetch_frame(const struct rte_mbuf *m)
{
    uintptr_t at = (uintptr_t)rte_pktmbuf_mtod(m, const char *);
    uintptr_t end = at + m->data_len;
    for (at &= ~(uintptr_t)(RTE_CACHE_LINE_SIZE - 1); at < end; at += RTE_CACHE_LINE_SIZE)
        rte_prefetch0((const void *)at);
}

/* One frame: to its channel (returns true), to the host side, or dropped. */
static inline bool handle_frame(struct tp_dp_lcore *lc, struct tp_dp_port *p, struct rte_mbuf *m,
                                uint64_t now)
{
    if (unlikely(m->nb_segs != 1)) {
        lc->stats.multi_segment++;
        rte_pktmbuf_free(m);
        return false;
    }
    const uint8_t *frame = rte_pktmbuf_mtod(m, const uint8_t *);
    struct tp_udp_view view;
    /*
     * GOOD, or NONE (the field is wrong but the NIC checked the data): verified; BAD or UNKNOWN
     * (a virtual device, a NIC without the offload) leave the sum to the classifier.
     */
    uint64_t l4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
    bool udp_checksum_good = l4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD || l4 == RTE_MBUF_F_RX_L4_CKSUM_NONE;
    uint32_t line =
        tp_classify_frame_offload(lc->set.classifier, frame, m->data_len, udp_checksum_good, &view);
    if (likely(line != TP_CLASSIFY_NONE)) {
        struct tp_channel *ch = lc->set.channels[line / TP_ROLES];
        uint64_t rx = receive_time(lc, p, m, now);
        *mbuf_rx_tsc(m) = rx;
        if (ch == NULL || !tp_channel_packet(ch, (enum tp_line_role)(line % TP_ROLES), view.payload,
                                             view.payload_len, m, rx))
            rte_pktmbuf_free(m);
        return true;
    }
    if (p->host != NULL && tp_host_input(p->host, frame, m->data_len, now))
        lc->stats.host_frames++;
    rte_pktmbuf_free(m);
    return false;
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * At a counter period after feed frames (a system call every 10 ms at most): the CPU time since
 * the first, less the time since the last (this thread was running then: it polls, and polling
 * is not busy).
 */
static void note_busy_cpu(struct tp_dp_lcore *lc, uint64_t now, uint64_t previous_tick)
{
    uint64_t last = atomic_load_explicit(&lc->last_rx_tsc, memory_order_relaxed);
    if (lc->first_rx_tsc == 0 || last < previous_tick)
        return;
    uint64_t idle_ns = (now - last) * 1000000000u / lc->tsc_hz;
    uint64_t cpu = thread_cpu_ns() - lc->first_rx_cpu_ns;
    atomic_store_explicit(&lc->busy_cpu_ns, cpu > idle_ns ? cpu - idle_ns : 0,
                          memory_order_relaxed);
}

int tp_dp_lcore_main(void *arg)
{
    struct tp_dp_lcore *lc = arg;
    uint64_t timer_period = lc->tsc_hz * TIMER_US / 1000000;
    uint64_t counter_period = lc->tsc_hz * COUNTER_US / 1000000;
    uint64_t next_timer = 0, next_counters = 0;
    struct rte_mbuf *burst[BURST];

    while (!atomic_load_explicit(lc->quit, memory_order_relaxed)) {
        for (unsigned q = 0; q < lc->n_rxq; q++) {
            struct tp_dp_port *p = lc->ports[lc->rxq[q].port];
            uint16_t n = rte_eth_rx_burst(p->port.port_id, lc->rxq[q].queue, burst, BURST);
            if (n == 0)
                continue;
            uint64_t now = rte_rdtsc();
            lc->stats.rx_bursts++;
            lc->stats.rx_packets += n;
            bool feed = false;
            /*
             * Every mbuf header of the burst at once: the frame's address is in it, so the data
             * prefetch below waits for it. A NIC's PMD has just written the headers (they hit);
             * a device that hands over mbufs filled long before (a preloaded net_ring port)
             * gives them cold, and the loop then paid a memory load per frame.
             */
            for (uint16_t i = 0; i < n; i++)
                rte_prefetch0(burst[i]);
            /* The bus ring's shared tail moves once per burst, after its last event. */
            tp_publisher_begin_burst(lc->publisher);
            for (uint16_t i = 0; i < n && i < FRAME_AHEAD; i++)
                prefetch_frame(burst[i]);
            for (uint16_t i = 0; i < n; i++) {
                if (i + FRAME_AHEAD < n)
                    prefetch_frame(burst[i + FRAME_AHEAD]);
                feed |= handle_frame(lc, p, burst[i], now);
            }
            tp_publisher_end_burst(lc->publisher);
            /* Only feed traffic counts as activity (the idle exit of replays). */
            if (feed) {
                if (lc->first_rx_tsc == 0) {
                    lc->first_rx_tsc = now;
                    lc->first_rx_cpu_ns = thread_cpu_ns();
                }
                atomic_store_explicit(&lc->last_rx_tsc, rte_rdtsc(), memory_order_relaxed);
            }
            atomic_store_explicit(&lc->rx_packets, lc->stats.rx_packets, memory_order_relaxed);
        }
        uint64_t now = rte_rdtsc();
        if (now >= next_timer) {
            run_timers(lc, now);
            next_timer = now + timer_period;
        }
        if (now >= next_counters) {
            read_nic_clocks(lc);
            lc->stats.ticks++;
            export_counters(lc);
            if (lc->beats != NULL)
                tp_daemon_bus_heartbeat(lc->beats);
            note_busy_cpu(lc, now, atomic_load_explicit(&lc->last_poll_tsc, memory_order_relaxed));
            atomic_store_explicit(&lc->last_poll_tsc, now, memory_order_relaxed);
            next_counters = now + counter_period;
        }
    }
    export_counters(lc);
    return 0;
}
