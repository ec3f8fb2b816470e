/*
 * Fault injector: one source packet stream in, what lines A and B carry out.
 *
 * Promises:
 * - Without faults, every source packet goes out once on each enabled line, unchanged.
 * - Faults apply to the incremental stream only (snapshot and definition streams pass through,
 *   except for a late joiner, who sees nothing on a line before joining it), but for each line's
 *   snapshot_loss, which drops snapshot-stream packets on that line alone.
 * - Every fault applied is recorded with the source packet's index and sequence number, so the
 *   report (tp_sim_faults_report) lists exactly the packets a fault touched.
 * - Output reaches the sink in time order across lines (a small heap merges delayed lines).
 * - Faults draw from their own seeded generators: they never change the message stream itself.
 */
#ifndef TP_SIM_FAULTS_H
#define TP_SIM_FAULTS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "packet.h"
#include "rng.h"

struct tp_sim_line_faults {
    int enabled;             /* the line exists */
    double loss;             /* probability each packet is lost */
    double burst;            /* probability a loss burst starts at a packet */
    uint32_t burst_len;      /* packets lost per burst */
    double reorder;          /* probability a packet is sent after its successor */
    double duplicate;        /* probability a packet is sent twice */
    uint64_t delay_ns;       /* added to every packet of the line (A/B skew) */
    double truncate;         /* probability a packet is cut short */
    double corrupt;          /* probability one payload byte is flipped */
    uint32_t heartbeat_from; /* source packets [from, to) carry only heartbeats */
    uint32_t heartbeat_to;
    uint32_t late_join;   /* the line is joined at this source packet (0: from the start) */
    double snapshot_loss; /* probability each snapshot-stream packet is lost on this line */
};

struct tp_sim_fault_params {
    uint64_t seed;
    struct tp_sim_line_faults line[TP_SIM_LINES];
    double both_loss; /* probability a packet is lost on both lines (forces recovery) */
    /* Builds the heartbeat that replaces src on a heartbeats-only line; returns its length. */
    uint16_t (*heartbeat)(const struct tp_sim_packet *src, uint8_t *out);
};

/* What happened to one source packet on one line. */
struct tp_sim_fault_record {
    uint32_t index;
    uint64_t seq;
    uint32_t count;
    uint32_t detail; /* truncate: new length; corrupt: byte offset */
};

enum tp_sim_fault_kind {
    TP_SIM_F_LOST,       /* random or burst loss on this line only */
    TP_SIM_F_BOTH_LOST,  /* lost on both lines (recorded on each) */
    TP_SIM_F_REORDERED,  /* sent after its successor */
    TP_SIM_F_DUPLICATED, /* sent twice */
    TP_SIM_F_TRUNCATED,
    TP_SIM_F_CORRUPTED,
    TP_SIM_F_HEARTBEAT,     /* data replaced by a heartbeat */
    TP_SIM_F_SNAPSHOT_LOST, /* a snapshot-stream packet lost on this line */
    TP_SIM_F_KINDS,
};

struct tp_sim_fault_list {
    struct tp_sim_fault_record *items;
    size_t n, cap;
};

struct tp_sim_line_state {
    struct tp_sim_rng rng;
    struct tp_sim_rng
        snapshot_rng; /* its own: snapshot loss leaves the other faults as they were */
    uint32_t burst_left;
    struct tp_sim_packet *held; /* a packet waiting to be sent after its successor */
    uint64_t source, sent, joined_at_seq;
    int joined;
    struct tp_sim_fault_list faults[TP_SIM_F_KINDS];
};

struct tp_sim_faults {
    struct tp_sim_fault_params params;
    struct tp_sim_rng both_rng;
    struct tp_sim_line_state line[TP_SIM_LINES];
    struct tp_sim_packet_sink sink;
    struct tp_sim_packet **heap; /* pending output, min-heap by (time, serial) */
    uint64_t *heap_serial;
    size_t heap_n, heap_cap;
    uint64_t serial;
    struct tp_sim_packet scratch; /* the packet being faulted */
};

int tp_sim_faults_init(struct tp_sim_faults *f, const struct tp_sim_fault_params *p,
                       const struct tp_sim_packet_sink *sink);
/* Feeds one source packet (in time order); returns 0 or a negative errno from the sink. */
int tp_sim_faults_packet(struct tp_sim_faults *f, const struct tp_sim_packet *src);
/* Sends whatever is still held or pending; call once at the end. */
int tp_sim_faults_finish(struct tp_sim_faults *f);
/* {"A": {...}, "B": {...}} with the configured faults and the packets each one touched. */
json_t *tp_sim_faults_report(const struct tp_sim_faults *f);
void tp_sim_faults_free(struct tp_sim_faults *f);

#endif
