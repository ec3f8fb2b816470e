/*
 * tickplane event files: the records the data plane publishes on the bus, in a file.
 *
 * tickplane-replay --events writes one for a capture; a research tool reads it back with the
 * tpout SBE schema alone (codecs/schemas/tickplane-output.xml), or with this reader. Layout,
 * all integers little-endian (docs/EVENT_FILES.md is the full description):
 *
 *   header (TP_EVENT_FILE_HEADER_LEN bytes)
 *      0  char[8] magic "TPEVENTS"
 *      8  u16     format version (TP_EVENT_FILE_VERSION)
 *     10  u16     header length (a reader skips bytes it does not know)
 *     12  u16     tpout schema id (29808)
 *     14  u16     tpout schema version of the records (3)
 *     16  u32     flags (TP_EVENT_FILE_F_*)
 *     20  u32     record alignment (8)
 *     24  u64     records in the file, 0 when not known (a writer that could not seek back)
 *   records, each starting at a multiple of the alignment:
 *      0  u32     length of the SBE message that follows (its 8-byte header included)
 *      4  u16     topic tag, as on the bus (enum tp_topic; TP_RECORD_ORDER_DEPTH)
 *      6  u16     zero
 *      8  ...     one tpout SBE message, then zero padding to the alignment
 *
 * Receive time: every tpout message carries recvTsc. With TP_EVENT_FILE_F_RECV_NS the file's
 * recvTsc values are nanoseconds since the Unix epoch (the capture's timestamps), not TSC ticks.
 */
#ifndef TICKPLANE_EVENT_FILE_H
#define TICKPLANE_EVENT_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_EVENT_FILE_MAGIC       "TPEVENTS"
#define TP_EVENT_FILE_VERSION     1u
#define TP_EVENT_FILE_HEADER_LEN  32u
#define TP_EVENT_FILE_ALIGN       8u
#define TP_EVENT_FILE_RECORD_HDR  8u
#define TP_EVENT_FILE_F_RECV_NS   0x1u /* recvTsc holds ns since the Unix epoch */
#define TP_EVENT_FILE_SCHEMA_ID   29808u
#define TP_EVENT_FILE_MAX_MESSAGE 65535u /* largest SBE message a record holds */

struct tp_event_file_header {
    uint16_t version;
    uint16_t header_length;
    uint16_t schema_id;
    uint16_t schema_version;
    uint32_t flags;
    uint32_t align;
    uint64_t records;
};

/* One record of a file in memory: valid as long as the memory is. */
struct tp_event_file_record {
    uint64_t offset; /* of the record's length prefix in the file */
    uint16_t topic;
    uint32_t length; /* SBE message bytes */
    const uint8_t *message;
};

struct tp_event_file_reader {
    const uint8_t *data;
    size_t len;
    size_t offset; /* of the next record */
    struct tp_event_file_header header;
    uint64_t records; /* given so far */
};

/* Errors beyond errno values, from the reader. */
#define TP_EVENT_FILE_EMAGIC   (-2000) /* not an event file */
#define TP_EVENT_FILE_EVERSION (-2001) /* a format version or schema this reader does not know */
#define TP_EVENT_FILE_ECUT     (-2002) /* a record cut by the end of the file, or impossible */

/*
 * Checks the header of a file mapped at data (len bytes) and positions the reader at its first
 * record. 0 or an error above. Files of a later tpout schema version are read (SBE is
 * extensible: the reader takes the block lengths from each message); other schemas are refused.
 */
int tp_event_file_open(struct tp_event_file_reader *r, const void *data, size_t len);

/* The next record: 1 with *rec filled, 0 at the end, TP_EVENT_FILE_ECUT (then at every call). */
int tp_event_file_next(struct tp_event_file_reader *r, struct tp_event_file_record *rec);

/* A sentence for an error of the reader or writer ("not an event file (no TPEVENTS magic)"). */
const char *tp_event_file_strerror(int err);

/* Writer: records gathered in its own buffer, written to a stream the caller opened and closes
 * in large blocks (a record's three parts through stdio cost more than the encoding). Small
 * enough to stay in the core's L2 cache with what it copies from (1 MiB cost ~5 ns a record
 * more in tickplane-replay --events). */
#define TP_EVENT_FILE_WRITE_BUFFER (64u << 10)
struct tp_event_file_writer {
    FILE *file;
    uint8_t *buf; /* flushed past TP_EVENT_FILE_WRITE_BUFFER bytes; freed by the finish */
    size_t used;
    size_t last; /* where the last record written starts in buf (kept there until the finish) */
    uint64_t records;
    uint64_t bytes; /* written so far, header included */
    int error;      /* first write error (negative errno), then nothing more is written */
};

/* Writes the header (records 0 until tp_event_file_finish). 0 or a negative errno; either way
 * tp_event_file_finish after. */
int tp_event_file_writer_open(struct tp_event_file_writer *w, FILE *f, uint32_t flags);

/* One record. 0 or the writer's error (-EINVAL for a message over TP_EVENT_FILE_MAX_MESSAGE). */
int tp_event_file_write(struct tp_event_file_writer *w, uint16_t topic, const void *message,
                        uint32_t length);

/*
 * One record written in place (tickplane-replay --events encodes its records straight into the
 * buffer): room for a `length`-byte message of `topic`, where the caller writes it, then
 * tp_event_file_commit adds the record (after a claim that gave room, before any other call). A
 * claim not committed is not written (the next claim takes its place). NULL for a length
 * tp_event_file_write refuses, or after a write error (the writer's error).
 */
uint8_t *tp_event_file_claim(struct tp_event_file_writer *w, uint16_t topic, uint32_t length);
void tp_event_file_commit(struct tp_event_file_writer *w);

/*
 * The SBE message of the last record written, still in the writer's buffer (a flush keeps the
 * last record), so that its flags can still change (a selection that dropped its event's last
 * record marks the event's end on it); NULL before the first record.
 */
uint8_t *tp_event_file_last_message(struct tp_event_file_writer *w);

/* Writes what is buffered and, when the stream can seek, the record count into the header;
 * frees the buffer. 0 or the first error. */
int tp_event_file_finish(struct tp_event_file_writer *w);

#ifdef __cplusplus
}
#endif

#endif /* TICKPLANE_EVENT_FILE_H */
