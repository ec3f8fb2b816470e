/* Prometheus text exposition: see prometheus.h. */
#include "prometheus.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void tp_prom_buf_init(struct tp_prom_buf *b, char *mem, size_t size)
{
    b->data = mem;
    b->size = size;
    b->len = 0;
    b->overflow = size == 0;
    if (size > 0)
        mem[0] = '\0';
}

static void emit(struct tp_prom_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit(struct tp_prom_buf *b, const char *fmt, ...)
{
    if (b->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->data + b->len, b->size - b->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= b->size - b->len) {
        b->overflow = true;
        b->data[b->len] = '\0'; /* never leave half a line */
        return;
    }
    b->len += (size_t)n;
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Append text to out (sanitized or escaped); false if it does not fit. */
static bool append(char *out, size_t size, size_t *len, const char *text, size_t n, bool escape)
{
    for (size_t i = 0; i < n; i++) {
        char c = text[i];
        const char *rep = NULL;
        char one[2] = {c, '\0'};
        if (escape)
            rep = c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\n' ? "\\n" : one;
        else
            rep = name_char(c) ? one : "_";
        size_t r = strlen(rep);
        if (*len + r + 1 > size)
            return false;
        memcpy(out + *len, rep, r);
        *len += r;
    }
    out[*len] = '\0';
    return true;
}

int tp_prom_split_name(const char *counter_name, const char *prefix, char *family,
                       size_t family_size, char *labels, size_t labels_size)
{
    size_t flen = 0, llen = 0;
    bool any_segment = false;
    family[0] = labels[0] = '\0';
    if (!append(family, family_size, &flen, prefix, strlen(prefix), false))
        return -EINVAL;
    const char *p = counter_name;
    while (*p != '\0') {
        size_t seg = strcspn(p, ".");
        const char *eq = memchr(p, '=', seg);
        if (seg == 0) {
            /* Empty segment ("a..b"): skip. */
        } else if (eq != NULL) {
            size_t klen = (size_t)(eq - p);
            if (klen == 0)
                return -EINVAL;
            for (size_t i = 0; i < klen; i++)
                if (!name_char(p[i]))
                    return -EINVAL;
            if ((llen > 0 && !append(labels, labels_size, &llen, ",", 1, true)) ||
                !append(labels, labels_size, &llen, p, klen, false) || llen + 3 > labels_size)
                return -EINVAL;
            memcpy(labels + llen, "=\"", 3);
            llen += 2;
            if (!append(labels, labels_size, &llen, eq + 1, seg - klen - 1, true) ||
                llen + 2 > labels_size)
                return -EINVAL;
            labels[llen++] = '"';
            labels[llen] = '\0';
        } else {
            if (!append(family, family_size, &flen, "_", 1, false) ||
                !append(family, family_size, &flen, p, seg, false))
                return -EINVAL;
            any_segment = true;
        }
        p += seg;
        if (*p == '.')
            p++;
    }
    return any_segment ? 0 : -EINVAL;
}

/* One counter ready to print: its family and labels, for sorting by family. */
struct prom_row {
    char family[128];
    char labels[256];
    uint64_t value;
    uint32_t order; /* registration order, to keep the sort stable */
};

static int by_family(const void *a, const void *b)
{
    const struct prom_row *x = a, *y = b;
    int c = strcmp(x->family, y->family);
    return c != 0 ? c : (x->order > y->order) - (x->order < y->order);
}

int tp_prom_counters(struct tp_prom_buf *b, const struct tp_counters *c, const char *prefix,
                     const char *instance)
{
    uint32_t n = atomic_load_explicit(&c->count, memory_order_acquire);
    if (n > c->capacity)
        n = c->capacity;
    struct prom_row *rows = calloc(n ? n : 1, sizeof(*rows));
    if (rows == NULL)
        return -ENOMEM;
    uint32_t used = 0;
    for (uint32_t i = 0; i < n; i++) {
        /* The name lives in shared memory: copy it bounded, never trust its terminator. */
        char name[TP_COUNTER_NAME_LEN + 1];
        memcpy(name, c->slots[i].name, TP_COUNTER_NAME_LEN);
        name[TP_COUNTER_NAME_LEN] = '\0';
        struct prom_row *r = &rows[used];
        if (tp_prom_split_name(name, prefix, r->family, sizeof(r->family) - 8, r->labels,
                               sizeof(r->labels)) != 0)
            continue;
        strcat(r->family, "_total");
        r->value = tp_counter_get(&c->slots[i]);
        r->order = i;
        used++;
    }
    qsort(rows, used, sizeof(rows[0]), by_family);
    char inst[160];
    size_t ilen = 0;
    inst[0] = '\0';
    append(inst, sizeof(inst), &ilen, instance, strlen(instance), true);
    for (uint32_t i = 0; i < used; i++) {
        const struct prom_row *r = &rows[i];
        if (i == 0 || strcmp(rows[i - 1].family, r->family) != 0)
            emit(b, "# TYPE %s counter\n", r->family);
        emit(b, "%s{%s%sinstance=\"%s\"} %llu\n", r->family, r->labels, r->labels[0] ? "," : "",
             inst, (unsigned long long)r->value);
    }
    free(rows);
    return (int)used;
}

void tp_prom_histogram(struct tp_prom_buf *b, const char *name, const char *help,
                       const char *labels, const struct tp_histogram *h, double scale)
{
    static const struct {
        const char *q;
        double p;
    } quantiles[] = {
        {"0.5", 50.0}, {"0.9", 90.0}, {"0.99", 99.0}, {"0.999", 99.9}, {"0.9999", 99.99}};
    const char *l = labels ? labels : "", *sep = l[0] ? "," : "";
    /* "{labels}" for the lines that have no quantile label, nothing when there are no labels. */
    char braced[300] = "";
    if (l[0] != '\0')
        snprintf(braced, sizeof(braced), "{%s}", l);
    emit(b, "# HELP %s %s\n# TYPE %s summary\n", name, help, name);
    for (size_t i = 0; i < sizeof(quantiles) / sizeof(quantiles[0]); i++)
        emit(b, "%s{%s%squantile=\"%s\"} %.17g\n", name, l, sep, quantiles[i].q,
             (double)tp_hist_percentile(h, quantiles[i].p) * scale);
    emit(b, "%s_sum%s %.17g\n%s_count%s %llu\n", name, braced, (double)h->sum * scale, name, braced,
         (unsigned long long)h->count);
    emit(b, "# TYPE %s_min gauge\n%s_min%s %.17g\n", name, name, braced,
         h->count ? (double)h->min * scale : 0.0);
    emit(b, "# TYPE %s_max gauge\n%s_max%s %.17g\n", name, name, braced, (double)h->max * scale);
}

void tp_prom_ctl_stats(struct tp_prom_buf *b, const char *instance,
                       const struct tp_ctl_server_stats *s)
{
    const struct {
        const char *name;
        const char *type;
        uint64_t value;
    } rows[] = {
        {"clients", "gauge", s->clients},
        {"subscriptions", "gauge", s->subscriptions},
        {"accepted_total", "counter", s->accepted},
        {"rejected_full_total", "counter", s->rejected_full},
        {"requests_total", "counter", s->requests},
        {"errors_total", "counter", s->errors},
        {"bad_requests_total", "counter", s->bad_requests},
        {"lines_too_long_total", "counter", s->lines_too_long},
        {"rate_limited_total", "counter", s->rate_limited},
        {"refused_total", "counter", s->refused},
        {"slow_disconnects_total", "counter", s->slow_disconnects},
        {"commands_sent_total", "counter", s->commands_sent},
        {"commands_deferred_total", "counter", s->commands_deferred},
        {"commands_lost_total", "counter", s->commands_lost},
    };
    char inst[160];
    size_t ilen = 0;
    inst[0] = '\0';
    append(inst, sizeof(inst), &ilen, instance, strlen(instance), true);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        emit(b, "# TYPE tickplane_control_%s %s\ntickplane_control_%s{instance=\"%s\"} %llu\n",
             rows[i].name, rows[i].type, rows[i].name, inst, (unsigned long long)rows[i].value);
}

int tp_prom_write_file(const char *path, const char *text, size_t len)
{
    char tmp[512];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof(tmp))
        return -ENAMETOOLONG;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            int e = errno ? errno : EIO;
            close(fd);
            unlink(tmp);
            return -e;
        }
        done += (size_t)n;
    }
    /* A scraper must see either the old file or the whole new one. */
    if (close(fd) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return -e;
    }
    return 0;
}
