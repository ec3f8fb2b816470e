/*
 * Client side of the control socket for tickplanectl (and tests): connect, send one JSON request
 * line, read reply lines with a timeout. Unsolicited {"event": ...} lines are handed to a callback
 * instead of being taken for the reply.
 */
#ifndef TP_CTL_CLIENT_H
#define TP_CTL_CLIENT_H

#include <jansson.h>
#include <stddef.h>

struct tp_ctl_conn {
    int fd;
    char *buf; /* received, not yet consumed */
    size_t len, cap;
    void (*on_event)(const json_t *event, void *arg); /* NULL: events are dropped */
    void *event_arg;
};

/* 0, or -errno (err says why). */
int tp_ctl_connect(struct tp_ctl_conn *c, const char *socket_path, char *err, size_t err_size);

/* Send request (not consumed) and return the reply, or NULL with err (timeout, closed, bad JSON).
 */
json_t *tp_ctl_call(struct tp_ctl_conn *c, const json_t *request, int timeout_ms, char *err,
                    size_t err_size);

/* The next line of any kind (reply or event), or NULL. */
json_t *tp_ctl_read_line(struct tp_ctl_conn *c, int timeout_ms, char *err, size_t err_size);

void tp_ctl_disconnect(struct tp_ctl_conn *c);

#endif /* TP_CTL_CLIENT_H */
