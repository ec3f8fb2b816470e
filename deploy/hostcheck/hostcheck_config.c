/* Host-check parameters from a tickplane config (see hostcheck_config.h). */
#include "hostcheck_config.h"

void tp_hostcheck_params_from_config(struct tp_hostcheck_params *params,
                                     const struct tp_config *cfg)
{
    tp_cpuset_clear(&params->data_lcores);
    /* The CPUs the data lcores run on: their numbers, or their '@' mappings (eal.lcores). */
    for (unsigned i = 0; i < cfg->n_lcores; i++) {
        uint64_t cpus[2];
        if (tp_config_lcore_cpus(&cfg->eal, cfg->lcores[i].lcore_id, cpus) != 0)
            continue;
        for (unsigned c = 0; c < 128; c++)
            if (cpus[c / 64] >> (c % 64) & 1)
                tp_cpuset_add(&params->data_lcores, c);
    }

    params->n_pci = 0;
    for (unsigned i = 0; i < cfg->n_ports && params->n_pci < TP_HOSTCHECK_MAX_PCI; i++)
        if (cfg->ports[i].kind == TP_CFG_PORT_PCI)
            params->pci[params->n_pci++] = cfg->ports[i].pci;

    /* EAL reserves -m up front when given; otherwise the config's own estimate is the need. */
    params->hugepage_bytes =
        cfg->eal.memory_mb ? (uint64_t)cfg->eal.memory_mb << 20 : tp_config_memory_estimate(cfg);
    params->no_hugepages = cfg->eal.no_huge;
}

unsigned tp_hostcheck_startup(const struct tp_config *cfg, const char *root, FILE *log)
{
    static struct tp_hostcheck_report report; /* large; start-up runs once, on the main lcore */
    struct tp_hostcheck_params params;

    tp_hostcheck_params_init(&params);
    params.root = root;
    tp_hostcheck_params_from_config(&params, cfg);
    tp_hostcheck_run(&params, &report);
    if (report.count[TP_CHECK_WARN] + report.count[TP_CHECK_FAIL] > 0) {
        fprintf(log, "tickplane: host checks: %u warn, %u fail (run tickplane-doctor for all)\n",
                report.count[TP_CHECK_WARN], report.count[TP_CHECK_FAIL]);
        tp_hostcheck_print_text(log, &report, TP_CHECK_WARN);
    }
    return report.count[TP_CHECK_FAIL];
}
