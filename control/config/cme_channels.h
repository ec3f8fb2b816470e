/*
 * Reader for CME's channel configuration file (config.xml): channels, each with its feeds
 * (I = incremental, N = instrument replay, S = snapshot, SMBO = MBO snapshot) on A/B connections
 * with the multicast group, UDP port and the source host for source-specific multicast.
 *
 * Why a small parser here rather than libxml2: the file uses a tiny, fixed subset of XML (elements,
 * attributes, text, the XML declaration, comments), the daemon must not grow a large dependency for
 * it, and re-reading the operator's unmodified file at every reload is simpler to run than a
 * converter step. The parser is strict: it checks the whole document (well-formed nesting, quoting,
 * entities, no DOCTYPE/CDATA, bounded sizes) and reports the line of the first problem; it never
 * reads outside the buffer.
 */
#ifndef TP_CME_CHANNELS_H
#define TP_CME_CHANNELS_H

#include <stddef.h>
#include <stdint.h>

#define TP_CME_MAX_CONNECTIONS 16
#define TP_CME_MAX_FILE_BYTES  (16u << 20) /* refuse larger files */

struct tp_cme_connection {
    char id[32];       /* e.g. "310IA" */
    char feed_type[8]; /* "I", "N", "S", "SMBO", ... */
    char protocol[16]; /* "UDP/IP" (others are listed but not used) */
    uint32_t ip;       /* multicast group, host byte order */
    uint32_t host_ip;  /* SSM source, host byte order, 0 if absent */
    uint16_t port;     /* UDP port */
    char feed;         /* 'A' or 'B' */
};

struct tp_cme_channel {
    uint32_t id;
    char label[128];
    unsigned n_connections;
    struct tp_cme_connection connections[TP_CME_MAX_CONNECTIONS];
};

/*
 * Parse the whole document in xml[0..len) and return channel `id` in *out.
 * Returns 0, -ENOENT if the document is valid but has no such channel, -EINVAL if the document is
 * malformed (err says where and what; err is always NUL-terminated).
 */
int tp_cme_channel_find(const char *xml, size_t len, uint32_t id, struct tp_cme_channel *out,
                        char *err, size_t err_size);

/* Same from a file (-errno if it cannot be read, -EFBIG if over TP_CME_MAX_FILE_BYTES). */
int tp_cme_channel_load(const char *file, uint32_t id, struct tp_cme_channel *out, char *err,
                        size_t err_size);

/* The connection of feed type ("I", "S", "N") and feed ('A'/'B') over UDP, or NULL. */
const struct tp_cme_connection *tp_cme_channel_feed(const struct tp_cme_channel *ch,
                                                    const char *feed_type, char feed);

#endif /* TP_CME_CHANNELS_H */
