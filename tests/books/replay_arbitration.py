#!/usr/bin/env python3
"""tickplane-replay arbitrates MDP3 and EOBI captures as the daemon's channels do: hostile
captures made from the simulator's, where only the line arbiter (MDP3) or the venue feed's
segment sequences (EOBI) get the books right. Every book equals the simulator's truth or is
flagged stale, and every anomaly is reported on stderr with its packet's number and offset.

  MDP3, a gap filled later   line A's copy of a packet lost, line B's copy moved behind the next
                             30 packets of line A: held behind the gap, books exact, none stale
  MDP3, a forged jump        line A's copy of a packet with its MsgSeqNum moved +5000 and the
                             messages of a later packet: dropped as implausible, reported
  MDP3, another payload      line B's copy of a packet (after A's) carries a later packet's
                             messages: the first copy wins, books exact
  MDP3, lost on both lines   reported with the packet that gave it up; books exact or stale
  MDP3, --lines              the simulator's addresses named give the same books; a map
                             without line B skips its flow (counted "unmapped"); a bad map is
                             refused with a message
  MDP3, order-level audit    an order-only packet lost on both lines: the order-level (53)
                             mismatch is reported by LastMsgSeqNumProcessed, not RptSeq
  EOBI, a forged jump        line A's copy of a packet with its ApplSeqNum moved +5000: its
                             market segment is reported and flagged stale until its snapshot
usage: replay_arbitration.py SIM REPLAY WORKDIR
"""
import json
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import pcap_edit  # noqa: E402
from replay_vs_sim import compare  # noqa: E402

MDP3_INCR_A = (bytes([224, 0, 25, 1]), 17901)
MDP3_INCR_B = (bytes([224, 0, 25, 9]), 18901)
MDP3_LINES = ("incr-a=224.0.25.1:17901,incr-b=224.0.25.9:18901,snap-a=224.0.25.126:19901,"
              "snap-mbo-a=224.0.25.227:21901,def-a=224.0.25.126:16901")
KEYS = ("last_price9", "status")


def replay(tool, path, *extra, check=True):
    out = subprocess.run([tool, "--depth", "10", "--instruments", "256", "--orders", "65536",
                          "--levels", "128", *extra, path], capture_output=True, text=True,
                         timeout=120)
    if not check:
        return out
    assert out.returncode == 0, out.stderr
    warnings = [l for l in out.stderr.splitlines() if l.startswith("tickplane-replay:")]
    return json.loads(out.stdout), warnings


def offsets(frames):
    """Byte offset of each pcap record (after the 24-byte file header)."""
    at, out = 24, []
    for f in frames:
        out.append(at)
        at += 16 + len(f.data)
    return out


def timestamp(f):
    return f.ts_sec * 10**9 + f.ts_frac  # the simulator writes nanosecond pcaps


def unflagged(truth, got, keys=KEYS):
    """Instruments whose books differ from the truth without the stale flag (for the order
    view: without stale or orders_incomplete)."""
    bad = []
    incomplete = {i["symbol"] for i in got["instruments"] if i.get("orders_incomplete")}
    order_view = dict(got, instruments=[i for i in got["instruments"]
                                        if i["symbol"] not in incomplete])
    for t in truth["instruments"]:
        for prefix, books in (("", got), ("order_", order_view)):
            if prefix and not any(i["symbol"].startswith(t["symbol"])
                                  for i in books["instruments"]):
                continue
            try:
                compare({"instruments": [t]}, books, prefix=prefix, skip_stale=True, keys=keys)
            except AssertionError as e:
                bad.append(str(e))
    return bad


def exact(truth, got):
    assert not any(i["stale"] for i in got["instruments"]), \
        [i["symbol"] for i in got["instruments"] if i["stale"]]
    n = len(truth["instruments"])
    assert compare(truth, got, keys=KEYS) == n
    assert compare(truth, got, prefix="order_", keys=KEYS) == n


def mdp3_seq(payload):
    return struct.unpack_from("<I", payload, 0)[0]


def with_mdp3_seq(payload, seq):
    return struct.pack("<I", seq) + payload[4:]


def write(path, header, frames):
    pcap_edit.write(path, header, frames)
    return path


def mdp3(sim, tool, p):
    subprocess.run([sim, "mdp3", "--seed", "12", "--symbols", "30", "--messages", "15000",
                    "--pcap", p("mdp3.pcap"), "--truth", p("mdp3.truth.json")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    truth = json.load(open(p("mdp3.truth.json")))
    header, frames = pcap_edit.read(p("mdp3.pcap"))
    got, warnings = replay(tool, p("mdp3.pcap"))
    exact(truth, got)
    assert not warnings, warnings
    a = [i for i, f in enumerate(frames) if f.udp is not None and f.dst == MDP3_INCR_A]
    b = {mdp3_seq(frames[i].payload): i for i, f in enumerate(frames)
         if f.udp is not None and f.dst == MDP3_INCR_B}
    at = offsets(frames)

    # A gap filled later: A's copy of packet k lost, B's copy of k after A's next 30 (the wait
    # set to 1 ms: the default 20 us is shorter than 30 packets of the simulator's). In time
    # order, those 30 came first.
    k = a[len(a) // 2]
    seq = mdp3_seq(frames[k].payload)
    after = a[a.index(k) + 30]
    assert timestamp(frames[after]) - timestamp(frames[b[seq]]) < 1000000
    moved = pcap_edit.Frame(frames[after].ts_sec, frames[after].ts_frac, bytes(frames[b[seq]].data))
    edited = [f for i, f in enumerate(frames) if i not in (k, b[seq])]
    edited.insert(edited.index(frames[after]) + 1, moved)
    got, warnings = replay(tool, write(p("mdp3-late.pcap"), header, edited), "--gap-wait-ms", "1")
    exact(truth, got)
    c = got["counters"]
    assert c["mdp3"]["rpt_seq_gaps"] == 0 and c["gaps_given_up"] == 0, c
    assert not warnings, warnings
    print("mdp3 gap filled later by line B: books exact, none stale")

    # A forged jump on line A: MsgSeqNum +5000, carrying the messages of a packet 40 later.
    k = a[len(a) // 3]
    seq = mdp3_seq(frames[k].payload)
    later = frames[a[a.index(k) + 40]].payload
    edited = list(frames)
    edited[k] = frames[k].with_payload(with_mdp3_seq(later, seq + 5000))
    got, warnings = replay(tool, write(p("mdp3-jump.pcap"), header, edited))
    exact(truth, got)
    assert got["counters"]["corrupt"] == 1, got["counters"]
    want = "packet %d (offset %d): MsgSeqNum %d dropped as implausible" % (k + 1, at[k], seq + 5000)
    assert any(want in w for w in warnings), (want, warnings)
    print("mdp3 forged jump on line A: %s" % warnings[0])

    # Line B's copy of a packet, after line A's, with the messages of a packet 40 later.
    k = a[len(a) // 4]
    seq = mdp3_seq(frames[k].payload)
    later = frames[a[a.index(k) + 40]].payload
    assert b[seq] > k
    edited = list(frames)
    edited[b[seq]] = frames[b[seq]].with_payload(with_mdp3_seq(later, seq))
    got, warnings = replay(tool, write(p("mdp3-other.pcap"), header, edited))
    exact(truth, got)
    assert got["counters"]["mdp3"]["rpt_seq_gaps"] == 0 and not warnings, warnings
    print("mdp3 other payload on line B: the first copy won, books exact")

    # Lost on both lines: reported with the packet that gave the gap up.
    k = a[len(a) // 5]
    seq = mdp3_seq(frames[k].payload)
    edited = [f for i, f in enumerate(frames) if i not in (k, b[seq])]
    got, warnings = replay(tool, write(p("mdp3-lost.pcap"), header, edited))
    lost = [w for w in warnings if "packets [%d, %d) lost on every line" % (seq, seq + 1) in w]
    assert len(lost) == 1, warnings
    record = int(lost[0].split("(packet ")[1].split(",")[0])
    offset = int(lost[0].split("offset ")[1].split(")")[0])
    assert offsets(edited)[record - 1] == offset, (lost[0], offsets(edited)[record - 1])
    assert got["counters"]["gaps_given_up"] == 1, got["counters"]
    assert not unflagged(truth, got), unflagged(truth, got)
    print("mdp3 lost on both lines: %s" % lost[0])

    # --lines: the simulator's addresses named; without line B, its flow is skipped.
    got, warnings = replay(tool, p("mdp3.pcap"), "--lines", MDP3_LINES)
    exact(truth, got)
    assert got["counters"]["unmapped"] == 0, got["counters"]
    no_b = ",".join(x for x in MDP3_LINES.split(",") if not x.startswith("incr-b"))
    got, warnings = replay(tool, p("mdp3-late.pcap"), "--lines", no_b, "--gap-wait-ms", "1")
    assert got["counters"]["unmapped"] == len(b), got["counters"]
    assert got["counters"]["gaps_given_up"] == 1 and not unflagged(truth, got), got["counters"]
    swapped = MDP3_LINES.replace("incr-a=", "X").replace("incr-b=", "incr-a=").replace(
        "X", "incr-b=")
    got, warnings = replay(tool, p("mdp3-late.pcap"), "--lines", swapped, "--gap-wait-ms", "1")
    exact(truth, got)
    for bad in ("incr-c=224.0.25.1:17901", "incr-a=224.0.25.1", "incr-a=224.0.25.300:1",
                "incr-a=224.0.25.1:17901,incr-a=224.0.25.9:18901"):
        out = replay(tool, p("mdp3.pcap"), "--lines", bad, check=False)
        assert out.returncode != 0 and "--lines" in out.stderr, (bad, out.stderr)
    print("mdp3 --lines: named lines exact, line B left out skipped (%d packets), bad maps "
          "refused" % len(b))


def mdp3_order_audit(sim, tool, p):
    # The capture of books_replay_vs_sim whose three order-only packets were lost on both lines.
    subprocess.run([sim, "mdp3", "--seed", "13", "--symbols", "30", "--messages", "15000",
                    "--both-loss", "0.02", "--pcap", p("mdp3loss.pcap"), "--truth",
                    p("mdp3loss.truth.json")], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    truth = json.load(open(p("mdp3loss.truth.json")))
    got, warnings = replay(tool, p("mdp3loss.pcap"))
    assert got["counters"]["mdp3"]["order_snapshot_mismatch"] == 3, got["counters"]["mdp3"]
    audit = [w for w in warnings if "order-level snapshot (53)" in w]
    assert audit and all("LastMsgSeqNumProcessed" in w and "RptSeq" not in w and
                         " (offset " in w for w in audit), audit
    assert not unflagged(truth, got, keys=("status",)), unflagged(truth, got, keys=("status",))
    print("mdp3 order-level audit: %s" % audit[0])


def eobi(sim, tool, p):
    subprocess.run([sim, "eobi", "--seed", "11", "--symbols", "24", "--messages", "30000",
                    "--segments", "3", "--snapshot-every", "150", "--depth", "10", "--pcap",
                    p("eobi.pcap"), "--truth", p("eobi.truth.json")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    truth = json.load(open(p("eobi.truth.json")))
    header, frames = pcap_edit.read(p("eobi.pcap"))
    line_a = next(f.dst for f in frames if f.udp is not None)
    a = [i for i, f in enumerate(frames) if f.udp is not None and f.dst == line_a and
         struct.unpack_from("<Q", f.payload, 8)[0] > 1]
    k = a[len(a) // 2]
    payload = bytearray(frames[k].payload)
    seq = struct.unpack_from("<Q", payload, 8)[0]
    segment = struct.unpack_from("<i", payload, 16)[0]
    struct.pack_into("<Q", payload, 8, seq + 5000)
    edited = list(frames)
    edited[k] = frames[k].with_payload(bytes(payload))
    got, warnings = replay(tool, write(p("eobi-jump.pcap"), header, edited), "--venue", "eobi")
    # A lone jump is dropped as the arbiter drops one (implausible), and line B's copy of the
    # packet keeps the segment whole: no gap, every book right and healthy.
    want = ("packet %d (offset %d): market segment %d ApplSeqNum %d dropped as implausible" %
            (k + 1, offsets(frames)[k], segment, seq + 5000))
    assert any(want in w for w in warnings), (want, warnings)
    counters = got["counters"]["eobi"]
    assert counters["implausible"] == 1 and counters["gaps"] == 0, counters
    by_symbol = {i["symbol"]: i for i in got["instruments"]}
    for t in truth["instruments"]:
        g = by_symbol[str(t["security_id"])]
        assert not g["stale"], t["security_id"]
        for side in ("bids", "asks"):
            assert [(l["price9"], l["qty"], l["orders"]) for l in t[side]] == \
                [(l["price9"], l["qty"], l["orders"]) for l in g[side]], t["security_id"]
    print("eobi forged jump on line A: %s" % want)


def main():
    sim, tool, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    p = lambda name: os.path.join(work, name)
    mdp3(sim, tool, p)
    mdp3_order_audit(sim, tool, p)
    eobi(sim, tool, p)
    print("PASS replay_arbitration")


main()
