"""tickplane-export's views against tickplane-replay's books: CSV and JSON lines, event file and
capture input, prices as decimals and price9."""
import io
import json
import os
import subprocess

import numpy as np
import pandas as pd
import pytest

import tickplane


def export(*args):
    exe = os.path.join(os.path.dirname(os.environ["TICKPLANE_REPLAY"]), "..", "export",
                       "tickplane-export")
    run = subprocess.run([exe, *args], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    return run.stdout, json.loads(run.stderr.strip().splitlines()[-1])


def csv(*args):
    out, summary = export(*args)
    df = pd.read_csv(io.StringIO(out), keep_default_na=True)
    assert len(df) == summary["rows"]
    return df


def test_top_ends_on_the_replays_books(capture):
    _, _, path, books, _ = capture
    top = csv("--view", "top", str(path))
    assert (top["bid_price"].dropna() * 1e9).round().astype("int64").equals(
        top["bid_price9"].dropna().astype("int64"))
    last = top.groupby("symbol").tail(1).set_index("symbol")
    checked = 0
    for ins in books["instruments"]:
        if ins["symbol"] not in last.index or ins.get("stale"):
            continue
        row = last.loc[ins["symbol"]]
        for side in ("bid", "ask"):
            lv = ins[side + "s"]
            if lv:
                assert int(row[side + "_price9"]) == lv[0]["price9"]
                assert int(row[side + "_qty"]) == lv[0]["qty"]
            else:
                assert pd.isna(row[side + "_price9"])
        checked += 1
    assert checked > 50


def test_depth_snapshots_hold_n_levels(capture):
    _, _, path, books, _ = capture
    depth = csv("--view", "depth", "--depth", "3", str(path))
    assert [c for c in depth.columns if c.startswith("bid_")][:4] == [
        "bid_1_price", "bid_1_price9", "bid_1_qty", "bid_1_orders"]
    assert "bid_3_price9" in depth.columns and "bid_4_price9" not in depth.columns
    last = depth.groupby("symbol").tail(1).set_index("symbol")
    for ins in books["instruments"][:40]:
        if ins["symbol"] not in last.index or ins.get("stale"):
            continue
        for k, lv in enumerate(ins["bids"][:3], 1):
            assert int(last.loc[ins["symbol"], "bid_%d_price9" % k]) == lv["price9"]


def test_trades_and_bars_add_up_to_the_replays_volume(capture):
    _, _, path, books, _ = capture
    trades = csv("--view", "trades", str(path))
    bars = csv("--view", "ohlcv", "--interval", "5ms", str(path))
    by_trades = trades.groupby("symbol")["qty"].sum()
    by_bars = bars.groupby("symbol")["volume"].sum()
    assert by_trades.equals(by_bars)
    assert bars["trades"].sum() == len(trades)
    assert (bars["low9"] <= bars["open9"]).all() and (bars["open9"] <= bars["high9"]).all()
    assert (bars["start_ns"] % 5000000 == 0).all()
    for ins in books["instruments"]:
        assert int(by_trades.get(ins["symbol"], 0)) == sum(
            int(q) for q in trades.loc[trades["symbol"] == ins["symbol"], "qty"])
        assert (trades["symbol"] == ins["symbol"]).sum() == ins["trades"]


def test_capture_input_and_jsonl_are_the_same_rows(capture):
    _, pcap, path, _, _ = capture
    from_file, _ = export("--view", "mbo", "--symbols", "AAB*", str(path))
    from_capture, _ = export("--view", "mbo", "--symbols", "AAB*", pcap)
    assert from_file == from_capture and from_file.count("\n") > 1
    lines, _ = export("--view", "mbo", "--format", "jsonl", "--symbols", "AAB*", str(path))
    rows = [json.loads(line) for line in lines.splitlines()]
    df = pd.read_csv(io.StringIO(from_file))
    assert len(rows) == len(df)
    assert all(r["symbol"].startswith("AAB") for r in rows)
    assert [r["order_id"] for r in rows] == df["order_id"].tolist()


def test_the_other_views(capture):
    _, _, path, _, _ = capture
    t = tickplane.read_events(path, topics=["definitions", "status", "depth"])
    defs = csv("--view", "definitions", str(path))
    # MDP3 definition channels repeat: every definition record is a row.
    assert len(defs) == len(t["definitions"])
    assert defs["instrument_id"].tolist() == t["definitions"]["instrument_id"].tolist()
    assert defs.groupby("instrument_id")["symbol"].nunique().max() == 1
    assert csv("--view", "status", str(path)).shape[0] == len(t["status"])
    changes = csv("--view", "changes", str(path))
    assert len(changes) == len(t["depth"])
    assert set(changes["action"]) <= {"insert", "change", "remove", "clear"}


def test_bad_arguments_are_refused(capture):
    _, _, path, _, _ = capture
    exe = os.path.join(os.path.dirname(os.environ["TICKPLANE_REPLAY"]), "..", "export",
                       "tickplane-export")
    for args in (["--view", "nope"], ["--view", "top", "--depth", "11"],
                 ["--view", "ohlcv", "--interval", "1parsec"]):
        run = subprocess.run([exe, *args, str(path)], capture_output=True, text=True)
        assert run.returncode == 2 and "usage" in run.stderr
