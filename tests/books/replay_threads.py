#!/usr/bin/env python3
"""tickplane-replay --threads N gives what one thread gives, byte for byte.

For --threads 1, 2 and 3: the books JSON, the warnings on stderr and the event file (--events,
with and without a selection) must be equal, on
  - the simulator's 5 M-message ITCH day (2000 symbols, seed 3) as a BinaryFILE, its event file
    compared by digest (written to a pipe: 0.8 GB);
  - a smaller ITCH day as MoldUDP64 in a pcap, and that capture made hostile (line A alone with a
    sequence jump: gaps given up, books flagged stale; a forged session; a late start);
  - an MDP3 capture with losses on both lines (snapshot recovery), which runs on one worker.
The summary line must say how many workers ran, so the split is known to have happened.
The only JSON fields allowed to differ are the recent-order windows' slots and spills
("recent_orders", "orders_spilled"): each worker's books have a window of their own, over the
order ids of their own instruments.
usage: replay_threads.py SIM REPLAY WORKDIR
"""
import hashlib
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import pcap_edit  # noqa: E402

WINDOW_FIELDS = re.compile(r'"(recent_orders|orders_spilled)":\d+')


def run_sim(sim, *args):
    subprocess.run([sim, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def replay(tool, path, threads, *extra, events=None):
    """(books JSON without the window fields, warnings, summary, event file digest)."""
    cmd = [tool, "--threads", str(threads), "--instruments", "4096", "--orders", "262144",
           "--levels", "256", *extra]
    if events == "pipe":
        cmd += ["--quiet", "--events", "/dev/stdout"]
    elif events:
        cmd += ["--events", events]
    out = subprocess.run(cmd + [path], capture_output=True, timeout=600, check=True)
    stderr = out.stderr.decode()
    warnings = [l for l in stderr.splitlines() if l.startswith("tickplane-replay:")]
    summary = json.loads([l for l in stderr.splitlines() if '"summary"' in l][0])
    if events == "pipe":
        return None, warnings, summary, hashlib.sha256(out.stdout).hexdigest()
    digest = hashlib.sha256(open(events, "rb").read()).hexdigest() if events else None
    return WINDOW_FIELDS.sub("", out.stdout.decode()), warnings, summary, digest


def same_for_threads(tool, path, workers, *extra, events=True, work=None, name=None):
    """Runs 1, 2, 3 threads; asserts equal output and the workers that ran (by threads)."""
    base = None
    for threads in (1, 2, 3):
        ev = "pipe" if events == "pipe" else (
            os.path.join(work, "%s.%d.tpe" % (name, threads)) if events else None)
        got = replay(tool, path, threads, *extra, events=ev)
        ran = got[2]["threads"]
        assert ran == workers(threads), "%s: --threads %d ran %d workers" % (path, threads, ran)
        if base is None:
            base = got
            continue
        assert got[0] == base[0], "%s: books differ with --threads %d" % (path, threads)
        assert got[1] == base[1], "%s: warnings differ with --threads %d:\n%s\n%s" % (
            path, threads, got[1], base[1])
        assert got[3] == base[3], "%s: event file differs with --threads %d" % (path, threads)
        if events and events != "pipe":
            assert got[2]["events_records"] == base[2]["events_records"]
    return base


def main():
    sim, tool, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    p = lambda name: os.path.join(work, name)
    split = lambda threads: threads
    one = lambda threads: 1

    # The 5 M-message day: books and warnings, then its event file through a pipe.
    run_sim(sim, "itch", "--seed", "3", "--symbols", "2000", "--messages", "5000000",
            "--binaryfile", p("day5m.bin"))
    books, _, summary, _ = same_for_threads(tool, p("day5m.bin"), split, events=False)
    assert summary["messages"] > 5000000 and summary["instruments"] == 2000, summary
    assert '"rejected":0' in books
    _, _, summary, digest = same_for_threads(tool, p("day5m.bin"), split, events="pipe")
    assert summary["events_records"] > 5000000, summary
    print("5 M-message day: books, warnings and event file (%d records, sha256 %s...) equal "
          "for 1, 2 and 3 threads" % (summary["events_records"], digest[:12]))

    # A selection: the end of each event moves to the last record kept, across workers.
    run_sim(sim, "itch", "--seed", "21", "--symbols", "40", "--messages", "60000",
            "--binaryfile", p("day.bin"), "--pcap", p("day.pcap"))
    same_for_threads(tool, p("day.bin"), split, "--symbols", "S*1*", "--topics", "depth,status",
                     work=work, name="select")
    same_for_threads(tool, p("day.pcap"), split, work=work, name="pcap")

    # Hostile pcaps: line A alone with a sequence jump (a gap given up, books flagged stale and
    # their stale records), a forged session, a late start.
    header, frames = pcap_edit.read(p("day.pcap"))
    mold = [i for i, f in enumerate(frames) if f.udp is not None and len(f.payload) >= 20]
    line_a = frames[mold[0]].dst
    edited = list(frames)
    j = [i for i in mold if frames[i].dst == line_a][300]
    _, seq, _ = pcap_edit.mold_sequence(frames[j].payload)
    edited[j] = frames[j].with_payload(pcap_edit.mold_with(frames[j].payload, sequence=seq + 5000))
    mid = mold[len(mold) // 2]
    edited.insert(mid, frames[mid].with_payload(
        pcap_edit.mold_with(frames[mid].payload, b"FORGED0001", 1)))
    only_a = [f for f in edited if f.udp is None or len(f.payload) < 20 or f.dst == line_a]
    pcap_edit.write(p("hostile.pcap"), header, only_a)
    books, warnings, _, _ = same_for_threads(tool, p("hostile.pcap"), split, work=work,
                                             name="hostile")
    assert any("lost on every line" in w for w in warnings), warnings
    assert '"stale":true' in books
    pcap_edit.write(p("late.pcap"), header, frames[mold[len(mold) // 3]:])
    books, warnings, _, _ = same_for_threads(tool, p("late.pcap"), one, work=work, name="late")
    assert any("books are incomplete" in w for w in warnings), warnings

    # MDP3 with losses on both lines: snapshot recovery; one worker, the same output.
    run_sim(sim, "mdp3", "--seed", "13", "--symbols", "30", "--messages", "15000",
            "--both-loss", "0.02", "--pcap", p("mdp3.pcap"))
    books, _, _, _ = same_for_threads(tool, p("mdp3.pcap"), one, work=work, name="mdp3")
    assert '"mdp3":{' in books and not re.search(r'"mdp3":\{[^}]*"snapshots":0,', books), \
        "no snapshot recovery in the MDP3 capture"
    print("PASS replay_threads")


main()
