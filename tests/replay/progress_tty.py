#!/usr/bin/env python3
"""tickplane-replay's progress line: on stderr when it is a terminal (a real pseudo-terminal
here), with bytes, messages/s and the time left; nothing on a pipe; nothing with --quiet.

The session is long enough that a replay lasts well past the first progress line (half a second
in) on any machine: 6 M ITCH messages, replayed with its event file and digest (the slowest
options), made once in WORK_DIR.

usage: progress_tty.py SIM REPLAY WORK_DIR
"""
import os
import pty
import re
import subprocess
import sys

PROGRESS = re.compile(r"\r *\d+\.\d%  \d+\.\d / \d+\.\d MB  \d+\.\d\d M msgs/s  ETA \d+ s")


def replay_on_tty(replay, args):
    """stderr of the replay through a pseudo-terminal, as a user's terminal shows it."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([replay, *args], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=slave)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the replay closed the terminal's last descriptor
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=600) == 0, "replay failed: %r" % out[-500:]
    return out.decode()


def main():
    sim, replay, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    session = os.path.join(work, "itch-6m.bin")
    if not os.path.exists(session):
        subprocess.run([sim, "itch", "--seed", "5", "--symbols", "500", "--messages", "6000000",
                        "--binaryfile", session + ".part"], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        os.replace(session + ".part", session)
    slow = ["--digest", "--events", "/dev/null", session]
    failed = 0

    def check(name, ok, detail):
        nonlocal failed
        print("%s %s%s" % ("ok  " if ok else "FAIL", name, "" if ok else ": " + detail))
        failed += not ok

    tty = replay_on_tty(replay, slow)
    lines = PROGRESS.findall(tty)
    check("progress on a terminal", len(lines) >= 1, "no progress line in %r" % tty[-500:])
    size_mb = "%.1f MB" % (os.path.getsize(session) / 1e6)
    check("progress names the capture's size", size_mb in tty, "%s not in %r" % (size_mb, lines))
    check("the line is ended before the summary", re.search(r"ETA \d+ s *\r?\n", tty)
          is not None, "no newline after the progress in %r" % tty[-300:])
    check("the summary follows", '"summary":true' in tty, tty[-300:])

    quiet = replay_on_tty(replay, ["--quiet", *slow])
    check("--quiet on a terminal: no progress", "ETA" not in quiet, quiet[-300:])
    check("--quiet keeps the summary", '"summary":true' in quiet, quiet[-300:])

    piped = subprocess.run([replay, *slow], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True, timeout=600, check=True).stderr
    check("a pipe: no progress", "ETA" not in piped and "\r" not in piped, piped[-300:])
    check("a pipe keeps the summary", '"summary":true' in piped, piped[-300:])
    print("%d passed, %d failed" % (8 - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
