/* CSV and JSON lines rows (see export_out.h). */
#include "export_out.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void out_init(struct out *o, FILE *f, bool jsonl)
{
    memset(o, 0, sizeof(*o));
    o->f = o->dest = f;
    o->jsonl = jsonl;
    /* CSV: the first row goes to memory until its columns have named the header. */
    if (!jsonl) {
        FILE *mem = open_memstream(&o->first_row, &o->first_row_len);
        if (mem != NULL)
            o->f = mem;
    }
}

/* Opens a column: its separator and, in JSON, its name; in CSV the first row names it. */
static void column(struct out *o, const char *name)
{
    if (o->jsonl) {
        fprintf(o->f, "%s\"%s\":", o->cols ? "," : "{", name);
    } else {
        if (!o->header_done) {
            int n = snprintf(o->header + o->header_len, sizeof(o->header) - o->header_len, "%s%s",
                             o->cols ? "," : "", name);
            if (n > 0 && (size_t)n < sizeof(o->header) - o->header_len)
                o->header_len += (size_t)n;
        }
        if (o->cols)
            fputc(',', o->f);
    }
    o->cols++;
}

void out_u64(struct out *o, const char *name, uint64_t v)
{
    column(o, name);
    fprintf(o->f, "%" PRIu64, v);
}

void out_i64(struct out *o, const char *name, int64_t v)
{
    column(o, name);
    fprintf(o->f, "%" PRId64, v);
}

void out_null(struct out *o, const char *name)
{
    column(o, name);
    if (o->jsonl)
        fputs("null", o->f);
}

void out_str(struct out *o, const char *name, const char *s)
{
    bool quote = o->jsonl || strpbrk(s, ",\"\n") != NULL;
    column(o, name);
    if (quote)
        fputc('"', o->f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (o->jsonl && (c == '"' || c == '\\'))
            fprintf(o->f, "\\%c", c);
        else if (o->jsonl && (c < 0x20 || c >= 0x7f))
            fprintf(o->f, "\\u%04x", c);
        else if (!o->jsonl && c == '"')
            fputs("\"\"", o->f);
        else
            fputc(c, o->f);
    }
    if (quote)
        fputc('"', o->f);
}

char *out_price_decimal(int64_t price9, char *buf)
{
    uint64_t mag = price9 < 0 ? (uint64_t)0 - (uint64_t)price9 : (uint64_t)price9;
    uint64_t whole = mag / 1000000000u, frac = mag % 1000000000u;
    int n = sprintf(buf, "%s%" PRIu64, price9 < 0 ? "-" : "", whole);
    if (frac) {
        char digits[16];
        sprintf(digits, "%09" PRIu64, frac);
        size_t len = strlen(digits);
        while (len > 0 && digits[len - 1] == '0')
            digits[--len] = 0;
        sprintf(buf + n, ".%s", digits);
    }
    return buf;
}

void out_price(struct out *o, const char *name, int64_t price9)
{
    char buf[32], name9[64];

    snprintf(name9, sizeof(name9), "%s9", name);
    if (price9 == INT64_MIN) {
        out_null(o, name);
        out_null(o, name9);
        return;
    }
    column(o, name);
    fputs(out_price_decimal(price9, buf), o->f);
    out_i64(o, name9, price9);
}

void out_end(struct out *o)
{
    if (o->jsonl)
        fputs("}\n", o->f);
    else
        fputc('\n', o->f);
    if (!o->header_done && !o->jsonl) {
        o->header_done = true;
        if (o->f != o->dest) {
            fclose(o->f);
            fprintf(o->dest, "%.*s\n", (int)o->header_len, o->header);
            fwrite(o->first_row, 1, o->first_row_len, o->dest);
            free(o->first_row);
            o->f = o->dest;
        }
    }
    o->cols = 0;
    o->rows++;
}
