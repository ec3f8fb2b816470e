/*
 * libFuzzer target: the host side of a data-plane port (dataplane/ports/host.h) driven by hostile
 * frames from the wire, interleaved with joins, leaves, neighbor look-ups, time and a port that
 * takes or refuses what the host sends.
 *
 * Input: byte 0 sets the host up (bit 0: no IPv4 address, bit 1: unicast VLAN 12, bits 2-4: how
 * many groups are joined at start), then one group selector pair per initial group and one
 * neighbor selector; the rest is a sequence of operations, each an opcode byte and its arguments
 * (see the switch in LLVMFuzzerTestOneInput): raw frames, IGMP queries and ARP frames built from a
 * few bytes (with good checksums unless asked), time steps, send loops (each frame taken or
 * refused as an input bit says), joins, leaves, resolves.
 *
 * A small model of what the host was told runs beside it, and every frame the host writes is
 * checked against it: within TP_HOST_FRAME_MAX, Ethernet/IPv4/IGMP/ARP well formed with good
 * checksums (as test_host.c checks them), a report only for a joined group and a leave only for
 * a left one (with the group's source and VLAN), IGMPv2 while a v1/v2 querier was heard in the
 * last 260 s, ARP requests only for unresolved neighbors, ARP replies to the requests received in
 * order. Counters never decrease and move by what each call did; a frame not settled or refused
 * is written again unchanged; give-ups happen only after TP_HOST_TX_GIVE_UP_MS of refusals; a
 * resolved neighbor has the MAC of its latest ARP frame; joined() follows joins and leaves; a
 * group a built query asked for is reported within the query's Max Resp Time.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "net_build.h"
#include "net_bytes.h"
#include "net_parse.h"

#define HZ              1000000ull  /* fake TSC: 1 tick = 1 us */
#define MY_IP           0x0a000002u /* 10.0.0.2 */
#define UNICAST_VLAN    12
#define GROUP_CHOICES   96 /* more than TP_HOST_MAX_GROUPS: the table can fill */
#define NEIGHBOR_CHOICE 12 /* more than TP_HOST_MAX_NEIGHBORS */
#define OLDER_QUERIER   (260 * HZ)
#define GIVE_UP_TICKS   (TP_HOST_TX_GIVE_UP_MS * HZ / 1000)
#define ARP_REPLY_QUEUE 4 /* replies the host queues (host.c); more requests are counted only */
#define MAX_FRAME_IN    255

static const uint8_t my_mac[6] = {0x02, 0, 0, 0, 0, 0x02};
static const uint16_t vlans[4] = {TP_HOST_NO_VLAN, 0, 30, 4095};

#define check(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "fuzz_host: %s:%d: %s\n", __FILE__, __LINE__, #cond);                  \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

/* ---- the model ---------------------------------------------------------------------------- */

struct model_group {
    uint32_t group;
    uint16_t refs;
    uint16_t vlan;
    uint32_t source;
    bool leaving;       /* the last reference went: a leave may still be due */
    bool answer_due;    /* a query asked for a report of this group... */
    uint64_t answer_by; /* ...to be due before this time (its Max Resp Time) */
};

struct model_neighbor {
    uint32_t ip;
    bool resolved;
    uint8_t mac[6];
};

struct model_reply {
    uint32_t ip;
    uint16_t vlan;
    uint8_t mac[6];
};

struct model {
    struct tp_host *host;
    uint32_t ip;
    uint16_t vlan;
    uint64_t now;
    struct tp_host_counters c; /* the counters as last seen */
    struct model_group groups[GROUP_CHOICES + 8];
    unsigned n_groups;
    struct model_neighbor neighbors[TP_HOST_MAX_NEIGHBORS];
    unsigned n_neighbors;
    struct model_reply replies[ARP_REPLY_QUEUE];
    unsigned n_replies;
    bool v2_heard; /* some query was counted (raw frames may be v1/v2 queries) */
    bool v2_known; /* a built v1/v2 query was counted at v2_at */
    uint64_t v2_at;
    bool failing; /* the last settled frame was refused */
    uint64_t failing_since;
    /* The last frame written and not taken, and whether the host was left alone since. */
    uint8_t last[TP_HOST_FRAME_MAX];
    size_t last_len;
    uint64_t last_at;
    bool last_valid;
};

static struct model_group *model_group(struct model *m, uint32_t group)
{
    for (unsigned i = 0; i < m->n_groups; i++)
        if (m->groups[i].group == group)
            return &m->groups[i];
    return NULL;
}

static struct model_neighbor *model_neighbor(struct model *m, uint32_t ip)
{
    for (unsigned i = 0; i < m->n_neighbors; i++)
        if (m->neighbors[i].ip == ip)
            return &m->neighbors[i];
    return NULL;
}

/* Every counter is at least what it was; returns the change of each through d. */
static void counters_delta(struct model *m, struct tp_host_counters *d)
{
    const struct tp_host_counters *now = tp_host_counters(m->host);
    const uint64_t *a = (const uint64_t *)&m->c, *b = (const uint64_t *)now;
    uint64_t *out = (uint64_t *)d;
    for (size_t i = 0; i < sizeof(*d) / sizeof(uint64_t); i++) {
        check(b[i] >= a[i]);
        out[i] = b[i] - a[i];
    }
    m->c = *now;
}

static bool delta_zero_but(const struct tp_host_counters *d, const uint64_t *allowed, unsigned n)
{
    const uint64_t *v = (const uint64_t *)d;
    for (size_t i = 0; i < sizeof(*d) / sizeof(uint64_t); i++) {
        bool ok = false;
        for (unsigned k = 0; k < n; k++)
            ok |= &v[i] == &allowed[k];
        if (!ok && v[i] != 0)
            return false;
    }
    return true;
}

/* ---- selectors: a byte of input -> an address ---------------------------------------------- */

static uint32_t group_of(uint8_t b)
{
    if (b < 0xf0)
        return 0xe0001f00u + b % GROUP_CHOICES;
    if (b < 0xf8)
        return 0xe8010100u + (b & 7); /* source-specific range */
    return 0x0a000000u | b;           /* not multicast: refused */
}

static uint32_t neighbor_of(uint8_t b)
{
    unsigned k = b % NEIGHBOR_CHOICE;
    return k == 0 ? 0 : 0x0a000010u + k; /* 0: no address (never resolvable) */
}

/* ---- calls on the host, each checked ------------------------------------------------------- */

static void do_join(struct model *m, uint8_t gsel, uint8_t attr)
{
    uint32_t group = group_of(gsel);
    uint32_t source = (attr & 3) ? 0x0a0a0a00u + (attr & 3) : 0;
    uint16_t vlan = vlans[(attr >> 2) & 3];
    unsigned active = 0, leaving = 0;
    for (unsigned i = 0; i < m->n_groups; i++) {
        active += m->groups[i].refs > 0;
        leaving += m->groups[i].refs == 0 && m->groups[i].leaving;
    }
    struct model_group *g = model_group(m, group);
    int rc = tp_host_join(m->host, group, source, vlan, m->now);
    m->last_valid = false;
    if ((group >> 28) != 0xe) {
        check(rc == -EINVAL);
        return;
    }
    if (rc == -ENOSPC) {
        check((g == NULL || g->refs == 0) && active + leaving >= TP_HOST_MAX_GROUPS);
        return;
    }
    check(rc == 0);
    if (g == NULL) {
        g = &m->groups[m->n_groups++];
        *g = (struct model_group){.group = group};
    }
    if (g->refs == 0) {
        check(active < TP_HOST_MAX_GROUPS);
        g->source = source;
        g->vlan = vlan;
        g->leaving = false;
        g->answer_due = false;
    }
    g->refs++;
    check(tp_host_joined(m->host, group));
}

static void do_leave(struct model *m, uint8_t gsel)
{
    uint32_t group = group_of(gsel);
    struct model_group *g = model_group(m, group);
    int rc = tp_host_leave(m->host, group, m->now);
    m->last_valid = false;
    if (g == NULL || g->refs == 0) {
        check(rc == -ENOENT);
        return;
    }
    check(rc == 0);
    if (--g->refs == 0) {
        g->leaving = true;
        g->answer_due = false;
    }
    check(tp_host_joined(m->host, group) == (g->refs > 0));
}

static void do_resolve(struct model *m, uint8_t sel)
{
    uint32_t ip = neighbor_of(sel);
    uint8_t mac[6];
    int rc = tp_host_resolve(m->host, ip, m->now, mac);
    m->last_valid = false;
    struct model_neighbor *n = ip != 0 ? model_neighbor(m, ip) : NULL;
    if (n == NULL && m->n_neighbors == TP_HOST_MAX_NEIGHBORS) {
        check(rc == -ENOSPC);
        return;
    }
    if (n == NULL && ip != 0) {
        n = &m->neighbors[m->n_neighbors++];
        *n = (struct model_neighbor){.ip = ip};
    }
    if (n == NULL || !n->resolved) {
        check(rc == -EAGAIN);
        return;
    }
    check(rc == 0 && memcmp(mac, n->mac, 6) == 0);
}

/* Where the host will find the frame's payload: ethertype and VLAN after up to two tags. */
static bool frame_type(const uint8_t *f, size_t len, uint16_t *type, uint16_t *vlan, size_t *off)
{
    if (len < TP_ETHER_HDR_LEN)
        return false;
    *off = 12;
    *type = tp_load_be16(f + 12);
    *vlan = TP_HOST_NO_VLAN;
    for (int tags = 0; tp_net_is_vlan_tpid(*type); tags++) {
        if (tags == TP_NET_MAX_VLANS || len < *off + 8)
            return false;
        *vlan = tp_load_be16(f + *off + 2) & 0x0fff;
        *off += TP_VLAN_TAG_LEN;
        *type = tp_load_be16(f + *off);
    }
    *off += 2;
    return true;
}

/* The IGMP message length of a query built from a[] (build_query). */
static size_t query_igmp_len(const uint8_t a[3])
{
    return ((a[0] & 1) ? 12 : 8) + 2 * (size_t)((a[0] >> 3) & 7);
}

/* A query of 8 to 11 bytes is IGMPv1/v2 (RFC 3376 7.1). */
static bool query_is_v2(const uint8_t a[3])
{
    return query_igmp_len(a) < 12;
}

/* Max Resp Time of a query built from a[] (build_query) in tenths of a second: RFC 3376 4.1.1
 * for v3 (floating point above 127), RFC 2236 for v2, 10 s for v1 (code 0). */
static uint64_t query_tenths(const uint8_t a[3], bool v2)
{
    uint8_t code = a[1];
    if (v2)
        return code ? code : 100;
    if (code < 128)
        return code;
    return (uint64_t)((code & 0x0f) | 0x10) << (((code >> 4) & 7) + 3);
}

/* A frame from the wire; `query`: the bytes build_query made it from (NULL: not a built query). */
static void do_input(struct model *m, const uint8_t *f, size_t len, const uint8_t *query)
{
    /* A copy of exactly len bytes: any read past the frame is caught by ASan. */
    uint8_t *copy = malloc(len ? len : 1);
    check(copy != NULL);
    memcpy(copy, f, len);
    bool taken = tp_host_input(m->host, copy, len, m->now);
    m->last_valid = false;
    struct tp_host_counters d;
    counters_delta(m, &d);
    check(d.igmp_reports == 0 && d.igmp_leaves == 0 && d.arp_sent == 0 && d.tx_retries == 0 &&
          d.tx_given_up == 0);
    check(d.igmp_queries <= 1 && d.arp_requests <= 1 && d.arp_learned <= 1 && d.ignored <= 1 &&
          d.malformed <= 1);
    check(taken == (d.ignored == 0));
    if (d.igmp_queries)
        m->v2_heard = true;
    if (d.igmp_queries && query != NULL) {
        bool v2 = query_is_v2(query);
        if (v2) {
            m->v2_known = true;
            m->v2_at = m->now;
        }
        /* Each group asked for is reported within the Max Resp Time. */
        uint32_t asked = query[2] ? group_of(query[2]) : 0;
        uint64_t by = m->now + query_tenths(query, v2) * HZ / 10;
        for (unsigned i = 0; i < m->n_groups; i++) {
            struct model_group *g = &m->groups[i];
            if (g->refs > 0 && (asked == 0 || asked == g->group) &&
                (!g->answer_due || by < g->answer_by)) {
                g->answer_due = true;
                g->answer_by = by;
            }
        }
    }
    uint16_t type, vlan;
    size_t off;
    if (frame_type(copy, len, &type, &vlan, &off) && type == 0x0806 && d.malformed == 0) {
        check(taken && len - off >= 28);
        const uint8_t *arp = copy + off;
        uint32_t sender = tp_load_be32(arp + 14);
        struct model_neighbor *n = sender != 0 ? model_neighbor(m, sender) : NULL;
        check(d.arp_learned == (n != NULL && !n->resolved));
        if (n != NULL) {
            n->resolved = true;
            memcpy(n->mac, arp + 8, 6);
        }
        check(d.arp_requests ==
              (tp_load_be16(arp + 6) == 1 && m->ip != 0 && tp_load_be32(arp + 24) == m->ip));
        if (d.arp_requests && m->n_replies < ARP_REPLY_QUEUE) {
            struct model_reply *r = &m->replies[m->n_replies++];
            r->ip = sender;
            r->vlan = vlan;
            memcpy(r->mac, arp + 8, 6);
        }
    } else {
        check(d.arp_learned == 0 && d.arp_requests == 0);
    }
    free(copy);
}

/* What a written frame is, once checked. */
enum written { W_REPORT, W_LEAVE, W_ARP_REQUEST, W_ARP_REPLY };

static enum written check_igmp(struct model *m, const uint8_t *f, size_t len, size_t off,
                               uint16_t vlan)
{
    const uint8_t *ip = f + off;
    check(len >= off + 24 + 8);
    check(ip[0] == 0x46 && ip[1] == 0xc0 && ip[8] == 1 && ip[9] == 2); /* RA, ToS, TTL 1, IGMP */
    check(ip[20] == 0x94 && ip[21] == 0x04);
    check(tp_ipv4_checksum(ip, 24) == 0);
    check(tp_load_be32(ip + 12) == m->ip);
    size_t total = tp_load_be16(ip + 2);
    check(off + total == len && total >= 24 + 8);
    const uint8_t *igmp = ip + 24;
    size_t igmp_len = total - 24;
    check(tp_ipv4_checksum(igmp, igmp_len) == 0);
    uint32_t dst = tp_load_be32(ip + 16);
    uint8_t mac[6];
    tp_net_multicast_mac(dst, mac);
    check(memcmp(f, mac, 6) == 0);
    bool must_v2 = m->v2_known && m->now < m->v2_at + OLDER_QUERIER;
    struct model_group *g;
    bool leave;
    if (igmp[0] == 0x22) {
        check(!must_v2 && dst == 0xe0000016u && tp_load_be16(igmp + 6) == 1);
        uint8_t record = igmp[8];
        uint16_t sources = tp_load_be16(igmp + 10);
        g = model_group(m, tp_load_be32(igmp + 12));
        check(g != NULL && record >= 1 && record <= 6);
        leave = record == 3 || record == 6;
        check(sources == (g->source != 0) && igmp_len == 16 + 4u * sources);
        if (sources)
            check(tp_load_be32(igmp + 16) == g->source);
        check((record == 1 || record == 5 || record == 6) == (g->source != 0));
    } else {
        check(m->v2_heard && (igmp[0] == 0x16 || igmp[0] == 0x17) && igmp_len == 8);
        g = model_group(m, tp_load_be32(igmp + 4));
        check(g != NULL);
        leave = igmp[0] == 0x17;
        check(dst == (leave ? 0xe0000002u : g->group));
    }
    check(vlan == g->vlan);
    if (leave)
        check(g->refs == 0 && g->leaving);
    else
        check(g->refs > 0);
    return leave ? W_LEAVE : W_REPORT;
}

static enum written check_arp(struct model *m, const uint8_t *f, size_t len, size_t off,
                              uint16_t vlan)
{
    static const uint8_t broadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    check(len == 60 && off + 28 <= len);
    const uint8_t *arp = f + off;
    check(tp_load_be16(arp) == 1 && tp_load_be16(arp + 2) == TP_ETHERTYPE_IPV4 && arp[4] == 6 &&
          arp[5] == 4);
    check(memcmp(arp + 8, my_mac, 6) == 0 && tp_load_be32(arp + 14) == m->ip);
    for (size_t i = off + 28; i < len; i++)
        check(f[i] == 0);
    uint16_t op = tp_load_be16(arp + 6);
    uint32_t target = tp_load_be32(arp + 24);
    if (op == 1) {
        struct model_neighbor *n = target != 0 ? model_neighbor(m, target) : NULL;
        check(n != NULL && !n->resolved && vlan == m->vlan);
        check(memcmp(f, broadcast, 6) == 0);
        for (int i = 18; i < 24; i++)
            check(arp[i] == 0);
        return W_ARP_REQUEST;
    }
    check(op == 2 && m->ip != 0 && m->n_replies > 0);
    const struct model_reply *r = &m->replies[0];
    check(target == r->ip && vlan == r->vlan && memcmp(f, r->mac, 6) == 0 &&
          memcmp(arp + 18, r->mac, 6) == 0);
    return W_ARP_REPLY;
}

/* The host has nothing due: every leave and ARP reply it had is settled (sent or given up). */
static void nothing_due(struct model *m)
{
    for (unsigned i = 0; i < m->n_groups; i++)
        m->groups[i].leaving = false;
    m->n_replies = 0;
    m->failing = false;
}

/*
 * tp_host_next_frame at the model's time into a buffer of exactly TP_HOST_FRAME_MAX bytes, the
 * frame checked. Returns its length (0: none) and what it is through *what.
 */
static size_t next_frame(struct model *m, uint8_t *buf, enum written *what)
{
    uint8_t *out = malloc(TP_HOST_FRAME_MAX);
    check(out != NULL);
    size_t len = tp_host_next_frame(m->host, m->now, out, TP_HOST_FRAME_MAX);
    struct tp_host_counters d;
    counters_delta(m, &d);
    check(delta_zero_but(&d, &d.tx_given_up, 1));
    check(len <= TP_HOST_FRAME_MAX);
    bool overdue = m->failing && m->now - m->failing_since >= GIVE_UP_TICKS;
    if (d.tx_given_up > 0) {
        check(len == 0 && overdue);
        for (unsigned i = 0; i < m->n_groups; i++)
            m->groups[i].answer_due = false; /* given up with the rest (if it was due) */
    } else if (len == 0) {
        /* Nothing due: no query answer is late. */
        for (unsigned i = 0; i < m->n_groups; i++)
            check(!(m->groups[i].refs > 0 && m->groups[i].answer_due &&
                    m->groups[i].answer_by <= m->now));
    }
    if (len == 0) {
        nothing_due(m);
        free(out);
        return 0;
    }
    check(!overdue);
    memcpy(buf, out, len);
    free(out);
    check(len >= TP_ETHER_HDR_LEN && memcmp(buf + 6, my_mac, 6) == 0);
    uint16_t type, vlan;
    size_t off;
    check(frame_type(buf, len, &type, &vlan, &off));
    /* The host writes at most one tag, and only the VLAN ethertype. */
    check(vlan == TP_HOST_NO_VLAN || tp_load_be16(buf + 12) == TP_ETHERTYPE_VLAN);
    check(vlan == TP_HOST_NO_VLAN || off == 18);
    if (type == TP_ETHERTYPE_IPV4)
        *what = check_igmp(m, buf, len, off, vlan);
    else {
        check(type == 0x0806);
        *what = check_arp(m, buf, len, off, vlan);
    }
    /* Written again without anything in between: the very same frame. */
    if (m->last_valid && m->last_at == m->now)
        check(len == m->last_len && memcmp(buf, m->last, len) == 0);
    return len;
}

static void frame_sent(struct model *m, const uint8_t *buf, size_t len, enum written what,
                       bool sent)
{
    tp_host_frame_sent(m->host, m->now, sent);
    struct tp_host_counters d;
    counters_delta(m, &d);
    if (!sent) {
        check(delta_zero_but(&d, &d.tx_retries, 1) && d.tx_retries == 1);
        if (!m->failing) {
            m->failing = true;
            m->failing_since = m->now;
        }
        memcpy(m->last, buf, len);
        m->last_len = len;
        m->last_at = m->now;
        m->last_valid = true;
        return;
    }
    m->failing = false;
    m->last_valid = false;
    struct model_group *g = NULL;
    if (what == W_REPORT || what == W_LEAVE) {
        size_t off = buf[12] == 0x81 ? 18 : 14;
        const uint8_t *igmp = buf + off + 24;
        g = model_group(m, tp_load_be32(igmp + (igmp[0] == 0x22 ? 12 : 4)));
    }
    switch (what) {
    case W_REPORT:
        check(delta_zero_but(&d, &d.igmp_reports, 1) && d.igmp_reports == 1);
        g->answer_due = false;
        break;
    case W_LEAVE:
        check(delta_zero_but(&d, &d.igmp_leaves, 1) && d.igmp_leaves == 1);
        g->leaving = false;
        break;
    case W_ARP_REQUEST:
        check(delta_zero_but(&d, &d.arp_sent, 1) && d.arp_sent == 1);
        break;
    case W_ARP_REPLY:
        check(delta_zero_but(&d, NULL, 0));
        m->n_replies--;
        memmove(&m->replies[0], &m->replies[1], m->n_replies * sizeof(m->replies[0]));
        break;
    }
}

/* ---- frames built from a few bytes ---------------------------------------------------------- */

/* Ethernet header to `dst` from a peer, tagged with VLAN `vlan` unless it is TP_HOST_NO_VLAN. */
static size_t peer_ether(uint8_t *f, const uint8_t dst[6], uint16_t vlan, uint16_t type)
{
    static const uint8_t peer_mac[6] = {0x02, 0, 0, 0, 0, 0x01};
    memcpy(f, dst, 6);
    memcpy(f + 6, peer_mac, 6);
    size_t off = 12;
    if (vlan != TP_HOST_NO_VLAN) {
        tp_store_be16(f + off, TP_ETHERTYPE_VLAN);
        tp_store_be16(f + off + 2, vlan);
        off += 4;
    }
    tp_store_be16(f + off, type);
    return off + 2;
}

/* An IGMP query: a[0] flags (bit 0 v3, bit 1 tagged, bit 2 bad checksum, bits 3-5 extra bytes),
 * a[1] Max Resp Code, a[2] group selector (0: general). Returns its length. */
static size_t build_query(uint8_t *f, const uint8_t a[3])
{
    uint8_t mac[6];
    tp_net_multicast_mac(0xe0000001u, mac);
    size_t off = peer_ether(f, mac, (a[0] & 2) ? 77 : TP_HOST_NO_VLAN, TP_ETHERTYPE_IPV4);
    size_t igmp_len = query_igmp_len(a);
    uint8_t *ip = f + off;
    memset(ip, 0, 20 + igmp_len);
    ip[0] = 0x45;
    tp_store_be16(ip + 2, (uint16_t)(20 + igmp_len));
    ip[8] = 1;
    ip[9] = 2;
    tp_store_be32(ip + 12, 0x0a000001u);
    tp_store_be32(ip + 16, 0xe0000001u);
    tp_store_be16(ip + 10, tp_ipv4_checksum(ip, 20));
    uint8_t *igmp = ip + 20;
    igmp[0] = 0x11;
    igmp[1] = a[1];
    tp_store_be32(igmp + 4, a[2] ? group_of(a[2]) : 0);
    tp_store_be16(igmp + 2, tp_ipv4_checksum(igmp, igmp_len));
    if (a[0] & 4)
        igmp[igmp_len - 1] ^= 0x5a;
    return off + 20 + igmp_len;
}

/* An ARP frame: a[0] op (bits 0-1: 1, 2, 3) and tagging (bit 2), a[1] sender selector, a[2]
 * target (bit 0: us), a[3] last byte of the sender's MAC. */
static size_t build_arp(uint8_t *f, const uint8_t a[4], uint32_t my_ip)
{
    static const uint8_t broadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    size_t off =
        peer_ether(f, broadcast, (a[0] & 4) ? (uint16_t)(a[0] >> 3) : TP_HOST_NO_VLAN, 0x0806);
    uint8_t *arp = f + off;
    tp_store_be16(arp, 1);
    tp_store_be16(arp + 2, TP_ETHERTYPE_IPV4);
    arp[4] = 6;
    arp[5] = 4;
    tp_store_be16(arp + 6, (uint16_t)((a[0] & 3) ? (a[0] & 3) : 1));
    const uint8_t sender_mac[6] = {0x02, 0, 0, 0, 1, a[3]};
    memcpy(arp + 8, sender_mac, 6);
    tp_store_be32(arp + 14, neighbor_of(a[1]));
    memset(arp + 18, 0, 6);
    tp_store_be32(arp + 24, (a[2] & 1) ? my_ip : 0x0a000063u);
    return off + 28;
}

/* ---- the driver --------------------------------------------------------------------------- */

/* Input bytes, read front to back; past the end everything reads as zero. */
struct reader {
    const uint8_t *p;
    size_t left;
};

static uint8_t next_byte(struct reader *r)
{
    if (r->left == 0)
        return 0;
    r->left--;
    return *r->p++;
}

/* The caller's send loop: up to 8 frames, bit i of `pattern` says whether the port takes the
 * i-th; a refusal stops the loop unless bit 7 of `more` is set (the caller may ask again). */
static void pump(struct model *m, uint8_t pattern, uint8_t more)
{
    for (int i = 0; i < 8; i++) {
        uint8_t buf[TP_HOST_FRAME_MAX];
        enum written what;
        size_t len = next_frame(m, buf, &what);
        if (len == 0)
            return;
        bool sent = (pattern >> i) & 1;
        frame_sent(m, buf, len, what, sent);
        if (!sent && !(more & 0x80))
            return;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct model m;
    struct reader r = {data, size};
    uint8_t setup = next_byte(&r);
    memset(&m, 0, sizeof(m));
    m.ip = (setup & 1) ? 0 : MY_IP;
    m.vlan = (setup & 2) ? UNICAST_VLAN : TP_HOST_NO_VLAN;
    m.now = HZ;
    struct tp_host_params p = {.ip = m.ip, .vlan = m.vlan, .tsc_hz = HZ, .seed = size};
    memcpy(p.mac, my_mac, 6);
    m.host = aligned_alloc(64, tp_host_memsize());
    check(m.host != NULL && tp_host_init(m.host, &p) == 0);
    for (unsigned i = 0; i < ((setup >> 2) & 7u); i++) {
        uint8_t gsel = next_byte(&r);
        do_join(&m, gsel, next_byte(&r));
    }
    do_resolve(&m, next_byte(&r));

    uint8_t frame[MAX_FRAME_IN + 64], buf[TP_HOST_FRAME_MAX];
    while (r.left > 0) {
        uint8_t op = next_byte(&r), a[4];
        enum written what;
        size_t len;
        switch (op % 10) {
        case 0: /* time passes: up to ~19 hours */
            a[0] = next_byte(&r);
            a[1] = next_byte(&r);
            m.now += (uint64_t)a[0] << (a[1] % 29);
            break;
        case 1: /* a raw frame from the wire */
            len = next_byte(&r);
            len = len < r.left ? len : r.left;
            do_input(&m, r.p, len, NULL);
            r.p += len;
            r.left -= len;
            break;
        case 2:
            for (int i = 0; i < 3; i++)
                a[i] = next_byte(&r);
            do_input(&m, frame, build_query(frame, a), a);
            break;
        case 3:
            for (int i = 0; i < 4; i++)
                a[i] = next_byte(&r);
            do_input(&m, frame, build_arp(frame, a, m.ip ? m.ip : MY_IP), NULL);
            break;
        case 4:
            a[0] = next_byte(&r);
            pump(&m, a[0], next_byte(&r));
            break;
        case 5:
            a[0] = next_byte(&r);
            do_join(&m, a[0], next_byte(&r));
            break;
        case 6:
            do_leave(&m, next_byte(&r));
            break;
        case 7:
            do_resolve(&m, next_byte(&r));
            break;
        case 8: /* written twice without settling: the same frame, then settled as asked */
            a[0] = next_byte(&r);
            len = next_frame(&m, buf, &what);
            if (len > 0) {
                memcpy(m.last, buf, len);
                m.last_len = len;
                m.last_at = m.now;
                m.last_valid = true;
                check(next_frame(&m, buf, &what) == len);
                frame_sent(&m, buf, len, what, a[0] & 1);
            }
            break;
        default: /* a buffer too small: nothing written, and nothing to settle */
            check(tp_host_next_frame(m.host, m.now, buf, TP_HOST_FRAME_MAX - 1) == 0);
            tp_host_frame_sent(m.host, m.now, false);
            {
                struct tp_host_counters d;
                counters_delta(&m, &d);
                check(delta_zero_but(&d, NULL, 0));
            }
            break;
        }
        for (unsigned i = 0; i < m.n_groups; i++)
            check(tp_host_joined(m.host, m.groups[i].group) == (m.groups[i].refs > 0));
    }
    free(m.host);
    return 0;
}
