#!/usr/bin/env python3
"""Integration test: tickplane-replay rebuilds the books the simulator says it sent.

The simulator (tools/sim) writes an ITCH BinaryFILE, an ITCH pcap and MDP3 pcaps (with faults)
plus its ground truth, computed from its own orders, never from tickplane's book code. The replay
must agree with it level by level (price, qty, order count), and on volume and last price.
usage: replay_vs_sim.py SIM REPLAY WORKDIR
"""
import json
import os
import subprocess
import sys


def run(cmd):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def replay(tool, path, *extra, orders=65536, stderr=None):
    # Tables sized for the test (the defaults are for whole Nasdaq days); a replay that does not
    # finish in a minute is a failure of its own (a clear once swept 10^10 slots). `stderr`: a
    # list that gets the replay's warnings (not its JSON throughput lines).
    out = subprocess.run([tool, '--depth', '10', '--instruments', '256', '--orders', str(orders),
                          '--levels', '128', *extra, path], check=True,
                         capture_output=True, text=True, timeout=60)
    if stderr is not None:
        stderr.extend(l for l in out.stderr.splitlines() if l.startswith('tickplane-replay:'))
    return json.loads(out.stdout)


def levels(side):
    return [(l['price9'], l['qty'], l['orders']) for l in side]


def compare(truth, got, prefix='', skip_stale=False, keys=('volume', 'last_price9', 'status', 'trades')):
    """Returns the number of instruments compared; raises on any mismatch."""
    by_symbol = {i['symbol'].rstrip(): i for i in got['instruments']}
    compared = 0
    for t in truth['instruments']:
        g = by_symbol.get(t['symbol']) or next(
            (v for k, v in by_symbol.items() if k.startswith(t['symbol'])), None)
        assert g is not None, 'instrument %s missing' % t['symbol']
        if skip_stale and g.get('stale'):
            continue
        for side in ('bids', 'asks'):
            want = levels(t[side])
            have = levels(g[prefix + side])[:len(want)]
            assert want == have, '%s %s: want %s got %s' % (t['symbol'], side, want[:3], have[:3])
        for key in keys:
            assert t[key] == g[key], '%s %s: want %s got %s' % (t['symbol'], key, t[key], g[key])
        compared += 1
    return compared


def main():
    sim, tool, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    p = lambda name: os.path.join(work, name)

    # ITCH: BinaryFILE and the same flow as MoldUDP64 in a pcap (A and B lines, VLAN tag).
    run([sim, 'itch', '--seed', '11', '--symbols', '50', '--messages', '30000',
         '--binaryfile', p('itch.bin'), '--pcap', p('itch.pcap'), '--vlan', '141',
         '--truth', p('itch.truth.json')])
    truth = json.load(open(p('itch.truth.json')))
    got = replay(tool, p('itch.bin'))
    assert compare(truth, got) == 50
    assert got['counters']['itch']['rejected'] == 0, got['counters']
    got = replay(tool, p('itch.pcap'))
    assert compare(truth, got) == 50
    assert got['counters']['duplicates'] > 0  # line B's copies were dropped

    # ITCH with a byte flipped in 1% of line A's packets: the UDP checksum catches each, line B's
    # copy takes its place, books exact. --no-checksum (a capture from the sending host) takes
    # the flipped packets as they are.
    run([sim, 'itch', '--seed', '14', '--symbols', '20', '--messages', '30000', '--corrupt-a',
         '0.01', '--pcap', p('itchbad.pcap'), '--truth', p('itchbad.truth.json'),
         '--report', p('itchbad.report.json')])
    truth = json.load(open(p('itchbad.truth.json')))
    flipped = len(json.load(open(p('itchbad.report.json')))['lines']['A']['corrupted'])
    got = replay(tool, p('itchbad.pcap'))
    assert got['counters']['bad_checksum'] == flipped > 0, (got['counters'], flipped)
    assert compare(truth, got) == 20
    got = replay(tool, p('itchbad.pcap'), '--no-checksum')
    assert got['counters']['bad_checksum'] == 0, got['counters']

    # MDP3 with line A losing packets: line B fills every gap, books exact.
    run([sim, 'mdp3', '--seed', '12', '--symbols', '30', '--messages', '15000',
         '--loss-a', '0.05', '--pcap', p('mdp3.pcap'), '--truth', p('mdp3.truth.json')])
    truth = json.load(open(p('mdp3.truth.json')))
    got = replay(tool, p('mdp3.pcap'))
    # MDP3 trade summaries aggregate executions, so trade counts differ from the model's.
    mdp3_keys = ('volume', 'last_price9', 'status')
    assert compare(truth, got, keys=mdp3_keys) == 30
    assert compare(truth, got, prefix='order_', keys=mdp3_keys) == 30
    assert got['counters']['mdp3']['rpt_seq_gaps'] == 0, got['counters']
    # Every snapshot at a book's RptSeq was compared with it, and none differed.
    audit = got['counters']['mdp3']
    assert audit['snapshots_audited'] > 1000 and audit['snapshot_mismatch'] == 0, audit

    # MDP3 with packets lost on both lines: RptSeq jumps make instruments stale, snapshots
    # recover them; every instrument not stale at the end has exact books (the trades lost in the
    # gaps stay lost, so volume is not compared).
    run([sim, 'mdp3', '--seed', '13', '--symbols', '30', '--messages', '15000',
         '--both-loss', '0.02', '--pcap', p('mdp3loss.pcap'), '--truth', p('mdp3loss.truth.json')])
    truth = json.load(open(p('mdp3loss.truth.json')))
    got = replay(tool, p('mdp3loss.pcap'))
    counters = got['counters']['mdp3']
    assert counters['rpt_seq_gaps'] > 0 and counters['snapshots'] > 0, counters
    compared = compare(truth, got, skip_stale=True, keys=('status',))
    assert compared > 0, 'no instrument recovered'
    # An order-only change (47) carries no RptSeq: its loss shows only in the order-level audit,
    # which finds the order book different from the order-level snapshot at its sequence (this
    # capture lost three such packets, of three instruments). The price-level audit finds none.
    assert counters['order_snapshot_mismatch'] == 3, counters
    assert counters['snapshot_mismatch'] == counters['order_snapshot_mismatch'], counters

    # MDP3 capture that starts after AAAA's book existed (its first 5 events' levels, trades and
    # statistics are not in it): the book in sync by RptSeq lacks their levels until its first
    # snapshot at that RptSeq, which the audit finds different and adopts. A short session:
    # those levels are still in the final books (without the audit they stayed wrong).
    run([sim, 'mdp3', '--seed', '12', '--symbols', '20', '--messages', '400', '--unseen-levels',
         '0:5', '--pcap', p('unseen.pcap'), '--truth', p('unseen.truth.json')])
    truth = json.load(open(p('unseen.truth.json')))
    warnings = []
    got = replay(tool, p('unseen.pcap'), stderr=warnings)
    assert len(warnings) == 1 and 'a snapshot differs from its book' in warnings[0], warnings
    unseen = got['counters']['mdp3']
    assert unseen['snapshot_mismatch'] == 1 and unseen['rpt_seq_gaps'] == 0, unseen
    aaaa = next(i for i in got['instruments'] if i['symbol'].startswith('AAAA'))
    assert aaaa['anomalies']['snapshot_mismatch'] == 1 and not aaaa['stale'], aaaa
    assert compare(truth, got, keys=('status',)) == 20
    assert compare(truth, got, prefix='order_', keys=('status',)) == 20

    # Many recoveries of few instruments, in an order table large enough that the sweep of
    # stale orders lags: the order books are cleared often enough for their generations to wrap
    # (tp_mbo.c), with and without stale entries left (a wrap without stale entries must not
    # bring old orders back, or the next clear's sweep never ends). Both books stay exact.
    run([sim, 'mdp3', '--seed', '9', '--symbols', '20', '--messages', '200000', '--no-line-b',
         '--both-loss', '0.01', '--snapshot-every', '200', '--pcap', p('mdp3wrap.pcap'),
         '--truth', p('mdp3wrap.truth.json')])
    truth = json.load(open(p('mdp3wrap.truth.json')))
    got = replay(tool, p('mdp3wrap.pcap'), orders=524288)
    wrap = got['counters']['mdp3']
    assert wrap['snapshots'] > 1000, wrap
    assert compare(truth, got, skip_stale=True, keys=('status',)) == 20
    assert compare(truth, got, prefix='order_', skip_stale=True, keys=('status',)) == 20
    print('ok: itch 50+50, mdp3 30+30, mdp3 with loss %d of 30 in sync (gaps %d, snapshots %d), '
          'mdp3 with %d snapshots 20+20, mdp3 unseen levels 20+20 (%d audited, 1 mismatch)'
          % (compared, counters['rpt_seq_gaps'], counters['snapshots'], wrap['snapshots'],
             unseen['snapshots_audited']))


if __name__ == '__main__':
    main()
