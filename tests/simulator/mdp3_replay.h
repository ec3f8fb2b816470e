/*
 * MDP3 reference replay for the simulator tests: decodes packets with the codec
 * (codecs/mdp3 + generated mdp3_sbe.h) and rebuilds price-level books (message 46, CME update
 * actions applied to plain arrays) and order-level books (message 47) in the simplest way.
 * While replaying it checks MsgSeqNum continuity, RptSeq per instrument, snapshots (52) against
 * the books at that point, order-level snapshots (53) against the orders, definitions (54 futures,
 * 55 options, 56 spreads), trade summaries (fills add up), daily statistics (49) and limits (50)
 * with their RptSeqs (snapshots carry the latest limits), and that books are never crossed at an
 * end of event. Failures of the tests' expectations are cmocka assertions; protocol inconsistencies
 * are counted in `errors`.
 */
#ifndef TP_SIM_MDP3_REPLAY_H
#define TP_SIM_MDP3_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "mdp3_feed.h"
#include "mdp3_packet.h"
#include "packet.h"
#include "sim_test_util.h"

/* Book depths the replay keeps (the simulator's default MarketDepth, and the implied book's). */
#define DEPTH         10
#define IMPLIED_DEPTH 2

/* Reference price-level book: arrays, CME semantics as documented in tools/sim/mdp3_feed.h. */
struct ref_level {
    int64_t px, qty;
    int32_t orders;
};

struct ref_mbp {
    struct ref_level lv[4][DEPTH]; /* books: bid, ask, implied bid, implied ask */
    uint32_t n[4];
    uint32_t rpt_seq;
    int64_t volume;
    int64_t first_trade, trade_high, trade_low; /* from the trade summaries (0: none yet) */
    int64_t last_trade;
    int64_t stat_open, stat_high, stat_low;            /* from the session statistics */
    int64_t settlement, cleared_volume, open_interest; /* daily statistics (49) */
    int64_t high_limit, low_limit, max_variation;      /* limits (50); 0: none yet */
};

struct replay {
    uint32_t instruments;
    struct ref_mbp *mbp; /* [instruments] */
    struct ref_book mbo;
    uint32_t last_incr_seq;
    uint64_t actions[6];
    uint64_t templates[64];
    uint64_t errors;
    uint64_t end_of_events, snapshots_checked, resets;
    uint64_t mbo_snapshots_checked, mbo_snapshot_orders;
    int *defined; /* [instruments]: definition seen before the first incremental packet */
    uint32_t expect_seq[TP_SIM_STREAMS];
    int incremental_started;
    uint8_t last_mei;
};

void replay_init(struct replay *r, uint32_t instruments, uint64_t max_order_id);
void replay_free(struct replay *r);
/* Replays one packet (its UDP payload) of a stream. */
void replay_packet(struct replay *r, int stream, const uint8_t *data, size_t len);
/* replay_init, then every packet in order. */
void replay_all(const struct tp_sim_packet *packets, size_t n, struct replay *r,
                uint32_t instruments, uint64_t max_order_id);
/* The daily statistics and limits replayed equal the simulator's own record of them. */
void check_mdp3_stats(const struct replay *r, const struct tp_sim_mdp3_stats *stats);
/* The reference levels of every instrument equal the truth file's (cmocka assertions). */
void check_mbp_truth(const struct replay *r, const char *path);

#endif
