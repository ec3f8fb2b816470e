/*
 * CME MDP 3.0 as a venue (tp_venue.h): price-level and order-level books (tp_mdp3_feed.h),
 * packets numbered by MsgSeqNum, each instrument's losses told by its RptSeq and rebuilt from
 * the snapshot loop (mdp3_recovery.h).
 */
#include <stddef.h>

#include "tp_mdp3_feed.h"
#include "tp_venue.h"

#define COUNTER(field)                                                                             \
    {                                                                                              \
#field, offsetof(struct tp_mdp3_feed, counters.field)                                      \
    }

static const struct tp_venue_counter decode_counters[] = {
    COUNTER(malformed),
    COUNTER(unknown_instrument),
    COUNTER(rejected),
    COUNTER(refusal_marks),
    COUNTER(registry_full),
    COUNTER(rpt_seq_gaps),
    COUNTER(snapshots_audited),
    COUNTER(snapshot_mismatch),
    COUNTER(order_snapshot_mismatch),
    COUNTER(orders_incomplete_marks),
};

const struct tp_venue_ops tp_venue_mdp3 = {
    .name = "mdp3",
    .bus_name = "CME",
    .protocol = TP_CHANNEL_MDP3,
    .registry_venue = TP_VENUE_CME_MDP3,
    .tpout_venue = 0,
    .sequence = TP_SEQ_MDP3,
    .framing = TP_FRAMING_PACKETS,
    .recovery = TP_RECOVER_SNAPSHOT_LOOP,
    .locate_map = false,
    .decode_counters = decode_counters,
    .n_decode_counters = sizeof(decode_counters) / sizeof(decode_counters[0]),
};
