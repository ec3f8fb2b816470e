"""tickplane for research: event files (tickplane-replay --events) and the live bus, as numpy
arrays and pandas DataFrames, through libtickplane.

    import tickplane
    t = tickplane.read_events("day.tpev", topics=["top", "trades"], symbols="AA*")
    t["top"]["bid_price"]                                   # price9 integers
    tickplane.read_events("day.tpev", frame=True)["trades"]  # DataFrames, prices as floats

    with tickplane.Live("demo") as live:                     # a running daemon's bus
        live.subscribe("AAPL", topics=["depth", "trades"])
        for batch in live.batches(timeout=1.0): ...
"""
from .events import header, read_events, to_frame
from .live import Live, TOPICS

__all__ = ["header", "read_events", "to_frame", "Live", "TOPICS"]
