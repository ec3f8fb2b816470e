/*
 * Nasdaq BinaryFILE output: each ITCH message as a big-endian u16 length followed by the message,
 * no packet headers (the format of Nasdaq's historical ITCH files). Blocks are framed by the
 * codec's tp_binfile_append into a 1 MiB buffer written out when full.
 */
#ifndef TP_SIM_BINARYFILE_OUT_H
#define TP_SIM_BINARYFILE_OUT_H

#include <stdio.h>

#include "itch_feed.h"

#define TP_SIM_BINFILE_BUFFER (1u << 20)

struct tp_sim_binaryfile {
    FILE *f;
    uint8_t *buf;
    size_t used;
    unsigned long long messages;
    int failed;
};

/* Opens path for writing; returns 0 or a negative errno. */
int tp_sim_binaryfile_open(struct tp_sim_binaryfile *bf, const char *path);
/* A message sink that appends to the file (ctx is the struct tp_sim_binaryfile). */
int tp_sim_binaryfile_message(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns);
/* Flushes and closes; returns 0 or -EIO if anything failed to reach the file. */
int tp_sim_binaryfile_close(struct tp_sim_binaryfile *bf);

#endif
