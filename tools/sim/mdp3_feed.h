/*
 * The model's events as a CME MDP 3.0 channel: incremental (lines A and B through the fault
 * injector), market recovery snapshots and instrument definitions.
 *
 * Promises:
 * - Incremental: each model step is one matching event. Its messages are, in order: trade
 *   summaries (48, with the filled orders), volume (37), session statistics (51: open, high, low),
 *   price-level book changes (46: New, Change, Delete, DeleteThru, DeleteFrom, Overlay on levels
 *   1..depth of the outright book, '0'/'1', and 1..2 of the implied book, 'E'/'F', NumberOfOrders
 *   null; each entry with the instrument's next RptSeq), order-level changes (47) and
 *   security status (30). The last message of the event carries MatchEventIndicator EndOfEvent
 *   (and each kind's Last*Msg bit its last message). Packets (MsgSeqNum from 1, SendingTime in
 *   ns since the epoch) hold several messages; an event may span packets.
 * - Applying the 46 entries from the start gives, per instrument and side, exactly the model's
 *   top `depth` levels (tp_sim_model_levels) and its implied levels (tp_sim_model_implied_levels)
 *   after every event; applying the 47 entries gives
 *   exactly the model's live orders.
 * - Snapshots (52), one instrument per packet, cycle over all instruments: every snapshot_every
 *   incremental packets a batch of snapshot_batch instruments is sent, after the incremental
 *   packet whose MsgSeqNum it carries in LastMsgSeqNumProcessed, with the instrument's RptSeq.
 *   Its MsgSeqNum restarts at 1 with every loop. Each is followed, on the MBO snapshot stream, by
 *   the instrument's live orders (53, up to 40 per chunk, one chunk per packet, at least one).
 * - Definitions cycle likewise (a full loop first, before any incremental packet): futures
 *   (54, "AAAAZ6"), but every fifth instrument from id 3 is an option on its product's future
 *   (55, "AAADZ6 C<strike>", one underlying) and every fifth from id 4 a calendar spread (56,
 *   "AAAEZ6-AAAEH7", two legs); underlyings and legs are not on this channel. The symbol's first
 *   four characters are always the model's product.
 * - Daily statistics and limits: before the first model event, one event per instrument with
 *   DailyStatistics49 (the prior day's settlement '6' at the reference price, cleared volume 'B'
 *   and open interest 'C') and LimitsBanding50 (high and low limits 8 ticks either side of the
 *   reference price, MaxPriceVariation 4 ticks). A trade more than 2 ticks from the band's centre
 *   re-centres the limits on it (a 50 in the trade's event), so they follow the price. After
 *   the last model event, each instrument that traded gets its final settlement (49 '6' at its
 *   last trade price). These entries take RptSeqs like every other; snapshots (52) carry the
 *   current limits.
 * - Unseen levels (unseen_events > 0): see tp_sim_mdp3_params; the report's "unseen" gives the
 *   instrument and the last RptSeq not sent.
 * - A channel reset (reset_at_message > 0): ChannelReset4 in a packet of its own with MsgSeqNum
 *   1, RptSeqs restart, then every book is sent again as New entries (46 and 47); session
 *   statistics and cumulative volume carry on.
 */
#ifndef TP_SIM_MDP3_FEED_H
#define TP_SIM_MDP3_FEED_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "mdp3_packet.h"
#include "model.h"
#include "packet.h"

/* Deepest outright book: a snapshot of both books must fit one packet. */
#define TP_SIM_MDP3_MAX_DEPTH 25

struct tp_sim_mdp3_params {
    uint32_t depth;            /* price levels per side (MarketDepth), 2..TP_SIM_MDP3_MAX_DEPTH */
    uint32_t snapshot_every;   /* incremental packets between snapshot batches (0: none) */
    uint32_t snapshot_batch;   /* instruments per snapshot batch */
    uint32_t definition_every; /* incremental packets between definition batches (0: start only) */
    uint32_t definition_batch;
    uint64_t reset_at_message; /* channel reset before this model event (0: none) */
    /*
     * Fault: the capture starts after instrument unseen_id's book existed. Its messages that
     * carry RptSeqs (46, 48, 37, 49, 50, 51) from the opening statistics through its first
     * unseen_events model events are not sent (their RptSeqs are used); its 47 and 30 are, so
     * only the price-level book and statistics start different. unseen_events 0: no fault.
     */
    uint32_t unseen_id;
    uint32_t unseen_events;
    uint64_t pack_window_ns; /* messages this close to a packet's first go in it; with
                              * TP_SIM_PACK_FILL packets fill to max_payload and SendingTime is
                              * their last message's time (several events per packet) */
    uint16_t max_payload;
    int16_t appl_id;            /* channel id */
    uint64_t midnight_epoch_ns; /* SendingTime/TransactTime = this + venue time */
};

void tp_sim_mdp3_params_default(struct tp_sim_mdp3_params *p);

struct tp_sim_mdp3_stream {
    struct tp_mdp3_writer writer;
    struct tp_sim_packet pkt;
    uint32_t next_seq;
    uint32_t index;
    uint64_t first_time_ns, last_time_ns; /* of the open packet's first and last messages */
    uint64_t messages;
    int open;
};

/*
 * The daily statistics (49) and price limits (50) last sent for an instrument: what a feed
 * handler must show at the end (the report lists them per symbol, with the instrument's kind:
 * future, option or spread, by its definition template).
 */
struct tp_sim_mdp3_stats {
    int64_t settlement9;    /* SettlementPrice '6': the prior day's at the open, final at close */
    int64_t cleared_volume; /* ClearedVolume 'B' (prior day) */
    int64_t open_interest;  /* OpenInterest 'C' (prior day) */
    int64_t high_limit9, low_limit9, max_variation9; /* LimitsBanding50 */
    int64_t band_center9;                            /* the price the limits are centred on */
};

/* One message of the event being assembled. */
struct tp_sim_mdp3_pending {
    size_t offset, len; /* SBE header + body in the event buffer */
    size_t mei;         /* offset of its MatchEventIndicator byte */
    uint8_t kind;       /* which Last*Msg bit it may carry */
    uint8_t unseen;     /* not sent (tp_sim_mdp3_params.unseen_events) */
};

#define TP_SIM_MDP3_EVENT_BUF  16384
#define TP_SIM_MDP3_EVENT_MSGS 64

struct tp_sim_mdp3_feed {
    struct tp_sim_mdp3_params params;
    struct tp_sim_model *model;
    struct tp_sim_packet_sink sink;
    struct tp_sim_mdp3_stream stream[TP_SIM_STREAMS];
    struct tp_sim_level *view;       /* published levels [instrument][book][depth] */
    uint32_t *view_n;                /* [instrument][book]: outright bid, ask, implied bid, ask */
    uint32_t *rpt_seq;               /* last RptSeq sent per instrument */
    int64_t *high9, *low9;           /* session high/low trade price (0: no trade yet) */
    struct tp_sim_mdp3_stats *stats; /* [instrument] */
    uint32_t snapshot_cursor, definition_cursor;
    uint32_t since_snapshot, since_definition;
    uint64_t now_ns;
    uint8_t ev[TP_SIM_MDP3_EVENT_BUF];
    size_t ev_len;
    struct tp_sim_mdp3_pending pending[TP_SIM_MDP3_EVENT_MSGS];
    uint32_t n_pending;
    uint64_t templates[64]; /* messages sent per template id */
    uint64_t actions[6];    /* book entries per MDUpdateAction */
    uint64_t snapshot_loops, definition_loops, channel_resets;
    uint32_t unseen_left;    /* model events of unseen_id still to hide */
    int hiding;              /* the event being assembled is unseen_id's, hidden */
    uint32_t unseen_rpt_seq; /* the last RptSeq not sent */
    int error;
};

int tp_sim_mdp3_init(struct tp_sim_mdp3_feed *f, struct tp_sim_model *m,
                     const struct tp_sim_mdp3_params *p, const struct tp_sim_packet_sink *sink);
/* Runs the model until `events` events were published; flushes every stream. */
int tp_sim_mdp3_run(struct tp_sim_mdp3_feed *f, uint64_t events);
/* Counts per template and update action, loops, resets. */
json_t *tp_sim_mdp3_report(const struct tp_sim_mdp3_feed *f);
void tp_sim_mdp3_free(struct tp_sim_mdp3_feed *f);
/*
 * Heartbeat replacing src on a heartbeats-only line: AdminHeartbeat12 in a packet that repeats
 * the previous MsgSeqNum (so it claims no new sequence number).
 */
uint16_t tp_sim_mdp3_heartbeat(const struct tp_sim_packet *src, uint8_t *out);

#endif
