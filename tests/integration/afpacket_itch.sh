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
TICKPLANE=$1 SIM=$2 CONSUMER=$3 SUBNET=10.77.0
# shellcheck source=afpacket_lib.sh
. "$(dirname "$0")/afpacket_lib.sh"

group_a=233.54.12.111 group_b=233.49.196.111
afp_link
afp_config ""
afp_truth
# IGMP as the simulator's side of the link sees it.
afp_capture igmp igmp.out frame.time_relative igmp.type igmp.maddr igmp.version
afp_capture_wait
afp_start

# The IGMP exchange, each step waiting for what the previous one must put on the wire (a slow
# machine delays it; it must not change it). The daemon has no idle exit here: it runs until the
# consumer is done, long after the answers are due.
reports() { # reports() GROUP FROM: IGMPv3 reports for GROUP captured after line FROM
    awk -F'\t' -v g="$1" -v from="$2" 'NR > from && $2 == "0x22" && $3 == g' "$work/igmp.out" |
        wc -l
}
wait_wire() { # wait_wire WHAT COMMAND...: until COMMAND succeeds (at most 20 s)
    local what=$1
    shift
    for _ in $(seq 400); do "$@" && return 0; sleep 0.05; done
    fail "$what ($(tr '\t\n' ' ;' <"$work/igmp.out"))"
}
# 1. The joins: two unsolicited reports per group (RFC 3376 robustness 2, 1 s apart).
joined() { [ "$(reports "$group_a" 0)" -ge 2 ] && [ "$(reports "$group_b" 0)" -ge 2 ]; }
wait_wire "the unsolicited join reports" joined
# 2. A router's IGMPv3 general query (Max Resp 1 s) from the simulator's side.
before_query=$(wc -l <"$work/igmp.out")
ip netns exec "$ns" python3 - "$simdev" "$sim_ip" <<'PY'
import socket, struct, sys
def csum(b):
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return (~s) & 0xffff
igmp = struct.pack("!BBHIBBH", 0x11, 10, 0, 0, 2, 125, 0)
igmp = igmp[:2] + struct.pack("!H", csum(igmp)) + igmp[4:]
ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0xc0, 20 + len(igmp), 0, 0, 1, 2, 0,
                 socket.inet_aton(sys.argv[2]), socket.inet_aton("224.0.0.1"))
ip = ip[:10] + struct.pack("!H", csum(ip)) + ip[12:]
eth = bytes.fromhex("01005e000001") + bytes.fromhex("020000000001") + b"\x08\x00"
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
s.send(eth + ip + igmp)
PY
# 3. The feed, at once (the consumer ends the run after 8 s without a packet), then the answer:
#    a report for each joined group after the query. With the unsolicited reports done,
#    nothing else makes the data plane report a group again.
afp_feed
afp_finish
answered() { [ "$(reports "$group_a" "$before_query")" -ge 1 ] &&
    [ "$(reports "$group_b" "$before_query")" -ge 1 ]; }
wait_wire "the IGMP query was not answered for both groups" answered
afp_capture_stop

echo "IGMP seen on the wire (s, type, group, version): $(tr '\t\n' ' ;' <"$work/igmp.out")"
echo "PASS afpacket_itch"
