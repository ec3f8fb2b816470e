/*
 * The daemon's bus: see bus_setup.h.
 */
#include "bus_setup.h"

#include <stdlib.h>

#include "bus/bus.h"
#include "config.h"

struct tp_bus_writer *tp_daemon_bus_open(const struct tp_config *cfg, uint32_t counters, char *err,
                                         size_t err_len)
{
    struct tp_bus_writer *bus = calloc(1, sizeof(*bus));
    if (bus == NULL)
        return NULL;
    struct tp_bus_params bp = {
        .instance = cfg->name,
        .dir = cfg->bus.path[0] ? cfg->bus.path : NULL,
        .ring_bytes = cfg->bus.ring_bytes,
        .max_record = 8192, /* a DELETE_FROM of 255 levels is ~6 KiB */
        .instruments = cfg->instruments.capacity,
        .depth = cfg->bus.state_depth < TP_MAX_DEPTH ? cfg->bus.state_depth : TP_MAX_DEPTH,
        .counters = counters,
        .mode = cfg->bus.mode ? cfg->bus.mode : 0640,
        .gid = (gid_t)-1,
    };
    if (tp_bus_writer_open(bus, &bp, err, err_len) != 0) {
        free(bus);
        return NULL;
    }
    return bus;
}

struct tp_counters *tp_daemon_bus_counters(struct tp_bus_writer *bus)
{
    return bus->counters;
}

void tp_daemon_bus_close(struct tp_bus_writer *bus, bool unlink_files)
{
    if (bus == NULL)
        return;
    tp_bus_writer_close(bus, unlink_files);
    free(bus);
}
