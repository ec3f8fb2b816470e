#!/usr/bin/env python3
"""Integration test: tickplane-replay on a capture that starts mid-session.

Without a snapshot it says so on stderr (the first sequence, "books are incomplete") and its
messages find no instrument (the stock directory came before); with --snapshot (the simulator's
recorded GLIMPSE session, taken 1000 messages after the capture's first) its books equal the
simulator's truth at the end, none stale. A snapshot taken before the capture's first message
leaves a hole: every book stale. A recorded session that is cut is refused with a reason.
usage: replay_snapshot.py SIM REPLAY WORKDIR
"""
import json
import os
import re
import subprocess
import sys

SIM, REPLAY, WORKDIR = sys.argv[1:4]
os.makedirs(WORKDIR, exist_ok=True)
PCAP, TRUTH, REPORT = (os.path.join(WORKDIR, n) for n in ("late.pcap", "truth.json", "report.json"))
BASE = [SIM, "itch", "--seed", "5", "--symbols", "30", "--messages", "20000", "--pcap", PCAP,
        "--no-line-b", "--late-join-a", "2500", "--truth", TRUTH, "--report", REPORT]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def sim(*extra):
    subprocess.run(BASE + list(extra), check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(REPORT) as f:
        return json.load(f)


def replay(*extra, check=True):
    p = subprocess.run([REPLAY, "--depth", "10", "--instruments", "256", "--orders", "65536",
                        *extra, PCAP], capture_output=True, text=True, timeout=60)
    if check and p.returncode != 0:
        fail("replay %s: exit %d: %s" % (extra, p.returncode, p.stderr))
    return p


def levels(side):
    return [(l["price9"], l["qty"], l["orders"]) for l in side]


joined = sim()["lines"]["A"]["joined_at_seq"]
if joined < 1000:
    fail("the capture starts at %d: not mid-session" % joined)

p = replay()
books = json.loads(p.stdout)
# The first packet alone is taken as an implausible jump (as the daemon does) until the next
# confirms it: the capture is reported to start at one of its first packets' sequences.
start = re.search(r"the capture starts at sequence (\d+)", p.stderr)
if start is None or "books are incomplete" not in p.stderr or \
        not joined <= int(start.group(1)) < joined + 100:
    fail("no warning on stderr: %s" % p.stderr)
if books["counters"]["itch"]["unknown_instrument"] == 0:
    fail("a capture without its stock directory should leave messages unknown")
if any(not i["stale"] for i in books["instruments"]):
    fail("a book of an incomplete capture is not flagged stale")

good = os.path.join(WORKDIR, "good.glimpse")
next_seq = sim("--glimpse-at", str(joined + 1000), "--glimpse-file", good)["glimpse"]["next_seq"]
p = replay("--snapshot", good)
books = json.loads(p.stdout)
if "incomplete" in p.stderr or "stale" in p.stderr:
    fail("with the snapshot the books should be complete: %s" % p.stderr)
if books["snapshot"]["next_seq"] != next_seq or books["snapshot"]["messages"] < 3 * 30:  # R, H, Y for each of the 30 symbols at least
    fail("snapshot %s: next_seq %d" % (books["snapshot"], next_seq))
with open(TRUTH) as f:
    truth = {i["symbol"].strip(): i for i in json.load(f)["instruments"]}
got = {i["symbol"].strip(): i for i in books["instruments"]}
if set(got) != set(truth):
    fail("instruments differ: %s" % sorted(set(truth) ^ set(got)))
bad = [s for s in truth for side in ("bids", "asks")
       if levels(truth[s][side]) != levels(got[s][side]) or got[s]["stale"]]
if bad or books["counters"]["itch"]["unknown_instrument"] or books["counters"]["itch"]["rejected"]:
    fail("books differ from the truth: %s, counters %s" % (bad[:5], books["counters"]["itch"]))

early = os.path.join(WORKDIR, "early.glimpse")
sim("--glimpse-at", str(joined - 500), "--glimpse-file", early)
p = replay("--snapshot", early)
books = json.loads(p.stdout)
if not books["instruments"] or not all(i["stale"] for i in books["instruments"]):
    fail("a snapshot older than the capture leaves a hole: the books must be stale")
if "books flagged stale" not in p.stderr:
    fail("the hole is not reported: %s" % p.stderr)

cut = os.path.join(WORKDIR, "cut.glimpse")
with open(good, "rb") as f, open(cut, "wb") as g:
    g.write(f.read()[:-40])  # the 'G' packet and some before it gone
p = replay("--snapshot", cut, check=False)
if p.returncode == 0 or "--snapshot" not in p.stderr:
    fail("a cut snapshot should be refused with a reason: %d %s" % (p.returncode, p.stderr))
print("replay snapshot: joined at %d, snapshot at %d, %d instruments equal the truth"
      % (joined, next_seq, len(truth)))
