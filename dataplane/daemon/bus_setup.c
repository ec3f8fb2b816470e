/*
 * The daemon's bus: see bus_setup.h.
 */
#include "bus_setup.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus/bus.h"
#include "config.h"
#include "glob.h"
#include "resources.h"

_Static_assert(TP_CFG_MAX_STATE_DEPTH == TP_MAX_DEPTH, "bus.state_depth's range is the table's");

/* The writers and how many there are (tp_daemon_bus_open hands out `writers`). */
struct daemon_bus {
    unsigned n;
    struct tp_bus_writer writers[];
};

static struct daemon_bus *daemon_bus_of(struct tp_bus_writer *bus)
{
    return (struct daemon_bus *)((char *)bus - offsetof(struct daemon_bus, writers));
}

struct tp_bus_writer *tp_daemon_bus_open(const struct tp_config *cfg, uint32_t counters, char *err,
                                         size_t err_len)
{
    gid_t gid;
    if (tp_config_group_gid(cfg->bus.group, &gid) != 0) {
        snprintf(err, err_len, "bus.group: no such group \"%s\"", cfg->bus.group);
        return NULL;
    }
    unsigned n = tp_config_bus_rings(cfg);
    struct daemon_bus *db = calloc(1, sizeof(*db) + n * sizeof(db->writers[0]));
    if (db == NULL)
        return NULL;
    db->n = n;
    struct tp_bus_params bp;
    tp_config_bus_params(cfg, &bp);
    bp.counters = counters;
    bp.gid = gid;
    if (tp_bus_writers_open(db->writers, n, &bp, err, err_len) != 0) {
        free(db);
        return NULL;
    }
    /* Published a few microseconds ago without a heartbeat (readers accept that): it starts now,
     * before the start-up's slower steps. */
    tp_daemon_bus_heartbeat(db->writers);
    return db->writers;
}

void tp_daemon_bus_heartbeat(struct tp_bus_writer *bus)
{
    struct daemon_bus *db = daemon_bus_of(bus);
    uint64_t now = tp_seg_clock_ns();
    for (unsigned k = 0; k < db->n; k++)
        tp_seg_heartbeat(&db->writers[k].ring_seg, now);
    tp_seg_heartbeat(&bus->state_seg, now); /* writer 0's, shared by the others */
    tp_seg_heartbeat(&bus->counters_seg, now);
}

struct tp_bus_writer *tp_daemon_bus_writer(struct tp_bus_writer *bus, unsigned k)
{
    return k < daemon_bus_of(bus)->n ? &bus[k] : NULL;
}

struct tp_counters *tp_daemon_bus_counters(struct tp_bus_writer *bus)
{
    return bus->counters;
}

unsigned tp_daemon_bus_sweep_readers(const struct tp_config *cfg)
{
    return tp_bus_sweep_readers(cfg->bus.path[0] ? cfg->bus.path : NULL, cfg->name);
}

void tp_daemon_bus_close(struct tp_bus_writer *bus, bool unlink_files)
{
    if (bus == NULL)
        return;
    struct daemon_bus *db = daemon_bus_of(bus);
    for (unsigned k = db->n; k-- > 0;) /* ring 0 last: the others use its state table */
        tp_bus_writer_close(&db->writers[k], unlink_files);
    free(db);
}

void tp_daemon_bus_set_interest(struct tp_bus_writer *bus, uint32_t id, bool interested)
{
    if (id == UINT32_MAX)
        tp_bus_set_interest_all(bus, interested);
    else
        tp_bus_set_interest(bus, id, interested);
}

uint32_t tp_daemon_bus_instrument_slots(struct tp_bus_writer *bus)
{
    return bus->state->instruments;
}

int tp_daemon_bus_book_brief(struct tp_bus_writer *bus, uint32_t id,
                             struct tp_daemon_book_brief *out)
{
    static struct tp_instrument_state st;
    int rc = tp_state_read(bus->state, id, &st, 100);
    if (rc != 0)
        return rc;
    *out = (struct tp_daemon_book_brief){.defined = st.book.symbol[0] != '\0',
                                         .venue = st.book.venue,
                                         .stale = (st.book.flags & TP_EVENT_F_STALE) != 0,
                                         .recovering = (st.book.flags & TP_EVENT_F_RECOVERING) != 0,
                                         .halted = st.book.trading_status == TP_STATUS_HALTED ||
                                                   st.book.trading_status == TP_STATUS_PAUSED};
    return 0;
}

static const char *status_name(uint8_t status)
{
    static const char *const names[] = {"unknown", "pre_open",   "trading",
                                        "halted",  "paused",     "quotation_only",
                                        "closed",  "post_close", "not_available"};
    return status < sizeof(names) / sizeof(names[0]) ? names[status] : "unknown";
}

/* The entry's symbol as a C string (state symbols are NUL-padded, not always terminated). */
static void entry_symbol(const struct tp_instrument_state *st, char out[TP_SYMBOL_LEN + 1])
{
    memcpy(out, st->book.symbol, TP_SYMBOL_LEN);
    out[TP_SYMBOL_LEN] = '\0';
}

/* The tpout venue of a state entry as an index of venue_names (one the bus does not number: 0). */
static unsigned tpout_venue(uint8_t venue)
{
    return venue < TP_TPOUT_VENUES ? venue : 0;
}

json_t *tp_daemon_bus_instruments(struct tp_bus_writer *bus,
                                  const char *const venue_names[TP_TPOUT_VENUES],
                                  const char *pattern, unsigned limit)
{
    static struct tp_instrument_state st;
    json_t *list = json_array();
    for (uint32_t id = 0; id < bus->state->instruments && json_array_size(list) < limit; id++) {
        char symbol[TP_SYMBOL_LEN + 1];
        if (tp_state_read(bus->state, id, &st, 100) != 0 || st.book.symbol[0] == '\0')
            continue;
        entry_symbol(&st, symbol);
        if (pattern != NULL && !tp_glob_match(pattern, symbol))
            continue;
        json_array_append_new(
            list, json_pack("{s:i, s:s, s:s, s:s, s:b, s:b, s:b}", "id", (json_int_t)id, "symbol",
                            symbol, "venue", venue_names[tpout_venue(st.book.venue)], "status",
                            status_name(st.book.trading_status), "recovering",
                            (st.book.flags & TP_EVENT_F_RECOVERING) != 0, "stale",
                            (st.book.flags & TP_EVENT_F_STALE) != 0, "orders_incomplete",
                            (st.book.flags & TP_EVENT_F_ORDERS_INCOMPLETE) != 0));
    }
    return list;
}

static json_t *levels_json(const struct tp_level *levels, unsigned n)
{
    json_t *a = json_array();
    for (unsigned i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{s:I, s:I, s:i}", "price9", (json_int_t)levels[i].price,
                                           "qty", (json_int_t)levels[i].qty, "orders",
                                           levels[i].orders));
    return a;
}

json_t *tp_daemon_bus_book(struct tp_bus_writer *bus,
                           const char *const venue_names[TP_TPOUT_VENUES], const char *venue,
                           const char *symbol, unsigned depth, char *err, size_t err_size)
{
    static struct tp_instrument_state st;
    for (uint32_t id = 0; id < bus->state->instruments; id++) {
        char name[TP_SYMBOL_LEN + 1];
        if (tp_state_read(bus->state, id, &st, 100) != 0 || st.book.symbol[0] == '\0')
            continue;
        entry_symbol(&st, name);
        if (strcmp(name, symbol) != 0 ||
            (venue != NULL && strcmp(venue, venue_names[tpout_venue(st.book.venue)]) != 0))
            continue;
        unsigned bids = st.book.bid_levels < depth ? st.book.bid_levels : depth;
        unsigned asks = st.book.ask_levels < depth ? st.book.ask_levels : depth;
        return json_pack("{s:i, s:s, s:s, s:s, s:o, s:o, s:b, s:b, s:b}", "id", (json_int_t)id,
                         "venue", venue_names[tpout_venue(st.book.venue)], "symbol", name, "status",
                         status_name(st.book.trading_status), "bids", levels_json(st.bids, bids),
                         "asks", levels_json(st.asks, asks), "recovering",
                         (st.book.flags & TP_EVENT_F_RECOVERING) != 0, "stale",
                         (st.book.flags & TP_EVENT_F_STALE) != 0, "orders_incomplete",
                         (st.book.flags & TP_EVENT_F_ORDERS_INCOMPLETE) != 0);
    }
    snprintf(err, err_size, "no instrument %s", symbol);
    return NULL;
}
