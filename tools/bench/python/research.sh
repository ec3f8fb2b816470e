#!/usr/bin/env bash
# The research benchmarks on the 5 M-message ITCH session (2000 symbols, seed 7), whose inputs
# are made here on first use and kept in CACHE_DIR (157 MB session, 780 MB event file): not by
# the build. A session older than the simulator, or an event file older than its session or the
# replay, is made again.
# usage: research.sh SIM REPLAY CACHE_DIR events_cost|read_events REPEAT [PYTHON]
set -euo pipefail
sim=$1 replay=$2 dir=$3 which=$4 repeat=$5 python=${6:-python3}
here=$(dirname "$0")
session="$dir/itch-5m-2000-seed7.bin"
events="$dir/itch-5m-2000-seed7.tpev"
mkdir -p "$dir"
stale() { # stale TARGET SOURCE...: missing, or older than a source
    local t=$1
    shift
    [ -e "$t" ] || return 0
    for s in "$@"; do [ "$s" -nt "$t" ] && return 0; done
    return 1
}
if stale "$session" "$sim"; then
    "$sim" itch --seed 7 --symbols 2000 --messages 5000000 --binaryfile "$session.part" >&2
    mv "$session.part" "$session"
fi
case $which in
events_cost)
    exec bash "$here/bench_events_cost.sh" "$replay" "$session" "$repeat"
    ;;
read_events)
    if stale "$events" "$session" "$replay"; then
        "$replay" --quiet --events "$events.part" "$session" >&2
        mv "$events.part" "$events"
    fi
    exec "$python" "$here/bench_read_events.py" "$events" "$repeat"
    ;;
*)
    echo "research.sh: unknown benchmark $which (events_cost, read_events)" >&2
    exit 2
    ;;
esac
