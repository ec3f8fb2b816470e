/*
 * EOBI feed handler: Eurex T7 EOBI packets (codecs/eobi; release 6.0 or 7.0, per feed) ->
 * instrument registry and books.
 *
 * One tp_eobi_feed per EOBI channel: one incremental multicast group (after A/B arbitration by
 * the caller) and its snapshot group. A channel carries several products; each product is a
 * market segment (MarketSegmentID) with its own sequence: the PacketHeader's ApplSeqNum counts
 * that segment's incremental packets one by one. The caller hands over whole UDP payloads:
 * incremental packets to tp_eobi_feed_packet, snapshot packets to tp_eobi_feed_snapshot_packet.
 *
 * Instruments. EOBI carries no definitions (they come from the reference data interface): an
 * instrument is defined the first time one of its messages (or its snapshot) is applied, keyed by
 * its SecurityID, and bound to the market segment of that packet. Registry entry: venue
 * TP_VENUE_EUREX_EOBI, symbol the SecurityID in decimal, security group the MarketSegmentID in
 * decimal (empty when it has more than 7 digits), order-level book; the filter sees those two. A
 * new instrument takes its product's status (ProductStateChange) until it has one of its own.
 *
 * Orders. EOBI has no order id: an order is known by (SecurityID, Side, TrdRegTSTimePriority).
 * The book's order id is tp_eobi_order_id(priority, side) within the instrument's book; its queue
 * priority is the TrdRegTSTimePriority. Message -> book operation:
 *   13100 OrderAdd               add
 *   13101 OrderModify            priority kept (TrdRegTSPrevTimePriority == TrdRegTSTimePriority):
 *                                modify in place; priority lost: the old order leaves, the new
 *                                one enters (replace: ORDER DELETE + ADD records)
 *   13106 OrderModifySamePrio    modify in place (quantity and price, same priority)
 *   13102 OrderDelete            delete
 *   13103 OrderMassDelete        every order of the instrument goes (CLEAR of its order book)
 *   13105 PartialOrderExecution  execute LastQty at LastPx (not printing: see 13202)
 *   13104 FullOrderExecution     execute LastQty at LastPx; an order left with quantity after it
 *                                was not the venue's: removed, counted (execution_mismatch) and
 *                                the segment recovers
 *   13202 ExecutionSummary       the trade of a continuous match: last trade, volume (price
 *                                LastPx, size LastQty, aggressor AggressorSide, match ExecID)
 *   13201 TradeReport            a trade without aggressor (auction, off-book): last trade, volume
 *   13301 InstrumentStateChange  trading status (SecurityStatus, SecurityTradingStatus)
 *   13300 ProductStateChange     trading status of every instrument of the segment that has no
 *                                instrument-level state (TradSesStatus, TradingSessionSubID)
 *   13500 AuctionBBO             statistics TP_STAT_AUCTION_BID / TP_STAT_AUCTION_OFFER
 *   13501 AuctionClearingPrice   statistics TP_STAT_INDICATIVE_OPEN (price, LastQty) and
 *                                TP_STAT_IMBALANCE (price, ImbalanceQty)
 *   13001 Heartbeat              a packet of heartbeats is not sequenced; a LastMsgSeqNumProcessed
 *                                past the segment's last packet is a gap (the tail was lost)
 *   13502 13503 13504            counted and ignored (no book state)
 * Trading status mapping (SecurityTradingStatus): 200 closed, 201 restricted and 2 halt ->
 * halted, 202 book -> pre-open, 203 continuous -> open, 204..213 auctions and freezes -> pre-open
 * (opening, IPO) or paused (intraday, circuit breaker, closing); SecurityStatus 9 (suspended) ->
 * halted, 2 and 4 (inactive, expired) -> closed.
 *
 * Events. Each message's change records go to the sink in one `changes` call (info: packet_seq the
 * ApplSeqNum, venue_time the PacketHeader TransactTime, sending_time 0). end_of_event follows the
 * last message of a packet whose CompletionIndicator is complete (1): a venue transaction may span
 * packets, and its books are consistent only at its end. event_changes is never called.
 *
 * Sequence and recovery, per market segment:
 *   - healthy: the packet with ApplSeqNum next_seq is applied; lower ones are duplicates (skipped,
 *     counted); a higher one is a gap (after a wait for the other line, when the caller asked for
 *     one: tp_eobi_feed_arbitrate). The first packet of a segment never seen starts it healthy
 *     when its ApplSeqNum is 1 (start of day), else it is a gap (late join). A packet with
 *     ApplSeqResetIndicator set, a malformed message and a book rejection (an order the book does
 *     not hold, capacity) are gaps too: the books of the segment can no longer be vouched for.
 *   - implausible: a lone packet whose ApplSeqNum is more than TP_EOBI_MAX_JUMP beyond the one the
 *     segment expects (or the highest it buffered) is dropped (implausible) and changes nothing, as
 * the line arbiter does for ITCH and MDP3: one forged or corrupt packet must not move the segment
 * past every genuine one. The next packet that continues the jump (above it, within
 * TP_EOBI_MAX_JUMP) confirms it: a real loss of that many packets costs one packet more.
 *   - gap: every instrument of the segment is marked stale (sink->stale(instr, 1, expected, got),
 *     the low 32 bits of the ApplSeqNums; a rejection gives 0, 0), the segment is RECOVERING and
 *     its incremental packets from then on are buffered (TP_EOBI_FEED_BUFFER_BYTES and
 *     TP_EOBI_FEED_BUFFER_PACKETS per feed; when full, the segment's buffer restarts at the next
 *     packet, counted in buffer_overflow: a later snapshot must cover it). A hole in the buffered
 *     run waits for the other line as a HEALTHY segment's hole does (tp_eobi_feed_arbitrate;
 *     filled: buffer_filled); when the wait is over, only the run after the last hole is kept
 *     and a snapshot must reach it. A snapshot that ends while the hole still waits applies the
 *     packets before the hole, and the segment holds the rest as a HEALTHY one.
 *   - snapshot: a segment's snapshot is a ProductSummary (LastMsgSeqNumProcessed L: the last
 *     ApplSeqNum it reflects; trading status), then per instrument an InstrumentSummary (status,
 *     statistics, TotNoOrders) and TotNoOrders SnapshotOrders, in consecutive MsgSeqNums from 1.
 *     Every packet of a pass carries the pass's TransactTime, and the next pass is sent later:
 *     MsgSeqNums restart at each pass, so the TransactTime is what tells a packet of the pass
 *     being applied from the next pass's (a packet of another pass means the pass being
 *     applied lost its tail). Both snapshot lines' packets may be handed over: the second copy
 *     of a packet of the snapshot being applied (of its pass, its messages before the next one
 *     expected; a ProductSummary: of the same LastMsgSeqNumProcessed) is dropped
 *     (snapshot_duplicates), so a packet lost on one line is taken from the other. A snapshot
 * packet of a HEALTHY segment is not read (snapshots_ignored), but a snapshot that reflects the
 * hole a segment holds for the other line ends that wait (a gap, recovered from it at once). A
 * snapshot is skipped when L + 1 is below the segment's resume_seq (it predates the gap:
 * snapshots_old; at its end too, when a packet was lost while it came, the segment waits for the
 * next one); otherwise it is applied as it arrives: each instrument's books are cleared (CLEAR
 * record; volume, last trade and statistics kept) and rebuilt from its orders, status and
 * statistics entries; its volume and last trade are the snapshot's (MDEntryType 66 TradeVolume, 2
 * Trade: the trades lost on both lines included, counted in volume_adopted). No snapshot message
 * counts trades: after a loss on both lines the book's trade count is the trades seen, a lower
 * bound.
 *   - end of a snapshot: it is whole when its last packet has CompletionIndicator complete (1),
 *     no MsgSeqNum was skipped and every instrument's order count was reached. Then the
 *     instruments of the segment it did not name are cleared, the buffered packets after L are
 *     applied in order (those at or below L are dropped), and the segment is HEALTHY at the next
 *     ApplSeqNum: sink->stale(instr, 0, 0, 0) for each of its instruments, then end_of_event. A
 *     snapshot cut short (by the next ProductSummary, a snapshot packet of another segment or pass,
 *     or tp_eobi_feed_snapshot_end before its completing packet) or not whole is counted
 *     (snapshots_broken) and leaves the segment RECOVERING, its books stale, for the next cycle.
 * tp_eobi_feed_recovering says how many segments wait for a snapshot: the caller joins the
 * snapshot group while it is not 0 and may leave it when it is.
 *
 * Malformed input (a packet that does not frame, a message shorter than its layout, a SecurityID
 * or priority no real message has) is counted and skipped; a packet never makes a call read
 * outside it. Unknown templates are counted and skipped without a gap (newer releases add some).
 *
 * Memory: sizeof(struct tp_eobi_feed) is about 4 MiB (the SecurityID table and the recovery
 * buffer are inside it): allocate it (64-byte aligned), never put it on a stack. No call
 * allocates. Single writer: the data core that owns the registry and the books.
 */
#ifndef TP_EOBI_FEED_H
#define TP_EOBI_FEED_H

#include <stddef.h>
#include <stdint.h>

#include "eobi_release.h"
#include "tp_books.h"
#include "tp_feed_sink.h"
#include "tp_instrument_filter.h"
#include "tp_instruments.h"

/* Market segments per feed (a power of two; at most half of them used). */
#define TP_EOBI_FEED_SEGMENTS 512
/* SecurityID slots per feed (a power of two): at most half of them hold instruments. */
#define TP_EOBI_FEED_SECURITIES (1u << 16)
/* The recovery buffer: incremental packets of RECOVERING segments, bytes and packets. */
#define TP_EOBI_FEED_BUFFER_BYTES   (1u << 21)
#define TP_EOBI_FEED_BUFFER_PACKETS 16384
/* Lone ApplSeqNum jumps larger than this are dropped until a second packet confirms them (the
 * line arbiter's max_jump for ITCH and MDP3). */
#define TP_EOBI_MAX_JUMP 4096
/* Snapshot packets held behind a hole in the snapshot stream, while the other snapshot line may
 * still bring it: packets and bytes. */
#define TP_EOBI_SNAPSHOT_HOLD_PACKETS 256
#define TP_EOBI_SNAPSHOT_HOLD_BYTES   (1u << 18)

/*
 * The book's order id of an EOBI order of one instrument: priority * 2 + (side == ask).
 * TrdRegTSTimePriority is nanoseconds since 1970, below 2^63 until the year 2262; a priority at
 * or above 2^63 has no id (the feed counts it malformed).
 */
static inline uint64_t tp_eobi_order_id(uint64_t priority, enum tp_side side)
{
    return priority << 1 | (side == TP_SIDE_ASK);
}

/* EOBI Side (1 buy, 2 sell) -> enum tp_side (TP_SIDE_NONE for anything else). */
static inline enum tp_side tp_eobi_side(uint8_t side)
{
    return side == 1 ? TP_SIDE_BID : side == 2 ? TP_SIDE_ASK : TP_SIDE_NONE;
}

enum tp_eobi_segment_state {
    TP_EOBI_SEGMENT_HEALTHY = 1,
    TP_EOBI_SEGMENT_RECOVERING = 2, /* waiting for its snapshot; incrementals buffered */
};

/* One market segment's sequence and recovery state. */
struct tp_eobi_segment {
    int32_t market_segment_id;
    uint8_t used;
    uint8_t state;           /* enum tp_eobi_segment_state; 0: seen only in a snapshot skipped */
    uint8_t snapshot_active; /* a snapshot of it is being applied */
    uint8_t snapshot_whole;  /* ... and nothing of it was missed so far */
    uint64_t next_seq;       /* HEALTHY: the ApplSeqNum expected next */
    /*
     * RECOVERING: a snapshot must reflect every packet before resume_seq (0: any snapshot will
     * do); the buffer holds the segment's packets buffered_first .. buffered_last, one after the
     * other from resume_seq (0: none buffered), but for the holes it is holding for.
     */
    uint64_t resume_seq;
    uint64_t buffered_first;
    uint64_t buffered_last;
    uint64_t snapshot_seq;     /* the snapshot's LastMsgSeqNumProcessed */
    uint64_t snapshot_time;    /* its first packet's TransactTime (a copy has the same) */
    uint32_t snapshot_msg_seq; /* MsgSeqNum expected next in the snapshot */
    uint32_t snapshot_instr;   /* instrument whose orders follow (TP_INSTRUMENT_NONE: none) */
    uint32_t snapshot_orders;  /* orders still expected for it */
    uint32_t instruments;      /* instruments bound to the segment */
    uint32_t first_security;   /* its instruments: a list through securities[] (slot + 1) */
    uint8_t status;            /* product-level trading status (enum tp_trading_status) */
    uint8_t holding;           /* waiting for the other line: HEALTHY, to fill next_seq;
                                * RECOVERING, to fill a hole in the buffered run */
    uint8_t snapshot_skipping; /* the rest of its snapshot pass is not read (old or broken) */
    uint8_t reserved;
    /* holding: since when (rx TSC), and the highest ApplSeqNum known to exist (held packets
     * wait in the buffer, in ApplSeqNum order) */
    uint64_t wait_since;
    uint64_t wait_through;
    uint64_t highest_seq; /* the highest ApplSeqNum taken (applied, held or buffered) */
    uint64_t jump_seq;    /* an unconfirmed jump's ApplSeqNum (0: none) */
};

/* One SecurityID slot (slots never move: nothing is removed until tp_eobi_feed_init). */
struct tp_eobi_security {
    int64_t security_id;
    uint32_t id1;        /* dense id + 1; 0: free slot; TP_EOBI_FILTERED: the filter dropped it */
    uint32_t next;       /* the next instrument of its segment (slot + 1), 0 at the end */
    uint16_t segment;    /* index in segments[] */
    uint8_t own_state;   /* an InstrumentSummary or InstrumentStateChange gave it a status */
    uint8_t in_snapshot; /* named by the snapshot being applied */
    uint32_t reserved;
};
#define TP_EOBI_FILTERED UINT32_MAX

/* A snapshot packet held for the other snapshot line (its 6.0 form at `offset` of the hold). */
struct tp_eobi_held_snapshot {
    uint64_t rx_tsc;
    uint32_t offset;
    uint16_t len;
    uint16_t segment;
};

/* A buffered incremental packet (its bytes at `offset` of the buffer). */
struct tp_eobi_buffered {
    uint64_t appl_seq_num;
    uint64_t rx_tsc;
    uint32_t offset;
    uint16_t len;
    uint16_t segment;
};

struct tp_eobi_feed_counters {
    uint64_t packets;             /* incremental packets handed over */
    uint64_t snapshot_packets;    /* snapshot packets handed over */
    uint64_t messages;            /* messages applied (incremental and snapshot) */
    uint64_t malformed;           /* packets or messages the framing or layouts refused */
    uint64_t unknown_template;    /* templates this handler does not know */
    uint64_t ignored;             /* known messages with no book state (13502..13504) */
    uint64_t filtered;            /* SecurityIDs the filter dropped (once each) */
    uint64_t filtered_messages;   /* messages of those */
    uint64_t registry_full;       /* SecurityIDs refused: no id, segment or slot left */
    uint64_t definitions;         /* instruments defined */
    uint64_t rejected;            /* updates the books refused (per instrument in the books) */
    uint64_t execution_mismatch;  /* full executions that left quantity in the book */
    uint64_t duplicates;          /* incremental packets at or below the segment's last */
    uint64_t held;                /* packets held for the other line to fill a gap */
    uint64_t gaps_filled;         /* waits the other line ended (no gap) */
    uint64_t gaps;                /* segments that went RECOVERING */
    uint64_t buffered;            /* incremental packets buffered while RECOVERING */
    uint64_t buffer_overflow;     /* buffers restarted because the buffer was full */
    uint64_t buffer_filled;       /* holes in a recovering segment's buffer the other line filled */
    uint64_t snapshots;           /* segment snapshots applied whole: segments recovered */
    uint64_t snapshots_old;       /* snapshots that predate the buffered packets: skipped */
    uint64_t snapshots_broken;    /* snapshots with a message or order missing: not trusted */
    uint64_t snapshots_ignored;   /* snapshot packets of healthy segments: not read */
    uint64_t snapshot_duplicates; /* the other snapshot line's copy of a packet applied */
    uint64_t snapshot_held;       /* snapshot packets held behind a hole for the other line */
    uint64_t snapshot_filled;     /* holes in the snapshot stream the other line filled */
    uint64_t snapshot_given_up;   /* ... it did not fill in time: that pass is abandoned */
    uint64_t volume_adopted;      /* instruments whose volume a snapshot gave (TradeVolume) */
    uint64_t events;              /* end_of_event calls */
    uint64_t release_mismatch;    /* packets of another T7 release: dropped, not read */
    uint64_t implausible;         /* lone packets jumping past TP_EOBI_MAX_JUMP: dropped */
};

struct tp_eobi_feed {
    struct tp_instruments *registry;
    struct tp_books *books;
    const struct tp_instrument_filter *filter; /* NULL: keep every instrument */
    struct tp_feed_sink sink;
    uint16_t channel;          /* recorded in the instruments it defines */
    uint16_t snapshot_segment; /* index of the segment whose snapshot is being applied, or
                                * TP_EOBI_FEED_SEGMENTS */
    uint32_t recovering;       /* segments RECOVERING */
    uint32_t holding;          /* segments holding a gap for the other line */
    uint64_t gap_wait_tsc;     /* 0: a gap is declared at once */
    void (*released)(void *ctx, uint64_t rx_tsc, uint64_t released_tsc);
    void *released_ctx;
    uint32_t n_segments;
    uint32_t n_securities;
    struct tp_eobi_feed_counters counters;
    struct tp_feed_info info;
    uint8_t release;      /* enum tp_eobi_release of the channel (tp_eobi_feed_set_release) */
    uint8_t release_seen; /* the release of the last packet refused for release_mismatch */
    uint32_t buffer_used; /* bytes */
    uint32_t n_buffered;  /* packets */
    /* The snapshot hold (tp_eobi_feed_arbitrate): packets in arrival order, the first one the
     * packet that showed the hole, waiting since snapshot_wait_since (0 packets: no hole). */
    uint32_t n_snapshot_held;
    uint32_t snapshot_hold_used; /* bytes */
    uint64_t snapshot_wait_since;
    struct tp_book_change changes[TP_BOOK_CHANGES_MAX * 2];
    struct tp_eobi_segment segments[TP_EOBI_FEED_SEGMENTS];
    struct tp_eobi_security securities[TP_EOBI_FEED_SECURITIES];
    struct tp_eobi_buffered buffered[TP_EOBI_FEED_BUFFER_PACKETS];
    uint8_t buffer[TP_EOBI_FEED_BUFFER_BYTES];
    uint8_t converted[UINT16_MAX]; /* a packet of release 7.0 in the 6.0 form */
    struct tp_eobi_held_snapshot held_snapshots[TP_EOBI_SNAPSHOT_HOLD_PACKETS];
    uint8_t snapshot_hold[TP_EOBI_SNAPSHOT_HOLD_BYTES];
};

/*
 * Prepares a feed over a registry and books (books with an order table: max_orders > 0). The sink
 * is copied; filter may be NULL. channel is recorded in the instruments it defines. Every segment
 * starts unknown. Returns 0 or -EINVAL.
 */
int tp_eobi_feed_init(struct tp_eobi_feed *f, struct tp_instruments *registry,
                      struct tp_books *books, const struct tp_instrument_filter *filter,
                      uint16_t channel, const struct tp_feed_sink *sink);

/*
 * Sets the T7 release whose layouts the feed's packets use (init sets TP_EOBI_RELEASE_DEFAULT).
 * A packet of another release (tp_eobi_release_check) is counted in release_mismatch and dropped
 * whole (the call returns -EPROTO): its segment's next packet is a gap and recovers from a
 * snapshot, the books stale meanwhile. Packets of a release other than 6.0 are converted to the
 * 6.0 form (tp_eobi_packet_to_v6) before they are read. Returns 0 or -EINVAL.
 */
int tp_eobi_feed_set_release(struct tp_eobi_feed *f, enum tp_eobi_release release);

/*
 * Applies (or, for a RECOVERING segment, buffers) one incremental packet of len bytes received at
 * rx_tsc: PacketHeader, then messages. Messages before a malformed one are applied, the rest of
 * the packet is skipped and the segment recovers. Returns 0, -EBADMSG when the packet or one of its
 * messages was malformed, -ENOSPC when a new segment found no room (counted in registry_full).
 */
int tp_eobi_feed_packet(struct tp_eobi_feed *f, const uint8_t *pkt, size_t len, uint64_t rx_tsc);

/*
 * Applies one snapshot packet (PacketHeader, then ProductSummary, InstrumentSummary and
 * SnapshotOrder messages) to a segment that waits for it, as described above; other segments'
 * snapshots are counted and ignored. Returns 0, -EBADMSG (the snapshot in progress is then not
 * whole) or -ENOSPC when a new segment found no room (counted in registry_full).
 */
int tp_eobi_feed_snapshot_packet(struct tp_eobi_feed *f, const uint8_t *pkt, size_t len,
                                 uint64_t rx_tsc);

/*
 * Ends the snapshot being applied, if any, as cut short (the caller left the snapshot group or
 * reached the end of a capture before its completing packet): counted in snapshots_broken.
 */
void tp_eobi_feed_snapshot_end(struct tp_eobi_feed *f);

/*
 * A/B arbitration: a HEALTHY segment's packet that comes after a hole is held (in the recovery
 * buffer, counted in held) for up to gap_wait_tsc, so that the other line can fill the hole
 * (counted in gaps_filled), and a heartbeat past the segment's last packet waits the same way;
 * the hole becomes a gap only when the wait is over (seen by the next packet of the segment or
 * by tp_eobi_feed_poll) or the buffer is full; the held packets then wait for the snapshot.
 * A RECOVERING segment's buffer waits the same way for a hole in its run (buffer_filled).
 * The snapshot stream is arbitrated the same way: a snapshot packet of a recovering segment that
 * does not continue the stream (a MsgSeqNum skipped, the pass's tail or ProductSummary missing)
 * is held with every snapshot packet after it, in arrival order (counted in snapshot_held; at
 * most TP_EOBI_SNAPSHOT_HOLD_PACKETS and _BYTES), until the other line's copy of what is
 * missing comes (snapshot_filled: the held packets then apply in order; when the tail of the
 * pass being applied is missing, the other line's ProductSummary of the pass the held packets
 * are in fills it: that line lost the tail too) or the wait is over (at
 * the next snapshot packet, tp_eobi_feed_poll, tp_eobi_feed_snapshot_end or a full hold:
 * snapshot_given_up; that pass is broken, the rest of it is not read, the held packets after it
 * apply). The other line's copies of held packets are dropped (snapshot_duplicates).
 * released(ctx, rx_tsc, released_tsc), if not NULL, is called for each held packet when its
 * wait ends, before it is applied or kept for the snapshot. gap_wait_tsc 0 (the default): every
 * hole is a gap at once.
 */
void tp_eobi_feed_arbitrate(struct tp_eobi_feed *f, uint64_t gap_wait_tsc,
                            void (*released)(void *ctx, uint64_t rx_tsc, uint64_t released_tsc),
                            void *ctx);

/* Declares the gaps whose wait for the other line is over at `now` (rx TSC). */
void tp_eobi_feed_poll(struct tp_eobi_feed *f, uint64_t now);

/* Segments RECOVERING: while it is not 0, the caller must feed the snapshot group. */
uint32_t tp_eobi_feed_recovering(const struct tp_eobi_feed *f);

/* A segment's state, or NULL if the feed never saw it. */
const struct tp_eobi_segment *tp_eobi_feed_segment(const struct tp_eobi_feed *f,
                                                   int32_t market_segment_id);

/* The dense id of a SecurityID, or TP_INSTRUMENT_NONE (never seen, or filtered out). */
uint32_t tp_eobi_feed_instrument(const struct tp_eobi_feed *f, int64_t security_id);

#endif /* TP_EOBI_FEED_H */
