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
    /* Optional: after the messages of each model step (the model then matches what was sent:
     * the one point where a snapshot of it is consistent with the stream). 0 or -errno. */
    int (*step_done)(void *ctx);
};

int tp_sim_itch_run(struct tp_sim_model *m, uint64_t events, const struct tp_sim_msg_sink *sink);

/*
 * The model's state now, as GLIMPSE 5.0 sends it: system event 'Q' (market hours), per
 * instrument a stock directory 'R', a trading action 'H' (its status now) and a Reg SHO 'Y', then
 * every live order as an add order ('A', or 'F' for the order ids the feed attributes), by
 * instrument and, within one, by order id (time priority). The snapshot message 'G' is the
 * caller's: it knows the sequence the feed has reached. Returns 0, -ENOMEM or the sink's error.
 */
int tp_sim_itch_snapshot(const struct tp_sim_model *m, const struct tp_sim_msg_sink *sink);

/* Encodes one model event as its ITCH message; returns the length written. */
size_t tp_sim_itch_encode_event(const struct tp_sim_model *m, const struct tp_sim_event *e,
                                uint8_t out[TP_SIM_ITCH_MAX_MSG]);

#endif
