/*
 * Instrument registry: dense instrument ids (0..capacity-1) for the venues' keys.
 *
 * Every book, counter and state-table slot in tickplane is an array indexed by the dense id this
 * registry hands out. Venue keys map to it in O(1) on the hot path:
 *   - ITCH stock locate (u16, valid for one session of one ITCH venue) -> direct array lookup;
 *   - MDP3 SecurityID (int32) -> open addressing with linear probing;
 *   - (venue, symbol) -> open addressing, used when definitions arrive (not on the hot path).
 *
 * Instruments are defined from the venue's own messages (MDP3 instrument definitions, ITCH stock
 * directory) by the feed handlers; a filter (tp_instrument_filter.h) decides which ones are kept.
 * Rejected instruments are never given an id, so their messages are dropped at the first lookup.
 *
 * Memory: tp_instruments_memsize() bytes, placed by the caller (rte_zmalloc_socket in the daemon,
 * aligned_alloc in tools and tests) and prepared by tp_instruments_init(). Nothing allocates after.
 * Single writer: only the data core that owns the registry defines or changes instruments.
 */
#ifndef TP_INSTRUMENTS_H
#define TP_INSTRUMENTS_H

#include <stddef.h>
#include <stdint.h>

/* Returned by the lookups when the key is unknown (or was filtered out). */
#define TP_INSTRUMENT_NONE UINT32_MAX

#define TP_SYMBOL_MAX         24 /* bytes of symbol, NUL-terminated (MDP3 symbols are <= 20) */
#define TP_SECURITY_GROUP_MAX 8  /* MDP3 SecurityGroup is 6 chars; ITCH uses the market category */
#define TP_ITCH_LOCATES       65536 /* stock locate is a u16 */

enum tp_venue {
    TP_VENUE_NONE = 0,
    TP_VENUE_CME_MDP3 = 1,
    TP_VENUE_NASDAQ_ITCH = 2,
    TP_VENUE_EUREX_EOBI = 3, /* keyed by symbol: the SecurityID in decimal (tp_eobi_feed.h) */
};

/* What kind of book the instrument gets. */
enum tp_book_type {
    TP_BOOK_TYPE_NONE = 0,
    TP_BOOK_TYPE_MBP = 1,     /* price levels by index (MDP3 outright + implied) */
    TP_BOOK_TYPE_MBO = 2,     /* orders, levels aggregated from them (ITCH) */
    TP_BOOK_TYPE_MBP_MBO = 3, /* both (MDP3 market-by-order feeds carry both) */
};

/* Normalized trading status (tp_instrument.trading_status and book status changes). */
enum tp_trading_status {
    TP_STATUS_UNKNOWN = 0,
    TP_STATUS_PRE_OPEN = 1,
    TP_STATUS_OPEN = 2, /* continuous trading */
    TP_STATUS_HALTED = 3,
    TP_STATUS_PAUSED = 4, /* ITCH 'P', MDP3 pause */
    TP_STATUS_CLOSED = 5,
    TP_STATUS_QUOTATION_ONLY = 6, /* ITCH 'Q' */
    TP_STATUS_NO_CANCEL = 7,      /* MDP3 pre-open no-cancel */
};

/* Kind of instrument (MDP3 definition template; ITCH instruments are equities). */
enum tp_instrument_kind {
    TP_KIND_UNKNOWN = 0,
    TP_KIND_FUTURE = 1,
    TP_KIND_OPTION = 2,
    TP_KIND_SPREAD = 3,
    TP_KIND_EQUITY = 4,
};

/*
 * One instrument. The first cache line holds what the feeds touch per message; the rest is
 * reference data read when defining books and answering the control plane.
 */
struct tp_instrument {
    uint32_t id;            /* dense id == index in the registry */
    uint8_t venue;          /* enum tp_venue */
    uint8_t kind;           /* enum tp_instrument_kind */
    uint8_t book_type;      /* enum tp_book_type */
    uint8_t trading_status; /* enum tp_trading_status */
    uint16_t channel;       /* MDP3 channel id, or ITCH venue slot (locate map index) */
    uint8_t market_depth;   /* MDP3 outright depth (GBX depth), 0 for MBO-only */
    uint8_t implied_depth;  /* MDP3 implied depth, 0 if none */
    int32_t security_id;    /* MDP3 SecurityID; 0 for ITCH */
    uint16_t itch_locate;   /* ITCH stock locate in the current session */
    uint16_t reserved;
    int64_t tick;           /* min price increment, price9 (ITCH: 0 = unknown) */
    int64_t display_factor; /* price multiplier, price9 (1000000000 == 1.0) */
    char symbol[TP_SYMBOL_MAX];
    char security_group[TP_SECURITY_GROUP_MAX];
};

/*
 * Several registries may share one id space (one per data lcore of an instance): each hands out
 * the ids of its own window [first_id, first_id + ids) of 0..capacity-1, so ids stay unique and
 * dense per window. Ids below first_id belong to other registries: tp_instruments_get gives them
 * as an undefined instrument (venue TP_VENUE_NONE), so loops over 0..tp_instruments_count() need
 * no special case. A lone registry has first_id 0 and ids 0 (the whole capacity).
 */
struct tp_instruments_params {
    uint32_t capacity;    /* the id space (dense ids 0..capacity-1): per-id arrays are this long */
    uint16_t itch_venues; /* number of ITCH locate maps (one per ITCH feed/session), may be 0 */
    uint32_t first_id;    /* first id this registry hands out */
    uint32_t ids;         /* ids it may hand out (0: capacity - first_id) */
};

struct tp_instruments; /* opaque: lives in the caller's memory */

/* Bytes needed for a registry with these params (0 if the params are invalid). */
size_t tp_instruments_memsize(const struct tp_instruments_params *p);

/* Prepares mem (tp_instruments_memsize bytes, 64-byte aligned). Returns 0 or -EINVAL. */
int tp_instruments_init(void *mem, const struct tp_instruments_params *p);

/*
 * One past the highest id handed out so far (first_id + the ids handed out), the capacity (the
 * id space), and the first id of this registry's window.
 */
uint32_t tp_instruments_count(const struct tp_instruments *r);
uint32_t tp_instruments_capacity(const struct tp_instruments *r);
uint32_t tp_instruments_first_id(const struct tp_instruments *r);

/*
 * The instrument with dense id `id`; NULL if no such id was handed out. An id below first_id
 * (another registry's) gives an undefined instrument (venue TP_VENUE_NONE) that must not be
 * written.
 */
struct tp_instrument *tp_instruments_get(struct tp_instruments *r, uint32_t id);

/*
 * Registers an instrument, or updates it if its key is already known: the key is the MDP3
 * SecurityID for TP_VENUE_CME_MDP3, (channel, symbol) for ITCH, the symbol for EOBI. `def` carries
 * the fields; its id is ignored. On success returns the dense id (>= 0); -ENOSPC if the registry's
 * window is full, -EINVAL for a malformed definition (unknown venue, empty symbol, locate map index
 * out of range). An update with trading_status TP_STATUS_UNKNOWN keeps the instrument's current
 * status. For ITCH, the locate is bound to the instrument in locate map `def->channel`.
 */
int64_t tp_instruments_define(struct tp_instruments *r, const struct tp_instrument *def);

/*
 * Hot path: dense id for an MDP3 SecurityID, or TP_INSTRUMENT_NONE. Once a SecurityID has an id,
 * it keeps it until tp_instruments_init (nothing is removed), so callers may remember it.
 */
uint32_t tp_instruments_by_security_id(const struct tp_instruments *r, int32_t security_id);

/*
 * The SecurityID table itself, for a feed's inner loop (tp_secid_find inlines the lookup that
 * tp_instruments_by_security_id makes). Open addressing, linear probing; a slot is free while
 * id1 is 0. The table does not move; it changes only when instruments are defined.
 */
struct tp_secid_slot {
    int32_t key;  /* SecurityID */
    uint32_t id1; /* dense id + 1 */
};

struct tp_secid_table {
    const struct tp_secid_slot *slots;
    uint32_t mask;  /* slots - 1 (a power of two) */
    uint32_t shift; /* 32 - log2(slots): the home slot is the top bits of the product */
};

struct tp_secid_table tp_instruments_secid_table(const struct tp_instruments *r);

/* Home slot of a SecurityID: Fibonacci hashing (one multiply spreads neighbouring ids). */
static inline uint32_t tp_secid_home(const struct tp_secid_table *t, int32_t security_id)
{
    return (uint32_t)((uint32_t)security_id * 2654435769u) >> t->shift;
}

/* Dense id for an MDP3 SecurityID, or TP_INSTRUMENT_NONE. */
static inline uint32_t tp_secid_find(const struct tp_secid_table *t, int32_t security_id)
{
    for (uint32_t i = tp_secid_home(t, security_id); t->slots[i].id1; i = (i + 1) & t->mask)
        if (t->slots[i].key == security_id)
            return t->slots[i].id1 - 1;
    return TP_INSTRUMENT_NONE;
}

/* Hot path: dense id for an ITCH stock locate in locate map `slot`, or TP_INSTRUMENT_NONE. */
uint32_t tp_instruments_by_locate(const struct tp_instruments *r, uint16_t slot, uint16_t locate);

/*
 * The locate map `slot` itself, for a feed's inner loop: entry [locate] holds the dense id + 1,
 * 0 when the locate is not bound. NULL if there is no such map. The map does not move.
 */
const uint32_t *tp_instruments_locate_map(const struct tp_instruments *r, uint16_t slot);

/*
 * Dense id for a symbol of a venue (NUL-terminated or space-padded, len bytes at most), or
 * TP_INSTRUMENT_NONE. With several ITCH channels trading the same symbol, the first defined wins.
 */
uint32_t tp_instruments_by_symbol(const struct tp_instruments *r, uint8_t venue, const char *symbol,
                                  size_t len);

/*
 * Starts a new ITCH session in locate map `slot`: every locate binding is forgotten (locates are
 * reassigned each day), instruments and their ids stay. Returns 0 or -EINVAL.
 */
int tp_instruments_reset_locates(struct tp_instruments *r, uint16_t slot);

/*
 * Copies a venue text field (space padded or NUL-terminated, len bytes at most) into dst of
 * dst_size bytes, NUL-terminated, trailing spaces dropped (symbols, security groups).
 */
void tp_symbol_copy(char *dst, size_t dst_size, const char *src, size_t len);

#endif /* TP_INSTRUMENTS_H */
