#!/usr/bin/env python3
"""MDP3 statistics end to end on net_pcap: tickplane-sim's channel carries DailyStatistics49
(settlement, cleared volume, open interest) and LimitsBanding50 (limits that follow the price)
among the book and trade messages, with losses on line A that line B covers. The real daemon
replays it; stats_consumer (libtickplane, status topic) must end with exactly the values the
simulator sent last, per instrument, and bus_consumer with the books of the truth file.

usage: mdp3_statistics.py TICKPLANE SIM BUS_CONSUMER STATS_CONSUMER
"""
import json
import os
import subprocess
import sys
import tempfile

import tpit
from tpit import fail

TICKPLANE, SIM, BUS_CONSUMER, STATS_CONSUMER = sys.argv[1:5]


def main():
    with tempfile.TemporaryDirectory(prefix="tpit-stats-") as work:
        instance = tpit.instance_name("tpstats")
        pcap, truth, report = tpit.simulate(SIM, "mdp3", work, 13, "--loss-a", "0.01")
        templates = json.load(open(report))["mdp3"]["templates"]
        if not templates.get("49") or not templates.get("50"):
            fail("the simulator sent no 49 or 50: %s" % templates)
        cme = {"name": "cme", "protocol": "mdp3", "id": 901,
               "lines": {"a": {"group": "224.0.25.1", "port": 17901},
                         "b": {"group": "224.0.25.9", "port": 18901}},
               "recovery": {"snapshot": {"a": {"group": "224.0.25.126", "port": 19901}},
                            "definitions": {"a": {"group": "224.0.25.126", "port": 16901}},
                            "gap_wait_us": 50000}}
        cfg_path = tpit.write_config(
            tpit.base_config(instance, tpit.pcap_port(pcap), [cme],
                             os.path.join(work, "control.sock")),
            os.path.join(work, "config.json"))

        # The daemon exits 4 s after its last packet, and its exit (the bus writer gone) ends the
        # consumers' runs. Their own quiet timers are only a fallback, far longer: a loaded machine
        # once starved the daemon for 3 s mid-replay and a consumer judged a run over that was not.
        ready = [os.path.join(work, "ready-books"), os.path.join(work, "ready-stats")]
        consumers = [
            subprocess.Popen([BUS_CONSUMER, "--instance", instance, "--truth", truth, "--ready",
                              ready[0], "--idle-ms", "20000", "--timeout-s", "50"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
            subprocess.Popen([STATS_CONSUMER, "--instance", instance, "--report", report,
                              "--ready", ready[1], "--idle-ms", "20000", "--timeout-s", "50"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        ]
        daemon = tpit.start_held(TICKPLANE, cfg_path, os.path.join(work, "start"), ready,
                                 idle_exit_ms=4000)
        summary = tpit.finish(daemon)
        for name, p in zip(("books", "statistics"), consumers):
            o, e = p.communicate(timeout=55)
            if p.returncode != 0:
                fail("%s consumer: exit %d %s\n%s\ndaemon: %s" %
                     (name, p.returncode, o, e[:3000], json.dumps(summary)))
            print("%s consumer: %s" % (name, o.strip()))
        ch = summary["channels"][0]
        if ch["skipped_msgs"] != 0 or ch["feed_errors"] != 0:
            fail("channel: %s" % json.dumps(ch))
        print("49: %d, 50: %d messages sent" % (templates["49"], templates["50"]))
    print("PASS mdp3_statistics")


main()
