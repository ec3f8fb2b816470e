/*
 * One multicast line of a channel (A or B of an incremental, snapshot or definition feed), as
 * config.h's channels and each venue's own channel section (venues/config_<venue>.h) hold it.
 */
#ifndef TP_CONFIG_LINE_H
#define TP_CONFIG_LINE_H

#include <stdbool.h>
#include <stdint.h>

struct tp_cfg_line {
    bool present;
    uint32_t group;   /* multicast destination address */
    uint16_t port;    /* UDP destination port */
    int16_t vlan;     /* 802.1Q VLAN id, -1 = untagged / any */
    uint32_t source;  /* SSM source address, 0 = any */
    uint16_t rx_port; /* index into tp_config.ports */
};

enum { TP_CFG_LINE_A = 0, TP_CFG_LINE_B = 1 };

#endif /* TP_CONFIG_LINE_H */
