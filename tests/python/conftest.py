"""What the tests of the Python package run on: the build's tickplane-replay and the simulator's
demo captures (meson passes their paths in the environment), made into event files once."""
import json
import os
import subprocess

import pytest


def need(var):
    path = os.environ.get(var)
    if not path or not os.path.exists(path):
        pytest.fail("%s is not set to an existing path (run through meson test)" % var)
    return path


def replay(capture, out, *args):
    """tickplane-replay's books (stdout JSON) and summary (last stderr line) of a capture, with
    its event file written to `out`."""
    run = subprocess.run([need("TICKPLANE_REPLAY"), "--depth", "10", "--events", str(out), *args,
                          capture], capture_output=True, text=True, timeout=300, check=True)
    return json.loads(run.stdout), json.loads(run.stderr.strip().splitlines()[-1])


@pytest.fixture(scope="session", params=["itch", "mdp3"])
def capture(request, tmp_path_factory):
    """(venue, capture path, event file path, replay books, replay summary)."""
    pcap = need("TICKPLANE_DEMO_" + request.param.upper())
    out = tmp_path_factory.mktemp(request.param) / "demo.tpev"
    books, summary = replay(pcap, out)
    return request.param, pcap, out, books, summary
