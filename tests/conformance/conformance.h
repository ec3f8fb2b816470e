/*
 * conformance.h - comparing our decoding of a real capture with an independent decoder's.
 *
 * The .expected.json next to each capture holds, per frame, the flow (ip_dst, udp_dstport, vlan)
 * and the decoded packet as a tree of objects whose leaves are strings, with Wireshark-like
 * field names. When a packet holds several messages the independent decoder's tree keeps only
 * the LAST one (its "message_tree" keys collide and the last wins; ITCH's messageindex confirms
 * it), so the last message is compared field by field and every other message must decode.
 *
 * Our side produces "actual" values named by the expected tree's paths; the per-protocol tables
 * (conformance_itch.c, conformance_mdp3.c, conformance_eobi.c) are the explicit map from their
 * names to our fields. conformance_compare() then requires every expected leaf to have an equal
 * actual value (leaves named padding* are skipped: padding has no value), and every required actual
 * to be expected. A subtree's label (an empty string, or an array of them, next to its
 * "<key>_tree") carries no value; an array of subtrees is walked with the index in the path
 * ("message_tree/1/..."). Not required: values they leave out when blank (an all-space ITCH alpha
 * field or MoldUDP64 session) and MDP3 null prices (their null format is not in the captures).
 */
#ifndef TP_CONFORMANCE_H
#define TP_CONFORMANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "net_parse.h"

#define ACTUAL_MAX 128

enum actual_kind {
    ACTUAL_TEXT,  /* compared as text, trailing spaces ignored */
    ACTUAL_PRICE, /* their decimal text vs our price9 integer */
};

struct actual {
    char path[256];
    enum actual_kind kind;
    char text[64];
    int64_t p9;
    bool required; /* must appear in the expected tree */
    bool matched;
};

struct actuals {
    unsigned count;
    struct actual items[ACTUAL_MAX];
};

void actual_text(struct actuals *a, bool required, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
void actual_price(struct actuals *a, const char *path, int64_t p9);

/* Compares the expected tree (an object) with the actual values; fails the test on mismatch. */
void conformance_compare(const char *what, json_t *expected, struct actuals *a);

/* Exact decimal text ("87.39", "358", "-0.5") -> price9; false when it is not a decimal. */
bool decimal_to_p9(const char *s, int64_t *out);

/* The expected object's member, asserted present. */
json_t *expect_member(json_t *obj, const char *key);

/* Checks the frame-level fields: ip_dst, udp_dstport, vlan. */
void check_flow(json_t *entry, const struct tp_udp_view *udp);

/* Per-protocol frame checks: the frame's UDP payload against one expected entry. */
void check_itch_frame(json_t *entry, const uint8_t *payload, size_t len);
void check_mdp3_frame(json_t *entry, const uint8_t *payload, size_t len);
void check_eobi_frame(json_t *entry, const uint8_t *payload, size_t len);

#endif /* TP_CONFORMANCE_H */
