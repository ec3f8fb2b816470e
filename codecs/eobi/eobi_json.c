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

/* Release 7.0: the same from eobi_release.h (its new fields are printed too). */
#define TP_EOBI70_GEN_FIELD_TABLE(T, M, NAME, LEN)                                                 \
    static const struct tp_eobi_field_info fields70_##M[] = {                                      \
        TP_EOBI70_FIELDS_##M(TP_EOBI_GEN_FIELD_INFO, TP_EOBI_GEN_FIELD_INFO, M)};
TP_EOBI70_MESSAGES(TP_EOBI70_GEN_FIELD_TABLE)

static const struct tp_eobi_field_info md_entry_fields70[] = {
    TP_EOBI70_FIELDS_md_entry(TP_EOBI_GEN_FIELD_INFO, TP_EOBI_GEN_FIELD_INFO, md_entry)};

#define TP_EOBI70_GEN_MESSAGE_INFO(T, M, NAME, LEN)                                                \
    {T, NAME, LEN, sizeof(fields70_##M) / sizeof(fields70_##M[0]), fields70_##M},
static const struct tp_eobi_message_info message_infos70[] = {
    TP_EOBI70_MESSAGES(TP_EOBI70_GEN_MESSAGE_INFO)};

#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* One release's tables. */
struct release_tables {
    const struct tp_eobi_message_info *messages;
    size_t n_messages;
    const struct tp_eobi_field_info *entry_fields;
    size_t n_entry_fields;
    size_t entry_len;
};

static const struct release_tables releases[TP_EOBI_RELEASES] = {
    [TP_EOBI_RELEASE_6_0] = {message_infos, COUNT_OF(message_infos), md_entry_fields,
                             COUNT_OF(md_entry_fields), TP_EOBI_MD_ENTRY_LEN},
    [TP_EOBI_RELEASE_7_0] = {message_infos70, COUNT_OF(message_infos70), md_entry_fields70,
                             COUNT_OF(md_entry_fields70), TP_EOBI70_MD_ENTRY_LEN},
};

const struct tp_eobi_message_info *tp_eobi_release_message_info(enum tp_eobi_release r,
                                                                uint16_t template_id)
{
    const struct release_tables *t = &releases[r];
    for (size_t i = 0; i < t->n_messages; i++)
        if (t->messages[i].template_id == template_id)
            return &t->messages[i];
    return NULL;
}

const struct tp_eobi_message_info *tp_eobi_message_info(uint16_t template_id)
{
    return tp_eobi_release_message_info(TP_EOBI_RELEASE_6_0, template_id);
}

const struct tp_eobi_message_info *tp_eobi_release_message_infos(enum tp_eobi_release r,
                                                                 size_t *count)
{
    *count = releases[r].n_messages;
    return releases[r].messages;
}

const struct tp_eobi_message_info *tp_eobi_message_infos(size_t *count)
{
    return tp_eobi_release_message_infos(TP_EOBI_RELEASE_6_0, count);
}

const struct tp_eobi_field_info *tp_eobi_release_md_entry_fields(enum tp_eobi_release r,
                                                                 size_t *count)
{
    *count = releases[r].n_entry_fields;
    return releases[r].entry_fields;
}

const struct tp_eobi_field_info *tp_eobi_md_entry_fields(size_t *count)
{
    return tp_eobi_release_md_entry_fields(TP_EOBI_RELEASE_6_0, count);
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

/* "12.5000": a 7.0 quantity (4 implied decimals); null for the null quantity. */
static void out_qty(struct tp_json_out *o, int64_t qty)
{
    if (qty == INT64_MIN) {
        tp_json_printf(o, "null");
        return;
    }
    uint64_t magnitude = qty < 0 ? (uint64_t)0 - (uint64_t)qty : (uint64_t)qty;
    tp_json_printf(o, "\"%s%" PRIu64 ".%04" PRIu64 "\"", qty < 0 ? "-" : "",
                   magnitude / TP_EOBI_QTY_SCALE, magnitude % TP_EOBI_QTY_SCALE);
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
    case TP_EOBI_KIND_QTY:
        out_qty(o, (int64_t)tp_eobi_le64(p));
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
    return tp_eobi_release_print_json(TP_EOBI_RELEASE_6_0, out, cap, msg, len);
}

int tp_eobi_release_print_json(enum tp_eobi_release r, char *out, size_t cap, const uint8_t *msg,
                               size_t len)
{
    if (len < TP_EOBI_MESSAGE_HEADER_LEN || tp_eobi_body_len(msg) != len)
        return -EBADMSG;
    const struct release_tables *t = &releases[r];
    const struct tp_eobi_message_info *info =
        tp_eobi_release_message_info(r, tp_eobi_template_id(msg));
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
        /* NoMDEntries is the last field of the fixed part before its pads. */
        unsigned entries = msg[r == TP_EOBI_RELEASE_6_0 ? 39 : TP_EOBI70_NO_MD_ENTRIES_OFFSET];
        tp_json_printf(&o, ",\"mdentries\":[");
        for (unsigned e = 0; e < entries; e++) {
            const uint8_t *entry = msg + info->length + (size_t)e * t->entry_len;
            if ((size_t)(entry - msg) + t->entry_len > len) {
                truncated = true;
                break;
            }
            tp_json_printf(&o, "%s{\"index\":%u", e ? "," : "", e + 1);
            for (size_t i = 0; i < t->n_entry_fields; i++)
                out_field(&o, &t->entry_fields[i], entry + t->entry_fields[i].offset);
            tp_json_printf(&o, "}");
        }
        tp_json_printf(&o, "]");
    }
    if (truncated)
        tp_json_printf(&o, ",\"truncated\":true");
    tp_json_printf(&o, "}");
    return (int)o.len;
}
