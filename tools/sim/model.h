/*
 * The simulator's order-flow model: one venue, many instruments, a stream of book events.
 *
 * Promises:
 * - Deterministic: the same parameters (seed included) give the same events, byte for byte.
 * - Activity is Zipf-skewed over instruments (a few carry most events), orders rest near the top
 *   of book, books never cross (a bid is always below the best ask), and time advances in
 *   microbursts at fixed periods between exponentially spaced quiet events.
 * - The model's live orders ARE the ground truth: tp_sim_model_levels() aggregates them into
 *   price levels with a plain sort, independently of tickplane's book code.
 * Events are venue-neutral; the ITCH and MDP3 encoders turn the same stream into their formats.
 */
#ifndef TP_SIM_MODEL_H
#define TP_SIM_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "rng.h"

enum tp_sim_event_kind {
    TP_SIM_EV_ADD = 1, /* new displayed order: order_id, side, price9, qty */
    TP_SIM_EV_CANCEL,  /* partial cancel: qty removed, remaining left on the book */
    TP_SIM_EV_DELETE,  /* order_id removed from the book */
    TP_SIM_EV_REPLACE, /* order_id removed, new_order_id added (same side) at price9, qty */
    TP_SIM_EV_EXECUTE, /* qty of order_id traded at price9; removed when remaining is 0 */
    TP_SIM_EV_TRADE,   /* trade against a hidden order: no displayed book change */
    TP_SIM_EV_STATUS,  /* instrument trading status changed to status */
};

enum tp_sim_status {
    TP_SIM_STATUS_TRADING = 1,
    TP_SIM_STATUS_HALTED,
};

struct tp_sim_event {
    uint64_t time_ns;      /* nanoseconds since midnight, venue time */
    uint64_t order_id;     /* order concerned (ADD: the new order) */
    uint64_t new_order_id; /* REPLACE: the order that replaces order_id */
    uint64_t match_id;     /* EXECUTE and TRADE: venue match number */
    int64_t price9;        /* ADD/REPLACE: order price; EXECUTE/TRADE: trade price (1e-9) */
    int64_t qty;           /* ADD/REPLACE: size; CANCEL: removed; EXECUTE/TRADE: traded */
    int64_t remaining;     /* CANCEL/EXECUTE: order size left afterwards */
    int64_t old_price9;    /* REPLACE/DELETE/CANCEL/EXECUTE: price of order_id before the event */
    int64_t old_qty;       /* REPLACE/DELETE: size of order_id before the event */
    uint32_t instrument;   /* dense id 0..instruments-1 */
    uint8_t kind;          /* enum tp_sim_event_kind */
    uint8_t side;          /* 'B' (bid) or 'S' (ask) */
    uint8_t status;        /* STATUS: enum tp_sim_status */
    uint8_t with_price;    /* EXECUTE: the venue reports the price (ITCH 'C') */
    uint8_t end_of_event;  /* 1 on the last event of a matching event */
};

/* Relative weights of the event kinds (normalized by the model). */
struct tp_sim_mix {
    double add, cancel, del, replace, execute, trade, sweep, status;
};

struct tp_sim_params {
    uint64_t seed;
    uint32_t instruments;     /* number of instruments (>= 1) */
    double zipf_s;            /* activity skew exponent (1.0: classic Zipf) */
    struct tp_sim_mix mix;    /* event mix */
    uint32_t start_orders;    /* orders per side seeded into each book at the start */
    uint32_t max_orders;      /* per instrument: above this, adds turn into deletes */
    uint64_t start_time_ns;   /* since midnight (default 09:30) */
    uint64_t mean_gap_ns;     /* mean gap between quiet events */
    uint64_t burst_period_ns; /* a microburst starts at every multiple of this (0: none) */
    uint32_t burst_events;    /* events in a microburst */
    uint64_t burst_gap_ns;    /* gap between events inside a burst */
};

/* Fills defaults: the benchmark mix (40% adds, 38% deletes, 10% replaces, 10% exec+cancel). */
void tp_sim_params_default(struct tp_sim_params *p);

struct tp_sim_instrument {
    char symbol[9];    /* 8 characters, space padded, NUL terminated */
    int64_t tick9;     /* price increment in 1e-9 */
    int64_t ref_ticks; /* reference price when a side is empty */
    uint8_t status;    /* enum tp_sim_status */
    uint32_t *orders;  /* indices into the order pool, unordered */
    uint32_t n_orders;
    uint32_t cap_orders;
    uint64_t volume;     /* total traded quantity */
    uint64_t trades;     /* number of executions and trades */
    int64_t last_price9; /* last trade price, 0 if none */
    int64_t last_qty;    /* last trade size, 0 if none */
};

struct tp_sim_order {
    uint64_t id;
    int64_t ticks;
    int64_t qty;
    uint32_t instrument;
    uint32_t slot; /* position in the instrument's orders array */
    uint8_t side;
};

struct tp_sim_model {
    struct tp_sim_params params;
    struct tp_sim_rng rng;
    struct tp_sim_zipf zipf;
    uint32_t *rank_to_instrument; /* seeded permutation: the busiest is not always id 0 */
    struct tp_sim_instrument *instruments;
    struct tp_sim_order *pool;
    uint32_t *free_slots;
    uint32_t n_pool, cap_pool, n_free;
    double mix_cdf[8];
    uint64_t next_order_id;
    uint64_t next_match_id;
    uint64_t now_ns;
    uint64_t next_burst_ns;
    uint32_t burst_left;
    uint32_t seed_instrument; /* start-up seeding cursor (instrument, then order count) */
    uint32_t seed_count;
    struct tp_sim_event *events; /* events of the last step */
    size_t cap_events;
    uint64_t events_total;
};

/* Returns 0 or a negative errno. */
int tp_sim_model_init(struct tp_sim_model *m, const struct tp_sim_params *p);
void tp_sim_model_free(struct tp_sim_model *m);

/*
 * Advances the model by one matching event and returns its events (>= 1) in *events, valid until
 * the next call. The books already reflect them when this returns. Returns a negative errno on
 * allocation failure.
 */
int tp_sim_model_step(struct tp_sim_model *m, const struct tp_sim_event **events);

struct tp_sim_level {
    int64_t price9;
    int64_t qty;
    uint32_t orders;
};

/*
 * Aggregates the live orders of one side into price levels, best first, at most depth of them.
 * Returns the number of levels written.
 */
uint32_t tp_sim_model_levels(const struct tp_sim_model *m, uint32_t instrument, uint8_t side,
                             struct tp_sim_level *out, uint32_t depth);

/*
 * Implied levels (what spreads would imply; MDP3 only): the outright levels of the side moved one
 * tick away from the top, with half their quantity rounded up; orders are unknown (0).
 */
#define TP_SIM_IMPLIED_DEPTH 2
uint32_t tp_sim_model_implied_levels(const struct tp_sim_model *m, uint32_t instrument,
                                     uint8_t side, struct tp_sim_level *out, uint32_t depth);

#endif
