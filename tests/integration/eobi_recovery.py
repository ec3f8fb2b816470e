#!/usr/bin/env python3
"""Integration test: the real daemon runs the simulator's Eurex EOBI session on net_pcap.

tickplane-sim eobi writes incremental packets on lines A and B, each losing some, and some lost
on both (gaps only the snapshot feed repairs), with the segments' snapshot cycle on the snapshot
line. The daemon's EOBI channel (protocol eobi) arbitrates A/B per market segment, flags a
segment's books when it misses a packet, joins the snapshot line until the segment is rebuilt,
and publishes on the bus; bus_consumer rebuilds the books from the ring and compares them and the
state table with the simulator's truth (instruments by SecurityID). Every book must end healthy
and equal to the truth; books flagged on the way must be the ones a gap touched.

usage: eobi_recovery.py TICKPLANE SIM CONSUMER
"""
import json
import os
import subprocess
import sys
import tempfile

import tpit
from tpit import fail

TICKPLANE, SIM, CONSUMER = sys.argv[1:4]

# The groups `tickplane-sim eobi` sends to (tools/sim/endpoints.c).
EOBI_CHANNEL = {
    "name": "eurex", "protocol": "eobi", "id": 1,
    "lines": {"a": {"group": "224.0.114.43", "port": 59001},
              "b": {"group": "224.0.115.43", "port": 59001}},
    "recovery": {"snapshot": {"a": {"group": "224.0.114.42", "port": 59000}}},
}


def both_lost(report):
    """Incremental packets (by source index) lost on both lines."""
    a, b = report["lines"]["A"], report["lines"]["B"]
    lost = lambda line: {x["index"] for x in line["lost"]}
    return (lost(a) & lost(b)) | {x["index"] for x in a.get("both_lost", [])}


def main():
    with tempfile.TemporaryDirectory(prefix="tpit-eobi-") as work:
        instance = tpit.instance_name("tpeobi")
        pcap, truth, report = tpit.simulate(SIM, "eobi", work, 11, "--segments", "3",
                                            "--snapshot-every", "150", "--loss-a", "0.02",
                                            "--loss-b", "0.02", "--both-loss", "0.003")
        with open(report) as f:
            rep = json.load(f)
        if not both_lost(rep):
            fail("the session lost nothing on both lines: no gap to recover")
        cfg = tpit.write_config(tpit.base_config(instance, tpit.pcap_port(pcap), [EOBI_CHANNEL]),
                                os.path.join(work, "config.json"))
        ready = os.path.join(work, "ready")
        consumer = subprocess.Popen(
            [CONSUMER, "--instance", instance, "--truth", truth, "--ready", ready, "--venue",
             "eurex", "--idle-ms", "20000", "--timeout-s", "100"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        daemon = tpit.start_held(TICKPLANE, cfg, os.path.join(work, "start"), [ready],
                                 idle_exit_ms=2500)
        summary = tpit.finish(daemon)
        out, err = consumer.communicate(timeout=110)
        if consumer.returncode != 0:
            fail("consumer: exit %d %s\n%s" % (consumer.returncode, out, err[:2000]))
        verdict = json.loads(out)
        print("consumer: %s" % out.strip())
        ch = summary["channels"][0]
        print("channel: %s" % json.dumps(ch))
        if verdict["instruments"] != rep["instruments"] or verdict["missing"] != 0:
            fail("instruments: %s, the simulator defined %d" % (out, rep["instruments"]))
        # Every book is healthy at the end and equal to the truth, from the ring and the state
        # table alike (the consumer counts a difference of either).
        if verdict["stale"] != 0 or verdict["ring_mismatches"] or verdict["state_mismatches"]:
            fail("books at the end: %s" % out)
        if verdict["lost"] != 0:
            fail("the consumer was lapped: %s" % out)
        # Packets lost on both lines flagged their segments' books until the snapshot rebuilt
        # them; never was a book shown healthy before a flagged one of the same run.
        if verdict["flagged"] == 0 or verdict["flagged_events"] == 0:
            fail("no book was flagged, yet %d packets were lost on both lines" %
                 len(both_lost(rep)))
        # The feed saw the gaps and rebuilt each from a whole snapshot, and nothing waits.
        decode = next(d for d in ch["detail"] if "decode" in d)
        e = decode["decode"]
        if e["gaps"] == 0 or e["snapshots"] < e["gaps"] or decode["recovering"] != 0:
            fail("feed recovery: %s" % decode)
        if e["malformed"] or e["rejected"] or e["snapshots_broken"] or e["execution_mismatch"]:
            fail("feed errors: %s" % decode)
        if e["duplicates"] == 0:
            fail("line B's copies were not skipped as duplicates: %s" % decode)
        if ch["packets"] != rep["lines"]["A"]["sent"] + rep["lines"]["B"]["sent"] + \
                rep["eobi"]["snapshot_packets"]:
            fail("the channel saw %d packets, the simulator sent %d + %d + %d snapshot" %
                 (ch["packets"], rep["lines"]["A"]["sent"], rep["lines"]["B"]["sent"],
                  rep["eobi"]["snapshot_packets"]))
        return 0


if __name__ == "__main__":
    sys.exit(main())
