/*
 * Fuzz target: the messageSchema reader of a schema file's head (mdp3_schema_file.h) on any
 * bytes, as an operator's mistaken file could hold. It must never read out of bounds and must
 * report numbers only when it found them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mdp3_schema_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    uint32_t id = UINT32_MAX, version = UINT32_MAX;
    int rc = tp_sbe_schema_text_id(text, &id, &version);
    if (rc != 0 && (id != UINT32_MAX || version != UINT32_MAX))
        abort(); /* a failed read left outputs written */
    free(text);
    return 0;
}
