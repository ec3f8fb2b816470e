/*
 * dump_itch.c - MoldUDP64 packets and BinaryFILEs of ITCH 5.0 messages -> JSON lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binaryfile.h"
#include "dump.h"
#include "itch50_json.h"
#include "moldudp64.h"

/* Prints the message's JSON after the caller's line prefix, or reports why it cannot. */
static void print_itch_message(struct dump_out *d, const struct dump_source *s, const uint8_t *msg,
                               uint16_t len, size_t offset)
{
    int n = tp_itch_print_json(d->json, d->json_cap, msg, len);
    if (n >= 0 && (size_t)n >= d->json_cap) {
        if (dump_json_reserve(d, (size_t)n) < 0) {
            dump_malformed(d, s, offset, "out of memory printing an ITCH message");
            return;
        }
        n = tp_itch_print_json(d->json, d->json_cap, msg, len);
    }
    if (n < 0) {
        if (len == 0)
            dump_malformed(d, s, offset, "empty ITCH message");
        else if (n == -ENOMSG)
            dump_malformed(d, s, offset, "unknown ITCH message type 0x%02x", msg[0]);
        else
            dump_malformed(d, s, offset, "ITCH '%c' message of %u bytes (expected %zu)", msg[0],
                           len, tp_itch_message_length(msg[0]));
    }
    fprintf(d->out, ",\"msg\":%s}\n", n < 0 ? "null" : d->json);
    if (n >= 0)
        d->messages++;
}

static void dump_itch_packet(struct dump_out *d, const struct dump_source *s,
                             const uint8_t *payload, size_t len)
{
    struct tp_mold_packet p;
    int kind = tp_mold_parse(&p, payload, len);
    if (kind < 0) {
        dump_malformed(d, s, s->payload_offset,
                       len < TP_MOLD_HEADER_LEN ? "MoldUDP64 packet of %zu bytes is too short"
                                                : "MoldUDP64 control packet with %zu bytes",
                       len);
        return;
    }
    if (kind != TP_MOLD_MESSAGES) {
        dump_line_start(d, s, &dump_venue_itch);
        fprintf(d->out, ",\"session\":");
        dump_json_string(d->out, p.session, TP_MOLD_SESSION_LEN);
        fprintf(d->out, ",\"seq\":%" PRIu64 ",\"mold\":\"%s\"}\n", p.sequence,
                kind == TP_MOLD_HEARTBEAT ? "heartbeat" : "end_of_session");
        return;
    }
    const uint8_t *msg;
    uint16_t mlen;
    int rc;
    while ((rc = tp_mold_next(&p, &msg, &mlen)) == 1) {
        size_t offset = s->payload_offset + (size_t)(msg - payload);
        dump_line_start(d, s, &dump_venue_itch);
        fprintf(d->out, ",\"session\":");
        dump_json_string(d->out, p.session, TP_MOLD_SESSION_LEN);
        fprintf(d->out, ",\"seq\":%" PRIu64 ",\"count\":%u,\"index\":%u", p.sequence + p.index - 1,
                p.count, p.index);
        print_itch_message(d, s, msg, mlen, offset);
    }
    if (rc < 0)
        dump_malformed(d, s, s->payload_offset + tp_mold_offset(&p),
                       "MoldUDP64 block %u of %u does not fit the packet (%zu bytes)", p.index + 1u,
                       p.count, len);
}

static int dump_binaryfile(struct dump_out *d, const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -errno;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int err = -errno;
        close(fd);
        return err;
    }
    size_t size = (size_t)st.st_size;
    const uint8_t *map = NULL;
    if (size > 0) {
        map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) {
            int err = -errno;
            close(fd);
            return err;
        }
        madvise((void *)map, size, MADV_SEQUENTIAL);
    }
    close(fd);

    struct tp_binfile_reader r;
    tp_binfile_reader_init(&r, map, size);
    struct dump_source s = {0};
    const uint8_t *msg;
    uint16_t mlen;
    int rc;
    uint64_t index = 0;
    for (;;) {
        size_t block = r.offset;
        if ((rc = tp_binfile_next(&r, &msg, &mlen)) != 1)
            break;
        s.payload_offset = block;
        dump_line_start(d, &s, &dump_venue_itch);
        fprintf(d->out, ",\"index\":%" PRIu64, ++index);
        print_itch_message(d, &s, msg, mlen, block + 2);
    }
    if (rc < 0)
        dump_malformed(d, &s, r.offset,
                       "BinaryFILE block runs past the end of the file (%zu bytes)", size);
    if (map != NULL)
        munmap((void *)map, size);
    return 0;
}

static const struct dump_venue_file binaryfile = {
    .flag = "binaryfile", .letter = 'b', .usage = "ITCH-BINARYFILE", .read = dump_binaryfile};

const struct dump_venue dump_venue_itch = {
    .name = "itch", .packet = dump_itch_packet, .file = &binaryfile};
