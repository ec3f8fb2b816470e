/*
 * tickplane-export: an event file (tickplane-replay --events), or a capture replayed on the fly,
 * as CSV or JSON lines, one view at a time. The views are libtickplane's row tables
 * (tickplane/rows.h: its decoder and its books), so the books are never rebuilt here.
 *
 *   tickplane-export --view VIEW [--format csv|jsonl] [--symbols GLOB] [--depth N]
 *                    [--interval 1s|100ms|1m|...] [--clock recv|venue] INPUT
 *     top          best bid and offer after every venue event that changed them, with the
 *                  event's last trade (MBP-1 / TBBO style)
 *     depth        the best N (<= 10, default 10) levels a side after every such event (MBP-10)
 *     changes      every level change as published
 *     trades, mbo, definitions, status
 *     ohlcv        bars of the trades per instrument and interval (open, high, low, close,
 *                  volume, trades), by receive time (capture time) or venue time (--clock)
 *
 * Every price is given twice: as a decimal ("153.77") and as its price9 integer (column name +
 * "9"); an absent price is empty in CSV and null in JSON. Output goes to stdout; a summary line to
 * stderr.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export_capture.h"
#include "export_out.h"
#include "glob.h"
#include "tickplane/event_file.h"
#include "tickplane/rows.h"
#include "tickplane/tickplane.h"

enum view { V_TOP, V_DEPTH, V_CHANGES, V_TRADES, V_MBO, V_OHLCV, V_DEFINITIONS, V_STATUS, V_N };
static const char *const view_names[V_N] = {"top", "depth", "changes",     "trades",
                                            "mbo", "ohlcv", "definitions", "status"};
/* The row table each view reads. */
static const enum tp_rows_table view_table[V_N] = {
    TP_ROWS_TOP,    TP_ROWS_BOOK,   TP_ROWS_DEPTH,       TP_ROWS_TRADES,
    TP_ROWS_ORDERS, TP_ROWS_TRADES, TP_ROWS_DEFINITIONS, TP_ROWS_STATUS};

#define BATCH_ROWS 65536u

struct options {
    enum view view;
    bool jsonl;
    const char *symbols;
    uint32_t depth;
    uint64_t interval_ns;
    bool venue_clock;
    const char *input;
};

/* Symbols by instrument id, as the definitions came. */
struct symbols {
    char (*names)[TP_SYMBOL_LEN + 1];
    uint32_t n;
};

struct bar {
    uint64_t start;
    int64_t open, high, low, close, volume;
    uint64_t trades;
    bool open_bar;
};

struct bars {
    struct bar *b;
    uint32_t n;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tickplane-export --view top|depth|changes|trades|mbo|ohlcv|definitions|"
                 "status\n"
                 "         [--format csv|jsonl] [--symbols GLOB] [--depth N] [--interval 1s]"
                 " [--clock recv|venue] EVENTS_OR_CAPTURE\n");
}

/* "250ms", "1s", "5m", "1h", or plain nanoseconds. */
static int parse_interval(const char *s, uint64_t *ns)
{
    static const struct {
        const char *suffix;
        uint64_t ns;
    } units[] = {{"ns", 1},
                 {"us", 1000},
                 {"ms", 1000000},
                 {"s", 1000000000ull},
                 {"m", 60000000000ull},
                 {"h", 3600000000000ull},
                 {"", 1}};
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s || v == 0)
        return -EINVAL;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (!strcmp(end, units[i].suffix)) {
            *ns = v * units[i].ns;
            return 0;
        }
    return -EINVAL;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    static const struct option longs[] = {
        {"view", required_argument, NULL, 'v'},     {"format", required_argument, NULL, 'f'},
        {"symbols", required_argument, NULL, 's'},  {"depth", required_argument, NULL, 'd'},
        {"interval", required_argument, NULL, 'i'}, {"clock", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0}};
    int c, view = -1;

    memset(o, 0, sizeof(*o));
    o->depth = TP_ROWS_BOOK_LEVELS;
    o->interval_ns = 1000000000ull;
    while ((c = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (c) {
        case 'v':
            for (int v = 0; v < V_N; v++)
                if (!strcmp(optarg, view_names[v]))
                    view = v;
            if (view < 0) {
                fprintf(stderr, "tickplane-export: unknown view %s\n", optarg);
                return -EINVAL;
            }
            break;
        case 'f':
            if (strcmp(optarg, "csv") && strcmp(optarg, "jsonl")) {
                fprintf(stderr, "tickplane-export: unknown format %s\n", optarg);
                return -EINVAL;
            }
            o->jsonl = !strcmp(optarg, "jsonl");
            break;
        case 's':
            o->symbols = optarg;
            break;
        case 'd':
            o->depth = (uint32_t)atoi(optarg);
            if (o->depth < 1 || o->depth > TP_ROWS_BOOK_LEVELS) {
                fprintf(stderr, "tickplane-export: --depth is 1..%u\n", TP_ROWS_BOOK_LEVELS);
                return -EINVAL;
            }
            break;
        case 'i':
            if (parse_interval(optarg, &o->interval_ns) != 0) {
                fprintf(stderr, "tickplane-export: bad --interval %s\n", optarg);
                return -EINVAL;
            }
            break;
        case 'c':
            if (strcmp(optarg, "recv") && strcmp(optarg, "venue"))
                return -EINVAL;
            o->venue_clock = !strcmp(optarg, "venue");
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            return -EINVAL;
        }
    }
    if (view < 0 || optind != argc - 1)
        return -EINVAL;
    o->view = (enum view)view;
    o->input = argv[optind];
    return 0;
}

static const char *symbol_of(const struct symbols *s, uint32_t id)
{
    return id < s->n ? s->names[id] : "";
}

/* An array of *n elements by instrument id grown (zeroed) to hold id: 0, or -ENOMEM. */
static int grow_to(void **array, uint32_t *n, uint32_t id, size_t elem)
{
    if (id < *n)
        return 0;
    uint32_t grown = *n ? *n : 256;
    while (grown <= id)
        grown *= 2;
    uint8_t *p = realloc(*array, grown * elem);
    if (p == NULL)
        return -ENOMEM;
    memset(p + (size_t)*n * elem, 0, (size_t)(grown - *n) * elem);
    *array = p;
    *n = grown;
    return 0;
}

static int add_symbols(struct symbols *s, const struct tp_definition_row *d, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        uint32_t id = d[i].h.instrument_id;
        if (grow_to((void **)&s->names, &s->n, id, sizeof(*s->names)) != 0)
            return -ENOMEM;
        memcpy(s->names[id], d[i].symbol, TP_SYMBOL_LEN);
        s->names[id][TP_SYMBOL_LEN] = 0;
    }
    return 0;
}

static const char *side_name(uint8_t s)
{
    return s == 0 ? "bid" : s == 1 ? "ask" : "";
}

static const char *aggressor_name(uint8_t a)
{
    return a == 1 ? "buy" : a == 2 ? "sell" : "none";
}

static void head(struct out *o, const struct tp_row_head *h, const struct symbols *s)
{
    out_u64(o, "recv_ns", h->recv_tsc);
    out_u64(o, "venue_time_ns", h->venue_time_ns);
    out_u64(o, "venue_seq", h->venue_seq);
    if (h->instrument_id == TP_INSTRUMENT_NONE) {
        out_null(o, "instrument_id");
        out_str(o, "symbol", "");
    } else {
        out_u64(o, "instrument_id", h->instrument_id);
        out_str(o, "symbol", symbol_of(s, h->instrument_id));
    }
    out_u64(o, "flags", h->flags);
}

static void count_col(struct out *o, const char *name, int32_t count)
{
    if (count == TP_COUNT_NULL)
        out_null(o, name);
    else
        out_i64(o, name, count);
}

static void print_top(struct out *o, const struct tp_top_row *r, const struct symbols *s)
{
    head(o, &r->h, s);
    out_price(o, "bid_price", r->bid_price);
    out_i64(o, "bid_qty", r->bid_qty);
    count_col(o, "bid_orders", r->bid_orders);
    out_price(o, "ask_price", r->ask_price);
    out_i64(o, "ask_qty", r->ask_qty);
    count_col(o, "ask_orders", r->ask_orders);
    out_price(o, "trade_price", r->trade_price);
    out_i64(o, "trade_qty", r->trade_qty);
    out_str(o, "trade_aggressor",
            r->trade_price == TP_PRICE_NULL ? "" : aggressor_name(r->trade_aggressor));
}

static void print_book(struct out *o, const struct tp_book_row *r, const struct symbols *s,
                       uint32_t depth)
{
    char name[32];
    head(o, &r->h, s);
    for (int side = 0; side < 2; side++) {
        const struct tp_level *lv = side ? r->asks : r->bids;
        uint16_t n = side ? r->ask_levels : r->bid_levels;
        for (uint32_t k = 0; k < depth; k++) {
            const char *sn = side ? "ask" : "bid";
            snprintf(name, sizeof(name), "%s_%u_price", sn, k + 1);
            out_price(o, name, k < n ? lv[k].price : TP_PRICE_NULL);
            snprintf(name, sizeof(name), "%s_%u_qty", sn, k + 1);
            out_i64(o, name, k < n ? lv[k].qty : 0);
            snprintf(name, sizeof(name), "%s_%u_orders", sn, k + 1);
            count_col(o, name, k < n ? lv[k].orders : 0);
        }
    }
}

static void print_change(struct out *o, const struct tp_depth_row *r, const struct symbols *s)
{
    static const char *const actions[] = {"insert", "change", "remove", "clear"};
    head(o, &r->h, s);
    out_str(o, "side", side_name(r->side));
    out_u64(o, "level", r->level);
    out_str(o, "action", r->action < 4 ? actions[r->action] : "");
    out_price(o, "price", r->price);
    out_i64(o, "qty", r->qty);
    count_col(o, "orders", r->orders);
}

static void print_trade(struct out *o, const struct tp_trade_row *r, const struct symbols *s)
{
    head(o, &r->h, s);
    out_price(o, "price", r->price);
    out_i64(o, "qty", r->qty);
    out_u64(o, "trade_id", r->trade_id);
    out_str(o, "aggressor", aggressor_name(r->aggressor));
    count_col(o, "orders", r->orders);
}

static void print_order(struct out *o, const struct tp_order_row *r, const struct symbols *s)
{
    static const char *const actions[] = {"add", "modify", "remove", "execute"};
    head(o, &r->h, s);
    out_u64(o, "order_id", r->order_id);
    out_str(o, "side", side_name(r->side));
    out_str(o, "action", r->action < 4 ? actions[r->action] : "");
    out_price(o, "price", r->price);
    if (r->qty == INT64_MIN)
        out_null(o, "qty");
    else
        out_i64(o, "qty", r->qty);
    out_i64(o, "remaining_qty", r->remaining_qty);
    out_u64(o, "priority", r->priority);
}

static void print_status(struct out *o, const struct tp_status_row *r, const struct symbols *s)
{
    static const char *const kinds[] = {"trading_status", "statistic", "channel"};
    head(o, &r->h, s);
    out_str(o, "kind", r->kind < 3 ? kinds[r->kind] : "");
    out_u64(o, "trading_status", r->trading_status);
    out_u64(o, "venue_status", r->venue_status);
    out_u64(o, "stat_type", r->stat_type);
    out_price(o, "price", r->price);
    if (r->qty == INT64_MIN)
        out_null(o, "qty");
    else
        out_i64(o, "qty", r->qty);
    out_u64(o, "channel_id", r->channel_id);
    out_u64(o, "gap_to", r->gap_to);
}

static void print_definition(struct out *o, const struct tp_definition_row *r,
                             const struct symbols *s)
{
    head(o, &r->h, s);
    out_str(o, "venue",
            r->venue == 0   ? "cme"
            : r->venue == 1 ? "nasdaq"
            : r->venue == 2 ? "eurex"
                            : "");
    out_i64(o, "venue_security_id", r->venue_security_id);
    out_price(o, "tick_size", r->tick_size);
    out_price(o, "display_factor", r->display_factor);
    out_i64(o, "contract_multiplier", r->contract_multiplier);
    out_u64(o, "depth", r->depth);
    out_u64(o, "trading_status", r->trading_status);
    out_u64(o, "security_kind", r->security_kind);
    out_u64(o, "channel_id", r->channel_id);
}

static void print_bar(struct out *o, const struct options *opt, uint32_t id, const struct bar *b,
                      const struct symbols *s)
{
    out_u64(o, "start_ns", b->start);
    out_u64(o, "interval_ns", opt->interval_ns);
    out_u64(o, "instrument_id", id);
    out_str(o, "symbol", symbol_of(s, id));
    out_price(o, "open", b->open);
    out_price(o, "high", b->high);
    out_price(o, "low", b->low);
    out_price(o, "close", b->close);
    out_i64(o, "volume", b->volume);
    out_u64(o, "trades", b->trades);
    out_end(o);
}

/* One trade into its instrument's bar; a bar is printed when a trade of a later one comes. */
static int add_bar(struct bars *bars, struct out *o, const struct options *opt,
                   const struct tp_trade_row *t, const struct symbols *s)
{
    uint32_t id = t->h.instrument_id;
    uint64_t at = opt->venue_clock ? t->h.venue_time_ns : t->h.recv_tsc;
    uint64_t start = at - at % opt->interval_ns;

    if (grow_to((void **)&bars->b, &bars->n, id, sizeof(*bars->b)) != 0)
        return -ENOMEM;
    struct bar *b = &bars->b[id];
    if (b->open_bar && b->start != start) {
        print_bar(o, opt, id, b, s);
        b->open_bar = false;
    }
    if (!b->open_bar)
        *b = (struct bar){
            .start = start, .open = t->price, .high = t->price, .low = t->price, .open_bar = true};
    b->high = t->price > b->high ? t->price : b->high;
    b->low = t->price < b->low ? t->price : b->low;
    b->close = t->price;
    b->volume += t->qty;
    b->trades++;
    return 0;
}

static uint64_t print_rows(struct out *o, const struct options *opt, const struct tp_rows *rows,
                           const struct symbols *s, struct bars *bars)
{
    const struct tp_rows_buffer *b = &rows->t[view_table[opt->view]];
    for (uint64_t i = 0; i < b->count; i++) {
        const void *r = (const uint8_t *)b->rows + i * tp_rows_row_size(view_table[opt->view]);
        switch (opt->view) {
        case V_TOP:
            print_top(o, r, s);
            break;
        case V_DEPTH:
            print_book(o, r, s, opt->depth);
            break;
        case V_CHANGES:
            print_change(o, r, s);
            break;
        case V_TRADES:
            print_trade(o, r, s);
            break;
        case V_MBO:
            print_order(o, r, s);
            break;
        case V_OHLCV:
            if (add_bar(bars, o, opt, r, s) != 0)
                return UINT64_MAX;
            continue; /* bars are printed when they close */
        case V_DEFINITIONS:
            print_definition(o, r, s);
            break;
        case V_STATUS:
            print_status(o, r, s);
            break;
        default:
            break;
        }
        out_end(o);
    }
    return b->count;
}

/* Reads the whole file into the view's table in batches and prints them. */
static int export_view(const struct options *opt, const uint8_t *data, size_t len,
                       const uint8_t *keep, uint32_t n_keep, struct symbols *syms, struct out *o)
{
    struct tp_rows rows;
    struct tp_event_file_reader rd;
    struct bars bars = {0};
    enum tp_rows_table t = view_table[opt->view];
    void *buf = malloc(BATCH_ROWS * tp_rows_row_size(t));
    void *defs = malloc(BATCH_ROWS * sizeof(struct tp_definition_row));
    int rc = tp_event_file_open(&rd, data, len);

    tp_rows_init(&rows);
    if (buf == NULL || defs == NULL)
        rc = -ENOMEM;
    rows.t[t] = (struct tp_rows_buffer){.rows = buf, .capacity = BATCH_ROWS};
    if (t != TP_ROWS_DEFINITIONS)
        rows.t[TP_ROWS_DEFINITIONS] = (struct tp_rows_buffer){.rows = defs, .capacity = BATCH_ROWS};
    while (rc == 0 || rc == 1) {
        int more = rc == 0 ? tp_rows_read(&rows, &rd, keep, n_keep, 0) : 0;
        if (more < 0) {
            rc = more;
            break;
        }
        if (more == 0)
            tp_rows_flush(&rows);
        if (add_symbols(syms, rows.t[TP_ROWS_DEFINITIONS].rows, rows.t[TP_ROWS_DEFINITIONS].count))
            rc = -ENOMEM;
        if (print_rows(o, opt, &rows, syms, &bars) == UINT64_MAX) {
            rc = -ENOMEM;
            break;
        }
        for (int k = 0; k < TP_ROWS_TABLES; k++)
            rows.t[k].count = 0;
        if (more == 0)
            break;
    }
    for (uint32_t id = 0; rc >= 0 && id < bars.n; id++)
        if (bars.b[id].open_bar)
            print_bar(o, opt, id, &bars.b[id], syms);
    tp_rows_free(&rows);
    free(bars.b);
    free(buf);
    free(defs);
    return rc < 0 ? rc : 0;
}

/* The instruments whose symbol matches the glob, from the file's definitions. */
static int select_symbols(const char *glob, const uint8_t *data, size_t len, uint8_t **keep,
                          uint32_t *n_keep)
{
    struct tp_rows rows;
    struct tp_event_file_reader rd;
    struct tp_definition_row *defs = malloc(BATCH_ROWS * sizeof(*defs));
    int rc = defs ? tp_event_file_open(&rd, data, len) : -ENOMEM;

    *keep = NULL;
    *n_keep = 0;
    tp_rows_init(&rows);
    rows.t[TP_ROWS_DEFINITIONS] = (struct tp_rows_buffer){.rows = defs, .capacity = BATCH_ROWS};
    while (rc == 0) {
        int more = tp_rows_read(&rows, &rd, NULL, 0, 0);
        for (uint64_t i = 0; more >= 0 && i < rows.t[TP_ROWS_DEFINITIONS].count; i++) {
            char sym[TP_SYMBOL_LEN + 1] = {0};
            uint32_t id = defs[i].h.instrument_id;
            memcpy(sym, defs[i].symbol, TP_SYMBOL_LEN);
            if (grow_to((void **)keep, n_keep, id, 1) != 0) {
                more = -ENOMEM;
                break;
            }
            (*keep)[id] = tp_glob_match(glob, sym);
        }
        rows.t[TP_ROWS_DEFINITIONS].count = 0;
        if (more <= 0) {
            rc = more;
            break;
        }
    }
    tp_rows_free(&rows);
    free(defs);
    return rc;
}

int main(int argc, char **argv)
{
    struct options opt;
    struct stat st;
    struct symbols syms = {0};
    uint8_t *keep = NULL;
    uint32_t n_keep = 0;
    const uint8_t *data = NULL;
    char magic[8] = {0};
    int fd, rc;

    if (parse_options(argc, argv, &opt) != 0) {
        usage(stderr);
        return 2;
    }
    fd = open(opt.input, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "tickplane-export: %s: %s\n", opt.input, strerror(errno));
        return 1;
    }
    if (pread(fd, magic, sizeof(magic), 0) != sizeof(magic) ||
        memcmp(magic, TP_EVENT_FILE_MAGIC, sizeof(magic)) != 0) {
        /* A capture: replayed into an anonymous event file first. */
        char err[256];
        FILE *tmp = tmpfile();
        close(fd);
        if (tmp == NULL || export_capture(opt.input, tmp, err, sizeof(err)) != 0) {
            fprintf(stderr, "tickplane-export: %s: %s\n", opt.input, tmp ? err : strerror(errno));
            return 1;
        }
        fflush(tmp);
        fd = dup(fileno(tmp));
        fclose(tmp);
        if (fd < 0 || fstat(fd, &st) != 0) {
            fprintf(stderr, "tickplane-export: %s\n", strerror(errno));
            return 1;
        }
    }
    if (st.st_size)
        data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (data == MAP_FAILED) {
        fprintf(stderr, "tickplane-export: mmap %s: %s\n", opt.input, strerror(errno));
        return 1;
    }
    rc = opt.symbols ? select_symbols(opt.symbols, data, (size_t)st.st_size, &keep, &n_keep) : 0;
    if (opt.symbols && rc == 0 && keep == NULL) {
        keep = calloc(1, 1); /* no instrument at all: every one is left out */
        n_keep = 0;
    }
    struct out o;
    out_init(&o, stdout, opt.jsonl);
    if (rc == 0)
        rc = export_view(&opt, data, (size_t)st.st_size, keep, n_keep, &syms, &o);
    if (fflush(stdout) != 0 && rc == 0)
        rc = -errno;
    if (rc != 0)
        fprintf(stderr, "tickplane-export: %s: %s\n", opt.input, tp_event_file_strerror(rc));
    fprintf(stderr, "{\"view\":\"%s\",\"rows\":%" PRIu64 "}\n", view_names[opt.view], o.rows);
    free(keep);
    free(syms.names);
    return rc == 0 ? 0 : 1;
}
