/*
 * fuzz_packet.c - libFuzzer target: any bytes as an Ethernet frame through tp_net_parse_udp.
 * The sanitizers catch out-of-bounds reads; the checks below catch a payload that escapes the
 * frame or a key that disagrees with the bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "net_parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct tp_udp_view v;
    for (unsigned flags = 0; flags <= TP_NET_CHECK_IP_CSUM; flags++) {
        int rc = tp_net_parse_udp(data, size, flags, &v);
        if (rc > 0 || rc < TP_NET_ECSUM)
            abort();
        if (rc < 0)
            continue;
        if (v.payload < data || v.payload + v.payload_len > data + size)
            abort();
        if (v.vlan_count > TP_NET_MAX_VLANS || v.key.vlan > 4095)
            abort();
        if (tp_load_be16(v.payload - 6) != v.key.dst_port)
            abort();
    }
    return 0;
}
