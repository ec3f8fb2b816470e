#!/usr/bin/env python3
"""read_events throughput: records of an event file per second into numpy, per topic selection.

usage: bench_read_events.py EVENTS_FILE [REPEAT [TABLE ...]]

Prints one JSON line per selection: the file's records, the rows made, the median of REPEAT
reads (the file in the page cache after the first), records/s of wall and of CPU time (this
process's, kernel included: the load of a shared machine stretches the wall time), the 1-minute
load average and the decoder that ran (libtickplane's tp_rows_read, the package's only path, and
the library's file).
The file's records are what a capture's replay published (tickplane-replay --events); every
selection reads all of them. TABLEs: read only those tables, each alone.
"""
import json
import os
import statistics
import sys
import time

import tickplane

SELECTIONS = [["trades"], ["orders"], ["depth"], ["top"], ["book"], ["status"], ["definitions"],
              ["orders", "depth", "trades"], None]


def main():
    path = sys.argv[1]
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    records = tickplane.header(path)["records"]
    tickplane.read_events(path, topics=["definitions"])  # the file into the page cache
    for topics in [[t] for t in sys.argv[3:]] or SELECTIONS:
        times, cpu, rows = [], [], 0
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            tables = tickplane.read_events(path, topics=topics)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
            rows = sum(len(a) for a in tables.values())
            del tables
        s = statistics.median(times)
        print(json.dumps({"topics": topics or "all", "records": records, "rows": rows,
                          "seconds_median": round(s, 4), "seconds_min": round(min(times), 4),
                          "records_per_s": round(records / s),
                          "cpu_seconds_median": round(statistics.median(cpu), 4),
                          "records_per_cpu_s": round(records / statistics.median(cpu)),
                          "load_1m": os.getloadavg()[0],
                          "decoder": "libtickplane tp_rows_read " + tickplane._lib.lib._name}))


if __name__ == "__main__":
    main()
