/*
 * tpout message -> struct tp_event, with the generated flyweights (tpout_sbe.h).
 *
 * Every message is checked before a field is read: the SBE header (schema id, block length),
 * the root block against the record length, each group entry against what remains. A message
 * that fails is reported as -EBADMSG and must be counted and skipped by the caller.
 */
#ifndef TP_VIEWS_DECODE_H
#define TP_VIEWS_DECODE_H

#include <stdint.h>

#include "tickplane/tickplane.h"

/*
 * Decode the tpout message at payload (SBE header first) into ev: the common event header, the
 * union member of its topic, ev->sbe/sbe_length. BookUpdate level changes go to
 * changes[0..max_changes) and ev->u.depth. Returns the message's topic (enum tp_topic:
 * BookUpdate DEPTH, TopOfBook TOP, Trade TRADES, OrderEvent ORDERS, InstrumentDefinition
 * DEFINITIONS, InstrumentStatus/Statistics/ChannelEvent STATUS) or -EBADMSG. An OrderEvent that
 * carries level changes (version 3, order-only books) returns TP_RECORD_ORDER_DEPTH: the order in
 * ev->u.order, its *n_levels level changes in changes[] (the caller makes the DEPTH event of them).
 */
int tp_decode_tpout(const void *payload, uint32_t length, struct tp_event *ev,
                    struct tp_level_change *changes, uint32_t max_changes, uint32_t *n_levels);

#endif /* TP_VIEWS_DECODE_H */
