/*
 * itch50_json.h - ITCH 5.0 message descriptions and a JSON printer (tools, tests; not the hot
 * path).
 *
 * tp_itch_message_info describes a type from the same table that itch50.h generates its readers
 * from, so the printer, the dump tool and the tests cannot disagree with the readers.
 * The printer writes one JSON object per message into a caller buffer, snprintf-style:
 *   {"type":"A","message":"add_order","stock_locate":5528,"tracking_number":0,
 *    "timestamp":34199999894278,"order_reference_number":23508286,"buy_sell_indicator":"B",
 *    "shares":1600,"stock":"IVOO","price":"87.3900","price_p9":87390000000}
 * Field names are the specification's, in snake case. Alpha fields lose their trailing space
 * padding; prices appear as decimal strings with the specification's number of decimals
 * (4 or 8) and again as an integer price9 under "<name>_p9"; integers are JSON numbers.
 */
#ifndef TP_ITCH50_JSON_H
#define TP_ITCH50_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "itch50.h"

/* A buffer this big holds the JSON of any valid message (worst case, every alpha byte escaped). */
#define TP_ITCH_JSON_MAX_LEN 1024

struct tp_itch_field_info {
    const char *name;       /* specification name, snake case */
    enum tp_itch_kind kind; /* wire representation */
    uint8_t offset;         /* from the message type byte */
    uint8_t width;          /* bytes on the wire */
};

struct tp_itch_message_info {
    char type;        /* 'A' ... */
    const char *name; /* "add_order" ... */
    uint8_t length;   /* exact message length */
    uint8_t nfields;  /* header fields included, type byte excluded */
    const struct tp_itch_field_info *fields;
};

/* Description of a type, or NULL for a type the specification does not define. */
const struct tp_itch_message_info *tp_itch_message_info(uint8_t type);

/* All descriptions, in specification order; *count receives how many. */
const struct tp_itch_message_info *tp_itch_message_infos(size_t *count);

/*
 * Writes msg (len bytes) as one JSON object, NUL-terminated when cap > 0. Returns the length
 * the full object needs (excluding the NUL; >= cap means it was truncated), or the negative
 * tp_itch_check error when the message is not a valid ITCH 5.0 message (nothing is written).
 */
int tp_itch_print_json(char *out, size_t cap, const uint8_t *msg, size_t len);

#endif /* TP_ITCH50_JSON_H */
