/* The configs shipped in configs/ must validate, and say what their names promise. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "config.h"

static struct tp_config *load(const char *name)
{
    static struct tp_config cfg;
    static struct tp_config_errors errs;
    char path[512];
    snprintf(path, sizeof(path), "%s/%s", TP_CONFIGS_DIR, name);
    int rc = tp_config_load_file(path, &cfg, &errs);
    if (rc != 0) {
        char buf[8192];
        tp_config_errors_format(&errs, buf, sizeof(buf));
        fprintf(stderr, "%s:\n%s", path, buf);
    }
    assert_int_equal(rc, 0);
    return &cfg;
}

static void test_demo(void **state)
{
    (void)state;
    struct tp_config *cfg = load("demo.json");
    assert_true(cfg->eal.no_huge);
    assert_true(cfg->eal.no_pci);
    assert_int_equal(cfg->n_ports, 1);
    assert_int_equal(cfg->ports[0].kind, TP_CFG_PORT_PCAP);
    assert_non_null(strstr(cfg->ports[0].device, "rx_pcap="));
    assert_int_equal(cfg->n_channels, 2);
    assert_true(tp_config_memory_estimate(cfg) <= (uint64_t)cfg->eal.memory_mb << 20);
    /* Loaded by a relative name, the source is still recorded absolute, for reloads. */
    char cwd[4096];
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(TP_CONFIGS_DIR), 0);
    static struct tp_config again;
    static struct tp_config_errors errs;
    assert_int_equal(tp_config_load_file("demo.json", &again, &errs), 0);
    assert_int_equal(chdir(cwd), 0);
    assert_int_equal(again.source[0], '/');
    assert_non_null(strstr(again.source, "configs/demo.json"));
}

static void test_af_packet(void **state)
{
    (void)state;
    struct tp_config *cfg = load("af_packet.json");
    assert_int_equal(cfg->ports[0].kind, TP_CFG_PORT_VDEV);
    assert_string_equal(cfg->ports[0].dev_name, "net_af_packet0");
    assert_int_equal(cfg->channels[0].protocol, TP_CFG_PROTO_ITCH);
    assert_int_not_equal(cfg->channels[0].proto.itch.rerequest_port, 0);
}

static void test_eobi(void **state)
{
    (void)state;
    struct tp_config *cfg = load("eobi.json");
    assert_int_equal(cfg->n_channels, 1);
    const struct tp_cfg_channel *ch = &cfg->channels[0];
    assert_int_equal(ch->protocol, TP_CFG_PROTO_EOBI);
    assert_string_equal(ch->venue, "EUREX");
    assert_true(ch->lines[0].present && ch->lines[1].present);
    assert_true(ch->snapshot[0].present && ch->snapshot[1].present);
    assert_int_equal(cfg->ports[0].kind, TP_CFG_PORT_PCAP);
    assert_true(tp_config_memory_estimate(cfg) <= (uint64_t)cfg->eal.memory_mb << 20);
}

static void test_production(void **state)
{
    (void)state;
    struct tp_config *cfg = load("production.json");
    assert_false(cfg->eal.no_huge);
    assert_int_equal(cfg->n_ports, 2);
    assert_int_equal(cfg->ports[0].kind, TP_CFG_PORT_PCI);
    assert_int_equal(cfg->ports[1].kind, TP_CFG_PORT_PCI);
    /* Every channel takes line A from port a and line B from port b. */
    for (unsigned c = 0; c < cfg->n_channels; c++) {
        assert_int_equal(cfg->channels[c].lines[0].rx_port, 0);
        assert_int_equal(cfg->channels[c].lines[1].rx_port, 1);
    }
    /* The daemon runs one data lcore per instance, never the main lcore. */
    assert_int_equal(cfg->n_lcores, 1);
    for (unsigned l = 0; l < cfg->n_lcores; l++)
        assert_int_not_equal(cfg->lcores[l].lcore_id, cfg->eal.main_lcore);
    assert_false(cfg->entitlements.default_allow);
    assert_string_equal(cfg->bus.group, "tickplane-md");
    assert_string_equal(cfg->control.socket_group, "tickplane-clients");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_demo),
        cmocka_unit_test(test_af_packet),
        cmocka_unit_test(test_eobi),
        cmocka_unit_test(test_production),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
