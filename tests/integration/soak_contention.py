#!/usr/bin/env python3
"""Book integrity under contention: rounds of a live ITCH session over net_af_packet/veth with
losses on both lines and MoldUDP64 re-requests, while busy loops run on every core and the
daemon is stopped now and then for up to 1.5 s (SIGSTOP/SIGCONT: a descheduled data lcore, whose
kernel ring overflows and whose re-requests come late or after the server has gone).

The daemon may be slow, give up gaps or join late; what it must never do is show a book that
differs from the simulator's truth without the STALE or RECOVERING flag. Each round ends once the
daemon is quiet (its receive and message counters stand still) and compares every consumer book
with the truth: "exact" (all equal, none flagged), "flagged" (every book that is not flagged
equals the truth; a book never defined counts as flagged) or "wrong" (an unflagged book
differs). Any wrong round fails the run.

A round that fails (wrong, or any other failure) keeps its evidence: the daemon's log, exit
summary and final stats, the consumer's output, the config, the simulator's truth, report and
capture of what it sent on each line (after its losses). They are copied to a directory the run
prints: $TP_SOAK_EVIDENCE (the suite sets one in the build directory), else one under the
system's temporary directory.

"stall" rounds check the comparison itself: no line loss, the daemon stopped while the whole
session is sent (its ring keeps the start; the end, end of session too, is lost on both lines),
then only its data lcore thread held off (ptrace) past the silence that flags the books and
past the time a comparison by wall clock alone would be made. Each must end flagged by the
silence rule.

usage: soak_contention.py TICKPLANE SIM CONSUMER ROUNDS [stall]      (root; exit 77 without
netns/veth)

Prints one JSON line per round and a summary line {"rounds": N, "exact": .., "flagged": ..,
"wrong": ..}.
"""
import atexit
import ctypes
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback

import tpit

TICKPLANE, SIM, CONSUMER = sys.argv[1:4]
ROUNDS = int(sys.argv[4])
STALL = sys.argv[5:] == ["stall"]
ID = os.getpid()
NS, DEV, SIMDEV = "tpsk%d" % ID, "tpkd%d" % ID, "tpks%d" % ID
SUBNET = "10.83.0"  # each af_packet test its own subnet (afpacket_lib.sh)
SERVER = SUBNET + ".1:9000"
# Both lines quiet this long flags the books (recovery.silence_ms); stall rounds leave the test
# time to hold the lcore off before that.
SILENCE_MS = 5000 if STALL else 2000

work = tempfile.mkdtemp(prefix="tpsk-")
procs = []
current_round = None  # the round directory in use, kept if the run fails in it
EVIDENCE = os.path.join(os.environ.get("TP_SOAK_EVIDENCE") or
                        os.path.join(tempfile.gettempdir(), "tickplane-soak-evidence"),
                        "%s-%d" % (time.strftime("%Y%m%dT%H%M%S"), ID))


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.kill()  # a stopped daemon too: SIGKILL needs no SIGCONT
            p.wait()
    tpit.veth_cleanup(NS, DEV)
    subprocess.run(["rm", "-rf", work])


def keep_evidence(round_dir):
    """Copies a failed round's files where they outlive the run, and says where."""
    kept = os.path.join(EVIDENCE, os.path.basename(round_dir))
    shutil.copytree(round_dir, kept, dirs_exist_ok=True)
    print("evidence of %s kept in %s" % (os.path.basename(round_dir), kept), flush=True)


def fail(msg):
    print("FAIL: " + msg)
    if current_round is not None:
        keep_evidence(current_round)
    for name in sorted(os.listdir(work)):
        if name.endswith(".log") or name.endswith(".out"):
            with open(os.path.join(work, name), errors="replace") as f:
                print("== %s\n%s" % (name, "".join(f.readlines()[-15:])))
    cleanup()
    sys.exit(1)


def hogs():
    """A busy loop pinned to each core until the run ends (taskset becomes the shell: killing it
    ends the loop; nothing of it holds the test runner's output open)."""
    for cpu in range(os.cpu_count() or 1):
        procs.append(subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c",
                                       "while :; do :; done"], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))


def control(request):
    return tpit.control(os.path.join(work, "control.sock"), request)


def channel_counters():
    """The channel's packet and message counters (its packets are what its silence rule
    counts), and the data lcore's ticks (a loop turn of the lcore counts one, at most one every
    10 ms)."""
    st = control({"id": 1, "cmd": "stats"})
    return (st["channel=itch.feed.packets"], st["channel=itch.feed.messages"]), st["dp.ticks"]


LIBC = ctypes.CDLL(None, use_errno=True)
LIBC.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
PTRACE_DETACH, PTRACE_SEIZE, PTRACE_INTERRUPT, WALL = 17, 0x4206, 0x4207, 0x40000000


def data_lcore_thread(pid):
    """The thread id of the daemon's data lcore (DPDK names it rte-worker-N)."""
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            if f.read().startswith("rte-worker"):
                return int(tid)
    fail("the daemon has no data lcore thread")


def hold_thread(tid, seconds, errors):
    """Keeps one thread of a process off its core for `seconds`, the others running, as a core
    the machine gives to others would (ptrace stops a single thread). Appends to errors."""
    if LIBC.ptrace(PTRACE_SEIZE, tid, None, None) != 0 or \
            LIBC.ptrace(PTRACE_INTERRUPT, tid, None, None) != 0:
        errors.append("ptrace of thread %d: %s" % (tid, os.strerror(ctypes.get_errno())))
        return
    os.waitpid(tid, WALL)
    time.sleep(seconds)
    LIBC.ptrace(PTRACE_DETACH, tid, None, None)


def lcore_running():
    """Whether the daemon answers and its data lcore has counted a tick."""
    try:
        return channel_counters()[1] > 0
    except OSError:  # not answering yet
        return False


def still_for(seconds):
    """Whether the daemon applied messages and its counters then stood still for `seconds`."""
    before = channel_counters()[0]
    time.sleep(seconds)
    return before[1] > 0 and channel_counters()[0] == before


def pauser(daemon, stop, rng):
    """Stops the daemon for 50-1500 ms at random moments until `stop` is set."""
    while not stop.wait(rng.uniform(0.3, 1.5)):
        daemon.send_signal(signal.SIGSTOP)
        time.sleep(rng.uniform(0.05, 1.5))
        daemon.send_signal(signal.SIGCONT)


def run_round(n):
    global current_round
    rng = random.Random(1000 + n)
    seed = 100 + n
    instance = tpit.instance_name("tpsk")
    round_dir = current_round = os.path.join(work, "r%d" % n)
    os.mkdir(round_dir)
    sim_args = ["itch", "--seed", str(seed), "--symbols", "20", "--messages", "20000"]
    truth = os.path.join(round_dir, "truth.json")
    subprocess.run([SIM] + sim_args + ["--truth", truth, "--binaryfile", "/dev/null"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    channel = tpit.itch_channel(recovery={"rerequest": SERVER, "gap_wait_us": 2000,
                                          "give_up_ms": 3000, "silence_ms": SILENCE_MS})
    port = {"name": "veth", "vdev": "net_af_packet%d,iface=%s,framecnt=2048" % (ID, DEV),
            "mbuf_pool_size": 8191}
    cfg = tpit.base_config(instance, port, [channel],
                           control_socket=os.path.join(work, "control.sock"))
    cfg_path = tpit.write_config(cfg, os.path.join(round_dir, "config.json"))
    done, ready = os.path.join(round_dir, "done"), os.path.join(round_dir, "ready")
    consumer = subprocess.Popen(
        [CONSUMER, "--instance", instance, "--truth", truth, "--venue", "nasdaq", "--ready", ready,
         "--idle-ms", "1000", "--until", done, "--timeout-s", "300"],
        stdout=open(os.path.join(round_dir, "consumer.out"), "w"),
        stderr=open(os.path.join(round_dir, "consumer.log"), "w"))
    procs.append(consumer)
    daemon = tpit.start_held(TICKPLANE, cfg_path, os.path.join(round_dir, "start"), [ready],
                             seconds=120, on_fail=fail,
                             stdout=open(os.path.join(round_dir, "daemon.out"), "w"),
                             stderr=open(os.path.join(round_dir, "daemon.log"), "w"))
    procs.append(daemon)
    tpit.wait_for("the control socket", lambda: os.path.exists(
        os.path.join(work, "control.sock")), 60, fail)
    # Some rounds start the feed before the daemon has joined (a late join it must flag).
    if rng.random() < 0.7:
        time.sleep(0.5)
    losses = [] if STALL else ["--loss-a", "0.02", "--loss-b", "0.02", "--both-loss", "0.003"]
    if STALL:  # the daemon runs (its control socket may exist before it answers), then stops
        tpit.wait_for("the data lcore to run", lcore_running, 120, fail)
        daemon.send_signal(signal.SIGSTOP)
    sim = subprocess.Popen(["ip", "netns", "exec", NS, SIM] + sim_args + losses +
                           ["--live", "--iface", SIMDEV, "--rate", "4000", "--rerequest", SERVER,
                            "--linger-ms", str(rng.choice([500, 2000, 4000])),
                            "--pcap", os.path.join(round_dir, "sent.pcap"),
                            "--report", os.path.join(round_dir, "sim_report.json")],
                           stdout=subprocess.DEVNULL,
                           stderr=open(os.path.join(round_dir, "sim.log"), "w"))
    procs.append(sim)
    stop = threading.Event()
    t = threading.Thread(target=pauser, args=(daemon, stop, rng))
    if not STALL:
        t.start()
    try:
        sim.wait(timeout=240)
    except subprocess.TimeoutExpired:
        fail("round %d: the simulator did not finish" % n)
    finally:
        stop.set()
        if t.is_alive():
            t.join()
        daemon.send_signal(signal.SIGCONT)
    held, hold_errors = None, []
    if STALL:  # once what the ring kept is applied, the lcore is held off
        tpit.wait_for("the daemon to apply what its ring kept", lambda: still_for(0.3), 60, fail)
        held = threading.Thread(target=hold_thread,
                                args=(data_lcore_thread(daemon.pid), SILENCE_MS / 1000 + 4,
                                      hold_errors))
        held.start()
    # Quiet: the counters stand still for longer than the silence that flags the books: a stream
    # whose end was lost on both lines looks complete until then, to the daemon as to anyone.
    # Wall time alone is not enough: the data lcore, kept off its core by the busy loops, may not
    # have run the timers that apply the rule since the time was up. A tick of the lcore after
    # that says it did (the timers run in the loop turn that counts the tick).
    quiet_s = SILENCE_MS / 1000 + 1.0
    last, still_since, deadline = None, time.time(), time.time() + 180
    quiet_at = None  # (wall time, lcore ticks) when wall time alone said quiet
    while time.time() < deadline:
        asked = time.time()  # the counters are read after this
        now, ticks = channel_counters()
        if now != last:
            last, still_since, quiet_at = now, time.time(), None
        elif quiet_at is None and asked - still_since >= quiet_s:
            quiet_at = (asked, ticks)
        elif quiet_at is not None and ticks > quiet_at[1]:
            break
        time.sleep(0.01 if quiet_at else 0.1)
    else:
        fail("round %d: the daemon never went quiet" % n)
    lcore_lag_s = round(time.time() - quiet_at[0], 3)
    if held is not None:
        held.join()
    if hold_errors:
        fail("round %d: %s" % (n, hold_errors[0]))
    with open(os.path.join(round_dir, "stats.json"), "w") as f:
        json.dump(control({"id": 2, "cmd": "stats"}), f)
    open(done, "w").close()
    try:
        consumer.wait(timeout=120)
    except subprocess.TimeoutExpired:
        fail("round %d: consumer did not finish" % n)
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(timeout=60)
    except subprocess.TimeoutExpired:
        fail("round %d: daemon did not stop" % n)
    with open(os.path.join(round_dir, "consumer.out")) as f:
        lines = f.read().strip().splitlines()
    if not lines:
        fail("round %d: consumer printed nothing (exit %s)" % (n, consumer.returncode))
    verdict = json.loads(lines[0])
    with open(os.path.join(round_dir, "daemon.out")) as f:
        summary = json.loads(f.read().strip().splitlines()[-1])["summary"]
    ch = summary["channels"][0]
    # A book never defined (its stock directory lost with a late join) is absent, not wrong.
    wrong = verdict["ring_mismatches"] + verdict["state_mismatches"]
    outcome = "wrong" if wrong else (
        "flagged" if verdict["stale"] or verdict["missing"] else "exact")
    keys = ("messages", "feed_errors", "gaps", "rerequests", "recovered", "given_up",
            "stale_marks", "recovering_marks", "silences", "skipped_msgs")
    print(json.dumps({"round": n, "outcome": outcome, "consumer": verdict,
                      "daemon": {k: ch.get(k) for k in keys}, "lcore_lag_s": lcore_lag_s}),
          flush=True)
    if outcome == "wrong":
        with open(os.path.join(round_dir, "consumer.log"), errors="replace") as f:
            print("".join(f.readlines()[:20]))
        keep_evidence(round_dir)
    elif STALL and (outcome != "flagged" or not ch.get("silences")):
        fail("round %d: the session's end was lost, yet the books ended %s with %s silences" %
             (n, outcome, ch.get("silences")))
    if os.path.exists(os.path.join(work, "control.sock")):
        os.unlink(os.path.join(work, "control.sock"))
    return outcome


def main():
    if os.geteuid() != 0:
        print("SKIP: needs root (network namespace, veth)")
        sys.exit(77)
    tpit.veth_setup(NS, DEV, SIMDEV, SUBNET)
    atexit.register(cleanup)  # the busy loops never outlive the run
    hogs()
    outcomes = {"exact": 0, "flagged": 0, "wrong": 0}
    try:
        for n in range(ROUNDS):
            outcomes[run_round(n)] += 1
    except Exception as e:  # an unexpected reply shape: report it with the logs
        fail("%s: %r\n%s" % (type(e).__name__, e, traceback.format_exc()))
    cleanup()
    print(json.dumps(dict(rounds=ROUNDS, **outcomes)))
    if outcomes["wrong"]:
        print("FAIL: %d rounds ended with a book that differs from the truth unflagged" %
              outcomes["wrong"])
        sys.exit(1)
    print("PASS soak_contention")


main()
