"""A live reader of a tickplane instance's bus through libtickplane: attach, subscribe, poll
events in batches straight into numpy arrays (libtickplane's tp_rows_add_event fills them: no
Python per event), iterate them, read an instrument's conflated state."""
import ctypes
import errno
import os
import time

import numpy as np

from . import _lib
from ._lib import DTYPES, TABLES, lib

# Topic names -> the tp_topic subscribed (top and book rows come from the depth events).
TOPICS = {"depth": 0, "top": 0, "book": 0, "trades": 2, "orders": 3, "status": 4,
          "definitions": 5}
RECORD_MAX = 256  # rows one event may add to a table (a DELETE_FROM's 255 levels)


class _Options(ctypes.Structure):
    _fields_ = [("shm_dir", ctypes.c_char_p), ("batch_bytes", ctypes.c_uint32),
                ("no_reader_segment", ctypes.c_int), ("reader_mode", ctypes.c_uint),
                ("heartbeat_timeout_ms", ctypes.c_uint)]


class Live:
    """One reader of instance `instance` (segments in shm_dir, default /dev/shm). With
    control_socket, subscriptions go through the daemon's control socket (entitlements)."""

    def __init__(self, instance, shm_dir=None, control_socket=None, batch_rows=65536):
        self._client = ctypes.c_void_p()
        err = ctypes.create_string_buffer(256)
        opt = _Options(shm_dir=shm_dir.encode() if shm_dir else None, no_reader_segment=1)
        rc = lib.tp_attach(ctypes.byref(self._client), instance.encode(), ctypes.byref(opt), err,
                           len(err))
        if rc != 0:
            raise OSError(-rc, "tp_attach %s: %s" % (instance, err.value.decode()))
        if control_socket is not None:
            lib.tp_control_connect.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_uint]
            rc = lib.tp_control_connect(self._client, control_socket.encode(), 0)
            if rc != 0:
                self.close()
                raise OSError(-rc, "control socket %s: %s" % (control_socket, os.strerror(-rc)))
        self._rows = _lib.Rows()
        lib.tp_rows_init(ctypes.byref(self._rows))
        self.batch_rows = batch_rows
        self.tables = set()

    def close(self):
        if self._client:
            lib.tp_detach(self._client)
            lib.tp_rows_free(ctypes.byref(self._rows))
            self._client = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check(self, rc, what):
        if rc < 0:
            reason = lib.tp_last_error(self._client).decode()
            raise OSError(-rc, "%s: %s" % (what, reason or os.strerror(-rc)))
        return rc

    def instrument(self, symbol):
        """The dense id of `symbol`, or None."""
        i = lib.tp_find_instrument(self._client, symbol.encode())
        return None if i < 0 else i

    def subscribe(self, symbols="*", topics=("depth", "trades"), venue=None):
        """symbols: a glob (now and instruments defined later) or a list of instrument ids.
        topics: names of TOPICS; their tables fill the batches."""
        mask = 0
        for t in topics:
            if t not in TOPICS:
                raise ValueError("unknown topic %r (known: %s)" % (t, ", ".join(TOPICS)))
            mask |= 1 << TOPICS[t]
        self.tables |= set(topics)
        if isinstance(symbols, str):
            self._check(lib.tp_subscribe_pattern(self._client, venue.encode() if venue else None,
                                                 symbols.encode(), mask), "subscribe " + symbols)
        else:
            ids = (ctypes.c_uint32 * len(symbols))(*symbols)
            self._check(lib.tp_subscribe(self._client, ids, len(symbols), mask), "subscribe")

    def poll(self, max_events=None):
        """What is waiting on the bus now, up to the batch's room: {table: structured array}.
        Raises EOFError once the writer closed the instance and everything it published is read.
        """
        arrays = {}
        for k, name in enumerate(TABLES):
            b = self._rows.t[k]
            b.count = b.dropped = 0
            if name in self.tables:
                arrays[name] = np.empty(self.batch_rows, dtype=DTYPES[name])
                b.rows, b.capacity = arrays[name].ctypes.data, self.batch_rows
            else:
                b.rows, b.capacity = None, 0
        left = max_events
        while left is None or left > 0:
            free = min(self.batch_rows - self._rows.t[TABLES.index(n)].count for n in arrays) \
                if arrays else self.batch_rows
            n = free // RECORD_MAX
            if n == 0:
                break
            n = min(n, left) if left is not None else n
            rc = lib.tp_poll(self._client, _lib.ROWS_ADD_EVENT, ctypes.byref(self._rows), n)
            if rc == -errno.ESTALE:
                if not any(self._rows.t[TABLES.index(k)].count for k in arrays):
                    raise EOFError("the writer closed the instance")
                break
            self._check(rc, "tp_poll")
            if rc == 0 and self.stats()["lag"] == 0:
                break
            if left is not None:
                left -= rc
        return {name: a[:self._rows.t[TABLES.index(name)].count] for name, a in arrays.items()}

    def batches(self, timeout=None, idle=None):
        """Batches as they come (empty ones skipped), until the writer closes the instance,
        `timeout` seconds have passed, or nothing came for `idle` seconds."""
        start = last = time.monotonic()
        while True:
            try:
                batch = self.poll()
            except EOFError:
                return
            now = time.monotonic()
            if any(len(a) for a in batch.values()):
                last = now
                yield batch
            elif idle is not None and now - last > idle:
                return
            else:
                time.sleep(0.0002)
            if timeout is not None and now - start > timeout:
                return

    def events(self, timeout=None, idle=None):
        """(table, row) one at a time, in the order they were published, from batches()."""
        for batch in self.batches(timeout, idle):
            merged = sorted((int(r), name, i) for name, a in batch.items()
                            for i, r in enumerate(a["record"]))
            for _, name, i in merged:
                yield name, batch[name][i]

    def state(self, instrument):
        """An instrument's conflated state (id or symbol) as a dict, levels as arrays."""
        if isinstance(instrument, str):
            i = self.instrument(instrument)
            if i is None:
                raise KeyError(instrument)
            instrument = i
        s = _lib.InstrumentState()
        self._check(lib.tp_read_state(self._client, instrument, ctypes.byref(s)), "tp_read_state")
        h = s.book
        out = {f: getattr(h, f) for f, _ in h._fields_ if f not in ("last_trade", "symbol")}
        out["symbol"] = h.symbol.decode(errors="replace")
        out["last_trade"] = {f: getattr(h.last_trade, f) for f, _ in h.last_trade._fields_
                             if f != "reserved"}
        lv = np.dtype([("price", "<i8"), ("qty", "<i8"), ("orders", "<i4"), ("reserved", "<u4")])
        out["bids"] = np.frombuffer(bytes(s.bids), dtype=lv)[:h.bid_levels].copy()
        out["asks"] = np.frombuffer(bytes(s.asks), dtype=lv)[:h.ask_levels].copy()
        return out

    def stats(self):
        st = _lib.ClientStats()
        lib.tp_stats(self._client, ctypes.byref(st))
        return {f: getattr(st, f) for f, _ in st._fields_}
