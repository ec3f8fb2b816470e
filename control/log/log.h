/*
 * tickplane's logging: levelled, timestamped lines, one per event, from the main lcore and the
 * tools (never from a data lcore: they count, the control plane reads the counters and logs).
 *
 * Why not rte_log: the control plane, its libraries and the tools run without EAL, and an
 * operator's journald already takes a service's stderr. So lines go to stderr; under systemd
 * (stderr is the journal stream, $JOURNAL_STREAM) each line starts with the syslog priority
 * "<N>", which journald turns into the entry's PRIORITY, and journald adds its own timestamp.
 * Elsewhere a line is
 *
 *     2026-12-02T00:30:01.123Z tickplane[4242]: warning gap: channel itch: 3 gaps (seq 1200..1209)
 *
 * Every line has a component (gap, books, port, ...) whose level is set on its own: the config's
 * `logging` section, applied again on every reload. Events that can come in floods go through a
 * limiter: at most `burst` lines per second per limiter; the next line that passes says how many
 * were suppressed.
 *
 * Single-threaded: call from one thread (the daemon's main lcore, a tool's main()).
 */
#ifndef TP_LOG_H
#define TP_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* The syslog priorities (RFC 5424), so journald and syslog read them as they are. */
enum tp_log_level {
    TP_LOG_ERR = 3,
    TP_LOG_WARNING = 4,
    TP_LOG_NOTICE = 5,
    TP_LOG_INFO = 6,
    TP_LOG_DEBUG = 7,
};

enum tp_log_component {
    TP_LOG_MAIN,      /* start-up, shutdown */
    TP_LOG_PORT,      /* NIC ports: set-up, drops */
    TP_LOG_GAP,       /* gaps detected, filled, re-requested, recovered, given up */
    TP_LOG_BOOKS,     /* books stale and healthy, snapshot mismatches, capacity */
    TP_LOG_SESSION,   /* sequence resets, new sessions */
    TP_LOG_CONSUMER,  /* bus consumers: lapped, lost */
    TP_LOG_CONTROL,   /* the control socket */
    TP_LOG_RELOAD,    /* reloads applied or refused */
    TP_LOG_TELEMETRY, /* metrics export */
    TP_LOG_COMPONENTS
};

/* Where lines go (stderr by default) and the program name they carry. */
void tp_log_open(const char *ident, FILE *out);

/* "error", "warning", "notice", "info", "debug" -> level; -1 if none of them. */
int tp_log_level_parse(const char *name);
const char *tp_log_level_name(enum tp_log_level level);

/* "main", "port", "gap", ... -> component; -1 if none of them. */
int tp_log_component_parse(const char *name);
const char *tp_log_component_name(enum tp_log_component c);

/* Lines of c at level or more severe are written; the default is info for every component. */
void tp_log_set_level(enum tp_log_component c, enum tp_log_level level);
bool tp_log_enabled(enum tp_log_component c, enum tp_log_level level);

void tp_log(enum tp_log_component c, enum tp_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void tp_vlog(enum tp_log_component c, enum tp_log_level level, const char *fmt, va_list ap);

/* A flood guard for one kind of line: zero-initialise, one per event kind (and channel). */
struct tp_log_limit {
    uint64_t window_ms;  /* start of the current one-second window */
    uint32_t in_window;  /* lines written in it */
    uint64_t suppressed; /* lines dropped since the last one written */
};

/* Lines per second one limiter lets through (default 10). */
void tp_log_set_burst(uint32_t lines_per_s);

/* tp_log through a limiter: dropped (and counted) past the burst. true if written. */
bool tp_log_limited(struct tp_log_limit *lim, enum tp_log_component c, enum tp_log_level level,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A limiter's count of dropped lines, once its window is over and nothing came through to carry
 * it: "WHAT: N similar lines suppressed". Call it periodically. */
void tp_log_limit_flush(struct tp_log_limit *lim, enum tp_log_component c, enum tp_log_level level,
                        const char *what);

/* Lines written and dropped by limiters since start (for tests and the exit summary). */
uint64_t tp_log_lines(void);
uint64_t tp_log_suppressed(void);

#endif /* TP_LOG_H */
