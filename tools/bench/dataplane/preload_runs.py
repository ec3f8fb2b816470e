"""Runs of the real daemon on a preloaded net_ring port and of bench_pipeline on the same capture,
with the zero-loss checks: what bench_ring.py (the data plane's benchmark) and bench_pair.py (two
builds alternated) share.

A shape is a simulator capture (seed 1, 200 symbols, line A only):
  itch       ITCH main shape
  itch-peak  ITCH peak shape (--packet-bytes 1400: full packets)
  mdp3       MDP3 main shape (incremental, snapshot and definition lines)
  mdp3-peak  MDP3 peak shape (--packet-bytes 1400)
make_shape() writes it, its truth and the daemon's config into a work directory under /dev/shm.
The data lcore and bench_pipeline run on CPU 1, a consumer on CPU 0.
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

SHAPES = ("itch", "itch-peak", "mdp3", "mdp3-peak")
PERCENTILES = ("p50", "p99", "p99.9", "max")

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


class Shape:
    """A shape's capture, truth and config in a fresh work directory; remove() cleans up."""

    def __init__(self, sim, shape, messages):
        if shape not in SHAPES:
            fail("unknown shape %s (one of %s)" % (shape, ",".join(SHAPES)))
        self.name = shape
        self.protocol = shape.split("-")[0]
        self.work = tempfile.mkdtemp(prefix="tpring-", dir="/dev/shm")
        self.instance = "tpring%d%s" % (os.getpid(), os.urandom(2).hex())
        extra = ["--packet-bytes", "1400"] if shape.endswith("-peak") else []
        subprocess.run([sim, self.protocol, "--seed", "1", "--symbols", "200", "--messages",
                        str(messages), "--no-line-b", "--pcap", self.path("feed.pcap"),
                        "--truth", self.path("truth.json")] + extra,
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.frames = capture_frames(self.path("feed.pcap"))
        # Room for the largest shape's preloaded capture (MDP3 main: ~700 MiB of mbufs).
        with open(self.path("config.json"), "w") as f:
            json.dump(config(self.instance, self.protocol, 4096), f)

    def path(self, name):
        return os.path.join(self.work, name)

    def remove(self):
        shutil.rmtree(self.work, ignore_errors=True)
        for f in os.listdir("/dev/shm"):
            if f.startswith("tickplane.%s." % self.instance):
                os.unlink(os.path.join("/dev/shm", f))


def histogram(h):
    return {k: h[k] for k in PERCENTILES}


def daemon_run(tickplane, shape, consumer=None):
    """One daemon run, with the consumer binary attached before the first packet or alone;
    returns its figures after the zero-loss checks (a failed one ends the program)."""
    ready, until = shape.path("ready"), shape.path("until")
    for f in (ready, until):
        if os.path.exists(f):
            os.unlink(f)
    command = [tickplane, "--config", shape.path("config.json"), "--idle-exit-ms", "3000",
               "--unlink-bus"]
    reader = None
    if consumer:
        # The consumer compares once the daemon has exited (--until): on a loaded host a quiet
        # spell mid-run would otherwise end its run early and fail the comparison.
        reader = subprocess.Popen(
            ["taskset", "-c", "0", consumer, "--instance", shape.instance, "--truth",
             shape.path("truth.json"), "--ready", ready, "--until", until, "--latency",
             "--idle-ms", "1000", "--timeout-s", "300"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        command += ["--start-after", ready]
    daemon = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            timeout=300)
    open(until, "w").close()
    if daemon.returncode != 0:
        if reader:
            reader.kill()
        fail("daemon exit %d: %s" % (daemon.returncode, daemon.stderr[-2000:]))
    summary = json.loads(daemon.stdout.strip().splitlines()[-1])["summary"]
    lost = 0
    figures = {}
    if reader:
        out, err = reader.communicate(timeout=200)
        if reader.returncode != 0:
            fail("consumer: books differ from the truth: %s %s" % (out, err[-2000:]))
        lines = out.strip().splitlines()
        verdict = json.loads(lines[0])
        lost = verdict["lost"]
        figures["rx_burst_to_consumer_ns"] = histogram(
            json.loads(lines[1])["rx_burst_to_consumer_ns"])
    ch = summary["channels"][0]
    if lost != 0 or summary["rx_packets"] != shape.frames or ch["gaps"] != 0 or \
            ch["skipped_msgs"] != 0 or ch["malformed"] != 0:
        fail("loss: consumer lost %d, daemon rx_packets %d of %d frames, gaps %d, skipped %d" %
             (lost, summary["rx_packets"], shape.frames, ch["gaps"], ch["skipped_msgs"]))
    figures.update({"messages": summary["messages"], "busy_s": summary["busy_s"],
                    "messages_per_s": summary["messages_per_s"],
                    "busy_cpu_s": summary["busy_cpu_s"],
                    "messages_per_cpu_s": summary["messages_per_cpu_s"],
                    "rx_to_publish_ns": histogram(summary["rx_to_publish_ns"])})
    return figures


def pipeline_run(pipeline, shape):
    """One bench_pipeline run on the shape's capture: software UDP checksums, as the daemon on
    net_ring (which gives no offload)."""
    out = subprocess.run(["taskset", "-c", "1", pipeline, "--pcap", shape.path("feed.pcap"),
                          "--protocol", shape.protocol, "--runs", "1"],
                         stdout=subprocess.PIPE, text=True, check=True).stdout
    run = json.loads(out.strip().splitlines()[0])
    return {"messages": run["messages"], "messages_per_s": run["messages_per_s"],
            "messages_per_cpu_s": round(1e9 / run["cpu_ns_per_message"]),
            "rx_to_publish_ns": histogram(run["rx_to_publish_ns"])}
