/* The consumer's order-level view: see order_view.h. */
#include "order_view.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "tpout_sbe.h"

/* Open addressing on (instrument, id); a removed order keeps its slot (dead), reused by its key. */
#define SLOTS (1u << 18)

struct order {
    uint64_t id;
    uint32_t instrument;
    uint8_t used, live, side;
    int64_t price, qty;
};

static struct order table[SLOTS];

static struct order *slot_of(uint32_t instrument, uint64_t id)
{
    uint64_t h = (id * 0x9e3779b97f4a7c15ull) ^ instrument;
    for (uint32_t i = 0; i < SLOTS; i++) {
        struct order *o = &table[(h + i) & (SLOTS - 1)];
        if (!o->used || (o->id == id && o->instrument == instrument))
            return o;
    }
    return NULL; /* full: the comparison then finds the orders missing */
}

static void clear_instrument(uint32_t instrument)
{
    for (uint32_t i = 0; i < SLOTS; i++)
        if (table[i].used && table[i].instrument == instrument)
            table[i].live = 0;
}

void tp_test_orders_apply(const struct tp_ring_record *rec)
{
    const uint8_t *msg = tp_ring_payload(rec);
    size_t len = rec->length - TP_RING_RECORD_HEADER;
    if (rec->type != TP_REC_SBE || len < TPOUT_MESSAGE_HEADER_ENCODED_LENGTH)
        return;
    uint16_t template_id = tpout_message_header_template_id(msg);
    uint16_t block = tpout_message_header_block_length(msg);
    const uint8_t *body = msg + TPOUT_MESSAGE_HEADER_ENCODED_LENGTH;
    const uint8_t *end = msg + len;
    if (template_id == TPOUT_ORDER_EVENT_TEMPLATE_ID &&
        body + TPOUT_ORDER_EVENT_BLOCK_LENGTH <= end) {
        uint32_t instrument = tpout_load_u32(body + TPOUT_ORDER_EVENT_INSTRUMENT_ID_OFFSET);
        if (body[TPOUT_ORDER_EVENT_ACTION_OFFSET] == 2 &&
            tpout_load_u64(body + TPOUT_ORDER_EVENT_ORDER_ID_OFFSET) == 0) {
            clear_instrument(instrument); /* every order removed (before an order snapshot) */
            return;
        }
        struct order *o =
            slot_of(instrument, tpout_load_u64(body + TPOUT_ORDER_EVENT_ORDER_ID_OFFSET));
        if (o == NULL)
            return;
        int64_t remaining =
            (int64_t)tpout_load_u64(body + TPOUT_ORDER_EVENT_REMAINING_QUANTITY_OFFSET);
        o->used = 1;
        o->id = tpout_load_u64(body + TPOUT_ORDER_EVENT_ORDER_ID_OFFSET);
        o->instrument = instrument;
        o->live = body[TPOUT_ORDER_EVENT_ACTION_OFFSET] != 2 && remaining > 0;
        o->side = body[TPOUT_ORDER_EVENT_SIDE_OFFSET];
        o->price = (int64_t)tpout_load_u64(body + TPOUT_ORDER_EVENT_PRICE_OFFSET);
        o->qty = remaining;
        return;
    }
    if (template_id != TPOUT_BOOK_UPDATE_TEMPLATE_ID || body + block + 4 > end)
        return;
    /* A clear is one BookUpdate of two entries, each emptying its side (LevelAction 3). */
    const uint8_t *g = body + block;
    uint16_t entry = tpout_load_u16(g), count = tpout_load_u16(g + 2);
    if (count != 2 || g + 4 + 2 * (size_t)entry > end)
        return;
    const uint8_t *e0 = g + 4, *e1 = e0 + entry;
    if (e0[2] == 3 && e1[2] == 3 && e0[0] != e1[0])
        clear_instrument(tpout_load_u32(body + TPOUT_BOOK_UPDATE_INSTRUMENT_ID_OFFSET));
}

int tp_test_orders_compare(const char *symbol, uint32_t id, json_t *truth_orders)
{
    size_t i, held = 0;
    json_t *t;
    json_array_foreach(truth_orders, i, t)
    {
        uint64_t oid = (uint64_t)json_integer_value(json_object_get(t, "id"));
        uint8_t side = strcmp(json_string_value(json_object_get(t, "side")), "ask") == 0;
        int64_t price = json_integer_value(json_object_get(t, "price9"));
        int64_t qty = json_integer_value(json_object_get(t, "qty"));
        const struct order *o = slot_of(id, oid);
        if (o == NULL || !o->used || !o->live || o->side != side || o->price != price ||
            o->qty != qty) {
            fprintf(stderr, "%s order %llu: truth %s %lld x %lld, got %s\n", symbol,
                    (unsigned long long)oid, side ? "ask" : "bid", (long long)price, (long long)qty,
                    o == NULL || !o->used || !o->live ? "none" : "another");
            return 1;
        }
    }
    for (uint32_t k = 0; k < SLOTS; k++)
        held += table[k].used && table[k].live && table[k].instrument == id;
    if (held != json_array_size(truth_orders)) {
        fprintf(stderr, "%s: %zu orders held, the truth has %zu\n", symbol, held,
                json_array_size(truth_orders));
        return 1;
    }
    return 0;
}
