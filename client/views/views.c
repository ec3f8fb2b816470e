/* Built-in views (see views.h). */
#include "views.h"

#include <string.h>

uint32_t tp_view_sources(uint32_t topic)
{
    switch (topic) {
    case TP_TOPIC_DEPTH:
        return TP_TOPIC_BIT(TP_TOPIC_DEPTH);
    case TP_TOPIC_TOP:
        return TP_TOPIC_BIT(TP_TOPIC_DEPTH) | TP_TOPIC_BIT(TP_TOPIC_TOP);
    case TP_TOPIC_TRADES:
    case TP_TOPIC_ORDERS:
    case TP_TOPIC_STATUS:
    case TP_TOPIC_DEFINITIONS:
        return TP_TOPIC_BIT(topic);
    default:
        return 0;
    }
}

uint32_t tp_view_record_topics(uint32_t record_topic)
{
    if (record_topic == TP_RECORD_ORDER_DEPTH)
        return TP_TOPIC_BIT(TP_TOPIC_ORDERS) | TP_TOPIC_BIT(TP_TOPIC_DEPTH);
    return TP_TOPIC_BIT(record_topic);
}

static int same_top(const struct tp_top_of_book *a, const struct tp_top_of_book *b)
{
    return a->bid_price == b->bid_price && a->bid_qty == b->bid_qty &&
           a->ask_price == b->ask_price && a->ask_qty == b->ask_qty &&
           a->bid_orders == b->bid_orders && a->ask_orders == b->ask_orders;
}

/* TOP: deliver the best bid/offer only when it differs from what this reader last delivered. */
static int top_view(const struct tp_view_input *in, struct tp_event *out)
{
    struct tp_top_of_book top;
    if (in->source_topic == TP_TOPIC_TOP)
        top = in->decoded->u.top;
    else if (in->book != NULL)
        tp_local_book_top(in->book, &top);
    else
        return 0;
    if (in->book != NULL) {
        if (same_top(&top, &in->book->last_top))
            return 0;
        in->book->last_top = top;
        tp_local_book_view(in->book, &out->book);
    }
    out->u.top = top;
    return 1;
}

int tp_view_run(uint32_t topic, const struct tp_view_input *in, struct tp_event *out)
{
    if ((tp_view_sources(topic) & TP_TOPIC_BIT(in->source_topic)) == 0)
        return 0;
    *out = *in->decoded;
    out->topic = topic;
    switch (topic) {
    case TP_TOPIC_DEPTH:
        if (in->book != NULL)
            tp_local_book_view(in->book, &out->book);
        return 1;
    case TP_TOPIC_TOP:
        memset(&out->u, 0, sizeof(out->u));
        return top_view(in, out);
    default:
        return 1; /* TRADES, ORDERS, STATUS, DEFINITIONS: as decoded */
    }
}

void tp_view_resync_event(const struct tp_local_book *b, uint32_t instrument_id,
                          struct tp_event *out)
{
    memset(out, 0, sizeof(*out));
    out->instrument_id = instrument_id;
    out->flags = TP_EVENT_F_RESYNC | TP_EVENT_F_END_OF_EVENT;
    tp_local_book_view(b, &out->book);
}
