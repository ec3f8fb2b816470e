/* Terminal rendering of books: see render.h. */
#include "render.h"

#include <inttypes.h>
#include <string.h>

#include "tickplane/tickplane.h"

/* One side's level i as (qty, price) strings; blanks if the side is shorter. */
static void level(const json_t *side, size_t i, char *qty, char *price, size_t size)
{
    const json_t *lv = json_array_get(side, i);
    qty[0] = price[0] = '\0';
    if (!json_is_object(lv))
        return;
    snprintf(qty, size, "%" JSON_INTEGER_FORMAT, json_integer_value(json_object_get(lv, "qty")));
    tp_format_price(json_integer_value(json_object_get(lv, "price9")), TP_PRICE_NULL, price, size);
}

void tp_render_state(const json_t *obj, bool with_reason, char *out, size_t size)
{
    const char *state = json_string_value(json_object_get(obj, "state"));
    const char *status = json_string_value(json_object_get(obj, "status"));
    if (state == NULL) /* an older daemon, or not scanned yet: the flags */
        state = json_is_true(json_object_get(obj, "stale"))        ? "STALE"
                : json_is_true(json_object_get(obj, "recovering")) ? "RECOVERING"
                : status != NULL && (strcmp(status, "halted") == 0 || strcmp(status, "paused") == 0)
                    ? "HALTED"
                    : "ok";
    out[0] = '\0';
    if (strcmp(state, "ok") == 0)
        return;
    const char *since = json_string_value(json_object_get(obj, "since"));
    const char *reason = json_string_value(json_object_get(obj, "reason"));
    size_t n = (size_t)snprintf(out, size, "%s", state);
    if (with_reason && since != NULL && n < size)
        n += (size_t)snprintf(out + n, size - n, " since %s", since);
    if (with_reason && reason != NULL && n < size)
        snprintf(out + n, size - n, ": %s", reason);
}

void tp_render_book(FILE *out, const json_t *book)
{
    const json_t *bids = json_object_get(book, "bids"), *asks = json_object_get(book, "asks");
    const char *status = json_string_value(json_object_get(book, "status"));
    char state[320];
    tp_render_state(book, true, state, sizeof(state));
    fprintf(out, "%s (%s)%s%s%s%s\n", json_string_value(json_object_get(book, "symbol")),
            json_string_value(json_object_get(book, "venue")), status ? " " : "",
            status ? status : "", state[0] ? " " : "", state);
    fprintf(out, "%10s %14s | %-14s %10s\n", "BID QTY", "BID", "ASK", "ASK QTY");
    size_t rows = json_array_size(bids) > json_array_size(asks) ? json_array_size(bids)
                                                                : json_array_size(asks);
    for (size_t i = 0; i < rows; i++) {
        char bq[32], bp[32], aq[32], ap[32];
        level(bids, i, bq, bp, sizeof(bq));
        level(asks, i, aq, ap, sizeof(aq));
        fprintf(out, "%10s %14s | %-14s %10s\n", bq, bp, ap, aq);
    }
    if (rows == 0)
        fprintf(out, "%10s %14s | %-14s %10s\n", "", "(empty)", "(empty)", "");
    if (json_is_true(json_object_get(book, "orders_incomplete")))
        fprintf(out, "ORDERS INCOMPLETE: the order-level view lacks orders the venue holds "
                     "(price levels above are unaffected)\n");
}

void tp_render_top_header(FILE *out)
{
    fprintf(out, "%-12s %-8s %10s %14s %14s %10s  %s\n", "SYMBOL", "VENUE", "BID QTY", "BID", "ASK",
            "ASK QTY", "STATE");
}

void tp_render_top_row(FILE *out, const char *venue, const char *symbol, const json_t *book)
{
    char bq[32], bp[32], aq[32], ap[32];
    level(json_object_get(book, "bids"), 0, bq, bp, sizeof(bq));
    level(json_object_get(book, "asks"), 0, aq, ap, sizeof(aq));
    if (book == NULL)
        strcpy(bp, "?");
    char state[320] = "";
    if (book != NULL)
        tp_render_state(book, false, state, sizeof(state));
    fprintf(out, "%-12s %-8s %10s %14s %14s %10s%s%s\n", symbol, venue, bq, bp, ap, aq,
            state[0] ? "  " : "", state);
}
