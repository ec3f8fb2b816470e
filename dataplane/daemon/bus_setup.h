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

#include <jansson.h>

#include "tp_venue.h"

struct tp_bus_writer;
struct tp_counters;
struct tp_config;

/*
 * Creates the instance's segments: one writer (ring) per data lcore of cfg (at least one), the
 * writers in one array (writer k: tp_daemon_bus_writer(bus, k), the ring of cfg->lcores[k]).
 * NULL with err filled on failure.
 */
struct tp_bus_writer *tp_daemon_bus_open(const struct tp_config *cfg, uint32_t counters, char *err,
                                         size_t err_len);

struct tp_bus_writer *tp_daemon_bus_writer(struct tp_bus_writer *bus, unsigned k);

struct tp_counters *tp_daemon_bus_counters(struct tp_bus_writer *bus);

/* Data lcore: whether records of instrument id are published (all of them, with id UINT32_MAX). */
void tp_daemon_bus_set_interest(struct tp_bus_writer *bus, uint32_t id, bool interested);

/*
 * Control plane (main lcore), from the conflated state table (consistent copies): the instruments
 * whose symbol matches pattern, at most limit, as [{"id", "symbol", "venue", "status",
 * "recovering", "stale"}] (a removed channel's instruments stay, stale), and one
 * instrument's book as the control socket's "book" verb shows it. venue_names[v] names tpout
 * venue v (0 cme, 1 nasdaq) as the config does.
 */
json_t *tp_daemon_bus_instruments(struct tp_bus_writer *bus,
                                  const char *const venue_names[TP_TPOUT_VENUES],
                                  const char *pattern, unsigned limit);
json_t *tp_daemon_bus_book(struct tp_bus_writer *bus,
                           const char *const venue_names[TP_TPOUT_VENUES], const char *venue,
                           const char *symbol, unsigned depth, char *err, size_t err_size);

/* Main lcore: what the state table says of an instrument's book, for the operator's view. */
struct tp_daemon_book_brief {
    bool defined;    /* has a symbol */
    uint8_t venue;   /* tpout venue */
    bool stale;      /* TP_EVENT_F_STALE on its last event */
    bool recovering; /* TP_EVENT_F_RECOVERING */
    bool halted;     /* trading halted or paused */
};
/* Instruments the state table holds (ids 0..n-1). */
uint32_t tp_daemon_bus_instrument_slots(struct tp_bus_writer *bus);
/* 0, or -EAGAIN / -ERANGE (tp_state_read). */
int tp_daemon_bus_book_brief(struct tp_bus_writer *bus, uint32_t id,
                             struct tp_daemon_book_brief *out);

/*
 * One heartbeat in every segment of the instance (CLOCK_MONOTONIC, see segment.h), by the main
 * lcore (first by tp_daemon_bus_open, then at least every 10 ms by the control loop) and by
 * every data lcore (at its counter exports, 100 a second, traffic or not): the process is alive
 * while any of its threads runs, so a main lcore held up for seconds (a reload's work, a loaded
 * machine) is not reported dead while its data lcores run, nor the reverse. The cost on a data
 * lcore is one clock read and a few compare-and-swaps every 10 ms. A wedged data lcore is
 * another failure, seen in its counters ("dp.ticks" stops growing, see dataplane.h). Readers
 * learn how old a beat may be from the headers (bus.heartbeat_timeout_ms).
 */
void tp_daemon_bus_heartbeat(struct tp_bus_writer *bus);

/* Removes the segments of the instance's readers that are gone (tp_bus_sweep_readers). */
unsigned tp_daemon_bus_sweep_readers(const struct tp_config *cfg);

/* Marks every writer's segments closed (and removes them with unlink_files). */
void tp_daemon_bus_close(struct tp_bus_writer *bus, bool unlink_files);

#endif
