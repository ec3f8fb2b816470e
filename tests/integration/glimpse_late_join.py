#!/usr/bin/env python3
"""ITCH late join through a GLIMPSE snapshot: the daemon starts half way through a session.

usage: glimpse_late_join.py TICKPLANE SIM CONSUMER SCENARIO

tickplane-sim writes a capture whose line A is first seen mid-session (--late-join-a) and serves
GLIMPSE over SoupBinTCP on loopback: its model at a later point of the session. The real daemon
replays the capture (net_pcap), keeps the stream from its first packet, fetches the snapshot,
applies it and then the kept stream from the snapshot's sequence. A bus consumer attached before
the first packet rebuilds the books and compares them with the simulator's truth at the end.

Scenarios:
  snapshot   books equal the truth; every book event before the snapshot completed was flagged
             (recovering / stale), none flagged after it;
  dropped    the server drops the first connection halfway through the snapshot: the second
             attempt succeeds, with the same result;
  refused    the server refuses every login: the reason is logged and counted, nothing is ever
             published healthy, the daemon keeps running (control socket, operator's recover
             verb) and exits cleanly.
"""
import json
import os
import socket
import subprocess
import sys
import tempfile

import tpit
from tpit import fail

TICKPLANE, SIM, CONSUMER = (os.path.abspath(p) for p in sys.argv[1:4])
SCENARIO = sys.argv[4]
SEED, SYMBOLS, MESSAGES, JOIN_PACKET = 11, 20, 20000, 3000
USER, PASSWORD = "tp", "pw"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def sim_args(workdir):
    return [SIM, "itch", "--seed", str(SEED), "--symbols", str(SYMBOLS), "--messages",
            str(MESSAGES), "--pcap", os.path.join(workdir, "feed.pcap"), "--no-line-b",
            "--late-join-a", str(JOIN_PACKET), "--truth", os.path.join(workdir, "truth.json"),
            "--report", os.path.join(workdir, "report.json")]


def start_simulator(workdir, port, faults):
    """The capture, then the GLIMPSE server (serving until the test ends). The snapshot is the
    model 1000 messages after the capture's first: the kept stream covers it."""
    subprocess.run(sim_args(workdir), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(os.path.join(workdir, "report.json")) as f:
        joined = json.load(f)["lines"]["A"]["joined_at_seq"]
    if joined < 1000:
        fail("the capture starts at sequence %d: not mid-session" % joined)
    sim = subprocess.Popen(
        sim_args(workdir) + ["--glimpse", "127.0.0.1:%d" % port, "--glimpse-at", str(joined + 1000),
                             "--glimpse-serve-ms", "60000", "--glimpse-user", USER,
                             "--glimpse-password", PASSWORD] + faults,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    # Serving once it says so (the capture and truth are written by then).
    for line in sim.stderr:
        if "serving" in line:
            with open(os.path.join(workdir, "report.json")) as f:
                return sim, joined, json.load(f)["glimpse"]["next_seq"]
    fail("the simulator's GLIMPSE server did not start")


def config(workdir, instance, port, attempts):
    cred = os.path.join(workdir, "glimpse.cred")
    with open(cred, "w") as f:
        f.write("%s:%s\n" % (USER, PASSWORD))
    os.chmod(cred, 0o600)
    channel = tpit.itch_channel("a", recovery={
        "snapshot": {"host": "127.0.0.1", "port": port, "credentials": cred,
                     "attempts": attempts, "retry_ms": 200, "buffer_messages": 65536}})
    cfg = tpit.base_config(instance, tpit.pcap_port(os.path.join(workdir, "feed.pcap")),
                           [channel])
    return tpit.write_config(cfg, os.path.join(workdir, "config.json"))


def counters(sock, daemon):
    """The daemon's counters ({} while its socket is not there yet)."""
    if daemon.poll() is not None:
        fail("daemon exited (%d): %s" % (daemon.returncode, daemon.stderr.read()[-2000:]))
    try:
        reply = tpit.control(sock, {"cmd": "stats"})
    except OSError:
        return {}
    if not reply.get("ok"):
        fail("stats: %s" % reply)
    return reply


def main():
    faults = {"snapshot": [], "dropped": ["--glimpse-drops", "1", "--glimpse-drop-after", "150"],
              "refused": ["--glimpse-refuse", "1000"]}[SCENARIO]
    attempts = 2 if SCENARIO == "refused" else 3
    with tempfile.TemporaryDirectory(prefix="tp-glimpse-") as workdir:
        os.chdir(workdir)
        port = free_port()
        sim, joined, next_seq = start_simulator(workdir, port, faults)
        instance = tpit.instance_name("tpgl")
        cfg = config(workdir, instance, port, attempts)
        truth = os.path.join(workdir, "truth.json")
        ready, until = os.path.join(workdir, "ready"), os.path.join(workdir, "until")
        consumer = subprocess.Popen(
            [CONSUMER, "--instance", instance, "--venue", "nasdaq", "--truth", truth, "--ready",
             ready, "--until", until, "--idle-ms", "1500", "--timeout-s", "50"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        daemon = tpit.start_held(TICKPLANE, cfg, os.path.join(workdir, "start"), [ready])
        sock = os.path.join(workdir, "control.sock")
        done = "gave_up" if SCENARIO == "refused" else "completed"
        tpit.wait_for("the snapshot to be %s" % done,
                      lambda: counters(sock, daemon).get("channel=itch.snapshot." + done, 0) >= 1, 40)
        if SCENARIO == "refused":
            # Still running: the operator asks again, and that fetch is refused too.
            reply = tpit.control(sock, {"cmd": "recover", "channel": "itch"})
            if not reply.get("ok"):
                fail("recover: %s" % reply)
            tpit.wait_for("the operator's fetch to fail",
                          lambda: counters(sock, daemon).get("channel=itch.snapshot.gave_up", 0) >= 2, 40)
            bad = tpit.control(sock, {"cmd": "recover", "channel": "nosuch"})
            if bad.get("ok") or "nosuch" not in bad.get("error", ""):
                fail("recover of an unknown channel: %s" % bad)
        open(until, "w").close()
        out, err = consumer.communicate(timeout=55)
        daemon.send_signal(2)
        daemon_out, daemon_err = daemon.communicate(timeout=55)
        sim.kill()
        sim.wait()
        if daemon.returncode != 0:
            fail("daemon exit %d: %s" % (daemon.returncode, daemon_err[-2000:]))
        summary = json.loads(daemon_out.strip().splitlines()[-1])["summary"]
        verdict = json.loads(out.strip().splitlines()[-1]) if out.strip() else {}
        snap = summary.get("snapshots", {}).get("itch")
        print("consumer: %s" % json.dumps(verdict))
        print("snapshots: %s" % json.dumps(snap))
        if snap is None:
            fail("no snapshot section in the summary")
        loads = snap["loads"]
        if SCENARIO == "refused":
            if snap["completed"] != 0 or snap["rejected"] != snap["attempts"] or \
                    snap["attempts"] != 2 * attempts or snap["gave_up"] != 2:
                fail("refused: the fetch counters say otherwise: %s" % snap)
            if snap["last_failure"] != "login_rejected_not_authorized":
                fail("refused: last failure %s" % snap["last_failure"])
            if verdict.get("healthy_events", 1) != 0:
                fail("refused: events published healthy: %s" % verdict)
            if "login_rejected_not_authorized" not in daemon_err:
                fail("refused: the reason is not in the daemon's log")
            return
        if consumer.returncode != 0:
            fail("consumer exit %d: %s %s" % (consumer.returncode, out, err[-2000:]))
        if verdict["stale"] != 0 or verdict["ring_mismatches"] or verdict["state_mismatches"]:
            fail("books differ from the truth: %s" % verdict)
        if verdict["healthy_first"] != 0 or verdict["relapses"] != 0:
            fail("an event was published healthy before the snapshot completed: %s" % verdict)
        # net_pcap replays the capture faster than the snapshot arrives: the whole stream is
        # applied from what was kept, flagged, and the state table shows the books healthy after.
        if verdict["flagged_events"] == 0:
            fail("expected the events before the snapshot completed flagged: %s" % verdict)
        if loads["completed"] != 1 or loads["holes"] != 0 or loads["kept_dropped"] != 0:
            fail("the load: %s" % loads)
        if loads["skipped"] != next_seq - joined or summary["channels"][0]["feed_errors"] != 0:
            fail("the kept stream from sequence %d: %s, feed errors %d" %
                 (joined, loads, summary["channels"][0]["feed_errors"]))
        want_attempts = 2 if SCENARIO == "dropped" else 1
        if snap["attempts"] != want_attempts or snap["completed"] != 1 or \
                snap["dropped"] != want_attempts - 1:
            fail("fetch counters: %s" % snap)


if __name__ == "__main__":
    main()
