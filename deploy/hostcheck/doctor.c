/*
 * tickplane-doctor: checks that this host is tuned for tickplane and prints the fixes.
 *
 *   tickplane-doctor --config /etc/tickplane/tickplane.json [--json]
 *   tickplane-doctor --data-lcores 2,3 --pci 0000:3b:00.0 [--hugepages-mb 2048] [--json]
 *
 * Flags given after --config override what the config says.
 * Exit status: 0 when no check fails, 1 when one does, 2 on a usage error. The systemd unit runs
 * it before the daemon with its failures ignored (warnings only).
 */
#include "hostcheck.h"
#include "hostcheck_config.h"
#include "pci_address.h"
#include "tp_version.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
            "usage: tickplane-doctor [options]\n"
            "  --config FILE        take lcores, ports and memory from a tickplane JSON config\n"
            "  --data-lcores LIST   cores that busy-poll, kernel list syntax (2,3 or 2-5)\n"
            "  --pci ADDR           a port's PCI address (0000:3b:00.0); repeat or comma-separate\n"
            "  --hugepages-mb N     hugepage memory the daemon needs on each port's NUMA node\n"
            "  --json               machine-readable output\n"
            "  --hugepage-plan      print only '<numa node> <MiB>' lines: where to reserve\n"
            "  --show-lcores        print only the data lcore list (for tune-host.sh)\n"
            "  --problems           print only WARN and FAIL\n"
            "  --root DIR           read /proc and /sys under DIR (for tests)\n"
            "  --version            print the version and commit\n"
            "exit status: 0 no FAIL, 1 at least one FAIL, 2 usage error\n");
}

/* Adds each comma-separated PCI address of arg to params (normalized into storage). */
static int add_pci(struct tp_hostcheck_params *params, char storage[][TP_PCI_ADDRESS_LEN],
                   const char *arg)
{
    char copy[512], *save = NULL;

    if (strlen(arg) >= sizeof(copy))
        return -EINVAL;
    strcpy(copy, arg);
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (params->n_pci == TP_HOSTCHECK_MAX_PCI) {
            fprintf(stderr, "tickplane-doctor: at most %d ports\n", TP_HOSTCHECK_MAX_PCI);
            return -ENOSPC;
        }
        if (tp_pci_address_normalize(tok, storage[params->n_pci]) < 0) {
            fprintf(stderr, "tickplane-doctor: bad PCI address '%s' (want 0000:3b:00.0)\n", tok);
            return -EINVAL;
        }
        params->pci[params->n_pci] = storage[params->n_pci];
        params->n_pci++;
    }
    return 0;
}

/* Loads and validates the config; on failure prints every error and returns -EINVAL. */
static int load_config(struct tp_hostcheck_params *params, const char *file)
{
    static struct tp_config cfg; /* large; the params point into it */
    static struct tp_config_errors errs;
    static char text[TP_CFG_MAX_ERRORS * 400];

    if (tp_config_load_file(file, &cfg, &errs) < 0) {
        tp_config_errors_format(&errs, text, sizeof(text));
        fprintf(stderr, "tickplane-doctor: %s is not a valid config:\n%s", file, text);
        return -EINVAL;
    }
    tp_hostcheck_params_from_config(params, &cfg);
    return 0;
}

/* The hugepage plan for reserve-hugepages.sh: one "<node> <MiB>" line per node. */
static int print_plan(const struct tp_hostcheck_params *params)
{
    unsigned nodes[TP_HOSTCHECK_MAX_PCI];
    uint64_t mib[TP_HOSTCHECK_MAX_PCI];
    unsigned n = tp_hostcheck_hugepage_plan(params, nodes, mib, TP_HOSTCHECK_MAX_PCI);

    for (unsigned i = 0; i < n; i++)
        printf("%u %" PRIu64 "\n", nodes[i], mib[i]);
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option options[] = {
        {"config", required_argument, NULL, 'c'}, {"data-lcores", required_argument, NULL, 'l'},
        {"pci", required_argument, NULL, 'p'},    {"hugepages-mb", required_argument, NULL, 'm'},
        {"json", no_argument, NULL, 'j'},         {"hugepage-plan", no_argument, NULL, 'H'},
        {"show-lcores", no_argument, NULL, 'L'},  {"problems", no_argument, NULL, 'q'},
        {"root", required_argument, NULL, 'r'},   {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},      {NULL, 0, NULL, 0},
    };
    static char pci_storage[TP_HOSTCHECK_MAX_PCI][TP_PCI_ADDRESS_LEN];
    static struct tp_hostcheck_report report;
    struct tp_hostcheck_params params;
    bool json = false, problems = false, plan = false, show_lcores = false;
    char lcores[1024];
    char *end;
    int opt;

    tp_hostcheck_params_init(&params);
    while ((opt = getopt_long(argc, argv, "c:l:p:m:jHLqr:h", options, NULL)) != -1) {
        switch (opt) {
        case 'c':
            if (load_config(&params, optarg) < 0)
                return 2;
            break;
        case 'l':
            if (tp_cpuset_parse_list(&params.data_lcores, optarg, strlen(optarg), false) < 0) {
                fprintf(stderr, "tickplane-doctor: bad lcore list '%s'\n", optarg);
                return 2;
            }
            break;
        case 'p':
            if (add_pci(&params, pci_storage, optarg) < 0)
                return 2;
            break;
        case 'm':
            errno = 0;
            params.hugepage_bytes = strtoull(optarg, &end, 10) << 20;
            if (errno || end == optarg || *end) {
                fprintf(stderr, "tickplane-doctor: bad size '%s' (MiB)\n", optarg);
                return 2;
            }
            break;
        case 'j':
            json = true;
            break;
        case 'H':
            plan = true;
            break;
        case 'L':
            show_lcores = true;
            break;
        case 'q':
            problems = true;
            break;
        case 'r':
            params.root = optarg;
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            tp_version_print(stdout, "tickplane-doctor");
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }

    if (plan)
        return print_plan(&params);
    if (show_lcores) {
        if (tp_cpuset_format_list(&params.data_lcores, lcores, sizeof(lcores)) < 0)
            return 2;
        printf("%s\n", lcores);
        return 0;
    }
    tp_hostcheck_run(&params, &report);
    if (json) {
        if (tp_hostcheck_print_json(stdout, &report) < 0)
            return 2;
    } else {
        tp_hostcheck_print_text(stdout, &report, problems ? TP_CHECK_WARN : TP_CHECK_PASS);
    }
    return report.count[TP_CHECK_FAIL] ? 1 : 0;
}
