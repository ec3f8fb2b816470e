/*
 * The MDP3 packets of a capture down the daemon's MDP3 channel path (dataplane/daemon/channel.c),
 * each by the line its flow is (replay_lines.h):
 *
 *   incremental A/B   through the line arbiter with the venue's sequencing (tp_venue_mdp3:
 *                     MsgSeqNum per packet) and the daemon's parameters (replay_arb.h): the first
 *                     copy wins, a packet beyond a gap waits for the other line, a lone jump is
 *                     dropped as corrupt; a gap no line fills is reported and passed over, and
 *                     the instruments that missed it go stale by RptSeq until a snapshot
 *   snapshot A/B      every packet once (the other line's copy of a MsgSeqNum is skipped), as the
 *                     daemon with the snapshot audit on ("audit_always"); a loop's packet that
 *                     comes while incrementals wait behind a gap waits with them, so that a
 *                     snapshot is applied after the incrementals received before it
 *   MBO snapshot A/B  every packet once, to the feed
 *   definitions A/B   until the loop comes round (its MsgSeqNum restarts), each packet once
 *
 * A snapshot that differs from its book at the same RptSeq (52), or an order-level snapshot (53)
 * from its order book at the same LastMsgSeqNumProcessed, is reported with the packet's number.
 *
 * Not the daemon's: its snapshot recovery (mdp3_recovery.h) keeps the incrementals received
 * while it recovers and replays them after each snapshot packet. A capture's snapshots come in
 * time order, when the daemon would have read them at once; replayed on the simulator's lossy
 * captures with every snapshot read, it found more order books different from their snapshots
 * (10 against 3 at the default wait, 266 at 1 ms) and re-applied packets by the million.
 */
#ifndef TP_REPLAY_MDP3_CHANNEL_H
#define TP_REPLAY_MDP3_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include "net_parse.h"

struct replay;
struct replay_mdp3;

/* Prepares the list of loop packets that wait for held incrementals (replay_open). 0 or
 * -ENOMEM. */
int replay_mdp3_channel_open(struct replay_mdp3 *m);
void replay_mdp3_channel_close(struct replay_mdp3 *m);

/* One UDP datagram of pcap record `record` (1-based) at byte `offset`, time `ts` (ns). The
 * first one sets the arbiter to MDP3's sequencing. */
void replay_mdp3_packet(struct replay *r, const struct tp_udp_view *u, uint64_t ts, uint64_t record,
                        size_t offset);

/* The end of the capture: a gap still open is given up. */
void replay_mdp3_finish(struct replay *r);

#endif /* TP_REPLAY_MDP3_CHANNEL_H */
