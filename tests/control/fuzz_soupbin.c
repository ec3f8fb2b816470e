/*
 * fuzz_soupbin.c - libFuzzer target: the input is what a SoupBinTCP server sends. The first byte
 * picks how it is cut into writes (1..256 bytes each) and how often the consumer pushes back;
 * a GLIMPSE fetch reads it through a socketpair, poll by poll, as the daemon would. Every message
 * handed on must lie inside what was sent, and the fetch must end in a defined state.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "glimpse.h"
#include "glimpse_session.h"
#include "soupbin_client.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct consumer {
    uint32_t calls;
    uint8_t push_back_every; /* 0: never */
    uint64_t checksum;
};

static int on_message(void *ctx, const uint8_t *msg, uint16_t len)
{
    struct consumer *c = ctx;
    if (len == 0 || len > TP_GLIMPSE_MAX_MESSAGE)
        abort(); /* the fetch promised to check this */
    if (c->push_back_every != 0 && ++c->calls % c->push_back_every == 0)
        return -EAGAIN;
    for (uint16_t i = 0; i < len; i++)
        c->checksum += msg[i]; /* reads every byte: ASan checks they are inside */
    return 0;
}

static void on_begin(void *ctx, uint32_t attempt)
{
    (void)ctx;
    (void)attempt;
}

static void on_end(void *ctx, uint64_t next_seq)
{
    (void)ctx;
    if (next_seq == 0)
        abort();
}

static void on_failed(void *ctx, enum tp_soup_fail why, bool final)
{
    (void)ctx;
    (void) final;
    if (why == TP_SOUP_FAIL_NONE)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static struct tp_glimpse_session g;
    struct consumer cons = {.push_back_every = (uint8_t)(data[0] >> 5)};
    size_t chunk = (size_t)(data[0] & 0x1f) * 8 + 1;
    data++;
    size--;
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 0;
    struct tp_glimpse_params gp = {.attempts = 1, .snapshot_timeout_ms = 0};
    gp.soup.login_timeout_ms = 1000000;
    gp.soup.idle_timeout_ms = 1000000;
    gp.soup.heartbeat_ms = 1000000;
    strcpy(gp.soup.username, "fuzz");
    struct tp_glimpse_sink sink = {
        .ctx = &cons, .begin = on_begin, .message = on_message, .end = on_end, .failed = on_failed};
    tp_glimpse_init(&g, &gp, &sink);
    if (tp_glimpse_start_on(&g, sv[0], 0) != 0)
        abort();
    uint64_t now = 1;
    size_t at = 0;
    int rounds = 0;
    while (tp_glimpse_poll(&g, now++) == TP_GLIMPSE_RUNNING && rounds++ < 100000) {
        if (at < size) {
            size_t n = size - at < chunk ? size - at : chunk;
            ssize_t w = write(sv[1], data + at, n);
            if (w > 0)
                at += (size_t)w;
        } else if (at == size) {
            shutdown(sv[1], SHUT_WR); /* all sent: the server closes */
            at++;
        }
    }
    tp_glimpse_cancel(&g);
    close(sv[1]);
    return 0;
}
