/*
 * What a config needs of the host (resources.h), each problem with its JSON path: through
 * tp_config_check_resources (path and message) and through `tickplanectl check` (exit status 1,
 * the path in its output), so that the daemon's start and the operator's check agree.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "bus/bus.h"
#include "config.h"
#include "resources.h"

static char dir[64];
static struct tp_config *cfg;
static struct tp_config_errors errs;
static struct tp_resource_paths fake_host;
static char meminfo[128], hugepages[128];

/* Overrides of the base config, as "key": value JSON members of each section. */
struct overrides {
    const char *eal, *port, *channel, *bus, *control;
};

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
}

static void write_pcap(const char *path)
{
    static const uint8_t header[24] = {0xd4, 0xc3, 0xb2, 0xa1, 2,    0,    4, 0, 0, 0, 0, 0,
                                       0,    0,    0,    0,    0xff, 0xff, 0, 0, 1, 0, 0, 0};
    write_file(path, header, sizeof(header));
}

static int setup(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/tp-resources-XXXXXX");
    assert_non_null(mkdtemp(dir));
    char path[160];
    snprintf(path, sizeof(path), "%s/bus", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/ctl", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/feed.pcap", dir);
    write_pcap(path);
    /* A machine with 1000 MB available and 64 free 2 MB huge pages. */
    snprintf(meminfo, sizeof(meminfo), "%s/meminfo", dir);
    const char *mem = "MemTotal:        2000000 kB\nMemAvailable:    1024000 kB\n";
    write_file(meminfo, mem, strlen(mem));
    snprintf(hugepages, sizeof(hugepages), "%s/hugepages", dir);
    assert_int_equal(mkdir(hugepages, 0755), 0);
    snprintf(path, sizeof(path), "%s/hugepages-2048kB", hugepages);
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/hugepages-2048kB/free_hugepages", hugepages);
    write_file(path, "64\n", 3);
    fake_host = (struct tp_resource_paths){.meminfo = meminfo, .hugepages = hugepages};
    cfg = malloc(sizeof(*cfg));
    return cfg == NULL;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "%s/bus", dir);
    umount(cmd); /* a failed test's tmpfs */
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    free(cfg);
    return system(cmd) == 0 ? 0 : -1;
}

/* Writes the config (base plus overrides) to dir/config.json and loads it (it must be valid). */
static void load(const struct overrides *o)
{
    char json[4096];
    snprintf(
        json, sizeof(json),
        "{\"name\": \"res\","
        " \"eal\": {\"lcores\": \"0-1\", \"no_pci\": true %s%s},"
        " \"ports\": [{\"name\": \"cap\", \"pcap\": \"%s/feed.pcap\" %s%s}],"
        " \"lcores\": [{\"lcore\": 1, \"poll\": [{\"port\": \"cap\"}], \"channels\": [\"m\"]}],"
        " \"channels\": [{\"name\": \"m\", \"protocol\": \"mdp3\","
        "   \"lines\": {\"a\": {\"group\": \"224.0.31.1\", \"port\": 1}} %s%s}],"
        " \"instruments\": {\"capacity\": 1024},"
        " \"books\": {\"max_orders\": 65536},"
        " \"bus\": {\"path\": \"%s/bus\", %s},"
        " \"control\": {\"socket\": \"%s/ctl/control.sock\" %s%s}}",
        o->eal ? "," : ", \"no_huge\": true, \"memory_mb\": 256", o->eal ? o->eal : "", dir,
        o->port ? "," : "", o->port ? o->port : "", o->channel ? "," : "",
        o->channel ? o->channel : "", dir, o->bus ? o->bus : "\"ring_bytes\": 65536", dir,
        o->control ? "," : "", o->control ? o->control : "");
    char path[160];
    snprintf(path, sizeof(path), "%s/config.json", dir);
    write_file(path, json, strlen(json));
    struct tp_config_errors load_errs;
    int rc = tp_config_load_file(path, cfg, &load_errs);
    if (rc != 0) {
        char buf[4096];
        tp_config_errors_format(&load_errs, buf, sizeof(buf));
        fprintf(stderr, "%s", buf);
    }
    assert_int_equal(rc, 0);
}

/* `tickplanectl check dir/config.json`: its exit status, its stderr in out. */
static int run_check(char *out, size_t size)
{
    char path[160], cmd[512];
    snprintf(path, sizeof(path), "%s/config.json", dir);
    snprintf(cmd, sizeof(cmd), "'%s' check '%s' 2>&1", TP_TICKPLANECTL, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Exactly one problem, at key, whose message contains what; tickplanectl check agrees. */
static void expect_problem(const char *key, const char *what)
{
    assert_int_equal(tp_config_check_resources(cfg, &fake_host, &errs), -EINVAL);
    for (unsigned i = 0; i < errs.count; i++)
        fprintf(stderr, "  %s: %s\n", errs.items[i].path, errs.items[i].message);
    assert_int_equal(errs.count, 1);
    assert_string_equal(errs.items[0].path, key);
    assert_non_null(strstr(errs.items[0].message, what));
    /* tickplanectl reads the real machine's memory: its check of eal.* is not this one's. */
    if (strncmp(key, "eal.", 4) == 0)
        return;
    char out[4096], line[256];
    assert_int_equal(run_check(out, sizeof(out)), 1);
    snprintf(line, sizeof(line), "%s: ", key);
    assert_non_null(strstr(out, line));
    assert_non_null(strstr(out, what));
}

static void expect_fine(void)
{
    int rc = tp_config_check_resources(cfg, &fake_host, &errs);
    for (unsigned i = 0; i < errs.count; i++)
        fprintf(stderr, "  %s: %s\n", errs.items[i].path, errs.items[i].message);
    assert_int_equal(rc, 0);
}

static void test_all_there(void **state)
{
    (void)state;
    char schema[200];
    snprintf(schema, sizeof(schema), "\"schema\": \"%s\"", TP_MDP3_SCHEMA_PATH);
    load(&(struct overrides){.channel = schema});
    expect_fine();
    char out[4096];
    assert_int_equal(run_check(out, sizeof(out)), 0);
    assert_non_null(strstr(out, "valid"));
}

static void test_pcap_missing_directory_or_not_a_capture(void **state)
{
    (void)state;
    char path[160];
    load(&(struct overrides){0});
    snprintf(path, sizeof(path), "%s/feed.pcap", dir);
    unlink(path);
    expect_problem("ports[0].pcap", "feed.pcap\": No such file or directory");

    /* A directory in its place. */
    load(&(struct overrides){0});
    snprintf(cfg->ports[0].pcap, sizeof(cfg->ports[0].pcap), "%s/ctl", dir);
    assert_int_equal(tp_config_check_resources(cfg, &fake_host, &errs), -EINVAL);
    assert_string_equal(errs.items[0].path, "ports[0].pcap");
    assert_non_null(strstr(errs.items[0].message, "/ctl\" is not a file"));

    write_file(path, "this is no capture, only text that is long enough", 50);
    load(&(struct overrides){0});
    expect_problem("ports[0].pcap", "is not a capture net_pcap can replay");

    /* pcapng (a section header block) is what net_pcap's libpcap reads too. */
    static const uint8_t pcapng[28] = {0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0,    0,    0x4d, 0x3c,
                                       0x2b, 0x1a, 1,    0,    0,  0, 0xff, 0xff, 0xff, 0xff,
                                       0xff, 0xff, 0xff, 0xff, 28, 0, 0,    0};
    write_file(path, pcapng, sizeof(pcapng));
    load(&(struct overrides){0});
    expect_fine();
    write_pcap(path);
}

static void test_bus_path_missing_or_a_file(void **state)
{
    (void)state;
    char bus[200];
    load(&(struct overrides){0});
    snprintf(cfg->bus.path, sizeof(cfg->bus.path), "%s/no-such-dir", dir);
    assert_int_equal(tp_config_check_resources(cfg, &fake_host, &errs), -EINVAL);
    assert_int_equal(errs.count, 1);
    assert_string_equal(errs.items[0].path, "bus.path");
    assert_non_null(strstr(errs.items[0].message, "no-such-dir\": No such file or directory"));
    snprintf(bus, sizeof(bus), "%s/feed.pcap", dir);
    snprintf(cfg->bus.path, sizeof(cfg->bus.path), "%s", bus);
    assert_int_equal(tp_config_check_resources(cfg, &fake_host, &errs), -EINVAL);
    assert_string_equal(errs.items[0].path, "bus.path");
    assert_non_null(strstr(errs.items[0].message, "is not a directory"));
}

static void test_bus_path_through_check(void **state)
{
    (void)state;
    char bus[200];
    snprintf(bus, sizeof(bus), "\"ring_bytes\": 65536, \"mode\": \"0640\"");
    load(&(struct overrides){.bus = bus});
    /* The base names dir/bus: remove it, then check as an operator would. */
    char path[160];
    snprintf(path, sizeof(path), "%s/bus", dir);
    assert_int_equal(rmdir(path), 0);
    expect_problem("bus.path", "bus\": No such file or directory");
    assert_int_equal(mkdir(path, 0755), 0);
}

static void test_socket_directory_missing_or_path_a_directory(void **state)
{
    (void)state;
    char control[200];
    snprintf(control, sizeof(control), "\"mode\": \"0660\"");
    load(&(struct overrides){.control = control});
    char path[160];
    snprintf(path, sizeof(path), "%s/ctl", dir);
    assert_int_equal(rmdir(path), 0);
    expect_problem("control.socket", "ctl\": No such file or directory");
    assert_int_equal(mkdir(path, 0755), 0);
    snprintf(path, sizeof(path), "%s/ctl/control.sock", dir);
    assert_int_equal(mkdir(path, 0755), 0);
    expect_problem("control.socket", "control.sock\" exists and is a directory, not a socket");
    assert_int_equal(rmdir(path), 0);
}

static void test_schema_not_a_schema(void **state)
{
    (void)state;
    char path[160], channel[200];
    snprintf(path, sizeof(path), "%s/schema.xml", dir);
    write_file(path, "<html>not a schema</html>\n", 26);
    snprintf(channel, sizeof(channel), "\"schema\": \"%s\"", path);
    load(&(struct overrides){.channel = channel});
    expect_problem("channels[0].schema", "schema.xml");
    unlink(path);
}

static void test_groups(void **state)
{
    (void)state;
    load(&(struct overrides){.bus = "\"group\": \"tp-no-such-group\""});
    expect_problem("bus.group", "no such group \"tp-no-such-group\"");
    load(&(struct overrides){.control = "\"operator_group\": \"tp-no-such-ops\""});
    expect_problem("control.operator_group", "no such group \"tp-no-such-ops\"");
    load(&(struct overrides){.control = "\"admin_group\": \"tp-no-such-admins\""});
    expect_problem("control.admin_group", "no such group \"tp-no-such-admins\"");
}

static void test_memory_against_the_machine(void **state)
{
    (void)state;
    /* The case: a terabyte without huge pages, accepted before and then OOM-killed. */
    load(&(struct overrides){.eal = "\"no_huge\": true, \"memory_mb\": 1048576"});
    expect_problem("eal.memory_mb",
                   "1048576 MB of DPDK memory without huge pages, this machine has 1000 MB");
    /* tickplanectl check against this machine's memory: no test host has a terabyte free. */
    char out[4096];
    assert_int_equal(run_check(out, sizeof(out)), 1);
    assert_non_null(strstr(out, "eal.memory_mb: 1048576 MB of DPDK memory without huge pages"));
    load(&(struct overrides){.eal = "\"no_huge\": true, \"memory_mb\": 900"});
    expect_fine();
    /* 64 free 2 MB pages: 128 MB. */
    load(&(struct overrides){.eal = "\"memory_mb\": 256"});
    expect_problem("eal.memory_mb", "this machine has 128 MB of free huge pages");
    load(&(struct overrides){.eal = "\"memory_mb\": 128"});
    expect_fine();
}

/* The case: the default 64 MiB ring on a 64 MiB tmpfs (a container's /dev/shm). */
static void test_bus_does_not_fit_its_file_system(void **state)
{
    (void)state;
    char mnt[160];
    snprintf(mnt, sizeof(mnt), "%s/bus", dir);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=64m") != 0) {
        fprintf(stderr, "cannot mount a tmpfs (%s): needs root\n", strerror(errno));
        skip();
    }
    load(&(struct overrides){.bus = "\"ring_bytes\": 67108864"});
    struct tp_bus_params bp;
    tp_config_bus_params(cfg, &bp);
    uint64_t need = tp_bus_footprint(&bp, 1, 4096);
    assert_true(need > 64u << 20);
    char what[200];
    snprintf(what, sizeof(what), "the bus needs %llu bytes on %s", (unsigned long long)need, mnt);
    expect_problem("bus.ring_bytes", what);
    assert_non_null(strstr(errs.items[0].message, "the file system has 67108864 bytes free"));
    load(&(struct overrides){.bus = "\"ring_bytes\": 33554432"});
    expect_fine();
    /* The writer refuses it too, at creation, leaving nothing behind (no SIGBUS later). */
    struct tp_bus_writer w;
    char err[512];
    tp_config_bus_params(cfg, &bp);
    bp.ring_bytes = 64u << 20;
    assert_int_equal(tp_bus_writer_open(&w, &bp, err, sizeof(err)), -ENOSPC);
    assert_non_null(strstr(err, "do not fit the file system"));
    char cmd[300];
    snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", mnt);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(umount(mnt), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_there),
        cmocka_unit_test(test_pcap_missing_directory_or_not_a_capture),
        cmocka_unit_test(test_bus_path_missing_or_a_file),
        cmocka_unit_test(test_bus_path_through_check),
        cmocka_unit_test(test_socket_directory_missing_or_path_a_directory),
        cmocka_unit_test(test_schema_not_a_schema),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_memory_against_the_machine),
        cmocka_unit_test(test_bus_does_not_fit_its_file_system),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
