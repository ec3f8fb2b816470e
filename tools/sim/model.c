/*
 * Order-flow model. Clarity over speed: books are unordered arrays of live orders per
 * instrument and every "best price" question is answered by a plain scan.
 */
#include "model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { MIX_ADD, MIX_CANCEL, MIX_DEL, MIX_REPLACE, MIX_EXECUTE, MIX_TRADE, MIX_SWEEP, MIX_STATUS };

void tp_sim_params_default(struct tp_sim_params *p)
{
    memset(p, 0, sizeof(*p));
    p->seed = 1;
    p->instruments = 200;
    p->zipf_s = 1.0;
    p->mix = (struct tp_sim_mix){.add = 0.40,
                                 .cancel = 0.035,
                                 .del = 0.38,
                                 .replace = 0.10,
                                 .execute = 0.06,
                                 .trade = 0.015,
                                 .sweep = 0.005,
                                 .status = 0.0005};
    p->start_orders = 5;
    p->max_orders = 400;
    p->start_time_ns = (9ULL * 3600 + 30 * 60) * 1000000000ULL;
    p->mean_gap_ns = 2000;
    p->burst_period_ns = 1000000;
    p->burst_events = 100;
    p->burst_gap_ns = 50;
}

/* a is strictly better than b for the given side (higher bid, lower ask). */
static int better(uint8_t side, int64_t a, int64_t b)
{
    return side == 'B' ? a > b : a < b;
}

static int best_ticks(const struct tp_sim_model *m, uint32_t instrument, uint8_t side,
                      int64_t *best)
{
    const struct tp_sim_instrument *in = &m->instruments[instrument];
    int found = 0;
    for (uint32_t i = 0; i < in->n_orders; i++) {
        const struct tp_sim_order *o = &m->pool[in->orders[i]];
        if (o->side == side && (!found || better(side, o->ticks, *best))) {
            *best = o->ticks;
            found = 1;
        }
    }
    return found;
}

static void make_symbol(char out[9], uint32_t index)
{
    memset(out, ' ', 8);
    out[8] = '\0';
    for (int pos = 3; pos >= 0; pos--) {
        out[pos] = (char)('A' + index % 26);
        index /= 26;
    }
}

int tp_sim_model_init(struct tp_sim_model *m, const struct tp_sim_params *p)
{
    memset(m, 0, sizeof(*m));
    if (p->instruments == 0 || p->instruments > 26 * 26 * 26 * 26)
        return -EINVAL;
    m->params = *p;
    tp_sim_rng_seed(&m->rng, p->seed);
    int rc = tp_sim_zipf_init(&m->zipf, p->instruments, p->zipf_s);
    if (rc < 0)
        return rc;
    m->rank_to_instrument = malloc(sizeof(uint32_t) * p->instruments);
    m->instruments = calloc(p->instruments, sizeof(*m->instruments));
    if (m->rank_to_instrument == NULL || m->instruments == NULL) {
        tp_sim_model_free(m);
        return -ENOMEM;
    }
    /* Fisher-Yates shuffle of the activity ranks. */
    for (uint32_t i = 0; i < p->instruments; i++)
        m->rank_to_instrument[i] = i;
    for (uint32_t i = p->instruments - 1; i > 0; i--) {
        uint32_t j = (uint32_t)tp_sim_rng_below(&m->rng, (uint64_t)i + 1);
        uint32_t t = m->rank_to_instrument[i];
        m->rank_to_instrument[i] = m->rank_to_instrument[j];
        m->rank_to_instrument[j] = t;
    }
    for (uint32_t i = 0; i < p->instruments; i++) {
        struct tp_sim_instrument *in = &m->instruments[i];
        make_symbol(in->symbol, i);
        in->tick9 = 10000000; /* 0.01 */
        in->ref_ticks = 1000 + (int64_t)tp_sim_rng_below(&m->rng, 49000);
        in->status = TP_SIM_STATUS_TRADING;
    }
    const struct tp_sim_mix *x = &p->mix;
    double w[8] = {x->add,     x->cancel, x->del,   x->replace,
                   x->execute, x->trade,  x->sweep, x->status};
    double total = 0.0;
    for (int i = 0; i < 8; i++)
        total += w[i] > 0.0 ? w[i] : 0.0;
    if (total <= 0.0) {
        tp_sim_model_free(m);
        return -EINVAL;
    }
    double acc = 0.0;
    for (int i = 0; i < 8; i++) {
        acc += w[i] > 0.0 ? w[i] : 0.0;
        m->mix_cdf[i] = acc / total;
    }
    m->next_order_id = 1;
    m->next_match_id = 1;
    m->now_ns = p->start_time_ns;
    m->next_burst_ns = p->burst_period_ns
                           ? (p->start_time_ns / p->burst_period_ns + 1) * p->burst_period_ns
                           : UINT64_MAX;
    return 0;
}

void tp_sim_model_free(struct tp_sim_model *m)
{
    if (m->instruments != NULL)
        for (uint32_t i = 0; i < m->params.instruments; i++)
            free(m->instruments[i].orders);
    free(m->instruments);
    free(m->rank_to_instrument);
    free(m->pool);
    free(m->free_slots);
    free(m->events);
    tp_sim_zipf_free(&m->zipf);
    memset(m, 0, sizeof(*m));
}

static struct tp_sim_event *push_event(struct tp_sim_model *m, size_t *n, uint32_t instrument,
                                       uint8_t kind)
{
    if (*n == m->cap_events) {
        size_t cap = m->cap_events ? m->cap_events * 2 : 16;
        struct tp_sim_event *ev = realloc(m->events, cap * sizeof(*ev));
        if (ev == NULL)
            return NULL;
        m->events = ev;
        m->cap_events = cap;
    }
    struct tp_sim_event *e = &m->events[(*n)++];
    memset(e, 0, sizeof(*e));
    e->time_ns = m->now_ns;
    e->instrument = instrument;
    e->kind = kind;
    return e;
}

static int insert_order(struct tp_sim_model *m, uint32_t instrument, uint8_t side, int64_t ticks,
                        int64_t qty, uint64_t id)
{
    uint32_t idx;
    if (m->n_free > 0) {
        idx = m->free_slots[--m->n_free];
    } else {
        if (m->n_pool == m->cap_pool) {
            uint32_t cap = m->cap_pool ? m->cap_pool * 2 : 1024;
            struct tp_sim_order *pool = realloc(m->pool, cap * sizeof(*pool));
            uint32_t *fs = realloc(m->free_slots, cap * sizeof(*fs));
            if (pool != NULL)
                m->pool = pool;
            if (fs != NULL)
                m->free_slots = fs;
            if (pool == NULL || fs == NULL)
                return -ENOMEM;
            m->cap_pool = cap;
        }
        idx = m->n_pool++;
    }
    struct tp_sim_instrument *in = &m->instruments[instrument];
    if (in->n_orders == in->cap_orders) {
        uint32_t cap = in->cap_orders ? in->cap_orders * 2 : 16;
        uint32_t *orders = realloc(in->orders, cap * sizeof(*orders));
        if (orders == NULL)
            return -ENOMEM;
        in->orders = orders;
        in->cap_orders = cap;
    }
    m->pool[idx] = (struct tp_sim_order){.id = id,
                                         .ticks = ticks,
                                         .qty = qty,
                                         .instrument = instrument,
                                         .slot = in->n_orders,
                                         .side = side};
    in->orders[in->n_orders++] = idx;
    return 0;
}

static void remove_order(struct tp_sim_model *m, uint32_t idx)
{
    struct tp_sim_order *o = &m->pool[idx];
    struct tp_sim_instrument *in = &m->instruments[o->instrument];
    uint32_t last = in->orders[--in->n_orders];
    in->orders[o->slot] = last;
    m->pool[last].slot = o->slot;
    m->free_slots[m->n_free++] = idx;
}

static int64_t draw_qty(struct tp_sim_model *m)
{
    if (tp_sim_rng_chance(&m->rng, 0.1))
        return 1 + (int64_t)tp_sim_rng_below(&m->rng, 99);
    return 100 * (1 + (int64_t)tp_sim_rng_geometric(&m->rng, 0.35, 40));
}

/* A price near the top of the given side that never crosses the other side. */
static int64_t draw_price(struct tp_sim_model *m, uint32_t instrument, uint8_t side)
{
    const struct tp_sim_instrument *in = &m->instruments[instrument];
    uint8_t other = side == 'B' ? 'S' : 'B';
    int64_t best = 0, opp = 0;
    int have = best_ticks(m, instrument, side, &best);
    int have_opp = best_ticks(m, instrument, other, &opp);
    int64_t dir = side == 'B' ? -1 : 1; /* away from the top */
    int64_t base;
    if (have)
        base = best;
    else if (have_opp)
        base = opp + dir;
    else
        base = in->ref_ticks + dir;
    int64_t ticks = base + dir * (int64_t)tp_sim_rng_geometric(&m->rng, 0.4, 30);
    if (have && have_opp && (opp - best) * -dir > 1 && tp_sim_rng_chance(&m->rng, 0.15))
        ticks = best - dir; /* improve the top inside a wide spread */
    if (have_opp && side == 'B' && ticks >= opp)
        ticks = opp - 1;
    if (have_opp && side == 'S' && ticks <= opp)
        ticks = opp + 1;
    return ticks < 1 ? 1 : ticks;
}

static uint32_t random_order(struct tp_sim_model *m, uint32_t instrument)
{
    const struct tp_sim_instrument *in = &m->instruments[instrument];
    return in->orders[tp_sim_rng_below(&m->rng, in->n_orders)];
}

/* The order at the best price of a side with time priority (lowest id); -1 if the side is empty. */
static int64_t top_order(const struct tp_sim_model *m, uint32_t instrument, uint8_t side)
{
    const struct tp_sim_instrument *in = &m->instruments[instrument];
    int64_t found = -1;
    for (uint32_t i = 0; i < in->n_orders; i++) {
        const struct tp_sim_order *o = &m->pool[in->orders[i]];
        if (o->side != side)
            continue;
        if (found < 0)
            found = in->orders[i];
        else {
            const struct tp_sim_order *f = &m->pool[found];
            if (better(side, o->ticks, f->ticks) || (o->ticks == f->ticks && o->id < f->id))
                found = in->orders[i];
        }
    }
    return found;
}

static int emit_add(struct tp_sim_model *m, size_t *n, uint32_t instrument, uint8_t side)
{
    int64_t ticks = draw_price(m, instrument, side);
    int64_t qty = draw_qty(m);
    uint64_t id = m->next_order_id++;
    if (insert_order(m, instrument, side, ticks, qty, id) < 0)
        return -ENOMEM;
    struct tp_sim_event *e = push_event(m, n, instrument, TP_SIM_EV_ADD);
    if (e == NULL)
        return -ENOMEM;
    e->order_id = id;
    e->side = side;
    e->price9 = ticks * m->instruments[instrument].tick9;
    e->qty = qty;
    return 0;
}

/* Executes qty of the order at index idx (removing it when filled). */
static int emit_execute(struct tp_sim_model *m, size_t *n, uint32_t idx, int64_t qty,
                        int with_price)
{
    struct tp_sim_order *o = &m->pool[idx];
    struct tp_sim_instrument *in = &m->instruments[o->instrument];
    struct tp_sim_event *e = push_event(m, n, o->instrument, TP_SIM_EV_EXECUTE);
    if (e == NULL)
        return -ENOMEM;
    e->order_id = o->id;
    e->side = o->side;
    e->match_id = m->next_match_id++;
    e->price9 = o->ticks * in->tick9;
    e->old_price9 = e->price9;
    e->old_qty = o->qty;
    e->qty = qty;
    e->remaining = o->qty - qty;
    e->with_price = (uint8_t)with_price;
    in->volume += (uint64_t)qty;
    in->trades++;
    in->last_price9 = e->price9;
    in->last_qty = qty;
    o->qty -= qty;
    if (o->qty == 0)
        remove_order(m, idx);
    return 0;
}

static int cmp_order_id(const void *a, const void *b, void *pool)
{
    const struct tp_sim_order *p = pool;
    uint64_t x = p[*(const uint32_t *)a].id, y = p[*(const uint32_t *)b].id;
    return x < y ? -1 : x > y;
}

/* An aggressive order takes the top 1-3 price levels of one side: the price moves. */
static int emit_sweep(struct tp_sim_model *m, size_t *n, uint32_t instrument, uint8_t side)
{
    struct tp_sim_instrument *in = &m->instruments[instrument];
    uint32_t levels = 1 + (uint32_t)tp_sim_rng_below(&m->rng, 3);
    int64_t unused;
    if (!best_ticks(m, instrument, side, &unused))
        return emit_add(m, n, instrument, side); /* nothing to take: every step yields events */
    for (uint32_t l = 0; l < levels; l++) {
        int64_t best = 0;
        if (!best_ticks(m, instrument, side, &best))
            break;
        /* Fill in time priority: collect the level's orders, sort by id, execute in full. */
        uint32_t count = 0;
        uint32_t at_level[in->n_orders];
        for (uint32_t i = 0; i < in->n_orders; i++) {
            const struct tp_sim_order *o = &m->pool[in->orders[i]];
            if (o->side == side && o->ticks == best)
                at_level[count++] = in->orders[i];
        }
        qsort_r(at_level, count, sizeof(uint32_t), cmp_order_id, m->pool);
        for (uint32_t i = 0; i < count; i++) {
            int rc = emit_execute(m, n, at_level[i], m->pool[at_level[i]].qty, 0);
            if (rc < 0)
                return rc;
        }
        in->ref_ticks = best;
    }
    return 0;
}

/* Microbursts at fixed periods, exponentially spaced events in between. */
static void advance_time(struct tp_sim_model *m)
{
    const struct tp_sim_params *p = &m->params;
    if (m->burst_left > 0) {
        m->burst_left--;
        m->now_ns += p->burst_gap_ns;
        return;
    }
    m->now_ns += 1 + tp_sim_rng_exponential(&m->rng, (double)p->mean_gap_ns);
    if (m->now_ns >= m->next_burst_ns) {
        m->now_ns = m->next_burst_ns;
        m->burst_left = p->burst_events > 0 ? p->burst_events - 1 : 0;
        m->next_burst_ns += p->burst_period_ns;
    }
}

static int draw_kind(struct tp_sim_model *m)
{
    double u = tp_sim_rng_unit(&m->rng);
    for (int i = 0; i < 8; i++)
        if (u < m->mix_cdf[i])
            return i;
    return MIX_ADD;
}

static int step_instrument(struct tp_sim_model *m, size_t *n, uint32_t id)
{
    struct tp_sim_instrument *in = &m->instruments[id];
    const struct tp_sim_params *p = &m->params;
    int kind = draw_kind(m);
    uint8_t side = tp_sim_rng_chance(&m->rng, 0.5) ? 'B' : 'S';

    /* A halt ends after a few of the instrument's own events. */
    if (in->status == TP_SIM_STATUS_HALTED && tp_sim_rng_chance(&m->rng, 0.05))
        kind = MIX_STATUS;
    if (in->status == TP_SIM_STATUS_HALTED &&
        (kind == MIX_EXECUTE || kind == MIX_TRADE || kind == MIX_SWEEP))
        kind = MIX_ADD; /* nothing trades during a halt */
    if (in->n_orders < 2 * p->start_orders && (kind == MIX_DEL || kind == MIX_SWEEP))
        kind = MIX_ADD; /* keep thin books from emptying through deletes */
    if (in->n_orders == 0 && kind != MIX_TRADE && kind != MIX_STATUS)
        kind = MIX_ADD;
    if (kind == MIX_ADD && in->n_orders >= p->max_orders)
        kind = MIX_DEL;

    switch (kind) {
    case MIX_ADD:
        return emit_add(m, n, id, side);
    case MIX_CANCEL:
    case MIX_DEL: {
        uint32_t idx = random_order(m, id);
        struct tp_sim_order *o = &m->pool[idx];
        int partial = kind == MIX_CANCEL && o->qty > 1;
        struct tp_sim_event *e =
            push_event(m, n, id, partial ? TP_SIM_EV_CANCEL : TP_SIM_EV_DELETE);
        if (e == NULL)
            return -ENOMEM;
        e->order_id = o->id;
        e->side = o->side;
        e->old_price9 = o->ticks * in->tick9;
        e->old_qty = o->qty;
        if (partial) {
            e->qty = 1 + (int64_t)tp_sim_rng_below(&m->rng, (uint64_t)o->qty - 1);
            o->qty -= e->qty;
            e->remaining = o->qty;
        } else {
            remove_order(m, idx);
        }
        return 0;
    }
    case MIX_REPLACE: {
        uint32_t idx = random_order(m, id);
        struct tp_sim_order old = m->pool[idx];
        remove_order(m, idx);
        int64_t ticks = draw_price(m, id, old.side);
        int64_t qty = draw_qty(m);
        uint64_t new_id = m->next_order_id++;
        if (insert_order(m, id, old.side, ticks, qty, new_id) < 0)
            return -ENOMEM;
        struct tp_sim_event *e = push_event(m, n, id, TP_SIM_EV_REPLACE);
        if (e == NULL)
            return -ENOMEM;
        e->order_id = old.id;
        e->new_order_id = new_id;
        e->side = old.side;
        e->old_price9 = old.ticks * in->tick9;
        e->old_qty = old.qty;
        e->price9 = ticks * in->tick9;
        e->qty = qty;
        return 0;
    }
    case MIX_EXECUTE: {
        int64_t idx = top_order(m, id, side);
        if (idx < 0)
            return emit_add(m, n, id, side);
        int64_t qty = m->pool[idx].qty;
        if (qty > 1 && tp_sim_rng_chance(&m->rng, 0.5))
            qty = 1 + (int64_t)tp_sim_rng_below(&m->rng, (uint64_t)qty - 1);
        return emit_execute(m, n, (uint32_t)idx, qty, tp_sim_rng_chance(&m->rng, 0.1));
    }
    case MIX_TRADE: {
        int64_t ticks = in->ref_ticks;
        best_ticks(m, id, side, &ticks);
        struct tp_sim_event *e = push_event(m, n, id, TP_SIM_EV_TRADE);
        if (e == NULL)
            return -ENOMEM;
        e->side = side;
        e->match_id = m->next_match_id++;
        e->price9 = ticks * in->tick9;
        e->qty = draw_qty(m);
        in->volume += (uint64_t)e->qty;
        in->trades++;
        in->last_price9 = e->price9;
        in->last_qty = e->qty;
        return 0;
    }
    case MIX_SWEEP:
        return emit_sweep(m, n, id, side);
    default: {
        struct tp_sim_event *e = push_event(m, n, id, TP_SIM_EV_STATUS);
        if (e == NULL)
            return -ENOMEM;
        in->status =
            in->status == TP_SIM_STATUS_HALTED ? TP_SIM_STATUS_TRADING : TP_SIM_STATUS_HALTED;
        e->status = in->status;
        return 0;
    }
    }
}

int tp_sim_model_step(struct tp_sim_model *m, const struct tp_sim_event **events)
{
    size_t n = 0;
    int rc;
    advance_time(m);
    if (m->seed_instrument < m->params.instruments) {
        /* Start of day: every book gets start_orders orders per side, bids and asks alternating. */
        uint32_t id = m->seed_instrument;
        rc = emit_add(m, &n, id, (m->seed_count & 1) ? 'S' : 'B');
        if (++m->seed_count >= 2 * m->params.start_orders) {
            m->seed_count = 0;
            m->seed_instrument++;
        }
    } else {
        uint32_t rank = tp_sim_zipf_draw(&m->zipf, &m->rng);
        rc = step_instrument(m, &n, m->rank_to_instrument[rank]);
    }
    if (rc < 0)
        return rc;
    m->events[n - 1].end_of_event = 1;
    m->events_total += n;
    *events = m->events;
    return (int)n;
}

uint32_t tp_sim_model_levels(const struct tp_sim_model *m, uint32_t instrument, uint8_t side,
                             struct tp_sim_level *out, uint32_t depth)
{
    const struct tp_sim_instrument *in = &m->instruments[instrument];
    uint32_t levels = 0;
    int64_t prev = 0;
    /* Selection, level by level: the next best price strictly worse than the previous one. */
    while (levels < depth) {
        int found = 0;
        int64_t price = 0, qty = 0;
        uint32_t count = 0;
        for (uint32_t i = 0; i < in->n_orders; i++) {
            const struct tp_sim_order *o = &m->pool[in->orders[i]];
            if (o->side != side || (levels > 0 && !better(side, prev, o->ticks)))
                continue;
            if (!found || better(side, o->ticks, price)) {
                price = o->ticks;
                found = 1;
            }
        }
        if (!found)
            break;
        for (uint32_t i = 0; i < in->n_orders; i++) {
            const struct tp_sim_order *o = &m->pool[in->orders[i]];
            if (o->side == side && o->ticks == price) {
                qty += o->qty;
                count++;
            }
        }
        out[levels++] =
            (struct tp_sim_level){.price9 = price * in->tick9, .qty = qty, .orders = count};
        prev = price;
    }
    return levels;
}

uint32_t tp_sim_model_implied_levels(const struct tp_sim_model *m, uint32_t instrument,
                                     uint8_t side, struct tp_sim_level *out, uint32_t depth)
{
    int64_t tick9 = m->instruments[instrument].tick9;
    uint32_t n = tp_sim_model_levels(m, instrument, side, out, depth);
    for (uint32_t i = 0; i < n; i++) {
        out[i].price9 += side == 'B' ? -tick9 : tick9;
        out[i].qty = (out[i].qty + 1) / 2;
        out[i].orders = 0;
    }
    return n;
}
