/* Logging: see log.h. */
#include "log.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const level_names[] = {[TP_LOG_ERR] = "error",
                                          [TP_LOG_WARNING] = "warning",
                                          [TP_LOG_NOTICE] = "notice",
                                          [TP_LOG_INFO] = "info",
                                          [TP_LOG_DEBUG] = "debug"};

static const char *const component_names[TP_LOG_COMPONENTS] = {
    [TP_LOG_MAIN] = "main",       [TP_LOG_PORT] = "port",       [TP_LOG_GAP] = "gap",
    [TP_LOG_BOOKS] = "books",     [TP_LOG_SESSION] = "session", [TP_LOG_CONSUMER] = "consumer",
    [TP_LOG_CONTROL] = "control", [TP_LOG_RELOAD] = "reload",   [TP_LOG_TELEMETRY] = "telemetry",
};

static struct {
    FILE *out; /* NULL: stderr */
    char ident[32];
    bool journal; /* the output is journald's stream: "<N>" prefixes, no timestamps */
    bool opened;
    uint8_t levels[TP_LOG_COMPONENTS];
    uint32_t burst;
    uint64_t lines, suppressed;
} lg = {.ident = "tickplane", .burst = 10};

/* $JOURNAL_STREAM is "device:inode" of the stream systemd connected: is out that stream? */
static bool is_journal(FILE *out)
{
    const char *env = getenv("JOURNAL_STREAM");
    struct stat st;
    unsigned long long dev, ino;
    if (env == NULL || sscanf(env, "%llu:%llu", &dev, &ino) != 2 || fstat(fileno(out), &st) != 0)
        return false;
    return (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

static void ensure_open(void)
{
    if (lg.opened)
        return;
    lg.opened = true;
    for (unsigned i = 0; i < TP_LOG_COMPONENTS; i++)
        if (lg.levels[i] == 0)
            lg.levels[i] = TP_LOG_INFO;
    lg.journal = is_journal(lg.out ? lg.out : stderr);
}

void tp_log_open(const char *ident, FILE *out)
{
    snprintf(lg.ident, sizeof(lg.ident), "%s", ident);
    lg.out = out;
    lg.opened = false;
    ensure_open();
}

int tp_log_level_parse(const char *name)
{
    for (int l = TP_LOG_ERR; l <= TP_LOG_DEBUG; l++)
        if (strcmp(name, level_names[l]) == 0)
            return l;
    return -1;
}

const char *tp_log_level_name(enum tp_log_level level)
{
    return level >= TP_LOG_ERR && level <= TP_LOG_DEBUG ? level_names[level] : "?";
}

int tp_log_component_parse(const char *name)
{
    for (int c = 0; c < TP_LOG_COMPONENTS; c++)
        if (strcmp(name, component_names[c]) == 0)
            return c;
    return -1;
}

const char *tp_log_component_name(enum tp_log_component c)
{
    return (unsigned)c < TP_LOG_COMPONENTS ? component_names[c] : "?";
}

void tp_log_set_level(enum tp_log_component c, enum tp_log_level level)
{
    ensure_open();
    if ((unsigned)c < TP_LOG_COMPONENTS)
        lg.levels[c] = (uint8_t)level;
}

bool tp_log_enabled(enum tp_log_component c, enum tp_log_level level)
{
    ensure_open();
    return (unsigned)c < TP_LOG_COMPONENTS && (unsigned)level <= lg.levels[c];
}

void tp_log_set_burst(uint32_t lines_per_s)
{
    lg.burst = lines_per_s > 0 ? lines_per_s : 1;
}

/* One line, suffix (the suppressed count) included, written with one call so lines from
 * several processes sharing a stream do not interleave within a line. */
static void write_line(enum tp_log_component c, enum tp_log_level level, const char *suffix,
                       const char *fmt, va_list ap)
{
    char line[1024];
    size_t n = 0;
    if (lg.journal) {
        n = (size_t)snprintf(line, sizeof(line), "<%d>%s: ", (int)level, component_names[c]);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        struct tm tm;
        gmtime_r(&ts.tv_sec, &tm);
        n = strftime(line, sizeof(line), "%Y-%m-%dT%H:%M:%S", &tm);
        n += (size_t)snprintf(line + n, sizeof(line) - n,
                              ".%03ldZ %s[%d]: %s %s: ", ts.tv_nsec / 1000000, lg.ident,
                              (int)getpid(), level_names[level], component_names[c]);
    }
    if (n < sizeof(line)) {
        int m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        n = m < 0 ? n : n + (size_t)m;
    }
    if (n < sizeof(line) && suffix != NULL)
        n += (size_t)snprintf(line + n, sizeof(line) - n, "%s", suffix);
    if (n >= sizeof(line) - 1)
        n = sizeof(line) - 2; /* cut, but still one line */
    line[n++] = '\n';
    FILE *out = lg.out ? lg.out : stderr;
    fwrite(line, 1, n, out);
    fflush(out);
    lg.lines++;
}

void tp_vlog(enum tp_log_component c, enum tp_log_level level, const char *fmt, va_list ap)
{
    if (tp_log_enabled(c, level))
        write_line(c, level, NULL, fmt, ap);
}

void tp_log(enum tp_log_component c, enum tp_log_level level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tp_vlog(c, level, fmt, ap);
    va_end(ap);
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

bool tp_log_limited(struct tp_log_limit *lim, enum tp_log_component c, enum tp_log_level level,
                    const char *fmt, ...)
{
    if (!tp_log_enabled(c, level))
        return false;
    uint64_t now = now_ms();
    if (now - lim->window_ms >= 1000) {
        lim->window_ms = now;
        lim->in_window = 0;
    }
    if (lim->in_window >= lg.burst) {
        lim->suppressed++;
        lg.suppressed++;
        return false;
    }
    lim->in_window++;
    char suffix[64] = "";
    if (lim->suppressed > 0)
        snprintf(suffix, sizeof(suffix), " (%llu similar lines suppressed)",
                 (unsigned long long)lim->suppressed);
    lim->suppressed = 0;
    va_list ap;
    va_start(ap, fmt);
    write_line(c, level, suffix[0] ? suffix : NULL, fmt, ap);
    va_end(ap);
    return true;
}

void tp_log_limit_flush(struct tp_log_limit *lim, enum tp_log_component c, enum tp_log_level level,
                        const char *what)
{
    if (lim->suppressed == 0 || now_ms() - lim->window_ms < 1000)
        return;
    tp_log(c, level, "%s: %llu similar lines suppressed", what,
           (unsigned long long)lim->suppressed);
    lim->suppressed = 0;
}

uint64_t tp_log_lines(void)
{
    return lg.lines;
}

uint64_t tp_log_suppressed(void)
{
    return lg.suppressed;
}
