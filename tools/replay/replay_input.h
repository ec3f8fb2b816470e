/*
 * Replay session: the registry, books and venues' feeds of one capture, and the loop that hands
 * the capture's packets to its venue (replay_venue.h), or has the venue read a file of its own
 * format (BinaryFILE). The feed and book code is the data plane's own (dataplane/feeds,
 * dataplane/books).
 */
#ifndef TP_REPLAY_INPUT_H
#define TP_REPLAY_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "arbiter.h"
#include "net_parse.h"
#include "replay_digest.h"
#include "replay_lines.h"
#include "replay_share.h"
#include "replay_venue.h"
#include "tp_books.h"
#include "tp_feed_sink.h"
#include "tp_instrument_filter.h"
#include "tp_instruments.h"

/* BINARYFILE: the file format of the venue that has one (replay_venue_of_file). */
enum replay_format { REPLAY_FORMAT_AUTO = 0, REPLAY_FORMAT_BINARYFILE, REPLAY_FORMAT_PCAP };

/* Errors of replay_open / replay_run beyond errno values. */
#define REPLAY_EPCAP  (-1000) /* a pcap or pcapng this tool does not read (not Ethernet, cut) */
#define REPLAY_EFRAME (-1001) /* BinaryFILE block cut by the end of the file */

struct replay_params {
    enum replay_format format;
    const struct replay_venue *venue; /* what a pcap carries; NULL: told by its first datagram */
    uint32_t instruments;
    uint32_t orders;
    uint32_t recent_orders; /* recent-order window slots (tp_books_params; 0: the default) */
    uint32_t levels;
    int no_checksum; /* take every UDP checksum as right (a capture from the sending host) */
    int no_changes;  /* books build no change records (tp_books_set_emit off), as for instruments
                        nobody subscribes to */
    int digest;      /* also hash every sink callback into replay.digest (replay_digest.h); off,
                        the sink only counts, so the timed replay does not pay for it */
    const struct tp_instrument_filter *filter;
    uint64_t gap_wait_ns; /* MoldUDP64 and MDP3: a gap waits this long (capture time) for the
                             other line; 0: REPLAY_GAP_WAIT_NS (replay_arb.h) */
    const struct replay_lines *lines; /* MDP3 and EOBI: the flows' lines (--lines); NULL: each
                                         flow told by its first packet (replay_lines.h) */
    FILE *warnings; /* sequence jumps, gaps given up, session changes; NULL: counted only */
    /* A worker of a threaded replay (replay_threads.h): its books hold the instrument ids
     * [share->first_id, share->end_id) and it applies only their messages. NULL: every one. */
    struct replay_share *share;
};

#define REPLAY_PROGRESS_EVERY 4096u /* a power of two */

/* Room for every record kind (enum tp_change_kind), a power of two. */
#define REPLAY_CHANGE_KINDS 8
_Static_assert(TP_CHANGE_STAT < REPLAY_CHANGE_KINDS, "a change kind beyond the replay's counts");

/* Its own cache lines: a worker of a threaded replay writes its counters every message. */
struct replay {
    _Alignas(REPLAY_WORKER_ALIGN) void *mem;
    size_t table_bytes; /* registry + books */
    struct tp_instruments *registry;
    struct tp_books *books;
    /* Each venue's feed state, by its slot (replay_venue.h): every venue's is open. */
    void *venue_state[REPLAY_VENUES];
    enum replay_format format;
    const struct replay_venue *venue; /* the capture's; NULL until its first datagram tells it */
    bool verify_checksum;
    const uint8_t *data;
    size_t len;
    size_t error_offset;
    char pcap_why[192];    /* what the pcap reader said, after REPLAY_EPCAP */
    uint64_t messages;     /* venue messages handed to the feed */
    uint64_t packets;      /* pcap records */
    uint64_t not_udp;      /* pcap records that are not IPv4/UDP */
    uint64_t bad_checksum; /* UDP datagrams whose checksum is wrong: skipped, as the daemon does */
    uint64_t bad_packets;  /* UDP payloads the framing refused */
    uint64_t duplicates;   /* packets already seen (the other line) */
    uint64_t record;       /* the pcap record being framed (1-based), and its byte offset */
    size_t record_offset;
    /* Line arbitration, of the venues whose channels arbitrate their lines (replay_arb.h). */
    struct tp_arb *arb;
    uint64_t gap_wait_ns;
    uint64_t corrupt;          /* packets dropped as implausible (jump, stray session) */
    uint64_t gaps_given_up;    /* gaps neither line filled */
    uint64_t sessions;         /* new sessions taken */
    uint64_t stale_marks;      /* losses that flagged the ITCH books */
    uint8_t *instrument_stale; /* by instrument id: its book cannot be vouched for */
    uint32_t instruments;      /* the registry's capacity */
    FILE *warn;
    uint64_t warnings;          /* every warning */
    uint64_t sequence_warnings; /* of them, replay_warn's (printed up to a bound) */
    /* A GLIMPSE snapshot (replay_snapshot.h): its messages, and the sequence the capture's
     * messages count from (the arbiter starts there); 0: none loaded. */
    uint64_t snapshot_next_seq;
    uint64_t snapshot_messages;
    /* What the feeds reported through their sink (the same interface the publisher uses). */
    uint64_t changes[REPLAY_CHANGE_KINDS]; /* change records by kind */
    uint64_t events;                       /* end-of-event marks */
    uint64_t stale;                        /* instruments reported stale */
    struct replay_digest digest;           /* with replay_params.digest */
    const struct tp_feed_sink *output;     /* also gets every callback (replay_set_output) */
    bool digest_on;                        /* replay_params.digest */
    struct replay_share *share;            /* replay_params.share */
    size_t offset;                         /* bytes of the capture framed so far */
    /* Called every REPLAY_PROGRESS_EVERY packets or bursts when set (replay_progress.h). */
    void (*progress)(void *ctx, const struct replay *r);
    void *progress_ctx;
    /* Which flow is which line (--lines; venues whose flows are told apart by template). */
    struct replay_lines lines;
};

/* Allocates and prepares the tables for a capture in memory. 0 or a negative error. */
int replay_open(struct replay *r, const struct replay_params *p, const uint8_t *data, size_t len);

/*
 * After replay_open: every sink callback of the feeds also goes to `output` (after the replay's
 * own counting), e.g. an event file (replay_events.h). NULL: none.
 */
void replay_set_output(struct replay *r, const struct tp_feed_sink *output);

/* Feeds the whole capture. 0, or a negative error (the books hold what came before it). */
int replay_run(struct replay *r);

void replay_close(struct replay *r);

/* Is this capture a pcap or pcapng (by its magic)? */
int replay_is_pcap(const uint8_t *data, size_t len);

/* A message for an error of replay_open / replay_run. */
const char *replay_error(const struct replay *r, int err);

/* The framing counters and every venue's feed's (replay_venue.print_counters) as one JSON object:
 * of `parts` replays of one capture that applied the messages of disjoint instruments
 * (replay_threads.h), their sums; else parts 1. */
void replay_print_counters(FILE *out, const struct replay *part, uint32_t parts);

#endif /* TP_REPLAY_INPUT_H */
