/*
 * Abstract packets between the simulator's stages: a protocol packetizer (MoldUDP64, MDP3)
 * produces them, the fault injector turns each into what lines A and B carry, and an output sink
 * (pcap file, live UDP, memory) takes the result. The payload is the UDP payload.
 */
#ifndef TP_SIM_PACKET_H
#define TP_SIM_PACKET_H

#include <stdbool.h>
#include <stdint.h>

/* Largest UDP payload the simulator builds (a 1500-byte MTU minus IPv4 and UDP headers). */
#define TP_SIM_MAX_PAYLOAD 1472

/*
 * A packetizer's pack_window_ns for a venue at peak (--packet-bytes): no time limit, each packet
 * takes consecutive messages until the next one would pass its payload limit.
 */
#define TP_SIM_PACK_FILL UINT64_MAX

/* True when a message at time_ns no longer joins a packet whose first message left at first_ns. */
static inline bool tp_sim_past_pack_window(uint64_t first_ns, uint64_t time_ns, uint64_t window_ns)
{
    return time_ns > first_ns && time_ns - first_ns > window_ns;
}

enum tp_sim_stream {
    TP_SIM_STREAM_INCREMENTAL = 0,  /* ITCH MoldUDP64 / MDP3 incremental: faults apply here */
    TP_SIM_STREAM_SNAPSHOT = 1,     /* MDP3 market recovery */
    TP_SIM_STREAM_DEFINITION = 2,   /* MDP3 instrument definition */
    TP_SIM_STREAM_SNAPSHOT_MBO = 3, /* MDP3 order-level market recovery */
    TP_SIM_STREAMS = 4,
};

enum tp_sim_line {
    TP_SIM_LINE_A = 0,
    TP_SIM_LINE_B = 1,
    TP_SIM_LINES = 2,
};

struct tp_sim_packet {
    uint64_t time_ns; /* ns since midnight when the packet leaves (after faults: on its line) */
    uint64_t seq;     /* first sequence number carried (MoldUDP64 / MDP3 MsgSeqNum) */
    uint32_t count;   /* messages carried (0: heartbeat) */
    uint32_t index;   /* position of the source packet on its stream, from 0 */
    uint16_t len;     /* payload bytes */
    uint8_t stream;   /* enum tp_sim_stream */
    uint8_t line;     /* enum tp_sim_line (set by the fault injector) */
    /*
     * A corrupted packet: data[corrupt_at] was XORed with corrupt_xor (0: not corrupted). Sinks
     * that build frames compute the UDP checksum over the original byte, so the corruption
     * happens "on the wire", after the checksum, and the frame's checksum is wrong.
     */
    uint8_t corrupt_xor;
    uint16_t corrupt_at;
    uint8_t data[TP_SIM_MAX_PAYLOAD];
};

struct tp_sim_packet_sink {
    /* Called once per packet, in time order; returns 0 or a negative errno. */
    int (*packet)(void *ctx, const struct tp_sim_packet *p);
    void *ctx;
};

#endif
