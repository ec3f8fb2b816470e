#!/usr/bin/env python3
"""Writes the fuzz_channel seed corpus (tests/fuzz/corpus/fuzz_channel/) from small tickplane-sim
captures: the UDP payloads of each line as fuzz_channel records (see the header of
fuzz_channel.c), in order, with line losses, bursts, re-request replies and timer runs.

    tickplane-sim itch --seed 1 --symbols 3 --messages 30 --pcap itch.pcap
    tickplane-sim mdp3 --seed 1 --symbols 3 --messages 30 --snapshot-every 4 \
        --definition-every 4 --pcap mdp3.pcap
    fuzz_channel_seeds.py itch.pcap mdp3.pcap OUT_DIR
"""
import struct
import sys

# Line role of each (group, port) the simulator sends to by default (channel.h enum tp_line_role).
ROLES = {
    ("233.54.12.111", 26477): 0,  # ITCH line A
    ("233.49.196.111", 26477): 1,  # ITCH line B
    ("224.0.25.1", 17901): 0,  # MDP3 incrementals A
    ("224.0.25.9", 18901): 1,  # MDP3 incrementals B
    ("224.0.25.126", 19901): 2,  # MDP3 snapshots
    ("224.0.25.227", 21901): 3,  # MDP3 MBO snapshots
    ("224.0.25.126", 16901): 4,  # MDP3 definitions
}
POLL, BURST = 0x08, 0x10
NO_PACKET = 7
RETRANS = 6  # ITCH: re-request replies; MDP3: an order-level snapshot line


def payloads(path):
    """(role, UDP payload) of every frame of a capture sent to a known line."""
    data = open(path, "rb").read()
    endian = "<" if data[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1") else ">"
    off, out = 24, []
    while off + 16 <= len(data):
        caplen = struct.unpack(endian + "I", data[off + 8 : off + 12])[0]
        frame = data[off + 16 : off + 16 + caplen]
        off += 16 + caplen
        eth = 14 + (4 if frame[12:14] == b"\x81\x00" else 0)
        ip = frame[eth:]
        ihl = (ip[0] & 15) * 4
        dst = ".".join(str(b) for b in ip[16:20])
        port, ulen = struct.unpack(">HH", ip[ihl + 2 : ihl + 6])
        role = ROLES.get((dst, port))
        if role is not None:
            out.append((role, ip[ihl + 8 : ihl + ulen]))
    return out


def merge(packets):
    """One MoldUDP64 packet carrying the messages of consecutive packets (as a re-request reply
    or the other line may batch them): the first one's header, counts added, blocks joined."""
    count = sum(struct.unpack(">H", p[18:20])[0] for p in packets)
    return packets[0][:18] + struct.pack(">H", count) + b"".join(p[20:] for p in packets)


def record(role, payload=b"", step=1, scale=0, poll=True, burst=False):
    ctl = role | (POLL if poll else 0) | (BURST if burst else 0) | (scale << 5)
    if role == NO_PACKET:
        return bytes([ctl, step])
    return bytes([ctl, step]) + struct.pack(">H", len(payload)) + payload


def write(out_dir, name, cfg, records):
    with open(f"{out_dir}/{name}", "wb") as f:
        f.write(bytes([cfg]) + b"".join(records))


def main():
    itch_pcap, mdp3_pcap, out_dir = sys.argv[1:4]
    itch = payloads(itch_pcap)
    a = [p for r, p in itch if r == 0]
    # ITCH, re-request server, 16 held packets.
    cfg = 0x42
    write(out_dir, "itch_ab", cfg, [record(r, p) for r, p in itch[:24]])
    write(out_dir, "itch_burst", cfg,
          [record(0, p, burst=(i % 4 == 0)) for i, p in enumerate(a[:12])])
    gap = [record(0, p) for i, p in enumerate(a[:8]) if i != 3]
    gap += [record(NO_PACKET, step=200), record(NO_PACKET, step=200), record(RETRANS, a[3])]
    write(out_dir, "itch_gap_rerequest", cfg, gap)
    lost = [record(0, p) for i, p in enumerate(a[:8]) if i != 3]
    lost += [record(NO_PACKET, step=50, scale=3) for _ in range(3)]
    write(out_dir, "itch_give_up", cfg, lost)
    write(out_dir, "itch_no_server_adopt", 0x20 | 0x40,
          [record(0, p) for i, p in enumerate(a[4:14]) if i != 2] +
          [record(NO_PACKET, step=200)])
    # Four held packets at most: the packets behind a lost one overflow, then the lost one comes
    # back as a re-request reply.
    write(out_dir, "itch_held_overflow", 0x02,
          [record(0, p) for i, p in enumerate(a[:12]) if i != 1] +
          [record(NO_PACKET, step=200), record(RETRANS, a[1])])
    # Copies batched differently: line B's packets overlap what line A applied (skip), and a
    # re-request reply covers a gap and more.
    write(out_dir, "itch_overlap", cfg,
          [record(0, a[0]), record(1, merge(a[0:3])), record(0, a[1]), record(0, a[2]),
           record(1, merge(a[3:5])), record(0, a[3]), record(0, a[6]), record(0, a[7]),
           record(NO_PACKET, step=200), record(RETRANS, merge(a[4:8])), record(0, a[8])])
    # A new session (another session id) restarting at sequence 1 on both lines.
    renamed = [b"SESSION002" + p[10:] for p in a[:6]]
    write(out_dir, "itch_new_session", cfg,
          [record(0, p) for p in a[:6]] + [record(r, p) for p in renamed for r in (0, 1)])

    mdp3 = payloads(mdp3_pcap)
    # MDP3, snapshot and definition lines, order-level books, 16 held packets.
    cfg = 0x01 | 0x04 | 0x08 | 0x10 | 0x40
    write(out_dir, "mdp3_all_lines", cfg, [record(r, p) for r, p in mdp3[:24]])
    incr = [(r, p) for r, p in mdp3 if r in (0, 4)]
    write(out_dir, "mdp3_incremental_loss", cfg,
          [record(r, p) for i, (r, p) in enumerate(incr[:16]) if i != 8] +
          [record(NO_PACKET, step=200)] +
          [record(r, p) for r, p in mdp3 if r in (2, 3)][:6])
    inc_a = [p for r, p in mdp3 if r == 0]
    snaps = [(r, p) for r, p in mdp3 if r in (2, 3)]
    # Definitions first, a lost incremental (its instruments go stale), then snapshots.
    write(out_dir, "mdp3_lost_incremental", cfg,
          [record(r, p) for r, p in mdp3 if r == 4][:4] +
          [record(0, p) for i, p in enumerate(inc_a[:10]) if i != 4] +
          [record(r, p) for r, p in snaps[:8]])
    # With the order-level snapshot lines: the MBO snapshots on their own line (role 6, line A
    # with an even time step), after a lost incremental.
    write(out_dir, "mdp3_mbo_lines", cfg | 0x20,
          [record(r, p) for r, p in mdp3 if r == 4][:4] +
          [record(0, p) for i, p in enumerate(inc_a[:10]) if i != 4] +
          [record(RETRANS if r == 3 else r, p, step=2) for r, p in snaps[:12]])
    # The incremental stream restarts at sequence 1 on both lines (after more than 9 packets).
    write(out_dir, "mdp3_restart", 0x01 | 0x40,
          [record(0, p) for p in inc_a[:12]] + [record(r, p) for p in inc_a[:3] for r in (0, 1)])
    write(out_dir, "mdp3_incremental_only", 0x01 | 0x40,
          [record(0, p, burst=(i % 5 == 0)) for i, (r, p) in enumerate(mdp3) if r == 0][:10])


if __name__ == "__main__":
    main()
