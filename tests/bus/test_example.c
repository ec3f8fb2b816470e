/*
 * The example consumer (tickplane-top) against a live writer: it resolves symbols from the state
 * table, prints the state, every top-of-book change and trade, and stops with a summary when
 * the writer closes the instance. argv[1]: path of the tickplane-top executable.
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
#include "tmpdir.h"
#include "tpout_sbe.h"

static const char *example;
static char dir[64];

static void publish_book(struct tp_bus_writer *w, uint32_t id, uint8_t side, uint8_t level,
                         uint8_t action, int64_t px, int64_t qty)
{
    uint8_t buf[128];
    struct tpout_book_update m;
    struct tpout_book_update_levels g;
    tpout_book_update_wrap_and_apply_header(&m, buf, sizeof(buf));
    tpout_book_update_set_instrument_id(&m, id);
    tpout_book_update_levels_wrap_for_encode(&m, &g, 1);
    tpout_book_update_levels_next(&g);
    tpout_book_update_levels_set_side(&g, side);
    tpout_book_update_levels_set_level(&g, level);
    tpout_book_update_levels_set_action(&g, action);
    tpout_book_update_levels_set_price_mantissa(&g, px);
    tpout_book_update_levels_set_quantity(&g, qty);
    uint32_t len =
        (uint32_t)(TPOUT_MESSAGE_HEADER_ENCODED_LENGTH + tpout_book_update_encoded_length(&m));
    assert_true(tp_bus_publish(w, TP_REC_SBE, TP_TOPIC_DEPTH, id, 0, buf, len) > 0);
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

static void test_example_prints_top_of_book(void **state)
{
    (void)state;
    assert_int_equal(tmpdir_make(dir, sizeof(dir), "example"), 0);
    char err[256];
    struct tp_bus_writer w;
    struct tp_bus_params p = {.instance = "demo",
                              .dir = dir,
                              .ring_bytes = 1 << 16,
                              .max_record = 256,
                              .instruments = 3,
                              .depth = 5,
                              .counters = 8,
                              .mode = 0644,
                              .gid = (gid_t)-1};
    assert_int_equal(tp_bus_writer_open(&w, &p, err, sizeof(err)), 0);
    struct tp_state_entry *e = tp_state_write_begin(w.state, 2);
    memcpy(e->book.symbol, "ESZ6", 4);
    e->book.bid_levels = 1;
    tp_state_bids(e)[0] = (struct tp_level){.price = 4500250000000, .qty = 12};
    tp_state_write_end(e);

    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl(example, example, "--dir", dir, "--seconds", "20", "demo", "ESZ6", (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    for (int i = 0; i < 2000 && !reader_attached(); i++)
        usleep(5000);
    assert_true(reader_attached());
    usleep(50000);                                  /* let it subscribe */
    publish_book(&w, 2, 1, 1, 0, 4500500000000, 7); /* ask appears: top changes */
    publish_book(&w, 1, 0, 1, 0, 100, 1);           /* another instrument: filtered */
    publish_book(&w, 2, 0, 2, 0, 4500000000000, 3); /* second bid level: top unchanged */
    usleep(200000);
    tp_bus_writer_close(&w, 1); /* the example notices and stops */

    char out[4096];
    size_t n = 0;
    ssize_t r;
    while ((r = read(fds[0], out + n, sizeof(out) - 1 - n)) > 0)
        n += (size_t)r;
    out[n] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    print_message("%s", out);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_non_null(
        strstr(out, "ESZ6         bid         12 @ 4500.250000000   ask          0 @ -"));
    assert_non_null(strstr(out, "ask          7 @ 4500.500000000"));
    assert_non_null(
        strstr(out, "summary: stopped by writer closed; records 3, delivered 1, filtered 1"));
    assert_non_null(strstr(out, "top changes 1, trades 0"));
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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
