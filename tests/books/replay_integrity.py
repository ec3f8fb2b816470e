#!/usr/bin/env python3
"""tickplane-replay on hostile ITCH captures: never a book that differs from the simulator's truth
while it says it is fine, and every sequence jump, gap and session change reported on stderr
with the packet's number.

  forged sessions   two packets of another MoldUDP64 session (one on each line, valid
                    checksums) in the middle of the day: dropped as corrupt, books exact
  sequence jump     one packet of line A with its sequence moved +5000 and +2^40: dropped and
                    reported, line B's copy fills it, books exact; on a capture of line A alone
                    its messages are lost: reported, books flagged stale, the rest applied
  late start        the capture cut after 40% of the day: reported ("books are incomplete"),
                    every book the replay has flagged stale
usage: replay_integrity.py SIM REPLAY WORKDIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import pcap_edit  # noqa: E402
from replay_vs_sim import compare  # noqa: E402


def replay(tool, path):
    out = subprocess.run([tool, "--depth", "10", "--instruments", "256", "--orders", "65536",
                          "--levels", "128", path], capture_output=True, text=True, timeout=60,
                         check=True)
    # stderr: the warnings (its JSON run lines are left out)
    return json.loads(out.stdout), "\n".join(
        l for l in out.stderr.splitlines() if l.startswith("tickplane-replay:"))


def unflagged_mismatches(truth, got):
    """Instruments whose book differs from the truth without the stale flag."""
    by_symbol = {i["symbol"].rstrip(): i for i in got["instruments"]}
    bad = []
    for t in truth["instruments"]:
        g = by_symbol.get(t["symbol"])
        if g is None or g["stale"]:
            continue
        try:
            compare({"instruments": [t]}, {"instruments": [g]})
        except AssertionError as e:
            bad.append(str(e))
    return bad


def mold_frames(frames):
    return [i for i, f in enumerate(frames) if f.udp is not None and len(f.payload) >= 20]


def main():
    sim, tool, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    p = lambda name: os.path.join(work, name)
    subprocess.run([sim, "itch", "--seed", "21", "--symbols", "20", "--messages", "20000",
                    "--pcap", p("day.pcap"), "--truth", p("truth.json")], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    truth = json.load(open(p("truth.json")))
    header, frames = pcap_edit.read(p("day.pcap"))
    mold = mold_frames(frames)
    line_a = frames[mold[0]].dst
    got, err = replay(tool, p("day.pcap"))
    assert compare(truth, got) == 20 and not err, err

    # Forged sessions: one packet on each line, half way through the day.
    mid = mold[len(mold) // 2]
    a = next(i for i in mold[mold.index(mid):] if frames[i].dst == line_a)
    b = next(i for i in mold[mold.index(mid):] if frames[i].dst != line_a)
    forged = [frames[a].with_payload(pcap_edit.mold_with(frames[a].payload, b"FORGED0001", 1)),
              frames[b].with_payload(pcap_edit.mold_with(frames[b].payload, b"FORGED0001", 1))]
    edited = frames[:mid] + forged + frames[mid:]
    pcap_edit.write(p("forged.pcap"), header, edited)
    got, err = replay(tool, p("forged.pcap"))
    c = got["counters"]
    assert c["corrupt"] == 2 and c["sessions"] == 0, c
    assert compare(truth, got) == 20, "forged sessions changed the books"
    assert "FORGED0001" in err and "packet %d" % (mid + 1) in err, err
    print("forged sessions: both dropped as corrupt, books exact; stderr: %s" %
          err.strip().splitlines()[0])

    # A sequence jump on line A (+5000, then +2^40 on another packet): line B fills both.
    j1, j2 = [i for i in mold if frames[i].dst == line_a][100:102]
    edited = list(frames)
    for i, jump in ((j1, 5000), (j2, 1 << 40)):
        session, seq, _ = pcap_edit.mold_sequence(frames[i].payload)
        edited[i] = frames[i].with_payload(pcap_edit.mold_with(frames[i].payload,
                                                               sequence=seq + jump))
    pcap_edit.write(p("jump.pcap"), header, edited)
    got, err = replay(tool, p("jump.pcap"))
    assert got["counters"]["corrupt"] == 2, got["counters"]
    assert compare(truth, got) == 20, "a sequence jump changed the books"
    assert "packet %d " % (j1 + 1) in err and "packet %d " % (j2 + 1) in err, err
    print("sequence jumps on one line: reported (%s), books exact" %
          err.strip().splitlines()[0])

    # The same jump with line A alone: its messages are lost for good.
    only_a = [f for i, f in enumerate(edited) if f.udp is None or i not in mold or
              f.dst == line_a]
    pcap_edit.write(p("jump-a.pcap"), header, only_a)
    got, err = replay(tool, p("jump-a.pcap"))
    c = got["counters"]
    assert c["gaps_given_up"] >= 1 and c["stale_marks"] >= 1, c
    stale = sum(1 for i in got["instruments"] if i["stale"])
    assert stale > 0, "messages lost and no book flagged"
    bad = unflagged_mismatches(truth, got)
    assert not bad, bad
    assert "lost on every line" in err, err
    print("sequence jump on the only line: %d books flagged stale, none wrong unflagged" % stale)

    # A capture that starts mid-session.
    cut = mold[int(len(mold) * 0.4)]
    pcap_edit.write(p("late.pcap"), header, frames[cut:])
    got, err = replay(tool, p("late.pcap"))
    assert "books are incomplete" in err, err
    assert not unflagged_mismatches(truth, got)
    assert all(i["stale"] for i in got["instruments"]), got["instruments"][:1]
    # The stock directory came before the cut: what follows names instruments never defined.
    assert got["counters"]["itch"]["unknown_instrument"] > 0, got["counters"]
    print("late start: reported (%s), %d instruments known" %
          ([l for l in err.splitlines() if "incomplete" in l][0], len(got["instruments"])))
    print("PASS replay_integrity")


main()
