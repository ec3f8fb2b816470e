/*
 * Rows out as CSV (a header line from the first row's column names) or JSON lines (one object a
 * row), column by column. A price is two columns: the decimal ("153.77", trailing zeros dropped)
 * and its price9 integer (name + "9"); an absent value is empty in CSV, null in JSON.
 */
#ifndef TP_EXPORT_OUT_H
#define TP_EXPORT_OUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct out {
    FILE *f;    /* where columns go: the output, or while the CSV header is not out, memory */
    FILE *dest; /* the output */
    char *first_row;
    size_t first_row_len;
    bool jsonl;
    bool header_done; /* CSV: the header line is out */
    unsigned cols;    /* of the current row */
    char header[8192];
    size_t header_len;
    uint64_t rows;
};

void out_init(struct out *o, FILE *f, bool jsonl);
void out_u64(struct out *o, const char *name, uint64_t v);
void out_i64(struct out *o, const char *name, int64_t v);
void out_str(struct out *o, const char *name, const char *s);
void out_null(struct out *o, const char *name);
/* price9 (INT64_MIN: none) as the decimal `name` and the integer `name`9. */
void out_price(struct out *o, const char *name, int64_t price9);
void out_end(struct out *o);

/* The decimal of a price9 into buf (at least 24 bytes): "-0.000000001", "153.77", "100". */
char *out_price_decimal(int64_t price9, char *buf);

#endif /* TP_EXPORT_OUT_H */
