/*
 * The host side of a data-plane port (IGMP membership, ARP): see host.h.
 *
 * Everything the host has to say is state with a due time (a group's next report, a pending
 * leave, a neighbor's next ARP request, a queued ARP reply); tp_host_next_frame turns whatever is
 * due into one frame at a time, so the caller decides when to spend time transmitting. The state
 * moves on only in tp_host_frame_sent, once the caller knows the port took the frame: a frame
 * that did not go out is simply still due at the next call.
 */
#include "host.h"

#include <errno.h>
#include <string.h>

#include "net_build.h"
#include "net_parse.h"

#define ETHERTYPE_ARP     0x0806
#define IPPROTO_IGMP      2
#define IGMP_QUERY        0x11
#define IGMP_V1_REPORT    0x12
#define IGMP_V2_REPORT    0x16
#define IGMP_V2_LEAVE     0x17
#define IGMP_V3_REPORT    0x22
#define ALL_ROUTERS       0xe0000002u /* 224.0.0.2: IGMPv2 leaves */
#define IGMPV3_ROUTERS    0xe0000016u /* 224.0.0.22: IGMPv3 reports */
#define IP_HDR_WITH_RA    24          /* IPv4 header + Router Alert option */
#define ARP_LEN           28
#define ARP_REPLY_QUEUE   4
#define OLDER_QUERIER_SEC 260 /* RFC 3376 8.12: robustness 2 x 125 s query interval + 10 s */

/* IGMPv3 group record types (RFC 3376 4.2.12). */
enum {
    MODE_IS_INCLUDE = 1,
    MODE_IS_EXCLUDE = 2,
    CHANGE_TO_INCLUDE = 3,
    CHANGE_TO_EXCLUDE = 4,
    ALLOW_NEW_SOURCES = 5,
    BLOCK_OLD_SOURCES = 6,
};

struct group_state {
    uint32_t group; /* 0: free slot */
    uint32_t source;
    uint16_t vlan;
    uint16_t refs;
    uint8_t unsolicited; /* join reports still to send */
    bool report_due;     /* report_at is meaningful */
    bool leave_due;      /* refs dropped to 0: send a leave, then free the slot */
    uint64_t report_at;
};

struct neighbor {
    uint32_t ip; /* 0: free */
    bool resolved;
    uint8_t mac[6];
    uint64_t request_at;
};

struct arp_reply {
    uint32_t ip;
    uint16_t vlan;
    uint8_t mac[6];
};

/* What a frame written by tp_host_next_frame is for (the item tp_host_frame_sent settles). */
enum item_kind { ITEM_NONE, ITEM_ARP_REPLY, ITEM_ARP_REQUEST, ITEM_LEAVE, ITEM_REPORT };

struct item {
    enum item_kind kind;
    unsigned index; /* into replies, neighbors or groups */
};

struct tp_host {
    struct tp_host_counters counters;
    struct tp_host_params params;
    uint64_t rng;
    uint64_t older_querier_until; /* TSC until which reports use IGMPv2 */
    bool older_querier;
    bool tx_failing;           /* the last frame did not go out */
    uint64_t tx_failing_since; /* TSC of the first failed send in a row */
    struct item written;       /* the frame tp_host_next_frame wrote last, until settled */
    uint32_t n_replies;
    struct arp_reply replies[ARP_REPLY_QUEUE];
    struct group_state groups[TP_HOST_MAX_GROUPS];
    struct neighbor neighbors[TP_HOST_MAX_NEIGHBORS];
};

size_t tp_host_memsize(void)
{
    return (sizeof(struct tp_host) + 63) & ~(size_t)63;
}

int tp_host_init(void *mem, const struct tp_host_params *params)
{
    if (mem == NULL || params == NULL || params->tsc_hz == 0)
        return -EINVAL;
    struct tp_host *host = mem;
    memset(host, 0, sizeof(*host));
    host->params = *params;
    host->rng = params->seed | 1;
    return 0;
}

static uint64_t next_random(struct tp_host *host)
{
    host->rng ^= host->rng << 13;
    host->rng ^= host->rng >> 7;
    host->rng ^= host->rng << 17;
    return host->rng;
}

static struct group_state *find_group(struct tp_host *host, uint32_t group)
{
    for (unsigned i = 0; i < TP_HOST_MAX_GROUPS; i++)
        if (host->groups[i].group == group)
            return &host->groups[i];
    return NULL;
}

static bool is_multicast(uint32_t ip)
{
    return (ip >> 28) == 0xe;
}

int tp_host_join(struct tp_host *host, uint32_t group, uint32_t source, uint16_t vlan,
                 uint64_t now_tsc)
{
    if (!is_multicast(group))
        return -EINVAL;
    struct group_state *g = find_group(host, group);
    if (g != NULL && g->refs > 0) {
        g->refs++;
        return 0;
    }
    if (g == NULL)
        g = find_group(host, 0);
    if (g == NULL)
        return -ENOSPC;
    *g = (struct group_state){.group = group,
                              .source = source,
                              .vlan = vlan,
                              .refs = 1,
                              .unsolicited = 2,
                              .report_due = true,
                              .report_at = now_tsc};
    return 0;
}

int tp_host_leave(struct tp_host *host, uint32_t group, uint64_t now_tsc)
{
    (void)now_tsc;
    struct group_state *g = find_group(host, group);
    if (g == NULL || g->refs == 0)
        return -ENOENT;
    if (--g->refs == 0) {
        g->leave_due = true;
        g->report_due = false;
        g->unsolicited = 0;
    }
    return 0;
}

bool tp_host_joined(const struct tp_host *host, uint32_t group)
{
    for (unsigned i = 0; i < TP_HOST_MAX_GROUPS; i++)
        if (host->groups[i].group == group && host->groups[i].refs > 0)
            return true;
    return false;
}

/* ---- input ------------------------------------------------------------------------------- */

static struct neighbor *find_neighbor(struct tp_host *host, uint32_t ip)
{
    for (unsigned i = 0; i < TP_HOST_MAX_NEIGHBORS; i++)
        if (host->neighbors[i].ip == ip)
            return &host->neighbors[i];
    return NULL;
}

static void arp_input(struct tp_host *host, const uint8_t *arp, size_t len, uint16_t vlan)
{
    if (len < ARP_LEN || tp_load_be16(arp) != 1 || tp_load_be16(arp + 2) != TP_ETHERTYPE_IPV4 ||
        arp[4] != 6 || arp[5] != 4) {
        host->counters.malformed++;
        return;
    }
    uint16_t op = tp_load_be16(arp + 6);
    const uint8_t *sender_mac = arp + 8;
    uint32_t sender_ip = tp_load_be32(arp + 14);
    uint32_t target_ip = tp_load_be32(arp + 24);
    struct neighbor *n = sender_ip != 0 ? find_neighbor(host, sender_ip) : NULL;
    if (n != NULL) {
        if (!n->resolved)
            host->counters.arp_learned++;
        memcpy(n->mac, sender_mac, 6);
        n->resolved = true;
    }
    if (op == 1 && host->params.ip != 0 && target_ip == host->params.ip) {
        host->counters.arp_requests++;
        if (host->n_replies < ARP_REPLY_QUEUE) {
            struct arp_reply *r = &host->replies[host->n_replies++];
            r->ip = sender_ip;
            r->vlan = vlan;
            memcpy(r->mac, sender_mac, 6);
        }
    }
}

/* IGMPv3 Max Resp Code -> tenths of a second (RFC 3376 4.1.1). */
static uint32_t v3_max_resp_tenths(uint8_t code)
{
    if (code < 128)
        return code;
    uint32_t exp = (code >> 4) & 0x7, mant = code & 0xf;
    return (mant | 0x10) << (exp + 3);
}

static void schedule_answer(struct tp_host *host, struct group_state *g, uint64_t now,
                            uint64_t max_delay)
{
    uint64_t at = now + (max_delay ? next_random(host) % max_delay : 0);
    if (!g->report_due || g->report_at > at) {
        g->report_at = at;
        g->report_due = true;
    }
}

static void igmp_input(struct tp_host *host, const uint8_t *igmp, size_t len, uint64_t now)
{
    if (len < 8 || (len & 1) || tp_ipv4_checksum(igmp, len) != 0) {
        host->counters.malformed++;
        return;
    }
    if (igmp[0] != IGMP_QUERY)
        return; /* other hosts' reports: nothing to do (no v2 suppression behind snooping) */
    host->counters.igmp_queries++;
    uint32_t tenths;
    if (len >= 12) {
        tenths = v3_max_resp_tenths(igmp[1]);
    } else {
        /* v1 (code 0, 10 s) or v2: from now on answer in v2 for a while. */
        tenths = igmp[1] ? igmp[1] : 100;
        host->older_querier = true;
        host->older_querier_until = now + OLDER_QUERIER_SEC * host->params.tsc_hz;
    }
    uint64_t max_delay = tenths * host->params.tsc_hz / 10;
    uint32_t group = tp_load_be32(igmp + 4);
    for (unsigned i = 0; i < TP_HOST_MAX_GROUPS; i++) {
        struct group_state *g = &host->groups[i];
        if (g->refs > 0 && (group == 0 || group == g->group))
            schedule_answer(host, g, now, max_delay);
    }
}

bool tp_host_input(struct tp_host *host, const uint8_t *frame, size_t len, uint64_t now_tsc)
{
    if (len < TP_ETHER_HDR_LEN)
        goto ignored;
    size_t off = 12;
    uint16_t type = tp_load_be16(frame + off);
    uint16_t vlan = TP_HOST_NO_VLAN;
    for (int tags = 0; tp_net_is_vlan_tpid(type); tags++) {
        if (tags == TP_NET_MAX_VLANS || len < off + 2 + TP_VLAN_TAG_LEN + 2)
            goto ignored;
        vlan = tp_load_be16(frame + off + 2) & 0x0fff;
        off += TP_VLAN_TAG_LEN;
        type = tp_load_be16(frame + off);
    }
    off += 2;
    if (type == ETHERTYPE_ARP) {
        arp_input(host, frame + off, len - off, vlan);
        return true;
    }
    if (type != TP_ETHERTYPE_IPV4 || len - off < TP_IPV4_MIN_HDR || frame[off + 9] != IPPROTO_IGMP)
        goto ignored;
    const uint8_t *ip = frame + off;
    size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
    size_t total = tp_load_be16(ip + 2);
    if ((ip[0] >> 4) != 4 || ihl < TP_IPV4_MIN_HDR || total < ihl || total > len - off) {
        host->counters.malformed++;
        return true;
    }
    igmp_input(host, ip + ihl, total - ihl, now_tsc);
    return true;
ignored:
    host->counters.ignored++;
    return false;
}

/* ---- output ------------------------------------------------------------------------------ */

/* Ethernet header (with an 802.1Q tag unless vlan is TP_HOST_NO_VLAN); returns its length. */
static size_t write_ether(uint8_t *buf, const uint8_t dst[6], const uint8_t src[6], uint16_t vlan,
                          uint16_t type)
{
    memcpy(buf, dst, 6);
    memcpy(buf + 6, src, 6);
    size_t off = 12;
    if (vlan != TP_HOST_NO_VLAN) {
        tp_store_be16(buf + off, TP_ETHERTYPE_VLAN);
        tp_store_be16(buf + off + 2, vlan);
        off += TP_VLAN_TAG_LEN;
    }
    tp_store_be16(buf + off, type);
    return off + 2;
}

/*
 * An IGMP frame: IPv4 with TTL 1, ToS 0xc0 and the Router Alert option (RFC 2236, 3376), to
 * dst_ip's multicast MAC. `igmp` (len bytes, checksum field zero) is copied and checksummed.
 */
static size_t write_igmp_frame(struct tp_host *host, uint8_t *buf, uint16_t vlan, uint32_t dst_ip,
                               const uint8_t *igmp, size_t len)
{
    uint8_t dst_mac[6];
    tp_net_multicast_mac(dst_ip, dst_mac);
    size_t off = write_ether(buf, dst_mac, host->params.mac, vlan, TP_ETHERTYPE_IPV4);
    uint8_t *ip = buf + off;
    memset(ip, 0, IP_HDR_WITH_RA);
    ip[0] = 0x46;
    ip[1] = 0xc0;
    tp_store_be16(ip + 2, (uint16_t)(IP_HDR_WITH_RA + len));
    ip[8] = 1;
    ip[9] = IPPROTO_IGMP;
    tp_store_be32(ip + 12, host->params.ip);
    tp_store_be32(ip + 16, dst_ip);
    ip[20] = 0x94; /* Router Alert, length 4, value 0 */
    ip[21] = 0x04;
    tp_store_be16(ip + 10, tp_ipv4_checksum(ip, IP_HDR_WITH_RA));
    uint8_t *msg = ip + IP_HDR_WITH_RA;
    memcpy(msg, igmp, len);
    tp_store_be16(msg + 2, tp_ipv4_checksum(msg, len));
    return off + IP_HDR_WITH_RA + len;
}

/* One group's report or leave, in the version the querier speaks. */
static size_t write_membership(struct tp_host *host, uint8_t *buf, const struct group_state *g,
                               bool leave, bool change)
{
    uint8_t igmp[20] = {0};
    if (host->older_querier) {
        igmp[0] = leave ? IGMP_V2_LEAVE : IGMP_V2_REPORT;
        tp_store_be32(igmp + 4, g->group);
        return write_igmp_frame(host, buf, g->vlan, leave ? ALL_ROUTERS : g->group, igmp, 8);
    }
    uint8_t record;
    if (g->source != 0)
        record = leave ? BLOCK_OLD_SOURCES : change ? ALLOW_NEW_SOURCES : MODE_IS_INCLUDE;
    else
        record = leave ? CHANGE_TO_INCLUDE : change ? CHANGE_TO_EXCLUDE : MODE_IS_EXCLUDE;
    uint16_t sources = g->source != 0;
    igmp[0] = IGMP_V3_REPORT;
    tp_store_be16(igmp + 6, 1); /* one group record */
    igmp[8] = record;
    tp_store_be16(igmp + 10, sources);
    tp_store_be32(igmp + 12, g->group);
    tp_store_be32(igmp + 16, g->source);
    return write_igmp_frame(host, buf, g->vlan, IGMPV3_ROUTERS, igmp, 16 + 4 * (size_t)sources);
}

static size_t write_arp(struct tp_host *host, uint8_t *buf, uint16_t op, const uint8_t dst_mac[6],
                        uint16_t vlan, uint32_t target_ip)
{
    static const uint8_t broadcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    size_t off =
        write_ether(buf, op == 1 ? broadcast : dst_mac, host->params.mac, vlan, ETHERTYPE_ARP);
    uint8_t *arp = buf + off;
    tp_store_be16(arp, 1);
    tp_store_be16(arp + 2, TP_ETHERTYPE_IPV4);
    arp[4] = 6;
    arp[5] = 4;
    tp_store_be16(arp + 6, op);
    memcpy(arp + 8, host->params.mac, 6);
    tp_store_be32(arp + 14, host->params.ip);
    if (op == 1)
        memset(arp + 18, 0, 6);
    else
        memcpy(arp + 18, dst_mac, 6);
    tp_store_be32(arp + 24, target_ip);
    /* Pad to the 60-byte Ethernet minimum (some PMDs and switches drop runts). */
    size_t end = off + ARP_LEN;
    if (end < 60) {
        memset(buf + end, 0, 60 - end);
        end = 60;
    }
    return end;
}

/* The first item due at now, in order: ARP replies, ARP requests, leaves and reports. */
static bool first_due(const struct tp_host *host, uint64_t now, struct item *out)
{
    if (host->n_replies > 0) {
        *out = (struct item){ITEM_ARP_REPLY, 0};
        return true;
    }
    for (unsigned i = 0; i < TP_HOST_MAX_NEIGHBORS; i++) {
        const struct neighbor *n = &host->neighbors[i];
        if (n->ip != 0 && !n->resolved && n->request_at <= now) {
            *out = (struct item){ITEM_ARP_REQUEST, i};
            return true;
        }
    }
    for (unsigned i = 0; i < TP_HOST_MAX_GROUPS; i++) {
        const struct group_state *g = &host->groups[i];
        if (g->leave_due) {
            *out = (struct item){ITEM_LEAVE, i};
            return true;
        }
        if (g->refs > 0 && g->report_due && g->report_at <= now) {
            *out = (struct item){ITEM_REPORT, i};
            return true;
        }
    }
    return false;
}

static size_t write_item(struct tp_host *host, const struct item *it, uint8_t *buf)
{
    const struct arp_reply *r;
    const struct group_state *g;
    switch (it->kind) {
    case ITEM_ARP_REPLY:
        r = &host->replies[it->index];
        return write_arp(host, buf, 2, r->mac, r->vlan, r->ip);
    case ITEM_ARP_REQUEST:
        return write_arp(host, buf, 1, NULL, host->params.vlan, host->neighbors[it->index].ip);
    case ITEM_LEAVE:
        return write_membership(host, buf, &host->groups[it->index], true, true);
    case ITEM_REPORT:
        g = &host->groups[it->index];
        return write_membership(host, buf, g, false, g->unsolicited > 0);
    default:
        return 0;
    }
}

/*
 * The item is done with: its frame went out (sent, counted) or was given up. Either way the state
 * moves on as RFC 3376 and 826 say after a send. Checks the item is still what was written, in
 * case a caller changed the host between writing and settling.
 */
static void settle(struct tp_host *host, const struct item *it, uint64_t now, bool sent)
{
    struct tp_host_counters *c = &host->counters;
    struct group_state *g = &host->groups[it->index];
    switch (it->kind) {
    case ITEM_ARP_REPLY:
        if (it->index < host->n_replies) {
            host->n_replies--;
            memmove(&host->replies[it->index], &host->replies[it->index + 1],
                    (host->n_replies - it->index) * sizeof(host->replies[0]));
        }
        break;
    case ITEM_ARP_REQUEST:
        host->neighbors[it->index].request_at = now + host->params.tsc_hz;
        c->arp_sent += sent;
        break;
    case ITEM_LEAVE:
        if (g->leave_due) {
            *g = (struct group_state){0};
            c->igmp_leaves += sent;
        }
        break;
    case ITEM_REPORT:
        if (g->refs > 0 && g->report_due) {
            g->report_due = false;
            if (g->unsolicited > 0 && --g->unsolicited > 0) {
                /* RFC 3376 Unsolicited Report Interval: 1 s. */
                g->report_due = true;
                g->report_at = now + host->params.tsc_hz;
            }
            c->igmp_reports += sent;
        }
        break;
    default:
        break;
    }
}

size_t tp_host_next_frame(struct tp_host *host, uint64_t now_tsc, uint8_t *buf, size_t cap)
{
    host->written.kind = ITEM_NONE;
    if (cap < TP_HOST_FRAME_MAX)
        return 0;
    if (host->older_querier && now_tsc >= host->older_querier_until)
        host->older_querier = false;
    struct item it;
    if (!first_due(host, now_tsc, &it)) {
        host->tx_failing = false; /* nothing waits: a later failure starts a new count */
        return 0;
    }
    if (host->tx_failing &&
        now_tsc - host->tx_failing_since >= TP_HOST_TX_GIVE_UP_MS * host->params.tsc_hz / 1000) {
        /* The port has taken nothing for too long: what is due now would be late anyway. */
        do {
            settle(host, &it, now_tsc, false);
            host->counters.tx_given_up++;
        } while (first_due(host, now_tsc, &it));
        host->tx_failing = false;
        return 0;
    }
    host->written = it;
    return write_item(host, &it, buf);
}

void tp_host_frame_sent(struct tp_host *host, uint64_t now_tsc, bool sent)
{
    struct item it = host->written;
    if (it.kind == ITEM_NONE)
        return;
    host->written.kind = ITEM_NONE;
    if (sent) {
        settle(host, &it, now_tsc, true);
        host->tx_failing = false;
        return;
    }
    host->counters.tx_retries++;
    if (!host->tx_failing) {
        host->tx_failing = true;
        host->tx_failing_since = now_tsc;
    }
}

int tp_host_resolve(struct tp_host *host, uint32_t ip, uint64_t now_tsc, uint8_t mac[6])
{
    struct neighbor *n = find_neighbor(host, ip);
    if (n == NULL) {
        n = find_neighbor(host, 0);
        if (n == NULL)
            return -ENOSPC;
        *n = (struct neighbor){.ip = ip, .request_at = now_tsc};
    }
    if (!n->resolved)
        return -EAGAIN;
    memcpy(mac, n->mac, 6);
    return 0;
}

const struct tp_host_counters *tp_host_counters(const struct tp_host *host)
{
    return &host->counters;
}
