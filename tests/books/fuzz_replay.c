/*
 * libFuzzer target: hostile packets through tickplane-replay's channel paths (tools/replay), the
 * line map, the line arbiter and the venue feeds, as a capture would bring them.
 *
 * Input: the first byte picks the venue (0 ITCH, 1 MDP3, 2 EOBI, by its value mod 3) and whether
 * a --lines map names two incremental lines and a snapshot line (bit 7); the rest is a sequence
 * of blocks `flow u8, gap u8, length u16 (big-endian), payload`: each a UDP datagram to one of 8
 * flows (multicast groups, one unicast), `gap` microseconds after the one before, written into an
 * in-memory pcap the replay reads. Tables are tiny so capacity exhaustion happens often.
 * Sanitizers catch any out-of-bounds read or undefined behaviour; checked after each input: the
 * replay read the whole capture, every datagram of it (a capture of none it refuses).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net_build.h"
#include "replay_input.h"

#define FRAME_MAX 1600
#define PCAP_MAX  (1u << 20)

static size_t put_pcap_header(uint8_t *out)
{
    /* Classic pcap, little endian, nanosecond stamps, Ethernet. */
    static const uint8_t header[24] = {0x4d, 0x3c, 0xb2, 0xa1, 2,    0,    4, 0, 0, 0, 0, 0,
                                       0,    0,    0,    0,    0xff, 0xff, 0, 0, 1, 0, 0, 0};
    memcpy(out, header, sizeof(header));
    return sizeof(header);
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t *pcap;
    if (size < 1)
        return 0;
    if (pcap == NULL && (pcap = malloc(PCAP_MAX)) == NULL)
        abort();
    size_t len = put_pcap_header(pcap), at = 1;
    uint64_t ns = 0, datagrams = 0;
    while (at + 4 <= size) {
        uint8_t flow = data[at] & 7;
        uint16_t n = (uint16_t)(data[at + 2] << 8 | data[at + 3]);
        ns += (uint64_t)data[at + 1] * 1000;
        at += 4;
        if (n > size - at)
            n = (uint16_t)(size - at);
        struct tp_udp_frame_spec spec = {
            .src_ip = 0x0a000001,
            .dst_ip = flow == 7 ? 0x0a000002 : 0xe0000001 + flow,
            .src_port = 1000,
            .dst_port = (uint16_t)(20000 + flow),
        };
        if (len + 16 + FRAME_MAX > PCAP_MAX)
            break;
        int frame = tp_net_build_udp(pcap + len + 16, FRAME_MAX, &spec, data + at, n);
        at += n;
        if (frame < 0)
            continue;
        put_le32(pcap + len, (uint32_t)(ns / 1000000000));
        put_le32(pcap + len + 4, (uint32_t)(ns % 1000000000));
        put_le32(pcap + len + 8, (uint32_t)frame);
        put_le32(pcap + len + 12, (uint32_t)frame);
        len += 16 + (size_t)frame;
        datagrams++;
    }
    struct replay_lines lines = {0};
    char err[160];
    if ((data[0] & 0x80) && replay_lines_parse(&lines,
                                               "incr-a=224.0.0.1:20000,incr-b=224.0.0.2:20001,"
                                               "snap-a=224.0.0.3:20002",
                                               err, sizeof(err)) != 0)
        abort();
    struct tp_instrument_filter filter;
    tp_instrument_filter_init(&filter);
    struct replay_params p = {.format = REPLAY_FORMAT_PCAP,
                              .venue = replay_venues[(data[0] & 0x7f) % REPLAY_VENUES],
                              .instruments = 16,
                              .orders = 256,
                              .levels = 8,
                              .no_checksum = 1,
                              .filter = &filter,
                              .lines = (data[0] & 0x80) ? &lines : NULL};
    static struct replay r;
    if (replay_open(&r, &p, pcap, len) != 0)
        abort();
    /* A capture of no datagram is refused ("has no frames"); any other is read to its end. */
    if ((replay_run(&r) != 0) != (datagrams == 0) || r.packets != datagrams || r.not_udp != 0)
        abort();
    replay_close(&r);
    return 0;
}
