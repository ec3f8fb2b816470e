"""read_events against the data plane's own books: the tables rebuilt from an event file by
libtickplane's decoder and books must end where tickplane-replay's books ended."""
import os

import numpy as np
import pytest

import tickplane
from conftest import replay

PRICE_NULL = np.iinfo(np.int64).min


def test_header_names_the_schema_and_counts_the_records(capture):
    _, _, path, _, summary = capture
    h = tickplane.header(path)
    assert (h["version"], h["schema_id"], h["schema_version"]) == (1, 29808, 5)
    assert h["flags"] & 1  # recvTsc holds the capture's ns since the epoch
    assert h["records"] == summary["events_records"] > 0
    assert os.path.getsize(path) == summary["events_bytes"]


def test_final_top_and_book_are_the_replays_books(capture):
    venue, _, path, books, _ = capture
    t = tickplane.read_events(path, topics=["top", "book", "definitions"])
    assert len(t["top"]) > 100 and len(t["book"]) > 100
    symbols = {int(d["instrument_id"]): d["symbol"].decode() for d in t["definitions"]}
    checked = 0
    for ins in books["instruments"]:
        if ins.get("stale"):
            continue
        assert symbols[ins["id"]] == ins["symbol"]
        tops = t["top"][t["top"]["instrument_id"] == ins["id"]]
        book = t["book"][t["book"]["instrument_id"] == ins["id"]]
        if len(tops) == 0:
            assert not ins["bids"] and not ins["asks"]
            continue
        last, last_book = tops[-1], book[-1]
        for side in ("bid", "ask"):
            levels = ins[side + "s"]
            want = (levels[0]["price9"], levels[0]["qty"]) if levels else (PRICE_NULL, 0)
            assert (last[side + "_price"], last[side + "_qty"]) == want, (ins["symbol"], side)
            n = min(len(levels), 10)
            assert last_book[side + "_levels"] == n
            got = [(int(lv["price"]), int(lv["qty"])) for lv in last_book[side + "s"][:n]]
            assert got == [(lv["price9"], lv["qty"]) for lv in levels[:n]], (ins["symbol"], side)
        checked += 1
    assert checked > 50


def test_trades_are_the_replays_trades(capture):
    _, _, path, books, _ = capture
    trades = tickplane.read_events(path, topics=["trades"])["trades"]
    for ins in books["instruments"]:
        mine = trades[trades["instrument_id"] == ins["id"]]
        assert len(mine) == ins["trades"], ins["symbol"]
        if len(mine):
            assert mine["price"][-1] == ins["last_price9"], ins["symbol"]
    assert len(trades) > 100


def test_top_rows_carry_the_trade_of_their_event(capture):
    _, _, path, _, _ = capture
    t = tickplane.read_events(path, topics=["top", "trades"])
    with_trade = t["top"][t["top"]["trade_price"] != PRICE_NULL]
    assert len(with_trade) > 10
    # Each is a trade of that instrument at that venue time.
    trades = {(int(r["instrument_id"]), int(r["venue_time_ns"]), int(r["price"]))
              for r in t["trades"]}
    for r in with_trade[:500]:
        assert (int(r["instrument_id"]), int(r["venue_time_ns"]), int(r["trade_price"])) in trades
    # No two consecutive top rows of an instrument are the same top.
    top = t["top"]
    for i in np.unique(top["instrument_id"])[:50]:
        rows = top[top["instrument_id"] == i][["bid_price", "bid_qty", "ask_price", "ask_qty",
                                                "bid_orders", "ask_orders"]]
        assert all(rows[k] != rows[k + 1] for k in range(len(rows) - 1))


def test_symbols_select_instruments(capture):
    _, _, path, _, _ = capture
    full = tickplane.read_events(path, topics=["trades", "definitions", "status"])
    part = tickplane.read_events(path, topics=["trades", "definitions", "status"],
                                 symbols=["AAB*", "AAC?"])
    names = {d["symbol"].decode() for d in part["definitions"]}
    assert names and all(n.startswith("AAB") or (n.startswith("AAC") and len(n) == 4) or
                          n.startswith("AAC") for n in names)
    ids = {int(d["instrument_id"]) for d in part["definitions"]}
    want = full["trades"][np.isin(full["trades"]["instrument_id"], list(ids))]
    assert np.array_equal(part["trades"], want)
    assert len(part["trades"]) < len(full["trades"])
    # Channel-wide status events stay.
    none = np.uint32(0xFFFFFFFF)
    assert (part["status"]["instrument_id"] == none).sum() == \
        (full["status"]["instrument_id"] == none).sum()


def test_selection_keeps_the_events_delimited(capture, tmp_path):
    """Without the records of other topics and instruments the events still end: the tops of a
    selected file are those of the whole file."""
    _, pcap, path, _, _ = capture
    out = tmp_path / "sel.tpev"
    replay(pcap, out, "--symbols", "AAB*", "--topics", "depth,trades")
    sel = tickplane.read_events(out, topics=["top"])["top"]
    ids = np.unique(sel["instrument_id"])
    full = tickplane.read_events(path, topics=["top"])["top"]
    full = full[np.isin(full["instrument_id"], ids)]
    cols = ["instrument_id", "bid_price", "bid_qty", "ask_price", "ask_qty", "trade_price"]
    assert len(sel) > 20 and np.array_equal(sel[cols], full[cols])


def test_replay_selection_writes_only_what_was_asked(capture, tmp_path):
    _, pcap, path, _, _ = capture
    out = tmp_path / "sel.tpev"
    replay(pcap, out, "--symbols", "AAA*", "--topics", "trades,definitions")
    sel = tickplane.read_events(out)
    full = tickplane.read_events(path, topics=["trades", "definitions"], symbols="AAA*")
    assert len(sel["depth"]) == len(sel["orders"]) == len(sel["top"]) == 0
    assert len(sel["status"]) == 0
    assert np.array_equal(sel["definitions"]["symbol"], full["definitions"]["symbol"])
    fields = [f for f in full["trades"].dtype.names if f not in ("record", "flags")]
    assert np.array_equal(sel["trades"][fields], full["trades"][fields])
    # The same flags, but that a selected event's last record kept ends it (endOfEvent, 1).
    f_sel, f_full = sel["trades"]["flags"], full["trades"]["flags"]
    assert np.array_equal(f_sel & ~1, f_full & ~1) and np.all(f_sel & 1 >= f_full & 1)


def test_frames_have_symbols_and_decimal_prices(capture):
    _, _, path, _, _ = capture
    f = tickplane.read_events(path, topics=["trades", "top"], frame=True)
    trades = f["trades"]
    assert (trades["price"] == trades["price9"] / 1e9).all()
    assert trades["symbol"].str.len().min() > 0
    top = f["top"]
    empty = top["bid_price9"] == PRICE_NULL
    assert top.loc[empty, "bid_price"].isna().all()
    assert not top.loc[~empty, "bid_price"].isna().any()


def test_bad_files_are_refused(capture, tmp_path):
    _, pcap, path, _, _ = capture
    with pytest.raises(ValueError, match="not a tickplane event file"):
        tickplane.read_events(pcap)
    data = open(path, "rb").read()
    cut = tmp_path / "cut.tpev"
    cut.write_bytes(data[:len(data) // 2 + 3])
    with pytest.raises(ValueError, match="cut inside a record"):
        tickplane.read_events(cut)
    newer = tmp_path / "newer.tpev"
    newer.write_bytes(data[:8] + b"\x02" + data[9:])
    with pytest.raises(ValueError, match="format version"):
        tickplane.read_events(newer)


def test_a_file_without_its_record_count_reads_the_same(capture, tmp_path):
    """A writer on a pipe cannot go back to write the count: the reader counts instead."""
    _, _, path, _, _ = capture
    data = bytearray(open(path, "rb").read())
    data[24:32] = bytes(8)
    piped = tmp_path / "piped.tpev"
    piped.write_bytes(bytes(data))
    assert tickplane.header(piped)["records"] == 0
    a = tickplane.read_events(path, topics=["top", "trades", "depth"])
    b = tickplane.read_events(piped, topics=["top", "trades", "depth"])
    for name in a:
        assert np.array_equal(a[name], b[name]), name


def test_replay_writes_an_event_file_to_a_pipe(capture):
    import subprocess
    _, pcap, path, _, _ = capture
    run = subprocess.run("%s --quiet --events /dev/stdout %s 2>/dev/null | cat" %
                         (os.environ["TICKPLANE_REPLAY"], pcap), shell=True, capture_output=True,
                         check=True)
    data = open(path, "rb").read()
    assert run.stdout[24:32] == bytes(8) and run.stdout[32:] == data[32:]


def _pcap_frames(path):
    data = open(path, "rb").read()
    head, frames, off = data[:24], [], 24
    while off < len(data):
        caplen = int.from_bytes(data[off + 8:off + 12], "little")
        frames.append(data[off:off + 16 + caplen])
        off += 16 + caplen
    return head, frames


def _ipv4_dst(frame):
    eth = frame[16:]
    at = 12
    while eth[at:at + 2] == b"\x81\x00":  # 802.1Q tags
        at += 4
    return eth[at + 2 + 16:at + 2 + 20] if eth[at:at + 2] == b"\x08\x00" else None


def test_books_the_replay_cannot_vouch_for_are_stale_in_the_file(tmp_path):
    """Line A alone with packets lost for good: the replay flags the ITCH books stale, and so
    does the event file (the publisher's stale flag on their records from then on)."""
    from conftest import need
    head, frames = _pcap_frames(need("TICKPLANE_DEMO_ITCH"))
    line_a = bytes([233, 54, 12, 111])
    kept = [f for f in frames if _ipv4_dst(f) in (line_a, None)]
    mid = len(kept) // 2
    holed = tmp_path / "holed.pcap"
    holed.write_bytes(head + b"".join(kept[:mid] + kept[mid + 20:]))
    books, summary = replay(str(holed), tmp_path / "holed.tpev")
    stale_books = {i["id"] for i in books["instruments"] if i.get("stale")}
    assert stale_books, books["counters"]
    t = tickplane.read_events(tmp_path / "holed.tpev", topics=["depth", "status"])
    flagged = set(t["depth"]["instrument_id"][(t["depth"]["flags"] & 4) != 0].tolist())
    assert flagged and flagged <= stale_books
    # Nothing was flagged before the loss: the first half is clean.
    first = t["depth"][: len(t["depth"]) // 4]
    assert not (first["flags"] & 4).any()
