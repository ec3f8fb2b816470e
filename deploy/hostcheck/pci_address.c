/* PCI address parsing (see pci_address.h). */
#include "pci_address.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Reads exactly `digits` hex digits at *s into *value; advances *s. */
static int hex_field(const char **s, unsigned digits, unsigned *value)
{
    *value = 0;
    for (unsigned i = 0; i < digits; i++, (*s)++) {
        int c = (unsigned char)**s;
        if (!isxdigit(c))
            return -EINVAL;
        *value = *value * 16 + (unsigned)(isdigit(c) ? c - '0' : tolower(c) - 'a' + 10);
    }
    return 0;
}

int tp_pci_address_normalize(const char *text, char out[TP_PCI_ADDRESS_LEN])
{
    unsigned domain = 0, bus, device, function;
    const char *s = text;

    if (strlen(text) == 12 && (hex_field(&s, 4, &domain) < 0 || *s++ != ':'))
        return -EINVAL;
    if (strlen(s) != 7 || hex_field(&s, 2, &bus) < 0 || *s++ != ':' ||
        hex_field(&s, 2, &device) < 0 || *s++ != '.' || hex_field(&s, 1, &function) < 0)
        return -EINVAL;
    if (device > 0x1f || function > 7)
        return -EINVAL;
    snprintf(out, TP_PCI_ADDRESS_LEN, "%04x:%02x:%02x.%x", domain, bus, device, function);
    return 0;
}
