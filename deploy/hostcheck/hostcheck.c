/* Host checks: the list of checks, running them, shared helpers and the report printers. */
#include "checks.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <string.h>

static const struct {
    const char *name;
    tp_check_fn *fn;
} checks[TP_HOSTCHECK_NCHECKS] = {
    {"cpu_isolation", tp_check_cpu_isolation},
    {"nohz_full", tp_check_nohz_full},
    {"rcu_nocbs", tp_check_rcu_nocbs},
    {"cpu_governor", tp_check_cpu_governor},
    {"irqbalance", tp_check_irqbalance},
    {"irq_affinity", tp_check_irq_affinity},
    {"watchdog", tp_check_watchdog},
    {"vm_stat_interval", tp_check_vm_stat_interval},
    {"clocksource", tp_check_clocksource},
    {"tsc_invariant", tp_check_tsc_invariant},
    {"thp", tp_check_thp},
    {"hugepages", tp_check_hugepages},
    {"memlock", tp_check_memlock},
    {"nic_driver", tp_check_nic_driver},
    {"numa_locality", tp_check_numa_locality},
};

static const char *const status_names[TP_CHECK_NSTATUS] = {"PASS", "SKIP", "WARN", "FAIL"};

void tp_hostcheck_params_init(struct tp_hostcheck_params *params)
{
    memset(params, 0, sizeof(*params));
    params->root = "/";
}

const char *tp_check_status_name(enum tp_check_status status)
{
    return (unsigned)status < TP_CHECK_NSTATUS ? status_names[status] : "?";
}

const char *const *tp_hostcheck_names(unsigned *n)
{
    static const char *names[TP_HOSTCHECK_NCHECKS];

    for (unsigned i = 0; i < TP_HOSTCHECK_NCHECKS; i++)
        names[i] = checks[i].name;
    *n = TP_HOSTCHECK_NCHECKS;
    return names;
}

static void run_check(unsigned index, const struct tp_hostcheck_params *params,
                      struct tp_check_result *result)
{
    memset(result, 0, sizeof(*result));
    result->name = checks[index].name;
    checks[index].fn(params, result);
}

void tp_hostcheck_run(const struct tp_hostcheck_params *params, struct tp_hostcheck_report *report)
{
    memset(report, 0, sizeof(*report));
    for (unsigned i = 0; i < TP_HOSTCHECK_NCHECKS; i++) {
        run_check(i, params, &report->results[i]);
        report->count[report->results[i].status]++;
    }
    report->n = TP_HOSTCHECK_NCHECKS;
}

int tp_hostcheck_run_one(const char *name, const struct tp_hostcheck_params *params,
                         struct tp_check_result *result)
{
    for (unsigned i = 0; i < TP_HOSTCHECK_NCHECKS; i++) {
        if (strcmp(checks[i].name, name) == 0) {
            run_check(i, params, result);
            return 0;
        }
    }
    return -ENOENT;
}

/*
 * Texts quote what the host's files say (governor, driver and clock names, ...). Anything but
 * printable ASCII becomes '?', so a hostile or garbled file can neither send escape sequences
 * to the operator's terminal nor make the JSON report invalid UTF-8.
 */
static void printable(char *text)
{
    for (unsigned char *c = (unsigned char *)text; *c; c++)
        if (*c < 0x20 || *c > 0x7e)
            *c = '?';
}

void tp_check_set(struct tp_check_result *result, enum tp_check_status status, const char *fmt, ...)
{
    va_list ap;

    result->status = status;
    va_start(ap, fmt);
    vsnprintf(result->detail, sizeof(result->detail), fmt, ap);
    va_end(ap);
    printable(result->detail);
}

void tp_check_fix(struct tp_check_result *result, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(result->fix, sizeof(result->fix), fmt, ap);
    va_end(ap);
    printable(result->fix);
}

int tp_host_cpulist(struct tp_cpuset *set, const char *root, const char *path)
{
    char text[1024];
    int len = tp_hostfs_read(text, sizeof(text), root, "%s", path);

    if (len < 0) {
        tp_cpuset_clear(set);
        return len;
    }
    return tp_cpuset_parse_list(set, text, (size_t)len, false);
}

int tp_host_housekeeping(struct tp_cpuset *set, const struct tp_hostcheck_params *params)
{
    struct tp_cpuset online;
    int rc = tp_host_cpulist(&online, params->root, "/sys/devices/system/cpu/online");

    if (rc < 0)
        return rc;
    tp_cpuset_minus(set, &online, &params->data_lcores);
    return 0;
}

int tp_host_pci_numa_node(const char *root, const char *pci)
{
    long node;
    int rc = tp_hostfs_read_long(&node, root, "/sys/bus/pci/devices/%s/numa_node", pci);

    if (rc < 0)
        return rc;
    return node < 0 ? -1 : (int)node;
}

unsigned tp_host_numa_nodes(const char *root)
{
    struct tp_cpuset nodes; /* node numbers use the same list syntax as cpus */

    if (tp_host_cpulist(&nodes, root, "/sys/devices/system/node/online") < 0 ||
        tp_cpuset_empty(&nodes))
        return 1;
    return tp_cpuset_count(&nodes);
}

const char *tp_cpuset_text(const struct tp_cpuset *set, char *buf, size_t size)
{
    if (tp_cpuset_empty(set) || tp_cpuset_format_list(set, buf, size) < 0)
        snprintf(buf, size, "none");
    return buf;
}

void tp_hostcheck_print_text(FILE *out, const struct tp_hostcheck_report *report,
                             enum tp_check_status min_status)
{
    for (unsigned i = 0; i < report->n; i++) {
        const struct tp_check_result *r = &report->results[i];

        if (r->status < min_status)
            continue;
        fprintf(out, "%-4s  %-16s  %s\n", tp_check_status_name(r->status), r->name, r->detail);
        if (r->fix[0])
            fprintf(out, "      %-16s  fix: %s\n", "", r->fix);
    }
    if (min_status == TP_CHECK_PASS)
        fprintf(out, "summary: %u pass, %u skip, %u warn, %u fail\n", report->count[TP_CHECK_PASS],
                report->count[TP_CHECK_SKIP], report->count[TP_CHECK_WARN],
                report->count[TP_CHECK_FAIL]);
}

int tp_hostcheck_print_json(FILE *out, const struct tp_hostcheck_report *report)
{
    json_t *root = json_object();
    json_t *list = json_array();
    json_t *summary = json_object();
    int rc = 0;

    if (!root || !list || !summary) {
        json_decref(root);
        json_decref(list);
        json_decref(summary);
        return -ENOMEM;
    }
    for (unsigned i = 0; i < report->n; i++) {
        const struct tp_check_result *r = &report->results[i];

        json_array_append_new(list, json_pack("{s:s, s:s, s:s, s:s}", "name", r->name, "status",
                                              tp_check_status_name(r->status), "detail", r->detail,
                                              "fix", r->fix));
    }
    for (unsigned s = 0; s < TP_CHECK_NSTATUS; s++)
        json_object_set_new(summary, status_names[s], json_integer(report->count[s]));
    json_object_set_new(root, "checks", list);
    json_object_set_new(root, "summary", summary);
    if (json_dumpf(root, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) < 0 || fputc('\n', out) < 0)
        rc = -EIO;
    json_decref(root);
    return rc;
}
