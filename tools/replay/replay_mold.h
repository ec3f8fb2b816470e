/*
 * The MoldUDP64 packets of a capture through the data plane's line arbiter with the daemon's
 * rules (replay_arb.h): a new session is taken only as a venue makes it, a stray one is dropped
 * as corrupt. A gap no line fills flags every ITCH instrument defined by then stale (as the
 * daemon does after a give-up); a capture that starts past sequence 1 is such a gap from its
 * first packet, unless a GLIMPSE snapshot (replay_snapshot.h) holds everything before it.
 *
 * Lines: the first multicast destination seen is line A, any other multicast one line B, and a
 * unicast destination (re-request replies) the recovery line.
 */
#ifndef TP_REPLAY_MOLD_H
#define TP_REPLAY_MOLD_H

#include <stddef.h>
#include <stdint.h>

#include "net_parse.h"

struct replay;

/* Prepares the arbiter (replay_open, and again once a snapshot names its sequence). 0 or
 * -ENOMEM. */
int replay_mold_open(struct replay *r);

/* One MoldUDP64 datagram of pcap record `record` (1-based) at byte `offset`, time `ts` (ns). */
void replay_mold_packet(struct replay *r, const struct tp_udp_view *u, uint64_t ts, uint64_t record,
                        size_t offset);

/* The end of the capture: a gap still open is given up. */
void replay_mold_finish(struct replay *r);

#endif /* TP_REPLAY_MOLD_H */
