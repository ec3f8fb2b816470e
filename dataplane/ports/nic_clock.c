/*
 * NIC clock -> TSC model: see nic_clock.h.
 */
#include "nic_clock.h"

#include <string.h>

void tp_nic_clock_init(struct tp_nic_clock *c, uint64_t span, uint64_t max_read)
{
    memset(c, 0, sizeof(*c));
    c->span = span;
    c->max_read = max_read;
}

bool tp_nic_clock_reading(struct tp_nic_clock *c, uint64_t nic, uint64_t tsc_before,
                          uint64_t tsc_after)
{
    if (tsc_after < tsc_before || tsc_after - tsc_before > c->max_read) {
        c->dropped++;
        return false;
    }
    uint64_t tsc = tsc_before + (tsc_after - tsc_before) / 2;
    if (c->readings == 0 || nic <= c->nic) {
        if (c->readings != 0)
            c->steps++;
        c->base_nic = nic;
        c->base_tsc = tsc;
    } else if (tsc - c->base_tsc >= c->span) {
        /* 128 bits: a long pause between readings makes the span's ticks exceed 32 bits. */
        unsigned __int128 slope =
            ((unsigned __int128)(tsc - c->base_tsc) << 32) / (unsigned __int128)(nic - c->base_nic);
        if (slope != 0 && slope <= UINT64_MAX)
            c->tsc_per_nic = (uint64_t)slope;
        c->base_nic = nic;
        c->base_tsc = tsc;
    }
    /*
     * Where inside its bracket the NIC clock was read is unknown: a reading's middle is off by up
     * to half the bracket. Once the slope is known, the anchor moves an eighth of the way from
     * where the line puts this reading to where the reading says, which averages that out over
     * the last readings while the slope follows the drift.
     */
    if (tp_nic_clock_ready(c) && c->readings != 0 && nic > c->nic) {
        uint64_t predicted = tp_nic_clock_tsc(c, nic);
        int64_t off = (int64_t)(tsc - predicted);
        /* Rounded: truncated, offsets under 8 ticks would never be corrected. */
        tsc = predicted + (uint64_t)((off + (off < 0 ? -4 : 4)) / 8);
    }
    c->nic = nic;
    c->tsc = tsc;
    c->readings++;
    return true;
}
