/*
 * pcap_writer.h - writing classic pcap files (Ethernet link type) without libpcap.
 *
 * For the simulator and tests that produce captures for the net_pcap DPDK device and for
 * tickplane-dump. Timestamps are written with nanosecond resolution (magic 0xa1b23c4d), which
 * libpcap, tshark and DPDK's net_pcap read. Uses stdio: start-up and tools only.
 */
#ifndef TP_PCAP_WRITER_H
#define TP_PCAP_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct tp_pcap_writer {
    FILE *file;
};

/* Creates (truncates) path and writes the file header; 0 or -errno. */
int tp_pcap_writer_open(struct tp_pcap_writer *w, const char *path);

/* Appends one frame captured at ts_ns (ns since the epoch); 0 or -errno. */
int tp_pcap_writer_write(struct tp_pcap_writer *w, uint64_t ts_ns, const uint8_t *frame,
                         size_t len);

/* Flushes and closes; 0 or -errno. */
int tp_pcap_writer_close(struct tp_pcap_writer *w);

#endif /* TP_PCAP_WRITER_H */
