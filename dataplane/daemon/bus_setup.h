/*
 * The daemon's bus: the shared-memory segments sized from the config.
 *
 * Kept apart from the rest of the daemon because the client headers that describe the segments
 * (tickplane/tickplane.h) and the data plane's book headers share some names; only this file and
 * the publisher's see the client side.
 */
#ifndef TP_DAEMON_BUS_SETUP_H
#define TP_DAEMON_BUS_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct tp_bus_writer;
struct tp_counters;
struct tp_config;

/* Creates the instance's segments. NULL with err filled on failure. */
struct tp_bus_writer *tp_daemon_bus_open(const struct tp_config *cfg, uint32_t counters, char *err,
                                         size_t err_len);

struct tp_counters *tp_daemon_bus_counters(struct tp_bus_writer *bus);

/* Marks the segments closed (and removes them with unlink_files). */
void tp_daemon_bus_close(struct tp_bus_writer *bus, bool unlink_files);

#endif
