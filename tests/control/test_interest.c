/* The data plane's interest table: applying commands, matching, limits, hostile commands. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config.h"
#include "interest.h"

static struct tp_interest *t;

static int setup(void **state)
{
    (void)state;
    struct tp_interest_params p = {.max_subscriptions = 3};
    t = malloc(tp_interest_memsize(&p));
    return tp_interest_init(t, &p);
}

static int teardown(void **state)
{
    (void)state;
    free(t);
    return 0;
}

static struct tp_ctl_cmd cmd(uint32_t op, uint32_t client, uint32_t sub, uint32_t topics,
                             const char *venue, const char *pattern)
{
    struct tp_ctl_cmd c = {.op = op, .client_id = client, .sub_id = sub, .topics = topics};
    strcpy(c.venue, venue);
    strcpy(c.pattern, pattern);
    return c;
}

static void test_subscribe_match_unsubscribe(void **state)
{
    (void)state;
    struct tp_ctl_cmd a = cmd(TP_CTL_SUBSCRIBE, 1, 1, TP_CFG_TOPIC_TOP, "CME", "ES*");
    struct tp_ctl_cmd b = cmd(TP_CTL_SUBSCRIBE, 2, 1, TP_CFG_TOPIC_TRADES, "CME", "ESZ6");
    struct tp_ctl_cmd c = cmd(TP_CTL_SUBSCRIBE, 2, 2, TP_CFG_TOPIC_MBO, "NASDAQ", "*");
    assert_int_equal(tp_interest_apply(t, &a), 0);
    assert_int_equal(tp_interest_apply(t, &b), 0);
    assert_int_equal(tp_interest_apply(t, &c), 0);
    assert_int_equal(t->generation, 3);
    assert_int_equal(tp_interest_topics(t, "CME", "ESZ6"), TP_CFG_TOPIC_TOP | TP_CFG_TOPIC_TRADES);
    assert_int_equal(tp_interest_topics(t, "CME", "ESH7"), TP_CFG_TOPIC_TOP);
    assert_int_equal(tp_interest_topics(t, "CME", "NQZ6"), 0);
    assert_int_equal(tp_interest_topics(t, "NASDAQ", "ESZ6"), TP_CFG_TOPIC_MBO);
    /* Full. */
    struct tp_ctl_cmd d = cmd(TP_CTL_SUBSCRIBE, 3, 1, TP_CFG_TOPIC_TOP, "CME", "*");
    assert_int_equal(tp_interest_apply(t, &d), -ENOSPC);
    assert_int_equal(t->generation, 3);
    /* One subscription of client 1, then all of client 2. */
    struct tp_ctl_cmd u = cmd(TP_CTL_UNSUBSCRIBE, 1, 1, 0, "", "");
    assert_int_equal(tp_interest_apply(t, &u), 0);
    assert_int_equal(tp_interest_topics(t, "CME", "ESH7"), 0);
    assert_int_equal(tp_interest_apply(t, &u), -ENOENT);
    struct tp_ctl_cmd all = cmd(TP_CTL_UNSUBSCRIBE_CLIENT, 2, 0, 0, "", "");
    assert_int_equal(tp_interest_apply(t, &all), 0);
    assert_int_equal(t->used, 0);
    assert_int_equal(tp_interest_topics(t, "CME", "ESZ6"), 0);
    /* Room again. */
    assert_int_equal(tp_interest_apply(t, &d), 0);
    assert_int_equal(tp_interest_topics(t, "CME", "ANY"), TP_CFG_TOPIC_TOP);
}

static void test_hostile_commands(void **state)
{
    (void)state;
    struct tp_ctl_cmd c = cmd(TP_CTL_SUBSCRIBE, 1, 1, TP_CFG_TOPIC_TOP, "CME", "ES*");
    memset(c.pattern, 'A', sizeof(c.pattern)); /* no terminator */
    assert_int_equal(tp_interest_apply(t, &c), -EINVAL);
    c = cmd(TP_CTL_SUBSCRIBE, 0, 1, TP_CFG_TOPIC_TOP, "CME", "ES*"); /* client 0 */
    assert_int_equal(tp_interest_apply(t, &c), -EINVAL);
    c = cmd(99, 1, 1, TP_CFG_TOPIC_TOP, "CME", "ES*"); /* unknown op */
    assert_int_equal(tp_interest_apply(t, &c), -EINVAL);
    c = cmd(TP_CTL_SUBSCRIBE, 1, 1, 0, "CME", "ES*"); /* no topics */
    assert_int_equal(tp_interest_apply(t, &c), -EINVAL);
    assert_int_equal(t->used, 0);
    assert_int_equal(t->generation, 0);
    struct tp_interest_params p = {.max_subscriptions = 0};
    char mem[64];
    assert_int_equal(tp_interest_init(mem, &p), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_subscribe_match_unsubscribe, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_commands, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
