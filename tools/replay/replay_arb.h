/*
 * A capture's sequenced packets through the data plane's line arbiter (dataplane/lines/arbiter.h)
 * with the daemon's parameters, whatever the venue's sequencing (MoldUDP64 messages and
 * sessions, MDP3 packet MsgSeqNums): the first copy of a sequence wins, a packet beyond a gap
 * waits for the other line (--gap-wait-ms of capture time), a lone implausible jump or a reset
 * the venue would not make is dropped as corrupt.
 *
 * Offline nothing re-sends: a gap no line fills within the wait, or still open at the end of the
 * capture, is given up and the venue's `lost` flags what may have missed it (ITCH: every book;
 * MDP3: nothing, its instruments tell their own losses by RptSeq and the snapshot loop repairs
 * them). Each sequence jump, gap given up and sequence reset is reported on the warnings stream
 * with the packet's number (1-based pcap record) and byte offset ("tickplane-replay: packet N
 * (offset O): ...").
 */
#ifndef TP_REPLAY_ARB_H
#define TP_REPLAY_ARB_H

#include <stddef.h>
#include <stdint.h>

#include "arbiter.h"

struct replay;

/*
 * How long a gap waits for the other line's copy, in capture time, by default. MoldUDP64: 1 s.
 * MDP3: 20 us (the daemon's channels default to 500: gap_wait_us). The snapshot loop's packets
 * that come while incrementals wait behind a gap wait with them (replay_mdp3_channel.h). Measured
 * on the simulator's captures (packets 3 us apart), final books right or flagged stale in every
 * case:
 *   - packets lost on both lines (--both-loss 0.02): waits of 20, 100, 200, 500 and 1000 us
 *     found 3, 5, 26, 106 and 0 order books different from their order-level snapshot (each
 *     flagged, then adopted); the 3 are the books whose order-only packets were lost;
 *   - line B 50 us behind A (--loss-a 0.01 --delay-b 50000): 20 us gave up 92 gaps that B filled
 *     later (their books stale until a snapshot), 100 us and more none.
 * Set --gap-wait-us to the capture's A/B skew.
 */
#define REPLAY_GAP_WAIT_NS      (1000ull * 1000 * 1000)
#define REPLAY_MDP3_GAP_WAIT_NS (20ull * 1000)
/* Packets held behind a gap (the arbiter's own limit). */
#define REPLAY_HELD_MAX 4096

/* What the arbitration needs of a venue. */
struct replay_arb_venue {
    /* For the warnings: what a sequence is called ("sequence", "MsgSeqNum"), what it numbers
     * ("messages", "packets"). */
    const char *unit;
    const char *items;
    /* A delivered packet (its UDP payload): its messages after the first `skip`. */
    void (*apply)(struct replay *r, const uint8_t *payload, uint16_t len, uint32_t skip,
                  uint64_t ts);
    /* Messages were lost for good: flags what may have missed them. */
    void (*lost)(struct replay *r);
    /* What the warnings say of the books then: after a loss ("books flagged stale"), and of a
     * capture that starts late ("flagged stale"). */
    const char *lost_books;
    const char *late_books;
};

/* Prepares r->arb (again, in place, when it is there) for a capture of `rules` that should start
 * at `start_seq`. 0 or -ENOMEM. */
int replay_arb_open(struct replay *r, enum tp_seq_rules rules, uint64_t start_seq);
void replay_arb_close(struct replay *r);

/*
 * One packet of `line`: `payload` (len bytes) is its UDP payload inside the mapped capture (a held
 * packet stays there until the gap before it closes), pcap record `record` at byte `offset`.
 */
void replay_arb_offer(struct replay *r, const struct replay_arb_venue *v, enum tp_line line,
                      const struct tp_arb_pkt *ap, const uint8_t *payload, uint16_t len,
                      uint64_t ts, uint64_t record, size_t offset);

/* The end of the capture: a gap still open is given up. */
void replay_arb_finish(struct replay *r, const struct replay_arb_venue *v);

/* A line on the warnings stream ("tickplane-replay: ..."), counted; after 20, only counted. */
void replay_warn(struct replay *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same for a book a snapshot found wrong: always printed (one per book and snapshot, however
 * many sequence warnings came before). */
void replay_warn_book(struct replay *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* TP_REPLAY_ARB_H */
