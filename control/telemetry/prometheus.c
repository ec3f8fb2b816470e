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
    bool gauge;
};

static int by_family(const void *a, const void *b)
{
    const struct prom_row *x = a, *y = b;
    int c = strcmp(x->family, y->family);
    return c != 0 ? c : (x->order > y->order) - (x->order < y->order);
}

/*
 * What each family means, for its HELP line (keyed by the family without prefix and suffix;
 * docs/OPERATIONS.md section 5 has the full table). Families not listed get a HELP naming their
 * counter, so no family is ever without one.
 */
static const struct {
    const char *family;
    const char *help;
} helps[] = {
    {"dp_rx_packets", "Frames received by the data lcore"},
    {"dp_tx_frames", "Frames sent by the data lcore (IGMP, ARP, re-requests)"},
    {"dp_tx_dropped", "Frames the port did not take"},
    {"dp_host_frames", "Frames handed to the host side (ARP, IGMP queries)"},
    {"dp_rx_nic_time", "Frames whose receive time is the NIC's stamp"},
    {"dp_ticks", "Counter export passes of the data lcore (100 a second)"},
    {"dp_classify_matched", "Frames of a configured line"},
    {"dp_classify_no_flow", "Frames of no configured line"},
    {"dp_classify_not_udp", "Frames that are not IPv4 UDP"},
    {"dp_classify_malformed", "Frames whose headers do not add up"},
    {"dp_classify_bad_checksum", "Frames with a wrong UDP checksum"},
    {"dp_classify_nic_checksum", "Frames whose UDP checksum the NIC verified"},
    {"dp_publish_records", "Records written to the bus"},
    {"dp_publish_events", "Book events published"},
    {"dp_books_peak_live_orders", "Most live orders the order books held at once"},
    {"dp_books_orders_spilled", "Orders moved to the overflow table"},
    {"dp_books_order_capacity", "Adds refused: the order table was full"},
    {"dp_books_level_capacity", "Adds refused: a side's level array was full"},
    {"dp_reload_detached_instruments", "Instruments a reload stopped feeding"},
    {"dp_reload_apply_errors", "Flows or joins a reload could not apply"},
    {"dp_host_tx_retries", "Host frames sent again after the port refused them"},
    {"dp_host_tx_given_up", "Host frames given up after 1 s of refusals"},
    {"dp_nic_clock_readings", "Readings of the NIC clock"},
    {"dp_nic_clock_dropped", "NIC clock readings dropped (interrupted)"},
    {"dp_nic_clock_steps", "Times the NIC clock went back"},
    {"feed_packets", "Payloads offered to the channel"},
    {"feed_malformed", "Payloads with broken framing"},
    {"feed_messages", "Venue messages applied"},
    {"feed_stale_marks", "Times the channel's books were marked stale"},
    {"arb_gaps", "Gaps left after the gap window: recovery started"},
    {"arb_gap_filled", "Gaps the other line closed within the window"},
    {"arb_skipped_msgs", "Messages given up"},
    {"arb_resets", "Sequence resets and new sessions"},
    {"mold_requests", "MoldUDP64 re-requests sent"},
    {"mold_recovered", "Messages recovered by re-request"},
    {"mold_given_up", "Gaps given up after give_up_ms"},
    {"decode_malformed", "Venue messages the decoder refused"},
    {"decode_unknown_instrument", "Updates for instruments not kept"},
    {"decode_rejected", "Updates the books refused"},
    {"decode_registry_full", "Instrument definitions refused: capacity full"},
    {"decode_rpt_seq_gaps", "Instruments that missed an update (RptSeq gap)"},
    {"line_packets", "Packets received on the line"},
    {"line_delivered", "First copies applied from the line"},
    {"line_duplicates", "Copies dropped by A/B arbitration"},
    {"line_held", "Packets that waited behind a gap"},
    {"line_stale", "Packets of an old session dropped"},
    {"line_overflow", "Packets dropped: held buffer full"},
    {"line_corrupt", "Packets dropped: implausible sequence jump"},
    {"bus_published", "Records the bus writer published"},
    {"bus_published_bytes", "Bytes the bus writer published"},
    {"bus_skipped_no_interest", "Records skipped: nobody subscribed"},
    {"bus_refused_too_large", "Records over the ring's record limit"},
    {"nic_ipackets", "Packets the NIC received"},
    {"nic_imissed", "Packets the NIC dropped: the receive queue was full"},
    {"nic_ierrors", "Erroneous packets the NIC received"},
    {"nic_rx_nombuf", "Receive mbuf allocation failures"},
    {"consumer_records", "Records the consumer read"},
    {"consumer_lapped", "Times the writer overtook the consumer"},
    {"consumer_lost", "Records the consumer lost to laps"},
    {"consumer_resyncs", "Books the consumer rebuilt from the state table"},
    {"consumer_lag", "Records published but not yet read by the consumer"},
};

/* Families that can fall (peaks, levels, lags): gauges, without the _total suffix. */
static bool is_gauge(const char *family_part)
{
    static const char *const gauges[] = {"dp_books_peak_live_orders", "consumer_lag"};
    for (size_t i = 0; i < sizeof(gauges) / sizeof(gauges[0]); i++)
        if (strcmp(family_part, gauges[i]) == 0)
            return true;
    return false;
}

static const char *help_of(const char *family_part)
{
    for (size_t i = 0; i < sizeof(helps) / sizeof(helps[0]); i++)
        if (strcmp(family_part, helps[i].family) == 0)
            return helps[i].help;
    return NULL;
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
    size_t plen = strlen(prefix) + 1; /* "tickplane_" */
    for (uint32_t i = 0; i < n; i++) {
        /* The name lives in shared memory: copy it bounded, never trust its terminator. */
        char name[TP_COUNTER_NAME_LEN + 1];
        memcpy(name, c->slots[i].name, TP_COUNTER_NAME_LEN);
        name[TP_COUNTER_NAME_LEN] = '\0';
        struct prom_row *r = &rows[used];
        if (tp_prom_split_name(name, prefix, r->family, sizeof(r->family) - 8, r->labels,
                               sizeof(r->labels)) != 0)
            continue;
        r->gauge = is_gauge(r->family + plen);
        if (!r->gauge)
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
        if (i == 0 || strcmp(rows[i - 1].family, r->family) != 0) {
            char part[128];
            snprintf(part, sizeof(part), "%s", r->family + plen);
            if (!r->gauge)
                part[strlen(part) - strlen("_total")] = '\0';
            const char *help = help_of(part);
            if (help != NULL)
                emit(b, "# HELP %s %s\n", r->family, help);
            else
                emit(b, "# HELP %s tickplane counter %s\n", r->family, part);
            emit(b, "# TYPE %s %s\n", r->family, r->gauge ? "gauge" : "counter");
        }
        emit(b, "%s{%s%sinstance=\"%s\"} %llu\n", r->family, r->labels, r->labels[0] ? "," : "",
             inst, (unsigned long long)r->value);
    }
    free(rows);
    return (int)used;
}

/* Upper bounds of the histogram buckets in seconds: 1 us to 10 s, 1-2.5-5 steps. */
static const double bucket_bounds_s[] = {1e-6, 2.5e-6, 5e-6,   1e-5, 2.5e-5, 5e-5,   1e-4, 2.5e-4,
                                         5e-4, 1e-3,   2.5e-3, 5e-3, 1e-2,   2.5e-2, 5e-2, 0.1,
                                         0.25, 0.5,    1.0,    2.5,  5.0,    10.0};

void tp_prom_histogram(struct tp_prom_buf *b, const char *name, const char *help,
                       const char *labels, const struct tp_histogram *h, double seconds_per_unit)
{
    const char *l = labels ? labels : "", *sep = l[0] ? "," : "";
    char braced[300] = "";
    if (l[0] != '\0')
        snprintf(braced, sizeof(braced), "{%s}", l);
    emit(b, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
    /* A sample counts under a bound when its whole bucket is: a bucket's values are within 3%,
     * so a sample near a bound may be counted one bound up, never one down. */
    uint32_t i = 0;
    uint64_t below = 0;
    for (size_t k = 0; k < sizeof(bucket_bounds_s) / sizeof(bucket_bounds_s[0]); k++) {
        while (i < TP_HIST_BUCKETS &&
               (double)tp_hist_bucket_high(i) * seconds_per_unit <= bucket_bounds_s[k])
            below += h->buckets[i++];
        emit(b, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, l, sep, bucket_bounds_s[k],
             (unsigned long long)below);
    }
    emit(b, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, l, sep, (unsigned long long)h->count);
    emit(b, "%s_sum%s %.15g\n%s_count%s %llu\n", name, braced, (double)h->sum * seconds_per_unit,
         name, braced, (unsigned long long)h->count);
}

void tp_prom_family(struct tp_prom_buf *b, const char *family, const char *type, const char *help)
{
    emit(b, "# HELP %s %s\n# TYPE %s %s\n", family, help, family, type);
}

void tp_prom_sample(struct tp_prom_buf *b, const char *family, const char *labels,
                    const char *instance, uint64_t value)
{
    char inst[160];
    size_t n = 0;
    inst[0] = '\0';
    append(inst, sizeof(inst), &n, instance, strlen(instance), true);
    emit(b, "%s{%s%sinstance=\"%s\"} %llu\n", family, labels, labels[0] ? "," : "", inst,
         (unsigned long long)value);
}

void tp_prom_build_info(struct tp_prom_buf *b, const char *instance, const char *version,
                        const char *commit)
{
    char inst[160], ver[80], com[80];
    size_t n = 0;
    inst[0] = ver[0] = com[0] = '\0';
    append(inst, sizeof(inst), &n, instance, strlen(instance), true);
    n = 0;
    append(ver, sizeof(ver), &n, version, strlen(version), true);
    n = 0;
    append(com, sizeof(com), &n, commit, strlen(commit), true);
    emit(b,
         "# HELP tickplane_build_info The running daemon's version and commit (always 1)\n"
         "# TYPE tickplane_build_info gauge\n"
         "tickplane_build_info{version=\"%s\",commit=\"%s\",instance=\"%s\"} 1\n",
         ver, com, inst);
}

void tp_prom_ctl_stats(struct tp_prom_buf *b, const char *instance,
                       const struct tp_ctl_server_stats *s)
{
    const struct {
        const char *name;
        const char *type;
        uint64_t value;
        const char *help;
    } rows[] = {
        {"clients", "gauge", s->clients, "Clients connected to the control socket"},
        {"subscriptions", "gauge", s->subscriptions, "Subscriptions held"},
        {"accepted_total", "counter", s->accepted, "Connections accepted"},
        {"rejected_full_total", "counter", s->rejected_full, "Connections refused: too many"},
        {"requests_total", "counter", s->requests, "Requests served"},
        {"errors_total", "counter", s->errors, "Requests answered with an error"},
        {"bad_requests_total", "counter", s->bad_requests, "Requests that did not parse"},
        {"lines_too_long_total", "counter", s->lines_too_long, "Request lines over the limit"},
        {"rate_limited_total", "counter", s->rate_limited, "Requests over max_requests_per_sec"},
        {"refused_total", "counter", s->refused, "Subscriptions refused by entitlements"},
        {"slow_disconnects_total", "counter", s->slow_disconnects,
         "Clients dropped for not reading their replies"},
        {"commands_sent_total", "counter", s->commands_sent, "Commands sent to the data plane"},
        {"commands_deferred_total", "counter", s->commands_deferred,
         "Commands queued while the data plane's ring was full"},
        {"commands_lost_total", "counter", s->commands_lost,
         "Commands dropped: the deferral queue was full"},
    };
    char inst[160];
    size_t ilen = 0;
    inst[0] = '\0';
    append(inst, sizeof(inst), &ilen, instance, strlen(instance), true);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        emit(b,
             "# HELP tickplane_control_%s %s\n# TYPE tickplane_control_%s %s\n"
             "tickplane_control_%s{instance=\"%s\"} %llu\n",
             rows[i].name, rows[i].help, rows[i].name, rows[i].type, rows[i].name, inst,
             (unsigned long long)rows[i].value);
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
