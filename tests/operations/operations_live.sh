#!/usr/bin/env bash
# What an operator sees of a live ITCH feed over veth (net_af_packet), end to end:
#   1. the event log: a first feed with losses on each line, losses on both (answered by the
#      simulator's re-request server) and a sequence reset logs "gap filled", "gap detected",
#      "gap re-requested", "gap recovered" and "session change"; a reload that makes give-ups
#      quick ("reload applied"), then a second feed whose re-requests nobody answers logs
#      "gap given up" and "books stale" (line B 0.5 ms behind A, so A's losses are gaps B
#      fills); a bad config file logs "reload refused"; the flood
#      limiter reports what it suppressed;
#   2. tickplanectl book and instruments say STALE, since when and why; subscriptions --all
#      lists another client's subscription;
#   3. promtool check metrics accepts the HTTP endpoint's text (HTTP/1.1, 405 for POST), which
#      has the NIC's drop counters, a libtickplane consumer's lag, the build info and the
#      gap-wait histogram, whose longest wait (in stats and the exit summary too) is at least
#      feed 2's give-up time;
#   4. dpdk-telemetry.py reads /tickplane/channels, /tickplane/consumers, /tickplane/latency and
#      /tickplane/gap_wait;
#   5. tickplanectl stat --once --json, and the live view in a real terminal (tmux), stopped by
#      Ctrl-C;
#   6. a reload that restarts the channel clears feed 2's stale books: a new "books healthy" line
#      with the venue and its instrument count. (NIC drops: tests/dataplane/test_nic_drops.c;
#      DPDK 22.11's af_packet reports no imissed, ierrors or rx_nombuf to make rise here.)
#
# usage: operations_live.sh TICKPLANE SIM CONSUMER TICKPLANECTL TOP
# (root; skipped (77) without netns/veth, promtool, dpdk-telemetry.py or tmux)
set -euo pipefail
TICKPLANE=$1 SIM=$2 CONSUMER=$3 CTL=$4 TOP=$5 SUBNET=10.77.26
for tool in promtool dpdk-telemetry.py tmux; do
    command -v "$tool" >/dev/null || {
        echo "SKIP: $tool is missing (deploy/install-deps.sh installs it)"
        exit 77
    }
done
# shellcheck source=../integration/afpacket_lib.sh
. "$(dirname "$0")/../integration/afpacket_lib.sh"
prefix=tpops$afp_id
tmux_session=tpops$afp_id
ops_cleanup() {
    tmux kill-session -t "$tmux_session" 2>/dev/null || true
    rm -rf "/var/run/dpdk/$prefix"
    afp_cleanup
}
trap ops_cleanup EXIT INT TERM

http_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# $1: give_up_ms of the channel.
ops_config() {
    cat >"$work/config.json.tmp" <<EOF2
{
  "name": "$instance",
  "eal": {"lcores": "0-1", "main_lcore": 0, "memory_mb": 256, "no_huge": true, "no_pci": true,
          "no_shconf": true, "file_prefix": "$prefix", "log_level": "error"},
  "ports": [{"name": "veth", "vdev": "net_af_packet$afp_id,iface=$dev,framecnt=8192",
             "mbuf_pool_size": 8191}],
  "lcores": [{"lcore": 1, "poll": [{"port": "veth"}], "channels": ["itch"]}],
  "channels": [{"name": "itch", "protocol": "itch",
                "lines": {"a": {"group": "233.54.12.111", "port": 26477},
                          "b": {"group": "233.49.196.111", "port": 26477}},
                "recovery": {"rerequest": "$rerequest", "gap_wait_us": 2000,
                             "give_up_ms": $1}}],
  "instruments": {"capacity": 1024},
  "books": {"max_orders": 65536, "levels_per_side": 10},
  "bus": {"ring_bytes": 16777216},
  "control": {"socket": "$work/control.sock"},
  "telemetry": {"prometheus_port": $http_port},
  "logging": {"level": "info", "burst": 2, "components": {"gap": "debug"}}
}
EOF2
    mv "$work/config.json.tmp" "$work/config.json"
}
ctl() { "$CTL" -s "$work/control.sock" "$@"; }
log_has() { grep -q -- "$1" "$work/daemon.log"; }
wait_log() { # wait_log WHAT PATTERN: until the daemon's log has a line matching PATTERN (60 s)
    for _ in $(seq 1200); do log_has "$2" && return 0; sleep 0.05; done
    fail "no log line for $1 (/$2/)"
}

afp_link
ops_config 5000
afp_truth
"$TICKPLANE" --config "$work/config.json" --unlink-bus >"$work/daemon.out" 2>"$work/daemon.log" &
afp_daemon=$!
pids+=($afp_daemon)
for _ in $(seq 600); do [ -S "$work/control.sock" ] && break; sleep 0.05; done
[ -S "$work/control.sock" ] || fail "the daemon's control socket never appeared"
# A libtickplane consumer (its counters segment is what the daemon reports on).
"$TOP" --quiet --seconds 120 "$instance" AAAA AAAB >"$work/top.out" 2>"$work/top.log" &
top_pid=$!
pids+=($top_pid)

# 1a. Feed 1: every gap recovered, a sequence reset half way.
ip netns exec "$ns" "$SIM" "${afp_sim_args[@]}" --live --iface "$simdev" --rate 20000 \
    --rerequest "$rerequest" --linger-ms 2000 --loss-a 0.02 --loss-b 0.02 --both-loss 0.003 \
    --delay-b 500000 \
    --seq-reset-at 10000 >"$work/sim1.log" 2>&1 || fail "simulator (feed 1) failed"
wait_log "a gap the other line filled" " gap: gap filled: channel itch: "
wait_log "a gap left after the window" " warning gap: gap detected: channel itch: "
wait_log "a re-request" " notice gap: gap re-requested: channel itch: "
wait_log "a recovery" " notice gap: gap recovered: channel itch: [0-9]* messages recovered"
wait_log "the session change" " notice session: session change: channel itch: "
wait_log "the flood limiter's count" "similar lines suppressed"
# Every line: ISO time, program and pid, level, component.
line=$(grep -m1 " gap recovered: " "$work/daemon.log")
format="^20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z tickplane\\[$afp_daemon\\]: notice gap: "
[[ $line =~ $format ]] || fail "log line format: $line"

# 1b. Give-ups after 300 ms, applied by a live reload; feed 2 with nobody answering re-requests.
ops_config 300
ctl reload >"$work/reload.out" || fail "reload: $(cat "$work/reload.out")"
wait_log "the reload" " notice reload: reload applied: {\"ok\":true"
ip netns exec "$ns" "$SIM" "${afp_sim_args[@]}" --live --iface "$simdev" --rate 20000 \
    --loss-a 0.02 --loss-b 0.02 --both-loss 0.01 >"$work/sim2.log" 2>&1 ||
    fail "simulator (feed 2) failed"
wait_log "a give-up" " warning gap: gap given up: channel itch: [0-9]* give-ups, [0-9]* messages skipped"
wait_log "the books marked stale" " warning books: books marked stale: channel itch: "
wait_log "the stale count" " books: books stale: NASDAQ: [1-9][0-9]* of [0-9]* instruments stale"
echo '{"channels": ' >"$work/config.json"
ctl reload >/dev/null 2>&1 && fail "a broken config was applied"
wait_log "the refused reload" " warning reload: reload refused: {\"ok\":false"

# 2. The stale books as the CLI shows them.
# The books' states come from the watch's scan, once a second: the lines waited for above may
# be an earlier spell's (the reload's restart flags every book for a moment), so wait for one.
stale_symbol=""
for _ in $(seq 600); do
    stale_symbol=$(ctl raw '{"cmd":"instruments","pattern":"*","limit":1000}' | python3 -c '
import json, sys
print(next((i["symbol"] for i in json.load(sys.stdin)["instruments"] if i.get("state") == "STALE"), ""))')
    [ -n "$stale_symbol" ] && break
    sleep 0.05
done
[ -n "$stale_symbol" ] || fail "no instrument shows STALE after feed 2's give-ups"
ctl book "$stale_symbol" --depth 1 >"$work/book.out" || fail "book $stale_symbol"
grep -Eq "^$stale_symbol \(NASDAQ\) [a-z_]+ STALE since 20[0-9-]+T[0-9:]+Z: the handler cannot vouch" \
    "$work/book.out" || fail "book output: $(cat "$work/book.out")"
ctl instruments "$stale_symbol" | grep -q "STALE since" || fail "instruments shows no STALE"

# Operators see every client's subscriptions (here: a subscriber held open by tickplanectl).
ctl subscribe AAAA --venue NASDAQ --topics top >"$work/subscribe.out" 2>&1 &
subscriber=$!
pids+=($subscriber)
for _ in $(seq 400); do
    ctl subscriptions --all >"$work/subs.json" 2>&1 && grep -q '"instrument": "AAAA"' "$work/subs.json" && break
    sleep 0.05
done
grep -q '"instrument": "AAAA"' "$work/subs.json" || fail "subscriptions --all: $(cat "$work/subs.json")"
kill -INT "$subscriber"

# 3. The metrics, as Prometheus scrapes them.
curl -sS -o "$work/metrics.txt" -w '%{http_version} %{http_code}\n' \
    "http://127.0.0.1:$http_port/metrics" >"$work/http.out" || fail "scrape failed"
[ "$(cat "$work/http.out")" = "1.1 200" ] || fail "scrape: $(cat "$work/http.out")"
promtool check metrics <"$work/metrics.txt" >"$work/promtool.out" 2>&1 ||
    fail "promtool: $(cat "$work/promtool.out")"
[ ! -s "$work/promtool.out" ] || fail "promtool warnings: $(cat "$work/promtool.out")"
for family in 'tickplane_nic_imissed_total{port="veth"' 'tickplane_nic_rx_nombuf_total{port="veth"' \
    "tickplane_consumer_lag{pid=\"$top_pid\"" "tickplane_consumer_lost_total{pid=\"$top_pid\"" \
    'tickplane_build_info{version="' 'tickplane_rx_to_publish_seconds_bucket{instance=' \
    'tickplane_gap_wait_seconds_bucket{instance=' \
    'tickplane_mold_given_up_total{channel="itch"'; do
    grep -qF "$family" "$work/metrics.txt" ||
        fail "metrics lack $family (consumer alive: $(kill -0 "$top_pid" 2>&1 && echo yes);" \
            "consumers: $(ctl stats | python3 -c 'import json,sys; print(json.load(sys.stdin)["consumers"])'))"
done
# Packets held behind feed 2's gaps waited for the give-up (300 ms), counted apart from the
# receive-to-publish latency.
gap_wait_ok='import json, sys
v = json.load(sys.stdin)
w = v.get("summary", v)["gap_wait_ns"]
assert w["count"] > 0 and w["max"] >= 300e6, w'
ctl stats | python3 -c "$gap_wait_ok" || fail "stats gap_wait_ns: $(ctl stats)"
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST "http://127.0.0.1:$http_port/metrics")
[ "$code" = 405 ] || fail "POST /metrics answered $code"

# 4. DPDK telemetry, through DPDK's own client.
for cmd in /tickplane/channels /tickplane/consumers /tickplane/latency /tickplane/gap_wait; do
    echo "$cmd" | dpdk-telemetry.py -f "$prefix" >"$work/tel.out" 2>&1 || fail "dpdk-telemetry.py $cmd"
    python3 - "$cmd" "$work/tel.out" "$top_pid" <<'PY' || fail "telemetry $cmd: $(cat "$work/tel.out")"
import json, sys
cmd, path, pid = sys.argv[1], sys.argv[2], sys.argv[3]
text = open(path).read()
reply = json.loads(text[text.index("{\"" + cmd[:2]):])[cmd]
if cmd == "/tickplane/channels":
    # The reload restarted the channel: its counters are those of feed 2.
    assert reply["itch"]["mold_given_up"] > 0 and reply["itch"]["mold_requests"] > 0, reply
elif cmd == "/tickplane/consumers":
    assert reply[pid]["records"] > 0, reply
elif cmd == "/tickplane/gap_wait":
    assert reply["count"] > 0 and reply["max_ns"] >= 300e6, reply
else:
    assert reply["count"] > 0 and reply["p50_ns"] > 0, reply
print("telemetry %s ok" % cmd)
PY
done

# 5. The live view: once as JSON, then in a terminal until Ctrl-C.
ctl stat --once --json --interval 300 >"$work/stat.json" || fail "stat --once --json"
python3 - "$work/stat.json" "$top_pid" <<'PY' || fail "stat json: $(cat "$work/stat.json")"
import json, sys
view = json.loads(open(sys.argv[1]).read())
ch = view["channels"][0]
assert ch["name"] == "itch" and ch["given_up"] > 0 and ch["rerequests"] > 0, ch
assert [p["name"] for p in view["ports"]] == ["veth"], view["ports"]
assert view["books"]["NASDAQ"]["stale"] > 0, view["books"]
assert any(c["pid"] == int(sys.argv[2]) for c in view["consumers"]), view["consumers"]
PY
tmux new-session -d -s "$tmux_session" -x 160 -y 50 \
    "$CTL -s $work/control.sock stat --interval 300; echo STAT-EXIT-\$?; sleep 30"
screen=""
for _ in $(seq 400); do
    screen=$(tmux capture-pane -p -t "$tmux_session")
    grep -q "CONSUMER PID" <<<"$screen" && grep -q "rates over 0\.[0-9] s" <<<"$screen" && break
    sleep 0.05
done
grep -Eq "^itch +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[1-9][0-9]*" <<<"$screen" ||
    fail "live view: $screen"
grep -Eq "^veth +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+" <<<"$screen" || fail "live view ports: $screen"
grep -Eq "^$top_pid +[1-9][0-9]* " <<<"$screen" || fail "live view consumer: $screen"
tmux send-keys -t "$tmux_session" C-c
for _ in $(seq 200); do
    tmux capture-pane -p -t "$tmux_session" | grep -q "STAT-EXIT-0" && break
    sleep 0.05
done
tmux capture-pane -p -t "$tmux_session" | grep -q "STAT-EXIT-0" || fail "stat did not stop on Ctrl-C"

# 6a. Only a reload clears an ITCH book given up (nothing re-sends it): the channel restarts.
healthy=" notice books: books healthy: NASDAQ: all [1-9][0-9]* instruments healthy again (were [1-9][0-9]* stale,"
healthy_before=$(grep -c -- "$healthy" "$work/daemon.log" || true)
ops_config 5000
ctl reload >"$work/reload2.out" || fail "reload: $(cat "$work/reload2.out")"
for _ in $(seq 1200); do
    [ "$(grep -c -- "$healthy" "$work/daemon.log")" -gt "$healthy_before" ] && break
    sleep 0.05
done
[ "$(grep -c -- "$healthy" "$work/daemon.log")" -gt "$healthy_before" ] ||
    fail "no log line for the books healthy again (/$healthy/)"

kill -TERM "$afp_daemon"
wait "$afp_daemon" || fail "daemon exit $?"
tail -1 "$work/daemon.out" | grep -q "\"version\":\"" || fail "no version in the exit summary"
tail -1 "$work/daemon.out" | python3 -c "$gap_wait_ok" || fail "exit summary gap_wait_ns"
echo "event lines by kind:"
grep -oE "^[^ ]+ [^ ]+ (error|warning|notice|info) [a-z]+: [a-z -]+" "$work/daemon.log" |
    cut -d' ' -f3- | sort | uniq -c | sort -rn
echo "PASS operations_live"
