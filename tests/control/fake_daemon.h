/*
 * Test double of the daemon side of the control socket (struct tp_ctl_ops): records the commands
 * the socket sends to the "data plane", can pretend the ring is full, and answers status,
 * instruments (ESZ6, NQZ6 on CME; AAPL on NASDAQ, deliberately unfiltered), one book (ESZ6),
 * reload and metrics with fixed values.
 */
#ifndef TP_TEST_FAKE_DAEMON_H
#define TP_TEST_FAKE_DAEMON_H

#include <stdbool.h>
#include <stddef.h>

#include "ctl_ops.h"

#define MAX_CMDS 256

struct fake_daemon {
    struct tp_ctl_cmd cmds[MAX_CMDS];
    unsigned n_cmds;
    bool ring_full;
    size_t metrics_bytes; /* size of the metrics text (0: a short one) */
    unsigned reloads;
};

extern struct fake_daemon daemon_state;
extern const struct tp_ctl_ops fake_ops;

#endif
