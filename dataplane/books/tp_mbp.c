/*
 * Price-level books with CME MDP3 semantics (see tp_mbp.h).
 */
#include <errno.h>
#include <string.h>

#include "tp_books_impl.h"
#include "tp_instruments.h"
#include "tp_mbp.h"

/*
 * Highest non-empty index of lv[0..bound), where every level from bound on is empty: MBP levels
 * may have holes (qty 0). Callers pass the bound an action leaves (see below), so the scan
 * usually stops at its first level instead of walking up from the depth.
 */
static uint8_t highest_level(const struct tp_level *lv, uint32_t bound)
{
    while (bound > 0 && lv[bound - 1].qty == 0)
        bound--;
    return (uint8_t)bound;
}

int tp_mbp_update(struct tp_books *b, uint32_t instr, enum tp_book_kind book, enum tp_side side,
                  enum tp_level_action action, uint32_t level, int64_t price, int64_t qty,
                  uint32_t count, struct tp_book_change *out)
{
    struct tp_book *bk = tp_books_book(b, instr);
    struct tp_level *lv;
    struct tp_book_change *c;
    uint8_t *levels;
    uint32_t depth, k;
    int had_levels;

    if (!bk)
        return -EINVAL;
    if (!(bk->type & TP_BOOK_TYPE_MBP) || side > TP_SIDE_ASK || action > TP_LEVEL_OVERLAY ||
        (book != TP_BOOK_DIRECT && book != TP_BOOK_IMPLIED)) {
        bk->counters.bad_input++;
        return -EINVAL;
    }
    lv = tp_mbp_side_levels(b, bk, instr, book, side);
    if (book == TP_BOOK_DIRECT) {
        depth = bk->depth;
        levels = &bk->mbp_levels[side];
    } else {
        depth = bk->implied_depth;
        levels = &bk->implied_levels[side];
    }
    had_levels = *levels > 0;
    c = tp_change(out, instr, TP_CHANGE_LEVEL, (uint8_t)book, (uint8_t)side, (uint8_t)action);

    if (action == TP_LEVEL_DELETE_THRU) {
        memset(lv, 0, depth * sizeof(*lv));
        *levels = 0;
        c->flags = had_levels ? TP_CHANGE_F_TOP : 0;
        return tp_books_emits(b, instr);
    }
    if (level == 0 || depth == 0) {
        bk->counters.bad_level++;
        return -EINVAL;
    }
    if (action == TP_LEVEL_DELETE_FROM) {
        /* Levels 1..k go; beyond the depth that is the whole side. */
        k = level < depth ? level : depth;
        memmove(lv, lv + k, (depth - k) * sizeof(*lv));
        memset(lv + depth - k, 0, k * sizeof(*lv));
        *levels = highest_level(lv, *levels > k ? *levels - k : 0);
        c->level = (uint16_t)k;
        c->flags = had_levels ? TP_CHANGE_F_TOP : 0;
        return tp_books_emits(b, instr);
    }
    if (level > depth) {
        bk->counters.bad_level++;
        return -EINVAL;
    }
    k = level - 1;
    if (action != TP_LEVEL_DELETE && qty <= 0) {
        bk->counters.bad_quantity++;
        return -EINVAL;
    }
    /*
     * `bound`: every level from it on is empty after the action (*levels was the highest
     * non-empty index before it). A level written has qty > 0, so the scan stops at once unless
     * a hole moved to the top.
     */
    uint32_t bound = *levels;
    switch (action) {
    case TP_LEVEL_NEW:
        memmove(lv + k + 1, lv + k, (depth - 1 - k) * sizeof(*lv));
        bound = bound > k ? (bound < depth ? bound + 1 : depth) : k + 1;
        break;
    case TP_LEVEL_DELETE:
        memmove(lv + k, lv + k + 1, (depth - 1 - k) * sizeof(*lv));
        memset(lv + depth - 1, 0, sizeof(*lv));
        bound = bound > k ? bound - 1 : bound;
        break;
    default: /* CHANGE, OVERLAY: in place */
        bound = bound > k ? bound : k + 1;
        break;
    }
    if (action != TP_LEVEL_DELETE) {
        lv[k].price = price;
        lv[k].qty = qty;
        lv[k].count = count;
        c->price = price;
        c->qty = qty;
        c->count = count;
    } else {
        c->price = price;
    }
    *levels = highest_level(lv, bound);
    c->level = (uint16_t)level;
    c->flags = level == 1 ? TP_CHANGE_F_TOP : 0;
    return tp_books_emits(b, instr);
}
