/* libFuzzer: any bytes as CME's config.xml; the reader must refuse or parse, never overrun. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cme_channels.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tp_cme_channel ch;
    char err[200];
    /* An exact-size copy, so ASan sees any read past the end. */
    char *xml = malloc(size ? size : 1);
    if (xml == NULL)
        return 0;
    memcpy(xml, data, size);
    if (tp_cme_channel_find(xml, size, 310, &ch, err, sizeof(err)) == 0)
        tp_cme_channel_feed(&ch, "I", 'A');
    free(xml);
    return 0;
}
