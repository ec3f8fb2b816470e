/*
 * The model's events as a Eurex T7 EOBI channel: incremental packets (lines A and B through
 * the fault injector) and the snapshot loop, in the layouts of T7 release params.release (6.0 or
 * 7.0: the packets are built in 6.0 layouts, at most 2/3 of a payload for 7.0 so that they fit
 * once converted).
 *
 * Promises:
 * - Instrument id i is SecurityID TP_SIM_SECURITY_ID(i) in market segment
 *   first_segment_id + i % segments; each segment numbers its incremental packets (ApplSeqNum)
 *   from 1. An order's TrdRegTSTimePriority is TP_SIM_EOBI_PRIORITY(order id): unique, and
 *   increasing with the model's order ids.
 * - Incremental: each segment's first packet is a ProductStateChange (continuous trading); then
 *   each model step (one matching event, one instrument) is one packet, or several
 *   when it does not fit (CompletionIndicator complete on its last only). Add: OrderAdd; partial
 *   cancel: OrderModifySamePrio; delete: OrderDelete; replace: OrderModify from the old
 *   priority to the new order's; execution: ExecutionSummary (the aggressor on the other side)
 *   then FullOrderExecution or PartialOrderExecution; hidden trade: TradeReport; status:
 *   InstrumentStateChange (203 continuous, 2 halt). Applying them from the start gives exactly
 *   the model's live orders, price levels, volume and status.
 * - Snapshots: every snapshot_every incremental packets the next segment in turn is sent on the
 *   snapshot stream: ProductSummary (LastMsgSeqNumProcessed: the segment's last ApplSeqNum),
 *   then per instrument of the segment an InstrumentSummary (status, TotNoOrders, and as
 *   entries its TradeVolume and, once it traded, its last trade) and its live orders as
 *   SnapshotOrders, MsgSeqNum from 1, packets filled, the last with CompletionIndicator
 *   complete. The snapshot stream goes out on lines A and B (each may lose packets of it:
 *   --snapshot-loss-a/-b). After the last event every segment sends a Heartbeat
 *   (LastMsgSeqNumProcessed: its last ApplSeqNum) on the incremental stream and a closing
 *   snapshot loop covers every segment.
 */
#ifndef TP_SIM_EOBI_FEED_H
#define TP_SIM_EOBI_FEED_H

#include <jansson.h>
#include <stdint.h>

#include "model.h"
#include "packet.h"

#define TP_SIM_EOBI_PRIORITY_BASE UINT64_C(1700000000000000000)
#define TP_SIM_EOBI_PRIORITY(id)  (TP_SIM_EOBI_PRIORITY_BASE + (id))

struct tp_sim_eobi_params {
    uint32_t segments;          /* market segments, 1..64 */
    int32_t first_segment_id;   /* MarketSegmentID of segment 0 */
    uint32_t snapshot_every;    /* incremental packets between segment snapshots (0: only the
                                 * closing loop) */
    uint64_t midnight_epoch_ns; /* TransactTime = this + venue time */
    uint8_t release;            /* enum tp_eobi_release of the packets written (default: the
                                 * build's -Deobi_release) */
};

void tp_sim_eobi_params_default(struct tp_sim_eobi_params *p);

struct tp_sim_eobi_feed {
    struct tp_sim_model *model;
    struct tp_sim_eobi_params params;
    struct tp_sim_packet_sink sink;
    uint64_t seq[64];       /* last ApplSeqNum per segment */
    uint32_t next_snapshot; /* the segment the next snapshot is of */
    uint32_t since_snapshot;
    uint32_t index[TP_SIM_STREAMS];
    uint64_t now_ns;
    uint64_t messages, packets, snapshots, snapshot_packets, heartbeats;
    struct tp_sim_packet pkt;
};

/* Returns 0 or -EINVAL (segments out of range). */
int tp_sim_eobi_init(struct tp_sim_eobi_feed *f, struct tp_sim_model *m,
                     const struct tp_sim_eobi_params *p, const struct tp_sim_packet_sink *sink);

/* Runs the model for `events` events; returns 0 or a negative errno. */
int tp_sim_eobi_run(struct tp_sim_eobi_feed *f, uint64_t events);

json_t *tp_sim_eobi_report(const struct tp_sim_eobi_feed *f);

/* The heartbeat that replaces src on a heartbeats-only line (tp_sim_fault_params.heartbeat). */
uint16_t tp_sim_eobi_heartbeat(const struct tp_sim_packet *src, uint8_t *out);

#endif
