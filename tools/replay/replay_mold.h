/*
 * The MoldUDP64 packets of a capture through the data plane's line arbiter
 * (dataplane/lines/arbiter.h), with the daemon's rules: the first copy of a sequence wins, a
 * packet beyond a gap waits for the other line, a lone implausible jump or a session change the
 * venue would not make is dropped as corrupt, a new session is taken only as a venue makes it.
 *
 * Offline there is no re-request server: a gap that neither line fills within the wait window
 * (capture time), or that is still open at the end of the capture, is given up, and every ITCH
 * instrument defined by then is flagged stale (as the daemon does after a give-up). A capture
 * that starts past sequence 1 is such a gap from its first packet. Each sequence jump, gap given
 * up and session change is reported on the warnings stream with the packet's number (1-based
 * pcap record) and byte offset.
 *
 * Lines: the first multicast destination seen is line A, any other multicast one line B, and a
 * unicast destination (re-request replies) the recovery line.
 */
#ifndef TP_REPLAY_MOLD_H
#define TP_REPLAY_MOLD_H

#include <stdint.h>

#include "net_parse.h"

struct replay;

/* How long a gap waits for the other line's copy, in capture time, by default. */
#define REPLAY_GAP_WAIT_NS (1000ull * 1000 * 1000)
/* Packets held behind a gap (the arbiter's own limit). */
#define REPLAY_HELD_MAX 4096

/* Prepares the arbiter (replay_open). 0 or -ENOMEM. */
int replay_mold_open(struct replay *r);
void replay_mold_close(struct replay *r);

/* One MoldUDP64 datagram of pcap record `record` (1-based) at byte `offset`, time `ts` (ns). */
void replay_mold_packet(struct replay *r, const struct tp_udp_view *u, uint64_t ts, uint64_t record,
                        size_t offset);

/* The end of the capture: a gap still open is given up. */
void replay_mold_finish(struct replay *r);

#endif /* TP_REPLAY_MOLD_H */
