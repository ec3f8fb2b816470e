#!/usr/bin/env python3
"""Writes a Nasdaq ITCH 5.0 BinaryFILE whose book is deep and whose top keeps moving.

The simulator's books are shallow (a few levels a side), so a level layout whose cost grows
with the depth below the change looks free on its files. This one stock, DEEP, first rests
--depth orders a side at --depth prices, then --loops times adds a bid one tick above the best
and deletes it: every message adds or removes the best level of a side with --depth levels
below it, the worst case of a best-first array and the best case of a best-last one.

    deep_book_itch.py --depth 500 --loops 500000 deep500.bin
    tickplane-replay --quiet --levels 1024 --orders 65536 deep500.bin
"""
import argparse
import struct

TICK = 100  # price(4): $0.01
BASE = 1_000_000  # $100.00


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--depth", type=int, default=500, help="resting levels a side")
    ap.add_argument("--loops", type=int, default=500_000, help="new best bids added and deleted")
    ap.add_argument("out", help="BinaryFILE to write")
    args = ap.parse_args()

    out = bytearray()
    clock = [0]

    def message(body):
        out.extend(struct.pack(">H", len(body)))
        out.extend(body)

    def header(kind):
        clock[0] += 1000  # 1 us apart, ns since midnight in 6 bytes
        return kind + struct.pack(">HH", 1, 0) + struct.pack(">Q", clock[0])[2:]

    def add(ref, side, price):
        message(header(b"A") + struct.pack(">Q", ref) + side + struct.pack(">I", 100) +
                b"DEEP    " + struct.pack(">I", price))

    message(header(b"R") + b"DEEP    " + b"QN" + struct.pack(">I", 100) + b"NC  PNN1N" +
            struct.pack(">I", 0) + b"N")
    ref = 0
    for i in range(args.depth):
        ref += 1
        add(ref, b"B", BASE - TICK * i)
        ref += 1
        add(ref, b"S", BASE + TICK * (6 + i))
    for _ in range(args.loops):
        ref += 1
        add(ref, b"B", BASE + TICK)
        message(header(b"D") + struct.pack(">Q", ref))
    with open(args.out, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
