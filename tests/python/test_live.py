"""The live reader against the real daemon: the demo ITCH capture replayed through the data plane
on net_pcap, read from the bus by tickplane.Live in batches, is the same data as the event file
tickplane-replay writes for that capture (the trades and the final tops, symbol by symbol), and
the conflated state agrees with what the batches ended on."""
import os
import sys

import numpy as np
import pytest

import tickplane
from conftest import need

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import tpit  # noqa: E402

ITCH_CHANNEL = {"name": "itch", "protocol": "itch",
                "lines": {"a": {"group": "233.54.12.111", "port": 26477},
                          "b": {"group": "233.49.196.111", "port": 26477}}}


class Failed(Exception):
    pass


def _fail(msg):
    raise Failed(msg)


def by_symbol(definitions):
    return {int(d["instrument_id"]): d["symbol"].decode() for d in definitions}


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    """(batches read live, the conflated states at the end, the event file's tables)."""
    if os.geteuid() != 0:
        pytest.skip("the daemon's EAL needs root")
    work = tmp_path_factory.mktemp("live")
    pcap = need("TICKPLANE_DEMO_ITCH")
    instance = tpit.instance_name("tppy")
    cfg = tpit.base_config(instance, tpit.pcap_port(pcap), [ITCH_CHANNEL],
                           control_socket=str(work / "control.sock"))
    path = tpit.write_config(cfg, str(work / "config.json"))
    ready, start = str(work / "ready"), str(work / "start")
    daemon = None
    batches, states = [], {}
    try:
        import subprocess
        daemon = subprocess.Popen([need("TICKPLANE_DAEMON"), "--config", path, "--unlink-bus",
                                   "--start-after", start, "--idle-exit-ms", "1500"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        tpit.wait_for("the bus", lambda: os.path.exists("/dev/shm/tickplane.%s.ring" % instance)
                      or daemon.poll() is not None, 60, _fail)
        with tickplane.Live(instance) as live:
            live.subscribe("*", topics=["depth", "top", "trades", "definitions"])
            open(ready, "w").close()
            open(start, "w").close()
            for batch in live.batches(timeout=90, idle=20):
                batches.append(batch)
            stats = live.stats()
            defs = np.concatenate([b["definitions"] for b in batches])
            for i, sym in by_symbol(defs).items():
                states[sym] = live.state(i)
        tpit.finish(daemon, on_fail=_fail)
    finally:
        if daemon is not None and daemon.poll() is None:
            daemon.kill()
            daemon.wait()
    assert stats["lost"] == 0 and stats["lapped"] == 0 and stats["malformed"] == 0
    events = work / "demo.tpev"
    import subprocess
    subprocess.run([need("TICKPLANE_REPLAY"), "--quiet", "--events", str(events), pcap],
                   check=True, capture_output=True)
    live_tables = {k: np.concatenate([b[k] for b in batches]) for k in batches[0]}
    return live_tables, states, tickplane.read_events(events)


def test_live_trades_are_the_event_files(session):
    live, _, file = session
    assert len(live["trades"]) > 100
    lsym, fsym = by_symbol(live["definitions"]), by_symbol(file["definitions"])
    fields = ["price", "qty", "trade_id", "aggressor", "venue_time_ns", "venue_seq"]
    got = sorted((lsym[int(r["instrument_id"])],) + tuple(int(r[f]) for f in fields)
                 for r in live["trades"])
    want = sorted((fsym[int(r["instrument_id"])],) + tuple(int(r[f]) for f in fields)
                  for r in file["trades"])
    assert got == want


def test_live_tops_end_where_the_event_files_end(session):
    live, states, file = session
    lsym, fsym = by_symbol(live["definitions"]), by_symbol(file["definitions"])
    cols = ["bid_price", "bid_qty", "ask_price", "ask_qty"]

    def last_tops(top, sym):
        out = {}
        for r in top:
            out[sym[int(r["instrument_id"])]] = tuple(int(r[c]) for c in cols)
        return out
    lt, ft = last_tops(live["top"], lsym), last_tops(file["top"], fsym)
    assert len(lt) > 50 and lt == ft
    null = np.iinfo(np.int64).min
    for sym, top in lt.items():
        s = states[sym]
        bid = (int(s["bids"][0]["price"]), int(s["bids"][0]["qty"])) if len(s["bids"]) else (null, 0)
        ask = (int(s["asks"][0]["price"]), int(s["asks"][0]["qty"])) if len(s["asks"]) else (null, 0)
        assert (bid + ask) == top, sym
        assert s["symbol"].rstrip("\0") == sym
