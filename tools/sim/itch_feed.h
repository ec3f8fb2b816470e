/*
 * The model's events as a Nasdaq TotalView-ITCH 5.0 message stream.
 *
 * Promise: tp_sim_itch_run() hands the sink, in order, a start of day (system events 'O', 'S',
 * one stock directory 'R' per instrument, circuit breaker levels 'V', per instrument a trading
 * action 'H', a Reg SHO 'Y' and a market participant position 'L', system event 'Q'), then one
 * ITCH message per model event until at least `events` events were produced (adds 'A', with 5% as
 * 'F'; executions 'E' or 'C'; cancels 'X'; deletes 'D'; replaces 'U'; hidden trades 'P'; halts and
 * resumptions 'H'), then an end of day (one imbalance indication 'I' per instrument, system
 * events 'M', 'E', 'C'). Stock locate is
 * TP_SIM_LOCATE(instrument). Messages are handed without the BinaryFILE/MoldUDP64 length prefix and
 * are written with the codec's tp_itch_<message>_encode (codecs/itch/itch50.h).
 */
#ifndef TP_SIM_ITCH_FEED_H
#define TP_SIM_ITCH_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

#include "itch50.h"

#define TP_SIM_ITCH_MAX_MSG TP_ITCH_MAX_MESSAGE_LEN

struct tp_sim_msg_sink {
    /* Called once per message; time_ns is the venue time. Returns 0 or a negative errno. */
    int (*message)(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns);
    void *ctx;
};

int tp_sim_itch_run(struct tp_sim_model *m, uint64_t events, const struct tp_sim_msg_sink *sink);

/* Encodes one model event as its ITCH message; returns the length written. */
size_t tp_sim_itch_encode_event(const struct tp_sim_model *m, const struct tp_sim_event *e,
                                uint8_t out[TP_SIM_ITCH_MAX_MSG]);

#endif
