/*
 * eobi_json.h - EOBI message descriptions (6.0, and any release of eobi_release.h) and a JSON
 * printer (tools, tests; not the hot path).
 *
 * tp_eobi_message_info describes a template from the same table eobi.h generates its readers
 * from, so the printer, the dump tool and the tests cannot disagree with the readers.
 * The printer writes one JSON object per message into a caller buffer, snprintf-style:
 *   {"templateid":13100,"message":"OrderAdd","bodylen":48,"msgseqnum":495779,
 *    "trdregtstimein":1401710400935584093,"securityid":566988,...,"side":1,"ordtype":0,
 *    "pad2":"0000","price":"9961.50000000","price_p9":9961500000000}
 * Field names are the manual's, lower case without separators. Integers are JSON numbers
 * (enumerations as their wire value); pads are hex text; prices are decimal text with 8 decimals
 * and again as an integer price9 under "<name>_p9" (both null for the null price).
 * InstrumentSummary's entries are an array under "mdentries".
 * A message shorter than its layout prints the fields that lie inside it and "truncated":true;
 * nothing past its BodyLen is read.
 */
#ifndef TP_EOBI_JSON_H
#define TP_EOBI_JSON_H

#include <stddef.h>
#include <stdint.h>

#include "eobi.h"
#include "eobi_release.h"

struct tp_eobi_field_info {
    const char *name;       /* manual name, lower case */
    enum tp_eobi_kind kind; /* wire representation */
    uint8_t offset;         /* from the message start (for entries: the entry start) */
    uint8_t width;          /* bytes on the wire */
};

struct tp_eobi_message_info {
    uint16_t template_id;
    const char *name; /* "OrderAdd" ... */
    uint8_t length;   /* layout length, header included (InstrumentSummary: without entries) */
    uint8_t nfields;  /* message header excluded */
    const struct tp_eobi_field_info *fields;
};

/* Description of a template, or NULL for one this codec does not decode. */
const struct tp_eobi_message_info *tp_eobi_message_info(uint16_t template_id);

/* All descriptions, in table order; *count receives how many. */
const struct tp_eobi_message_info *tp_eobi_message_infos(size_t *count);

/* The fields of one InstrumentSummary entry; *count receives how many. */
const struct tp_eobi_field_info *tp_eobi_md_entry_fields(size_t *count);

/*
 * Writes the message of len bytes (its BodyLen, as framed) as one JSON object, NUL-terminated
 * when cap > 0. Returns the length the full object needs (excluding the NUL; >= cap means it
 * was truncated), -ENOMSG for a template this codec does not decode, -EBADMSG when len is not a
 * message header's worth or differs from BodyLen (nothing is written then).
 */
int tp_eobi_print_json(char *out, size_t cap, const uint8_t *msg, size_t len);

/*
 * The same for the layouts of release r: descriptions, entries and the printer (7.0 quantities
 * print as decimal text with 4 decimals, null for the null quantity). The functions above are
 * these for release 6.0.
 */
const struct tp_eobi_message_info *tp_eobi_release_message_info(enum tp_eobi_release r,
                                                                uint16_t template_id);
const struct tp_eobi_message_info *tp_eobi_release_message_infos(enum tp_eobi_release r,
                                                                 size_t *count);
const struct tp_eobi_field_info *tp_eobi_release_md_entry_fields(enum tp_eobi_release r,
                                                                 size_t *count);
int tp_eobi_release_print_json(enum tp_eobi_release r, char *out, size_t cap, const uint8_t *msg,
                               size_t len);

#endif /* TP_EOBI_JSON_H */
