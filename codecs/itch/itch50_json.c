/*
 * itch50_json.c - ITCH 5.0 message descriptions (from the itch50.h table) and JSON printing.
 */
#include "itch50_json.h"

#include <inttypes.h>
#include <stdio.h>

#include "json_out.h"

/* One field description per entry of the layout table. */
#define TP_ITCH_GEN_FIELD_INFO(M, f, name, kind, off)                                              \
    {name, TP_ITCH_KIND_##kind, off, TP_ITCH_WIDTH_##kind},
#define TP_ITCH_GEN_FIELD_TABLE(T, M, LEN)                                                         \
    static const struct tp_itch_field_info fields_##M[] = {                                        \
        TP_ITCH_FIELDS_##M(TP_ITCH_GEN_FIELD_INFO, M)};
TP_ITCH_MESSAGES(TP_ITCH_GEN_FIELD_TABLE)

#define TP_ITCH_GEN_MESSAGE_INFO(T, M, LEN)                                                        \
    {T, #M, LEN, sizeof(fields_##M) / sizeof(fields_##M[0]), fields_##M},
static const struct tp_itch_message_info message_infos[] = {
    TP_ITCH_MESSAGES(TP_ITCH_GEN_MESSAGE_INFO)};

#define MESSAGE_INFO_COUNT (sizeof(message_infos) / sizeof(message_infos[0]))

const struct tp_itch_message_info *tp_itch_message_info(uint8_t type)
{
    for (size_t i = 0; i < MESSAGE_INFO_COUNT; i++)
        if ((uint8_t)message_infos[i].type == type)
            return &message_infos[i];
    return NULL;
}

const struct tp_itch_message_info *tp_itch_message_infos(size_t *count)
{
    *count = MESSAGE_INFO_COUNT;
    return message_infos;
}

/*
 * A JSON string of width bytes, control and non-ASCII escaped. A wider Alpha field's trailing
 * spaces are padding and removed; a one-byte code is printed as it is, since a space there is a
 * value (Price Variation Indicator ' ': no calculation).
 */
static void out_alpha(struct tp_json_out *o, const uint8_t *p, size_t width)
{
    size_t len = width;
    while (width > 1 && len > 0 && p[len - 1] == ' ')
        len--;
    tp_json_printf(o, "\"");
    for (size_t i = 0; i < len; i++) {
        uint8_t c = p[i];
        if (c == '"' || c == '\\')
            tp_json_printf(o, "\\%c", c);
        else if (c < 0x20 || c > 0x7e)
            tp_json_printf(o, "\\u%04x", c);
        else
            tp_json_printf(o, "%c", c);
    }
    tp_json_printf(o, "\"");
}

/* "123.4500" for a Price(4), "123.45000000" for a Price(8), and the price9 twin. */
static void out_price(struct tp_json_out *o, const char *name, uint64_t raw, unsigned decimals,
                      int64_t p9)
{
    uint64_t scale = decimals == 4 ? 10000u : 100000000u;
    tp_json_printf(o, "\"%" PRIu64 ".%0*" PRIu64 "\",\"%s_p9\":%" PRId64, raw / scale,
                   (int)decimals, raw % scale, name, p9);
}

int tp_itch_print_json(char *out, size_t cap, const uint8_t *msg, size_t len)
{
    int type = tp_itch_check(msg, len);
    if (type < 0)
        return type;
    const struct tp_itch_message_info *info = tp_itch_message_info((uint8_t)type);
    struct tp_json_out o = {out, cap, 0};
    if (cap > 0)
        out[0] = '\0';

    tp_json_printf(&o, "{\"type\":\"%c\",\"message\":\"%s\"", info->type, info->name);
    for (unsigned i = 0; i < info->nfields; i++) {
        const struct tp_itch_field_info *f = &info->fields[i];
        const uint8_t *p = msg + f->offset;
        tp_json_printf(&o, ",\"%s\":", f->name);
        switch (f->kind) {
        case TP_ITCH_KIND_CHAR:
        case TP_ITCH_KIND_ALPHA2:
        case TP_ITCH_KIND_ALPHA4:
        case TP_ITCH_KIND_ALPHA8:
            out_alpha(&o, p, f->width);
            break;
        case TP_ITCH_KIND_U16:
            tp_json_printf(&o, "%u", (unsigned)tp_load_be16(p));
            break;
        case TP_ITCH_KIND_U32:
            tp_json_printf(&o, "%" PRIu32, tp_load_be32(p));
            break;
        case TP_ITCH_KIND_U64:
            tp_json_printf(&o, "%" PRIu64, tp_load_be64(p));
            break;
        case TP_ITCH_KIND_TS:
            tp_json_printf(&o, "%" PRIu64, tp_load_be48(p));
            break;
        case TP_ITCH_KIND_PRICE4:
            out_price(&o, f->name, tp_load_be32(p), 4, tp_itch_price4_to_p9(tp_load_be32(p)));
            break;
        case TP_ITCH_KIND_PRICE8:
            out_price(&o, f->name, tp_load_be64(p), 8, tp_itch_price8_to_p9(tp_load_be64(p)));
            break;
        }
    }
    tp_json_printf(&o, "}");
    return (int)o.len;
}
