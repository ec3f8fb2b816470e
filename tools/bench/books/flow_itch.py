#!/usr/bin/env python3
"""Writes a Nasdaq ITCH 5.0 BinaryFILE of an order flow made independently of tickplane-sim.

A book builder tuned on the simulator's files may be tuned to the simulator: its order ids
(consecutive), its prices (a few ticks from the top), its sizes and its message mix. This flow
draws each of them differently, from its own seeded generator:
  - order ids: increasing, with gaps (1 + a geometric number of ids skipped, as when a venue
    numbers orders across all its books and some go to other venues' feeds);
  - stocks: Pareto-skewed activity (a few stocks take most messages), 4-digit locates in a
    shuffled order;
  - prices: a mid per stock that moves a tick with executions (within 20 ticks of its start);
    orders rest 1 + geometric(0.25) ticks from it, so books are deeper than the simulator's;
    ticks of $0.01 on stocks from $2 to $400;
  - sizes: round lots with a heavy tail, odd lots 10% of the time;
  - mix: 42% adds (5% with attribution) while fewer than --live orders rest, 30% after, the rest
    deletes, replaces, executions (a third with a price, some not printable), partial cancels and
    5% trades of hidden orders (P); which order a message names is drawn from all live orders,
    young and old alike (the simulator favours young ones).
Only valid messages are written: every execution, cancel, delete and replace names a live order
and never takes more than it has. Messages are those every ITCH book builder reads: the system
event, stock directory, add (A/F), executions (E/C), cancel, delete, replace and trade (P).

    flow_itch.py --seed 7 --symbols 2000 --messages 5000000 flow.bin
"""
import argparse
import bisect
import random
import struct


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--symbols", type=int, default=2000)
    ap.add_argument("--messages", type=int, default=5_000_000)
    ap.add_argument("--live", type=int, default=60_000, help="live orders the flow keeps about")
    ap.add_argument("out", help="BinaryFILE to write")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    out = bytearray()
    clock = [34_200_000_000_000]  # 09:30 in ns since midnight

    def message(body):
        out.extend(struct.pack(">H", len(body)))
        out.extend(body)

    def header(kind, locate):
        clock[0] += 1 + int(rng.expovariate(1 / 2000))
        t = clock[0]
        return struct.pack(">cHHHI", kind, locate, 0, t >> 32, t & 0xFFFFFFFF)

    locates = list(range(1, a.symbols + 1))
    rng.shuffle(locates)
    mids, base, names = {}, {}, {}
    message(header(b"S", 0) + b"O")
    for i, loc in enumerate(locates):
        name = names[loc] = ("F%06d" % i).encode().ljust(8)
        message(header(b"R", loc) + name + b"QN" + struct.pack(">I", 100) + b"NC  PNN1N" +
                struct.pack(">I", 0) + b"N")
        base[loc] = mids[loc] = int(rng.uniform(200, 40000)) * 100  # price(4), $2 to $400
    cum, total = [], 0.0
    for k in range(a.symbols):
        total += 1 / (k + 1) ** 1.1
        cum.append(total)

    live = {}  # ref -> [locate, side, price, shares]
    refs = []  # live refs, for a uniform pick; index in pos
    pos = {}
    next_ref = [rng.randrange(1, 1 << 20)]
    match = [0]

    def new_ref():
        next_ref[0] += 1
        while rng.random() < 0.3:
            next_ref[0] += 1
        return next_ref[0]

    def drop(ref):
        i = pos.pop(ref)
        last = refs.pop()
        if last != ref:
            refs[i] = last
            pos[last] = i
        del live[ref]

    def keep(ref, o):
        live[ref] = o
        pos[ref] = len(refs)
        refs.append(ref)

    def shares():
        if rng.random() < 0.1:
            return rng.randrange(1, 100)
        return 100 * min(int(rng.paretovariate(1.3)), 500)

    def place(loc, side):
        ticks = 1
        while rng.random() < 0.75 and ticks < 400:
            ticks += 1
        mid = mids[loc]
        p = mid - 100 * ticks if side == b"B" else mid + 100 * ticks
        return max(p, 100)

    def pick_stock():
        return locates[min(bisect.bisect_left(cum, rng.random() * total), len(cum) - 1)]

    def add(loc, mpid):
        side = b"B" if rng.random() < 0.5 else b"S"
        ref, qty, price = new_ref(), shares(), place(loc, side)
        body = header(b"F" if mpid else b"A", loc) + struct.pack(">Qc", ref, side) + \
            struct.pack(">I", qty) + names[loc] + \
            struct.pack(">I", price)
        if mpid:
            body += b"TPFL"
        message(body)
        keep(ref, [loc, side, price, qty])

    written = 1 + a.symbols
    while written < a.messages:
        r = rng.random()
        # More adds than removals until the book holds about --live orders, then fewer
        if r < (0.42 if len(refs) < a.live else 0.30) or not refs:
            add(pick_stock(), rng.random() < 0.05)
        elif r < 0.95:
            ref = refs[rng.randrange(len(refs))]
            o = live[ref]
            loc = o[0]
            if r < 0.69:
                message(header(b"D", loc) + struct.pack(">Q", ref))
                drop(ref)
            elif r < 0.78:
                nref, qty = new_ref(), shares()
                price = place(loc, o[1])
                message(header(b"U", loc) + struct.pack(">QQII", ref, nref, qty, price))
                drop(ref)
                keep(nref, [loc, o[1], price, qty])
            elif r < 0.87:
                qty = o[3] if rng.random() < 0.6 else rng.randrange(1, o[3] + 1)
                match[0] += 1
                if rng.random() < 0.33:
                    printable = b"Y" if rng.random() < 0.8 else b"N"
                    message(header(b"C", loc) + struct.pack(">QIQ", ref, qty, match[0]) +
                            printable + struct.pack(">I", o[2]))
                else:
                    message(header(b"E", loc) + struct.pack(">QIQ", ref, qty, match[0]))
                # The mid follows the trades, pulled back within 20 ticks of where it began
                step = 100 if o[1] == b"S" else -100
                if abs(mids[loc] + step - base[loc]) <= 2000:
                    mids[loc] += step
                o[3] -= qty
                if o[3] == 0:
                    drop(ref)
            elif o[3] > 1:
                # Only partial cancels: an order that leaves whole goes as a delete
                qty = rng.randrange(1, o[3])
                message(header(b"X", loc) + struct.pack(">QI", ref, qty))
                o[3] -= qty
            else:
                message(header(b"D", loc) + struct.pack(">Q", ref))
                drop(ref)
        else:
            loc = pick_stock()
            match[0] += 1
            side = b"B" if rng.random() < 0.5 else b"S"
            message(header(b"P", loc) + struct.pack(">QcI", 0, side, shares()) +
                    names[loc] +
                    struct.pack(">IQ", mids[loc], match[0]))
        written += 1
    message(header(b"S", 0) + b"C")
    with open(a.out, "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main()
