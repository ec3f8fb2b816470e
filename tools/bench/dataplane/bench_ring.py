#!/usr/bin/env python3
"""The data plane's speed benchmark: the real daemon, one data lcore, traffic preloaded in a net_ring
port ("pcap" + "preload": true: every frame in an mbuf before the lcore starts, so no capture PMD
reads or copies on the data lcore), a consumer attached to the bus before the first packet.

For each capture shape (preload_runs.py: ITCH and MDP3, main shape and peak shape of full
packets), each of its RUNS rounds runs the daemon with a consumer, the daemon alone (no reader
on the bus) and bench_pipeline on the same capture (the same channel code fed from memory,
without PMD, mbufs or the lcore loop; software UDP checksums, as net_ring gives no offload), the
data lcore and bench_pipeline on CPU 1, the consumer on CPU 0. The daemon alone against the daemon with a
consumer is what a busy-polling reader costs the data lcore, measured in one round.

Zero loss is checked on every daemon run: the consumer's books equal the simulator's truth with
no event lost (runs with a consumer), the daemon received every frame of the capture, and its
channel had no gap, skipped nothing and applied as many messages as bench_pipeline. A failed
check ends the benchmark with exit 1.

MDP3 messages are SBE messages, in the daemon's summary as in bench_pipeline.

Prints one JSON line per round ({"shape", "run", "daemon": {...}, "daemon_alone": {...},
"pipeline": {...}}) and one per shape with the medians ({"shape", "median": {...}}): daemon
busy-span messages/s (first to last feed burst: messages_per_s over the wall clock,
messages_per_cpu_s over the data lcore's CPU time, which leaves out what a shared host's
scheduler gave other tasks), rx_burst -> publish histogram (daemon), rx_burst -> consumer
callback histogram (p50, p99, p99.9, max in ns), bench_pipeline's messages/s (wall and CPU), and
the ratios (the daemon with a consumer over the pipeline and over the daemon alone).

usage: bench_ring.py TICKPLANE SIM CONSUMER BENCH_PIPELINE [MESSAGES] [RUNS] [SHAPES]
       (defaults 1000000, 5, itch,itch-peak,mdp3,mdp3-peak)
"""
import json
import statistics
import sys

from preload_runs import PERCENTILES, SHAPES, Shape, daemon_run, fail, pipeline_run

TICKPLANE, SIM, CONSUMER, PIPELINE = sys.argv[1:5]
MESSAGES = int(sys.argv[5]) if len(sys.argv) > 5 else 1000000
RUNS = int(sys.argv[6]) if len(sys.argv) > 6 else 5
SHAPE_NAMES = (sys.argv[7] if len(sys.argv) > 7 else ",".join(SHAPES)).split(",")


def shape_runs(name):
    shape = Shape(SIM, name, MESSAGES)
    try:
        runs = []
        for r in range(RUNS):
            d = daemon_run(TICKPLANE, shape, CONSUMER)
            alone = daemon_run(TICKPLANE, shape)
            p = pipeline_run(PIPELINE, shape)
            if d["messages"] != p["messages"] or alone["messages"] != p["messages"]:
                fail("%s: the daemon applied %d messages (%d alone), bench_pipeline %d" %
                     (name, d["messages"], alone["messages"], p["messages"]))
            runs.append((d, alone, p))
            print(json.dumps({"shape": name, "run": r, "frames": shape.frames, "daemon": d,
                              "daemon_alone": alone, "pipeline": p}), flush=True)
        med = lambda xs: statistics.median(xs)
        median = {"runs": RUNS, "frames": shape.frames, "messages": runs[0][0]["messages"]}
        for key in ("messages_per_s", "messages_per_cpu_s"):
            dm = med([d[key] for d, _, _ in runs])
            am = med([a[key] for _, a, _ in runs])
            pm = med([p[key] for _, _, p in runs])
            rate = key.replace("messages_", "")
            median.update({"daemon_" + key: dm, "daemon_alone_" + key: am, "pipeline_" + key: pm,
                           "daemon_over_pipeline_" + rate: round(dm / pm, 3),
                           # paired within rounds: the spread between rounds cancels
                           "daemon_over_daemon_alone_" + rate:
                           round(med([d[key] / a[key] for d, a, _ in runs]), 3)})
        for key in ("rx_to_publish_ns", "rx_burst_to_consumer_ns"):
            median["daemon_" + key] = {k: med([d[key][k] for d, _, _ in runs])
                                       for k in PERCENTILES}
        median["pipeline_rx_to_publish_ns"] = {
            k: med([p["rx_to_publish_ns"][k] for _, _, p in runs]) for k in PERCENTILES}
        print(json.dumps({"shape": name, "median": median}), flush=True)
    finally:
        shape.remove()


for s in SHAPE_NAMES:
    shape_runs(s)
