#!/usr/bin/env python3
"""The issue's speed benchmark: the real daemon, one data lcore, traffic preloaded in a net_ring
port ("pcap" + "preload": true: every frame in an mbuf before the lcore starts, so no capture PMD
reads or copies on the data lcore), a consumer attached to the bus before the first packet.

For each capture shape (tickplane-sim, seed 1, 200 symbols, line A only):
  itch       ITCH main shape (--messages M)
  itch-peak  ITCH peak shape (--packet-bytes 1400: full packets)
  mdp3       MDP3 main shape (incremental, snapshot and definition lines)
  mdp3-peak  MDP3 peak shape (--packet-bytes 1400)
each of its RUNS rounds runs the daemon with a consumer, the daemon alone (no reader on the bus)
and bench_pipeline on the same capture (the same channel code fed from memory, without PMD,
mbufs or the lcore loop; software UDP checksums, as net_ring gives no offload), the data lcore
and bench_pipeline on CPU 1, the consumer on CPU 0. The daemon alone against the daemon with a
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
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile

TICKPLANE, SIM, CONSUMER, PIPELINE = sys.argv[1:5]
MESSAGES = int(sys.argv[5]) if len(sys.argv) > 5 else 1000000
RUNS = int(sys.argv[6]) if len(sys.argv) > 6 else 5
SHAPES = (sys.argv[7] if len(sys.argv) > 7 else "itch,itch-peak,mdp3,mdp3-peak").split(",")

CHANNELS = {
    "mdp3": {"name": "cme", "protocol": "mdp3", "id": 310,
             "lines": {"a": {"group": "224.0.25.1", "port": 17901},
                       "b": {"group": "224.0.25.9", "port": 18901}},
             "recovery": {"snapshot": {"a": {"group": "224.0.25.126", "port": 19901}},
                          "definitions": {"a": {"group": "224.0.25.126", "port": 16901}}}},
    "itch": {"name": "itch", "protocol": "itch",
             "lines": {"a": {"group": "233.54.12.111", "port": 26477},
                       "b": {"group": "233.49.196.111", "port": 26477}}},
}
PERCENTILES = ("p50", "p99", "p99.9", "max")


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def capture_frames(path):
    with open(path, "rb") as f:
        f.read(24)
        frames = 0
        while True:
            header = f.read(16)
            if len(header) < 16:
                return frames
            f.seek(struct.unpack("<I", header[8:12])[0], os.SEEK_CUR)
            frames += 1


def config(instance, protocol, memory_mb):
    return {
        "name": instance,
        "eal": {"lcores": "0-1", "main_lcore": 0, "memory_mb": memory_mb, "no_huge": True,
                "no_pci": True, "no_shconf": True, "log_level": "error"},
        "ports": [{"name": "cap", "pcap": "feed.pcap", "preload": True}],
        "lcores": [{"lcore": 1, "poll": [{"port": "cap"}], "channels": [CHANNELS[protocol]["name"]]}],
        "channels": [CHANNELS[protocol]],
        "instruments": {"capacity": 1024},
        "books": {"max_orders": 1048576, "levels_per_side": 10},
        # A ring larger than everything a run publishes: a consumer the host deschedules for a
        # while is never lapped (it would lose events, which is not the daemon's loss).
        "bus": {"ring_bytes": 1 << 29},
        "control": {"socket": "control.sock"},
    }


def histogram(h):
    return {k: h[k] for k in PERCENTILES}


def daemon_run(work, instance, frames, with_consumer):
    """One daemon run, with a consumer or alone; returns its figures after the zero-loss checks."""
    ready, until = os.path.join(work, "ready"), os.path.join(work, "until")
    for f in (ready, until):
        if os.path.exists(f):
            os.unlink(f)
    command = [TICKPLANE, "--config", os.path.join(work, "config.json"), "--idle-exit-ms", "3000",
               "--unlink-bus"]
    consumer = None
    if with_consumer:
        # The consumer compares once the daemon has exited (--until): on a loaded host a quiet
        # spell mid-run would otherwise end its run early and fail the comparison.
        consumer = subprocess.Popen(
            ["taskset", "-c", "0", CONSUMER, "--instance", instance, "--truth",
             os.path.join(work, "truth.json"), "--ready", ready, "--until", until, "--latency",
             "--idle-ms", "1000", "--timeout-s", "300"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        command += ["--start-after", ready]
    daemon = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            timeout=300)
    open(until, "w").close()
    if daemon.returncode != 0:
        if consumer:
            consumer.kill()
        fail("daemon exit %d: %s" % (daemon.returncode, daemon.stderr[-2000:]))
    summary = json.loads(daemon.stdout.strip().splitlines()[-1])["summary"]
    lost = 0
    figures = {}
    if consumer:
        out, err = consumer.communicate(timeout=200)
        if consumer.returncode != 0:
            fail("consumer: books differ from the truth: %s %s" % (out, err[-2000:]))
        lines = out.strip().splitlines()
        verdict = json.loads(lines[0])
        lost = verdict["lost"]
        figures["rx_burst_to_consumer_ns"] = histogram(
            json.loads(lines[1])["rx_burst_to_consumer_ns"])
    ch = summary["channels"][0]
    if lost != 0 or summary["rx_packets"] != frames or ch["gaps"] != 0 or \
            ch["skipped_msgs"] != 0 or ch["malformed"] != 0:
        fail("loss: consumer lost %d, daemon rx_packets %d of %d frames, gaps %d, skipped %d" %
             (lost, summary["rx_packets"], frames, ch["gaps"], ch["skipped_msgs"]))
    figures.update({"messages": summary["messages"], "busy_s": summary["busy_s"],
                    "messages_per_s": summary["messages_per_s"],
                    "busy_cpu_s": summary["busy_cpu_s"],
                    "messages_per_cpu_s": summary["messages_per_cpu_s"],
                    "rx_to_publish_ns": histogram(summary["rx_to_publish_ns"])})
    return figures


def pipeline_run(work, protocol):
    out = subprocess.run(["taskset", "-c", "1", PIPELINE, "--pcap", os.path.join(work, "feed.pcap"),
                          "--protocol", protocol, "--runs", "1"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    run = json.loads(out.strip().splitlines()[0])
    return {"messages": run["messages"], "messages_per_s": run["messages_per_s"],
            "messages_per_cpu_s": round(1e9 / run["cpu_ns_per_message"]),
            "rx_to_publish_ns": histogram(run["rx_to_publish_ns"])}


def shape_runs(shape):
    protocol = shape.split("-")[0]
    work = tempfile.mkdtemp(prefix="tpring-", dir="/dev/shm")
    instance = "tpring%d%s" % (os.getpid(), os.urandom(2).hex())
    try:
        extra = ["--packet-bytes", "1400"] if shape.endswith("-peak") else []
        subprocess.run([SIM, protocol, "--seed", "1", "--symbols", "200", "--messages",
                        str(MESSAGES), "--no-line-b", "--pcap", os.path.join(work, "feed.pcap"),
                        "--truth", os.path.join(work, "truth.json")] + extra,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        frames = capture_frames(os.path.join(work, "feed.pcap"))
        # Room for the largest shape's preloaded capture (MDP3 main: ~700 MiB of mbufs).
        with open(os.path.join(work, "config.json"), "w") as f:
            json.dump(config(instance, protocol, 4096), f)
        runs = []
        for r in range(RUNS):
            d = daemon_run(work, instance, frames, True)
            alone = daemon_run(work, instance, frames, False)
            p = pipeline_run(work, protocol)
            if d["messages"] != p["messages"] or alone["messages"] != p["messages"]:
                fail("%s: the daemon applied %d messages (%d alone), bench_pipeline %d" %
                     (shape, d["messages"], alone["messages"], p["messages"]))
            runs.append((d, alone, p))
            print(json.dumps({"shape": shape, "run": r, "frames": frames, "daemon": d,
                              "daemon_alone": alone, "pipeline": p}), flush=True)
        med = lambda xs: statistics.median(xs)
        median = {"runs": RUNS, "frames": frames, "messages": runs[0][0]["messages"]}
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
        print(json.dumps({"shape": shape, "median": median}), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        for f in os.listdir("/dev/shm"):
            if f.startswith("tickplane.%s." % instance):
                os.unlink(os.path.join("/dev/shm", f))


for s in SHAPES:
    shape_runs(s)
