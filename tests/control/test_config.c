/*
 * Config loader tests: a valid base document, then one mistake at a time (each asserting the exact
 * message and path), several mistakes at once, defaults, the EAL argv and the instrument filter.
 */
#include <errno.h>
#include <limits.h>
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
#include <jansson.h>

#include "config.h"
#include "config_mutate.h"
#include "eobi_release.h"
#include "preload_plan.h"

static const char *base_json =
    "{"
    " \"name\": \"test\","
    " \"eal\": {\"lcores\": \"0-1\", \"memory_mb\": 256, \"no_huge\": true, \"no_pci\": true,"
    "         \"no_shconf\": true},"
    " \"ports\": [{\"name\": \"p0\", \"vdev\": \"net_null0\", \"mbuf_pool_size\": 4095,"
    "             \"rx_descriptors\": 512}],"
    " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"p0\", \"queue\": 0}],"
    "              \"channels\": [\"cme-310\", \"itch\"]}],"
    " \"channels\": ["
    "  {\"name\": \"cme-310\", \"protocol\": \"mdp3\", \"id\": 310,"
    "   \"lines\": {\"a\": {\"group\": \"224.0.31.1\", \"port\": 14310},"
    "             \"b\": {\"group\": \"224.0.32.1\", \"port\": 15310}},"
    "   \"recovery\": {\"snapshot\": {\"a\": {\"group\": \"224.0.31.22\", \"port\": 14311}},"
    "                \"gap_wait_us\": 200}},"
    "  {\"name\": \"itch\", \"protocol\": \"itch\","
    "   \"lines\": {\"a\": {\"group\": \"233.54.12.111\", \"port\": 26477, \"vlan\": 100,"
    "                     \"source\": \"10.2.0.1\"}},"
    "   \"recovery\": {\"rerequest\": \"10.0.0.5:17000\", \"give_up_ms\": 2000}}"
    " ],"
    " \"instruments\": {\"capacity\": 1024, \"include\": [\"ES*\", \"AAPL\"]},"
    " \"books\": {\"max_orders\": 65536, \"levels_per_side\": 10},"
    " \"bus\": {\"ring_bytes\": 1048576, \"mode\": \"0640\"},"
    " \"control\": {\"socket\": \"/tmp/tp-test.sock\", \"mode\": \"0660\"},"
    " \"entitlements\": {\"default\": \"deny\", \"rules\": [{\"uid\": 1000, \"venues\": [\"CME\"],"
    "                  \"instruments\": [\"ES*\"], \"topics\": [\"top\", \"trades\"]}]},"
    " \"telemetry\": {\"interval_ms\": 1000},"
    " \"_comment\": \"comments are accepted anywhere under this key\""
    "}";

static struct tp_config *cfg;
static struct tp_config_errors *errs;

static int setup(void **state)
{
    (void)state;
    cfg = malloc(sizeof(*cfg));
    errs = malloc(sizeof(*errs));
    return cfg == NULL || errs == NULL;
}

static int teardown(void **state)
{
    (void)state;
    free(cfg);
    free(errs);
    return 0;
}

/* Load the base document with mutations: pairs of (path, JSON value text or NULL = delete). */
static int load_mutated(int pairs, ...)
{
    va_list ap;
    va_start(ap, pairs);
    int rc = tp_test_load_mutated_v(base_json, "/etc/tickplane", cfg, errs, pairs, ap);
    va_end(ap);
    return rc;
}

static void print_errors(void)
{
    char buf[8192];
    tp_config_errors_format(errs, buf, sizeof(buf));
    fprintf(stderr, "%u errors:\n%s", errs->count, buf);
}

/* Assert that exactly `count` errors were reported and that "path: message" is one of them. */
static void expect_error(unsigned count, const char *path, const char *message)
{
    bool found = false;
    for (unsigned i = 0; i < errs->count; i++)
        found |=
            strcmp(errs->items[i].path, path) == 0 && strcmp(errs->items[i].message, message) == 0;
    if (!found || errs->count != count) {
        fprintf(stderr, "wanted %u errors incl. \"%s: %s\"\n", count, path, message);
        print_errors();
    }
    assert_true(found);
    assert_int_equal(errs->count, count);
}

/* ------------------------------------------------------------- good */

static void test_base_is_valid(void **state)
{
    (void)state;
    int rc = load_mutated(0);
    if (rc != 0)
        print_errors();
    assert_int_equal(rc, 0);
    assert_int_equal(errs->count, 0);
    assert_string_equal(cfg->name, "test");
    assert_int_equal(cfg->eal.n_lcores, 2);
    assert_int_equal(cfg->eal.main_lcore, 0);
    assert_int_equal(cfg->n_ports, 1);
    assert_string_equal(cfg->ports[0].dev_name, "net_null0");
    assert_int_equal(cfg->ports[0].rx_queues, 1);        /* default */
    assert_int_equal(cfg->ports[0].tx_descriptors, 512); /* default */
    assert_int_equal(cfg->ports[0].ipv4, 0);             /* default: none */
    assert_true(cfg->ports[0].nic_timestamps);           /* default: where the NIC stamps */
    assert_int_equal(cfg->n_channels, 2);
    const struct tp_cfg_channel *c0 = &cfg->channels[0], *c1 = &cfg->channels[1];
    assert_int_equal(c0->protocol, TP_CFG_PROTO_MDP3);
    assert_string_equal(c0->venue, "CME");
    assert_int_equal(c0->venue_channel_id, 310);
    assert_true(c0->lines[0].present && c0->lines[1].present);
    assert_int_equal(c0->lines[0].group, 0xe0001f01u); /* 224.0.31.1, host order */
    assert_int_equal(c0->lines[0].port, 14310);
    assert_int_equal(c0->lines[0].vlan, -1);
    assert_int_equal(c0->lines[0].source, 0);
    assert_true(c0->snapshot[0].present);
    assert_false(c0->snapshot[1].present);
    assert_int_equal(c0->gap_wait_us, 200);
    assert_int_equal(c0->give_up_ms, 5000); /* default */
    assert_int_equal(c1->protocol, TP_CFG_PROTO_ITCH);
    assert_string_equal(c1->venue, "NASDAQ");
    assert_false(c1->lines[1].present);
    assert_int_equal(c1->lines[0].vlan, 100);
    assert_int_equal(c1->lines[0].source, 0x0a020001u);
    assert_int_equal(c1->proto.itch.rerequest_host, 0x0a000005u);
    assert_int_equal(c1->proto.itch.rerequest_port, 17000);
    assert_int_equal(c1->give_up_ms, 2000);
    assert_int_equal(cfg->n_lcores, 1);
    assert_int_equal(cfg->lcores[0].lcore_id, 1);
    assert_int_equal(cfg->lcores[0].n_channels, 2);
    assert_int_equal(tp_config_channel_lcore(cfg, 1), 0);
    assert_int_equal(cfg->bus.ring_bytes, 1048576);
    assert_int_equal(cfg->bus.mode, 0640);
    assert_string_equal(cfg->bus.path, "/dev/shm");
    assert_int_equal(cfg->control.socket_mode, 0660);
    assert_int_equal(cfg->control.max_clients, 64);
    assert_string_equal(cfg->control.admin_group, "");
    assert_int_equal(cfg->entitlements.n_rules, 1);
    assert_int_equal(cfg->entitlements.rules[0].uid, 1000);
    assert_int_equal(cfg->entitlements.rules[0].gid, -1);
    assert_int_equal(cfg->entitlements.rules[0].topics, TP_CFG_TOPIC_TOP | TP_CFG_TOPIC_TRADES);
    assert_false(cfg->entitlements.default_allow);
    assert_true(cfg->telemetry.dpdk_telemetry);
}

static void test_relative_paths_resolve_against_config_dir(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(2, "ports[0]", "{\"name\": \"p0\", \"pcap\": \"demo.pcap\"}",
                                  "control.socket", "\"run/ctl.sock\""),
                     0);
    assert_int_equal(cfg->ports[0].kind, TP_CFG_PORT_PCAP);
    assert_string_equal(cfg->ports[0].device, "net_pcap0,rx_pcap=/etc/tickplane/demo.pcap");
    assert_string_equal(cfg->ports[0].dev_name, "net_pcap0");
    assert_string_equal(cfg->control.socket_path, "/etc/tickplane/run/ctl.sock");
}

static void test_eal_argv(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "eal.vdevs", "[\"net_null9\"]"), 0);
    char *argv[64];
    int argc = tp_config_eal_argv(cfg, "tickplane", argv, 64);
    const char *want[] = {"tickplane", "-l",        "0,1",       "--main-lcore", "0",
                          "-m",        "256",       "--no-huge", "--no-pci",     "--no-shconf",
                          "--vdev",    "net_null9", "--vdev",    "net_null0"};
    assert_int_equal(argc, sizeof(want) / sizeof(want[0]));
    for (int i = 0; i < argc; i++)
        assert_string_equal(argv[i], want[i]);
    assert_int_equal(tp_config_eal_argv(cfg, "tickplane", argv, 5), -ENOSPC);
}

static void test_explicit_eal_args(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "eal",
                                  "{\"args\": [\"-l\", \"0-1\", \"--no-huge\", \"-m\", \"256\","
                                  " \"--main-lcore=1\"]}"),
                     -EINVAL); /* lcore 1 is now the main lcore */
    expect_error(1, "lcores[0].lcore",
                 "lcore 1 is the main lcore (control plane); data lcores must differ");
    assert_int_equal(load_mutated(1, "eal", "{\"args\": [\"-l\", \"0-1\", \"-m\", \"256\"]}"), 0);
    assert_true(cfg->eal.explicit_args);
    assert_int_equal(cfg->eal.memory_mb, 256);
    char *argv[16];
    assert_int_equal(tp_config_eal_argv(cfg, "t", argv, 16), 7);
    assert_string_equal(argv[5], "--vdev");
}

static void test_instrument_filter(void **state)
{
    (void)state;
    struct tp_cfg_instruments f = {0};
    assert_true(tp_config_instrument_wanted(&f, "ANY", NULL)); /* no filter: everything */
    strcpy(f.include[f.n_include++], "ES*");
    strcpy(f.include[f.n_include++], "AAPL");
    strcpy(f.exclude[f.n_exclude++], "ES?"
                                     "?-*");
    assert_true(tp_config_instrument_wanted(&f, "ESZ6", NULL));
    assert_true(tp_config_instrument_wanted(&f, "AAPL", NULL));
    assert_false(tp_config_instrument_wanted(&f, "AAPLX", NULL));
    assert_false(tp_config_instrument_wanted(&f, "ESZ6-ESH7", NULL)); /* excluded spread */
    strcpy(f.security_groups[f.n_security_groups++], "ES");
    assert_true(tp_config_instrument_wanted(&f, "ESZ6", "ES"));
    assert_false(tp_config_instrument_wanted(&f, "ESZ6", "NQ"));
    assert_false(tp_config_instrument_wanted(&f, "ESZ6", NULL));
}

static void test_topics(void **state)
{
    (void)state;
    assert_int_equal(tp_cfg_topic_from_name("mbo"), TP_CFG_TOPIC_MBO);
    assert_int_equal(tp_cfg_topic_from_name("orders"), TP_CFG_TOPIC_MBO);
    assert_int_equal(tp_cfg_topic_from_name("top"), 1u << 1); /* libtickplane's TP_TOPIC_TOP */
    assert_int_equal(tp_cfg_topic_from_name("nope"), 0);
    assert_string_equal(tp_cfg_topic_name(TP_CFG_TOPIC_DEFINITIONS), "definitions");
    assert_null(tp_cfg_topic_name(3));
}

/* ------------------------------------------------------------- bad */

static void test_bad_unknown_root_key_and_missing(void **state)
{
    (void)state;
    json_error_t jerr;
    json_t *root = json_loads(base_json, 0, &jerr);
    json_object_set(root, "chanels", json_object_get(root, "channels"));
    json_object_del(root, "channels");
    char *text = json_dumps(root, 0);
    json_decref(root);
    assert_int_equal(tp_config_load_string(text, NULL, cfg, errs), -EINVAL);
    free(text);
    expect_error(2, "chanels", "unknown key (did you mean \"channels\"?)");
    expect_error(2, "channels", "required key is missing");
}

static void test_bad_unknown_nested_key(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(2, "control.sockt", "\"/tmp/x\"", "control.socket", NULL),
                     -EINVAL);
    expect_error(1, "control.sockt", "unknown key (did you mean \"socket\"?)");
}

static void test_bad_unknown_key_without_hint(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "books.colour", "1"), -EINVAL);
    expect_error(1, "books.colour", "unknown key");
}

/* Keys the daemon never honoured are refused, not silently ignored. */
static void test_bad_keys_never_honoured(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(3, "bus.venues", "{\"CME\": {\"group\": \"md\"}}", "bus.name",
                                  "\"x\"", "books.depth", "10"),
                     -EINVAL);
    expect_error(3, "bus.venues", "unknown key");
    expect_error(3, "bus.name", "unknown key");
    expect_error(3, "books.depth", "unknown key");
}

/* Groups are the host's business: validation takes any name, the daemon's start checks them. */
static void test_host_check_groups(void **state)
{
    (void)state;
    assert_int_equal(
        load_mutated(2, "bus.group", "\"tp-no-such-group\"", "control.group", "\"nogroup\""), 0);
    struct tp_config_errors host_errs;
    assert_int_equal(tp_config_check_host(cfg, &host_errs), -EINVAL);
    assert_int_equal(host_errs.count, 1);
    assert_string_equal(host_errs.items[0].path, "bus.group");
    assert_string_equal(host_errs.items[0].message,
                        "no such group \"tp-no-such-group\" on this host");
    strcpy(cfg->bus.group, "root");
    assert_int_equal(tp_config_check_host(cfg, &host_errs), 0);
    gid_t gid;
    assert_int_equal(tp_config_group_gid("", &gid), 0);
    assert_int_equal(gid, (gid_t)-1);
    assert_int_equal(tp_config_group_gid("root", &gid), 0);
    assert_int_equal(gid, 0);
}

/* Receive times from the NIC's stamps can be turned off per port; the value must be a boolean. */
static void test_port_nic_timestamps(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "ports[0].nic_timestamps", "false"), 0);
    assert_false(cfg->ports[0].nic_timestamps);
    assert_int_equal(load_mutated(1, "ports[0].nic_timestamps", "\"no\""), -EINVAL);
    expect_error(1, "ports[0].nic_timestamps", "expected a boolean, got string");
}

/* ITCH recovery.snapshot: the GLIMPSE server, its credentials from a file only we may read. */
static void test_itch_snapshot(void **state)
{
    (void)state;
    char cred[64], json[256];
    snprintf(cred, sizeof(cred), "/tmp/tp-test-cred-%d", (int)getpid());
    FILE *f = fopen(cred, "w");
    assert_non_null(f);
    fputs("tpuser:secret42\n", f);
    fclose(f);
    assert_int_equal(chmod(cred, 0600), 0);
    snprintf(json, sizeof(json),
             "{\"host\": \"10.0.0.6\", \"port\": 9100, \"credentials\": \"%s\", "
             "\"attempts\": 5, \"buffer_messages\": 4096}",
             cred);
    assert_int_equal(load_mutated(1, "channels[1].recovery.snapshot", json), 0);
    const struct tp_cfg_itch_snapshot *g = &cfg->channels[1].proto.itch.glimpse;
    assert_true(g->present);
    assert_int_equal(g->host, 0x0a000006u);
    assert_int_equal(g->port, 9100);
    assert_string_equal(g->username, "tpuser");
    assert_string_equal(g->password, "secret42");
    assert_int_equal(g->attempts, 5);
    assert_int_equal(g->buffer_messages, 4096);
    assert_int_equal(g->login_timeout_ms, 2000); /* default */
    assert_false(cfg->channels[0].proto.itch.glimpse.present);

    /* Readable by the group: refused, naming the path. */
    assert_int_equal(chmod(cred, 0640), 0);
    assert_int_equal(load_mutated(1, "channels[1].recovery.snapshot", json), -EINVAL);
    char why[256];
    snprintf(why, sizeof(why),
             "%s must be owned by the service user and readable by nobody else (mode 0640, "
             "owner %u)",
             cred, (unsigned)geteuid());
    expect_error(1, "channels[1].recovery.snapshot.credentials", why);

    /* Not "user:password" of the allowed lengths. */
    assert_int_equal(chmod(cred, 0600), 0);
    f = fopen(cred, "w");
    fputs("toolonguser:pw\n", f);
    fclose(f);
    assert_int_equal(load_mutated(1, "channels[1].recovery.snapshot", json), -EINVAL);
    snprintf(why, sizeof(why),
             "%s: expected one line \"username:password\" (at most 6 and 10 characters)", cred);
    expect_error(1, "channels[1].recovery.snapshot.credentials", why);
    unlink(cred);

    assert_int_equal(load_mutated(1, "channels[1].recovery.snapshot",
                                  "{\"port\": 9100, \"credentials\": \"/x\", \"timeout\": 1}"),
                     -EINVAL);
    expect_error(3, "channels[1].recovery.snapshot.host", "required key is missing");
    expect_error(3, "channels[1].recovery.snapshot.timeout", "unknown key");
    /* A multicast group is no snapshot server; the missing file is named too. */
    assert_int_equal(load_mutated(1, "channels[1].recovery.snapshot",
                                  "{\"host\": \"224.0.0.1\","
                                  " \"port\": 1, "
                                  "\"credentials\": \"/x\"}"),
                     -EINVAL);
    expect_error(2, "channels[1].recovery.snapshot.host",
                 "\"224.0.0.1\" is not a unicast host address");
}

static void test_bad_group_not_multicast(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[0].lines.b.group", "\"10.0.0.1\""), -EINVAL);
    expect_error(1, "channels[0].lines.b.group",
                 "\"10.0.0.1\" is not a multicast address (224.0.0.0/4)");
}

static void test_bad_group_not_an_address(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[0].lines.a.group", "\"224.0.31\""), -EINVAL);
    expect_error(1, "channels[0].lines.a.group", "\"224.0.31\" is not an IPv4 address");
}

static void test_bad_udp_port_range(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[1].lines.a.port", "70000"), -EINVAL);
    expect_error(1, "channels[1].lines.a.port", "70000 is out of range [1, 65535]");
}

static void test_bad_protocol_did_you_mean(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[0].protocol", "\"mdp\""), -EINVAL);
    expect_error(1, "channels[0].protocol",
                 "unknown value \"mdp\" (expected mdp3, itch or eobi; did you mean \"mdp3\"?)");
}

static void test_bad_ring_bytes_power_of_two(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "bus.ring_bytes", "1000000"), -EINVAL);
    expect_error(1, "bus.ring_bytes", "must be a power of two, got 1000000");
}

static void test_bad_duplicate_channel_name(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[1].name", "\"cme-310\""), -EINVAL);
    expect_error(1, "channels[1].name", "duplicate channel name \"cme-310\" (also channels[0])");
}

/* The bus numbers venues by protocol: a second ITCH venue needs its own instance. */
static void test_bad_second_venue_of_a_protocol(void **state)
{
    (void)state;
    assert_int_equal(
        load_mutated(2, "channels[2]",
                     "{\"name\": \"bx\", \"protocol\": \"itch\", \"venue\": \"BX\","
                     " \"lines\": {\"a\": {\"group\": \"233.54.12.112\", \"port\": 1}}}",
                     "lcores[0].channels[2]", "\"bx\""),
        -EINVAL);
    expect_error(1, "channels[2].venue",
                 "\"BX\" differs from channels[1]'s \"NASDAQ\": an instance carries one venue "
                 "per protocol (run another instance for another venue)");
}

static void test_bad_duplicate_group(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(3, "channels[1].lines.a.group", "\"224.0.31.22\"",
                                  "channels[1].lines.a.port", "14311", "channels[1].lines.a.vlan",
                                  NULL),
                     -EINVAL);
    expect_error(1, "channels[1].lines.a",
                 "group 224.0.31.22:14311 is already used by channels[0].recovery.snapshot.a");
}

static void test_bad_same_group_other_vlan_is_fine(void **state)
{
    (void)state;
    /* Same group and port but on VLAN 100: the classifier can tell them apart. */
    assert_int_equal(load_mutated(2, "channels[1].lines.a.group", "\"224.0.31.22\"",
                                  "channels[1].lines.a.port", "14311"),
                     0);
}

/* "--lcores" mappings: two lcores on one CPU (a 2-CPU host running main + two data lcores). */
static void test_lcore_cpu_mappings(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(0), 0);
    uint64_t one_lcore = tp_config_memory_estimate(cfg);
    uint64_t one_lcore_tables = tp_config_lcore_tables_estimate(cfg, 0);
    assert_int_equal(load_mutated(4, "eal.lcores", "\"0@0,1@1,2@1\"", "ports[0].rx_queues", "2",
                                  "lcores[1]",
                                  "{\"lcore\": 2, \"poll\": [{\"port\": \"p0\", \"queue\": 1}],"
                                  " \"channels\": [\"itch\"]}",
                                  "lcores[0].channels", "[\"cme-310\"]"),
                     0);
    assert_true(cfg->eal.cpu_map);
    assert_int_equal(cfg->eal.n_lcores, 3);
    assert_int_equal(cfg->n_lcores, 2);
    assert_int_equal(tp_config_channel_lcore(cfg, 0), 0);
    assert_int_equal(tp_config_channel_lcore(cfg, 1), 1);
    uint64_t cpus[2];
    assert_int_equal(tp_config_lcore_cpus(&cfg->eal, 2, cpus), 0);
    assert_int_equal(cpus[0], 1u << 1); /* lcore 2 runs on CPU 1 */
    assert_int_equal(cpus[1], 0);
    assert_int_equal(tp_config_lcore_cpus(&cfg->eal, 0, cpus), 0);
    assert_int_equal(cpus[0], 1u << 0);
    assert_int_equal(tp_config_lcore_cpus(&cfg->eal, 3, cpus), -ENOENT);
    char *argv[64];
    int argc = tp_config_eal_argv(cfg, "tickplane", argv, 64);
    assert_true(argc > 4);
    assert_string_equal(argv[1], "--lcores"); /* -l cannot carry mappings */
    assert_string_equal(argv[2], "0@0,1@1,2@1");
    assert_string_equal(argv[3], "--main-lcore");
    assert_string_equal(argv[4], "0");
    /* Each data lcore has its own books and order table (test_memory_estimate checks its size). */
    assert_int_equal(tp_config_memory_estimate(cfg) - one_lcore,
                     tp_config_lcore_tables_estimate(cfg, 0) +
                         tp_config_lcore_tables_estimate(cfg, 1) - one_lcore_tables);
}

/*
 * The base with n (1-3) data lcores: lcore 1 runs cme-310 (and itch when alone), lcore 2 itch,
 * lcore 3 nothing, each polling its own queue of p0. instruments.capacity is `capacity` and
 * lcores[k].instruments is sizes[k] (JSON text; NULL leaves the member out).
 */
static int load_lcores(unsigned n, const char *capacity, const char *const sizes[3])
{
    static const char *const channels[3] = {"[\"cme-310\"]", "[\"itch\"]", "[]"};
    char lcore[3][256], eal_lcores[16], queues[8];
    for (unsigned k = 0; k < 3; k++)
        snprintf(lcore[k], sizeof(lcore[k]),
                 "{\"lcore\": %u, \"poll\": [{\"port\": \"p0\", \"queue\": %u}], "
                 "\"channels\": %s%s%s}",
                 k + 1, k, n == 1 ? "[\"cme-310\", \"itch\"]" : channels[k],
                 sizes[k] != NULL ? ", \"instruments\": " : "", sizes[k] != NULL ? sizes[k] : "");
    snprintf(eal_lcores, sizeof(eal_lcores), "\"0-%u\"", n);
    snprintf(queues, sizeof(queues), "%u", n);
    /* lcores[1] and [2] are appended when wanted; removing them from a shorter list does nothing.
     */
    return load_mutated(6, "eal.lcores", eal_lcores, "ports[0].rx_queues", queues,
                        "instruments.capacity", capacity, "lcores[0]", lcore[0], "lcores[1]",
                        n > 1 ? lcore[1] : NULL, "lcores[2]", n > 2 ? lcore[2] : NULL);
}

/* Load n lcores with these sizes and check each window {first_id, ids}, and that they touch. */
static void expect_windows(unsigned n, const char *capacity, const char *const sizes[3],
                           const uint32_t want[][2])
{
    int rc = load_lcores(n, capacity, sizes);
    if (rc != 0)
        print_errors();
    assert_int_equal(rc, 0);
    assert_int_equal(cfg->n_lcores, n);
    uint32_t next = 0;
    for (unsigned l = 0; l < n; l++) {
        struct tp_cfg_window w = tp_config_lcore_window(cfg, l);
        assert_int_equal(cfg->lcores[l].instruments,
                         sizes[l] != NULL ? (uint32_t)strtoul(sizes[l], NULL, 10) : 0);
        assert_int_equal(w.first_id, want[l][0]);
        assert_int_equal(w.ids, want[l][1]);
        assert_int_equal(w.first_id, next); /* contiguous, in lcore order */
        next = w.first_id + w.ids;
    }
    assert_true(next <= cfg->instruments.capacity);
}

/* lcores[].instruments sizes a window; the lcores without it share what is left evenly. */
static void test_lcore_windows(void **state)
{
    (void)state;
    const char *const none[3] = {NULL, NULL, NULL};
    expect_windows(1, "1024", none, (const uint32_t[][2]){{0, 1024}});
    expect_windows(1, "1024", (const char *const[3]){"100", NULL, NULL},
                   (const uint32_t[][2]){{0, 100}});
    expect_windows(2, "1024", none, (const uint32_t[][2]){{0, 512}, {512, 512}});
    expect_windows(2, "1024", (const char *const[3]){"1000", NULL, NULL},
                   (const uint32_t[][2]){{0, 1000}, {1000, 24}});
    expect_windows(2, "1024", (const char *const[3]){NULL, "24", NULL},
                   (const uint32_t[][2]){{0, 1000}, {1000, 24}});
    /* The production case scaled down: ITCH's stocks on one lcore, CME channels share the rest. */
    expect_windows(2, "4096", (const char *const[3]){NULL, "3000", NULL},
                   (const uint32_t[][2]){{0, 1096}, {1096, 3000}});
    expect_windows(3, "1024", none, (const uint32_t[][2]){{0, 341}, {341, 341}, {682, 342}});
    expect_windows(3, "1024", (const char *const[3]){NULL, "600", NULL},
                   (const uint32_t[][2]){{0, 212}, {212, 600}, {812, 212}});
    expect_windows(3, "1024", (const char *const[3]){"100", NULL, "24"},
                   (const uint32_t[][2]){{0, 100}, {100, 900}, {1000, 24}});
    /* Every lcore sized: the ids after the last window are not used. */
    expect_windows(3, "1024", (const char *const[3]){"100", "200", "300"},
                   (const uint32_t[][2]){{0, 100}, {100, 200}, {300, 300}});
}

/* Without any lcores[].instruments the windows are the even split the daemon always made. */
static void test_lcore_windows_even_split(void **state)
{
    (void)state;
    struct tp_config *c = calloc(1, sizeof(*c));
    assert_non_null(c);
    static const uint32_t capacities[] = {1, 2, 7, 100, 1024, 4097, 16777216};
    for (size_t i = 0; i < sizeof(capacities) / sizeof(capacities[0]); i++) {
        c->instruments.capacity = capacities[i];
        for (unsigned n = 1; n <= TP_CFG_MAX_DATA_LCORES; n++) {
            c->n_lcores = n;
            for (unsigned l = 0; l < n; l++) {
                uint64_t first = (uint64_t)capacities[i] * l / n;
                uint64_t end = (uint64_t)capacities[i] * (l + 1) / n;
                struct tp_cfg_window w = tp_config_lcore_window(c, l);
                assert_int_equal(w.first_id, first);
                assert_int_equal(w.ids, end - first);
            }
        }
    }
    /* Shares of what the sized lcores leave: 10 - 3 = 7 ids over two lcores, 3 and 4. */
    c->instruments.capacity = 10;
    c->n_lcores = 3;
    c->lcores[1].instruments = 3;
    const uint32_t want[3][2] = {{0, 3}, {3, 3}, {6, 4}};
    for (unsigned l = 0; l < 3; l++) {
        assert_int_equal(tp_config_lcore_window(c, l).first_id, want[l][0]);
        assert_int_equal(tp_config_lcore_window(c, l).ids, want[l][1]);
    }
    /* No data lcores (tools estimating a bare config): the whole capacity. */
    c->n_lcores = 0;
    assert_int_equal(tp_config_lcore_window(c, 0).first_id, 0);
    assert_int_equal(tp_config_lcore_window(c, 0).ids, 10);
    free(c);
}

/* Each way lcores[].instruments can be wrong, named by its path. */
static void test_bad_lcore_instruments(void **state)
{
    (void)state;
    static const char zero[] = "0 instrument ids: give at least 1, or leave \"instruments\" out "
                               "to share what the other lcores leave";
    static const struct {
        unsigned n;
        const char *capacity, *sizes[3], *path, *message;
    } cases[] = {
        {2,
         "16384",
         {"9000", "8000"},
         "lcores[1].instruments",
         "9000 + 8000 exceed instruments.capacity 16384"},
        {3,
         "1024",
         {"500", "600"},
         "lcores[1].instruments",
         "500 + 600 exceed instruments.capacity 1024"},
        {1, "1024", {"2000"}, "lcores[0].instruments", "2000 exceeds instruments.capacity 1024"},
        {2, "1024", {NULL, "0"}, "lcores[1].instruments", zero},
        {1, "1024", {"\"many\""}, "lcores[0].instruments", "expected an integer, got string"},
        {1, "1024", {"-5"}, "lcores[0].instruments", "-5 is out of range [1, 16777216]"},
        /* The sized lcores take everything: the one without gets nothing. */
        {3,
         "1024",
         {"1000", "24"},
         "lcores[2]",
         "no instrument id left for this lcore: instruments.capacity 1024 minus the 1024 given "
         "to lcores with \"instruments\" leaves 0 for 1 lcore(s) without it"},
        /* Fewer ids than lcores sharing them (refused by the config, not at start). */
        {3,
         "2",
         {NULL},
         "lcores[0]",
         "no instrument id left for this lcore: instruments.capacity 2 minus the 0 given to "
         "lcores with \"instruments\" leaves 2 for 3 lcore(s) without it"},
        /* A bad capacity or size is reported alone, not again as windows that do not fit. */
        {1, "\"big\"", {"5000"}, "instruments.capacity", "expected an integer, got string"},
        {2, "1024", {"0", "2000"}, "lcores[0].instruments", zero},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        assert_int_equal(load_lcores(cases[i].n, cases[i].capacity, cases[i].sizes), -EINVAL);
        expect_error(1, cases[i].path, cases[i].message);
    }
}

/* The parser on its own: groups, ranges, CPU sets, and what it refuses. */
static void test_lcore_list_parser(void **state)
{
    (void)state;
    struct tp_cfg_eal eal;
    memset(&eal, 0, sizeof(eal));
    assert_null(tp_config_parse_lcores("(1-3)@2,0", &eal));
    assert_int_equal(eal.n_lcores, 4);
    assert_true(eal.cpu_map);
    assert_int_equal(eal.lcores[0], 0);
    assert_int_equal(eal.lcore_cpus[0][0], 1u << 0);
    for (unsigned i = 1; i < 4; i++)
        assert_int_equal(eal.lcore_cpus[i][0], 1u << 2);
    assert_null(tp_config_parse_lcores("4@(2,3),100@127", &eal));
    assert_int_equal(eal.n_lcores, 2);
    assert_int_equal(eal.lcore_cpus[0][0], (1u << 2) | (1u << 3));
    assert_int_equal(eal.lcore_cpus[1][1], 1ull << 63);
    /* A group without '@' shares its CPUs; a plain list maps each lcore to its own CPU. */
    assert_null(tp_config_parse_lcores("(0,1),3-4", &eal));
    assert_int_equal(eal.lcore_cpus[1][0], 3u);
    assert_int_equal(eal.lcore_cpus[3][0], 1u << 4);
    assert_null(tp_config_parse_lcores("0-2,5", &eal));
    assert_false(eal.cpu_map);
    assert_int_equal(eal.n_lcores, 4);
    assert_string_equal(tp_config_parse_lcores("1@", &eal),
                        "expected a list like \"0-3,5\" or \"0@0,1@1,2@1\"");
    assert_string_equal(tp_config_parse_lcores("1@(2", &eal),
                        "expected a list like \"0-3,5\" or \"0@0,1@1,2@1\"");
    assert_string_equal(tp_config_parse_lcores("1@2@3", &eal),
                        "expected a list like \"0-3,5\" or \"0@0,1@1,2@1\"");
    assert_string_equal(tp_config_parse_lcores("1@200", &eal), "CPU ids must be at most 127");
    assert_string_equal(tp_config_parse_lcores("0,(0,1)@1", &eal), "an lcore is listed twice");
    assert_string_equal(tp_config_parse_lcores("1@3-2", &eal), "a range runs backwards");
}

/* eal.args: --lcores carries mappings, -l does not. */
static void test_explicit_eal_lcores_mappings(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "eal", "{\"args\": [\"--lcores=0@0,1@0\", \"-m\", \"256\"]}"),
                     0);
    assert_true(cfg->eal.cpu_map);
    assert_int_equal(cfg->eal.n_lcores, 2);
    assert_int_equal(cfg->eal.lcore_cpus[1][0], 1u);
    assert_int_equal(load_mutated(1, "eal", "{\"args\": [\"-l\", \"0@0,1@0\"]}"), -EINVAL);
    expect_error(1, "eal.args", "\"0@0,1@0\": -l takes no '@' mappings (use --lcores)");
    assert_int_equal(load_mutated(1, "eal", "{\"args\": [\"-l\", \"0-1\", \"--lcores\", \"0,1\"]}"),
                     -EINVAL);
    expect_error(1, "eal.args", "-l and --lcores are exclusive");
}

/* Every channel on exactly one lcore: twice is refused with both places named. */
static void test_bad_channel_on_two_lcores(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(3, "eal.lcores", "\"0-2\"", "ports[0].rx_queues", "2",
                                  "lcores[1]",
                                  "{\"lcore\": 2, \"poll\": [{\"port\": \"p0\", \"queue\": 1}],"
                                  " \"channels\": [\"itch\"]}"),
                     -EINVAL);
    expect_error(1, "lcores[1].channels[0]", "channel \"itch\" already runs on lcores[0]");
}

static void test_bad_lcore_not_in_eal(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "lcores[0].lcore", "5"), -EINVAL);
    expect_error(1, "lcores[0].lcore", "lcore 5 is not in the EAL lcore list (0-1)");
}

static void test_bad_lcore_is_main(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "lcores[0].lcore", "0"), -EINVAL);
    expect_error(1, "lcores[0].lcore",
                 "lcore 0 is the main lcore (control plane); data lcores must differ");
}

/* --------------------------------------------------------- preload */

/*
 * Writes a classic pcap file of frames of these lengths (zero bytes) in byte order `swapped` (a
 * capture written on a big-endian host), or only `cut` bytes of it when cut > 0. Returns the path
 * (static storage, a fresh file each call).
 */
static const char *write_capture(const uint32_t *lens, unsigned n, bool swapped, long cut)
{
    static char path[64];
    static unsigned serial;
    snprintf(path, sizeof(path), "/tmp/tp-test-preload-%d-%u.pcap", (int)getpid(), serial++);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    uint32_t hdr[6] = {0xa1b23c4du, 2 | 4u << 16, 0, 0, 65535, 1};
    for (unsigned i = 0; swapped && i < 6; i++)
        hdr[i] = __builtin_bswap32(hdr[i]);
    if (swapped) /* the version's two 16-bit halves are each swapped, not exchanged */
        hdr[1] = __builtin_bswap16(2) | (uint32_t)__builtin_bswap16(4) << 16;
    fwrite(hdr, sizeof(hdr), 1, f);
    static const uint8_t zeros[2048];
    for (unsigned i = 0; i < n; i++) {
        uint32_t rec[4] = {0, 0, lens[i], lens[i]};
        for (unsigned k = 0; swapped && k < 4; k++)
            rec[k] = __builtin_bswap32(rec[k]);
        fwrite(rec, sizeof(rec), 1, f);
        fwrite(zeros, 1, lens[i], f);
    }
    assert_int_equal(fclose(f), 0);
    if (cut > 0)
        assert_int_equal(truncate(path, cut), 0);
    return path;
}

static int load_preload(const char *path, const char *extra)
{
    char port[512];
    snprintf(port, sizeof(port), "{\"name\": \"p0\", \"pcap\": \"%s\", \"preload\": true%s}", path,
             extra);
    return load_mutated(1, "ports[0]", port);
}

/*
 * A preloaded port: a net_ring device the daemon creates (no --vdev), the capture's frames and
 * largest frame, and the estimate of its mbufs: per frame an odd number of cache lines (object
 * header, mbuf header, headroom + frame rounded to 128 bytes) and 32 bytes of rings, and 2 MiB a
 * size class.
 */
static void test_preload_port(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "ports[0]", "{\"name\": \"p0\", \"pcap\": \"/x.pcap\"}"), 0);
    uint64_t without = tp_config_memory_estimate(cfg);
    const uint32_t lens[] = {60, 200, 1400, 100};
    for (int swapped = 0; swapped < 2; swapped++) {
        const char *path = write_capture(lens, 4, swapped, 0);
        int rc = load_preload(path, "");
        if (rc != 0)
            print_errors();
        assert_int_equal(rc, 0);
        const struct tp_cfg_port *p = &cfg->ports[0];
        assert_int_equal(p->kind, TP_CFG_PORT_PCAP);
        assert_true(p->preload);
        assert_string_equal(p->pcap, path);
        assert_string_equal(p->dev_name, "net_ring_preload0");
        assert_string_equal(p->device, "");
        assert_int_equal(p->preload_frames, 4);
        assert_int_equal(p->preload_max_frame, 1400);
        /* 60 and 100: room 256, 7 lines; 200: room 384, 9 lines; 1400: room 1536, 27 lines. */
        uint64_t mbufs = 2 * (7 * 64 + 32) + (9 * 64 + 32) + (27 * 64 + 32) + 3 * (2u << 20);
        assert_int_equal(tp_config_preload_estimate(p), mbufs);
        /* The plan dataplane/ports/preload.c creates its pools from. */
        struct tp_preload_plan plan;
        char why[160];
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        assert_int_equal(tp_preload_plan_scan(&plan, f, why, sizeof(why)), 0);
        fclose(f);
        assert_int_equal(tp_preload_plan_bytes(&plan), mbufs);
        assert_int_equal(plan.frames, p->preload_frames);
        assert_int_equal(plan.max_frame, p->preload_max_frame);
        assert_int_equal(tp_config_memory_estimate(cfg), without + mbufs);
        char *argv[64];
        int argc = tp_config_eal_argv(cfg, "tickplane", argv, 64);
        assert_int_equal(argc, 10);
        for (int i = 0; i < argc; i++)
            assert_string_not_equal(argv[i], "--vdev");
        unlink(path);
    }
    assert_int_equal(load_mutated(1, "ports[0]", "{\"name\": \"p0\", \"pcap\": \"/x.pcap\"}"), 0);
    assert_false(cfg->ports[0].preload);
    assert_int_equal(tp_config_preload_estimate(&cfg->ports[0]), 0);
}

static void test_bad_preload(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "ports[0].preload", "true"), -EINVAL);
    expect_error(1, "ports[0].preload", "only a \"pcap\" port can be preloaded");

    const uint32_t lens[] = {60, 70};
    const char *path = write_capture(lens, 2, false, 0);
    assert_int_equal(load_preload(path, ", \"rx_queues\": 2"), -EINVAL);
    expect_error(1, "ports[0].preload", "a preloaded port has one rx queue, not 2");
    unlink(path);

    char want[256];
    struct {
        unsigned n;
        long cut;
        const char *why;
    } cases[] = {
        {2, 24 + 16 + 60 + 16 + 69, "truncated: frame 2 has 69 of its 70 bytes"},
        {2, 24 + 16 + 60 + 8, "truncated: record 2's header has 8 of its 16 bytes"},
        {0, 0, "has no frames"},
        {2, 20, "shorter than a pcap file header (20 of its 24 bytes)"},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        path = write_capture(lens, cases[i].n, false, cases[i].cut);
        assert_int_equal(load_preload(path, ""), -EINVAL);
        snprintf(want, sizeof(want), "cannot preload \"%s\": %s", path, cases[i].why);
        expect_error(1, "ports[0].preload", want);
        unlink(path);
    }
    assert_int_equal(load_preload("/nonexistent/x.pcap", ""), -EINVAL);
    expect_error(1, "ports[0].preload",
                 "cannot preload \"/nonexistent/x.pcap\": No such file or directory");
    path = "/tmp/tp-test-preload-not-pcap";
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fprintf(f, "\x0a\x0d\x0d\x0a and the rest of a pcapng section header");
    fclose(f);
    assert_int_equal(load_preload(path, ""), -EINVAL);
    snprintf(want, sizeof(want), "cannot preload \"%s\": %s", path,
             "pcapng block of type 0xa0d0d0a and length 0 is malformed (or of a version other "
             "than 1.x)");
    expect_error(1, "ports[0].preload", want);
    unlink(path);
}

/* A capture that does not fit eal.memory_mb is named with its own need, beside the total's. */
static void test_preload_memory(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(0), 0);
    uint64_t base_mb = (tp_config_memory_estimate(cfg) >> 20) + 2;
    static uint32_t lens[5000];
    for (unsigned i = 0; i < 5000; i++)
        lens[i] = 1400;
    const char *path = write_capture(lens, 5000, false, 0);
    char mb[32];
    snprintf(mb, sizeof(mb), "%llu", (unsigned long long)base_mb);
    char port[512];
    snprintf(port, sizeof(port), "{\"name\": \"p0\", \"pcap\": \"%s\", \"preload\": true}", path);
    assert_int_equal(load_mutated(2, "ports[0]", port, "eal.memory_mb", mb), -EINVAL);
    /* 5000 x (27 lines + 32 bytes) + one 2 MiB class: 10.4 MiB, rounded up. */
    char want[160];
    snprintf(want, sizeof(want),
             "the capture needs 11 MiB of mbufs (5000 frames of up to 1400 bytes), "
             "eal.memory_mb gives %llu",
             (unsigned long long)base_mb);
    expect_error(2, "ports[0].preload", want);
    unlink(path);
}

static void test_bad_missing_eal(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "eal", NULL), -EINVAL);
    expect_error(1, "eal", "required key is missing");
}

static void test_bad_port_kind(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "ports[0].pci", "\"0000:3b:00.0\""), -EINVAL);
    expect_error(1, "ports[0]", "needs exactly one of \"pci\", \"vdev\" or \"pcap\"");
}

static void test_bad_descriptors_power_of_two(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "ports[0].rx_descriptors", "1000"), -EINVAL);
    expect_error(1, "ports[0].rx_descriptors", "must be a power of two, got 1000");
}

static void test_port_ipv4_is_host_order(void **state)
{
    (void)state;
    int rc = load_mutated(1, "ports[0].ipv4", "\"10.1.2.3\"");
    if (rc != 0)
        print_errors();
    assert_int_equal(rc, 0);
    assert_int_equal(cfg->ports[0].ipv4, 0x0a010203u);
}

static void test_bad_port_ipv4_not_an_address(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "ports[0].ipv4", "\"10.0.0\""), -EINVAL);
    expect_error(1, "ports[0].ipv4", "\"10.0.0\" is not an IPv4 address");
}

static void test_bad_port_ipv4_multicast_and_other_errors_together(void **state)
{
    (void)state;
    assert_int_equal(
        load_mutated(2, "ports[0].ipv4", "\"224.0.31.1\"", "ports[0].rx_descriptors", "1000"),
        -EINVAL);
    expect_error(2, "ports[0].ipv4", "\"224.0.31.1\" is not a unicast host address");
    expect_error(2, "ports[0].rx_descriptors", "must be a power of two, got 1000");
}

static void test_bad_port_ipv4_did_you_mean(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "ports[0].ipv", "\"10.0.0.5\""), -EINVAL);
    expect_error(1, "ports[0].ipv", "unknown key (did you mean \"ipv4\"?)");
}

static void test_bad_queue_does_not_exist(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "lcores[0].poll[0].queue", "1"), -EINVAL);
    /* One mistake, one message: placement checks are skipped after a bad poll entry. */
    expect_error(1, "lcores[0].poll[0].queue",
                 "port \"p0\" has 1 rx queues, queue 1 does not exist");
}

static void test_bad_queue_not_polled(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "ports[0].rx_queues", "2"), -EINVAL);
    expect_error(1, "ports[0]", "rx queue 1 is polled by no lcore");
}

static void test_bad_channel_on_no_lcore(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "lcores[0].channels", "[\"cme-310\"]"), -EINVAL);
    expect_error(1, "channels[1]", "runs on no lcore (add it to an lcores[].channels list)");
}

static void test_bad_unknown_channel_on_lcore(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "lcores[0].channels", "[\"cme-31\", \"itch\"]"), -EINVAL);
    expect_error(2, "lcores[0].channels[0]",
                 "unknown channel \"cme-31\" (did you mean \"cme-310\"?)");
    expect_error(2, "channels[0]", "runs on no lcore (add it to an lcores[].channels list)");
}

static void test_bad_memory_budget(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(2, "eal.memory_mb", "128", "books.max_orders", "1000000"),
                     -EINVAL);
    expect_error(
        1, "eal.memory_mb",
        "128 MB is too small: mbuf pools, books, instruments and channels need about 171 MB");
}

static void test_bad_mode_world_writable(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "bus.mode", "\"0666\""), -EINVAL);
    expect_error(1, "bus.mode", "world-writable mode \"0666\" is refused");
}

static void test_bad_mode_not_octal(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "control.mode", "\"rw-r\""), -EINVAL);
    expect_error(1, "control.mode", "\"rw-r\" is not an octal file mode like \"0640\"");
}

static void test_admin_group(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "control.admin_group", "\"tp-ops\""), 0);
    assert_string_equal(cfg->control.admin_group, "tp-ops");
    assert_int_equal(load_mutated(1, "control.admin_group", "7"), -EINVAL);
    expect_error(1, "control.admin_group", "expected a string, got integer");
}

static void test_bad_socket_path_too_long(void **state)
{
    (void)state;
    char value[160];
    snprintf(value, sizeof(value), "\"/tmp/%0120d.sock\"", 0);
    assert_int_equal(load_mutated(1, "control.socket", value), -EINVAL);
    expect_error(1, "control.socket",
                 "path is 130 bytes, the control socket's path must be at most 103 "
                 "(a UNIX socket path holds 107 and the daemon binds PATH.new first)");
}

static void test_bad_topic_name(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "entitlements.rules[0].topics", "[\"top\", \"trade\"]"),
                     -EINVAL);
    expect_error(1, "entitlements.rules[0].topics[1]",
                 "unknown topic \"trade\" (did you mean \"trades\"?)");
}

static void test_bad_venue_name(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "entitlements.rules[0].venues", "[\"CMX\"]"), -EINVAL);
    expect_error(1, "entitlements.rules[0].venues[0]",
                 "unknown venue \"CMX\" (did you mean \"CME\"?)");
}

/* Venue names travel in the control socket's fixed-size commands: a longer one would be cut. */
static void test_bad_venue_too_long(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[1].venue", "\"NASDAQ-TOTALVIEW-ITCH-FIVE-POINT\""),
                     -EINVAL);
    expect_error(1, "channels[1].venue", "is 32 bytes long, the limit is 31");
}

static void test_bad_rule_without_who(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "entitlements.rules[0].uid", NULL), -EINVAL);
    expect_error(1, "entitlements.rules[0]",
                 "needs one of \"uid\", \"user\", \"gid\" or \"group\"");
}

static void test_bad_unknown_user(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(2, "entitlements.rules[0].uid", NULL,
                                  "entitlements.rules[0].user", "\"no-such-user-tp\""),
                     -EINVAL);
    expect_error(1, "entitlements.rules[0].user", "no such user \"no-such-user-tp\"");
}

static void test_bad_type(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "books.levels_per_side", "\"10\""), -EINVAL);
    expect_error(1, "books.levels_per_side", "expected an integer, got string");
}

/* The recent-order window: the books' limit, and a size asked for reaches the config. */
static void test_recent_orders(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "books.recent_orders", "268435457"), -EINVAL);
    expect_error(1, "books.recent_orders", "268435457 is out of range [0, 268435456]");
    assert_int_equal(load_mutated(1, "books.recent_orders", "4000037"), 0);
    assert_int_equal(cfg->books.recent_orders, 4000037);
    assert_int_equal(load_mutated(0), 0);
    assert_int_equal(cfg->books.recent_orders, 0);
}

static void test_bad_state_depth_over_state_table(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(2, "books.levels_per_side", "100", "bus.state_depth", "33"),
                     -EINVAL);
    expect_error(1, "bus.state_depth", "33 is out of range [1, 32]");
}

static void test_bad_state_depth_over_levels(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "bus.state_depth", "11"), -EINVAL);
    expect_error(1, "bus.state_depth", "11 is more than books.levels_per_side (10)");
}

static void test_bad_rerequest_on_mdp3(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[0].recovery.rerequest", "\"10.0.0.5:1\""), -EINVAL);
    expect_error(1, "channels[0].recovery.rerequest", "only for protocol itch");
}

/* The MDP3 book audit all session long: a boolean, off by default, only for mdp3. */
static void test_recovery_audit_always(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(0), 0);
    assert_false(cfg->channels[0].proto.mdp3.audit_always);
    assert_int_equal(load_mutated(1, "channels[0].recovery.audit_always", "true"), 0);
    assert_true(cfg->channels[0].proto.mdp3.audit_always);
    assert_int_equal(load_mutated(1, "channels[0].recovery.audit_always", "1"), -EINVAL);
    expect_error(1, "channels[0].recovery.audit_always", "expected a boolean, got integer");
    assert_int_equal(load_mutated(1, "channels[1].recovery.audit_always", "true"), -EINVAL);
    expect_error(1, "channels[1].recovery.audit_always", "only for protocol mdp3");
}

/* The MBO snapshot lines (CME SMBO): MDP3 only, with the price-level snapshot lines, and no line
 * shared with another. */
static void test_recovery_snapshot_mbo(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(0), 0);
    assert_false(cfg->channels[0].proto.mdp3.snapshot_mbo[0].present);
    const char *mbo = "{\"a\": {\"group\": \"224.0.31.23\", \"port\": 14312},"
                      " \"b\": {\"group\": \"224.0.32.23\", \"port\": 15312}}";
    assert_int_equal(load_mutated(1, "channels[0].recovery.snapshot_mbo", mbo), 0);
    assert_true(cfg->channels[0].proto.mdp3.snapshot_mbo[0].present);
    assert_true(cfg->channels[0].proto.mdp3.snapshot_mbo[1].present);
    assert_int_equal(cfg->channels[0].proto.mdp3.snapshot_mbo[0].group, 0xe0001f17u);
    assert_int_equal(cfg->channels[0].proto.mdp3.snapshot_mbo[1].port, 15312);
    assert_int_equal(load_mutated(1, "channels[1].recovery.snapshot_mbo", mbo), -EINVAL);
    expect_error(1, "channels[1].recovery.snapshot_mbo", "only for protocol mdp3");
    assert_int_equal(load_mutated(1, "channels[0].recovery.snapshot_mbo", "{}"), -EINVAL);
    expect_error(1, "channels[0].recovery.snapshot_mbo.a", "required key is missing");
    assert_int_equal(load_mutated(2, "channels[0].recovery.snapshot", NULL,
                                  "channels[0].recovery.snapshot_mbo", mbo),
                     -EINVAL);
    expect_error(1, "channels[0].recovery.snapshot_mbo",
                 "needs recovery.snapshot (the price-level snapshot lines)");
    assert_int_equal(load_mutated(1, "channels[0].recovery.snapshot_mbo",
                                  "{\"a\": {\"group\": \"224.0.31.22\", \"port\": 14311}}"),
                     -EINVAL);
    expect_error(1, "channels[0].recovery.snapshot_mbo.a",
                 "group 224.0.31.22:14311 is already used by channels[0].recovery.snapshot.a");
}

/* Both lines' silence: 3000 ms by default for ITCH (MoldUDP64 heartbeats), off for MDP3 unless
 * set; the same bounds for both. */
static void test_recovery_silence_ms(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(0), 0);
    assert_int_equal(cfg->channels[0].silence_ms, 0);
    assert_int_equal(cfg->channels[1].silence_ms, 3000);
    assert_int_equal(load_mutated(1, "channels[0].recovery.silence_ms", "45000"), 0);
    assert_int_equal(cfg->channels[0].silence_ms, 45000);
    assert_int_equal(cfg->channels[1].silence_ms, 3000);
    assert_int_equal(load_mutated(1, "channels[0].recovery.silence_ms", "600001"), -EINVAL);
    expect_error(1, "channels[0].recovery.silence_ms", "600001 is out of range [0, 600000]");
}

/* An EOBI channel as the Eurex layout has it: incremental and snapshot groups, A and B. */
static const char *eobi_channel =
    "{\"name\": \"fdax\", \"protocol\": \"eobi\", \"id\": 688,"
    " \"lines\": {\"a\": {\"group\": \"224.0.114.16\", \"port\": 59000},"
    "           \"b\": {\"group\": \"224.0.114.17\", \"port\": 59000}},"
    " \"recovery\": {\"snapshot\": {\"a\": {\"group\": \"224.0.114.18\", \"port\": 59001},"
    "                             \"b\": {\"group\": \"224.0.114.19\", \"port\": 59001}}}}";

/* The base document with the EOBI channel as channels[2], then one mutation (or none). */
static int load_with_eobi(const char *path, const char *value)
{
    if (path == NULL)
        return load_mutated(2, "channels[2]", eobi_channel, "lcores[0].channels[2]", "\"fdax\"");
    return load_mutated(3, "channels[2]", eobi_channel, "lcores[0].channels[2]", "\"fdax\"", path,
                        value);
}

/* Protocol eobi: venue EUREX by default, its four lines. */
static void test_eobi_channel(void **state)
{
    (void)state;
    assert_int_equal(load_with_eobi(NULL, NULL), 0);
    const struct tp_cfg_channel *ch = &cfg->channels[2];
    assert_int_equal(ch->protocol, TP_CFG_PROTO_EOBI);
    assert_string_equal(ch->venue, "EUREX");
    assert_int_equal(ch->venue_channel_id, 688);
    assert_true(ch->lines[0].present && ch->lines[1].present);
    assert_int_equal(ch->lines[1].group, 0xe0007211u);
    assert_int_equal(ch->lines[1].port, 59000);
    assert_true(ch->snapshot[0].present && ch->snapshot[1].present);
    assert_int_equal(ch->snapshot[0].group, 0xe0007212u);
    assert_int_equal(ch->snapshot[1].group, 0xe0007213u);
    assert_int_equal(ch->snapshot[1].port, 59001);
    assert_false(ch->proto.mdp3.definitions[0].present || ch->proto.mdp3.definitions[1].present);
    assert_int_equal(ch->silence_ms, 0);
    assert_int_equal(ch->gap_wait_us, 500); /* a hole waits for the other line */
    assert_int_equal(load_with_eobi("channels[2].recovery.gap_wait_us", "2000"), 0);
    assert_int_equal(cfg->channels[2].gap_wait_us, 2000);
    assert_int_equal(load_with_eobi("channels[2].venue", "\"XEUR\""), 0);
    assert_string_equal(cfg->channels[2].venue, "XEUR");
}

/* EOBI is recovered from its snapshot feed alone: the lines are required, the other protocols'
 * recovery keys refused, each error at its path. */
static void test_bad_eobi_recovery(void **state)
{
    (void)state;
    static const char *required = "required for protocol eobi (its only recovery)";
    assert_int_equal(load_with_eobi("channels[2].recovery", NULL), -EINVAL);
    expect_error(1, "channels[2].recovery.snapshot", required);
    assert_int_equal(load_with_eobi("channels[2].recovery.snapshot", NULL), -EINVAL);
    expect_error(1, "channels[2].recovery.snapshot", required);
    assert_int_equal(load_with_eobi("channels[2].recovery.snapshot.a", NULL), -EINVAL);
    expect_error(1, "channels[2].recovery.snapshot.a", "required key is missing");
    assert_int_equal(load_with_eobi("channels[2].recovery.snapshot.b.group", "\"10.0.0.1\""),
                     -EINVAL);
    assert_int_equal(errs->count, 1);
    assert_string_equal(errs->items[0].path, "channels[2].recovery.snapshot.b.group");
    assert_int_equal(load_with_eobi("channels[2].recovery.snapshot.b.group", "\"224.0.114.18\""),
                     -EINVAL);
    expect_error(1, "channels[2].recovery.snapshot.b",
                 "group 224.0.114.18:59001 is already used by channels[2].recovery.snapshot.a");
    assert_int_equal(load_with_eobi("channels[2].recovery.rerequest", "\"10.0.0.5:1\""), -EINVAL);
    expect_error(1, "channels[2].recovery.rerequest", "only for protocol itch");
    assert_int_equal(load_with_eobi("channels[2].recovery.give_up_ms", "1000"), -EINVAL);
    expect_error(1, "channels[2].recovery.give_up_ms",
                 "not for protocol eobi (its segments recover from the snapshot feed, flagged "
                 "until then)");
    assert_int_equal(load_with_eobi("channels[2].recovery.definitions",
                                    "{\"a\": {\"group\": \"224.0.114.20\", \"port\": 1}}"),
                     -EINVAL);
    expect_error(1, "channels[2].recovery.definitions", "only for protocol mdp3");
    assert_int_equal(load_with_eobi("channels[2].schema", "\"x.xml\""), -EINVAL);
    expect_error(1, "channels[2].schema", "only for protocol mdp3");
    assert_int_equal(load_with_eobi("channels[2].cme_config", "{\"file\": \"x\", \"channel\": 1}"),
                     -EINVAL);
    expect_error(1, "channels[2].cme_config", "only for protocol mdp3");
}

/* "release": an EOBI channel's T7 release; the build's default when it names none. */
static void test_eobi_release(void **state)
{
    (void)state;
    assert_int_equal(load_with_eobi(NULL, NULL), 0);
    assert_int_equal(cfg->channels[2].proto.eobi.release, TP_EOBI_RELEASE_DEFAULT);
    assert_int_equal(load_with_eobi("channels[2].release", "\"7.0\""), 0);
    assert_int_equal(cfg->channels[2].proto.eobi.release, TP_EOBI_RELEASE_7_0);
    assert_int_equal(load_with_eobi("channels[2].release", "\"6.0\""), 0);
    assert_int_equal(cfg->channels[2].proto.eobi.release, TP_EOBI_RELEASE_6_0);

    assert_int_equal(load_with_eobi("channels[2].release", "\"8.0\""), -EINVAL);
    expect_error(1, "channels[2].release", "unknown T7 release \"8.0\" (known: 6.0, 7.0)");
    assert_int_equal(load_with_eobi("channels[2].release", "7"), -EINVAL);
    assert_int_equal(errs->count, 1);
    assert_string_equal(errs->items[0].path, "channels[2].release");
    assert_int_equal(load_mutated(1, "channels[0].release", "\"7.0\""), -EINVAL);
    expect_error(1, "channels[0].release", "only for protocol eobi");
}

static void test_bad_rerequest_format(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[1].recovery.rerequest", "\"10.0.0.5\""), -EINVAL);
    expect_error(1, "channels[1].recovery.rerequest", "expected \"<unicast IPv4>:<port>\"");
}

static void test_bad_invalid_json(void **state)
{
    (void)state;
    assert_int_equal(tp_config_load_string("{\"eal\": {,}", NULL, cfg, errs), -EINVAL);
    assert_int_equal(errs->count, 1);
    assert_string_equal(errs->items[0].path, "");
    assert_true(strncmp(errs->items[0].message, "invalid JSON at line 1, column ", 31) == 0);
}

static void test_bad_duplicate_json_key(void **state)
{
    (void)state;
    assert_int_equal(tp_config_load_string("{\"name\": \"a\", \"name\": \"b\"}", NULL, cfg, errs),
                     -EINVAL);
    assert_int_equal(errs->count, 1);
    assert_non_null(strstr(errs->items[0].message, "duplicate object key"));
}

static void test_bad_root_not_object(void **state)
{
    (void)state;
    assert_int_equal(tp_config_load_string("[1, 2]", NULL, cfg, errs), -EINVAL);
    expect_error(1, "", "the document must be an object, got array");
}

static void test_bad_explicit_args_mixed(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(2, "eal.args", "[\"--no-huge\"]", "eal.lcores", NULL), -EINVAL);
    /* The base has memory_mb, no_huge, no_pci and no_shconf: each is named. */
    expect_error(5, "eal.memory_mb", "not allowed together with eal.args");
    expect_error(5, "eal.no_shconf", "not allowed together with eal.args");
    expect_error(5, "eal.args", "must contain -l <lcore list> or --lcores <mappings>");
}

static void test_bad_lcore_range_backwards(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "eal.lcores", "\"1-0\""), -EINVAL);
    expect_error(1, "eal.lcores", "\"1-0\": a range runs backwards");
}

static void test_bad_source_is_multicast(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[1].lines.a.source", "\"224.1.1.1\""), -EINVAL);
    expect_error(1, "channels[1].lines.a.source", "\"224.1.1.1\" is not a unicast host address");
}

static void test_bad_vlan_range(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[1].lines.a.vlan", "5000"), -EINVAL);
    expect_error(1, "channels[1].lines.a.vlan", "5000 is out of range [1, 4094]");
}

static void test_bad_schema_missing(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[0].schema", "\"/nonexistent/mdp3.xml\""), -EINVAL);
    expect_error(1, "channels[0].schema",
                 "cannot read \"/nonexistent/mdp3.xml\": No such file or directory");
}

static void test_bad_two_ports_need_rx_port(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(2, "ports[1]", "{\"name\": \"p1\", \"vdev\": \"net_null1\"}",
                                  "lcores[0].poll[1]", "{\"port\": \"p1\"}"),
                     -EINVAL);
    /* cme-310: a, b, snapshot a; itch: a. */
    expect_error(4, "channels[0].lines.b.rx_port",
                 "required when more than one port is configured");
}

static void test_bad_unknown_rx_port(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[0].lines.b.rx_port", "\"p9\""), -EINVAL);
    expect_error(1, "channels[0].lines.b.rx_port", "unknown port \"p9\" (did you mean \"p0\"?)");
}

static void test_bad_mbuf_pool_too_small(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "ports[0].rx_descriptors", "4096"), -EINVAL);
    expect_error(1, "ports[0].mbuf_pool_size",
                 "4095 mbufs cannot fill 1 rx queues x 4096 descriptors (need at least 4672)");
}

static void test_bad_channel_name_characters(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(2, "channels[1].name", "\"it ch\"", "lcores[0].channels",
                                  "[\"cme-310\", \"it ch\"]"),
                     -EINVAL);
    expect_error(1, "channels[1].name",
                 "\"it ch\" may contain only letters, digits, '-', '_' and '.'");
}

static void test_bad_cme_config_on_itch(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[1].cme_config", "{\"file\": \"x\", \"channel\": 1}"),
                     -EINVAL);
    expect_error(1, "channels[1].cme_config", "only for protocol mdp3");
}

static void test_bad_line_a_missing(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "channels[1].lines.a", NULL), -EINVAL);
    expect_error(1, "channels[1].lines.a", "required key is missing");
}

static void test_bad_lcore_listed_twice(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "lcores[1]", "{\"lcore\": 1, \"poll\": [], \"channels\": []}"),
                     -EINVAL);
    expect_error(1, "lcores[1].lcore", "lcore 1 is already lcores[0]");
}

/* A refused lcore id is one error, never also a duplicate of an id it was not given. */
static void test_bad_lcore_id_refused_once(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "lcores[1]", "{\"poll\": [], \"channels\": []}"), -EINVAL);
    expect_error(1, "lcores[1].lcore", "required key is missing");
}

static void test_bad_poll_twice(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(1, "lcores[0].poll[1]", "{\"port\": \"p0\", \"queue\": 0}"),
                     -EINVAL);
    expect_error(1, "lcores[0].poll[1]", "port \"p0\" queue 0 is already polled by lcores[0]");
}

static void test_bad_many_at_once(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(5, "bus.ring_bytes", "3", "control.max_clients", "0",
                                  "channels[0].lines.b.group", "\"1.2.3.4\"",
                                  "telemetry.intervl_ms", "5", "instruments.include",
                                  "[\"ES Z6\"]"),
                     -EINVAL);
    expect_error(5, "bus.ring_bytes", "3 is out of range [65536, 17179869184]");
    expect_error(5, "control.max_clients", "0 is out of range [1, 4096]");
    expect_error(5, "channels[0].lines.b.group",
                 "\"1.2.3.4\" is not a multicast address (224.0.0.0/4)");
    expect_error(5, "telemetry.intervl_ms", "unknown key (did you mean \"interval_ms\"?)");
    expect_error(5, "instruments.include[0]",
                 "pattern \"ES Z6\" has a space or non-printable character");
}

static void test_prometheus_address(void **state)
{
    (void)state;
    assert_int_equal(load_mutated(0), 0);
    assert_int_equal(cfg->telemetry.prometheus_address, 0x7f000001); /* loopback by default */
    assert_int_equal(load_mutated(1, "telemetry.prometheus_address", "\"0.0.0.0\""), 0);
    assert_int_equal(cfg->telemetry.prometheus_address, 0);
    assert_int_equal(load_mutated(1, "telemetry.prometheus_address", "\"10.1.2.3\""), 0);
    assert_int_equal(cfg->telemetry.prometheus_address, 0x0a010203);
    assert_int_equal(load_mutated(1, "telemetry.prometheus_address", "\"239.1.1.1\""), -EINVAL);
    expect_error(1, "telemetry.prometheus_address", "\"239.1.1.1\" is not a unicast host address");
}

static void test_errors_overflow_are_counted(void **state)
{
    (void)state;
    /* 80 unknown keys: 64 stored, 16 counted as dropped and mentioned in the text. */
    char text[4096] = "{";
    for (int i = 0; i < 80; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "%s\"zz%02d\": 1", i ? ", " : "",
                 i);
    strcat(text, "}");
    assert_int_equal(tp_config_load_string(text, NULL, cfg, errs), -EINVAL);
    assert_int_equal(errs->count, TP_CFG_MAX_ERRORS);
    assert_true(errs->dropped > 0);
    char out[16384];
    tp_config_errors_format(errs, out, sizeof(out));
    assert_non_null(strstr(out, "zz00: unknown key\n"));
    char tail[64];
    snprintf(tail, sizeof(tail), "(and %u more errors)\n", errs->dropped);
    assert_non_null(strstr(out, tail));
    /* A tiny buffer is still NUL-terminated. */
    assert_int_equal(tp_config_errors_format(errs, out, 5), 4);
    assert_int_equal(strlen(out), 4);
}

static void test_missing_file(void **state)
{
    (void)state;
    assert_int_equal(tp_config_load_file("/nonexistent/tp.json", cfg, errs), -ENOENT);
    expect_error(1, "", "cannot open /nonexistent/tp.json: No such file or directory");
}

/* A config directory longer than the loader keeps is refused, not cut (paths would resolve wrong).
 */
static void test_config_dir_too_long(void **state)
{
    (void)state;
    char dir[TP_CFG_PATH_MAX + 8];
    memset(dir, 'd', sizeof(dir) - 1);
    dir[0] = '/';
    dir[sizeof(dir) - 1] = '\0';
    assert_int_equal(tp_config_load_string(base_json, dir, cfg, errs), -ENAMETOOLONG);
    char want[PATH_MAX + 64];
    snprintf(want, sizeof(want), "config directory is longer than %d bytes: %s",
             TP_CFG_PATH_MAX - 1, dir);
    /* The message field is shorter than the name: compare the part it keeps. */
    assert_int_equal(errs->count, 1);
    assert_int_equal(strlen(errs->items[0].message), sizeof(errs->items[0].message) - 1);
    assert_memory_equal(errs->items[0].message, want, sizeof(errs->items[0].message) - 1);

    /* Through a real file: nested directories make a name of about 300 bytes. */
    char path[PATH_MAX] = "/tmp/tp-config-long-XXXXXX";
    assert_non_null(mkdtemp(path));
    char top[sizeof(path)];
    strcpy(top, path);
    for (int i = 0; i < 3; i++) {
        strcat(path, "/");
        size_t len = strlen(path);
        memset(path + len, 'a' + i, 90);
        path[len + 90] = '\0';
        assert_int_equal(mkdir(path, 0700), 0);
    }
    char file[PATH_MAX + 16]; /* the directory, "/tp.json" and its NUL */
    snprintf(file, sizeof(file), "%s/tp.json", path);
    FILE *f = fopen(file, "w");
    assert_non_null(f);
    fputs(base_json, f);
    fclose(f);
    assert_int_equal(tp_config_load_file(file, cfg, errs), -ENAMETOOLONG);
    assert_int_equal(errs->count, 1);
    snprintf(want, sizeof(want), "config directory is longer than 255 bytes: %s", path);
    assert_memory_equal(errs->items[0].message, want, sizeof(errs->items[0].message) - 1);
    /* Clean up, innermost first. */
    assert_int_equal(unlink(file), 0);
    while (strcmp(path, top) != 0) {
        assert_int_equal(rmdir(path), 0);
        *strrchr(path, '/') = '\0';
    }
    assert_int_equal(rmdir(top), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base_is_valid),
        cmocka_unit_test(test_port_nic_timestamps),
        cmocka_unit_test(test_relative_paths_resolve_against_config_dir),
        cmocka_unit_test(test_config_dir_too_long),
        cmocka_unit_test(test_eal_argv),
        cmocka_unit_test(test_preload_port),
        cmocka_unit_test(test_bad_preload),
        cmocka_unit_test(test_preload_memory),
        cmocka_unit_test(test_explicit_eal_args),
        cmocka_unit_test(test_instrument_filter),
        cmocka_unit_test(test_topics),
        cmocka_unit_test(test_bad_unknown_root_key_and_missing),
        cmocka_unit_test(test_bad_unknown_nested_key),
        cmocka_unit_test(test_bad_unknown_key_without_hint),
        cmocka_unit_test(test_bad_keys_never_honoured),
        cmocka_unit_test(test_host_check_groups),
        cmocka_unit_test(test_itch_snapshot),
        cmocka_unit_test(test_bad_group_not_multicast),
        cmocka_unit_test(test_bad_group_not_an_address),
        cmocka_unit_test(test_bad_udp_port_range),
        cmocka_unit_test(test_bad_protocol_did_you_mean),
        cmocka_unit_test(test_bad_ring_bytes_power_of_two),
        cmocka_unit_test(test_bad_duplicate_channel_name),
        cmocka_unit_test(test_bad_second_venue_of_a_protocol),
        cmocka_unit_test(test_bad_duplicate_group),
        cmocka_unit_test(test_bad_same_group_other_vlan_is_fine),
        cmocka_unit_test(test_bad_lcore_not_in_eal),
        cmocka_unit_test(test_bad_lcore_is_main),
        cmocka_unit_test(test_bad_missing_eal),
        cmocka_unit_test(test_bad_port_kind),
        cmocka_unit_test(test_bad_descriptors_power_of_two),
        cmocka_unit_test(test_port_ipv4_is_host_order),
        cmocka_unit_test(test_bad_port_ipv4_not_an_address),
        cmocka_unit_test(test_bad_port_ipv4_multicast_and_other_errors_together),
        cmocka_unit_test(test_bad_port_ipv4_did_you_mean),
        cmocka_unit_test(test_bad_queue_does_not_exist),
        cmocka_unit_test(test_bad_queue_not_polled),
        cmocka_unit_test(test_bad_channel_on_no_lcore),
        cmocka_unit_test(test_bad_unknown_channel_on_lcore),
        cmocka_unit_test(test_bad_memory_budget),
        cmocka_unit_test(test_bad_mode_world_writable),
        cmocka_unit_test(test_bad_mode_not_octal),
        cmocka_unit_test(test_admin_group),
        cmocka_unit_test(test_bad_socket_path_too_long),
        cmocka_unit_test(test_bad_topic_name),
        cmocka_unit_test(test_bad_venue_name),
        cmocka_unit_test(test_bad_venue_too_long),
        cmocka_unit_test(test_bad_rule_without_who),
        cmocka_unit_test(test_bad_unknown_user),
        cmocka_unit_test(test_bad_type),
        cmocka_unit_test(test_recent_orders),
        cmocka_unit_test(test_bad_state_depth_over_state_table),
        cmocka_unit_test(test_bad_state_depth_over_levels),
        cmocka_unit_test(test_bad_rerequest_on_mdp3),
        cmocka_unit_test(test_recovery_audit_always),
        cmocka_unit_test(test_recovery_snapshot_mbo),
        cmocka_unit_test(test_recovery_silence_ms),
        cmocka_unit_test(test_eobi_channel),
        cmocka_unit_test(test_bad_eobi_recovery),
        cmocka_unit_test(test_eobi_release),
        cmocka_unit_test(test_bad_rerequest_format),
        cmocka_unit_test(test_bad_invalid_json),
        cmocka_unit_test(test_bad_duplicate_json_key),
        cmocka_unit_test(test_bad_root_not_object),
        cmocka_unit_test(test_bad_explicit_args_mixed),
        cmocka_unit_test(test_bad_lcore_range_backwards),
        cmocka_unit_test(test_bad_source_is_multicast),
        cmocka_unit_test(test_bad_vlan_range),
        cmocka_unit_test(test_bad_schema_missing),
        cmocka_unit_test(test_bad_two_ports_need_rx_port),
        cmocka_unit_test(test_bad_unknown_rx_port),
        cmocka_unit_test(test_bad_mbuf_pool_too_small),
        cmocka_unit_test(test_bad_channel_name_characters),
        cmocka_unit_test(test_bad_cme_config_on_itch),
        cmocka_unit_test(test_bad_line_a_missing),
        cmocka_unit_test(test_bad_lcore_listed_twice),
        cmocka_unit_test(test_bad_lcore_id_refused_once),
        cmocka_unit_test(test_lcore_cpu_mappings),
        cmocka_unit_test(test_lcore_list_parser),
        cmocka_unit_test(test_lcore_windows),
        cmocka_unit_test(test_lcore_windows_even_split),
        cmocka_unit_test(test_bad_lcore_instruments),
        cmocka_unit_test(test_explicit_eal_lcores_mappings),
        cmocka_unit_test(test_bad_channel_on_two_lcores),
        cmocka_unit_test(test_bad_poll_twice),
        cmocka_unit_test(test_bad_many_at_once),
        cmocka_unit_test(test_prometheus_address),
        cmocka_unit_test(test_errors_overflow_are_counted),
        cmocka_unit_test(test_missing_file),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
