/* Test helper: see channel_bus.h. */
#include "channel_bus.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "bus/bus.h"
#include "tpout_sbe.h"

static struct tp_bus_writer writer;
static struct tp_ring_reader reader;
static uint8_t batch[1 << 16];

int test_bus_writer_open(struct tp_bus_writer *w, const char *instance)
{
    char err[256];
    struct tp_bus_params bp = {.instance = instance,
                               .ring_bytes = 1 << 20,
                               .max_record = 8192,
                               .instruments = 16,
                               .depth = 4,
                               .counters = 16,
                               .mode = 0600,
                               .gid = (gid_t)-1};
    return tp_bus_writer_open(w, &bp, err, sizeof(err)) == 0 ? 0 : -1;
}

/*
 * Removes the names of the bus segments of `instance` (/dev/shm/tickplane.<instance>.*) once they
 * are mapped: the mappings stay, so the test goes on, and a crash (abort skips every exit
 * handler) leaves nothing behind in /dev/shm. 0, or -1 if a name could not be removed.
 */
static int unlink_segments(const char *instance)
{
    char prefix[96], path[512];
    snprintf(prefix, sizeof(prefix), "tickplane.%s.", instance);
    DIR *dir = opendir("/dev/shm");
    if (dir == NULL)
        return -1;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
        rc |= unlink(path);
    }
    closedir(dir);
    return rc == 0 ? 0 : -1;
}

struct tp_bus_writer *test_bus_open(const char *instance)
{
    if (test_bus_writer_open(&writer, instance) != 0 || unlink_segments(instance) != 0 ||
        tp_ring_reader_init(&reader, writer.ring.shared, batch, sizeof(batch)) != 0)
        return NULL;
    return &writer;
}

void test_bus_close(struct tp_bus_writer *bus)
{
    tp_bus_writer_close(bus, 1);
}

int test_bus_next(struct test_record *out)
{
    const struct tp_ring_record *rec;
    uint64_t lost;
    if (tp_ring_read(&reader, &rec, &lost) != TP_RING_RECORD)
        return 0;
    const uint8_t *msg = tp_ring_payload(rec);
    const uint8_t *b = msg + TPOUT_MESSAGE_HEADER_ENCODED_LENGTH;
    memset(out, 0, sizeof(*out));
    uint16_t template_id = tpout_message_header_template_id(msg);
    out->kind = template_id == TPOUT_ORDER_EVENT_TEMPLATE_ID     ? TEST_REC_ORDER
                : template_id == TPOUT_CHANNEL_EVENT_TEMPLATE_ID ? TEST_REC_CHANNEL_EVENT
                                                                 : TEST_REC_OTHER;
    out->instrument = rec->instrument;
    out->venue_seq = tpout_load_u64(b + TPOUT_BOOK_UPDATE_VENUE_SEQ_OFFSET);
    if (out->kind == TEST_REC_ORDER)
        out->flags = b[TPOUT_ORDER_EVENT_FLAGS_OFFSET];
    if (out->kind == TEST_REC_CHANNEL_EVENT)
        out->channel_id = tpout_load_u32(b + TPOUT_CHANNEL_EVENT_CHANNEL_ID_OFFSET);
    return 1;
}

int test_bus_state_bids(uint32_t id, struct test_level *levels, unsigned max)
{
    static struct tp_instrument_state st;
    if (tp_state_read(writer.state, id, &st, 1000) != 0)
        return -1;
    unsigned n = st.book.bid_levels < max ? st.book.bid_levels : max;
    for (unsigned i = 0; i < n; i++)
        levels[i] = (struct test_level){
            .price = st.bids[i].price, .qty = st.bids[i].qty, .orders = st.bids[i].orders};
    return (int)n;
}
