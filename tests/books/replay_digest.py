#!/usr/bin/env python3
"""Integration test: tickplane-replay --digest is a stable fingerprint of the change records.

On a small committed ITCH BinaryFILE (replay_digest_input.bin, from tickplane-sim itch --seed 5
--symbols 4 --messages 600): the digest is the same over two runs and over --repeat; it changes
when one Add Order's quantity differs; --no-changes says the digest covers no change record;
without --digest the summary has no digest (the default run does not compute it).
usage: replay_digest.py REPLAY INPUT WORKDIR
"""
import json
import os
import subprocess
import sys

SIZES = ['--instruments', '64', '--orders', '4096', '--levels', '64']


def summary(tool, path, *extra, expect_rc=0):
    out = subprocess.run([tool, '--quiet', *SIZES, *extra, path], capture_output=True, text=True)
    assert out.returncode == expect_rc, out.stderr
    lines = [json.loads(l) for l in out.stderr.splitlines() if l.startswith('{')]
    return lines[:-1], lines[-1]


def alter_first_add_order(data):
    """BinaryFILE: 2-byte big-endian length, then the message. Add Order 'A': shares at 20."""
    pos = 0
    while pos + 2 <= len(data):
        n = int.from_bytes(data[pos:pos + 2], 'big')
        msg = pos + 2
        if data[msg:msg + 1] == b'A' and n == 36:
            shares = int.from_bytes(data[msg + 20:msg + 24], 'big')
            data[msg + 20:msg + 24] = (shares + 1).to_bytes(4, 'big')
            return
        pos = msg + n
    raise AssertionError('no Add Order in the input')


def main():
    tool, path, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)

    _, plain = summary(tool, path)
    assert 'change_digest' not in plain, 'the default run must not compute the digest'

    runs1, first = summary(tool, path, '--digest')
    _, second = summary(tool, path, '--digest')
    digest = first['change_digest']
    assert len(digest) == 16 and int(digest, 16) != 0xcbf29ce484222325, first
    assert second['change_digest'] == digest
    assert runs1[0]['change_digest'] == digest
    assert first['digest_change_records'] > 1000 and first['digest_events'] > 500, first
    assert first['digest_covers'] == 'change_records,events,stale'

    runs, rep = summary(tool, path, '--digest', '--repeat', '3')
    assert [r['change_digest'] for r in runs] == [digest] * 3, runs
    assert rep['change_digest'] == digest and rep['digest_runs_equal'] is True
    assert rep['digest_change_records'] == first['digest_change_records']

    data = bytearray(open(path, 'rb').read())
    alter_first_add_order(data)
    altered = os.path.join(work, 'altered.bin')
    open(altered, 'wb').write(data)
    _, other = summary(tool, altered, '--digest')
    assert other['change_digest'] != digest, 'one quantity differs, the digest must too'

    _, none = summary(tool, path, '--digest', '--no-changes')
    assert none['digest_change_records'] == 0 and 'no change records' in none['digest_covers']
    assert none['change_digest'] != digest
    print('digest', digest, 'records', first['digest_change_records'], 'ok')


if __name__ == '__main__':
    main()
