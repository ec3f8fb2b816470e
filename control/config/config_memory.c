/*
 * The memory the config needs: the per-lcore table, per-channel and preload estimates
 * (tp_config_*_estimate) and the check that they fit eal.memory_mb.
 */
#include <string.h>

#include "config_loader.h"
#include "preload_plan.h"

void check_memory(struct loader *ld)
{
    const struct tp_config *cfg = ld->cfg;
    if (cfg->eal.memory_mb == 0 || !ld->ports_ok || ld->instruments_bad)
        return;
    uint64_t need = tp_config_memory_estimate(cfg);
    uint64_t have = (uint64_t)cfg->eal.memory_mb << 20;
    /* A preloaded capture is usually what does not fit: say how much of the need is its own. */
    for (unsigned p = 0; need > have && p < cfg->n_ports; p++) {
        uint64_t mbufs = tp_config_preload_estimate(&cfg->ports[p]);
        char path[TP_JW_PATH_MAX];
        snprintf(path, sizeof(path), "ports[%u].preload", p);
        if (mbufs > 0)
            tp_jw_error(ld->errs, path,
                        "the capture needs %llu MiB of mbufs (%u frames of up to %u bytes), "
                        "eal.memory_mb gives %u",
                        (unsigned long long)((mbufs + (1u << 20) - 1) >> 20),
                        cfg->ports[p].preload_frames, cfg->ports[p].preload_max_frame,
                        cfg->eal.memory_mb);
    }
    if (need > have)
        tp_jw_error(
            ld->errs, cfg->eal.explicit_args ? "eal.args" : "eal.memory_mb",
            "%u MB is too small: mbuf pools, books, instruments and channels need about %llu MB",
            cfg->eal.memory_mb, (unsigned long long)((need + (1u << 20) - 1) >> 20));
}

/*
 * Sizes behind the estimate (documented in docs/CONFIG.md), as dataplane/books and
 * dataplane/instruments lay their tables out (tests/control/test_memory_estimate.c holds the
 * estimate to their memsize functions): per instrument id of the lcore's window a 640-byte book
 * record, 16 bytes of hot order-book state, a 72-byte registry record, 16 bytes per level of the
 * order-level book (max(256, levels_per_side) + 4 sentinels a side) and 24 per level of the
 * price-level books (min(levels_per_side, 255) + 2 implied a side); the registry's lookups have
 * a power of two of 12-byte slots, at least two per id of the window (so 24-48 bytes an id); the
 * order table has a power of two of 32-byte slots, at least two per order, and a window of recent
 * orders of 16 slots per order, at most 2^20, of 33 bytes;
 * the registry's ITCH locate maps 256 KiB per ITCH channel and 4 spares (for ITCH channels a
 * reload adds), and a few KiB of table headers and alignment. An mbuf with 2 KiB data room, 128 B
 * headroom, its header and mempool overhead is about 2.4 KiB; EAL itself about 48 MiB.
 */
/* Slots of an open-addressing table for n keys: a power of two, at least 16 and 2 * n. */
static uint64_t table_slots(uint64_t n)
{
    uint64_t slots = 16;
    while (slots < 2 * n)
        slots *= 2;
    return slots;
}

uint64_t tp_config_lcore_tables_estimate(const struct tp_config *cfg, unsigned l)
{
    const uint64_t order_level_bytes = 16, price_level_bytes = 24, instrument_bytes = 640 + 16 + 72,
                   lookup_slot_bytes = 12, order_slot_bytes = 32, recent_slot_bytes = 33,
                   recent_per_order = 16, recent_slots_max = 1u << 20,
                   locate_map_bytes = 256u << 10, headers_bytes = 4096;
    uint64_t lps = cfg->books.levels_per_side;
    uint64_t order_levels = (lps < TP_CFG_ORDER_LEVELS_MIN ? TP_CFG_ORDER_LEVELS_MIN : lps) + 4;
    uint64_t price_levels = (lps < 255 ? lps : 255) + 2;
    uint64_t per_instrument = instrument_bytes + order_levels * 2 * order_level_bytes +
                              price_levels * 2 * price_level_bytes;
    uint64_t slots = cfg->books.max_orders > 0 ? table_slots(cfg->books.max_orders) : 0;
    /* The window asked for, or tp_books' default (TP_RECENT_ORDERS_PER_ORDER, at most
     * TP_RECENT_ORDERS_DEFAULT_MAX); none without an order table. */
    uint64_t recent = cfg->books.recent_orders ? cfg->books.recent_orders
                                               : recent_per_order * cfg->books.max_orders;
    if (cfg->books.recent_orders == 0 && recent > recent_slots_max)
        recent = recent_slots_max;
    if (cfg->books.max_orders == 0)
        recent = 0;
    uint64_t instruments = tp_config_lcore_window(cfg, l).ids;
    uint64_t locate_maps = 4;
    for (unsigned c = 0; c < cfg->n_channels; c++)
        locate_maps += cfg->channels[c].protocol == TP_CFG_PROTO_ITCH;
    return headers_bytes + locate_maps * locate_map_bytes + instruments * per_instrument +
           table_slots(instruments) * lookup_slot_bytes + slots * order_slot_bytes +
           recent * recent_slot_bytes;
}

/*
 * Sizes behind the channel estimate, as dataplane/daemon/channel.c lays a channel out with the
 * parameters channels.c gives it (tests/control/test_memory_estimate.c holds the estimate to
 * tp_channel_memsize): the channel record (about 11 KiB), its arbiter's held packets (at most 4096
 * of 32 bytes); an ITCH channel's stage of 65,534 message pointers and lengths; an MDP3 channel's
 * 12-byte RptSeq and order-book state per instrument id of the capacity and its 4 MiB buffer of
 * incrementals kept for replay after a snapshot; an ITCH channel with a snapshot service
 * (recovery.snapshot) its buffer_messages of 64 bytes, the stream kept while a snapshot loads; an
 * EOBI channel's feed (struct tp_eobi_feed, about 4.2 MiB: its segment and SecurityID tables,
 * the 2 MiB buffer of incrementals kept while a segment waits for its snapshot and the 256 KiB
 * of snapshot packets held for the other snapshot line).
 */
uint64_t tp_config_channel_estimate(const struct tp_config *cfg, unsigned c)
{
    const uint64_t channel_bytes = 16384, held_bytes = 4096 * 32,
                   itch_stage_bytes = 524288 + 131072, mdp3_state_bytes = 12,
                   mdp3_replay_bytes = 4u << 20, eobi_feed_bytes = 9u << 19;
    uint64_t total = channel_bytes + held_bytes;
    if (cfg->channels[c].protocol == TP_CFG_PROTO_ITCH) {
        total += itch_stage_bytes;
        if (cfg->channels[c].glimpse.present)
            total += 64ull * cfg->channels[c].glimpse.buffer_messages;
    } else if (cfg->channels[c].protocol == TP_CFG_PROTO_EOBI)
        total += eobi_feed_bytes;
    else
        total += mdp3_state_bytes * cfg->instruments.capacity + mdp3_replay_bytes;
    return total;
}

uint64_t tp_config_preload_estimate(const struct tp_cfg_port *port)
{
    return port->preload ? port->preload_bytes : 0;
}

uint64_t tp_config_memory_estimate(const struct tp_config *cfg)
{
    const uint64_t mbuf_bytes = 2432, eal_bytes = 48ull << 20;
    uint64_t total = eal_bytes;
    for (unsigned p = 0; p < cfg->n_ports; p++)
        total += (uint64_t)cfg->ports[p].mbuf_pool_size * mbuf_bytes +
                 tp_config_preload_estimate(&cfg->ports[p]);
    for (unsigned c = 0; c < cfg->n_channels; c++)
        total += tp_config_channel_estimate(cfg, c);
    /* Every data lcore has its own books for its window of ids, and its own order table. */
    unsigned lcores = cfg->n_lcores > 1 ? cfg->n_lcores : 1;
    for (unsigned l = 0; l < lcores; l++)
        total += tp_config_lcore_tables_estimate(cfg, l);
    return total;
}
