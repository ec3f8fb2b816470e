#!/usr/bin/env python3
"""Books against a public peer: tickplane-replay and charles-cooper/itch-order-book, paired.

Both programs build books from the same Nasdaq ITCH 5.0 BinaryFILE read from the page cache, and
each reports the time of its own loop over the messages: tickplane-replay its run's wall time
(and CPU time), the peer the wall time from its first add order to its last message ("nanos per
packet"). They are run alternately, the first of each pair taking turns, so that both see the
same minutes of a shared machine, and each pair gives one ratio, tickplane's ns a message over
the peer's. On a loaded machine the wall clock also counts the time a loop waited for a core, so
each pair gives a second ratio, of CPU time in the loop: tickplane-replay's thread CPU time, and
the peer's read from /proc/PID/schedstat at its two lines (run_peer says how it is stopped there
without being changed). tickplane-replay runs on one core (--threads 1, as the peer does;
--threads N for more) with its other defaults (change records built and delivered to a
counting sink, as the daemon's publisher takes them) and, in the same pairs, with --no-changes;
given --baseline BIN, an older tickplane-replay runs in the same pairs too (with the same
--threads), so that a change's effect on the ratio is read from the same minutes.

The peer is not part of tickplane and is not built here. To run against it, build it from its
public source at commit PEER_COMMIT (its README: `./build.sh`, which leaves a.out) and pass
--peer PATH/a.out (or set TP_BOOKS_PEER). Without it the program says so and prints a skip
line: {"bench": "books_peer", "skipped": "..."}.

The files: --file F (any number), or with --sim SIM the simulator's (seed 3, 2000 symbols) and
with --flow the independent flow (flow_itch.py, seed 7), made in --workdir when missing.

One JSON line per pair, then per file a summary: the median ratio (wall and CPU), the ratios'
range, both programs' median ns a message, the load average before and after.

usage: bench_books_peer.py --replay REPLAY [--peer A_OUT] [--baseline REPLAY] [--pairs N]
                           [--threads N] [--workdir DIR] [--sim SIM] [--flow] [--messages N]
                           [--file F ...]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

PEER = 'charles-cooper/itch-order-book'
PEER_COMMIT = '095ac97'  # the commit the figures in docs/BENCHMARKS.md were measured at
HERE = os.path.dirname(os.path.abspath(__file__))


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def warm(path):
    """Reads the file once so that both programs find it in the page cache."""
    with open(path, 'rb') as f:
        while f.read(1 << 24):
            pass


def run_replay(replay, path, extra=()):
    out = subprocess.run([replay, '--quiet', *extra, path], check=True, capture_output=True,
                         text=True)
    run = next(json.loads(l) for l in out.stderr.splitlines() if l.startswith('{"run"'))
    return run['ns_per_msg'], run['cpu_ns_per_msg']


def fill(fd):
    """Fills a pipe (non-blocking write end) to the last byte."""
    for chunk in (b'.' * 4096, b'.'):
        try:
            while True:
                os.write(fd, chunk)
        except BlockingIOError:
            pass


def blocked_writing(pid):
    """Waits until the process sleeps in write(2) (its stdout pipe full): True, or False if it
    ended first."""
    while True:
        try:
            with open('/proc/%d/syscall' % pid) as f:
                if f.read().split(' ', 1)[0] == '1':
                    with open('/proc/%d/stat' % pid) as g:
                        if g.read().rsplit(')', 1)[1].split()[0] == 'S':
                            return True
        except OSError:
            return False
        if os.waitpid(pid, os.WNOHANG)[0]:
            return False
        time.sleep(0.0005)


def cpu_ns(pid):
    with open('/proc/%d/schedstat' % pid) as f:
        return int(f.read().split()[0])


def run_peer(peer, path):
    """
    The peer's in-loop wall ns a message (it reads the file on stdin) and CPU ns a message, or
    (None, None) if it failed. Its CPU time in the loop is read without changing it: it writes a
    line when its setup is done and one after its loop, and its stdout (line-buffered by stdbuf)
    is a pipe kept full, so that each write puts it to sleep until the pipe is read; the CPU time
    it has run (/proc/PID/schedstat) is read while it sleeps. CPU time is what a loaded machine
    changes least: the wall clock counts the time the loop waited for a core.
    """
    r, w = os.pipe()
    # The harness fills the pipe through a description of its own, non-blocking; the peer's
    # stays blocking (the flag belongs to the description, which a child would share).
    filler = os.open('/proc/self/fd/%d' % w, os.O_WRONLY | os.O_NONBLOCK)
    fill(filler)
    with open(path, 'rb') as f:
        proc = subprocess.Popen(['stdbuf', '-oL', peer], stdin=f, stdout=w)
    os.close(w)
    marks, out = [], b''
    for _ in range(2):
        if not blocked_writing(proc.pid):
            break
        marks.append(cpu_ns(proc.pid))
        if len(marks) == 2:
            break
        # Let the setup's line through, then fill the pipe again while the loop runs.
        while b'\n' not in out:
            chunk = os.read(r, 1 << 16)
            if not chunk:
                break
            out += chunk
        fill(filler)
    os.close(filler)
    os.set_blocking(r, True)
    while True:
        chunk = os.read(r, 1 << 16)
        if not chunk:
            break
        out += chunk
    os.close(r)
    rc = proc.wait()
    text = out.decode(errors='replace')
    m = re.search(r'([0-9]+) packets in [0-9]+ nanos , ([0-9.]+) nanos per packet', text)
    if rc != 0 or not m:
        return None, None
    # Two marks: the setup's line and the loop's. The second must be the loop's last line, not a
    # line written while the pipe had room (the harness was late): then the CPU time is unknown.
    cpu = (marks[1] - marks[0]) / int(m.group(1)) if len(marks) == 2 and \
        text.rstrip().endswith('nanos per packet') else None
    return float(m.group(2)), cpu


def make_files(a):
    files = list(a.file or [])
    m = a.messages
    if a.sim:
        path = os.path.join(a.workdir, 'itch-sim3-%d.bin' % m)
        if not os.path.exists(path):
            subprocess.run([a.sim, 'itch', '--seed', '3', '--symbols', '2000', '--messages',
                            str(m), '--binaryfile', path], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        files.append(path)
    if a.flow:
        path = os.path.join(a.workdir, 'itch-flow7-%d.bin' % m)
        if not os.path.exists(path):
            subprocess.run([sys.executable, os.path.join(HERE, 'flow_itch.py'), '--seed', '7',
                            '--symbols', '2000', '--messages', str(m), path], check=True)
        files.append(path)
    return files


def pairs(a, peer, path):
    rows = []
    warm(path)
    for i in range(a.pairs):
        r = {}
        # The first of a pair takes turns: neither program always runs right after the other.
        order = ('tp', 'peer') if i % 2 == 0 else ('peer', 'tp')
        for who in order:
            if who == 'tp':
                threads = ('--threads', str(a.threads))
                r['tp_ns'], r['tp_cpu_ns'] = run_replay(a.replay, path, threads)
                r['tp_no_changes_ns'], _ = run_replay(a.replay, path, threads + ('--no-changes',))
                if a.baseline:
                    r['baseline_ns'], r['baseline_cpu_ns'] = run_replay(a.baseline, path, threads)
            else:
                r['peer_ns'], r['peer_cpu_ns'] = run_peer(peer, path)
        if r['peer_ns'] is None:
            return None
        r['ratio'] = r['tp_ns'] / r['peer_ns']
        r['ratio_no_changes'] = r['tp_no_changes_ns'] / r['peer_ns']
        if r['peer_cpu_ns']:
            r['cpu_ratio'] = r['tp_cpu_ns'] / r['peer_cpu_ns']
        if a.baseline:
            r['ratio_baseline'] = r['baseline_ns'] / r['peer_ns']
            if r['peer_cpu_ns']:
                r['cpu_ratio_baseline'] = r['baseline_cpu_ns'] / r['peer_cpu_ns']
        print(json.dumps({'bench': 'books_peer_pair', 'file': path, 'pair': i, 'first': order[0],
                          **{k: v if v is None else round(v, 4) for k, v in r.items()}}),
              flush=True)
        rows.append(r)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--replay', required=True)
    ap.add_argument('--peer', default=os.environ.get('TP_BOOKS_PEER'))
    ap.add_argument('--baseline')
    ap.add_argument('--pairs', type=int, default=7)
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--workdir', default='.')
    ap.add_argument('--sim')
    ap.add_argument('--flow', action='store_true')
    ap.add_argument('--messages', type=int, default=5000000)
    ap.add_argument('--file', action='append')
    a = ap.parse_args()
    if not a.peer or not os.access(a.peer, os.X_OK):
        why = ('no peer given: build %s at commit %s from its public source (its ./build.sh '
               'leaves a.out) and pass --peer PATH/a.out or set TP_BOOKS_PEER' % (PEER, PEER_COMMIT)
               if not a.peer else 'the peer %s is not an executable file' % a.peer)
        print('bench_books_peer: skipped: ' + why, file=sys.stderr)
        print(json.dumps({'bench': 'books_peer', 'skipped': why}))
        return 0
    os.makedirs(a.workdir, exist_ok=True)
    files = make_files(a)
    if not files:
        ap.error('no file: give --file F, --sim SIM or --flow')
    for path in files:
        load = os.getloadavg()[0]
        rows = pairs(a, a.peer, path)
        if rows is None:
            print(json.dumps({'bench': 'books_peer', 'file': path,
                              'error': 'the peer failed on this file or printed no time'}))
            return 1
        ratios = [r['ratio'] for r in rows]
        cpu = [r['cpu_ratio'] for r in rows if r.get('cpu_ratio')]
        baseline = {}
        if a.baseline:
            baseline = {
                'baseline_program': a.baseline,
                'ratio_baseline_median': round(median(r['ratio_baseline'] for r in rows), 4),
                'baseline_ns_per_msg_median': round(median(r['baseline_ns'] for r in rows), 2),
                'baseline_cpu_ns_per_msg_median': round(median(r['baseline_cpu_ns']
                                                               for r in rows), 2),
                'cpu_ratio_baseline_median': round(median(r['cpu_ratio_baseline'] for r in rows
                                                          if r.get('cpu_ratio_baseline')), 4)
                if cpu else None}
        print(json.dumps({
            'bench': 'books_peer', 'file': path, 'peer': PEER, 'peer_program': a.peer,
            'pairs': len(rows), 'ratio_median': round(median(ratios), 4),
            'ratio_min': round(min(ratios), 4), 'ratio_max': round(max(ratios), 4),
            'ratio_no_changes_median': round(median(r['ratio_no_changes'] for r in rows), 4),
            'tp_ns_per_msg_median': round(median(r['tp_ns'] for r in rows), 2),
            'tp_cpu_ns_per_msg_median': round(median(r['tp_cpu_ns'] for r in rows), 2),
            'tp_no_changes_ns_per_msg_median': round(median(r['tp_no_changes_ns'] for r in rows),
                                                     2),
            'peer_ns_per_msg_median': round(median(r['peer_ns'] for r in rows), 2),
            'cpu_ratio_median': round(median(cpu), 4) if cpu else None, 'cpu_pairs': len(cpu),
            'peer_cpu_ns_per_msg_median': round(median(r['peer_cpu_ns'] for r in rows
                                                       if r.get('cpu_ratio')), 2) if cpu else None,
            **baseline,
            'loadavg_1m_before': load, 'loadavg_1m_after': os.getloadavg()[0]}), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
