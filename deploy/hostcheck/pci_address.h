/*
 * PCI addresses as sysfs names them: "dddd:bb:dd.f" (domain, bus, device, function, hex).
 * Promises: the normalized form is always lower case with the domain, so it can be joined into
 * /sys/bus/pci/devices/<address> paths; anything else is rejected (never a path component).
 */
#ifndef TP_PCI_ADDRESS_H
#define TP_PCI_ADDRESS_H

#define TP_PCI_ADDRESS_LEN 13 /* "0000:3b:00.0" and its NUL */

/* Accepts "0000:3b:00.0" or "3b:00.0" (domain 0). Returns 0 or -EINVAL. */
int tp_pci_address_normalize(const char *text, char out[TP_PCI_ADDRESS_LEN]);

#endif
