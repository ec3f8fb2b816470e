#!/usr/bin/env python3
"""Live reload of the real daemon on net_af_packet over a veth pair: tickplane-sim sends
live multicast from a network namespace (ITCH on lines A/B with a MoldUDP64 re-request server,
MDP3 with its snapshot and definition lines), the daemon receives through DPDK's af_packet PMD,
and bus_consumer processes rebuild the books from the bus and compare them with the simulator's
ground truth, per venue.

usage: reload_live.py TICKPLANE SIM CONSUMER SCENARIO      (root; exit 77 without netns/veth)

Scenarios:
  added       starts with the ITCH channel only; mid-run the config file gains the MDP3 channel
              and the socket `reload` verb applies it; the MDP3 simulator starts sending only after
              the reply said ok. Both consumers' books equal the truth (the ITCH channel never
              stopped), the new channel's counters are exported (stats, Prometheus labels).
  removed     both channels run; once the MDP3 simulator is done, the file loses the MDP3 channel
              and SIGHUP applies it. The MDP3 consumer sees every MDP3 instrument flagged stale,
              MDP3 traffic sent afterwards is no longer classified (no_flow), its counters and
              status entry are gone; the ITCH books still equal the truth.
  changed     mid-run, the ITCH channel's settings change and the filter now excludes AAAB: the
              channel restarts (books cleared, sequence 1 again: every message is re-requested
              from the simulator's server), and at the end its books equal the truth again except
              AAAB, which stays stale (no longer fed).
  bad_config  mid-run, an invalid file (socket verb: the reply names the JSON path and the error)
              and an unparsable one (SIGHUP: the log says why) change nothing: status is the
              same, and the ITCH consumer's final books equal the truth.
"""
import json
import re
import os
import signal
import subprocess
import sys
import tempfile
import time

import tpit

TICKPLANE, SIM, CONSUMER, SCENARIO = sys.argv[1:5]
ID = os.getpid()
NS, DEV, SIMDEV = "tprl%d" % ID, "tprd%d" % ID, "tprs%d" % ID
INSTANCE = tpit.instance_name("tprl")
ITCH_SIM = ["itch", "--seed", "5", "--symbols", "20", "--messages", "16000"]
MDP3_SIM = ["mdp3", "--seed", "7", "--symbols", "10", "--messages", "4000"]

ITCH_CHANNEL = tpit.itch_channel(
    recovery={"rerequest": "10.81.0.1:9000", "gap_wait_us": 3000, "give_up_ms": 20000})
MDP3_CHANNEL = {
    "name": "cme", "protocol": "mdp3", "id": 310,
    "lines": {"a": {"group": "224.0.25.1", "port": 17901},
              "b": {"group": "224.0.25.9", "port": 18901}},
    "recovery": {"snapshot": {"a": {"group": "224.0.25.126", "port": 19901}},
                 "definitions": {"a": {"group": "224.0.25.126", "port": 16901}},
                 "gap_wait_us": 3000},
}

# The ITCH stream runs this long before the reload, so the reload lands mid-stream on a channel
# whose books must come through it untouched.
ITCH_HEAD_START = 3.0

work = tempfile.mkdtemp(prefix="tprl-")
procs = []


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    tpit.veth_cleanup(NS, DEV)
    for f in os.listdir("/dev/shm"):
        if f.startswith("tickplane.%s." % INSTANCE):
            os.unlink(os.path.join("/dev/shm", f))
    subprocess.run(["rm", "-rf", work])


def fail(msg):
    print("FAIL: " + msg)
    for name in sorted(os.listdir(work)):
        if name.endswith(".log") or name.endswith(".out"):
            with open(os.path.join(work, name), errors="replace") as f:
                print("== %s\n%s" % (name, "".join(f.readlines()[-15:])))
    cleanup()
    sys.exit(1)


def setup_network():
    # 10.81.0.0/24: each af_packet test its own subnet (afpacket_lib.sh), so that they may run
    # side by side.
    tpit.veth_setup(NS, DEV, SIMDEV, "10.81.0")


CONFIG = os.path.join(work, "config.json")
DONE = os.path.join(work, "done")


def write_config(channels, path=CONFIG, exclude=()):
    # A deep af_packet ring: on a loaded machine the data lcore shares its core, and frames
    # arriving while it is off the cpu wait there instead of being dropped.
    port = {"name": "veth", "vdev": "net_af_packet%d,iface=%s,framecnt=16384" % (ID, DEV),
            "mbuf_pool_size": 16383}
    cfg = tpit.base_config(INSTANCE, port, channels)
    cfg["instruments"]["exclude"] = list(exclude)
    tpit.write_config(cfg, path)


def truth(args, name):
    path = os.path.join(work, name)
    out = ["--binaryfile", "/dev/null"] if args[0] == "itch" else ["--pcap", "/dev/null"]
    subprocess.run([SIM] + args + ["--truth", path, "--report", path + ".report"] + out,
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return path


def wait_itch_applied():
    """Until the ITCH channel applied the whole day (the simulator's message count): on a loaded
    machine the data lcore may still be catching up (re-requests) when the simulator is done.
    The bound is generous; a channel that gave a gap up never gets there, and its books say so
    (stale), which the consumers' verdict reports."""
    with open(os.path.join(work, "itch.truth.report")) as f:
        day = json.load(f)["binaryfile_messages"]
    deadline = time.time() + 90
    while time.time() < deadline:
        st = stats()
        if st.get("channel=itch.feed.messages", 0) >= day or st.get("channel=itch.mold.given_up"):
            return
        time.sleep(0.2)
    fail("the ITCH channel applied %d of the day's %d messages in 90 s" %
         (stats().get("channel=itch.feed.messages", 0), day))


def start_sim(args, name, rate, extra=()):
    log = open(os.path.join(work, name + ".log"), "w")
    p = subprocess.Popen(["ip", "netns", "exec", NS, SIM] + args +
                         ["--live", "--iface", SIMDEV, "--rate", str(rate)] + list(extra),
                         stdout=log, stderr=subprocess.STDOUT)
    procs.append(p)
    return p


def wait_sim(p, what):
    try:
        rc = p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        fail(what + " simulator did not finish")
    if rc != 0:
        fail("%s simulator exit %d" % (what, rc))


def start_consumer(truth_path, venue, name):
    p = subprocess.Popen([CONSUMER, "--instance", INSTANCE, "--truth", truth_path, "--venue", venue,
                          "--ready", os.path.join(work, name + ".ready"), "--idle-ms", "1500",
                          "--until", DONE, "--timeout-s", "90"],
                         stdout=open(os.path.join(work, name + ".out"), "w"),
                         stderr=open(os.path.join(work, name + ".log"), "w"))
    procs.append(p)
    return p


def consumer_verdict(p, name):
    open(DONE, "w").close()  # the traffic is over
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        fail(name + " consumer did not finish")
    with open(os.path.join(work, name + ".out")) as f:
        lines = f.read().strip().splitlines()
    if not lines:
        fail(name + " consumer printed nothing (exit %d)" % p.returncode)
    v = json.loads(lines[0])
    v["exit"] = p.returncode
    print("%s consumer: %s" % (name, json.dumps(v)))
    return v


def control(request):
    return tpit.control(os.path.join(work, "control.sock"), request)


def not_taken(r):
    """The data lcore did not acknowledge in time (nothing changed): on a host whose cores are
    oversubscribed it can be off the cpu that long; an operator would reload again."""
    return not r["ok"] and any("did not take the change" in e for e in r["errors"])


def reload_verb():
    for attempt in range(2):
        reply = control({"id": 1, "cmd": "reload"})
        if not reply.get("ok") or "reload" not in reply:
            fail("reload verb: %s" % reply)
        if not not_taken(reply["reload"]) or attempt == 1:
            return reply["reload"]
        print("reload not acknowledged in time (loaded host), once more: %s" % reply["reload"])


def log_reloads():
    """The daemon's reload log lines ("... reload: reload applied: {...}" or "refused"), one JSON
    object each."""
    pattern = re.compile(r" reload: reload (applied|refused): (\{.*\})$")
    with open(os.path.join(work, "daemon.log"), errors="replace") as f:
        return [json.loads(m.group(2)) for m in map(pattern.search, f) if m]


def sighup_reload(daemon):
    for attempt in range(2):
        before = len(log_reloads())
        daemon.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while len(log_reloads()) == before and time.time() < deadline:
            time.sleep(0.05)
        if len(log_reloads()) == before:
            fail("SIGHUP: no reload logged")
        r = log_reloads()[-1]
        if not not_taken(r) or attempt == 1:
            return r
        print("reload not acknowledged in time (loaded host), once more: %s" % r)


def channel_names():
    return [c["name"] for c in control({"id": 2, "cmd": "status"})["channels"]]


def stats():
    return control({"id": 3, "cmd": "stats"})


def start_daemon(consumers):
    start = os.path.join(work, "start")
    daemon = subprocess.Popen([TICKPLANE, "--config", CONFIG, "--unlink-bus", "--start-after",
                               start], stdout=open(os.path.join(work, "daemon.out"), "w"),
                              stderr=open(os.path.join(work, "daemon.log"), "w"))
    procs.append(daemon)
    deadline = time.time() + 30
    while not all(os.path.exists(os.path.join(work, c + ".ready")) for c in consumers):
        if daemon.poll() is not None or time.time() > deadline:
            fail("daemon or consumers did not start")
        time.sleep(0.05)
    open(start, "w").close()
    while not os.path.exists(os.path.join(work, "control.sock")):
        time.sleep(0.05)
    # The IGMP joins go out with the first loop iterations; the simulator starts after them.
    time.sleep(1.0)
    return daemon


def backtraces(daemon):
    """Where every thread of the daemon is (gdb may be absent: then nothing)."""
    try:
        bt = subprocess.run(["gdb", "-batch", "-p", str(daemon.pid), "-ex", "thread apply all bt 10"],
                            capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return "\n".join(l for l in bt.splitlines() if l.startswith("#") or l.startswith("Thread"))


def stop_daemon(daemon):
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(timeout=20)
    except subprocess.TimeoutExpired:
        fail("daemon did not stop\n" + backtraces(daemon))
    if daemon.returncode != 0:
        fail("daemon exit %d" % daemon.returncode)
    with open(os.path.join(work, "daemon.out")) as f:
        return json.loads(f.read().strip().splitlines()[-1])["summary"]


def expect_equal(v, name, instruments):
    if v["exit"] != 0 or v["missing"] or v["stale"] or v["ring_mismatches"] or \
            v["state_mismatches"] or v["instruments"] != instruments:
        fail("%s books differ from the truth: %s" % (name, v))


def start_run(channels, with_cme_consumer, head_start=None):
    """Config, truths, consumers, the daemon, then the ITCH simulator, given its head start."""
    write_config(channels)
    itch_c = start_consumer(truth(ITCH_SIM, "itch.truth"), "nasdaq", "itch")
    cme_c = start_consumer(truth(MDP3_SIM, "cme.truth"), "cme", "cme") \
        if with_cme_consumer else None
    daemon = start_daemon(["itch", "cme"] if with_cme_consumer else ["itch"])
    itch_sim = start_sim(ITCH_SIM, "itch_sim", 1500,
                         ["--rerequest", "10.81.0.1:9000", "--linger-ms", "6000"])
    time.sleep(ITCH_HEAD_START if head_start is None else head_start)
    return daemon, itch_sim, itch_c, cme_c


def scenario_added():
    daemon, itch_sim, itch_c, cme_c = start_run([ITCH_CHANNEL], with_cme_consumer=True)
    if channel_names() != ["itch"]:
        fail("status before the reload: %s" % channel_names())
    write_config([ITCH_CHANNEL, MDP3_CHANNEL])
    t0 = time.time()
    r = reload_verb()
    print("reload (verb, %.1f ms round trip): %s" % ((time.time() - t0) * 1000, json.dumps(r)))
    ch = r.get("changes", {})
    if not r["ok"] or ch.get("channels_added") != ["cme"] or ch.get("channels_changed") or \
            ch.get("channels_removed"):
        fail("reload adding cme: %s" % r)
    if channel_names() != ["itch", "cme"]:
        fail("status after the reload: %s" % channel_names())
    if itch_sim.poll() is not None:
        fail("the ITCH simulator finished before the reload: the test proves nothing")
    # The new channel's traffic starts only now.
    cme_sim = start_sim(MDP3_SIM, "cme_sim", 1500)
    wait_sim(cme_sim, "MDP3")
    wait_sim(itch_sim, "ITCH")
    wait_itch_applied()
    expect_equal(consumer_verdict(itch_c, "itch"), "itch", 20)
    expect_equal(consumer_verdict(cme_c, "cme"), "cme", 10)
    st = stats()
    for name in ("channel=cme.feed.packets", "channel=cme.line=a.line.delivered",
                 "channel=itch.feed.messages"):
        if st.get(name, 0) <= 0:
            fail("stats: %s is %s" % (name, st.get(name)))
    metrics = control({"id": 4, "cmd": "metrics"})["metrics"]
    for family in ('tickplane_feed_packets_total{channel="cme"',
                   'tickplane_line_delivered_total{channel="itch",line="a"'):
        if family not in metrics:
            fail("metrics: no %s" % family)
    print("metrics: " + " | ".join(l for l in metrics.splitlines()
                                   if 'channel="cme"' in l and ("feed_" in l or "line=\"a\"" in l)))
    summary = stop_daemon(daemon)
    names = [c["name"] for c in summary["channels"]]
    itch = summary["channels"][names.index("itch")]
    if names != ["itch", "cme"] or itch["given_up"] or itch["skipped_msgs"]:
        fail("summary: %s" % summary["channels"])
    print("added: cme delivered %d messages after the reload; itch never stopped (%d messages, "
          "%d gaps recovered)" % (summary["channels"][1]["messages"], itch["messages"],
                                  itch["gaps"]))


def scenario_removed():
    daemon, itch_sim, itch_c, cme_c = start_run([ITCH_CHANNEL, MDP3_CHANNEL],
                                                with_cme_consumer=True)
    cme_sim = start_sim(MDP3_SIM, "cme_sim", 1500)
    wait_sim(cme_sim, "MDP3")
    time.sleep(0.5)
    if "channel=cme.feed.packets" not in stats():
        fail("cme counters missing before the reload")
    write_config([ITCH_CHANNEL])
    r = sighup_reload(daemon)
    print("reload (SIGHUP): %s" % json.dumps(r))
    if not r["ok"] or r.get("changes", {}).get("channels_removed") != ["cme"]:
        fail("reload removing cme: %s" % r)
    if channel_names() != ["itch"]:
        fail("status after the reload: %s" % channel_names())
    st = stats()
    if any(k.startswith("channel=cme.") for k in st):
        fail("stats still show the removed channel")
    # The data lcore exports its counters every 10 ms while it runs: wait for the state.
    detached = lambda: stats().get("dp.reload.detached_instruments", 0)
    tpit.wait_for("10 instruments marked no longer fed", lambda: detached() >= 10, 30,
                  on_timeout=lambda why: fail("%s: %s" % (why, detached())))
    # Every verb shows them stale: the instrument list and the book of each, by its venue.
    def cme_listed():
        return [i for i in control({"id": 4, "cmd": "instruments"})["instruments"]
                if i["venue"] == "CME"]
    tpit.wait_for("the removed channel's instruments flagged stale in the instruments verb",
                  lambda: len(cme_listed()) == 10 and all(i["stale"] for i in cme_listed()), 10)
    booked = [i for i in cme_listed() if " " not in i["symbol"]]  # the verb takes no spaces
    if not booked:
        fail("no removed instrument the book verb can name: %s" % cme_listed())
    for i in booked:
        book = control({"id": 5, "cmd": "book", "venue": "CME", "instrument": i["symbol"]})
        if not book.get("ok") or book["book"]["stale"] is not True:
            fail("the book verb on removed %s: %s" % (i["symbol"], book))
    # MDP3 traffic after the removal is not classified any more.
    no_flow = st["dp.classify.no_flow"]
    again = start_sim(MDP3_SIM[:5] + ["--messages", "300"], "cme_again", 2000)
    wait_sim(again, "MDP3 (after removal)")
    unclassified = lambda: stats()["dp.classify.no_flow"] - no_flow
    tpit.wait_for("100 MDP3 frames after the removal unclassified",
                  lambda: unclassified() >= 100, 30,
                  on_timeout=lambda why: fail("%s: %d" % (why, unclassified())))
    grown = unclassified()
    if itch_sim.poll() is not None:
        fail("the ITCH simulator finished before the removal was checked: the test proves "
             "nothing about the unchanged channel")
    wait_sim(itch_sim, "ITCH")
    wait_itch_applied()
    itch, cme = consumer_verdict(itch_c, "itch"), consumer_verdict(cme_c, "cme")
    summary = stop_daemon(daemon)
    print("daemon: %s" % json.dumps(summary["channels"]))
    expect_equal(itch, "itch", 20)
    if cme["missing"] or cme["stale"] != 10:
        fail("the removed channel's instruments are not all flagged stale: %s" % cme)
    if [c["name"] for c in summary["channels"]] != ["itch"]:
        fail("summary: %s" % summary["channels"])
    print("removed: 10 MDP3 instruments flagged stale, %d later MDP3 frames unclassified; itch "
          "books equal the truth" % grown)


def scenario_changed():
    daemon, itch_sim, itch_c, _ = start_run([ITCH_CHANNEL], with_cme_consumer=False,
                                            head_start=1.5)
    before = stats()["channel=itch.feed.messages"]
    # The change: larger re-requests, so the restarted channel catches up with the day quickly
    # (live packets wait in its held buffer meanwhile, a quarter of the mbuf pool at most).
    changed = dict(ITCH_CHANNEL, recovery=dict(ITCH_CHANNEL["recovery"], max_messages=1000))
    write_config([changed], exclude=["AAAB"])
    r = reload_verb()
    print("reload (verb, changed): %s" % json.dumps(r))
    ch = r.get("changes", {})
    if not r["ok"] or ch.get("channels_changed") != ["itch"] or not ch.get("filters"):
        fail("reload changing itch: %s\n%s" % (r, backtraces(daemon)))
    if before == 0 or itch_sim.poll() is not None:
        fail("the reload did not happen mid-stream: the test proves nothing")
    wait_sim(itch_sim, "ITCH")
    wait_itch_applied()
    itch = consumer_verdict(itch_c, "itch")
    summary = stop_daemon(daemon)
    c = summary["channels"][0]
    print("daemon: %s" % json.dumps(c))
    if itch["exit"] != 0 or itch["missing"] or itch["stale"] != 1 or itch["ring_mismatches"] or \
            itch["state_mismatches"]:
        fail("after the restart, books other than AAAB must equal the truth, AAAB stale: %s" %
             itch)
    # The restarted channel's counters start at 0: it applied the whole day, from sequence 1.
    retransmitted = [d for d in c["detail"] if d.get("line") == "r"][0]["delivered"]
    if c["messages"] < 16000 or retransmitted == 0 or c["given_up"] or c["skipped_msgs"]:
        fail("the restarted channel did not recover from sequence 1: %s" % c)
    print("changed: itch restarted after %d messages; the new channel applied %d, %d packets of "
          "them re-requested; AAAB stale, the other books equal the truth" %
          (before, c["messages"], retransmitted))


def scenario_bad_config():
    daemon, itch_sim, itch_c, _ = start_run([ITCH_CHANNEL], with_cme_consumer=False)
    status = control({"id": 5, "cmd": "status"})["channels"]
    # Valid JSON, invalid config: a bad group and a new channel (which must not start).
    bad = dict(ITCH_CHANNEL, lines={"a": {"group": "233.54.12", "port": 26477},
                                    "b": ITCH_CHANNEL["lines"]["b"]})
    write_config([bad, MDP3_CHANNEL])
    r = reload_verb()
    print("reload (verb, invalid): %s" % json.dumps(r))
    if r["ok"] or not any(e.startswith("channels[0].lines.a.group") for e in r["errors"]):
        fail("invalid file: the reply must name channels[0].lines.a.group: %s" % r)
    # Not JSON at all, through SIGHUP: the log says why.
    with open(CONFIG, "w") as f:
        f.write('{"name": "%s", "channels": [' % INSTANCE)
    r = sighup_reload(daemon)
    print("reload (SIGHUP, unparsable): %s" % json.dumps(r))
    if r["ok"] or not r["errors"]:
        fail("unparsable file accepted: %s" % r)
    after = control({"id": 5, "cmd": "status"})["channels"]
    if after != status:
        fail("status changed after failed reloads: %s -> %s" % (status, after))
    st = stats()
    if any(k.startswith("channel=cme.") for k in st) or st.get("dp.reload.apply_errors"):
        fail("a failed reload reached the data plane: %s" % st)
    # The good file again: a reload that changes nothing succeeds.
    write_config([ITCH_CHANNEL])
    r = reload_verb()
    if not r["ok"] or r["changes"]["channels_added"] or r["changes"]["channels_changed"]:
        fail("unchanged file: %s" % r)
    if itch_sim.poll() is not None:
        fail("the ITCH simulator finished before the reloads: the test proves nothing")
    wait_sim(itch_sim, "ITCH")
    wait_itch_applied()
    itch = consumer_verdict(itch_c, "itch")
    summary = stop_daemon(daemon)
    print("daemon: %s" % json.dumps(summary["channels"]))
    expect_equal(itch, "itch", 20)
    if [c["name"] for c in summary["channels"]] != ["itch"]:
        fail("summary: %s" % summary["channels"])
    print("bad_config: both bad reloads refused with reasons; itch books equal the truth")


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root (network namespace, veth)")
        sys.exit(77)
    try:
        setup_network()
        {"added": scenario_added, "removed": scenario_removed, "changed": scenario_changed,
         "bad_config": scenario_bad_config}[SCENARIO]()
    except Exception as e:  # an unexpected reply shape: report it with the logs
        fail("%s: %r" % (type(e).__name__, e))
    cleanup()
    print("PASS reload_%s" % SCENARIO)


if __name__ == "__main__":
    main()
