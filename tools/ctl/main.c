/*
 * tickplanectl: the control CLI, over the daemon's control socket (control/socket/protocol.md).
 *
 *   tickplanectl [-s SOCKET | -c CONFIG] [-t TIMEOUT_MS] COMMAND [ARGS]
 *     status | stats | metrics | reload | subscriptions [--all]
 *     instruments [PATTERN]
 *     book INSTRUMENT [--venue V] [--depth N]
 *     subscribe PATTERN... [--topics a,b] [--venue V]   (holds the subscription until Ctrl-C)
 *     top [PATTERN] [--venue V] [--interval MS] [--rows N] [--once]
 *     stat [--interval MS] [--once] [--json]            (live rates, drops, lag: stat.h)
 *     raw JSON                                          (send one request line as is)
 *     check CONFIG                                      (validate a config and what it needs
 *                                                        of this host, no daemon)
 *
 * Exit status: 0 ok, 1 the daemon answered with an error, 2 usage or connection problems.
 */
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "ctl_client.h"
#include "render.h"
#include "resources.h"
#include "stat.h"
#include "tp_version.h"

#define DEFAULT_SOCKET "/run/tickplane/control.sock"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

struct options {
    const char *socket;
    int timeout_ms;
    const char *venue;
    const char *topics;
    int depth;
    int interval_ms;
    int rows;
    bool once;
    bool json;
    bool all;
};

static void usage(FILE *out)
{
    fprintf(out, "usage: tickplanectl [-s SOCKET | -c CONFIG] [-t TIMEOUT_MS] COMMAND [ARGS]\n"
                 "  status | stats | metrics | reload | subscriptions [--all]\n"
                 "  instruments [PATTERN]\n"
                 "  book INSTRUMENT [--venue V] [--depth N]\n"
                 "  recover CHANNEL  (rebuild its books from a snapshot: ITCH GLIMPSE)\n"
                 "  subscribe PATTERN... [--topics top,trades] [--venue V]  (held until Ctrl-C)\n"
                 "  top [PATTERN] [--venue V] [--interval MS] [--rows N] [--once]\n"
                 "  stat [--interval MS] [--once] [--json]  (live rates, drops and lag)\n"
                 "  raw JSON\n"
                 "  check CONFIG\n"
                 "  --version\n");
}

/* The reply, or NULL after printing why; exits the error path consistently. */
static json_t *call(struct tp_ctl_conn *conn, const struct options *o, json_t *req, int *status)
{
    char err[256];
    json_t *reply = tp_ctl_call(conn, req, o->timeout_ms, err, sizeof(err));
    json_decref(req);
    if (reply == NULL) {
        fprintf(stderr, "tickplanectl: %s\n", err);
        *status = 2;
        return NULL;
    }
    if (!json_is_true(json_object_get(reply, "ok"))) {
        fprintf(stderr, "tickplanectl: %s\n", json_string_value(json_object_get(reply, "error")));
        json_decref(reply);
        *status = 1;
        return NULL;
    }
    return reply;
}

static void print_json(const json_t *v)
{
    json_dumpf(v, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
}

static int cmd_simple(struct tp_ctl_conn *conn, const struct options *o, const char *verb)
{
    int status = 0;
    json_t *req = json_pack("{s:s}", "cmd", verb);
    if (o->all && strcmp(verb, "subscriptions") == 0)
        json_object_set_new(req, "all", json_true()); /* every client's (admins only) */
    json_t *reply = call(conn, o, req, &status);
    if (reply == NULL)
        return status;
    if (strcmp(verb, "metrics") == 0) {
        fputs(json_string_value(json_object_get(reply, "metrics")), stdout);
    } else {
        json_object_del(reply, "ok");
        print_json(reply);
    }
    /* A reload that was refused or invalid is a failure for scripts too. */
    if (strcmp(verb, "reload") == 0 &&
        !json_is_true(json_object_get(json_object_get(reply, "reload"), "ok")))
        status = 1;
    json_decref(reply);
    return status;
}

static int cmd_instruments(struct tp_ctl_conn *conn, const struct options *o, const char *pattern)
{
    int status = 0;
    json_t *reply = call(conn, o,
                         json_pack("{s:s, s:s, s:i}", "cmd", "instruments", "pattern",
                                   pattern ? pattern : "*", "limit", 10000),
                         &status);
    if (reply == NULL)
        return status;
    size_t i;
    json_t *item;
    json_array_foreach(json_object_get(reply, "instruments"), i, item)
    {
        char state[320];
        tp_render_state(item, true, state, sizeof(state));
        printf("%-8s %s%s%s\n", json_string_value(json_object_get(item, "venue")),
               json_string_value(json_object_get(item, "symbol")), state[0] ? "  " : "", state);
    }
    json_decref(reply);
    return 0;
}

static int cmd_recover(struct tp_ctl_conn *conn, const struct options *o, const char *channel)
{
    int status = 0;
    json_t *reply =
        call(conn, o, json_pack("{s:s, s:s}", "cmd", "recover", "channel", channel), &status);
    if (reply == NULL)
        return status;
    json_object_del(reply, "ok");
    print_json(reply);
    json_decref(reply);
    return 0;
}

static json_t *book_request(const char *symbol, const char *venue, int depth)
{
    json_t *req = json_pack("{s:s, s:s, s:i}", "cmd", "book", "instrument", symbol, "depth", depth);
    if (venue != NULL)
        json_object_set_new(req, "venue", json_string(venue));
    return req;
}

static int cmd_book(struct tp_ctl_conn *conn, const struct options *o, const char *symbol)
{
    int status = 0;
    json_t *reply = call(conn, o, book_request(symbol, o->venue, o->depth), &status);
    if (reply == NULL)
        return status;
    tp_render_book(stdout, json_object_get(reply, "book"));
    json_decref(reply);
    return 0;
}

static void print_event(const json_t *event, void *arg)
{
    (void)arg;
    char *text = json_dumps(event, JSON_COMPACT);
    printf("event: %s\n", text ? text : "?");
    fflush(stdout);
    free(text);
}

/* Subscriptions live as long as the connection: hold it, show events, until Ctrl-C. */
static int cmd_subscribe(struct tp_ctl_conn *conn, const struct options *o, char **patterns, int n)
{
    json_t *list = json_array(), *topics = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(list, json_string(patterns[i]));
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", o->topics ? o->topics : "top");
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        json_array_append_new(topics, json_string(t));
    json_t *req =
        json_pack("{s:s, s:o, s:o}", "cmd", "subscribe", "instruments", list, "topics", topics);
    if (o->venue != NULL)
        json_object_set_new(req, "venue", json_string(o->venue));
    int status = 0;
    json_t *reply = call(conn, o, req, &status);
    if (reply == NULL)
        return status;
    print_json(json_object_get(reply, "subscriptions"));
    json_decref(reply);
    fflush(stdout);
    conn->on_event = print_event;
    while (!stop) {
        char err[256];
        json_t *line = tp_ctl_read_line(conn, 500, err, sizeof(err));
        if (line != NULL) {
            print_event(line, NULL);
            json_decref(line);
        } else if (strstr(err, "closed") != NULL) {
            fprintf(stderr, "tickplanectl: %s\n", err);
            return 2;
        }
    }
    return 0;
}

/* The live top-of-book screen: list the instruments, then refresh one row each per interval. */
static int cmd_top(struct tp_ctl_conn *conn, const struct options *o, const char *pattern)
{
    int status = 0;
    json_t *reply = call(conn, o,
                         json_pack("{s:s, s:s, s:i}", "cmd", "instruments", "pattern",
                                   pattern ? pattern : "*", "limit", o->rows),
                         &status);
    if (reply == NULL)
        return status;
    json_t *instruments = json_incref(json_object_get(reply, "instruments"));
    json_decref(reply);
    bool tty = isatty(STDOUT_FILENO) && !o->once;
    while (!stop) {
        if (tty)
            fputs("\033[H\033[2J", stdout);
        time_t now = time(NULL);
        char when[32];
        strftime(when, sizeof(when), "%H:%M:%S", localtime(&now));
        printf("tickplane top of book  %s  (%zu instruments)\n", when,
               json_array_size(instruments));
        tp_render_top_header(stdout);
        size_t i;
        json_t *item;
        json_array_foreach(instruments, i, item)
        {
            const char *venue = json_string_value(json_object_get(item, "venue"));
            const char *symbol = json_string_value(json_object_get(item, "symbol"));
            if (o->venue != NULL && strcmp(o->venue, venue) != 0)
                continue;
            char err[256];
            json_t *req = book_request(symbol, venue, 1);
            json_t *r = tp_ctl_call(conn, req, o->timeout_ms, err, sizeof(err));
            json_decref(req);
            if (r == NULL) {
                fprintf(stderr, "tickplanectl: %s\n", err);
                json_decref(instruments);
                return 2;
            }
            tp_render_top_row(stdout, venue, symbol, json_object_get(r, "book"));
            json_decref(r);
        }
        fflush(stdout);
        if (o->once)
            break;
        struct timespec ts = {o->interval_ms / 1000, (long)(o->interval_ms % 1000) * 1000000};
        nanosleep(&ts, NULL);
    }
    json_decref(instruments);
    return 0;
}

static double mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
}

/* The live view: two stats replies an interval apart make the rates (--once: one such view). */
static int cmd_stat(struct tp_ctl_conn *conn, const struct options *o)
{
    json_t *prev = NULL;
    double t_prev = 0;
    bool tty = isatty(STDOUT_FILENO) && !o->once && !o->json;
    int status = 0;
    while (!stop) {
        json_t *now = call(conn, o, json_pack("{s:s}", "cmd", "stats"), &status);
        if (now == NULL)
            break;
        double t = mono_s();
        if (prev != NULL || !o->once) {
            json_t *view = tp_stat_view(prev, now, prev ? t - t_prev : 0);
            if (o->json) {
                char *text = json_dumps(view, JSON_COMPACT);
                puts(text ? text : "{}");
                free(text);
            } else {
                if (tty)
                    fputs("\033[H\033[2J", stdout);
                time_t wall = time(NULL);
                char when[32];
                strftime(when, sizeof(when), "%H:%M:%S", localtime(&wall));
                printf("tickplane stat  %s  (rates over %.1f s)\n", when, prev ? t - t_prev : 0);
                tp_stat_render(stdout, view);
            }
            fflush(stdout);
            json_decref(view);
            if (o->once) {
                json_decref(now);
                break;
            }
        }
        json_decref(prev);
        prev = now;
        t_prev = t;
        sleep_ms(o->interval_ms);
    }
    json_decref(prev);
    return status;
}

static int cmd_raw(struct tp_ctl_conn *conn, const struct options *o, const char *text)
{
    json_error_t jerr;
    json_t *req = json_loads(text, 0, &jerr);
    if (req == NULL) {
        fprintf(stderr, "tickplanectl: not JSON: %s\n", jerr.text);
        return 2;
    }
    char err[256];
    json_t *reply = tp_ctl_call(conn, req, o->timeout_ms, err, sizeof(err));
    json_decref(req);
    if (reply == NULL) {
        fprintf(stderr, "tickplanectl: %s\n", err);
        return 2;
    }
    char *out = json_dumps(reply, JSON_COMPACT | JSON_PRESERVE_ORDER);
    puts(out ? out : "");
    free(out);
    int status = json_is_true(json_object_get(reply, "ok")) ? 0 : 1;
    json_decref(reply);
    return status;
}

static int cmd_check(const char *file)
{
    static struct tp_config cfg;
    static struct tp_config_errors errs;
    if (tp_config_load_file(file, &cfg, &errs) == 0 &&
        tp_config_check_resources(&cfg, NULL, &errs) == 0) {
        printf("%s: valid (%u channels, %u data lcores, ~%llu MB DPDK memory)\n", file,
               cfg.n_channels, cfg.n_lcores,
               (unsigned long long)(tp_config_memory_estimate(&cfg) >> 20));
        return 0;
    }
    static char buf[65536];
    tp_config_errors_format(&errs, buf, sizeof(buf));
    fprintf(stderr, "%s: %u error%s\n%s", file, errs.count + errs.dropped,
            errs.count + errs.dropped == 1 ? "" : "s", buf);
    return 1;
}

/* -c CONFIG: the socket path the daemon uses. */
static const char *socket_from_config(const char *file)
{
    static struct tp_config cfg;
    static struct tp_config_errors errs;
    if (tp_config_load_file(file, &cfg, &errs) != 0) {
        static char buf[65536];
        tp_config_errors_format(&errs, buf, sizeof(buf));
        fprintf(stderr, "tickplanectl: %s:\n%s", file, buf);
        return NULL;
    }
    return cfg.control.socket_path;
}

/* Options valid before and after the command; false for an unknown one. */
static bool apply_option(int c, struct options *o)
{
    switch (c) {
    case 's':
        o->socket = optarg;
        return true;
    case 'c':
        o->socket = socket_from_config(optarg);
        return o->socket != NULL;
    case 't':
        o->timeout_ms = atoi(optarg);
        return true;
    case 'v':
        o->venue = optarg;
        return true;
    case 'T':
        o->topics = optarg;
        return true;
    case 'd':
        o->depth = atoi(optarg);
        return true;
    case 'i':
        o->interval_ms = atoi(optarg);
        return true;
    case 'r':
        o->rows = atoi(optarg);
        return true;
    case 'o':
        o->once = true;
        return true;
    case 'J':
        o->json = true;
        return true;
    case 'A':
        o->all = true;
        return true;
    default:
        return false;
    }
}

int main(int argc, char **argv)
{
    struct options o = {
        .socket = DEFAULT_SOCKET, .timeout_ms = 5000, .depth = 10, .interval_ms = 1000, .rows = 40};
    static const struct option opts[] = {{"socket", required_argument, NULL, 's'},
                                         {"config", required_argument, NULL, 'c'},
                                         {"timeout", required_argument, NULL, 't'},
                                         {"venue", required_argument, NULL, 'v'},
                                         {"topics", required_argument, NULL, 'T'},
                                         {"depth", required_argument, NULL, 'd'},
                                         {"interval", required_argument, NULL, 'i'},
                                         {"rows", required_argument, NULL, 'r'},
                                         {"once", no_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {"version", no_argument, NULL, 'V'},
                                         {"json", no_argument, NULL, 'J'},
                                         {"all", no_argument, NULL, 'A'},
                                         {NULL, 0, NULL, 0}};
    /* Options may come before or after the command ("book ESZ6 --depth 5"). */
    const char *verb = NULL;
    char *args[64];
    int n_args = 0;
    while (optind < argc) {
        int c = getopt_long(argc, argv, "+s:c:t:h", opts, NULL);
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        if (c == 'V') {
            tp_version_print(stdout, "tickplanectl");
            return 0;
        }
        if (c == -1) {
            if (verb == NULL)
                verb = argv[optind];
            else if (n_args < 64)
                args[n_args++] = argv[optind];
            optind++;
            continue;
        }
        if (!apply_option(c, &o)) {
            usage(stderr);
            return 2;
        }
    }
    if (verb == NULL) {
        usage(stderr);
        return 2;
    }
    if (strcmp(verb, "check") == 0) {
        if (n_args != 1) {
            usage(stderr);
            return 2;
        }
        return cmd_check(args[0]);
    }
    if (o.timeout_ms <= 0 || o.depth <= 0 || o.interval_ms <= 0 || o.rows <= 0) {
        fprintf(stderr, "tickplanectl: timeout, depth, interval and rows must be positive\n");
        return 2;
    }

    struct tp_ctl_conn conn;
    char err[256];
    if (tp_ctl_connect(&conn, o.socket, err, sizeof(err)) != 0) {
        fprintf(stderr, "tickplanectl: %s\n", err);
        return 2;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    int status = 2;
    bool simple = false;
    static const char *const simple_verbs[] = {"status", "stats", "metrics", "reload",
                                               "subscriptions"};
    for (size_t i = 0; i < sizeof(simple_verbs) / sizeof(simple_verbs[0]); i++)
        simple |= strcmp(verb, simple_verbs[i]) == 0;
    if (simple && n_args == 0)
        status = cmd_simple(&conn, &o, verb);
    else if (strcmp(verb, "instruments") == 0 && n_args <= 1)
        status = cmd_instruments(&conn, &o, n_args ? args[0] : NULL);
    else if (strcmp(verb, "book") == 0 && n_args == 1)
        status = cmd_book(&conn, &o, args[0]);
    else if (strcmp(verb, "subscribe") == 0 && n_args >= 1)
        status = cmd_subscribe(&conn, &o, args, n_args);
    else if (strcmp(verb, "top") == 0 && n_args <= 1)
        status = cmd_top(&conn, &o, n_args ? args[0] : NULL);
    else if (strcmp(verb, "stat") == 0 && n_args == 0)
        status = cmd_stat(&conn, &o);
    else if (strcmp(verb, "recover") == 0 && n_args == 1)
        status = cmd_recover(&conn, &o, args[0]);
    else if (strcmp(verb, "raw") == 0 && n_args == 1)
        status = cmd_raw(&conn, &o, args[0]);
    else
        usage(stderr);
    tp_ctl_disconnect(&conn);
    return status;
}
