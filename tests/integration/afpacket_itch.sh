#!/usr/bin/env bash
# ITCH over MoldUDP64 on net_af_packet: the simulator sends live multicast (A and B lines, each
# losing packets, some lost on both) from a network namespace over a veth pair and serves
# MoldUDP64 re-requests; the daemon receives on the other end of the pair through DPDK's
# af_packet PMD, joins the groups with its own IGMP reports (checked with tshark on the
# simulator's side), recovers the gaps by re-request, and a consumer compares the books it
# rebuilds from the bus with the simulator's ground truth.
#
# usage: afpacket_itch.sh TICKPLANE SIM CONSUMER        (root; skipped (77) without netns/veth)
set -euo pipefail
TICKPLANE=$1 SIM=$2 CONSUMER=$3
id=$$
ns=tpit$id
dev=tpd$id     # daemon side (root namespace, DPDK af_packet)
simdev=tps$id  # simulator side (in $ns)
work=$(mktemp -d /tmp/tpit-afp-XXXXXX)
instance=tpafp$id
pids=()

cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    iptables -D INPUT -i "$dev" -p udp -j DROP 2>/dev/null || true
    ip link del "$dev" 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
    rm -rf "$work" /dev/shm/tickplane."$instance".* 2>/dev/null || true
}
trap cleanup EXIT INT TERM

fail() { echo "FAIL: $*"; for f in "$work"/*.log "$work"/*.out; do echo "== $f"; tail -20 "$f"; done; exit 1; }

ip netns add "$ns" 2>/dev/null || { echo "SKIP: cannot create network namespaces"; exit 77; }
ip link add "$dev" type veth peer name "$simdev" || { echo "SKIP: no veth"; exit 77; }
ip link set "$simdev" netns "$ns"
ip addr add 10.77.0.2/24 dev "$dev"
ip link set "$dev" up
ip netns exec "$ns" ip addr add 10.77.0.1/24 dev "$simdev"
ip netns exec "$ns" ip link set "$simdev" up
ip netns exec "$ns" ip link set lo up
ip netns exec "$ns" ip route add 224.0.0.0/4 dev "$simdev"
# The kernel behind the daemon's port must not answer the re-request replies with ICMP errors.
iptables -A INPUT -i "$dev" -p udp -j DROP 2>/dev/null || true

cat > "$work/config.json" <<EOF
{
  "name": "$instance",
  "eal": {"lcores": "0-1", "main_lcore": 0, "memory_mb": 256, "no_huge": true, "no_pci": true,
          "no_shconf": true, "log_level": "error"},
  "ports": [{"name": "veth", "vdev": "net_af_packet$id,iface=$dev", "mbuf_pool_size": 8191}],
  "lcores": [{"lcore": 1, "poll": [{"port": "veth"}], "channels": ["itch"]}],
  "channels": [{"name": "itch", "protocol": "itch",
                "lines": {"a": {"group": "233.54.12.111", "port": 26477},
                          "b": {"group": "233.49.196.111", "port": 26477}},
                "recovery": {"rerequest": "10.77.0.1:9000", "gap_wait_us": 2000,
                             "give_up_ms": 5000}}],
  "instruments": {"capacity": 1024},
  "books": {"max_orders": 65536, "levels_per_side": 10},
  "bus": {"ring_bytes": 16777216},
  "control": {"socket": "control.sock"}
}
EOF

# The truth is the same for the same seed and options: write it before the consumer starts.
ip netns exec "$ns" "$SIM" itch --seed 5 --symbols 20 --messages 20000 --truth "$work/truth.json" \
    --binaryfile /dev/null >/dev/null 2>&1

# IGMP reports as the simulator's side of the link sees them.
ip netns exec "$ns" timeout -s INT 50 tshark -l -i "$simdev" -f igmp -T fields -e igmp.type \
    -e igmp.maddr -e igmp.version >"$work/igmp.out" 2>"$work/tshark.log" &
tshark=$!
pids+=($tshark)
sleep 1.5

"$CONSUMER" --instance "$instance" --truth "$work/truth.json" --ready "$work/ready" \
    --idle-ms 3000 --timeout-s 55 >"$work/consumer.out" 2>"$work/consumer.log" &
consumer=$!
pids+=($consumer)
"$TICKPLANE" --config "$work/config.json" --idle-exit-ms 4000 --unlink-bus \
    --start-after "$work/ready" >"$work/daemon.out" 2>"$work/daemon.log" &
daemon=$!
pids+=($daemon)

for _ in $(seq 300); do [ -e "$work/ready" ] && break; sleep 0.05; done
[ -e "$work/ready" ] || fail "consumer never attached"
# A router's IGMPv3 general query (Max Resp 1 s) on the simulator's side, once the two unsolicited
# join reports (1 s apart) are out: the data plane must answer with a report for each joined group
# (checked on the wire below).
sleep 1.5
ip netns exec "$ns" python3 - "$simdev" <<'PY'
import socket, struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff
igmp = struct.pack("!BBHIBBH", 0x11, 10, 0, 0, 2, 125, 0)
igmp = igmp[:2] + struct.pack("!H", csum(igmp)) + igmp[4:]
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0xc0, 20 + len(igmp), 0, 0, 1, 2, 0,
                 socket.inet_aton("10.77.0.1"), socket.inet_aton("224.0.0.1"))
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
eth = bytes.fromhex("01005e000001") + bytes.fromhex("020000000001") + b"\x08\x00"
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
s.send(eth + ip + igmp)
PY
sleep 0.5
ip netns exec "$ns" "$SIM" itch --seed 5 --symbols 20 --messages 20000 --live --iface "$simdev" \
    --rate 20000 --rerequest 10.77.0.1:9000 --linger-ms 3000 --loss-a 0.02 --loss-b 0.02 \
    --both-loss 0.003 --truth "$work/truth.json" --report "$work/report.json" \
    >"$work/sim.log" 2>&1 || fail "simulator failed"


# The daemon exits 4 s after the last feed packet; SIGTERM (a graceful stop) if it has not.
for _ in $(seq 200); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.05; done
kill -TERM "$daemon" 2>/dev/null || true
wait "$daemon" || fail "daemon exit $?"
wait "$consumer" || fail "consumer: $(cat "$work/consumer.out")"
cat "$work/consumer.out"

summary=$(tail -1 "$work/daemon.out")
python3 - "$summary" "$work/report.json" "$work/consumer.out" <<'EOF' || fail "counters"
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
assert ch["given_up"] == 0 and ch["skipped_msgs"] == 0, "gaps given up"
assert consumer["stale"] == 0 and consumer["ring_mismatches"] == 0
EOF

# The data plane joined both feed groups with IGMPv3 reports (type 0x22).
kill -INT "$tshark" 2>/dev/null || true
wait "$tshark" 2>/dev/null || true
grep -q "233.54.12.111" "$work/igmp.out" || fail "no IGMP report for line A's group"
grep -q "233.49.196.111" "$work/igmp.out" || fail "no IGMP report for line B's group"
# After the query, a report for each group again (the answer, within Max Resp Time).
answers=$(sed -n '/^0x11/,$p' "$work/igmp.out" | grep -c "^0x22" || true)
[ "$answers" -ge 2 ] || fail "the IGMP query was not answered ($(tr '\n' ';' <"$work/igmp.out"))"
echo "IGMP seen on the wire: $(tr '\n' ';' <"$work/igmp.out")"
echo "PASS afpacket_itch"
