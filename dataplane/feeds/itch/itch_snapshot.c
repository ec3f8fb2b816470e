/* ITCH late join and recovery through a snapshot: see itch_snapshot.h. */
#include "itch_snapshot.h"

#include <string.h>

size_t tp_itch_snapshot_memsize(uint32_t cap)
{
    return (size_t)cap * TP_SNAP_SLOT_BYTES;
}

void tp_itch_snapshot_init(struct tp_itch_snapshot *s, void *mem, uint32_t cap)
{
    memset(s, 0, sizeof(*s));
    s->cap = cap;
    s->ring = cap > 0 ? mem : NULL;
    s->state = cap > 0 ? TP_SNAP_LIVE : TP_SNAP_OFF;
}

bool tp_itch_snapshot_want(struct tp_itch_snapshot *s)
{
    if (s->state != TP_SNAP_LIVE)
        return false;
    s->state = TP_SNAP_WANTED;
    s->counters.requests++;
    atomic_fetch_add_explicit(&s->wanted, 1, memory_order_relaxed);
    return true;
}

void tp_itch_snapshot_keep(struct tp_itch_snapshot *s, uint64_t seq, const uint8_t *msg,
                           uint16_t len)
{
    if (len > TP_SNAP_MSG_MAX) {
        s->counters.kept_oversize++;
        return;
    }
    if (s->count == s->cap) {
        s->head = s->head + 1 == s->cap ? 0 : s->head + 1;
        s->count--;
        s->counters.kept_dropped++;
    }
    uint32_t at = s->head + s->count;
    if (at >= s->cap)
        at -= s->cap;
    struct tp_snap_slot *slot = &s->ring[at];
    slot->seq = seq;
    slot->len = len;
    memcpy(slot->msg, msg, len);
    s->count++;
    s->counters.kept++;
    if (s->count > s->counters.kept_max)
        s->counters.kept_max = s->count;
}

const struct tp_snap_slot *tp_itch_snapshot_pop(struct tp_itch_snapshot *s)
{
    if (s->count == 0)
        return NULL;
    const struct tp_snap_slot *slot = &s->ring[s->head];
    s->head = s->head + 1 == s->cap ? 0 : s->head + 1;
    s->count--;
    return slot;
}

void tp_itch_snapshot_clear(struct tp_itch_snapshot *s)
{
    s->head = 0;
    s->count = 0;
}

const char *tp_itch_snapshot_state_name(enum tp_snap_state state)
{
    switch (state) {
    case TP_SNAP_OFF:
        return "off";
    case TP_SNAP_LIVE:
        return "live";
    case TP_SNAP_WANTED:
        return "wanted";
    case TP_SNAP_LOADING:
        return "loading";
    case TP_SNAP_REPLAYING:
        return "replaying";
    }
    return "unknown";
}
