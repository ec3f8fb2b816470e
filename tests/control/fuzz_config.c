/* libFuzzer: any bytes as a config document; the loader must report, never crash or overrun. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tp_config cfg;
    static struct tp_config_errors errs;
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (tp_config_load_string(text, "/nonexistent", &cfg, &errs) == 0) {
        char *argv[256];
        tp_config_eal_argv(&cfg, "fuzz", argv, 256);
        tp_config_memory_estimate(&cfg);
    }
    char out[8192];
    tp_config_errors_format(&errs, out, sizeof(out));
    free(text);
    return 0;
}
