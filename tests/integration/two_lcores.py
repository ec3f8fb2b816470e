#!/usr/bin/env python3
"""Two data lcores in one instance: the real daemon, EAL lcores mapped "0@0,1@1,2@1" (main
lcore 0, data lcores 1 and 2 sharing CPU 1 on this 2-CPU machine), an MDP3 channel on lcore 1
(its own net_pcap port) and an ITCH channel on lcore 2 (another), each capture from
tickplane-sim with line faults. A libtickplane consumer (lcores_consumer) reads both rings and
compares both channels' books, and the state table, with each simulator's truth; the control
socket's status and stats, and the daemon's summary, must show both lcores. The ITCH lcore's
window of instrument ids is sized in the config (lcores[].instruments, 700 of the capacity 1024),
the MDP3 lcore takes the rest; the windows the status reports are the ones the ids the consumer
saw fall in. A reload that would resize a window is refused; a live reload then adds a channel on
lcore 2 and changes the instrument filter (a command for both lcores): both acknowledge, lcore
1's channel is untouched.

usage: two_lcores.py TICKPLANE SIM CONSUMER
"""
import json
import os
import subprocess
import sys
import tempfile
import time

import tpit
from tpit import fail

TICKPLANE, SIM, CONSUMER = sys.argv[1:4]

CHANNELS = [
    {"name": "cme", "protocol": "mdp3", "id": 310, "rx_ports": {"a": "cme", "b": "cme"},
     "lines": {"a": {"group": "224.0.25.1", "port": 17901},
               "b": {"group": "224.0.25.9", "port": 18901}},
     "recovery": {"snapshot": {"a": {"group": "224.0.25.126", "port": 19901}},
                  "definitions": {"a": {"group": "224.0.25.126", "port": 16901}},
                  "gap_wait_us": 50000}},
    tpit.itch_channel(rx_ports={"a": "itch", "b": "itch"}, recovery={"gap_wait_us": 50000}),
]


# The ITCH lcore's window of instrument ids; the MDP3 lcore shares the rest of the capacity.
ITCH_WINDOW = 700


def config(workdir, instance):
    cfg = tpit.base_config(instance, tpit.pcap_port("cme.pcap"), CHANNELS)
    cfg["eal"]["lcores"] = "0@0,1@1,2@1"
    cfg["ports"] = [{"name": "cme", "pcap": "cme.pcap", "mbuf_pool_size": 16383},
                    {"name": "itch", "pcap": "itch.pcap", "mbuf_pool_size": 16383}]
    cfg["lcores"] = [{"lcore": 1, "poll": [{"port": "cme"}], "channels": ["cme"]},
                     {"lcore": 2, "poll": [{"port": "itch"}], "channels": ["itch"],
                      "instruments": ITCH_WINDOW}]
    return tpit.write_config(cfg, os.path.join(workdir, "config.json"))


def simulate(workdir, protocol, port, seed):
    """The capture of `port` (its pcap) and the truth of its books."""
    pcap, truth = (os.path.join(workdir, port + ext) for ext in (".pcap", ".json"))
    subprocess.run([SIM, protocol, "--pcap", pcap, "--truth", truth, "--seed", str(seed),
                    "--symbols", "20", "--messages", "20000", "--loss-a", "0.01",
                    "--reorder-b", "0.01", "--duplicate-b", "0.01"],
                   check=True, stdout=subprocess.DEVNULL)
    return truth


def check_control(path):
    """While the lcores run: status names both, stats carries each lcore's and ring's counters.
    Returns each lcore's window of ids as the status gives it: {lcore: (first id, ids)}."""
    tpit.wait_for("the control socket", lambda: os.path.exists(path), 10)
    status, stats = tpit.control_session(path, ({"id": 1, "cmd": "status"},
                                                {"id": 2, "cmd": "stats"}))
    if not status.get("ok") or not stats.get("ok"):
        fail("control socket: %s %s" % (status, stats))
    if sorted(status["data_lcores"]) != [1, 2]:
        fail("status data_lcores: %s" % status["data_lcores"])
    placed = {c["name"]: (c["lcore"], c["ring"]) for c in status["channels"]}
    if placed != {"cme": (1, 0), "itch": (2, 1)}:
        fail("status channels: %s" % status["channels"])
    windows = {x["lcore"]: (x["first_instrument"], x["window_ids"]) for x in status["lcores"]}
    # In lcore order, touching, within the capacity; lcore 2 has the size its config gives.
    (first1, ids1), (first2, ids2) = windows[1], windows[2]
    if first1 != 0 or first2 != first1 + ids1 or ids2 != ITCH_WINDOW or first2 + ids2 > 1024 or \
            ids1 != 1024 - ITCH_WINDOW:
        fail("status lcores (id windows of capacity 1024): %s" % status["lcores"])
    for key in ("dp.lcore=1.rx_packets", "dp.lcore=2.rx_packets", "bus.published",
                "bus.ring=1.published", "channel=cme.feed.packets", "channel=itch.feed.packets"):
        if key not in stats:
            fail("stats without %s: %s" % (key, sorted(stats)))
    print("control socket: data lcores %s, channels %s, id windows %s" %
          (status["data_lcores"], placed, windows))
    return windows


def refuse_window_change(cfg_path, sock):
    """A reload that would resize lcore 2's window is refused, naming both windows it moves, and
    changes nothing (the config file is put back)."""
    with open(cfg_path) as f:
        cfg = json.load(f)
    cfg["lcores"][1]["instruments"] = ITCH_WINDOW - 100
    tpit.write_config(cfg, cfg_path)
    r = tpit.control(sock, {"id": 6, "cmd": "reload"}).get("reload", {})
    restart = r.get("changes", {}).get("restart_needed", [])
    want = ["lcores[0]: instrument ids 0-%d instead of 0-%d (windows are sized at start)" %
            (1024 - ITCH_WINDOW + 99, 1024 - ITCH_WINDOW - 1),
            "lcores[1]: instrument ids %d-1023 instead of %d-1023 (windows are sized at start)" %
            (1024 - ITCH_WINDOW + 100, 1024 - ITCH_WINDOW)]
    if r.get("ok") is not False or restart != want:
        fail("reload resizing a window: %s" % r)
    cfg["lcores"][1]["instruments"] = ITCH_WINDOW
    tpit.write_config(cfg, cfg_path)
    print("reload resizing a window: refused (%s)" % restart[1])


def reload_across_lcores(cfg_path, sock):
    """Adds an ITCH channel on lcore 2 and an exclude rule (every lcore's filter) live."""
    with open(cfg_path) as f:
        cfg = json.load(f)
    cfg["channels"].append({"name": "itch-bx", "protocol": "itch",
                            "rx_ports": {"a": "itch", "b": "itch"},
                            "lines": {"a": {"group": "233.54.12.200", "port": 26478}}})
    cfg["lcores"][1]["channels"].append("itch-bx")
    cfg["instruments"]["exclude"] = ["ZZZZ*"]
    tpit.write_config(cfg, cfg_path)
    reply = tpit.control(sock, {"id": 3, "cmd": "reload"})
    r = reply.get("reload", {})
    changes = r.get("changes", {})
    if not r.get("ok") or changes.get("channels_added") != ["itch-bx"] or \
            not changes.get("filters") or changes.get("channels_changed"):
        fail("reload: %s" % reply)
    status, stats = tpit.control_session(sock, ({"id": 4, "cmd": "status"},
                                                {"id": 5, "cmd": "stats"}))
    placed = {c["name"]: (c["lcore"], c["ring"]) for c in status["channels"]}
    if placed != {"cme": (1, 0), "itch": (2, 1), "itch-bx": (2, 1)}:
        fail("status after the reload: %s" % status["channels"])
    if "channel=itch-bx.feed.packets" not in stats or \
            stats["dp.lcore=1.reload.apply_errors"] or stats["dp.lcore=2.reload.apply_errors"]:
        fail("stats after the reload: %s" % stats)
    print("reload: itch-bx added on lcore 2, filter swapped on both lcores")


def main():
    with tempfile.TemporaryDirectory(prefix="tpit-") as workdir:
        instance = tpit.instance_name("tplc")
        cfg = config(workdir, instance)
        truth_cme = simulate(workdir, "mdp3", "cme", 12)
        truth_itch = simulate(workdir, "itch", "itch", 13)
        ready = os.path.join(workdir, "ready")
        consumer = subprocess.Popen(
            [CONSUMER, "--instance", instance, "--rings", "2", "--truth", "0=" + truth_cme,
             "--truth", "1=" + truth_itch, "--ready", ready, "--timeout-s", "50"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        daemon = tpit.start_held(TICKPLANE, cfg, os.path.join(workdir, "start"), [ready],
                                 idle_exit_ms=3000)
        windows = check_control(os.path.join(workdir, "control.sock"))
        refuse_window_change(cfg, os.path.join(workdir, "control.sock"))
        reload_across_lcores(cfg, os.path.join(workdir, "control.sock"))
        summary = tpit.finish(daemon)
        out, err = consumer.communicate(timeout=55)
        if consumer.returncode != 0:
            fail("consumer: exit %d %s\n%s" % (consumer.returncode, out, err[:3000]))
        verdict = json.loads(out)
        print("consumer: " + out.strip())
        cme, itch = verdict["venues"]
        # Each lcore hands out ids from its own window, as the status reported it.
        for venue, lcore in ((cme, 1), (itch, 2)):
            first, ids = windows[lcore]
            if not first <= venue["min_id"] <= venue["max_id"] < first + ids:
                fail("instrument ids %d-%d outside lcore %d's window %d-%d: %s" %
                     (venue["min_id"], venue["max_id"], lcore, first, first + ids - 1,
                      verdict["venues"]))
        if min(verdict["ring_records"]) == 0:
            fail("a ring carried nothing: %s" % verdict["ring_records"])
        lcores = {x["lcore"]: x for x in summary["lcores"]}
        if sorted(lcores) != [1, 2] or min(x["records"] for x in lcores.values()) == 0:
            fail("summary lcores: %s" % summary["lcores"])
        # The summary gives the same windows, and how many ids each lcore handed out of its own.
        for lcore, (first, ids) in windows.items():
            x = lcores[lcore]
            if (x["first_instrument"], x["window_ids"]) != (first, ids) or \
                    not 0 < x["instruments"] <= ids:
                fail("summary lcore %d window: %s" % (lcore, x))
        # What each lcore published is what the consumer read on its ring (nothing lapped).
        if verdict["lost"] == 0 and [lcores[1]["records"], lcores[2]["records"]] != \
                verdict["ring_records"]:
            fail("ring records %s != published %s" % (verdict["ring_records"], summary["lcores"]))
        names = sorted(c["name"] for c in summary["channels"])
        if names != ["cme", "itch", "itch-bx"]:
            fail("summary channels: %s" % names)
        # Line A's losses were made good by line B on both lcores: the faults bit.
        for c in summary["channels"][:2]:
            line_b = [x for x in c["detail"] if x.get("line") == "b"][0]
            if line_b["delivered"] == 0:
                fail("channel %s: line B delivered nothing: %s" % (c["name"], c))
    print("PASS two_lcores")


main()
