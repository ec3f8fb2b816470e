#!/usr/bin/env python3
"""tickplane-replay --events is byte for byte what it was: the event files of fixed captures,
with and without selections, against their recorded SHA-256 and size.

The captures are checked in (golden-itch.pcap: `tickplane-sim itch --seed 11 --symbols 12
--messages 1200 --loss-a 0.02 --reorder-b 0.01`, MoldUDP64 lines A and B through the arbiter;
golden-mdp3.pcap: `tickplane-sim mdp3 --seed 11 --symbols 6 --messages 300 --loss-a 0.02
--snapshot-every 50`, recovery from snapshots; tests/books/replay_digest_input.bin, a BinaryFILE)
so that a change of the simulator cannot move them. A change that alters the file format or the
records on purpose records the new sums here and says why.

usage: events_golden.py REPLAY DATA_DIR BINARYFILE WORK_DIR
"""
import hashlib
import os
import subprocess
import sys

CASES = [
    ("golden-itch.pcap", [],
     "3de63afced656afc5c3ddc44eb9e862ce4c4f3d55e2b0ebe9192cc8cc124eb8c", 188648),
    ("golden-itch.pcap", ["--symbols", "AAAB*"],
     "e2552e50490dfd8c26fa3741e609348a1e128f702e687b0ac71c466991d46b59", 8392),
    ("golden-itch.pcap", ["--topics", "depth,trades"],
     "7ca472e154febd2ed20521488286d98951cba2c460759ea92c4f81ff07287c0a", 185352),
    ("golden-itch.pcap", ["--topics", "orders,status", "--symbols", "*C*"],
     "8099205c09f297cf0820f28c159220cb25f6936938981859ae236bd39b109a0e", 51848),
    ("golden-mdp3.pcap", [],
     "12c1a671cb5c79e1a3d5aa385b551902a0a941c75e1954f9f8cb2f2bbc31aa6c", 123760),
    ("golden-mdp3.pcap", ["--symbols", "AAAB*"],
     "71baf5f6cc30dd18594d89a8d1f362bda6d591cead7e298b8fc7ea5b07ed0bf1", 13008),
    ("golden-mdp3.pcap", ["--topics", "depth,trades"],
     "90080ee3288bab101219134beab3fe2b29e305b23a911e05c5e11b0c8a7e05e7", 50544),
    ("golden-mdp3.pcap", ["--topics", "orders,status", "--symbols", "*C*"],
     "44e48d6aca98cef8ee724139bc36230d497b5b83965316642102e3783980b142", 36160),
    ("BINARYFILE", [],
     "5e5a416d554ec1896b2d2d91f9c2bec8a0602172a9d757bd18402a17f21ae018", 93784),
    ("BINARYFILE", ["--symbols", "AAAB*"],
     "e5ed1da26daaa10023333d45723d6bb9127cee3e299162b1ce8cef50b880c4b6", 11840),
    ("BINARYFILE", ["--topics", "depth,trades"],
     "998d7043b628b36e46ef2c68d40792646b3b17ce3e5925215fdc2b64447e0adf", 92728),
    ("BINARYFILE", ["--topics", "orders,status", "--symbols", "*C*"],
     "d599ed47826f7e8b8057c5d72d16f4d8a214377ceb5ac2145a7177f09e8e97d3", 22616),
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
