/*
 * conformance_itch.c - MoldUDP64 + ITCH 5.0: the map from the independent decoder's names to
 * ours, and the frame check.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "conformance.h"
#include "itch50_json.h"
#include "moldudp64.h"

/*
 * Their message tree -> our type, and their field -> our field (itch50.h specification names).
 * A NULL tree applies to every message (the common header).
 */
static const struct {
    const char *tree;
    char type;
    const char *theirs;
    const char *ours;
} itch_map[] = {
    {NULL, 0, "stocklocate", "stock_locate"},
    {NULL, 0, "trackingnumber", "tracking_number"},
    {NULL, 0, "timestamp", "timestamp"},
    {"systemeventmessage_tree", 'S', "eventcode", "event_code"},
    {"stocktradingactionmessage_tree", 'H', "stock", "stock"},
    {"stocktradingactionmessage_tree", 'H', "tradingstate", "trading_state"},
    {"stocktradingactionmessage_tree", 'H', "reserved", "reserved"},
    {"stocktradingactionmessage_tree", 'H', "reason", "reason"},
    {"regshoshortsalepricetestrestrictedindicatormessage_tree", 'Y', "locatecode", "stock_locate"},
    {"regshoshortsalepricetestrestrictedindicatormessage_tree", 'Y', "stock", "stock"},
    {"regshoshortsalepricetestrestrictedindicatormessage_tree", 'Y', "regshoaction",
     "reg_sho_action"},
    {"marketparticipantpositionmessage_tree", 'L', "mpid", "mpid"},
    {"marketparticipantpositionmessage_tree", 'L', "stock", "stock"},
    {"marketparticipantpositionmessage_tree", 'L', "primarymarketmaker", "primary_market_maker"},
    {"marketparticipantpositionmessage_tree", 'L', "marketmakermode", "market_maker_mode"},
    {"marketparticipantpositionmessage_tree", 'L', "marketparticipantstate",
     "market_participant_state"},
    {"luldauctioncollarmessage_tree", 'J', "stock", "stock"},
    {"luldauctioncollarmessage_tree", 'J', "auctioncollarreferenceprice",
     "auction_collar_reference_price"},
    {"luldauctioncollarmessage_tree", 'J', "upperauctioncollarprice", "upper_auction_collar_price"},
    {"luldauctioncollarmessage_tree", 'J', "lowerauctioncollarprice", "lower_auction_collar_price"},
    {"luldauctioncollarmessage_tree", 'J', "auctioncollarextension", "auction_collar_extension"},
    {"addordernompidattributionmessage_tree", 'A', "orderreferencenumber",
     "order_reference_number"},
    {"addordernompidattributionmessage_tree", 'A', "buysellindicator", "buy_sell_indicator"},
    {"addordernompidattributionmessage_tree", 'A', "shares", "shares"},
    {"addordernompidattributionmessage_tree", 'A', "stock", "stock"},
    {"addordernompidattributionmessage_tree", 'A', "price", "price"},
    {"addorderwithmpidattributionmessage_tree", 'F', "orderreferencenumber",
     "order_reference_number"},
    {"addorderwithmpidattributionmessage_tree", 'F', "buysellindicator", "buy_sell_indicator"},
    {"addorderwithmpidattributionmessage_tree", 'F', "shares", "shares"},
    {"addorderwithmpidattributionmessage_tree", 'F', "stock", "stock"},
    {"addorderwithmpidattributionmessage_tree", 'F', "price", "price"},
    {"addorderwithmpidattributionmessage_tree", 'F', "attribution", "attribution"},
    {"orderexecutedmessage_tree", 'E', "orderreferencenumber", "order_reference_number"},
    {"orderexecutedmessage_tree", 'E', "executedshares", "executed_shares"},
    {"orderexecutedmessage_tree", 'E', "matchnumber", "match_number"},
    {"orderexecutedwithpricemessage_tree", 'C', "orderreferencenumber", "order_reference_number"},
    {"orderexecutedwithpricemessage_tree", 'C', "executedshares", "executed_shares"},
    {"orderexecutedwithpricemessage_tree", 'C', "matchnumber", "match_number"},
    {"orderexecutedwithpricemessage_tree", 'C', "printable", "printable"},
    {"orderexecutedwithpricemessage_tree", 'C', "executionprice", "execution_price"},
    {"ordercancelmessage_tree", 'X', "orderreferencenumber", "order_reference_number"},
    {"ordercancelmessage_tree", 'X', "canceledshares", "cancelled_shares"},
    {"orderdeletemessage_tree", 'D', "orderreferencenumber", "order_reference_number"},
    {"orderreplacemessage_tree", 'U', "originalorderreferencenumber",
     "original_order_reference_number"},
    {"orderreplacemessage_tree", 'U', "neworderreferencenumber", "new_order_reference_number"},
    {"orderreplacemessage_tree", 'U', "shares", "shares"},
    {"orderreplacemessage_tree", 'U', "price", "price"},
    {"noncrosstrademessage_tree", 'P', "orderreferencenumber", "order_reference_number"},
    {"noncrosstrademessage_tree", 'P', "buysellindicator", "buy_sell_indicator"},
    {"noncrosstrademessage_tree", 'P', "shares", "shares"},
    {"noncrosstrademessage_tree", 'P', "stock", "stock"},
    {"noncrosstrademessage_tree", 'P', "price", "price"},
    {"noncrosstrademessage_tree", 'P', "matchnumber", "match_number"},
    {"crosstrademessage_tree", 'Q', "crossshares", "shares"},
    {"crosstrademessage_tree", 'Q', "stock", "stock"},
    {"crosstrademessage_tree", 'Q', "crossprice", "cross_price"},
    {"crosstrademessage_tree", 'Q', "matchnumber", "match_number"},
    {"crosstrademessage_tree", 'Q', "crosstype", "cross_type"},
    {"netorderimbalanceindicatormessage_tree", 'I', "pairedshares", "paired_shares"},
    {"netorderimbalanceindicatormessage_tree", 'I', "imbalanceshares", "imbalance_shares"},
    {"netorderimbalanceindicatormessage_tree", 'I', "imbalancedirection", "imbalance_direction"},
    {"netorderimbalanceindicatormessage_tree", 'I', "stock", "stock"},
    {"netorderimbalanceindicatormessage_tree", 'I', "farprice", "far_price"},
    {"netorderimbalanceindicatormessage_tree", 'I', "nearprice", "near_price"},
    {"netorderimbalanceindicatormessage_tree", 'I', "currentreferenceprice",
     "current_reference_price"},
    {"netorderimbalanceindicatormessage_tree", 'I', "crosstype", "cross_type"},
    {"netorderimbalanceindicatormessage_tree", 'I', "pricevariationindicator",
     "price_variation_indicator"},
};

#define ITCH_MAP_SIZE (sizeof(itch_map) / sizeof(itch_map[0]))

/* Their tree name for one of our types (the map's rows say which), or NULL. */
static const char *tree_of_type(char type)
{
    for (size_t i = 0; i < ITCH_MAP_SIZE; i++)
        if (itch_map[i].type == type)
            return itch_map[i].tree;
    return NULL;
}

/* Their name for our field in tree (the tree's own row first, then the common rows). */
static const char *their_name(const char *tree, const char *ours)
{
    for (size_t i = 0; i < ITCH_MAP_SIZE; i++)
        if (itch_map[i].tree != NULL && strcmp(itch_map[i].tree, tree) == 0 &&
            strcmp(itch_map[i].ours, ours) == 0)
            return itch_map[i].theirs;
    for (size_t i = 0; i < ITCH_MAP_SIZE; i++)
        if (itch_map[i].tree == NULL && strcmp(itch_map[i].ours, ours) == 0)
            return itch_map[i].theirs;
    return NULL;
}

/* Our decoded message, through the JSON printer, as actual values under their names. */
static void message_actuals(struct actuals *a, const uint8_t *msg, uint16_t len)
{
    const struct tp_itch_message_info *info = tp_itch_message_info(msg[0]);
    const char *tree = tree_of_type(info->type);
    if (tree == NULL)
        fail_msg("ITCH type '%c' (%s) has no row in the name map", info->type, info->name);
    char out[2048];
    int n = tp_itch_print_json(out, sizeof(out), msg, len);
    assert_true(n > 0 && (size_t)n < sizeof(out));
    json_error_t jerr;
    json_t *ours = json_loads(out, 0, &jerr);
    assert_non_null(ours);
    for (unsigned i = 0; i < info->nfields; i++) {
        const struct tp_itch_field_info *f = &info->fields[i];
        const char *theirs = their_name(tree, f->name);
        if (theirs == NULL)
            fail_msg("our field %s.%s has no name in the map", info->name, f->name);
        char path[256], p9_name[64];
        snprintf(path, sizeof(path), "message_tree/%s/%s", tree, theirs);
        json_t *v = expect_member(ours, f->name);
        if (f->kind == TP_ITCH_KIND_PRICE4 || f->kind == TP_ITCH_KIND_PRICE8) {
            snprintf(p9_name, sizeof(p9_name), "%s_p9", f->name);
            actual_price(a, path, json_integer_value(expect_member(ours, p9_name)));
        } else if (json_is_string(v)) {
            /* they leave out an all-blank alpha field (e.g. no halt reason) */
            const char *text = json_string_value(v);
            actual_text(a, text[0] != '\0', path, "%s", text);
        } else {
            actual_text(a, true, path, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
        }
    }
    json_decref(ours);
}

void check_itch_frame(json_t *entry, const uint8_t *payload, size_t len)
{
    json_t *decoded = expect_member(entry, "decoded");
    json_t *message = expect_member(decoded, "message_tree");
    long shown = strtol(json_string_value(expect_member(message, "messageindex")), NULL, 10);

    struct tp_mold_packet p = {0};
    assert_int_equal(tp_mold_parse(&p, payload, len), TP_MOLD_MESSAGES);
    struct actuals a = {0};
    size_t session_len = TP_MOLD_SESSION_LEN;
    while (session_len > 0 &&
           (p.session[session_len - 1] == 0 || p.session[session_len - 1] == ' '))
        session_len--;
    /* An all-blank session is absent from their tree; a present one must be there. */
    actual_text(&a, session_len > 0, "packetheader_tree/session", "%.*s", (int)session_len,
                (const char *)p.session);
    actual_text(&a, true, "packetheader_tree/sequencenumber", "%" PRIu64, p.sequence);
    actual_text(&a, true, "packetheader_tree/messagecount", "%u", p.count);

    const uint8_t *msg;
    uint16_t mlen;
    int rc;
    while ((rc = tp_mold_next(&p, &msg, &mlen)) == 1) {
        int type = tp_itch_check(msg, mlen);
        if (type < 0)
            fail_msg("message %u of %u does not decode (%d)", p.index, p.count, type);
        if (p.index == shown) {
            actual_text(&a, true, "message_tree/messageindex", "%u", p.index);
            actual_text(&a, true, "message_tree/messageheader_tree/messagelength", "%u", mlen);
            actual_text(&a, true, "message_tree/messageheader_tree/messagetype", "%c", type);
            message_actuals(&a, msg, mlen);
        }
    }
    assert_int_equal(rc, 0);
    assert_int_equal(shown, p.count); /* the last message is the one they show */
    conformance_compare("itch", decoded, &a);
}
