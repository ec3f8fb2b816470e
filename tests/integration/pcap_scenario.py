#!/usr/bin/env python3
"""Integration scenarios on net_pcap: tickplane-sim writes a capture with faults and the ground
truth, the real tickplane daemon replays it through DPDK (net_pcap vdev, no hugepages), and
bus_consumer processes rebuild the books from the bus and compare them with the truth.

usage: pcap_scenario.py TICKPLANE SIM CONSUMER SCENARIO

Scenarios: mdp3_ab_faults, mdp3_both_loss, corrupt_truncated, itch_ab_faults,
consumers (attached before start, late joiner from the state table, one killed mid-run, and the
control socket), itch_session_reset and mdp3_sequence_reset (venue sequence restarts),
itch_forged_session (two packets of another session, one per line: never a new session),
mdp3_unseen_levels and mdp3_audit_always (a book that starts different from the venue's, found by
the snapshot audit at start, and with the snapshot lines kept all session),
mdp3_mbo_snapshot and mdp3_mbo_unconfigured (the order-level view after recovery from price-level
snapshots, with and without the MBO snapshot lines: equal to the truth order by order, or flagged).
Each checks the consumers' verdicts and the daemon's counters against the simulator's report.
"""
import grp
import json
import os
import re
import subprocess
import sys
import tempfile
import time

import pcap_edit
import tpit
from tpit import fail

TICKPLANE, SIM, CONSUMER, SCENARIO = sys.argv[1:5]

MDP3_CHANNEL = {
    "name": "cme", "protocol": "mdp3", "id": 310,
    "lines": {"a": {"group": "224.0.25.1", "port": 17901},
              "b": {"group": "224.0.25.9", "port": 18901}},
    "recovery": {"snapshot": {"a": {"group": "224.0.25.126", "port": 19901}},
                 "definitions": {"a": {"group": "224.0.25.126", "port": 16901}}},
}
ITCH_CHANNEL = tpit.itch_channel()




def config(workdir, instance, channel, gap_wait_us, recovery=None):
    # net_pcap replays as fast as it can, not at the capture's pace, on a machine shared with
    # builds: the gap window is chosen per scenario (long where line B is late by ~150 packets,
    # 1 s, the most the config takes, so that a data lcore off its core for a while still sees
    # B's copy in time; short where packets lost on both lines must be given up before the
    # capture ends); the pool
    # is large enough to hold every packet that waits behind a gap meanwhile.
    channel = dict(channel)
    channel["recovery"] = dict(channel.get("recovery", {}), gap_wait_us=gap_wait_us,
                               **(recovery or {}))
    cfg = tpit.base_config(instance, tpit.pcap_port("feed.pcap"), [channel])
    if CONTROL_CHECK:
        # Who may read the bus and reach the socket is the OS's decision: their groups.
        cfg["bus"]["group"] = cfg["control"]["group"] = OWNER_GROUP
    return tpit.write_config(cfg, os.path.join(workdir, "config.json"))


CONTROL_CHECK = SCENARIO == "consumers"
DAEMON_LOG = []  # the last run's event log (stderr)
OWNER_GROUP = "nogroup"


def control_check(path, instance):
    """The main lcore serves the control socket while the data lcore runs."""
    deadline = time.time() + 10
    while not os.path.exists(path) and time.time() < deadline:
        time.sleep(0.02)
    gid = grp.getgrnam(OWNER_GROUP).gr_gid
    ring = "/dev/shm/tickplane.%s.ring" % instance
    for f in (path, ring):
        if os.stat(f).st_gid != gid:
            fail("%s: group %d, the config says %s (%d)" % (f, os.stat(f).st_gid, OWNER_GROUP, gid))
    replies = tpit.control_session(path, ({"id": 1, "cmd": "status"}, {"id": 2, "cmd": "stats"},
                                          {"id": 3, "cmd": "instruments", "pattern": "*",
                                           "limit": 100}))
    if not all(r.get("ok") for r in replies):
        fail("control socket: %s" % replies)
    if replies[0]["channels"][0]["name"] != "cme" or "dp.rx_packets" not in replies[1]:
        fail("control socket status/stats: %s" % replies[:2])
    print("control socket: status, stats (%d counters), %d instruments" %
          (len(replies[1]) - 2, len(replies[2]["instruments"])))


def run(workdir, protocol, sim_args, consumers, seed=11, gap_wait_us=2000, edit=None,
        recovery=None, while_running=None, idle_exit_ms=2500):
    """Generates the capture (then edit(path), if given, rewrites it), starts the consumers,
    replays (while_running(control socket path), if given, meanwhile); returns (summary, report,
    verdicts)."""
    instance = tpit.instance_name("tpit")
    channel = MDP3_CHANNEL if protocol == "mdp3" else ITCH_CHANNEL
    cfg = config(workdir, instance, channel, gap_wait_us, recovery)
    pcap, truth, report = (os.path.join(workdir, n)
                           for n in ("feed.pcap", "truth.json", "report.json"))
    subprocess.run([SIM, protocol, "--pcap", pcap, "--truth", truth, "--report", report,
                    "--seed", str(seed), "--symbols", "20", "--messages", "20000"] + sim_args,
                   check=True, stdout=subprocess.DEVNULL)
    if edit is not None:
        edit(pcap)
    ready_files, procs = [], []

    # The daemon's exit (its idle exit, 2.5 s after the last packet) ends the consumers' runs;
    # their own quiet timers are a fallback far longer than any stall of a loaded machine.
    def consumer(i, extra):
        ready = os.path.join(workdir, "ready%d" % i)
        procs.append(subprocess.Popen(
            [CONSUMER, "--instance", instance, "--truth", truth, "--ready", ready,
             "--idle-ms", "20000", "--timeout-s", "50"] + extra,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        return ready

    # Consumers with "--late" attach mid-stream; the others before the first packet.
    for i, extra in enumerate(consumers):
        if "--late" not in extra:
            ready_files.append(consumer(i, extra))
    daemon = tpit.start_held(TICKPLANE, cfg, os.path.join(workdir, "start"), ready_files,
                             idle_exit_ms=idle_exit_ms)
    for i, extra in enumerate(consumers):
        if "--late" in extra:
            time.sleep(0.02)
            consumer(i, extra)
    if CONTROL_CHECK:
        control_check(os.path.join(workdir, "control.sock"), instance)
    if while_running:
        while_running(os.path.join(workdir, "control.sock"))
    summary = tpit.finish(daemon, log=DAEMON_LOG)
    verdicts = []
    for p in procs:
        o, e = p.communicate(timeout=55)
        verdicts.append((p.returncode, o.strip(), e.strip()))
    with open(report) as f:
        return summary, json.load(f), verdicts


def mismatch_in_stats(sock):
    """The channel's snapshot_mismatch counter, as tickplanectl stats and the Prometheus metrics
    show it, reaches 1."""
    tpit.wait_for("the control socket", lambda: os.path.exists(sock), 30)
    name = "channel=cme.decode.snapshot_mismatch"
    stats = {}

    def counted():
        try:
            stats.update(tpit.control(sock, {"id": 1, "cmd": "stats"}))
        except ConnectionRefusedError:  # bound, not listening yet
            return False
        return stats.get(name) == 1
    tpit.wait_for("%s to be 1 (last: %s)" % (name, stats.get(name)), counted, 30)
    metrics = tpit.control(sock, {"id": 2, "cmd": "metrics"})["metrics"]
    if not re.search(r'^tickplane_decode_snapshot_mismatch_total\{channel="cme"[^}]*\} 1$',
                     metrics, re.M):
        fail("prometheus metrics lack the mismatch: %s" %
             [m for m in metrics.splitlines() if "snapshot" in m])
    print("stats: %s %d, %s %d" % (name, stats[name], "channel=cme.decode.snapshots_audited",
                                   stats["channel=cme.decode.snapshots_audited"]))


def seqs(line_report, fault):
    return {x["seq"] for x in line_report[fault]}


def lost_seqs(line_report):
    return seqs(line_report, "lost")


def check_consumers(verdicts, expect_killed=(), stale=0):
    for i, (rc, out, err) in enumerate(verdicts):
        if i in expect_killed:
            if rc != -9:
                fail("consumer %d should have been killed, exit %s" % (i, rc))
            continue
        if rc != 0:
            fail("consumer %d: exit %d %s\n%s" % (i, rc, out, err[:2000]))
        if json.loads(out)["stale"] != stale:
            fail("consumer %d saw %s stale books, expected %d" % (i, out, stale))
        print("consumer %d: %s" % (i, out))


def check_line_counters(summary, report, protocol):
    ch = summary["channels"][0]
    lines = {d["line"]: d for d in ch["detail"] if "line" in d}
    ra, rb = report["lines"]["A"], report["lines"]["B"]
    if protocol == "mdp3":
        for name, rl in (("a", ra), ("b", rb)):
            if lines[name]["packets"] != rl["sent"]:
                fail("line %s: daemon saw %d packets, simulator sent %d" %
                     (name, lines[name]["packets"], rl["sent"]))
    delivered = lines["a"]["delivered"] + lines["b"]["delivered"]
    dups = lines["a"]["duplicates"] + lines["b"]["duplicates"]
    both = (lost_seqs(ra) & lost_seqs(rb)) | seqs(ra, "both_lost")
    if protocol == "mdp3":
        source = report["mdp3"]["incremental_packets"]
        if delivered + ch["skipped_msgs"] != source:
            fail("delivered %d + skipped %d != %d incremental packets" %
                 (delivered, ch["skipped_msgs"], source))
        if ch["skipped_msgs"] != len(both):
            fail("skipped %d packets, but %d were lost on both lines" %
                 (ch["skipped_msgs"], len(both)))
        if dups != lines["a"]["packets"] + lines["b"]["packets"] - delivered:
            fail("duplicates %d do not account for every extra copy" % dups)
    print("counters: delivered %d, duplicates %d, gaps %d, filled %d, skipped %d (lost on both: %d)"
          % (delivered, dups, ch["gaps"], ch["gap_filled"], ch["skipped_msgs"], len(both)))
    return ch


def main():
    with tempfile.TemporaryDirectory(prefix="tpit-") as workdir:
        if SCENARIO == "mdp3_ab_faults":
            faults = ["--loss-a", "0.01", "--loss-b", "0.01", "--reorder-a", "0.01",
                      "--reorder-b", "0.01", "--duplicate-a", "0.01", "--duplicate-b", "0.01"]
            # Seed 12: no packet lost on both lines (that is the next scenario).
            summary, report, verdicts = run(workdir, "mdp3", faults, [[]], seed=12,
                                            gap_wait_us=1000000)
            check_consumers(verdicts)
            ch = check_line_counters(summary, report, "mdp3")
            if ch["skipped_msgs"] != 0:
                fail("packets given up although every one reached a line")
            if ch["gap_filled"] == 0:
                fail("no gap was filled by the other line: the faults did not bite")
        elif SCENARIO == "mdp3_both_loss":
            faults = ["--both-loss", "0.004", "--snapshot-every", "20"]
            summary, report, verdicts = run(workdir, "mdp3", faults, [[]])
            rec = summary["channels"][0]["detail"][0]
            # Instruments hit after the last snapshot stay flagged stale; every other book is
            # compared with the truth.
            check_consumers(verdicts, stale=rec["stale_events"] - rec["instruments_recovered"])
            ch = check_line_counters(summary, report, "mdp3")
            if ch["skipped_msgs"] == 0 or rec["stale_events"] == 0:
                fail("no unrecoverable gap: nothing exercised snapshot recovery")
            if rec["instruments_recovered"] == 0:
                fail("%d instruments went stale, none recovered" % rec["stale_events"])
            print("snapshot recovery: %d stale, %d recovered, %d replayed" %
                  (rec["stale_events"], rec["instruments_recovered"], rec["replayed"]))
        elif SCENARIO == "corrupt_truncated":
            # Line A is cut short now and then, line B corrupted and late (so its copies lose to
            # A's). Truncation is caught by the framing checks and B's copy fills in. The
            # simulator corrupts after computing the UDP checksum, so every corrupt copy on B is
            # dropped by the classifier's checksum check (classify bad_checksum), never reaching
            # the framing checks: malformed counts exactly the truncated packets. (A packet hit
            # by both faults would be lost on both lines: checked below on the report.)
            faults = ["--truncate-a", "0.02", "--corrupt-b", "0.005", "--delay-b", "200000"]
            summary, report, verdicts = run(workdir, "itch", faults, [[]], gap_wait_us=1000000)
            ra, rb = report["lines"]["A"], report["lines"]["B"]
            if seqs(ra, "truncated") & seqs(rb, "corrupted"):
                fail("scenario invalid: a packet truncated on A and corrupted on B")
            check_consumers(verdicts)
            ch = summary["channels"][0]
            truncated, corrupted = len(ra["truncated"]), len(rb["corrupted"])
            if truncated == 0 or ch["malformed"] != truncated:
                fail("malformed %d != %d truncated packets" % (ch["malformed"], truncated))
            bad_checksum = summary["classify"]["bad_checksum"]
            if corrupted == 0 or bad_checksum != corrupted:
                fail("bad_checksum %d != %d corrupted packets" % (bad_checksum, corrupted))
            print("malformed counted: %d (truncated %d); bad_checksum %d (corrupted %d)" %
                  (ch["malformed"], truncated, bad_checksum, corrupted))
        elif SCENARIO == "itch_ab_faults":
            # No re-request server in a capture: line B never loses (the live af_packet test
            # covers losses on both lines with re-requests).
            faults = ["--loss-a", "0.02", "--reorder-a", "0.01", "--reorder-b", "0.01",
                      "--duplicate-a", "0.01", "--duplicate-b", "0.01"]
            summary, report, verdicts = run(workdir, "itch", faults, [[]], gap_wait_us=1000000)
            check_consumers(verdicts)
            check_line_counters(summary, report, "itch")
            # The order-level books hold exactly the simulator's live orders, none refused.
            books = summary["lcores"][0]["books"]
            if books["live_orders"] != report["live_orders"] or report["live_orders"] == 0:
                fail("books hold %d live orders, the simulator %d" %
                     (books["live_orders"], report["live_orders"]))
            if books["peak_live_orders"] < books["live_orders"] or books["order_capacity"] or \
                    books["level_capacity"]:
                fail("books totals inconsistent: %s" % books)
            print("books: %s; simulator: %d live orders" % (books, report["live_orders"]))
        elif SCENARIO == "consumers":
            # Before start; a late joiner (state table, after the first events); one killed.
            summary, report, verdicts = run(workdir, "mdp3", ["--loss-a", "0.01"],
                                            [[], ["--die-after", "2000"], ["--late"]])
            check_consumers(verdicts, expect_killed=(1,))
        elif SCENARIO == "itch_forged_session":
            # Two packets of another MoldUDP64 session, one on each line with valid checksums,
            # half way through the day: dropped as corrupt, never taken as a new session.
            def forge(path):
                header, frames = pcap_edit.read(path)
                mold = [i for i, f in enumerate(frames) if f.udp is not None]
                mid, line_a = mold[len(mold) // 2], frames[mold[0]].dst
                a = next(i for i in mold if i >= mid and frames[i].dst == line_a)
                b = next(i for i in mold if i >= mid and frames[i].dst != line_a)
                forged = [frames[i].with_payload(pcap_edit.mold_with(frames[i].payload,
                                                                     b"FORGED0001", 1))
                          for i in (a, b)]
                pcap_edit.write(path, header, frames[:mid] + forged + frames[mid:])
            summary, report, verdicts = run(workdir, "itch", [], [[]], gap_wait_us=1000000,
                                            edit=forge)
            check_consumers(verdicts)
            ch = summary["channels"][0]
            lines = {d["line"]: d for d in ch["detail"] if "line" in d}
            if ch["resets"] != 0 or lines["a"]["corrupt"] + lines["b"]["corrupt"] != 2:
                fail("forged packets: resets %d, corrupt %d/%d" %
                     (ch["resets"], lines["a"]["corrupt"], lines["b"]["corrupt"]))
            print("forged session: both packets dropped as corrupt, books equal the truth")
        elif SCENARIO in ("itch_session_reset", "mdp3_sequence_reset"):
            # The venue restarts its sequence mid-stream (ITCH: a new MoldUDP64 session from
            # sequence 1; MDP3: ChannelReset4 with MsgSeqNum 1), with losses on line A.
            protocol = "itch" if SCENARIO.startswith("itch") else "mdp3"
            faults = ["--seq-reset-at", "10000", "--loss-a", "0.01"]
            summary, report, verdicts = run(workdir, protocol, faults, [[]], seed=12,
                                            gap_wait_us=1000000)
            check_consumers(verdicts)
            ch = summary["channels"][0]
            if ch["resets"] != 1:
                fail("%d resets seen, the simulator made one" % ch["resets"])
            print("resets: %d" % ch["resets"])
        elif SCENARIO in ("mdp3_unseen_levels", "mdp3_audit_always"):
            # Instrument 0's opening statistics and first 5 events (levels, trades) are not in
            # the capture: the book the daemon builds from the rest is in sync by RptSeq but
            # lacks their levels (on today's code it ended the session wrong and healthy). Its
            # first snapshot at the book's RptSeq shows the difference: adopted, counted once.
            # A short session: the levels those events left are still in the final books.
            always = SCENARIO == "mdp3_audit_always"
            summary, report, verdicts = run(
                workdir, "mdp3", ["--unseen-levels", "0:5", "--messages", "400"], [[]],
                seed=12, gap_wait_us=50000, recovery={"audit_always": True} if always else None,
                while_running=mismatch_in_stats, idle_exit_ms=10000)
            check_consumers(verdicts)
            # Flagged in the event stream while the snapshot replaced it, healthy at the end.
            if json.loads(verdicts[0][1])["flagged"] != 1:
                fail("the consumer saw %s flagged, expected the one book" % verdicts[0][1])
            rec = summary["channels"][0]["detail"][0]
            if report["mdp3"]["unseen"]["events"] != 5:
                fail("the simulator hid %s" % report["mdp3"]["unseen"])
            if rec["snapshot_mismatch"] != 1 or rec["rpt_seq_gaps"] != 0:
                fail("snapshot_mismatch %d, rpt_seq_gaps %d: expected 1 and 0" %
                     (rec["snapshot_mismatch"], rec["rpt_seq_gaps"]))
            if rec["stale_events"] != 1 or rec["instruments_recovered"] != 1:
                fail("the mismatched book was not flagged and recovered once: %s" % rec)
            # Joined at start: the daemon leaves the snapshot lines after a cycle, unless it
            # audits all session (then it takes every snapshot packet the simulator sent).
            sent = report["mdp3"]["snapshot_packets"]
            if (rec["snapshot_packets"] == sent) != always:
                fail("%d of %d snapshot packets taken (audit_always %s)" %
                     (rec["snapshot_packets"], sent, always))
            # One event-log line for it, with the channel and the count.
            line = re.search(r" warning books: snapshot mismatch: channel cme: 1 books differed "
                             r"from the venue's snapshot at their sequence, replaced by it \(1 in "
                             r"all\)$", DAEMON_LOG[-1], re.M)
            if line is None:
                fail("no snapshot mismatch line in the event log:\n" + DAEMON_LOG[-1][-3000:])
            print("audit: %d snapshots audited, %d mismatch; %d of %d snapshot packets" %
                  (rec["snapshots_audited"], rec["snapshot_mismatch"], rec["snapshot_packets"],
                   sent))
        elif SCENARIO in ("mdp3_mbo_snapshot", "mdp3_mbo_unconfigured"):
            # Packets lost on both lines: instruments go stale and recover from price-level
            # snapshots (52), which empty their order books. With the MBO snapshot lines the
            # channel stays on the snapshot lines until each book's 53 refilled it, and the order
            # view the consumer builds from the ring equals the truth order by order (those still
            # waiting say so: ordersIncomplete). Without them no order view can be vouched for:
            # every one is flagged, and the price levels are checked as always.
            mbo = SCENARIO == "mdp3_mbo_snapshot"
            faults = ["--both-loss", "0.004", "--loss-a", "0.01", "--loss-b", "0.01",
                      "--snapshot-every", "20"]
            lines = {"snapshot_mbo": {"a": {"group": "224.0.25.227", "port": 21901}}}
            # A short gap window: a 53 whose LastMsgSeqNumProcessed is past the incrementals
            # applied (held behind a gap meanwhile) waits for the next cycle.
            summary, report, verdicts = run(workdir, "mdp3", faults, [["--orders"]],
                                            gap_wait_us=200, recovery=lines if mbo else None)
            rec = summary["channels"][0]["detail"][0]
            check_consumers(verdicts, stale=rec["stale_events"] - rec["instruments_recovered"])
            v = json.loads(verdicts[0][1])
            if rec["stale_events"] == 0 or rec["instruments_recovered"] == 0:
                fail("nothing went stale and recovered: the faults did not bite: %s" % rec)
            if v["order_mismatches"] != 0:
                fail("order views differ from the truth unflagged: %s" % v)
            unflagged = v["instruments"] - v["stale"]
            if mbo:
                # Flagged at definition, then again when a 52 emptied a view a 53 had filled.
                if rec["orders_incomplete_marks"] <= v["instruments"]:
                    fail("order views flagged %d times: none refilled and emptied again: %s" %
                         (rec["orders_incomplete_marks"], rec))
                if v["orders_compared"] + v["orders_incomplete"] != unflagged or \
                        v["orders_compared"] == 0:
                    fail("%d of %d order views compared, %d flagged incomplete" %
                         (v["orders_compared"], unflagged, v["orders_incomplete"]))
                if rec["orders_incomplete"] != v["orders_incomplete"]:
                    fail("the daemon counts %d incomplete order views, the state table %d" %
                         (rec["orders_incomplete"], v["orders_incomplete"]))
            elif v["orders_incomplete"] != unflagged or v["orders_compared"] != 0:
                fail("without MBO snapshot lines %d of %d order views flagged: %s" %
                     (v["orders_incomplete"], unflagged, v))
            print("order views: %d compared equal, %d flagged incomplete, %d stale; %d marks; "
                  "%d stale events (%d refusals), %d recovered, %d replayed" %
                  (v["orders_compared"], v["orders_incomplete"], v["stale"],
                   rec["orders_incomplete_marks"], rec["stale_events"], rec["refusal_marks"],
                   rec["instruments_recovered"], rec["replayed"]))
        else:
            fail("unknown scenario " + SCENARIO)
    print("PASS " + SCENARIO)


main()
