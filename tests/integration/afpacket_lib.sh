# Shared steps of the net_af_packet integration tests (sourced, not run): a veth pair whose
# simulator end lives in a network namespace, the daemon on the other end through DPDK's
# af_packet PMD, a bus consumer that compares its books with the simulator's ground truth, and
# a capture on the simulator's side of the link.
#
# The caller sets TICKPLANE, SIM, CONSUMER and SUBNET (three octets, e.g. 10.77.0; each test its
# own, so that two tests on one machine never share a route), then calls the steps in order.
# Addresses: the simulator (and its re-request server on port 9000) is $SUBNET.1, the kernel
# interface behind the daemon's port is $SUBNET.2.

afp_id=$$
ns=tpit$afp_id
dev=tpd$afp_id    # daemon side (root namespace, DPDK af_packet)
simdev=tps$afp_id # simulator side (in $ns)
work=$(mktemp -d /tmp/tpit-afp-XXXXXX)
instance=tpafp$afp_id
sim_ip=$SUBNET.1
rerequest=$sim_ip:9000
pids=()

afp_cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    iptables -D INPUT -i "$dev" -p udp -j DROP 2>/dev/null || true
    iptables -D FORWARD -i "$dev" -j DROP 2>/dev/null || true
    ip link del "$dev" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "$work" /dev/shm/tickplane."$instance".* 2>/dev/null || true
}
trap afp_cleanup EXIT INT TERM

fail() {
    echo "FAIL: $*"
    for f in "$work"/*.log "$work"/*.out; do echo "== $f"; tail -20 "$f"; done
    exit 1
}

# The veth pair and the namespace; skips (77) where the machine cannot make them.
afp_link() {
    ip netns add "$ns" 2>/dev/null || { echo "SKIP: cannot create network namespaces"; exit 77; }
    ip link add "$dev" type veth peer name "$simdev" || { echo "SKIP: no veth"; exit 77; }
    ip link set "$simdev" netns "$ns"
    ip addr add "$SUBNET.2/24" dev "$dev"
    ip link set "$dev" up
    ip netns exec "$ns" ip addr add "$sim_ip/24" dev "$simdev"
    ip netns exec "$ns" ip link set "$simdev" up
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" ip route add 224.0.0.0/4 dev "$simdev"
    # The kernel behind the daemon's port must neither answer the re-request replies with ICMP
    # errors nor route replies meant for another address back onto the link.
    iptables -A INPUT -i "$dev" -p udp -j DROP 2>/dev/null || true
    iptables -A FORWARD -i "$dev" -j DROP 2>/dev/null || true
}

# config.json: one af_packet port (extra JSON members for it in $1, e.g. '"ipv4": "..."'), one
# ITCH channel on lines A and B with MoldUDP64 re-requests to the simulator. The port's kernel
# ring holds 8192 frames (the PMD's default, 512, is 25 ms of this feed): on a loaded machine
# the data lcore can be off its core for a second, and everything beyond the ring is lost
# without a trace of a gap when it is the end of the feed.
afp_config() {
    local port_extra=${1:+, $1}
    cat >"$work/config.json" <<EOF
{
  "name": "$instance",
  "eal": {"lcores": "0-1", "main_lcore": 0, "memory_mb": 256, "no_huge": true, "no_pci": true,
          "no_shconf": true, "log_level": "error"},
  "ports": [{"name": "veth", "vdev": "net_af_packet$afp_id,iface=$dev,framecnt=8192",
             "mbuf_pool_size": 8191
             $port_extra}],
  "lcores": [{"lcore": 1, "poll": [{"port": "veth"}], "channels": ["itch"]}],
  "channels": [{"name": "itch", "protocol": "itch",
                "lines": {"a": {"group": "233.54.12.111", "port": 26477},
                          "b": {"group": "233.49.196.111", "port": 26477}},
                "recovery": {"rerequest": "$rerequest", "gap_wait_us": 2000,
                             "give_up_ms": 5000}}],
  "instruments": {"capacity": 1024},
  "books": {"max_orders": 65536, "levels_per_side": 10},
  "bus": {"ring_bytes": 16777216},
  "control": {"socket": "control.sock"}
}
EOF
}

# The simulator's options for the run ($@ adds to them); the same seed and options give the
# same truth, so the truth is written first, before the consumer starts.
afp_sim_args=(itch --seed 5 --symbols 20 --messages 20000 --truth "$work/truth.json")
afp_truth() {
    ip netns exec "$ns" "$SIM" "${afp_sim_args[@]}" --binaryfile /dev/null >/dev/null 2>&1
}

# tshark on the simulator's side: capture filter $1, output $work/$2, then the -e fields.
afp_capture() {
    local filter=$1 out=$2
    shift 2
    local fields=()
    for f in "$@"; do fields+=(-e "$f"); done
    ip netns exec "$ns" timeout -s INT 110 tshark -l -i "$simdev" -f "$filter" -T fields \
        "${fields[@]}" >"$work/$out" 2>"$work/tshark-$out.log" &
    pids+=($!)
    afp_tshark=$!
}

# Waits until tshark reports that the capture runs (it takes seconds on a loaded machine).
afp_capture_wait() {
    for _ in $(seq 200); do
        grep -q "Capturing on" "$work"/tshark-*.log 2>/dev/null && return 0
        sleep 0.05
    done
    fail "tshark never started capturing"
}

# Stops the capture and waits until tshark has written everything it captured.
afp_capture_stop() {
    kill -INT "$afp_tshark" 2>/dev/null || true
    wait "$afp_tshark" 2>/dev/null || true
}

# Consumer, then the daemon (receiving once the consumer is attached). The consumer decides
# when the run is over (8 s without a packet: on a loaded machine the daemon's start and a
# test's steps before the feed take seconds), so the daemon has no idle exit of its own.
afp_start() {
    "$CONSUMER" --instance "$instance" --truth "$work/truth.json" --ready "$work/ready" \
        --idle-ms 8000 --timeout-s 80 >"$work/consumer.out" 2>"$work/consumer.log" &
    afp_consumer=$!
    pids+=($afp_consumer)
    "$TICKPLANE" --config "$work/config.json" --unlink-bus --start-after "$work/ready" \
        >"$work/daemon.out" 2>"$work/daemon.log" &
    afp_daemon=$!
    pids+=($afp_daemon)
    for _ in $(seq 300); do [ -e "$work/ready" ] && break; sleep 0.05; done
    [ -e "$work/ready" ] || fail "consumer never attached"
}

# The live feed: 20k packets/s on both lines, each losing 2% and 0.3% lost on both (only a
# re-request recovers those); the re-request server lingers 3 s after the last packet.
afp_feed() {
    ip netns exec "$ns" "$SIM" "${afp_sim_args[@]}" --live --iface "$simdev" --rate 20000 \
        --rerequest "$rerequest" --linger-ms 3000 --loss-a 0.02 --loss-b 0.02 \
        --both-loss 0.003 --report "$work/report.json" >"$work/sim.log" 2>&1 ||
        fail "simulator failed"
}

# Once the consumer has seen the feed end, the daemon stops (SIGTERM, a graceful stop) and
# prints its summary; the consumer's books must equal the truth and every gap must have been
# recovered, unless the daemon fell so far behind that its held buffer overflowed: then the
# books must be flagged, never wrong.
afp_finish() {
    wait "$afp_consumer" || fail "consumer: $(cat "$work/consumer.out")"
    cat "$work/consumer.out"
    kill -TERM "$afp_daemon" 2>/dev/null || true
    wait "$afp_daemon" || fail "daemon exit $?"
    python3 - "$(tail -1 "$work/daemon.out")" "$work/report.json" "$work/consumer.out" <<'EOF' ||
import json, sys
s = json.loads(sys.argv[1])["summary"]
report = json.load(open(sys.argv[2]))
consumer = json.loads(open(sys.argv[3]).read())
ch = s["channels"][0]
lines = {d["line"]: d for d in ch["detail"]}
both = {x["seq"] for x in report["lines"]["A"]["both_lost"]} | (
    {x["seq"] for x in report["lines"]["A"]["lost"]} & {x["seq"] for x in report["lines"]["B"]["lost"]})
print("re-requests %d, recovered %d, given up %d, retransmitted packets delivered %d, "
      "lost on both lines %d" % (ch["rerequests"], ch["recovered"], ch["given_up"],
                                 lines["r"]["delivered"], len(both)))
assert len(both) > 0, "no packet lost on both lines: nothing exercised re-requests"
assert ch["rerequests"] > 0 and lines["r"]["delivered"] > 0, "no retransmission used"
# Never wrong without saying so, whatever the machine's load.
assert consumer["ring_mismatches"] == 0 and consumer["state_mismatches"] == 0, \
    "books wrong and not flagged"
assert consumer["missing"] == 0, "instruments missing from the state table"
overflow = lines["a"]["overflow"] + lines["b"]["overflow"]
if overflow:
    # The data lcore was held off its core so long that the packets behind a gap filled the
    # arbiter's buffer (20k packets/s on a starved machine): those gaps had to be given up.
    # Then every book they touched must say so; exactness is only owed when it kept up.
    print("fell behind: %d packets overflowed the held buffer, %d gaps given up, %d of %d "
          "books flagged" % (overflow, ch["given_up"], consumer["stale"],
                             consumer["instruments"]))
    assert ch["given_up"] > 0 and consumer["stale"] > 0, "overflow without a flagged book"
else:
    assert ch["given_up"] == 0 and ch["skipped_msgs"] == 0, "gaps given up"
    assert consumer["stale"] == 0
EOF
        fail "counters"
}
