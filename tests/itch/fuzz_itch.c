/*
 * fuzz_itch.c - libFuzzer target: the first byte picks the framing (even: a MoldUDP64 packet,
 * odd: a BinaryFILE), the rest is framed, every message is checked, decoded into its struct,
 * re-encoded (must give the same bytes) and printed as JSON.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "binaryfile.h"
#include "itch50_json.h"
#include "moldudp64.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Decode -> encode must reproduce a valid message exactly. */
static void round_trip(const uint8_t *msg, uint16_t len)
{
    uint8_t again[TP_ITCH_MAX_MESSAGE_LEN];
    switch (msg[0]) {
#define FUZZ_ROUND_TRIP(T, M, LEN)                                                                 \
    case T: {                                                                                      \
        struct tp_itch_##M v;                                                                      \
        if (tp_itch_##M##_decode(msg, len, &v) != 0 ||                                             \
            tp_itch_##M##_encode(again, sizeof(again), &v) != (LEN) ||                             \
            memcmp(again, msg, LEN) != 0)                                                          \
            abort();                                                                               \
        break;                                                                                     \
    }
        TP_ITCH_MESSAGES(FUZZ_ROUND_TRIP)
    default:
        abort();
    }
}

static void one_message(const uint8_t *msg, uint16_t len)
{
    char out[TP_ITCH_JSON_MAX_LEN];
    int type = tp_itch_check(msg, len);
    int n = tp_itch_print_json(out, sizeof(out), msg, len);
    if (type < 0) {
        if (n != type)
            abort();
        return;
    }
    if (n <= 0 || (size_t)n >= sizeof(out))
        abort();
    round_trip(msg, len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const uint8_t *body = data + 1;
    size_t len = size - 1;
    const uint8_t *msg;
    uint16_t mlen;
    if ((data[0] & 1) == 0) {
        struct tp_mold_packet p;
        if (tp_mold_parse(&p, body, len) < 0)
            return 0;
        /* The one-pass check accepts exactly what the iterator reads to the end without error,
         * and the unchecked walk of an accepted packet returns the iterator's blocks. */
        struct tp_mold_packet framed = p;
        int checked = tp_mold_check(&p);
        int rc;
        while ((rc = tp_mold_next(&p, &msg, &mlen)) == 1) {
            if (msg < body || msg + mlen > body + len)
                abort();
            if (checked == 0) {
                uint16_t flen;
                if (tp_mold_next_framed(&framed, &flen) != msg || flen != mlen)
                    abort();
            }
            one_message(msg, mlen);
        }
        if ((checked == 0) != (rc == 0) || (checked == 0 && framed.next != p.next))
            abort();
    } else {
        struct tp_binfile_reader r;
        tp_binfile_reader_init(&r, body, len);
        while (tp_binfile_next(&r, &msg, &mlen) == 1)
            one_message(msg, mlen);
        if (r.offset > len)
            abort();
    }
    return 0;
}
