/*
 * CME config.xml reader: the fixture, malformed documents (each with its message), every truncated
 * prefix of the fixture (no crash, no acceptance), CME's real autocert file when it is present, a
 * JSON channel that imports its lines from the fixture, and a CME channel id given twice, by hand
 * or by import.
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

#include "cme_channels.h"
#include "config.h"

#define FIXTURE TP_TEST_FIXTURES "/cme-config.xml"

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n;
    return buf;
}

static void test_fixture_channel_310(void **state)
{
    (void)state;
    struct tp_cme_channel ch;
    char err[200];
    assert_int_equal(tp_cme_channel_load(FIXTURE, 310, &ch, err, sizeof(err)), 0);
    assert_int_equal(ch.id, 310);
    assert_string_equal(ch.label, "Test & Equity Futures");
    assert_int_equal(ch.n_connections, 7);
    const struct tp_cme_connection *ia = tp_cme_channel_feed(&ch, "I", 'A');
    assert_non_null(ia);
    assert_string_equal(ia->id, "310IA");
    assert_int_equal(ia->ip, 0xe0001f01u);
    assert_int_equal(ia->host_ip, 0x0a01010au);
    assert_int_equal(ia->port, 14310);
    const struct tp_cme_connection *sb = tp_cme_channel_feed(&ch, "S", 'B');
    assert_non_null(sb);
    assert_int_equal(sb->ip, 0xe0002016u);
    assert_int_equal(sb->port, 15311);
    assert_non_null(tp_cme_channel_feed(&ch, "N", 'A'));
    assert_null(tp_cme_channel_feed(&ch, "N", 'B'));
    const struct tp_cme_connection *mbo = tp_cme_channel_feed(&ch, "SMBO", 'A');
    assert_non_null(mbo);
    assert_int_equal(mbo->port, 16311);
    /* The TCP historical replay connection is listed but is not a multicast feed. */
    assert_string_equal(ch.connections[6].protocol, "TCP/IP");
    assert_null(tp_cme_channel_feed(&ch, "H", 0));
}

static void test_fixture_other_and_missing(void **state)
{
    (void)state;
    struct tp_cme_channel ch;
    char err[200];
    assert_int_equal(tp_cme_channel_load(FIXTURE, 311, &ch, err, sizeof(err)), 0);
    assert_int_equal(ch.n_connections, 1);
    assert_int_equal(tp_cme_channel_load(FIXTURE, 999, &ch, err, sizeof(err)), -ENOENT);
    assert_string_equal(err, "channel 999 is not in the file");
    assert_int_equal(tp_cme_channel_load("/nonexistent.xml", 1, &ch, err, sizeof(err)), -ENOENT);
}

static void expect_malformed(const char *xml, const char *message)
{
    struct tp_cme_channel ch;
    char err[200];
    int rc = tp_cme_channel_find(xml, strlen(xml), 1, &ch, err, sizeof(err));
    if (rc != -EINVAL || strcmp(err, message) != 0)
        fprintf(stderr, "rc %d err \"%s\", wanted \"%s\"\n", rc, err, message);
    assert_int_equal(rc, -EINVAL);
    assert_string_equal(err, message);
}

#define CONN(body)                                                                                 \
    "<configuration><channel id=\"1\"><connections><connection id=\"1IA\">" body                   \
    "</connection></connections></channel></configuration>"

static void test_malformed_documents(void **state)
{
    (void)state;
    expect_malformed("<configuration><channel id=\"1\"></chanel></configuration>",
                     "line 1: closing </chanel> does not match <channel>");
    expect_malformed("<configuration>\n<channel id=\"1>\n</configuration>",
                     "line 3: '<' inside an attribute value");
    expect_malformed("<!DOCTYPE x><configuration/>", "line 1: DOCTYPE and CDATA are not supported");
    expect_malformed("hello<configuration/>", "line 1: text outside the root element");
    expect_malformed("<config/>", "line 1: root element is <config>, expected <configuration>");
    expect_malformed("<configuration/><configuration/>", "line 1: more than one root element");
    expect_malformed("<configuration><channel id=1/></configuration>",
                     "line 1: attribute id value is not quoted");
    expect_malformed("<configuration><channel id=\"x1\"/></configuration>",
                     "line 1: channel id \"x1\" is not a number");
    expect_malformed("<configuration>&bogus;</configuration>", "line 1: unknown entity");
    expect_malformed("<configuration><a>", "line 1: document ends inside <a>");
    expect_malformed("<configuration><!-- x", "line 1: unterminated comment");
    expect_malformed("", "line 1: no root element");
    expect_malformed("<configuration><channel id=\"1\"/><channel id=\"1\"/></configuration>",
                     "line 1: channel 1 appears 2 times");
    expect_malformed(CONN("<type feed-type=\"I\">x</type><protocol>UDP/IP</protocol>"
                          "<ip>224.0.0.300</ip><port>1</port><feed>A</feed>"),
                     "line 1: <ip> \"224.0.0.300\" is not an IPv4 address");
    expect_malformed(CONN("<type feed-type=\"I\">x</type><protocol>UDP/IP</protocol>"
                          "<ip>224.0.0.3</ip><port>70000</port><feed>A</feed>"),
                     "line 1: <port> \"70000\" is not a UDP port");
    expect_malformed(CONN("<type feed-type=\"I\">x</type><protocol>UDP/IP</protocol>"
                          "<ip>224.0.0.3</ip><port>7</port><feed>C</feed>"),
                     "line 1: <feed> \"C\" is not A or B");
    expect_malformed(CONN("<type feed-type=\"I\">x</type><protocol>UDP/IP</protocol>"
                          "<ip>224.0.0.3</ip><feed>A</feed>"),
                     "line 1: connection 1IA lacks <ip>, <port> or <feed>");
    expect_malformed(CONN("<protocol>UDP/IP</protocol>"),
                     "line 1: connection 1IA has no <type feed-type=...>");
    expect_malformed(CONN("<type feed-type=\"TOOLONGTYPE\">x</type>"),
                     "line 1: feed-type \"TOOLONGTYPE\" is too long");
}

static void test_every_truncation_is_refused(void **state)
{
    (void)state;
    size_t len;
    char *xml = read_all(FIXTURE, &len);
    /* The document is complete only after "</configuration>"; nothing shorter may be accepted. */
    const char *close = strstr(xml, "</configuration>");
    assert_non_null(close);
    size_t complete = (size_t)(close - xml) + strlen("</configuration>");
    struct tp_cme_channel ch;
    char err[200];
    for (size_t n = 0; n < complete; n++) {
        /* A copy of exactly n bytes, so ASan catches any read past the end. */
        char *prefix = malloc(n ? n : 1);
        memcpy(prefix, xml, n);
        int rc = tp_cme_channel_find(prefix, n, 310, &ch, err, sizeof(err));
        free(prefix);
        assert_int_equal(rc, -EINVAL);
    }
    assert_int_equal(tp_cme_channel_find(xml, complete, 310, &ch, err, sizeof(err)), 0);
    free(xml);
}

static void test_real_cme_file_when_present(void **state)
{
    (void)state;
    if (access(TP_SHARED_CME, R_OK) != 0) {
        fprintf(stderr, "note: %s absent, only the fixture was used\n", TP_SHARED_CME);
        return;
    }
    struct tp_cme_channel ch;
    char err[200];
    int rc = tp_cme_channel_load(TP_SHARED_CME, 901, &ch, err, sizeof(err));
    if (rc != 0)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    const struct tp_cme_connection *ia = tp_cme_channel_feed(&ch, "I", 'A');
    const struct tp_cme_connection *ib = tp_cme_channel_feed(&ch, "I", 'B');
    const struct tp_cme_connection *sa = tp_cme_channel_feed(&ch, "S", 'A');
    assert_non_null(ia);
    assert_non_null(ib);
    assert_non_null(sa);
    assert_int_equal(ia->ip, (224u << 24) | (0 << 16) | (25 << 8) | 1);
    assert_int_equal(ia->port, 17901);
    assert_int_equal(ia->host_ip, (69u << 24) | (50 << 16) | (112 << 8) | 46);
    assert_int_equal(ib->ip, (224u << 24) | (0 << 16) | (25 << 8) | 9);
    assert_int_equal(ib->port, 18901);
    assert_int_equal(sa->port, 19901);
    /* CME names its MBO snapshot feed type SMBO (connection 901SAMBO). */
    const struct tp_cme_connection *mbo = tp_cme_channel_feed(&ch, "SMBO", 'A');
    assert_non_null(mbo);
    assert_int_equal(mbo->ip, (224u << 24) | (0 << 16) | (25 << 8) | 227);
    assert_int_equal(mbo->port, 21901);
    assert_int_equal(tp_cme_channel_load(TP_SHARED_CME, 972, &ch, err, sizeof(err)), 0);
    assert_int_equal(tp_cme_channel_load(TP_SHARED_CME, 310, &ch, err, sizeof(err)), -ENOENT);
}

static void test_config_imports_cme_channel(void **state)
{
    (void)state;
    const char *json =
        "{\"eal\": {\"lcores\": \"0-1\"},"
        " \"ports\": [{\"name\": \"a\", \"vdev\": \"net_null0\"},"
        "             {\"name\": \"b\", \"vdev\": \"net_null1\"}],"
        " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"a\"}, {\"port\": \"b\"}],"
        "              \"channels\": [\"es\"]}],"
        " \"channels\": [{\"name\": \"es\", \"protocol\": \"mdp3\","
        "   \"cme_config\": {\"file\": \"cme-config.xml\", \"channel\": 310},"
        "   \"rx_ports\": {\"a\": \"a\", \"b\": \"b\"},"
        "   \"lines\": {\"b\": {\"vlan\": 20}}}]}";
    struct tp_config *cfg = malloc(sizeof(*cfg));
    struct tp_config_errors *errs = malloc(sizeof(*errs));
    int rc = tp_config_load_string(json, TP_TEST_FIXTURES, cfg, errs);
    if (rc != 0) {
        char buf[4096];
        tp_config_errors_format(errs, buf, sizeof(buf));
        fprintf(stderr, "%s", buf);
    }
    assert_int_equal(rc, 0);
    const struct tp_cfg_channel *ch = &cfg->channels[0];
    assert_int_equal(ch->venue_channel_id, 310);
    assert_int_equal(ch->lines[0].group, 0xe0001f01u);
    assert_int_equal(ch->lines[0].port, 14310);
    assert_int_equal(ch->lines[0].source, 0x0a01010au);
    assert_int_equal(ch->lines[0].vlan, -1);
    assert_int_equal(ch->lines[0].rx_port, 0);
    assert_int_equal(ch->lines[1].group, 0xe0002001u);
    assert_int_equal(ch->lines[1].vlan, 20); /* the JSON overrides the import */
    assert_int_equal(ch->lines[1].rx_port, 1);
    assert_true(ch->snapshot[0].present && ch->snapshot[1].present);
    assert_int_equal(ch->snapshot[1].rx_port, 1);
    assert_int_equal(ch->snapshot[1].port, 15311);
    assert_true(ch->proto.mdp3.definitions[0].present);
    assert_false(ch->proto.mdp3.definitions[1].present);
    /* CME's SMBO feed becomes the MBO snapshot lines. */
    assert_true(ch->proto.mdp3.snapshot_mbo[0].present);
    assert_false(ch->proto.mdp3.snapshot_mbo[1].present);
    assert_int_equal(ch->proto.mdp3.snapshot_mbo[0].group, 0xe0001f7au);
    assert_int_equal(ch->proto.mdp3.snapshot_mbo[0].port, 16311);

    /* A channel id that is not in the file is one clear error. */
    char bad[2048];
    snprintf(bad, sizeof(bad), "%s", json);
    char *id = strstr(bad, "310");
    memcpy(id, "312", 3);
    assert_int_equal(tp_config_load_string(bad, TP_TEST_FIXTURES, cfg, errs), -EINVAL);
    if (errs->count != 1) {
        char buf[4096];
        tp_config_errors_format(errs, buf, sizeof(buf));
        fprintf(stderr, "%s", buf);
    }
    assert_int_equal(errs->count, 1);
    assert_string_equal(errs->items[0].path, "channels[0].cme_config");
    char want[512];
    snprintf(want, sizeof(want), "%s/cme-config.xml: channel 312 is not in the file",
             TP_TEST_FIXTURES);
    assert_string_equal(errs->items[0].message, want);
    free(cfg);
    free(errs);
}

/*
 * Two channels, "one" (mdp3) and "two" (of second_protocol), each with CME's channel 310: 'i'
 * imports it from the fixture ("cme_config"), 'h' writes "id": 310 and lines of its own.
 */
static int load_pair(char first, char second, const char *second_protocol, struct tp_config *cfg,
                     struct tp_config_errors *errs)
{
    char how[2][256];
    const char which[2] = {first, second};
    for (int i = 0; i < 2; i++) {
        if (which[i] == 'i')
            snprintf(how[i], sizeof(how[i]),
                     "\"cme_config\": {\"file\": \"cme-config.xml\", \"channel\": 310}");
        else
            snprintf(how[i], sizeof(how[i]),
                     "\"id\": 310, \"lines\": {\"a\": {\"group\": \"239.9.9.%d\", "
                     "\"port\": 999}}",
                     i);
    }
    char json[2048];
    snprintf(json, sizeof(json),
             "{\"eal\": {\"lcores\": \"0-1\"},"
             " \"ports\": [{\"name\": \"a\", \"vdev\": \"net_null0\"}],"
             " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"a\"}],"
             "              \"channels\": [\"one\", \"two\"]}],"
             " \"channels\": [{\"name\": \"one\", \"protocol\": \"mdp3\", %s},"
             "                {\"name\": \"two\", \"protocol\": \"%s\", %s}]}",
             how[0], second_protocol, how[1]);
    return tp_config_load_string(json, TP_TEST_FIXTURES, cfg, errs);
}

/* A CME channel id taken twice is refused at the key that gave the second: "id", or the
 * "cme_config" that imported it; another venue's channel may carry the same number. */
static void test_duplicate_cme_channel_id(void **state)
{
    (void)state;
    struct tp_config *cfg = malloc(sizeof(*cfg));
    struct tp_config_errors *errs = malloc(sizeof(*errs));
    const char *const dup = "CME channel 310 is already channels[0]";
    /* Each first error (two imports also share their lines: those come after). */
    const struct {
        char first, second;
        unsigned errors;
        const char *path;
    } cases[] = {{'h', 'h', 1, "channels[1].id"},
                 {'i', 'i', 0, "channels[1].cme_config"},
                 {'i', 'h', 1, "channels[1].id"},
                 {'h', 'i', 1, "channels[1].cme_config"}};
    for (unsigned c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        assert_int_equal(load_pair(cases[c].first, cases[c].second, "mdp3", cfg, errs), -EINVAL);
        if (cases[c].errors != 0)
            assert_int_equal(errs->count, cases[c].errors);
        assert_string_equal(errs->items[0].path, cases[c].path);
        assert_string_equal(errs->items[0].message, dup);
    }

    /* The ids are the venue's: a Nasdaq channel 310 beside CME's is no duplicate. */
    assert_int_equal(load_pair('i', 'h', "itch", cfg, errs), 0);
    assert_int_equal(cfg->channels[0].venue_channel_id, 310);
    assert_int_equal(cfg->channels[1].venue_channel_id, 310);
    free(cfg);
    free(errs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_channel_310),
        cmocka_unit_test(test_fixture_other_and_missing),
        cmocka_unit_test(test_malformed_documents),
        cmocka_unit_test(test_every_truncation_is_refused),
        cmocka_unit_test(test_real_cme_file_when_present),
        cmocka_unit_test(test_config_imports_cme_channel),
        cmocka_unit_test(test_duplicate_cme_channel_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
