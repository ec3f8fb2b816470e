#!/usr/bin/env python3
"""Books benchmark: full order-level books from a Nasdaq-like ITCH BinaryFILE.

Generates the file with the exchange simulator (tools/sim: ~40% adds, 36% deletes, 10% replaces,
12% executions and cancels, 2000 symbols with Zipf-skewed activity, orders near the top of book),
replays it through tickplane-replay (the data plane's ITCH feed and books, no DPDK) several times
and prints one JSON object per line: the median ns per message (wall and CPU time), the peak
resident memory, the peak live orders and the table sizes. A second replay of the same flow with
order ids spread over a 1000x larger id space shows that memory follows the live orders, not the
largest id. A replay with --no-changes measures the books alone, building no change records
(as for instruments nobody subscribes to); the default replay delivers every record to a sink,
as the daemon does to its publisher. The machine may be shared: --rounds N repeats the
measurements N times, interleaved, and reports the medians of the rounds; --baseline BIN runs an
older tickplane-replay in the same rounds, so that the ratio of the two is taken in the same
minutes. Against another ITCH book builder (charles-cooper/itch-order-book), in pairs on the same
file: bench_books_peer.py.

usage: bench_books.py --sim SIM --replay REPLAY --workdir DIR [--messages N] [--symbols N]
                      [--runs N] [--orders N] [--rounds N] [--baseline BIN]
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import time


def generate(sim, path, messages, symbols):
    if not os.path.exists(path):
        subprocess.run([sim, 'itch', '--seed', '1', '--symbols', str(symbols), '--messages',
                        str(messages), '--binaryfile', path], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def spread_ids(src, dst, factor):
    """Copies a BinaryFILE with every order reference multiplied by factor (same flow)."""
    if os.path.exists(dst):
        return
    data = bytearray(open(src, 'rb').read())
    off = 0
    while off + 2 <= len(data):
        n = struct.unpack_from('>H', data, off)[0]
        m = off + 2
        t = data[m:m + 1]
        if t in (b'A', b'F', b'E', b'C', b'X', b'D', b'U'):
            ref = struct.unpack_from('>Q', data, m + 11)[0]
            struct.pack_into('>Q', data, m + 11, ref * factor)
            if t == b'U':
                new = struct.unpack_from('>Q', data, m + 19)[0]
                struct.pack_into('>Q', data, m + 19, new * factor)
        off = m + n
    open(dst, 'wb').write(data)


def replay(tool, path, runs, orders, extra=()):
    out = subprocess.run([tool, '--quiet', '--repeat', str(runs), '--instruments', '2048',
                          '--orders', str(orders), '--levels', '256', *extra, path],
                         check=True, capture_output=True, text=True)
    lines = [json.loads(l) for l in out.stderr.splitlines() if l.startswith('{')]
    return [l for l in lines if 'run' in l], next(l for l in lines if l.get('summary'))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sim', required=True)
    ap.add_argument('--replay', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--messages', type=int, default=5000000)
    ap.add_argument('--symbols', type=int, default=2000)
    ap.add_argument('--runs', type=int, default=5)
    ap.add_argument('--orders', type=int, default=65536)
    ap.add_argument('--rounds', type=int, default=1)
    ap.add_argument('--baseline')
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    path = os.path.join(a.workdir, 'itch-%dm-%d.bin' % (a.messages // 1000000, a.symbols))
    generate(a.sim, path, a.messages, a.symbols)
    load = os.getloadavg()[0]
    variants = [('books_itch_replay', a.replay, ()),
                ('books_itch_replay_no_changes', a.replay, ('--no-changes',))]
    if a.baseline:
        variants.append(('books_itch_replay_baseline', a.baseline, ()))
    rounds = {name: [] for name, _, _ in variants}
    for _ in range(a.rounds):
        for name, tool, extra in variants:
            rounds[name].append(replay(tool, path, a.runs, a.orders, extra)[1])
    for name, tool, _ in variants:
        summaries = rounds[name]

        def median(key):
            v = sorted(x[key] for x in summaries)
            return v[len(v) // 2]
        s = summaries[0]
        print(json.dumps({'bench': name, 'program': tool, 'file': path, 'bytes': s['bytes'],
                          'messages': s['messages'], 'symbols': a.symbols, 'runs': s['runs'],
                          'rounds': a.rounds, 'ns_per_msg_median': median('ns_per_msg_median'),
                          'cpu_ns_per_msg_median': median('cpu_ns_per_msg_median'),
                          'ns_per_msg_min': min(x['ns_per_msg_min'] for x in summaries),
                          'cpu_ns_per_msg_rounds': [x['cpu_ns_per_msg_median']
                                                    for x in summaries],
                          'peak_live_orders': s['peak_live_orders'], 'order_capacity': a.orders,
                          'book_bytes': s['book_bytes'],
                          # the recent-order window and the orders that outlived it (a
                          # baseline built before they were reported has neither)
                          'recent_orders': s.get('recent_orders'),
                          'orders_spilled': s.get('orders_spilled'),
                          'peak_rss_kb': max(x['peak_rss_kb'] for x in summaries),
                          'file_kb_in_rss': s['bytes'] // 1024, 'loadavg_1m': load}))
    # The same flow with order ids 1000x sparser: the tables and RSS must not grow. The copy is
    # made by a child process: a replay forked from this one after it held the file in memory
    # would report that memory as its own peak RSS (Linux keeps the pre-exec high-water mark).
    sparse = path.replace('.bin', '-sparse.bin')
    subprocess.run([sys.executable, __file__, '--spread', path, sparse, '1000'], check=True)
    _, t = replay(a.replay, sparse, 1, a.orders)
    print(json.dumps({'bench': 'books_itch_replay_sparse_ids', 'id_factor': 1000,
                      'ns_per_msg': t['ns_per_msg_median'],
                      'cpu_ns_per_msg': t['cpu_ns_per_msg_median'],
                      'book_bytes': t['book_bytes'], 'peak_rss_kb': t['peak_rss_kb'],
                      'orders_spilled': t.get('orders_spilled')}))


if __name__ == '__main__':
    if len(sys.argv) == 5 and sys.argv[1] == '--spread':
        spread_ids(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()
