/*
 * libtickplane: read tickplane market data from shared memory.
 *
 * A tickplane instance (the daemon, or any program using the bus writer) publishes one event per
 * book change into a broadcast ring and keeps a conflated state table with the latest book of every
 * instrument. A strategy process links this library to:
 *
 *   tp_attach()         map the instance's segments read-only (a strategy cannot corrupt the bus);
 *   tp_subscribe()      choose (instrument set x topic set): through the daemon's control socket
 *                       when one is configured (entitlement check, the daemon publishes what
 *                       someone wants), then in this library's filter;
 *   tp_subscribe_pattern()  the same for every symbol matching a glob, now and later;
 *   tp_poll()           busy-poll friendly: hands at most max_events events to a callback, no
 *                       syscalls, no allocation, no locks;
 *   tp_read_state()     a consistent copy of one instrument's conflated state;
 *   tp_symbol(), tp_instrument_info()  the symbol, venue and tick of an event's instrument id;
 *   tp_format_price()   a price9 as text, as every tickplane tool prints it;
 *   tp_stats()          lag, loss, lapped and resync counts;
 *   tp_check_heartbeat()  whether the daemon is alive, cheaply (a killed daemon's bus looks
 *                       like a quiet market otherwise).
 *
 * Topics are views produced on the caller's thread from the one published event stream:
 *   TP_TOPIC_DEPTH        every change of the price levels, plus the reader-side book after it;
 *   TP_TOPIC_TOP          best bid and offer, delivered only when they changed;
 *   TP_TOPIC_TRADES       trades;
 *   TP_TOPIC_ORDERS       order-level (MBO) events;
 *   TP_TOPIC_STATUS       trading status, statistics and channel events (reset, gap, recovery);
 *   TP_TOPIC_DEFINITIONS  instrument definitions;
 * and topics a strategy defines with tp_add_transformer.
 *
 * An instance publishes on one ring per data lcore (each instrument on one of them); tp_poll
 * reads them all. When the reader falls a whole ring behind its writer it is "lapped": the
 * library delivers one TP_TOPIC_LOSS event saying how many events were lost on that ring (its
 * index in venue_seq), then rebuilds every subscribed book from the state table and delivers
 * each as a DEPTH / TOP event flagged TP_EVENT_F_RESYNC.
 *
 * A new subscription starts with the current state: the first tp_poll after tp_subscribe (or a
 * pattern subscription's match) delivers, before any record, one event per instrument and newly
 * subscribed topic from the state table, flagged TP_EVENT_F_SNAPSHOT | TP_EVENT_F_RESYNC (and
 * STALE / RECOVERING as the book is): TOP with the best bid and offer (also when both sides are
 * empty, so a quiet instrument is seen), DEPTH with the book, TRADES with the last trade if the
 * instrument has traded.
 *
 * Prices are "price9": int64 with exponent -9 (TP_PRICE_NULL when absent). Quantities int64.
 * Every event also carries the SBE-encoded tpout message it came from (schema
 * tickplane-output.xml), for consumers that prefer to decode it themselves: a BookUpdate, or for
 * the DEPTH events of an order-only book the OrderEvent whose `levels` group they come from.
 *
 * Control socket. With no socket configured the library filters locally only (tests, tools,
 * a bus without a daemon). When one is configured (tp_control_connect, or the environment
 * variable TICKPLANE_CONTROL_SOCKET at tp_attach) every subscription is first asked of the daemon,
 * which checks the caller's entitlements (by its uid/gid) and tells the data plane which
 * instruments have interest; only an accepted subscription enables the local filter. The
 * connection stays open until tp_detach: the daemon drops this client's subscriptions when it
 * closes (also when the process dies). There is no default path: the library never guesses one.
 *
 * Thread safety: one tp_client per thread. Errors are negative errno values; the calls that talk
 * to the daemon also leave a readable reason in tp_last_error().
 */
#ifndef TICKPLANE_H
#define TICKPLANE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_MAX_DEPTH       32u        /* levels per side held by the state table and local books */
#define TP_SYMBOL_LEN      24u        /* symbol bytes, NUL-padded (not always NUL-terminated) */
#define TP_INSTRUMENT_NONE UINT32_MAX /* channel-wide events */
#define TP_PRICE_NULL      INT64_MIN  /* no price */
#define TP_COUNT_NULL      INT32_MAX  /* venue gives no order count */

/* Topics. Values below TP_TOPIC_USER_FIRST are built in. */
enum tp_topic {
    TP_TOPIC_DEPTH = 0,
    TP_TOPIC_TOP = 1,
    TP_TOPIC_TRADES = 2,
    TP_TOPIC_ORDERS = 3,
    TP_TOPIC_STATUS = 4,
    TP_TOPIC_DEFINITIONS = 5,
    TP_TOPIC_LOSS = 6, /* always delivered: the reader was lapped */
    TP_TOPIC_USER_FIRST = 8,
    TP_TOPIC_MAX = 32,
};
#define TP_TOPIC_BIT(t)   (1u << (t))
#define TP_TOPICS_BUILTIN 0x3fu /* DEPTH..DEFINITIONS */

/*
 * A record tag, not a topic one subscribes: an OrderEvent that also carries the level changes the
 * order made (tpout version 3, order-only books such as ITCH's). It feeds ORDERS (the order part,
 * as an ORDERS event) and DEPTH and TOP (the level part, as a DEPTH event), each only to those who
 * subscribed that topic, in that order, as when they came as an OrderEvent and a BookUpdate; a
 * transformer whose sources include DEPTH or ORDERS sees such records with this tag.
 */
#define TP_RECORD_ORDER_DEPTH 7u

/* Event flags: the low byte equals the tpout EventFlags set. */
#define TP_EVENT_F_END_OF_EVENT 0x01u /* last message of a venue event: the book is consistent */
#define TP_EVENT_F_RECOVERING   0x02u
#define TP_EVENT_F_STALE        0x04u
#define TP_EVENT_F_SNAPSHOT     0x08u
#define TP_EVENT_F_IMPLIED      0x10u
/* The order-level view (ORDERS topic, the order book a consumer builds) lacks orders the venue
 * holds; the price levels are the venue's unless RECOVERING or STALE say otherwise. */
#define TP_EVENT_F_ORDERS_INCOMPLETE 0x20u
#define TP_EVENT_F_RESYNC            0x100u /* built by the library from the state table */

/* Same numbering as tpout TradingStatus. */
enum tp_trading_status {
    TP_STATUS_UNKNOWN = 0,
    TP_STATUS_PRE_OPEN = 1,
    TP_STATUS_TRADING = 2,
    TP_STATUS_HALTED = 3,
    TP_STATUS_PAUSED = 4,
    TP_STATUS_QUOTATION_ONLY = 5,
    TP_STATUS_CLOSED = 6,
    TP_STATUS_POST_CLOSE = 7,
    TP_STATUS_NOT_AVAILABLE = 8,
};

struct tp_level {
    int64_t price; /* price9 */
    int64_t qty;
    int32_t orders; /* TP_COUNT_NULL when unknown */
    uint32_t reserved;
};

struct tp_top_of_book {
    int64_t bid_price; /* TP_PRICE_NULL when the side is empty */
    int64_t bid_qty;
    int64_t ask_price;
    int64_t ask_qty;
    int32_t bid_orders;
    int32_t ask_orders;
};

struct tp_last_trade {
    int64_t price;
    int64_t qty;
    uint64_t trade_id;
    uint64_t venue_time_ns;
    uint8_t aggressor; /* 0 none, 1 buy, 2 sell (tpout AggressorSide) */
    uint8_t reserved[7];
};

/* Fixed part of an instrument's conflated state. */
struct tp_book_header {
    uint32_t instrument_id;
    uint8_t trading_status; /* enum tp_trading_status */
    uint8_t venue;          /* tpout Venue: 0 cme, 1 nasdaq, 2 eurex */
    uint8_t flags;          /* TP_EVENT_F_* low byte of the last event (e.g. RECOVERING, STALE) */
    uint8_t security_kind;  /* tpout SecurityKind */
    char symbol[TP_SYMBOL_LEN];
    uint64_t bus_sequence; /* ring sequence of the last event reflected here (0: none) */
    uint64_t venue_seq;
    uint64_t venue_time_ns;
    uint64_t recv_tsc; /* receive time of the last event (see tp_event.recv_tsc) */
    uint32_t rpt_seq;
    uint16_t bid_levels; /* valid levels per side, <= table depth */
    uint16_t ask_levels;
    uint64_t updates;  /* changes applied since start */
    int64_t tick_size; /* price9, TP_PRICE_NULL when unknown */
    struct tp_last_trade last_trade;
    int64_t open, high, low, settle; /* price9, TP_PRICE_NULL when unknown */
    int64_t volume;
};

struct tp_instrument_state {
    struct tp_book_header book;
    struct tp_level bids[TP_MAX_DEPTH]; /* bids[0] is the best */
    struct tp_level asks[TP_MAX_DEPTH];
};

/* A book as the library keeps it for DEPTH and TOP subscribers. */
struct tp_book_view {
    const struct tp_level *bids;
    const struct tp_level *asks;
    uint16_t bid_levels;
    uint16_t ask_levels;
};

/* One level change of a BookUpdate (tpout LevelAction semantics, level 1 = best). */
struct tp_level_change {
    uint8_t side;   /* 0 bid, 1 ask */
    uint8_t level;  /* 1-based */
    uint8_t action; /* 0 insert (shift down), 1 change, 2 remove (shift up), 3 clear side */
    uint8_t reserved;
    int32_t orders;
    int64_t price;
    int64_t qty;
};

struct tp_trade_event {
    int64_t price;
    int64_t qty;
    uint64_t trade_id;
    int32_t orders;
    uint8_t aggressor; /* 0 none, 1 buy, 2 sell */
};

struct tp_order_event {
    uint64_t order_id;
    uint64_t priority;
    int64_t price;
    int64_t qty;    /* add/modify: displayed; execute: executed (INT64_MIN if unknown); delete: 0 */
    uint8_t side;   /* 0 bid, 1 ask */
    uint8_t action; /* tpout OrderAction: 0 add, 1 modify, 2 remove, 3 execute */
    int64_t remaining_qty; /* what the order has left after the event (0: gone) */
};

/* TP_TOPIC_STATUS carries one of three kinds. */
enum tp_status_kind {
    TP_STATUS_EVENT_TRADING = 0, /* trading status changed */
    TP_STATUS_EVENT_STAT = 1,    /* a session statistic */
    TP_STATUS_EVENT_CHANNEL = 2, /* channel-wide: reset, gap, recovery */
};

struct tp_status_event {
    uint8_t kind;           /* enum tp_status_kind */
    uint8_t trading_status; /* TRADING: enum tp_trading_status */
    uint8_t venue_status;   /* TRADING: the venue's own code */
    uint8_t stat_type;      /* STAT: tpout StatType; CHANNEL: tpout ChannelEventType */
    uint32_t channel_id;    /* CHANNEL */
    int64_t price;          /* STAT: price statistics, else TP_PRICE_NULL */
    int64_t qty;            /* STAT: volume statistics; CHANNEL gap: first lost sequence */
    uint64_t gap_to;        /* CHANNEL gap: last lost sequence */
};

struct tp_definition_event {
    int64_t venue_security_id;
    int64_t tick_size;
    int64_t display_factor;
    int64_t contract_multiplier;
    char symbol[TP_SYMBOL_LEN];
    uint32_t channel_id;
    uint8_t depth;
    uint8_t trading_status;
    uint8_t security_kind;
    uint8_t venue; /* tpout Venue: 0 cme, 1 nasdaq, 2 eurex */
};

/* What a callback receives. Pointers are valid during the callback only. */
struct tp_event {
    uint32_t topic; /* enum tp_topic, or a transformer's topic */
    uint32_t instrument_id;
    uint64_t bus_sequence; /* ring sequence of the published record (0 for RESYNC events) */
    uint32_t flags;        /* TP_EVENT_F_* */
    uint32_t sbe_length;
    const void *sbe; /* the tpout message (NULL for RESYNC and LOSS events) */
    uint64_t venue_seq;
    uint64_t venue_time_ns;
    /* When tickplane received the packet, in TSC ticks: the NIC's receive stamp mapped to the
     * TSC where the port's NIC stamps packets, else the TSC when rx_burst returned it. */
    uint64_t recv_tsc;
    struct tp_book_view book; /* DEPTH and TOP: the library's book after the change */
    union {
        struct {
            const struct tp_level_change *changes;
            uint32_t count;
        } depth;
        struct tp_top_of_book top;
        struct tp_trade_event trade;
        struct tp_order_event order;
        struct tp_status_event status;
        struct tp_definition_event definition;
        uint64_t lost;    /* TP_TOPIC_LOSS: events lost (on ring venue_seq, one event per ring) */
        const void *user; /* a transformer's own output */
    } u;
};

/* What a transformer sees: one published record, already validated and filtered. */
struct tp_record_view {
    uint16_t type;  /* 1: tpout SBE message, 2: raw */
    uint16_t topic; /* tag the writer gave (DEPTH, TRADES, ORDERS, STATUS, DEFINITIONS, or
                     * TP_RECORD_ORDER_DEPTH) */
    uint32_t instrument_id;
    uint32_t flags;
    uint32_t length; /* payload bytes */
    uint64_t bus_sequence;
    const void *payload;
};

/*
 * A transformer turns a record into an event of its topic: fill *out (topic and instrument are
 * preset) and return 1 to deliver it, 0 to drop the record for this topic.
 */
typedef int (*tp_transform_fn)(void *ctx, const struct tp_record_view *rec, struct tp_event *out);

typedef void (*tp_event_fn)(void *user, const struct tp_event *ev);

struct tp_client;

struct tp_client_options {
    const char *shm_dir;   /* where the segments are; NULL: /dev/shm */
    uint32_t batch_bytes;  /* private copy buffer; 0: 64 KiB */
    int no_reader_segment; /* 1: keep this reader's counters in private memory only */
    unsigned reader_mode;  /* mode of the reader's counters segment; 0: 0640 */
    /* How old the daemon's heartbeat may be before it is taken for dead (ms); 0: the variable
     * TICKPLANE_HEARTBEAT_TIMEOUT_MS if set, else what the daemon's segments say (its
     * bus.heartbeat_timeout_ms), else TP_HEARTBEAT_TIMEOUT_MS. */
    unsigned heartbeat_timeout_ms;
};

#define TP_HEARTBEAT_TIMEOUT_ENV "TICKPLANE_HEARTBEAT_TIMEOUT_MS"
/* For a daemon that does not say (older ones): it beats every 10 ms or so; the margin covers a
 * main lcore busy with a reload (its wait for the data lcores' acknowledgement is bounded at 2 s)
 * or a loaded machine. */
#define TP_HEARTBEAT_TIMEOUT_MS 2000u

/*
 * Attach to instance `instance`. Refuses (with a reason in err) segments of another layout
 * version (-EPROTONOSUPPORT), missing (-ENOENT) or stale (-ESTALE) ones, and with -EOWNERDEAD
 * segments still marked live whose writer's heartbeat is older than the heartbeat timeout: the
 * daemon was killed (SIGKILL, the OOM killer) or is hung, and until a new daemon replaces them
 * they would look like a quiet market. A daemon that is starting is never refused (its heartbeat
 * is fresh, or not begun yet). Writers that keep no heartbeat (tools, tests) are not checked.
 * opt may be NULL.
 * The reader starts at the current end of the ring; a subscription's first events are the
 * current state (above).
 */
int tp_attach(struct tp_client **out, const char *instance, const struct tp_client_options *opt,
              char *err, size_t err_len);

/*
 * After tp_poll returned -ESTALE (writer restarted): map the new segments, keep subscriptions.
 * Refuses them as tp_attach does (-EOWNERDEAD too).
 * With the control socket it also connects again and asks the new daemon for every subscription
 * (an error then is one of tp_subscribe's, and the local filter is left as it was).
 */
int tp_reattach(struct tp_client *c, char *err, size_t err_len);

void tp_detach(struct tp_client *c);

/* Number of instrument ids (0..n-1) of the instance. */
uint32_t tp_instrument_count(const struct tp_client *c);

/* Id of the instrument whose symbol is `symbol`, or -ENOENT. */
int64_t tp_find_instrument(const struct tp_client *c, const char *symbol);

/*
 * The symbol of instrument `id` (an event's instrument_id), NUL-terminated without the venue's
 * padding, into `symbol`. 0, -ERANGE (no such id), -ENOENT (not defined yet) or -EAGAIN (the
 * writer was inside the entry: try again). Reads the state table: no syscall, callable from a
 * tp_poll callback.
 */
int tp_symbol(const struct tp_client *c, uint32_t id, char symbol[TP_SYMBOL_LEN + 1]);

/* What an instrument is, from its definition and state (tp_instrument_info). */
struct tp_instrument_info {
    uint32_t instrument_id;
    uint8_t venue;          /* tpout Venue: 0 cme, 1 nasdaq, 2 eurex */
    uint8_t security_kind;  /* tpout SecurityKind */
    uint8_t trading_status; /* enum tp_trading_status */
    uint8_t flags;          /* TP_EVENT_F_* low byte of its last event (RECOVERING, STALE) */
    char symbol[TP_SYMBOL_LEN + 1]; /* NUL-terminated, without padding */
    char venue_name[32];            /* the daemon's name of the venue ("CME", "NASDAQ", "EUREX") */
    int64_t tick_size;              /* price9, TP_PRICE_NULL when unknown */
};

/* 0, or tp_symbol's errors. Same cost and rules as tp_symbol. */
int tp_instrument_info(const struct tp_client *c, uint32_t id, struct tp_instrument_info *out);

/*
 * A price9 as text into out (at most size bytes, always terminated): "-" for TP_PRICE_NULL, else
 * a decimal with as many decimals as the tick size has (tick9, TP_PRICE_NULL or 0 when unknown),
 * at least 2, and more only when the price itself has them: 115 -> "115.00", 153.77 ->
 * "153.77", 0.025 at a 0.005 tick -> "0.025". Returns what snprintf returns.
 */
int tp_format_price(int64_t price9, int64_t tick9, char *out, size_t size);

/* The library's version and the commit it was built from: "0.1.0 (commit 1a2b3c4d5e6f)". */
const char *tp_version(void);

/*
 * Add (subscribe) or remove (unsubscribe) interest in topics (TP_TOPIC_BIT mask) for the given
 * instruments; ids == NULL means every instrument. Subscribing to DEPTH or TOP loads the book
 * from the state table. Not for the poll path (may allocate, and blocks on the control socket).
 * Returns 0 or -EINVAL / -ERANGE (checked before anything changes).
 *
 * With the control socket the call is all or nothing: the daemon is asked for (venue, symbol,
 * topics) of every instrument whose topics change (a strategy's own topic asks for the topics its
 * transformer reads; ids == NULL asks for "*" on every venue of the instance, refused unless all
 * are granted: tp_subscribe_pattern(c, venue, "*", ...) asks for one venue), and the
 * local filter changes only when every request was accepted. Further errors, each with a reason
 * in tp_last_error():
 *   -EACCES     refused by the entitlements ("refused: uid 1001 is not entitled to topic mbo of
 *               NASDAQ \"AAPL\""): nothing of this call is delivered;
 *   -ENOENT     an instrument id that has no definition (no symbol) yet;
 *   -EAGAIN     the daemon is busy or rate limits this client: try again;
 *   -ENOSPC     the daemon's per-client subscription limit;
 *   -ENOTCONN   the connection to the daemon is gone (daemon stopped); -ETIMEDOUT: no reply;
 *   -EPROTO     any other error reply.
 */
int tp_subscribe(struct tp_client *c, const uint32_t *ids, size_t n_ids, uint32_t topics);
int tp_unsubscribe(struct tp_client *c, const uint32_t *ids, size_t n_ids, uint32_t topics);

/*
 * Subscribe topics for every instrument whose symbol matches `pattern` (a glob: '*' any run of
 * characters, '?' exactly one; 1-63 printable characters, no space: the daemon's glob) on `venue`
 * ("CME" or "NASDAQ"; NULL: every venue), also instruments defined later: an instrument unknown
 * now is matched on its first record, without allocating (the books it may need for DEPTH/TOP are
 * allocated here, one per undefined instrument). Through the control socket it is one daemon
 * subscription per venue, checked against the entitlements as a whole (a refusal is -EACCES, as
 * for tp_subscribe), so it costs one of the daemon's per-client subscriptions however many
 * instruments match. Pattern topics add to those subscribed by id; tp_unsubscribe removes only the
 * latter. Returns a handle (>= 1) for tp_unsubscribe_pattern, or a negative errno: tp_subscribe's,
 * -EINVAL for a bad pattern or venue, -ENOSPC beyond 32 pattern subscriptions.
 */
int tp_subscribe_pattern(struct tp_client *c, const char *venue, const char *pattern,
                         uint32_t topics);

/* Remove a pattern subscription: 0, or -ENOENT for an unknown handle. */
int tp_unsubscribe_pattern(struct tp_client *c, int handle);

/*
 * Register a transformer for records of source_topics (TP_TOPIC_BIT mask of published topics).
 * Returns the new topic number (>= TP_TOPIC_USER_FIRST) to pass to tp_subscribe, or -ENOSPC.
 */
int tp_add_transformer(struct tp_client *c, const char *name, uint32_t source_topics,
                       tp_transform_fn fn, void *ctx);

/*
 * Read at most max_events records (or pending loss / resync steps) and hand their events to fn:
 * a record feeds one event per subscribed topic it serves (e.g. DEPTH and TOP). Returns the
 * number of events delivered (0 also when everything read was filtered out: tp_stats().lag says
 * whether more is waiting), or -ESTALE when the writer has closed or been replaced and every
 * record it published has been read (call tp_reattach). No syscalls, locks or allocation.
 */
int tp_poll(struct tp_client *c, tp_event_fn fn, void *user, unsigned max_events);

/*
 * Consistent copy of an instrument's conflated state. 0, -ERANGE or -EAGAIN. The daemon writes an
 * instrument's entry once per receive burst, at its end, so the state may trail the ring by the
 * events of one burst (microseconds); book.bus_sequence says which event it reflects.
 */
int tp_read_state(const struct tp_client *c, uint32_t id, struct tp_instrument_state *out);

struct tp_client_stats {
    uint64_t records;   /* records read from the ring */
    uint64_t delivered; /* events handed to callbacks */
    uint64_t filtered;  /* records nobody here subscribed to */
    uint64_t lapped;    /* times the writer overtook this reader */
    uint64_t lost;      /* records lost to laps */
    uint64_t resyncs;   /* books rebuilt from the state table */
    uint64_t malformed; /* records that failed to decode */
    uint64_t lag;       /* records published but not yet read */
};

void tp_stats(const struct tp_client *c, struct tp_client_stats *out);

/*
 * An instance publishes on one ring per data lcore; every instrument lives on one of them, so
 * its events keep their order. tp_poll drains the rings in turn. Per ring (0..tp_ring_count-1):
 */
struct tp_ring_stats {
    uint64_t records; /* records read from this ring */
    uint64_t lapped;  /* times its writer overtook this reader */
    uint64_t lost;    /* records lost to those laps */
    uint64_t lag;     /* records published on it but not yet read */
};

unsigned tp_ring_count(const struct tp_client *c);
/* 0, or -ERANGE for a ring the instance does not have. */
int tp_ring_stats(const struct tp_client *c, unsigned ring, struct tp_ring_stats *out);

/*
 * The daemon's liveness. The daemon's main lcore stores CLOCK_MONOTONIC in the header of every
 * segment of the instance about every 10 ms (its heartbeat); CLOCK_MONOTONIC is one clock for
 * the machine, so this holds for a strategy in another PID namespace (container) too, but not in
 * another time namespace.
 *
 * tp_check_heartbeat: cheap enough for the poll loop (no syscall: one vDSO clock read and two
 * loads, about 35 ns): 0 while the writer is alive; -EOWNERDEAD when its heartbeat is older
 * than the heartbeat timeout (killed, or its main lcore hung): detach and attach again until a
 * new daemon is up; -ESTALE when it closed or replaced the instance (tp_poll returns -ESTALE
 * once the records it published are read: then tp_reattach). A writer that keeps no heartbeat
 * always reads 0 here.
 *
 * tp_check_writer: slow path (stat, maybe kill): the same, and -ESTALE also when the segment
 * files were renamed or removed; for a writer that keeps no heartbeat, -ESRCH when its process
 * is gone (checked only in the writer's PID namespace: its pid means nothing elsewhere).
 * On failure tp_last_error() says why.
 */
int tp_check_heartbeat(const struct tp_client *c);
int tp_check_writer(struct tp_client *c);

#define TP_CONTROL_SOCKET_ENV   "TICKPLANE_CONTROL_SOCKET"   /* path, read by tp_attach */
#define TP_CONTROL_FALLBACK_ENV "TICKPLANE_CONTROL_FALLBACK" /* "1": as TP_CONTROL_FALLBACK */
#define TP_CONTROL_FALLBACK     1u /* daemon unreachable: filter locally instead of failing */

/*
 * Subscribe through the daemon's control socket at `path` (a UNIX socket, the config's
 * control.socket) from now on. Call it after tp_attach and before any subscription (else -EBUSY);
 * tp_attach already does it when TICKPLANE_CONTROL_SOCKET is set (and then fails when the daemon
 * cannot be reached, unless TICKPLANE_CONTROL_FALLBACK=1).
 * Returns 0 when connected. When the daemon cannot be reached: the negative errno of the connect
 * (-ENOENT, -ECONNREFUSED, -EACCES, ...), or with TP_CONTROL_FALLBACK 1 (the client keeps filtering
 * locally); either way tp_last_error() says why. -EISCONN if already connected.
 */
int tp_control_connect(struct tp_client *c, const char *path, unsigned flags);

/* 1 while subscriptions go through the control socket, 0 when the filter is local only. */
int tp_control_connected(const struct tp_client *c);

/*
 * Slow path, never blocks: read what the daemon sent unasked. A subscription the daemon revoked
 * (an entitlement withdrawn by a reload) stops being delivered here too. Returns the number of
 * subscriptions revoked (reason in tp_last_error()), 0, or -ENOTCONN when the daemon has gone.
 */
int tp_control_check(struct tp_client *c);

/* The reason for the last failed call on c that talked to the daemon or checked on it
 * (tp_check_writer); "" when none. */
const char *tp_last_error(const struct tp_client *c);

#ifdef __cplusplus
}
#endif

#endif /* TICKPLANE_H */
