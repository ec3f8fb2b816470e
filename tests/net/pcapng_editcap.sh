#!/usr/bin/env bash
# pcapng as tshark's tools write it: the demo captures converted by editcap read by
# tickplane-dump, tickplane-replay (books and event file) and the config check of a preloaded
# port (tickplanectl check, the daemon's own check) exactly as the classic pcap files they came
# from; a pcapng cut short is refused by each with the reader's reason.
# usage: pcapng_editcap.sh EDITCAP DUMP REPLAY TICKPLANECTL DEMO_ITCH DEMO_MDP3 CONFIG
set -euo pipefail
editcap=$1 dump=$2 replay=$3 ctl=$4 itch=$(realpath "$5") mdp3=$(realpath "$6") config=$7
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

for venue in itch mdp3; do
    src=$itch; [ $venue = mdp3 ] && src=$mdp3
    "$editcap" -F pcapng "$src" "$work/$venue.pcapng"
    head -c 4 "$work/$venue.pcapng" | od -An -tx1 | grep -q '0a 0d 0d 0a' ||
        fail "editcap did not write pcapng"
    "$dump" --proto $venue "$src" >"$work/a.dump" 2>&1
    "$dump" --proto $venue "$work/$venue.pcapng" >"$work/b.dump" 2>&1
    [ "$(wc -l <"$work/a.dump")" -gt 1000 ] || fail "$venue: the dump is short"
    cmp -s "$work/a.dump" "$work/b.dump" || fail "$venue: the dumps of pcap and pcapng differ"
    "$replay" --events "$work/a.tpev" "$src" >"$work/a.books" 2>/dev/null
    "$replay" --events "$work/b.tpev" "$work/$venue.pcapng" >"$work/b.books" 2>/dev/null
    cmp -s "$work/a.books" "$work/b.books" || fail "$venue: the replay's books differ"
    cmp -s "$work/a.tpev" "$work/b.tpev" || fail "$venue: the event files differ"

    size=$(stat -c %s "$work/$venue.pcapng")
    head -c $((size - 50)) "$work/$venue.pcapng" >"$work/cut.pcapng"
    if "$replay" --quiet "$work/cut.pcapng" 2>"$work/err"; then fail "$venue: a cut pcapng was taken"; fi
    grep -q "truncated" "$work/err" || fail "$venue: replay: $(cat "$work/err")"
    st=0; "$dump" --proto $venue "$work/cut.pcapng" >/dev/null 2>"$work/err" || st=$?
    [ $st -eq 1 ] && grep -q "truncated" "$work/err" || fail "$venue: dump ($st): $(cat "$work/err")"
done

# The config check of a preloaded port: the same plan from the pcapng as from the pcap. The
# control socket goes in the work directory: the demo's may not exist yet.
for f in "$itch" "$work/itch.pcapng" "$work/cut.pcapng"; do
    python3 - "$config" "$f" "$work/$(basename "$f").json" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
cfg["ports"][0].update(pcap=sys.argv[2], preload=True)
cfg["control"]["socket"] = sys.argv[3] + ".sock"
json.dump(cfg, open(sys.argv[3], "w"))
PY
done
a=$("$ctl" check "$work/$(basename "$itch").json" | sed 's/^[^:]*: //')
b=$("$ctl" check "$work/itch.pcapng.json" | sed 's/^[^:]*: //')
[ "$a" = "$b" ] || fail "check: '$a' against '$b'"
if "$ctl" check "$work/cut.pcapng.json" >"$work/out" 2>&1; then fail "check took a cut pcapng"; fi
grep -q 'ports\[0\].preload.*truncated' "$work/out" || fail "check: $(cat "$work/out")"
echo "pcapng: dump, replay, event files and the preload check agree with pcap"
