"""Event files (tickplane-replay --events) into numpy structured arrays or pandas DataFrames.

The file is memory-mapped and decoded by libtickplane's own decoder and books (tickplane/rows.h)
straight into the arrays: no Python runs per record.
"""
import ctypes
import fnmatch
import mmap
import os

import numpy as np

from . import _lib
from ._lib import DTYPES, TABLES, lib

PRICE_FIELDS = ("price", "bid_price", "ask_price", "trade_price", "tick_size", "display_factor")
PRICE_NULL = np.iinfo(np.int64).min


SLACK = 4096


def _attach(rows, k, array):
    rows.t[k].rows = array.ctypes.data
    rows.t[k].capacity = array.size
    return array


def _open(mapped):
    reader = _lib.EventFileReader()
    rc = lib.tp_event_file_open(ctypes.byref(reader), mapped.ctypes.data, mapped.size)
    if rc != 0:
        raise ValueError(_lib.EVENT_FILE_ERRORS.get(rc, "error %d" % rc))
    return reader


def _bounds(mapped, reader, rows, tables, keep_ptr, n_keep):
    """Rows each table may take: from the header's record count and the file's size when the
    writer could write them (one pass over the file), else from a counting pass."""
    records = reader.header.records
    if records:
        level_entries = mapped.size // 24  # a level entry is 24 bytes of the file
        return {"top": records, "depth": level_entries, "trades": records, "orders": records,
                "status": records, "definitions": records, "book": records}
    for k, name in enumerate(TABLES):
        rows.t[k].capacity = name in tables  # counting: which tables, not how many rows
    rc = lib.tp_rows_read(ctypes.byref(rows), ctypes.byref(reader), keep_ptr, n_keep, 1)
    if rc < 0:
        raise ValueError(_lib.EVENT_FILE_ERRORS.get(rc, "error %d" % rc))
    return {name: rows.t[k].count for k, name in enumerate(TABLES)}


def _read(mapped, tables, keep=None):
    """The file into the arrays of `tables`, allocated to their bounds (pages that are never
    written are never given memory) and cut to the rows made."""
    keep_ptr, n_keep = (keep.ctypes.data, keep.size) if keep is not None else (None, 0)
    rows = _lib.Rows()
    lib.tp_rows_init(ctypes.byref(rows))
    try:
        bounds = _bounds(mapped, _open(mapped), rows, tables, keep_ptr, n_keep)
        arrays = {}
        for k, name in enumerate(TABLES):
            rows.t[k].count = rows.t[k].capacity = 0
            if name in tables:
                # Room beyond the bound for the rows one record and its event's end may add:
                # tp_rows_read stops short of a table that has less.
                arrays[name] = _attach(rows, k, np.empty(bounds[name] + SLACK, dtype=DTYPES[name]))
        reader = _open(mapped)
        while True:
            rc = lib.tp_rows_read(ctypes.byref(rows), ctypes.byref(reader), keep_ptr, n_keep, 0)
            if rc != 1:
                break
            for k, name in enumerate(TABLES):  # an event of more instruments than the slack
                if name in arrays and rows.t[k].capacity - rows.t[k].count < SLACK:
                    arrays[name] = _attach(rows, k, np.resize(arrays[name], 2 * arrays[name].size))
        lib.tp_rows_flush(ctypes.byref(rows))
        if rc < 0:
            raise ValueError(_lib.EVENT_FILE_ERRORS.get(rc, "error %d" % rc))
        return {name: arrays[name][:rows.t[TABLES.index(name)].count] for name in arrays}
    finally:
        lib.tp_rows_free(ctypes.byref(rows))


def _map(path):
    """The file mapped read-only as a uint8 array (unmapped when the array goes), its pages
    mapped in one go (MAP_POPULATE: a fault per 64 KiB cost more than reading them)."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return np.zeros(0, dtype=np.uint8)
        flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
        return np.frombuffer(mmap.mmap(f.fileno(), size, flags=flags, prot=mmap.PROT_READ),
                             dtype=np.uint8)


def _symbols(definitions):
    return np.char.rstrip(definitions["symbol"].astype("S24"), b"\0").astype(str)


def header(path):
    """The event file's header as a dict (format version, schema id and version, flags, records)."""
    h = _open(_map(path)).header
    return {f: getattr(h, f) for f, _ in h._fields_}


def read_events(path, topics=None, symbols=None, frame=False):
    """The records of an event file, one table per topic.

    topics: names among top, depth, trades, orders, status, definitions, book (None: all).
    symbols: a glob or a list of globs (fnmatch); instruments whose symbol matches none are left
    out (channel-wide status events are kept).
    frame: pandas DataFrames (with a `symbol` column and prices as floats, price9 columns kept
    with a `9` suffix) instead of numpy structured arrays.
    Returns {topic: array or DataFrame}.
    """
    tables = set(TABLES if topics is None else topics)
    unknown = tables - set(TABLES)
    if unknown:
        raise ValueError("unknown topics %s (known: %s)" % (sorted(unknown), ", ".join(TABLES)))
    keep = None
    definitions = None
    mapped = _map(path)
    if symbols is not None or frame:
        definitions = _read(mapped, {"definitions"})["definitions"]
    if symbols is not None:
        globs = [symbols] if isinstance(symbols, str) else list(symbols)
        names = _symbols(definitions)
        ids = definitions["instrument_id"]
        keep = np.zeros(int(ids.max()) + 1 if ids.size else 0, dtype=np.uint8)
        for name, i in zip(names, ids):
            if any(fnmatch.fnmatchcase(name, g) for g in globs):
                keep[i] = 1
    out = _read(mapped, tables, keep)
    if frame:
        return {name: to_frame(a, definitions) for name, a in out.items()}
    return out


def to_frame(rows, definitions=None):
    """A table as a pandas DataFrame: prices as floats (NaN for none) beside their price9
    integers (column + "9"), and the symbol of each instrument when definitions are given."""
    import pandas as pd

    columns = {}
    for name in rows.dtype.names:
        if name == "reserved" or name in ("bids", "asks"):
            continue
        col = rows[name]
        if name in PRICE_FIELDS:
            columns[name + "9"] = col
            columns[name] = np.where(col == PRICE_NULL, np.nan, col / 1e9)
        elif name == "symbol":
            columns[name] = np.char.rstrip(col, b"\0").astype(str)
        else:
            columns[name] = col
    if "bids" in rows.dtype.names:
        for side in ("bid", "ask"):
            levels = rows[side + "_levels"]
            for k in range(rows[side + "s"].shape[1]):
                p = rows[side + "s"]["price"][:, k]
                columns["%s_%d_price" % (side, k + 1)] = np.where(k < levels, p / 1e9, np.nan)
                columns["%s_%d_qty" % (side, k + 1)] = rows[side + "s"]["qty"][:, k]
    df = pd.DataFrame(columns)
    if definitions is not None and len(definitions):
        lookup = dict(zip(definitions["instrument_id"].tolist(), _symbols(definitions)))
        df.insert(0, "symbol", pd.Series(rows["instrument_id"]).map(lookup).fillna("").to_numpy())
    return df
