/* Progress of a long replay (see replay_progress.h). */
#include "replay_progress.h"

#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void show(void *ctx, const struct replay *r)
{
    struct replay_progress *p = ctx;
    double t = now(), elapsed = t - p->start;

    if (t - p->last < 0.5 || elapsed <= 0)
        return;
    p->last = t;
    double done = p->total ? (double)r->offset / (double)p->total : 1;
    double eta = done > 0 ? elapsed * (1 - done) / done : 0;
    fprintf(p->out, "\r%5.1f%%  %.1f / %.1f MB  %.2f M msgs/s  ETA %.0f s   ", done * 100,
            (double)r->offset / 1e6, (double)p->total / 1e6, (double)r->messages / elapsed / 1e6,
            eta);
    fflush(p->out);
    p->shown = true;
}

void replay_progress_start(struct replay_progress *p, struct replay *r, FILE *out, size_t total,
                           int quiet)
{
    *p = (struct replay_progress){.out = out, .total = total, .start = now()};
    p->last = p->start;
    if (!quiet && isatty(fileno(out))) {
        r->progress = show;
        r->progress_ctx = p;
    }
}

void replay_progress_end(struct replay_progress *p)
{
    if (p->shown)
        fputs("\n", p->out);
    p->shown = false;
}
