/*
 * tickplanectl stat: the live view of a running daemon, like AeronStat for Aeron: per channel
 * messages/s and per line packets/s, gaps, re-requests and give-ups; books stale and recovering
 * per venue; per port received packets/s and the NIC's drops (imissed, ierrors, rx_nombuf); the
 * bus publish rate; each consumer's lag, losses and resyncs.
 *
 * Rates are the difference of two `stats` replies over the time between them. tp_stat_view is
 * the machine-readable view (`--json`), tp_stat_render its text; both pure functions of the
 * replies, so tests check them exactly.
 */
#ifndef TP_CTL_STAT_H
#define TP_CTL_STAT_H

#include <jansson.h>
#include <stdio.h>

/*
 * The view from two stats replies `seconds` apart (prev may be NULL: no rates yet):
 * {"interval_s", "channels": [{"name", "messages", "messages_per_s", "gaps", "gap_filled",
 *   "rerequests", "recovered", "given_up", "stale_marks", "lines": [{"line", "packets",
 *   "packets_per_s", "held"}]}], "books": {...}, "ports": [{"name", "ipackets", "rx_per_s",
 *   "imissed", "ierrors", "rx_nombuf"}], "bus": {"published", "published_per_s"},
 *   "consumers": [...]}
 */
json_t *tp_stat_view(const json_t *prev, const json_t *now, double seconds);

/* The view as the terminal screen shows it (no escape codes). */
void tp_stat_render(FILE *out, const json_t *view);

#endif /* TP_CTL_STAT_H */
