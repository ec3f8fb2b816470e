#!/usr/bin/env python3
"""A daemon killed outright (SIGKILL, as the OOM killer does) is not a live, quiet market.

usage: writer_killed.py TICKPLANE SIM LIBTICKPLANE_SO

The real daemon replays a small simulator ITCH capture on net_pcap, then idles (no traffic, still
alive). Strategies use libtickplane (through ctypes) with a heartbeat timeout of 500 ms
(TICKPLANE_HEARTBEAT_TIMEOUT_MS):
  - one in this PID namespace and one in a PID namespace of its own (unshare: the daemon's pid
    means nothing there) attach while the daemon runs; both see it alive (tp_check_heartbeat,
    tp_check_writer) for longer than the timeout, idle as it is, and its data lcore's dp.ticks
    counter grows meanwhile;
  - the daemon is killed with SIGKILL: its segments stay in /dev/shm, marked live; both strategies
    see tp_check_heartbeat and tp_check_writer fail with EOWNERDEAD within the timeout (plus a
    poll's slack), with the reason in tp_last_error;
  - a strategy started afterwards is refused by tp_attach with EOWNERDEAD and a reason.
"""
import ctypes
import errno
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import tpit
from tpit import fail, wait_for

TIMEOUT_MS = 500
SLACK_S = 0.3  # polling every 5 ms on a loaded machine


def attach(lib, instance):
    """(rc, client or None, err)."""
    client = ctypes.c_void_p()
    err = ctypes.create_string_buffer(256)
    rc = lib.tp_attach(ctypes.byref(client), instance.encode(), None, err, len(err))
    return rc, (client if rc == 0 else None), err.value.decode()


def strategy(lib_path, instance):
    """A strategy attached while the daemon runs (this script run as `--strategy`): says
    "attached", reports its checks on each line read from stdin until told "killed", then waits
    for the checks to fail and prints what it saw, one JSON line each time."""
    lib = tpit.client_library(lib_path)
    rc, client, err = attach(lib, instance)
    print(json.dumps({"attached": rc, "err": err, "pidns": os.readlink("/proc/self/ns/pid")}),
          flush=True)
    if rc != 0:
        return
    for line in sys.stdin:
        if line.strip() == "killed":
            break
        print(json.dumps({"heartbeat": lib.tp_check_heartbeat(client),
                          "writer": lib.tp_check_writer(client),
                          "why": lib.tp_last_error(client).decode()}), flush=True)
    start = time.monotonic()
    while lib.tp_check_heartbeat(client) == 0 and time.monotonic() - start < 10:
        time.sleep(0.005)
    print(json.dumps({"after_s": time.monotonic() - start,
                      "heartbeat": lib.tp_check_heartbeat(client),
                      "writer": lib.tp_check_writer(client),
                      "why": lib.tp_last_error(client).decode()}), flush=True)
    lib.tp_detach(client)


def ask(proc, line=None):
    if line is not None:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
    out = proc.stdout.readline()
    if not out:
        fail("strategy %d ended: %s" % (proc.pid, proc.stderr.read()))
    return json.loads(out)


def main(tickplane, sim, lib_path):
    os.environ["TICKPLANE_HEARTBEAT_TIMEOUT_MS"] = str(TIMEOUT_MS)
    lib = tpit.client_library(lib_path)
    instance = tpit.instance_name("tpdead")
    with tempfile.TemporaryDirectory(prefix="tpdead-") as workdir:
        pcap = os.path.join(workdir, "feed.pcap")
        subprocess.run([sim, "itch", "--pcap", pcap, "--truth", os.path.join(workdir, "t.json"),
                        "--seed", "6", "--symbols", "4", "--messages", "2000"],
                       check=True, stdout=subprocess.DEVNULL)
        itch = tpit.itch_channel()
        sock = os.path.join(workdir, "control.sock")
        cfg = tpit.base_config(instance, tpit.pcap_port(pcap), [itch], sock)
        cfg_path = tpit.write_config(cfg, os.path.join(workdir, "config.json"))
        daemon = subprocess.Popen([tickplane, "--config", cfg_path], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True)
        strategies = []
        try:
            wait_for("the daemon's bus", lambda: daemon.poll() is not None or
                     attach_and_detach(lib, instance), 40)
            if daemon.poll() is not None:
                fail("daemon exited early: " + daemon.stderr.read())
            me = [sys.executable, os.path.abspath(__file__), "--strategy", lib_path, instance]
            spawn = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
            strategies.append(subprocess.Popen(me, **spawn))
            strategies.append(subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc"] +
                                               me, **spawn))
            seen = [ask(s) for s in strategies]
            for s in seen:
                if s["attached"] != 0:
                    fail("a strategy could not attach to the running daemon: %s" % s)
            if seen[0]["pidns"] == seen[1]["pidns"]:
                fail("unshare gave no PID namespace of its own: %s" % seen)
            # Alive and idle (the capture is replayed in a moment) for twice the timeout; the data
            # lcore's loop goes on too (dp.ticks: 100 a second, traffic or not).
            ticks_before = lcore_ticks(sock)
            for _ in range(10):
                for k, s in enumerate(strategies):
                    r = ask(s, "check")
                    if r["heartbeat"] != 0 or r["writer"] != 0:
                        fail("strategy %d (PID namespace %s) took the running daemon for dead: "
                             "%s" % (k, seen[k]["pidns"], r))
                time.sleep(TIMEOUT_MS / 5000)
            ticks = lcore_ticks(sock) - ticks_before
            if ticks < 20:  # about 100 in a second
                fail("the idle data lcore's dp.ticks grew by %d in a second" % ticks)
            os.kill(daemon.pid, signal.SIGKILL)
            daemon.wait()
            for s in strategies:
                s.stdin.write("killed\n")
                s.stdin.flush()
            noticed = []
            for k, s in enumerate(strategies):
                r = ask(s)
                noticed.append("%.3f s" % r["after_s"])
                if r["heartbeat"] != -errno.EOWNERDEAD or r["writer"] != -errno.EOWNERDEAD:
                    fail("strategy %d was not told the daemon died: %s" % (k, r))
                if r["after_s"] > TIMEOUT_MS / 1000 + SLACK_S:
                    fail("strategy %d noticed the death after %.3f s, timeout %d ms" %
                         (k, r["after_s"], TIMEOUT_MS))
                if "last beat" not in r["why"]:
                    fail("strategy %d: tp_last_error gives no reason: %r" % (k, r["why"]))
            # Left behind, still marked live; a strategy started now is refused.
            if not os.path.exists("/dev/shm/tickplane.%s.state" % instance):
                fail("the killed daemon's segments are gone: nothing was tested")
            rc, client, err = attach(lib, instance)
            if client is not None:
                lib.tp_detach(client)
            if rc != -errno.EOWNERDEAD or "killed or is hung" not in err:
                fail("tp_attach to the killed daemon's segments: %d (%s), expected %d" %
                     (rc, err, -errno.EOWNERDEAD))
            print("ok: the strategies noticed after %s; a new one was refused: %s" %
                  (", ".join(noticed), err))
        finally:
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait()
            for s in strategies:
                s.kill()
                s.wait()
            for path in glob.glob("/dev/shm/tickplane.%s.*" % instance):
                os.unlink(path)


def lcore_ticks(sock):
    stats = tpit.control(sock, {"id": 1, "cmd": "stats"})
    if "dp.ticks" not in stats:
        fail("stats without dp.ticks: %s" % sorted(stats))
    return stats["dp.ticks"]


def attach_and_detach(lib, instance):
    rc, client, _ = attach(lib, instance)
    if client is not None:
        lib.tp_detach(client)
    return rc == 0


def preload_sanitizer(lib_path):
    """A sanitizer build's libtickplane needs its runtime loaded before Python: run again with it
    preloaded (the strategies and the daemon inherit it), Python's own leaks not reported."""
    if "LD_PRELOAD" in os.environ:
        return
    ldd = subprocess.run(["ldd", lib_path], capture_output=True, text=True).stdout
    runtimes = [line.split("=>")[1].split()[0] for line in ldd.splitlines()
                if "=>" in line and ("libasan" in line or "libubsan" in line)]
    if runtimes:
        os.environ["LD_PRELOAD"] = ":".join(runtimes)
        os.environ["ASAN_OPTIONS"] = "detect_leaks=0"
        os.execv(sys.executable, [sys.executable] + sys.argv)


if __name__ == "__main__":
    preload_sanitizer(sys.argv[2] if sys.argv[1] == "--strategy" else sys.argv[3])
    if sys.argv[1] == "--strategy":
        strategy(sys.argv[2], sys.argv[3])
    else:
        main(*sys.argv[1:4])
