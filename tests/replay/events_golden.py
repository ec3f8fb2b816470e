#!/usr/bin/env python3
"""tickplane-replay --events is byte for byte what it was: the event files of fixed captures,
with and without selections, against their recorded SHA-256 and size.

The captures are checked in (golden-itch.pcap: `tickplane-sim itch --seed 11 --symbols 12
--messages 1200 --loss-a 0.02 --reorder-b 0.01`, MoldUDP64 lines A and B through the arbiter;
golden-mdp3.pcap: `tickplane-sim mdp3 --seed 11 --symbols 6 --messages 300 --loss-a 0.02
--snapshot-every 50`, recovery from snapshots; tests/books/replay_digest_input.bin, a BinaryFILE)
so that a change of the simulator cannot move them. A change that alters the file format or the
records on purpose records the new sums here and says why. The MDP3 sums with status or order
records changed when an order-level book's order view got its flag (ordersIncomplete: a status
event when it is set at the definition and when a 53 clears it, and the OrderEvent removing order
id 0 a 53 load starts with); depth and trades stayed the same.

usage: events_golden.py REPLAY DATA_DIR BINARYFILE WORK_DIR
"""
import hashlib
import os
import subprocess
import sys

CASES = [
    ("golden-itch.pcap", [],
     "a4a86d50e2477eb7e9b8e57987e4f3bcc6b0d12c47f491a8af106f0879ea275f", 188648),
    ("golden-itch.pcap", ["--symbols", "AAAB*"],
     "6759fe860288171b3441229d5e2b94c06c6a0f721b00e629419140b6e08ef7bd", 8392),
    ("golden-itch.pcap", ["--topics", "depth,trades"],
     "631d0c5a4803e1a228c9c61acfdcf514d039cd94a0c217dd47dff0bb360ec9fa", 185352),
    ("golden-itch.pcap", ["--topics", "orders,status", "--symbols", "*C*"],
     "e46ca664c279a6d27601365ca621a025bb91006bdc75085ec1d5ccfa82e1a1f9", 51848),
    ("golden-mdp3.pcap", [],
     "1d28adc195c27eece956d8faaae4e6716f0053e56f617e9428ee024bd08acba9", 100912),
    ("golden-mdp3.pcap", ["--symbols", "AAAB*"],
     "1fad4d71d492af99d18d8f6db8f9f3a15dac65f17469c6e3fbb67b56b9d7e11b", 9648),
    ("golden-mdp3.pcap", ["--topics", "depth,trades"],
     "780ccf3f830f3823cd53a8f4a13f627ea86094488bee4cdd1715f156630c9055", 50544),
    ("golden-mdp3.pcap", ["--topics", "orders,status", "--symbols", "*C*"],
     "066f5d041c88521887ee93b04db4e18a8cfa15a8ba86f2bb60e301a09a3eb70e", 26528),
    ("BINARYFILE", [],
     "c6a9076485182157ccfeb690d68ca3ff1d774e94da297a6f4700f9796a2634e3", 93784),
    ("BINARYFILE", ["--symbols", "AAAB*"],
     "0d28493f84e9a6420777508976977812a7b981802d512de97f5625d40b273058", 11840),
    ("BINARYFILE", ["--topics", "depth,trades"],
     "dd5f6dcd94e75f435eb0e6fbd28185d45459f3826a5a9484c837e99a513a6455", 92728),
    ("BINARYFILE", ["--topics", "orders,status", "--symbols", "*C*"],
     "40313d921f773dd1cf3c9a199ac7744fa9e3086748c9567a9c061b69f119e533", 22616),
]


def main():
    replay, data, binaryfile, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    failed = 0
    for k, (capture, selection, digest, size) in enumerate(CASES):
        path = binaryfile if capture == "BINARYFILE" else os.path.join(data, capture)
        out = os.path.join(work, "case%d.tpev" % k)
        subprocess.run([replay, "--quiet", "--events", out, *selection, path], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
        with open(out, "rb") as f:
            got = f.read()
        sha = hashlib.sha256(got).hexdigest()
        name = "%s %s" % (os.path.basename(path), " ".join(selection) or "(all)")
        if sha != digest or len(got) != size:
            print("FAIL %s: %d bytes, sha256 %s; expected %d bytes, %s"
                  % (name, len(got), sha, size, digest))
            failed += 1
        else:
            print("ok   %s: %d bytes" % (name, size))
    print("%d passed, %d failed" % (len(CASES) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
