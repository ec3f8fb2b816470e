/*
 * A channel's receive pipeline: payloads of its lines -> frame check -> A/B arbitration -> venue
 * feed -> publisher, plus gap handling (MoldUDP64 re-request, give-up to stale; MDP3 gap marks).
 *
 * Losses: a gap given up, or left open by a new session or an MDP3 restart (lost with the
 * packets held beyond it), is published as a GAP channel event (the old stream's sequences,
 * before the RESET event). On an ITCH channel each such loss flags TP_PUB_F_STALE on every
 * instrument the channel has defined by then (status events; already-stale ones unchanged) and
 * counts stale_marks; a gap lost to a new session counts in mold given_up, not recovered.
 *
 * Behind the venue: while an ITCH gap the other line did not fill is being re-requested, and
 * while both lines have been silent for longer than `silence_tsc` while the venue trades (ITCH:
 * MoldUDP64 sends heartbeats when idle; a session's end-of-session packet, received in
 * sequence, makes silence normal. MDP3: the incremental lines, while an instrument of the
 * channel is open or pre-open by its last security status), the channel's books are older than
 * the venue's: every instrument of the channel that carries no flag is flagged
 * TP_PUB_F_RECOVERING (a RECOVERY_STARTED channel event first), and the flag is cleared once the
 * gap is filled and a packet arrived (a RECOVERED event last). Instruments flagged stale
 * meanwhile keep their flag. Each such spell counts in recovering_marks (silences: of them, the
 * silent ones).
 *
 * MDP3 snapshot lines are joined at start and while an instrument is stale (audit_always: all
 * the time); each snapshot the feed gets also audits the book at its RptSeq (tp_mdp3_feed.h).
 * The order-level (MBO) snapshot lines, when configured, are joined and left with them, and
 * while an order book's order view is incomplete (a price-level snapshot emptied it) both stay
 * joined: its order-level snapshot refills it, the incrementals after it replayed.
 *
 * Promises:
 *  - A packet whose framing does not add up is counted and dropped before arbitration, so the
 *    copy on the other line (or a retransmission) still fills its sequence: a corrupt packet
 *    never costs messages when its twin arrives.
 *  - Packets are opaque handles (mbufs in the daemon): the channel keeps a handle only when it
 *    returns true from tp_channel_packet and hands it back through io.release later.
 *  - Inside an rx burst (tp_publisher_begin_burst .. end_burst on the channel's publisher), a
 *    channel keeps the packets it delivers (MDP3: the incrementals) and applies them at the end
 *    of the burst, all in one call of the feed (which prefetches the state of messages ahead of
 *    the one it applies: across a whole burst that hides the misses a packet's few messages
 *    cannot). Such a packet's tp_channel_packet returns true; its handle goes back through
 *    io.release once it is applied. Packets are applied in sequence as before, and before any
 *    channel event (reset, gap), MDP3 snapshot or definition packet that follows them (an MDP3
 *    incremental is buffered for replay right after it is applied, as before). Outside a burst
 *    they are applied at once.
 *  - No DPDK, no allocation after init, single thread (the data lcore owning the channel). The
 *    daemon feeds it from rte_eth_rx_burst; the benchmark and tests feed it from memory.
 */
#ifndef TP_DAEMON_CHANNEL_H
#define TP_DAEMON_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arbiter.h"
#include "itch_snapshot.h"
#include "mdp3_recovery.h"
#include "mold_recovery.h"
#include "tp_itch_feed.h"
#include "tp_mdp3_feed.h"
#include "tp_venue.h"

struct tp_publisher;

/* What a classified flow is to its channel (the classifier's line id is channel * TP_ROLES +
 * role); the multicast lines of the config come before TP_ROLE_RETRANS. */
enum tp_line_role {
    TP_ROLE_INCR_A = 0,
    TP_ROLE_INCR_B = 1,
    TP_ROLE_SNAP_A = 2,
    TP_ROLE_SNAP_B = 3,
    TP_ROLE_DEF_A = 4,
    TP_ROLE_DEF_B = 5,
    TP_ROLE_SMBO_A = 6, /* MDP3 order-level (MBO) snapshot lines */
    TP_ROLE_SMBO_B = 7,
    TP_ROLE_RETRANS = 8, /* unicast replies of the re-request server */
    TP_ROLES = 16,
};

/* How the channel reaches packets it holds and the network (the daemon: mbufs and tx). */
struct tp_channel_io {
    void *ctx;
    /* The UDP payload and receive time of a held packet. */
    void (*view)(void *ctx, void *handle, const uint8_t **payload, uint16_t *len, uint64_t *rx_tsc);
    void (*release)(void *ctx, void *handle);
    /* Sends a MoldUDP64 re-request payload to the server; 0 or -errno (NULL: no server). */
    int (*send_rerequest)(void *ctx, uint32_t channel, const uint8_t *payload, size_t len);
    /* Joins or leaves the groups of a line role (MDP3 snapshot and definition lines). */
    void (*membership)(void *ctx, uint32_t channel, enum tp_line_role role, bool join);
};

struct tp_channel_params {
    enum tp_channel_protocol protocol; /* its venue (tp_venue.h) */
    uint32_t index;                    /* the channel's index in the config */
    uint32_t channel_id;
    uint32_t held_max;
    uint64_t gap_wait_tsc;
    uint64_t silence_tsc; /* both lines quiet this long flags the books (0: never) */
    uint64_t start_seq;   /* 0: adopt the first packet's */
    struct tp_mold_recovery_params mold;
    struct tp_instruments *registry;
    struct tp_books *books;
    const struct tp_instrument_filter *filter;
    uint16_t itch_slot;     /* the registry's locate map for this channel */
    uint8_t mdp3_book_type; /* TP_BOOK_TYPE_MBP or TP_BOOK_TYPE_MBP_MBO */
    uint8_t layout;         /* EOBI: the T7 release of its layouts (enum tp_eobi_release) */
    bool has_snapshot;      /* MDP3: snapshot lines configured */
    bool has_definitions;   /* MDP3: definition lines configured */
    bool has_snapshot_mbo;  /* MDP3: order-level (MBO) snapshot lines configured */
    bool audit_always;      /* MDP3: stay on the snapshot lines to audit every book each cycle */
    size_t replay_bytes;    /* MDP3: incrementals kept for replay while recovering */
    uint32_t snapshot_messages; /* ITCH: messages kept while a snapshot loads (0: no service) */
    struct tp_publisher *publisher;
    struct tp_channel_io io;
};

struct tp_channel_counters {
    uint64_t packets;          /* payloads offered */
    uint64_t malformed;        /* framing that does not add up: dropped before arbitration */
    uint64_t messages;         /* venue messages applied (MDP3: SBE messages, every line's) */
    uint64_t feed_errors;      /* messages the feed refused (counted in detail by the feed) */
    uint64_t stale_marks;      /* ITCH losses (give-ups, gaps a new session ended) that marked the
                                  channel's instruments stale */
    uint64_t resets;           /* new sessions / sequence restarts */
    uint64_t recovering_marks; /* spells behind the venue (ITCH gap re-requested, silence) */
    uint64_t silences;         /* of which both lines were silent too long */
};

/* A delivered packet that waits for the end of the rx burst. */
struct tp_channel_pending {
    const uint8_t *payload;
    void *handle;
    uint64_t rx_tsc;
    uint64_t seq;   /* ITCH: sequence number of its first staged message */
    uint32_t count; /* ITCH: its messages staged (not those an overlapping copy applied) */
    uint16_t len;
    bool release; /* the channel owns the handle: io.release once applied */
};

struct tp_channel;
/* A venue framing's packet path (tp_channel_packet). */
typedef bool tp_channel_packet_fn(struct tp_channel *ch, enum tp_line_role role,
                                  const uint8_t *payload, uint16_t len, void *handle,
                                  uint64_t rx_tsc);

/* Packets a channel keeps for the end of a burst (more are applied at once, in order). */
#define TP_CHANNEL_PENDING_MAX 64

struct tp_channel {
    struct tp_channel_params params;
    struct tp_channel_counters counters;
    struct tp_arb *arb;
    struct tp_mold_recovery mold;
    struct tp_itch_feed itch;
    struct tp_mdp3_feed mdp3;
    struct tp_mdp3_recovery recovery;
    struct tp_itch_snapshot snap;        /* ITCH: late join / recovery through a snapshot */
    uint8_t session[TP_ARB_SESSION_LEN]; /* MoldUDP64 session of the latest packet applied */
    bool definitions_done;               /* MDP3: one full definition cycle applied, lines left */
    uint32_t def_last_seq;
    uint32_t snap_last_seq;
    uint32_t mbo_last_seq;   /* MDP3: latest order-level snapshot packet applied (A/B copies) */
    uint64_t last_rx_tsc;    /* the poll that saw the latest packets arrive */
    uint64_t polled_packets; /* packets of the lines whose silence counts, at that poll */
    bool session_ended;      /* ITCH: end of session received with nothing missing */
    bool behind;             /* the channel's books are flagged RECOVERING (see above) */
    bool session_open;       /* MDP3: an instrument was open or pre-open at the silence */
    uint64_t session_checked_tsc; /* MDP3: the last_rx_tsc session_open was found for */
    bool flush_due;               /* registered with the publisher for the end of the burst */
    uint32_t n_pending;
    struct tp_channel_pending pending[TP_CHANNEL_PENDING_MAX];
    /* ITCH: the messages of the pending packets, in order, as the framing check found them
     * (the feed takes them from here: the blocks are walked once). In the channel's memory
     * after the arbiter, room for every block of the largest payload; NULL for MDP3. */
    const uint8_t **stage_msgs;
    uint16_t *stage_lens;
    uint32_t n_staged;
    const struct tp_venue_ops *venue; /* of params.protocol */
    tp_channel_packet_fn *packet;     /* the path of its framing */
    void *feed; /* the venue's feed (its decode counters; TP_FRAMING_SEGMENTS: its state) */
    bool snapshot_joined;  /* TP_FRAMING_SEGMENTS: on the snapshot lines (the feed recovers) */
    uint16_t feed_channel; /* tp_instrument.channel of the instruments it feeds (ITCH locate map,
                              MDP3 channel id) */
};

size_t tp_channel_memsize(const struct tp_channel_params *params);
/* 0 or -EINVAL. mem: tp_channel_memsize() bytes, 64-byte aligned. */
int tp_channel_init(void *mem, const struct tp_channel_params *params);

/*
 * One UDP payload of the channel received on `role` at rx_tsc. Returns true when the channel
 * keeps `handle` (held behind a gap); false when the caller may free it at once.
 */
bool tp_channel_packet(struct tp_channel *ch, enum tp_line_role role, const uint8_t *payload,
                       uint16_t len, void *handle, uint64_t rx_tsc);

/* Timers: gap windows, re-requests, give-ups. Call from the poll loop. */
void tp_channel_poll(struct tp_channel *ch, uint64_t now_tsc);

/*
 * Live reload, on the lcore that owns the channel. tp_channel_start: the channel begins to feed
 * (added at run time): the stale flag a removed predecessor left on its instruments (same ITCH
 * locate map or MDP3 channel id) is cleared, except on those the filter now excludes (they are
 * no longer fed). tp_channel_stop: the channel is being removed:
 * every held packet goes back through io.release, the books of its instruments are cleared
 * (published as CLEAR records) and flagged TP_PUB_F_STALE (a status event; the state table
 * shows it), and an ITCH channel's locate map is reset. Returns the instruments marked. The
 * channel must not be fed afterwards.
 */
void tp_channel_start(struct tp_channel *ch);
uint32_t tp_channel_stop(struct tp_channel *ch, uint64_t now_tsc);

/*
 * The books of every instrument the channel feeds are emptied (CLEAR records) and flagged
 * `flags` (status events); their definitions stay. Returns the instruments.
 */
uint32_t tp_channel_clear_books(struct tp_channel *ch, uint64_t now_tsc, uint8_t flags);

/* Flags every instrument the ITCH channel defined stale and counts it (stale_marks). */
void tp_channel_mark_stale(struct tp_channel *ch);

/*
 * ITCH snapshots (channel_snapshot.c; itch_snapshot.h says what the channel promises):
 * tp_channel_snapshot_chunk applies one chunk from the control plane; tp_channel_snapshot_poll
 * (from tp_channel_poll) applies the next slice of the messages kept during a load;
 * tp_channel_snapshot_want asks for a snapshot (the channel keeps its stream from now on).
 * A snapshot load is what clears the stale or recovering flags of an ITCH channel's books.
 */
void tp_channel_snapshot_chunk(struct tp_channel *ch, const struct tp_snap_chunk *c,
                               uint64_t now_tsc);
void tp_channel_snapshot_poll(struct tp_channel *ch, uint64_t now_tsc);
bool tp_channel_snapshot_want(struct tp_channel *ch);

#endif
