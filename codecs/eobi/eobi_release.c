/*
 * eobi_release.c - telling T7 releases apart and converting packets between them (see
 * eobi_release.h).
 */
#include "eobi_release.h"

/* Layout lengths by release and TemplateID - TEMPLATE_BASE (0: no such template): the release
 * check runs on every packet, so it looks them up rather than switching. */
#define TEMPLATE_BASE                 13000
#define TEMPLATE_SPAN                 1000
#define LENGTH_ENTRY(T, M, NAME, LEN) [(T)-TEMPLATE_BASE] = (LEN),
static const uint8_t layout_lengths[TP_EOBI_RELEASES][TEMPLATE_SPAN] = {
    [TP_EOBI_RELEASE_6_0] = {TP_EOBI_MESSAGES(LENGTH_ENTRY)},
    [TP_EOBI_RELEASE_7_0] = {TP_EOBI70_MESSAGES(LENGTH_ENTRY)},
};

/* Where InstrumentSummary counts its entries, and their length, by release. */
static const struct {
    uint8_t count_offset;
    uint8_t entry_len;
} entry_layouts[TP_EOBI_RELEASES] = {
    [TP_EOBI_RELEASE_6_0] = {39, TP_EOBI_MD_ENTRY_LEN},
    [TP_EOBI_RELEASE_7_0] = {TP_EOBI70_NO_MD_ENTRIES_OFFSET, TP_EOBI70_MD_ENTRY_LEN},
};

static inline size_t layout(enum tp_eobi_release r, uint16_t template_id)
{
    unsigned t = (unsigned)template_id - TEMPLATE_BASE;
    return t < TEMPLATE_SPAN ? layout_lengths[r][t] : 0;
}

static inline size_t needed(enum tp_eobi_release r, const uint8_t *msg, size_t len)
{
    uint16_t template_id = tp_eobi_template_id(msg);
    size_t need = layout(r, template_id);
    if (template_id == TP_EOBI_INSTRUMENT_SUMMARY && len >= need)
        need += (size_t)msg[entry_layouts[r].count_offset] * entry_layouts[r].entry_len;
    return need;
}

static inline int fits(enum tp_eobi_release r, const uint8_t *msg, size_t len)
{
    size_t need = needed(r, msg, len);
    return need != 0 && len >= need && len <= ((need + 7) & ~(size_t)7);
}

size_t tp_eobi_release_needed(enum tp_eobi_release r, const uint8_t *msg, size_t len)
{
    return needed(r, msg, len);
}

int tp_eobi_release_check_message(enum tp_eobi_release r, const uint8_t *msg, size_t len)
{
    if (len < TP_EOBI_MESSAGE_HEADER_LEN || tp_eobi_body_len(msg) != len)
        return -EBADMSG;
    size_t need = needed(r, msg, len);
    if (need == 0)
        return -ENOMSG;
    return len >= need ? tp_eobi_template_id(msg) : -EBADMSG;
}

int tp_eobi_release_fits(enum tp_eobi_release r, const uint8_t *msg, size_t len)
{
    return fits(r, msg, len);
}

/* The releases whose layout a message fits, one bit each. */
static inline unsigned fitting(const uint8_t *msg, size_t len)
{
    unsigned mask = 0;
    for (unsigned r = 0; r < TP_EOBI_RELEASES; r++)
        mask |= (unsigned)fits((enum tp_eobi_release)r, msg, len) << r;
    return mask;
}

int tp_eobi_release_check(enum tp_eobi_release r, const uint8_t *pkt, size_t len,
                          enum tp_eobi_release *other)
{
    const unsigned every = (1u << TP_EOBI_RELEASES) - 1;
    struct tp_eobi_packet p;
    struct tp_eobi_msg m;
    if (tp_eobi_packet_init(&p, pkt, len) < 0)
        return 0;
    /* A packet is of one release: the first message that fits some releases only decides. */
    while (tp_eobi_packet_next(&p, &m) == 1) {
        unsigned mask = fitting(m.data, m.len);
        if (mask == 0 || mask == every)
            continue;
        if (mask & 1u << r)
            return 0;
        *other = (enum tp_eobi_release)__builtin_ctz(mask);
        return -EPROTO;
    }
    return 0;
}

/* A bare message header: what the 6.0 check refuses as shorter than its layout. */
static size_t put_refused(uint8_t *out, const struct tp_eobi_msg *m)
{
    tp_eobi_store16(out, TP_EOBI_MESSAGE_HEADER_LEN);
    tp_eobi_store16(out + 2, m->template_id);
    tp_eobi_store32(out + 4, m->msg_seq_num);
    return TP_EOBI_MESSAGE_HEADER_LEN;
}

/* InstrumentSummary 7.0 -> 6.0, entries included; bytes written or -ERANGE. */
static int instrument_summary_to_v6(const uint8_t *msg, uint8_t *out, size_t cap)
{
    struct tp_eobi_instrument_summary v;
    if (tp_eobi70_instrument_summary_decode(msg, &v) < 0)
        return -ERANGE;
    unsigned entries = v.no_md_entries;
    v.no_md_entries = 0;
    int n = tp_eobi_instrument_summary_encode(out, cap, &v, tp_eobi_msg_seq_num(msg));
    if (n < 0)
        return n;
    size_t len = (size_t)n;
    for (unsigned e = 0; e < entries; e++) {
        struct tp_eobi_md_entry entry;
        if (tp_eobi70_md_entry_decode(msg +
                                          layout(TP_EOBI_RELEASE_7_0, TP_EOBI_INSTRUMENT_SUMMARY) +
                                          (size_t)e * TP_EOBI70_MD_ENTRY_LEN,
                                      &entry) < 0 ||
            tp_eobi_md_entry_encode(out, cap, &len, &entry) < 0)
            return -ERANGE;
    }
    return (int)len;
}

/* One 7.0 message that fits its layout -> 6.0 at out; bytes written or a negative errno. */
static int message_to_v6(const struct tp_eobi_msg *m, uint8_t *out, size_t cap)
{
    int rc;
    switch (m->template_id) {
#define TP_EOBI70_TO_V6_CASE(T, M, NAME, LEN)                                                      \
    case T: {                                                                                      \
        struct tp_eobi_##M v;                                                                      \
        rc = tp_eobi70_##M##_decode(m->data, &v);                                                  \
        return rc < 0 ? rc : tp_eobi_##M##_encode(out, cap, &v, m->msg_seq_num);                   \
    }
        TP_EOBI70_MESSAGES(TP_EOBI70_TO_V6_CASE)
#undef TP_EOBI70_TO_V6_CASE
    default:
        return -ENOMSG;
    }
}

int tp_eobi_packet_to_v6(enum tp_eobi_release r, const uint8_t *pkt, size_t len, uint8_t *out,
                         size_t cap)
{
    struct tp_eobi_packet p;
    struct tp_eobi_msg m;
    if (tp_eobi_packet_init(&p, pkt, len) < 0 || cap < len)
        return -EBADMSG;
    if (r == TP_EOBI_RELEASE_6_0) {
        memcpy(out, pkt, len);
        return (int)len;
    }
    size_t at = tp_eobi_body_len(pkt);
    memcpy(out, pkt, at);
    while (tp_eobi_packet_next(&p, &m) == 1) {
        size_t need = needed(r, m.data, m.len);
        int n;
        if (need == 0) {
            memcpy(out + at, m.data, m.len);
            n = m.len;
        } else if (m.len < need) {
            n = -EBADMSG;
        } else if (m.template_id == TP_EOBI_INSTRUMENT_SUMMARY) {
            n = instrument_summary_to_v6(m.data, out + at, cap - at);
        } else {
            n = message_to_v6(&m, out + at, cap - at);
        }
        at += n < 0 ? put_refused(out + at, &m) : (size_t)n;
    }
    return (int)at;
}

/* One 6.0 message that holds its layout -> release 7.0 at out. */
static int message_from_v6(const struct tp_eobi_msg *m, uint8_t *out, size_t cap)
{
    switch (m->template_id) {
#define TP_EOBI_GEN_READ_FIELD(M, f, name, kind, off) TP_EOBI_READ_INTO_##kind(M, f)
#define TP_EOBI_READ_INTO(M, f)                       v.f = tp_eobi_##M##_##f(m->data);
#define TP_EOBI_READ_INTO_U8(M, f)                    TP_EOBI_READ_INTO(M, f)
#define TP_EOBI_READ_INTO_U16(M, f)                   TP_EOBI_READ_INTO(M, f)
#define TP_EOBI_READ_INTO_U32(M, f)                   TP_EOBI_READ_INTO(M, f)
#define TP_EOBI_READ_INTO_I32(M, f)                   TP_EOBI_READ_INTO(M, f)
#define TP_EOBI_READ_INTO_U64(M, f)                   TP_EOBI_READ_INTO(M, f)
#define TP_EOBI_READ_INTO_I64(M, f)                   TP_EOBI_READ_INTO(M, f)
#define TP_EOBI_READ_INTO_PRICE(M, f)                 TP_EOBI_READ_INTO(M, f)
#define TP_EOBI_READ_INTO_PAD1(M, f)
#define TP_EOBI_READ_INTO_PAD2(M, f)
#define TP_EOBI_READ_INTO_PAD3(M, f)
#define TP_EOBI_READ_INTO_PAD4(M, f)
#define TP_EOBI_READ_INTO_PAD6(M, f)
#define TP_EOBI_READ_INTO_PAD7(M, f)
#define TP_EOBI70_FROM_V6_CASE(T, M, NAME, LEN)                                                    \
    case T: {                                                                                      \
        struct tp_eobi_##M v;                                                                      \
        memset(&v, 0, sizeof(v));                                                                  \
        TP_EOBI_FIELDS_##M(TP_EOBI_GEN_READ_FIELD,                                                 \
                           M) return tp_eobi70_##M##_encode(out, cap, &v, m->msg_seq_num);         \
    }
        TP_EOBI70_MESSAGES(TP_EOBI70_FROM_V6_CASE)
    default:
        return -ENOMSG;
    }
}

/*
 * Appends the entries of the 6.0 InstrumentSummary m to its 7.0 fixed part (len bytes at out,
 * NoMDEntries already set) and sets its BodyLen: the message's bytes or -ENOSPC.
 */
static int md_entries_from_v6(const struct tp_eobi_msg *m, uint8_t *out, size_t len, size_t cap)
{
    unsigned entries = tp_eobi_instrument_summary_no_md_entries(m->data);
    size_t need = len + (size_t)entries * TP_EOBI70_MD_ENTRY_LEN;
    if (need > cap || need > UINT16_MAX)
        return -ENOSPC;
    for (unsigned e = 0; e < entries; e++) {
        const uint8_t *src = tp_eobi_md_entry(m->data, e);
        struct tp_eobi_md_entry entry = {
            .md_entry_px = tp_eobi_md_entry_md_entry_px(src),
            .md_entry_size = tp_eobi_md_entry_md_entry_size(src),
            .md_entry_type = tp_eobi_md_entry_md_entry_type(src),
            .trade_condition = tp_eobi_md_entry_trade_condition(src),
        };
        tp_eobi70_md_entry_put(out + len + (size_t)e * TP_EOBI70_MD_ENTRY_LEN, &entry);
    }
    tp_eobi_store16(out, (uint16_t)need);
    return (int)need;
}

int tp_eobi_packet_from_v6(enum tp_eobi_release r, const uint8_t *pkt, size_t len, uint8_t *out,
                           size_t cap)
{
    struct tp_eobi_packet p;
    struct tp_eobi_msg m;
    if (tp_eobi_packet_init(&p, pkt, len) < 0)
        return -EBADMSG;
    if (cap < len)
        return -ENOSPC;
    if (r == TP_EOBI_RELEASE_6_0) {
        memcpy(out, pkt, len);
        return (int)len;
    }
    size_t header = tp_eobi_body_len(pkt);
    memcpy(out, pkt, header);
    size_t at = header;
    int rc;
    while ((rc = tp_eobi_packet_next(&p, &m)) == 1) {
        int check = tp_eobi_check(m.data, m.len);
        int n;
        if (check == -ENOMSG) {
            if (m.len > cap - at)
                return -ENOSPC;
            memcpy(out + at, m.data, m.len);
            n = m.len;
        } else if (check < 0) {
            return -EBADMSG;
        } else {
            n = message_from_v6(&m, out + at, cap - at);
        }
        if (n >= 0 && m.template_id == TP_EOBI_INSTRUMENT_SUMMARY)
            n = md_entries_from_v6(&m, out + at, (size_t)n, cap - at);
        if (n < 0)
            return n;
        at += (size_t)n;
    }
    return rc < 0 ? -EBADMSG : (int)at;
}
