/*
 * Packet classifier: see classifier.h (the table and the per-frame path are there, inline).
 */
#include "classifier.h"
#include "net_build.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

static uint32_t table_size(uint32_t max_flows)
{
    uint32_t size = 8;
    while (size < 2 * max_flows)
        size <<= 1;
    return size;
}

size_t tp_classifier_memsize(const struct tp_classifier_params *params)
{
    if (params->max_flows == 0 || params->max_flows > (1u << 20))
        return 0;
    size_t size = sizeof(struct tp_classifier) +
                  (size_t)table_size(params->max_flows) * sizeof(struct tp_flow_slot);
    return (size + 63) & ~(size_t)63;
}

int tp_classifier_init(void *mem, const struct tp_classifier_params *params)
{
    if (mem == NULL || tp_classifier_memsize(params) == 0)
        return -EINVAL;
    struct tp_classifier *cls = mem;
    memset(cls, 0, sizeof(*cls));
    uint32_t size = table_size(params->max_flows);
    cls->mask = size - 1;
    cls->max_flows = params->max_flows;
    cls->verify_udp_checksum = params->verify_udp_checksum;
    for (uint32_t i = 0; i < size; i++)
        cls->slots[i] = (struct tp_flow_slot){.key = 0, .line = TP_CLASSIFY_NONE};
    return 0;
}

int tp_classifier_add(struct tp_classifier *cls, uint32_t group, uint16_t port, uint16_t vlan,
                      uint32_t line)
{
    if (line == TP_CLASSIFY_NONE || (vlan > 4094 && vlan != TP_CLASSIFY_ANY_VLAN))
        return -EINVAL;
    uint64_t key = tp_classifier_key(group, port, vlan);
    uint32_t i = tp_classifier_slot(cls, key);
    for (; cls->slots[i].line != TP_CLASSIFY_NONE; i = (i + 1) & cls->mask)
        if (cls->slots[i].key == key)
            return -EEXIST;
    if (cls->flows == cls->max_flows)
        return -ENOSPC;
    cls->slots[i] = (struct tp_flow_slot){.key = key, .line = line};
    cls->flows++;
    if (vlan == TP_CLASSIFY_ANY_VLAN)
        cls->any_vlan_flows++;
    else
        cls->exact_vlan_flows++;
    return 0;
}

int tp_classifier_remove(struct tp_classifier *cls, uint32_t group, uint16_t port, uint16_t vlan)
{
    uint64_t key = tp_classifier_key(group, port, vlan);
    uint32_t i = tp_classifier_slot(cls, key);
    while (cls->slots[i].line != TP_CLASSIFY_NONE && cls->slots[i].key != key)
        i = (i + 1) & cls->mask;
    if (cls->slots[i].line == TP_CLASSIFY_NONE)
        return -ENOENT;
    /* Backward shift (no tombstones): a later entry of the run moves into the hole when the hole
     * lies between its home slot and where it sits, so every probe still ends at an empty slot
     * only after passing its key. */
    uint32_t hole = i;
    for (uint32_t j = (i + 1) & cls->mask; cls->slots[j].line != TP_CLASSIFY_NONE;
         j = (j + 1) & cls->mask) {
        uint32_t home = tp_classifier_slot(cls, cls->slots[j].key);
        if (((j - home) & cls->mask) >= ((j - hole) & cls->mask)) {
            cls->slots[hole] = cls->slots[j];
            hole = j;
        }
    }
    cls->slots[hole] = (struct tp_flow_slot){.key = 0, .line = TP_CLASSIFY_NONE};
    cls->flows--;
    if (vlan == TP_CLASSIFY_ANY_VLAN)
        cls->any_vlan_flows--;
    else
        cls->exact_vlan_flows--;
    return 0;
}

uint32_t tp_classifier_lookup(const struct tp_classifier *cls, const struct tp_flow_key *key)
{
    return tp_classifier_lookup_inline(cls, key);
}

uint32_t tp_classifier_unparsed(struct tp_classifier *cls, int rc)
{
    if (rc == TP_NET_ENOTIPV4 || rc == TP_NET_ENOTUDP)
        cls->counters.not_udp++;
    else
        cls->counters.malformed++;
    return TP_CLASSIFY_NONE;
}

/* RFC 768: a zero checksum means none was computed; otherwise it must match the datagram's. */
uint32_t tp_classifier_checksum(struct tp_classifier *cls, uint32_t line, const uint8_t *frame,
                                size_t len, struct tp_udp_view *v)
{
    tp_net_parse_udp(frame, len, 0, v); /* parsed before: now with the source address */
    if (!tp_udp_checksum_ok(v)) {
        cls->counters.bad_checksum++;
        return TP_CLASSIFY_NONE;
    }
    cls->counters.matched++;
    return line;
}

uint32_t tp_classify_frame(struct tp_classifier *cls, const uint8_t *frame, size_t len,
                           struct tp_udp_view *view)
{
    uint32_t line = tp_classify_frame_offload(cls, frame, len, false, view);
    tp_net_parse_udp(frame, len, 0, view); /* the whole view: the per-frame path fills a part */
    return line;
}

const struct tp_classifier_counters *tp_classifier_counters(const struct tp_classifier *cls)
{
    return &cls->counters;
}
