/*
 * fuzz_mdp3.c - libFuzzer target: an MDP 3.0 packet -> framing -> every message decoded (every
 * group entry visited by the JSON printer) -> JSON. Also walks the incremental book message's
 * groups through the accessors the feed handler uses. Sanitizers catch any out-of-bounds read.
 */
#include <stddef.h>
#include <stdint.h>

#include "mdp3_packet.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void walk_book(const struct tp_mdp3_msg *m)
{
    struct mktdata_md_incremental_refresh_book46 b;
    struct mktdata_md_incremental_refresh_book46_no_md_entries g;
    struct mktdata_md_incremental_refresh_book46_no_order_id_entries o;
    volatile uint64_t sink = 0; /* keeps the loads; xor cannot overflow */
    if (mktdata_md_incremental_refresh_book46_wrap_for_decode(&b, m->body, m->body_len,
                                                              m->block_length, m->version) < 0)
        return;
    if (mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_decode(&b, &g) < 0)
        return;
    while (g.index < g.count) {
        if (mktdata_md_incremental_refresh_book46_no_md_entries_next(&g) < 0)
            return;
        sink ^=
            (uint64_t)mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_px_mantissa(&g);
        sink ^= mktdata_md_incremental_refresh_book46_no_md_entries_rpt_seq(&g);
    }
    if (mktdata_md_incremental_refresh_book46_no_order_id_entries_wrap_for_decode(&b, &o) < 0)
        return;
    while (o.index < o.count) {
        if (mktdata_md_incremental_refresh_book46_no_order_id_entries_next(&o) < 0)
            return;
        sink ^= mktdata_md_incremental_refresh_book46_no_order_id_entries_order_id(&o);
    }
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char json[1 << 16];
    struct tp_mdp3_packet p;
    struct tp_mdp3_msg m;
    if (tp_mdp3_packet_init(&p, data, size) < 0)
        return 0;
    while (tp_mdp3_packet_next(&p, &m) == 1) {
        int n = tp_mdp3_msg_print_json(&m, json, sizeof(json));
        /* the printer must agree with itself whatever the buffer size */
        if (n >= 0 && tp_mdp3_msg_print_json(&m, json, 16) != n)
            __builtin_trap();
        if (m.template_id == MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_TEMPLATE_ID)
            walk_book(&m);
    }
    return 0;
}
