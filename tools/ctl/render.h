/*
 * Terminal rendering for tickplanectl: one instrument's book side by side and top-of-book rows
 * for the live screen, prices by libtickplane's tp_format_price as every tool prints them. Pure
 * functions of the JSON the daemon returns, so tests can check the exact text.
 */
#ifndef TP_CTL_RENDER_H
#define TP_CTL_RENDER_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* The book object ({"symbol", "venue", "status", "bids": [...], "asks": [...]}). */
void tp_render_book(FILE *out, const json_t *book);

/* Header and one row of the top-of-book screen (book of depth 1, or NULL + symbol if missing). */
void tp_render_top_header(FILE *out);
void tp_render_top_row(FILE *out, const char *venue, const char *symbol, const json_t *book);

#endif /* TP_CTL_RENDER_H */
