/*
 * Terminal rendering for tickplanectl: one instrument's book side by side and top-of-book rows
 * for the live screen, prices by libtickplane's tp_format_price as every tool prints them. Pure
 * functions of the JSON the daemon returns, so tests can check the exact text.
 */
#ifndef TP_CTL_RENDER_H
#define TP_CTL_RENDER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * What an operator must not miss about a book (an instruments or book object): "" for a healthy
 * one, else "STALE", "RECOVERING" or "HALTED" (from "state", or from the "stale", "recovering"
 * and "status" fields); with_reason adds " since TIME: REASON" where the daemon gives them.
 */
void tp_render_state(const json_t *obj, bool with_reason, char *out, size_t size);

/* The book object ({"symbol", "venue", "status", "bids": [...], "asks": [...]}), its state
 * (tp_render_state) after the status. */
void tp_render_book(FILE *out, const json_t *book);

/* Header and one row of the top-of-book screen (book of depth 1, or NULL + symbol if missing);
 * a book that is not healthy has its state at the end of the row. */
void tp_render_top_header(FILE *out);
void tp_render_top_row(FILE *out, const char *venue, const char *symbol, const json_t *book);

#endif /* TP_CTL_RENDER_H */
