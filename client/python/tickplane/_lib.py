"""libtickplane through ctypes: finding the library, its structures and the row layouts.

The row dtypes mirror tickplane/rows.h; each is checked against the library's own row sizes
(tp_rows_row_size) when the library is loaded, so a layout that drifted fails at import, not
with wrong numbers.
"""
import ctypes
import ctypes.util
import os

import numpy as np

try:
    from ._install import LIBDIR as _INSTALLED_LIBDIR
except ImportError:  # run from the source tree: TICKPLANE_LIB or the loader's search
    _INSTALLED_LIBDIR = None

TABLES = ("top", "depth", "trades", "orders", "status", "definitions", "book")
BOOK_LEVELS = 10
EVENT_FILE_ERRORS = {-2000: "not a tickplane event file (no TPEVENTS header)",
                     -2001: "an event file of a format version or schema this reader does not know",
                     -2002: "an event file cut inside a record, or a record longer than the file"}

_HEAD = [("recv_tsc", "<u8"), ("venue_time_ns", "<u8"), ("venue_seq", "<u8"),
         ("record", "<u8"), ("instrument_id", "<u4"), ("flags", "<u4")]
_LEVEL = np.dtype([("price", "<i8"), ("qty", "<i8"), ("orders", "<i4"), ("reserved", "<u4")])


def _dtype(fields, itemsize):
    names, formats, offsets, at = [], [], [], 0
    for field in _HEAD + fields:
        name, f = field[0], np.dtype(field[1:] if len(field) == 3 else field[1])
        at = (at + f.alignment - 1) // f.alignment * f.alignment
        names.append(name)
        formats.append(f)
        offsets.append(at)
        at += f.itemsize
    return np.dtype({"names": names, "formats": formats, "offsets": offsets,
                     "itemsize": itemsize})


DTYPES = {
    "top": _dtype([("bid_price", "<i8"), ("bid_qty", "<i8"), ("ask_price", "<i8"),
                   ("ask_qty", "<i8"), ("bid_orders", "<i4"), ("ask_orders", "<i4"),
                   ("trade_price", "<i8"), ("trade_qty", "<i8"), ("trade_aggressor", "u1")], 104),
    "depth": _dtype([("price", "<i8"), ("qty", "<i8"), ("orders", "<i4"), ("side", "u1"),
                     ("level", "u1"), ("action", "u1")], 64),
    "trades": _dtype([("price", "<i8"), ("qty", "<i8"), ("trade_id", "<u8"), ("orders", "<i4"),
                      ("aggressor", "u1")], 72),
    "orders": _dtype([("order_id", "<u8"), ("priority", "<u8"), ("price", "<i8"), ("qty", "<i8"),
                      ("remaining_qty", "<i8"), ("side", "u1"), ("action", "u1")], 88),
    "status": _dtype([("price", "<i8"), ("qty", "<i8"), ("gap_to", "<u8"), ("channel_id", "<u4"),
                      ("kind", "u1"), ("trading_status", "u1"), ("venue_status", "u1"),
                      ("stat_type", "u1")], 72),
    "definitions": _dtype([("venue_security_id", "<i8"), ("tick_size", "<i8"),
                           ("display_factor", "<i8"), ("contract_multiplier", "<i8"),
                           ("symbol", "S24"), ("channel_id", "<u4"), ("depth", "u1"),
                           ("trading_status", "u1"), ("security_kind", "u1"), ("venue", "u1")],
                          104),
    "book": _dtype([("bid_levels", "<u2"), ("ask_levels", "<u2"), ("reserved", "<u4"),
                    ("bids", _LEVEL, (BOOK_LEVELS,)), ("asks", _LEVEL, (BOOK_LEVELS,))], 528),
}


class RowsBuffer(ctypes.Structure):
    _fields_ = [("rows", ctypes.c_void_p), ("capacity", ctypes.c_uint64),
                ("count", ctypes.c_uint64), ("dropped", ctypes.c_uint64)]


class Rows(ctypes.Structure):
    _fields_ = [("t", RowsBuffer * len(TABLES)), ("malformed", ctypes.c_uint64),
                ("instruments", ctypes.c_void_p), ("n_instruments", ctypes.c_uint32),
                ("touched", ctypes.c_void_p), ("n_touched", ctypes.c_uint32),
                ("touched_cap", ctypes.c_uint32)]


class EventFileHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint16), ("header_length", ctypes.c_uint16),
                ("schema_id", ctypes.c_uint16), ("schema_version", ctypes.c_uint16),
                ("flags", ctypes.c_uint32), ("align", ctypes.c_uint32),
                ("records", ctypes.c_uint64)]


class EventFileReader(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("len", ctypes.c_size_t), ("offset", ctypes.c_size_t),
                ("header", EventFileHeader), ("records", ctypes.c_uint64)]


class Level(ctypes.Structure):
    _fields_ = [("price", ctypes.c_int64), ("qty", ctypes.c_int64), ("orders", ctypes.c_int32),
                ("reserved", ctypes.c_uint32)]


class LastTrade(ctypes.Structure):
    _fields_ = [("price", ctypes.c_int64), ("qty", ctypes.c_int64), ("trade_id", ctypes.c_uint64),
                ("venue_time_ns", ctypes.c_uint64), ("aggressor", ctypes.c_uint8),
                ("reserved", ctypes.c_uint8 * 7)]


class BookHeader(ctypes.Structure):
    _fields_ = [("instrument_id", ctypes.c_uint32), ("trading_status", ctypes.c_uint8),
                ("venue", ctypes.c_uint8), ("flags", ctypes.c_uint8),
                ("security_kind", ctypes.c_uint8), ("symbol", ctypes.c_char * 24),
                ("bus_sequence", ctypes.c_uint64), ("venue_seq", ctypes.c_uint64),
                ("venue_time_ns", ctypes.c_uint64), ("recv_tsc", ctypes.c_uint64),
                ("rpt_seq", ctypes.c_uint32), ("bid_levels", ctypes.c_uint16),
                ("ask_levels", ctypes.c_uint16), ("updates", ctypes.c_uint64),
                ("tick_size", ctypes.c_int64), ("last_trade", LastTrade),
                ("open", ctypes.c_int64), ("high", ctypes.c_int64), ("low", ctypes.c_int64),
                ("settle", ctypes.c_int64), ("volume", ctypes.c_int64)]


MAX_DEPTH = 32


class InstrumentState(ctypes.Structure):
    _fields_ = [("book", BookHeader), ("bids", Level * MAX_DEPTH), ("asks", Level * MAX_DEPTH)]


class ClientStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("records", "delivered", "filtered", "lapped",
                                                "lost", "resyncs", "malformed", "lag")]


def _find():
    """TICKPLANE_LIB (a path), else where the set-up installed it, else the loader's search."""
    for candidate in (os.environ.get("TICKPLANE_LIB"),
                      os.path.join(_INSTALLED_LIBDIR, "libtickplane.so.0") if _INSTALLED_LIBDIR
                      else None,
                      ctypes.util.find_library("tickplane")):
        if candidate and (os.path.exists(candidate) or "/" not in candidate):
            return candidate
    raise OSError("libtickplane not found: set TICKPLANE_LIB to its path")


def _load():
    lib = ctypes.CDLL(_find())
    P, VP, U32, U64, SZ = ctypes.POINTER, ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, \
        ctypes.c_size_t
    lib.tp_rows_row_size.argtypes = [ctypes.c_int]
    lib.tp_rows_row_size.restype = SZ
    lib.tp_rows_init.argtypes = [P(Rows)]
    lib.tp_rows_free.argtypes = [P(Rows)]
    lib.tp_rows_flush.argtypes = [P(Rows)]
    lib.tp_rows_read.argtypes = [P(Rows), P(EventFileReader), VP, U32, ctypes.c_int]
    lib.tp_event_file_open.argtypes = [P(EventFileReader), VP, SZ]
    lib.tp_attach.argtypes = [P(VP), ctypes.c_char_p, VP, ctypes.c_char_p, SZ]
    lib.tp_detach.argtypes = [VP]
    lib.tp_instrument_count.argtypes = [VP]
    lib.tp_instrument_count.restype = U32
    lib.tp_find_instrument.argtypes = [VP, ctypes.c_char_p]
    lib.tp_find_instrument.restype = ctypes.c_int64
    lib.tp_subscribe.argtypes = [VP, P(U32), SZ, U32]
    lib.tp_subscribe_pattern.argtypes = [VP, ctypes.c_char_p, ctypes.c_char_p, U32]
    lib.tp_poll.argtypes = [VP, VP, VP, ctypes.c_uint]
    lib.tp_read_state.argtypes = [VP, U32, P(InstrumentState)]
    lib.tp_stats.argtypes = [VP, P(ClientStats)]
    lib.tp_last_error.argtypes = [VP]
    lib.tp_last_error.restype = ctypes.c_char_p
    for k, name in enumerate(TABLES):
        size = lib.tp_rows_row_size(k)
        if size != DTYPES[name].itemsize:
            raise ImportError("libtickplane's %s rows are %d bytes, this package's %d: the "
                              "package and the library are of different versions"
                              % (name, size, DTYPES[name].itemsize))
    return lib


lib = _load()
# tp_rows_add_event as a tp_event_fn, for tp_poll: the batch is filled without Python per event.
ROWS_ADD_EVENT = ctypes.cast(lib.tp_rows_add_event, ctypes.c_void_p).value
