#!/usr/bin/env python3
"""Safe to operate: what an operator's mistakes and a hostile local user can and cannot do to the
real daemon (net_pcap, no NIC, no hugepages).

usage: instance_safety.py TICKPLANE SIM LIBTICKPLANE_SO SCENARIO

  second_instance  a second daemon of the same name (another control socket and EAL file prefix)
                   refuses to start, naming the first one's pid; the first one's segments are
                   untouched and it keeps serving. Killed (SIGKILL), its lock is taken over by the
                   next start, which says so; after a clean stop the next start says nothing.
  control_socket   a control socket in a missing directory, or whose path is a directory, stops
                   the start with control.socket named (exit 2, before EAL); one that a live
                   process holds is a start error (exit 1), never a daemon without control plane.
  bus_full         the default 64 MiB ring on a 64 MiB tmpfs: refused at start with the bytes
                   needed and free (exit 2), no SIGBUS (rc 135) mid-stream.
  readers          a consumer killed (SIGKILL) leaves its reader segment (mode 0640): the running
                   daemon's sweep removes it; one killed just before the daemon stops is removed
                   at the daemon's exit.
  squat            another user's files under the segments' names, in a world-writable sticky
                   directory as /dev/shm is, do not stop the daemon (root) from starting, and no
                   temporary file is left; readers refuse segments owned by another user or
                   writable by others, with the reason.
"""
import errno
import glob
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

import tpit
from tpit import fail, wait_for

NOBODY = 65534


def capture(sim, workdir):
    pcap = os.path.join(workdir, "feed.pcap")
    subprocess.run([sim, "itch", "--pcap", pcap, "--truth", os.path.join(workdir, "t.json"),
                    "--seed", "7", "--symbols", "4", "--messages", "2000"],
                   check=True, stdout=subprocess.DEVNULL)
    return pcap


def config(instance, pcap, sock):
    itch = tpit.itch_channel()
    return tpit.base_config(instance, tpit.pcap_port(pcap), [itch], sock)


def start(tickplane, cfg_path):
    return subprocess.Popen([tickplane, "--config", cfg_path], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)


def serving(daemon, sock):
    """Whether the daemon answers status on its control socket (fails if it exited)."""
    if daemon.poll() is not None:
        fail("daemon exited (%d): %s" % (daemon.returncode, daemon.stderr.read()))
    try:
        return tpit.control(sock, {"id": 1, "cmd": "status"}, timeout=5).get("ok") is True
    except OSError:
        return False


def stop(daemon):
    daemon.send_signal(signal.SIGTERM)
    try:
        daemon.wait(timeout=30)
    except subprocess.TimeoutExpired:
        daemon.kill()
        daemon.wait()
        fail("daemon did not stop on SIGTERM")
    return daemon.stderr.read()


def refused(tickplane, cfg_path, rc, words, seconds=60):
    """Starts the daemon expecting it to exit with rc, its stderr holding every one of words."""
    p = start(tickplane, cfg_path)
    try:
        p.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        fail("a daemon that should have refused to start is running: %s" % cfg_path)
    err = p.stderr.read()
    if p.returncode != rc or not all(w in err for w in words):
        fail("expected exit %d with %s, got %d: %s" % (rc, words, p.returncode, err))
    return err


def cleanup(instance, bus_dir="/dev/shm"):
    for path in glob.glob(os.path.join(bus_dir, "tickplane.%s.*" % instance)):
        os.unlink(path)


def second_instance(tickplane, sim, workdir):
    instance = tpit.instance_name("tplock")
    pcap = capture(sim, workdir)
    sock_a = os.path.join(workdir, "a.sock")
    cfg = config(instance, pcap, sock_a)
    cfg_a = tpit.write_config(cfg, os.path.join(workdir, "a.json"))
    cfg["control"]["socket"] = os.path.join(workdir, "b.sock")
    cfg["eal"]["file_prefix"] = "tplockb"
    cfg_b = tpit.write_config(cfg, os.path.join(workdir, "b.json"))
    ring = "/dev/shm/tickplane.%s.ring" % instance
    daemons = []
    try:
        a = start(tickplane, cfg_a)
        daemons.append(a)
        wait_for("the first daemon", lambda: serving(a, sock_a), 60)
        inode = os.stat(ring).st_ino
        err = refused(tickplane, cfg_b, 1,
                      ['instance "%s" is already running (pid %d holds' % (instance, a.pid)])
        if os.stat(ring).st_ino != inode:
            fail("the refused daemon replaced the first one's ring")
        if not serving(a, sock_a):
            fail("the first daemon stopped serving after the second start")
        print("refused: " + err.strip().splitlines()[-1])
        a.kill()
        a.wait()
        c = start(tickplane, cfg_a)
        daemons.append(c)
        wait_for("the daemon after a SIGKILL", lambda: serving(c, sock_a), 60)
        err = stop(c)
        took = "took over the lock /dev/shm/tickplane.%s.lock left by pid %d, which died" % (
            instance, a.pid)
        if took not in err:
            fail("no word of the killed daemon's lock taken over: " + err)
        d = start(tickplane, cfg_a)
        daemons.append(d)
        wait_for("the daemon after a clean stop", lambda: serving(d, sock_a), 60)
        err = stop(d)
        if "took over" in err:
            fail("a clean stop's lock was reported as a killed daemon's: " + err)
        print("ok: a second instance is refused, a killed one's lock is taken over")
    finally:
        for p in daemons:
            if p.poll() is None:
                p.kill()
                p.wait()
        cleanup(instance)


def control_socket(tickplane, sim, workdir):
    instance = tpit.instance_name("tpsock")
    pcap = capture(sim, workdir)
    cfg = config(instance, pcap, os.path.join(workdir, "missing", "control.sock"))
    path = tpit.write_config(cfg, os.path.join(workdir, "c.json"))
    try:
        refused(tickplane, path, 2, ["control.socket: socket directory", "No such file"])
        as_dir = os.path.join(workdir, "a-directory")
        os.mkdir(as_dir)
        cfg["control"]["socket"] = as_dir
        tpit.write_config(cfg, path)
        refused(tickplane, path, 2, ["control.socket: ", "exists and is a directory"])
        # A socket a live process listens on passes the check (it is a socket) but cannot be
        # taken: the start fails there, after EAL, and leaves no bus behind.
        held = os.path.join(workdir, "held.sock")
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(held)
        listener.listen(1)
        cfg["control"]["socket"] = held
        tpit.write_config(cfg, path)
        refused(tickplane, path, 1, ["control.socket: cannot create %s" % held, "in use"])
        listener.close()
        if glob.glob("/dev/shm/tickplane.%s.ring*" % instance):
            fail("a failed start left its bus behind")
        print("ok: a control socket the daemon cannot create stops the start")
    finally:
        cleanup(instance)


def bus_full(tickplane, sim, workdir):
    instance = tpit.instance_name("tpfull")
    pcap = capture(sim, workdir)
    shm = os.path.join(workdir, "shm")
    os.mkdir(shm)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", shm]).returncode != 0:
        print("SKIP: cannot mount a tmpfs (needs root)")
        sys.exit(77)
    try:
        cfg = config(instance, pcap, os.path.join(workdir, "control.sock"))
        cfg["bus"] = {"path": shm}  # the default ring_bytes, 64 MiB
        path = tpit.write_config(cfg, os.path.join(workdir, "f.json"))
        err = refused(tickplane, path, 2, ["bus.ring_bytes: the bus needs ",
                                           "the file system has 67108864 bytes free"])
        if os.listdir(shm):
            fail("the refused start left files on the bus file system: %s" % os.listdir(shm))
        print("ok: " + [l for l in err.splitlines() if "bus.ring_bytes" in l][0].strip())
    finally:
        subprocess.run(["umount", shm])


def attach(lib_path, instance, bus_dir):
    """tp_attach in a child process: (rc, err)."""
    code = ("import ctypes, sys\n"
            "lib = ctypes.CDLL(sys.argv[1])\n"
            "class O(ctypes.Structure):\n"
            "    _fields_ = [('shm_dir', ctypes.c_char_p), ('pad', ctypes.c_char * 256)]\n"
            "c = ctypes.c_void_p(); err = ctypes.create_string_buffer(512)\n"
            "o = O(sys.argv[3].encode())\n"
            "rc = lib.tp_attach(ctypes.byref(c), sys.argv[2].encode(), ctypes.byref(o), err, 512)\n"
            "print(rc); print(err.value.decode())\n")
    out = subprocess.run([sys.executable, "-c", code, lib_path, instance, bus_dir],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    return int(out[0]), out[1] if len(out) > 1 else ""


def squat(tickplane, sim, lib_path, workdir):
    instance = tpit.instance_name("tpsquat")
    pcap = capture(sim, workdir)
    bus = os.path.join(workdir, "shm")
    os.mkdir(bus)
    os.chmod(bus, 0o1777)  # as /dev/shm
    os.chmod(workdir, 0o755)
    planted = [os.path.join(bus, "tickplane.%s.%s" % (instance, part))
               for part in ("ring", "state", "counters")]
    for p in planted:
        subprocess.run(["dd", "if=/dev/zero", "of=" + p, "bs=1M", "count=16", "status=none"],
                       check=True, preexec_fn=tpit.as_uid(NOBODY))
    sock = os.path.join(workdir, "control.sock")
    cfg = config(instance, pcap, sock)
    cfg["bus"]["path"] = bus
    path = tpit.write_config(cfg, os.path.join(workdir, "s.json"))
    daemon = start(tickplane, path)
    try:
        wait_for("the daemon over the planted files", lambda: serving(daemon, sock), 60)
        for p in planted:
            if os.stat(p).st_uid != os.geteuid():
                fail("%s is still the squatter's" % p)
        rc, err = attach(lib_path, instance, bus)
        if rc != 0:
            fail("a reader could not attach to the daemon's own segments: %d %s" % (rc, err))
        stop(daemon)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    leftovers = glob.glob(os.path.join(bus, "*.tmp.*"))
    if leftovers:
        fail("temporary files left: %s" % leftovers)
    # The stopped daemon's segments stay (no --unlink-bus). Given to another user, a reader
    # refuses them for their owner, then (given back) for their mode, before reading a byte.
    for p in planted:
        os.chown(p, NOBODY, NOBODY)
    rc, err = attach(lib_path, instance, bus)
    if rc != -errno.EPERM or "belongs to uid %d" % NOBODY not in err:
        fail("a reader mapped another user's segment: %d %s" % (rc, err))
    for p in planted:
        os.chown(p, 0, 0)
        os.chmod(p, 0o660)
    rc, err = attach(lib_path, instance, bus)
    if rc != -errno.EPERM or "writable by other users" not in err:
        fail("a reader mapped a segment others may write: %d %s" % (rc, err))
    print("ok: planted files replaced, no temporary left, foreign segments refused: " + err)


def killed_reader(lib_path, instance):
    """A consumer attached (its reader segment made), then killed: the segment's path."""
    code = ("import ctypes, sys, time\n"
            "lib = ctypes.CDLL(sys.argv[1])\n"
            "c = ctypes.c_void_p(); err = ctypes.create_string_buffer(512)\n"
            "rc = lib.tp_attach(ctypes.byref(c), sys.argv[2].encode(), None, err, 512)\n"
            "print(rc, err.value.decode(), flush=True)\n"
            "time.sleep(600)\n")
    p = subprocess.Popen([sys.executable, "-c", code, lib_path, instance], stdout=subprocess.PIPE,
                         text=True)
    line = p.stdout.readline()
    if not line.startswith("0 "):
        p.kill()
        fail("a consumer could not attach: " + line)
    path = "/dev/shm/tickplane.%s.reader.%d" % (instance, p.pid)
    mode = os.stat(path).st_mode & 0o7777
    p.kill()
    p.wait()
    if mode != 0o640:
        fail("reader segment %s has mode %04o, not 0640" % (path, mode))
    return path


def readers(tickplane, sim, lib_path, workdir):
    instance = tpit.instance_name("tpread")
    pcap = capture(sim, workdir)
    sock = os.path.join(workdir, "control.sock")
    path = tpit.write_config(config(instance, pcap, sock), os.path.join(workdir, "r.json"))
    daemon = start(tickplane, path)
    try:
        wait_for("the daemon", lambda: serving(daemon, sock), 60)
        left = killed_reader(lib_path, instance)
        wait_for("the daemon's sweep of %s" % left, lambda: not os.path.exists(left), 30)
        left = killed_reader(lib_path, instance)
        stop(daemon)
        if os.path.exists(left):
            fail("the daemon exited leaving a killed reader's segment: " + left)
        print("ok: killed readers' segments removed, by the sweep and at exit")
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait()
        cleanup(instance)


def main():
    tickplane, sim, lib_path, scenario = sys.argv[1:5]
    with tempfile.TemporaryDirectory(prefix="tpsafe-") as workdir:
        if scenario == "second_instance":
            second_instance(tickplane, sim, workdir)
        elif scenario == "control_socket":
            control_socket(tickplane, sim, workdir)
        elif scenario == "bus_full":
            bus_full(tickplane, sim, workdir)
        elif scenario == "readers":
            readers(tickplane, sim, lib_path, workdir)
        elif scenario == "squat":
            squat(tickplane, sim, lib_path, workdir)
        else:
            fail("unknown scenario " + scenario)


if __name__ == "__main__":
    main()
