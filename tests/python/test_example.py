"""The example script rebuilds a symbol's top of book from a capture and plots it to a PNG."""
import json
import os
import subprocess
import sys

import numpy as np

import tickplane

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "client", "python", "examples",
                       "top_of_book_day.py")


def test_example_plots_the_top_of_a_capture(capture, tmp_path):
    venue, pcap, path, _, _ = capture
    symbol = "AAAA" if venue == "itch" else "AAAAZ6"
    png = tmp_path / "top.png"
    run = subprocess.run([sys.executable, EXAMPLE, pcap, symbol, str(png), "--replay",
                          os.environ["TICKPLANE_REPLAY"]], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000
    top = tickplane.read_events(path, topics=["top"], symbols=symbol)["top"]
    null = np.iinfo(np.int64).min
    both = top[(top["bid_price"] != null) & (top["ask_price"] != null)]
    assert summary["top_changes"] == len(top) and summary["two_sided"] == len(both)
    last = both[-1]
    assert abs(summary["mid_last"] - (last["bid_price"] + last["ask_price"]) / 2e9) < 1e-9
