#!/usr/bin/env python3
"""A live daemon is never reported dead, a dead one is, within the daemon's own timeout.

usage: liveness.py TICKPLANE SIM LIBTICKPLANE_SO [--soak SECONDS --load N]

The real daemon (one data lcore, net_pcap) runs with bus.heartbeat_timeout_ms 1000. A strategy
(libtickplane through ctypes, no timeout of its own: it takes the daemon's from the segment
headers) checks tp_check_heartbeat and tp_check_writer every 5 ms while:
  - the main lcore's thread is stopped for 3 s (ptrace: that thread only, as a loaded machine or a
    long control-plane step holds it up): the data lcore's beats keep the daemon alive;
  - the data lcore's thread is stopped for 3 s: the main lcore's beats keep it alive;
  - the daemon is killed (SIGKILL): the strategy is told within the daemon's 1 s (plus a poll's
    slack), not the library's default 2 s.
A stall in which the running thread's processor ran nothing for most of the timeout (a canary
thread pinned to each processor tells; on a shared VM the hypervisor freezes a vCPU for seconds
at a time) proves nothing either way and is tried again, up to 3 times.

--soak SECONDS --load N: the daemon with the default timeout (bus.heartbeat_timeout_ms 5000)
runs for SECONDS next to N busy processes (nice 10: the machine's load, not starving it), a
reload every 10 s (work for the main lcore), a new attach every second and a strategy's checks
every 5 ms; prints one JSON line (checks, attaches, reloads, the oldest beat seen, the load
average's range) and fails on any false report of a dead daemon.
"""
import ctypes
import ctypes.util
import errno
import glob
import json
import mmap
import os
import struct
import signal
import subprocess
import sys
import tempfile
import threading
import time

import tpit
from tpit import fail, wait_for

TIMEOUT_MS = 1000
STALL_S = 3.0
SLACK_S = 0.4
BEAT_MS = 10  # both threads beat every 10 ms while they run (dataplane.c COUNTER_US)
STARVED_RETRIES = 3
PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH = 0x4206, 0x4207, 17
WALL = 0x40000000  # __WALL: wait for a thread of another process


libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
libc.ptrace.restype = ctypes.c_long


def stop_thread(tid):
    """Stops one thread of another process (the others run on)."""
    if libc.ptrace(PTRACE_SEIZE, tid, None, None) != 0 or \
            libc.ptrace(PTRACE_INTERRUPT, tid, None, None) != 0:
        fail("ptrace thread %d: %s" % (tid, os.strerror(ctypes.get_errno())))
    os.waitpid(tid, WALL)  # the ptrace-stop of that thread alone


def resume_thread(tid):
    if libc.ptrace(PTRACE_DETACH, tid, None, None) != 0:
        fail("ptrace detach %d: %s" % (tid, os.strerror(ctypes.get_errno())))


def data_lcore_thread(pid):
    """The tid of the daemon's data lcore (EAL names its workers "*-worker-<lcore>")."""
    for task in glob.glob("/proc/%d/task/*" % pid):
        with open(task + "/comm") as f:
            if "worker" in f.read():
                return int(os.path.basename(task))
    fail("no worker thread in /proc/%d/task" % pid)


def processor_of(pid, tid):
    """The processor a thread last ran on (/proc/PID/task/TID/stat, field 39)."""
    with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
        return int(f.read().rsplit(")", 1)[1].split()[36])


class Canaries:
    """One thread pinned to each processor, waking every 5 ms: when a processor's canary has not
    run for a while, nothing on that processor has (the hypervisor froze the vCPU, or it was
    saturated). The scheduler's own counters cannot tell: run and wait times are accounted
    when a thread next runs, and a frozen vCPU accounts nothing until it resumes."""

    def __init__(self):
        self.last = {cpu: time.monotonic() for cpu in os.sched_getaffinity(0)}
        self.stop = threading.Event()
        for cpu in self.last:
            threading.Thread(target=self.run, args=(cpu,), daemon=True).start()

    def run(self, cpu):
        os.sched_setaffinity(0, {cpu})
        while not self.stop.wait(0.005):
            self.last[cpu] = time.monotonic()

    def idle_ms(self, cpu):
        return (time.monotonic() - self.last.get(cpu, time.monotonic())) * 1000


def watch(lib, client, seconds, beating=None, canaries=None):
    """Checks every 5 ms for `seconds`: the checks' first failure, or None.

    beating (pid, tid): the thread whose beats should keep the daemon alive. A failure then
    says whether that thread's processor ran nothing for most of the timeout (its canary): such
    a thread cannot beat, and no design could tell it from a hung one; a failure while its
    processor ran is real."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        hb, wr = lib.tp_check_heartbeat(client), lib.tp_check_writer(client)
        if hb != 0 or wr != 0:
            seen = {"heartbeat": hb, "writer": wr, "why": lib.tp_last_error(client).decode()}
            if beating:
                cpu = processor_of(*beating)
                idle = canaries.idle_ms(cpu)
                seen.update(processor=cpu, processor_idle_ms=round(idle),
                            starved=idle >= 0.8 * TIMEOUT_MS)
            return seen
        time.sleep(0.005)
    return None


HEARTBEAT_OFFSET = 320  # struct tp_seg_header.heartbeat_ns (client/bus/segment.h)


def soak(lib, daemon, instance, sock, seconds, load):
    hogs = [subprocess.Popen(["nice", "-n", "10", "sh", "-c", "while :; do :; done"])
            for _ in range(load)]
    client = ctypes.c_void_p()
    err = ctypes.create_string_buffer(256)
    if lib.tp_attach(ctypes.byref(client), instance.encode(), None, err, len(err)) != 0:
        fail("attach: " + err.value.decode())
    with open("/dev/shm/tickplane.%s.state" % instance, "rb") as f:
        header = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)
    result = {"seconds": seconds, "busy_processes": load, "checks": 0, "attaches": 0,
              "reloads": 0, "reloads_ok": 0, "false_reports": [], "oldest_beat_ms": 0.0,
              "load_avg_1min": [99.0, 0.0]}
    try:
        start = time.monotonic()
        next_attach = next_reload = next_load = start
        while time.monotonic() - start < seconds:
            now = time.monotonic()
            hb, wr = lib.tp_check_heartbeat(client), lib.tp_check_writer(client)
            result["checks"] += 1
            beat = struct.unpack_from("<Q", header, HEARTBEAT_OFFSET)[0]
            age = (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - beat) / 1e6
            result["oldest_beat_ms"] = max(result["oldest_beat_ms"], round(age, 1))
            if hb != 0 or wr != 0:
                result["false_reports"].append({"at_s": round(now - start, 3), "heartbeat": hb,
                                                "writer": wr,
                                                "why": lib.tp_last_error(client).decode()})
            if now >= next_attach:
                other = ctypes.c_void_p()
                rc = lib.tp_attach(ctypes.byref(other), instance.encode(), None, err, len(err))
                result["attaches"] += 1
                if rc != 0:
                    result["false_reports"].append({"at_s": round(now - start, 3), "attach": rc,
                                                    "why": err.value.decode()})
                else:
                    lib.tp_detach(other)
                next_attach = now + 1
            if now >= next_reload:
                r = tpit.control(sock, {"id": 1, "cmd": "reload"}, timeout=30)
                result["reloads"] += 1
                result["reloads_ok"] += r.get("reload", {}).get("ok") is True
                next_reload = now + 10
            if now >= next_load:
                one = os.getloadavg()[0]
                lo, hi = result["load_avg_1min"]
                result["load_avg_1min"] = [min(lo, one), max(hi, one)]
                next_load = now + 5
            if daemon.poll() is not None:
                fail("the daemon exited during the soak")
            time.sleep(0.005)
    finally:
        for h in hogs:
            h.kill()
            h.wait()
        header.close()
        lib.tp_detach(client)
    print(json.dumps(result))
    if result["false_reports"]:
        fail("%d false reports of a dead daemon" % len(result["false_reports"]))


def main(tickplane, sim, lib_path, soak_seconds=None, load=0):
    os.environ.pop("TICKPLANE_HEARTBEAT_TIMEOUT_MS", None)
    lib = tpit.client_library(lib_path)
    instance = tpit.instance_name("tplive")
    with tempfile.TemporaryDirectory(prefix="tplive-") as workdir:
        pcap = os.path.join(workdir, "feed.pcap")
        subprocess.run([sim, "itch", "--pcap", pcap, "--truth", os.path.join(workdir, "t.json"),
                        "--seed", "9", "--symbols", "4", "--messages", "2000"],
                       check=True, stdout=subprocess.DEVNULL)
        itch = tpit.itch_channel()
        sock = os.path.join(workdir, "control.sock")
        cfg = tpit.base_config(instance, tpit.pcap_port(pcap), [itch], sock)
        if soak_seconds is None:
            cfg["bus"]["heartbeat_timeout_ms"] = TIMEOUT_MS
        cfg_path = tpit.write_config(cfg, os.path.join(workdir, "config.json"))
        log = open(os.path.join(workdir, "daemon.log"), "w+")
        daemon = subprocess.Popen([tickplane, "--config", cfg_path], stdout=subprocess.DEVNULL,
                                  stderr=log, text=True)
        client = ctypes.c_void_p()
        stopped = None
        try:
            err = ctypes.create_string_buffer(256)

            def attached():
                if daemon.poll() is not None:
                    log.seek(0)
                    fail("daemon exited: " + log.read())
                return lib.tp_attach(ctypes.byref(client), instance.encode(), None, err,
                                     len(err)) == 0
            wait_for("the daemon's bus", attached, 60)
            # Running: the data lcore loops (its dp.ticks grow), not only launched.
            wait_for("the data lcore's loop", lambda: os.path.exists(sock) and
                     tpit.control(sock, {"id": 1, "cmd": "stats"}).get("dp.ticks", 0) > 0, 30)
            if soak_seconds is not None:
                lib.tp_detach(client)
                client = ctypes.c_void_p()
                soak(lib, daemon, instance, sock, soak_seconds, load)
                return
            worker = data_lcore_thread(daemon.pid)
            canaries = Canaries()
            for name, tid, other in (("main lcore", daemon.pid, worker),
                                     ("data lcore", worker, daemon.pid)):
                for attempt in range(STARVED_RETRIES + 1):
                    stop_thread(tid)
                    stopped = tid
                    seen = watch(lib, client, STALL_S, (daemon.pid, other), canaries)
                    resume_thread(tid)
                    stopped = None
                    if seen is None or not seen["starved"]:
                        break
                    print("starved, again: %s" % seen)
                if seen is not None:
                    fail("with its %s stopped for %.1f s the live daemon was reported dead: %s"
                         % (name, STALL_S, seen))
                print("alive with the %s stopped %.1f s (timeout %d ms)" %
                      (name, STALL_S, TIMEOUT_MS))
            os.kill(daemon.pid, signal.SIGKILL)
            daemon.wait()
            killed = time.monotonic()
            seen = watch(lib, client, 10)
            after = time.monotonic() - killed
            if seen is None or seen["heartbeat"] != -errno.EOWNERDEAD:
                fail("the killed daemon was not reported dead: %s" % seen)
            if after > TIMEOUT_MS / 1000 + SLACK_S:
                fail("the killed daemon was reported dead after %.3f s, its timeout is %d ms"
                     % (after, TIMEOUT_MS))
            print("ok: killed, reported dead after %.3f s: %s" % (after, seen["why"]))
        finally:
            if stopped is not None:
                resume_thread(stopped)
            if client:
                lib.tp_detach(client)
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait()
            for path in glob.glob("/dev/shm/tickplane.%s.*" % instance):
                os.unlink(path)


if __name__ == "__main__":
    if len(sys.argv) == 8 and sys.argv[4] == "--soak" and sys.argv[6] == "--load":
        main(*sys.argv[1:4], soak_seconds=float(sys.argv[5]), load=int(sys.argv[7]))
    else:
        main(*sys.argv[1:4])
