/*
 * net_bytes.h - big-endian (network order) loads and stores at any alignment.
 *
 * Wire formats (IPv4, UDP, MoldUDP64, ITCH) are big-endian and their fields are not aligned.
 * memcpy into a local compiles to one unaligned load plus a byte swap on x86-64 and arm64, so
 * these helpers cost nothing over hand-written casts and stay free of undefined behaviour.
 * Header only; no dependencies beyond the C library.
 */
#ifndef TP_NET_BYTES_H
#define TP_NET_BYTES_H

#include <stdint.h>
#include <string.h>

static inline uint16_t tp_load_be16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, sizeof(v));
    return __builtin_bswap16(v);
}

static inline uint32_t tp_load_be32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, sizeof(v));
    return __builtin_bswap32(v);
}

/* 48-bit big-endian unsigned (ITCH timestamps: ns since midnight). */
static inline uint64_t tp_load_be48(const uint8_t *p)
{
    return ((uint64_t)tp_load_be16(p) << 32) | tp_load_be32(p + 2);
}

static inline uint64_t tp_load_be64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
    return __builtin_bswap64(v);
}

static inline void tp_store_be16(uint8_t *p, uint16_t v)
{
    v = __builtin_bswap16(v);
    memcpy(p, &v, sizeof(v));
}

static inline void tp_store_be32(uint8_t *p, uint32_t v)
{
    v = __builtin_bswap32(v);
    memcpy(p, &v, sizeof(v));
}

/* Stores the low 48 bits of v; higher bits are dropped (the wire field has no room for them). */
static inline void tp_store_be48(uint8_t *p, uint64_t v)
{
    tp_store_be16(p, (uint16_t)(v >> 32));
    tp_store_be32(p + 2, (uint32_t)v);
}

static inline void tp_store_be64(uint8_t *p, uint64_t v)
{
    v = __builtin_bswap64(v);
    memcpy(p, &v, sizeof(v));
}

#endif /* TP_NET_BYTES_H */
