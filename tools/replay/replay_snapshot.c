/* A capture that starts mid-session, and the GLIMPSE snapshot that completes it: see
 * replay_snapshot.h. */
#include "replay_snapshot.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "glimpse.h"
#include "replay_itch.h"
#include "replay_mold.h"
#include "soupbintcp.h"

int replay_snapshot_load(struct replay *r, const uint8_t *data, size_t len, char *err,
                         size_t err_size)
{
    struct tp_feed_info info = {0};
    size_t at = 0;
    bool logged_in = false;
    while (at < len) {
        struct tp_soup_packet p;
        size_t need;
        int n = tp_soup_frame(data + at, len - at, TP_SOUP_MAX_PACKET, &p, &need);
        if (n <= 0 || tp_soup_check(&p, TP_SOUP_FROM_SERVER) != 0) {
            snprintf(err, err_size, "%s SoupBinTCP packet at byte %zu",
                     n == 0 ? "cut" : "malformed", at);
            return -EBADMSG;
        }
        at += (size_t)n;
        if (p.type == TP_SOUP_LOGIN_REJECTED) {
            snprintf(err, err_size, "the session's login was rejected ('%c')",
                     tp_soup_reject_code(&p));
            return -EBADMSG;
        }
        if (p.type == TP_SOUP_LOGIN_ACCEPTED)
            logged_in = true;
        if (p.type == TP_SOUP_END_OF_SESSION)
            break;
        if (p.type != TP_SOUP_SEQUENCED)
            continue;
        if (!logged_in) {
            snprintf(err, err_size, "sequenced data before login accepted at byte %zu", at);
            return -EBADMSG;
        }
        uint64_t next_seq;
        int rc = tp_glimpse_snapshot_seq(p.payload, p.payload_len, &next_seq);
        if (rc == 0) {
            /* The capture's stream is taken from there: what came before, the snapshot holds. */
            r->snapshot_next_seq = next_seq;
            rc = replay_mold_open(r);
            if (rc != 0)
                snprintf(err, err_size, "cannot prepare the arbiter: %s", strerror(-rc));
            return rc;
        }
        if (rc != -ENOMSG) {
            snprintf(err, err_size, "malformed snapshot message at byte %zu", at);
            return -EBADMSG;
        }
        tp_itch_feed_message(replay_itch_feed(r), p.payload, p.payload_len, &info);
        r->snapshot_messages++;
    }
    snprintf(err, err_size, "the session ends before the snapshot message 'G'");
    return -EBADMSG;
}
