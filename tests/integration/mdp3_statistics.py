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
import time

TICKPLANE, SIM, BUS_CONSUMER, STATS_CONSUMER = sys.argv[1:5]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def main():
    with tempfile.TemporaryDirectory(prefix="tpit-stats-") as work:
        instance = "tpstats%d" % os.getpid()
        pcap, truth, report = (os.path.join(work, n)
                               for n in ("feed.pcap", "truth.json", "report.json"))
        subprocess.run([SIM, "mdp3", "--pcap", pcap, "--truth", truth, "--report", report,
                        "--seed", "13", "--symbols", "20", "--messages", "20000",
                        "--loss-a", "0.01"], check=True, stdout=subprocess.DEVNULL)
        templates = json.load(open(report))["mdp3"]["templates"]
        if not templates.get("49") or not templates.get("50"):
            fail("the simulator sent no 49 or 50: %s" % templates)
        cfg = {
            "name": instance,
            "eal": {"lcores": "0-1", "main_lcore": 0, "memory_mb": 256, "no_huge": True,
                    "no_pci": True, "no_shconf": True, "log_level": "error"},
            "ports": [{"name": "cap", "pcap": pcap, "mbuf_pool_size": 16383}],
            "lcores": [{"lcore": 1, "poll": [{"port": "cap"}], "channels": ["cme"]}],
            "channels": [{"name": "cme", "protocol": "mdp3", "id": 901,
                          "lines": {"a": {"group": "224.0.25.1", "port": 17901},
                                    "b": {"group": "224.0.25.9", "port": 18901}},
                          "recovery": {"snapshot": {"a": {"group": "224.0.25.126",
                                                          "port": 19901}},
                                       "definitions": {"a": {"group": "224.0.25.126",
                                                             "port": 16901}},
                                       "gap_wait_us": 50000}}],
            "instruments": {"capacity": 1024},
            "books": {"max_orders": 65536, "levels_per_side": 10},
            "bus": {"ring_bytes": 16777216},
            "control": {"socket": os.path.join(work, "control.sock")},
        }
        cfg_path = os.path.join(work, "config.json")
        with open(cfg_path, "w") as f:
            json.dump(cfg, f)

        # Idle times generous for a loaded machine: the consumers judge the run over after 3 s
        # without a packet, the daemon exits after 4 s.
        start = os.path.join(work, "start")
        daemon = subprocess.Popen([TICKPLANE, "--config", cfg_path, "--idle-exit-ms", "4000",
                                   "--unlink-bus", "--start-after", start],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ready = [os.path.join(work, "ready-books"), os.path.join(work, "ready-stats")]
        consumers = [
            subprocess.Popen([BUS_CONSUMER, "--instance", instance, "--truth", truth, "--ready",
                              ready[0], "--idle-ms", "3000", "--timeout-s", "50"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
            subprocess.Popen([STATS_CONSUMER, "--instance", instance, "--report", report,
                              "--ready", ready[1], "--idle-ms", "3000", "--timeout-s", "50"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
        ]
        deadline = time.time() + 30
        while not all(os.path.exists(r) for r in ready) and time.time() < deadline:
            if daemon.poll() is not None:
                fail("daemon exited early: " + daemon.stderr.read())
            time.sleep(0.02)
        open(start, "w").close()
        out, err = daemon.communicate(timeout=55)
        if daemon.returncode != 0:
            fail("daemon exit %d: %s" % (daemon.returncode, err))
        summary = json.loads(out.strip().splitlines()[-1])["summary"]
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
