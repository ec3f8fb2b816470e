/* Reader-side book of price levels (see local_book.h). */
#include "local_book.h"

#include <errno.h>
#include <string.h>

enum { ACTION_NEW = 0, ACTION_CHANGE = 1, ACTION_DELETE = 2, ACTION_CLEAR = 3 };

void tp_local_book_clear(struct tp_local_book *b)
{
    memset(b, 0, sizeof(*b));
    tp_local_book_top(b, &b->last_top);
}

int tp_local_book_apply(struct tp_local_book *b, const struct tp_level_change *c)
{
    if (c->side > 1)
        return -EINVAL;
    struct tp_level *lv = b->sides[c->side];
    uint16_t *count = &b->counts[c->side];
    if (c->action == ACTION_CLEAR) {
        *count = 0;
        return 0;
    }
    if (c->level == 0)
        return -EINVAL;
    if (c->level > TP_MAX_DEPTH)
        return 0; /* deeper than kept: nothing to do */
    uint32_t i = c->level - 1u;
    struct tp_level in = {.price = c->price, .qty = c->qty, .orders = c->orders};
    switch (c->action) {
    case ACTION_NEW:
        if (i > *count)
            return -EINVAL;
        if (*count == TP_MAX_DEPTH)
            (*count)--; /* the deepest level falls off */
        memmove(&lv[i + 1], &lv[i], (*count - i) * sizeof(*lv));
        lv[i] = in;
        (*count)++;
        return 0;
    case ACTION_CHANGE:
        if (i > *count)
            return -EINVAL;
        if (in.price == TP_PRICE_NULL) {
            if (i == *count)
                return -EINVAL; /* a new level needs a price */
            in.price = lv[i].price;
        }
        lv[i] = in;
        if (i == *count)
            (*count)++;
        return 0;
    case ACTION_DELETE:
        if (i >= *count)
            return -EINVAL;
        memmove(&lv[i], &lv[i + 1], (*count - i - 1u) * sizeof(*lv));
        (*count)--;
        return 0;
    default:
        return -EINVAL;
    }
}

void tp_local_book_load(struct tp_local_book *b, const struct tp_instrument_state *s)
{
    b->counts[0] = s->book.bid_levels <= TP_MAX_DEPTH ? s->book.bid_levels : TP_MAX_DEPTH;
    b->counts[1] = s->book.ask_levels <= TP_MAX_DEPTH ? s->book.ask_levels : TP_MAX_DEPTH;
    memcpy(b->sides[0], s->bids, b->counts[0] * sizeof(struct tp_level));
    memcpy(b->sides[1], s->asks, b->counts[1] * sizeof(struct tp_level));
    b->from_sequence = s->book.bus_sequence;
}

void tp_local_book_top(const struct tp_local_book *b, struct tp_top_of_book *top)
{
    memset(top, 0, sizeof(*top));
    top->bid_price = TP_PRICE_NULL;
    top->ask_price = TP_PRICE_NULL;
    if (b->counts[0] > 0) {
        top->bid_price = b->sides[0][0].price;
        top->bid_qty = b->sides[0][0].qty;
        top->bid_orders = b->sides[0][0].orders;
    }
    if (b->counts[1] > 0) {
        top->ask_price = b->sides[1][0].price;
        top->ask_qty = b->sides[1][0].qty;
        top->ask_orders = b->sides[1][0].orders;
    }
}

void tp_local_book_view(const struct tp_local_book *b, struct tp_book_view *v)
{
    v->bids = b->sides[0];
    v->asks = b->sides[1];
    v->bid_levels = b->counts[0];
    v->ask_levels = b->counts[1];
}
