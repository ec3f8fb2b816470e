/*
 * A capture given to tickplane-export: replayed (tickplane-replay's code: the data plane's feeds,
 * books and publisher) into an event file in memory, which the export then reads like any other.
 * Kept apart from the export's views: the data plane's headers and the client's overlap.
 */
#ifndef TP_EXPORT_CAPTURE_H
#define TP_EXPORT_CAPTURE_H

#include <stdio.h>

/* Replays capture `path` (pcap, pcapng or BinaryFILE, as tickplane-replay reads them) into `out`
 * as an event file. 0, or -1 with a reason in err. */
int export_capture(const char *path, FILE *out, char *err, size_t err_len);

#endif /* TP_EXPORT_CAPTURE_H */
