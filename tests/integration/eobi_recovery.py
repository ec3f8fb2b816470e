#!/usr/bin/env python3
"""Integration test: the real daemon runs the simulator's Eurex EOBI session on net_pcap.

tickplane-sim eobi writes incremental packets on lines A and B, each losing some, and some lost
on both (gaps only the snapshot feed repairs), with the segments' snapshot cycle on snapshot
lines A and B (each losing some of it). Line B lags A by a few packets, so a packet A lost
comes on B after A's next ones. The daemon's EOBI channel (protocol eobi) arbitrates A/B per
market segment: a hole waits for the other line, and only a packet missing on both lines is a
gap, which flags the segment's books and joins the snapshot lines until the segment is
rebuilt; it publishes on the bus; bus_consumer rebuilds the books from the ring and compares
them and the state table with the simulator's truth (instruments by SecurityID). Every book
must end healthy and equal to the truth; books flagged on the way must be the ones a gap
touched, and there are no more gaps than packets lost on both lines.

usage: eobi_recovery.py TICKPLANE SIM CONSUMER
"""
import json
import os
import struct
import sys
import tempfile

import tpit
from tpit import fail

TICKPLANE, SIM, CONSUMER = sys.argv[1:4]

INCREMENTAL_PORT = 59001
HEARTBEAT = 13001


def both_lost(report):
    """Incremental packets (by source index) lost on both lines."""
    a, b = report["lines"]["A"], report["lines"]["B"]
    lost = lambda line: {x["index"] for x in line["lost"]}
    return (lost(a) & lost(b)) | {x["index"] for x in a.get("both_lost", [])}


def missing_on_both(pcap, report):
    """(MarketSegmentID, ApplSeqNum) of the incremental packets neither line of the capture
    carries, up to each segment's last ApplSeqNum (the simulator's report)."""
    seen = set()
    with open(pcap, "rb") as f:
        data = f.read()
    pos = 24  # pcap file header
    while pos + 16 <= len(data):
        incl = struct.unpack_from("<I", data, pos + 8)[0]
        frame = data[pos + 16:pos + 16 + incl]
        pos += 16 + incl
        ihl = (frame[14] & 0x0F) * 4
        udp = 14 + ihl
        if struct.unpack_from(">H", frame, udp + 2)[0] != INCREMENTAL_PORT:
            continue
        eobi = frame[udp + 8:]
        if len(eobi) < 36 or struct.unpack_from("<H", eobi, 34)[0] == HEARTBEAT:
            continue
        seq, segment = struct.unpack_from("<Qi", eobi, 8)
        seen.add((segment, seq))
    return {(s["market_segment_id"], n) for s in report["eobi"]["segments"]
            for n in range(1, s["last_appl_seq_num"] + 1)} - seen


def main():
    with tempfile.TemporaryDirectory(prefix="tpit-eobi-") as work:
        instance = tpit.instance_name("tpeobi")
        pcap, truth, report = tpit.simulate(SIM, "eobi", work, 11, "--segments", "3",
                                            "--snapshot-every", "150", "--loss-a", "0.02",
                                            "--loss-b", "0.02", "--both-loss", "0.003",
                                            "--delay-b", "20000", "--snapshot-loss-a", "0.02",
                                            "--snapshot-loss-b", "0.05")
        with open(report) as f:
            rep = json.load(f)
        if not both_lost(rep):
            fail("the session lost nothing on both lines: no gap to recover")
        missing = missing_on_both(pcap, rep)
        if len(missing) != len(both_lost(rep)):
            fail("the capture lacks %d packets on both lines, the simulator reports %d" %
                 (len(missing), len(both_lost(rep))))
        cfg = tpit.write_config(tpit.base_config(instance, tpit.pcap_port(pcap),
                                                 [tpit.EOBI_CHANNEL]),
                                os.path.join(work, "config.json"))
        summary, verdict = tpit.run_consumed(
            TICKPLANE, CONSUMER, cfg, instance, truth, work, "eobi",
            ("--venue", "eurex", "--idle-ms", "20000", "--timeout-s", "100"))
        out = json.dumps(verdict)
        print("consumer: %s" % out)
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
        # Only packets lost on both lines are gaps: each segment that lost one recovered at
        # least once, and no more often than such packets (losses that one snapshot repairs
        # together count once); each gap was rebuilt from one whole snapshot, nothing waits.
        decode = next(d for d in ch["detail"] if "decode" in d)
        e = decode["decode"]
        segments_lost = {segment for segment, _ in missing}
        print("lost on both lines: %d packets of %d segments; gaps %d, holes B filled %d" %
              (len(missing), len(segments_lost), e["gaps"], e["gaps_filled"]))
        if not len(segments_lost) <= e["gaps"] <= len(missing):
            fail("%d gaps for %d packets lost on both lines (%d segments): %s" %
                 (e["gaps"], len(missing), len(segments_lost), decode))
        if e["snapshots"] != e["gaps"] or decode["recovering"] != 0:
            fail("feed recovery: %s" % decode)
        # Line B lags: packets A lost waited for B's copies, which filled their holes.
        if e["gaps_filled"] == 0 or e["held"] == 0:
            fail("no hole was filled by the other line: %s" % decode)
        if e["malformed"] or e["rejected"] or e["execution_mismatch"]:
            fail("feed errors: %s" % decode)
        if e["duplicates"] == 0 or e["snapshot_duplicates"] == 0:
            fail("the other line's copies were not skipped as duplicates: %s" % decode)
        # Every instrument's volume came back whole from the snapshots.
        if e["volume_adopted"] == 0:
            fail("no snapshot gave a volume: %s" % decode)
        lines = rep["lines"]
        snapshot_sent = 2 * rep["eobi"]["snapshot_packets"] - len(lines["A"]["snapshot_lost"]) - \
            len(lines["B"]["snapshot_lost"])
        if ch["packets"] != lines["A"]["sent"] + lines["B"]["sent"] + snapshot_sent:
            fail("the channel saw %d packets, the simulator sent %d + %d + %d snapshot" %
                 (ch["packets"], lines["A"]["sent"], lines["B"]["sent"], snapshot_sent))
        return 0


if __name__ == "__main__":
    sys.exit(main())
