"""What the Python integration tests share: a daemon config to start from, the control socket,
starting the daemon held at --start-after, and waiting.

Each test script sits beside this file, so `import tpit` finds it (Python puts the script's
directory first on its path).
"""
import ctypes
import json
import os
import resource
import socket
import subprocess
import sys
import time


# The summary of the last daemon finish() saw exit: printed with a failure found after it.
LAST_SUMMARY = {}


def fail(msg):
    print("FAIL: " + msg)
    if LAST_SUMMARY:
        print("daemon summary: " + json.dumps(LAST_SUMMARY))
    sys.exit(1)


def _sh(*cmd, check=True):
    try:
        return subprocess.run(list(cmd), check=check, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode
    except FileNotFoundError:  # iptables may be absent: only a nicety
        if check:
            raise
        return 127


def veth_setup(ns, dev, simdev, subnet):
    """A network namespace `ns` holding the simulator's end of a veth pair (`simdev`, address
    subnet.1, multicast routed out of it) and `dev` in this namespace (subnet.2) for the daemon's
    af_packet port. subnet: three octets, each test its own (two tests never share a route).
    Exits 77 (skipped) where the machine cannot make them."""
    if _sh("ip", "netns", "add", ns, check=False) != 0:
        print("SKIP: cannot create network namespaces")
        sys.exit(77)
    if _sh("ip", "link", "add", dev, "type", "veth", "peer", "name", simdev, check=False) != 0:
        veth_cleanup(ns, dev)
        print("SKIP: no veth")
        sys.exit(77)
    _sh("ip", "link", "set", simdev, "netns", ns)
    _sh("ip", "addr", "add", subnet + ".2/24", "dev", dev)
    _sh("ip", "link", "set", dev, "up")
    for cmd in (["ip", "addr", "add", subnet + ".1/24", "dev", simdev],
                ["ip", "link", "set", simdev, "up"], ["ip", "link", "set", "lo", "up"],
                ["ip", "route", "add", "224.0.0.0/4", "dev", simdev]):
        _sh("ip", "netns", "exec", ns, *cmd)
    # The kernel behind the daemon's port must not answer re-request replies with ICMP errors.
    _sh("iptables", "-A", "INPUT", "-i", dev, "-p", "udp", "-j", "DROP", check=False)


def veth_cleanup(ns, dev):
    _sh("iptables", "-D", "INPUT", "-i", dev, "-p", "udp", "-j", "DROP", check=False)
    _sh("ip", "link", "del", dev, check=False)
    _sh("ip", "netns", "del", ns, check=False)


def instance_name(prefix):
    """A bus instance name no other run uses: the pid alone repeats (pid_max is 32768 here), and a
    killed run leaves its segments in /dev/shm, whose writer looks alive to a consumer that
    attaches before the daemon has replaced them."""
    return "%s%d%s" % (prefix, os.getpid(), os.urandom(3).hex())


def base_config(instance, port, channels, control_socket="control.sock"):
    """A daemon config for the virtual devices of this machine: no hugepages, no PCI, EAL files
    private to the process (tests run in parallel), one data lcore polling `port` (a ports[]
    entry) for `channels`, tables small enough for 256 MB. Tests change what they need."""
    return {
        "name": instance,
        "eal": {"lcores": "0-1", "main_lcore": 0, "memory_mb": 256, "no_huge": True,
                "no_pci": True, "no_shconf": True, "log_level": "error"},
        "ports": [port],
        "lcores": [{"lcore": 1, "poll": [{"port": port["name"]}],
                    "channels": [c["name"] for c in channels]}],
        "channels": channels,
        "instruments": {"capacity": 1024},
        "books": {"max_orders": 65536, "levels_per_side": 10},
        "bus": {"ring_bytes": 16777216},
        "control": {"socket": control_socket},
    }


def client_library(path):
    """libtickplane through ctypes, with the liveness calls the tests make declared."""
    lib = ctypes.CDLL(path)
    lib.tp_attach.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p, ctypes.c_void_p,
                              ctypes.c_char_p, ctypes.c_size_t]
    for name in ("tp_check_heartbeat", "tp_check_writer", "tp_detach"):
        if not hasattr(lib, name):
            fail("libtickplane has no %s" % name)
        getattr(lib, name).argtypes = [ctypes.c_void_p]
    lib.tp_last_error.argtypes = [ctypes.c_void_p]
    lib.tp_last_error.restype = ctypes.c_char_p
    return lib


def itch_channel(lines="ab", **extra):
    """The simulator's ITCH channel (`tickplane-sim itch` sends line A and B to these groups),
    with the given lines; extra keys (recovery, rx_ports, ...) are added as they are."""
    groups = {"a": "233.54.12.111", "b": "233.49.196.111"}
    channel = {"name": "itch", "protocol": "itch",
               "lines": {line: {"group": groups[line], "port": 26477} for line in lines}}
    channel.update(extra)
    return channel


def simulate(sim, protocol, workdir, seed, *args):
    """Runs `tickplane-sim protocol` (20 instruments, 20000 messages, then args) into workdir's
    feed.pcap, truth.json and report.json; returns their paths."""
    pcap, truth, report = (os.path.join(workdir, n)
                           for n in ("feed.pcap", "truth.json", "report.json"))
    subprocess.run([sim, protocol, "--pcap", pcap, "--truth", truth, "--report", report,
                    "--seed", str(seed), "--symbols", "20", "--messages", "20000", *args],
                   check=True, stdout=subprocess.DEVNULL)
    return pcap, truth, report


# An EOBI channel on the groups `tickplane-sim eobi` sends to (tools/sim/endpoints.c).
EOBI_CHANNEL = {
    "name": "eurex", "protocol": "eobi", "id": 1,
    "lines": {"a": {"group": "224.0.114.43", "port": 59001},
              "b": {"group": "224.0.115.43", "port": 59001}},
    # A hole waits long for the other line: a loaded machine may pause the data lcore between a
    # packet and its copy, and a wait cut short would count a gap the other line filled.
    "recovery": {"snapshot": {"a": {"group": "224.0.114.42", "port": 59000},
                              "b": {"group": "224.0.115.42", "port": 59000}},
                 "gap_wait_us": 200000},
}


def pcap_port(pcap):
    """A net_pcap port replaying `pcap`, with a pool large enough to hold every packet that
    waits behind a gap (net_pcap replays as fast as it can, not at the capture's pace)."""
    return {"name": "cap", "pcap": pcap, "mbuf_pool_size": 16383}


def write_config(cfg, path):
    """Writes the config whole, then renames it: a reload never reads half a file."""
    with open(path + ".tmp", "w") as f:
        json.dump(cfg, f, indent=1)
    os.rename(path + ".tmp", path)
    return path


def control_session(path, requests, timeout=10):
    """Sends requests (dicts) on one connection to the control socket; returns the replies."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    try:
        s.connect(path)
        f = s.makefile("rw")
        replies = []
        for request in requests:
            f.write(json.dumps(request) + "\n")
            f.flush()
            replies.append(json.loads(f.readline()))
        return replies
    finally:
        s.close()


def control(path, request, timeout=10):
    """One request to the control socket, one reply."""
    return control_session(path, [request], timeout)[0]


def as_uid(uid, groups=(), nofile=None):
    """A preexec_fn that runs the child as uid (its group the same number) with only the
    supplementary groups given, after raising its RLIMIT_NOFILE to nofile if given."""
    def become():
        if nofile:
            resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile))
        os.setgroups(list(groups))
        os.setgid(uid)
        os.setuid(uid)
    return become


def wait_for(what, predicate, seconds, on_timeout=fail):
    """Polls predicate until it holds; on_timeout("timed out waiting for " + what) otherwise."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    on_timeout("timed out waiting for " + what)


def start_held(tickplane, cfg_path, start_file, ready_files=(), idle_exit_ms=None,
               seconds=30, on_fail=fail, **popen):
    """Starts the daemon held by --start-after until `start_file` exists, waits for the
    consumers' ready files, then lets it run. Returns the Popen. Output goes to pipes (text)
    unless popen says otherwise."""
    cmd = [tickplane, "--config", cfg_path, "--unlink-bus", "--start-after", start_file]
    if idle_exit_ms is not None:
        cmd += ["--idle-exit-ms", str(idle_exit_ms)]
    popen.setdefault("stdout", subprocess.PIPE)
    popen.setdefault("stderr", subprocess.PIPE)
    daemon = subprocess.Popen(cmd, text=True, **popen)

    def ready():
        if daemon.poll() is not None:
            err = daemon.stderr.read() if daemon.stderr else ""
            on_fail("daemon exited early (%d): %s" % (daemon.returncode, err))
        return all(os.path.exists(r) for r in ready_files)
    wait_for("the consumers to attach", ready, seconds, on_fail)
    open(start_file, "w").close()
    return daemon


def run_consumed(tickplane, consumer, cfg_path, instance, truth, work, name, consumer_args=(),
                 idle_exit_ms=2500, timeout=110):
    """The daemon held until a bus_consumer comparing with `truth` attached, run to its idle
    exit. Returns (the daemon's summary, the consumer's verdict). `name` keeps the start and
    ready files of several runs in one work directory apart."""
    ready = os.path.join(work, "ready-" + name)
    reader = subprocess.Popen(
        [consumer, "--instance", instance, "--truth", truth, "--ready", ready,
         *consumer_args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    daemon = start_held(tickplane, cfg_path, os.path.join(work, "start-" + name), [ready],
                        idle_exit_ms=idle_exit_ms)
    summary = finish(daemon)
    out, err = reader.communicate(timeout=timeout)
    if reader.returncode != 0:
        fail("consumer: exit %d %s\n%s" % (reader.returncode, out, err[:2000]))
    return summary, json.loads(out)


def finish(daemon, timeout=55, on_fail=fail, log=None):
    """Waits for the daemon's exit; returns its JSON summary (the last line of its output). Its
    stderr (the event log) goes to the list `log` if given."""
    out, err = daemon.communicate(timeout=timeout)
    if log is not None:
        log.append(err)
    if daemon.returncode != 0:
        on_fail("daemon exit %d: %s" % (daemon.returncode, err))
    summary = json.loads(out.strip().splitlines()[-1])["summary"]
    LAST_SUMMARY.clear()
    LAST_SUMMARY.update(summary)
    return summary
