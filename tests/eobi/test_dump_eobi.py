#!/usr/bin/env python3
"""tickplane-dump --proto eobi end to end: a capture of EOBI 6.0 packets built here (one on a
VLAN), good and hostile, through the real binary; every line and error report is checked.

usage: test_dump_eobi.py TICKPLANE-DUMP WORK-DIR
"""
import json
import os
import struct
import subprocess
import sys

DUMP, WORK = sys.argv[1], sys.argv[2]
GROUP, PORT = bytes([224, 0, 114, 47]), 59001


def header(appl_seq_num, segment=589, completion=1):
    return struct.pack('<HHIQiBBBxQ', 32, 13002, 0xFFFFFFFF, appl_seq_num, segment, 3,
                       completion, 0, 1700000000123456789)


def message(template_id, body, seq):
    return struct.pack('<HHI', 8 + len(body), template_id, seq) + body


def order_add(seq, price, qty=25, side=1):
    details = struct.pack('<QiBBxxq', 1700000000000000001 + seq, qty, side, 2, price)
    return message(13100, struct.pack('<Qq', 11, 2049587) + details, seq)


def instrument_summary(seq, entries):
    fixed = struct.pack('<qQQHBBBBBB', 2049587, 1, 0xFFFFFFFFFFFFFFFF, 7, 1, 203, 0, 0, 255,
                        len(entries))
    return message(13601, fixed + b''.join(struct.pack('<qiBBxx', *e) for e in entries), seq)


def frame(payload, vlan=None):
    eth = bytes.fromhex('01005e00722f') + bytes(6)
    eth += (struct.pack('!HH', 0x8100, vlan) if vlan is not None else b'') + b'\x08\x00'
    udp = struct.pack('!HHHH', 40000, PORT, 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,
                     bytes([10, 0, 0, 1]), GROUP)
    return eth + ip + udp


def write_pcap(path, payloads):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b23c4d, 2, 4, 0, 0, 65535, 1))  # ns stamps
        for i, (payload, vlan) in enumerate(payloads):
            fr = frame(payload, vlan)
            f.write(struct.pack('<IIII', 1700000000, i, len(fr), len(fr)) + fr)


def run(*args):
    p = subprocess.run([DUMP, *args], capture_output=True, text=True, timeout=60)
    return p.returncode, [json.loads(line) for line in p.stdout.splitlines()], p.stderr


def check(cond, what):
    if not cond:
        print('FAIL:', what)
        sys.exit(1)


os.makedirs(WORK, exist_ok=True)
clean = os.path.join(WORK, 'clean.pcap')
write_pcap(clean, [
    (header(1000) + order_add(1, 996150000000) + order_add(2, -1050000000, side=2), 141),
    (header(1001) + instrument_summary(3, [(-(1 << 63), 4, 2, 1), (150000000, 9, 0, 0)]), None),
    (header(1002, completion=0), None),
])
rc, lines, err = run('--proto', 'eobi', clean)
check(rc == 0 and err == '', f'clean capture: exit {rc}, stderr {err!r}')
check(len(lines) == 4, f'clean capture: {len(lines)} lines')
a, b, s, h = lines
check(a['proto'] == 'eobi' and a['vlan'] == 141 and a['dst'] == '224.0.114.47:59001', 'flow')
check(a['ts_ns'] == 1700000000 * 10**9, 'capture time')
ph = a['packetheader']
check((ph['applseqnum'], ph['marketsegmentid'], ph['partitionid'], ph['completionindicator'],
       ph['transacttime']) == (1000, 589, 3, 1, 1700000000123456789), f'packet header {ph}')
m = a['msg']
check(a['index'] == 1 and m['message'] == 'OrderAdd' and m['msgseqnum'] == 1, 'first message')
check((m['securityid'], m['displayqty'], m['side'], m['ordtype'], m['price'], m['price_p9'])
      == (2049587, 25, 1, 2, '9961.50000000', 9961500000000), f'order add {m}')
check(b['index'] == 2 and b['msg']['price'] == '-10.50000000' and b['msg']['side'] == 2,
      'second message')
e = s['msg']
check(e['message'] == 'InstrumentSummary' and e['trdregtsexecutiontime'] == 2**64 - 1, 'summary')
check(e['nomdentries'] == 2 and [x['mdentrypx'] for x in e['mdentries']] == [None, '1.50000000'],
      f'entries {e.get("mdentries")}')
check(h['index'] == 0 and 'msg' not in h and h['packetheader']['completionindicator'] == 0,
      'header-only packet')

hostile = os.path.join(WORK, 'hostile.pcap')
good = order_add(9, 100000000)
write_pcap(hostile, [
    (header(2000)[:20], None),                                           # cut PacketHeader
    (header(2001) + good + good[:30], None),                             # cut message
    (header(2002) + struct.pack('<HHI', 0, 13100, 1) + good, None),      # zero BodyLen
    (header(2003) + message(13400, bytes(16), 5) + good, None),          # not decoded
    (header(2004) + message(13202, bytes(48), 6) + good, None),          # short ExecutionSummary
])
rc, lines, err = run('--summary', '--map', '224.0.114.47:59001=eobi', hostile)
reports = err.splitlines()
check(rc == 1, f'hostile capture exits {rc}')
check('frame 1 offset 42: EOBI packet of 20 bytes has no valid PacketHeader' in reports[0],
      reports[0])
check('frame 2 offset 122: EOBI BodyLen does not fit the packet' in reports[1], reports[1])
check('frame 3 offset 74: EOBI BodyLen does not fit the packet' in reports[2], reports[2])
check('frame 4 offset 74: EOBI template 13400 is not decoded' in reports[3], reports[3])
check('frame 5 offset 74: EOBI template 13202 of 56 bytes is shorter than its layout'
      in reports[4], reports[4])
check('5 frames, 3 messages, 5 malformed, 0 skipped' in reports[5], reports[5])
by_frame = {}
for line in lines:
    by_frame.setdefault(line['frame'], []).append(line)
check(1 not in by_frame and 3 not in by_frame and len(by_frame[2]) == 1, 'cut frames')
check(by_frame[4][0]['msg'] is None and by_frame[4][1]['msg']['message'] == 'OrderAdd',
      'unknown template is skipped by its BodyLen')
short = by_frame[5][0]['msg']
check(short['truncated'] and 'lastpx' in short and 'restinghiddenqty' not in short,
      f'short message {short}')

# T7 release 7.0: quantities are int64 with 4 decimals, so the OrderDetailsComp grows.
def order_add_70(seq, price, qty):
    details = struct.pack('<QqBB6xq', 1700000000000000001 + seq, qty, 1, 2, price)
    return message(13100, struct.pack('<Qq', 11, 2049587) + details, seq)


r70 = os.path.join(WORK, 'release70.pcap')
write_pcap(r70, [(header(3000) + order_add_70(1, 996150000000, 125000), None)])
rc, lines, err = run('--proto', 'eobi', '--eobi-release', '7.0', r70)
check(rc == 0 and err == '' and len(lines) == 1, f'7.0 capture: exit {rc}, stderr {err!r}')
m = lines[0]['msg']
check((m['message'], m['bodylen'], m['securityid'], m['displayqty'], m['side'], m['price'])
      == ('OrderAdd', 56, 2049587, '12.5000', 1, '9961.50000000'), f'7.0 order add {m}')
rc, lines, err = run('--proto', 'eobi', '--eobi-release', '6.0', r70)
check(rc == 1 and "EOBI packet is in T7 release 7.0's layouts, not 6.0's (--eobi-release)" in err,
      f'7.0 capture read as 6.0: exit {rc}, stderr {err!r}')
rc, _, err = run('--proto', 'eobi', '--eobi-release', '8.0', r70)
check(rc == 2 and "unknown T7 release '8.0' (known: 6.0, 7.0)" in err, f'bad release: {err!r}')
print('ok: tickplane-dump --proto eobi, clean and hostile captures, release 7.0')
