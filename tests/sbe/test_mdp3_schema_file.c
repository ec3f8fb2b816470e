/*
 * The schema file check: the build's own schema passes, another version or id is refused with
 * both named, and files that are not SBE schemas are errors, not guesses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mdp3_sbe.h"
#include "mdp3_schema_file.h"

static char path[64];
static char err[512];

static void write_schema(const char *text)
{
    strcpy(path, "/tmp/tp-schema-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_build_schema_passes(void **state)
{
    (void)state;
    uint32_t id, version;
    assert_int_equal(tp_sbe_schema_file_id(TP_MDP3_SCHEMA_PATH, &id, &version, err, sizeof(err)),
                     0);
    assert_int_equal(id, MKTDATA_SCHEMA_ID);
    assert_int_equal(version, MKTDATA_SCHEMA_VERSION);
    assert_int_equal(tp_mdp3_schema_file_check(TP_MDP3_SCHEMA_PATH, err, sizeof(err)), 0);
}

static void test_other_version_is_refused(void **state)
{
    (void)state;
    char text[512];
    snprintf(text, sizeof(text),
             "<?xml version=\"1.0\"?>\n<!-- <sbe:messageSchema id=\"%d\" version=\"%d\"> -->\n"
             "<ns2:messageSchema xmlns:ns2=\"http://fixprotocol.io/2016/sbe\" package=\"mktdata\"\n"
             "\tid='%d' version=\"%d\" semanticVersion=\"FIX5SP2\">\n</ns2:messageSchema>\n",
             MKTDATA_SCHEMA_ID, MKTDATA_SCHEMA_VERSION, MKTDATA_SCHEMA_ID,
             MKTDATA_SCHEMA_VERSION + 1);
    write_schema(text);
    uint32_t id, version;
    assert_int_equal(tp_sbe_schema_file_id(path, &id, &version, err, sizeof(err)), 0);
    assert_int_equal(version, MKTDATA_SCHEMA_VERSION + 1);
    assert_int_equal(tp_mdp3_schema_file_check(path, err, sizeof(err)), -EPROTO);
    char want[128];
    snprintf(
        want, sizeof(want), "is schema id %d version %d, but this build decodes id %d version %d",
        MKTDATA_SCHEMA_ID, MKTDATA_SCHEMA_VERSION + 1, MKTDATA_SCHEMA_ID, MKTDATA_SCHEMA_VERSION);
    assert_non_null(strstr(err, want));
    unlink(path);

    /* Another schema altogether (the id), unprefixed element. */
    snprintf(text, sizeof(text), "<messageSchema package=\"x\" id=\"%d\" version=\"%d\"/>",
             MKTDATA_SCHEMA_ID + 1, MKTDATA_SCHEMA_VERSION);
    write_schema(text);
    assert_int_equal(tp_mdp3_schema_file_check(path, err, sizeof(err)), -EPROTO);
    unlink(path);
}

static void test_not_a_schema(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "<configuration><channel id=\"310\"/></configuration>",
        "<sbe:messageSchema package=\"mktdata\" version=\"9\">", /* no id */
        "<sbe:messageSchema id=\"1\" version=\"nine\">",         /* not a number */
        "<sbe:messageSchemaX id=\"1\" version=\"9\">",           /* another element */
        "<sbe:messageSchema xid=\"1\" id=\"1\" version=\"9\"",   /* never closed */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        write_schema(bad[i]);
        assert_int_equal(tp_mdp3_schema_file_check(path, err, sizeof(err)), -EINVAL);
        unlink(path);
    }
    assert_int_equal(tp_mdp3_schema_file_check("/nonexistent/schema.xml", err, sizeof(err)),
                     -ENOENT);
    assert_non_null(strstr(err, "/nonexistent/schema.xml"));
}

/* An attribute whose name ends another one's ("xid") is not taken for it. */
static void test_whole_attribute_names(void **state)
{
    (void)state;
    write_schema("<sbe:messageSchema xid=\"7\" id=\"1\" version=\"9\">");
    uint32_t id, version;
    assert_int_equal(tp_sbe_schema_file_id(path, &id, &version, err, sizeof(err)), 0);
    assert_int_equal(id, 1);
    assert_int_equal(version, 9);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_build_schema_passes),
        cmocka_unit_test(test_other_version_is_refused),
        cmocka_unit_test(test_not_a_schema),
        cmocka_unit_test(test_whole_attribute_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
