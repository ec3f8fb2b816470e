/* Test helper: publish a tpout BookUpdate of one level change on a bus writer. */
#ifndef TESTS_BUS_PUBLISH_LEVEL_H
#define TESTS_BUS_PUBLISH_LEVEL_H

#include <stdint.h>

#include "bus/bus.h"
#include "tpout_sbe.h"

/* The record's ring sequence, or 0 when the writer skipped it (nobody interested). */
static inline uint64_t publish_level(struct tp_bus_writer *w, uint32_t id, uint8_t side,
                                     uint8_t level, uint8_t action, int64_t px, int64_t qty)
{
    uint8_t buf[128];
    struct tpout_book_update m;
    struct tpout_book_update_levels g;
    tpout_book_update_wrap_and_apply_header(&m, buf, sizeof(buf));
    tpout_book_update_set_instrument_id(&m, id);
    tpout_book_update_levels_wrap_for_encode(&m, &g, 1);
    tpout_book_update_levels_next(&g);
    tpout_book_update_levels_set_side(&g, side);
    tpout_book_update_levels_set_level(&g, level);
    tpout_book_update_levels_set_action(&g, action);
    tpout_book_update_levels_set_price_mantissa(&g, px);
    tpout_book_update_levels_set_quantity(&g, qty);
    uint32_t len =
        (uint32_t)(TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + tpout_book_update_encoded_length(&m));
    return tp_bus_publish(w, TP_REC_SBE, TP_TOPIC_DEPTH, id, 0, buf, len);
}

#endif /* TESTS_BUS_PUBLISH_LEVEL_H */
