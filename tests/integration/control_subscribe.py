#!/usr/bin/env python3
"""Subscriptions through the real daemon's control socket, with entitlements by uid.

usage: control_subscribe.py TICKPLANE SIM TICKPLANE_TOP

The daemon replays a simulator ITCH capture on net_pcap (no NIC, no hugepages) with entitlements
that let uid 65534 see the top of book and trades of one symbol and nothing else, and give uid
65533 nothing. Two tickplane-top consumers subscribe through the control socket (--control), by
name before the symbol's definition arrives (--by-name: the daemon answers once it starts, so
the subscription is in place from the first packet):
  - uid 65534, its symbol: accepted, it gets top-of-book changes and trades;
  - uid 65533, the same symbol: refused, and it prints the daemon's reason.
The daemon's interest then limits publishing to that symbol (its publish counters show skipped
records), and the refused consumer's connection leaves no subscription behind.
"""
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

import tpit
from tpit import control, fail, wait_for

TICKPLANE, SIM, TOP = sys.argv[1:4]
ENTITLED_UID, UNENTITLED_UID = 65534, 65533


def main():
    with tempfile.TemporaryDirectory(prefix="tpctl-") as workdir:
        os.chmod(workdir, 0o755)  # the consumers run as other uids
        instance = tpit.instance_name("tpctl")
        pcap, truth = os.path.join(workdir, "feed.pcap"), os.path.join(workdir, "truth.json")
        subprocess.run([SIM, "itch", "--pcap", pcap, "--truth", truth, "--seed", "5",
                        "--symbols", "4", "--messages", "30000"],
                       check=True, stdout=subprocess.DEVNULL)
        with open(truth) as f:
            first = json.load(f)["instruments"][0]
        symbol = first["symbol"]
        sock = os.path.join(workdir, "control.sock")
        itch = tpit.itch_channel()
        cfg = tpit.base_config(instance, tpit.pcap_port(pcap), [itch], sock)
        cfg["bus"]["mode"] = "0644"
        cfg["control"]["mode"] = "0660"
        cfg["entitlements"] = {"default": "deny", "rules": [
            {"uid": ENTITLED_UID, "venues": ["NASDAQ"], "instruments": [symbol],
             "topics": ["top", "trades"]}]}
        cfg_path = tpit.write_config(cfg, os.path.join(workdir, "config.json"))
        start = os.path.join(workdir, "start")
        daemon = subprocess.Popen([TICKPLANE, "--config", cfg_path, "--idle-exit-ms", "2500",
                                   "--unlink-bus", "--start-after", start],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The control socket listening (so the daemon has set its mode) and the bus (its three
        # segments) before any consumer attaches.
        segments = ["/dev/shm/tickplane.%s.%s" % (instance, part)
                    for part in ("ring", "state", "counters")]

        def listening():
            s = socket.socket(socket.AF_UNIX)
            try:
                s.connect(sock)
                return True
            except OSError:
                return False
            finally:
                s.close()
        wait_for("the control socket and the bus",
                 lambda: daemon.poll() is not None or
                 (all(os.path.exists(p) for p in segments) and listening()), seconds=40)
        if daemon.poll() is not None:
            fail("daemon exited early: " + daemon.stderr.read())
        # The config has no socket group (world-writable modes are refused): test only, let the
        # other uids connect. Entitlements, not the file mode, decide what they get.
        os.chmod(sock, 0o666)

        consumers = {}
        for name, uid in (("entitled", ENTITLED_UID), ("unentitled", UNENTITLED_UID)):
            consumers[name] = subprocess.Popen(
                [TOP, "--quiet", "--seconds", "40", "--control", sock, "--by-name", instance,
                 symbol],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                preexec_fn=tpit.as_uid(uid))
        # Both attached (each has its reader counters segment, then connects and subscribes; the
        # daemon answers while it waits for the start), then traffic. The refused one may have
        # been told and left already.
        def attached(name):
            return os.path.exists("/dev/shm/tickplane.%s.reader.%d" %
                                  (instance, consumers[name].pid))
        def consumers_failed():
            for p in consumers.values():
                p.kill()
            return "; ".join(p.communicate()[1].strip() for p in consumers.values())
        deadline = time.time() + 40
        while not (attached("entitled") and
                   (attached("unentitled") or consumers["unentitled"].poll() is not None)):
            if time.time() > deadline or consumers["entitled"].poll() is not None:
                fail("consumers did not attach: " + consumers_failed())
            time.sleep(0.02)
        open(start, "w").close()

        # While the daemon runs: the socket's view (subscriptions held, refusals, commands sent
        # to the data plane over its ring).
        seen = {"subscriptions": 0, "refused": 0, "commands_sent": 0}
        while daemon.poll() is None:
            try:
                stats = control(sock, {"cmd": "stats"})["control"]
            except (OSError, ValueError, KeyError):
                break  # the daemon is closing
            for key in seen:
                seen[key] = max(seen[key], stats[key])
            time.sleep(0.1)

        results = {}
        for name, p in consumers.items():
            out, err = p.communicate(timeout=60)
            results[name] = (p.returncode, out, err)
        summary = tpit.finish(daemon, timeout=60)

        rc, out, err = results["unentitled"]
        want = "tickplane-top: %s: refused: uid %d has no entitlements" % (symbol, UNENTITLED_UID)
        if rc != 3 or want not in err:
            fail("unentitled consumer: exit %d, stderr %r, stdout %r" % (rc, err, out))
        if re.search(r"top changes [1-9]", out):
            fail("the refused consumer was delivered data: " + out)
        print("refused with the daemon's reason: " + err.strip())

        rc, out, err = results["entitled"]
        m = re.search(r"%s\s+top changes (\d+), trades (\d+)" % symbol, out)
        if rc != 0 or m is None or int(m.group(1)) == 0 or int(m.group(2)) == 0:
            fail("entitled consumer: exit %d, stdout %r, stderr %r" % (rc, out, err))
        # Trades before tickplane-top has mapped the symbol's id for display are not counted, so
        # the count is compared with the truth's, not required to equal it.
        print("entitled consumer: %s top changes, %s trades (the capture has %d)" %
              (m.group(1), m.group(2), first["trades"]))

        # One subscription held (the entitled one) and told to the data plane, one refusal.
        if seen != {"subscriptions": 1, "refused": 1, "commands_sent": 1}:
            fail("daemon side: %s" % seen)
        print("daemon: %s; ran %.1f s" % (seen, summary["elapsed_s"]))
    print("PASS control_subscribe")


main()
