#!/usr/bin/env python3
"""Nobody can lock the others out of the real daemon's control socket.

usage: control_limits.py TICKPLANE SIM

The daemon replays a small simulator ITCH capture on net_pcap and keeps running; its control
socket has the default max_clients (64), max_clients_per_uid (16) and reserved_clients (4), and
an idle timeout of 15 s.
  - uid 65534 opens 3000 connections and holds them (its RLIMIT_NOFILE raised to allow it; the
    daemon's own descriptors stay those of its admitted clients): 16 are admitted, the others are
    told "too many connections of uid 65534" and closed. Meanwhile uid 65533 connects and
    subscribes, and root reloads the config: both answered.
  - four more uids take 15 connections each, filling the 60 slots that are not reserved: the next
    ordinary connection is told the last slots are kept for operators; root still gets in.
  - after the idle timeout, the connections that sent nothing and hold no subscription are
    closed (counted in idle_closed); the subscriber, silent as long, is still served.
"""
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import time

import tpit
from tpit import control, fail, wait_for

HOG, SUBSCRIBER = 65534, 65533
FILLERS = [65530, 65531, 65532, 65529]
NOGROUP = 65534
# The children run as other users: the system's interpreter, not one under root's home.
PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
IDLE_MS = 15000


def holder(path, count):
    """(this script run as `--hold PATH COUNT` under another uid) connects COUNT times, says how
    many connections were made and how many of them were refused by the daemon, then holds them
    all until stdin closes."""
    socks, refused = [], 0
    deadline = time.time() + 60
    while len(socks) < count:
        s = socket.socket(socket.AF_UNIX)
        try:
            s.connect(path)
        except BlockingIOError:  # the backlog is full until the daemon's next accepts
            s.close()
            if time.time() > deadline:
                print(json.dumps({"error": "backlog full for 60 s", "connected": len(socks)}),
                      flush=True)
                return
            time.sleep(0.001)
            continue
        socks.append(s)
    # Each refused one gets one line and is closed; the admitted ones get nothing. Read until a
    # second passes without news.
    pending = {s.fileno(): s for s in socks}
    poller = select.poll()
    for fd in pending:
        poller.register(fd, select.POLLIN)
    while pending:
        ready = poller.poll(1000)
        if not ready:
            break
        for fd, _ in ready:
            data = pending[fd].recv(256)
            refused += b"too many" in data
            poller.unregister(fd)
            del pending[fd]
    print(json.dumps({"connected": len(socks), "refused": refused}), flush=True)
    sys.stdin.read()


def as_uid(uid, nofile=None):
    return tpit.as_uid(uid, [NOGROUP], nofile)  # the socket's group: it may connect


def hold(path, uid, count):
    p = subprocess.Popen([PYTHON, os.path.abspath(__file__), "--hold", path, str(count)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                         preexec_fn=as_uid(uid, count + 64))
    line = p.stdout.readline()
    if not line:
        fail("holder uid %d ended early" % uid)
    r = json.loads(line)
    if "error" in r:
        fail("holder uid %d could not connect: %s" % (uid, r))
    return p, r


def first_reply_as(uid, path, request):
    """One request as uid (a child process): the first line the daemon sends back, which is the
    refusal when it refuses the connection (sent and closed before the request may be written)."""
    code = ("import json, socket, sys\n"
            "s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])\n"
            "try:\n"
            "    s.sendall(sys.argv[2].encode() + b'\\n')\n"
            "except BrokenPipeError:\n"
            "    pass\n"
            "print(s.makefile().readline().strip())\n")
    out = subprocess.run([PYTHON, "-c", code, path, json.dumps(request)], capture_output=True,
                         text=True, preexec_fn=as_uid(uid))
    if out.returncode != 0:
        fail("a connection as uid %d failed: %s" % (uid, out.stderr))
    return json.loads(out.stdout)


def server_stats(sock):
    return control(sock, {"id": 9, "cmd": "stats"})["control"]


def main(tickplane, sim):
    with tempfile.TemporaryDirectory(prefix="tplimits-") as workdir:
        os.chmod(workdir, 0o755)
        instance = tpit.instance_name("tplimits")
        pcap = os.path.join(workdir, "feed.pcap")
        subprocess.run([sim, "itch", "--pcap", pcap, "--truth", os.path.join(workdir, "t.json"),
                        "--seed", "8", "--symbols", "4", "--messages", "2000"],
                       check=True, stdout=subprocess.DEVNULL)
        sock = os.path.join(workdir, "control.sock")
        itch = tpit.itch_channel()
        cfg = tpit.base_config(instance, tpit.pcap_port(pcap), [itch], sock)
        cfg["control"].update({"mode": "0660", "group": "nogroup", "idle_timeout_ms": IDLE_MS})
        cfg["entitlements"] = {"default": "allow"}
        cfg_path = tpit.write_config(cfg, os.path.join(workdir, "config.json"))
        daemon = subprocess.Popen([tickplane, "--config", cfg_path, "--unlink-bus"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        holders = []

        try:
            def up():
                if daemon.poll() is not None:
                    fail("daemon exited: " + daemon.stderr.read())
                try:
                    return control(sock, {"id": 1, "cmd": "status"}, timeout=5)["ok"]
                except OSError:
                    return False
            wait_for("the daemon", up, 60)

            p, r = hold(sock, HOG, 3000)
            holders.append(p)
            if r["connected"] != 3000 or r["refused"] < 3000 - 16:
                fail("uid %d: %s (expected 3000 connected, at least 2984 refused)" % (HOG, r))
            # A subscriber of another uid, on a connection it keeps.
            sub_proc = subprocess.Popen(
                [PYTHON, "-c",
                 "import socket, sys, json\n"
                 "s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])\n"
                 "f = s.makefile('rw')\n"
                 "for line in sys.stdin:\n"
                 "    f.write(line); f.flush(); print(f.readline().strip(), flush=True)\n",
                 sock], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                preexec_fn=as_uid(SUBSCRIBER))
            holders.append(sub_proc)

            def ask_sub(req):
                sub_proc.stdin.write(json.dumps(req) + "\n")
                sub_proc.stdin.flush()
                line = sub_proc.stdout.readline()
                if not line:
                    fail("the subscriber's connection ended")
                return json.loads(line)
            r = ask_sub({"id": 1, "cmd": "subscribe", "instruments": "*", "topics": ["top"],
                         "venue": "NASDAQ"})
            if r.get("ok") is not True:
                fail("uid %d could not subscribe while uid %d held 3000 connections: %s" %
                     (SUBSCRIBER, HOG, r))
            r = control(sock, {"id": 2, "cmd": "reload"})
            if r.get("ok") is not True:
                fail("root could not reload while uid %d held 3000 connections: %s" % (HOG, r))
            st = server_stats(sock)
            if st["rejected_uid"] < 3000 - 16 or st["clients"] > 16 + 2:
                fail("control stats: %s" % st)

            # Four more users fill the 60 ordinary slots (16 of the hog, 1 subscriber, 43 here).
            filled = 16 + 1
            for uid in FILLERS:
                n = min(15, 60 - filled)
                p, r = hold(sock, uid, n)
                holders.append(p)
                if r["refused"] != 0:
                    fail("uid %d: %s (expected all %d admitted)" % (uid, r, n))
                filled += n
            r = first_reply_as(SUBSCRIBER, sock, {"id": 3, "cmd": "status"})
            if "kept for operators" not in r.get("error", ""):
                fail("an ordinary client took a reserved slot: %s" % r)
            r = control(sock, {"id": 4, "cmd": "status"})
            if r.get("ok") is not True:
                fail("root was locked out with every ordinary slot taken: %s" % r)

            # Idle: every holder's connection goes, the subscriber's stays.
            wait_for("the idle connections to close",
                     lambda: server_stats(sock)["idle_closed"] >= filled - 1, IDLE_MS / 1000 + 30)
            r = ask_sub({"id": 5, "cmd": "status"})
            if r.get("ok") is not True:
                fail("the subscriber was dropped with the idle connections: %s" % r)
            st = server_stats(sock)
            print("ok: uid %d held 3000 connections (%d refused), uid %d subscribed, root "
                  "reloaded and got a reserved slot; %d idle connections closed" %
                  (HOG, st["rejected_uid"], SUBSCRIBER, st["idle_closed"]))
        finally:
            for p in holders:
                p.kill()
                p.wait()
            if daemon.poll() is None:
                daemon.terminate()
                daemon.wait(timeout=30)


if __name__ == "__main__":
    if sys.argv[1] == "--hold":
        holder(sys.argv[2], int(sys.argv[3]))
    else:
        main(*sys.argv[1:3])
