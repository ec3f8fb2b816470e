#!/usr/bin/env python3
"""Two builds compared on a shared, noisy host: the same run of each, alternated within every
round (odd rounds OLD first), and the paired ratio NEW/OLD per round. On a shared VM the
daemon's rate on one capture moves 1.5x between spells of the host's memory load while the two
runs of a round share the spell, so the median of the paired ratios is what compares two builds;
two medians taken apart do not (docs/BENCHMARKS.md).

  daemon    the daemon alone (no reader) on the shape's capture preloaded in a net_ring port,
            the data lcore's messages per CPU second of its busy span; every run passes
            bench_ring.py's zero-loss checks, and both builds must apply as many messages
  consumer  the same with CONSUMER (tests/integration/bus_consumer) attached before the first
            packet and its books checked against the truth, as in bench_ring.py
  pipeline  bench_pipeline on the same capture (CPU messages/s of one pass)

usage: bench_pair.py daemon|consumer|pipeline OLD NEW SIM [SHAPES] [ROUNDS] [MESSAGES] [CONSUMER]
       OLD, NEW: two tickplane (daemon, consumer) or bench_pipeline (pipeline) binaries; SIM:
       tickplane-sim (defaults: mdp3-peak,itch-peak, 10 rounds, 1000000 messages)

Prints one JSON line per round ({"shape", "round", "old", "new": messages per CPU second}) and
one per shape: {"shape", "kind", "rounds", "old_median", "new_median", "new_over_old" (the
median of the per-round ratios), "new_faster" (rounds)}.
"""
import json
import statistics
import sys

from preload_runs import Shape, daemon_run, fail, pipeline_run

KIND = sys.argv[1] if len(sys.argv) > 1 else ""
if len(sys.argv) < 5 or KIND not in ("daemon", "consumer", "pipeline") or \
        (KIND == "consumer" and len(sys.argv) < 9):
    fail(__doc__.split("usage: ")[1].split("\n\n")[0])
OLD, NEW, SIM = sys.argv[2:5]
SHAPE_NAMES = (sys.argv[5] if len(sys.argv) > 5 else "mdp3-peak,itch-peak").split(",")
ROUNDS = int(sys.argv[6]) if len(sys.argv) > 6 else 10
MESSAGES = int(sys.argv[7]) if len(sys.argv) > 7 else 1000000
CONSUMER = sys.argv[8] if KIND == "consumer" else None


def one(binary, shape):
    run = pipeline_run(binary, shape) if KIND == "pipeline" else daemon_run(binary, shape, CONSUMER)
    return run["messages"], run["messages_per_cpu_s"]


def pair(name):
    shape = Shape(SIM, name, MESSAGES)
    try:
        rows = []
        for r in range(ROUNDS):
            order = (OLD, NEW) if r % 2 == 0 else (NEW, OLD)
            got = {binary: one(binary, shape) for binary in order}
            if got[OLD][0] != got[NEW][0]:
                fail("%s: the old build applied %d messages, the new %d" %
                     (name, got[OLD][0], got[NEW][0]))
            rows.append((got[OLD][1], got[NEW][1]))
            print(json.dumps({"shape": name, "round": r, "old": got[OLD][1], "new": got[NEW][1]}),
                  flush=True)
        ratios = [new / old for old, new in rows]
        print(json.dumps({"shape": name, "kind": KIND, "rounds": ROUNDS,
                          "old_median": statistics.median(old for old, _ in rows),
                          "new_median": statistics.median(new for _, new in rows),
                          "new_over_old": round(statistics.median(ratios), 3),
                          "new_faster": sum(x > 1 for x in ratios)}), flush=True)
    finally:
        shape.remove()


for s in SHAPE_NAMES:
    pair(s)
