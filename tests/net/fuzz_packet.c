/*
 * fuzz_packet.c - libFuzzer target: any bytes as an Ethernet frame through tp_net_parse_udp.
 * The sanitizers catch out-of-bounds reads; the checks below catch a payload that escapes the
 * frame or a key that disagrees with the bytes, and the short path for the common frame shape
 * must give the general parser's answer and view (with TP_NET_KEY_ONLY: its key and payload).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "net_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tp_udp_view v;
    for (unsigned flags = 0; flags <= (TP_NET_CHECK_IP_CSUM | TP_NET_KEY_ONLY); flags++) {
        int rc = tp_net_parse_udp(data, size, flags, &v);
        if (rc > 0 || rc < TP_NET_ECSUM)
            abort();
        struct tp_udp_view g;
        if (tp_net_parse_udp_any(data, size, flags, &g) != rc)
            abort();
        if (rc < 0)
            continue;
        if (!tp_flow_key_equal(&v.key, &g.key) || v.payload != g.payload ||
            v.payload_len != g.payload_len)
            abort();
        if (v.payload < data || v.payload + v.payload_len > data + size || v.key.vlan > 4095)
            abort();
        if (tp_load_be16(v.payload - 6) != v.key.dst_port)
            abort();
        if (flags & TP_NET_KEY_ONLY)
            continue; /* only the key and payload are promised */
        if (v.src_ip != g.src_ip || v.src_port != g.src_port || v.outer_vlan != g.outer_vlan ||
            v.vlan_count != g.vlan_count || v.ip_offset != g.ip_offset ||
            v.vlan_count > TP_NET_MAX_VLANS)
            abort();
    }
    return 0;
}
