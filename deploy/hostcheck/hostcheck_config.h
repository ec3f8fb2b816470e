/*
 * Host-check parameters from a loaded tickplane config (control/config): the data lcores, the
 * PCI ports, the hugepage memory EAL will ask for, and whether it runs without hugepages.
 * The params point into cfg (PCI address strings), so cfg must outlive them.
 */
#ifndef TP_HOSTCHECK_CONFIG_H
#define TP_HOSTCHECK_CONFIG_H

#include "config.h"
#include "hostcheck.h"

/* Fills the config-derived fields of params (root is left as it is). */
void tp_hostcheck_params_from_config(struct tp_hostcheck_params *params,
                                     const struct tp_config *cfg);

/*
 * What the daemon calls at start: runs every check for cfg on the host under root ("/"), writes
 * the WARN and FAIL lines with their fixes to log (a header line first when there are any), and
 * returns the number of FAILs. The daemon starts anyway: the checks only advise.
 */
unsigned tp_hostcheck_startup(const struct tp_config *cfg, const char *root, FILE *log);

#endif
