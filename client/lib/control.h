/*
 * The library's side of the daemon's control socket (control/socket/protocol.md): one UNIX
 * stream connection, requests as JSON lines, each answered by one reply line carrying the same
 * "id". Calls block until the reply (bounded by TP_CONTROL_TIMEOUT_MS): they run on subscribe,
 * never on the poll path. Unsolicited {"event": ...} lines met while waiting, or read by
 * tp_ctl_link_drain, are handed to the caller's event function.
 */
#ifndef TP_CLIENT_CONTROL_H
#define TP_CLIENT_CONTROL_H

#include <jansson.h>
#include <stddef.h>

#define TP_CONTROL_TIMEOUT_MS 5000
#define TP_CONTROL_LINE_MAX   65536 /* longest reply line accepted */

typedef void (*tp_ctl_event_fn)(void *ctx, json_t *event);

struct tp_ctl_link {
    int fd; /* -1: not connected */
    long long next_id;
    tp_ctl_event_fn on_event;
    void *event_ctx;
    size_t in_len;
    char *in; /* TP_CONTROL_LINE_MAX bytes of unparsed input */
};

/* Connect to the socket at path. 0, or -errno with a reason in err. */
int tp_ctl_link_open(struct tp_ctl_link *l, const char *path, char *err, size_t err_len);

/* Close the connection (the daemon then drops every subscription made through it). */
void tp_ctl_link_close(struct tp_ctl_link *l);

/*
 * Send request (an object; "id" is added; the reference is taken) and wait for its reply.
 * 0 with *reply (the caller's reference) whatever "ok" says; -ENOTCONN (connection lost, then
 * closed), -ETIMEDOUT or -ENOMEM, with a reason in err.
 */
int tp_ctl_link_call(struct tp_ctl_link *l, json_t *request, json_t **reply, char *err,
                     size_t err_len);

/* Read what is waiting without blocking and hand events over. 0, or -ENOTCONN. */
int tp_ctl_link_drain(struct tp_ctl_link *l);

#endif /* TP_CLIENT_CONTROL_H */
