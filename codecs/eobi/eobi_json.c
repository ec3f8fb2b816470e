/*
 * eobi_json.c - EOBI message descriptions (from the eobi.h table) and JSON printing.
 */
#include "eobi_json.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "json_out.h"

#define TP_EOBI_GEN_FIELD_INFO(M, f, name, kind, off)                                              \
    {name, TP_EOBI_KIND_OF_##kind, off, TP_EOBI_WIDTH_##kind},
#define TP_EOBI_GEN_FIELD_TABLE(T, M, NAME, LEN)                                                   \
    static const struct tp_eobi_field_info fields_##M[] = {                                        \
        TP_EOBI_FIELDS_##M(TP_EOBI_GEN_FIELD_INFO, M)};
TP_EOBI_MESSAGES(TP_EOBI_GEN_FIELD_TABLE)

static const struct tp_eobi_field_info md_entry_fields[] = {
    TP_EOBI_FIELDS_md_entry(TP_EOBI_GEN_FIELD_INFO, md_entry)};

#define TP_EOBI_GEN_MESSAGE_INFO(T, M, NAME, LEN)                                                  \
    {T, NAME, LEN, sizeof(fields_##M) / sizeof(fields_##M[0]), fields_##M},
static const struct tp_eobi_message_info message_infos[] = {
    TP_EOBI_MESSAGES(TP_EOBI_GEN_MESSAGE_INFO)};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

const struct tp_eobi_message_info *tp_eobi_message_info(uint16_t template_id)
{
    for (size_t i = 0; i < COUNT_OF(message_infos); i++)
        if (message_infos[i].template_id == template_id)
            return &message_infos[i];
    return NULL;
}

const struct tp_eobi_message_info *tp_eobi_message_infos(size_t *count)
{
    *count = COUNT_OF(message_infos);
    return message_infos;
}

const struct tp_eobi_field_info *tp_eobi_md_entry_fields(size_t *count)
{
    *count = COUNT_OF(md_entry_fields);
    return md_entry_fields;
}

/* "-10.50000000" and its price9 twin; both null for the null price. */
static void out_price(struct tp_json_out *o, const char *name, int64_t price)
{
    if (price == TP_EOBI_PRICE_NULL) {
        tp_json_printf(o, "null,\"%s_p9\":null", name);
        return;
    }
    uint64_t magnitude = price < 0 ? (uint64_t)0 - (uint64_t)price : (uint64_t)price;
    tp_json_printf(o, "\"%s%" PRIu64 ".%08" PRIu64 "\",\"%s_p9\":%" PRId64, price < 0 ? "-" : "",
                   magnitude / 100000000u, magnitude % 100000000u, name,
                   tp_eobi_price_to_p9(price));
}

static void out_field(struct tp_json_out *o, const struct tp_eobi_field_info *f, const uint8_t *p)
{
    tp_json_printf(o, ",\"%s\":", f->name);
    switch (f->kind) {
    case TP_EOBI_KIND_U8:
        tp_json_printf(o, "%u", p[0]);
        break;
    case TP_EOBI_KIND_U16:
        tp_json_printf(o, "%u", tp_eobi_le16(p));
        break;
    case TP_EOBI_KIND_U32:
        tp_json_printf(o, "%" PRIu32, tp_eobi_le32(p));
        break;
    case TP_EOBI_KIND_I32:
        tp_json_printf(o, "%" PRId32, (int32_t)tp_eobi_le32(p));
        break;
    case TP_EOBI_KIND_U64:
        tp_json_printf(o, "%" PRIu64, tp_eobi_le64(p));
        break;
    case TP_EOBI_KIND_I64:
        tp_json_printf(o, "%" PRId64, (int64_t)tp_eobi_le64(p));
        break;
    case TP_EOBI_KIND_PRICE:
        out_price(o, f->name, (int64_t)tp_eobi_le64(p));
        break;
    case TP_EOBI_KIND_PAD:
        tp_json_printf(o, "\"");
        for (unsigned i = 0; i < f->width; i++)
            tp_json_printf(o, "%02x", p[i]);
        tp_json_printf(o, "\"");
        break;
    }
}

int tp_eobi_print_json(char *out, size_t cap, const uint8_t *msg, size_t len)
{
    if (len < TP_EOBI_MESSAGE_HEADER_LEN || tp_eobi_body_len(msg) != len)
        return -EBADMSG;
    const struct tp_eobi_message_info *info = tp_eobi_message_info(tp_eobi_template_id(msg));
    if (info == NULL)
        return -ENOMSG;
    struct tp_json_out o = {out, cap, 0};
    if (cap > 0)
        out[0] = '\0';
    tp_json_printf(&o,
                   "{\"templateid\":%u,\"message\":\"%s\",\"bodylen\":%zu,\"msgseqnum\":%" PRIu32,
                   info->template_id, info->name, len, tp_eobi_msg_seq_num(msg));
    bool truncated = false;
    for (unsigned i = 0; i < info->nfields; i++) {
        const struct tp_eobi_field_info *f = &info->fields[i];
        if ((size_t)f->offset + f->width > len) {
            truncated = true;
            break;
        }
        out_field(&o, f, msg + f->offset);
    }
    if (!truncated && info->template_id == TP_EOBI_INSTRUMENT_SUMMARY) {
        unsigned entries = tp_eobi_instrument_summary_no_md_entries(msg);
        tp_json_printf(&o, ",\"mdentries\":[");
        for (unsigned e = 0; e < entries; e++) {
            const uint8_t *entry = tp_eobi_md_entry(msg, e);
            if ((size_t)(entry - msg) + TP_EOBI_MD_ENTRY_LEN > len) {
                truncated = true;
                break;
            }
            tp_json_printf(&o, "%s{\"index\":%u", e ? "," : "", e + 1);
            for (size_t i = 0; i < COUNT_OF(md_entry_fields); i++)
                out_field(&o, &md_entry_fields[i], entry + md_entry_fields[i].offset);
            tp_json_printf(&o, "}");
        }
        tp_json_printf(&o, "]");
    }
    if (truncated)
        tp_json_printf(&o, ",\"truncated\":true");
    tp_json_printf(&o, "}");
    return (int)o.len;
}
