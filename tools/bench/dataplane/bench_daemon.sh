#!/usr/bin/env bash
# The whole daemon on one data lcore: a tickplane-sim ITCH capture in /dev/shm replayed by
# net_pcap (no hugepages; the PMD reads and copies every frame on the data lcore, which
# bench_ring.py's preloaded net_ring port does not), a consumer attached to the bus before the
# first packet.
# Prints the daemon's summary (busy-span messages/s, rx_burst -> publish latency) and the
# consumer's rx_burst -> callback latency, one JSON object per line.
#
# usage: bench_daemon.sh TICKPLANE SIM CONSUMER [MESSAGES] [LINES: a | ab]
set -euo pipefail
TICKPLANE=$1 SIM=$2 CONSUMER=$3 MESSAGES=${4:-1000000} LINES=${5:-a}
work=$(mktemp -d /dev/shm/tpbench-XXXXXX)
instance=tpbench$$
trap 'rm -rf "$work" /dev/shm/tickplane.$instance.*' EXIT
extra=()
[ "$LINES" = a ] && extra=(--no-line-b)
"$SIM" itch --seed 1 --symbols 200 --messages "$MESSAGES" --pcap "$work/feed.pcap" \
    --truth "$work/truth.json" "${extra[@]}" >/dev/null 2>&1
cat >"$work/config.json" <<JSON
{
  "name": "$instance",
  "eal": {"lcores": "0-1", "main_lcore": 0, "memory_mb": 256, "no_huge": true, "no_pci": true,
          "no_shconf": true, "log_level": "error"},
  "ports": [{"name": "cap", "pcap": "feed.pcap", "mbuf_pool_size": 16383}],
  "lcores": [{"lcore": 1, "poll": [{"port": "cap"}], "channels": ["itch"]}],
  "channels": [{"name": "itch", "protocol": "itch",
                "lines": {"a": {"group": "233.54.12.111", "port": 26477},
                          "b": {"group": "233.49.196.111", "port": 26477}}}],
  "instruments": {"capacity": 1024},
  "books": {"max_orders": 1048576, "levels_per_side": 10},
  "bus": {"ring_bytes": 536870912},
  "control": {"socket": "control.sock"}
}
JSON
# The consumer busy-polls on CPU 0 (the main lcore's, which sleeps); the data lcore owns CPU 1.
# It compares with the truth once the daemon has exited (--until: a loaded host's quiet spells
# do not end its run early), on a ring larger than the run publishes (it is never lapped).
taskset -c 0 "$CONSUMER" --instance "$instance" --truth "$work/truth.json" --ready "$work/ready" --latency \
    --until "$work/until" --idle-ms 1000 >"$work/consumer.out" 2>"$work/consumer.err" &
consumer=$!
"$TICKPLANE" --config "$work/config.json" --idle-exit-ms 3000 --unlink-bus \
    --start-after "$work/ready" 2>/dev/null | tail -1
touch "$work/until"
wait "$consumer" || { echo "consumer: books differ from the truth" >&2; cat "$work/consumer.out" >&2; exit 1; }
cat "$work/consumer.out"
