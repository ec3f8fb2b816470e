/*
 * conformance_eobi.c - Eurex T7 EOBI 6.0: our printer's output (what tickplane-dump prints)
 * against the independent decoder's values, field by field, for every message of a frame.
 *
 * Their tree: packetheader_tree (with eobiheader_tree), then message_tree, an array when the
 * packet holds several messages, each with messageheadercomp_tree and <message>_tree (the
 * OrderDetailsComp part of an order message nested in orderdetailscomp_tree). Their values:
 *   - integers and enumerations: the wire value in decimal (as ours);
 *   - prices: the wire integer read UNSIGNED, divided by 10^8 and printed with 15 significant
 *     digits (a negative price such as -10 shows as 184467440727.096): we format our exact
 *     price the same way;
 *   - pads: the first N characters of their hex text of the bytes ("00 00 ..."), as bytes in
 *     hex: a zero pad2 is "30:30". We render our pad bytes the same way.
 * Their decoder reads each template's 6.0 layout whatever the BodyLen: where a message is
 * shorter than its layout (the 2014 ExecutionSummary is 56 bytes, 6.0's 64), they show values
 * read from the next message. We refuse those bytes: the test requires our line to be marked
 * truncated and to leave those fields out, and checks their values against the packet bytes
 * at the layout's offsets (which confirms the offsets).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conformance.h"
#include "eobi_json.h"

/* Order messages and the offset of their OrderDetailsComp (TP_EOBI_ORDER_DETAILS). */
static const struct {
    uint16_t template_id;
    uint8_t offset;
} order_details[] = {
    {TP_EOBI_ORDER_ADD, 24},     {TP_EOBI_ORDER_MODIFY, 48},
    {TP_EOBI_ORDER_DELETE, 32},  {TP_EOBI_ORDER_MODIFY_SAME_PRIO, 40},
    {TP_EOBI_SNAPSHOT_ORDER, 8},
};
#define ORDER_DETAILS_LEN 24

static bool in_order_details(uint16_t template_id, uint8_t offset)
{
    for (size_t i = 0; i < sizeof(order_details) / sizeof(order_details[0]); i++)
        if (order_details[i].template_id == template_id)
            return offset >= order_details[i].offset &&
                   offset < order_details[i].offset + ORDER_DETAILS_LEN;
    return false;
}

/*
 * The raw text of member name in our printed object (a number, null, or a string with its
 * quotes), or false when it is absent. Our names are unique within a message's fixed fields.
 */
static bool our_token(const char *json, const char *name, char *out, size_t cap)
{
    char key[80];
    snprintf(key, sizeof(key), "\"%s\":", name);
    const char *at = strstr(json, key);
    if (at == NULL)
        return false;
    at += strlen(key);
    size_t n = strcspn(at, ",}]");
    assert_true(n > 0 && n < cap);
    memcpy(out, at, n);
    out[n] = '\0';
    return true;
}

/* Their rendering of a price whose wire integer is raw. */
static void their_price(char *out, size_t cap, int64_t raw)
{
    snprintf(out, cap, "%.15g", (double)(uint64_t)raw / 100000000.0);
}

/* Their rendering of pad bytes. */
static void their_pad(char *out, size_t cap, const uint8_t *bytes, unsigned width)
{
    char hex[32] = "";
    for (unsigned i = 0; i < width; i++)
        snprintf(hex + strlen(hex), sizeof(hex) - strlen(hex), "%s%02X", i ? " " : "", bytes[i]);
    out[0] = '\0';
    for (unsigned i = 0; i < width && hex[i] != '\0'; i++)
        snprintf(out + strlen(out), cap - strlen(out), "%s%02x", i ? ":" : "", (uint8_t)hex[i]);
}

/* Our "-10.50000000" -> the wire integer (8 decimals); exact over the whole int64 range. */
static int64_t parse_price8(const char *token)
{
    const char *c = token;
    assert_true(*c++ == '"');
    bool negative = *c == '-';
    c += negative;
    uint64_t magnitude = 0;
    int digits = 0;
    for (; *c >= '0' && *c <= '9'; c++)
        magnitude = magnitude * 10 + (uint64_t)(*c - '0');
    assert_true(*c++ == '.');
    for (; *c >= '0' && *c <= '9'; c++, digits++)
        magnitude = magnitude * 10 + (uint64_t)(*c - '0');
    if (digits != 8 || strcmp(c, "\"") != 0)
        fail_msg("our price %s does not have 8 decimals", token);
    return (int64_t)(negative ? (uint64_t)0 - magnitude : magnitude);
}

/* Bytes from our hex pad text. */
static void parse_pad(const char *token, uint8_t *bytes, unsigned width)
{
    assert_int_equal(strlen(token), 2 + 2 * width);
    for (unsigned i = 0; i < width; i++) {
        unsigned v;
        assert_int_equal(sscanf(token + 1 + 2 * i, "%2x", &v), 1);
        bytes[i] = (uint8_t)v;
    }
}

/* Their text for one field from our printed token. */
static bool actual_from_ours(const struct tp_eobi_field_info *f, const char *token, char *out,
                             size_t cap)
{
    uint8_t pad[8];
    switch (f->kind) {
    case TP_EOBI_KIND_PRICE:
        if (strcmp(token, "null") == 0)
            return false; /* their null rendering is not in the captures */
        their_price(out, cap, parse_price8(token));
        return true;
    case TP_EOBI_KIND_PAD:
        parse_pad(token, pad, f->width);
        their_pad(out, cap, pad, f->width);
        return true;
    default:
        snprintf(out, cap, "%s", token);
        return true;
    }
}

/* Their text for one field read from wire bytes (only for fields we refuse to print). */
static void actual_from_bytes(const struct tp_eobi_field_info *f, const uint8_t *p, char *out,
                              size_t cap)
{
    switch (f->kind) {
    case TP_EOBI_KIND_U8:
        snprintf(out, cap, "%u", p[0]);
        break;
    case TP_EOBI_KIND_U16:
        snprintf(out, cap, "%u", tp_eobi_le16(p));
        break;
    case TP_EOBI_KIND_U32:
        snprintf(out, cap, "%" PRIu32, tp_eobi_le32(p));
        break;
    case TP_EOBI_KIND_I32:
        snprintf(out, cap, "%" PRId32, (int32_t)tp_eobi_le32(p));
        break;
    case TP_EOBI_KIND_U64:
        snprintf(out, cap, "%" PRIu64, tp_eobi_le64(p));
        break;
    case TP_EOBI_KIND_I64:
    case TP_EOBI_KIND_QTY: /* release 7.0 only: these 6.0 captures have none */
        snprintf(out, cap, "%" PRId64, (int64_t)tp_eobi_le64(p));
        break;
    case TP_EOBI_KIND_PRICE:
        their_price(out, cap, (int64_t)tp_eobi_le64(p));
        break;
    case TP_EOBI_KIND_PAD:
        their_pad(out, cap, p, f->width);
        break;
    }
}

/* Our printed JSON of the message of len bytes at msg (asserted printable). */
static void print_ours(const uint8_t *msg, size_t len, char *json, size_t cap)
{
    int n = tp_eobi_print_json(json, cap, msg, len);
    if (n < 0 || (size_t)n >= cap)
        fail_msg("EOBI template %u does not print (%d)", tp_eobi_template_id(msg), n);
}

/* The three MessageHeaderComp values under tree. */
static void header_actuals(struct actuals *a, const char *tree, const char *json)
{
    static const char *const names[] = {"bodylen", "templateid", "msgseqnum"};
    char token[64], path[256];
    for (size_t i = 0; i < 3; i++) {
        assert_true(our_token(json, names[i], token, sizeof(token)));
        snprintf(path, sizeof(path), "%s/%s", tree, names[i]);
        actual_text(a, true, path, "%s", token);
    }
}

/*
 * Every field of a message: from our printed JSON; for a message shorter than its layout, the
 * fields past its end from the packet bytes (end: bytes of the packet from msg on).
 */
static void message_actuals(struct actuals *a, const char *prefix, const uint8_t *msg, size_t len,
                            size_t end)
{
    char json[4096], token[64], text[64], path[256];
    print_ours(msg, len, json, sizeof(json));
    const struct tp_eobi_message_info *info = tp_eobi_message_info(tp_eobi_template_id(msg));
    assert_non_null(info);
    bool truncated = strstr(json, "\"truncated\":true") != NULL;
    assert_int_equal(truncated, tp_eobi_check(msg, len) == -EBADMSG);

    char lower[64], tree[160];
    size_t n = 0;
    for (const char *c = info->name; *c && n + 1 < sizeof(lower); c++)
        lower[n++] = (char)(*c >= 'A' && *c <= 'Z' ? *c - 'A' + 'a' : *c);
    lower[n] = '\0';
    snprintf(tree, sizeof(tree), "%smessageheadercomp_tree", prefix);
    header_actuals(a, tree, json);
    snprintf(tree, sizeof(tree), "%s%s_tree", prefix, lower);

    for (unsigned i = 0; i < info->nfields; i++) {
        const struct tp_eobi_field_info *f = &info->fields[i];
        snprintf(path, sizeof(path), "%s/%s%s", tree,
                 in_order_details(info->template_id, f->offset) ? "orderdetailscomp_tree/" : "",
                 f->name);
        if (our_token(json, f->name, token, sizeof(token))) {
            assert_true((size_t)f->offset + f->width <= len);
            bool required = actual_from_ours(f, token, text, sizeof(text));
            actual_text(a, required, path, "%s", text);
        } else {
            /* only a field past the end of a truncated message may be missing */
            assert_true(truncated && (size_t)f->offset + f->width > len);
            assert_true((size_t)f->offset + f->width <= end);
            actual_from_bytes(f, msg + f->offset, text, sizeof(text));
            actual_text(a, true, path, "%s", text);
        }
    }
    if (info->template_id == TP_EOBI_INSTRUMENT_SUMMARY && !truncated &&
        tp_eobi_instrument_summary_no_md_entries(msg) > 0)
        fail_msg("InstrumentSummary with entries: map their entry names in this test first");
}

void check_eobi_frame(json_t *entry, const uint8_t *payload, size_t len)
{
    json_t *decoded = expect_member(entry, "decoded");
    struct tp_eobi_packet p;
    assert_int_equal(tp_eobi_packet_init(&p, payload, len), 0);
    struct actuals a = {0};
    char json[1024], token[64], text[64], path[256];
    size_t header_len = tp_eobi_body_len(payload);
    print_ours(payload, header_len, json, sizeof(json));
    header_actuals(&a, "packetheader_tree/eobiheader_tree", json);
    const struct tp_eobi_message_info *header = tp_eobi_message_info(TP_EOBI_PACKET_HEADER);
    for (unsigned i = 0; i < header->nfields; i++) {
        const struct tp_eobi_field_info *f = &header->fields[i];
        assert_true(our_token(json, f->name, token, sizeof(token)));
        snprintf(path, sizeof(path), "packetheader_tree/%s", f->name);
        bool required = actual_from_ours(f, token, text, sizeof(text));
        actual_text(&a, required, path, "%s", text);
    }

    /* Their message_tree is an array exactly when the packet holds several messages. */
    json_t *tree = expect_member(decoded, "message_tree");
    size_t count = json_is_array(tree) ? json_array_size(tree) : 1;
    struct tp_eobi_msg m;
    size_t index = 0;
    int rc;
    while ((rc = tp_eobi_packet_next(&p, &m)) == 1) {
        char prefix[32] = "message_tree/";
        if (count > 1)
            snprintf(prefix, sizeof(prefix), "message_tree/%zu/", index);
        message_actuals(&a, prefix, m.data, m.len, len - m.offset);
        index++;
    }
    assert_int_equal(rc, 0);
    assert_int_equal(index, count);
    conformance_compare("eobi", decoded, &a);
}
