/*
 * NIC clock -> TSC: turns the receive time a NIC stamps on a packet into the TSC tick of that
 * instant, so that an event's receive time is the wire's and still in the one clock the data
 * plane, the latency histograms and the consumers use.
 *
 * The model is a line through paired readings: the NIC clock (rte_eth_read_clock) read between
 * two TSC reads. The latest reading anchors the line; its slope (TSC ticks per NIC tick, whatever
 * the NIC's unit: nanoseconds, or a device tick) is measured between readings at least `span`
 * TSC ticks apart, and measured again over every following span, so that the drift between the
 * two oscillators is followed. A stamp is mapped from the anchor, which follows the readings
 * through a running average (a single reading is off by up to half its TSC bracket, not known
 * where inside it the NIC clock was read): with readings every 10 ms bracketed by at most 1000
 * ticks, stamps map within about 100 ns of the TSC.
 *
 * Promises:
 *  - A reading whose TSC bracket is wider than `max_read` is dropped (the lcore was interrupted
 *    mid-read: its middle says little about when the NIC clock was read).
 *  - A reading earlier on the NIC clock than the previous one (the clock was stepped back: reset,
 *    PTP) restarts the slope's measurement from it; the slope known so far stays in use.
 *  - Until the first slope is known, tp_nic_clock_ready() is false and nothing should be mapped.
 *  - Plain C, no DPDK, no allocation; one writer (the data lcore polling the port).
 */
#ifndef TP_PORTS_NIC_CLOCK_H
#define TP_PORTS_NIC_CLOCK_H

#include <stdbool.h>
#include <stdint.h>

struct tp_nic_clock {
    uint64_t nic, tsc;           /* the anchor: the latest reading's NIC time and its TSC */
    uint64_t base_nic, base_tsc; /* the reading the slope is being measured from */
    uint64_t tsc_per_nic; /* slope, TSC ticks per NIC tick in 32.32 fixed point; 0: unknown */
    uint64_t span;        /* TSC ticks between the readings a slope is measured over */
    uint64_t max_read;    /* widest TSC bracket of a reading that is kept */
    uint64_t readings;    /* kept */
    uint64_t dropped;     /* bracket too wide */
    uint64_t steps;       /* NIC clock went back: measurement restarted */
};

/* An empty model: slopes over `span` TSC ticks, readings bracketed by at most `max_read`. */
void tp_nic_clock_init(struct tp_nic_clock *c, uint64_t span, uint64_t max_read);

/*
 * A reading: the NIC clock said `nic` between TSC tsc_before and tsc_after. Returns whether it
 * was kept.
 */
bool tp_nic_clock_reading(struct tp_nic_clock *c, uint64_t nic, uint64_t tsc_before,
                          uint64_t tsc_after);

static inline bool tp_nic_clock_ready(const struct tp_nic_clock *c)
{
    return c->tsc_per_nic != 0;
}

/* The TSC tick at NIC time nic (before or after the latest reading). Only once ready. */
static inline uint64_t tp_nic_clock_tsc(const struct tp_nic_clock *c, uint64_t nic)
{
    __int128 ticks = (__int128)(int64_t)(nic - c->nic) * (__int128)c->tsc_per_nic;
    return c->tsc + (uint64_t)(int64_t)((ticks + ((__int128)1 << 31)) >> 32); /* rounded */
}

#endif /* TP_PORTS_NIC_CLOCK_H */
