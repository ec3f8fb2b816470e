/*
 * Books container: memory layout, configuration, reading, and the per-instrument state that is
 * neither order- nor price-level (clear, trades, status, statistics).
 */
#include <errno.h>
#include <string.h>

#include "tp_books.h"
#include "tp_books_impl.h"
#include "tp_books_prefetch.h"
#include "tp_instruments.h"

#define ALIGN64(x) (((x) + 63u) & ~(size_t)63u)

/* Order table slots: a power of two with at least twice max_orders (load factor <= 1/2). */
static uint32_t order_table_shift(uint32_t max_orders)
{
    uint32_t shift = 4;
    while ((1ull << shift) < 2ull * max_orders)
        shift++;
    return shift;
}

static int params_valid(const struct tp_books_params *p)
{
    return p && p->instruments > 0 && p->instruments < (1u << 31) &&
           (uint64_t)p->first_id + p->instruments <= UINT32_MAX &&
           p->levels_per_side <= UINT16_MAX && p->mbp_depth <= UINT8_MAX &&
           /* order-level books' level indexes (tp_mbo_hot.level_base) fit 32 bits */
           (uint64_t)p->instruments * 2 * (TP_LEVEL_SENTINELS + p->levels_per_side) <= UINT32_MAX &&
           p->implied_depth <= UINT8_MAX && p->max_orders <= (1u << 31) &&
           p->recent_orders <= TP_RECENT_ORDERS_LIMIT &&
           /* an order's tag holds the instrument's id (tp_books_impl.h) */
           (p->max_orders == 0 ||
            (p->levels_per_side > 0 && p->first_id + p->instruments <= TP_ORDER_ID_MASK + 1));
}

/*
 * Recent-order window slots: the largest prime at most the slots asked for, by default
 * TP_RECENT_ORDERS_PER_ORDER per order up to TP_RECENT_ORDERS_DEFAULT_MAX. An order leaves the
 * window when an id as many ids newer is added, so the window must span the ids an order lives
 * through, which the live-order count underestimates. On the 5 M-message benchmark file (at most
 * 37,730 live orders, sized for 65,536), 2 slots per order move about one new order in 14 to the
 * overflow table, 16 slots one in 1,900, and run 16% faster. The
 * cap bounds the window at 33 MiB: past it, the orders that still leave it are too few to show.
 */
static size_t recent_slots(const struct tp_books_params *p)
{
    uint64_t want = (uint64_t)TP_RECENT_ORDERS_PER_ORDER * p->max_orders;
    size_t n;

    /*
     * Without an order table the window is one slot that stays empty, so that the order hint
     * (tp_books_prefetch.h) needs no test of its own: nothing is ever spilled from it.
     */
    if (p->max_orders == 0)
        return 1;
    if (want > TP_RECENT_ORDERS_DEFAULT_MAX)
        want = TP_RECENT_ORDERS_DEFAULT_MAX;
    n = p->recent_orders ? p->recent_orders : (size_t)want;
    for (; n > 2; n--) {
        size_t d = 2;
        while (d * d <= n && n % d)
            d++;
        if (d * d > n)
            return n;
    }
    return 2;
}

struct layout {
    size_t books, hot, orders, recent, spilled, order_levels, mbp_levels, total;
};

static void compute_layout(const struct tp_books_params *p, struct layout *l)
{
    size_t slots = p->max_orders ? (size_t)1 << order_table_shift(p->max_orders) : 0;
    size_t off = ALIGN64(sizeof(struct tp_books));

    l->books = off;
    off += ALIGN64((size_t)p->instruments * sizeof(struct tp_book));
    l->hot = off;
    off += ALIGN64((size_t)p->instruments * sizeof(struct tp_mbo_hot));
    l->orders = off;
    off += ALIGN64(slots * sizeof(struct tp_order));
    l->recent = off;
    off += ALIGN64(recent_slots(p) * sizeof(struct tp_order));
    l->spilled = off;
    off += ALIGN64(recent_slots(p));
    l->order_levels = off;
    off += ALIGN64((size_t)p->instruments * 2 * (TP_LEVEL_SENTINELS + p->levels_per_side) *
                   sizeof(struct tp_order_level));
    l->mbp_levels = off;
    off += ALIGN64((size_t)p->instruments * 2 * (p->mbp_depth + p->implied_depth) *
                   sizeof(struct tp_level));
    l->total = off;
}

size_t tp_books_memsize(const struct tp_books_params *p)
{
    struct layout l;

    if (!params_valid(p))
        return 0;
    compute_layout(p, &l);
    return l.total;
}

int tp_books_init(void *mem, const struct tp_books_params *p)
{
    struct tp_books *b = mem;
    struct layout l;
    char *base = mem;

    if (!mem || !params_valid(p))
        return -EINVAL;
    compute_layout(p, &l);
    memset(mem, 0, l.total);
    b->params = *p;
    b->order_shift = p->max_orders ? order_table_shift(p->max_orders) : 0;
    b->order_mask = p->max_orders ? ((uint64_t)1 << b->order_shift) - 1 : 0;
    b->mbp_stride = 2 * (p->mbp_depth + p->implied_depth);
    b->level_stride = TP_LEVEL_SENTINELS + p->levels_per_side;
    b->books = (struct tp_book *)(base + l.books);
    b->hot = (struct tp_mbo_hot *)(base + l.hot);
    b->orders = (struct tp_order *)(base + l.orders);
    b->recent = (struct tp_order *)(base + l.recent);
    b->recent_slots = recent_slots(p);
    b->recent_magic = UINT64_MAX / b->recent_slots + 1;
    b->spilled = (uint8_t *)(base + l.spilled);
    /*
     * Stale entries (tp_mbo.c): at most half of max_orders, and a sweep that passes over both
     * tables while clears make half of that many stale.
     */
    b->stale_limit = p->max_orders / 2;
    uint64_t limit = b->stale_limit ? b->stale_limit : 1;
    b->sweep_rate = (2 * (b->recent_slots + b->order_mask + 1) + limit - 1) / limit;
    b->order_levels = (struct tp_order_level *)(base + l.order_levels);
    b->mbp_levels = (struct tp_level *)(base + l.mbp_levels);
    for (uint32_t i = 0; i < p->instruments; i++) {
        /* Every instrument emits, and has no order-level book yet (generation bits 0). */
        b->hot[i].owner = TP_MBO_EMIT | ((p->first_id + i) & TP_ORDER_ID_MASK);
        b->books[i].order_gen = 1;
        b->books[i].emit = 1;
        b->hot[i].level_base = i * 2 * b->level_stride + TP_LEVEL_SENTINELS;
        for (unsigned side = 0; side < 2 && p->max_orders; side++)
            for (int k = 1; k <= TP_LEVEL_SENTINELS; k++)
                tp_order_side_levels(b, p->first_id + i, side)[-k].key = INT64_MIN;
    }
    return 0;
}

const struct tp_books_params *tp_books_params(const struct tp_books *b)
{
    return &b->params;
}

int tp_books_configure(struct tp_books *b, uint32_t instr, uint8_t type, uint8_t depth,
                       uint8_t implied_depth)
{
    struct tp_book *bk = tp_books_book(b, instr);
    struct tp_book_change ignored[TP_BOOK_CHANGES_MAX];

    if (!bk || type > TP_BOOK_TYPE_MBP_MBO)
        return -EINVAL;
    /* A book type needs its tables: refuse MBO without an order table, MBP without depth. */
    if ((type & TP_BOOK_TYPE_MBO) && b->params.max_orders == 0)
        return -EINVAL;
    if ((type & TP_BOOK_TYPE_MBP) && b->params.mbp_depth == 0)
        return -EINVAL;
    if (depth > b->params.mbp_depth)
        depth = (uint8_t)b->params.mbp_depth;
    if (implied_depth > b->params.implied_depth)
        implied_depth = (uint8_t)b->params.implied_depth;
    if (!(type & TP_BOOK_TYPE_MBP))
        depth = implied_depth = 0;
    if (bk->type == type && bk->depth == depth && bk->implied_depth == implied_depth)
        return 0;
    tp_books_clear(b, instr, 1, ignored);
    bk->type = type;
    /* An order-level book's orders take its generation (tp_order_tag); other books none. */
    tp_hot_of(b, instr)->owner = (tp_hot_of(b, instr)->owner & ~TP_ORDER_GEN_BITS) |
                                 ((type & TP_BOOK_TYPE_MBO) ? (uint32_t)bk->order_gen : 0)
                                     << TP_ORDER_ID_BITS;
    bk->depth = depth;
    bk->implied_depth = implied_depth;
    return 0;
}

const struct tp_book *tp_books_get(const struct tp_books *b, uint32_t instr)
{
    return tp_books_has(b, instr) ? tp_book_of(b, instr) : NULL;
}

uint32_t tp_books_levels(const struct tp_books *b, uint32_t instr, enum tp_book_kind book,
                         enum tp_side side)
{
    const struct tp_book *bk = tp_books_get(b, instr);

    if (!bk || side > TP_SIDE_ASK)
        return 0;
    switch (book) {
    case TP_BOOK_DIRECT:
        return bk->mbp_levels[side];
    case TP_BOOK_IMPLIED:
        return bk->implied_levels[side];
    case TP_BOOK_ORDERS:
        return tp_hot_of(b, instr)->levels[side];
    }
    return 0;
}

/* Level index (1 = best) of one side of an instrument's order-level book, as readers want it. */
static void order_level(const struct tp_books *b, uint32_t instr, unsigned side, uint32_t index,
                        struct tp_level *out)
{
    /* Best level last; stored keys are -price on the ask side. */
    const struct tp_order_level *lv =
        tp_order_side_levels(b, instr, side) + tp_hot_of(b, instr)->levels[side] - index;

    *out = (struct tp_level){.price = tp_level_key(side, lv->key),
                             .qty = tp_level_qty(lv->size),
                             .count = tp_level_count(lv->size)};
}

int tp_books_level(const struct tp_books *b, uint32_t instr, enum tp_book_kind book,
                   enum tp_side side, uint32_t index, struct tp_level *out)
{
    const struct tp_book *bk = tp_books_get(b, instr);
    uint32_t n = tp_books_levels(b, instr, book, side);

    if (!bk || side > TP_SIDE_ASK || index == 0)
        return -EINVAL;
    if (index > n)
        return -ENOENT;
    if (book == TP_BOOK_ORDERS) {
        order_level(b, instr, side, index, out);
        return 0;
    }
    *out = tp_mbp_side_levels(b, bk, instr, book, side)[index - 1];
    return 0;
}

uint32_t tp_books_copy_levels(const struct tp_books *b, uint32_t instr, enum tp_book_kind book,
                              enum tp_side side, struct tp_level *out, uint32_t max)
{
    uint32_t n = tp_books_levels(b, instr, book, side);

    if (n > max)
        n = max;
    if (n == 0)
        return 0;
    if (book == TP_BOOK_ORDERS) {
        for (uint32_t i = 0; i < n; i++)
            order_level(b, instr, side, i + 1, &out[i]);
        return n;
    }
    /* Price-level books are stored best first, as readers want them. */
    memcpy(out, tp_mbp_side_levels(b, tp_book_of(b, instr), instr, book, side), n * sizeof(*out));
    return n;
}

void tp_books_prefetch(const struct tp_books *b, uint32_t instr)
{
    if (tp_books_has(b, instr))
        tp_books_hint_book(b, instr);
}

uint32_t tp_books_orders(const struct tp_books *b, uint32_t instr)
{
    return tp_books_has(b, instr) ? tp_hot_of(b, instr)->live_orders : 0;
}

int tp_books_set_emit(struct tp_books *b, uint32_t instr, int emit)
{
    if (!tp_books_has(b, instr))
        return -EINVAL;
    tp_hot_of(b, instr)->owner =
        (tp_hot_of(b, instr)->owner & ~TP_MBO_EMIT) | (emit ? TP_MBO_EMIT : 0);
    tp_book_of(b, instr)->emit = emit != 0;
    return 0;
}

const struct tp_books_totals *tp_books_totals(const struct tp_books *b)
{
    return &b->totals;
}

uint64_t tp_books_recent_orders(const struct tp_books *b)
{
    return b->params.max_orders ? b->recent_slots : 0;
}

int tp_books_mark_for_clear(struct tp_books *b, uint32_t instr)
{
    if (!tp_books_has(b, instr))
        return -EINVAL;
    tp_mbo_mark_orders(b, instr);
    return 0;
}

int tp_books_clear(struct tp_books *b, uint32_t instr, int keep_session, struct tp_book_change *out)
{
    struct tp_book *bk = tp_books_book(b, instr);

    if (!bk)
        return -EINVAL;
    const struct tp_mbo_hot *h = tp_hot_of(b, instr);
    if (h->live_orders || h->levels[0] || h->levels[1])
        tp_mbo_drop_orders(b, instr);
    if (b->mbp_stride)
        memset(tp_mbp_levels_of(b, instr), 0, b->mbp_stride * sizeof(struct tp_level));
    bk->mbp_levels[0] = bk->mbp_levels[1] = 0;
    bk->implied_levels[0] = bk->implied_levels[1] = 0;
    if (!keep_session) {
        bk->last_price = bk->last_qty = bk->volume = 0;
        bk->trades = 0;
        bk->last_aggressor = TP_SIDE_NONE;
        memset(bk->stats, 0, sizeof(bk->stats));
    }
    if (!tp_books_emits(b, instr))
        return 0;
    tp_change(out, instr, TP_CHANGE_CLEAR, TP_BOOK_DIRECT, TP_SIDE_NONE, 0);
    return 1;
}

int tp_books_trade(struct tp_books *b, uint32_t instr, int64_t price, int64_t qty,
                   enum tp_side aggressor, uint64_t match, struct tp_book_change *out)
{
    struct tp_book_change *c;
    int rc = tp_books_note_trade(b, instr, price, qty, aggressor);

    if (rc <= 0)
        return rc;
    if (aggressor > TP_SIDE_NONE)
        aggressor = TP_SIDE_NONE;
    c = tp_change(out, instr, TP_CHANGE_TRADE, TP_BOOK_DIRECT, (uint8_t)aggressor, 0);
    c->price = price;
    c->qty = qty;
    c->aux = match;
    return 1;
}

int tp_books_adopt_totals(struct tp_books *b, uint32_t instr, int64_t volume, int64_t last_price,
                          int64_t last_qty)
{
    struct tp_book *bk = tp_books_book(b, instr);

    if (!bk)
        return -EINVAL;
    if (volume >= 0)
        bk->volume = volume;
    if (last_qty > 0) {
        bk->last_price = last_price;
        bk->last_qty = last_qty;
        if (bk->trades == 0)
            bk->trades = 1;
    }
    return 0;
}

int tp_books_status(struct tp_books *b, uint32_t instr, uint8_t status, struct tp_book_change *out)
{
    struct tp_book *bk = tp_books_book(b, instr);

    if (!bk || status > TP_STATUS_NO_CANCEL)
        return -EINVAL;
    if (bk->status == status)
        return 0;
    bk->status = status;
    if (!tp_books_emits(b, instr))
        return 0;
    tp_change(out, instr, TP_CHANGE_STATUS, TP_BOOK_DIRECT, TP_SIDE_NONE, status);
    return 1;
}

void tp_books_count_snapshot_mismatch(struct tp_books *b, uint32_t instr)
{
    struct tp_book *bk = tp_books_book(b, instr);

    if (bk)
        bk->counters.snapshot_mismatch++;
}

int tp_books_stat(struct tp_books *b, uint32_t instr, enum tp_stat_kind kind, int64_t price,
                  int64_t qty, struct tp_book_change *out)
{
    struct tp_book *bk = tp_books_book(b, instr);
    struct tp_book_change *c;

    if (!bk || (unsigned)kind >= TP_STAT_COUNT)
        return -EINVAL;
    bk->stats[kind].price = price;
    bk->stats[kind].qty = qty;
    bk->stats[kind].present = 1;
    if (!tp_books_emits(b, instr))
        return 0;
    c = tp_change(out, instr, TP_CHANGE_STAT, TP_BOOK_DIRECT, TP_SIDE_NONE, (uint8_t)kind);
    c->price = price;
    c->qty = qty;
    return 1;
}
