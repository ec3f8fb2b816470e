#!/usr/bin/env python3
"""A day's top of book from a capture, spread and mid-price plotted to a PNG.

usage: top_of_book_day.py CAPTURE SYMBOL OUT.png [--replay PATH]

Notebook-style: each step is a few lines a researcher would type.
  1. The capture (pcap, pcapng or BinaryFILE) becomes an event file: tickplane-replay --events
     runs the data plane's own feed, book and publisher code over it.
  2. read_events gives the top of book after every venue event that changed it, with the
     trade that caused it, as a pandas DataFrame (prices as floats; price9 integers kept).
  3. Mid-price and spread, with the mid resampled to bars of a 200th of the session, by receive
     time (a BinaryFILE has none: by venue time), are plotted; trades are marked on the mid line. Prints a JSON
     summary of what it plotted.
"""
import argparse
import json
import os
import shutil
import subprocess
import tempfile

import matplotlib

matplotlib.use("Agg")  # no display: straight to a file
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import tickplane  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture")
    ap.add_argument("symbol")
    ap.add_argument("png")
    ap.add_argument("--replay", default=shutil.which("tickplane-replay") or "tickplane-replay")
    args = ap.parse_args()

    # 1. capture -> event file
    with tempfile.TemporaryDirectory() as tmp:
        events = os.path.join(tmp, "day.tpev")
        subprocess.run([args.replay, "--quiet", "--events", events, "--symbols", args.symbol,
                        "--topics", "depth,trades,definitions", args.capture],
                       check=True, stderr=subprocess.DEVNULL)
        # 2. event file -> DataFrame of top-of-book changes
        top = tickplane.read_events(events, topics=["top"], symbols=args.symbol,
                                    frame=True)["top"]
        # A pcap's receive times, else (BinaryFILE) the venue's: ITCH's are since midnight.
        clock = "recv_tsc" if tickplane.header(events)["flags"] & 1 else "venue_time_ns"
    if top.empty:
        raise SystemExit("no top of book for %s in %s" % (args.symbol, args.capture))

    # 3. mid and spread where both sides are there, per second
    top["time"] = pd.to_datetime(top[clock], unit="ns")
    two_sided = top.dropna(subset=["bid_price", "ask_price"]).set_index("time")
    mid = (two_sided["bid_price"] + two_sided["ask_price"]) / 2
    spread = two_sided["ask_price"] - two_sided["bid_price"]
    # Bars of a 200th of the session (at least 1 ms): a day gives ~2-minute bars.
    span = int((mid.index[-1] - mid.index[0]).value)
    bar = pd.Timedelta(max(span // 200, 1000000), unit="ns")
    bars = pd.DataFrame({"mid": mid, "spread": spread}).resample(bar).last().dropna()
    trades = top.dropna(subset=["trade_price"]).set_index("time")

    fig, (ax_mid, ax_spread) = plt.subplots(2, 1, sharex=True, figsize=(10, 6))
    ax_mid.plot(mid.index, mid.values, lw=0.8, label="mid (every change)")
    ax_mid.plot(bars.index, bars["mid"], lw=1.5, label="mid, last of %.0f ms bars" % (bar.total_seconds() * 1e3))
    ax_mid.scatter(trades.index, trades["trade_price"], s=6, c="k", label="trades")
    ax_mid.set_ylabel("price")
    ax_mid.legend(loc="best", fontsize=8)
    ax_mid.set_title("%s: top of book from %s" % (args.symbol, os.path.basename(args.capture)))
    ax_spread.step(spread.index, spread.values, where="post", lw=0.8)
    ax_spread.set_ylabel("spread")
    ax_spread.set_xlabel("receive time (UTC)" if clock == "recv_tsc" else "venue time")
    fig.tight_layout()
    fig.savefig(args.png, dpi=100)
    print(json.dumps({"symbol": args.symbol, "top_changes": len(top),
                      "two_sided": len(two_sided), "trades": len(trades),
                      "mid_first": float(mid.iloc[0]), "mid_last": float(mid.iloc[-1]),
                      "spread_median": float(spread.median()), "bar_ms": bar.total_seconds() * 1e3, "png": args.png}))


if __name__ == "__main__":
    main()
