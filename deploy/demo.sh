#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: install dependencies, build, and run the main job on
# the embedded demo: the exchange simulator's Nasdaq ITCH (MoldUDP64, lines A and B) and CME MDP3
# (incremental A and B, snapshot and definition channels) sessions are replayed through the real
# DPDK data plane on a net_pcap virtual device (configs/demo.json: no NIC, no hugepages), and the
# example strategy (tickplane-top) prints live top of book from shared memory, then a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
bash deploy/install-deps.sh
bash deploy/build.sh

# configs/demo.json reads its capture and puts its control socket here.
demo_dir=/tmp/tickplane-demo
rm -rf "$demo_dir"
mkdir -p "$demo_dir"
mergecap -F pcap -a -w "$demo_dir/demo.pcap" \
    "$build_dir/tools/sim/demo-itch.pcap" "$build_dir/tools/sim/demo-mdp3.pcap"

# The data lcore waits for $demo_dir/go so that the consumer sees the session from its start.
"$build_dir/dataplane/daemon/tickplane" --config configs/demo.json --idle-exit-ms 1500 \
    --unlink-bus --start-after "$demo_dir/go" >"$demo_dir/summary.json" 2>"$demo_dir/daemon.log" &
daemon=$!
trap 'kill $daemon 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
    [ -e /dev/shm/tickplane.demo.ring ] && break
    kill -0 $daemon 2>/dev/null || { cat "$demo_dir/daemon.log" >&2; exit 1; }
    sleep 0.1
done

# AAAA and AAAB are the simulator's two busiest symbols on each venue.
"$build_dir/client/examples/tickplane-top" --seconds 10 --by-name demo AAAA AAAB &
consumer=$!
sleep 0.5
touch "$demo_dir/go"
wait $consumer
wait $daemon
trap - EXIT

echo
echo "demo: data plane summary ($demo_dir/summary.json):"
python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
print("  %d packets, %d messages in %.3f s busy (%d msgs/s), %d events published"
      % (s["rx_packets"], s["messages"], s["busy_s"], s["messages_per_s"], s["publish"]["events"]))
for ch in s["channels"]:
    lines = {d["line"]: d for d in ch["detail"] if "line" in d}
    print("  %s: %d messages, line A delivered %d, line B duplicates %d, gaps %d, malformed %d"
          % (ch["name"], ch["messages"], lines["a"]["delivered"], lines["b"]["duplicates"],
             ch["gaps"], ch["malformed"]))
' "$demo_dir/summary.json"
