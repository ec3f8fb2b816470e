/* A capture into an event file (see export_capture.h). */
#include "export_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "replay_events.h"
#include "replay_input.h"
#include "tickplane/event_file.h"

int export_capture(const char *path, FILE *out, char *err, size_t err_len)
{
    struct replay r;
    struct replay_params p = {.instruments = 8192, .orders = 2u << 20, .levels = 256};
    struct tp_instrument_filter filter;
    struct replay_events *ev;
    struct stat st;
    const uint8_t *data = NULL;
    int fd = open(path, O_RDONLY), rc;

    if (fd < 0 || fstat(fd, &st) != 0) {
        snprintf(err, err_len, "%s", strerror(errno));
        return -1;
    }
    if (st.st_size)
        data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (data == MAP_FAILED) {
        snprintf(err, err_len, "mmap: %s", strerror(errno));
        return -1;
    }
    tp_instrument_filter_init(&filter);
    p.filter = &filter;
    rc = replay_open(&r, &p, data, (size_t)st.st_size);
    if (rc != 0) {
        snprintf(err, err_len, "%s", replay_error(&r, rc));
        replay_close(&r);
        if (data)
            munmap((void *)data, (size_t)st.st_size);
        return -1;
    }
    struct replay_events_params ep = {
        .file = out,
        .instruments = p.instruments,
        .books = r.books,
        .registry = r.registry,
        .file_flags = r.format == REPLAY_FORMAT_PCAP ? TP_EVENT_FILE_F_RECV_NS : 0};
    rc = replay_events_open(&ev, &ep, err, err_len);
    if (rc == 0) {
        struct tp_feed_sink sink = replay_events_sink(ev);
        replay_set_output(&r, &sink);
        rc = replay_run(&r);
        if (rc != 0)
            snprintf(err, err_len, "%s", replay_error(&r, rc));
        char close_err[256];
        if (replay_events_close(ev, NULL, close_err, sizeof(close_err)) != 0 && rc == 0) {
            snprintf(err, err_len, "%s", close_err);
            rc = -EIO;
        }
    }
    replay_close(&r);
    if (data)
        munmap((void *)data, (size_t)st.st_size);
    return rc == 0 ? 0 : -1;
}
