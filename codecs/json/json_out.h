/*
 * json_out.h - the snprintf-style appender the codecs' JSON printers write with.
 *
 * Appends formatted text to a caller buffer and keeps counting once it is full, so a printer
 * returns the length the whole object needs (snprintf's contract) and the caller can retry
 * with a bigger buffer. The buffer stays NUL-terminated while it has room. Header only.
 */
#ifndef TP_JSON_OUT_H
#define TP_JSON_OUT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

struct tp_json_out {
    char *buf;
    size_t cap;
    size_t len; /* bytes the text needs so far, written or not */
};

static inline void tp_json_printf(struct tp_json_out *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static inline void tp_json_printf(struct tp_json_out *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = o->len < o->cap ? o->cap - o->len : 0;
    int n = vsnprintf(room ? o->buf + o->len : NULL, room, fmt, ap);
    va_end(ap);
    if (n > 0)
        o->len += (size_t)n;
}

#endif /* TP_JSON_OUT_H */
