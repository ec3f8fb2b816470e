/*
 * dump_out.c - line prefixes, error reports and the JSON buffer of tickplane-dump.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>

#include "dump.h"

static void print_endpoint(FILE *f, const char *name, uint32_t ip, uint16_t port)
{
    fprintf(f, ",\"%s\":\"%u.%u.%u.%u:%u\"", name, ip >> 24, (ip >> 16) & 0xff, (ip >> 8) & 0xff,
            ip & 0xff, port);
}

void dump_line_start(struct dump_out *d, const struct dump_source *s,
                     const struct dump_venue *venue)
{
    FILE *f = d->out;
    if (s->udp == NULL) {
        fprintf(f, "{\"offset\":%zu", s->payload_offset);
    } else {
        const struct tp_udp_view *u = s->udp;
        fprintf(f, "{\"frame\":%" PRIu64 ",\"ts_ns\":%" PRIu64, s->frame, s->ts_ns);
        print_endpoint(f, "src", u->src_ip, u->src_port);
        print_endpoint(f, "dst", u->key.dst_ip, u->key.dst_port);
        if (u->vlan_count == 0)
            fprintf(f, ",\"vlan\":null");
        else
            fprintf(f, ",\"vlan\":%u", u->key.vlan);
        if (u->vlan_count == 2)
            fprintf(f, ",\"outer_vlan\":%u", u->outer_vlan);
    }
    fprintf(f, ",\"proto\":\"%s\"", venue->name);
}

void dump_malformed(struct dump_out *d, const struct dump_source *s, size_t offset, const char *fmt,
                    ...)
{
    va_list ap;
    d->malformed++;
    if (s->udp != NULL || s->frame != 0)
        fprintf(d->err, "tickplane-dump: frame %" PRIu64 " offset %zu: ", s->frame, offset);
    else
        fprintf(d->err, "tickplane-dump: file offset %zu: ", offset);
    va_start(ap, fmt);
    vfprintf(d->err, fmt, ap);
    va_end(ap);
    fputc('\n', d->err);
}

int dump_json_reserve(struct dump_out *d, size_t need)
{
    if (need < d->json_cap)
        return 0;
    char *bigger = realloc(d->json, need + 1);
    if (bigger == NULL)
        return -ENOMEM;
    d->json = bigger;
    d->json_cap = need + 1;
    return 0;
}

void dump_json_string(FILE *f, const uint8_t *p, size_t len)
{
    while (len > 0 && (p[len - 1] == ' ' || p[len - 1] == '\0'))
        len--;
    fputc('"', f);
    for (size_t i = 0; i < len; i++) {
        if (p[i] == '"' || p[i] == '\\')
            fprintf(f, "\\%c", p[i]);
        else if (p[i] < 0x20 || p[i] > 0x7e)
            fprintf(f, "\\u%04x", p[i]);
        else
            fputc(p[i], f);
    }
    fputc('"', f);
}
