#!/usr/bin/env python3
"""Integration test: EOBI channels of T7 release 7.0 in the real daemon, on net_pcap.

Eurex runs simulation on a new T7 release while production stays on the old one, so a channel
names its release ("release"). tickplane-sim eobi --eobi-release 7.0 writes a lossy session in
7.0 layouts:
- a channel with "release": "7.0" arbitrates and recovers it; bus_consumer's books equal the
  simulator's truth, every book healthy at the end, and no packet is refused for its release;
- the same capture on a channel left at the build's default (6.0) is refused packet by packet:
  decode.release_mismatch counts them, the event log says "release mismatch: channel eurex", and
  its segments stay recovering (their books are never shown healthy).

usage: eobi_release.py TICKPLANE SIM CONSUMER
"""
import copy
import json
import os
import sys
import tempfile

import tpit
from tpit import fail

TICKPLANE, SIM, CONSUMER = sys.argv[1:4]


def decode_of(summary):
    ch = summary["channels"][0]
    return ch, next(d for d in ch["detail"] if "decode" in d)


def main():
    with tempfile.TemporaryDirectory(prefix="tpit-eobi70-") as work:
        pcap, truth, report = tpit.simulate(SIM, "eobi", work, 13, "--segments", "3",
                                            "--snapshot-every", "150", "--loss-a", "0.02",
                                            "--loss-b", "0.02", "--both-loss", "0.003",
                                            "--eobi-release", "7.0")
        with open(report) as f:
            rep = json.load(f)

        # A 7.0 channel: the books of the truth, recovered from 7.0 snapshots.
        instance = tpit.instance_name("tpeobi70")
        channel = copy.deepcopy(tpit.EOBI_CHANNEL)
        channel["release"] = "7.0"
        cfg = tpit.write_config(tpit.base_config(instance, tpit.pcap_port(pcap), [channel]),
                                os.path.join(work, "config70.json"))
        summary, verdict = tpit.run_consumed(
            TICKPLANE, CONSUMER, cfg, instance, truth, work, "70",
            ("--venue", "eurex", "--idle-ms", "20000", "--timeout-s", "100"))
        out = json.dumps(verdict)
        print("consumer (7.0 channel): %s" % out)
        if verdict["instruments"] != rep["instruments"] or verdict["missing"] != 0:
            fail("instruments: %s, the simulator defined %d" % (out, rep["instruments"]))
        if verdict["stale"] != 0 or verdict["ring_mismatches"] or verdict["state_mismatches"]:
            fail("books at the end: %s" % out)
        _, decode = decode_of(summary)
        e = decode["decode"]
        if e["release_mismatch"] != 0 or e["malformed"] or e["rejected"]:
            fail("7.0 channel refused packets: %s" % decode)
        if e["gaps"] == 0 or e["snapshots"] < e["gaps"] or decode["recovering"] != 0:
            fail("7.0 feed recovery: %s" % decode)

        # The same capture on a 6.0 channel: refused, counted and logged, never misread.
        instance = tpit.instance_name("tpeobi60")
        cfg = tpit.write_config(tpit.base_config(instance, tpit.pcap_port(pcap),
                                                 [tpit.EOBI_CHANNEL]),
                                os.path.join(work, "config60.json"))
        daemon = tpit.start_held(TICKPLANE, cfg, os.path.join(work, "start60"),
                                 idle_exit_ms=2500)
        log = []
        summary = tpit.finish(daemon, log=log)
        ch, decode = decode_of(summary)
        e = decode["decode"]
        print("6.0 channel: %s" % json.dumps(decode))
        if e["release_mismatch"] < ch["packets"] // 2:
            fail("6.0 channel refused %d of %d packets" % (e["release_mismatch"], ch["packets"]))
        lines = [l for l in log[0].splitlines() if "release mismatch: channel eurex" in l]
        if not lines:
            fail("no release mismatch line in the log:\n%s" % log[0][-3000:])
        print("log: %s" % lines[0])
        if decode["recovering"] == 0:
            fail("the 6.0 channel's segments claim to be healthy: %s" % decode)
        return 0


if __name__ == "__main__":
    sys.exit(main())
