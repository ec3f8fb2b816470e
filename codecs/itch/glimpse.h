/*
 * glimpse.h - Nasdaq GLIMPSE 5.0: the point-in-time snapshot of the TotalView-ITCH 5.0 book.
 *
 * A GLIMPSE session is a SoupBinTCP session (soupbintcp.h) whose sequenced data packets each
 * carry one ITCH 5.0 message: system event, stock directory, trading actions, Reg SHO, and one
 * add order per live order, then the snapshot message 'G', which ends the snapshot. Its field is
 * the MoldUDP64 sequence number of the real-time feed to continue from: the first TotalView-ITCH
 * message the snapshot does not reflect. After 'G' the client logs out.
 *
 * Promise: tp_glimpse_snapshot_seq reads only a message of exactly TP_GLIMPSE_SNAPSHOT_LEN bytes
 * whose type is 'G'. Header only.
 */
#ifndef TP_GLIMPSE_H
#define TP_GLIMPSE_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "soupbintcp.h"

#define TP_GLIMPSE_SNAPSHOT     'G'
#define TP_GLIMPSE_SNAPSHOT_LEN (1 + TP_SOUP_SEQUENCE_LEN)

/*
 * The sequence to continue from, read from a snapshot message: 0, -ENOMSG when the message is
 * not a snapshot message ('G'), -EBADMSG when it is one of the wrong length or content (a
 * sequence of 0 included: MoldUDP64 counts from 1).
 */
static inline int tp_glimpse_snapshot_seq(const uint8_t *msg, size_t len, uint64_t *seq)
{
    if (len == 0 || msg[0] != TP_GLIMPSE_SNAPSHOT)
        return -ENOMSG;
    if (len != TP_GLIMPSE_SNAPSHOT_LEN ||
        tp_soup_numeric(msg + 1, TP_SOUP_SEQUENCE_LEN, seq) != 0 || *seq == 0)
        return -EBADMSG;
    return 0;
}

/* Writes a snapshot message (TP_GLIMPSE_SNAPSHOT_LEN bytes); returns its length or -ENOSPC. */
static inline int tp_glimpse_snapshot_encode(uint8_t *buf, size_t cap, uint64_t seq)
{
    if (cap < TP_GLIMPSE_SNAPSHOT_LEN)
        return -ENOSPC;
    buf[0] = TP_GLIMPSE_SNAPSHOT;
    tp_soup_numeric_set(buf + 1, TP_SOUP_SEQUENCE_LEN, seq);
    return TP_GLIMPSE_SNAPSHOT_LEN;
}

#endif /* TP_GLIMPSE_H */
