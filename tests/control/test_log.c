/* The logging module (control/log/log.h): line format, levels per component, journald's
 * priority prefix, the flood limiter and its count of what it suppressed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"

static FILE *out;
static long from; /* what written() has returned so far */

/* What was written since the last call. */
static const char *written(void)
{
    static char buf[8192];
    fflush(out);
    long end = ftell(out);
    fseek(out, from, SEEK_SET);
    size_t n = fread(buf, 1, (size_t)(end - from), out);
    buf[n] = '\0';
    fseek(out, end, SEEK_SET);
    from = end;
    return buf;
}

static int setup(void **state)
{
    (void)state;
    unsetenv("JOURNAL_STREAM");
    out = tmpfile();
    from = 0;
    if (out == NULL)
        return -1;
    tp_log_open("tptest", out);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fclose(out);
    return 0;
}

static void test_line_format(void **state)
{
    (void)state;
    tp_log(TP_LOG_GAP, TP_LOG_WARNING, "gap detected: channel %s: %d gaps", "itch", 3);
    const char *line = written();
    /* 2026-12-02T00:30:01.123Z tptest[PID]: warning gap: ... */
    char want[128];
    snprintf(want, sizeof(want), "Z tptest[%d]: warning gap: gap detected: channel itch: 3 gaps\n",
             (int)getpid());
    assert_int_equal(line[4], '-');
    assert_int_equal(line[10], 'T');
    assert_int_equal(line[19], '.');
    assert_string_equal(line + 23, want);
}

static void test_levels_per_component(void **state)
{
    (void)state;
    tp_log_set_level(TP_LOG_GAP, TP_LOG_WARNING);
    tp_log_set_level(TP_LOG_BOOKS, TP_LOG_DEBUG);
    tp_log(TP_LOG_GAP, TP_LOG_INFO, "hidden");
    tp_log(TP_LOG_GAP, TP_LOG_ERR, "shown");
    tp_log(TP_LOG_BOOKS, TP_LOG_DEBUG, "detail");
    const char *text = written();
    assert_null(strstr(text, "hidden"));
    assert_non_null(strstr(text, "error gap: shown\n"));
    assert_non_null(strstr(text, "debug books: detail\n"));
    assert_int_equal(tp_log_level_parse("notice"), TP_LOG_NOTICE);
    assert_int_equal(tp_log_level_parse("loud"), -1);
    assert_int_equal(tp_log_component_parse("consumer"), TP_LOG_CONSUMER);
    assert_int_equal(tp_log_component_parse("nope"), -1);
    tp_log_set_level(TP_LOG_GAP, TP_LOG_INFO);
    tp_log_set_level(TP_LOG_BOOKS, TP_LOG_INFO);
}

static void test_limiter_counts_suppressed(void **state)
{
    (void)state;
    struct tp_log_limit lim = {0};
    tp_log_set_burst(3);
    int passed = 0;
    for (int i = 0; i < 10; i++)
        passed += tp_log_limited(&lim, TP_LOG_GAP, TP_LOG_NOTICE, "flood %d", i);
    assert_int_equal(passed, 3);
    assert_int_equal(lim.suppressed, 7);
    const char *text = written();
    assert_non_null(strstr(text, "flood 2\n"));
    assert_null(strstr(text, "flood 3"));
    /* Too early for a flush: the window is still open. */
    tp_log_limit_flush(&lim, TP_LOG_GAP, TP_LOG_NOTICE, "flood");
    assert_string_equal(written(), "");
    /* The next window's first line carries the count. */
    lim.window_ms -= 1000;
    assert_true(tp_log_limited(&lim, TP_LOG_GAP, TP_LOG_NOTICE, "flood again"));
    assert_non_null(strstr(written(), "flood again (7 similar lines suppressed)\n"));
    /* A flood that just stops is reported by the flush. */
    for (int i = 0; i < 5; i++)
        tp_log_limited(&lim, TP_LOG_GAP, TP_LOG_NOTICE, "more %d", i);
    lim.window_ms -= 1000;
    tp_log_limit_flush(&lim, TP_LOG_GAP, TP_LOG_NOTICE, "more");
    assert_non_null(strstr(written(), "notice gap: more: 3 similar lines suppressed\n"));
    tp_log_set_burst(10);
}

static void test_journal_prefix(void **state)
{
    (void)state;
    struct stat st;
    assert_int_equal(fstat(fileno(out), &st), 0);
    char env[64];
    snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long)st.st_dev,
             (unsigned long long)st.st_ino);
    setenv("JOURNAL_STREAM", env, 1);
    tp_log_open("tptest", out);
    tp_log(TP_LOG_RELOAD, TP_LOG_WARNING, "reload refused: x");
    assert_string_equal(written(), "<4>reload: reload refused: x\n");
    /* Another stream: not the journal, plain lines. */
    setenv("JOURNAL_STREAM", "1:2", 1);
    tp_log_open("tptest", out);
    tp_log(TP_LOG_RELOAD, TP_LOG_NOTICE, "y");
    assert_non_null(strstr(written(), "notice reload: y\n"));
    unsetenv("JOURNAL_STREAM");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_line_format, setup, teardown),
        cmocka_unit_test_setup_teardown(test_levels_per_component, setup, teardown),
        cmocka_unit_test_setup_teardown(test_limiter_counts_suppressed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_journal_prefix, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
