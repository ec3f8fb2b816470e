/*
 * dump_eobi.c - Eurex T7 EOBI packets (release 6.0 or 7.0: --eobi-release) -> JSON lines, through
 * the codec's JSON printer.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "eobi_json.h"
#include "eobi_release.h"

/* The T7 release whose layouts payloads are read in (--eobi-release). */
static enum tp_eobi_release eobi_release = TP_EOBI_RELEASE_DEFAULT;

/* Prints msg's JSON into d->json (grown as needed); the printer's result. */
static int print_eobi(struct dump_out *d, const uint8_t *msg, size_t len)
{
    int n = tp_eobi_release_print_json(eobi_release, d->json, d->json_cap, msg, len);
    if (n >= 0 && (size_t)n >= d->json_cap) {
        if (dump_json_reserve(d, (size_t)n) < 0)
            return -ENOMEM;
        n = tp_eobi_release_print_json(eobi_release, d->json, d->json_cap, msg, len);
    }
    return n;
}

static void dump_eobi_packet(struct dump_out *d, const struct dump_source *s,
                             const uint8_t *payload, size_t len)
{
    struct tp_eobi_packet p;
    if (tp_eobi_packet_init(&p, payload, len) < 0) {
        dump_malformed(d, s, s->payload_offset,
                       "EOBI packet of %zu bytes has no valid PacketHeader", len);
        return;
    }
    enum tp_eobi_release release = eobi_release, other;
    if (tp_eobi_release_check(release, payload, len, &other) < 0)
        dump_malformed(d, s, s->payload_offset,
                       "EOBI packet is in T7 release %s's layouts, not %s's (--eobi-release)",
                       tp_eobi_release_name(other), tp_eobi_release_name(release));
    /* The header line part, printed once and repeated on every message's line. */
    size_t header_len = tp_eobi_body_len(payload);
    int n = print_eobi(d, payload, header_len);
    if (n < 0) {
        dump_malformed(d, s, s->payload_offset, "out of memory printing an EOBI PacketHeader");
        return;
    }
    char *header = strdup(d->json);
    if (header == NULL) {
        dump_malformed(d, s, s->payload_offset, "out of memory printing an EOBI PacketHeader");
        return;
    }
    struct tp_eobi_msg m;
    unsigned index = 0;
    int rc;
    while ((rc = tp_eobi_packet_next(&p, &m)) == 1) {
        size_t offset = s->payload_offset + m.offset;
        int check = tp_eobi_release_check_message(release, m.data, m.len);
        n = print_eobi(d, m.data, m.len);
        dump_line_start(d, s, &dump_venue_eobi);
        fprintf(d->out, ",\"packetheader\":%s,\"index\":%u,\"msg\":%s}\n", header, ++index,
                n < 0 ? "null" : d->json);
        if (check >= 0)
            d->messages++;
        else if (check == -ENOMSG)
            dump_malformed(d, s, offset, "EOBI template %u is not decoded", m.template_id);
        else
            dump_malformed(d, s, offset, "EOBI template %u of %u bytes is shorter than its layout",
                           m.template_id, m.len);
    }
    if (rc < 0)
        dump_malformed(d, s, s->payload_offset + p.error_offset,
                       "EOBI BodyLen does not fit the packet (%zu bytes)", len);
    if (index == 0 && rc == 0) {
        dump_line_start(d, s, &dump_venue_eobi);
        fprintf(d->out, ",\"packetheader\":%s,\"index\":0}\n", header);
    }
    free(header);
}

static int set_release(const char *value, char *err, size_t errlen)
{
    return tp_eobi_release_option(value, &eobi_release, err, errlen);
}

static const struct tool_venue_option eobi_options[] = {
    {.name = "eobi-release", .arg = "6.0|7.0", .set = set_release},
};

const struct dump_venue dump_venue_eobi = {
    .name = "eobi",
    .packet = dump_eobi_packet,
    .options = eobi_options,
    .n_options = sizeof(eobi_options) / sizeof(eobi_options[0]),
};
