/* Packets -> frames -> pcap, through codecs/net (frame builder and pcap writer). */
#include "pcap_out.h"

#include <string.h>

#include "net_build.h"

int tp_sim_pcap_open(struct tp_sim_pcap_out *o, const char *path,
                     const struct tp_sim_endpoints *endpoints)
{
    memset(o, 0, sizeof(*o));
    o->endpoints = *endpoints;
    return tp_pcap_writer_open(&o->writer, path);
}

int tp_sim_pcap_packet(void *ctx, const struct tp_sim_packet *p)
{
    struct tp_sim_pcap_out *o = ctx;
    const struct tp_sim_endpoint *ep = &o->endpoints.ep[p->stream][p->line];
    if (ep->group == 0)
        return 0;
    struct tp_udp_frame_spec spec = {
        .src_mac = {0x02, 0x00, 0x5e, 0x00, (uint8_t)p->stream, (uint8_t)p->line},
        .vlan_count = o->endpoints.vlan != 0,
        .vlan = {o->endpoints.vlan, 0},
        .src_ip = ep->source,
        .dst_ip = ep->group,
        .src_port = ep->source_port,
        .dst_port = ep->port,
        .ip_id = o->ip_id++,
    };
    uint8_t frame[TP_SIM_MAX_PAYLOAD + 64];
    int len = tp_net_build_udp(frame, sizeof(frame), &spec, p->data, p->len);
    if (len < 0)
        return len;
    /* The checksum covers the payload as sent; a fault's corruption goes on top (see packet.h). */
    int corrupted = p->corrupt_xor != 0 && p->corrupt_at < p->len;
    uint8_t flip = corrupted ? p->corrupt_xor : 0;
    uint8_t *flipped = frame + tp_net_udp_headers_len(&spec) + (corrupted ? p->corrupt_at : 0);
    *flipped ^= flip;
    tp_net_write_udp_checksum(frame, &spec, p->len);
    *flipped ^= flip;
    o->frames++;
    return tp_pcap_writer_write(&o->writer, o->endpoints.midnight_epoch_ns + p->time_ns, frame,
                                (size_t)len);
}

int tp_sim_pcap_close(struct tp_sim_pcap_out *o)
{
    return tp_pcap_writer_close(&o->writer);
}
