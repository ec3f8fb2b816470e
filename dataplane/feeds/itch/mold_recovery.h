/*
 * MoldUDP64 gap recovery: asks the re-request server for the messages a gap lost, retries, and
 * gives up after a configured time (the caller then skips the gap and marks the books stale).
 *
 * The arbiter (dataplane/lines/arbiter.h) finds the gap and merges the retransmitted packets
 * (offered on TP_LINE_RECOVERY); this module only decides when to send which request. Requests
 * cover the start of the current gap, at most max_messages at a time, so a long gap is fetched in
 * pieces as each piece arrives. No DPDK, no allocation, time is the caller's TSC.
 */
#ifndef TP_RECOVERY_MOLD_RECOVERY_H
#define TP_RECOVERY_MOLD_RECOVERY_H

#include <stdbool.h>
#include <stdint.h>

#include "arbiter.h"

struct tp_mold_recovery_params {
    uint64_t retry_tsc;    /* resend when nothing arrived for this long */
    uint64_t give_up_tsc;  /* a gap open this long after its first request is given up */
    uint16_t max_messages; /* per request (the server may send fewer) */
};

struct tp_mold_recovery_counters {
    uint64_t requests;  /* re-requests sent */
    uint64_t recovered; /* gaps closed by retransmission */
    uint64_t given_up;  /* gaps given up, or lost to a new session (books marked stale) */
};

struct tp_mold_recovery {
    struct tp_mold_recovery_params params;
    struct tp_mold_recovery_counters counters;
    bool active;
    uint64_t started;   /* TSC of the first request for the gap being recovered */
    uint64_t last_sent; /* TSC of the latest request */
    uint64_t last_end;  /* one past the last sequence the latest request asked for */
    uint64_t gap_end;   /* one past the last sequence of the gap being recovered */
};

enum tp_mold_recovery_action {
    TP_MOLD_REC_NONE = 0,
    TP_MOLD_REC_SEND = 1,    /* send *req_seq / *req_count now */
    TP_MOLD_REC_GIVE_UP = 2, /* skip the gap (tp_arb_skip_gap) and mark the books stale */
};

void tp_mold_recovery_init(struct tp_mold_recovery *rec, const struct tp_mold_recovery_params *p);

/*
 * Called with the gap the arbiter reported (tp_arb_poll) or NULL, and the gap currently open
 * (tp_arb_current_gap) or NULL, on every poll. Returns what to do now; for TP_MOLD_REC_SEND the
 * request covers [*req_seq, *req_seq + *req_count). The gap being recovered is over once the
 * open gap starts at or past its end: a later gap open by then is recovered on its own, after its
 * own report, with its own give-up time.
 */
enum tp_mold_recovery_action tp_mold_recovery_step(struct tp_mold_recovery *rec,
                                                   const struct tp_arb_gap *reported,
                                                   const struct tp_arb_gap *open, uint64_t now,
                                                   uint64_t *req_seq, uint16_t *req_count);

/*
 * The session ended (the arbiter reset: tp_arb_reset_loss). `lost` is the gap it abandoned, or
 * NULL when none was open. The gap being recovered is counted recovered if it closed before
 * `lost` (or there is none), else given up with it; a lost gap not reported yet is given up too
 * (its messages cannot be asked for in a new session). Returns true when a gap was given up:
 * the caller marks the books stale as after TP_MOLD_REC_GIVE_UP. Recovery then waits for the
 * next report.
 */
bool tp_mold_recovery_session_end(struct tp_mold_recovery *rec, const struct tp_arb_gap *lost);

#endif
