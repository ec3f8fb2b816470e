/*
 * The example consumer (tickplane-top) against a live writer: it resolves symbols from the state
 * table (also symbols defined after it attached), prints the state, every top-of-book change and
 * trade, and stops with a summary when the writer closes the instance or its heartbeat stops.
 * argv[1]: path of the tickplane-top executable.
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bus/bus.h"
#include "publish_level.h"
#include "tmpdir.h"
#include "tpout_sbe.h"

static const char *example;
static char dir[64];

static void publish_book(struct tp_bus_writer *w, uint32_t id, uint8_t side, uint8_t level,
                         uint8_t action, int64_t px, int64_t qty)
{
    assert_true(publish_level(w, id, side, level, action, px, qty) > 0);
}

/* 1 once a reader has attached (its counters segment exists). */
static int reader_attached(void)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int found = 0;
    while (d != NULL && (e = readdir(d)) != NULL)
        if (strstr(e->d_name, ".reader.") != NULL && strstr(e->d_name, ".tmp.") == NULL)
            found = 1;
    if (d != NULL)
        closedir(d);
    return found;
}

static void open_writer(struct tp_bus_writer *w)
{
    assert_int_equal(tmpdir_make(dir, sizeof(dir), "example"), 0);
    char err[256];
    struct tp_bus_params p = {.instance = "demo",
                              .dir = dir,
                              .ring_bytes = 1 << 16,
                              .max_record = 256,
                              .instruments = 3,
                              .depth = 5,
                              .counters = 8,
                              .mode = 0644,
                              .gid = (gid_t)-1};
    assert_int_equal(tp_bus_writer_open(w, &p, err, sizeof(err)), 0);
}

/* Reference data and a best bid for instrument id, as the data plane writes them. */
static void define(struct tp_bus_writer *w, uint32_t id, const char *symbol, int64_t bid_px,
                   int64_t bid_qty)
{
    struct tp_state_entry *e = tp_state_write_begin(w->state, id);
    memcpy(e->book.symbol, symbol, strlen(symbol));
    e->book.bid_levels = 1;
    e->book.tick_size = 250000000; /* 0.25: prices print with two decimals */
    tp_state_bids(e)[0] = (struct tp_level){.price = bid_px, .qty = bid_qty};
    tp_state_write_end(e);
}

/* Starts tickplane-top on one or two symbols; returns its pid, *out_fd reads its stdout. */
static pid_t start_example(const char *sym1, const char *sym2, int *out_fd)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(example, example, "--dir", dir, "--seconds", "20", "demo", sym1, sym2, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    for (int i = 0; i < 2000 && !reader_attached(); i++)
        usleep(5000);
    assert_true(reader_attached());
    usleep(50000); /* let it subscribe */
    *out_fd = fds[0];
    return pid;
}

/* Waits for the example's end: its output and exit status. */
static int collect_example(pid_t pid, int fd, char *out, size_t cap)
{
    size_t n = 0;
    ssize_t r;
    while ((r = read(fd, out + n, cap - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fd);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* Closes the instance, collects the example's output and exit status. */
static int finish_example(struct tp_bus_writer *w, pid_t pid, int fd, char *out, size_t cap)
{
    tp_bus_writer_close(w, 1); /* the example notices and stops */
    int status = collect_example(pid, fd, out, cap);
    assert_int_equal(tmpdir_remove(dir), 0);
    return status;
}

static void test_example_prints_top_of_book(void **state)
{
    (void)state;
    struct tp_bus_writer w;
    open_writer(&w);
    define(&w, 2, "ESZ6", 4500250000000, 12);

    int fd;
    pid_t pid = start_example("ESZ6", NULL, &fd);
    publish_book(&w, 2, 1, 1, 0, 4500500000000, 7); /* ask appears: top changes */
    publish_book(&w, 1, 0, 1, 0, 100, 1);           /* another instrument: filtered */
    publish_book(&w, 2, 0, 2, 0, 4500000000000, 3); /* second bid level: top unchanged */
    usleep(200000);

    char out[4096];
    assert_int_equal(finish_example(&w, pid, fd, out, sizeof(out)), 0);
    /* The current state first (from the subscription), then the change. */
    assert_non_null(
        strstr(out, "ESZ6         bid         12 @ 4500.25      ask          0 @ - (snapshot)\n"));
    assert_non_null(
        strstr(out, "ESZ6         bid         12 @ 4500.25      ask          7 @ 4500.50\n"));
    assert_non_null(
        strstr(out, "summary: stopped by writer closed; records 3, delivered 2, filtered 1"));
    assert_non_null(strstr(out, "top changes 1, trades 0, last bid 4500.25"));
}

static void test_example_waits_for_late_definitions(void **state)
{
    (void)state;
    struct tp_bus_writer w;
    open_writer(&w);

    int fd;
    pid_t pid = start_example("NQH7", "NEVER", &fd);
    define(&w, 0, "NQH7", 21000000000000, 4); /* the definition arrives after the attach */
    usleep(100000);
    publish_book(&w, 0, 1, 1, 0, 21000250000000, 9);
    usleep(200000);

    char out[4096];
    /* A symbol that never got a definition makes the exit status say so. */
    assert_int_equal(finish_example(&w, pid, fd, out, sizeof(out)), 1);
    assert_non_null(strstr(out, "NQH7         not defined yet"));
    assert_non_null(strstr(out, "NQH7         bid          4 @ 21000.00     ask          9 @ "
                                "21000.25"));
    assert_non_null(strstr(out, "NQH7         top changes 1"));
    assert_non_null(strstr(out, "NEVER        never defined by the instance"));
}

/* The daemon is killed while tickplane-top waits on a quiet bus: it stops, saying why. */
static void test_example_stops_when_the_heartbeat_stops(void **state)
{
    (void)state;
    struct tp_bus_writer w;
    open_writer(&w);
    define(&w, 2, "ESZ6", 4500250000000, 12);
    uint64_t now = tp_seg_clock_ns();
    tp_seg_heartbeat(&w.ring_seg, now);
    tp_seg_heartbeat(&w.state_seg, now);
    tp_seg_heartbeat(&w.counters_seg, now);

    int fd;
    pid_t pid = start_example("ESZ6", NULL, &fd);
    /* Killed 3 s ago as far as the heartbeat tells (the default timeout is 2 s). */
    tp_seg_heartbeat(&w.state_seg, now - 3000000000ull);
    char out[4096];
    assert_int_equal(collect_example(pid, fd, out, sizeof(out)), 4);
    assert_non_null(strstr(out, "summary: stopped by dead writer (heartbeat stopped)"));
    tp_bus_writer_close(&w, 1);
    assert_int_equal(tmpdir_remove(dir), 0);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PATH-TO-tickplane-top\n", argv[0]);
        return 2;
    }
    example = argv[1];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_example_prints_top_of_book),
        cmocka_unit_test(test_example_waits_for_late_definitions),
        cmocka_unit_test(test_example_stops_when_the_heartbeat_stops),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
