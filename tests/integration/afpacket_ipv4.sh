#!/usr/bin/env bash
# ports[].ipv4 on net_af_packet: the port is configured with an address (.9) other than its
# kernel interface's (.2). The daemon must speak for the configured one: its MoldUDP64
# re-requests leave from it, its ARP requests name it as the sender, it answers the server
# kernel's ARP requests for it, and the re-request server's replies, sent to it, come back
# through the data plane (the kernel behind the port does not own .9). Checked on the wire on the simulator's side; the books must still equal the
# simulator's ground truth after the induced gaps.
#
# usage: afpacket_ipv4.sh TICKPLANE SIM CONSUMER        (root; skipped (77) without netns/veth)
set -euo pipefail
TICKPLANE=$1 SIM=$2 CONSUMER=$3 SUBNET=10.78.0
# shellcheck source=afpacket_lib.sh
. "$(dirname "$0")/afpacket_lib.sh"
port_ip=$SUBNET.9

afp_link
afp_config "\"ipv4\": \"$port_ip\""
afp_truth
afp_capture "arp or udp port 9000" wire.out arp.opcode arp.src.proto_ipv4 arp.dst.proto_ipv4 \
    ip.src ip.dst udp.srcport udp.dstport
afp_capture_wait
afp_start
# The server's kernel resolves the port's address before the feed (a datagram it sends there
# first needs the MAC address): only the data plane can answer ARP for it. Retried while the
# daemon starts.
for _ in $(seq 40); do
    ip netns exec "$ns" python3 -c "import socket, sys
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'?', (sys.argv[1], 9))" "$port_ip"
    sleep 0.5
    ip netns exec "$ns" ip neigh show "$port_ip" | grep -q lladdr && break
done
ip netns exec "$ns" ip neigh show "$port_ip" | grep -q "lladdr $(cat "/sys/class/net/$dev/address")" ||
    fail "the server's kernel did not resolve $port_ip to the port's MAC address: $(ip netns exec "$ns" ip neigh show "$port_ip"), port $(cat "/sys/class/net/$dev/address")"
afp_feed
afp_finish
afp_capture_stop

python3 - "$work/wire.out" "$port_ip" "$SUBNET.2" "$sim_ip" "$(tail -1 "$work/daemon.out")" <<'EOF' ||
import json, sys
wire, port_ip, iface_ip, sim_ip = sys.argv[1:5]
ch = json.loads(sys.argv[5])["summary"]["channels"][0]
rerequests = ch["rerequests"]
retransmitted = {d["line"]: d for d in ch["detail"]}["r"]["packets"]
requests, replies, arp_from_port, arp_other = [], [], 0, []
asked_for_port = answered_by_port = 0
for line in open(wire):
    f = (line.rstrip("\n").split("\t") + [""] * 7)[:7]
    op, arp_src, arp_dst, src, dst, sport, dport = f
    if op:
        if arp_src == port_ip and arp_dst == sim_ip and op == "1":
            arp_from_port += 1
        if arp_src == iface_ip:
            arp_other.append(line.strip())
        # The server's kernel asking for the port's address: only the data plane can answer.
        asked_for_port += op == "1" and arp_dst == port_ip
        answered_by_port += op == "2" and arp_src == port_ip
    elif dport == "9000":
        requests.append(src)
    elif sport == "9000":
        replies.append(dst)
print("on the wire: %d re-requests from %s, %d replies to %s; the daemon counted %d "
      "re-requests and received %d retransmissions; %d ARP requests for %s from %s" % (
          len(requests), sorted(set(requests)), len(replies), sorted(set(replies)), rerequests,
          retransmitted, arp_from_port, sim_ip, port_ip))
assert requests, "no re-request on the wire"
assert set(requests) == {port_ip}, "re-requests not from the configured address"
# The daemon also counts the attempts made while the server's MAC address was unresolved.
assert len(requests) <= rerequests, "more re-requests on the wire than the daemon made"
assert replies and set(replies) == {port_ip}, "replies not sent to the configured address"
# Everything the daemon took in on its retransmission line was one of those replies.
assert 0 < retransmitted <= len(replies), "retransmissions received %d, replies %d" % (
    retransmitted, len(replies))
assert arp_from_port > 0, "the server's address was not resolved from the configured address"
assert not arp_other, "ARP from the interface's address: %s" % arp_other
assert asked_for_port > 0 and answered_by_port > 0, "ARP requests for %s unanswered" % port_ip
print("ARP for %s: %d requests, %d answers from the data plane" % (port_ip, asked_for_port,
                                                                   answered_by_port))
EOF
    fail "wire"
echo "PASS afpacket_ipv4"
