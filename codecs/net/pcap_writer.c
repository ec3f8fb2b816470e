/*
 * pcap_writer.c - classic pcap files, nanosecond timestamps, host byte order (as libpcap
 * writes them; readers detect the order from the magic number).
 */
#include "pcap_writer.h"

#include <errno.h>

#define PCAP_MAGIC_NS    0xa1b23c4du
#define PCAP_SNAPLEN     65535u
#define PCAP_LINKTYPE_EN 1u

struct pcap_file_header {
    uint32_t magic;
    uint16_t version_major;
    uint16_t version_minor;
    int32_t thiszone;
    uint32_t sigfigs;
    uint32_t snaplen;
    uint32_t linktype;
};

struct pcap_record_header {
    uint32_t ts_sec;
    uint32_t ts_nsec;
    uint32_t caplen;
    uint32_t len;
};

int tp_pcap_writer_open(struct tp_pcap_writer *w, const char *path)
{
    struct pcap_file_header h = {PCAP_MAGIC_NS, 2, 4, 0, 0, PCAP_SNAPLEN, PCAP_LINKTYPE_EN};
    w->file = fopen(path, "wb");
    if (w->file == NULL)
        return -errno;
    if (fwrite(&h, sizeof(h), 1, w->file) != 1) {
        int err = -errno;
        fclose(w->file);
        w->file = NULL;
        return err ? err : -EIO;
    }
    return 0;
}

int tp_pcap_writer_write(struct tp_pcap_writer *w, uint64_t ts_ns, const uint8_t *frame, size_t len)
{
    if (len > PCAP_SNAPLEN)
        return -EINVAL;
    struct pcap_record_header r = {(uint32_t)(ts_ns / 1000000000u), (uint32_t)(ts_ns % 1000000000u),
                                   (uint32_t)len, (uint32_t)len};
    if (fwrite(&r, sizeof(r), 1, w->file) != 1 || fwrite(frame, 1, len, w->file) != len)
        return errno ? -errno : -EIO;
    return 0;
}

int tp_pcap_writer_close(struct tp_pcap_writer *w)
{
    int rc = fclose(w->file) == 0 ? 0 : -errno;
    w->file = NULL;
    return rc;
}
