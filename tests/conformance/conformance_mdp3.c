/*
 * conformance_mdp3.c - CME MDP 3.0: the map from the independent decoder's names to the
 * generated codec's fields (schema names in the comments), and the frame check.
 *
 * Their values are raw wire values (enums as their encoding, optional fields' null values as
 * the number on the wire) except prices, which they print as decimals (mantissa * 10^-9).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "conformance.h"
#include "mdp3_packet.h"

/* Their MatchEventIndicator names, bit 0 first. */
static const char *const match_event_names[8] = {
    "Last Trade Msg",   "Last Volume Msg", "Last Quote Msg", "Last Stats Msg",
    "Last Implied Msg", "Recovery Msg",    "Reserved",       "End Of Event",
};
static const char *const match_event_keys[8] = {
    "lasttrademsg",   "lastvolumemsg", "lastquotemsg", "laststatsmsg",
    "lastimpliedmsg", "recoverymsg",   "reserved",     "endofevent",
};

static void match_event_actuals(struct actuals *a, const char *tree, uint8_t bits)
{
    char path[256], names[256] = "";
    for (int b = 0; b < 8; b++) {
        if (bits & (1u << b)) {
            strcat(names, *names ? "|" : "");
            strcat(names, match_event_names[b]);
        }
        snprintf(path, sizeof(path), "%s/matcheventindicator_tree/%s", tree, match_event_keys[b]);
        actual_text(a, true, path, "%u", (bits >> b) & 1u);
    }
    snprintf(path, sizeof(path), "%s/matcheventindicator", tree);
    actual_text(a, true, path, "%s", names);
}

/* A PRICE9/PRICENULL9 value: their decimal when present (null: the raw mantissa). */
static void price_actual(struct actuals *a, const char *path, int64_t mantissa)
{
    if (mantissa == INT64_MAX)
        actual_text(a, false, path, "%" PRId64, mantissa);
    else
        actual_price(a, path, mantissa); /* exponent -9: the mantissa is price9 */
}

#define PATH(buf, ...) (snprintf(buf, sizeof(buf), __VA_ARGS__), buf)

/* MDIncrementalRefreshBook46 (their tree mdincrementalrefreshbook_tree). */
static void book46_actuals(struct actuals *a, const struct tp_mdp3_msg *msg)
{
    static const char tree[] = "message_tree/mdincrementalrefreshbook_tree";
    char p[256];
    struct mktdata_md_incremental_refresh_book46 m = {0};
    assert_int_equal(mktdata_md_incremental_refresh_book46_wrap_for_decode(
                         &m, msg->body, msg->body_len, msg->block_length, msg->version),
                     0);
    actual_text(a, true, PATH(p, "%s/transacttime", tree), "%" PRIu64, /* TransactTime */
                mktdata_md_incremental_refresh_book46_transact_time(&m));
    match_event_actuals(a, tree, mktdata_md_incremental_refresh_book46_match_event_indicator(&m));

    /* NoMDEntries: groupSize + the last entry */
    static const char groups[] = "incrementalrefreshbookgroups_tree";
    static const char entry[] = "incrementalrefreshbookgroup_tree";
    struct mktdata_md_incremental_refresh_book46_no_md_entries g = {0};
    assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_wrap_for_decode(&m, &g),
                     0);
    actual_text(a, true, PATH(p, "%s/%s/groupsize_tree/blocklength", tree, groups), "%u",
                g.block_length);
    actual_text(a, true, PATH(p, "%s/%s/groupsize_tree/numingroup", tree, groups), "%u", g.count);
    while (g.index < g.count) {
        assert_int_equal(mktdata_md_incremental_refresh_book46_no_md_entries_next(&g), 0);
        if (g.index != g.count)
            continue;
#define E(field) PATH(p, "%s/%s/%s/" field, tree, groups, entry)
        actual_text(a, true, E("incrementalrefreshbookgroupindex"), "%u", g.index);
        price_actual(a, E("mdentrypxoptionalex"), /* MDEntryPx */
                     mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_px_mantissa(&g));
        actual_text(a, true, E("mdentrysizeshortoptional"), "%" PRId32, /* MDEntrySize */
                    mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_size(&g));
        actual_text(a, true, E("securityid"), "%" PRId32, /* SecurityID */
                    mktdata_md_incremental_refresh_book46_no_md_entries_security_id(&g));
        actual_text(a, true, E("rptseq"), "%" PRIu32, /* RptSeq */
                    mktdata_md_incremental_refresh_book46_no_md_entries_rpt_seq(&g));
        actual_text(a, true, E("numberofordersoptional"), "%" PRId32, /* NumberOfOrders */
                    mktdata_md_incremental_refresh_book46_no_md_entries_number_of_orders(&g));
        actual_text(a, true, E("mdpricelevel"), "%u", /* MDPriceLevel */
                    mktdata_md_incremental_refresh_book46_no_md_entries_md_price_level(&g));
        actual_text(a, true, E("mdupdateaction"), "%u", /* MDUpdateAction */
                    mktdata_md_incremental_refresh_book46_no_md_entries_md_update_action(&g));
        actual_text(a, true, E("mdentrytypebook"), "%c", /* MDEntryType */
                    mktdata_md_incremental_refresh_book46_no_md_entries_md_entry_type(&g));
#undef E
    }

    /* NoOrderIDEntries: groupSize8Byte + the last entry */
    static const char ogroups[] = "incrementalrefreshbookorderidgroups_tree";
    static const char oentry[] = "incrementalrefreshbookorderidgroup_tree";
    struct mktdata_md_incremental_refresh_book46_no_order_id_entries o = {0};
    assert_int_equal(
        mktdata_md_incremental_refresh_book46_no_order_id_entries_wrap_for_decode(&m, &o), 0);
    actual_text(a, true, PATH(p, "%s/%s/groupsize8byte_tree/blocklength", tree, ogroups), "%u",
                o.block_length);
    actual_text(a, true, PATH(p, "%s/%s/groupsize8byte_tree/numingroup", tree, ogroups), "%u",
                o.count);
    while (o.index < o.count) {
        assert_int_equal(mktdata_md_incremental_refresh_book46_no_order_id_entries_next(&o), 0);
        if (o.index != o.count)
            continue;
#define E(field) PATH(p, "%s/%s/%s/" field, tree, ogroups, oentry)
        actual_text(a, true, E("incrementalrefreshbookorderidgroupindex"), "%u", o.index);
        actual_text(a, true, E("orderid"), "%" PRIu64, /* OrderID */
                    mktdata_md_incremental_refresh_book46_no_order_id_entries_order_id(&o));
        actual_text(
            a, true, E("mdorderpriority"), "%" PRIu64, /* MDOrderPriority */
            mktdata_md_incremental_refresh_book46_no_order_id_entries_md_order_priority(&o));
        actual_text(a, true, E("mddisplayqty"), "%" PRId32, /* MDDisplayQty */
                    mktdata_md_incremental_refresh_book46_no_order_id_entries_md_display_qty(&o));
        actual_text(a, true, E("referenceid"), "%u", /* ReferenceID */
                    mktdata_md_incremental_refresh_book46_no_order_id_entries_reference_id(&o));
        actual_text(
            a, true, E("orderupdateaction"), "%u", /* OrderUpdateAction */
            mktdata_md_incremental_refresh_book46_no_order_id_entries_order_update_action(&o));
#undef E
    }
}

/* MDIncrementalRefreshOrderBook47 (their tree mdincrementalrefreshorderbook_tree). */
static void order_book47_actuals(struct actuals *a, const struct tp_mdp3_msg *msg)
{
    static const char tree[] = "message_tree/mdincrementalrefreshorderbook_tree";
    char p[256];
    struct mktdata_md_incremental_refresh_order_book47 m = {0};
    assert_int_equal(mktdata_md_incremental_refresh_order_book47_wrap_for_decode(
                         &m, msg->body, msg->body_len, msg->block_length, msg->version),
                     0);
    actual_text(a, true, PATH(p, "%s/transacttime", tree), "%" PRIu64, /* TransactTime */
                mktdata_md_incremental_refresh_order_book47_transact_time(&m));
    match_event_actuals(a, tree,
                        mktdata_md_incremental_refresh_order_book47_match_event_indicator(&m));

    static const char groups[] = "incrementalrefreshorderbookgroups_tree";
    static const char entry[] = "incrementalrefreshorderbookgroup_tree";
    struct mktdata_md_incremental_refresh_order_book47_no_md_entries g = {0};
    assert_int_equal(
        mktdata_md_incremental_refresh_order_book47_no_md_entries_wrap_for_decode(&m, &g), 0);
    actual_text(a, true, PATH(p, "%s/%s/groupsize_tree/blocklength", tree, groups), "%u",
                g.block_length);
    actual_text(a, true, PATH(p, "%s/%s/groupsize_tree/numingroup", tree, groups), "%u", g.count);
    while (g.index < g.count) {
        assert_int_equal(mktdata_md_incremental_refresh_order_book47_no_md_entries_next(&g), 0);
        if (g.index != g.count)
            continue;
#define E(field) PATH(p, "%s/%s/%s/" field, tree, groups, entry)
        actual_text(a, true, E("incrementalrefreshorderbookgroupindex"), "%u", g.index);
        actual_text(a, true, E("orderidoptional"), "%" PRIu64, /* OrderID */
                    mktdata_md_incremental_refresh_order_book47_no_md_entries_order_id(&g));
        actual_text(
            a, true, E("mdorderpriority"), "%" PRIu64, /* MDOrderPriority */
            mktdata_md_incremental_refresh_order_book47_no_md_entries_md_order_priority(&g));
        price_actual(
            a, E("mdentrypxoptionalex"), /* MDEntryPx */
            mktdata_md_incremental_refresh_order_book47_no_md_entries_md_entry_px_mantissa(&g));
        actual_text(a, true, E("mddisplayqtyoptional"), "%" PRId32, /* MDDisplayQty */
                    mktdata_md_incremental_refresh_order_book47_no_md_entries_md_display_qty(&g));
        actual_text(a, true, E("securityid"), "%" PRId32, /* SecurityID */
                    mktdata_md_incremental_refresh_order_book47_no_md_entries_security_id(&g));
        actual_text(a, true, E("mdupdateaction"), "%u", /* MDUpdateAction */
                    mktdata_md_incremental_refresh_order_book47_no_md_entries_md_update_action(&g));
        actual_text(a, true, E("mdentrytypebook"), "%c", /* MDEntryType */
                    mktdata_md_incremental_refresh_order_book47_no_md_entries_md_entry_type(&g));
#undef E
    }
}

void check_mdp3_frame(json_t *entry, const uint8_t *payload, size_t len)
{
    json_t *decoded = expect_member(entry, "decoded");
    struct tp_mdp3_packet p = {0};
    assert_int_equal(tp_mdp3_packet_init(&p, payload, len), 0);
    struct actuals a = {0};
    actual_text(&a, true, "binarypacketheader_tree/packetsequencenumber", "%" PRIu32, p.seq);
    actual_text(&a, true, "binarypacketheader_tree/sendingtime", "%" PRIu64, p.sending_time);

    /* Every message must decode (through the generated printer); the last one is compared. */
    struct tp_mdp3_msg m, last = {0};
    int rc, count = 0;
    char json[16384];
    while ((rc = tp_mdp3_packet_next(&p, &m)) == 1) {
        int n = tp_mdp3_msg_print_json(&m, json, sizeof(json));
        if (n < 0 || (size_t)n >= sizeof(json))
            fail_msg("MDP3 message %d (template %u) does not decode: %d", count + 1, m.template_id,
                     n);
        last = m;
        count++;
    }
    assert_int_equal(rc, 0);
    assert_true(count > 0);
    actual_text(&a, true, "message_tree/messagesize", "%u", last.size);
    actual_text(&a, true, "message_tree/messageheader_tree/blocklength", "%u", last.block_length);
    actual_text(&a, true, "message_tree/messageheader_tree/templateid", "%u", last.template_id);
    actual_text(&a, true, "message_tree/messageheader_tree/schemaid", "%u", last.schema_id);
    actual_text(&a, true, "message_tree/messageheader_tree/version", "%u", last.version);
    switch (last.template_id) {
    case MKTDATA_MD_INCREMENTAL_REFRESH_BOOK46_TEMPLATE_ID:
        book46_actuals(&a, &last);
        break;
    case MKTDATA_MD_INCREMENTAL_REFRESH_ORDER_BOOK47_TEMPLATE_ID:
        order_book47_actuals(&a, &last);
        break;
    default:
        fail_msg("template %u has no name map in this test yet", last.template_id);
    }
    conformance_compare("mdp3", decoded, &a);
}
