/* BinaryFILE writer: length-prefixed ITCH messages, buffered. */
#include "binaryfile_out.h"

#include <errno.h>
#include <stdlib.h>

#include "binaryfile.h"

int tp_sim_binaryfile_open(struct tp_sim_binaryfile *bf, const char *path)
{
    bf->used = 0;
    bf->messages = 0;
    bf->failed = 0;
    bf->buf = malloc(TP_SIM_BINFILE_BUFFER);
    if (bf->buf == NULL)
        return -ENOMEM;
    bf->f = fopen(path, "wb");
    if (bf->f == NULL) {
        int rc = -errno;
        free(bf->buf);
        return rc;
    }
    return 0;
}

static void flush_buffer(struct tp_sim_binaryfile *bf)
{
    if (bf->used > 0 && fwrite(bf->buf, 1, bf->used, bf->f) != bf->used)
        bf->failed = 1;
    bf->used = 0;
}

int tp_sim_binaryfile_message(void *ctx, const uint8_t *msg, size_t len, uint64_t time_ns)
{
    struct tp_sim_binaryfile *bf = ctx;
    (void)time_ns;
    if (tp_binfile_append(bf->buf, TP_SIM_BINFILE_BUFFER, &bf->used, msg, (uint16_t)len) < 0) {
        flush_buffer(bf);
        if (tp_binfile_append(bf->buf, TP_SIM_BINFILE_BUFFER, &bf->used, msg, (uint16_t)len) < 0)
            return -EINVAL;
    }
    bf->messages++;
    return bf->failed ? -EIO : 0;
}

int tp_sim_binaryfile_close(struct tp_sim_binaryfile *bf)
{
    flush_buffer(bf);
    int failed = bf->failed | (fclose(bf->f) != 0);
    free(bf->buf);
    bf->buf = NULL;
    bf->f = NULL;
    return failed ? -EIO : 0;
}
