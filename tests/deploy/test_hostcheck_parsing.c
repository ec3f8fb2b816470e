/*
 * The parsers under the host checks: kernel cpu lists and masks, PCI addresses, and the
 * kernel command line read through a root prefix.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cpuset.h"
#include "fake_host.h"
#include "hostfs.h"
#include "pci_address.h"

static void parse(struct tp_cpuset *set, const char *text, bool flags, int expected_rc)
{
    assert_int_equal(tp_cpuset_parse_list(set, text, strlen(text), flags), expected_rc);
}

static void assert_list(const struct tp_cpuset *set, const char *expected)
{
    char out[256];

    assert_true(tp_cpuset_format_list(set, out, sizeof(out)) >= 0);
    assert_string_equal(out, expected);
}

static void test_cpu_lists(void **state)
{
    struct tp_cpuset set;
    (void)state;

    parse(&set, "0", false, 0);
    assert_list(&set, "0");
    parse(&set, " 2-3,5,8-9\n", false, 0);
    assert_list(&set, "2-3,5,8-9");
    assert_int_equal(tp_cpuset_count(&set), 5);
    assert_true(tp_cpuset_has(&set, 8));
    assert_false(tp_cpuset_has(&set, 4));
    /* Stride groups: "0-11:2/4" is 2 cpus of every 4. */
    parse(&set, "0-11:2/4", false, 0);
    assert_list(&set, "0-1,4-5,8-9");
    parse(&set, "1000-1023", false, 0);
    assert_list(&set, "1000-1023");
    parse(&set, "(null)", false, 0);
    assert_true(tp_cpuset_empty(&set));
    parse(&set, "", false, 0);
    assert_true(tp_cpuset_empty(&set));
    /* isolcpus= flags are not cpus, but only where flags are expected. */
    parse(&set, "nohz,domain,managed_irq,2-3", true, 0);
    assert_list(&set, "2-3");
    parse(&set, "domain,2-3", false, -EINVAL);
}

static void test_cpu_lists_malformed(void **state)
{
    static const char *const bad[] = {"3-1",
                                      "1024",
                                      "1-",
                                      "-1",
                                      "1,,2",
                                      "2-3:0/4",
                                      "2-3:5/4",
                                      "2-3:2",
                                      "x",
                                      "1 2",
                                      "99999999999999999999"};
    struct tp_cpuset set;
    (void)state;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        parse(&set, bad[i], false, -EINVAL);
        assert_true(tp_cpuset_empty(&set)); /* never half-parsed */
    }
}

static void test_cpu_masks(void **state)
{
    struct tp_cpuset set, other, out;
    char text[64];
    (void)state;

    assert_int_equal(tp_cpuset_parse_mask(&set, "f\n"), 0);
    assert_list(&set, "0-3");
    assert_int_equal(tp_cpuset_parse_mask(&set, "00000001,00000000,00000003"), 0);
    assert_list(&set, "0-1,64");
    assert_true(tp_cpuset_format_mask(&set, text, sizeof(text)) > 0);
    assert_string_equal(text, "1,00000000,00000003");
    assert_int_equal(tp_cpuset_parse_mask(&set, "zz"), -EINVAL);
    assert_int_equal(tp_cpuset_parse_mask(&set, ""), -EINVAL);
    tp_cpuset_clear(&set);
    assert_true(tp_cpuset_format_mask(&set, text, sizeof(text)) > 0);
    assert_string_equal(text, "0");
    assert_int_equal(tp_cpuset_format_mask(&set, text, 1), -ENOSPC);

    parse(&set, "0-5", false, 0);
    parse(&other, "2-3,9", false, 0);
    tp_cpuset_minus(&out, &set, &other);
    assert_list(&out, "0-1,4-5");
    tp_cpuset_and(&out, &set, &other);
    assert_list(&out, "2-3");
    tp_cpuset_or(&out, &set, &other);
    assert_list(&out, "0-5,9");
    assert_false(tp_cpuset_contains(&set, &other));
    parse(&other, "1-2", false, 0);
    assert_true(tp_cpuset_contains(&set, &other));
    assert_int_equal(tp_cpuset_format_list(&set, text, 3), -ENOSPC);
}

static void test_pci_addresses(void **state)
{
    char out[TP_PCI_ADDRESS_LEN];
    static const char *const bad[] = {
        "3b:00",         "0000:3b:00.8", "0000:3b:20.0", "../../etc/x",
        "0000:3b:00.0/", "3b:00.0x",     "0000-3b:00.0", ""};
    (void)state;

    assert_int_equal(tp_pci_address_normalize("0000:3B:00.1", out), 0);
    assert_string_equal(out, "0000:3b:00.1");
    assert_int_equal(tp_pci_address_normalize("af:1f.7", out), 0);
    assert_string_equal(out, "0000:af:1f.7");
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_int_equal(tp_pci_address_normalize(bad[i], out), -EINVAL);
}

static void test_hostfs_under_root(void **state)
{
    char root[256], value[64], buf[8], path[TP_HOSTFS_PATH_MAX];
    long number;
    (void)state;

    fake_host_create(root, sizeof(root));
    /* Last occurrence wins; words after "--" belong to init. */
    fake_write(root, "/proc/cmdline", "a=1 nohz_full=1 quiet nohz_full=2-3 -- nohz_full=0\n");
    assert_int_equal(tp_hostfs_cmdline_param(value, sizeof(value), root, "nohz_full"), 1);
    assert_string_equal(value, "2-3");
    assert_int_equal(tp_hostfs_cmdline_param(value, sizeof(value), root, "nohz"), 0);
    assert_int_equal(tp_hostfs_cmdline_param(value, 2, root, "nohz_full"), -ENOSPC);

    /* Reads stay inside the caller's buffer and strip the newline. */
    fake_write(root, "/proc/sys/vm/stat_interval", "123456789\n");
    assert_int_equal(tp_hostfs_read(buf, sizeof(buf), root, "/proc/sys/vm/stat_interval"), 7);
    assert_string_equal(buf, "1234567");
    assert_int_equal(tp_hostfs_read_long(&number, root, "/proc/sys/vm/stat_interval"), 0);
    assert_int_equal(number, 123456789);
    assert_int_equal(tp_hostfs_read(buf, sizeof(buf), root, "/proc/%s", "missing"), -ENOENT);

    /* A trailing slash on the root joins cleanly. */
    assert_int_equal(tp_hostfs_path(path, sizeof(path), "/tmp/x/", "/proc/%d", 1), 0);
    assert_string_equal(path, "/tmp/x/proc/1");
    assert_int_equal(tp_hostfs_path(path, 8, "/tmp/x/", "/proc/%d", 1), -ENAMETOOLONG);

    assert_int_equal(
        tp_hostfs_link_name(value, sizeof(value), root, "/sys/bus/pci/devices/%s/driver", FAKE_PCI),
        8);
    assert_string_equal(value, "vfio-pci");
    fake_host_destroy(root);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_lists),         cmocka_unit_test(test_cpu_lists_malformed),
        cmocka_unit_test(test_cpu_masks),         cmocka_unit_test(test_pci_addresses),
        cmocka_unit_test(test_hostfs_under_root),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
