/*
 * dump_mdp3.c - CME MDP 3.0 packets -> JSON lines, through the generated SBE printers.
 */
#include <errno.h>
#include <inttypes.h>

#include "dump.h"
#include "mdp3_packet.h"

static void dump_mdp3_packet(struct dump_out *d, const struct dump_source *s,
                             const uint8_t *payload, size_t len)
{
    struct tp_mdp3_packet p;
    if (tp_mdp3_packet_init(&p, payload, len) < 0) {
        dump_malformed(d, s, s->payload_offset, "MDP3 packet of %zu bytes is too short", len);
        return;
    }
    struct tp_mdp3_msg m;
    int rc;
    unsigned index = 0;
    while ((rc = tp_mdp3_packet_next(&p, &m)) == 1) {
        size_t offset = s->payload_offset + m.offset;
        index++;
        int n = tp_mdp3_msg_print_json(&m, d->json, d->json_cap);
        if (n >= 0 && (size_t)n >= d->json_cap) {
            if (dump_json_reserve(d, (size_t)n) < 0)
                n = -ENOMEM;
            else
                n = tp_mdp3_msg_print_json(&m, d->json, d->json_cap);
        }
        dump_line_start(d, s, &dump_venue_mdp3);
        const char *name =
            m.schema_id == MKTDATA_SCHEMA_ID ? mktdata_message_name(m.template_id) : NULL;
        fprintf(d->out,
                ",\"seq\":%" PRIu32 ",\"sending_time\":%" PRIu64
                ",\"index\":%u,\"template_id\":%u,\"message\":\"%s\",\"schema_id\":%u,\"version\":%"
                "u,\"msg\":%s}\n",
                p.seq, p.sending_time, index, m.template_id, name ? name : "unknown", m.schema_id,
                m.version, n < 0 ? "null" : d->json);
        if (n >= 0)
            d->messages++;
        else if (n == -ENOENT)
            dump_malformed(d, s, offset,
                           "MDP3 template %u is not in the schema (the message's schema version "
                           "is %u, this build decodes version %u)",
                           m.template_id, m.version, (unsigned)MKTDATA_SCHEMA_VERSION);
        else if (n == -EPROTO)
            dump_malformed(d, s, offset, "MDP3 message of schema %u (expected %u)", m.schema_id,
                           MKTDATA_SCHEMA_ID);
        else
            dump_malformed(d, s, offset, "MDP3 template %u body is truncated or inconsistent",
                           m.template_id);
    }
    if (rc < 0)
        dump_malformed(d, s, s->payload_offset + p.error_offset,
                       "MDP3 MsgSize does not fit the packet (%zu bytes)", len);
}

const struct dump_venue dump_venue_mdp3 = {.name = "mdp3", .packet = dump_mdp3_packet};
