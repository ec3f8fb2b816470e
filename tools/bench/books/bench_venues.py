#!/usr/bin/env python3
"""Decode + book update per message, per venue: ITCH, MDP3 and EOBI beside each other.

The exchange simulator (tools/sim) writes the same order flow (same seed, symbols and events) as
an ITCH MoldUDP64 capture, an MDP3 capture and an EOBI capture, line A only, lossless and without
snapshot loops (a healthy feed does not read them); each is replayed through tickplane-replay (the
data plane's own framing, decoders, feeds and books, change records delivered to a counting sink,
UDP checksums taken as the NIC's, no DPDK) --repeat times. A venue message is not the same
amount of work everywhere (an MDP3 message carries several entries, an EOBI execution is two
messages), so each row gives the thread CPU time per venue message and per model event (one
order-book event of the simulator). The machine may be shared: --rounds N interleaves the venues N
times and reports the medians of the rounds. One JSON object per line on stdout.

usage: bench_venues.py --sim SIM --replay REPLAY --workdir DIR [--messages N] [--symbols N]
                       [--runs N] [--rounds N]
"""
import argparse
import json
import os
import statistics
import subprocess

VENUES = ('itch', 'mdp3', 'eobi')


def generate(sim, work, venue, messages, symbols):
    pcap = os.path.join(work, 'venues-%s-%d-%d.pcap' % (venue, messages, symbols))
    report = pcap + '.report.json'
    snapshots = [] if venue == 'itch' else ['--snapshot-every', '0']
    if not os.path.exists(report):
        subprocess.run([sim, venue, '--seed', '1', '--symbols', str(symbols), '--messages',
                        str(messages), '--no-line-b', *snapshots, '--pcap', pcap, '--report',
                        report],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(report) as f:
        return pcap, json.load(f)['events']


def replay(tool, venue, pcap, runs):
    out = subprocess.run([tool, '--venue', venue, '--quiet', '--no-checksum', '--repeat', str(runs),
                          '--instruments', '4096', '--orders', '1048576', pcap], check=True,
                         capture_output=True, text=True)
    return [json.loads(l) for l in out.stderr.splitlines() if '"summary"' in l][0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sim', required=True)
    ap.add_argument('--replay', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--messages', type=int, default=1000000)
    ap.add_argument('--symbols', type=int, default=200)
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--rounds', type=int, default=1)
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    inputs = {v: generate(a.sim, a.workdir, v, a.messages, a.symbols) for v in VENUES}
    rounds = {v: [] for v in VENUES}
    for _ in range(a.rounds):
        for v in VENUES:
            rounds[v].append(replay(a.replay, v, inputs[v][0], a.runs))
    for v in VENUES:
        events = inputs[v][1]
        msgs = rounds[v][0]['messages']
        cpu = statistics.median(s['cpu_ns_per_msg_median'] for s in rounds[v])
        wall = statistics.median(s['ns_per_msg_median'] for s in rounds[v])
        print(json.dumps({'bench': 'venue_decode_book_update', 'venue': v, 'messages': msgs,
                          'model_events': events, 'runs': a.runs, 'rounds': a.rounds,
                          'cpu_ns_per_msg': round(cpu, 2), 'wall_ns_per_msg': round(wall, 2),
                          'cpu_ns_per_event': round(cpu * msgs / events, 2),
                          'msgs_per_sec_cpu': round(1e9 / cpu)}))


if __name__ == '__main__':
    main()
