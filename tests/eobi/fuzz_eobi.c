/*
 * fuzz_eobi.c - libFuzzer target: the input is one EOBI packet. It is framed; every message is
 * checked, printed as JSON (the printer must agree with the check and stay inside BodyLen) and,
 * when the check passes, read field by field through the layout table. Each message is copied
 * to a buffer of exactly its BodyLen so a read past it is an ASan report. The same bytes are
 * then taken as release 7.0: its release check, its JSON printer per message, and its conversion
 * to 6.0, whose every message must frame and pass the 6.0 check, be a refused bare header or a
 * template neither release decodes; a conversion back to 7.0 must not fail on them.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eobi_json.h"
#include "eobi_release.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Sums every field of a checked message (keeps the reads from being optimised away). */
static uint64_t read_fields(const uint8_t *msg, uint16_t template_id)
{
    const struct tp_eobi_message_info *info = tp_eobi_message_info(template_id);
    uint64_t sum = 0;
    for (unsigned i = 0; i < info->nfields; i++)
        for (unsigned b = 0; b < info->fields[i].width; b++)
            sum += msg[info->fields[i].offset + b];
    if (template_id == TP_EOBI_INSTRUMENT_SUMMARY)
        for (unsigned e = 0; e < tp_eobi_instrument_summary_no_md_entries(msg); e++)
            sum += (uint64_t)tp_eobi_md_entry_md_entry_px(tp_eobi_md_entry(msg, e));
    return sum;
}

static void one_message(const struct tp_eobi_msg *m)
{
    static char out[1 << 21]; /* any message of up to 64 KiB, at 32 bytes of JSON a byte */
    uint8_t *msg = malloc(m->len);
    if (msg == NULL)
        abort();
    memcpy(msg, m->data, m->len);
    int check = tp_eobi_check(msg, m->len);
    int n = tp_eobi_print_json(out, sizeof(out), msg, m->len);
    if (check == -ENOMSG ? n != -ENOMSG : (n <= 0 || (size_t)n >= sizeof(out)))
        abort();
    if (check >= 0) {
        if (check != m->template_id || strstr(out, "\"truncated\":true") != NULL)
            abort();
        volatile uint64_t sink = read_fields(msg, m->template_id);
        (void)sink;
    } else if (check == -EBADMSG && strstr(out, "\"truncated\":true") == NULL) {
        abort();
    }
    free(msg);
}

/* Release 7.0: the printer stays inside each message and agrees with the 7.0 check. */
static void one_message_70(const struct tp_eobi_msg *m)
{
    static char out[1 << 21];
    uint8_t *msg = malloc(m->len);
    if (msg == NULL)
        abort();
    memcpy(msg, m->data, m->len);
    int check = tp_eobi_release_check_message(TP_EOBI_RELEASE_7_0, msg, m->len);
    int n = tp_eobi_release_print_json(TP_EOBI_RELEASE_7_0, out, sizeof(out), msg, m->len);
    if (check == -ENOMSG ? n != -ENOMSG : (n <= 0 || (size_t)n >= sizeof(out)))
        abort();
    if (check >= 0 && strstr(out, "\"truncated\":true") != NULL)
        abort();
    free(msg);
}

/* The packet as release 7.0, converted to 6.0 (and back): every output message is readable. */
static void as_release_70(const uint8_t *data, size_t size)
{
    enum tp_eobi_release other;
    (void)tp_eobi_release_check(TP_EOBI_RELEASE_6_0, data, size, &other);
    (void)tp_eobi_release_check(TP_EOBI_RELEASE_7_0, data, size, &other);
    uint8_t *v6 = malloc(size ? size : 1);
    if (v6 == NULL)
        abort();
    int n = tp_eobi_packet_to_v6(TP_EOBI_RELEASE_7_0, data, size, v6, size);
    struct tp_eobi_packet p;
    struct tp_eobi_msg m;
    if (n >= 0) {
        if ((size_t)n > size || tp_eobi_packet_init(&p, v6, (size_t)n) != 0)
            abort();
        int rc;
        while ((rc = tp_eobi_packet_next(&p, &m)) == 1) {
            int check = tp_eobi_check(m.data, m.len);
            if (check < 0 && m.len != TP_EOBI_MESSAGE_HEADER_LEN && check != -ENOMSG)
                abort();
        }
        if (rc != 0)
            abort();
        uint8_t *back = malloc(2 * (size_t)n + 1);
        if (back == NULL)
            abort();
        (void)tp_eobi_packet_from_v6(TP_EOBI_RELEASE_7_0, v6, (size_t)n, back, 2 * (size_t)n);
        free(back);
    }
    free(v6);
    if (tp_eobi_packet_init(&p, data, size) == 0)
        while (tp_eobi_packet_next(&p, &m) == 1)
            one_message_70(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    as_release_70(data, size);
    struct tp_eobi_packet p;
    if (tp_eobi_packet_init(&p, data, size) < 0)
        return 0;
    struct tp_eobi_msg m;
    size_t end = tp_eobi_body_len(data);
    int rc;
    while ((rc = tp_eobi_packet_next(&p, &m)) == 1) {
        if (m.offset != end || m.offset + m.len > size)
            abort();
        end += m.len;
        one_message(&m);
    }
    if (rc == 0 ? end != size : p.error_offset != end)
        abort();
    return 0;
}
