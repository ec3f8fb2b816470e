#!/usr/bin/env python3
"""Integration test: the simulator's EOBI session through tickplane-replay equals its truth.

tickplane-sim eobi writes incremental packets on lines A and B (each losing packets, and some
lost on both: gaps only the snapshot loop repairs) and the snapshot loop, plus its ground truth
computed from its own orders. tickplane-replay --venue eobi runs the data plane's EOBI feed over
the capture: every segment must have recovered, no book may be left stale, and every book must
equal the truth level by level (price, qty, order count) with its status, and its volume (after
a loss on both lines, the snapshot's TradeVolume counts the lost trades in). Trade counts equal
the truth on a lossless run; with losses on both lines they may only miss the trades of the lost
packets (no snapshot message counts trades). The snapshot loop goes out on both snapshot lines:
line A loses some of its packets, line B's copies fill them in and the rest are dropped as
duplicates. A session with a line that joins late starts from the snapshot loop.
usage: replay_eobi_vs_sim.py SIM REPLAY WORKDIR
"""
import json
import os
import subprocess
import sys


def sim(tool, work, name, *extra):
    paths = {k: os.path.join(work, '%s.%s' % (name, k)) for k in ('pcap', 'truth', 'report')}
    subprocess.run([tool, 'eobi', '--seed', '11', '--symbols', '24', '--messages', '30000',
                    '--segments', '3', '--snapshot-every', '150', '--depth', '10',
                    '--pcap', paths['pcap'], '--truth', paths['truth'], '--report',
                    paths['report'], *extra], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    with open(paths['truth']) as f:
        truth = json.load(f)
    with open(paths['report']) as f:
        report = json.load(f)
    return paths['pcap'], truth, report


def replay(tool, pcap, *extra):
    out = subprocess.run([tool, '--venue', 'eobi', '--depth', '10', '--instruments', '64',
                          '--orders', '65536', '--levels', '128', *extra, pcap], check=True,
                         capture_output=True, text=True, timeout=60)
    got = json.loads(out.stdout)
    return got, got['counters']['eobi']


def compare(truth, got, exact_trades):
    by_symbol = {i['symbol']: i for i in got['instruments']}
    assert len(by_symbol) == len(truth['instruments']), (len(by_symbol),
                                                         len(truth['instruments']))
    for t in truth['instruments']:
        g = by_symbol.get(str(t['security_id']))
        assert g is not None, 'SecurityID %d missing' % t['security_id']
        assert not g['stale'], 'SecurityID %d left stale' % t['security_id']
        for side in ('bids', 'asks'):
            want = [(l['price9'], l['qty'], l['orders']) for l in t[side]]
            have = [(l['price9'], l['qty'], l['orders']) for l in g[side]]
            assert want == have, '%d %s: want %s got %s' % (t['security_id'], side, want[:3],
                                                            have[:3])
        assert g['status'] == t['status'], (t['security_id'], g['status'], t['status'])
        assert g['volume'] == t['volume'], (t['security_id'], g['volume'], t['volume'])
        if exact_trades:
            assert g['trades'] == t['trades'], t['security_id']
        else:
            assert g['trades'] <= t['trades'], t['security_id']
        if t['trades']:
            assert g['last_price9'] == t['last_price9'], t['security_id']


def main():
    sim_tool, replay_tool, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)

    pcap, truth, _ = sim(sim_tool, work, 'clean')
    got, e = replay(replay_tool, pcap)
    compare(truth, got, exact_trades=True)
    assert e['gaps'] == 0

    # Loss on each line, and on both: the snapshot loop must repair the gaps.
    pcap, truth, report = sim(sim_tool, work, 'lossy', '--loss-a', '0.02', '--loss-b', '0.02',
                              '--both-loss', '0.003', '--snapshot-loss-a', '0.2')
    both = len(report['lines']['A']['both_lost'])
    assert both > 0, 'the session lost nothing on both lines'
    got, e = replay(replay_tool, pcap)
    compare(truth, got, exact_trades=False)
    assert e['gaps'] > 0 and e['snapshots'] >= e['gaps'], e
    assert e['recovering'] == 0 and e['rejected'] == 0 and e['malformed'] == 0, e
    # Line B's snapshot copies filled what A lost, and no copy broke a snapshot.
    assert report['lines']['A']['snapshot_lost'] and not report['lines']['B']['snapshot_lost']
    assert e['snapshots_broken'] == 0, e
    assert e['duplicates'] > 0, e  # the other line's copies

    # Line A joins late and B does not exist: the books start from the snapshot loop.
    pcap, truth, _ = sim(sim_tool, work, 'late', '--late-join-a', '4000', '--no-line-b')
    got, late = replay(replay_tool, pcap)
    compare(truth, got, exact_trades=False)
    assert late['snapshots'] > 0 and late['recovering'] == 0, late

    # T7 release 7.0 layouts, with losses: the same books; read as 6.0, its packets are refused.
    pcap, truth, _ = sim(sim_tool, work, 'r70', '--eobi-release', '7.0', '--loss-a', '0.02',
                         '--loss-b', '0.02', '--both-loss', '0.003')
    got, r70 = replay(replay_tool, pcap, '--eobi-release', '7.0')
    compare(truth, got, exact_trades=False)
    assert r70['gaps'] > 0 and r70['recovering'] == 0 and r70['malformed'] == 0, r70
    assert r70['release_mismatch'] == 0, r70
    _, wrong = replay(replay_tool, pcap, '--eobi-release', '6.0')
    assert wrong['release_mismatch'] > wrong['packets'] // 2, wrong
    assert wrong['snapshots'] == 0 and wrong['recovering'] > 0, wrong
    # The option is the EOBI venue's own (replay_venue.options): a release it does not know is
    # refused before anything is read, with the releases it knows.
    bad = subprocess.run([replay_tool, '--venue', 'eobi', '--eobi-release', '8.0', pcap],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and bad.stdout == '', (bad.returncode, bad.stdout)
    assert "--eobi-release: unknown T7 release '8.0' (known: 6.0, 7.0)" in bad.stderr, bad.stderr

    print('replay_eobi_vs_sim: %d instruments, %d gaps on both lines repaired by %d snapshots' %
          (len(truth['instruments']), e['gaps'], e['snapshots']))


if __name__ == '__main__':
    main()
