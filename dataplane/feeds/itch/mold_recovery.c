/*
 * MoldUDP64 gap recovery: see mold_recovery.h.
 */
#include "mold_recovery.h"

#include <string.h>

void tp_mold_recovery_init(struct tp_mold_recovery *rec, const struct tp_mold_recovery_params *p)
{
    memset(rec, 0, sizeof(*rec));
    rec->params = *p;
    if (rec->params.max_messages == 0)
        rec->params.max_messages = 1;
}

static enum tp_mold_recovery_action request(struct tp_mold_recovery *rec,
                                            const struct tp_arb_gap *gap, uint64_t now,
                                            uint64_t *req_seq, uint16_t *req_count)
{
    uint64_t n = gap->to - gap->from;
    *req_seq = gap->from;
    *req_count = (uint16_t)(n < rec->params.max_messages ? n : rec->params.max_messages);
    rec->last_sent = now;
    rec->last_end = gap->from + *req_count;
    rec->counters.requests++;
    return TP_MOLD_REC_SEND;
}

/* The gap being recovered is over when the open one (if any) starts at or past its end. */
static void note_closed(struct tp_mold_recovery *rec, const struct tp_arb_gap *open)
{
    if (rec->active && (open == NULL || open->from >= rec->gap_end)) {
        rec->active = false;
        rec->counters.recovered++;
    }
}

bool tp_mold_recovery_session_end(struct tp_mold_recovery *rec, const struct tp_arb_gap *lost)
{
    note_closed(rec, lost);
    rec->active = false;
    if (lost == NULL)
        return false;
    rec->counters.given_up++;
    return true;
}

enum tp_mold_recovery_action tp_mold_recovery_step(struct tp_mold_recovery *rec,
                                                   const struct tp_arb_gap *reported,
                                                   const struct tp_arb_gap *open, uint64_t now,
                                                   uint64_t *req_seq, uint16_t *req_count)
{
    note_closed(rec, open);
    if (!rec->active) {
        if (reported == NULL)
            return TP_MOLD_REC_NONE;
        rec->active = true;
        rec->started = now;
        rec->gap_end = reported->to;
        return request(rec, reported, now, req_seq, req_count);
    }
    if (now - rec->started >= rec->params.give_up_tsc) {
        rec->active = false;
        rec->counters.given_up++;
        return TP_MOLD_REC_GIVE_UP;
    }
    /* The previous piece arrived: ask for the next at once. Silence: ask again. */
    if (open->from >= rec->last_end || now - rec->last_sent >= rec->params.retry_tsc)
        return request(rec, open, now, req_seq, req_count);
    return TP_MOLD_REC_NONE;
}
