#!/usr/bin/env bash
# What --events costs tickplane-replay: the same session replayed without it, with its records
# encoded but none kept (--topics definitions: the publisher's cost), into /dev/null (encoded
# into the writer's buffer, no I/O) and into a file on tmpfs (the page cache's cost too). One
# JSON line each: median wall and CPU ns/msg of REPEAT runs and the ratio to the plain replay's CPU time. One
# worker (--threads 1): the cost of the records themselves, not of the workers' logs and merge.
# usage: bench_events_cost.sh REPLAY SESSION [REPEAT] [OUT_DIR]
set -euo pipefail
replay=$1 session=$2 repeat=${3:-5} out=${4:-/dev/shm}
file="$out/bench-events-$$.tpev"
trap 'rm -f "$file"' EXIT
run() {
    "$replay" --threads 1 --quiet --repeat "$repeat" "$@" "$session" 2>&1 | tail -1
}
plain=$(run)
base=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["cpu_ns_per_msg_median"])' "$plain")
for mode in plain publish_only null file; do
    case $mode in
    plain) line=$plain ;;
    publish_only) line=$(run --events /dev/null --topics definitions) ;;
    null) line=$(run --events /dev/null) ;;
    file) line=$(run --events "$file") ;;
    esac
    python3 - "$mode" "$base" "$line" <<'PY'
import json, sys
mode, base, s = sys.argv[1], float(sys.argv[2]), json.loads(sys.argv[3])
print(json.dumps({"mode": mode, "messages": s["messages"], "runs": s["runs"],
                  "ns_per_msg_median": s["ns_per_msg_median"],
                  "cpu_ns_per_msg_median": s["cpu_ns_per_msg_median"],
                  "cpu_ratio": round(s["cpu_ns_per_msg_median"] / base, 3),
                  "events_records": s.get("events_records"), "events_bytes": s.get("events_bytes")}))
PY
done
