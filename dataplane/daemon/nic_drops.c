/* A port's NIC drops, scan by scan: see nic_drops.h. */
#include "nic_drops.h"

/* How much a counter rose; a counter that went back (a port reset its statistics) rose by 0. */
static unsigned long long rise(uint64_t now, uint64_t before)
{
    return now > before ? (unsigned long long)(now - before) : 0;
}

bool tp_nic_drops_scan(struct tp_nic_drops *d, const char *port, uint64_t imissed, uint64_t ierrors,
                       uint64_t rx_nombuf)
{
    unsigned long long missed = rise(imissed, d->imissed), errors = rise(ierrors, d->ierrors),
                       nombuf = rise(rx_nombuf, d->rx_nombuf);
    d->imissed = imissed;
    d->ierrors = ierrors;
    d->rx_nombuf = rx_nombuf;
    if (missed + errors + nombuf == 0)
        return false;
    tp_log_limited(&d->limit, TP_LOG_PORT, TP_LOG_WARNING,
                   "NIC drops rising: port %s: +%llu imissed, +%llu ierrors, +%llu rx_nombuf in "
                   "the last second (%llu, %llu, %llu in all)",
                   port, missed, errors, nombuf, (unsigned long long)imissed,
                   (unsigned long long)ierrors, (unsigned long long)rx_nombuf);
    return true;
}
