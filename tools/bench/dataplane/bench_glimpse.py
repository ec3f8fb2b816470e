#!/usr/bin/env python3
"""Benchmark: ITCH late join through a GLIMPSE snapshot of about a million live orders.

usage: bench_glimpse.py TICKPLANE SIM [RUNS]

tickplane-sim builds a session of 4000 symbols whose books hold 125 orders a side (about 1 M live
orders) and serves its GLIMPSE snapshot on loopback; the capture the daemon replays (net_pcap)
starts at that point (--late-join-a). Measured per run, from the daemon's start:
  start_to_healthy_s   until channel=itch.snapshot.completed (the books healthy again), polled
                       on the control socket every 5 ms;
  longest_step_us      the data lcore's longest single step on the snapshot (one chunk of
                       about 400 messages, or one slice of 512 kept messages) by the TSC: its
                       longest stall in receiving while it applies the snapshot, preemption by
                       a shared host included;
  longest_step_cpu_us  the same step in the lcore thread's CPU time: what the code costs;
and the snapshot's size. Prints one JSON line per run and a summary line (medians).
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

TICKPLANE, SIM = (os.path.abspath(p) for p in sys.argv[1:3])
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
SYMBOLS, START_ORDERS, MESSAGES = 4000, 125, 1050000


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def control(path, request):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    try:
        s.connect(path)
        f = s.makefile("rw")
        f.write(json.dumps(request) + "\n")
        f.flush()
        return json.loads(f.readline())
    finally:
        s.close()


def sim_cmd(workdir, extra):
    return [SIM, "itch", "--seed", "3", "--symbols", str(SYMBOLS), "--start-orders",
            str(START_ORDERS), "--messages", str(MESSAGES), "--packet-bytes", "1400",
            "--no-line-b", "--pcap", os.path.join(workdir, "feed.pcap"),
            "--report", os.path.join(workdir, "report.json")] + extra


def one_run(workdir, port, join_packet, joined):
    """The snapshot is the model where line A is first seen: the whole capture is live traffic
    after it."""
    sim = subprocess.Popen(
        sim_cmd(workdir, ["--late-join-a", str(join_packet), "--glimpse",
                          "127.0.0.1:%d" % port, "--glimpse-at", str(joined),
                          "--glimpse-serve-ms", "120000"]),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in sim.stderr:
        if "serving" in line:
            break
    with open(os.path.join(workdir, "report.json")) as f:
        glimpse = json.load(f)["glimpse"]
    cred = os.path.join(workdir, "cred")
    with open(cred, "w") as f:
        f.write("bench:pw\n")
    os.chmod(cred, 0o600)
    sock = os.path.join(workdir, "control.sock")
    cfg = {
        "name": "tpglb%d" % os.getpid(),
        "eal": {"lcores": "0-1", "main_lcore": 0, "memory_mb": 1024, "no_huge": True,
                "no_pci": True, "no_shconf": True, "log_level": "error"},
        "ports": [{"name": "cap", "pcap": os.path.join(workdir, "feed.pcap"),
                   "mbuf_pool_size": 16383}],
        "lcores": [{"lcore": 1, "poll": [{"port": "cap"}], "channels": ["itch"]}],
        "channels": [{"name": "itch", "protocol": "itch",
                      "lines": {"a": {"group": "233.54.12.111", "port": 26477}},
                      "recovery": {"snapshot": {"host": "127.0.0.1", "port": port,
                                                "credentials": cred,
                                                "buffer_messages": 262144}}}],
        "instruments": {"capacity": 8192},
        "books": {"max_orders": 2097152, "levels_per_side": 256},
        "bus": {"ring_bytes": 67108864},
        "control": {"socket": sock},
    }
    with open(os.path.join(workdir, "config.json"), "w") as f:
        json.dump(cfg, f)
    t0 = time.monotonic()
    daemon = subprocess.Popen([TICKPLANE, "--config", os.path.join(workdir, "config.json"),
                               "--unlink-bus"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=workdir)
    healthy = None
    while time.monotonic() - t0 < 120 and daemon.poll() is None:
        try:
            stats = control(sock, {"cmd": "stats"})
        except OSError:
            stats = {}
        if stats.get("channel=itch.snapshot.completed", 0) >= 1:
            healthy = time.monotonic() - t0
            break
        time.sleep(0.005)
    daemon.send_signal(2)
    out, err = daemon.communicate(timeout=60)
    sim.kill()
    sim.wait()
    if healthy is None:
        fail("the books never became healthy: %s" % err[-2000:])
    summary = json.loads(out.strip().splitlines()[-1])["summary"]
    snap = summary["snapshots"]["itch"]
    loads = snap["loads"]
    if loads["holes"] or loads["kept_dropped"] or summary["channels"][0]["feed_errors"]:
        fail("the load was not clean: %s" % snap)
    return {"start_to_healthy_s": round(healthy, 3),
            "longest_step_us": round(loads["longest_step_us"], 1),
            "longest_step_cpu_us": round(loads["longest_step_cpu_us"], 1),
            "snapshot_messages": loads["messages"], "live_orders": glimpse["live_orders"],
            "kept": loads["kept"], "replayed": loads["replayed"],
            "books_live_orders": summary["lcores"][0]["books"]["live_orders"]}


def main():
    with tempfile.TemporaryDirectory(prefix="tp-bench-glimpse-", dir="/dev/shm") as workdir:
        subprocess.run(sim_cmd(workdir, []), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        with open(os.path.join(workdir, "report.json")) as f:
            packets = json.load(f)["mold"]["packets"]
        join_packet = packets - 500  # the capture: the last 500 packets (~20 k messages)
        subprocess.run(sim_cmd(workdir, ["--late-join-a", str(join_packet)]), check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(workdir, "report.json")) as f:
            joined = json.load(f)["lines"]["A"]["joined_at_seq"]
        port = free_port()
        runs = []
        for i in range(RUNS):
            r = one_run(workdir, port, join_packet, joined)
            r["run"] = i
            print(json.dumps(r))
            runs.append(r)
        print(json.dumps({
            "bench": "glimpse_late_join", "runs": RUNS, "live_orders": runs[0]["live_orders"],
            "snapshot_messages": runs[0]["snapshot_messages"],
            "start_to_healthy_s_median": statistics.median(r["start_to_healthy_s"] for r in runs),
            "longest_step_us_median": statistics.median(r["longest_step_us"] for r in runs),
            "longest_step_us_max": max(r["longest_step_us"] for r in runs),
            "longest_step_cpu_us_median": statistics.median(r["longest_step_cpu_us"] for r in runs),
            "longest_step_cpu_us_max": max(r["longest_step_cpu_us"] for r in runs)}))


if __name__ == "__main__":
    main()
