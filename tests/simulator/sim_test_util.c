/* Shared simulator test helpers (see sim_test_util.h). */
#include "sim_test_util.h"

#include "itch50.h"
#include "packet.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mem_sink_message(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns)
{
    struct mem_sink *s = ctx;
    (void)time_ns;
    if (s->len + len + 2 > s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 1 << 16;
        while (cap < s->len + len + 2)
            cap *= 2;
        uint8_t *buf = realloc(s->buf, cap);
        if (buf == NULL)
            return -1;
        s->buf = buf;
        s->cap = cap;
    }
    s->buf[s->len] = (uint8_t)(len >> 8);
    s->buf[s->len + 1] = (uint8_t)len;
    memcpy(s->buf + s->len + 2, msg, len);
    s->len += len + 2;
    s->messages++;
    return 0;
}

void mem_sink_free(struct mem_sink *s)
{
    free(s->buf);
    memset(s, 0, sizeof(*s));
}

int capture_packet(void *ctx, const struct tp_sim_packet *p)
{
    struct captured *c = ctx;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        struct tp_sim_packet *grown = realloc(c->p, cap * sizeof(*grown));
        if (grown == NULL)
            return -1;
        c->p = grown;
        c->cap = cap;
    }
    c->p[c->n++] = *p;
    return 0;
}

void temp_path(char *out, size_t cap, const char *suffix)
{
    static unsigned counter;
    snprintf(out, cap, "/tmp/tp-simtest-%d-%u%s", (int)getpid(), counter++, suffix);
}

void ref_init(struct ref_book *b, uint32_t instruments, uint64_t max_order_id)
{
    b->cap = max_order_id + 1;
    b->orders = calloc(b->cap, sizeof(*b->orders));
    b->instruments = instruments;
    b->errors = 0;
}

void ref_free(struct ref_book *b)
{
    free(b->orders);
    b->orders = NULL;
}

static struct ref_order *find(struct ref_book *b, uint64_t id)
{
    if (id >= b->cap || !b->orders[id].live) {
        b->errors++;
        return NULL;
    }
    return &b->orders[id];
}

void ref_add(struct ref_book *b, uint64_t id, uint32_t instrument, uint8_t side, int64_t price9,
             int64_t qty)
{
    if (id >= b->cap || b->orders[id].live || instrument >= b->instruments || qty <= 0) {
        b->errors++;
        return;
    }
    b->orders[id] = (struct ref_order){price9, qty, instrument, side, 1};
}

void ref_reduce(struct ref_book *b, uint64_t id, int64_t qty)
{
    struct ref_order *o = find(b, id);
    if (o == NULL)
        return;
    if (qty <= 0 || qty > o->qty) {
        b->errors++;
        return;
    }
    o->qty -= qty;
    if (o->qty == 0)
        o->live = 0;
}

void ref_delete(struct ref_book *b, uint64_t id)
{
    struct ref_order *o = find(b, id);
    if (o != NULL)
        o->live = 0;
}

/* Compares one side of one instrument with a truth "bids"/"asks" array. */
static int side_matches(const struct ref_book *b, uint32_t instrument, uint8_t side, json_t *levels,
                        uint32_t depth)
{
    int64_t prev = 0;
    size_t n = 0;
    for (;;) {
        /* The next best price strictly worse than prev, by a scan of every order. */
        int found = 0;
        int64_t best = 0, qty = 0, count = 0;
        for (uint64_t id = 0; id < b->cap; id++) {
            const struct ref_order *o = &b->orders[id];
            if (!o->live || o->instrument != instrument || o->side != side)
                continue;
            if (n > 0 && (side == 'B' ? o->price9 >= prev : o->price9 <= prev))
                continue;
            if (!found || (side == 'B' ? o->price9 > best : o->price9 < best)) {
                best = o->price9;
                found = 1;
            }
        }
        if (!found || n == depth)
            break;
        for (uint64_t id = 0; id < b->cap; id++) {
            const struct ref_order *o = &b->orders[id];
            if (o->live && o->instrument == instrument && o->side == side && o->price9 == best) {
                qty += o->qty;
                count++;
            }
        }
        json_t *l = json_array_get(levels, n);
        if (l == NULL || json_integer_value(json_object_get(l, "price9")) != best ||
            json_integer_value(json_object_get(l, "qty")) != qty ||
            json_integer_value(json_object_get(l, "orders")) != count)
            return 0;
        prev = best;
        n++;
    }
    return json_array_size(levels) == n;
}

int ref_compare_truth(const struct ref_book *b, const char *truth_path, uint32_t depth)
{
    json_error_t err;
    json_t *root = json_load_file(truth_path, 0, &err);
    if (root == NULL)
        return -1;
    json_t *instruments = json_object_get(root, "instruments");
    int mismatches = json_array_size(instruments) == b->instruments ? 0 : 1;
    for (uint32_t i = 0; i < b->instruments; i++) {
        json_t *in = json_array_get(instruments, i);
        if (!side_matches(b, i, 'B', json_object_get(in, "bids"), depth) ||
            !side_matches(b, i, 'S', json_object_get(in, "asks"), depth))
            mismatches++;
    }
    json_decref(root);
    return mismatches;
}

void ref_apply_itch(struct ref_book *b, const uint8_t *msg, uint16_t len)
{
    int type = tp_itch_check(msg, len);
    uint32_t instrument = type > 0 ? (uint32_t)tp_itch_stock_locate(msg) - 1 : 0;
    switch (type) {
    case 'A':
    case 'F':
        ref_add(b, tp_itch_add_order_order_ref(msg), instrument,
                (uint8_t)tp_itch_add_order_side(msg), tp_itch_add_order_price_p9(msg),
                tp_itch_add_order_shares(msg));
        break;
    case 'E':
    case 'C':
        ref_reduce(b, tp_itch_order_executed_order_ref(msg),
                   tp_itch_order_executed_executed_shares(msg));
        break;
    case 'X':
        ref_reduce(b, tp_itch_order_cancel_order_ref(msg),
                   tp_itch_order_cancel_cancelled_shares(msg));
        break;
    case 'D':
        ref_delete(b, tp_itch_order_delete_order_ref(msg));
        break;
    case 'U': {
        uint64_t old = tp_itch_order_replace_original_order_ref(msg);
        uint8_t side = old < b->cap ? b->orders[old].side : 0;
        ref_delete(b, old);
        ref_add(b, tp_itch_order_replace_new_order_ref(msg), instrument, side,
                tp_itch_order_replace_price_p9(msg), tp_itch_order_replace_shares(msg));
        break;
    }
    default:
        break;
    }
}
