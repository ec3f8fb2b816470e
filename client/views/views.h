/*
 * Built-in views: each turns one decoded published event into the event of its topic, on the
 * reader's thread (as Babl runs transformers on the session-container thread), so one published
 * event serves every topic without the writer rendering each one.
 *
 *   DEPTH        BookUpdate (or an OrderEvent's level changes) -> the changes plus the reader's
 *                book after them;
 *   TOP          BookUpdate (or a published TopOfBook) -> best bid/offer, only when it changed;
 *   TRADES, ORDERS, STATUS, DEFINITIONS  -> the decoded event as is.
 *
 * User transformers (tp_add_transformer) sit beside these in libtickplane and see the raw record.
 */
#ifndef TP_VIEWS_H
#define TP_VIEWS_H

#include <stdint.h>

#include "local_book.h"
#include "tickplane/tickplane.h"

/* What a built-in view gets: the decoded event and, for DEPTH/TOP, the reader's book. */
struct tp_view_input {
    const struct tp_event *decoded; /* common fields and the union of its source topic */
    int source_topic;               /* topic of the published message (tp_decode_tpout) */
    struct tp_local_book *book;     /* NULL unless the instrument is watched at DEPTH or TOP */
};

/* Record topics each built-in subscription topic consumes (TP_TOPIC_BIT mask). */
uint32_t tp_view_sources(uint32_t topic);

/*
 * The record topics a record's tag stands for (TP_TOPIC_BIT mask): its own, or ORDERS and DEPTH
 * for a TP_RECORD_ORDER_DEPTH. A topic is fed by a record when its sources meet this mask.
 */
uint32_t tp_view_record_topics(uint32_t record_topic);

/*
 * Run built-in view `topic` on one input. Returns 1 with *out filled (topic set) when the view
 * produces an event, 0 when it has nothing to say (e.g. TOP unchanged).
 */
int tp_view_run(uint32_t topic, const struct tp_view_input *in, struct tp_event *out);

/* A DEPTH (and TOP, if changed) event for a book just reloaded from the state table. */
void tp_view_resync_event(const struct tp_local_book *b, uint32_t instrument_id,
                          struct tp_event *out);

#endif /* TP_VIEWS_H */
