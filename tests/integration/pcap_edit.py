"""Reading and rewriting classic pcap captures of UDP datagrams, for tests that make hostile
captures from the simulator's: forged packets, sequence jumps, cut captures. Every datagram
written gets a valid UDP checksum, so only the handler's own rules can reject it.
"""
import struct

ETH_IPV4, ETH_VLAN = 0x0800, 0x8100


class Frame:
    """One pcap record: its header fields and the frame bytes, with the UDP payload located."""

    def __init__(self, ts_sec, ts_frac, data):
        self.ts_sec, self.ts_frac, self.data = ts_sec, ts_frac, bytearray(data)
        off = 12
        eth_type = struct.unpack_from("!H", data, off)[0]
        while eth_type == ETH_VLAN:
            off += 4
            eth_type = struct.unpack_from("!H", data, off)[0]
        self.ip = off + 2 if eth_type == ETH_IPV4 else None
        if self.ip is None or data[self.ip + 9] != 17:
            self.udp = None
            return
        self.udp = self.ip + (data[self.ip] & 0x0F) * 4

    @property
    def dst(self):
        return struct.unpack_from("!4sH", self.data, self.ip + 16)[0], \
            struct.unpack_from("!H", self.data, self.udp + 2)[0]

    @property
    def payload(self):
        length = struct.unpack_from("!H", self.data, self.udp + 4)[0]
        return bytes(self.data[self.udp + 8:self.udp + length])

    def with_payload(self, payload):
        """A copy carrying `payload` instead, lengths and both checksums made right."""
        f = Frame(self.ts_sec, self.ts_frac, bytes(self.data))
        head = bytes(f.data[:f.udp + 8])
        f.data = bytearray(head + payload)
        struct.pack_into("!H", f.data, f.udp + 4, 8 + len(payload))
        struct.pack_into("!H", f.data, f.ip + 2, f.udp - f.ip + 8 + len(payload))
        struct.pack_into("!H", f.data, f.ip + 10, 0)
        struct.pack_into("!H", f.data, f.ip + 10, _checksum(bytes(f.data[f.ip:f.udp])))
        struct.pack_into("!H", f.data, f.udp + 6, 0)
        pseudo = bytes(f.data[f.ip + 12:f.ip + 20]) + struct.pack("!BBH", 0, 17, 8 + len(payload))
        csum = _checksum(pseudo + bytes(f.data[f.udp:]))
        struct.pack_into("!H", f.data, f.udp + 6, csum or 0xFFFF)
        return f


def _checksum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def read(path):
    """(global header bytes, [Frame]) of a classic little-endian pcap."""
    with open(path, "rb") as f:
        raw = f.read()
    header, frames, off = raw[:24], [], 24
    while off < len(raw):
        ts_sec, ts_frac, caplen, _ = struct.unpack_from("<IIII", raw, off)
        frames.append(Frame(ts_sec, ts_frac, raw[off + 16:off + 16 + caplen]))
        off += 16 + caplen
    return header, frames


def write(path, header, frames):
    with open(path, "wb") as f:
        f.write(header)
        for fr in frames:
            f.write(struct.pack("<IIII", fr.ts_sec, fr.ts_frac, len(fr.data), len(fr.data)))
            f.write(bytes(fr.data))


def mold_sequence(payload):
    """(session, sequence, count) of a MoldUDP64 payload."""
    return payload[:10], struct.unpack_from("!QH", payload, 10)[0], \
        struct.unpack_from("!QH", payload, 10)[1]


def mold_with(payload, session=None, sequence=None):
    """The MoldUDP64 payload with another session id and/or sequence number."""
    p = bytearray(payload)
    if session is not None:
        p[:10] = session
    if sequence is not None:
        struct.pack_into("!Q", p, 10, sequence)
    return bytes(p)
