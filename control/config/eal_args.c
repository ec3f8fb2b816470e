/*
 * EAL argument vector from the config: see tp_config_eal_argv in config.h. The strings built here
 * (numbers, the lcore list) live in static storage because the EAL keeps pointers into argv.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"

/* Storage for the few formatted arguments (one daemon, one EAL init). */
static char lcore_arg[256], memory_arg[16], main_arg[16];

static int push(char **argv, int *argc, int max, const char *arg)
{
    if (*argc >= max)
        return -ENOSPC;
    argv[(*argc)++] = (char *)arg;
    return 0;
}

int tp_config_eal_argv(const struct tp_config *cfg, const char *prog, char **argv, int max)
{
    const struct tp_cfg_eal *eal = &cfg->eal;
    int argc = 0, rc = push(argv, &argc, max, prog);
    if (eal->explicit_args) {
        for (unsigned i = 0; rc == 0 && i < eal->n_args; i++)
            rc = push(argv, &argc, max, eal->args[i]);
    } else {
        size_t used = 0;
        lcore_arg[0] = '\0';
        for (unsigned i = 0; i < eal->n_lcores; i++)
            used += (size_t)snprintf(lcore_arg + used, sizeof(lcore_arg) - used, "%s%u",
                                     i ? "," : "", eal->lcores[i]);
        snprintf(main_arg, sizeof(main_arg), "%u", eal->main_lcore);
        /* CPU mappings ("1@0") go to EAL as written: -l cannot say them. */
        rc |= push(argv, &argc, max, eal->cpu_map ? "--lcores" : "-l");
        rc |= push(argv, &argc, max, eal->cpu_map ? eal->lcore_map : lcore_arg);
        rc |= push(argv, &argc, max, "--main-lcore");
        rc |= push(argv, &argc, max, main_arg);
        if (eal->memory_mb != 0) {
            snprintf(memory_arg, sizeof(memory_arg), "%u", eal->memory_mb);
            rc |= push(argv, &argc, max, "-m");
            rc |= push(argv, &argc, max, memory_arg);
        }
        if (eal->no_huge)
            rc |= push(argv, &argc, max, "--no-huge");
        if (eal->no_pci)
            rc |= push(argv, &argc, max, "--no-pci");
        if (eal->no_shconf)
            rc |= push(argv, &argc, max, "--no-shconf");
        if (eal->file_prefix[0] != '\0') {
            rc |= push(argv, &argc, max, "--file-prefix");
            rc |= push(argv, &argc, max, eal->file_prefix);
        }
        if (eal->log_level[0] != '\0') {
            rc |= push(argv, &argc, max, "--log-level");
            rc |= push(argv, &argc, max, eal->log_level);
        }
        for (unsigned i = 0; i < eal->n_vdevs; i++) {
            rc |= push(argv, &argc, max, "--vdev");
            rc |= push(argv, &argc, max, eal->vdevs[i]);
        }
        for (unsigned i = 0; i < eal->n_pci_allow; i++) {
            rc |= push(argv, &argc, max, "-a");
            rc |= push(argv, &argc, max, eal->pci_allow[i]);
        }
    }
    /* Ports bring their own devices, in either mode; the daemon creates a preloaded port's. */
    for (unsigned p = 0; p < cfg->n_ports; p++) {
        const struct tp_cfg_port *port = &cfg->ports[p];
        if (port->preload)
            continue;
        rc |= push(argv, &argc, max, port->kind == TP_CFG_PORT_PCI ? "-a" : "--vdev");
        rc |= push(argv, &argc, max, port->kind == TP_CFG_PORT_PCI ? port->pci : port->device);
    }
    return rc != 0 ? -ENOSPC : argc;
}
