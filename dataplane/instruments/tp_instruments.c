/*
 * Instrument registry (see tp_instruments.h).
 *
 * Three lookup structures point into one array of instruments: an open-addressing table keyed by
 * SecurityID, one keyed by (venue, symbol), and a direct array per ITCH locate map. They store
 * id + 1 so that zeroed memory means "empty". A SecurityID slot holds its key next to its id, so
 * a probe reads one cache line, not one in a key array and one in an id array; that table is
 * public (tp_secid_table) so that feeds inline its lookup.
 */
#include <errno.h>
#include <string.h>

#include "tp_instruments.h"

#define ALIGN64(x) (((x) + 63u) & ~(size_t)63u)

struct tp_instruments {
    uint32_t capacity; /* the id space */
    uint32_t first_id; /* ids handed out: first_id .. first_id + window - 1 */
    uint32_t window;
    uint32_t count;     /* handed out */
    uint32_t slot_mask; /* slots - 1 of both hash tables */
    uint16_t itch_venues;
    uint16_t reserved;
    struct tp_instrument *items; /* [capacity] */
    struct tp_secid_slot *secid; /* [slots] */
    uint32_t *symbol_ids;        /* [slots], id + 1, 0 = free */
    uint32_t *locates;           /* [itch_venues][TP_ITCH_LOCATES], id + 1, 0 = none */
    struct tp_instrument other;  /* what ids of other registries read as */
} __attribute__((aligned(64)));

static int params_valid(const struct tp_instruments_params *p)
{
    return p && p->capacity > 0 && p->capacity < (1u << 30) && p->first_id < p->capacity &&
           p->ids <= p->capacity - p->first_id;
}

static uint32_t window_of(const struct tp_instruments_params *p)
{
    return p->ids != 0 ? p->ids : p->capacity - p->first_id;
}

/* The instrument of an id this registry handed out (lookups store id + 1). */
static inline struct tp_instrument *item(const struct tp_instruments *r, uint32_t id)
{
    return &r->items[id - r->first_id];
}

static uint32_t slots_for(uint32_t capacity)
{
    uint32_t slots = 16;
    while (slots < 2 * capacity)
        slots <<= 1;
    return slots;
}

struct layout {
    size_t items, secid, symbol_ids, locates, total;
};

static void compute_layout(const struct tp_instruments_params *p, struct layout *l)
{
    size_t slots = slots_for(window_of(p));
    size_t off = ALIGN64(sizeof(struct tp_instruments));

    l->items = off;
    off += ALIGN64((size_t)window_of(p) * sizeof(struct tp_instrument));
    l->secid = off;
    off += ALIGN64(slots * sizeof(struct tp_secid_slot));
    l->symbol_ids = off;
    off += ALIGN64(slots * sizeof(uint32_t));
    l->locates = off;
    off += ALIGN64((size_t)p->itch_venues * TP_ITCH_LOCATES * sizeof(uint32_t));
    l->total = off;
}

size_t tp_instruments_memsize(const struct tp_instruments_params *p)
{
    struct layout l;

    if (!params_valid(p))
        return 0;
    compute_layout(p, &l);
    return l.total;
}

int tp_instruments_init(void *mem, const struct tp_instruments_params *p)
{
    struct tp_instruments *r = mem;
    char *base = mem;
    struct layout l;

    if (!mem || !params_valid(p))
        return -EINVAL;
    compute_layout(p, &l);
    memset(mem, 0, l.total);
    r->capacity = p->capacity;
    r->first_id = p->first_id;
    r->window = window_of(p);
    r->other.id = TP_INSTRUMENT_NONE;
    r->slot_mask = slots_for(r->window) - 1;
    r->itch_venues = p->itch_venues;
    r->items = (struct tp_instrument *)(base + l.items);
    r->secid = (struct tp_secid_slot *)(base + l.secid);
    r->symbol_ids = (uint32_t *)(base + l.symbol_ids);
    r->locates = (uint32_t *)(base + l.locates);
    return 0;
}

uint32_t tp_instruments_count(const struct tp_instruments *r)
{
    return r->first_id + r->count;
}

uint32_t tp_instruments_capacity(const struct tp_instruments *r)
{
    return r->capacity;
}

uint32_t tp_instruments_first_id(const struct tp_instruments *r)
{
    return r->first_id;
}

struct tp_instrument *tp_instruments_get(struct tp_instruments *r, uint32_t id)
{
    if (id < r->first_id)
        return &r->other;
    return id - r->first_id < r->count ? item(r, id) : NULL;
}

/* Murmur3 finalizer: spreads the symbol hash over the table. */
static inline uint32_t hash32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x85ebca6bu;
    x ^= x >> 13;
    x *= 0xc2b2ae35u;
    x ^= x >> 16;
    return x;
}

/* FNV-1a over the symbol's significant bytes (up to NUL or trailing spaces) and the venue. */
static uint32_t symbol_hash(uint8_t venue, const char *s, size_t len)
{
    uint32_t h = 2166136261u ^ venue;

    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)s[i]) * 16777619u;
    return hash32(h);
}

/* Significant length of a venue symbol: stops at NUL, drops trailing spaces. */
static size_t symbol_len(const char *s, size_t max)
{
    size_t n = 0;

    while (n < max && s[n] != '\0')
        n++;
    while (n > 0 && s[n - 1] == ' ')
        n--;
    return n;
}

void tp_symbol_copy(char *dst, size_t dst_size, const char *src, size_t len)
{
    size_t n = symbol_len(src, len < dst_size - 1 ? len : dst_size - 1);

    memcpy(dst, src, n);
    memset(dst + n, 0, dst_size - n);
}

struct tp_secid_table tp_instruments_secid_table(const struct tp_instruments *r)
{
    return (struct tp_secid_table){.slots = r->secid,
                                   .mask = r->slot_mask,
                                   .shift = 32u - (uint32_t)__builtin_popcount(r->slot_mask)};
}

uint32_t tp_instruments_by_security_id(const struct tp_instruments *r, int32_t security_id)
{
    struct tp_secid_table t = tp_instruments_secid_table(r);

    return tp_secid_find(&t, security_id);
}

uint32_t tp_instruments_by_locate(const struct tp_instruments *r, uint16_t slot, uint16_t locate)
{
    if (slot >= r->itch_venues)
        return TP_INSTRUMENT_NONE;
    return r->locates[(size_t)slot * TP_ITCH_LOCATES + locate] - 1;
}

const uint32_t *tp_instruments_locate_map(const struct tp_instruments *r, uint16_t slot)
{
    return slot < r->itch_venues ? &r->locates[(size_t)slot * TP_ITCH_LOCATES] : NULL;
}

/*
 * Walks the symbol table's probe run for (venue, symbol); `channel` >= 0 also requires the
 * instrument's channel to match (ITCH). Returns the slot holding it, or the free slot that ends
 * the run with *found = 0.
 */
static uint32_t symbol_slot(const struct tp_instruments *r, uint8_t venue, const char *s,
                            size_t len, int channel, int *found)
{
    uint32_t i = symbol_hash(venue, s, len) & r->slot_mask;

    for (; r->symbol_ids[i]; i = (i + 1) & r->slot_mask) {
        const struct tp_instrument *in = item(r, r->symbol_ids[i] - 1);
        if (in->venue == venue && (channel < 0 || in->channel == channel) &&
            symbol_len(in->symbol, TP_SYMBOL_MAX) == len && memcmp(in->symbol, s, len) == 0) {
            *found = 1;
            return i;
        }
    }
    *found = 0;
    return i;
}

uint32_t tp_instruments_by_symbol(const struct tp_instruments *r, uint8_t venue, const char *symbol,
                                  size_t len)
{
    size_t n = symbol_len(symbol, len < TP_SYMBOL_MAX - 1 ? len : TP_SYMBOL_MAX - 1);
    int found;
    uint32_t i = symbol_slot(r, venue, symbol, n, -1, &found);

    return found ? r->symbol_ids[i] - 1 : TP_INSTRUMENT_NONE;
}

/* Removes symbol table slot i with backward shift (used when a definition renames). */
static void symbol_remove(struct tp_instruments *r, uint32_t i)
{
    uint32_t j = i;

    for (;;) {
        j = (j + 1) & r->slot_mask;
        if (!r->symbol_ids[j])
            break;
        const struct tp_instrument *in = item(r, r->symbol_ids[j] - 1);
        size_t n = symbol_len(in->symbol, TP_SYMBOL_MAX);
        uint32_t home = symbol_hash(in->venue, in->symbol, n) & r->slot_mask;
        if (((j - home) & r->slot_mask) >= ((j - i) & r->slot_mask)) {
            r->symbol_ids[i] = r->symbol_ids[j];
            i = j;
        }
    }
    r->symbol_ids[i] = 0;
}

static void symbol_insert(struct tp_instruments *r, uint32_t id)
{
    const struct tp_instrument *in = item(r, id);
    size_t n = symbol_len(in->symbol, TP_SYMBOL_MAX);
    uint32_t i = symbol_hash(in->venue, in->symbol, n) & r->slot_mask;

    while (r->symbol_ids[i])
        i = (i + 1) & r->slot_mask;
    r->symbol_ids[i] = id + 1;
}

/* Copies the reference data of a definition into an instrument, keeping its id; symbol and
 * group lose their padding. */
static void instrument_store(struct tp_instrument *dst, const struct tp_instrument *def,
                             uint32_t id)
{
    *dst = *def;
    dst->id = id;
    tp_symbol_copy(dst->symbol, sizeof(dst->symbol), def->symbol, sizeof(def->symbol));
    tp_symbol_copy(dst->security_group, sizeof(dst->security_group), def->security_group,
                   sizeof(def->security_group));
}

int64_t tp_instruments_define(struct tp_instruments *r, const struct tp_instrument *def)
{
    size_t n = symbol_len(def->symbol, TP_SYMBOL_MAX - 1);
    uint32_t id = TP_INSTRUMENT_NONE, secid_slot = 0, sym_slot;
    int found;

    if (n == 0)
        return -EINVAL;
    if (def->venue == TP_VENUE_CME_MDP3) {
        struct tp_secid_table t = tp_instruments_secid_table(r);
        secid_slot = tp_secid_home(&t, def->security_id);
        for (; r->secid[secid_slot].id1; secid_slot = (secid_slot + 1) & r->slot_mask) {
            if (r->secid[secid_slot].key == def->security_id) {
                id = r->secid[secid_slot].id1 - 1;
                break;
            }
        }
    } else if (def->venue == TP_VENUE_NASDAQ_ITCH) {
        if (def->channel >= r->itch_venues)
            return -EINVAL;
        sym_slot = symbol_slot(r, def->venue, def->symbol, n, def->channel, &found);
        if (found)
            id = r->symbol_ids[sym_slot] - 1;
    } else if (def->venue == TP_VENUE_EUREX_EOBI) {
        /* A SecurityID names one instrument across every EOBI channel. */
        sym_slot = symbol_slot(r, def->venue, def->symbol, n, -1, &found);
        if (found)
            id = r->symbol_ids[sym_slot] - 1;
    } else {
        return -EINVAL;
    }

    if (id == TP_INSTRUMENT_NONE) {
        if (r->count == r->window)
            return -ENOSPC;
        id = r->first_id + r->count++;
        instrument_store(item(r, id), def, id);
        symbol_insert(r, id);
        if (def->venue == TP_VENUE_CME_MDP3) {
            r->secid[secid_slot] = (struct tp_secid_slot){.key = def->security_id, .id1 = id + 1};
        }
    } else {
        struct tp_instrument *in = item(r, id);
        if (symbol_len(in->symbol, TP_SYMBOL_MAX) != n || memcmp(in->symbol, def->symbol, n)) {
            /* Renamed: move its symbol table entry. */
            uint32_t old = symbol_slot(r, in->venue, in->symbol,
                                       symbol_len(in->symbol, TP_SYMBOL_MAX), -1, &found);
            if (found)
                symbol_remove(r, old);
            instrument_store(in, def, id);
            symbol_insert(r, id);
        } else {
            uint8_t status = in->trading_status;
            instrument_store(in, def, id);
            /* A definition that carries no status keeps the one the status messages gave. */
            if (def->trading_status == TP_STATUS_UNKNOWN)
                in->trading_status = status;
        }
    }
    if (def->venue == TP_VENUE_NASDAQ_ITCH)
        r->locates[(size_t)def->channel * TP_ITCH_LOCATES + def->itch_locate] = id + 1;
    return id;
}

int tp_instruments_reset_locates(struct tp_instruments *r, uint16_t slot)
{
    if (slot >= r->itch_venues)
        return -EINVAL;
    memset(&r->locates[(size_t)slot * TP_ITCH_LOCATES], 0, TP_ITCH_LOCATES * sizeof(uint32_t));
    return 0;
}
