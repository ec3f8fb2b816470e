#!/usr/bin/env bash
# One command for a fresh Debian 12 machine: install dependencies, build, and run the main job on
# the embedded demo. The exchange simulator writes a Nasdaq ITCH 5.0 session (BinaryFILE) and the
# decoder prints what tickplane reads from it. No NIC and no hugepages are needed.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
bash deploy/install-deps.sh
bash deploy/build.sh

out=${DEMO_DIR:-$build_dir/demo}
mkdir -p "$out"
"$build_dir/tools/sim/tickplane-sim" itch --seed 7 --symbols 50 --messages 20000 \
    --binaryfile "$out/itch.bin" --truth "$out/itch-truth.json"
"$build_dir/tools/dump/tickplane-dump" --binaryfile "$out/itch.bin" >"$out/itch.jsonl"
echo "demo: first decoded messages ($out/itch.jsonl):"
head -n 5 "$out/itch.jsonl"
echo "demo: message types:"
grep -o '"message":"[a-z_]*"' "$out/itch.jsonl" | sort | uniq -c | sort -rn
