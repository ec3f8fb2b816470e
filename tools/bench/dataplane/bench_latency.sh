#!/usr/bin/env bash
# rx_burst -> consumer callback latency with the traffic paced, so that no queue builds up in
# front of the data lcore: what a strategy sees at a given feed rate, where bench_ring.py (every
# frame of a capture at once) measures the backlog of a saturated lcore.
#
# The simulator sends live ITCH multicast (lines A and B, no loss) at RATE packets a second from
# a network namespace over a veth pair (tests/integration/afpacket_lib.sh sets both up); the
# daemon receives it on the other end through DPDK's af_packet PMD, one data lcore on CPU 1; a
# busy-polling consumer on CPU 0 stamps every event (TSC now minus the event's rx_burst TSC) and
# checks its books against the simulator's truth. This machine has two CPUs: the simulator runs
# on the data lcore's (its sends and the kernel's veth delivery then happen before rx_burst, and
# only now and then in the middle of a burst: the upper percentiles carry that). On the
# consumer's CPU it preempted the consumer at every packet (p50 9 us at 10,000 packets a second).
#
# Prints one JSON line per rate: packets, messages, rx_burst -> publish (the daemon's histogram)
# and rx_burst -> consumer callback (p50, p90, p99, p99.9, max in ns).
#
# usage: bench_latency.sh TICKPLANE SIM CONSUMER [MESSAGES] [RATES]   (root; 77 without netns)
#        defaults: 200000 messages, rates 10000,50000 packets a second
set -euo pipefail
TICKPLANE=$1 SIM=$2 CONSUMER=$3 MESSAGES=${4:-200000} RATES=${5:-10000,50000} SUBNET=10.79.0
# shellcheck source=tests/integration/afpacket_lib.sh
. "$(dirname "$0")/../../../tests/integration/afpacket_lib.sh"

afp_link
afp_config ""
afp_sim_args=(itch --seed 1 --symbols 200 --messages "$MESSAGES" --truth "$work/truth.json")
afp_truth

for rate in ${RATES//,/ }; do
    rm -f "$work/ready" /dev/shm/tickplane."$instance".*
    # The consumer compares its books once the daemon has stopped (--until): a quiet spell of
    # a loaded machine mid-feed must not end its run.
    rm -f "$work/until"
    taskset -c 0 "$CONSUMER" --instance "$instance" --truth "$work/truth.json" \
        --ready "$work/ready" --until "$work/until" --latency --idle-ms 1000 --timeout-s 600 \
        >"$work/consumer.out" 2>"$work/consumer.log" &
    consumer=$!
    pids+=("$consumer")
    "$TICKPLANE" --config "$work/config.json" --unlink-bus --start-after "$work/ready" \
        >"$work/daemon.out" 2>"$work/daemon.log" &
    daemon=$!
    pids+=("$daemon")
    for _ in $(seq 300); do [ -e "$work/ready" ] && break; sleep 0.05; done
    [ -e "$work/ready" ] || fail "consumer never attached"
    # The daemon joins the groups (IGMP) as it starts polling: give it a moment.
    sleep 1
    ip netns exec "$ns" taskset -c 1 "$SIM" "${afp_sim_args[@]}" --live --iface "$simdev" \
        --rate "$rate" >"$work/sim.log" 2>&1 || fail "simulator failed"
    sleep 1 # the last frames through the kernel and the data lcore
    kill -TERM "$daemon" 2>/dev/null || true
    wait "$daemon" || fail "daemon exit $?"
    touch "$work/until"
    wait "$consumer" || fail "consumer: books differ from the truth: $(cat "$work/consumer.out")"
    python3 - "$rate" "$(tail -1 "$work/daemon.out")" "$work/consumer.out" <<'EOF' ||
import json, sys
rate, summary = int(sys.argv[1]), json.loads(sys.argv[2])["summary"]
lines = open(sys.argv[3]).read().strip().splitlines()
verdict, latency = json.loads(lines[0]), json.loads(lines[1])["rx_burst_to_consumer_ns"]
ch = summary["channels"][0]
if verdict["lost"] or ch["gaps"] or ch["skipped_msgs"] or ch["malformed"]:
    sys.exit("loss: consumer %s, gaps %d, skipped %d" % (verdict, ch["gaps"], ch["skipped_msgs"]))
keys = ("p50", "p90", "p99", "p99.9", "max")
print(json.dumps({"rate_pps": rate, "rx_packets": summary["rx_packets"],
                  "messages": summary["messages"],
                  "rx_to_publish_ns": {k: summary["rx_to_publish_ns"][k] for k in keys},
                  "rx_burst_to_consumer_ns": {k: latency[k] for k in keys}}))
EOF
        fail "rate $rate"
done
