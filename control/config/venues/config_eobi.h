/*
 * What a Eurex T7 EOBI channel's config holds besides every channel's fields (config.h): the T7
 * release of its layouts. Read by config_eobi.c.
 */
#ifndef TP_CONFIG_EOBI_H
#define TP_CONFIG_EOBI_H

#include <stdint.h>

struct tp_cfg_eobi_channel {
    uint8_t release; /* "release", enum tp_eobi_release (default: the build's -Deobi_release) */
};

#endif /* TP_CONFIG_EOBI_H */
