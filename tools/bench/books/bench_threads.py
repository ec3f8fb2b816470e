#!/usr/bin/env python3
"""tickplane-replay --threads: paired runs of 1, 2 and 3 workers on the same ITCH BinaryFILE.

Generates the simulator's 5 M-message day (seed 3, 2000 symbols; tools/sim) unless it is there,
then runs rounds of `tickplane-replay --quiet --threads N` for N = 1, 2, 3 back to back (the
order turns each round, so no N always runs first), and, with --events, the same with an event
file written to /dev/null (the merge of the workers' logs). Each run's in-loop figures come from
the replay's own summary line: wall ns per message and CPU ns per message (the thread's for one
worker, the process's for more).

Printed, one JSON object per line: each run; then per N the medians, the CPU per worker, the
median over rounds of the paired speedup wall(1) / wall(N), and the same with the planning pass
that cuts the workers' windows before the run (plan_seconds, not in the run's figures) added to
each side; then the cost model from the CPU medians:
  framing = cpu(3) - cpu(2)       what every worker pays for every message (framing, sorting out
                                  its own, counting the others' priorities)
  apply   = cpu(2) - 2 * framing  what is split (book updates, change records, prefetching)
  speedup(N) = cpu(1) / (framing + apply / N)   for N = 2, 4, 16, 64, the cores idle and the
                                  memory bus not the limit.
The machine may be shared: the load average is printed with the figures.

usage: bench_threads.py --sim SIM --replay REPLAY --workdir DIR [--rounds N] [--events]
"""
import argparse
import json
import os
import subprocess


def summary(tool, path, threads, extra):
    out = subprocess.run([tool, '--quiet', '--threads', str(threads), *extra, path],
                         capture_output=True, text=True, check=True, timeout=600)
    return json.loads([l for l in out.stderr.splitlines() if '"summary"' in l][0])


def plan_ns(s):
    """The planning pass before the run (windows of the workers), per message."""
    return s['plan_seconds'] * 1e9 / s['messages'] if s['messages'] else 0


def median(values):
    v = sorted(values)
    return v[len(v) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sim', required=True)
    ap.add_argument('--replay', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--rounds', type=int, default=7)
    ap.add_argument('--events', action='store_true')
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    path = os.path.join(a.workdir, 'itch-5m-2000-seed3.bin')
    if not os.path.exists(path):
        subprocess.run([a.sim, 'itch', '--seed', '3', '--symbols', '2000', '--messages',
                        '5000000', '--binaryfile', path], check=True, stdout=subprocess.DEVNULL)
    variants = [('replay', ())]
    if a.events:
        variants.append(('replay_events', ('--events', '/dev/null')))
    load = os.getloadavg()[0]
    for name, extra in variants:
        runs = {1: [], 2: [], 3: []}
        for r in range(a.rounds):
            order = [1, 2, 3][r % 3:] + [1, 2, 3][:r % 3]
            for n in order:
                s = summary(a.replay, path, n, extra)
                runs[n].append(s)
                print(json.dumps({'bench': 'books_replay_threads_run', 'variant': name,
                                  'round': r, 'threads': n, 'workers': s['threads'],
                                  'ns_per_msg': s['ns_per_msg_median'],
                                  'cpu_ns_per_msg': s['cpu_ns_per_msg_median'],
                                  'plan_ns_per_msg': plan_ns(s)}))
        wall = {n: [s['ns_per_msg_median'] for s in runs[n]] for n in runs}
        job = {n: [s['ns_per_msg_median'] + plan_ns(s) for s in runs[n]] for n in runs}
        cpu = {n: median(s['cpu_ns_per_msg_median'] for s in runs[n]) for n in runs}
        for n in runs:
            print(json.dumps({
                'bench': 'books_replay_threads', 'variant': name, 'threads': n,
                'file': path, 'messages': runs[n][0]['messages'], 'rounds': a.rounds,
                'ns_per_msg_median': median(wall[n]), 'cpu_ns_per_msg_median': cpu[n],
                'paired_speedup_median': median(w1 / wn for w1, wn in zip(wall[1], wall[n])),
                'plan_ns_per_msg_median': median(plan_ns(s) for s in runs[n]),
                'paired_speedup_with_plan_median': median(
                    j1 / jn for j1, jn in zip(job[1], job[n])),
                'cpu_ns_per_msg_per_worker': cpu[n] / runs[n][0]['threads'],
                'book_bytes': runs[n][0]['book_bytes'],
                'peak_rss_kb': max(s['peak_rss_kb'] for s in runs[n]),
                'loadavg_1m': load}))
        framing = cpu[3] - cpu[2]
        apply = cpu[2] - 2 * framing
        print(json.dumps({
            'bench': 'books_replay_threads_model', 'variant': name,
            'cpu_ns_per_msg_one_thread': cpu[1], 'framing_ns_per_msg_per_worker': framing,
            'apply_ns_per_msg_split': apply,
            'projected_speedup': {str(n): round(cpu[1] / (framing + apply / n), 2)
                                  for n in (2, 4, 16, 64)} if framing > 0 else None,
            'loadavg_1m': load}))


main()
