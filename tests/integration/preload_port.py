#!/usr/bin/env python3
"""A preloaded port end to end: tickplane-sim writes an ITCH and an MDP3 capture (line A only, no
faults), the real daemon reads each into mbufs at start and serves it from a net_ring port
("pcap" + "preload": true), a consumer attached before the first packet rebuilds the books.

Passes when the consumer's books equal the simulator's truth and the daemon's counters say every
frame of the capture was received once, in order: rx_packets is the capture's frame count, each
was classified (MDP3 snapshot and definition frames of groups the channel has left go to
no_flow), none malformed, line A saw and delivered every packet the simulator sent, with no gap
and nothing held. A dropped frame
shows as a gap (and books that differ), a reordered one as a gap the next frame fills, a frame
served twice as a duplicate.

usage: preload_port.py TICKPLANE SIM CONSUMER
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import tpit
from tpit import fail

TICKPLANE, SIM, CONSUMER = sys.argv[1:4]

CHANNELS = {
    "mdp3": {"name": "cme", "protocol": "mdp3", "id": 310,
             "lines": {"a": {"group": "224.0.25.1", "port": 17901}},
             "recovery": {"snapshot": {"a": {"group": "224.0.25.126", "port": 19901}},
                          "definitions": {"a": {"group": "224.0.25.126", "port": 16901}}}},
    "itch": tpit.itch_channel("a"),
}


def capture_frames(path, protocol):
    """Frames of a classic pcap file (the simulator writes little-endian, nanosecond stamps), and
    how many are ITCH packets without messages: MoldUDP64 heartbeats and the end of session
    (message count 0 and 0xFFFF, after the 42 bytes of an untagged Ethernet/IPv4/UDP header, 10
    of session and 8 of sequence), which the daemon receives without counting them delivered."""
    frames = heartbeats = 0
    with open(path, "rb") as f:
        f.read(24)
        while True:
            header = f.read(16)
            if len(header) < 16:
                return frames, heartbeats
            frame = f.read(struct.unpack("<I", header[8:12])[0])
            frames += 1
            if protocol == "itch" and struct.unpack(">H", frame[60:62])[0] in (0, 0xFFFF):
                heartbeats += 1


def run(workdir, protocol):
    instance = tpit.instance_name("tppl")
    pcap, truth, report = (os.path.join(workdir, protocol + n)
                           for n in (".pcap", ".truth.json", ".report.json"))
    subprocess.run([SIM, protocol, "--pcap", pcap, "--truth", truth, "--report", report,
                    "--seed", "21", "--symbols", "20", "--messages", "20000", "--no-line-b"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port = {"name": "cap", "pcap": os.path.basename(pcap), "preload": True}
    cfg = tpit.base_config(instance, port, [CHANNELS[protocol]])
    cfg_path = tpit.write_config(cfg, os.path.join(workdir, protocol + ".json"))
    ready = os.path.join(workdir, protocol + ".ready")
    consumer = subprocess.Popen(
        [CONSUMER, "--instance", instance, "--truth", truth, "--ready", ready,
         "--idle-ms", "20000", "--timeout-s", "50"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    daemon = tpit.start_held(TICKPLANE, cfg_path, os.path.join(workdir, protocol + ".start"),
                             [ready], idle_exit_ms=2500)
    summary = tpit.finish(daemon)
    out, err = consumer.communicate(timeout=55)
    if consumer.returncode != 0:
        fail("%s: consumer exit %d: %s\n%s" % (protocol, consumer.returncode, out, err[:2000]))
    verdict = json.loads(out)
    if verdict["lost"] != 0 or verdict["stale"] != 0:
        fail("%s: consumer lost %d events, %d stale books" %
             (protocol, verdict["lost"], verdict["stale"]))

    with open(report) as f:
        sim_report = json.load(f)
    sent = sim_report["lines"]["A"]["sent"]
    frames, heartbeats = capture_frames(pcap, protocol)
    ch = summary["channels"][0]
    a = next(d for d in ch["detail"] if d.get("line") == "a")
    checks = [("rx_packets", summary["rx_packets"], frames),
              ("classified", sum(summary["classify"].values()), frames),
              ("malformed or bad checksum",
               summary["classify"]["malformed"] + summary["classify"]["bad_checksum"], 0),
              ("line A packets", a["packets"], sent),
              ("line A delivered", a["delivered"] + heartbeats, sent),
              ("gaps", ch["gaps"], 0), ("duplicates", a["duplicates"], 0), ("held", a["held"], 0)]
    for what, got, want in checks:
        if got != want:
            fail("%s: %s %d, expected %d" % (protocol, what, got, want))
    if protocol == "mdp3":
        # The channel counts SBE messages: at least every book and trade incremental sent (46, 47,
        # 48), at most every message of every line (snapshots apply only while recovering).
        templates = sim_report["mdp3"]["templates"]
        least, most = sum(templates[t] for t in ("46", "47", "48")), sum(templates.values())
        if not least <= ch["messages"] <= most:
            fail("mdp3: %d messages applied, expected %d to %d" % (ch["messages"], least, most))
    print("%s: %d frames preloaded and received in order, %d line A packets; consumer %s" %
          (protocol, frames, sent, out.strip()))


def main():
    with tempfile.TemporaryDirectory(prefix="tp-preload-", dir="/dev/shm") as workdir:
        for protocol in ("itch", "mdp3"):
            run(workdir, protocol)
    print("PASS")


main()
